//! `liteconnect.kafka.KafkaSinkConnector`: ships local topics to a Kafka cluster.
//!
//! Records are produced with their stored bytes (key, value, headers, timestamp) to the same partition
//! number, so each local partition keeps its order in Kafka. `flush` returns only when the cluster has
//! acknowledged every record `put` since the last flush; the worker commits the sink offsets only then.
//! While the cluster is unreachable, `flush` reports a retriable error naming the cause: nothing is
//! committed, the records stay in the local log, and the worker tries again with backoff until the cluster
//! is back (store-and-forward).
//!
//! The delivery timeout (`message.timeout.ms`, or its alias `delivery.timeout.ms`) is enforced here rather
//! than by librdkafka, which times out the oldest records of a partition while keeping the later ones,
//! and so would deliver those later ones first once the cluster is back. When the oldest record still
//! unacknowledged has waited that long, everything the producer holds is withdrawn at once and produced
//! again from the last committed offsets, in order.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::error::KafkaError;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{
    BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext, PurgeConfig,
};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;
use rdkafka::Message;

use super::client::{self, Context};
use super::schema_ids::{self, Role, SchemaIds};
use crate::connectors::{Props, SinkTask, TaskError};
use crate::data::Value;
use crate::record::SinkRecord;
use crate::storage::Store;

/// How long `put` waits for room in the producer's queue before reporting a retriable error.
const QUEUE_WAIT: Duration = Duration::from_secs(5);
/// How long one `flush` waits for acknowledgments before reporting what is still missing.
pub const FLUSH_WAIT: Duration = Duration::from_secs(3);
/// The producer keys of the delivery timeout (aliases; the later one in the settings wins).
const TIMEOUT_KEYS: [&str; 2] = ["message.timeout.ms", "delivery.timeout.ms"];
/// librdkafka's default delivery timeout, kept as the sink's default.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300_000);

/// A key or value as it is produced: the stored bytes, or the bytes with their schema ID translated.
type Bytes<'a> = Option<Cow<'a, [u8]>>;

/// Delivery bookkeeping shared with the producer's callbacks.
#[derive(Debug, Default)]
struct Deliveries {
    /// Records handed to the producer whose delivery report has not come yet: when each was handed over,
    /// by its send number (so the first entry is the oldest).
    pending: BTreeMap<usize, Instant>,
    /// Failed deliveries since the last flush.
    failed: u64,
    /// The first failure since the last flush.
    first_failure: Option<String>,
}

/// The producer's context: the shared client context plus delivery reports.
#[derive(Clone, Debug)]
struct SinkContext {
    client: Context,
    deliveries: Arc<Mutex<Deliveries>>,
}

impl ClientContext for SinkContext {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.client.log(level, fac, log_message);
    }
    fn error(&self, error: KafkaError, reason: &str) {
        self.client.error(error, reason);
    }
}

impl ProducerContext for SinkContext {
    /// The record's send number.
    type DeliveryOpaque = usize;
    fn delivery(&self, result: &DeliveryResult<'_>, sent: usize) {
        let mut d = self.deliveries.lock().expect("deliveries lock");
        d.pending.remove(&sent);
        match result {
            Ok(_) => self.client.last_error.clear(),
            Err((error, message)) => {
                d.failed += 1;
                if d.first_failure.is_none() {
                    d.first_failure = Some(format!(
                        "Delivery to {}-{} failed: {error}",
                        message.topic(),
                        message.partition()
                    ));
                }
            }
        }
    }
}

/// One Kafka sink task: a librdkafka producer.
#[derive(Default)]
pub struct KafkaSinkTask {
    producer: Option<BaseProducer<SinkContext>>,
    config: Props,
    context: Option<SinkContext>,
    topic_format: String,
    keep_partition: bool,
    /// Per local topic partition, the last offset handed to the producer since the last successful flush:
    /// a batch the worker hands over again after a rewind is not produced twice.
    enqueued: HashMap<(String, i32), i64>,
    /// The delivery timeout the sink enforces (`None`: wait for ever).
    timeout: Option<Duration>,
    /// The send number of the next record handed to the producer.
    next_send: usize,
    /// The worker's store, given before `start`.
    store: Option<Store>,
    /// With `destination.schema.registry.url`: the schema IDs of framed keys and values translated.
    schema_ids: Option<SchemaIds>,
}

