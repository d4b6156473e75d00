//! Connect → `.proto` → Connect round trips of what Confluent's `ProtobufData` writes beyond plain
//! structs: enums, oneofs, values that are not structs, maps Protobuf's `map` cannot hold, field numbers
//! and integer kinds kept, scrubbed names, wrappers for nullables and structs for nulls.

use std::collections::BTreeMap;

use prost::Message;
use prost_reflect::DynamicMessage;

use super::connect::{from_connect, message_schema, to_connect_with, ReadOptions};
use super::names::{ENUM_PARAMETER, TAG_PARAMETER, TYPE_PARAMETER};
use super::schema::ProtoSchema;
use super::text::{ToProto, WriteOptions};
use crate::data::{Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};

fn prim(t: SchemaType) -> SchemaRef {
    SchemaBuilder::new(t).build()
}

/// Writes `value` with `schema` and reads it back with `read`: the text, read schema and value.
fn trip(
    schema: &SchemaRef,
    value: &Value,
    write: WriteOptions,
    read: ReadOptions,
) -> (String, SchemaRef, Value) {
    let (text, full) = ToProto::with(write).file(schema).unwrap();
    let compiled =
        ProtoSchema::parse(&text, BTreeMap::new()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let desc = compiled
        .file
        .parent_pool()
        .get_message_by_name(&full)
        .unwrap();
    let bytes = from_connect(schema, value, &desc)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .encode_to_vec();
    let read_schema = message_schema(&desc, read);
    let msg = DynamicMessage::decode(desc, bytes.as_slice()).unwrap();
    let back = to_connect_with(&msg, &read_schema, read.struct_for_nulls).unwrap();
    (text, read_schema, back)
}

fn plain(schema: &SchemaRef, value: &Value) -> (String, SchemaRef, Value) {
    trip(
        schema,
        value,
        WriteOptions::default(),
        ReadOptions::CONFLUENT,
    )
}

fn one(name: &str, schema: SchemaRef, v: Value) -> (SchemaRef, Value) {
    let s = SchemaBuilder::struct_()
        .name("ex.One")
        .field(name, schema)
        .build();
    let mut value = Struct::new(s.clone());
    value.values[0] = v;
    (s, Value::Struct(value))
}

fn get<'a>(v: &'a Value, name: &str) -> &'a Value {
    let Value::Struct(s) = v else { panic!("{v:?}") };
    let i = s.schema.fields.iter().position(|f| f.name == name).unwrap();
    &s.values[i]
}

fn color(t: SchemaType) -> SchemaRef {
    SchemaBuilder::new(t)
        .name("Color")
        .optional()
        .parameter(ENUM_PARAMETER, "Color")
        .parameter(format!("{ENUM_PARAMETER}.RED"), "0")
        .parameter(format!("{ENUM_PARAMETER}.GREEN"), "5")
        .build()
}

#[test]
fn enums_are_written_as_nested_enums_with_their_numbers() {
    let (schema, value) = one(
        "c",
        color(SchemaType::String),
        Value::String("GREEN".into()),
    );
    let (text, read, back) = plain(&schema, &value);
    assert!(
        text.contains("  Color c = 1;\n  enum Color {\n    RED = 0;\n    GREEN = 5;\n  }"),
        "{text}"
    );
    assert_eq!(get(&back, "c"), &Value::String("GREEN".into()));
    let c = &read.field("c").unwrap().schema;
    assert_eq!(
        c.parameters.get(&format!("{ENUM_PARAMETER}.GREEN")),
        Some(&"5".to_string())
    );
    // int.for.enums: the enum's numbers, both ways.
    let (schema, value) = one("c", color(SchemaType::Int32), Value::Int32(5));
    let read = ReadOptions {
        int_for_enums: true,
        ..ReadOptions::CONFLUENT
    };
    let (text, _, back) = trip(&schema, &value, WriteOptions::default(), read);
    assert!(text.contains("Color c = 1;"), "{text}");
    assert_eq!(get(&back, "c"), &Value::Int32(5));
    // A symbol the enum lacks is refused.
    let (schema, value) = one("c", color(SchemaType::String), Value::String("BLUE".into()));
    let (text, full) = ToProto::default().file(&schema).unwrap();
    let compiled = ProtoSchema::parse(&text, BTreeMap::new()).unwrap();
    let desc = compiled
        .file
        .parent_pool()
        .get_message_by_name(&full)
        .unwrap();
    let e = from_connect(&schema, &value, &desc).unwrap_err();
    assert!(e.0.contains("BLUE"), "{e}");
}

