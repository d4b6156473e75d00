//! How `liteconnect test` shows records: Connect data in JsonConverter's schema envelope, stored bytes
//! decoded for reading, and a text form for people.

use base64::Engine as _;
use serde_json::{json, Map, Value as Json};

use crate::converters::json::JsonConverter;
use crate::converters::Converter as _;
use crate::data::{Schema, Value};
use crate::record::ConnectRecord;

/// Connect data as JsonConverter with `schemas.enable=true` writes it: `{"schema": …, "payload": …}`,
/// or `null` for a null without a schema.
pub(crate) fn connect_data(schema: Option<&Schema>, value: &Value) -> Json {
    let converter = JsonConverter::new(Default::default());
    match converter.from_connect("", schema, value) {
        Ok(None) => Json::Null,
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).unwrap_or_else(
            |e| json!({"error": format!("unreadable JSON from the converter: {e}")}),
        ),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// A Connect record as a sink task (or a transformation) sees it.
pub(crate) fn connect_record(r: &ConnectRecord, offset: Option<i64>) -> Map<String, Json> {
    let mut out = Map::new();
    out.insert("topic".into(), json!(r.topic));
    out.insert("partition".into(), json!(r.kafka_partition));
    if let Some(offset) = offset {
        out.insert("offset".into(), json!(offset));
    }
    out.insert("timestamp".into(), json!(r.timestamp));
    out.insert("key".into(), connect_data(r.key_schema.as_deref(), &r.key));
    out.insert(
        "value".into(),
        connect_data(r.value_schema.as_deref(), &r.value),
    );
    let headers: Vec<Json> = r
        .headers
        .iter()
        .map(|h| json!({"key": h.key, "value": connect_data(h.schema.as_deref(), &h.value)}))
        .collect();
    out.insert("headers".into(), Json::Array(headers));
    out
}

/// Stored bytes for reading, under `field` (UTF-8 text, as the JSON it holds when it parses as JSON) or
/// `field_b64` (anything else), as the input of a sink test takes them.
pub(crate) fn put_bytes(out: &mut Map<String, Json>, field: &str, bytes: Option<&[u8]>) {
    let shown = match bytes {
        None => Json::Null,
        Some(b) => match std::str::from_utf8(b) {
            Ok(text) => serde_json::from_str::<Json>(text)
                .ok()
                .filter(|j| j.is_object() || j.is_array())
                .unwrap_or_else(|| Json::String(text.to_string())),
            Err(_) => {
                out.insert(
                    format!("{field}_b64"),
                    json!(base64::engine::general_purpose::STANDARD.encode(b)),
                );
                return;
            }
        },
    };
    out.insert(field.to_string(), shown);
}

/// Stored headers for reading, each `{"key", "value"}` (or `value_b64`).
pub(crate) fn stored_headers(headers: &[(String, Option<Vec<u8>>)]) -> Json {
    Json::Array(
        headers
            .iter()
            .map(|(k, v)| {
                let mut h = Map::new();
                h.insert("key".into(), json!(k));
                put_bytes(&mut h, "value", v.as_deref());
                Json::Object(h)
            })
            .collect(),
    )
}

/// One outcome as text: a heading line, then the record's parts indented.
pub fn text(outcome: &Json) -> String {
    let field = |k: &str| outcome.get(k).cloned().unwrap_or(Json::Null);
    let index = field("index");
    let result = outcome.get("result").and_then(Json::as_str).unwrap_or("?");
    let mut lines = Vec::new();
    match result {
        "dropped" => lines.push(format!(
            "#{index} dropped by transform '{}' ({}){}",
            str_of(&field("by")),
            str_of(&field("class")),
            outcome
                .get("predicate")
                .map(|p| {
                    let matched = if outcome.get("negate") == Some(&json!(true)) {
                        "did not match"
                    } else {
                        "matched"
                    };
                    format!(" as its predicate '{}' {matched}", str_of(p))
                })
                .unwrap_or_default()
        )),
        "failed" => {
            lines.push(format!(
                "#{index} failed at {} ({}): {}",
                str_of(&field("stage")),
                str_of(&field("class")),
                str_of(&field("error"))
            ));
            match outcome.get("dlq") {
                Some(dlq) => lines.push(format!(
                    "   skipped (errors.tolerance=all); to the dead letter queue {}",
                    compact(dlq)
                )),
                None if outcome.get("skipped") == Some(&json!(true)) => {
                    lines.push("   skipped (errors.tolerance=all)".into())
                }
                None => lines.push(
                    "   the task fails here (errors.tolerance=none); later records were not run"
                        .into(),
                ),
            }
        }
        "not subscribed" => lines.push(format!(
            "#{index} not delivered: the connector does not subscribe to {}",
            str_of(&field("topic"))
        )),
        _ => {
            let offset = outcome
                .get("offset")
                .map(|o| format!(" offset {o}"))
                .unwrap_or_default();
            lines.push(format!(
                "#{index} {result} → {} partition {}{offset}",
                str_of(&field("topic")),
                field("partition")
            ));
            for part in ["key", "value", "key_b64", "value_b64"] {
                if let Some(v) = outcome.get(part) {
                    lines.push(format!("   {part:<8} {}", compact(v)));
                }
            }
            if let Some(Json::Array(headers)) = outcome.get("headers") {
                for h in headers {
                    lines.push(format!("   header   {}", compact(h)));
                }
            }
            for part in ["source_partition", "source_offset"] {
                if let Some(v) = outcome.get(part) {
                    lines.push(format!("   {part} {}", compact(v)));
                }
            }
        }
    }
    if let Some(Json::Array(steps)) = outcome.get("steps") {
        for s in steps {
            lines.push(format!("   step     {}", compact(s)));
        }
    }
    lines.join("\n")
}

fn str_of(v: &Json) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

fn compact(v: &Json) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_show_as_json_text_or_base64() {
        let mut out = Map::new();
        put_bytes(&mut out, "value", Some(b"{\"a\":1}"));
        put_bytes(&mut out, "key", Some(b"42"));
        put_bytes(&mut out, "other", Some(&[0xff, 0]));
        assert_eq!(
            Json::Object(out),
            json!({"value": {"a": 1}, "key": "42", "other_b64": "/wA="})
        );
    }

    #[test]
    fn connect_data_is_the_schema_envelope() {
        assert_eq!(
            connect_data(Some(&Schema::string()), &Value::String("x".into())),
            json!({"schema": {"type": "string", "optional": false}, "payload": "x"})
        );
        assert_eq!(connect_data(None, &Value::Null), Json::Null);
    }
}