fn bytes_of<'a>(what: &str, value: &'a Value) -> Result<Option<&'a [u8]>, TaskError> {
    match value {
        Value::Null => Ok(None),
        Value::Bytes(b) => Ok(Some(b.as_slice())),
        Value::String(s) => Ok(Some(s.as_bytes())),
        other => Err(TaskError::fatal(format!(
            "The Kafka sink writes bytes, but a record's {what} is a {}: use org.apache.kafka.connect.converters.ByteArrayConverter (the connector's default) or StringConverter for {what}.converter",
            other.java_class()
        ))),
    }
}

impl KafkaSinkTask {
    /// A record's key and value as they are produced: with their schema IDs translated when a
    /// destination registry is set and they are framed (see [`schema_ids`]).
    fn key_and_value<'a>(
        &mut self,
        r: &'a SinkRecord,
    ) -> Result<(Bytes<'a>, Bytes<'a>), TaskError> {
        let key = bytes_of("key", &r.record.key)?;
        let value = bytes_of("value", &r.record.value)?;
        let Some(ids) = self.schema_ids.as_mut() else {
            return Ok((key.map(Cow::Borrowed), value.map(Cow::Borrowed)));
        };
        let mut translate = |role, data: Option<&'a [u8]>| -> Result<_, TaskError> {
            Ok(match data {
                Some(d) => Some(match ids.rewrite(&r.record.topic, role, d)? {
                    Some(rewritten) => Cow::Owned(rewritten),
                    None => Cow::Borrowed(d),
                }),
                None => None,
            })
        };
        Ok((translate(Role::Key, key)?, translate(Role::Value, value)?))
    }

    fn create_producer(&mut self) -> Result<(), TaskError> {
        let context = self
            .context
            .clone()
            .ok_or_else(|| TaskError::fatal("not started"))?;
        // Idempotence on by default; Kafka's (murmur2) partitioner for `kafka.partitioning=key`.
        let mut settings = vec![
            ("enable.idempotence", "true"),
            ("partitioner", "murmur2_random"),
        ];
        settings.extend(
            client::producer_settings(&self.config)
                .into_iter()
                .filter(|(k, _)| !TIMEOUT_KEYS.contains(k)),
        );
        // librdkafka never times records out by itself: see the module's documentation.
        settings.push((TIMEOUT_KEYS[0], "0"));
        let producer: BaseProducer<SinkContext> = client::client_config("producer", settings)
            .map_err(|e| TaskError::Fatal(e.message))?
            .create_with_context(context)
            .map_err(|e| TaskError::fatal(format!("Could not create the Kafka producer: {e}")))?;
        self.producer = Some(producer);
        Ok(())
    }

    /// Whether the oldest record still unacknowledged has waited longer than the delivery timeout.
    fn timed_out(&self) -> bool {
        let d = self.deliveries();
        self.timeout.is_some_and(|t| {
            d.pending
                .first_key_value()
                .is_some_and(|(_, since)| since.elapsed() >= t)
        })
    }

    /// Withdraws everything the producer still holds (queued and in flight) after `count` records failed
    /// (`why`: the cause, when not a delivery report's), and reports it: the worker rewinds to the last
    /// committed offsets and everything after them is produced again, in order. A producer that hit a
    /// fatal error is replaced.
    fn withdraw(&mut self, count: u64, why: Option<String>) -> Result<(), TaskError> {
        let producer = self
            .producer
            .as_ref()
            .ok_or_else(|| TaskError::fatal("not started"))?;
        producer.purge(PurgeConfig::default().queue().inflight());
        let drain = Instant::now() + Duration::from_secs(10);
        while !self.deliveries().pending.is_empty() && Instant::now() < drain {
            producer.poll(Duration::from_millis(20));
        }
        let fatal = producer.client().fatal_error();
        let first = {
            let mut d = self.deliveries();
            d.failed = 0;
            d.pending.clear();
            let first = d.first_failure.take().unwrap_or_default();
            why.unwrap_or(first)
        };
        self.enqueued.clear();
        let cause = self.cause();
        if let Some((code, reason)) = fatal {
            tracing::warn!(%code, %reason, "The Kafka producer hit a fatal error; creating a new one.");
            self.producer = None;
            self.create_producer()?;
        }
        Err(TaskError::Retriable(format!(
            "{count} records were not delivered to Kafka ({first}){cause}; they will be sent again from the last committed offsets"
        )))
    }

    fn deliveries(&self) -> std::sync::MutexGuard<'_, Deliveries> {
        self.context
            .as_ref()
            .expect("started")
            .deliveries
            .lock()
            .expect("deliveries lock")
    }

    /// Fails the task when the cluster refused the producer (credentials or TLS): retrying cannot help, and
    /// nothing is lost, since offsets are committed only for acknowledged records.
    fn check_refused(&self) -> Result<(), TaskError> {
        match self
            .context
            .as_ref()
            .and_then(|c| c.client.last_error.refused())
        {
            Some(why) => Err(TaskError::Fatal(format!(
                "{why}. Correct the client settings (security.protocol, sasl.*, ssl.*) and restart the task; the records not yet delivered stay in the local log."
            ))),
            None => Ok(()),
        }
    }

    fn cause(&self) -> String {
        match self
            .context
            .as_ref()
            .and_then(|c| c.client.last_error.get())
        {
            Some(e) => format!("; last client error: {e}"),
            None => String::new(),
        }
    }
}

