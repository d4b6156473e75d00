//! The factory of converters and header converters: builds the `key.converter`,
//! `value.converter` and `header.converter` classes from the plugin table, with Kafka's messages
//! for a class that is not installed or not of the kind asked for.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{resolve, Factory, PluginDesc, PluginKind};
use crate::converters::{self, Converter, HeaderConverter};
use crate::data::DataError;

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
fn row(class: &str, kind: PluginKind) -> Result<&'static PluginDesc, DataError> {
    let other = match kind {
        PluginKind::HeaderConverter => PluginKind::Converter,
        _ => PluginKind::HeaderConverter,
    };
    resolve(&[kind], class).map_err(|_| match resolve(&[other], class) {
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
    converters::check_converter_type(config)?;
    // The role, as Kafka's worker sets it: most converters ignore it, AvroConverter names subjects by it.
    let mut config = config.clone();
    config
        .entry("converter.type".to_string())
        .or_insert_with(|| if is_key { "key" } else { "value" }.to_string());
    match plugin.factory {
        Factory::Converter { make, .. } => make(&config),
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
    converters::check_converter_type(config)?;
    match plugin.factory {
        Factory::HeaderConverter { make, .. } => make(config),
        _ => Err(not_an_instance(plugin.class, PluginKind::HeaderConverter)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::{avro, bytes, header, json, jsonschema, number, string};

    /// The converters that need a Schema Registry (a URL to be built, and no header converters).
    const REGISTRY: &[&str] = &[
        avro::CLASS,
        jsonschema::CLASS,
        #[cfg(feature = "protobuf")]
        crate::converters::protobuf::CLASS,
    ];
    use crate::data::{Schema, SchemaType, Value};
    use crate::plugins;

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
            ("Avro", avro::CLASS),
            ("AvroConverter", avro::CLASS),
            ("JsonSchemaConverter", jsonschema::CLASS),
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
        assert_eq!(plugins.len(), 10 + REGISTRY.len());
        assert!(crate::plugins::of_kind(PluginKind::Converter)
            .iter()
            .chain(&crate::plugins::of_kind(PluginKind::HeaderConverter))
            .all(|p| p.version == "4.0.0"));
        let simple = plugins.iter().find(|p| p.0 == header::CLASS).unwrap();
        assert_eq!((simple.1, simple.2), (false, true));
        for class in REGISTRY {
            let registry = plugins.iter().find(|p| p.0 == *class).unwrap();
            assert_eq!(
                (registry.1, registry.2),
                (true, false),
                "{class}: a converter, as Confluent's"
            );
        }
        assert!(plugins
            .iter()
            .filter(|p| p.0 != header::CLASS && !REGISTRY.contains(&p.0))
            .all(|p| p.1 && p.2));
    }

    #[test]
    fn builds_converters() {
        let none = BTreeMap::new();
        for (class, is_converter, _) in converter_plugins() {
            if REGISTRY.contains(&class) {
                continue;
            }
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
        // AvroConverter needs its registry's URL, and is no header converter.
        assert_eq!(
            new_converter("AvroConverter", &none, false).unwrap_err().0,
            "Missing required configuration \"schema.registry.url\" which has no default value."
        );
        let mut cfg = BTreeMap::new();
        cfg.insert(
            "schema.registry.url".to_string(),
            "http://127.0.0.1:8081".to_string(),
        );
        for class in ["AvroConverter", "JsonSchemaConverter"] {
            assert!(new_converter(class, &cfg, true).is_ok(), "{class}");
            assert!(new_header_converter(class, &cfg).is_err(), "{class}");
        }
        // So does ProtobufConverter, by its alias too; a build without the feature has no such class.
        let protobuf = new_converter("ProtobufConverter", &cfg, false);
        if cfg!(feature = "protobuf") {
            assert!(protobuf.is_ok());
            assert!(new_header_converter("ProtobufConverter", &cfg).is_err());
        } else {
            assert_eq!(
                protobuf.err().map(|e| e.0).unwrap_or_default(),
                "Class ProtobufConverter could not be found."
            );
        }
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
