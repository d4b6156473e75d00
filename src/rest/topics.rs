//! The local topic log over REST, in the shapes of Confluent REST Proxy v2 (the subset Redpanda's HTTP
//! proxy serves): topics and partitions with their offsets, producing JSON or binary records, reading a
//! partition with a long poll, and liteconnect's own `DELETE /topics/{t}`.
//!
//! Errors use REST Proxy's `{"error_code", "message"}` body, whose five-digit codes carry the HTTP
//! status in their first three digits (40401 is a 404).

use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value as Json};
use warp::http::Method;

use super::{only, ApiState, Reply, Request};
use crate::storage::{
    AppendBatch, LogRecord, PartitionOffsets, ProducedRecord, StorageError, TopicPartition,
};

/// The content type of JSON-embedded records (keys and values are JSON).
const JSON_V2: &str = "application/vnd.kafka.json.v2+json";
/// The content type of binary-embedded records (keys and values are base64).
const BINARY_V2: &str = "application/vnd.kafka.binary.v2+json";
/// The media type of REST Proxy v2's answers other than records.
const V2: &str = "application/vnd.kafka.v2+json";
/// `max_bytes` when a read does not give it.
const DEFAULT_MAX_BYTES: u64 = 1 << 20;
/// `timeout` (ms) when a read does not give it.
const DEFAULT_TIMEOUT_MS: u64 = 1_000;
/// The longest a read waits for a record.
const MAX_TIMEOUT_MS: u64 = 300_000;
/// The most records one read answers.
const MAX_RECORDS: usize = 1_000;

/// A failure answered in REST Proxy's shape.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProxyError {
    /// 40401.
    #[error("Topic {0} not found.")]
    TopicNotFound(String),
    /// 40402.
    #[error("Partition {1} of topic {0} not found.")]
    PartitionNotFound(String, String),
    /// 40403: liteconnect has no consumer instances.
    #[error("Consumer instance not found. liteconnect serves no consumer instances; read a partition with GET /topics/{{topic}}/partitions/{{partition}}/records.")]
    ConsumerInstanceNotFound,
    /// 40901: the topic is in use.
    #[error(
        "Topic {topic} is used by the connector(s) {connectors}; delete or reconfigure them first."
    )]
    TopicInUse {
        /// The topic.
        topic: String,
        /// The connectors using it, comma-separated.
        connectors: String,
    },
    /// 406: the `Accept` header names no format this route answers in.
    #[error("HTTP 406 Not Acceptable: answer formats are {JSON_V2} and {BINARY_V2}.")]
    NotAcceptable,
    /// 415: the body's `Content-Type` is not an embedded format.
    #[error("HTTP 415 Unsupported Media Type: produce with {JSON_V2} or {BINARY_V2}.")]
    UnsupportedMediaType,
    /// 42201: the body, a record or a query parameter is invalid.
    #[error("{0}")]
    Invalid(String),
    /// 50002: the log could not be read or written.
    #[error("{0}")]
    Storage(StorageError),
    /// 50002: a record asked for as JSON is not JSON.
    #[error("The record at offset {offset} could not be read as JSON ({cause}); read it as {BINARY_V2}.")]
    NotJson {
        /// The record's offset.
        offset: i64,
        /// What the JSON parser reported.
        cause: String,
    },
    /// A schema-based format's failure, with REST Proxy's code: 42201/42202 (a key or value without
    /// its schema), 42203 (JSON not of the schema), 42205 (an invalid or unknown schema), 50002 (a
    /// stored record that cannot be decoded).
    #[error("{1}")]
    Schema(u32, String),
    /// 50003: the log is full (`log.buffer.full.policy=pause`); try again later.
    #[error("{0}")]
    Retriable(String),
}

