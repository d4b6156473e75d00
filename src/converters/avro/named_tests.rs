//! Enums, fixed types and nested named types through Connect and back, with and without
//! `enhanced.avro.schema.support` and `connect.meta.data`.

use serde_json::{json, Value as Json};

use super::binary::{encode, encode_with, Reader};
use super::compat::same_encoding;
use super::connect::{to_avro_with, to_connect_with, AvroOptions};
use super::named::{ENUM, FIXED_SIZE};
use super::schema::AvroSchema;
use crate::data::{SchemaRef, SchemaType, Value};

/// A payment: an enum with a doc and a default, a fixed type, a nested record using the enum again by
/// name, each named type in its own namespace as the converter writes them.
const PAYMENT: &str = r#"{"type":"record","name":"Payment","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"status","type":{"type":"enum","name":"Status","namespace":"shop","doc":"Where it is","symbols":["NEW","PAID","SHIPPED"],"default":"NEW"}},{"name":"digest","type":{"type":"fixed","name":"Md5","namespace":"shop","size":4}},{"name":"last","type":{"type":"record","name":"Step","namespace":"shop","fields":[{"name":"status","type":"shop.Status"},{"name":"tiny","type":{"type":"int","connect.type":"int8"}}]}}]}"#;

const ENHANCED: AvroOptions = AvroOptions {
    meta: true,
    scrub: false,
    enhanced: true,
    flatten: true,
};

fn parse(text: &str) -> (AvroSchema, Json) {
    let parsed = AvroSchema::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    (parsed, serde_json::from_str(text).unwrap())
}

/// id 7, status PAID (1), digest 0xdeadbeef, last.status SHIPPED (2), last.tiny -3.
fn payment_bytes() -> Vec<u8> {
    vec![14, 2, 0xde, 0xad, 0xbe, 0xef, 4, 5]
}

fn read(parsed: &AvroSchema, connect: &SchemaRef, bytes: &[u8]) -> Value {
    let mut reader = Reader::new(bytes, parsed);
    let value = reader.value(&parsed.root, connect).unwrap();
    assert!(reader.done(), "bytes left");
    value
}

#[test]
fn an_enum_reads_as_a_named_string_with_its_symbols_and_a_fixed_as_sized_bytes() {
    let (parsed, json) = parse(PAYMENT);
    let connect = to_connect_with(&parsed, &json, AvroOptions::default()).unwrap();
    let status = &connect.field("status").unwrap().schema;
    assert_eq!(status.schema_type, SchemaType::String);
    assert_eq!(status.name.as_deref(), Some("shop.Status"));
    let params: Vec<(&str, &str)> = status
        .parameters
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        params,
        [
            ("io.confluent.connect.avro.enum.doc.Status", "Where it is"),
            ("io.confluent.connect.avro.enum.default.Status", "NEW"),
            (ENUM, "shop.Status"),
            ("io.confluent.connect.avro.Enum.NEW", "NEW"),
            ("io.confluent.connect.avro.Enum.PAID", "PAID"),
            ("io.confluent.connect.avro.Enum.SHIPPED", "SHIPPED"),
        ]
    );
    let digest = &connect.field("digest").unwrap().schema;
    assert_eq!(digest.schema_type, SchemaType::Bytes);
    assert_eq!(digest.name.as_deref(), Some("shop.Md5"));
    assert_eq!(
        digest.parameters.get(FIXED_SIZE).map(String::as_str),
        Some("4")
    );
    // The enum used again by name, and an int8 inside a record, keep their Connect form.
    let last = &connect.field("last").unwrap().schema;
    assert_eq!(last.field("status").unwrap().schema, *status);
    assert_eq!(
        last.field("tiny").unwrap().schema.schema_type,
        SchemaType::Int8
    );
    let Value::Struct(value) = read(&parsed, &connect, &payment_bytes()) else {
        panic!("a struct")
    };
    assert_eq!(
        value.to_string(),
        "Struct{id=7,status=PAID,digest=3q2+7w==,last=Struct{status=SHIPPED,tiny=-3}}"
    );
    // Without the Connect metadata the doc and default are not kept.
    let bare = AvroOptions {
        meta: false,
        ..AvroOptions::default()
    };
    let connect = to_connect_with(&parsed, &json, bare).unwrap();
    let status = &connect.field("status").unwrap().schema;
    assert_eq!(status.parameters.len(), 4, "{:?}", status.parameters);
}