impl SinkTask for KafkaSinkTask {
    fn attach_store(&mut self, store: &Store) {
        self.store = Some(store.clone());
    }

    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        self.config = config.clone();
        self.schema_ids = match schema_ids::other_registry(config, schema_ids::DESTINATION_PREFIX)
            .map_err(TaskError::Fatal)?
        {
            Some(other) => {
                let store = self.store.clone().ok_or_else(|| {
                    TaskError::fatal("destination.schema.registry.url needs the worker's store")
                })?;
                Some(SchemaIds::new(store, other, false))
            }
            None => None,
        };
        self.topic_format = config
            .get(super::TOPIC_FORMAT)
            .cloned()
            .unwrap_or_else(|| "${topic}".into());
        self.timeout = delivery_timeout(&client::producer_settings(config))?;
        self.keep_partition = config
            .get(super::PARTITIONING)
            .is_none_or(|p| p.trim().eq_ignore_ascii_case("keep"));
        self.context = Some(SinkContext {
            client: Context {
                connector: config
                    .get(crate::config::keys::NAME)
                    .cloned()
                    .unwrap_or_default(),
                last_error: Default::default(),
            },
            deliveries: Arc::default(),
        });
        self.create_producer()
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        self.check_refused()?;
        if self.deliveries().failed > 0 {
            // An earlier delivery failed: the next flush reports it and the worker rewinds to the last
            // committed offsets, so these records are delivered again then, in order.
            return Ok(());
        }
        for r in records {
            let partition = r.record.kafka_partition.unwrap_or(0);
            let tp = (r.record.topic.clone(), partition);
            if self.enqueued.get(&tp).is_some_and(|o| r.kafka_offset <= *o) {
                continue;
            }
            let topic = self.topic_format.replace("${topic}", &r.record.topic);
            let (key, value) = self.key_and_value(r)?;
            let mut headers = OwnedHeaders::new_with_capacity(r.record.headers.len());
            for h in &r.record.headers {
                headers = headers.insert(Header {
                    key: &h.key,
                    value: bytes_of("header", &h.value)?,
                });
            }
            let sent = self.next_send;
            let mut record: BaseRecord<'_, [u8], [u8], usize> =
                BaseRecord::with_opaque_to(&topic, sent);
            if let Some(k) = key.as_deref() {
                record = record.key(k);
            }
            if let Some(v) = value.as_deref() {
                record = record.payload(v);
            }
            if let Some(ts) = r.record.timestamp {
                record = record.timestamp(ts);
            }
            if !r.record.headers.is_empty() {
                record = record.headers(headers);
            }
            if self.keep_partition {
                record = record.partition(partition);
            }
            let producer = self
                .producer
                .as_ref()
                .ok_or_else(|| TaskError::fatal("not started"))?;
            let deadline = Instant::now() + QUEUE_WAIT;
            loop {
                match producer.send(record) {
                    Ok(()) => break,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        if Instant::now() >= deadline {
                            self.check_refused()?;
                            return Err(TaskError::Retriable(format!(
                                "The Kafka producer's queue stayed full for {} ms: the cluster is not taking records{}",
                                QUEUE_WAIT.as_millis(),
                                self.cause()
                            )));
                        }
                        record = back;
                        producer.poll(Duration::from_millis(50));
                    }
                    Err((
                        KafkaError::MessageProduction(code @ RDKafkaErrorCode::MessageSizeTooLarge),
                        _,
                    )) => {
                        return Err(TaskError::fatal(format!(
                            "Record {}-{}@{} cannot be produced to {topic}: {code}",
                            tp.0, tp.1, r.kafka_offset
                        )))
                    }
                    Err((e, _)) => {
                        return Err(TaskError::Retriable(format!(
                            "Producing record {}-{}@{} to {topic} failed: {e}{}",
                            tp.0,
                            tp.1,
                            r.kafka_offset,
                            self.cause()
                        )))
                    }
                }
            }
            self.deliveries().pending.insert(sent, Instant::now());
            self.next_send = sent.wrapping_add(1);
            self.enqueued.insert(tp, r.kafka_offset);
        }
        if let Some(p) = &self.producer {
            p.poll(Duration::ZERO);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        let Some(producer) = self.producer.as_ref() else {
            return Err(TaskError::fatal("not started"));
        };
        let deadline = Instant::now() + FLUSH_WAIT;
        loop {
            {
                let d = self.deliveries();
                if d.failed > 0 || d.pending.is_empty() || Instant::now() >= deadline {
                    break;
                }
            }
            // Polled first: delivery reports that already came are not counted as timed out.
            producer.poll(Duration::from_millis(20));
            if self.timed_out() {
                break;
            }
        }
        self.check_refused()?;
        let (failed, pending) = {
            let d = self.deliveries();
            (d.failed, d.pending.len())
        };
        if failed > 0 {
            return self.withdraw(failed, None);
        }
        if self.timed_out() {
            let timeout = self.timeout.unwrap_or_default().as_millis();
            let why = format!("none acknowledged within message.timeout.ms, {timeout} ms");
            return self.withdraw(pending as u64, Some(why));
        }
        if pending > 0 {
            return Err(TaskError::Retriable(format!(
                "{pending} records are not yet acknowledged by the Kafka cluster after {} ms{}",
                FLUSH_WAIT.as_millis(),
                self.cause()
            )));
        }
        self.enqueued.clear();
        Ok(())
    }

    fn stop(&mut self) {
        // Dropping the producer purges what it still holds; those records were not committed.
        self.producer = None;
    }
}

