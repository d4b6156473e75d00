//! Produce and InitProducerId: record batches decoded (all four codecs) and appended to the local log,
//! one transaction per request; idempotent producers' batches checked against the last sequence numbers
//! of their partition, so a retried batch is answered with its first offsets and not stored twice.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{
    InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse, ProducerId,
};
use kafka_protocol::records::{Record, RecordBatchDecoder};
use kafka_protocol::ResponseError;

use super::codec::Frame;
use super::dispatch::{respond, Broker, Reply};
use crate::storage::{AppendBatch, ProducedRecord, StorageError};

/// How many batches per producer and partition are remembered for spotting retries (Kafka keeps five,
/// the most a client has in flight).
const REMEMBERED_BATCHES: usize = 5;

/// A batch an idempotent producer got acknowledged.
#[derive(Clone, Copy, Debug)]
struct Acked {
    epoch: i16,
    first_seq: i32,
    last_seq: i32,
    base_offset: i64,
}

/// The idempotent producers: the next producer id and, per producer and partition, the last batches.
pub struct Producers {
    next_id: AtomicI64,
    acked: tokio::sync::Mutex<HashMap<(i64, String, i32), VecDeque<Acked>>>,
}

impl Default for Producers {
    /// Producer ids start at the clock's milliseconds times 1000, so a restarted worker hands out ids
    /// above those of its previous run (unless it handed out more than a thousand per millisecond).
    fn default() -> Self {
        Producers {
            next_id: AtomicI64::new(crate::model::now_ms().max(1) * 1000),
            acked: tokio::sync::Mutex::new(HashMap::new()),
        }
    }
}

/// One partition's part of a produce request on its way into the log.
struct Part {
    topic: usize,
    partition: i32,
    records: Vec<ProducedRecord>,
    producer: Option<(i64, i16, i32, i32)>,
    error: i16,
    base_offset: i64,
}

impl Part {
    fn failed(topic: usize, partition: i32, error: ResponseError) -> Part {
        Part {
            topic,
            partition,
            records: Vec::new(),
            producer: None,
            error: error.code(),
            base_offset: -1,
        }
    }
}

/// InitProducerId: a new producer id with epoch 0 (transactions are not served).
pub(super) fn init_producer_id(
    broker: &Broker,
    frame: &Frame,
    request: &InitProducerIdRequest,
) -> Reply {
    let mut response = InitProducerIdResponse::default();
    if request.transactional_id.is_some() {
        response.error_code = ResponseError::TransactionalIdAuthorizationFailed.code();
        response.producer_id = ProducerId(-1);
        response.producer_epoch = -1;
    } else {
        response.producer_id = ProducerId(broker.producers.next_id.fetch_add(1, Ordering::SeqCst));
        response.producer_epoch = 0;
    }
    respond(frame, &response)
}

fn to_produced(topic: &str, partition: i32, r: Record) -> ProducedRecord {
    ProducedRecord {
        topic: topic.to_string(),
        partition: Some(partition),
        timestamp: (r.timestamp >= 0).then_some(r.timestamp),
        key: r.key.map(|k| k.to_vec()),
        value: r.value.map(|v| v.to_vec()),
        headers: r
            .headers
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.map(|v| v.to_vec())))
            .collect(),
    }
}

