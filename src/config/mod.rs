//! Configuration: Java `.properties` files, Kafka's `ConfigDef` model and the framework's
//! connector configuration with its validation.
//!
//! * [`properties`]: `java.util.Properties.load` rules.
//! * [`def`]: keys, types, validators, parsing, and the `ConfigInfos` JSON shapes.

pub mod def;
pub mod properties;

pub use def::{
    key_info, ConfigDef, ConfigInfo, ConfigInfos, ConfigKey, ConfigKeyInfo, ConfigType,
    ConfigValue, ConfigValueInfo, DefaultValue, Importance, ParsedConfig, ValidatedValue,
    Validator, Width,
};
pub use properties::{parse_properties, PropertiesError};