/// The delivery timeout of the producer settings (`None`: 0, no timeout).
fn delivery_timeout(settings: &[(&str, &str)]) -> Result<Option<Duration>, TaskError> {
    let Some((key, value)) = settings
        .iter()
        .rev()
        .find(|(k, _)| TIMEOUT_KEYS.contains(k))
    else {
        return Ok(Some(DEFAULT_TIMEOUT));
    };
    match value.trim().parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(ms) => Ok(Some(Duration::from_millis(ms))),
        Err(_) => Err(TaskError::fatal(format!(
            "The producer setting '{key}' takes a number of milliseconds, not '{value}'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delivery_timeout_is_the_last_of_its_two_keys_and_zero_means_none() {
        assert_eq!(
            delivery_timeout(&[("acks", "all")]).unwrap(),
            Some(DEFAULT_TIMEOUT)
        );
        assert_eq!(
            delivery_timeout(&[
                ("message.timeout.ms", "2000"),
                ("delivery.timeout.ms", "700")
            ])
            .unwrap(),
            Some(Duration::from_millis(700))
        );
        assert_eq!(
            delivery_timeout(&[
                ("delivery.timeout.ms", "700"),
                ("message.timeout.ms", " 0 ")
            ])
            .unwrap(),
            None
        );
        let error = delivery_timeout(&[("message.timeout.ms", "2s")]).unwrap_err();
        assert!(
            matches!(&error, TaskError::Fatal(m) if m.contains("'message.timeout.ms'") && m.contains("'2s'")),
            "{error:?}"
        );
    }
}
