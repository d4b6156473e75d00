//! Connect ↔ Avro: a table of schemas covering every Connect type, the logical types and the optional
//! cases, each mapped to Avro and back and a value written and read back.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::binary::{encode, Reader};
use super::connect::{to_avro, to_connect};
use super::schema::AvroSchema;
use crate::data::logical;
use crate::data::{Field, Schema, SchemaRef, SchemaType, Struct, Value};

fn with(t: SchemaType, f: impl FnOnce(&mut Schema)) -> SchemaRef {
    let mut s = Schema::new(t);
    f(&mut s);
    Arc::new(s)
}

fn round_trip(schema: &SchemaRef, value: &Value) -> (Json, SchemaRef, Value) {
    let avro = to_avro(schema);
    let parsed = AvroSchema::parse(&avro.to_string()).unwrap_or_else(|e| panic!("{avro}: {e}"));
    let back = to_connect(&parsed, &avro).unwrap();
    let mut bytes = Vec::new();
    encode(schema, value, &mut bytes).unwrap();
    let mut reader = Reader::new(&bytes, &parsed);
    let read = reader.value(&parsed.root, &back).unwrap();
    assert!(reader.done(), "{avro}: bytes left");
    (avro, back, read)
}

#[test]
fn every_connect_type_maps_to_avro_and_back_with_its_value() {
    let cases: Vec<(SchemaRef, Value, Json)> = vec![
        (
            Schema::int8(),
            Value::Int8(-7),
            json!({"type": "int", "connect.type": "int8"}),
        ),
        (
            Schema::int16(),
            Value::Int16(300),
            json!({"type": "int", "connect.type": "int16"}),
        ),
        (Schema::int32(), Value::Int32(-123_456), json!("int")),
        (Schema::int64(), Value::Int64(i64::MIN), json!("long")),
        (Schema::float32(), Value::Float32(1.5), json!("float")),
        (Schema::float64(), Value::Float64(-2.25), json!("double")),
        (Schema::boolean(), Value::Boolean(true), json!("boolean")),
        (
            Schema::string(),
            Value::String("héllo".into()),
            json!("string"),
        ),
        (
            Schema::bytes(),
            Value::Bytes(vec![0, 1, 255]),
            json!("bytes"),
        ),
        (
            Schema::optional_string(),
            Value::Null,
            json!(["null", "string"]),
        ),
        (
            Schema::optional_int64(),
            Value::Int64(5),
            json!(["null", "long"]),
        ),
        (
            with(SchemaType::Array, |s| {
                s.value_schema = Some(Schema::int32())
            }),
            Value::Array(vec![Value::Int32(1), Value::Int32(2)]),
            json!({"type": "array", "items": "int"}),
        ),
        (
            with(SchemaType::Map, |s| {
                s.key_schema = Some(Schema::string());
                s.value_schema = Some(Schema::optional_float64());
            }),
            Value::Map(vec![
                (Value::String("a".into()), Value::Float64(1.0)),
                (Value::String("b".into()), Value::Null),
            ]),
            json!({"type": "map", "values": ["null", "double"]}),
        ),
        (
            with(SchemaType::String, |s| {
                s.name = Some("ex.Named".into());
                s.version = Some(3);
                s.doc = Some("a doc".into());
                s.parameters.insert("k".into(), "v".into());
            }),
            Value::String("x".into()),
            json!({"type": "string", "connect.doc": "a doc", "connect.version": 3, "connect.parameters": {"k": "v"}, "connect.name": "ex.Named"}),
        ),
    ];
    for (schema, value, expected) in cases {
        let (avro, back, read) = round_trip(&schema, &value);
        assert_eq!(avro, expected, "{schema:?}");
        assert_eq!(*back, *schema, "{avro}");
        assert_eq!(read, value, "{avro}");
    }
}

#[test]
fn logical_types_keep_their_names_and_avro_logical_types() {
    let decimal = logical::decimal(2).build();
    let (avro, back, read) = round_trip(&decimal, &Value::Bytes(vec![0x04, 0xd2]));
    assert_eq!(avro["logicalType"], "decimal");
    assert_eq!(avro["scale"], 2);
    assert_eq!(avro["connect.name"], logical::DECIMAL_NAME);
    assert_eq!(back.logical(), Some(logical::LogicalKind::Decimal(2)));
    assert_eq!(read, Value::Bytes(vec![0x04, 0xd2]));
    for (schema, value, avro_type) in [
        (logical::date().build(), Value::Int32(19_000), "date"),
        (
            logical::time().build(),
            Value::Int32(3_600_000),
            "time-millis",
        ),
        (
            logical::timestamp().build(),
            Value::Int64(1_700_000_000_000),
            "timestamp-millis",
        ),
    ] {
        let (avro, back, read) = round_trip(&schema, &value);
        assert_eq!(avro["logicalType"], avro_type);
        assert_eq!(back.logical(), schema.logical(), "{avro}");
        assert_eq!(read, value);
    }
}

