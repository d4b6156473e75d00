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

use super::{config_bool, config_int, invalid_value, Codec};
use crate::data::logical::{self, LogicalKind, ParsedDecimal};
use crate::data::{
    double_to_string, float_to_string, DataError, Schema, SchemaAndValue, SchemaBuilder, SchemaRef,
    SchemaType, Struct, Value,
};
use base64::Engine as _;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

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
                    return Err(invalid_value(
                        "decimal.format",
                        raw,
                        "String must be one of (case insensitive): BASE64, NUMERIC",
                    ))
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
}

impl JsonConverter {
    /// A converter with the given settings.
    pub fn new(config: JsonConverterConfig) -> Self {
        JsonConverter { config }
    }

    /// A converter from the converter's config keys (prefix already stripped).
    pub fn from_config(config: &BTreeMap<String, String>) -> Result<Self, DataError> {
        Ok(JsonConverter::new(JsonConverterConfig::from_map(config)?))
    }

    /// Plain JSON without envelopes: what Kafka uses internally for offsets and configs.
    pub fn schemaless() -> Self {
        JsonConverter::new(JsonConverterConfig {
            schemas_enable: false,
            ..JsonConverterConfig::default()
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &JsonConverterConfig {
        &self.config
    }

    /// Kafka's `asJsonSchema`: the schema as JSON text (`{"type":"int32","optional":false}`).
    pub fn schema_to_json(&self, schema: &Schema) -> Result<String, DataError> {
        let mut out = String::new();
        write_json(&mut out, &self.as_json_schema(schema)?);
        Ok(out)
    }

    /// Kafka's `asConnectSchema`: a schema from its JSON text; `null` gives `None`.
    pub fn schema_from_json(&self, text: &str) -> Result<Option<SchemaRef>, DataError> {
        let node = parse_json(text.as_bytes())
            .map_err(|e| DataError::new(format!("Invalid schema JSON: {e}")))?;
        self.as_connect_schema(&node)
    }

    fn as_json_schema(&self, schema: &Schema) -> Result<Json, DataError> {
        let mut obj: Vec<(String, Json)> =
            vec![("type".into(), Json::Str(schema.schema_type.as_str().into()))];
        match schema.schema_type {
            SchemaType::Array => {
                let items = match &schema.value_schema {
                    Some(s) => self.as_json_schema(s)?,
                    None => Json::Null,
                };
                obj.push(("items".into(), items));
            }
            SchemaType::Map => {
                let keys = match &schema.key_schema {
                    Some(s) => self.as_json_schema(s)?,
                    None => Json::Null,
                };
                let values = match &schema.value_schema {
                    Some(s) => self.as_json_schema(s)?,
                    None => Json::Null,
                };
                obj.push(("keys".into(), keys));
                obj.push(("values".into(), values));
            }
            SchemaType::Struct => {
                let mut fields = Vec::with_capacity(schema.fields.len());
                for f in &schema.fields {
                    let mut field = self.as_json_schema(&f.schema)?;
                    if let Json::Object(entries) = &mut field {
                        object_set(entries, "field", Json::Str(f.name.clone()));
                    }
                    fields.push(field);
                }
                obj.push(("fields".into(), Json::Array(fields)));
            }
            _ => {}
        }
        obj.push(("optional".into(), Json::Bool(schema.optional)));
        if let Some(n) = &schema.name {
            obj.push(("name".into(), Json::Str(n.clone())));
        }
        if let Some(v) = schema.version {
            obj.push(("version".into(), Json::Int(v as i64)));
        }
        if let Some(d) = &schema.doc {
            obj.push(("doc".into(), Json::Str(d.clone())));
        }
        if !schema.parameters.is_empty() {
            let params = schema
                .parameters
                .iter()
                .map(|(k, v)| (k.clone(), Json::Str(v.clone())))
                .collect();
            obj.push(("parameters".into(), Json::Object(params)));
        }
        if let Some(d) = &schema.default_value {
            obj.push(("default".into(), self.to_json(Some(schema), d)?));
        }
        Ok(Json::Object(obj))
    }

    fn as_connect_schema(&self, node: &Json) -> Result<Option<SchemaRef>, DataError> {
        if matches!(node, Json::Null) {
            return Ok(None);
        }
        let type_name = match node.get("type") {
            Some(Json::Str(t)) => t.as_str(),
            _ => return Err(DataError::new("Schema must contain 'type' field")),
        };
        let schema_type = SchemaType::from_json_name(type_name)
            .ok_or_else(|| DataError::new(format!("Unknown schema type: {type_name}")))?;
        let mut builder = match schema_type {
            SchemaType::Array => {
                let items = match node.get("items") {
                    None | Some(Json::Null) => None,
                    Some(items) => self.as_connect_schema(items)?,
                }
                .ok_or_else(|| DataError::new("Array schema did not specify the element type"))?;
                SchemaBuilder::array(items)
            }
            SchemaType::Map => {
                let keys = match node.get("keys") {
                    None | Some(Json::Null) => None,
                    Some(k) => self.as_connect_schema(k)?,
                }
                .ok_or_else(|| DataError::new("Map schema did not specify the key type"))?;
                let values = match node.get("values") {
                    None | Some(Json::Null) => None,
                    Some(v) => self.as_connect_schema(v)?,
                }
                .ok_or_else(|| DataError::new("Map schema did not specify the value type"))?;
                SchemaBuilder::map(keys, values)
            }
            SchemaType::Struct => {
                let Some(Json::Array(fields)) = node.get("fields") else {
                    return Err(DataError::new(
                        "Struct schema's \"fields\" argument is not an array.",
                    ));
                };
                let mut b = SchemaBuilder::struct_();
                for field in fields {
                    let Some(Json::Str(name)) = field.get("field") else {
                        return Err(DataError::new(
                            "Struct schema's field name not specified properly",
                        ));
                    };
                    let field_schema = self.as_connect_schema(field)?.ok_or_else(|| {
                        DataError::new("Struct schema's field name not specified properly")
                    })?;
                    b = b.field(name.clone(), field_schema);
                }
                b
            }
            primitive => SchemaBuilder::new(primitive),
        };
        if matches!(node.get("optional"), Some(Json::Bool(true))) {
            builder = builder.optional();
        }
        if let Some(Json::Str(name)) = node.get("name") {
            builder = builder.name(name.clone());
        }
        if let Some(Json::Number(n)) = node.get("version") {
            if is_integral_lexeme(n) {
                builder = builder.version(lexeme_to_i64_wrapping(n) as i32);
            }
        }
        if let Some(Json::Str(doc)) = node.get("doc") {
            builder = builder.doc(doc.clone());
        }
        if let Some(Json::Object(params)) = node.get("parameters") {
            for (k, v) in params {
                let Json::Str(v) = v else {
                    return Err(DataError::new("Schema parameters must have string values."));
                };
                builder = builder.parameter(k.clone(), v.clone());
            }
        }
        if let Some(default) = node.get("default") {
            let so_far = Arc::new(builder.schema().clone());
            let value = self.to_connect_value(Some(&so_far), default)?;
            builder = builder.default_value(value);
        }
        builder.try_build().map(Some)
    }

    /// Kafka's `convertToJson`.
    fn to_json(&self, schema: Option<&Schema>, value: &Value) -> Result<Json, DataError> {
        if value.is_null() {
            let Some(s) = schema else {
                return Ok(Json::Null);
            };
            if let (Some(d), true) = (&s.default_value, self.config.replace_null_with_default) {
                return self.to_json(schema, d);
            }
            if s.optional {
                return Ok(Json::Null);
            }
            return Err(DataError::new(
                "Conversion error: null value for field that is required and has no default value",
            ));
        }
        if let Some(s) = schema {
            if let Some(kind) = s.logical() {
                return self.logical_to_json(s, kind, value);
            }
        }
        let invalid = || {
            let type_str =
                schema.map_or("unknown schema".to_string(), |s| s.schema_type.to_string());
            DataError::new(format!(
                "Invalid type for {type_str}: {}",
                value.java_class()
            ))
        };
        let schema_type = match schema {
            Some(s) => s.schema_type,
            None => value.schema_type().ok_or_else(invalid)?,
        };
        Ok(match (schema_type, value) {
            (SchemaType::Int8, Value::Int8(v)) => Json::Int(*v as i64),
            (SchemaType::Int16, Value::Int16(v)) => Json::Int(*v as i64),
            (SchemaType::Int32, Value::Int32(v)) => Json::Int(*v as i64),
            (SchemaType::Int64, Value::Int64(v)) => Json::Int(*v),
            (SchemaType::Float32, Value::Float32(v)) => Json::Float(*v),
            (SchemaType::Float64, Value::Float64(v)) => Json::Double(*v),
            (SchemaType::Boolean, Value::Boolean(v)) => Json::Bool(*v),
            (SchemaType::String, Value::String(v)) => Json::Str(v.clone()),
            (SchemaType::Bytes, Value::Bytes(v)) => Json::Str(BASE64_WRITE.encode(v)),
            (SchemaType::Array, Value::Array(items)) => {
                let item_schema = schema.and_then(|s| s.value_schema.as_deref());
                Json::Array(
                    items
                        .iter()
                        .map(|v| self.to_json(item_schema, v))
                        .collect::<Result<_, _>>()?,
                )
            }
            (SchemaType::Map, Value::Map(entries)) => {
                let key_schema = schema.and_then(|s| s.key_schema.as_deref());
                let value_schema = schema.and_then(|s| s.value_schema.as_deref());
                let object_mode = match key_schema {
                    Some(k) => k.schema_type == SchemaType::String,
                    None => entries.iter().all(|(k, _)| matches!(k, Value::String(_))),
                };
                if object_mode {
                    let mut obj = ObjectBuilder::default();
                    for (k, v) in entries {
                        let key = self.to_json(key_schema, k)?.as_text();
                        obj.set(key, self.to_json(value_schema, v)?);
                    }
                    obj.finish()
                } else {
                    let mut list = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        list.push(Json::Array(vec![
                            self.to_json(key_schema, k)?,
                            self.to_json(value_schema, v)?,
                        ]));
                    }
                    Json::Array(list)
                }
            }
            (SchemaType::Struct, Value::Struct(st)) => {
                if let Some(s) = schema {
                    if !(std::ptr::eq(s, st.schema.as_ref()) || *s == *st.schema) {
                        return Err(DataError::new("Mismatching schema."));
                    }
                }
                let mut obj = Vec::with_capacity(st.schema.fields.len());
                for field in &st.schema.fields {
                    let v = st.values.get(field.index).unwrap_or(&Value::Null);
                    object_set(&mut obj, &field.name, self.to_json(Some(&field.schema), v)?);
                }
                Json::Object(obj)
            }
            _ => return Err(invalid()),
        })
    }

    fn logical_to_json(
        &self,
        schema: &Schema,
        kind: LogicalKind,
        value: &Value,
    ) -> Result<Json, DataError> {
        match (kind, value) {
            (LogicalKind::Decimal(_), Value::Bytes(b)) => {
                let scale = logical::decimal_scale(schema)?;
                let minimal = logical::minimal_unscaled(b);
                Ok(match self.config.decimal_format {
                    DecimalFormat::Base64 => Json::Str(BASE64_WRITE.encode(minimal)),
                    DecimalFormat::Numeric => {
                        Json::Number(logical::decimal_to_string(&minimal, scale))
                    }
                })
            }
            (LogicalKind::Decimal(_), v) => Err(DataError::new(format!(
                "Invalid type for Decimal, expected bytes but was {}",
                v.java_class()
            ))),
            (LogicalKind::Date, Value::Int32(d)) => Ok(Json::Int(*d as i64)),
            (LogicalKind::Time, Value::Int32(ms)) => Ok(Json::Int(*ms as i64)),
            (LogicalKind::Timestamp, Value::Int64(ms)) => Ok(Json::Int(*ms)),
            (LogicalKind::Date, v) => Err(DataError::new(format!(
                "Invalid type for Date, expected int32 but was {}",
                v.java_class()
            ))),
            (LogicalKind::Time, v) => Err(DataError::new(format!(
                "Invalid type for Time, expected int32 but was {}",
                v.java_class()
            ))),
            (LogicalKind::Timestamp, v) => Err(DataError::new(format!(
                "Invalid type for Timestamp, expected int64 but was {}",
                v.java_class()
            ))),
        }
    }

    /// Kafka's `convertToConnect`.
    fn to_connect_value(
        &self,
        schema: Option<&SchemaRef>,
        node: &Json,
    ) -> Result<Value, DataError> {
        let Some(schema) = schema else {
            return Ok(match node {
                Json::Null | Json::Missing => Value::Null,
                Json::Bool(b) => Value::Boolean(*b),
                Json::Number(n) if is_integral_lexeme(n) => Value::Int64(lexeme_to_i64_wrapping(n)),
                Json::Number(n) => Value::Float64(n.parse().unwrap_or(f64::NAN)),
                Json::Int(i) => Value::Int64(*i),
                Json::Float(f) => Value::Float64(*f as f64),
                Json::Double(d) => Value::Float64(*d),
                Json::Str(s) => Value::String(s.clone()),
                Json::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|i| self.to_connect_value(None, i))
                        .collect::<Result<_, _>>()?,
                ),
                Json::Object(entries) => Value::Map(
                    entries
                        .iter()
                        .map(|(k, v)| {
                            Ok((Value::String(k.clone()), self.to_connect_value(None, v)?))
                        })
                        .collect::<Result<_, DataError>>()?,
                ),
            });
        };
        if matches!(node, Json::Null | Json::Missing) {
            if let (Some(d), true) = (&schema.default_value, self.config.replace_null_with_default)
            {
                return Ok(d.clone());
            }
            if schema.optional {
                return Ok(Value::Null);
            }
            return Err(DataError::new(format!(
                "Invalid null value for required {} field",
                schema.schema_type
            )));
        }
        if let Some(kind) = schema.logical() {
            return logical_to_connect(schema, kind, node);
        }
        let mismatch = |expected: &str| {
            DataError::new(format!(
                "Invalid value for {} field: expected a JSON {expected} but found {}",
                schema.schema_type,
                node.node_type()
            ))
        };
        Ok(match schema.schema_type {
            SchemaType::Boolean => match node {
                Json::Bool(b) => Value::Boolean(*b),
                _ => return Err(mismatch("boolean")),
            },
            SchemaType::Int8 => {
                Value::Int8(node.as_i64_wrapping().ok_or_else(|| mismatch("number"))? as i32 as i8)
            }
            SchemaType::Int16 => Value::Int16(
                node.as_i64_wrapping().ok_or_else(|| mismatch("number"))? as i32 as i16,
            ),
            SchemaType::Int32 => {
                Value::Int32(node.as_i64_wrapping().ok_or_else(|| mismatch("number"))? as i32)
            }
            SchemaType::Int64 => {
                Value::Int64(node.as_i64_wrapping().ok_or_else(|| mismatch("number"))?)
            }
            SchemaType::Float32 => Value::Float32(node.as_f32().ok_or_else(|| mismatch("number"))?),
            SchemaType::Float64 => Value::Float64(node.as_f64().ok_or_else(|| mismatch("number"))?),
            SchemaType::String => match node {
                Json::Str(s) => Value::String(s.clone()),
                _ => return Err(mismatch("string")),
            },
            SchemaType::Bytes => match node {
                Json::Str(s) => Value::Bytes(
                    decode_base64(s).ok_or_else(|| DataError::new("Invalid bytes field"))?,
                ),
                _ => return Err(mismatch("string")),
            },
            SchemaType::Array => match node {
                Json::Array(items) => {
                    let item_schema = schema.value_schema.as_ref();
                    Value::Array(
                        items
                            .iter()
                            .map(|i| self.to_connect_value(item_schema, i))
                            .collect::<Result<_, _>>()?,
                    )
                }
                _ => return Err(mismatch("array")),
            },
            SchemaType::Map => {
                let key_schema = schema.key_schema.as_ref();
                let value_schema = schema.value_schema.as_ref();
                if key_schema.is_none_or(|k| k.schema_type == SchemaType::String) {
                    let Json::Object(entries) = node else {
                        return Err(DataError::new(format!(
                            "Maps with string fields should be encoded as JSON objects, but found {}",
                            node.node_type()
                        )));
                    };
                    let mut out = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        out.push((
                            Value::String(k.clone()),
                            self.to_connect_value(value_schema, v)?,
                        ));
                    }
                    Value::Map(out)
                } else {
                    let Json::Array(entries) = node else {
                        return Err(DataError::new(format!(
                            "Maps with non-string fields should be encoded as JSON array of tuples, but found {}",
                            node.node_type()
                        )));
                    };
                    let mut out: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
                    for entry in entries {
                        let Json::Array(pair) = entry else {
                            return Err(DataError::new(format!(
                                "Found invalid map entry instead of array tuple: {}",
                                entry.node_type()
                            )));
                        };
                        if pair.len() != 2 {
                            return Err(DataError::new(format!(
                                "Found invalid map entry, expected length 2 but found :{}",
                                pair.len()
                            )));
                        }
                        let k = self.to_connect_value(key_schema, &pair[0])?;
                        let v = self.to_connect_value(value_schema, &pair[1])?;
                        match out.iter_mut().find(|(existing, _)| *existing == k) {
                            Some(slot) => slot.1 = v,
                            None => out.push((k, v)),
                        }
                    }
                    Value::Map(out)
                }
            }
            SchemaType::Struct => {
                if !matches!(node, Json::Object(_)) {
                    return Err(DataError::new(format!(
                        "Structs should be encoded as JSON objects, but found {}",
                        node.node_type()
                    )));
                }
                let mut st = Struct::new(Arc::clone(schema));
                for field in &schema.fields {
                    let v = self.to_connect_value(
                        Some(&field.schema),
                        node.get(&field.name).unwrap_or(&Json::Missing),
                    )?;
                    st.values[field.index] = v;
                }
                Value::Struct(st)
            }
        })
    }

    fn serialize(
        &self,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        if schema.is_none() && value.is_null() {
            return Ok(None);
        }
        let node = if self.config.schemas_enable {
            let schema_json = match schema {
                Some(s) => self.as_json_schema(s)?,
                None => Json::Null,
            };
            Json::Object(vec![
                ("schema".into(), schema_json),
                ("payload".into(), self.to_json(schema, value)?),
            ])
        } else {
            self.to_json(schema, value)?
        };
        let mut out = String::new();
        write_json(&mut out, &node);
        Ok(Some(out.into_bytes()))
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
        let schema = self.as_connect_schema(schema_node)?;
        let value = self.to_connect_value(schema.as_ref(), payload)?;
        Ok(SchemaAndValue::new(schema, value))
    }
}