/// Decodes one partition's record batches.
async fn decode_part(
    broker: &Broker,
    topic_index: usize,
    topic: &str,
    partition: i32,
    records: Option<Bytes>,
) -> Part {
    let max = broker.settings.message_max_bytes as usize;
    let Some(mut bytes) = records else {
        return Part::failed(topic_index, partition, ResponseError::CorruptMessage);
    };
    if bytes.len() > max {
        return Part::failed(topic_index, partition, ResponseError::MessageTooLarge);
    }
    match super::metadata::partitions_of(broker, topic, true).await {
        Ok(Some(n)) if (0..n).contains(&partition) => {}
        Ok(_) => {
            return Part::failed(
                topic_index,
                partition,
                ResponseError::UnknownTopicOrPartition,
            )
        }
        Err(code) => return Part::failed(topic_index, partition, code),
    }
    let sets = match RecordBatchDecoder::decode_all(&mut bytes) {
        Ok(sets) => sets,
        Err(e) => {
            tracing::debug!(error = %e, topic, partition, "A produced record batch does not decode.");
            return Part::failed(topic_index, partition, ResponseError::CorruptMessage);
        }
    };
    let all: Vec<Record> = sets.into_iter().flat_map(|s| s.records).collect();
    let producer = match (all.first(), all.last()) {
        (Some(first), Some(last)) if first.producer_id >= 0 => Some((
            first.producer_id,
            first.producer_epoch,
            first.sequence,
            last.sequence,
        )),
        _ => None,
    };
    if all.iter().any(|r| r.transactional || r.control) {
        return Part::failed(topic_index, partition, ResponseError::InvalidRecord);
    }
    Part {
        topic: topic_index,
        partition,
        records: all
            .into_iter()
            .map(|r| to_produced(topic, partition, r))
            .collect(),
        producer,
        error: 0,
        base_offset: -1,
    }
}

/// Checks an idempotent part against what its producer got acknowledged: a retry gets its first offset
/// back (and nothing is stored), a gap is `OUT_OF_ORDER_SEQUENCE_NUMBER`.
fn check_sequence(acked: Option<&VecDeque<Acked>>, part: &mut Part) {
    let (Some((_, epoch, first, last)), Some(acked)) = (part.producer, acked) else {
        return;
    };
    if let Some(same) = acked
        .iter()
        .find(|a| a.epoch == epoch && a.first_seq == first && a.last_seq == last)
    {
        part.base_offset = same.base_offset;
        part.records.clear();
        return;
    }
    if let Some(latest) = acked.back() {
        if latest.epoch == epoch && first != latest.last_seq.wrapping_add(1) {
            part.error = ResponseError::OutOfOrderSequenceNumber.code();
            part.records.clear();
        }
    }
}

/// Remembers the batches of idempotent parts that were stored.
fn remember(
    acked: &mut HashMap<(i64, String, i32), VecDeque<Acked>>,
    request: &ProduceRequest,
    part: &Part,
) {
    let Some((pid, epoch, first_seq, last_seq)) = part.producer else {
        return;
    };
    let name = request.topic_data[part.topic].name.to_string();
    let entry = acked.entry((pid, name, part.partition)).or_default();
    entry.push_back(Acked {
        epoch,
        first_seq,
        last_seq,
        base_offset: part.base_offset,
    });
    if entry.len() > REMEMBERED_BATCHES {
        entry.pop_front();
    }
}

/// Appends the records of every part that has some, in one transaction, and sets each part's first
/// offset (or its error).
async fn append_parts(
    broker: &Broker,
    request: &ProduceRequest,
    parts: &mut [Part],
    acked: &mut HashMap<(i64, String, i32), VecDeque<Acked>>,
) {
    // How many records each part stores (none for a failed part or a retried batch).
    let counts: Vec<usize> = parts
        .iter()
        .map(|p| if p.error == 0 { p.records.len() } else { 0 })
        .collect();
    let records: Vec<ProducedRecord> = parts
        .iter_mut()
        .flat_map(|p| std::mem::take(&mut p.records))
        .collect();
    if records.is_empty() {
        return;
    }
    let batch = AppendBatch {
        records,
        ..AppendBatch::default()
    };
    match broker.store.append(batch).await {
        Ok(assigned) => {
            let mut offsets = assigned.into_iter();
            for (part, n) in parts.iter_mut().zip(&counts).filter(|(_, n)| **n > 0) {
                part.base_offset = offsets.next().map_or(-1, |(_, _, o)| o);
                offsets.by_ref().take(n - 1).for_each(drop);
                remember(acked, request, part);
            }
            broker.signal.notify();
        }
        Err(e) => {
            tracing::warn!(error = %e, "Records produced by a Kafka client could not be stored.");
            let code = storage_error(&e);
            for (part, _) in parts.iter_mut().zip(&counts).filter(|(_, n)| **n > 0) {
                part.error = code;
            }
        }
    }
}

