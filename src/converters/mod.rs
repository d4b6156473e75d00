//! Converters: Kafka Connect's `Converter` and `HeaderConverter` plugins, which turn Connect
//! data ([`crate::data`]) into the bytes stored in a topic and back.
//!
//! Every converter Kafka ships is here under its Kafka class name: JsonConverter, StringConverter,
//! ByteArrayConverter, the number converters, BooleanConverter and SimpleHeaderConverter. Workers
//! pick them by the class (or alias) in `key.converter`, `value.converter` and
//! `header.converter`; [`new_converter`] and [`new_header_converter`] build them from the
//! prefix-stripped config keys.

pub mod bytes;
pub mod header;
pub mod json;
pub mod number;
pub mod string;

use crate::data::{DataError, Schema, SchemaAndValue, Value};
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

/// A converter whose bytes depend on neither the topic nor the header key, so one implementation serves
/// as both a record converter and a header converter — as Kafka's JsonConverter, StringConverter,
/// ByteArrayConverter and number converters do.
pub(crate) trait Codec: Send + Sync + std::fmt::Debug {
    /// Serialises a value; `Ok(None)` is a null payload.
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises bytes.
    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError>;
}

impl<T: Codec> Converter for T {
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

/// The plugin interfaces a converter class implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConverterKind {
    /// `org.apache.kafka.connect.storage.Converter`.
    Converter,
    /// `org.apache.kafka.connect.storage.HeaderConverter`.
    HeaderConverter,
}

/// A converter class as the worker lists it (`GET /connector-plugins?connectorsOnly=false`).
#[derive(Clone, Copy, Debug)]
pub struct ConverterPlugin {
    /// Fully-qualified Kafka class name.
    pub class: &'static str,
    /// The interfaces the class implements.
    pub kinds: &'static [ConverterKind],
    /// The plugin version (the Kafka release the behaviour follows).
    pub version: &'static str,
}

impl ConverterPlugin {
    /// The class name without its package.
    pub fn simple_name(&self) -> &'static str {
        self.class.rsplit('.').next().unwrap_or(self.class)
    }

    /// Whether the class implements `kind`.
    pub fn is(&self, kind: ConverterKind) -> bool {
        self.kinds.contains(&kind)
    }

    /// Kafka's pruned aliases: the simple name minus `Converter` (for converters) and minus
    /// `HeaderConverter` (for header converters), when that leaves something.
    fn pruned_names(&self) -> Vec<&'static str> {
        let simple = self.simple_name();
        let mut out = Vec::new();
        for kind in self.kinds {
            let suffix = match kind {
                ConverterKind::Converter => "Converter",
                ConverterKind::HeaderConverter => "HeaderConverter",
            };
            // Kafka prunes at the last occurrence of the suffix, only when it is not at the start
            if let Some(pos) = simple.rfind(suffix).filter(|p| *p > 0) {
                out.push(&simple[..pos]);
            }
        }
        out
    }
}

/// The Kafka version whose converters these reproduce.
pub const KAFKA_VERSION: &str = "4.0.0";

const BOTH: &[ConverterKind] = &[ConverterKind::Converter, ConverterKind::HeaderConverter];
const HEADER_ONLY: &[ConverterKind] = &[ConverterKind::HeaderConverter];

static PLUGINS: [ConverterPlugin; 10] = [
    ConverterPlugin {
        class: number::BOOLEAN_CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: bytes::CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: number::DOUBLE_CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: number::FLOAT_CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: number::INTEGER_CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: number::LONG_CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: number::SHORT_CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: json::CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: header::CLASS,
        kinds: HEADER_ONLY,
        version: KAFKA_VERSION,
    },
    ConverterPlugin {
        class: string::CLASS,
        kinds: BOTH,
        version: KAFKA_VERSION,
    },
];

/// Every converter and header converter class, sorted by class name as Kafka lists plugins.
pub fn converter_plugins() -> &'static [ConverterPlugin] {
    &PLUGINS
}

/// Resolves a class name as Kafka's plugin loader does: the fully-qualified name, the simple
/// class name, or the pruned alias (`Json`, `String`, `ByteArray`, `Long`, `Simple`). An alias
/// claimed by two classes resolves to nothing.
pub fn resolve_converter_class(name: &str) -> Option<&'static ConverterPlugin> {
    let name = name.trim();
    if let Some(p) = PLUGINS.iter().find(|p| p.class == name) {
        return Some(p);
    }
    let mut found: Option<&'static ConverterPlugin> = None;
    for p in PLUGINS.iter() {
        if p.simple_name() == name || p.pruned_names().contains(&name) {
            if found.is_some_and(|f| f.class != p.class) {
                return None;
            }
            found = Some(p);
        }
    }
    found
}