#[test]
fn structs_become_records_with_optional_fields_defaulting_to_null() {
    let inner = with(SchemaType::Struct, |s| {
        s.fields = vec![Field {
            name: "n".into(),
            index: 0,
            schema: Schema::int32(),
        }];
    });
    let outer = with(SchemaType::Struct, |s| {
        s.name = Some("ex.Outer".into());
        s.fields = vec![
            Field {
                name: "id".into(),
                index: 0,
                schema: Schema::int64(),
            },
            Field {
                name: "note".into(),
                index: 1,
                schema: Schema::optional_string(),
            },
            Field {
                name: "inner".into(),
                index: 2,
                schema: inner.clone(),
            },
            Field {
                name: "by_id".into(),
                index: 3,
                schema: with(SchemaType::Map, |m| {
                    m.key_schema = Some(Schema::int32());
                    m.value_schema = Some(Schema::string());
                }),
            },
        ];
    });
    let mut inner_value = Struct::new(inner);
    inner_value.put("n", Value::Int32(9)).unwrap();
    let mut value = Struct::new(outer.clone());
    value.put("id", Value::Int64(1)).unwrap();
    value.put("inner", Value::Struct(inner_value)).unwrap();
    value
        .put(
            "by_id",
            Value::Map(vec![(Value::Int32(1), Value::String("one".into()))]),
        )
        .unwrap();
    let (avro, back, read) = round_trip(&outer, &Value::Struct(value.clone()));
    assert_eq!(avro["name"], "Outer");
    assert_eq!(avro["namespace"], "ex");
    assert_eq!(
        avro["fields"][1],
        json!({"name": "note", "type": ["null", "string"], "default": null})
    );
    assert_eq!(avro["fields"][2]["type"]["name"], "ConnectDefault");
    assert_eq!(
        avro["fields"][2]["type"]["namespace"],
        "io.confluent.connect.avro"
    );
    assert_eq!(avro["fields"][3]["type"]["items"]["name"], "MapEntry");
    assert_eq!(*back, *outer);
    let Value::Struct(read) = read else {
        panic!("{read:?}")
    };
    assert_eq!(read.values, value.values);
}