/// Produce: every partition's batches appended in one transaction.
pub(super) async fn produce(broker: &Broker, frame: &Frame, request: ProduceRequest) -> Reply {
    let mut parts = Vec::new();
    if [0, 1, -1].contains(&request.acks) {
        for (t, topic) in request.topic_data.iter().enumerate() {
            for p in &topic.partition_data {
                let name = topic.name.as_str();
                parts.push(decode_part(broker, t, name, p.index, p.records.clone()).await);
            }
        }
        // Held across the append, so a retry on another connection waits for the original's outcome.
        let mut acked = broker.producers.acked.lock().await;
        for part in parts.iter_mut().filter(|p| p.error == 0) {
            let name = request.topic_data[part.topic].name.to_string();
            let seen = part
                .producer
                .and_then(|(pid, ..)| acked.get(&(pid, name, part.partition)));
            check_sequence(seen, part);
        }
        append_parts(broker, &request, &mut parts, &mut acked).await;
    }
    if request.acks == 0 {
        return Reply::Nothing;
    }
    respond(frame, &answer(&request, &parts))
}

/// The Kafka error for a failed append: retriable, so the client tries again.
fn storage_error(e: &StorageError) -> i16 {
    match e {
        StorageError::Conflict(_) => ResponseError::UnknownTopicOrPartition.code(),
        _ => ResponseError::KafkaStorageError.code(),
    }
}

fn answer(request: &ProduceRequest, parts: &[Part]) -> ProduceResponse {
    let invalid_acks = ![0, 1, -1].contains(&request.acks);
    let responses = request
        .topic_data
        .iter()
        .enumerate()
        .map(|(t, topic)| {
            let partition_responses = topic
                .partition_data
                .iter()
                .map(|p| {
                    let part = parts
                        .iter()
                        .find(|x| x.topic == t && x.partition == p.index);
                    let mut r = PartitionProduceResponse::default().with_index(p.index);
                    match part {
                        _ if invalid_acks => {
                            r.error_code = ResponseError::InvalidRequiredAcks.code()
                        }
                        Some(part) => {
                            r.error_code = part.error;
                            r.base_offset = part.base_offset;
                        }
                        None => r.error_code = ResponseError::UnknownServerError.code(),
                    }
                    r
                })
                .collect();
            TopicProduceResponse::default()
                .with_name(topic.name.clone())
                .with_partition_responses(partition_responses)
        })
        .collect();
    ProduceResponse::default().with_responses(responses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(producer: Option<(i64, i16, i32, i32)>) -> Part {
        Part {
            topic: 0,
            partition: 0,
            records: vec![ProducedRecord::default()],
            producer,
            error: 0,
            base_offset: -1,
        }
    }

    #[test]
    fn retries_are_answered_from_memory_and_gaps_are_out_of_order() {
        let acked: VecDeque<Acked> = [(0, 4, 100), (5, 9, 105)]
            .into_iter()
            .map(|(first_seq, last_seq, base_offset)| Acked {
                epoch: 0,
                first_seq,
                last_seq,
                base_offset,
            })
            .collect();
        let mut retry = part(Some((7, 0, 0, 4)));
        check_sequence(Some(&acked), &mut retry);
        assert_eq!((retry.error, retry.base_offset), (0, 100));
        assert!(retry.records.is_empty(), "a retry stores nothing");
        let mut next = part(Some((7, 0, 10, 12)));
        check_sequence(Some(&acked), &mut next);
        assert_eq!(next.error, 0);
        assert_eq!(next.records.len(), 1, "the next batch is stored");
        let mut gap = part(Some((7, 0, 12, 14)));
        check_sequence(Some(&acked), &mut gap);
        assert_eq!(gap.error, ResponseError::OutOfOrderSequenceNumber.code());
        let mut new_epoch = part(Some((7, 1, 0, 3)));
        check_sequence(Some(&acked), &mut new_epoch);
        assert_eq!(new_epoch.error, 0, "a new epoch starts over");
        let mut unknown = part(Some((8, 0, 40, 41)));
        check_sequence(None, &mut unknown);
        assert_eq!(
            unknown.error, 0,
            "a producer not seen since start-up is accepted"
        );
    }
}