#[test]
fn union_structs_are_written_as_oneofs_and_read_back() {
    let union = SchemaBuilder::struct_()
        .name("io.confluent.connect.protobuf.Union.choice")
        .optional()
        .field(
            "n",
            SchemaBuilder::new(SchemaType::Int32).optional().build(),
        )
        .field(
            "s",
            SchemaBuilder::new(SchemaType::String).optional().build(),
        )
        .build();
    let mut u = Struct::new(union.clone());
    u.values[1] = Value::String("picked".into());
    let (schema, value) = one("choice_0", union, Value::Struct(u));
    let (text, read, back) = plain(&schema, &value);
    assert!(
        text.contains("  oneof choice {\n    int32 n = 1;\n    string s = 2;\n  }"),
        "{text}"
    );
    assert_eq!(read.fields[0].name, "choice_0");
    assert_eq!(
        get(get(&back, "choice_0"), "s"),
        &Value::String("picked".into())
    );
    assert_eq!(get(get(&back, "choice_0"), "n"), &Value::Null);
    // No member set: nothing written, null read.
    let mut empty = Struct::new(schema.clone());
    empty.values[0] = Value::Null;
    let (_, _, back) = plain(&schema, &Value::Struct(empty));
    assert_eq!(get(&back, "choice_0"), &Value::Null);
}

#[test]
fn values_that_are_not_structs_are_wrapper_messages() {
    for (schema, value) in [
        (prim(SchemaType::String), Value::String("hi".into())),
        (prim(SchemaType::Int64), Value::Int64(-3)),
        (prim(SchemaType::Boolean), Value::Boolean(true)),
        (prim(SchemaType::Bytes), Value::Bytes(vec![1, 2])),
        (prim(SchemaType::Float64), Value::Float64(0.5)),
    ] {
        let (text, read, back) = plain(&schema, &value);
        assert!(text.contains("package google.protobuf;"), "{text}");
        assert_eq!(read.schema_type, schema.schema_type);
        assert_eq!(back, value);
    }
    let (_, full) = ToProto::default().file(&prim(SchemaType::Int16)).unwrap();
    assert_eq!(full, "google.protobuf.Int32Value");
    // Without wrapper.for.raw.primitives the wrapper reads as a struct.
    let read = ReadOptions {
        wrapper_for_raw_primitives: false,
        ..ReadOptions::CONFLUENT
    };
    let s = prim(SchemaType::String);
    let (_, schema, back) = trip(
        &s,
        &Value::String("x".into()),
        WriteOptions::default(),
        read,
    );
    assert_eq!(schema.name.as_deref(), Some("StringValue"));
    assert_eq!(get(&back, "value"), &Value::String("x".into()));
    let array = SchemaBuilder::array(prim(SchemaType::Int32)).build();
    assert!(ToProto::default().file(&array).is_err());
}

#[test]
fn maps_with_other_keys_and_map_values_are_entry_messages() {
    let inner = SchemaBuilder::map(prim(SchemaType::String), prim(SchemaType::Int32)).build();
    let schema = SchemaBuilder::map(prim(SchemaType::Float64), inner).build();
    let value = Value::Map(vec![(
        Value::Float64(1.5),
        Value::Map(vec![(Value::String("a".into()), Value::Int32(1))]),
    )]);
    let (schema, value) = one("m", schema, value);
    let (text, read, back) = plain(&schema, &value);
    assert!(
        text.contains("repeated ConnectDefault1Entry m = 1;"),
        "{text}"
    );
    assert!(
        text.contains("message ConnectDefault1Entry {\n    double key = 1;"),
        "{text}"
    );
    assert_eq!(read.field("m").unwrap().schema.schema_type, SchemaType::Map);
    assert_eq!(get(&back, "m"), get(&value, "m"));
    let nested =
        SchemaBuilder::array(SchemaBuilder::array(prim(SchemaType::Int32)).build()).build();
    let (schema, _) = one("a", nested, Value::Null);
    let e = ToProto::default().file(&schema).unwrap_err();
    assert!(e.0.contains("Array cannot be nested"), "{e}");
}

