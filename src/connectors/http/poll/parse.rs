//! The polling source's text handling, as the original reads it: `${offset.<field>}` templates, header
//! and parameter lists, status code ranges, response records with their offsets, and the filter that
//! skips records already seen.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value as Json};

use crate::data::DataError;
use crate::data::{SchemaBuilder, SchemaRef, Struct, Value};
use crate::model::now_ms;
use crate::record::{ConnectRecord, SourceRecord};

/// A source offset: the original keeps every field as a string.
pub type Offset = Map<String, Json>;

/// Replaces `${offset.<field>}` and `${<field>}` with the offset's field (empty when absent).
pub fn render(template: &str, offset: &Offset) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = after[..end].trim();
        let field = name.strip_prefix("offset.").unwrap_or(name);
        if let Some(v) = offset.get(field) {
            out.push_str(&text(v));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A JSON value as Jackson's `asText`: strings bare, containers empty, the rest as JSON.
fn text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null | Json::Array(_) | Json::Object(_) => String::new(),
        other => other.to_string(),
    }
}

/// Splits `a=b, c=d` (the original's `breakDownMap`) into trimmed pairs.
pub fn pairs(text: &str, items: char, pair: char) -> Result<Vec<(String, String)>, String> {
    text.split(items)
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(|item| {
            item.split_once(pair)
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| format!("Incomplete pair: {item}"))
        })
        .collect()
}

/// Headers as `Name: value, Name2: value2`, a comma inside a value escaped as `\,`.
pub fn headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&',') => {
                current.push(',');
                chars.next();
            }
            ',' => items.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    items.push(current);
    items
        .iter()
        .map(|i| i.trim())
        .filter(|i| !i.is_empty())
        .map(|item| {
            item.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| format!("Incomplete pair: {item}"))
        })
        .collect()
}

/// Status codes as `200..299, 304` (the original's ranged list).
pub fn codes(text: &str) -> Result<BTreeSet<u16>, String> {
    let mut out = BTreeSet::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let number = |s: &str| {
            s.trim()
                .parse::<u16>()
                .map_err(|_| format!("Invalid range definition {item}"))
        };
        match item.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                out.extend(a.min(b)..=a.max(b));
            }
            None => {
                out.insert(number(item)?);
            }
        }
    }
    Ok(out)
}

/// How the response is read into records.
#[derive(Clone, Debug)]
pub struct RecordParser {
    /// `http.response.list.pointer`.
    pub list: String,
    /// `http.response.record.pointer`.
    pub record: String,
    /// `http.response.record.key.pointer`, comma-separated.
    pub keys: Vec<String>,
    /// `http.response.record.timestamp.pointer`.
    pub timestamp: Option<String>,
    /// `http.response.record.offset.pointer`: offset field → pointer.
    pub offsets: Vec<(String, String)>,
    /// `kafka.topic`.
    pub topic: String,
}

/// The node at a JSON pointer, which must be there; `/` is the root.
fn at<'a>(node: &'a Json, pointer: &str) -> Result<&'a Json, DataError> {
    if pointer == "/" || pointer.is_empty() {
        return Ok(node);
    }
    node.pointer(pointer).ok_or_else(|| {
        DataError(format!(
            "The response has no value at the JSON pointer {pointer}"
        ))
    })
}

impl RecordParser {
    /// The records of a response body, in the response's order.
    pub fn parse(&self, body: &[u8]) -> Result<Vec<SourceRecord>, DataError> {
        let json: Json = serde_json::from_slice(body)
            .map_err(|e| DataError(format!("The response is not valid JSON: {e}")))?;
        let items: Vec<&Json> = match at(&json, &self.list)? {
            Json::Array(items) => items.iter().collect(),
            Json::Null => Vec::new(),
            item => vec![item],
        };
        items.into_iter().map(|item| self.record(item)).collect()
    }

