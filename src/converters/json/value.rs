//! Values to and from the JSON tree: Kafka's `convertToJson` and `convertToConnect`, logical types
//! included.

use super::text::{is_integral_lexeme, lexeme_to_i64_wrapping, object_set, Json, ObjectBuilder};
use super::{DecimalFormat, JsonConverter};
use crate::data::logical::{self, LogicalKind, ParsedDecimal};
use crate::data::{DataError, Schema, SchemaRef, SchemaType, Struct, Value};
use base64::Engine as _;
use std::sync::Arc;

impl JsonConverter {
    /// Kafka's `convertToJson`.
    pub(super) fn to_json(
        &self,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Json, DataError> {
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
    pub(super) fn to_connect_value(
        &self,
        schema: Option<&SchemaRef>,
        node: &Json,
    ) -> Result<Value, DataError> {
        let Some(schema) = schema else {
            return schemaless_to_connect(node);
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
            SchemaType::Map => self.map_to_connect(schema, node)?,
            SchemaType::Struct => self.struct_to_connect(schema, node)?,
        })
    }

    /// A map: a JSON object when its keys are strings, else an array of `[key, value]` pairs.
    fn map_to_connect(&self, schema: &SchemaRef, node: &Json) -> Result<Value, DataError> {
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
            Ok(Value::Map(out))
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
            Ok(Value::Map(out))
        }
    }

    /// A struct: a JSON object read field by field; absent fields read as missing.
    fn struct_to_connect(&self, schema: &SchemaRef, node: &Json) -> Result<Value, DataError> {
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
        Ok(Value::Struct(st))
    }
}

/// A JSON value without a schema: integers become `Int64`, other numbers `Float64`, objects maps with
/// string keys.
fn schemaless_to_connect(node: &Json) -> Result<Value, DataError> {
    Ok(match node {
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
                .map(schemaless_to_connect)
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| Ok((Value::String(k.clone()), schemaless_to_connect(v)?)))
                .collect::<Result<_, DataError>>()?,
        ),
    })
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
