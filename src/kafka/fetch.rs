//! Fetch with a long poll: records are read from the local log and encoded as record batches; a fetch
//! that finds fewer than `min_bytes` waits for the next append (woken by it, not by a timer) until
//! `max_wait_ms`.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::{FetchRequest, FetchResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kafka_protocol::ResponseError;

use super::codec::Frame;
use super::dispatch::{respond, Broker, Reply};
use crate::storage::{LogRecord, TopicPartition};

/// The most records read for one partition in one fetch.
const MAX_RECORDS: usize = 20_000;
/// Bytes a record batch adds around its records (its header), and each record around its data.
const BATCH_OVERHEAD: usize = 61;
const RECORD_OVERHEAD: usize = 20;

fn record_size(r: &LogRecord) -> usize {
    RECORD_OVERHEAD
        + r.key.as_ref().map_or(0, Vec::len)
        + r.value.as_ref().map_or(0, Vec::len)
        + r.headers
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len) + 4)
            .sum::<usize>()
}

/// A record of the log as the protocol crate encodes it.
pub(crate) fn to_record(r: LogRecord) -> Record {
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: r.offset,
        // The encoder keeps records in one batch while offset minus sequence stays the same.
        sequence: r.offset as i32,
        timestamp: r.timestamp.unwrap_or(-1),
        key: r.key.map(Bytes::from),
        value: r.value.map(Bytes::from),
        headers: r
            .headers
            .into_iter()
            .map(|(k, v)| (StrBytes::from_string(k), v.map(Bytes::from)))
            .collect(),
    }
}

/// Encodes records as record batches, one per run of consecutive offsets.
pub fn encode_batches(records: Vec<LogRecord>) -> Result<Bytes, String> {
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    let mut buf = BytesMut::new();
    let mut run: Vec<Record> = Vec::new();
    for r in records {
        if run.last().is_some_and(|l| l.offset + 1 != r.offset) {
            RecordBatchEncoder::encode(&mut buf, run.iter(), &options)
                .map_err(|e| e.to_string())?;
            run.clear();
        }
        run.push(to_record(r));
    }
    if !run.is_empty() {
        RecordBatchEncoder::encode(&mut buf, run.iter(), &options).map_err(|e| e.to_string())?;
    }
    Ok(buf.freeze())
}

/// Reads one partition from `offset`, within `max_bytes` (at least one record when any is there).
async fn read_partition(
    broker: &Broker,
    topic: &str,
    partition: i32,
    offset: i64,
    max_bytes: usize,
) -> (PartitionData, usize) {
    let data = PartitionData::default().with_partition_index(partition);
    let tp = TopicPartition {
        topic: topic.to_string(),
        partition,
    };
    let offsets = match broker.store.partition_offsets(tp.clone()).await {
        Ok(Some(o)) => o,
        Ok(None) => {
            return (
                data.with_error_code(ResponseError::UnknownTopicOrPartition.code()),
                0,
            )
        }
        Err(_) => {
            return (
                data.with_error_code(ResponseError::KafkaStorageError.code()),
                0,
            )
        }
    };
    let data = data
        .with_high_watermark(offsets.end)
        .with_last_stable_offset(offsets.end)
        .with_log_start_offset(offsets.beginning);
    if offset < offsets.beginning || offset > offsets.end {
        return (
            data.with_error_code(ResponseError::OffsetOutOfRange.code()),
            0,
        );
    }
    if offset == offsets.end {
        return (data.with_records(Some(Bytes::new())), 0);
    }
    let wanted = (max_bytes / 64).clamp(1, MAX_RECORDS);
    let records = match broker.store.read(tp, offset, wanted).await {
        Ok(r) => r,
        Err(_) => {
            return (
                data.with_error_code(ResponseError::KafkaStorageError.code()),
                0,
            )
        }
    };
    let mut size = BATCH_OVERHEAD;
    let keep = records
        .iter()
        .take_while(|r| {
            size += record_size(r);
            size <= max_bytes
        })
        .count()
        .max(1)
        .min(records.len());
    let records: Vec<LogRecord> = records.into_iter().take(keep).collect();
    match encode_batches(records) {
        Ok(bytes) => {
            let n = bytes.len();
            (data.with_records(Some(bytes)), n)
        }
        Err(e) => {
            tracing::warn!(error = %e, topic, partition, "Could not encode fetched records.");
            (
                data.with_error_code(ResponseError::UnknownServerError.code()),
                0,
            )
        }
    }
}

/// One pass over every partition asked for: the answer and the bytes it carries.
async fn fetch_once(broker: &Broker, request: &FetchRequest) -> (FetchResponse, usize) {
    let mut remaining = usize::try_from(request.max_bytes).unwrap_or(0).max(1);
    let mut total = 0;
    let mut responses = Vec::new();
    for t in &request.topics {
        let mut partitions = Vec::new();
        for p in &t.partitions {
            let limit = usize::try_from(p.partition_max_bytes)
                .unwrap_or(0)
                .min(remaining);
            let (data, n) = if limit == 0 && total > 0 {
                (
                    PartitionData::default()
                        .with_partition_index(p.partition)
                        .with_records(Some(Bytes::new())),
                    0,
                )
            } else {
                read_partition(
                    broker,
                    t.topic.as_str(),
                    p.partition,
                    p.fetch_offset,
                    limit.max(1),
                )
                .await
            };
            total += n;
            remaining = remaining.saturating_sub(n);
            partitions.push(data);
        }
        responses.push(
            FetchableTopicResponse::default()
                .with_topic(t.topic.clone())
                .with_partitions(partitions),
        );
    }
    (FetchResponse::default().with_responses(responses), total)
}

/// Fetch: answers once `min_bytes` are there, an error is, or `max_wait_ms` has passed.
pub(super) async fn fetch(broker: &Broker, frame: &Frame, request: FetchRequest) -> Reply {
    let wait = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0));
    let deadline = tokio::time::Instant::now() + wait;
    let min_bytes = usize::try_from(request.min_bytes).unwrap_or(0);
    // Subscribed before the first read: an append after it wakes the wait below.
    let mut appended = broker.signal.subscribe();
    loop {
        let (response, bytes) = fetch_once(broker, &request).await;
        let errors = response
            .responses
            .iter()
            .flat_map(|t| &t.partitions)
            .any(|p| p.error_code != 0);
        if bytes >= min_bytes.max(1) || errors || broker.signal.is_closed() {
            return respond(frame, &response);
        }
        match tokio::time::timeout_at(deadline, appended.changed()).await {
            Ok(Ok(())) => continue,
            _ => return respond(frame, &fetch_once(broker, &request).await.0),
        }
    }
}
