//! Connect ↔ JSON Schema: a table of schemas covering every Connect type, the logical types, the
//! optional and default cases, each mapped to JSON Schema and back with a value written and read back;
//! and the compatibility rules at every level, with evolutions accepted and refused.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::compat::check;
use super::connect::{to_connect, to_json_schema};
use super::converter::JsonSchemaConverter;
use super::schema::JsonSchema;
use super::value;
use crate::converters::registry::Level;
use crate::converters::Converter;
use crate::data::logical;
use crate::data::{Field, Schema, SchemaRef, SchemaType, Struct, Value};

fn with(t: SchemaType, f: impl FnOnce(&mut Schema)) -> SchemaRef {
    let mut s = Schema::new(t);
    f(&mut s);
    Arc::new(s)
}

fn field(name: &str, index: usize, schema: SchemaRef) -> Field {
    Field {
        name: name.into(),
        index,
        schema,
    }
}

/// The JSON Schema of `schema`, the Connect schema read back from its registered text, and `value`
/// written and read back.
fn round_trip(schema: &SchemaRef, value: &Value) -> (Json, SchemaRef, Value, String) {
    let js = to_json_schema(schema).unwrap();
    let parsed = JsonSchema::parse(&js.to_string()).unwrap_or_else(|e| panic!("{js}: {e}"));
    let back = to_connect(&parsed).unwrap_or_else(|e| panic!("{js}: {e}"));
    let text = value::write(&value::to_json(schema, value).unwrap());
    let read = value::to_value(&back, &value::parse(text.as_bytes()).unwrap(), false)
        .unwrap_or_else(|e| panic!("{js} {text}: {e}"));
    (js, back, read, text)
}

fn map_of(key: SchemaRef, value: SchemaRef) -> SchemaRef {
    with(SchemaType::Map, |m| {
        m.key_schema = Some(key);
        m.value_schema = Some(value);
    })
}

/// Every Connect type with a value, its JSON Schema and the value's JSON text.
fn type_cases() -> Vec<(SchemaRef, Value, Json, &'static str)> {
    let string_map = map_of(Schema::string(), Schema::int32());
    let int_map = map_of(Schema::int32(), Schema::optional_string());
    let array = with(SchemaType::Array, |a| {
        a.value_schema = Some(Schema::int64())
    });
    vec![
        (
            Schema::int8(),
            Value::Int8(-7),
            json!({"type": "integer", "connect.type": "int8"}),
            "-7",
        ),
        (
            Schema::int16(),
            Value::Int16(300),
            json!({"type": "integer", "connect.type": "int16"}),
            "300",
        ),
        (
            Schema::int32(),
            Value::Int32(1 << 20),
            json!({"type": "integer", "connect.type": "int32"}),
            "1048576",
        ),
        (
            Schema::int64(),
            Value::Int64(i64::MIN),
            json!({"type": "integer", "connect.type": "int64"}),
            "-9223372036854775808",
        ),
        (
            Schema::float32(),
            Value::Float32(1.5),
            json!({"type": "number", "connect.type": "float32"}),
            "1.5",
        ),
        (
            Schema::float64(),
            Value::Float64(-0.25),
            json!({"type": "number", "connect.type": "float64"}),
            "-0.25",
        ),
        (
            Schema::boolean(),
            Value::Boolean(true),
            json!({"type": "boolean"}),
            "true",
        ),
        (
            Schema::string(),
            Value::String("é\"x".into()),
            json!({"type": "string"}),
            "\"é\\\"x\"",
        ),
        (
            Schema::bytes(),
            Value::Bytes(vec![0, 255, 7]),
            json!({"type": "string", "connect.type": "bytes"}),
            "\"AP8H\"",
        ),
        (
            array.clone(),
            Value::Array(vec![Value::Int64(1), Value::Int64(2)]),
            json!({"type": "array", "items": {"type": "integer", "connect.type": "int64"}}),
            "[1,2]",
        ),
        (
            string_map.clone(),
            Value::Map(vec![(Value::String("a".into()), Value::Int32(1))]),
            json!({"type": "object", "additionalProperties": {"type": "integer", "connect.type": "int32"}, "connect.type": "map"}),
            "{\"a\":1}",
        ),
        (
            int_map.clone(),
            Value::Map(vec![(Value::Int32(4), Value::Null)]),
            json!({"type": "array", "items": {"type": "object", "properties": {
                "key": {"type": "integer", "connect.type": "int32", "connect.index": 0},
                "value": {"oneOf": [{"type": "null"}, {"type": "string"}], "connect.index": 1}}},
                "connect.type": "map"}),
            "[{\"key\":4,\"value\":null}]",
        ),
        (
            Schema::optional_string(),
            Value::Null,
            json!({"oneOf": [{"type": "null"}, {"type": "string"}]}),
            "null",
        ),
        (
            Schema::optional_int32(),
            Value::Int32(3),
            json!({"oneOf": [{"type": "null"}, {"type": "integer", "connect.type": "int32"}]}),
            "3",
        ),
    ]
}

