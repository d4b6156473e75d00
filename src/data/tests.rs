use super::*;

fn rec() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("rec")
        .field("a", Schema::int32())
        .field("b", Schema::optional_string())
        .build()
}

#[test]
fn schema_type_names() {
    assert_eq!(SchemaType::Float32.as_str(), "float");
    assert_eq!(SchemaType::Float64.as_str(), "double");
    assert_eq!(SchemaType::Float64.name(), "float64");
    assert_eq!(SchemaType::Int32.to_string(), "INT32");
    assert_eq!(
        SchemaType::from_json_name("double"),
        Some(SchemaType::Float64)
    );
    assert_eq!(SchemaType::from_name("FLOAT32"), Some(SchemaType::Float32));
    assert_eq!(SchemaType::from_json_name("float64"), None);
}

#[test]
fn builder_builds_structs() {
    let s = SchemaBuilder::struct_()
        .name("x")
        .field("a", Schema::int32())
        .optional()
        .version(3)
        .doc("d")
        .parameter("k", "v")
        .build();
    assert!(s.optional);
    assert_eq!(s.name.as_deref(), Some("x"));
    assert_eq!(s.field("a").unwrap().index, 0);
    assert_eq!(s.version, Some(3));
    assert_eq!(s.to_string(), "Schema{x:STRUCT}");
    assert_eq!(Schema::int8().to_string(), "Schema{INT8}");
}

#[test]
fn builder_reports_kafka_errors() {
    let e = SchemaBuilder::int32()
        .field("a", Schema::int32())
        .try_build()
        .unwrap_err();
    assert_eq!(e.0, "Cannot create fields on type INT32");
    let e = SchemaBuilder::struct_()
        .field("a", Schema::int32())
        .field("a", Schema::string())
        .try_build()
        .unwrap_err();
    assert_eq!(
        e.0,
        "Cannot create field because of field name duplication a"
    );
    let e = SchemaBuilder::int32()
        .default_value(Value::from("x"))
        .try_build()
        .unwrap_err();
    assert_eq!(
        e.0,
        "Invalid default value: Invalid Java object for schema with type INT32: class java.lang.String for value"
    );
    assert!(SchemaBuilder::int32()
        .default_value(Value::Int32(5))
        .try_build()
        .is_ok());
}

#[test]
fn validate_value_messages() {
    let e = Schema::int32().validate_value(&Value::Null).unwrap_err();
    assert_eq!(
        e.0,
        "Invalid value: null used for required value, schema type: INT32"
    );
    assert!(Schema::optional_int32()
        .validate_value(&Value::Null)
        .is_ok());
    let d = logical::decimal(2).build();
    let e = d.validate_value(&Value::Int32(1)).unwrap_err();
    assert_eq!(
        e.0,
        "Invalid Java object for schema \"org.apache.kafka.connect.data.Decimal\" with type BYTES: class java.lang.Integer for value"
    );
    let arr = SchemaBuilder::array(Schema::string()).build();
    let e = arr
        .validate_value(&Value::Array(vec![Value::from("a"), Value::Int8(1)]))
        .unwrap_err();
    assert_eq!(
        e.0,
        "Invalid Java object for schema with type STRING: class java.lang.Byte for element of array value"
    );
    let map = SchemaBuilder::map(Schema::string(), Schema::int64()).build();
    assert!(map
        .validate_value(&Value::Map(vec![(Value::from("k"), Value::Int64(1))]))
        .is_ok());
    let e = map
        .validate_value(&Value::Map(vec![(Value::from("k"), Value::Null)]))
        .unwrap_err();
    assert_eq!(
        e.0,
        "Invalid value: null used for required value of map value, schema type: INT64"
    );
}

#[test]
fn struct_put_get_validate() {
    let mut s = Struct::new(rec());
    s.put("a", 1).unwrap();
    assert_eq!(s.get("a"), Some(&Value::Int32(1)));
    assert_eq!(s.get("b"), Some(&Value::Null));
    assert_eq!(s.get("zz"), None);
    let e = s.put("a", "x").unwrap_err();
    assert_eq!(
        e.0,
        "Invalid Java object for schema with type INT32: class java.lang.String for field: \"a\""
    );
    assert_eq!(
        s.put("zz", 1).unwrap_err().0,
        "zz is not a valid field name"
    );
    assert!(s.validate().is_ok());
    let empty = Struct::new(rec());
    assert_eq!(
        empty.validate().unwrap_err().0,
        "Invalid value: null used for required field: \"a\", schema type: INT32"
    );
    assert_eq!(
        Struct::try_new(Schema::int32()).unwrap_err().0,
        "Not a struct schema: Schema{INT32}"
    );
    let other = SchemaBuilder::struct_()
        .name("other")
        .field("a", Schema::int32())
        .build();
    let wrapper = SchemaBuilder::struct_().field("inner", rec()).build();
    let mut w = Struct::new(wrapper);
    let inner = Struct::new(other).with("a", 1).unwrap();
    assert_eq!(
        w.put("inner", inner).unwrap_err().0,
        "Struct schemas do not match."
    );
}

