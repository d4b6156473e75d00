//! Records on the plugin protocol: a key, a value or a header value is Connect data the way
//! JsonConverter's envelope writes it (`{"schema": …, "payload": …}`, a `null` schema for schemaless
//! data), or raw bytes (`{"bytes": "<base64>"}`).

use base64::Engine;
use serde_json::{json, Map, Value as Json};

use crate::converters::json::JsonConverter;
use crate::converters::Converter;
use crate::data::values::from_json as schemaless;
use crate::data::{Schema, SchemaAndValue, Value};
use crate::record::{ConnectRecord, Header, SinkRecord, SourceRecord};

/// Connect data from its protocol form; `null` (or absent) is a null value without a schema.
///
/// # Errors
/// Why the form is not one of the two, or JsonConverter's message for an envelope it refuses.
pub fn data_from_json(
    json: Option<&Json>,
    converter: &JsonConverter,
) -> Result<SchemaAndValue, String> {
    let Some(j) = json.filter(|j| !j.is_null()) else {
        return Ok(SchemaAndValue::null());
    };
    let neither = || format!("{j} is neither {{\"schema\", \"payload\"}} nor {{\"bytes\"}}");
    let Json::Object(m) = j else {
        return Err(neither());
    };
    data_from_parts(m.get("bytes"), m.get("schema"), m.get("payload"), converter)?
        .ok_or_else(neither)
}

/// Connect data from the members of its protocol form (each `None` when absent): `bytes` first, then
/// `payload` with its `schema`; `Ok(None)` when there is neither `bytes` nor `payload`.
///
/// # Errors
/// As [`data_from_json`].
pub fn data_from_parts(
    bytes: Option<&Json>,
    schema: Option<&Json>,
    payload: Option<&Json>,
    converter: &JsonConverter,
) -> Result<Option<SchemaAndValue>, String> {
    if let Some(b) = bytes {
        let text = b.as_str().ok_or("\"bytes\" is not a base64 string")?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("\"bytes\" is not base64: {e}"))?;
        return Ok(Some(SchemaAndValue::new(
            Some(Schema::optional_bytes()),
            Value::Bytes(bytes),
        )));
    }
    let Some(payload) = payload else {
        return Ok(None);
    };
    if schema.is_none_or(Json::is_null) {
        return Ok(Some(SchemaAndValue::new(None, schemaless(payload))));
    }
    let envelope = json!({"schema": schema.cloned().unwrap_or(Json::Null), "payload": payload});
    let text = serde_json::to_vec(&envelope).map_err(|e| e.to_string())?;
    converter
        .to_connect("", Some(&text))
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Connect data in its protocol form: JsonConverter's envelope.
///
/// # Errors
/// JsonConverter's message for a value that does not fit its schema.
pub fn data_to_json(
    schema: Option<&Schema>,
    value: &Value,
    converter: &JsonConverter,
) -> Result<Json, String> {
    match converter.from_connect("", schema, value) {
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
        Ok(None) => Ok(Json::Null),
        Err(e) => Err(e.to_string()),
    }
}

/// A record in its protocol form (without the source or sink parts).
///
/// # Errors
/// As [`data_to_json`].
pub fn record_to_json(c: &ConnectRecord, converter: &JsonConverter) -> Result<Json, String> {
    let headers = c
        .headers
        .iter()
        .map(|h| {
            Ok(json!({"key": h.key, "value": data_to_json(h.schema.as_deref(), &h.value, converter)?}))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(json!({
        "topic": c.topic,
        "partition": c.kafka_partition,
        "key": data_to_json(c.key_schema.as_deref(), &c.key, converter)?,
        "value": data_to_json(c.value_schema.as_deref(), &c.value, converter)?,
        "headers": headers,
        "timestamp": c.timestamp,
    }))
}

/// A record given to a sink, in its protocol form: the record with its offset.
///
/// # Errors
/// As [`data_to_json`].
pub fn sink_record(r: &SinkRecord, converter: &JsonConverter) -> Result<Json, String> {
    let mut j = record_to_json(&r.record, converter)?;
    j["offset"] = json!(r.kafka_offset);
    Ok(j)
}

/// The object under `key`, taken out of `record`.
fn object(record: &mut Json, key: &str) -> Result<Option<Map<String, Json>>, String> {
    match record.get_mut(key).map(Json::take) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Object(m)) => Ok(Some(m)),
        Some(other) => Err(format!("\"{key}\" is {other}, not a JSON object")),
    }
}