#[test]
fn every_connect_type_maps_to_json_schema_and_back_with_its_value() {
    let cases = type_cases();
    for (schema, value, expected, text) in cases {
        let (js, back, read, written) = round_trip(&schema, &value);
        assert_eq!(js, expected, "{schema:?}");
        assert_eq!(written, text, "{js}");
        assert_eq!(*back, *schema, "{js}");
        assert_eq!(read, value, "{js}");
    }
}

#[test]
fn logical_types_carry_their_title_and_connect_type() {
    let decimal = logical::decimal(2).build();
    let (js, back, read, text) = round_trip(&decimal, &Value::Bytes(vec![0x04, 0xd2]));
    assert_eq!(
        js,
        json!({"type": "number", "title": logical::DECIMAL_NAME, "connect.version": 1,
               "connect.parameters": {"scale": "2"}, "connect.type": "bytes"})
    );
    assert_eq!(text, "12.34");
    assert_eq!(*back, *decimal);
    assert_eq!(read, Value::Bytes(vec![0x04, 0xd2]));
    for (schema, value, connect_type, text) in [
        (
            logical::date().build(),
            Value::Int32(19_000),
            "int32",
            "19000",
        ),
        (
            logical::time().build(),
            Value::Int32(3_600_000),
            "int32",
            "3600000",
        ),
        (
            logical::timestamp().build(),
            Value::Int64(1_700_000_000_000),
            "int64",
            "1700000000000",
        ),
    ] {
        let (js, back, read, written) = round_trip(&schema, &value);
        assert_eq!(js["type"], "integer");
        assert_eq!(js["connect.type"], connect_type);
        assert_eq!(js["title"], schema.name.clone().unwrap());
        assert_eq!(*back, *schema, "{js}");
        assert_eq!((read, written.as_str()), (value, text));
    }
}

#[test]
fn structs_become_objects_with_indexed_properties_optional_fields_and_defaults() {
    let inner = with(SchemaType::Struct, |s| {
        s.fields = vec![field("n", 0, Schema::int32())];
    });
    let with_default = with(SchemaType::String, |s| {
        s.default_value = Some(Value::String("none".into()));
        s.doc = Some("what it is".into());
    });
    let optional_default = with(SchemaType::Int32, |s| {
        s.optional = true;
        s.default_value = Some(Value::Int32(5));
    });
    let outer = with(SchemaType::Struct, |s| {
        s.name = Some("ex.Outer".into());
        s.version = Some(3);
        s.parameters.insert("k".into(), "v".into());
        s.fields = vec![
            field("id", 0, Schema::int64()),
            field("note", 1, Schema::optional_string()),
            field("inner", 2, inner.clone()),
            field("kind", 3, with_default),
            field("count", 4, optional_default),
        ];
    });
    let mut value = Struct::new(outer.clone());
    value.put("id", Value::Int64(1)).unwrap();
    value
        .put(
            "inner",
            Value::Struct(Struct::new(inner).with("n", Value::Int32(9)).unwrap()),
        )
        .unwrap();
    value.put("kind", Value::String("k".into())).unwrap();
    let (js, back, read, text) = round_trip(&outer, &Value::Struct(value.clone()));
    assert_eq!(js["title"], "ex.Outer");
    assert_eq!(js["connect.version"], 3);
    assert_eq!(js["connect.parameters"], json!({"k": "v"}));
    assert_eq!(
        js["properties"]["note"],
        json!({"oneOf": [{"type": "null"}, {"type": "string"}], "connect.index": 1})
    );
    assert_eq!(js["properties"]["kind"]["default"], "none");
    assert_eq!(js["properties"]["kind"]["description"], "what it is");
    assert_eq!(js["properties"]["count"]["default"], 5);
    assert_eq!(js["properties"]["inner"]["connect.index"], 2);
    assert_eq!(
        text,
        r#"{"id":1,"note":null,"inner":{"n":9},"kind":"k","count":5}"#
    );
    assert_eq!(*back, *outer);
    let Value::Struct(read) = read else {
        panic!("{read:?}")
    };
    assert_eq!(read.values[..4], value.values[..4]);
    assert_eq!(read.values[4], Value::Int32(5), "a null takes the default");
}

