//! Connect values to JSON documents and back, by their Connect schema, as Confluent's `JsonSchemaData`
//! writes them: integers and floats as numbers, bytes as base64, decimals as numbers with their exact
//! digits, Date/Time/Timestamp as their integers, structs and string-keyed maps as objects, other maps
//! as arrays of `{"key":…,"value":…}`. The text is read and written with the JsonConverter's JSON
//! reader and writer (numbers keep their exact text).

use base64::Engine as _;

use super::connect::is_one_of;
use crate::converters::json::text::{
    is_integral_lexeme, parse_json, write_json, Json, ObjectBuilder,
};
use crate::data::logical::{self, LogicalKind};
use crate::data::{DataError, Schema, SchemaRef, SchemaType, Struct, Value};

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Parses a JSON document.
///
/// # Errors
/// Text that is not JSON.
pub fn parse(bytes: &[u8]) -> Result<Json, DataError> {
    parse_json(bytes)
}

/// Writes a JSON document compactly.
pub fn write(json: &Json) -> String {
    let mut out = String::new();
    write_json(&mut out, json);
    out
}

/// A Connect value as JSON, by its schema.
///
/// # Errors
/// A value that does not fit its schema (a null for a required schema without a default).
pub fn to_json(schema: &Schema, value: &Value) -> Result<Json, DataError> {
    if value.is_null() {
        return match (&schema.default_value, schema.optional) {
            (Some(d), _) => to_json(schema, d),
            (None, true) => Ok(Json::Null),
            (None, false) => Err(DataError::new(
                "Conversion error: null value for field that is required and has no default value",
            )),
        };
    }
    let invalid = || {
        DataError::new(format!(
            "Invalid type for {}: {}",
            schema.schema_type,
            value.java_class()
        ))
    };
    if let (Some(LogicalKind::Decimal(_)), Value::Bytes(b)) = (schema.logical(), value) {
        let scale = logical::decimal_scale(schema)?;
        let minimal = logical::minimal_unscaled(b);
        return Ok(Json::Number(plain_decimal(&logical::decimal_to_string(
            &minimal, scale,
        ))));
    }
    Ok(match (schema.schema_type, value) {
        (SchemaType::Int8, Value::Int8(v)) => Json::Int(i64::from(*v)),
        (SchemaType::Int16, Value::Int16(v)) => Json::Int(i64::from(*v)),
        (SchemaType::Int32, Value::Int32(v)) => Json::Int(i64::from(*v)),
        (SchemaType::Int64, Value::Int64(v)) => Json::Int(*v),
        (SchemaType::Float32, Value::Float32(v)) => Json::Float(*v),
        (SchemaType::Float64, Value::Float64(v)) => Json::Double(*v),
        (SchemaType::Boolean, Value::Boolean(v)) => Json::Bool(*v),
        (SchemaType::String, Value::String(v)) => Json::Str(v.clone()),
        (SchemaType::Bytes, Value::Bytes(v)) => Json::Str(BASE64.encode(v)),
        (SchemaType::Array, Value::Array(items)) => {
            let item = schema.value_schema.as_deref().ok_or_else(invalid)?;
            Json::Array(
                items
                    .iter()
                    .map(|v| to_json(item, v))
                    .collect::<Result<_, _>>()?,
            )
        }
        (SchemaType::Map, Value::Map(entries)) => map_to_json(schema, entries)?,
        (SchemaType::Struct, Value::Struct(st)) if is_one_of(schema) => {
            let set = schema
                .fields
                .iter()
                .find_map(|f| st.get(&f.name).filter(|v| !v.is_null()).map(|v| (f, v)));
            match set {
                Some((field, v)) => to_json(&field.schema, v)?,
                None => Json::Null,
            }
        }
        (SchemaType::Struct, Value::Struct(st)) => {
            let mut obj = ObjectBuilder::default();
            for field in &schema.fields {
                let v = st.get(&field.name).unwrap_or(&Value::Null);
                obj.set(field.name.clone(), to_json(&field.schema, v)?);
            }
            obj.finish()
        }
        _ => return Err(invalid()),
    })
}

/// A decimal's text without an exponent, as a JSON number `BigDecimal` writes plainly.
fn plain_decimal(text: &str) -> String {
    match logical::ParsedDecimal::parse(text) {
        Some(p) if text.contains(['E', 'e']) => {
            let scale = p.scale.max(0);
            match p.unscaled_at(scale) {
                Some(u) => logical::decimal_to_string(&logical::i128_to_unscaled(u), scale as i32),
                None => text.to_string(),
            }
        }
        _ => text.to_string(),
    }
}