#[test]
fn struct_defaults() {
    let schema = SchemaBuilder::struct_()
        .field(
            "a",
            SchemaBuilder::int32()
                .default_value(Value::Int32(7))
                .build(),
        )
        .build();
    let s = Struct::new(schema);
    assert_eq!(s.get("a"), Some(&Value::Int32(7)));
    assert_eq!(s.get_without_default("a"), Some(&Value::Null));
    assert!(s.validate().is_ok());
}

#[test]
fn java_strings() {
    assert_eq!(Value::from("abc").to_java_string(), "abc");
    assert_eq!(Value::Float64(1.0).to_java_string(), "1.0");
    assert_eq!(Value::Float64(1e10).to_java_string(), "1.0E10");
    assert_eq!(Value::Float32(0.1).to_java_string(), "0.1");
    assert_eq!(Value::Int64(-5).to_java_string(), "-5");
    assert_eq!(Value::Boolean(true).to_java_string(), "true");
    assert_eq!(Value::Null.to_java_string(), "null");
    assert_eq!(Value::Bytes(b"hi".to_vec()).to_java_string(), "aGk=");
    assert_eq!(
        Value::Array(vec![Value::from("a"), Value::from("b"), Value::Null]).to_java_string(),
        "[a, b, null]"
    );
    assert_eq!(
        Value::Map(vec![
            (Value::from("k"), Value::Int32(1)),
            (Value::from("k2"), Value::from("v2"))
        ])
        .to_java_string(),
        "{k=1, k2=v2}"
    );
    let s = Struct::new(rec())
        .with("a", 1)
        .unwrap()
        .with("b", "x")
        .unwrap();
    assert_eq!(Value::Struct(s.clone()).to_java_string(), "Struct{a=1,b=x}");
    assert_eq!(s.to_string(), "Struct{a=1,b=x}");
    let s = Struct::new(rec()).with("a", 1).unwrap();
    assert_eq!(s.to_string(), "Struct{a=1}");
}

#[test]
fn java_strings_of_logical_values() {
    let dec = logical::decimal(2).build();
    let v = Value::Bytes(logical::decimal_from_str("12.50", 2).unwrap());
    assert_eq!(v.to_java_string_with_schema(Some(&dec)), "12.50");
    let date = logical::date().build();
    assert_eq!(
        Value::Int32(1).to_java_string_with_schema(Some(&date)),
        "Fri Jan 02 00:00:00 UTC 1970"
    );
    let ts = logical::timestamp().build();
    assert_eq!(
        Value::Int64(1_700_000_000_000).to_java_string_with_schema(Some(&ts)),
        "Tue Nov 14 22:13:20 UTC 2023"
    );
    let schema = SchemaBuilder::struct_().field("d", dec).build();
    let s = Struct::new(schema).with("d", v).unwrap();
    assert_eq!(s.to_string(), "Struct{d=12.50}");
}

#[test]
fn value_helpers() {
    assert_eq!(Value::Int16(3).type_name(), "int16");
    assert_eq!(Value::Null.type_name(), "null");
    assert_eq!(Value::Int16(3).as_i64(), Some(3));
    assert_eq!(Value::Float32(1.5).as_f64(), Some(1.5));
    let m = Value::Map(vec![(Value::from("a"), Value::Int8(1))]);
    assert_eq!(m.map_get(&Value::from("a")), Some(&Value::Int8(1)));
}

#[test]
fn parameters_keep_their_order_and_compare_as_maps() {
    let forward = SchemaBuilder::string()
        .parameter("z", "1")
        .parameter("a", "2")
        .parameter("m", "3")
        .build();
    let keys: Vec<&str> = forward.parameters.keys().map(String::as_str).collect();
    assert_eq!(keys, ["z", "a", "m"], "insertion order");
    let backward = SchemaBuilder::string()
        .parameter("m", "3")
        .parameter("a", "2")
        .parameter("z", "1")
        .build();
    assert_eq!(
        forward, backward,
        "equal as Java's maps are, whatever the order"
    );
    let other = SchemaBuilder::string().parameter("z", "9").build();
    assert_ne!(forward, other);
    // JsonConverter writes them in that order, as Kafka's does.
    use crate::converters::Converter as _;
    let json = crate::converters::json::JsonConverter::from_config(&Default::default()).unwrap();
    let out = json
        .from_connect("t", Some(&forward), &Value::String("x".into()))
        .unwrap()
        .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(r#""parameters":{"z":"1","a":"2","m":"3"}"#),
        "{out}"
    );
}
