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

/// A boolean key of a registry converter's own (Confluent's medium importance).
fn boolean(name: &str, default: &str, doc: &str) -> ConfigKey {
    ConfigKey::new(
        name,
        ConfigType::Boolean,
        value(default),
        Importance::Medium,
        doc,
    )
}

/// Confluent's `AvroConverterConfig`: the keys this AvroConverter reads.
pub fn avro() -> ConfigDef {
    let key = |name: &str, t: ConfigType, default: DefaultValue, doc: &str| {
        ConfigKey::new(name, t, default, Importance::High, doc)
    };
    converter()
        .define(key(
            "schema.registry.url",
            ConfigType::List,
            DefaultValue::Required,
            "Comma-separated list of URLs for Schema Registry instances that can be used to register or look up schemas.",
        ))
        .define(key(
            "auto.register.schemas",
            ConfigType::Boolean,
            value("true"),
            "Specify if the Serializer should attempt to register the Schema with Schema Registry.",
        ))
        .define(key(
            "use.latest.version",
            ConfigType::Boolean,
            value("false"),
            "Use the latest version of the schema in the subject to write records (with auto.register.schemas=false): the record is projected onto it.",
        ))
        .define(boolean(
            "latest.compatibility.strict",
            "true",
            "Whether the latest schema (use.latest.version) must be backward compatible with the record's own schema.",
        ))
        .define(key(
            "key.subject.name.strategy",
            ConfigType::String,
            value("io.confluent.kafka.serializers.subject.TopicNameStrategy"),
            "Determines how to construct the subject name under which the key schema is registered.",
        ))
        .define(key(
            "value.subject.name.strategy",
            ConfigType::String,
            value("io.confluent.kafka.serializers.subject.TopicNameStrategy"),
            "Determines how to construct the subject name under which the value schema is registered.",
        ))
        .define(key(
            "basic.auth.credentials.source",
            ConfigType::String,
            value("URL"),
            "Specify how to pick the credentials for the Basic Auth header: URL or USER_INFO.",
        ))
        .define(key(
            "basic.auth.user.info",
            ConfigType::Password,
            DefaultValue::Null,
            "Specify the user info for Basic Auth in the form of {username}:{password}.",
        ))
}

/// Confluent's `AvroConverterConfig` with `AvroDataConfig`: the registry keys and the ones that shape how
/// Connect schemas map to Avro.
pub fn avro_converter() -> ConfigDef {
    avro()
        .define(boolean(
            "enhanced.avro.schema.support",
            "false",
            "Whether a Connect string read from an Avro enum is written back as that enum, and a general union's named branches are read as fields named by the type's full name.",
        ))
        .define(boolean(
            "connect.meta.data",
            "true",
            "Whether the Connect metadata (connect.doc, connect.version, connect.parameters, connect.name) is written to and read from Avro schemas.",
        ))
        .define(boolean(
            "scrub.invalid.names",
            "false",
            "Whether names that are not valid Avro names are made valid (what Avro does not allow becomes _).",
        ))
        .define(boolean(
            "flatten.singleton.unions",
            "true",
            "Whether a union of one branch is read as that branch (else as a union struct).",
        ))
}

/// Confluent's `JsonSchemaConverterConfig`: the registry keys AvroConverter shares, and the JSON
/// Schema keys this converter reads.
pub fn json_schema() -> ConfigDef {
    avro()
        .define(boolean(
            "json.fail.unknown.properties",
            "true",
            "Whether to fail deserialization if unknown JSON properties are encountered.",
        ))
        .define(boolean(
            "json.fail.invalid.schema",
            "false",
            "Whether a payload that does not validate against its schema fails the record, read or written.",
        ))
        .define(boolean(
            "json.write.dates.iso8601",
            "false",
            "Whether Java dates are written as ISO 8601 strings; as in Confluent's converter, Connect's Date, Time and Timestamp are written as integers either way.",
        ))
        .define(boolean(
            "json.oneof.for.nullables",
            "true",
            "Whether schemas generated from Java classes use oneOf for nullables; the converter's optional schemas are oneOf with null either way, as in Confluent's.",
        ))
        .define(boolean(
            "use.optional.for.nonrequired",
            "false",
            "Whether a property not in its object's `required` is read as an optional field.",
        ))
        .define(boolean(
            "object.additional.properties",
            "true",
            "Whether struct schemas allow additional properties; false writes `additionalProperties: false`.",
        ))
}

/// Confluent's `ProtobufConverterConfig`: the registry keys AvroConverter has, and Protobuf's own.
#[cfg(feature = "protobuf")]
pub fn protobuf() -> ConfigDef {
    avro()
        .define(boolean(
            "enhanced.protobuf.schema.support",
            "false",
            "Whether messages, enums and oneofs read are named by their full names (package included), not their simple names.",
        ))
        .define(boolean(
            "generate.index.for.unions",
            "true",
            "Whether to suffix a oneof's field name with its index (<oneof>_<index>).",
        ))
        .define(boolean(
            "scrub.invalid.names",
            "false",
            "Whether names written that are not valid Protobuf identifiers are made valid (URL-encoded, other characters _, an x in front of a leading digit or _).",
        ))
        .define(boolean(
            "optional.for.nullables",
            "false",
            "Whether optional Connect fields are written as proto3 optional fields, and only optional fields read as optional scalars.",
        ))
        .define(boolean(
            "wrapper.for.nullables",
            "false",
            "Whether optional primitive Connect fields are written as google.protobuf wrapper types, and wrapper fields read as optional primitives (other scalars then read as required).",
        ))
        .define(boolean(
            "wrapper.for.raw.primitives",
            "true",
            "Whether a record whose message is a google.protobuf wrapper type reads as its primitive.",
        ))
        .define(boolean(
            "int.for.enums",
            "false",
            "Whether enums are read as INT32 (their numbers) rather than STRING (their names).",
        ))
        .define(boolean(
            "generate.struct.for.nulls",
            "false",
            "Whether a field that is not set reads as its default (a message as its default struct) rather than null.",
        ))
}