#[test]
fn hostile_bytes_fail_without_panicking_or_reserving_memory() {
    let schema = AvroSchema::parse(r#"{"type":"array","items":"long"}"#).unwrap();
    let connect = to_connect(&schema, &json!({"type":"array","items":"long"})).unwrap();
    for bytes in [
        &[][..],
        &[0x80][..],
        &[0xfe, 0xff, 0xff, 0xff, 0x0f][..],
        &[0x02][..],
    ] {
        let mut reader = Reader::new(bytes, &schema);
        assert!(reader.value(&schema.root, &connect).is_err(), "{bytes:?}");
    }
}

#[test]
fn the_converter_refuses_what_it_does_not_do_yet_naming_the_key() {
    let config = |extra: &[(&str, &str)]| {
        let mut c: crate::connectors::Props = [("schema.registry.url", "http://127.0.0.1:8081")]
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        c.insert("converter.type".into(), "value".into());
        super::AvroConverter::from_config(&c)
    };
    assert!(config(&[]).is_ok());
    assert!(config(&[(
        "value.subject.name.strategy",
        "io.confluent.kafka.serializers.subject.RecordNameStrategy"
    )])
    .is_ok());
    assert!(config(&[("enhanced.avro.schema.support", "true")]).is_ok());
    for (key, value) in [
        ("generalized.sum.type.support", "true"),
        ("discard.type.doc.default", "true"),
        ("ignore.default.for.nullables", "true"),
        ("allow.optional.map.keys", "true"),
        ("schema.registry.ssl.truststore.type", "JKS"),
        ("schemas.cache.config", "0"),
        ("value.subject.name.strategy", "com.example.Mine"),
        ("basic.auth.credentials.source", "SASL_INHERIT"),
    ] {
        let e = config(&[(key, value)]).unwrap_err();
        assert!(e.0.contains(key), "{key}: {e}");
    }
}

#[test]
fn connect_defaults_become_avro_field_defaults_and_come_back() {
    let defaulted = |t: SchemaType, optional: bool, d: Value| {
        with(t, |s| {
            s.optional = optional;
            s.default_value = Some(d);
        })
    };
    let fields = [
        (
            "count",
            defaulted(SchemaType::Int32, false, Value::Int32(5)),
        ),
        (
            "unit",
            defaulted(SchemaType::String, true, Value::String("C".into())),
        ),
        (
            "raw",
            defaulted(SchemaType::Bytes, false, Value::Bytes(vec![0, 255])),
        ),
        ("note", Schema::optional_int64()),
    ];
    let record = with(SchemaType::Struct, |s| {
        s.name = Some("ex.Reading".into());
        s.fields = fields
            .iter()
            .enumerate()
            .map(|(index, (name, schema))| Field {
                name: (*name).into(),
                index,
                schema: schema.clone(),
            })
            .collect();
    });
    let mut value = Struct::new(record.clone());
    value.values = vec![
        Value::Int32(1),
        Value::Null,
        Value::Bytes(vec![7]),
        Value::Null,
    ];
    let (avro, back, read) = round_trip(&record, &Value::Struct(value));
    let f = &avro["fields"];
    // Each default also as the type's `connect.default`, as Confluent's AvroData writes it.
    assert_eq!(
        f[0],
        json!({"name": "count", "type": {"type": "int", "connect.default": 5}, "default": 5})
    );
    assert_eq!(
        f[1],
        json!({"name": "unit", "type": [{"type": "string", "connect.default": "C"}, "null"], "default": "C"}),
        "a default other than null puts its type first"
    );
    assert_eq!(
        f[2],
        json!({"name": "raw", "type": {"type": "bytes", "connect.default": "\u{0}\u{ff}"}, "default": "\u{0}\u{ff}"})
    );
    assert_eq!(
        f[3],
        json!({"name": "note", "type": ["null", "long"], "default": null})
    );
    assert_eq!(*back, *record, "{avro}");
    let Value::Struct(read) = read else {
        panic!("a struct")
    };
    assert_eq!(
        read.values[1],
        Value::String("C".into()),
        "null written as the default"
    );
}

#[test]
fn general_unions_are_read_as_union_structs_and_written_back() {
    let text = r#"{"type":"record","name":"Outer","namespace":"ex","fields":[{"name":"v","type":["null","int","string",{"type":"record","name":"Inner","fields":[{"name":"n","type":"long"}]}],"default":null}]}"#;
    let parsed = AvroSchema::parse(text).unwrap();
    let json: Json = serde_json::from_str(text).unwrap();
    let connect = to_connect(&parsed, &json).unwrap();
    let union = &connect.fields[0].schema;
    assert_eq!(union.name.as_deref(), Some(super::connect::UNION_NAME));
    assert!(union.optional);
    let names: Vec<&str> = union.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["int", "string", "Inner"]);
    // Branch 2 (string) written by Avro: index 2 zig-zag (4), then "hi".
    let bytes = [4, 4, b'h', b'i'];
    let mut reader = Reader::new(&bytes, &parsed);
    let read = reader.value(&parsed.root, &connect).unwrap();
    assert!(reader.done());
    let Value::Struct(outer) = &read else {
        panic!("a struct")
    };
    let Value::Struct(u) = &outer.values[0] else {
        panic!("a union struct: {read:?}")
    };
    assert_eq!(
        u.values,
        vec![Value::Null, Value::String("hi".into()), Value::Null]
    );
    // Written back: the same bytes, and the same Avro union.
    let mut out = Vec::new();
    encode(&connect, &read, &mut out).unwrap();
    assert_eq!(out, bytes);
    let again = AvroSchema::parse(&to_avro(&connect).to_string()).unwrap();
    assert!(super::compat::same_encoding(&again, &parsed), "{again:?}");
    // The null branch, and a required union with nothing set refused.
    let mut out = Vec::new();
    let mut empty = Struct::new(connect.clone());
    empty.values[0] = Value::Null;
    encode(&connect, &Value::Struct(empty), &mut out).unwrap();
    assert_eq!(out, [0]);
}

