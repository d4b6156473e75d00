//! The quick reading of a source task's `records` answer: the line is read straight into source
//! records (no JSON tree for the answer or its records). It only reads answers that are well formed;
//! anything else is read again the general way ([`super::data::source_record`]), so that behaviour
//! and error messages do not depend on which way a line was read.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map as JsonMap, Value as Json};

use super::data::data_from_parts;
use crate::converters::json::JsonConverter;
use crate::data::values::from_json as schemaless;
use crate::data::{SchemaAndValue, Value};
use crate::record::{ConnectRecord, Header, SourceRecord};

/// A `records` answer read the quick way: its records and its `idle_ms`.
pub struct QuickRecords {
    /// The records, in order.
    pub records: Vec<SourceRecord>,
    /// When to poll again, if the program said.
    pub idle_ms: Option<u64>,
}

/// `line` as a well-formed `records` answer, or `None` when it is anything else (another message, or
/// a records answer with something to complain about, which the general reading explains).
pub fn quick_records(line: &[u8], converter: &JsonConverter) -> Option<QuickRecords> {
    // Only an object is a message (serde would also read an array as the answer's fields in order).
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let answer: Answer = serde_json::from_slice(line).ok()?;
    if answer.kind != "records" {
        return None;
    }
    let records = answer
        .records
        .into_iter()
        .map(|r| r.into_source_record(converter))
        .collect::<Option<Vec<_>>>()?;
    Some(QuickRecords {
        records,
        idle_ms: answer.idle_ms,
    })
}

#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "type")]
    kind: String,
    records: Vec<WireRecord>,
    idle_ms: Option<u64>,
}

/// A key, a value or a header value: its members as given (absent is `None`, `null` is `Some(Null)`).
#[derive(Default)]
struct Parts {
    bytes: Option<Json>,
    schema: Option<Json>,
    payload: Option<Json>,
    /// The payload, when it came after a null schema, as Connect data.
    schemaless: Option<Value>,
}

impl Parts {
    /// `None` (or absent) is a null value without a schema, as in the general reading.
    fn data(parts: Option<Parts>, converter: &JsonConverter) -> Option<SchemaAndValue> {
        let Some(p) = parts else {
            return Some(SchemaAndValue::null());
        };
        if let (None, Some(Json::Null), Some(value)) = (&p.bytes, &p.schema, p.schemaless) {
            return Some(SchemaAndValue::new(None, value));
        }
        data_from_parts(
            p.bytes.as_ref(),
            p.schema.as_ref(),
            p.payload.as_ref(),
            converter,
        )
        .ok()
        .flatten()
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum PartField {
    Bytes,
    Schema,
    Payload,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Parts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PartsVisitor)
    }
}

struct PartsVisitor;

impl<'de> Visitor<'de> for PartsVisitor {
    type Value = Parts;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
        let mut p = Parts::default();
        // A member given twice: the last one counts, as in a JSON tree.
        while let Some(field) = map.next_key::<PartField>()? {
            let slot = match field {
                PartField::Bytes => &mut p.bytes,
                PartField::Schema => &mut p.schema,
                // A payload after a null schema is schemaless: read straight into Connect data.
                PartField::Payload if matches!(p.schema, Some(Json::Null)) => {
                    p.schemaless = Some(map.next_value::<Schemaless>()?.0);
                    p.payload = None;
                    continue;
                }
                PartField::Payload => {
                    p.schemaless = None;
                    &mut p.payload
                }
                PartField::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(p)
    }
}

/// A schemaless payload read straight into Connect data, as [`schemaless`] reads its JSON tree.
struct Schemaless(Value);

impl<'de> Deserialize<'de> for Schemaless {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SchemalessVisitor).map(Schemaless)
    }
}

struct SchemalessVisitor;