#[test]
fn without_enhanced_support_an_enum_is_written_back_as_a_string_and_a_fixed_as_fixed() {
    let (parsed, json) = parse(PAYMENT);
    let connect = to_connect_with(&parsed, &json, AvroOptions::default()).unwrap();
    let avro = to_avro_with(&connect, AvroOptions::default());
    let status = &avro["fields"][1]["type"];
    assert_eq!(status["type"], "string", "{avro}");
    assert_eq!(status["connect.name"], "shop.Status");
    assert_eq!(status["connect.parameters"][ENUM], "shop.Status");
    assert_eq!(
        avro["fields"][2]["type"],
        json!({"type": "fixed", "name": "Md5", "namespace": "shop", "size": 4,
               "connect.parameters": {"connect.fixed.size": "4"}, "connect.name": "shop.Md5"})
    );
    // The written schema reads back as the same Connect schema, and writes the same text again.
    let (again, again_json) = parse(&avro.to_string());
    let back = to_connect_with(&again, &again_json, AvroOptions::default()).unwrap();
    assert_eq!(*back, *connect);
    assert_eq!(to_avro_with(&back, AvroOptions::default()), avro);
    // The value: the enum's symbols as strings, the fixed as its 4 bytes.
    let value = read(&parsed, &connect, &payment_bytes());
    let mut out = Vec::new();
    encode(&connect, &value, &mut out).unwrap();
    assert_eq!(
        out,
        [
            14, 8, b'P', b'A', b'I', b'D', 0xde, 0xad, 0xbe, 0xef, 14, b'S', b'H', b'I', b'P',
            b'P', b'E', b'D', 5
        ]
    );
    assert_eq!(read(&again, &back, &out), value);
}