impl ProxyError {
    fn code(&self) -> u32 {
        match self {
            ProxyError::TopicNotFound(_) => 40401,
            ProxyError::PartitionNotFound(..) => 40402,
            ProxyError::ConsumerInstanceNotFound => 40403,
            ProxyError::TopicInUse { .. } => 40901,
            ProxyError::NotAcceptable => 406,
            ProxyError::UnsupportedMediaType => 415,
            ProxyError::Invalid(_) => 42201,
            ProxyError::Storage(_) | ProxyError::NotJson { .. } => 50002,
            ProxyError::Retriable(_) => 50003,
            ProxyError::Schema(code, _) => *code,
        }
    }
}

impl From<StorageError> for ProxyError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::BufferFull(m) => ProxyError::Retriable(m),
            // A full disk (or storage.max.bytes) frees up as sinks deliver and retention deletes: 503.
            e @ StorageError::DiskFull(_) => ProxyError::Retriable(e.to_string()),
            e => ProxyError::Storage(e),
        }
    }
}

impl From<ProxyError> for Reply {
    fn from(e: ProxyError) -> Reply {
        let code = e.code();
        let status = match e {
            // Try again later: 503, as a full log or disk frees up (Confluent's proxy answers 500).
            ProxyError::Retriable(_) => 503,
            _ if code >= 10_000 => code / 100,
            _ => code,
        };
        let reply = Reply::json(
            status as u16,
            &json!({"error_code": code, "message": e.to_string()}),
        );
        match e {
            ProxyError::Retriable(_) => reply.with_retry_after(1),
            _ => reply,
        }
    }
}

type Result<T = Reply> = std::result::Result<T, ProxyError>;

/// How keys and values are embedded in a request or an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// `application/vnd.kafka.json.v2+json`.
    Json,
    /// `application/vnd.kafka.binary.v2+json`.
    Binary,
}

impl Format {
    fn of(media_type: &str) -> Option<Format> {
        let essence = media_type.split(';').next().unwrap_or_default().trim();
        if essence.eq_ignore_ascii_case(JSON_V2) {
            Some(Format::Json)
        } else if essence.eq_ignore_ascii_case(BINARY_V2) {
            Some(Format::Binary)
        } else {
            None
        }
    }

    /// The format a produce body is in, from its `Content-Type`.
    fn of_body(req: &Request<'_>) -> Result<Format> {
        req.header("content-type")
            .and_then(Format::of)
            .ok_or(ProxyError::UnsupportedMediaType)
    }

    /// The format to answer records in, from `Accept`: binary when it names neither embedded format
    /// but accepts JSON (or anything).
    fn of_accept(req: &Request<'_>) -> Result<Format> {
        let Some(accept) = req.header("accept") else {
            return Ok(Format::Binary);
        };
        let types: Vec<&str> = accept.split(',').map(str::trim).collect();
        if let Some(f) = types.iter().find_map(|t| Format::of(t)) {
            return Ok(f);
        }
        let generic = ["application/json", "application/*", "*/*", ""];
        if types.iter().any(|t| {
            let essence = t.split(';').next().unwrap_or_default().trim();
            generic.iter().any(|g| essence.eq_ignore_ascii_case(g))
        }) {
            Ok(Format::Binary)
        } else {
            Err(ProxyError::NotAcceptable)
        }
    }

    fn encode(self, offset: i64, bytes: Option<&[u8]>) -> Result<Json> {
        let Some(bytes) = bytes else {
            return Ok(Json::Null);
        };
        match self {
            Format::Binary => Ok(Json::String(
                base64::engine::general_purpose::STANDARD.encode(bytes),
            )),
            Format::Json => serde_json::from_slice(bytes).map_err(|e| ProxyError::NotJson {
                offset,
                cause: e.to_string(),
            }),
        }
    }

    fn decode(self, field: &str, value: &Json) -> Result<Option<Vec<u8>>> {
        match (self, value) {
            (_, Json::Null) => Ok(None),
            (Format::Json, v) => Ok(Some(v.to_string().into_bytes())),
            (Format::Binary, Json::String(s)) => base64::engine::general_purpose::STANDARD
                .decode(s)
                .map(Some)
                .map_err(|e| {
                    ProxyError::Invalid(format!("The record's {field} is not base64: {e}"))
                }),
            (Format::Binary, _) => Err(ProxyError::Invalid(format!(
                "The record's {field} must be a base64 string or null in {BINARY_V2}."
            ))),
        }
    }
}