#[test]
fn field_numbers_and_integer_kinds_are_kept() {
    let text = "syntax = \"proto3\";\npackage ex;\nmessage M {\n  sint32 a = 7;\n  uint64 b = 3;\n  fixed32 c = 12;\n}\n";
    let compiled = ProtoSchema::parse(text, BTreeMap::new()).unwrap();
    let desc = compiled.message_at(&[0]).unwrap();
    let schema = message_schema(&desc, ReadOptions::CONFLUENT);
    let a = &schema.field("a").unwrap().schema;
    assert_eq!(a.parameters.get(TAG_PARAMETER), Some(&"7".to_string()));
    assert_eq!(
        a.parameters.get(TYPE_PARAMETER),
        Some(&"sint32".to_string())
    );
    let mut v = Struct::new(schema.clone());
    v.values = vec![Value::Int32(-2), Value::Int64(-1), Value::Int64(9)];
    let (written, _, back) = plain(&schema, &Value::Struct(v.clone()));
    assert!(
        written.contains("message M {\n  sint32 a = 7;\n  uint64 b = 3;\n  fixed32 c = 12;"),
        "{written}"
    );
    let Value::Struct(back) = back else { panic!() };
    assert_eq!(
        back.values, v.values,
        "uint64 keeps its bits as Java's long"
    );
}

#[test]
fn scrub_invalid_names_makes_identifiers() {
    let inner = SchemaBuilder::struct_()
        .name("in-ner")
        .field("x y", prim(SchemaType::Int32))
        .build();
    let schema = SchemaBuilder::struct_()
        .name("my.rec-ord")
        .field("1st", prim(SchemaType::String))
        .field("nested", inner.clone())
        .build();
    let mut i = Struct::new(inner);
    i.values[0] = Value::Int32(4);
    let mut v = Struct::new(schema.clone());
    v.values = vec![Value::String("a".into()), Value::Struct(i)];
    let write = WriteOptions {
        scrub: true,
        ..WriteOptions::default()
    };
    let (text, read, back) = trip(&schema, &Value::Struct(v), write, ReadOptions::CONFLUENT);
    assert!(text.contains("package my;"), "{text}");
    assert!(text.contains("message rec_ord {"), "{text}");
    assert!(text.contains("string x1st = 1;"), "{text}");
    assert!(text.contains("in_ner nested = 2;"), "{text}");
    assert!(text.contains("int32 x_y = 1;"), "{text}");
    assert_eq!(read.fields[0].name, "x1st");
    assert_eq!(get(&back, "x1st"), &Value::String("a".into()));
    assert_eq!(get(get(&back, "nested"), "x_y"), &Value::Int32(4));
    let unscrubbed = ToProto::default().file(&schema).unwrap().0;
    assert!(ProtoSchema::parse(&unscrubbed, BTreeMap::new()).is_err());
}

