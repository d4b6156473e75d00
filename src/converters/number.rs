//! Kafka's primitive converters in `org.apache.kafka.connect.converters`: `LongConverter`,
//! `IntegerConverter`, `ShortConverter`, `FloatConverter`, `DoubleConverter` and
//! `BooleanConverter`.
//!
//! They use Kafka's client serializers: big-endian two's complement for integers (8, 4 and 2
//! bytes), big-endian IEEE 754 for floats (4 and 8 bytes), and one byte `1`/`0` for booleans.
//! Reading yields the matching optional schema. As in Kafka, the value must be exactly the Java
//! type the serializer takes (a `LongConverter` refuses an `INT32`); only `BooleanConverter`
//! checks the schema.

use super::{Codec, RecordCodec};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, SchemaType, Value};

/// `org.apache.kafka.connect.converters.LongConverter`.
pub const LONG_CLASS: &str = "org.apache.kafka.connect.converters.LongConverter";
/// `org.apache.kafka.connect.converters.IntegerConverter`.
pub const INTEGER_CLASS: &str = "org.apache.kafka.connect.converters.IntegerConverter";
/// `org.apache.kafka.connect.converters.ShortConverter`.
pub const SHORT_CLASS: &str = "org.apache.kafka.connect.converters.ShortConverter";
/// `org.apache.kafka.connect.converters.FloatConverter`.
pub const FLOAT_CLASS: &str = "org.apache.kafka.connect.converters.FloatConverter";
/// `org.apache.kafka.connect.converters.DoubleConverter`.
pub const DOUBLE_CLASS: &str = "org.apache.kafka.connect.converters.DoubleConverter";
/// `org.apache.kafka.connect.converters.BooleanConverter`.
pub const BOOLEAN_CLASS: &str = "org.apache.kafka.connect.converters.BooleanConverter";

/// Which primitive a [`NumberConverter`] handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberKind {
    /// `INT64`, 8 bytes.
    Long,
    /// `INT32`, 4 bytes.
    Integer,
    /// `INT16`, 2 bytes.
    Short,
    /// `FLOAT32`, 4 bytes.
    Float,
    /// `FLOAT64`, 8 bytes.
    Double,
    /// `BOOLEAN`, 1 byte.
    Boolean,
}

impl NumberKind {
    /// Kafka's type name in messages (`long`, `integer`, ...).
    fn type_name(self) -> &'static str {
        match self {
            NumberKind::Long => "long",
            NumberKind::Integer => "integer",
            NumberKind::Short => "short",
            NumberKind::Float => "float",
            NumberKind::Double => "double",
            NumberKind::Boolean => "boolean",
        }
    }

    fn java_class(self) -> &'static str {
        match self {
            NumberKind::Long => "class java.lang.Long",
            NumberKind::Integer => "class java.lang.Integer",
            NumberKind::Short => "class java.lang.Short",
            NumberKind::Float => "class java.lang.Float",
            NumberKind::Double => "class java.lang.Double",
            NumberKind::Boolean => "class java.lang.Boolean",
        }
    }

    fn size(self) -> usize {
        match self {
            NumberKind::Long | NumberKind::Double => 8,
            NumberKind::Integer | NumberKind::Float => 4,
            NumberKind::Short => 2,
            NumberKind::Boolean => 1,
        }
    }

    /// The client deserializer's message for a payload of the wrong size.
    fn size_error(self) -> &'static str {
        match self {
            NumberKind::Long => "Size of data received by LongDeserializer is not 8",
            NumberKind::Integer => "Size of data received by IntegerDeserializer is not 4",
            NumberKind::Short => "Size of data received by ShortDeserializer is not 2",
            NumberKind::Float => "Size of data received by Deserializer is not 4",
            NumberKind::Double => "Size of data received by Deserializer is not 8",
            NumberKind::Boolean => "Size of data received by BooleanDeserializer is not 1",
        }
    }

    fn schema(self) -> SchemaRef {
        match self {
            NumberKind::Long => Schema::optional_int64(),
            NumberKind::Integer => Schema::optional_int32(),
            NumberKind::Short => Schema::optional_int16(),
            NumberKind::Float => Schema::optional_float32(),
            NumberKind::Double => Schema::optional_float64(),
            NumberKind::Boolean => Schema::optional_boolean(),
        }
    }
}

