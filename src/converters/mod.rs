//! Converters: Kafka Connect's `Converter` and `HeaderConverter` plugins, which turn Connect
//! data ([`crate::data`]) into the bytes stored in a topic and back.
//!
//! Every converter Kafka ships is here under its Kafka class name: JsonConverter, StringConverter,
//! ByteArrayConverter, the number converters, BooleanConverter and SimpleHeaderConverter. Workers
//! pick them by the class (or alias) in `key.converter`, `value.converter` and
//! `header.converter`; [`new_converter`] and [`new_header_converter`] build them from the
//! prefix-stripped config keys.

pub mod bytes;
pub mod defs;
pub mod header;
pub mod json;
pub mod number;
pub mod string;

use crate::data::{DataError, Schema, SchemaAndValue, Value};
use crate::plugins::{self, PluginKind};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Kafka's `Converter`: serialises record keys and values.
///
/// The method names follow Kafka's `fromConnectData`/`toConnectData`, hence the `from_` methods
/// that take `self`.
#[allow(clippy::wrong_self_convention)]
pub trait Converter: Send + Sync + std::fmt::Debug {
    /// Serialises a Connect value. `Ok(None)` is a null (tombstone) payload.
    fn from_connect(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises a payload; `None` is a null (tombstone) payload.
    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError>;
}

/// Kafka's `HeaderConverter`: serialises record header values (names as in Kafka).
#[allow(clippy::wrong_self_convention)]
pub trait HeaderConverter: Send + Sync + std::fmt::Debug {
    /// Serialises one header value; `Ok(None)` is a null header value.
    fn from_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises one header value.
    fn to_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        data: Option<&[u8]>,
    ) -> Result<SchemaAndValue, DataError>;
}

/// A converter whose bytes depend on neither the topic nor the header key: one implementation serves
/// as a header converter and, for a [`RecordCodec`], as a record converter too.
pub(crate) trait Codec: Send + Sync + std::fmt::Debug {
    /// Serialises a value; `Ok(None)` is a null payload.
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises bytes.
    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError>;
}

/// A [`Codec`] that is a record converter as well as a header converter, as Kafka's JsonConverter,
/// StringConverter, ByteArrayConverter and number converters are (SimpleHeaderConverter is not).
pub(crate) trait RecordCodec: Codec {}

impl<T: RecordCodec> Converter for T {
    fn from_connect(
        &self,
        _topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        self.encode(schema, value)
    }

    fn to_connect(&self, _topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        self.decode(data)
    }
}

impl<T: Codec> HeaderConverter for T {
    fn from_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        self.encode(schema, value)
    }

    fn to_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        data: Option<&[u8]>,
    ) -> Result<SchemaAndValue, DataError> {
        self.decode(data)
    }
}

/// The Kafka version whose converters these reproduce.
pub const KAFKA_VERSION: &str = "4.0.0";

/// The error for a class that is installed, but not as `kind`.
fn not_an_instance(class: &str, kind: PluginKind) -> DataError {
    let interface = match kind {
        PluginKind::HeaderConverter => "HeaderConverter",
        _ => "Converter",
    };
    DataError::new(format!(
        "{class} is not an instance of org.apache.kafka.connect.storage.{interface}"
    ))
}

/// The plugin row of `kind` that `class` names; Kafka's messages when there is none.
fn row(class: &str, kind: PluginKind) -> Result<&'static plugins::PluginDesc, DataError> {
    let other = match kind {
        PluginKind::HeaderConverter => PluginKind::Converter,
        _ => PluginKind::HeaderConverter,
    };
    plugins::resolve(&[kind], class).map_err(|_| match plugins::resolve(&[other], class) {
        Ok(r) => not_an_instance(r.class, kind),
        Err(_) => DataError::new(format!("Class {class} could not be found.")),
    })
}

/// Builds a `Converter` for `key.converter` (`is_key`) or `value.converter`. `config` holds the
/// converter's own keys with the `key.converter.` / `value.converter.` prefix already stripped.
/// Unknown classes fail with Kafka's `Class X could not be found.`; bad values name the key.
pub fn new_converter(
    class: &str,
    config: &BTreeMap<String, String>,
    is_key: bool,
) -> Result<Arc<dyn Converter>, DataError> {
    let plugin = row(class, PluginKind::Converter)?;
    let _ = is_key; // key and value converters behave alike; Kafka only records the role
    check_converter_type(config)?;
    match plugin.factory {
        plugins::Factory::Converter { make, .. } => make(config),
        _ => Err(not_an_instance(plugin.class, PluginKind::Converter)),
    }
}

/// Builds a `HeaderConverter` for `header.converter`; `config` holds the keys with the
/// `header.converter.` prefix stripped.
pub fn new_header_converter(
    class: &str,
    config: &BTreeMap<String, String>,
) -> Result<Arc<dyn HeaderConverter>, DataError> {
    let plugin = row(class, PluginKind::HeaderConverter)?;
    check_converter_type(config)?;
    match plugin.factory {
        plugins::Factory::HeaderConverter { make, .. } => make(config),
        _ => Err(not_an_instance(plugin.class, PluginKind::HeaderConverter)),
    }
}

/// A `BOOLEAN` config key, parsed as Kafka's `ConfigDef` does (trimmed, case-insensitive).
pub(crate) fn config_bool(
    config: &BTreeMap<String, String>,
    key: &str,
    default: bool,
) -> Result<bool, DataError> {
    match config.get(key) {
        None => Ok(default),
        Some(raw) => match raw.trim() {
            t if t.eq_ignore_ascii_case("true") => Ok(true),
            t if t.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(DataError::new(crate::config::invalid_value(
                key,
                raw,
                "Expected value to be either true or false",
            ))),
        },
    }
}

