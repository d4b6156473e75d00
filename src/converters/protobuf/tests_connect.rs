use std::collections::BTreeMap;

use prost::Message;
use prost_reflect::DynamicMessage;

use super::connect::{from_connect, message_schema, to_connect, ReadOptions};
use super::converter::{read_indexes, write_indexes, ProtobufConverter};
use super::names::{ENUM_PARAMETER, TAG_PARAMETER, TYPE_PARAMETER};
use super::schema::ProtoSchema;
use super::text::ToProto;
use crate::converters::Converter;
use crate::data::logical;
use crate::data::{SchemaBuilder, SchemaRef, SchemaType, Struct, Value};

const OPTS: ReadOptions = ReadOptions::CONFLUENT;

fn prim(t: SchemaType) -> SchemaRef {
    SchemaBuilder::new(t).build()
}

/// Writes `value` with `schema` and reads it back: the `.proto` text, the read schema and the value.
fn round_trip(schema: &SchemaRef, value: &Value, optional: bool) -> (String, SchemaRef, Value) {
    let (text, full) = ToProto::new(optional).file(schema).unwrap();
    let compiled =
        ProtoSchema::parse(&text, BTreeMap::new()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let desc = compiled
        .file
        .parent_pool()
        .get_message_by_name(&full)
        .unwrap();
    let bytes = from_connect(schema, value, &desc).unwrap().encode_to_vec();
    let read = message_schema(&desc, OPTS);
    let msg = DynamicMessage::decode(desc, bytes.as_slice()).unwrap();
    let back = to_connect(&msg, &read).unwrap();
    (text, read, back)
}

fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
    let Value::Struct(s) = v else { panic!("{v:?}") };
    let i = s.schema.fields.iter().position(|f| f.name == name).unwrap();
    &s.values[i]
}

/// (field name, schema, value written, value read back).
fn table() -> Vec<(&'static str, SchemaRef, Value, Value)> {
    let inner = SchemaBuilder::struct_()
        .name("ex.Inner")
        .field("s", prim(SchemaType::String))
        .build();
    let mut inner_v = Struct::new(inner.clone());
    inner_v.values[0] = Value::String("in".into());
    let same = |v: Value| (v.clone(), v);
    let rows: Vec<(&str, SchemaRef, (Value, Value))> = vec![
        ("i8", prim(SchemaType::Int8), same(Value::Int8(-8))),
        ("i16", prim(SchemaType::Int16), same(Value::Int16(300))),
        ("i32", prim(SchemaType::Int32), same(Value::Int32(-70000))),
        ("i64", prim(SchemaType::Int64), same(Value::Int64(1 << 40))),
        ("f32", prim(SchemaType::Float32), same(Value::Float32(1.5))),
        (
            "f64",
            prim(SchemaType::Float64),
            same(Value::Float64(-2.25)),
        ),
        ("b", prim(SchemaType::Boolean), same(Value::Boolean(true))),
        (
            "s",
            prim(SchemaType::String),
            same(Value::String("hé".into())),
        ),
        (
            "raw",
            prim(SchemaType::Bytes),
            same(Value::Bytes(vec![0, 255])),
        ),
        (
            "list",
            SchemaBuilder::array(prim(SchemaType::String)).build(),
            same(Value::Array(vec![
                Value::String("a".into()),
                Value::String("b".into()),
            ])),
        ),
        (
            "ints",
            SchemaBuilder::array(prim(SchemaType::Int16)).build(),
            same(Value::Array(vec![Value::Int16(1), Value::Int16(-2)])),
        ),
        (
            "m",
            SchemaBuilder::map(prim(SchemaType::String), prim(SchemaType::Int32)).build(),
            same(Value::Map(vec![
                (Value::String("a".into()), Value::Int32(1)),
                (Value::String("b".into()), Value::Int32(2)),
            ])),
        ),
        ("inner", inner, same(Value::Struct(inner_v))),
        (
            "dec",
            logical::decimal(2).build(),
            same(Value::Bytes(vec![0x30, 0x39])),
        ),
        ("day", logical::date().build(), same(Value::Int32(19000))),
        (
            "tod",
            logical::time().build(),
            same(Value::Int32(45_296_789)),
        ),
        (
            "ts",
            logical::timestamp().build(),
            same(Value::Int64(1_700_000_000_123)),
        ),
        (
            "old",
            logical::timestamp().build(),
            same(Value::Int64(-1500)),
        ),
        (
            "opt_set",
            SchemaBuilder::new(SchemaType::Int32).optional().build(),
            same(Value::Int32(5)),
        ),
        // proto3 has no null for a scalar: an unset field reads as its default, as Confluent's does.
        (
            "opt_null",
            SchemaBuilder::new(SchemaType::String).optional().build(),
            (Value::Null, Value::String(String::new())),
        ),
        (
            "opt_struct",
            SchemaBuilder::struct_()
                .name("ex.Empty")
                .optional()
                .field("x", prim(SchemaType::Int32))
                .build(),
            (Value::Null, Value::Null),
        ),
        (
            "with_default",
            SchemaBuilder::new(SchemaType::Int64)
                .default_value(Value::Int64(7))
                .build(),
            same(Value::Int64(9)),
        ),
    ];
    rows.into_iter()
        .map(|(n, s, (w, r))| (n, s, w, r))
        .collect()
}

