//! The config definitions of the converters, as Kafka's `ConverterConfig`, `JsonConverterConfig` and
//! `StringConverterConfig` declare them: what `GET /connector-plugins/{converter}/config` lists and
//! what connector validation checks under `key.converter.` and the like (KIP-769).

use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, Validator, Width,
};

fn value(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_owned())
}

/// Kafka's `ConverterConfig.newConfigDef()`: `converter.type`, which the worker sets itself. The
/// byte array, number and boolean converters have only this key.
pub fn converter() -> ConfigDef {
    ConfigDef::new().define(
        ConfigKey::new(
            "converter.type",
            ConfigType::String,
            DefaultValue::Required,
            Importance::Low,
            "How this converter will be used.",
        )
        .validator(Validator::OneOf(vec!["key", "value", "header"])),
    )
}

/// Kafka's `JsonConverterConfig`.
pub fn json() -> ConfigDef {
    let boolean = |name: &str, doc: &str| {
        ConfigKey::new(
            name,
            ConfigType::Boolean,
            value("true"),
            Importance::High,
            doc,
        )
    };
    converter()
        .define(
            boolean(
                "schemas.enable",
                "Include schemas within each of the serialized values and keys.",
            )
            .group("Schemas", 0)
            .width(Width::Medium)
            .display_name("Enable Schemas"),
        )
        .define(
            ConfigKey::new(
                "schemas.cache.size",
                ConfigType::Int,
                value("1000"),
                Importance::High,
                "The maximum number of schemas that can be cached in this converter instance.",
            )
            .group("Schemas", 1)
            .width(Width::Medium)
            .display_name("Schema Cache Size"),
        )
        .define(
            ConfigKey::new(
                "decimal.format",
                ConfigType::String,
                value("BASE64"),
                Importance::Low,
                "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
            )
            .validator(Validator::OneOfCaseInsensitive(vec!["BASE64", "NUMERIC"]))
            .group("Serialization", 0)
            .width(Width::Medium)
            .display_name("Decimal Format"),
        )
        .define(
            ConfigKey::new(
                "replace.null.with.default",
                ConfigType::Boolean,
                value("true"),
                Importance::Low,
                "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
            )
            .group("Serialization", 1)
            .width(Width::Medium)
            .display_name("Replace null with default"),
        )
}

/// Kafka's `StringConverterConfig`.
pub fn string() -> ConfigDef {
    converter().define(
        ConfigKey::new(
            "converter.encoding",
            ConfigType::String,
            value("UTF-8"),
            Importance::High,
            "The name of the Java character set to use for encoding strings as byte arrays.",
        )
        .group("Converter", 0)
        .width(Width::Medium)
        .display_name("Encoding"),
    )
}

/// `SimpleHeaderConverter` declares no keys.
pub fn none() -> ConfigDef {
    ConfigDef::new()
}
