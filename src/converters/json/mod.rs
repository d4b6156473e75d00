//! Kafka's `org.apache.kafka.connect.json.JsonConverter`, byte for byte.
//!
//! With `schemas.enable=true` (the default) every message is an envelope
//! `{"schema":...,"payload":...}`; without it, plain JSON. The output matches what Kafka's
//! Jackson-based converter writes: compact, schema keys in Kafka's order (`type`, children,
//! `optional`, `name`, `version`, `doc`, `parameters`, `default`), floats as Java prints them
//! (`1.0E10`), non-finite floats as the strings `"NaN"`/`"Infinity"`, bytes as base64, and
//! decimals as base64 or numbers per `decimal.format`.
//!
//! The JSON text is handled by a small reader and writer of its own rather than `serde_json`,
//! because Kafka's output keeps distinctions `serde_json::Value` loses: a `float` prints with
//! 32-bit digits, a `NUMERIC` decimal keeps its exact digits and scale, and a number read back keeps
//! its exact text until the schema says what it is.
//!
//! Differences from Kafka: `schemas.cache.size` is accepted but nothing is cached (schemas are
//! translated each time); a payload whose JSON type does not fit the schema (a string for an
//! `int32`) is an error where Jackson would quietly read `0`, `false` or `null`; text after the
//! JSON value is an error where Jackson ignores it; a `Struct` written without a schema uses its own
//! schema where Kafka fails with `Mismatching schema.`; a `NUMERIC` decimal read back is rescaled
//! to the schema's scale (an error if that would round).

//!
//! The module's parts: [`schema`] translates schemas to and from their JSON form, [`value`] translates
//! values, and [`text`] reads and writes the JSON text.

mod schema;
#[cfg(test)]
mod tests;
pub(crate) mod text;
mod value;

use super::{config_bool, config_int, Codec, RecordCodec};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};
use std::collections::BTreeMap;
use text::{parse_json, write_json, Json};

/// The Kafka class name.
pub const CLASS: &str = "org.apache.kafka.connect.json.JsonConverter";

/// Kafka's message when an envelope is required but the JSON is something else.
pub const ENVELOPE_ERROR: &str = "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.";

/// How `Decimal` values are written (`decimal.format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalFormat {
    /// Base64 of the unscaled two's-complement bytes (Kafka's default).
    Base64,
    /// A JSON number with the decimal's digits and scale.
    Numeric,
}

/// JsonConverter's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonConverterConfig {
    /// `schemas.enable` (default true): write and require the schema envelope.
    pub schemas_enable: bool,
    /// `decimal.format` (default `BASE64`, case-insensitive).
    pub decimal_format: DecimalFormat,
    /// `replace.null.with.default` (default true): write and read a null as the schema's default.
    pub replace_null_with_default: bool,
    /// `schemas.cache.size` (default 1000): accepted for compatibility, unused.
    pub schemas_cache_size: i32,
}

impl Default for JsonConverterConfig {
    fn default() -> Self {
        JsonConverterConfig {
            schemas_enable: true,
            decimal_format: DecimalFormat::Base64,
            replace_null_with_default: true,
            schemas_cache_size: 1000,
        }
    }
}

impl JsonConverterConfig {
    /// Reads the converter's keys (prefix already stripped), with Kafka's validation messages.
    pub fn from_map(config: &BTreeMap<String, String>) -> Result<Self, DataError> {
        let d = JsonConverterConfig::default();
        let decimal_format = match config.get("decimal.format") {
            None => d.decimal_format,
            Some(raw) => match raw.trim() {
                t if t.eq_ignore_ascii_case("BASE64") => DecimalFormat::Base64,
                t if t.eq_ignore_ascii_case("NUMERIC") => DecimalFormat::Numeric,
                _ => {
                    return Err(DataError::new(crate::config::invalid_value(
                        "decimal.format",
                        raw,
                        "String must be one of (case insensitive): BASE64, NUMERIC",
                    )))
                }
            },
        };
        Ok(JsonConverterConfig {
            schemas_enable: config_bool(config, "schemas.enable", d.schemas_enable)?,
            decimal_format,
            replace_null_with_default: config_bool(
                config,
                "replace.null.with.default",
                d.replace_null_with_default,
            )?,
            schemas_cache_size: config_int(config, "schemas.cache.size", d.schemas_cache_size)?,
        })
    }
}

/// Kafka's JsonConverter; also a header converter, as in Kafka.
#[derive(Clone, Debug, Default)]
pub struct JsonConverter {
    config: JsonConverterConfig,
    /// The last schema written and read: the records of one stream mostly share one schema.
    cache: SchemaCache,
}

/// The JSON text of the last schema written, and the last schema node read with the schema made of it.
#[derive(Debug, Default)]
struct SchemaCache {
    written: std::sync::Mutex<Option<(Schema, String)>>,
    read: std::sync::Mutex<Option<(Json, Option<SchemaRef>)>>,
}

/// A copy starts empty: the cache is no part of the converter's settings.
impl Clone for SchemaCache {
    fn clone(&self) -> Self {
        SchemaCache::default()
    }
}

impl JsonConverter {
    /// A converter with the given settings.
    pub fn new(config: JsonConverterConfig) -> Self {
        JsonConverter {
            config,
            cache: SchemaCache::default(),
        }
    }