/// Routes `/topics/...` (`segs` without the leading `topics`).
pub(crate) async fn route(state: &ApiState, req: &Request<'_>, segs: &[&str]) -> super::Result {
    let typed = |reply: Reply| match reply.content_type {
        Some(_) => reply,
        None => reply.with_content_type(V2),
    };
    routed(state, req, segs).await.map(typed).map_err(typed)
}

async fn routed(state: &ApiState, req: &Request<'_>, segs: &[&str]) -> super::Result {
    let m = req.method;
    match segs {
        [] => {
            only(m, &[Method::GET])?;
            Ok(list(state).await?)
        }
        [t] => match *m {
            Method::GET => Ok(describe(state, t).await?),
            Method::POST => Ok(produce(state, req, t, None).await?),
            Method::DELETE => Ok(delete(state, t).await?),
            _ => Err(super::method_not_allowed()),
        },
        [t, "summary"] => {
            only(m, &[Method::GET])?;
            Ok(summary(state, t).await?)
        }
        [t, "partitions"] => {
            only(m, &[Method::GET])?;
            let count = partitions_of(state, t).await?;
            Ok(Reply::json(
                200,
                &(0..count).map(partition).collect::<Vec<_>>(),
            ))
        }
        [t, "partitions", p] => match *m {
            Method::GET => {
                let tp = existing_partition(state, t, p).await?;
                Ok(Reply::json(200, &partition(tp.partition)))
            }
            Method::POST => {
                let tp = parse_partition(t, p)?;
                Ok(produce(state, req, t, Some(tp.partition)).await?)
            }
            _ => Err(super::method_not_allowed()),
        },
        [t, "partitions", p, "offsets"] => {
            only(m, &[Method::GET])?;
            let tp = existing_partition(state, t, p).await?;
            let offsets = offsets_of(state, &tp).await?;
            Ok(Reply::json(
                200,
                &json!({"beginning_offset": offsets.beginning, "end_offset": offsets.end}),
            ))
        }
        [t, "partitions", p, "records"] => {
            only(m, &[Method::GET])?;
            Ok(read(state, req, t, p).await?)
        }
        _ => Err(super::not_found()),
    }
}

/// Answers `/consumers/...`: liteconnect has no consumer instances.
pub(crate) fn consumers() -> Reply {
    ProxyError::ConsumerInstanceNotFound.into()
}

/// A partition as REST Proxy describes it: this worker is its only broker, leader and replica.
fn partition(p: i32) -> Json {
    json!({
        "partition": p,
        "leader": 0,
        "replicas": [{"broker": 0, "leader": true, "in_sync": true}],
    })
}

async fn list(state: &ApiState) -> Result {
    let topics = state.herder.store().topics().await?;
    let names: Vec<String> = topics.into_iter().map(|(name, _)| name).collect();
    Ok(Reply::json(200, &names))
}

/// A topic's partition count; 40401 when it does not exist.
async fn partitions_of(state: &ApiState, topic: &str) -> Result<i32> {
    state
        .herder
        .store()
        .partition_count(topic.to_string())
        .await?
        .ok_or_else(|| ProxyError::TopicNotFound(topic.to_string()))
}

fn parse_partition(topic: &str, p: &str) -> Result<TopicPartition> {
    let partition = p
        .parse::<i32>()
        .ok()
        .filter(|p| *p >= 0)
        .ok_or_else(|| ProxyError::PartitionNotFound(topic.to_string(), p.to_string()))?;
    Ok(TopicPartition {
        topic: topic.to_string(),
        partition,
    })
}

/// A partition that exists: 40401 when the topic does not, 40402 when the partition does not.
async fn existing_partition(state: &ApiState, topic: &str, p: &str) -> Result<TopicPartition> {
    let count = partitions_of(state, topic).await?;
    let tp = parse_partition(topic, p)?;
    if tp.partition >= count {
        return Err(ProxyError::PartitionNotFound(
            topic.to_string(),
            p.to_string(),
        ));
    }
    Ok(tp)
}

