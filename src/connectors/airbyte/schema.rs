//! A stream's JSON schema (from DISCOVER) as a Connect schema, and its records' data as Connect values.
//!
//! `integer` (or `airbyte_type: integer`) is INT64, `number` FLOAT64, `boolean` BOOLEAN, `string` STRING,
//! with `format: date-time` a Timestamp and `format: date` a Date; an object with properties a Struct, an
//! array an ARRAY of its items; anything else (an object without properties, `anyOf`, no type) a STRING
//! holding the JSON text. Every field is optional: Airbyte sources may leave any field out. A stream whose
//! schema has no properties gives schemaless maps.

use serde_json::{Map, Value as Json};

use crate::data::logical;
use crate::data::SchemaBuilder;
use crate::data::{DataError, Schema, SchemaRef, SchemaType, Struct, Value};

/// What a JSON schema node becomes.
fn kind(node: &Json) -> (&str, Option<&str>) {
    let types: Vec<&str> = match &node["type"] {
        Json::String(t) => vec![t.as_str()],
        Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    let t = types.into_iter().find(|t| *t != "null").unwrap_or("");
    let t = match node["airbyte_type"].as_str() {
        Some("integer") if t == "number" => "integer",
        _ => t,
    };
    (t, node["format"].as_str())
}

/// The Connect schema of a field's JSON schema (optional).
fn field_schema(node: &Json) -> SchemaRef {
    match kind(node) {
        ("integer", _) => SchemaBuilder::int64().optional().build(),
        ("number", _) => SchemaBuilder::float64().optional().build(),
        ("boolean", _) => SchemaBuilder::boolean().optional().build(),
        ("string", Some("date-time")) => logical::timestamp().optional().build(),
        ("string", Some("date")) => logical::date().optional().build(),
        ("object", _) if has_properties(node) => struct_schema(&node["properties"]),
        ("array", _) => {
            let items = match node.get("items") {
                Some(items) if items.is_object() => field_schema(items),
                _ => SchemaBuilder::string().optional().build(),
            };
            SchemaBuilder::array(items).optional().build()
        }
        _ => SchemaBuilder::string().optional().build(),
    }
}

fn has_properties(node: &Json) -> bool {
    node["properties"]
        .as_object()
        .is_some_and(|p| !p.is_empty())
}

fn struct_schema(properties: &Json) -> SchemaRef {
    let mut builder = SchemaBuilder::struct_().optional();
    if let Some(props) = properties.as_object() {
        for (name, node) in props {
            builder = builder.field(name.clone(), field_schema(node));
        }
    }
    builder.build()
}

/// The value schema of a stream: a Struct when its JSON schema lists properties, else `None`
/// (schemaless maps).
pub fn stream_schema(json_schema: &Json) -> Option<SchemaRef> {
    has_properties(json_schema).then(|| struct_schema(&json_schema["properties"]))
}

/// The key schema of a stream with a primary key of top-level fields: a Struct of those fields.
pub fn key_schema(value: &Schema, primary_key: &[String]) -> Option<SchemaRef> {
    if primary_key.is_empty() {
        return None;
    }
    let mut builder = SchemaBuilder::struct_();
    for name in primary_key {
        builder = builder.field(name.clone(), value.field(name)?.schema.clone());
    }
    Some(builder.build())
}

/// A JSON value without a schema: integers INT64, other numbers FLOAT64, objects maps.
pub use crate::data::values::from_json as schemaless;

/// `data` in `schema`; `field` names the place for errors.
pub fn value(schema: &SchemaRef, data: &Json, field: &str) -> Result<Value, DataError> {
    if data.is_null() {
        return Ok(Value::Null);
    }
    let wrong = || {
        DataError::new(format!(
            "The field {field} holds {data}, which is not a {} as the stream's schema says",
            describe(schema)
        ))
    };
    if let Some(kind) = schema.logical() {
        let text = data.as_str().ok_or_else(wrong)?;
        let nanos = crate::connectors::jdbc::types::parse_timestamp_text(text).ok_or_else(wrong)?;
        let ms = nanos.div_euclid(1_000_000);
        return Ok(match kind {
            logical::LogicalKind::Date => {
                Value::Int32(i32::try_from(ms.div_euclid(86_400_000)).map_err(|_| wrong())?)
            }
            _ => Value::Int64(ms),
        });
    }
    Ok(match schema.schema_type {
        SchemaType::Int64 => match (data.as_i64(), data.as_f64()) {
            (Some(i), _) => Value::Int64(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Value::Int64(f as i64),
            _ => return Err(wrong()),
        },
        SchemaType::Float64 => Value::Float64(data.as_f64().ok_or_else(wrong)?),
        SchemaType::Boolean => Value::Boolean(data.as_bool().ok_or_else(wrong)?),
        SchemaType::String => Value::String(match data {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        }),
        SchemaType::Array => {
            let items = data.as_array().ok_or_else(wrong)?;
            let item_schema = schema.value_schema.as_ref().ok_or_else(wrong)?;
            Value::Array(
                items
                    .iter()
                    .map(|item| value(item_schema, item, field))
                    .collect::<Result<_, _>>()?,
            )
        }
        SchemaType::Struct => Value::Struct(struct_value(
            schema,
            data.as_object().ok_or_else(wrong)?,
            field,
        )?),
        _ => return Err(wrong()),
    })
}

fn describe(schema: &Schema) -> String {
    match schema.logical() {
        Some(logical::LogicalKind::Date) => "date".into(),
        Some(_) => "date-time".into(),
        None => schema.schema_type.as_str().to_ascii_lowercase(),
    }
}

/// An object's fields in a Struct `schema`; fields the schema does not list are left out.
pub fn struct_value(
    schema: &SchemaRef,
    data: &Map<String, Json>,
    place: &str,
) -> Result<Struct, DataError> {
    let mut s = Struct::new(schema.clone());
    for f in &schema.fields {
        if let Some(v) = data.get(&f.name) {
            let here = if place.is_empty() {
                f.name.clone()
            } else {
                format!("{place}.{}", f.name)
            };
            s.put(&f.name, value(&f.schema, v, &here)?)?;
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn users() -> Json {
        json!({"type": "object", "properties": {
            "id": {"type": "integer"},
            "name": {"type": ["null", "string"]},
            "score": {"type": "number"},
            "count": {"type": "number", "airbyte_type": "integer"},
            "updated_at": {"type": "string", "format": "date-time"},
            "born": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}},
            "extra": {"type": "object"}
        }})
    }

    #[test]
    fn schemas_and_values_follow_the_json_schema() {
        let schema = stream_schema(&users()).unwrap();
        let field = |n: &str| schema.field(n).unwrap().schema.clone();
        assert_eq!(field("id").schema_type, SchemaType::Int64);
        assert_eq!(field("count").schema_type, SchemaType::Int64);
        assert_eq!(field("score").schema_type, SchemaType::Float64);
        assert_eq!(
            field("updated_at").logical(),
            Some(logical::LogicalKind::Timestamp)
        );
        assert_eq!(field("born").logical(), Some(logical::LogicalKind::Date));
        assert_eq!(field("address").schema_type, SchemaType::Struct);
        assert_eq!(field("extra").schema_type, SchemaType::String);
        assert!(schema.fields.iter().all(|f| f.schema.optional));
        let data = json!({"id": 7, "name": null, "score": 1.5, "count": 3.0,
            "updated_at": "2024-01-02T03:04:05+01:00", "born": "1970-01-03",
            "tags": ["a"], "address": {"city": "Oslo"}, "extra": {"k": 1}, "unlisted": 1});
        let s = struct_value(&schema, data.as_object().unwrap(), "").unwrap();
        assert_eq!(s.get("id"), Some(&Value::Int64(7)));
        assert_eq!(s.get("name"), Some(&Value::Null));
        assert_eq!(s.get("count"), Some(&Value::Int64(3)));
        assert_eq!(s.get("updated_at"), Some(&Value::Int64(1_704_161_045_000)));
        assert_eq!(s.get("born"), Some(&Value::Int32(2)));
        assert_eq!(s.get("extra"), Some(&Value::String("{\"k\":1}".into())));
        s.validate().unwrap();
        let key = key_schema(&schema, &["id".into()]).unwrap();
        assert_eq!(key.fields.len(), 1);
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_field() {
        let schema = stream_schema(&users()).unwrap();
        let data = json!({"address": {"city": 5}, "id": "x"});
        let e = struct_value(&schema, data.as_object().unwrap(), "").unwrap_err();
        assert!(e.to_string().contains("The field id holds \"x\""), "{e}");
        assert!(stream_schema(&json!({"type": "object"})).is_none());
    }
}