/// Builds a `Converter` for `key.converter` (`is_key`) or `value.converter`. `config` holds the
/// converter's own keys with the `key.converter.` / `value.converter.` prefix already stripped.
/// Unknown classes fail with Kafka's `Class X could not be found.`; bad values name the key.
pub fn new_converter(
    class: &str,
    config: &BTreeMap<String, String>,
    is_key: bool,
) -> Result<Arc<dyn Converter>, DataError> {
    let plugin = resolve_converter_class(class)
        .ok_or_else(|| DataError::new(format!("Class {class} could not be found.")))?;
    if !plugin.is(ConverterKind::Converter) {
        return Err(DataError::new(format!(
            "{} is not an instance of org.apache.kafka.connect.storage.Converter",
            plugin.class
        )));
    }
    let _ = is_key; // key and value converters behave alike; Kafka only records the role
    Ok(match Instance::create(plugin, config)? {
        Instance::Json(c) => Arc::new(c),
        Instance::String(c) => Arc::new(c),
        Instance::Bytes(c) => Arc::new(c),
        Instance::Number(c) => Arc::new(c),
        Instance::Simple(_) => unreachable_plugin(plugin)?,
    })
}

/// Builds a `HeaderConverter` for `header.converter`; `config` holds the keys with the
/// `header.converter.` prefix stripped.
pub fn new_header_converter(
    class: &str,
    config: &BTreeMap<String, String>,
) -> Result<Arc<dyn HeaderConverter>, DataError> {
    let plugin = resolve_converter_class(class)
        .ok_or_else(|| DataError::new(format!("Class {class} could not be found.")))?;
    if !plugin.is(ConverterKind::HeaderConverter) {
        return Err(DataError::new(format!(
            "{} is not an instance of org.apache.kafka.connect.storage.HeaderConverter",
            plugin.class
        )));
    }
    Ok(match Instance::create(plugin, config)? {
        Instance::Json(c) => Arc::new(c),
        Instance::String(c) => Arc::new(c),
        Instance::Bytes(c) => Arc::new(c),
        Instance::Number(c) => Arc::new(c),
        Instance::Simple(c) => Arc::new(c),
    })
}

/// A configured converter of any class, before it is shared as one of the two traits.
enum Instance {
    Json(json::JsonConverter),
    String(string::StringConverter),
    Bytes(bytes::ByteArrayConverter),
    Number(number::NumberConverter),
    Simple(header::SimpleHeaderConverter),
}

impl Instance {
    fn create(
        plugin: &ConverterPlugin,
        config: &BTreeMap<String, String>,
    ) -> Result<Instance, DataError> {
        check_converter_type(config)?;
        Ok(match plugin.class {
            json::CLASS => Instance::Json(json::JsonConverter::from_config(config)?),
            string::CLASS => Instance::String(string::StringConverter::from_config(config)?),
            bytes::CLASS => Instance::Bytes(bytes::ByteArrayConverter),
            header::CLASS => Instance::Simple(header::SimpleHeaderConverter),
            other => Instance::Number(
                number::NumberConverter::for_class(other)
                    .map_or_else(|| unreachable_plugin(plugin), Ok)?,
            ),
        })
    }
}

fn unreachable_plugin<T>(plugin: &ConverterPlugin) -> Result<T, DataError> {
    Err(DataError::new(format!(
        "Class {} could not be instantiated.",
        plugin.class
    )))
}

/// Kafka's `ConfigException` text for a bad value: `Invalid value V for configuration K: why`.
pub(crate) fn invalid_value(key: &str, value: &str, why: &str) -> DataError {
    DataError::new(format!(
        "Invalid value {value} for configuration {key}: {why}"
    ))
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
            _ => Err(invalid_value(
                key,
                raw,
                "Expected value to be either true or false",
            )),
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
        Some(raw) => raw
            .trim()
            .parse::<i32>()
            .map_err(|_| invalid_value(key, raw, "Not a number of type INT")),
    }
}

/// `converter.type`, which the worker sets itself; Kafka accepts `key`, `value` and `header`.
fn check_converter_type(config: &BTreeMap<String, String>) -> Result<(), DataError> {
    match config.get("converter.type") {
        None => Ok(()),
        Some(v) if ["key", "value", "header"].contains(&v.trim()) => Ok(()),
        Some(v) => Err(invalid_value(
            "converter.type",
            v,
            "String must be one of: key, value, header",
        )),
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
                resolve_converter_class(name).map(|p| p.class),
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
            assert!(resolve_converter_class(name).is_none(), "{name}");
        }
    }

    #[test]
    fn plugin_list() {
        let plugins = converter_plugins();
        assert_eq!(plugins.len(), 10);
        assert!(plugins.iter().all(|p| p.version == "4.0.0"));
        let simple = plugins.iter().find(|p| p.class == header::CLASS).unwrap();
        assert_eq!(simple.kinds, &[ConverterKind::HeaderConverter]);
        assert!(plugins
            .iter()
            .filter(|p| p.class != header::CLASS)
            .all(|p| p.kinds.len() == 2));
    }

    #[test]
    fn builds_converters() {
        let none = BTreeMap::new();
        for p in converter_plugins() {
            assert_eq!(
                new_converter(p.class, &none, false).is_ok(),
                p.is(ConverterKind::Converter),
                "{}",
                p.class
            );
            assert!(new_header_converter(p.class, &none).is_ok(), "{}", p.class);
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