fn map_to_json(schema: &Schema, entries: &[(Value, Value)]) -> Result<Json, DataError> {
    let (Some(key), Some(val)) = (schema.key_schema.as_deref(), schema.value_schema.as_deref())
    else {
        return Err(DataError::new("A map schema needs key and value schemas"));
    };
    if key.schema_type == SchemaType::String && !key.optional && key.name.is_none() {
        let mut obj = ObjectBuilder::default();
        for (k, v) in entries {
            let k = k
                .as_str()
                .ok_or_else(|| DataError::new("Map keys must be strings"))?;
            obj.set(k.to_string(), to_json(val, v)?);
        }
        return Ok(obj.finish());
    }
    let mut list = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        list.push(Json::Object(vec![
            ("key".into(), to_json(key, k)?),
            ("value".into(), to_json(val, v)?),
        ]));
    }
    Ok(Json::Array(list))
}

/// A JSON document as a Connect value of `schema`. With `ignore_unknown`, object properties the
/// struct does not have are skipped; else they are an error (`json.fail.unknown.properties`).
///
/// # Errors
/// A document that does not fit the schema.
pub fn to_value(schema: &SchemaRef, json: &Json, ignore_unknown: bool) -> Result<Value, DataError> {
    if matches!(json, Json::Null | Json::Missing) {
        return match (&schema.default_value, schema.optional) {
            (Some(d), _) => Ok(d.clone()),
            (None, true) => Ok(Value::Null),
            (None, false) => Err(DataError::new(format!(
                "A null or missing value for a required {} schema without a default",
                schema.schema_type
            ))),
        };
    }
    let mismatch = || {
        DataError::new(format!(
            "The JSON {} does not fit the schema type {}",
            json.node_type(),
            schema.schema_type
        ))
    };
    if let Some(LogicalKind::Decimal(_)) = schema.logical() {
        let scale = logical::decimal_scale(schema)?;
        let text = match json {
            Json::Number(n) | Json::Str(n) => n.clone(),
            Json::Int(i) => i.to_string(),
            _ => return Err(mismatch()),
        };
        return logical::decimal_from_str(&text, scale).map(Value::Bytes);
    }
    let int = || -> Result<i64, DataError> {
        match json {
            Json::Int(i) => Ok(*i),
            Json::Number(n) if is_integral_lexeme(n) => n.parse().map_err(|_| mismatch()),
            _ => Err(mismatch()),
        }
    };
    let range = |e| {
        DataError::new(format!(
            "The number is out of the {} range: {e}",
            schema.schema_type
        ))
    };
    Ok(match schema.schema_type {
        SchemaType::Int8 => Value::Int8(i8::try_from(int()?).map_err(range)?),
        SchemaType::Int16 => Value::Int16(i16::try_from(int()?).map_err(range)?),
        SchemaType::Int32 => Value::Int32(i32::try_from(int()?).map_err(range)?),
        SchemaType::Int64 => Value::Int64(int()?),
        SchemaType::Float32 => Value::Float32(json.as_f32().ok_or_else(mismatch)?),
        SchemaType::Float64 => Value::Float64(json.as_f64().ok_or_else(mismatch)?),
        SchemaType::Boolean => match json {
            Json::Bool(b) => Value::Boolean(*b),
            _ => return Err(mismatch()),
        },
        SchemaType::String => match json {
            Json::Str(s) => Value::String(s.clone()),
            _ => return Err(mismatch()),
        },
        SchemaType::Bytes => match json {
            Json::Str(s) => Value::Bytes(
                BASE64
                    .decode(s)
                    .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(s))
                    .map_err(|e| DataError::new(format!("Invalid base64 for bytes: {e}")))?,
            ),
            _ => return Err(mismatch()),
        },
        SchemaType::Array => match (json, schema.value_schema.as_ref()) {
            (Json::Array(items), Some(item)) => Value::Array(
                items
                    .iter()
                    .map(|j| to_value(item, j, ignore_unknown))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err(mismatch()),
        },
        SchemaType::Map => map_to_value(schema, json, ignore_unknown).ok_or_else(mismatch)??,
        SchemaType::Struct if is_one_of(schema) => one_of_to_value(schema, json, ignore_unknown)?,
        SchemaType::Struct => struct_to_value(schema, json, ignore_unknown)?,
    })
}