async fn offsets_of(state: &ApiState, tp: &TopicPartition) -> Result<PartitionOffsets> {
    state
        .herder
        .store()
        .partition_offsets(tp.clone())
        .await?
        .ok_or_else(|| ProxyError::PartitionNotFound(tp.topic.clone(), tp.partition.to_string()))
}

async fn describe(state: &ApiState, topic: &str) -> Result {
    let count = partitions_of(state, topic).await?;
    let config = state.herder.worker_config();
    let setting = |v: Option<i64>| v.unwrap_or(-1).to_string();
    Ok(Reply::json(
        200,
        &json!({
            "name": topic,
            "configs": {
                "cleanup.policy": "delete",
                "retention.ms": setting(config.retention_ms),
                "retention.bytes": setting(config.retention_bytes),
            },
            "partitions": (0..count).map(partition).collect::<Vec<_>>(),
        }),
    ))
}

/// liteconnect's own: what each partition of a topic holds (offsets, records, bytes, oldest and newest
/// record timestamps), for `liteconnect topics`.
async fn summary(state: &ApiState, topic: &str) -> Result {
    let partitions = state
        .herder
        .store()
        .partition_summaries(topic.to_string())
        .await?
        .ok_or_else(|| ProxyError::TopicNotFound(topic.to_string()))?;
    Ok(Reply::json(
        200,
        &json!({"topic": topic, "partitions": partitions}),
    ))
}

/// Kafka's rule for a topic name (`Topic.validate`): 1 to 249 characters of `[a-zA-Z0-9._-]`, not `.`
/// or `..`; 42201 otherwise.
pub(crate) fn check_topic_name(topic: &str) -> Result<()> {
    let legal = topic
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !legal || topic.is_empty() || topic.len() > 249 || topic == "." || topic == ".." {
        return Err(ProxyError::Invalid(format!(
            "Invalid topic name {topic:?}: a topic name has 1 to 249 characters of [a-zA-Z0-9._-] and is not '.' or '..'."
        )));
    }
    Ok(())
}

/// A produce request's body.
#[derive(Debug, Deserialize)]
struct ProduceRequest {
    records: Vec<ProduceRecord>,
}

/// One record to produce; keys and values embedded as the `Content-Type` says.
#[derive(Debug, Deserialize)]
struct ProduceRecord {
    #[serde(default)]
    key: Json,
    #[serde(default)]
    value: Json,
    #[serde(default)]
    partition: Option<i32>,
}

/// Reads a produce body into the records to append.
pub(crate) fn produce_records(
    format: Format,
    body: &[u8],
    topic: &str,
    partition: Option<i32>,
) -> Result<Vec<ProducedRecord>> {
    check_topic_name(topic)?;
    let body: ProduceRequest = serde_json::from_slice(body)
        .map_err(|e| ProxyError::Invalid(format!("Invalid request body: {e}")))?;
    if body.records.is_empty() {
        return Err(ProxyError::Invalid(
            "The request has no records.".to_string(),
        ));
    }
    let timestamp = Some(crate::model::now_ms());
    body.records
        .iter()
        .map(|r| {
            if r.partition.is_some_and(|p| p < 0) {
                return Err(ProxyError::Invalid(format!(
                    "Invalid partition {:?}.",
                    r.partition
                )));
            }
            Ok(ProducedRecord {
                topic: topic.to_string(),
                partition: partition.or(r.partition),
                timestamp,
                key: format.decode("key", &r.key)?,
                value: format.decode("value", &r.value)?,
                headers: Vec::new(),
            })
        })
        .collect()
}

async fn produce(
    state: &ApiState,
    req: &Request<'_>,
    topic: &str,
    partition: Option<i32>,
) -> Result {
    if let Some(kind) = super::schemas::SchemaFormat::of_body(req) {
        return super::schemas::produce(state, req, kind, topic, partition).await;
    }
    let records = produce_records(Format::of_body(req)?, &req.body.bytes, topic, partition)?;
    append(state, topic, records, [None, None]).await
}

