//! Kafka's `org.apache.kafka.connect.storage.SimpleHeaderConverter`, the worker's default
//! `header.converter`: header values as Kafka's inline text syntax.
//!
//! Writing uses [`values::convert_to_string`] (strings raw, numbers as Java prints them, lists
//! and maps inline); reading uses [`values::parse_string`], which infers a schema
//! (`true` → `BOOLEAN`, `12` → `INT8`, `[1,2]` → `ARRAY` of `INT8`, other text → `STRING`). See
//! [`crate::data::values`] for the syntax and what differs from Kafka.

use super::Codec;
use crate::data::{values, DataError, Schema, SchemaAndValue, Value};

/// The Kafka class name.
pub const CLASS: &str = "org.apache.kafka.connect.storage.SimpleHeaderConverter";

/// Kafka's SimpleHeaderConverter (header converter only).
#[derive(Clone, Copy, Debug, Default)]
pub struct SimpleHeaderConverter;

/// Header converter only: not a [`super::RecordCodec`].
impl Codec for SimpleHeaderConverter {
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        Ok(values::convert_to_string(schema, value).map(String::into_bytes))
    }

    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        let Some(data) = data else {
            return Ok(SchemaAndValue::null());
        };
        // Java decodes with replacement characters for malformed UTF-8; so does from_utf8_lossy
        Ok(values::parse_string(&String::from_utf8_lossy(data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::HeaderConverter;
    use crate::data::{logical, SchemaBuilder, SchemaType};

    fn write(schema: Option<&Schema>, value: &Value) -> Option<String> {
        SimpleHeaderConverter
            .from_connect_header("t", "h", schema, value)
            .unwrap()
            .map(|b| String::from_utf8(b).unwrap())
    }

    fn read(text: &str) -> SchemaAndValue {
        SimpleHeaderConverter
            .to_connect_header("t", "h", Some(text.as_bytes()))
            .unwrap()
    }

    #[test]
    fn writes_inline_text() {
        assert_eq!(
            write(None, &Value::from("plain text")).as_deref(),
            Some("plain text")
        );
        assert_eq!(write(None, &Value::Int64(42)).as_deref(), Some("42"));
        assert_eq!(write(None, &Value::Float32(1.5)).as_deref(), Some("1.5"));
        assert_eq!(write(None, &Value::Boolean(true)).as_deref(), Some("true"));
        assert_eq!(write(None, &Value::Null), None);
        let list = Value::Array(vec![Value::from("a"), Value::from("b")]);
        assert_eq!(write(None, &list).as_deref(), Some(r#"["a","b"]"#));
        let map = Value::Map(vec![(Value::from("k"), Value::Int32(1))]);
        assert_eq!(write(None, &map).as_deref(), Some(r#"{"k":1}"#));
        let date = logical::date().build();
        assert_eq!(
            write(Some(&date), &Value::Int32(19724)).as_deref(),
            Some("2024-01-02")
        );
    }

    #[test]
    fn reads_with_inference() {
        assert_eq!(read("true").value, Value::Boolean(true));
        assert_eq!(read("12").value, Value::Int8(12));
        assert_eq!(read("1234").value, Value::Int16(1234));
        assert_eq!(read("123456").value, Value::Int32(123_456));
        assert_eq!(read("12345678901").value, Value::Int64(12_345_678_901));
        assert_eq!(read("2.5").schema.unwrap().schema_type, SchemaType::Float32);
        assert_eq!(read("hello").value, Value::from("hello"));
        let empty = read("");
        assert_eq!(empty.schema, Some(Schema::string()));
        assert_eq!(empty.value, Value::from(""));
        let arr = read(r#"["a","b"]"#);
        assert_eq!(
            arr.schema,
            Some(SchemaBuilder::array(Schema::string()).build())
        );
        assert_eq!(
            arr.value,
            Value::Array(vec![Value::from("a"), Value::from("b")])
        );
        assert_eq!(
            SimpleHeaderConverter
                .to_connect_header("t", "h", None)
                .unwrap(),
            SchemaAndValue::null()
        );
    }

    #[test]
    fn round_trips() {
        for v in [
            Value::Int8(-3),
            Value::from("x y"),
            Value::Boolean(false),
            Value::Map(vec![(Value::from("a"), Value::Int16(300))]),
        ] {
            let text = write(None, &v).unwrap();
            assert_eq!(read(&text).value, v, "{text}");
        }
    }
}