    fn record(&self, item: &Json) -> Result<SourceRecord, DataError> {
        let body = match at(item, &self.record)? {
            v @ Json::Object(_) => v.to_string(),
            v => text(v),
        };
        let mut offset = Offset::new();
        for (k, p) in &self.offsets {
            offset.insert(k.clone(), Json::String(text(at(item, p)?)));
        }
        let mut joined = Vec::new();
        for p in &self.keys {
            let k = text(at(item, p)?);
            if !k.is_empty() {
                joined.push(k);
            }
        }
        let key = if !joined.is_empty() {
            joined.join("+")
        } else if let Some(Json::String(k)) = offset.get("key") {
            k.clone()
        } else {
            body_key(body.as_bytes())
        };
        let timestamp_text = match &self.timestamp {
            Some(p) => Some(text(at(item, p)?)),
            None => offset.get("timestamp").map(text),
        };
        let timestamp = match timestamp_text {
            Some(t) => Some(parse_timestamp(&t)?),
            None => None,
        };
        offset.insert("key".into(), Json::String(key.clone()));
        if let Some(ts) = timestamp {
            offset.insert("timestamp".into(), Json::String(instant_text(ts)));
        }
        Ok(mapped(&self.topic, key, body, timestamp, offset))
    }
}

/// A timestamp from the response: epoch milliseconds, or an ISO-8601 instant.
pub fn parse_timestamp(text: &str) -> Result<i64, DataError> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .map_err(|_| DataError(format!("Invalid timestamp {t}")));
    }
    DateTime::parse_from_rfc3339(t)
        .map(|d| d.timestamp_millis())
        .map_err(|e| DataError(format!("Invalid timestamp {t}: {e}")))
}

/// An instant as Java's `Instant.toString` writes it.
pub fn instant_text(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(SecondsFormat::AutoSi, true))
        .unwrap_or_default()
}

/// A key that depends only on the body, for records with no key pointer and no `key` offset.
fn body_key(body: &[u8]) -> String {
    let hash = |seed: u64| {
        body.iter().fold(seed, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let (a, b) = (hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x30;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(bytes).to_string()
}

fn schemas() -> &'static (SchemaRef, SchemaRef) {
    static SCHEMAS: OnceLock<(SchemaRef, SchemaRef)> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let key_field = || {
            SchemaBuilder::string()
                .optional()
                .doc("HTTP Record Key")
                .build()
        };
        let key = SchemaBuilder::struct_()
            .name("com.github.castorm.kafka.connect.http.Key")
            .doc("Message Key")
            .field("key", key_field())
            .build();
        let value = SchemaBuilder::struct_()
            .name("com.github.castorm.kafka.connect.http.Value")
            .doc("Message Value")
            .field(
                "value",
                SchemaBuilder::string().doc("HTTP Record Value").build(),
            )
            .field("key", key_field())
            .field(
                "timestamp",
                SchemaBuilder::int64()
                    .optional()
                    .doc("HTTP Record Timestamp")
                    .build(),
            )
            .build();
        (key, value)
    })
}

/// The original's `SchemedKvSourceRecordMapper`: key `{key}`, value `{value, key, timestamp}`, partition
/// `{}`, the record's timestamp that of the offset (now when it has none).
fn mapped(
    topic: &str,
    key: String,
    body: String,
    timestamp: Option<i64>,
    offset: Offset,
) -> SourceRecord {
    let (key_schema, value_schema) = schemas();
    let ts = timestamp.unwrap_or_else(now_ms);
    let key_struct = Struct::new(key_schema.clone())
        .with("key", Value::String(key.clone()))
        .expect("key field");
    let value_struct = Struct::new(value_schema.clone())
        .with("value", Value::String(body))
        .and_then(|s| s.with("key", Value::String(key)))
        .and_then(|s| s.with("timestamp", Value::Int64(ts)))
        .expect("value fields");
    let mut record = ConnectRecord::new(
        topic,
        Some(Arc::clone(value_schema)),
        Value::Struct(value_struct),
    );
    record.key_schema = Some(key_schema.clone());
    record.key = Value::Struct(key_struct);
    record.timestamp = Some(ts);
    SourceRecord {
        source_partition: Some(Map::new()),
        source_offset: Some(offset),
        record,
    }
}