/// An `INT` config key, parsed as Kafka's `ConfigDef` does.
pub(crate) fn config_int(
    config: &BTreeMap<String, String>,
    key: &str,
    default: i32,
) -> Result<i32, DataError> {
    match config.get(key) {
        None => Ok(default),
        Some(raw) => raw.trim().parse::<i32>().map_err(|_| {
            DataError::new(crate::config::invalid_value(
                key,
                raw,
                "Not a number of type INT",
            ))
        }),
    }
}

/// `converter.type`, which the worker sets itself; Kafka accepts `key`, `value` and `header`.
fn check_converter_type(config: &BTreeMap<String, String>) -> Result<(), DataError> {
    match config.get("converter.type") {
        None => Ok(()),
        Some(v) if ["key", "value", "header"].contains(&v.trim()) => Ok(()),
        Some(v) => Err(DataError::new(crate::config::invalid_value(
            "converter.type",
            v,
            "String must be one of: key, value, header",
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::SchemaType;

    #[test]
    fn resolves_class_names_and_aliases() {
        for (name, class) in [
            ("org.apache.kafka.connect.json.JsonConverter", json::CLASS),
            ("JsonConverter", json::CLASS),
            ("Json", json::CLASS),
            ("String", string::CLASS),
            ("StringConverter", string::CLASS),
            ("ByteArray", bytes::CLASS),
            (
                "org.apache.kafka.connect.converters.ByteArrayConverter",
                bytes::CLASS,
            ),
            ("Long", number::LONG_CLASS),
            ("IntegerConverter", number::INTEGER_CLASS),
            ("Short", number::SHORT_CLASS),
            ("Float", number::FLOAT_CLASS),
            ("Double", number::DOUBLE_CLASS),
            ("Boolean", number::BOOLEAN_CLASS),
            ("Simple", header::CLASS),
            ("SimpleHeaderConverter", header::CLASS),
            (
                "org.apache.kafka.connect.storage.SimpleHeaderConverter",
                header::CLASS,
            ),
        ] {
            assert_eq!(
                plugins::resolve(&[PluginKind::Converter, PluginKind::HeaderConverter], name)
                    .map(|p| p.class)
                    .ok(),
                Some(class),
                "{name}"
            );
        }
        for name in [
            "Avro",
            "json",
            "Converter",
            "org.apache.kafka.connect.json.Json",
            "",
        ] {
            assert!(
                plugins::resolve(&[PluginKind::Converter, PluginKind::HeaderConverter], name)
                    .is_err(),
                "{name}"
            );
        }
    }

    /// Every converter class with whether it is a Converter and a HeaderConverter.
    fn converter_plugins() -> Vec<(&'static str, bool, bool)> {
        let converters = plugins::of_kind(PluginKind::Converter);
        let headers = plugins::of_kind(PluginKind::HeaderConverter);
        let mut classes: Vec<&str> = converters.iter().chain(&headers).map(|r| r.class).collect();
        classes.sort_unstable();
        classes.dedup();
        classes
            .into_iter()
            .map(|c| {
                (
                    c,
                    converters.iter().any(|r| r.class == c),
                    headers.iter().any(|r| r.class == c),
                )
            })
            .collect()
    }

    #[test]
    fn plugin_list() {
        let plugins = converter_plugins();
        assert_eq!(plugins.len(), 10);
        assert!(crate::plugins::of_kind(PluginKind::Converter)
            .iter()
            .chain(&crate::plugins::of_kind(PluginKind::HeaderConverter))
            .all(|p| p.version == "4.0.0"));
        let simple = plugins.iter().find(|p| p.0 == header::CLASS).unwrap();
        assert_eq!((simple.1, simple.2), (false, true));
        assert!(plugins
            .iter()
            .filter(|p| p.0 != header::CLASS)
            .all(|p| p.1 && p.2));
    }

    #[test]
    fn builds_converters() {
        let none = BTreeMap::new();
        for (class, is_converter, _) in converter_plugins() {
            assert_eq!(
                new_converter(class, &none, false).is_ok(),
                is_converter,
                "{class}"
            );
            assert!(new_header_converter(class, &none).is_ok(), "{class}");
        }
        assert_eq!(
            new_converter("com.example.Nope", &none, true)
                .unwrap_err()
                .0,
            "Class com.example.Nope could not be found."
        );
        assert_eq!(
            new_converter("SimpleHeaderConverter", &none, false).unwrap_err().0,
            "org.apache.kafka.connect.storage.SimpleHeaderConverter is not an instance of org.apache.kafka.connect.storage.Converter"
        );
        let mut cfg = BTreeMap::new();
        cfg.insert("schemas.enable".to_string(), "maybe".to_string());
        assert_eq!(
            new_converter("Json", &cfg, false).unwrap_err().0,
            "Invalid value maybe for configuration schemas.enable: Expected value to be either true or false"
        );
        let mut cfg = BTreeMap::new();
        cfg.insert("converter.type".to_string(), "sideways".to_string());
        assert!(new_converter("String", &cfg, false).is_err());
    }

    #[test]
    fn built_converters_work() {
        let mut cfg = BTreeMap::new();
        cfg.insert("schemas.enable".to_string(), "FALSE".to_string());
        let c = new_converter("Json", &cfg, false).unwrap();
        let out = c
            .from_connect("t", Some(&Schema::new(SchemaType::Int32)), &Value::Int32(5))
            .unwrap();
        assert_eq!(out.as_deref(), Some(&b"5"[..]));
        let h = new_header_converter("Simple", &BTreeMap::new()).unwrap();
        let out = h
            .from_connect_header("t", "h", None, &Value::Int32(5))
            .unwrap();
        assert_eq!(out.as_deref(), Some(&b"5"[..]));
    }
}
