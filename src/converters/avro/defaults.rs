//! Defaults between Connect and Avro: a Connect default as an Avro field default or `connect.default`
//! (JSON), and such JSON as the Connect value of a schema.

use serde_json::{json, Value as Json};

use crate::data::{Schema, SchemaRef, SchemaType, Struct, Value};

/// A Connect default value as an Avro field default (JSON): bytes as ISO-8859-1 text, maps with string
/// keys as objects and others as arrays of `{"key", "value"}`, structs as objects.
pub fn avro_default(schema: &Schema, value: &Value) -> Json {
    let child = |s: Option<&SchemaRef>, v: &Value| match s {
        Some(s) => avro_default(s, v),
        None => Json::Null,
    };
    match value {
        Value::Null => Json::Null,
        Value::Boolean(b) => json!(b),
        Value::Int8(n) => json!(n),
        Value::Int16(n) => json!(n),
        Value::Int32(n) => json!(n),
        Value::Int64(n) => json!(n),
        Value::Float32(f) => json!(f),
        Value::Float64(f) => json!(f),
        Value::String(s) => json!(s),
        Value::Bytes(b) => json!(b.iter().map(|c| char::from(*c)).collect::<String>()),
        Value::Array(items) => Json::Array(
            items
                .iter()
                .map(|v| child(schema.value_schema.as_ref(), v))
                .collect(),
        ),
        Value::Map(entries) => {
            let string_keys = schema
                .key_schema
                .as_ref()
                .is_some_and(|k| k.schema_type == SchemaType::String && !k.optional);
            if string_keys {
                let object = entries.iter().filter_map(|(k, v)| match k {
                    Value::String(k) => Some((k.clone(), child(schema.value_schema.as_ref(), v))),
                    _ => None,
                });
                Json::Object(object.collect())
            } else {
                let entries = entries.iter().map(|(k, v)| {
                    json!({"key": child(schema.key_schema.as_ref(), k),
                           "value": child(schema.value_schema.as_ref(), v)})
                });
                Json::Array(entries.collect())
            }
        }
        Value::Struct(st) => Json::Object(
            st.schema
                .fields
                .iter()
                .map(|f| {
                    let v = st.values.get(f.index).unwrap_or(&Value::Null);
                    (f.name.clone(), avro_default(&f.schema, v))
                })
                .collect(),
        ),
    }
}

/// An Avro field default (JSON) as the Connect value of `schema`; none when it does not fit the schema.
pub fn connect_default(schema: &SchemaRef, json: &Json) -> Option<Value> {
    let child = |s: Option<&SchemaRef>, j: &Json| s.and_then(|s| connect_default(s, j));
    Some(match (schema.schema_type, json) {
        (_, Json::Null) => return None,
        (SchemaType::Boolean, Json::Bool(b)) => Value::Boolean(*b),
        (SchemaType::Int8, j) => Value::Int8(i8::try_from(j.as_i64()?).ok()?),
        (SchemaType::Int16, j) => Value::Int16(i16::try_from(j.as_i64()?).ok()?),
        (SchemaType::Int32, j) => Value::Int32(i32::try_from(j.as_i64()?).ok()?),
        (SchemaType::Int64, j) => Value::Int64(j.as_i64()?),
        // Avro's float defaults are JSON numbers; f32 holds what a float schema wrote.
        #[allow(clippy::cast_possible_truncation)]
        (SchemaType::Float32, j) => Value::Float32(j.as_f64()? as f32),
        (SchemaType::Float64, j) => Value::Float64(j.as_f64()?),
        (SchemaType::String, Json::String(s)) => Value::String(s.clone()),
        (SchemaType::Bytes, Json::String(s)) => Value::Bytes(
            s.chars()
                .map(|c| u8::try_from(u32::from(c)).ok())
                .collect::<Option<_>>()?,
        ),
        (SchemaType::Array, Json::Array(items)) => Value::Array(
            items
                .iter()
                .map(|j| child(schema.value_schema.as_ref(), j))
                .collect::<Option<_>>()?,
        ),
        (SchemaType::Map, Json::Object(o)) => Value::Map(
            o.iter()
                .map(|(k, j)| {
                    Some((
                        Value::String(k.clone()),
                        child(schema.value_schema.as_ref(), j)?,
                    ))
                })
                .collect::<Option<_>>()?,
        ),
        (SchemaType::Map, Json::Array(entries)) => Value::Map(
            entries
                .iter()
                .map(|e| {
                    Some((
                        child(schema.key_schema.as_ref(), &e["key"])?,
                        child(schema.value_schema.as_ref(), &e["value"])?,
                    ))
                })
                .collect::<Option<_>>()?,
        ),
        (SchemaType::Struct, Json::Object(o)) => {
            let mut st = Struct::new(schema.clone());
            for f in &schema.fields {
                if let Some(v) = o.get(&f.name).and_then(|j| connect_default(&f.schema, j)) {
                    st.values[f.index] = v;
                }
            }
            Value::Struct(st)
        }
        _ => return None,
    })
}

/// The parameter Confluent sets on the Connect schema of a field whose Avro default is not a
/// `connect.default`: that default is written back as the field's default only, and the parameter is
/// left out of `connect.parameters`.
pub const FIELD_DEFAULT_FLAG: &str = "io.confluent.connect.avro.field.default";

/// The `connect.default` property of a Connect schema: its default, unless it came from an Avro field
/// default ([`FIELD_DEFAULT_FLAG`]).
pub fn connect_default_prop(schema: &Schema) -> Option<Json> {
    let value = schema.default_value.as_ref().filter(|v| !v.is_null())?;
    if schema.parameters.contains_key(FIELD_DEFAULT_FLAG) {
        return None;
    }
    Some(avro_default(schema, value))
}
