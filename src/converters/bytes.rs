//! Kafka's `org.apache.kafka.connect.converters.ByteArrayConverter`: raw bytes in, raw bytes out.

use super::{Codec, RecordCodec};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaType, Value};

/// The Kafka class name.
pub const CLASS: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

/// Kafka's ByteArrayConverter (also a header converter). Writing accepts only `BYTES` (or no
/// schema) and byte values; reading yields optional bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByteArrayConverter;

impl ByteArrayConverter {
    fn serialize(schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        if let Some(s) = schema {
            if s.schema_type != SchemaType::Bytes {
                return Err(DataError::new(format!(
                    "Invalid schema type for ByteArrayConverter: {}",
                    s.schema_type
                )));
            }
        }
        match value {
            Value::Null => Ok(None),
            Value::Bytes(b) => Ok(Some(b.clone())),
            other => Err(DataError::new(format!(
                "ByteArrayConverter is not compatible with objects of type {}",
                other.java_class()
            ))),
        }
    }

    fn deserialize(data: Option<&[u8]>) -> SchemaAndValue {
        let value = data.map_or(Value::Null, |b| Value::Bytes(b.to_vec()));
        SchemaAndValue::new(Some(Schema::optional_bytes()), value)
    }
}

impl RecordCodec for ByteArrayConverter {}

impl Codec for ByteArrayConverter {
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        Self::serialize(schema, value)
    }

    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        Ok(Self::deserialize(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::Converter;

    #[test]
    fn passes_bytes_through() {
        let c = ByteArrayConverter;
        let out = c
            .from_connect("t", Some(&Schema::bytes()), &Value::Bytes(vec![0, 1, 255]))
            .unwrap();
        assert_eq!(out, Some(vec![0, 1, 255]));
        assert_eq!(
            c.from_connect("t", None, &Value::Bytes(vec![7])).unwrap(),
            Some(vec![7])
        );
        assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
        let sv = c.to_connect("t", Some(&[9, 8])).unwrap();
        assert_eq!(sv.schema, Some(Schema::optional_bytes()));
        assert_eq!(sv.value, Value::Bytes(vec![9, 8]));
        assert_eq!(c.to_connect("t", None).unwrap().value, Value::Null);
    }

    #[test]
    fn rejects_other_schemas_and_values() {
        let c = ByteArrayConverter;
        assert_eq!(
            c.from_connect("t", Some(&Schema::int32()), &Value::Int32(1))
                .unwrap_err()
                .0,
            "Invalid schema type for ByteArrayConverter: INT32"
        );
        assert_eq!(
            c.from_connect("t", None, &Value::from("x")).unwrap_err().0,
            "ByteArrayConverter is not compatible with objects of type class java.lang.String"
        );
    }
}
