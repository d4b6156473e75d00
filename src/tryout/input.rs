//! Sample records for `liteconnect test`: JSON lines (or a JSON array over REST), one record each, with
//! the key, value and header values as the bytes they are in the topic.

use base64::Engine as _;
use serde_json::Value as Json;

/// Header keys and value bytes, in order.
pub type Headers = Vec<(String, Option<Vec<u8>>)>;

/// One sample record as it sits in a topic.
#[derive(Clone, Debug, PartialEq)]
pub struct InputRecord {
    /// The line of the input it came from (1-based), or its index in a REST body.
    pub line: usize,
    /// The topic; `None` takes the connector's first subscribed topic.
    pub topic: Option<String>,
    /// The partition (default 0).
    pub partition: i32,
    /// The offset (default: the record's index in the input).
    pub offset: Option<i64>,
    /// Epoch milliseconds.
    pub timestamp: Option<i64>,
    /// The key bytes; `None` is a null key.
    pub key: Option<Vec<u8>>,
    /// The value bytes; `None` is a null value (a tombstone).
    pub value: Option<Vec<u8>>,
    /// Header keys and value bytes, in order.
    pub headers: Headers,
}

/// An input that cannot be read, with the line it is on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct InputError {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads JSON lines; blank lines are skipped.
///
/// # Errors
/// The first line that is not a JSON object of a record, with its number.
pub fn parse_lines(text: &str) -> Result<Vec<InputRecord>, InputError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| InputError {
            line: i + 1,
            message,
        };
        let json: Json =
            serde_json::from_str(line).map_err(|e| fail(format!("not a JSON record: {e}")))?;
        out.push(record(i + 1, &json).map_err(fail)?);
    }
    Ok(out)
}

/// Reads records given as a JSON array (the REST body's `records`).
///
/// # Errors
/// The first element that is not a record, numbered from 1.
pub fn parse_array(records: &[Json]) -> Result<Vec<InputRecord>, InputError> {
    records
        .iter()
        .enumerate()
        .map(|(i, json)| {
            record(i + 1, json).map_err(|message| InputError {
                line: i + 1,
                message,
            })
        })
        .collect()
}

/// The fields a record may have: the first nine are read, the others (what `liteconnect test` prints
/// beside a record) are allowed and ignored, so that a source test's output is a sink test's input.
const FIELDS: [&str; 13] = [
    "topic",
    "partition",
    "offset",
    "timestamp",
    "key",
    "key_b64",
    "value",
    "value_b64",
    "headers",
    "index",
    "result",
    "source_partition",
    "source_offset",
];

/// One record from its JSON object.
///
/// # Errors
/// What is wrong with it, naming the field.
pub fn record(line: usize, json: &Json) -> Result<InputRecord, String> {
    let Some(object) = json.as_object() else {
        return Err(format!("a record is a JSON object, not {json}"));
    };
    if let Some(unknown) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field \"{unknown}\" (a record has {})",
            FIELDS[..9].join(", ")
        ));
    }
    let integer = |field: &str| -> Result<Option<i64>, String> {
        match object.get(field) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("\"{field}\" must be an integer, not {v}")),
        }
    };
    let topic = match object.get("topic") {
        None | Some(Json::Null) => None,
        Some(Json::String(t)) if !t.is_empty() => Some(t.clone()),
        Some(other) => return Err(format!("\"topic\" must be a topic name, not {other}")),
    };
    let partition = integer("partition")?.unwrap_or(0);
    let partition = i32::try_from(partition)
        .ok()
        .filter(|p| *p >= 0)
        .ok_or_else(|| format!("\"partition\" must be a partition number, not {partition}"))?;
    Ok(InputRecord {
        line,
        topic,
        partition,
        offset: integer("offset")?,
        timestamp: integer("timestamp")?,
        key: bytes_field(object, "key")?,
        value: bytes_field(object, "value")?,
        headers: headers(object.get("headers"))?,
    })
}

