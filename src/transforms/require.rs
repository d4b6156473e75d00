//! Helpers shared by the transformations: Kafka's `Requirements` and `SchemaUtil`, schemaless map
//! access, and the small config-definition shorthands.

use std::collections::BTreeMap;

use super::RecordContext;
use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, ParsedConfig, Validator,
};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};

/// Java's `getClass().getName()` of a value (`java.lang.Integer`), `null` for null.
pub(crate) fn class_name(value: &Value) -> &'static str {
    let c = value.java_class();
    c.strip_prefix("class ").unwrap_or(c)
}

/// Kafka's `Requirements.requireStruct`.
pub(crate) fn require_struct<'a>(value: &'a Value, purpose: &str) -> Result<&'a Struct, DataError> {
    match value {
        Value::Struct(s) => Ok(s),
        other => Err(only(other, "Struct objects supported", purpose).into()),
    }
}

/// Kafka's `Requirements.requireStructOrNull`.
pub(crate) fn require_struct_or_null<'a>(
    value: &'a Value,
    purpose: &str,
) -> Result<Option<&'a Struct>, DataError> {
    or_null(value, |v| require_struct(v, purpose))
}

/// A schemaless map, as Kafka's `Map<String, Object>`.
pub(crate) type Entries = Vec<(Value, Value)>;

/// Kafka's `Requirements.requireMap`.
pub(crate) fn require_map<'a>(value: &'a Value, purpose: &str) -> Result<&'a Entries, DataError> {
    match value {
        Value::Map(m) => Ok(m),
        other => Err(only(other, "Map objects supported in absence of schema", purpose).into()),
    }
}

/// Kafka's `Requirements.requireMapOrNull`.
pub(crate) fn require_map_or_null<'a>(
    value: &'a Value,
    purpose: &str,
) -> Result<Option<&'a Entries>, DataError> {
    or_null(value, |v| require_map(v, purpose))
}

/// Kafka's `Requirements` message for a value of the wrong kind.
fn only(found: &Value, supported: &str, purpose: &str) -> String {
    format!(
        "Only {supported} for [{purpose}], found: {}",
        class_name(found)
    )
}

/// `None` for null, else what `require` makes of the value (Kafka's `require…OrNull`).
fn or_null<'a, T>(
    value: &'a Value,
    require: impl FnOnce(&'a Value) -> Result<T, DataError>,
) -> Result<Option<T>, DataError> {
    if value.is_null() {
        Ok(None)
    } else {
        require(value).map(Some)
    }
}

/// Kafka's `Requirements.requireSchema`.
pub(crate) fn require_schema<'a>(
    schema: Option<&'a SchemaRef>,
    purpose: &str,
) -> Result<&'a SchemaRef, DataError> {
    schema.ok_or_else(|| DataError(format!("Schema required for [{purpose}]")))
}

/// Kafka's `Requirements.requireSinkRecord`: the offset of a sink record.
pub(crate) fn require_sink_offset(ctx: &RecordContext, purpose: &str) -> Result<i64, DataError> {
    ctx.kafka_offset.ok_or_else(|| {
        DataError(format!("Only SinkRecord supported for [{purpose}], found: org.apache.kafka.connect.source.SourceRecord"))
    })
}

/// `map.get(key)` on a schemaless map with string keys; `Null` when absent.
pub(crate) fn map_get<'a>(map: &'a Entries, key: &str) -> &'a Value {
    map.iter()
        .rev()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
        .unwrap_or(&Value::Null)
}

/// `map.put(key, value)`: replaces the value in place, or appends.
pub(crate) fn map_put(map: &mut Entries, key: &str, value: Value) {
    match map.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(entry) => entry.1 = value,
        None => map.push((Value::String(key.to_string()), value)),
    }
}

/// `map.remove(key)`.
pub(crate) fn map_remove(map: &mut Entries, key: &str) {
    map.retain(|(k, _)| k.as_str() != Some(key));
}