/// Appends produced records; answers their offsets with the key's and the value's schema IDs.
pub(crate) async fn append(
    state: &ApiState,
    topic: &str,
    records: Vec<ProducedRecord>,
    schema_ids: [Option<i64>; 2],
) -> Result {
    let highest = records.iter().filter_map(|r| r.partition).max();
    let batch = AppendBatch {
        records,
        ..AppendBatch::default()
    };
    let assigned = match state.herder.store().append(batch).await {
        Ok(assigned) => assigned,
        Err(StorageError::Conflict(_)) => {
            let p = highest.map_or_else(String::new, |p| p.to_string());
            return Err(ProxyError::PartitionNotFound(topic.to_string(), p));
        }
        Err(e) => return Err(e.into()),
    };
    state.herder.log_signal().notify();
    let offsets: Vec<Json> = assigned
        .iter()
        .map(|(_, partition, offset)| {
            json!({"partition": partition, "offset": offset, "error_code": null, "error": null})
        })
        .collect();
    Ok(Reply::json(
        200,
        &json!({"key_schema_id": schema_ids[0], "value_schema_id": schema_ids[1], "offsets": offsets}),
    ))
}

/// A non-negative integer query parameter, `default` when absent; 42201 when it is not one.
fn query_number(req: &Request<'_>, key: &str, default: Option<u64>) -> Result<u64> {
    match req.query.iter().find(|(k, _)| k == key) {
        Some((_, v)) => v.parse::<u64>().map_err(|_| {
            ProxyError::Invalid(format!(
                "The query parameter {key} must be a non-negative integer, not {v:?}."
            ))
        }),
        None => default
            .ok_or_else(|| ProxyError::Invalid(format!("The query parameter {key} is required."))),
    }
}

async fn read(state: &ApiState, req: &Request<'_>, topic: &str, p: &str) -> Result {
    let schema_format = super::schemas::SchemaFormat::of_accept(req);
    let format = match schema_format {
        Some(_) => Format::Binary,
        None => Format::of_accept(req)?,
    };
    let tp = existing_partition(state, topic, p).await?;
    let offset = i64::try_from(query_number(req, "offset", None)?).unwrap_or(i64::MAX);
    let max_bytes = query_number(req, "max_bytes", Some(DEFAULT_MAX_BYTES))?;
    let timeout = query_number(req, "timeout", Some(DEFAULT_TIMEOUT_MS))?.min(MAX_TIMEOUT_MS);
    let metadata = super::query_flag(&req.query, "metadata", false);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout);
    // Subscribed before the first read: an append after that read wakes the wait below.
    let signal = state.herder.log_signal();
    let mut appended = signal.subscribe();
    let records = loop {
        let records = state
            .herder
            .store()
            .read(tp.clone(), offset, MAX_RECORDS)
            .await?;
        if !records.is_empty() || signal.is_closed() {
            break records;
        }
        match tokio::time::timeout_at(deadline, appended.changed()).await {
            Ok(Ok(())) => continue,
            _ => break records,
        }
    };
    let mut kept = Vec::new();
    let mut bytes = 0u64;
    for r in records {
        let size = r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len);
        bytes += size as u64;
        if !kept.is_empty() && bytes > max_bytes {
            break;
        }
        kept.push(r);
    }
    if let Some(kind) = schema_format {
        return super::schemas::read(state, kind, kept).await;
    }
    let mut out = kept
        .iter()
        .map(|r| record_json(format, r, metadata))
        .collect::<Result<Vec<Json>>>()?;
    if super::query_flag(&req.query, "decode", false) {
        super::schemas::decorate(state, &kept, &mut out).await?;
    }
    let media_type = match format {
        Format::Json => JSON_V2,
        Format::Binary => BINARY_V2,
    };
    Ok(Reply::json(200, &out).with_content_type(media_type))
}