#[test]
fn wrapper_for_nullables_writes_and_reads_optional_primitives_as_wrappers() {
    let schema = SchemaBuilder::struct_()
        .name("W")
        .field(
            "n",
            SchemaBuilder::new(SchemaType::Int32).optional().build(),
        )
        .field(
            "s",
            SchemaBuilder::new(SchemaType::String).optional().build(),
        )
        .field("r", prim(SchemaType::Int64))
        .build();
    let mut v = Struct::new(schema.clone());
    v.values = vec![Value::Int32(0), Value::Null, Value::Int64(2)];
    let write = WriteOptions {
        wrapper_for_nullables: true,
        ..WriteOptions::default()
    };
    let read = ReadOptions {
        wrapper_for_nullables: true,
        ..ReadOptions::CONFLUENT
    };
    let (text, rs, back) = trip(&schema, &Value::Struct(v), write, read);
    assert!(
        text.contains("import \"google/protobuf/wrappers.proto\";"),
        "{text}"
    );
    assert!(text.contains("google.protobuf.Int32Value n = 1;"), "{text}");
    assert!(
        text.contains("google.protobuf.StringValue s = 2;"),
        "{text}"
    );
    assert!(text.contains("int64 r = 3;"), "{text}");
    let Value::Struct(back) = back else { panic!() };
    assert_eq!(
        back.values,
        vec![Value::Int32(0), Value::Null, Value::Int64(2)]
    );
    assert!(!rs.field("r").unwrap().schema.optional);
    assert!(rs.field("n").unwrap().schema.optional);
}

#[test]
fn generate_struct_for_nulls_reads_an_unset_message_as_its_default() {
    let inner = SchemaBuilder::struct_()
        .name("In")
        .optional()
        .field("x", prim(SchemaType::Int32))
        .build();
    let (schema, value) = one("in", inner, Value::Null);
    let (_, _, back) = plain(&schema, &value);
    assert_eq!(get(&back, "in"), &Value::Null);
    let read = ReadOptions {
        struct_for_nulls: true,
        ..ReadOptions::CONFLUENT
    };
    let (_, _, back) = trip(&schema, &value, WriteOptions::default(), read);
    assert_eq!(get(get(&back, "in"), "x"), &Value::Int32(0));
    // A proto3 `optional` scalar not set: null, or its default with the key.
    let opt = SchemaBuilder::new(SchemaType::String).optional().build();
    let (schema, value) = one("o", opt, Value::Null);
    let write = WriteOptions {
        optional_for_nullables: true,
        ..WriteOptions::default()
    };
    let (text, _, back) = trip(&schema, &value, write, ReadOptions::CONFLUENT);
    assert!(text.contains("optional string o = 1;"), "{text}");
    assert_eq!(get(&back, "o"), &Value::Null);
    let (_, _, back) = trip(&schema, &value, write, read);
    assert_eq!(get(&back, "o"), &Value::String(String::new()));
}

#[test]
fn a_schema_read_from_confluents_form_writes_the_same_proto() {
    let text = "syntax = \"proto3\";\npackage ex;\n\nmessage Shape {\n  string id = 1;\n  oneof kind {\n    double radius = 2;\n    Square square = 3;\n  }\n  Color color = 4;\n  message Square {\n    double side = 1;\n  }\n  enum Color {\n    RED = 0;\n    BLUE = 1;\n  }\n}\n";
    let compiled = ProtoSchema::parse(text, BTreeMap::new()).unwrap();
    let desc = compiled.message_at(&[0]).unwrap();
    let schema: Schema = (*message_schema(&desc, ReadOptions::CONFLUENT)).clone();
    let (written, _) = ToProto::default().file(&schema).unwrap();
    let again =
        ProtoSchema::parse(&written, BTreeMap::new()).unwrap_or_else(|e| panic!("{e}\n{written}"));
    let m = again.message_at(&[0]).unwrap();
    let numbers: Vec<(String, u32)> = m
        .fields()
        .map(|f| (f.name().to_string(), f.number()))
        .collect();
    assert_eq!(
        numbers,
        [
            ("id".to_string(), 1),
            ("radius".to_string(), 2),
            ("square".to_string(), 3),
            ("color".to_string(), 4)
        ],
        "{written}"
    );
    let kind: Vec<String> = m
        .oneofs()
        .next()
        .unwrap()
        .fields()
        .map(|f| f.name().to_string())
        .collect();
    assert_eq!(kind, ["radius", "square"], "{written}");
    assert!(written.contains("oneof kind {"), "{written}");
    assert!(
        written.contains("enum Color {\n    RED = 0;\n    BLUE = 1;"),
        "{written}"
    );
}
