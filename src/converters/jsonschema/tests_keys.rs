//! The keys of Confluent's `JsonSchemaDataConfig` (`object.additional.properties`,
//! `use.optional.for.nonrequired`) and `oneOf`/`anyOf` of several non-null schemas as Connect structs
//! named `io.confluent.connect.json.OneOf`, both ways with their values.

use std::sync::Arc;

use serde_json::json;

use super::connect::{
    one_of_field, to_connect, to_connect_with, to_json_schema_with, Options, ONE_OF,
};
use super::converter::JsonSchemaConverter;
use super::schema::JsonSchema;
use super::validate::{validate, Patterns};
use super::value;
use crate::data::{Field, Schema, SchemaType, Struct, Value};

fn js(text: &str) -> JsonSchema {
    JsonSchema::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn read(schema: &crate::data::SchemaRef, doc: &str) -> Result<Value, String> {
    value::to_value(schema, &value::parse(doc.as_bytes()).unwrap(), false).map_err(|e| e.0)
}

#[test]
fn object_additional_properties_false_closes_every_struct_schema() {
    let mut inner = Schema::new(SchemaType::Struct);
    inner.fields.push(Field {
        name: "city".into(),
        index: 0,
        schema: Schema::string(),
    });
    let mut outer = Schema::new(SchemaType::Struct);
    outer.name = Some("Person".into());
    outer.fields.push(Field {
        name: "home".into(),
        index: 0,
        schema: Arc::new(inner),
    });
    let closed = Options {
        additional_properties: false,
        ..Options::default()
    };
    let written = to_json_schema_with(&outer, closed).unwrap();
    assert_eq!(
        written,
        json!({"type": "object", "properties": {"home": {"type": "object",
                 "properties": {"city": {"type": "string", "connect.index": 0}},
                 "additionalProperties": false, "connect.index": 0}},
               "additionalProperties": false, "title": "Person"})
    );
    let open = to_json_schema_with(&outer, Options::default()).unwrap();
    assert!(open.get("additionalProperties").is_none(), "{open}");
    // The closed schema refuses a document with another property.
    let parsed = js(&written.to_string());
    let e = validate(
        &parsed,
        &json!({"home": {"city": "x", "zip": 1}}),
        &Patterns::default(),
    )
    .unwrap_err();
    assert!(e.contains("#/home: the property zip is not allowed"), "{e}");
}

#[test]
fn use_optional_for_nonrequired_makes_properties_outside_required_optional() {
    let text = r#"{"type":"object","required":["id"],
        "properties":{"id":{"type":"integer"},"note":{"type":"string"}}}"#;
    let optional = Options {
        optional_for_nonrequired: true,
        ..Options::default()
    };
    let schema = to_connect_with(&js(text), optional).unwrap();
    let flags: Vec<(&str, bool)> = schema
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.schema.optional))
        .collect();
    assert_eq!(flags, [("id", false), ("note", true)]);
    let Value::Struct(st) = read(&schema, r#"{"id":1}"#).unwrap() else {
        panic!()
    };
    assert_eq!(st.get("note"), Some(&Value::Null));
    // By default every property is required, as Confluent reads them.
    let strict = to_connect(&js(text)).unwrap();
    assert!(strict.fields.iter().all(|f| !f.schema.optional));
    assert!(read(&strict, r#"{"id":1}"#).unwrap_err().contains("note"));
}

#[test]
fn one_of_several_types_is_a_struct_with_a_field_per_branch() {
    let text = r#"{"oneOf":[{"type":"null"},{"type":"string"},{"type":"integer"},
        {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}}},
        {"type":"object","properties":{"c":{"type":"boolean"}}}]}"#;
    let schema = to_connect(&js(text)).unwrap();
    assert_eq!(schema.name.as_deref(), Some(ONE_OF));
    assert!(schema.optional, "a null branch makes the struct optional");
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "io.confluent.connect.json.OneOf.field.0",
            "io.confluent.connect.json.OneOf.field.1",
            "io.confluent.connect.json.OneOf.field.2",
            "io.confluent.connect.json.OneOf.field.3"
        ]
    );
    assert!(schema.fields.iter().all(|f| f.schema.optional));
    let set = |doc: &str| -> (usize, Value) {
        let Value::Struct(st) = read(&schema, doc).unwrap() else {
            panic!("{doc}")
        };
        let i = st.values.iter().position(|v| !v.is_null()).unwrap();
        (i, st.values[i].clone())
    };
    assert_eq!(set(r#""x""#), (0, Value::String("x".into())));
    assert_eq!(set("7"), (1, Value::Int64(7)));
    assert_eq!(set(r#"{"c":true}"#).0, 3);
    assert_eq!(set(r#"{"a":1,"b":"z"}"#).0, 2);
    assert_eq!(read(&schema, "null").unwrap(), Value::Null);
    let e = read(&schema, "1.5").unwrap_err();
    assert!(e.contains("Did not find matching oneof field"), "{e}");
    // Written back: the field set, as its branch; the schema as `oneOf` with each branch's index.
    let Value::Struct(st) = read(&schema, "7").unwrap() else {
        panic!()
    };
    let doc = value::write(&value::to_json(&schema, &Value::Struct(st)).unwrap());
    assert_eq!(doc, "7");
    let written = to_json_schema_with(&schema, Options::default()).unwrap();
    assert_eq!(written["oneOf"][0], json!({"type": "null"}));
    assert_eq!(
        written["oneOf"][1],
        json!({"type": "string", "connect.index": 0})
    );
    assert_eq!(
        written["oneOf"][2],
        json!({"type": "integer", "connect.type": "int64", "connect.index": 1})
    );
    assert_eq!(written["oneOf"].as_array().unwrap().len(), 5);
    let again = to_connect(&js(&written.to_string())).unwrap();
    assert_eq!(again.fields.len(), 4);
    assert_eq!(again.fields[3].name, one_of_field(3));
}

#[test]
fn several_types_in_type_read_as_a_one_of_struct() {
    let schema = to_connect(&js(
        r#"{"type":["string","null","integer"],"maxLength":3,"connect.type":"int32"}"#,
    ))
    .unwrap();
    assert_eq!(schema.name.as_deref(), Some(ONE_OF));
    assert!(schema.optional);
    let types: Vec<(SchemaType, bool)> = schema
        .fields
        .iter()
        .map(|f| (f.schema.schema_type, f.schema.optional))
        .collect();
    assert_eq!(
        types,
        [(SchemaType::String, true), (SchemaType::Int32, true)]
    );
    let Value::Struct(st) = read(&schema, "5").unwrap() else {
        panic!()
    };
    assert_eq!(st.values, [Value::Null, Value::Int32(5)]);
    assert_eq!(read(&schema, "null").unwrap(), Value::Null);
}

#[test]
fn a_one_of_struct_field_inside_a_struct_round_trips() {
    let union = to_connect(&js(r#"{"anyOf":[{"type":"string"},{"type":"number"}]}"#)).unwrap();
    assert!(!union.optional);
    let mut outer = Schema::new(SchemaType::Struct);
    outer.fields.push(Field {
        name: "v".into(),
        index: 0,
        schema: union.clone(),
    });
    let outer = Arc::new(outer);
    let mut u = Struct::new(union.clone());
    u.values[1] = Value::Float64(2.5);
    let mut st = Struct::new(outer.clone());
    st.values[0] = Value::Struct(u);
    let doc = value::write(&value::to_json(&outer, &Value::Struct(st.clone())).unwrap());
    assert_eq!(doc, r#"{"v":2.5}"#);
    let written = to_json_schema_with(&outer, Options::default()).unwrap();
    assert_eq!(written["properties"]["v"]["connect.index"], 0, "{written}");
    let back = to_connect(&js(&written.to_string())).unwrap();
    assert_eq!(read(&back, &doc).unwrap(), Value::Struct(st));
}

#[test]
fn the_keys_confluent_reads_are_accepted() {
    let mut c = crate::connectors::Props::new();
    c.insert("schema.registry.url".into(), "http://127.0.0.1:1".into());
    for (k, v) in [
        ("json.fail.invalid.schema", "true"),
        ("json.write.dates.iso8601", "true"),
        ("use.latest.version", "true"),
        ("latest.compatibility.strict", "false"),
        ("json.oneof.for.nullables", "false"),
        ("object.additional.properties", "false"),
        ("use.optional.for.nonrequired", "true"),
    ] {
        c.insert(k.into(), v.into());
    }
    JsonSchemaConverter::from_config(&c).unwrap();
}