#[test]
fn with_enhanced_support_enums_and_fixed_types_come_back_as_they_were() {
    // Without the Connect metadata, a schema whose enum has no doc nor default comes back as it was
    // (so it keeps its registry ID); the doc and default are Connect metadata.
    let plain = PAYMENT
        .replace(r#""doc":"Where it is","#, "")
        .replace(r#","default":"NEW""#, "");
    let (plain, plain_json) = parse(&plain);
    let bare = AvroOptions {
        meta: false,
        ..ENHANCED
    };
    let connect = to_connect_with(&plain, &plain_json, bare).unwrap();
    assert_eq!(
        AvroSchema::parse(&to_avro_with(&connect, bare).to_string())
            .unwrap()
            .canonical(),
        plain.canonical()
    );
    let (parsed, json) = parse(PAYMENT);
    // With it, the enum keeps its doc and default, and a second round trip gives the same schema.
    let connect = to_connect_with(&parsed, &json, ENHANCED).unwrap();
    let avro = to_avro_with(&connect, ENHANCED);
    let status = &avro["fields"][1]["type"];
    assert_eq!(status["type"], "enum", "{avro}");
    assert_eq!(status["name"], "Status");
    assert_eq!(status["namespace"], "shop");
    assert_eq!(status["doc"], "Where it is");
    assert_eq!(status["symbols"], json!(["NEW", "PAID", "SHIPPED"]));
    assert_eq!(status["default"], "NEW");
    assert_eq!(
        avro["fields"][3]["type"]["fields"][0]["type"],
        "shop.Status"
    );
    let (again, again_json) = parse(&avro.to_string());
    assert!(same_encoding(&again, &parsed));
    let back = to_connect_with(&again, &again_json, ENHANCED).unwrap();
    assert_eq!(to_avro_with(&back, ENHANCED), avro);
    // The value is written as the enum's index: the very bytes read.
    let value = read(&parsed, &connect, &payment_bytes());
    let mut out = Vec::new();
    encode_with(&connect, &value, true, &mut out).unwrap();
    assert_eq!(out, payment_bytes());
}

#[test]
fn a_symbol_the_enum_lacks_and_bytes_of_another_size_are_refused() {
    let (parsed, json) = parse(PAYMENT);
    let connect = to_connect_with(&parsed, &json, ENHANCED).unwrap();
    let Value::Struct(mut value) = read(&parsed, &connect, &payment_bytes()) else {
        panic!("a struct")
    };
    value.values[1] = Value::String("LOST".into());
    let e = encode_with(
        &connect,
        &Value::Struct(value.clone()),
        true,
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(
        e.0.contains("LOST is not a symbol of the Avro enum shop.Status"),
        "{e}"
    );
    value.values[1] = Value::String("NEW".into());
    value.values[2] = Value::Bytes(vec![1, 2, 3]);
    let e = encode_with(&connect, &Value::Struct(value), true, &mut Vec::new()).unwrap_err();
    assert!(e.0.contains("fixed type shop.Md5 of 4 bytes"), "{e}");
}

#[test]
fn a_fixed_decimal_stays_a_decimal_and_is_written_padded() {
    let text = r#"{"type":"fixed","name":"Amount","namespace":"shop","size":3,"logicalType":"decimal","precision":6,"scale":2}"#;
    let (parsed, json) = parse(text);
    let connect = to_connect_with(&parsed, &json, AvroOptions::default()).unwrap();
    assert_eq!(
        connect.logical(),
        Some(crate::data::logical::LogicalKind::Decimal(2))
    );
    assert_eq!(
        connect.parameters.get(FIXED_SIZE).map(String::as_str),
        Some("3")
    );
    let avro = to_avro_with(&connect, AvroOptions::default());
    assert_eq!(avro["type"], "fixed", "{avro}");
    assert_eq!(avro["size"], 3);
    assert_eq!(avro["logicalType"], "decimal");
    let mut out = Vec::new();
    encode(&connect, &Value::Bytes(vec![0xff, 0x38]), &mut out).unwrap();
    assert_eq!(out, [0xff, 0xff, 0x38], "-200 sign-extended to 3 bytes");
}

#[test]
fn enhanced_support_names_a_unions_named_branches_by_full_name() {
    let text = r#"{"type":"record","name":"Box","namespace":"shop","fields":[{"name":"v","type":["null","string",{"type":"record","name":"Inner","namespace":"other","fields":[{"name":"n","type":"int"}]}]}]}"#;
    let (parsed, json) = parse(text);
    let names = |options| {
        let connect = to_connect_with(&parsed, &json, options).unwrap();
        let union = &connect.field("v").unwrap().schema;
        let names: Vec<String> = union.fields.iter().map(|f| f.name.clone()).collect();
        names
    };
    assert_eq!(names(AvroOptions::default()), ["string", "Inner"]);
    assert_eq!(names(ENHANCED), ["string", "other.Inner"]);
}

#[test]
fn a_latest_schema_with_enums_is_written_as_its_connect_form_with_enums() {
    // What `use.latest.version` checks: the latest schema's Connect form, written with enums, encodes
    // as the latest schema itself, whatever `enhanced.avro.schema.support` says.
    let (parsed, json) = parse(PAYMENT);
    let connect = to_connect_with(&parsed, &json, AvroOptions::default()).unwrap();
    let plain =
        AvroSchema::parse(&to_avro_with(&connect, AvroOptions::default()).to_string()).unwrap();
    assert!(!same_encoding(&plain, &parsed), "a string is not the enum");
    let with_enums = AvroOptions {
        enhanced: true,
        ..AvroOptions::default()
    };
    let written = AvroSchema::parse(&to_avro_with(&connect, with_enums).to_string()).unwrap();
    assert!(same_encoding(&written, &parsed));
}

#[test]
fn a_string_schema_cannot_read_what_the_enum_wrote() {
    // Why a string written without enhanced support is refused where the subject has the enum.
    let (parsed, json) = parse(PAYMENT);
    let connect = to_connect_with(&parsed, &json, AvroOptions::default()).unwrap();
    let strings =
        AvroSchema::parse(&to_avro_with(&connect, AvroOptions::default()).to_string()).unwrap();
    assert!(!super::compat::can_read(&strings, &parsed).is_empty());
    let enums = AvroSchema::parse(&to_avro_with(&connect, ENHANCED).to_string()).unwrap();
    assert!(super::compat::can_read(&enums, &parsed).is_empty());
}

#[test]
fn a_union_of_one_branch_reads_as_that_branch_unless_flattening_is_off() {
    let text = r#"{"type":"record","name":"One","fields":[{"name":"v","type":["long"]}]}"#;
    let (parsed, json) = parse(text);
    let flat = to_connect_with(&parsed, &json, AvroOptions::default()).unwrap();
    assert_eq!(flat.fields[0].schema.schema_type, SchemaType::Int64);
    assert!(!flat.fields[0].schema.optional);
    let value = read(&parsed, &flat, &[0, 6]);
    assert_eq!(value.to_string(), "Struct{v=3}");
    let kept = AvroOptions {
        flatten: false,
        ..AvroOptions::default()
    };
    let union = to_connect_with(&parsed, &json, kept).unwrap();
    assert_eq!(
        union.fields[0].schema.name.as_deref(),
        Some(super::connect::UNION_NAME)
    );
}
