//! Request bodies into records: one JSON object, a JSON array of objects, newline-delimited JSON, or the
//! raw bytes, chosen by `Content-Type`. A body that does not parse yields a message and no records.

use serde_json::Value as Json;

use crate::converters::json::value_from_serde_json;
use crate::data::DataError;
use crate::data::{Schema, Value};
use crate::model::now_ms;
use crate::record::{ConnectRecord, SourceRecord};

/// How a body is read, from its `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyShape {
    /// `application/json` (or any `+json` type): one object, or an array of objects.
    Json,
    /// `application/x-ndjson`, `application/jsonl`, `application/x-jsonlines`: one object a line.
    NdJson,
    /// `text/*`: the body as one string value.
    Text,
    /// Anything else: the body as one bytes value.
    Bytes,
}

impl BodyShape {
    /// The shape for a `Content-Type` header value (absent: bytes).
    pub fn of(content_type: Option<&str>) -> BodyShape {
        let Some(ct) = content_type else {
            return BodyShape::Bytes;
        };
        let essence = ct
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if essence.contains("ndjson") || essence.contains("jsonl") || essence.contains("json-seq") {
            BodyShape::NdJson
        } else if essence == "application/json" || essence.ends_with("+json") {
            BodyShape::Json
        } else if essence.starts_with("text/") {
            BodyShape::Text
        } else {
            BodyShape::Bytes
        }
    }
}

/// Where keys come from: a header's value (the same for every record of the request) or a JSON pointer
/// into each object.
#[derive(Clone, Debug, Default)]
pub struct KeySource {
    /// The key taken from the request header of this name (`key.header`).
    pub header_value: Option<String>,
    /// The key read from each JSON object at this pointer (`key.pointer`).
    pub pointer: Option<String>,
}

/// Reads `body` as `shape` into records for `topic`. The error is the 400 answer's message.
pub fn parse(
    body: &[u8],
    shape: BodyShape,
    topic: &str,
    keys: &KeySource,
) -> Result<Vec<SourceRecord>, DataError> {
    let timestamp = now_ms();
    let objects = match shape {
        BodyShape::Json => json_objects(body)?,
        BodyShape::NdJson => ndjson_objects(body)?,
        BodyShape::Text | BodyShape::Bytes => {
            let (schema, value) = if shape == BodyShape::Text {
                let text = std::str::from_utf8(body)
                    .map_err(|e| DataError(format!("The body is not UTF-8 text: {e}")))?;
                (Schema::string(), Value::String(text.to_string()))
            } else {
                (Schema::bytes(), Value::Bytes(body.to_vec()))
            };
            let key = keys.header_value.clone();
            return Ok(vec![record(topic, key, Some(schema), value, timestamp)]);
        }
    };
    objects
        .into_iter()
        .enumerate()
        .map(|(i, object)| {
            let key = match &keys.pointer {
                Some(pointer) => object.pointer(pointer).map(key_text),
                None => keys.header_value.clone(),
            };
            let value = value_from_serde_json(&object)
                .map_err(|e| DataError(format!("Record {i} cannot be read: {e}")))?;
            Ok(record(topic, key, None, value, timestamp))
        })
        .collect()
}

/// A key read at a pointer: a string as it is, anything else as its JSON text.
fn key_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn record(
    topic: &str,
    key: Option<String>,
    value_schema: Option<crate::data::SchemaRef>,
    value: Value,
    timestamp: i64,
) -> SourceRecord {
    let mut record = ConnectRecord::new(topic, value_schema, value);
    if let Some(key) = key {
        record.key_schema = Some(Schema::optional_string());
        record.key = Value::String(key);
    }
    record.timestamp = Some(timestamp);
    SourceRecord {
        source_partition: None,
        source_offset: None,
        record,
    }
}

fn json_objects(body: &[u8]) -> Result<Vec<Json>, DataError> {
    let parsed: Json = serde_json::from_slice(body)
        .map_err(|e| DataError(format!("The body is not valid JSON: {e}")))?;
    match parsed {
        Json::Object(_) => Ok(vec![parsed]),
        Json::Array(items) => {
            if let Some(i) = items.iter().position(|item| !item.is_object()) {
                return Err(format!(
                    "Element {i} of the JSON array is not an object; the array must hold objects only"
                ).into());
            }
            Ok(items)
        }
        other => Err(format!(
            "The body must be a JSON object or an array of objects, not {}",
            json_kind(&other)
        )
        .into()),
    }
}

fn ndjson_objects(body: &[u8]) -> Result<Vec<Json>, DataError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| DataError(format!("The body is not UTF-8 text: {e}")))?;
    let mut objects = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parsed: Json = serde_json::from_str(line)
            .map_err(|e| DataError(format!("Line {} is not valid JSON: {e}", n + 1)))?;
        if !parsed.is_object() {
            return Err(format!(
                "Line {} must be a JSON object, not {}",
                n + 1,
                json_kind(&parsed)
            )
            .into());
        }
        objects.push(parsed);
    }
    Ok(objects)
}

fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> KeySource {
        KeySource::default()
    }

    #[test]
    fn shapes_follow_the_content_type() {
        assert_eq!(
            BodyShape::of(Some("application/json; charset=utf-8")),
            BodyShape::Json
        );
        assert_eq!(
            BodyShape::of(Some("application/vnd.x+json")),
            BodyShape::Json
        );
        assert_eq!(
            BodyShape::of(Some("application/x-ndjson")),
            BodyShape::NdJson
        );
        assert_eq!(BodyShape::of(Some("text/plain")), BodyShape::Text);
        assert_eq!(
            BodyShape::of(Some("application/octet-stream")),
            BodyShape::Bytes
        );
        assert_eq!(BodyShape::of(None), BodyShape::Bytes);
    }

    #[test]
    fn arrays_and_lines_give_one_record_each_with_keys_by_pointer() {
        let k = KeySource {
            header_value: None,
            pointer: Some("/id".into()),
        };
        let r = parse(br#"[{"id":1},{"id":"b"}]"#, BodyShape::Json, "t", &k).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].record.key, Value::String("1".into()));
        assert_eq!(r[1].record.key, Value::String("b".into()));
        let r = parse(b"{\"id\":1}\n\n{\"id\":2}\n", BodyShape::NdJson, "t", &k).unwrap();
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn bad_bodies_are_refused_whole() {
        let e = parse(br#"[{"a":1}, 2]"#, BodyShape::Json, "t", &keys())
            .unwrap_err()
            .to_string();
        assert!(e.contains("Element 1"), "{e}");
        let e = parse(b"{\"a\":1}\n{oops", BodyShape::NdJson, "t", &keys())
            .unwrap_err()
            .to_string();
        assert!(e.contains("Line 2"), "{e}");
        let e = parse(b"42", BodyShape::Json, "t", &keys())
            .unwrap_err()
            .to_string();
        assert!(e.contains("a number"), "{e}");
    }
}
