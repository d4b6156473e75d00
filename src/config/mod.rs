//! Configuration: Java `.properties` files, Kafka's `ConfigDef` model and the framework's
//! connector configuration with its validation.
//!
//! Everything here is pure: no I/O, no clocks, no async. Files are read by the caller and
//! plugins are described to validation through [`PluginLookup`], so the REST layer, the
//! command line and tests all drive the same code.
//!
//! * [`properties`]: `java.util.Properties.load` rules.
//! * [`def`]: keys, types, validators, parsing, and the `ConfigInfos` JSON shapes.
//! * [`connector`]: `ConnectorConfig`/`SinkConnectorConfig`/`SourceConnectorConfig` keys,
//!   `AbstractHerder.validateConnectorConfig`, and the typed [`connector::ConnectorConfig`] parsed
//!   with that definition.
//! * [`worker`]: the worker config's definition, and the typed settings parsed with it.
//! * [`keys`]: the names of connector and worker keys, for code that reads them.
//! * [`providers`]: config providers (`${file:...}`, `${env:...}`, `${directory:...}`); the one part
//!   that reads files, and only when a task starts.

pub mod connector;
pub mod def;
pub(crate) mod error;
pub(crate) mod keys;
pub mod properties;
pub mod providers;
pub mod worker;

pub use connector::{
    connector_config_def, invalid_config_message, plugin_config_keys, validate_connector_config,
    ConnectorType, PluginLookup,
};
pub use def::{
    key_info, ConfigDef, ConfigInfo, ConfigInfos, ConfigKey, ConfigKeyInfo, ConfigType,
    ConfigValue, ConfigValueInfo, DefaultValue, Importance, ParsedConfig, ValidatedValue,
    Validator, Width,
};
pub use error::{invalid_value, ConfigError};
pub use properties::{parse_properties, PropertiesError};