impl Codec for JsonConverter {
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        self.serialize(schema, value)
    }

    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        self.deserialize(data)
    }
}

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

fn logical_to_connect(schema: &Schema, kind: LogicalKind, node: &Json) -> Result<Value, DataError> {
    match kind {
        LogicalKind::Decimal(_) => {
            let scale = logical::decimal_scale(schema)?;
            match node {
                Json::Number(n) => {
                    let parsed = ParsedDecimal::parse(n)
                        .ok_or_else(|| DataError::new(format!("Invalid decimal value: {n}")))?;
                    let unscaled = parsed.unscaled_at(scale as i64).ok_or_else(|| {
                        DataError::new(format!(
                            "Decimal value {n} cannot be represented with scale {scale} without rounding or overflow"
                        ))
                    })?;
                    Ok(Value::Bytes(logical::i128_to_unscaled(unscaled)))
                }
                Json::Str(s) => decode_base64(s)
                    .map(|b| Value::Bytes(logical::minimal_unscaled(&b)))
                    .ok_or_else(|| DataError::new("Invalid bytes for Decimal field")),
                other => Err(DataError::new(format!(
                    "Invalid type for Decimal, underlying representation should be numeric or bytes but was {}",
                    other.node_type()
                ))),
            }
        }
        LogicalKind::Date | LogicalKind::Time => {
            let what = if kind == LogicalKind::Date { "Date" } else { "Time" };
            match node {
                Json::Number(n) if is_integral_lexeme(n) => n.parse::<i32>().map(Value::Int32).map_err(|_| {
                    DataError::new(format!(
                        "Invalid type for {what}, underlying representation should be integer but was NUMBER"
                    ))
                }),
                other => Err(DataError::new(format!(
                    "Invalid type for {what}, underlying representation should be integer but was {}",
                    other.node_type()
                ))),
            }
        }
        LogicalKind::Timestamp => match node {
            Json::Number(n) if is_integral_lexeme(n) => Ok(Value::Int64(lexeme_to_i64_wrapping(n))),
            other => Err(DataError::new(format!(
                "Invalid type for Timestamp, underlying representation should be integral but was {}",
                other.node_type()
            ))),
        },
    }
}