/// One of Kafka's primitive converters (also header converters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumberConverter {
    kind: NumberKind,
}

impl NumberConverter {
    /// The converter for `kind`.
    pub fn new(kind: NumberKind) -> Self {
        NumberConverter { kind }
    }

    /// The converter for a fully-qualified Kafka class name, if it is one of these.
    pub fn for_class(class: &str) -> Option<Self> {
        let kind = match class {
            LONG_CLASS => NumberKind::Long,
            INTEGER_CLASS => NumberKind::Integer,
            SHORT_CLASS => NumberKind::Short,
            FLOAT_CLASS => NumberKind::Float,
            DOUBLE_CLASS => NumberKind::Double,
            BOOLEAN_CLASS => NumberKind::Boolean,
            _ => return None,
        };
        Some(NumberConverter::new(kind))
    }

    fn serialize(
        &self,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        let kind = self.kind;
        if kind == NumberKind::Boolean {
            if let Some(s) = schema.filter(|s| s.schema_type != SchemaType::Boolean) {
                return Err(DataError::new(format!(
                    "Invalid schema type for BooleanConverter: {}",
                    s.schema_type
                )));
            }
        }
        let bytes = match (kind, value) {
            (_, Value::Null) => return Ok(None),
            (NumberKind::Long, Value::Int64(v)) => v.to_be_bytes().to_vec(),
            (NumberKind::Integer, Value::Int32(v)) => v.to_be_bytes().to_vec(),
            (NumberKind::Short, Value::Int16(v)) => v.to_be_bytes().to_vec(),
            (NumberKind::Float, Value::Float32(v)) => v.to_bits().to_be_bytes().to_vec(),
            (NumberKind::Double, Value::Float64(v)) => v.to_bits().to_be_bytes().to_vec(),
            (NumberKind::Boolean, Value::Boolean(b)) => vec![u8::from(*b)],
            (NumberKind::Boolean, other) => {
                return Err(DataError::new(format!(
                    "BooleanConverter is not compatible with objects of type {}",
                    other.java_class()
                )))
            }
            (_, other) => {
                return Err(DataError::new(format!(
                    "Failed to serialize to {} (was {}): {} cannot be cast to {}",
                    kind.type_name(),
                    other.java_class(),
                    other.java_class(),
                    kind.java_class()
                )))
            }
        };
        Ok(Some(bytes))
    }

    fn deserialize(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        let kind = self.kind;
        let Some(data) = data else {
            return Ok(SchemaAndValue::new(Some(kind.schema()), Value::Null));
        };
        let fail = |why: &str| {
            DataError::new(format!("Failed to deserialize {}: {why}", kind.type_name()))
        };
        if data.len() != kind.size() {
            return Err(fail(kind.size_error()));
        }
        let value = match kind {
            NumberKind::Long => Value::Int64(i64::from_be_bytes(fixed(data))),
            NumberKind::Integer => Value::Int32(i32::from_be_bytes(fixed(data))),
            NumberKind::Short => Value::Int16(i16::from_be_bytes(fixed(data))),
            NumberKind::Float => Value::Float32(f32::from_bits(u32::from_be_bytes(fixed(data)))),
            NumberKind::Double => Value::Float64(f64::from_bits(u64::from_be_bytes(fixed(data)))),
            NumberKind::Boolean => match data[0] {
                1 => Value::Boolean(true),
                0 => Value::Boolean(false),
                b => {
                    return Err(fail(&format!(
                        "Unexpected byte received by BooleanDeserializer: {}",
                        b as i8
                    )))
                }
            },
        };
        Ok(SchemaAndValue::new(Some(kind.schema()), value))
    }
}

