//! JsonConverter against the bytes Kafka's converter writes and reads.

use super::*;
use crate::converters::{Converter, HeaderConverter};
use crate::data::logical;
use crate::data::{Field, SchemaBuilder, Struct};
use std::sync::Arc;

fn conv(pairs: &[(&str, &str)]) -> JsonConverter {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    JsonConverter::from_config(&map).unwrap()
}

fn with_schemas() -> JsonConverter {
    conv(&[])
}

fn without_schemas() -> JsonConverter {
    conv(&[("schemas.enable", "false")])
}

fn write(c: &JsonConverter, schema: Option<&Schema>, value: &Value) -> String {
    String::from_utf8(c.from_connect("t", schema, value).unwrap().unwrap()).unwrap()
}

fn read(c: &JsonConverter, json: &str) -> SchemaAndValue {
    c.to_connect("t", Some(json.as_bytes())).unwrap()
}

/// Found by the `json_converter` fuzz target: a number beyond the double range reads as infinity and is
/// written back as the string "Infinity", as Jackson does; the round trip changes it to a string.
#[test]
fn numbers_beyond_double_range_read_as_infinity_and_write_as_strings() {
    let c = without_schemas();
    let huge = format!("{{\"a\":[1,{}9e999]}}", "9".repeat(400));
    let v = read(&c, &huge).value;
    let Value::Map(entries) = &v else {
        panic!("{v:?}")
    };
    assert_eq!(
        entries[0].1,
        Value::Array(vec![Value::Int64(1), Value::Float64(f64::INFINITY)])
    );
    assert_eq!(write(&c, None, &v), r#"{"a":[1,"Infinity"]}"#);
    assert_eq!(
        read(&c, r#"{"a":[1,"Infinity"]}"#).value,
        Value::Map(vec![(
            Value::from("a"),
            Value::Array(vec![Value::Int64(1), Value::String("Infinity".into())])
        )])
    );
}

/// The enveloped JSON of a payload with its schema.
fn envelope(schema: &str, payload: &str) -> String {
    format!(r#"{{"schema":{schema},"payload":{payload}}}"#)
}

/// Writes with and without envelope, checks both texts (`plain`, and `plain` enveloped with
/// `schema_json`), and reads the enveloped one back.
fn check(schema: SchemaRef, value: Value, schema_json: &str, plain: &str) {
    let enveloped = envelope(schema_json, plain);
    let c = with_schemas();
    assert_eq!(write(&c, Some(&schema), &value), enveloped);
    let back = read(&c, &enveloped);
    assert_eq!(
        back.schema.as_deref(),
        Some(&*schema),
        "schema read back from {enveloped}"
    );
    assert_eq!(back.value, value, "value read back from {enveloped}");
    let c = without_schemas();
    assert_eq!(write(&c, Some(&schema), &value), plain);
}

#[test]
fn primitives_with_and_without_schemas() {
    for (schema, value, type_name, plain) in [
        (Schema::int8(), Value::Int8(12), "int8", "12"),
        (Schema::int16(), Value::Int16(-12), "int16", "-12"),
        (Schema::int32(), Value::Int32(12), "int32", "12"),
        (
            Schema::int64(),
            Value::Int64(4398046511104),
            "int64",
            "4398046511104",
        ),
        (Schema::float32(), Value::Float32(12.34), "float", "12.34"),
        (Schema::float64(), Value::Float64(1e10), "double", "1.0E10"),
        (Schema::boolean(), Value::Boolean(true), "boolean", "true"),
        (
            Schema::string(),
            Value::from("hello"),
            "string",
            r#""hello""#,
        ),
        (
            Schema::bytes(),
            Value::Bytes(b"test-string".to_vec()),
            "bytes",
            r#""dGVzdC1zdHJpbmc=""#,
        ),
    ] {
        let schema_json = format!(r#"{{"type":"{type_name}","optional":false}}"#);
        check(schema, value, &schema_json, plain);
    }
}

#[test]
fn optional_and_metadata() {
    check(
        Schema::optional_string(),
        Value::Null,
        r#"{"type":"string","optional":true}"#,
        "null",
    );
    let s = SchemaBuilder::int32()
        .optional()
        .name("n")
        .version(2)
        .doc("d")
        .parameter("p", "v")
        .default_value(Value::Int32(5))
        .build();
    check(
        s,
        Value::Int32(7),
        r#"{"type":"int32","optional":true,"name":"n","version":2,"doc":"d","parameters":{"p":"v"},"default":5}"#,
        "7",
    );
}

/// Writes null with `schema` (described by `schema_json`), expecting `payload` in the envelope,
/// and reads an enveloped null back as `back`.
fn check_null(c: &JsonConverter, schema: &Schema, schema_json: &str, payload: &str, back: Value) {
    let written = write(c, Some(schema), &Value::Null);
    assert_eq!(written, envelope(schema_json, payload));
    assert_eq!(read(c, &envelope(schema_json, "null")).value, back);
}

#[test]
fn null_uses_default_unless_disabled() {
    let s = SchemaBuilder::int32()
        .default_value(Value::Int32(5))
        .build();
    let c = with_schemas();
    let required = r#"{"type":"int32","optional":false,"default":5}"#;
    check_null(&c, &s, required, "5", Value::Int32(5));
    let c = conv(&[("replace.null.with.default", "false")]);
    let opt = SchemaBuilder::int32()
        .optional()
        .default_value(Value::Int32(5))
        .build();
    let optional = r#"{"type":"int32","optional":true,"default":5}"#;
    check_null(&c, &opt, optional, "null", Value::Null);
    assert_eq!(
        c.from_connect("t", Some(&s), &Value::Null).unwrap_err().0,
        "Conversion error: null value for field that is required and has no default value"
    );
}

fn rec() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("rec")
        .field("a", Schema::int32())
        .build()
}

#[test]
fn structs() {
    let st = Struct::new(rec()).with("a", 1).unwrap();
    check(
        rec(),
        Value::Struct(st),
        r#"{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false,"name":"rec"}"#,
        r#"{"a":1}"#,
    );
    let nested = SchemaBuilder::struct_()
        .field("first", Schema::string())
        .field(
            "inner",
            SchemaBuilder::struct_()
                .field("x", Schema::optional_float64())
                .optional()
                .build(),
        )
        .field("tags", SchemaBuilder::array(Schema::string()).build())
        .build();
    let inner_schema = nested.field("inner").unwrap().schema.clone();
    let inner = Struct::new(inner_schema).with("x", 2.5).unwrap();
    let v = Struct::new(nested.clone())
        .with("first", "a\"b\n")
        .unwrap()
        .with("inner", inner)
        .unwrap()
        .with("tags", vec![Value::from("t1")])
        .unwrap();
    check(
        nested,
        Value::Struct(v),
        r#"{"type":"struct","fields":[{"type":"string","optional":false,"field":"first"},{"type":"struct","fields":[{"type":"double","optional":true,"field":"x"}],"optional":true,"field":"inner"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"}],"optional":false}"#,
        r#"{"first":"a\"b\n","inner":{"x":2.5},"tags":["t1"]}"#,
    );
}

#[test]
fn struct_errors() {
    let c = with_schemas();
    let other = SchemaBuilder::struct_()
        .name("other")
        .field("a", Schema::int32())
        .build();
    let st = Struct::new(other).with("a", 1).unwrap();
    assert_eq!(
        c.from_connect("t", Some(&rec()), &Value::Struct(st))
            .unwrap_err()
            .0,
        "Mismatching schema."
    );
    let e = c
        .to_connect(
            "t",
            Some(br#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false},"payload":{}}"#),
        )
        .unwrap_err();
    assert_eq!(e.0, "Invalid null value for required INT32 field");
    let e = c
        .to_connect(
            "t",
            Some(br#"{"schema":{"type":"struct","fields":[],"optional":false},"payload":[1]}"#),
        )
        .unwrap_err();
    assert_eq!(
        e.0,
        "Structs should be encoded as JSON objects, but found ARRAY"
    );
    let e = c
        .from_connect("t", Some(&Schema::int32()), &Value::from("x"))
        .unwrap_err();
    assert_eq!(e.0, "Invalid type for INT32: class java.lang.String");
}

#[test]
fn arrays_and_maps() {
    check(
        SchemaBuilder::array(Schema::int32()).build(),
        Value::Array(vec![Value::Int32(1), Value::Int32(2), Value::Int32(3)]),
        r#"{"type":"array","items":{"type":"int32","optional":false},"optional":false}"#,
        "[1,2,3]",
    );
    check(
        SchemaBuilder::map(Schema::string(), Schema::int32()).build(),
        Value::Map(vec![
            (Value::from("key1"), Value::Int32(12)),
            (Value::from("key2"), Value::Int32(15)),
        ]),
        r#"{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false}"#,
        r#"{"key1":12,"key2":15}"#,
    );
    check(
        SchemaBuilder::map(Schema::int32(), Schema::int32()).build(),
        Value::Map(vec![
            (Value::Int32(1), Value::Int32(12)),
            (Value::Int32(2), Value::Int32(15)),
        ]),
        r#"{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},"optional":false}"#,
        "[[1,12],[2,15]]",
    );
    let c = with_schemas();
    let e = c
        .to_connect(
            "t",
            Some(br#"{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":[[1]]}"#),
        )
        .unwrap_err();
    assert_eq!(
        e.0,
        "Found invalid map entry, expected length 2 but found :1"
    );
}

#[test]
fn decimals_base64_and_numeric() {
    let schema = logical::decimal(2).build();
    let value = Value::Bytes(logical::decimal_from_str("1.56", 2).unwrap());
    check(
        schema.clone(),
        value.clone(),
        r#"{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}}"#,
        r#""AJw=""#,
    );
    let numeric = conv(&[("decimal.format", "numeric")]);
    let text = write(&numeric, Some(&schema), &value);
    assert_eq!(
        text,
        r#"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":1.56}"#
    );
    assert_eq!(read(&numeric, &text).value, value);
    // either form reads back under either setting
    assert_eq!(read(&with_schemas(), &text).value, value);
    let plain = conv(&[("decimal.format", "NUMERIC"), ("schemas.enable", "false")]);
    let negative = Value::Bytes(logical::decimal_from_str("-0.05", 2).unwrap());
    assert_eq!(write(&plain, Some(&schema), &negative), "-0.05");
    assert_eq!(
        JsonConverter::from_config(&[("decimal.format".to_string(), "HEX".to_string())].into())
            .unwrap_err()
            .0,
        "Invalid value HEX for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC"
    );
}

#[test]
fn dates_times_timestamps() {
    check(
        logical::date().build(),
        Value::Int32(10000),
        r#"{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1}"#,
        "10000",
    );
    check(
        logical::time().build(),
        Value::Int32(14_400_000),
        r#"{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1}"#,
        "14400000",
    );
    check(
        logical::timestamp().build(),
        Value::Int64(4_000_000_000),
        r#"{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1}"#,
        "4000000000",
    );
    let c = with_schemas();
    let e = c
        .to_connect(
            "t",
            Some(br#"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":"x"}"#),
        )
        .unwrap_err();
    assert_eq!(
        e.0,
        "Invalid type for Date, underlying representation should be integer but was STRING"
    );
}

#[test]
fn envelope_is_enforced() {
    let c = with_schemas();
    for bad in [
        r#"{"a":1}"#,
        r#"{"schema":null}"#,
        r#"{"schema":null,"payload":1,"x":2}"#,
        "[1]",
        "1",
        "",
    ] {
        assert_eq!(
            c.to_connect("t", Some(bad.as_bytes())).unwrap_err().0,
            ENVELOPE_ERROR,
            "{bad}"
        );
    }
    assert_eq!(
        ENVELOPE_ERROR,
        "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."
    );
    let sv = read(&c, r#"{"schema":null,"payload":{"a":1}}"#);
    assert_eq!(sv.schema, None);
    assert_eq!(
        sv.value,
        Value::Map(vec![(Value::from("a"), Value::Int64(1))])
    );
}

#[test]
fn schemaless_number_inference() {
    let c = without_schemas();
    let sv = read(
        &c,
        r#"{"i":1,"big":12345678901,"f":1.5,"e":1e3,"z":0.0,"s":"x","b":true,"n":null,"l":[1,"a"]}"#,
    );
    assert_eq!(sv.schema, None);
    assert_eq!(
        sv.value,
        Value::Map(vec![
            (Value::from("i"), Value::Int64(1)),
            (Value::from("big"), Value::Int64(12_345_678_901)),
            (Value::from("f"), Value::Float64(1.5)),
            (Value::from("e"), Value::Float64(1000.0)),
            (Value::from("z"), Value::Float64(0.0)),
            (Value::from("s"), Value::from("x")),
            (Value::from("b"), Value::Boolean(true)),
            (Value::from("n"), Value::Null),
            (
                Value::from("l"),
                Value::Array(vec![Value::Int64(1), Value::from("a")])
            ),
        ])
    );
    assert_eq!(read(&c, "").value, Value::Null);
    assert_eq!(read(&c, " 007 ").value, Value::Int64(7));
}

#[test]
fn schemaless_writing_infers_from_values() {
    let c = without_schemas();
    let v = Value::Map(vec![
        (Value::from("a"), Value::Int32(1)),
        (
            Value::from("b"),
            Value::Array(vec![Value::Float32(0.1), Value::Null]),
        ),
        (Value::from("c"), Value::Bytes(vec![1, 2])),
    ]);
    assert_eq!(write(&c, None, &v), r#"{"a":1,"b":[0.1,null],"c":"AQI="}"#);
    let v = Value::Map(vec![
        (Value::Int8(1), Value::from("x")),
        (Value::from("k"), Value::Boolean(false)),
    ]);
    assert_eq!(write(&c, None, &v), r#"[[1,"x"],["k",false]]"#);
    let envelope = with_schemas();
    assert_eq!(
        write(&envelope, None, &Value::Int64(3)),
        r#"{"schema":null,"payload":3}"#
    );
    let st = Struct::new(rec()).with("a", 4).unwrap();
    assert_eq!(write(&c, None, &Value::Struct(st)), r#"{"a":4}"#);
    assert_eq!(write(&c, None, &Value::Float64(f64::NAN)), r#""NaN""#);
}

#[test]
fn tombstones() {
    for c in [with_schemas(), without_schemas()] {
        assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
        assert_eq!(c.to_connect("t", None).unwrap(), SchemaAndValue::null());
    }
    let sv = read(&with_schemas(), r#"{"schema":null,"payload":null}"#);
    assert_eq!(sv, SchemaAndValue::null());
}

#[test]
fn string_escaping() {
    let c = without_schemas();
    assert_eq!(
        write(&c, None, &Value::from("a\u{1}b\t/é\\")),
        "\"a\\u0001b\\t/é\\\\\""
    );
    assert_eq!(
        read(&c, r#""\u00e9\ud83d\ude00\/""#).value,
        Value::from("é😀/")
    );
}

#[test]
fn malformed_input() {
    let c = without_schemas();
    let e = c.to_connect("t", Some(b"{\"a\":")).unwrap_err();
    assert!(
        e.0.starts_with(
            "Converting byte[] to Kafka Connect data failed due to serialization error: "
        ),
        "{e}"
    );
    assert!(c.to_connect("t", Some(b"[1] x")).is_err());
    assert!(c.to_connect("t", Some(b"\xff")).is_err());
    let deep = "[".repeat(5000);
    assert!(c.to_connect("t", Some(deep.as_bytes())).is_err());
    let strict = with_schemas();
    let e = strict
        .to_connect(
            "t",
            Some(br#"{"schema":{"type":"int32","optional":false},"payload":"7"}"#),
        )
        .unwrap_err();
    assert_eq!(
        e.0,
        "Invalid value for INT32 field: expected a JSON number but found STRING"
    );
}

#[test]
fn schema_json_errors() {
    let c = with_schemas();
    let cases = [
        (
            r#"{"schema":{"optional":false},"payload":1}"#,
            "Schema must contain 'type' field",
        ),
        (
            r#"{"schema":{"type":"int128"},"payload":1}"#,
            "Unknown schema type: int128",
        ),
        (
            r#"{"schema":{"type":"array"},"payload":[]}"#,
            "Array schema did not specify the element type",
        ),
        (
            r#"{"schema":{"type":"map","values":{"type":"int8"}},"payload":{}}"#,
            "Map schema did not specify the key type",
        ),
        (
            r#"{"schema":{"type":"struct"},"payload":{}}"#,
            "Struct schema's \"fields\" argument is not an array.",
        ),
        (
            r#"{"schema":{"type":"struct","fields":[{"type":"int8"}]},"payload":{}}"#,
            "Struct schema's field name not specified properly",
        ),
        (
            r#"{"schema":{"type":"int8","parameters":{"a":1}},"payload":1}"#,
            "Schema parameters must have string values.",
        ),
    ];
    for (json, msg) in cases {
        assert_eq!(
            c.to_connect("t", Some(json.as_bytes())).unwrap_err().0,
            msg,
            "{json}"
        );
    }
}

#[test]
fn schema_text_round_trip() {
    let c = with_schemas();
    let schema = SchemaBuilder::struct_()
        .name("r")
        .field(
            "m",
            SchemaBuilder::map(Schema::string(), logical::decimal(3).optional().build()).build(),
        )
        .build();
    let text = c.schema_to_json(&schema).unwrap();
    assert_eq!(
        text,
        r#"{"type":"struct","fields":[{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"3"}},"optional":false,"field":"m"}],"optional":false,"name":"r"}"#
    );
    assert_eq!(
        c.schema_from_json(&text).unwrap().as_deref(),
        Some(&*schema)
    );
    assert_eq!(c.schema_from_json("null").unwrap(), None);
    let field: &Field = &schema.fields[0];
    assert_eq!(field.index, 0);
}

#[test]
fn schemaless_round_trips() {
    let c = without_schemas();
    let v = Value::Map(vec![
        (Value::from("s"), Value::from("x")),
        (Value::from("i"), Value::Int64(-7)),
        (Value::from("d"), Value::Float64(0.25)),
        (Value::from("b"), Value::Boolean(true)),
        (Value::from("n"), Value::Null),
        (
            Value::from("a"),
            Value::Array(vec![Value::Int64(1), Value::Map(vec![])]),
        ),
    ]);
    let text = write(&c, None, &v);
    assert_eq!(
        text,
        r#"{"s":"x","i":-7,"d":0.25,"b":true,"n":null,"a":[1,{}]}"#
    );
    assert_eq!(read(&c, &text), SchemaAndValue::new(None, v));
}

#[test]
fn duplicate_keys_replace_in_place() {
    let c = without_schemas();
    assert_eq!(
        read(&c, r#"{"a":1,"b":2,"a":3}"#).value,
        Value::Map(vec![
            (Value::from("a"), Value::Int64(3)),
            (Value::from("b"), Value::Int64(2))
        ])
    );
    let big: String = (0..20_000)
        .map(|i| format!("\"k{i}\":{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let sv = read(&c, &format!("{{{big}}}"));
    assert!(matches!(sv.value, Value::Map(ref m) if m.len() == 20_000));
}

#[test]
fn read_structs_share_the_envelope_schema() {
    let sv = read(
        &with_schemas(),
        r#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"}],"optional":false,"name":"rec"},"payload":{"a":1,"ignored":2}}"#,
    );
    let schema = sv.schema.unwrap();
    assert_eq!(*schema, *rec());
    match sv.value {
        Value::Struct(st) => {
            assert!(Arc::ptr_eq(&st.schema, &schema));
            assert_eq!(st.get("a"), Some(&Value::Int32(1)));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn serde_json_bridge() {
    let json = serde_json::json!({"partition": {"filename": "/tmp/x"}, "offset": {"position": 42, "f": 1.5}});
    let v = value_from_serde_json(&json).unwrap();
    assert_eq!(
        v.map_get(&Value::from("offset"))
            .unwrap()
            .map_get(&Value::from("position")),
        Some(&Value::Int64(42))
    );
    assert_eq!(value_to_serde_json(None, &v).unwrap(), json);
    assert_eq!(
        value_to_serde_json(None, &Value::Null).unwrap(),
        serde_json::Value::Null
    );
}

#[test]
fn works_as_header_converter() {
    let c = with_schemas();
    let bytes = c
        .from_connect_header("t", "h", Some(&Schema::int32()), &Value::Int32(9))
        .unwrap()
        .unwrap();
    assert_eq!(
        bytes,
        br#"{"schema":{"type":"int32","optional":false},"payload":9}"#
    );
    let back = c.to_connect_header("t", "h", Some(&bytes)).unwrap();
    assert_eq!(back.value, Value::Int32(9));
}

/// The converter keeps the last schema written and read; a stream that changes schema gets each
/// record's own schema, as a converter that keeps nothing does.
#[test]
fn alternating_schemas_write_and_read_as_without_a_cache() {
    let c = with_schemas();
    let int = Schema::int32();
    let text = Schema::optional_string();
    let cases: [(&Schema, Value, &str); 4] = [
        (
            &int,
            Value::Int32(1),
            r#"{"schema":{"type":"int32","optional":false},"payload":1}"#,
        ),
        (
            &int,
            Value::Int32(2),
            r#"{"schema":{"type":"int32","optional":false},"payload":2}"#,
        ),
        (
            &text,
            Value::from("a\"\n\u{1}é"),
            r#"{"schema":{"type":"string","optional":true},"payload":"a\"\n\u0001é"}"#,
        ),
        (
            &int,
            Value::Int32(3),
            r#"{"schema":{"type":"int32","optional":false},"payload":3}"#,
        ),
    ];
    for (schema, value, json) in &cases {
        assert_eq!(write(&c, Some(schema), value), *json);
        assert_eq!(write(&with_schemas(), Some(schema), value), *json);
        let sv = read(&c, json);
        assert_eq!(sv.schema.as_deref(), Some(*schema));
        assert_eq!(&sv.value, value);
    }
}