/// `field` or `field_b64` of `object` as bytes: a string is its UTF-8 text, any other JSON value its
/// compact JSON text, `null` or absent a null.
fn bytes_field(
    object: &serde_json::Map<String, Json>,
    field: &str,
) -> Result<Option<Vec<u8>>, String> {
    let b64 = format!("{field}_b64");
    match (object.get(field), object.get(&b64)) {
        (Some(_), Some(_)) => Err(format!("give \"{field}\" or \"{b64}\", not both")),
        (None, Some(Json::Null)) => Ok(None),
        (None, Some(Json::String(s))) => base64::engine::general_purpose::STANDARD
            .decode(s)
            .map(Some)
            .map_err(|e| format!("\"{b64}\" is not base64: {e}")),
        (None, Some(other)) => Err(format!("\"{b64}\" must be a base64 string, not {other}")),
        (Some(v), None) => Ok(json_bytes(v)),
        (None, None) => Ok(None),
    }
}

/// A JSON value as the bytes it stands for (see [`bytes_field`]).
pub fn json_bytes(v: &Json) -> Option<Vec<u8>> {
    match v {
        Json::Null => None,
        Json::String(s) => Some(s.clone().into_bytes()),
        other => Some(other.to_string().into_bytes()),
    }
}

/// `headers`: a list of `{"key": …, "value": …}` (or `value_b64`), or an object of key → value.
fn headers(json: Option<&Json>) -> Result<Headers, String> {
    match json {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Object(map)) => Ok(map
            .iter()
            .map(|(k, v)| (k.clone(), json_bytes(v)))
            .collect()),
        Some(Json::Array(list)) => list
            .iter()
            .map(|h| {
                let object = h
                    .as_object()
                    .filter(|o| {
                        o.keys()
                            .all(|k| ["key", "value", "value_b64"].contains(&k.as_str()))
                    })
                    .ok_or_else(|| {
                        format!(
                            "a header is {{\"key\": …, \"value\": …}} (or \"value_b64\"), not {h}"
                        )
                    })?;
                let key = object
                    .get("key")
                    .and_then(Json::as_str)
                    .ok_or_else(|| format!("a header needs a string \"key\": {h}"))?;
                Ok((key.to_string(), bytes_field(object, "value")?))
            })
            .collect(),
        Some(other) => Err(format!(
            "\"headers\" must be a list of {{\"key\", \"value\"}} or an object, not {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_strings_base64_and_nulls_are_the_bytes_they_stand_for() {
        let records = parse_lines(
            "{\"topic\":\"t\",\"key\":\"k\",\"value\":{\"a\":1},\"headers\":{\"h\":\"v\"}}\n\n\
             {\"topic\":\"t\",\"partition\":2,\"offset\":7,\"value_b64\":\"AAE=\",\"headers\":[{\"key\":\"x\",\"value\":null}]}\n",
        )
        .unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(records[0].value.as_deref(), Some(&b"{\"a\":1}"[..]));
        assert_eq!(records[0].headers, vec![("h".into(), Some(b"v".to_vec()))]);
        assert_eq!(records[1].line, 3);
        assert_eq!(records[1].value.as_deref(), Some(&[0u8, 1][..]));
        assert_eq!(records[1].key, None);
        assert_eq!((records[1].partition, records[1].offset), (2, Some(7)));
        assert_eq!(records[1].headers, vec![("x".into(), None)]);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse_lines("{\"value\":1}\nnot json\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.starts_with("not a JSON record"), "{e}");
        let e = parse_lines("{\"valu\":1}").unwrap_err();
        assert!(
            e.to_string().starts_with("line 1: unknown field \"valu\""),
            "{e}"
        );
        let e = parse_array(&[
            json!({"value": 1}),
            json!({"value": 1, "value_b64": "AA=="}),
        ])
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("not both"), "{e}");
        assert!(parse_array(&[json!({"partition": -1})]).is_err());
        assert!(parse_array(&[json!({"value_b64": "!!"})]).is_err());
    }
}