/// Kafka's `SchemaUtil.copySchemaBasics(source, builder)`: name, version, doc and parameters
/// (not optionality, not the default).
pub(crate) fn copy_schema_basics(source: &Schema, mut builder: SchemaBuilder) -> SchemaBuilder {
    if let Some(name) = &source.name {
        builder = builder.name(name.clone());
    }
    if let Some(version) = source.version {
        builder = builder.version(version);
    }
    if let Some(doc) = &source.doc {
        builder = builder.doc(doc.clone());
    }
    builder.parameters(&source.parameters)
}

/// Kafka's `SchemaUtil.copySchemaBasics(source)`: a builder of the same type (arrays keep their
/// item schema) with the basics copied.
pub(crate) fn copy_schema_basics_same_type(source: &Schema) -> SchemaBuilder {
    let builder = match (&source.schema_type, &source.value_schema) {
        (crate::data::SchemaType::Array, Some(items)) => SchemaBuilder::array(items.clone()),
        (t, _) => SchemaBuilder::new(*t),
    };
    copy_schema_basics(source, builder)
}

/// A struct field's value honouring `replace.null.with.default` (Kafka's `get` vs
/// `getWithoutDefault`).
pub(crate) fn field_value(s: &Struct, name: &str, replace_null_with_default: bool) -> Value {
    let v = if replace_null_with_default {
        s.get(name)
    } else {
        s.get_without_default(name)
    };
    v.cloned().unwrap_or(Value::Null)
}

/// `Struct.put(name, value)` with Kafka's validation message on failure.
pub(crate) fn put(s: &mut Struct, name: &str, value: Value) -> Result<(), DataError> {
    s.put(name, value).map(|_| ())
}

/// Parses a transformation's config the way Kafka's `SimpleConfig` does, reporting the first
/// problem in definition order.
pub(crate) fn parse_config(
    def: &ConfigDef,
    props: &BTreeMap<String, String>,
) -> Result<ParsedConfig, ConfigError> {
    def.parse(props)
        .map_err(|errors| ConfigError::from(errors.into_iter().next().unwrap_or_default()))
}

/// The value of `name` compiled as a Java regular expression; a pattern the engine refuses gives
/// Kafka's `Invalid value <pattern> for configuration <name>: <why>: <error>`.
pub(crate) fn regex_value(
    config: &ParsedConfig,
    name: &str,
    why: &str,
) -> Result<super::JavaRegex, ConfigError> {
    let value = config.get_string(name).unwrap_or_default();
    super::JavaRegex::new(&value)
        .map_err(|e| ConfigError::invalid(name, &value, format_args!("{why}: {e}")))
}

/// A config key with no validator, group or display name.
pub(crate) fn key(
    name: &str,
    config_type: ConfigType,
    default: DefaultValue,
    importance: Importance,
    doc: &str,
) -> ConfigKey {
    ConfigKey::new(name, config_type, default, importance, doc)
}

/// `DefaultValue::Value` from text.
pub(crate) fn default(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_string())
}

/// A required `STRING` key.
pub(crate) fn required_string(name: &str, importance: Importance, doc: &str) -> ConfigKey {
    key(
        name,
        ConfigType::String,
        DefaultValue::Required,
        importance,
        doc,
    )
}

/// A required `LIST` key of high importance that must not be empty (`fields`, `headers`).
pub(crate) fn required_list_key(name: &str, doc: &str) -> ConfigKey {
    key(
        name,
        ConfigType::List,
        DefaultValue::Required,
        Importance::High,
        doc,
    )
    .validator(Validator::NonEmptyList)
}

/// The value of the `replace.null.with.default` key (`true` unless set otherwise).
pub(crate) fn replace_null_with_default(config: &ParsedConfig) -> bool {
    config.get_bool("replace.null.with.default").unwrap_or(true)
}

/// The `replace.null.with.default` key shared by several transformations.
pub(crate) fn replace_null_with_default_key() -> ConfigKey {
    key(
        "replace.null.with.default",
        ConfigType::Boolean,
        default("true"),
        Importance::Medium,
        "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
    )
}

/// Java's `List.toString()` of a list of strings: `[a, b]`.
pub(crate) fn java_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}