/// Whether a JSON value is of a simple Connect type, as Confluent's `JsonSchemaData` matches a
/// `oneOf` branch (a struct branch never matches this way).
fn is_instance(schema: &Schema, json: &Json) -> bool {
    let integral = match json {
        Json::Int(_) => true,
        Json::Number(n) => is_integral_lexeme(n),
        _ => false,
    };
    let number = matches!(
        json,
        Json::Int(_) | Json::Float(_) | Json::Double(_) | Json::Number(_)
    );
    match schema.schema_type {
        SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 | SchemaType::Int64 => integral,
        SchemaType::Float32 | SchemaType::Float64 => number,
        SchemaType::Boolean => matches!(json, Json::Bool(_)),
        SchemaType::String => matches!(json, Json::Str(_)),
        SchemaType::Bytes => number && schema.logical().is_some(),
        SchemaType::Array => matches!(json, Json::Array(_)),
        SchemaType::Map => matches!(json, Json::Object(_) | Json::Array(_)),
        SchemaType::Struct => false,
    }
}

/// A `oneOf` struct's value: the first branch whose simple type the value has, else the struct branch
/// sharing the most property names with it; that field is set, the others are null.
fn one_of_to_value(
    schema: &SchemaRef,
    json: &Json,
    ignore_unknown: bool,
) -> Result<Value, DataError> {
    let mut best: Option<(usize, &crate::data::Field)> = None;
    let mut chosen = None;
    for field in &schema.fields {
        if is_instance(&field.schema, json) {
            chosen = Some(field);
            break;
        }
        if let (SchemaType::Struct, Json::Object(entries)) = (field.schema.schema_type, json) {
            let shared = entries
                .iter()
                .filter(|(k, _)| field.schema.field(k).is_some())
                .count();
            if shared > best.map_or(0, |(n, _)| n) {
                best = Some((shared, field));
            }
        }
    }
    let field = chosen
        .or(best.map(|(_, f)| f))
        .ok_or_else(|| DataError::new("Did not find matching oneof field for data"))?;
    let mut st = Struct::new(schema.clone());
    let v = to_value(&field.schema, json, ignore_unknown)?;
    if let Some(slot) = st.values.get_mut(field.index) {
        *slot = v;
    }
    Ok(Value::Struct(st))
}

fn map_to_value(
    schema: &SchemaRef,
    json: &Json,
    ignore_unknown: bool,
) -> Option<Result<Value, DataError>> {
    let key = schema.key_schema.as_ref()?;
    let val = schema.value_schema.as_ref()?;
    let entry = |k: &Json, v: &Json| -> Result<(Value, Value), DataError> {
        Ok((
            to_value(key, k, ignore_unknown)?,
            to_value(val, v, ignore_unknown)?,
        ))
    };
    Some(match json {
        Json::Object(entries) => entries
            .iter()
            .map(|(k, v)| entry(&Json::Str(k.clone()), v))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Map),
        Json::Array(items) => items
            .iter()
            .map(|item| {
                entry(
                    item.get("key").unwrap_or(&Json::Missing),
                    item.get("value").unwrap_or(&Json::Missing),
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Map),
        _ => return None,
    })
}

fn struct_to_value(
    schema: &SchemaRef,
    json: &Json,
    ignore_unknown: bool,
) -> Result<Value, DataError> {
    let Json::Object(entries) = json else {
        return Err(DataError::new(format!(
            "The JSON {} does not fit a struct",
            json.node_type()
        )));
    };
    if !ignore_unknown {
        if let Some((name, _)) = entries.iter().find(|(k, _)| schema.field(k).is_none()) {
            return Err(DataError::new(format!(
                "The property {name} is not in the schema (json.fail.unknown.properties=true)"
            )));
        }
    }
    let mut st = Struct::new(schema.clone());
    for field in &schema.fields {
        let v = json.get(&field.name).unwrap_or(&Json::Missing);
        let v = to_value(&field.schema, v, ignore_unknown)
            .map_err(|e| DataError::new(format!("Field {}: {e}", field.name)))?;
        if let Some(slot) = st.values.get_mut(field.index) {
            *slot = v;
        }
    }
    Ok(Value::Struct(st))
}