/// A record as REST Proxy answers it; with `metadata` (liteconnect's own `metadata=true`) also its
/// timestamp and headers, their values in base64.
fn record_json(format: Format, r: &LogRecord, metadata: bool) -> Result<Json> {
    let mut record = json!({
        "topic": r.topic,
        "key": format.encode(r.offset, r.key.as_deref())?,
        "value": format.encode(r.offset, r.value.as_deref())?,
        "partition": r.partition,
        "offset": r.offset,
    });
    if metadata {
        let headers = r
            .headers
            .iter()
            .map(|(k, v)| {
                let value = Format::Binary.encode(r.offset, v.as_deref())?;
                Ok(json!({"key": k, "value": value}))
            })
            .collect::<Result<Vec<Json>>>()?;
        record["timestamp"] = json!(r.timestamp);
        record["headers"] = Json::Array(headers);
    }
    Ok(record)
}

/// The connectors that use a topic: those that have used it (KIP-558) and the sinks subscribed to it
/// by `topics` or `topics.regex`.
async fn users(state: &ApiState, topic: &str) -> Result<Vec<String>> {
    let names = state.herder.connector_names();
    let active = state.herder.store().topic_users(topic.to_string()).await?;
    let mut users: Vec<String> = names
        .iter()
        .filter(|name| {
            active.contains(name)
                || state
                    .herder
                    .connector_config(name)
                    .is_ok_and(|config| crate::config::connector::subscribes(&config, topic))
        })
        .cloned()
        .collect();
    users.sort();
    Ok(users)
}

async fn delete(state: &ApiState, topic: &str) -> Result {
    partitions_of(state, topic).await?;
    let users = users(state, topic).await?;
    if !users.is_empty() {
        return Err(ProxyError::TopicInUse {
            topic: topic.to_string(),
            connectors: users.join(", "),
        });
    }
    if !state.herder.store().delete_topic(topic.to_string()).await? {
        return Err(ProxyError::TopicNotFound(topic.to_string()));
    }
    Ok(Reply::empty(204))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn produce_bodies_become_the_stored_bytes() {
        let body = br#"{"records":[{"key":"k","value":{"a":1},"partition":0},{"value":null}]}"#;
        let records = produce_records(Format::Json, body, "t", None).expect("valid");
        assert_eq!(records[0].key.as_deref(), Some(&b"\"k\""[..]));
        assert_eq!(records[0].value.as_deref(), Some(&b"{\"a\":1}"[..]));
        assert_eq!(records[0].partition, Some(0));
        assert_eq!(records[1].value, None);
        let body = br#"{"records":[{"value":"AAE="}]}"#;
        let records = produce_records(Format::Binary, body, "t", Some(2)).expect("valid");
        assert_eq!(records[0].value.as_deref(), Some(&[0u8, 1][..]));
        assert_eq!(records[0].partition, Some(2));
        for (format, body, topic) in [
            (Format::Json, &b"{"[..], "t"),
            (Format::Json, br#"{"records":[]}"#, "t"),
            (
                Format::Json,
                br#"{"records":[{"value":1,"partition":-1}]}"#,
                "t",
            ),
            (Format::Binary, br#"{"records":[{"value":"*"}]}"#, "t"),
            (Format::Json, br#"{"records":[{"value":1}]}"#, ".."),
            (Format::Json, br#"{"records":[{"value":1}]}"#, "a/b"),
        ] {
            let e = produce_records(format, body, topic, None).expect_err("invalid");
            assert_eq!(e.code(), 42201, "{e}");
        }
    }

    #[test]
    fn media_types_pick_the_format() {
        assert_eq!(Format::of(JSON_V2), Some(Format::Json));
        assert_eq!(
            Format::of("application/vnd.kafka.binary.v2+json; charset=utf-8"),
            Some(Format::Binary)
        );
        assert_eq!(Format::of("application/json"), None);
    }

    #[test]
    fn error_statuses_are_the_codes_first_three_digits() {
        let reply = Reply::from(ProxyError::TopicNotFound("t".into()));
        assert_eq!(reply.status, 404);
        assert_eq!(reply.body.unwrap()["error_code"], 40401);
        assert_eq!(Reply::from(ProxyError::NotAcceptable).status, 406);
    }
}