#[test]
fn schemas_written_by_hand_map_to_connect_and_unknown_properties_follow_the_setting() {
    let parsed = JsonSchema::parse(
        r##"{"type":"object","title":"Person","properties":{
             "name":{"type":"string"},"age":{"type":["integer","null"]},
             "tags":{"type":"array","items":{"$ref":"#/definitions/tag"}},
             "score":{"type":"number"}},
             "definitions":{"tag":{"type":"string"}}}"##,
    )
    .unwrap();
    let schema = to_connect(&parsed).unwrap();
    assert_eq!(schema.name.as_deref(), Some("Person"));
    let types: Vec<(SchemaType, bool)> = schema
        .fields
        .iter()
        .map(|f| (f.schema.schema_type, f.schema.optional))
        .collect();
    assert_eq!(
        types,
        [
            (SchemaType::String, false),
            (SchemaType::Int64, true),
            (SchemaType::Array, false),
            (SchemaType::Float64, false)
        ]
    );
    let doc = value::parse(br#"{"name":"a","age":null,"tags":["x"],"score":2,"extra":1}"#).unwrap();
    let e = value::to_value(&schema, &doc, false).unwrap_err();
    assert!(e.0.contains("extra"), "{e}");
    let Value::Struct(read) = value::to_value(&schema, &doc, true).unwrap() else {
        panic!()
    };
    assert_eq!(read.get("score"), Some(&Value::Float64(2.0)));
    assert!(value::to_value(&schema, &value::parse(b"{\"age\":1}").unwrap(), true).is_err());
    let untyped = JsonSchema::parse(r#"{"description":"anything"}"#).unwrap();
    assert!(to_connect(&untyped).is_err(), "no type");
}

#[test]
fn the_converter_refuses_invalid_settings_naming_the_key() {
    let base = |k: &str, v: &str| {
        let mut c = crate::connectors::Props::new();
        c.insert("schema.registry.url".into(), "http://127.0.0.1:1".into());
        c.insert(k.into(), v.into());
        JsonSchemaConverter::from_config(&c)
    };
    for (k, v) in [
        ("json.fail.invalid.schema", "maybe"),
        ("json.write.dates.iso8601", "yes"),
        ("use.latest.version", "1"),
        ("json.oneof.for.nullables", "no"),
        ("object.additional.properties", "off"),
        ("use.optional.for.nonrequired", "x"),
        ("schema.registry.ssl.truststore.type", "JKS"),
    ] {
        let e = base(k, v).unwrap_err();
        assert!(e.0.contains(k), "{k}: {e}");
    }
    let c = base("json.fail.unknown.properties", "false").unwrap();
    for data in [&b"{}"[..], &[0, 0, 0][..], &[1, 0, 0, 0, 1, 2][..]] {
        let e = c.to_connect("t", Some(data)).unwrap_err();
        assert!(e.0.contains("Unknown magic byte!"), "{e}");
    }
    assert_eq!(c.to_connect("t", None).unwrap().value, Value::Null);
    assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
    assert!(
        c.from_connect("t", None, &Value::Int32(1)).is_err(),
        "no schema"
    );
}

fn js(text: &str) -> JsonSchema {
    JsonSchema::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Whether `new` may follow `old` at `level` (empty messages), with the messages for the failure.
fn ok(level: Level, old: &str, new: &str) -> Result<(), Vec<String>> {
    let messages = check(level, &js(new), &[js(old)]);
    if messages.is_empty() {
        Ok(())
    } else {
        Err(messages)
    }
}

/// (old, new, backward compatible, forward compatible, what a refusal names).
const EVOLUTIONS: &[(&str, &str, bool, bool, &str)] = &[
    (
        r#"{"type":"integer"}"#,
        r#"{"type":"number"}"#,
        true,
        false,
        "TYPE_CHANGED",
    ),
    (
        r#"{"type":"string"}"#,
        r#"{"type":"integer"}"#,
        false,
        false,
        "TYPE_CHANGED",
    ),
    (
        r#"{"type":"string"}"#,
        r#"{"type":["string","null"]}"#,
        true,
        false,
        "TYPE_NARROWED",
    ),
    (
        r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}"#,
        r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"additionalProperties":false}"#,
        true,
        false,
        "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
    ),
    (
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}"#,
        false,
        true,
        "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
    ),
    (
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        r#"{"type":"object","properties":{"a":{"type":"string"},"b":{}}}"#,
        true,
        true,
        "",
    ),
    (
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#,
        false,
        true,
        "REQUIRED_ATTRIBUTE_ADDED",
    ),
    (
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        r#"{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"]}"#,
        true,
        true,
        "",
    ),
    (
        r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
        r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}"#,
        false,
        true,
        "ADDITIONAL_PROPERTIES_REMOVED",
    ),
    (
        r#"{"enum":["a","b"]}"#,
        r#"{"enum":["a","b","c"]}"#,
        true,
        false,
        "ENUM_ARRAY_NARROWED",
    ),
    (
        r#"{"type":"string","maxLength":5}"#,
        r#"{"type":"string","maxLength":10}"#,
        true,
        false,
        "MAX_LENGTH_DECREASED",
    ),
    (
        r#"{"type":"string"}"#,
        r#"{"type":"string","minLength":2}"#,
        false,
        true,
        "MIN_LENGTH_ADDED",
    ),
    (
        r#"{"type":"array","items":{"type":"string"},"maxItems":3}"#,
        r#"{"type":"array","items":{"type":"string"}}"#,
        true,
        false,
        "MAX_ITEMS_ADDED",
    ),
    (
        r#"{"type":"integer","minimum":0,"maximum":10}"#,
        r#"{"type":"integer","minimum":-5,"maximum":20}"#,
        true,
        false,
        "MINIMUM_INCREASED",
    ),
    (
        r#"{"type":"array","items":{"type":"integer"}}"#,
        r#"{"type":"array","items":{"type":"string"}}"#,
        false,
        false,
        "TYPE_CHANGED",
    ),
    (
        r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
        r#"{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}"#,
        true,
        false,
        "SUM_TYPE_NARROWED",
    ),
    (
        r#"{"type":"string"}"#,
        r#"{"anyOf":[{"type":"string"},{"type":"null"}]}"#,
        true,
        false,
        "SUM_TYPE_NARROWED",
    ),
    (
        r#"{"allOf":[{"type":"object"}]}"#,
        r#"{"allOf":[{"type":"object"},{"required":["a"]}]}"#,
        false,
        true,
        "PRODUCT_TYPE_EXTENDED",
    ),
];

