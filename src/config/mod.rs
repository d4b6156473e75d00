//! Configuration: Java `.properties` files, Kafka's `ConfigDef` model and the framework's
//! connector configuration with its validation.
//!
//! * [`properties`]: `java.util.Properties.load` rules.

pub mod properties;

pub use properties::{parse_properties, PropertiesError};