impl<'de> Visitor<'de> for SchemalessVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Boolean(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int64(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(i64::try_from(n).map_or(Value::Float64(n as f64), Value::Int64))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::Float64(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Schemaless(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    /// An object goes through a JSON object, whose rules for a key given twice it keeps.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Json::deserialize(MapAccessDeserializer::new(map)).map(|j| schemaless(&j))
    }
}

/// A record's members, as given.
#[derive(Default)]
struct WireRecord {
    topic: Option<String>,
    partition: Option<i64>,
    key: Option<Parts>,
    value: Option<Parts>,
    headers: Option<Vec<WireHeader>>,
    timestamp: Option<i64>,
    source_partition: Option<JsonMap<String, Json>>,
    source_offset: Option<JsonMap<String, Json>>,
}

impl WireRecord {
    fn into_source_record(self, converter: &JsonConverter) -> Option<SourceRecord> {
        let topic = self.topic.filter(|t| !t.is_empty())?;
        let kafka_partition = match self.partition {
            None => None,
            Some(p) => Some(i32::try_from(p).ok().filter(|p| *p >= 0)?),
        };
        let key = Parts::data(self.key, converter)?;
        let value = Parts::data(self.value, converter)?;
        let headers = self
            .headers
            .unwrap_or_default()
            .into_iter()
            .map(|h| {
                let v = Parts::data(h.value, converter)?;
                Some(Header {
                    key: h.key?,
                    schema: v.schema,
                    value: v.value,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SourceRecord {
            source_partition: self.source_partition,
            source_offset: self.source_offset,
            record: ConnectRecord {
                topic,
                kafka_partition,
                key_schema: key.schema,
                key: key.value,
                value_schema: value.schema,
                value: value.value,
                timestamp: self.timestamp,
                headers,
            },
        })
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum RecordField {
    Topic,
    Partition,
    Key,
    Value,
    Headers,
    Timestamp,
    SourcePartition,
    SourceOffset,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for WireRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RecordVisitor)
    }
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = WireRecord;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireRecord, A::Error> {
        let mut r = WireRecord::default();
        while let Some(field) = map.next_key::<RecordField>()? {
            match field {
                RecordField::Topic => r.topic = Some(map.next_value()?),
                RecordField::Partition => r.partition = map.next_value()?,
                RecordField::Key => r.key = map.next_value()?,
                RecordField::Value => r.value = map.next_value()?,
                RecordField::Headers => r.headers = map.next_value()?,
                RecordField::Timestamp => r.timestamp = map.next_value()?,
                RecordField::SourcePartition => r.source_partition = map.next_value()?,
                RecordField::SourceOffset => r.source_offset = map.next_value()?,
                RecordField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(r)
    }
}

/// A header's members, as given.
#[derive(Default)]
struct WireHeader {
    key: Option<String>,
    value: Option<Parts>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum HeaderField {
    Key,
    Value,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for WireHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(HeaderVisitor)
    }
}

struct HeaderVisitor;

impl<'de> Visitor<'de> for HeaderVisitor {
    type Value = WireHeader;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a header object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireHeader, A::Error> {
        let mut h = WireHeader::default();
        while let Some(field) = map.next_key::<HeaderField>()? {
            match field {
                HeaderField::Key => h.key = Some(map.next_value()?),
                HeaderField::Value => h.value = map.next_value()?,
                HeaderField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::external::data::source_record;
    use serde_json::json;

    /// The records of `answer` the general way, or its first error.
    fn general(answer: &Json, c: &JsonConverter) -> Result<Vec<SourceRecord>, String> {
        let mut list = answer["records"].as_array().cloned().ok_or("no records")?;
        list.iter_mut().map(|r| source_record(r, c)).collect()
    }

    fn answer(records: Json) -> Json {
        json!({"type": "records", "records": records})
    }

    #[test]
    fn well_formed_answers_read_the_quick_way_as_the_general_way() {
        let c = JsonConverter::default();
        let samples = [
            json!([]),
            json!([{"topic": "t", "key": null, "value": {"schema": null, "payload": "17"},
                "source_partition": {"counter": "t"}, "source_offset": {"n": 17}}]),
            json!([{"topic": "t", "partition": 2, "timestamp": 5, "extra": [1, {"x": 2}],
                "key": {"schema": {"type": "string", "optional": false}, "payload": "a"},
                "value": {"schema": null, "payload": {"temp": 21.5, "n": [1, -2, 1e300, null],
                    "big": 18446744073709551615u64, "s": "é\"\\n"}},
                "headers": [{"key": "raw", "value": {"bytes": "AAE=", "payload": 3}},
                    {"key": "none", "value": null}, {"key": "s", "value": {"payload": true}}]}]),
            json!([{"topic": "t", "value": {"schema": {"type": "struct", "optional": false,
                "fields": [{"field": "a", "type": "int32", "optional": false}]},
                "payload": {"a": 3}}, "headers": null, "partition": null, "timestamp": null}]),
            json!([{"topic": "a", "value": {"payload": null}}, {"topic": "b", "key": {"payload": 1}}]),
        ];
        for records in samples {
            let a = answer(records);
            let line = serde_json::to_vec(&a).unwrap();
            let quick = quick_records(&line, &c).unwrap_or_else(|| panic!("not quick: {a}"));
            assert_eq!(Ok(quick.records), general(&a, &c), "{a}");
        }
        // Members given twice: the last counts, whichever way the line is read.
        let twice = br#"{"type": "records", "records": [{"topic": "t", "value": {"schema": null,
            "payload": [1, {"a": 1, "a": 2}], "payload": "x", "schema": {"type": "string"}},
            "key": {"schema": null, "payload": 1, "schema": null}}]}"#;
        let general_twice = general(&serde_json::from_slice(twice).unwrap(), &c);
        let quick = quick_records(twice, &c).map(|q| q.records);
        assert_eq!(
            quick.map_or_else(|| general_twice.clone(), Ok),
            general_twice
        );
        let idle = br#" {"type": "records", "records": [], "idle_ms": 250}"#;
        assert_eq!(quick_records(idle, &c).unwrap().idle_ms, Some(250));
    }

    #[test]
    fn anything_else_is_left_to_the_general_reading() {
        let c = JsonConverter::default();
        let bad_records = [
            json!({"value": null}),
            json!({"topic": ""}),
            json!({"topic": 5}),
            json!(["t"]),
            json!({"topic": "t", "value": 5}),
            json!({"topic": "t", "value": ["schema", "payload"]}),
            json!({"topic": "t", "value": {"schema": null}}),
            json!({"topic": "t", "value": {"bytes": null}}),
            json!({"topic": "t", "value": {"bytes": "not base64!"}}),
            json!({"topic": "t", "value": {"schema": {"type": "int32"}, "payload": "x"}}),
            json!({"topic": "t", "partition": -1}),
            json!({"topic": "t", "partition": 1.0}),
            json!({"topic": "t", "partition": 4294967296u64}),
            json!({"topic": "t", "timestamp": "soon"}),
            json!({"topic": "t", "headers": [{"value": null}]}),
            json!({"topic": "t", "headers": [["k", null]]}),
            json!({"topic": "t", "source_offset": 3}),
        ];
        for r in bad_records {
            let line = serde_json::to_vec(&answer(json!([r]))).unwrap();
            assert!(
                quick_records(&line, &c).is_none(),
                "read the quick way: {r}"
            );
        }
        for line in [
            &br#"["records", []]"#[..],
            br#"{"type": "offset_request", "partitions": []}"#,
            br#"{"type": "error", "message": "no"}"#,
            br#"{"type": "records"}"#,
            br#"{"type": "records", "records": [], "idle_ms": -1}"#,
            b"not json",
        ] {
            assert!(quick_records(line, &c).is_none());
        }
    }
}