/// A record from its protocol form.
///
/// # Errors
/// What is wrong with it.
pub fn record_from_json(record: &Json, converter: &JsonConverter) -> Result<ConnectRecord, String> {
    let topic = record
        .get("topic")
        .and_then(Json::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("it has no topic")?;
    let key = data_from_json(record.get("key"), converter).map_err(|e| format!("key: {e}"))?;
    let value =
        data_from_json(record.get("value"), converter).map_err(|e| format!("value: {e}"))?;
    let mut headers = Vec::new();
    for h in record
        .get("headers")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let name = h
            .get("key")
            .and_then(Json::as_str)
            .ok_or("a header has no key")?;
        let v =
            data_from_json(h.get("value"), converter).map_err(|e| format!("header {name}: {e}"))?;
        headers.push(Header {
            key: name.to_owned(),
            schema: v.schema,
            value: v.value,
        });
    }
    let partition = match record.get("partition") {
        None | Some(Json::Null) => None,
        Some(p) => Some(
            p.as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .filter(|p| *p >= 0)
                .ok_or("\"partition\" is not a partition number")?,
        ),
    };
    Ok(ConnectRecord {
        topic: topic.to_owned(),
        kafka_partition: partition,
        key_schema: key.schema,
        key: key.value,
        value_schema: value.schema,
        value: value.value,
        timestamp: record.get("timestamp").and_then(Json::as_i64),
        headers,
    })
}

/// A source record from its protocol form: the record with its source partition and offset (taken out
/// of `record`, not copied).
///
/// # Errors
/// What is wrong with it.
pub fn source_record(record: &mut Json, converter: &JsonConverter) -> Result<SourceRecord, String> {
    Ok(SourceRecord {
        source_partition: object(record, "source_partition")?,
        source_offset: object(record, "source_offset")?,
        record: record_from_json(record, converter)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemaless_payloads_read_as_json_converter_reads_them() {
        let sample = json!({"a": [1, 2.5, "x", null, true], "b": {"c": -7}, "d": 1e300});
        assert_eq!(
            schemaless(&sample),
            crate::converters::json::value_from_serde_json(&sample).unwrap()
        );
    }

    #[test]
    fn envelopes_bytes_and_nulls_become_connect_data() {
        let c = JsonConverter::default();
        let r = source_record(
            &mut json!({"topic": "t", "source_partition": {"device": "a"}, "source_offset": {"seq": 3},
                "key": {"schema": {"type": "string", "optional": false}, "payload": "a"},
                "value": {"schema": null, "payload": {"temp": 21.5}},
                "headers": [{"key": "raw", "value": {"bytes": "AAE="}}], "timestamp": 5}),
            &c,
        )
        .unwrap();
        assert_eq!(r.record.key, Value::String("a".into()));
        assert!(r.record.key_schema.is_some());
        assert!(r.record.value_schema.is_none());
        assert_eq!(r.record.headers[0].value, Value::Bytes(vec![0, 1]));
        assert_eq!(r.source_offset.unwrap()["seq"], 3);
        assert_eq!(r.record.timestamp, Some(5));
        let bad = source_record(&mut json!({"topic": "t", "value": 5}), &c).unwrap_err();
        assert!(bad.contains("value:"), "{bad}");
        assert!(source_record(&mut json!({"value": null}), &c)
            .unwrap_err()
            .contains("no topic"));
    }
}