/// The original's default order (`IMPLICIT`): newest-first responses are reversed, judged by the first
/// and last record's timestamps; `ASC` keeps the order, `DESC` reverses it.
pub fn sort(records: &mut [SourceRecord], direction: &str) {
    let reverse = match direction.to_ascii_uppercase().as_str() {
        "DESC" => true,
        "ASC" => false,
        _ => match (records.first(), records.last()) {
            (Some(a), Some(b)) if records.len() >= 2 => a.record.timestamp > b.record.timestamp,
            _ => false,
        },
    };
    if reverse {
        records.reverse();
    }
}

/// Keeps the records not yet seen: newer than the offset's timestamp, or after the record whose offset
/// is the current one.
pub fn unseen(records: Vec<SourceRecord>, offset: &Offset) -> Vec<SourceRecord> {
    let since = offset
        .get("timestamp")
        .and_then(|t| parse_timestamp(&text(t)).ok())
        .unwrap_or(0);
    let mut reached = false;
    records
        .into_iter()
        .filter(|r| {
            let keep = r.record.timestamp.unwrap_or(0) > since || reached;
            if !reached && r.source_offset.as_ref() == Some(offset) {
                reached = true;
            }
            keep
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offset(v: Json) -> Offset {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn templates_take_offset_fields() {
        let o = offset(json!({"key": "7", "timestamp": "2020-01-01T00:00:00Z"}));
        assert_eq!(
            render("/items?after=${offset.key}&t=${timestamp}&x=${none}", &o),
            "/items?after=7&t=2020-01-01T00:00:00Z&x="
        );
        assert_eq!(render("no ${ end", &o), "no ${ end");
    }

    #[test]
    fn lists_and_ranges_parse_as_the_original() {
        assert_eq!(
            pairs("key=/id, timestamp=/ts", ',', '=').unwrap(),
            vec![
                ("key".into(), "/id".into()),
                ("timestamp".into(), "/ts".into())
            ]
        );
        assert!(pairs("oops", ',', '=').is_err());
        assert_eq!(
            headers("Accept: application/json, X-A: a\\,b").unwrap(),
            vec![
                ("Accept".into(), "application/json".into()),
                ("X-A".into(), "a,b".into())
            ]
        );
        let c = codes("200..202, 304").unwrap();
        assert_eq!(c.into_iter().collect::<Vec<_>>(), vec![200, 201, 202, 304]);
        assert!(codes("x..2").is_err());
    }

    #[test]
    fn records_carry_the_original_offset_shape_and_skip_seen_ones() {
        let parser = RecordParser {
            list: "/items".into(),
            record: "/".into(),
            keys: Vec::new(),
            timestamp: None,
            offsets: vec![
                ("key".into(), "/id".into()),
                ("timestamp".into(), "/ts".into()),
            ],
            topic: "t".into(),
        };
        let body = br#"{"items":[{"id":1,"ts":1000},{"id":2,"ts":2000},{"id":3,"ts":2000}]}"#;
        let records = parser.parse(body).unwrap();
        assert_eq!(
            records[0].source_offset,
            Some(offset(
                json!({"key": "1", "timestamp": "1970-01-01T00:00:01Z"})
            ))
        );
        assert_eq!(records[0].record.timestamp, Some(1000));
        let seen = records[1].source_offset.clone().unwrap();
        let left = unseen(records, &seen);
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].source_offset.as_ref().unwrap()["key"], "3");
    }

    #[test]
    fn newest_first_responses_are_reversed() {
        let parser = RecordParser {
            list: "/".into(),
            record: "/".into(),
            keys: vec!["/id".into()],
            timestamp: Some("/ts".into()),
            offsets: Vec::new(),
            topic: "t".into(),
        };
        let mut records = parser.parse(br#"[{"id":"b","ts":"2020-01-02T00:00:00Z"},{"id":"a","ts":"2020-01-01T00:00:00Z"}]"#).unwrap();
        sort(&mut records, "IMPLICIT");
        assert_eq!(records[0].source_offset.as_ref().unwrap()["key"], "a");
    }
}