#[test]
fn evolutions_follow_confluents_rules_in_each_direction() {
    for (old, new, backward, forward, named) in EVOLUTIONS {
        let b = ok(Level::Backward, old, new);
        let f = ok(Level::Forward, old, new);
        let full = ok(Level::Full, old, new);
        assert_eq!(b.is_ok(), *backward, "BACKWARD {old} -> {new}: {b:?}");
        assert_eq!(f.is_ok(), *forward, "FORWARD {old} -> {new}: {f:?}");
        assert_eq!(
            full.is_ok(),
            *backward && *forward,
            "FULL {old} -> {new}: {full:?}"
        );
        assert!(ok(Level::None, old, new).is_ok());
        let refused: Vec<String> = [b, f]
            .into_iter()
            .filter_map(Result::err)
            .flatten()
            .collect();
        assert!(
            refused.iter().any(|m| m.contains(named)) || refused.is_empty(),
            "{old} -> {new}: {refused:?} does not name {named}"
        );
    }
}

#[test]
fn transitive_levels_check_every_earlier_version() {
    let v1 = js(
        r#"{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}"#,
    );
    let v2 = js(r#"{"type":"object","properties":{},"additionalProperties":false}"#);
    // v3 brings back `a` as a string: v2 (closed, without `a`) reads nothing with `a`, so v3 reads v2's
    // data; v1 wrote `a` as an integer, which v3 cannot read.
    let v3 = js(
        r#"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}"#,
    );
    let previous = [v1, v2];
    assert!(check(Level::Backward, &v3, &previous).is_empty());
    assert!(!check(Level::BackwardTransitive, &v3, &previous).is_empty());
    assert!(!check(Level::ForwardTransitive, &v3, &previous).is_empty());
    assert!(!check(Level::FullTransitive, &v3, &previous).is_empty());
    let messages = check(Level::FullTransitive, &v3, &previous);
    assert!(
        messages.iter().any(|m| m.contains("#/properties/a")),
        "{messages:?}"
    );
}

#[test]
fn recursive_and_shared_definitions_are_compared_once() {
    let tree = r##"{"type":"object","properties":{"v":{"type":"integer"},"l":{"$ref":"#"},"r":{"$ref":"#"}}}"##;
    assert!(ok(Level::FullTransitive, tree, tree).is_ok());
    // 40 definitions each naming the next twice: 2^40 paths through them, each pair compared once.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/definitions/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let old = json!({"$ref": "#/definitions/d0", "definitions": defs}).to_string();
    let new = old.replace(r#""d40":{"type":"string"}"#, r#""d40":{"type":"integer"}"#);
    assert_ne!(old, new);
    let refused = ok(Level::Backward, &old, &new).unwrap_err();
    assert!(
        refused.iter().any(|m| m.contains("TYPE_CHANGED")),
        "{refused:?}"
    );
    assert!(
        to_connect(&js(tree)).is_err(),
        "Connect has no recursive types"
    );
}
