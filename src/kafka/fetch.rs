//! Fetch with a long poll: records are read from the local log and encoded as record batches; a fetch
//! that finds fewer than `min_bytes` waits for the next append (woken by it, not by a timer) until
//! `max_wait_ms`.

use std::collections::HashMap;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::{FetchRequest, FetchResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kafka_protocol::ResponseError;
use tokio::task::JoinHandle;

use super::codec::Frame;
use super::dispatch::{respond, Broker, Reply};
use crate::storage::{LogRecord, Store, TopicPartition};

/// The most records read for one partition in one fetch.
const MAX_RECORDS: usize = 20_000;
/// The most bytes one connection's reads ahead may ask for together (each asks for its partition's
/// byte limit): a consumer of one partition with the default 1 MiB limit reads ahead, and one of many
/// partitions does not hold a megabyte per partition.
const READ_AHEAD_MAX_BYTES: usize = 4 << 20;
/// Bytes a record batch adds around its records (its header).
const BATCH_OVERHEAD: usize = 61;

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

/// What reading one partition gave: its records as record batches and the offset after the last.
struct Encoded {
    bytes: Bytes,
    next: i64,
}

/// Why a read gave no records: the storage failed or the records could not be encoded.
enum ReadError {
    Storage,
    Encode(String),
}

/// Reads records from `from` on within `max_bytes` and encodes them (at least one record when any is
/// there).
async fn read_encoded(
    store: Store,
    tp: TopicPartition,
    from: i64,
    max_bytes: usize,
) -> Result<Encoded, ReadError> {
    let wanted = (max_bytes / 64).clamp(1, MAX_RECORDS);
    let budget = max_bytes.saturating_sub(BATCH_OVERHEAD);
    let records = store
        .read_within(tp, from, wanted, budget)
        .await
        .map_err(|_| ReadError::Storage)?;
    let next = records.last().map_or(from, |r| r.offset + 1);
    let bytes = encode_batches(records).map_err(ReadError::Encode)?;
    Ok(Encoded { bytes, next })
}

/// A connection's reads started as soon as a fetch was answered, one per partition: the records that
/// follow the ones just sent, read and encoded while the client takes those in, so that its next fetch
/// finds them ready. A read is used only by a fetch of the same partition from the same offset with
/// the same byte limit, after that fetch has checked the offset against the log (records are never
/// changed once written and retention deletes from the start, so records read ahead are still the
/// log's when the offset is still in it); any other fetch of the partition drops it. Reads ahead
/// together ask for at most [`READ_AHEAD_MAX_BYTES`].
#[derive(Default)]
pub struct ReadAhead {
    pending: HashMap<TopicPartition, Pending>,
}

struct Pending {
    from: i64,
    max_bytes: usize,
    read: JoinHandle<Result<Encoded, ReadError>>,
}

impl ReadAhead {
    /// The read started for `tp` from `from` within `max_bytes`, if that is what was started.
    fn take(
        &mut self,
        tp: &TopicPartition,
        from: i64,
        max_bytes: usize,
    ) -> Option<JoinHandle<Result<Encoded, ReadError>>> {
        let pending = self.pending.remove(tp)?;
        (pending.from == from && pending.max_bytes == max_bytes).then_some(pending.read)
    }

    fn start(&mut self, store: &Store, tp: TopicPartition, from: i64, max_bytes: usize) {
        let asked: usize = self.pending.values().map(|p| p.max_bytes).sum();
        if asked.saturating_add(max_bytes) > READ_AHEAD_MAX_BYTES {
            return;
        }
        let read = tokio::spawn(read_encoded(store.clone(), tp.clone(), from, max_bytes));
        self.pending.insert(
            tp,
            Pending {
                from,
                max_bytes,
                read,
            },
        );
    }
}

/// Reads one partition from `offset`, within `max_bytes` (at least one record when any is there).
async fn read_partition(
    broker: &Broker,
    ahead: &mut ReadAhead,
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
    let started = ahead.take(&tp, offset, max_bytes);
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
    // A read ahead that ends past this log's end is not of this log (the topic was deleted and created
    // again since): read again.
    let ready = match started {
        Some(read) => match read.await {
            Ok(Ok(r)) if r.next <= offsets.end => Some(r),
            _ => None,
        },
        None => None,
    };
    let read = match ready {
        Some(r) => Ok(r),
        None => read_encoded(broker.store.clone(), tp.clone(), offset, max_bytes).await,
    };
    match read {
        Ok(r) => {
            if r.next < offsets.end {
                ahead.start(&broker.store, tp, r.next, max_bytes);
            }
            let n = r.bytes.len();
            (data.with_records(Some(r.bytes)), n)
        }
        Err(ReadError::Storage) => (
            data.with_error_code(ResponseError::KafkaStorageError.code()),
            0,
        ),
        Err(ReadError::Encode(e)) => {
            tracing::warn!(error = %e, topic, partition, "Could not encode fetched records.");
            (
                data.with_error_code(ResponseError::UnknownServerError.code()),
                0,
            )
        }
    }
}

/// One pass over every partition asked for: the answer and the bytes it carries.
async fn fetch_once(
    broker: &Broker,
    ahead: &mut ReadAhead,
    request: &FetchRequest,
) -> (FetchResponse, usize) {
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
                    ahead,
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
pub(super) async fn fetch(
    broker: &Broker,
    ahead: &mut ReadAhead,
    frame: &Frame,
    request: FetchRequest,
) -> Reply {
    let wait = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0));
    let deadline = tokio::time::Instant::now() + wait;
    let min_bytes = usize::try_from(request.min_bytes).unwrap_or(0);
    // Subscribed before the first read: an append after it wakes the wait below.
    let mut appended = broker.signal.subscribe();
    loop {
        let (response, bytes) = fetch_once(broker, ahead, &request).await;
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
            _ => return respond(frame, &fetch_once(broker, ahead, &request).await.0),
        }
    }
}
