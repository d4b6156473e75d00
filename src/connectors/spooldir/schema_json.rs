//! Connect schemas in the JSON form the original connectors take in `key.schema` and `value.schema`
//! (connect-utils' `SchemaSerializationModule`): `{"name", "doc", "type": "STRUCT", "version",
//! "parameters", "isOptional", "defaultValue", "keySchema", "valueSchema", "fieldSchemas": {name: schema}}`.

use serde_json::{json, Map, Value as Json};

use crate::data::DataError;
use crate::data::{SchemaBuilder, SchemaRef, SchemaType, Value};

/// Parses a schema from its JSON text.
pub fn parse(text: &str) -> Result<SchemaRef, DataError> {
    let json: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    from_json(&json)
}

fn from_json(json: &Json) -> Result<SchemaRef, DataError> {
    let obj = json
        .as_object()
        .ok_or_else(|| DataError(format!("a schema must be a JSON object, not {json}")))?;
    let type_name = obj
        .get("type")
        .and_then(Json::as_str)
        .ok_or("a schema needs a \"type\"")?;
    let schema_type = SchemaType::from_name(type_name)
        .ok_or_else(|| DataError(format!("'{type_name}' is not a schema type")))?;
    let child = |name: &str| -> Result<SchemaRef, DataError> {
        match obj.get(name) {
            Some(j) if !j.is_null() => from_json(j),
            _ => Err(format!("{name} cannot be null.").into()),
        }
    };
    let mut builder = match schema_type {
        SchemaType::Map => SchemaBuilder::map(child("keySchema")?, child("valueSchema")?),
        SchemaType::Array => SchemaBuilder::array(child("valueSchema")?),
        t => SchemaBuilder::new(t),
    };
    if schema_type == SchemaType::Struct {
        if let Some(fields) = obj.get("fieldSchemas").and_then(Json::as_object) {
            for (name, field) in fields {
                builder = builder.field(name.clone(), from_json(field)?);
            }
        }
    }
    if let Some(name) = obj
        .get("name")
        .and_then(Json::as_str)
        .filter(|n| !n.is_empty())
    {
        builder = builder.name(name);
    }
    if let Some(doc) = obj
        .get("doc")
        .and_then(Json::as_str)
        .filter(|n| !n.is_empty())
    {
        builder = builder.doc(doc);
    }
    if let Some(params) = obj.get("parameters").and_then(Json::as_object) {
        for (k, v) in params {
            let v = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            builder = builder.parameter(k.clone(), v);
        }
    }
    if obj.get("isOptional").and_then(Json::as_bool) == Some(true) {
        builder = builder.optional();
    }
    if let Some(version) = obj.get("version").and_then(Json::as_i64) {
        builder = builder.version(version as i32);
    }
    if let Some(default) = obj.get("defaultValue").filter(|d| !d.is_null()) {
        builder = builder.default_value(default_value(schema_type, default)?);
    }
    builder.try_build()
}

fn default_value(schema_type: SchemaType, json: &Json) -> Result<Value, DataError> {
    let bad = || format!("defaultValue {json} does not fit {schema_type}");
    let int = || json.as_i64().ok_or_else(bad);
    Ok(match schema_type {
        SchemaType::Int8 => Value::Int8(int()? as i8),
        SchemaType::Int16 => Value::Int16(int()? as i16),
        SchemaType::Int32 => Value::Int32(int()? as i32),
        SchemaType::Int64 => Value::Int64(int()?),
        SchemaType::Float32 => Value::Float32(json.as_f64().ok_or_else(bad)? as f32),
        SchemaType::Float64 => Value::Float64(json.as_f64().ok_or_else(bad)?),
        SchemaType::Boolean => Value::Boolean(json.as_bool().ok_or_else(bad)?),
        SchemaType::String => Value::String(json.as_str().ok_or_else(bad)?.to_string()),
        _ => return Err(bad().into()),
    })
}

/// Writes a schema in the same form (what schema generation puts in the task configs).
pub fn to_json(schema: &crate::data::Schema) -> Json {
    let mut obj = Map::new();
    if let Some(name) = &schema.name {
        obj.insert("name".into(), json!(name));
    }
    if let Some(doc) = &schema.doc {
        obj.insert("doc".into(), json!(doc));
    }
    obj.insert(
        "type".into(),
        json!(schema.schema_type.name().to_ascii_uppercase()),
    );
    if let Some(version) = schema.version {
        obj.insert("version".into(), json!(version));
    }
    if !schema.parameters.is_empty() {
        obj.insert("parameters".into(), json!(schema.parameters));
    }
    obj.insert("isOptional".into(), json!(schema.optional));
    if let Some(k) = &schema.key_schema {
        obj.insert("keySchema".into(), to_json(k));
    }
    if let Some(v) = &schema.value_schema {
        obj.insert("valueSchema".into(), to_json(v));
    }
    if schema.schema_type == SchemaType::Struct {
        let fields: Map<String, Json> = schema
            .fields
            .iter()
            .map(|f| (f.name.clone(), to_json(&f.schema)))
            .collect();
        obj.insert("fieldSchemas".into(), Json::Object(fields));
    }
    Json::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::logical::{kind_of, LogicalKind};

    #[test]
    fn reads_the_originals_example_and_writes_it_back() {
        let text = r#"{"name":"com.example.users.User","type":"STRUCT","isOptional":false,"fieldSchemas":{"id":{"type":"INT64","isOptional":false},"first_name":{"type":"STRING","isOptional":true},"birthday":{"name":"org.apache.kafka.connect.data.Timestamp","type":"INT64","version":1,"isOptional":true},"amount":{"name":"org.apache.kafka.connect.data.Decimal","type":"BYTES","version":1,"parameters":{"scale":"2"},"isOptional":true},"tags":{"type":"ARRAY","isOptional":true,"valueSchema":{"type":"STRING","isOptional":false}}}}"#;
        let schema = parse(text).unwrap();
        assert_eq!(schema.name.as_deref(), Some("com.example.users.User"));
        let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id", "first_name", "birthday", "amount", "tags"]);
        assert!(!schema.field("id").unwrap().schema.optional);
        assert_eq!(
            kind_of(&schema.field("birthday").unwrap().schema),
            Some(LogicalKind::Timestamp)
        );
        assert_eq!(
            kind_of(&schema.field("amount").unwrap().schema),
            Some(LogicalKind::Decimal(2))
        );
        let again = parse(&to_json(&schema).to_string()).unwrap();
        assert_eq!(again, schema);
    }

    #[test]
    fn bad_schemas_say_why() {
        assert!(parse("{").is_err());
        assert!(parse(r#"{"type":"NOPE"}"#)
            .unwrap_err()
            .to_string()
            .contains("NOPE"));
        assert!(parse(r#"{"type":"ARRAY"}"#)
            .unwrap_err()
            .to_string()
            .contains("valueSchema cannot be null."));
    }
}