/// The first `N` bytes of `data`, zero-padded; callers check the length first.
fn fixed<const N: usize>(data: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = data.len().min(N);
    out[..n].copy_from_slice(&data[..n]);
    out
}

impl RecordCodec for NumberConverter {}

impl Codec for NumberConverter {
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError> {
        self.serialize(schema, value)
    }

    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        self.deserialize(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::Converter;

    fn round_trip(kind: NumberKind, value: Value, bytes: &[u8]) {
        let c = NumberConverter::new(kind);
        assert_eq!(
            c.from_connect("t", None, &value).unwrap().as_deref(),
            Some(bytes),
            "{kind:?}"
        );
        let sv = c.to_connect("t", Some(bytes)).unwrap();
        assert_eq!(sv.value, value);
        let schema = sv.schema.unwrap();
        assert!(schema.optional);
        assert_eq!(Some(schema.schema_type), value.schema_type());
    }

    #[test]
    fn kafka_serializer_bytes() {
        round_trip(NumberKind::Long, Value::Int64(1), &[0, 0, 0, 0, 0, 0, 0, 1]);
        round_trip(
            NumberKind::Long,
            Value::Int64(-2),
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE],
        );
        round_trip(NumberKind::Integer, Value::Int32(0x01020304), &[1, 2, 3, 4]);
        round_trip(NumberKind::Short, Value::Int16(-1), &[0xFF, 0xFF]);
        round_trip(NumberKind::Float, Value::Float32(1.5), &[0x3F, 0xC0, 0, 0]);
        round_trip(
            NumberKind::Double,
            Value::Float64(-2.0),
            &[0xC0, 0, 0, 0, 0, 0, 0, 0],
        );
        round_trip(NumberKind::Boolean, Value::Boolean(true), &[1]);
        round_trip(NumberKind::Boolean, Value::Boolean(false), &[0]);
    }

    #[test]
    fn nulls() {
        for kind in [NumberKind::Long, NumberKind::Float, NumberKind::Boolean] {
            let c = NumberConverter::new(kind);
            assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
            let sv = c.to_connect("t", None).unwrap();
            assert_eq!(sv.value, Value::Null);
            assert!(sv.schema.unwrap().optional);
        }
    }

    #[test]
    fn errors() {
        let long = NumberConverter::for_class(LONG_CLASS).unwrap();
        assert_eq!(
            long.from_connect("t", None, &Value::Int32(1)).unwrap_err().0,
            "Failed to serialize to long (was class java.lang.Integer): class java.lang.Integer cannot be cast to class java.lang.Long"
        );
        assert_eq!(
            long.to_connect("t", Some(&[1, 2])).unwrap_err().0,
            "Failed to deserialize long: Size of data received by LongDeserializer is not 8"
        );
        let float = NumberConverter::for_class(FLOAT_CLASS).unwrap();
        assert_eq!(
            float.to_connect("t", Some(&[1])).unwrap_err().0,
            "Failed to deserialize float: Size of data received by Deserializer is not 4"
        );
        let boolean = NumberConverter::for_class(BOOLEAN_CLASS).unwrap();
        assert_eq!(
            boolean
                .from_connect("t", Some(&Schema::string()), &Value::Boolean(true))
                .unwrap_err()
                .0,
            "Invalid schema type for BooleanConverter: STRING"
        );
        assert_eq!(
            boolean
                .from_connect("t", None, &Value::Int8(1))
                .unwrap_err()
                .0,
            "BooleanConverter is not compatible with objects of type class java.lang.Byte"
        );
        assert_eq!(
            boolean.to_connect("t", Some(&[2])).unwrap_err().0,
            "Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: 2"
        );
        assert!(NumberConverter::for_class("x").is_none());
    }
}