    /// A converter from the converter's config keys (prefix already stripped).
    pub fn from_config(config: &BTreeMap<String, String>) -> Result<Self, DataError> {
        Ok(JsonConverter::new(JsonConverterConfig::from_map(config)?))
    }

    #[cfg(any(test, feature = "http"))]
    /// Plain JSON without envelopes: what Kafka uses internally for offsets and configs.
    pub fn schemaless() -> Self {
        JsonConverter::new(JsonConverterConfig {
            schemas_enable: false,
            ..JsonConverterConfig::default()
        })
    }

    #[cfg(any(test, feature = "protobuf"))]
    /// Kafka's `asJsonSchema`: the schema as JSON text (`{"type":"int32","optional":false}`).
    pub fn schema_to_json(&self, schema: &Schema) -> Result<String, DataError> {
        let mut out = String::new();
        write_json(&mut out, &self.as_json_schema(schema)?);
        Ok(out)
    }

    #[cfg(test)]
    /// Kafka's `asConnectSchema`: a schema from its JSON text; `null` gives `None`.
    pub fn schema_from_json(&self, text: &str) -> Result<Option<SchemaRef>, DataError> {
        let node = parse_json(text.as_bytes())
            .map_err(|e| DataError::new(format!("Invalid schema JSON: {e}")))?;
        self.as_connect_schema(&node)
    }

    fn serialize(
        &self,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        if schema.is_none() && value.is_null() {
            return Ok(None);
        }
        let mut out = String::new();
        if self.config.schemas_enable {
            // The envelope as `write_json` writes an object, with the schema's text from the cache.
            out.push_str("{\"schema\":");
            match schema {
                Some(s) => self.write_schema(&mut out, s)?,
                None => out.push_str("null"),
            }
            out.push_str(",\"payload\":");
            write_json(&mut out, &self.to_json(schema, value)?);
            out.push('}');
        } else {
            write_json(&mut out, &self.to_json(schema, value)?);
        }
        Ok(Some(out.into_bytes()))
    }

    /// Writes a schema's JSON, from the cache when it is the last schema written.
    fn write_schema(&self, out: &mut String, schema: &Schema) -> Result<(), DataError> {
        let mut written = self.cache.written.lock().expect("schema cache lock");
        if let Some((last, text)) = written.as_ref() {
            if last == schema {
                out.push_str(text);
                return Ok(());
            }
        }
        let mut text = String::new();
        write_json(&mut text, &self.as_json_schema(schema)?);
        out.push_str(&text);
        *written = Some((schema.clone(), text));
        Ok(())
    }

    /// The Connect schema of a schema node, from the cache when it is the last node read.
    fn read_schema(&self, node: &Json) -> Result<Option<SchemaRef>, DataError> {
        let mut read = self.cache.read.lock().expect("schema cache lock");
        if let Some((last, schema)) = read.as_ref() {
            if last == node {
                return Ok(schema.clone());
            }
        }
        let schema = self.as_connect_schema(node)?;
        *read = Some((node.clone(), schema.clone()));
        Ok(schema)
    }

    fn deserialize(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        let Some(data) = data else {
            return Ok(SchemaAndValue::null());
        };
        let node = parse_json(data).map_err(|e| {
            DataError::new(format!(
                "Converting byte[] to Kafka Connect data failed due to serialization error: {e}"
            ))
        })?;
        if !self.config.schemas_enable {
            let value = self.to_connect_value(None, &node)?;
            return Ok(SchemaAndValue::new(None, value));
        }
        let (schema_node, payload) = match &node {
            Json::Object(entries) if entries.len() == 2 => {
                match (node.get("schema"), node.get("payload")) {
                    (Some(s), Some(p)) => (s, p),
                    _ => return Err(DataError::new(ENVELOPE_ERROR)),
                }
            }
            _ => return Err(DataError::new(ENVELOPE_ERROR)),
        };
        let schema = self.read_schema(schema_node)?;
        let value = self.to_connect_value(schema.as_ref(), payload)?;
        Ok(SchemaAndValue::new(schema, value))
    }
}

impl RecordCodec for JsonConverter {}

impl Codec for JsonConverter {
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        self.serialize(schema, value)
    }

    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        self.deserialize(data)
    }
}

#[cfg(test)]
/// A Connect value as a `serde_json::Value`, written exactly as the schemaless JsonConverter
/// writes it (what Kafka stores for offsets and what its REST API shows for them). A null value
/// without a schema is JSON `null`.
pub fn value_to_serde_json(
    schema: Option<&Schema>,
    value: &Value,
) -> Result<serde_json::Value, DataError> {
    match JsonConverter::schemaless().serialize(schema, value)? {
        None => Ok(serde_json::Value::Null),
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            DataError::new(format!("Converting Kafka Connect data to JSON failed: {e}"))
        }),
    }
}

#[cfg(any(test, feature = "http"))]
/// A `serde_json::Value` read as the schemaless JsonConverter reads JSON: integers become
/// `Int64`, other numbers `Float64`, objects string-keyed maps.
pub fn value_from_serde_json(json: &serde_json::Value) -> Result<Value, DataError> {
    let bytes = serde_json::to_vec(json).map_err(|e| {
        DataError::new(format!("Converting JSON to Kafka Connect data failed: {e}"))
    })?;
    JsonConverter::schemaless()
        .deserialize(Some(&bytes))
        .map(|sv| sv.value)
}