const BASE64_WRITE: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Base64 as Jackson reads it: the standard alphabet, padding optional.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    LENIENT.decode(s).ok()
}

/// A JSON tree that keeps what Kafka's output depends on: 32- vs 64-bit floats when writing and
/// each number's exact text when reading.
#[derive(Clone, Debug, PartialEq)]
enum Json {
    /// No content at all (empty input, absent field): Jackson's `MissingNode`.
    Missing,
    Null,
    Bool(bool),
    Int(i64),
    /// Written with `Float.toString` digits.
    Float(f32),
    /// Written with `Double.toString` digits.
    Double(f64),
    /// A number kept as its exact text (as read, or a `NUMERIC` decimal to write).
    Number(String),
    Str(String),
    Array(Vec<Json>),
    /// Insertion-ordered; a repeated key replaces the earlier value in place.
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Jackson's `getNodeType()` name, as used in Kafka's messages.
    fn node_type(&self) -> &'static str {
        match self {
            Json::Missing => "MISSING",
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) | Json::Float(_) | Json::Double(_) | Json::Number(_) => "NUMBER",
            Json::Str(_) => "STRING",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// Jackson's `asText()`, used for map keys.
    fn as_text(&self) -> String {
        match self {
            Json::Str(s) => s.clone(),
            Json::Null => "null".into(),
            Json::Missing | Json::Array(_) | Json::Object(_) => String::new(),
            other => {
                let mut out = String::new();
                write_json(&mut out, other);
                out
            }
        }
    }

