//! Records as connectors and transforms see them: Connect data with schemas, before conversion to bytes
//! (source side) or after conversion from bytes (sink side).

use serde_json::{Map, Value as Json};

use crate::data::{SchemaRef, Value};

/// One header: a key and a Connect value with its schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// The header key.
    pub key: String,
    /// The value's schema, if known.
    pub schema: Option<SchemaRef>,
    /// The value.
    pub value: Value,
}

/// What source and sink records share (Kafka's `ConnectRecord`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectRecord {
    /// The topic.
    pub topic: String,
    /// The partition, when the producer chose one (always set on the sink side).
    pub kafka_partition: Option<i32>,
    /// The key's schema.
    pub key_schema: Option<SchemaRef>,
    /// The key.
    pub key: Value,
    /// The value's schema.
    pub value_schema: Option<SchemaRef>,
    /// The value.
    pub value: Value,
    /// Epoch milliseconds.
    pub timestamp: Option<i64>,
    /// Headers in order.
    pub headers: Vec<Header>,
}

impl ConnectRecord {
    /// A record with a value only.
    pub fn new(topic: impl Into<String>, value_schema: Option<SchemaRef>, value: Value) -> Self {
        ConnectRecord {
            topic: topic.into(),
            kafka_partition: None,
            key_schema: None,
            key: Value::Null,
            value_schema,
            value,
            timestamp: None,
            headers: Vec::new(),
        }
    }
}

/// A record produced by a source task, with the source partition and offset it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceRecord {
    /// Where in the source system this record came from (`{"filename": ...}` for the file source).
    pub source_partition: Option<Map<String, Json>>,
    /// How far the source has got once this record is stored (`{"position": ...}`).
    pub source_offset: Option<Map<String, Json>>,
    /// The record itself.
    pub record: ConnectRecord,
}

impl SourceRecord {
    /// A record that carries only a source offset: nothing is appended to the log, but the offset is
    /// committed with the batch it is polled in (a checkpoint of the source that covers no new record,
    /// such as an Airbyte STATE after the records of an earlier one).
    pub fn offset_only(partition: Map<String, Json>, offset: Map<String, Json>) -> Self {
        SourceRecord {
            source_partition: Some(partition),
            source_offset: Some(offset),
            record: ConnectRecord::new("", None, crate::data::Value::Null),
        }
    }

    /// Whether this is an [`SourceRecord::offset_only`] record (its topic is empty).
    pub fn is_offset_only(&self) -> bool {
        self.record.topic.is_empty()
    }
}

/// A record delivered to a sink task, with its place in the topic log.
#[derive(Clone, Debug, PartialEq)]
pub struct SinkRecord {
    /// The record itself; `kafka_partition` is always set.
    pub record: ConnectRecord,
    /// Its offset in the partition.
    pub kafka_offset: i64,
}