fn table_struct(rows: &[(&'static str, SchemaRef, Value, Value)]) -> (SchemaRef, Value) {
    let mut b = SchemaBuilder::struct_().name("ex.Row");
    for (name, schema, _, _) in rows {
        b = b.field(*name, schema.clone());
    }
    let schema = b.build();
    let mut v = Struct::new(schema.clone());
    for (i, (_, _, written, _)) in rows.iter().enumerate() {
        v.values[i] = written.clone();
    }
    (schema, Value::Struct(v))
}

#[test]
fn every_connect_type_and_logical_type_round_trips() {
    let rows = table();
    let (schema, value) = table_struct(&rows);
    let (text, read, back) = round_trip(&schema, &value, false);
    assert!(
        text.starts_with("syntax = \"proto3\";\npackage ex;"),
        "{text}"
    );
    assert!(text.contains("int32 i8 = 1 [(confluent.field_meta) = { params: [{ key: \"connect.type\", value: \"int8\" }] }];"), "{text}");
    assert!(text.contains("confluent.type.Decimal dec = 14"), "{text}");
    assert!(text.contains("map<string, int32> m = 12;"), "{text}");
    // Confluent names a message's struct by its simple name (its full name when enhanced).
    assert_eq!(read.name.as_deref(), Some("Row"));
    assert_eq!(
        read.field("i64")
            .unwrap()
            .schema
            .parameters
            .get(TAG_PARAMETER),
        Some(&"4".to_string())
    );
    for (name, _, _, expected) in &rows {
        match (field(&back, name), expected) {
            // Read back as the nested message `ex.Row.Inner`, every field optional: the values compare.
            (Value::Struct(got), Value::Struct(want)) => assert_eq!(got.values, want.values),
            (got, want) => assert_eq!(got, want, "{name}"),
        }
    }
    let types: Vec<(String, SchemaType)> = read
        .fields
        .iter()
        .map(|f| (f.name.clone(), f.schema.schema_type))
        .collect();
    assert!(
        types.contains(&("i8".into(), SchemaType::Int8)),
        "{types:?}"
    );
    assert!(
        types.contains(&("i16".into(), SchemaType::Int16)),
        "{types:?}"
    );
    let dec = read.field("dec").unwrap();
    assert_eq!(logical::decimal_scale(&dec.schema).unwrap(), 2);
    assert_eq!(
        read.field("day").unwrap().schema.name.as_deref(),
        Some(logical::DATE_NAME)
    );
    assert_eq!(
        read.field("ts").unwrap().schema.name.as_deref(),
        Some(logical::TIMESTAMP_NAME)
    );
}

#[test]
fn optional_for_nullables_keeps_nulls_and_unnamed_structs_are_connect_defaults() {
    let inner = SchemaBuilder::struct_()
        .field("x", prim(SchemaType::Int32))
        .build();
    let schema = SchemaBuilder::struct_()
        .field(
            "o",
            SchemaBuilder::new(SchemaType::String).optional().build(),
        )
        .field("n", inner.clone())
        .build();
    let mut inner_v = Struct::new(inner);
    inner_v.values[0] = Value::Int32(3);
    let mut v = Struct::new(schema.clone());
    v.values[1] = Value::Struct(inner_v);
    let (text, read, back) = round_trip(&schema, &Value::Struct(v), true);
    assert!(text.contains("message ConnectDefault1 {"), "{text}");
    assert!(text.contains("optional string o = 1;"), "{text}");
    assert!(text.contains("ConnectDefault2 n = 2;"), "{text}");
    assert_eq!(read.name.as_deref(), Some("ConnectDefault1"));
    assert_eq!(field(&back, "o"), &Value::Null);
    assert_eq!(field(field(&back, "n"), "x"), &Value::Int32(3));
}

#[test]
fn oneofs_enums_and_wrappers_read_as_confluent_maps_them() {
    let text = "syntax = \"proto3\";\nimport \"google/protobuf/wrappers.proto\";\nmessage A {\n  oneof choice { int32 n = 1; string s = 2; }\n  E e = 3;\n  google.protobuf.StringValue w = 4;\n  sint64 z = 5;\n  uint32 u = 6;\n}\nenum E { ZERO = 0; ONE = 1; }\n";
    let compiled = ProtoSchema::parse(text, BTreeMap::new()).unwrap();
    let desc = compiled.message_at(&[0]).unwrap();
    let mut msg = DynamicMessage::new(desc.clone());
    msg.set_field_by_name("s", prost_reflect::Value::String("x".into()));
    msg.set_field_by_name("e", prost_reflect::Value::EnumNumber(1));
    msg.set_field_by_name("z", prost_reflect::Value::I64(-5));
    msg.set_field_by_name("u", prost_reflect::Value::U32(u32::MAX));
    let schema = message_schema(&desc, OPTS);
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["choice_0", "e", "w", "z", "u"]);
    let back = to_connect(&msg, &schema).unwrap();
    assert_eq!(
        field(field(&back, "choice_0"), "s"),
        &Value::String("x".into())
    );
    assert_eq!(field(field(&back, "choice_0"), "n"), &Value::Null);
    assert_eq!(field(&back, "e"), &Value::String("ONE".into()));
    assert_eq!(field(&back, "w"), &Value::Null);
    // A wrapper field is a struct unless wrapper.for.nullables.
    assert_eq!(
        schema.field("w").unwrap().schema.schema_type,
        SchemaType::Struct
    );
    let e = &schema.field("e").unwrap().schema;
    assert_eq!(e.name.as_deref(), Some("E"));
    assert_eq!(e.parameters.get(ENUM_PARAMETER), Some(&"E".to_string()));
    assert_eq!(
        e.parameters.get(&format!("{ENUM_PARAMETER}.ONE")),
        Some(&"1".to_string())
    );
    assert_eq!(
        schema.field("choice_0").unwrap().schema.name.as_deref(),
        Some("io.confluent.connect.protobuf.Union.choice")
    );
    assert_eq!(
        schema
            .field("z")
            .unwrap()
            .schema
            .parameters
            .get(TYPE_PARAMETER),
        Some(&"sint64".to_string())
    );
    assert_eq!(field(&back, "z"), &Value::Int64(-5));
    assert_eq!(field(&back, "u"), &Value::Int64(i64::from(u32::MAX)));
    let plain = message_schema(
        &desc,
        ReadOptions {
            index_for_unions: false,
            wrapper_for_nullables: true,
            int_for_enums: true,
            enhanced: true,
            ..OPTS
        },
    );
    assert_eq!(plain.fields[0].name, "choice");
    assert_eq!(plain.name.as_deref(), Some("A"));
    assert_eq!(
        plain.fields[0].schema.name.as_deref(),
        Some("io.confluent.connect.protobuf.Union.A.choice")
    );
    let w = &plain.field("w").unwrap().schema;
    assert_eq!((w.schema_type, w.optional), (SchemaType::String, true));
    let z = &plain.field("z").unwrap().schema;
    assert!(!z.optional, "wrapper.for.nullables: scalars are required");
    let e = &plain.field("e").unwrap().schema;
    assert_eq!(e.schema_type, SchemaType::Int32);
    assert_eq!(e.name.as_deref(), Some("E"));
    let back = to_connect(&msg, &plain).unwrap();
    assert_eq!(field(&back, "e"), &Value::Int32(1));
}

#[test]
fn message_indexes_use_the_zero_shortcut_and_zigzag_varints() {
    for indexes in [vec![0], vec![1], vec![0, 2], vec![3, 0, 64]] {
        let mut out = Vec::new();
        write_indexes(&indexes, &mut out);
        out.push(0xAA);
        let (back, rest) = read_indexes(&out).unwrap();
        assert_eq!((back, rest), (indexes.clone(), &[0xAA][..]));
    }
    let mut one = Vec::new();
    write_indexes(&[0], &mut one);
    assert_eq!(one, [0]);
    let mut two = Vec::new();
    write_indexes(&[1, 2], &mut two);
    assert_eq!(two, [4, 2, 4]);
    assert!(read_indexes(&[]).is_err());
    assert!(read_indexes(&[0x80]).is_err());
    assert!(read_indexes(&[3]).is_err(), "a negative count");
    assert!(read_indexes(&[4, 2]).is_err(), "cut short");
}

fn converter(extra: &[(&str, &str)]) -> Result<ProtobufConverter, crate::data::DataError> {
    let mut c = crate::connectors::Props::new();
    c.insert("schema.registry.url".into(), "http://127.0.0.1:9/".into());
    for (k, v) in extra {
        c.insert((*k).into(), (*v).into());
    }
    ProtobufConverter::from_config(&c)
}

#[test]
fn the_converter_refuses_unframed_data_and_bad_key_values_before_any_registry_call() {
    let c = converter(&[]).unwrap();
    for data in [&b"{}"[..], &[0, 0, 0][..], &[1, 0, 0, 0, 1, 2][..]] {
        let e = c.to_connect("t", Some(data)).unwrap_err();
        assert!(e.0.contains("Unknown magic byte!"), "{e}");
    }
    let e = c.to_connect("t", Some(&[0, 0, 0, 0, 7, 0x80])).unwrap_err();
    assert!(
        e.0.contains("schema ID 7") && e.0.contains("message ind"),
        "{e}"
    );
    assert_eq!(c.to_connect("t", None).unwrap().value, Value::Null);
    assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
    let array = SchemaBuilder::array(prim(SchemaType::String)).build();
    let e = c
        .from_connect("t", Some(&array), &Value::Array(vec![]))
        .unwrap_err();
    assert!(e.0.contains("only a STRUCT or a primitive"), "{e}");
    for key in [
        "use.latest.version",
        "enhanced.protobuf.schema.support",
        "scrub.invalid.names",
        "wrapper.for.nullables",
        "int.for.enums",
        "generate.struct.for.nulls",
    ] {
        assert!(converter(&[(key, "true")]).is_ok(), "{key}");
        let e = converter(&[(key, "maybe")]).unwrap_err();
        assert!(e.0.contains(key), "{e}");
    }
    assert!(converter(&[
        ("optional.for.nullables", "true"),
        ("generate.index.for.unions", "false")
    ])
    .is_ok());
}