    /// Java's `longValue()` of a number node: integers wrap, fractions truncate.
    fn as_i64_wrapping(&self) -> Option<i64> {
        match self {
            Json::Int(i) => Some(*i),
            Json::Float(f) => Some(*f as i64),
            Json::Double(d) => Some(*d as i64),
            Json::Number(n) => Some(lexeme_to_i64_wrapping(n)),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Int(i) => Some(*i as f64),
            Json::Float(f) => Some(*f as f64),
            Json::Double(d) => Some(*d),
            Json::Number(n) => n.parse().ok(),
            Json::Str(s) => non_finite(s),
            _ => None,
        }
    }

    fn as_f32(&self) -> Option<f32> {
        match self {
            Json::Int(i) => Some(*i as f32),
            Json::Float(f) => Some(*f),
            Json::Double(d) => Some(*d as f32),
            Json::Number(n) => n.parse().ok(),
            Json::Str(s) => non_finite(s).map(|d| d as f32),
            _ => None,
        }
    }
}

/// The strings Jackson writes for non-finite floats, read back.
fn non_finite(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Builds an object in insertion order where a repeated key replaces the earlier value in place,
/// as Jackson's `ObjectNode.set` does, without a quadratic scan on large objects.
#[derive(Default)]
struct ObjectBuilder {
    entries: Vec<(String, Json)>,
    index: HashMap<String, usize>,
}

impl ObjectBuilder {
    fn set(&mut self, key: String, value: Json) {
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    fn finish(self) -> Json {
        Json::Object(self.entries)
    }
}

fn object_set(entries: &mut Vec<(String, Json)>, key: &str, value: Json) {
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => entries.push((key.to_string(), value)),
    }
}

fn is_integral_lexeme(n: &str) -> bool {
    !n.contains(['.', 'e', 'E'])
}

fn lexeme_to_i64_wrapping(n: &str) -> i64 {
    if is_integral_lexeme(n) {
        if let Ok(v) = n.parse::<i64>() {
            return v;
        }
        if let Ok(v) = n.parse::<i128>() {
            return v as i64;
        }
    }
    n.parse::<f64>().map(|d| d as i64).unwrap_or(0)
}

/// Writes compact JSON as Jackson does: no spaces, `"` `\` and control characters escaped
/// (`\n`-style where JSON has a short form, `\u00XX` upper-case otherwise), other text raw.
fn write_json(out: &mut String, node: &Json) {
    match node {
        Json::Missing => {}
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::Float(f) if f.is_finite() => out.push_str(&float_to_string(*f)),
        Json::Double(d) if d.is_finite() => out.push_str(&double_to_string(*d)),
        Json::Float(f) => write_string(out, &float_to_string(*f)),
        Json::Double(d) => write_string(out, &double_to_string(*d)),
        Json::Number(n) => out.push_str(n),
        Json::Str(s) => write_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Json::Object(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_json(out, v);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Jackson's nesting limit; deeper input is rejected rather than overflowing the stack.
const MAX_DEPTH: usize = 1000;

/// Parses one JSON value (RFC 8259, plus leading zeros in numbers as Kafka's deserializer allows).
/// Empty or blank input is `Json::Missing`, as Jackson's `readTree` returns.
fn parse_json(bytes: &[u8]) -> Result<Json, String> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| format!("Invalid UTF-8 in JSON input: {e}"))?;
    let mut r = Reader {
        s: text.as_bytes(),
        pos: 0,
        text,
    };
    r.skip_ws();
    if r.pos == r.s.len() {
        return Ok(Json::Missing);
    }
    let v = r.value(0)?;
    r.skip_ws();
    if r.pos != r.s.len() {
        return Err(r.error("unexpected content after the JSON value"));
    }
    Ok(v)
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
    text: &'a str,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("{what} at offset {}", self.pos)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn expect_literal(&mut self, lit: &str, v: Json) -> Result<Json, String> {
        if self.s[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            Ok(v)
        } else {
            Err(self.error("unrecognized token"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("JSON nesting too deep"));
        }
        self.skip_ws();
        match self.peek() {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => {
                self.pos += 1;
                let mut entries = ObjectBuilder::default();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(entries.finish());
                }
                loop {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.error("expected a field name"));
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek() != Some(b':') {
                        return Err(self.error("expected ':'"));
                    }
                    self.pos += 1;
                    let v = self.value(depth + 1)?;
                    entries.set(key, v);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(entries.finish());
                        }
                        _ => return Err(self.error("expected ',' or '}'")),
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(self.error("expected ',' or ']'")),
                    }
                }
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.expect_literal("true", Json::Bool(true)),
            Some(b'f') => self.expect_literal("false", Json::Bool(false)),
            Some(b'n') => self.expect_literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |r: &mut Self| {
            let s = r.pos;
            while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                r.pos += 1;
            }
            r.pos - s
        };
        if digits(self) == 0 {
            return Err(self.error("invalid number"));
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("invalid number"));
            }
        }
        Ok(Json::Number(self.text[start..self.pos].to_string()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .s
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("bad \\u escape"))?;
        let h = std::str::from_utf8(h).map_err(|_| self.error("bad \\u escape"))?;
        let v = u32::from_str_radix(h, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c != b'"' && c != b'\\' && c >= 0x20)
            {
                self.pos += 1;
            }
            out.push_str(&self.text[start..self.pos]);
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated string"))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{08}'),
                        b'f' => out.push('\u{0C}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi)
                                && self.s[self.pos..].starts_with(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                } else {
                                    self.pos = save;
                                    None
                                }
                            } else {
                                char::from_u32(hi)
                            };
                            out.push(c.unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(self.error("unrecognized character escape")),
                    }
                }
                Some(_) => return Err(self.error("illegal unquoted control character in string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::{Converter, HeaderConverter};
    use crate::data::Field;

    fn conv(pairs: &[(&str, &str)]) -> JsonConverter {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        JsonConverter::from_config(&map).unwrap()
    }

    fn with_schemas() -> JsonConverter {
        conv(&[])
    }

    fn without_schemas() -> JsonConverter {
        conv(&[("schemas.enable", "false")])
    }

    fn write(c: &JsonConverter, schema: Option<&Schema>, value: &Value) -> String {
        String::from_utf8(c.from_connect("t", schema, value).unwrap().unwrap()).unwrap()
    }

    fn read(c: &JsonConverter, json: &str) -> SchemaAndValue {
        c.to_connect("t", Some(json.as_bytes())).unwrap()
    }

    /// Found by the `json_converter` fuzz target: a number beyond the double range reads as infinity and is
    /// written back as the string "Infinity", as Jackson does; the round trip changes it to a string.
    #[test]
    fn numbers_beyond_double_range_read_as_infinity_and_write_as_strings() {
        let c = without_schemas();
        let huge = format!("{{\"a\":[1,{}9e999]}}", "9".repeat(400));
        let v = read(&c, &huge).value;
        let Value::Map(entries) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(
            entries[0].1,
            Value::Array(vec![Value::Int64(1), Value::Float64(f64::INFINITY)])
        );
        assert_eq!(write(&c, None, &v), r#"{"a":[1,"Infinity"]}"#);
        assert_eq!(
            read(&c, r#"{"a":[1,"Infinity"]}"#).value,
            Value::Map(vec![(
                Value::from("a"),
                Value::Array(vec![Value::Int64(1), Value::String("Infinity".into())])
            )])
        );
    }

    /// Writes with and without envelope, checks both texts, and reads both back.
    fn check(schema: SchemaRef, value: Value, enveloped: &str, plain: &str) {
        let c = with_schemas();
        assert_eq!(write(&c, Some(&schema), &value), enveloped);
        let back = read(&c, enveloped);
        assert_eq!(
            back.schema.as_deref(),
            Some(&*schema),
            "schema read back from {enveloped}"
        );
        assert_eq!(back.value, value, "value read back from {enveloped}");
        let c = without_schemas();
        assert_eq!(write(&c, Some(&schema), &value), plain);
    }

    #[test]
    fn primitives_with_and_without_schemas() {
        check(
            Schema::int8(),
            Value::Int8(12),
            r#"{"schema":{"type":"int8","optional":false},"payload":12}"#,
            "12",
        );
        check(
            Schema::int16(),
            Value::Int16(-12),
            r#"{"schema":{"type":"int16","optional":false},"payload":-12}"#,
            "-12",
        );
        check(
            Schema::int32(),
            Value::Int32(12),
            r#"{"schema":{"type":"int32","optional":false},"payload":12}"#,
            "12",
        );
        check(
            Schema::int64(),
            Value::Int64(4398046511104),
            r#"{"schema":{"type":"int64","optional":false},"payload":4398046511104}"#,
            "4398046511104",
        );
        check(
            Schema::float32(),
            Value::Float32(12.34),
            r#"{"schema":{"type":"float","optional":false},"payload":12.34}"#,
            "12.34",
        );
        check(
            Schema::float64(),
            Value::Float64(1e10),
            r#"{"schema":{"type":"double","optional":false},"payload":1.0E10}"#,
            "1.0E10",
        );
        check(
            Schema::boolean(),
            Value::Boolean(true),
            r#"{"schema":{"type":"boolean","optional":false},"payload":true}"#,
            "true",
        );
        check(
            Schema::string(),
            Value::from("hello"),
            r#"{"schema":{"type":"string","optional":false},"payload":"hello"}"#,
            r#""hello""#,
        );
        check(
            Schema::bytes(),
            Value::Bytes(b"test-string".to_vec()),
            r#"{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}"#,
            r#""dGVzdC1zdHJpbmc=""#,
        );
    }

    #[test]
    fn optional_and_metadata() {
        check(
            Schema::optional_string(),
            Value::Null,
            r#"{"schema":{"type":"string","optional":true},"payload":null}"#,
            "null",
        );
        let s = SchemaBuilder::int32()
            .optional()
            .name("n")
            .version(2)
            .doc("d")
            .parameter("p", "v")
            .default_value(Value::Int32(5))
            .build();
        check(
            s,
            Value::Int32(7),
            r#"{"schema":{"type":"int32","optional":true,"name":"n","version":2,"doc":"d","parameters":{"p":"v"},"default":5},"payload":7}"#,
            "7",
        );
    }

    #[test]
    fn null_uses_default_unless_disabled() {
        let s = SchemaBuilder::int32()
            .default_value(Value::Int32(5))
            .build();
        let c = with_schemas();
        assert_eq!(
            write(&c, Some(&s), &Value::Null),
            r#"{"schema":{"type":"int32","optional":false,"default":5},"payload":5}"#
        );
        assert_eq!(
            read(
                &c,
                r#"{"schema":{"type":"int32","optional":false,"default":5},"payload":null}"#
            )
            .value,
            Value::Int32(5)
        );
        let c = conv(&[("replace.null.with.default", "false")]);
        let opt = SchemaBuilder::int32()
            .optional()
            .default_value(Value::Int32(5))
            .build();
        assert_eq!(
            write(&c, Some(&opt), &Value::Null),
            r#"{"schema":{"type":"int32","optional":true,"default":5},"payload":null}"#
        );
        assert_eq!(
            read(
                &c,
                r#"{"schema":{"type":"int32","optional":true,"default":5},"payload":null}"#
            )
            .value,
            Value::Null
        );
        assert_eq!(
            c.from_connect("t", Some(&s), &Value::Null).unwrap_err().0,
            "Conversion error: null value for field that is required and has no default value"
        );
    }

    fn rec() -> SchemaRef {
        SchemaBuilder::struct_()
            .name("rec")
            .field("a", Schema::int32())
            .build()
    }

    #[test]
    fn structs() {
        let st = Struct::new(rec()).with("a", 1).unwrap();
        check(
            rec(),
            Value::Struct(st),
            r#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false,"name":"rec"},"payload":{"a":1}}"#,
            r#"{"a":1}"#,
        );
        let nested = SchemaBuilder::struct_()
            .field("first", Schema::string())
            .field(
                "inner",
                SchemaBuilder::struct_()
                    .field("x", Schema::optional_float64())
                    .optional()
                    .build(),
            )
            .field("tags", SchemaBuilder::array(Schema::string()).build())
            .build();
        let inner_schema = nested.field("inner").unwrap().schema.clone();
        let inner = Struct::new(inner_schema).with("x", 2.5).unwrap();
        let v = Struct::new(nested.clone())
            .with("first", "a\"b\n")
            .unwrap()
            .with("inner", inner)
            .unwrap()
            .with("tags", vec![Value::from("t1")])
            .unwrap();
        check(
            nested,
            Value::Struct(v),
            r#"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"first"},{"type":"struct","fields":[{"type":"double","optional":true,"field":"x"}],"optional":true,"field":"inner"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"}],"optional":false},"payload":{"first":"a\"b\n","inner":{"x":2.5},"tags":["t1"]}}"#,
            r#"{"first":"a\"b\n","inner":{"x":2.5},"tags":["t1"]}"#,
        );
    }

    #[test]
    fn struct_errors() {
        let c = with_schemas();
        let other = SchemaBuilder::struct_()
            .name("other")
            .field("a", Schema::int32())
            .build();
        let st = Struct::new(other).with("a", 1).unwrap();
        assert_eq!(
            c.from_connect("t", Some(&rec()), &Value::Struct(st))
                .unwrap_err()
                .0,
            "Mismatching schema."
        );
        let e = c
            .to_connect(
                "t",
                Some(br#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false},"payload":{}}"#),
            )
            .unwrap_err();
        assert_eq!(e.0, "Invalid null value for required INT32 field");
        let e = c
            .to_connect(
                "t",
                Some(br#"{"schema":{"type":"struct","fields":[],"optional":false},"payload":[1]}"#),
            )
            .unwrap_err();
        assert_eq!(
            e.0,
            "Structs should be encoded as JSON objects, but found ARRAY"
        );
        let e = c
            .from_connect("t", Some(&Schema::int32()), &Value::from("x"))
            .unwrap_err();
        assert_eq!(e.0, "Invalid type for INT32: class java.lang.String");
    }

    #[test]
    fn arrays_and_maps() {
        check(
            SchemaBuilder::array(Schema::int32()).build(),
            Value::Array(vec![Value::Int32(1), Value::Int32(2), Value::Int32(3)]),
            r#"{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}"#,
            "[1,2,3]",
        );
        check(
            SchemaBuilder::map(Schema::string(), Schema::int32()).build(),
            Value::Map(vec![
                (Value::from("key1"), Value::Int32(12)),
                (Value::from("key2"), Value::Int32(15)),
            ]),
            r#"{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":{"key1":12,"key2":15}}"#,
            r#"{"key1":12,"key2":15}"#,
        );
        check(
            SchemaBuilder::map(Schema::int32(), Schema::int32()).build(),
            Value::Map(vec![
                (Value::Int32(1), Value::Int32(12)),
                (Value::Int32(2), Value::Int32(15)),
            ]),
            r#"{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":[[1,12],[2,15]]}"#,
            "[[1,12],[2,15]]",
        );
        let c = with_schemas();
        let e = c
            .to_connect(
                "t",
                Some(br#"{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":[[1]]}"#),
            )
            .unwrap_err();
        assert_eq!(
            e.0,
            "Found invalid map entry, expected length 2 but found :1"
        );
    }

    #[test]
    fn decimals_base64_and_numeric() {
        let schema = logical::decimal(2).build();
        let value = Value::Bytes(logical::decimal_from_str("1.56", 2).unwrap());
        check(
            schema.clone(),
            value.clone(),
            r#"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"AJw="}"#,
            r#""AJw=""#,
        );
        let numeric = conv(&[("decimal.format", "numeric")]);
        let text = write(&numeric, Some(&schema), &value);
        assert_eq!(
            text,
            r#"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":1.56}"#
        );
        assert_eq!(read(&numeric, &text).value, value);
        // either form reads back under either setting
        assert_eq!(read(&with_schemas(), &text).value, value);
        let plain = conv(&[("decimal.format", "NUMERIC"), ("schemas.enable", "false")]);
        let negative = Value::Bytes(logical::decimal_from_str("-0.05", 2).unwrap());
        assert_eq!(write(&plain, Some(&schema), &negative), "-0.05");
        assert_eq!(
            JsonConverter::from_config(&[("decimal.format".to_string(), "HEX".to_string())].into())
                .unwrap_err()
                .0,
            "Invalid value HEX for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC"
        );
    }

    #[test]
    fn dates_times_timestamps() {
        check(
            logical::date().build(),
            Value::Int32(10000),
            r#"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":10000}"#,
            "10000",
        );
        check(
            logical::time().build(),
            Value::Int32(14_400_000),
            r#"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},"payload":14400000}"#,
            "14400000",
        );
        check(
            logical::timestamp().build(),
            Value::Int64(4_000_000_000),
            r#"{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},"payload":4000000000}"#,
            "4000000000",
        );
        let c = with_schemas();
        let e = c
            .to_connect(
                "t",
                Some(br#"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":"x"}"#),
            )
            .unwrap_err();
        assert_eq!(
            e.0,
            "Invalid type for Date, underlying representation should be integer but was STRING"
        );
    }

    #[test]
    fn envelope_is_enforced() {
        let c = with_schemas();
        for bad in [
            r#"{"a":1}"#,
            r#"{"schema":null}"#,
            r#"{"schema":null,"payload":1,"x":2}"#,
            "[1]",
            "1",
            "",
        ] {
            assert_eq!(
                c.to_connect("t", Some(bad.as_bytes())).unwrap_err().0,
                ENVELOPE_ERROR,
                "{bad}"
            );
        }
        assert_eq!(
            ENVELOPE_ERROR,
            "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."
        );
        let sv = read(&c, r#"{"schema":null,"payload":{"a":1}}"#);
        assert_eq!(sv.schema, None);
        assert_eq!(
            sv.value,
            Value::Map(vec![(Value::from("a"), Value::Int64(1))])
        );
    }

    #[test]
    fn schemaless_number_inference() {
        let c = without_schemas();
        let sv = read(
            &c,
            r#"{"i":1,"big":12345678901,"f":1.5,"e":1e3,"z":0.0,"s":"x","b":true,"n":null,"l":[1,"a"]}"#,
        );
        assert_eq!(sv.schema, None);
        assert_eq!(
            sv.value,
            Value::Map(vec![
                (Value::from("i"), Value::Int64(1)),
                (Value::from("big"), Value::Int64(12_345_678_901)),
                (Value::from("f"), Value::Float64(1.5)),
                (Value::from("e"), Value::Float64(1000.0)),
                (Value::from("z"), Value::Float64(0.0)),
                (Value::from("s"), Value::from("x")),
                (Value::from("b"), Value::Boolean(true)),
                (Value::from("n"), Value::Null),
                (
                    Value::from("l"),
                    Value::Array(vec![Value::Int64(1), Value::from("a")])
                ),
            ])
        );
        assert_eq!(read(&c, "").value, Value::Null);
        assert_eq!(read(&c, " 007 ").value, Value::Int64(7));
    }

    #[test]
    fn schemaless_writing_infers_from_values() {
        let c = without_schemas();
        let v = Value::Map(vec![
            (Value::from("a"), Value::Int32(1)),
            (
                Value::from("b"),
                Value::Array(vec![Value::Float32(0.1), Value::Null]),
            ),
            (Value::from("c"), Value::Bytes(vec![1, 2])),
        ]);
        assert_eq!(write(&c, None, &v), r#"{"a":1,"b":[0.1,null],"c":"AQI="}"#);
        let v = Value::Map(vec![
            (Value::Int8(1), Value::from("x")),
            (Value::from("k"), Value::Boolean(false)),
        ]);
        assert_eq!(write(&c, None, &v), r#"[[1,"x"],["k",false]]"#);
        let envelope = with_schemas();
        assert_eq!(
            write(&envelope, None, &Value::Int64(3)),
            r#"{"schema":null,"payload":3}"#
        );
        let st = Struct::new(rec()).with("a", 4).unwrap();
        assert_eq!(write(&c, None, &Value::Struct(st)), r#"{"a":4}"#);
        assert_eq!(write(&c, None, &Value::Float64(f64::NAN)), r#""NaN""#);
    }

    #[test]
    fn tombstones() {
        for c in [with_schemas(), without_schemas()] {
            assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
            assert_eq!(c.to_connect("t", None).unwrap(), SchemaAndValue::null());
        }
        let sv = read(&with_schemas(), r#"{"schema":null,"payload":null}"#);
        assert_eq!(sv, SchemaAndValue::null());
    }

    #[test]
    fn string_escaping() {
        let c = without_schemas();
        assert_eq!(
            write(&c, None, &Value::from("a\u{1}b\t/é\\")),
            "\"a\\u0001b\\t/é\\\\\""
        );
        assert_eq!(
            read(&c, r#""\u00e9\ud83d\ude00\/""#).value,
            Value::from("é😀/")
        );
    }

    #[test]
    fn malformed_input() {
        let c = without_schemas();
        let e = c.to_connect("t", Some(b"{\"a\":")).unwrap_err();
        assert!(
            e.0.starts_with(
                "Converting byte[] to Kafka Connect data failed due to serialization error: "
            ),
            "{e}"
        );
        assert!(c.to_connect("t", Some(b"[1] x")).is_err());
        assert!(c.to_connect("t", Some(b"\xff")).is_err());
        let deep = "[".repeat(5000);
        assert!(c.to_connect("t", Some(deep.as_bytes())).is_err());
        let strict = with_schemas();
        let e = strict
            .to_connect(
                "t",
                Some(br#"{"schema":{"type":"int32","optional":false},"payload":"7"}"#),
            )
            .unwrap_err();
        assert_eq!(
            e.0,
            "Invalid value for INT32 field: expected a JSON number but found STRING"
        );
    }

    #[test]
    fn schema_json_errors() {
        let c = with_schemas();
        let cases = [
            (
                r#"{"schema":{"optional":false},"payload":1}"#,
                "Schema must contain 'type' field",
            ),
            (
                r#"{"schema":{"type":"int128"},"payload":1}"#,
                "Unknown schema type: int128",
            ),
            (
                r#"{"schema":{"type":"array"},"payload":[]}"#,
                "Array schema did not specify the element type",
            ),
            (
                r#"{"schema":{"type":"map","values":{"type":"int8"}},"payload":{}}"#,
                "Map schema did not specify the key type",
            ),
            (
                r#"{"schema":{"type":"struct"},"payload":{}}"#,
                "Struct schema's \"fields\" argument is not an array.",
            ),
            (
                r#"{"schema":{"type":"struct","fields":[{"type":"int8"}]},"payload":{}}"#,
                "Struct schema's field name not specified properly",
            ),
            (
                r#"{"schema":{"type":"int8","parameters":{"a":1}},"payload":1}"#,
                "Schema parameters must have string values.",
            ),
        ];
        for (json, msg) in cases {
            assert_eq!(
                c.to_connect("t", Some(json.as_bytes())).unwrap_err().0,
                msg,
                "{json}"
            );
        }
    }

    #[test]
    fn schema_text_round_trip() {
        let c = with_schemas();
        let schema = SchemaBuilder::struct_()
            .name("r")
            .field(
                "m",
                SchemaBuilder::map(Schema::string(), logical::decimal(3).optional().build())
                    .build(),
            )
            .build();
        let text = c.schema_to_json(&schema).unwrap();
        assert_eq!(
            text,
            r#"{"type":"struct","fields":[{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"3"}},"optional":false,"field":"m"}],"optional":false,"name":"r"}"#
        );
        assert_eq!(
            c.schema_from_json(&text).unwrap().as_deref(),
            Some(&*schema)
        );
        assert_eq!(c.schema_from_json("null").unwrap(), None);
        let field: &Field = &schema.fields[0];
        assert_eq!(field.index, 0);
    }

    #[test]
    fn schemaless_round_trips() {
        let c = without_schemas();
        let v = Value::Map(vec![
            (Value::from("s"), Value::from("x")),
            (Value::from("i"), Value::Int64(-7)),
            (Value::from("d"), Value::Float64(0.25)),
            (Value::from("b"), Value::Boolean(true)),
            (Value::from("n"), Value::Null),
            (
                Value::from("a"),
                Value::Array(vec![Value::Int64(1), Value::Map(vec![])]),
            ),
        ]);
        let text = write(&c, None, &v);
        assert_eq!(
            text,
            r#"{"s":"x","i":-7,"d":0.25,"b":true,"n":null,"a":[1,{}]}"#
        );
        assert_eq!(read(&c, &text), SchemaAndValue::new(None, v));
    }

    #[test]
    fn duplicate_keys_replace_in_place() {
        let c = without_schemas();
        assert_eq!(
            read(&c, r#"{"a":1,"b":2,"a":3}"#).value,
            Value::Map(vec![
                (Value::from("a"), Value::Int64(3)),
                (Value::from("b"), Value::Int64(2))
            ])
        );
        let big: String = (0..20_000)
            .map(|i| format!("\"k{i}\":{i}"))
            .collect::<Vec<_>>()
            .join(",");
        let sv = read(&c, &format!("{{{big}}}"));
        assert!(matches!(sv.value, Value::Map(ref m) if m.len() == 20_000));
    }

    #[test]
    fn read_structs_share_the_envelope_schema() {
        let sv = read(
            &with_schemas(),
            r#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false,"name":"rec"},"payload":{"a":1,"ignored":2}}"#,
        );
        let schema = sv.schema.unwrap();
        assert_eq!(*schema, *rec());
        match sv.value {
            Value::Struct(st) => {
                assert!(Arc::ptr_eq(&st.schema, &schema));
                assert_eq!(st.get("a"), Some(&Value::Int32(1)));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn serde_json_bridge() {
        let json = serde_json::json!({"partition": {"filename": "/tmp/x"}, "offset": {"position": 42, "f": 1.5}});
        let v = value_from_serde_json(&json).unwrap();
        assert_eq!(
            v.map_get(&Value::from("offset"))
                .unwrap()
                .map_get(&Value::from("position")),
            Some(&Value::Int64(42))
        );
        assert_eq!(value_to_serde_json(None, &v).unwrap(), json);
        assert_eq!(
            value_to_serde_json(None, &Value::Null).unwrap(),
            serde_json::Value::Null
        );
    }

    #[test]
    fn works_as_header_converter() {
        let c = with_schemas();
        let bytes = c
            .from_connect_header("t", "h", Some(&Schema::int32()), &Value::Int32(9))
            .unwrap()
            .unwrap();
        assert_eq!(
            bytes,
            br#"{"schema":{"type":"int32","optional":false},"payload":9}"#
        );
        let back = c.to_connect_header("t", "h", Some(&bytes)).unwrap();
        assert_eq!(back.value, Value::Int32(9));
    }
}
