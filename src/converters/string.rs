//! Kafka's `org.apache.kafka.connect.storage.StringConverter`: a value's `toString()` as text.
//!
//! Writing uses [`Value::to_java_string_with_schema`], so output matches what Java's
//! `value.toString()` gives (`Struct{a=1}`, `1.0E10`, `{k=v}`); reading always yields an optional
//! string. Only UTF-8 is supported for `converter.encoding`; other charsets are refused when the
//! converter is built rather than failing on the first record.

use super::{Codec, RecordCodec};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};
use std::collections::BTreeMap;

/// The Kafka class name.
pub const CLASS: &str = "org.apache.kafka.connect.storage.StringConverter";

/// Kafka's StringConverter (also a header converter).
#[derive(Clone, Copy, Debug, Default)]
pub struct StringConverter;

impl StringConverter {
    /// Builds the converter from its keys; `converter.encoding` must name UTF-8 (any of Java's
    /// spellings: `UTF-8`, `UTF8`, in any case).
    pub fn from_config(config: &BTreeMap<String, String>) -> Result<Self, DataError> {
        if let Some(enc) = config.get("converter.encoding") {
            let normalized = enc.trim().to_ascii_uppercase();
            if normalized != "UTF-8" && normalized != "UTF8" {
                return Err(DataError::new(crate::config::invalid_value(
                    "converter.encoding",
                    enc,
                    "Only the UTF-8 encoding is supported",
                )));
            }
        }
        Ok(StringConverter)
    }

    fn serialize(schema: Option<&Schema>, value: &Value) -> Option<Vec<u8>> {
        if value.is_null() {
            return None;
        }
        Some(value.to_java_string_with_schema(schema).into_bytes())
    }

    fn deserialize(data: Option<&[u8]>) -> SchemaAndValue {
        let value = match data {
            None => Value::Null,
            // Java's String(byte[], UTF_8) replaces malformed input the same way
            Some(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        };
        // Every value read has the same schema: one shared, rather than one built per record.
        static OPTIONAL_STRING: std::sync::LazyLock<SchemaRef> =
            std::sync::LazyLock::new(Schema::optional_string);
        SchemaAndValue::new(Some(OPTIONAL_STRING.clone()), value)
    }
}

impl RecordCodec for StringConverter {}

impl Codec for StringConverter {
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        Ok(Self::serialize(schema, value))
    }

    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        Ok(Self::deserialize(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::{Converter, HeaderConverter};
    use crate::data::logical;
    use crate::data::test_util::{struct_of, struct_schema};

    fn write(schema: Option<&Schema>, value: &Value) -> Option<String> {
        StringConverter
            .from_connect("t", schema, value)
            .unwrap()
            .map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn writes_java_to_string() {
        assert_eq!(write(None, &Value::from("héllo")).as_deref(), Some("héllo"));
        assert_eq!(write(None, &Value::Int32(42)).as_deref(), Some("42"));
        assert_eq!(write(None, &Value::Float64(1.0)).as_deref(), Some("1.0"));
        assert_eq!(
            write(None, &Value::Boolean(false)).as_deref(),
            Some("false")
        );
        assert_eq!(write(None, &Value::Null), None);
        let schema = struct_schema(&[("a", Schema::int32()), ("b", Schema::string())]);
        let s = struct_of(&schema, &[("a", Value::Int32(1)), ("b", Value::from("x"))]);
        assert_eq!(
            write(Some(&schema), &Value::Struct(s)).as_deref(),
            Some("Struct{a=1,b=x}")
        );
        let dec = logical::decimal(1).build();
        let v = Value::Bytes(logical::decimal_from_str("-2.5", 1).unwrap());
        assert_eq!(write(Some(&dec), &v).as_deref(), Some("-2.5"));
    }

    #[test]
    fn reads_optional_strings() {
        let sv = StringConverter.to_connect("t", Some(b"abc")).unwrap();
        assert_eq!(sv.schema, Some(Schema::optional_string()));
        assert_eq!(sv.value, Value::from("abc"));
        let sv = StringConverter.to_connect("t", None).unwrap();
        assert_eq!(sv.schema, Some(Schema::optional_string()));
        assert_eq!(sv.value, Value::Null);
        let sv = StringConverter
            .to_connect_header("t", "h", Some(b"a\xffb"))
            .unwrap();
        assert_eq!(sv.value, Value::from("a\u{FFFD}b"));
    }

    #[test]
    fn encoding_config() {
        let cfg = |v: &str| BTreeMap::from([("converter.encoding".to_string(), v.to_string())]);
        assert!(StringConverter::from_config(&cfg("UTF-8")).is_ok());
        assert!(StringConverter::from_config(&cfg("utf8")).is_ok());
        assert_eq!(
            StringConverter::from_config(&cfg("ISO-8859-1")).unwrap_err().0,
            "Invalid value ISO-8859-1 for configuration converter.encoding: Only the UTF-8 encoding is supported"
        );
    }
}
