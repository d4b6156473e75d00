//! Records without a Connect schema, as Confluent's `AvroData` writes them: under its schema
//! `io.confluent.connect.avro.Anything`, a record with one optional field per kind of value (`boolean`,
//! `bytes`, `double`, `float`, `int`, `long`, `string`, `array` of itself, `map` as an array of
//! `MapEntry` records of itself), the one that holds the value set. Read back, such a record is a value
//! without a schema again: 8- and 16-bit integers come back as 32-bit ones, as with Confluent's.

use super::binary::{write_bytes, write_long, Reader};
use crate::data::{DataError, Value};

/// The full name of the schema schemaless values are written under.
pub const ANYTHING_NAME: &str = "io.confluent.connect.avro.Anything";

/// The schema's text, as Avro's Java library prints Confluent's `ANYTHING_SCHEMA`.
pub const ANYTHING_SCHEMA: &str = concat!(
    r#"{"type":"record","name":"Anything","namespace":"io.confluent.connect.avro","fields":["#,
    r#"{"name":"boolean","type":["null","boolean"],"default":null},"#,
    r#"{"name":"bytes","type":["null","bytes"],"default":null},"#,
    r#"{"name":"double","type":["null","double"],"default":null},"#,
    r#"{"name":"float","type":["null","float"],"default":null},"#,
    r#"{"name":"int","type":["null","int"],"default":null},"#,
    r#"{"name":"long","type":["null","long"],"default":null},"#,
    r#"{"name":"string","type":["null","string"],"default":null},"#,
    r#"{"name":"array","type":["null",{"type":"array","items":"Anything"}],"default":null},"#,
    r#"{"name":"map","type":["null",{"type":"array","items":{"type":"record","name":"MapEntry","#,
    r#""fields":[{"name":"key","type":"Anything"},{"name":"value","type":"Anything"}]}}],"default":null}"#,
    r#"]}"#
);

/// The number of fields of the schema.
const FIELDS: usize = 9;

/// The field (by position) that holds a value of this kind.
fn field_of(value: &Value) -> Result<Option<usize>, DataError> {
    Ok(Some(match value {
        Value::Null => return Ok(None),
        Value::Boolean(_) => 0,
        Value::Bytes(_) => 1,
        Value::Float64(_) => 2,
        Value::Float32(_) => 3,
        Value::Int8(_) | Value::Int16(_) | Value::Int32(_) => 4,
        Value::Int64(_) => 5,
        Value::String(_) => 6,
        Value::Array(_) => 7,
        Value::Map(_) => 8,
        Value::Struct(_) => {
            return Err(DataError::new(
                "Unknown Java type for schemaless data: class org.apache.kafka.connect.data.Struct",
            ))
        }
    }))
}

/// Writes a value without a schema as an `Anything` record.
pub fn encode_anything(value: &Value, out: &mut Vec<u8>) -> Result<(), DataError> {
    let set = field_of(value)?;
    for field in 0..FIELDS {
        if Some(field) != set {
            out.push(0);
            continue;
        }
        out.push(2);
        match value {
            Value::Boolean(b) => out.push(u8::from(*b)),
            Value::Bytes(b) => write_bytes(out, b),
            Value::Float64(f) => out.extend_from_slice(&f.to_le_bytes()),
            Value::Float32(f) => out.extend_from_slice(&f.to_le_bytes()),
            Value::Int8(n) => write_long(out, i64::from(*n)),
            Value::Int16(n) => write_long(out, i64::from(*n)),
            Value::Int32(n) => write_long(out, i64::from(*n)),
            Value::Int64(n) => write_long(out, *n),
            Value::String(s) => write_bytes(out, s.as_bytes()),
            Value::Array(items) => {
                if !items.is_empty() {
                    write_long(out, items.len() as i64);
                    for item in items {
                        encode_anything(item, out)?;
                    }
                }
                out.push(0);
            }
            Value::Map(entries) => {
                if !entries.is_empty() {
                    write_long(out, entries.len() as i64);
                    for (k, v) in entries {
                        encode_anything(k, out)?;
                        encode_anything(v, out)?;
                    }
                }
                out.push(0);
            }
            Value::Null | Value::Struct(_) => {}
        }
    }
    Ok(())
}

/// Reads an `Anything` record as a value without a schema.
pub fn decode_anything(reader: &mut Reader<'_>) -> Result<Value, DataError> {
    let mut value = Value::Null;
    for field in 0..FIELDS {
        match reader.long()? {
            0 => continue,
            1 => {}
            _ => {
                return Err(DataError::new(
                    "An Avro union index is out of range in an Anything record",
                ))
            }
        }
        let read = read_field(reader, field)?;
        // The first field set is the value, as Confluent reads it.
        if value.is_null() {
            value = read;
        }
    }
    Ok(value)
}

fn read_field(reader: &mut Reader<'_>, field: usize) -> Result<Value, DataError> {
    Ok(match field {
        0 => Value::Boolean(reader.take(1)?[0] != 0),
        1 => Value::Bytes(reader.bytes()?),
        2 => Value::Float64(f64::from_le_bytes(
            reader
                .take(8)?
                .try_into()
                .map_err(|_| DataError::new("The Avro data ended early"))?,
        )),
        3 => Value::Float32(f32::from_le_bytes(
            reader
                .take(4)?
                .try_into()
                .map_err(|_| DataError::new("The Avro data ended early"))?,
        )),
        4 => Value::Int32(reader.int()?),
        5 => Value::Int64(reader.long()?),
        6 => Value::String(
            String::from_utf8(reader.bytes()?)
                .map_err(|_| DataError::new("An Avro string is not UTF-8"))?,
        ),
        7 => Value::Array(reader.items(decode_anything)?),
        _ => Value::Map(reader.items(|r| Ok((decode_anything(r)?, decode_anything(r)?)))?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::converters::avro::schema::{AvroSchema, Node};

    #[test]
    fn schemaless_values_go_through_the_anything_record_and_back() {
        let schema = AvroSchema::parse(ANYTHING_SCHEMA).unwrap();
        assert_eq!(schema.root, Node::Named(ANYTHING_NAME.into()));
        let value = Value::Map(vec![
            (
                Value::String("a".into()),
                Value::Array(vec![
                    Value::Int64(1),
                    Value::String("x".into()),
                    Value::Null,
                ]),
            ),
            (Value::Int32(2), Value::Boolean(true)),
            (Value::String("f".into()), Value::Float32(1.5)),
            (Value::String("raw".into()), Value::Bytes(vec![0, 255])),
            (Value::String("empty".into()), Value::Array(vec![])),
        ]);
        let mut out = Vec::new();
        encode_anything(&value, &mut out).unwrap();
        let mut reader = Reader::new(&out, &schema);
        assert_eq!(decode_anything(&mut reader).unwrap(), value);
        assert!(reader.done());
        // An int8 comes back as an int32, as with Confluent's; a struct has no schemaless form.
        let mut out = Vec::new();
        encode_anything(&Value::Int8(-4), &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0, 2, 7, 0, 0, 0, 0], "the int field set");
        let mut reader = Reader::new(&out, &schema);
        assert_eq!(decode_anything(&mut reader).unwrap(), Value::Int32(-4));
        let s = crate::data::Struct::new(crate::data::Schema::string());
        let e = encode_anything(&Value::Struct(s), &mut Vec::new()).unwrap_err();
        assert!(e.0.contains("schemaless"), "{e}");
    }
}