#[test]
fn connect_meta_data_and_scrub_invalid_names_shape_the_avro_schema() {
    use super::connect::{scrub_name, to_avro_with, AvroOptions};
    let record = with(SchemaType::Struct, |s| {
        s.name = Some("my-org.1st.Reading".into());
        s.doc = Some("a doc".into());
        s.fields = vec![Field {
            name: "temp-c".into(),
            index: 0,
            schema: with(SchemaType::Int8, |f| f.version = Some(2)),
        }];
    });
    let plain = to_avro_with(&record, AvroOptions::default());
    assert_eq!(plain["connect.doc"], "a doc");
    assert_eq!(plain["fields"][0]["name"], "temp-c");
    let bare = to_avro_with(
        &record,
        AvroOptions {
            meta: false,
            scrub: true,
            ..AvroOptions::default()
        },
    );
    assert_eq!(
        bare,
        json!({"type": "record", "name": "Reading", "namespace": "my_org.x1st",
               "fields": [{"name": "temp_c", "type": {"type": "int", "connect.type": "int8"}}]})
    );
    AvroSchema::parse(&bare.to_string()).expect("a valid Avro schema");
    assert_eq!(scrub_name("9lives"), "x9lives");
    assert_eq!(scrub_name("_ok"), "_ok");
}

#[test]
fn avro_field_defaults_and_docs_come_back_as_they_were_written() {
    use super::connect::{to_avro_with, AvroOptions};
    use super::defaults::FIELD_DEFAULT_FLAG;
    let text = r#"{"type":"record","name":"Reading","namespace":"ex","doc":"One reading","fields":[{"name":"count","type":"int","doc":"How many","default":5},{"name":"unit","type":["null","string"],"default":null},{"name":"at","type":{"type":"long","connect.default":7}}]}"#;
    let parsed = AvroSchema::parse(text).unwrap();
    let json: Json = serde_json::from_str(text).unwrap();
    let connect = to_connect(&parsed, &json).unwrap();
    let params: Vec<(&str, &str)> = connect
        .parameters
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        params,
        [
            ("io.confluent.connect.avro.record.doc", "One reading"),
            ("io.confluent.connect.avro.field.doc.count", "How many"),
        ]
    );
    let count = &connect.fields[0].schema;
    assert_eq!(count.default_value, Some(Value::Int32(5)));
    assert_eq!(
        count.parameters.get(FIELD_DEFAULT_FLAG).map(String::as_str),
        Some("true"),
        "an Avro field default, flagged as Confluent's AvroData flags it"
    );
    assert!(connect.fields[1].schema.parameters.is_empty());
    let at = &connect.fields[2].schema;
    assert_eq!(
        at.default_value,
        Some(Value::Int64(7)),
        "from connect.default"
    );
    assert!(at.parameters.is_empty());
    // Written back: the docs and field default where they were, no connect.default for the flagged
    // field, and the flag not in connect.parameters.
    let avro = to_avro_with(&connect, AvroOptions::default());
    assert_eq!(avro["doc"], "One reading");
    assert_eq!(
        avro["fields"][0],
        json!({"name": "count", "type": "int", "doc": "How many", "default": 5})
    );
    assert_eq!(
        avro["fields"][2],
        json!({"name": "at", "type": {"type": "long", "connect.default": 7}, "default": 7})
    );
    // Without the Connect metadata neither docs nor the flag are read.
    let bare = AvroOptions {
        meta: false,
        ..AvroOptions::default()
    };
    let connect = super::connect::to_connect_with(&parsed, &json, bare).unwrap();
    assert!(connect.parameters.is_empty());
    assert!(connect.fields[0].schema.parameters.is_empty());
}

#[test]
fn avro_properties_are_kept_as_parameters_and_written_back() {
    let text = r#"{"type":"record","name":"R","fields":[{"name":"s","type":{"type":"string","avro.java.string":"String","other":1}}]}"#;
    let parsed = AvroSchema::parse(text).unwrap();
    let json: Json = serde_json::from_str(text).unwrap();
    let connect = to_connect(&parsed, &json).unwrap();
    let s = &connect.fields[0].schema;
    assert_eq!(
        s.parameters.get("avro.java.string").map(String::as_str),
        Some("String")
    );
    assert_eq!(s.parameters.len(), 1, "{:?}", s.parameters);
    let avro = to_avro(&connect);
    assert_eq!(
        avro["fields"][0]["type"],
        json!({"type": "string", "connect.parameters": {"avro.java.string": "String"}, "avro.java.string": "String"})
    );
    // Read again: the same Connect schema.
    let again = AvroSchema::parse(&avro.to_string()).unwrap();
    assert_eq!(*to_connect(&again, &avro).unwrap(), *connect);
}
