//! The Kafka-protocol listener with librdkafka as the client: produce with every codec then consume with
//! `assign()`, idempotent retries, `kill -9` after acknowledged produces, connectors on both sides, the
//! answers a UI needs, and the listener's settings and limits.

mod admin;
mod clients;
mod produce;
mod versions;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::oneshot;

use crate::common::{self, wait_for, Client, DEADLINE};
use liteconnect::RunError;

/// A worker in this process with a REST listener and a Kafka listener on ephemeral ports.
pub struct KafkaWorker {
    /// `host:port` of the Kafka listener.
    pub bootstrap: String,
    pub api: Client,
    /// The REST listener's URL.
    pub url: String,
    pub db: PathBuf,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<Result<(), RunError>>>,
}

impl KafkaWorker {
    /// Starts a worker in `dir` with `extra` settings; `kafka.listeners` defaults to
    /// `PLAINTEXT://127.0.0.1:0`. The Kafka socket is bound here, on `kafka_port` (0: a free one).
    pub async fn start(dir: &Path, extra: &[(&str, &str)], kafka_port: u16) -> KafkaWorker {
        let mut settings: Vec<(&str, &str)> = vec![("kafka.listeners", "PLAINTEXT://127.0.0.1:0")];
        settings.extend_from_slice(extra);
        let config = common::worker_config(dir, &settings);
        let db = config.storage_file.clone();
        let rest = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let kafka = tokio::net::TcpListener::bind(("127.0.0.1", kafka_port))
            .await
            .unwrap();
        let url = format!("http://{}", rest.local_addr().unwrap());
        let bootstrap = kafka.local_addr().unwrap().to_string();
        let listeners = liteconnect::Listeners {
            rest: vec![rest],
            admin: Vec::new(),
            kafka: vec![kafka],
            registry: Vec::new(),
        };
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(liteconnect::run(listeners, config, Vec::new(), async {
            let _ = rx.await;
        }));
        let api = Client::new(url.clone());
        common::healthy(&api).await;
        KafkaWorker {
            bootstrap,
            api,
            url,
            db,
            shutdown: Some(tx),
            handle: Some(handle),
        }
    }

    /// Stops the worker gracefully.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            h.await.unwrap().expect("the worker ran without error");
        }
    }
}

/// A producer of the listener with `settings` added.
pub fn producer(bootstrap: &str, settings: &[(&str, &str)]) -> BaseProducer {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("linger.ms", "5");
    for (k, v) in settings {
        c.set(*k, *v);
    }
    c.create().expect("producer")
}

/// Produces `values` (keys `k<i>`) to partition 0 of `topic` and waits until each is acknowledged; panics
/// on a delivery error.
pub fn produce_all(producer: &BaseProducer, topic: &str, values: &[String]) {
    for (i, v) in values.iter().enumerate() {
        let key = format!("k{i}");
        let record = BaseRecord::to(topic).partition(0).key(&key).payload(v);
        producer.send(record).map_err(|(e, _)| e).expect("queued");
        producer.poll(Duration::ZERO);
    }
    producer.flush(DEADLINE).expect("every record acknowledged");
}

/// Reads partitions `0..partitions` of `topic` from the beginning with `assign()` until `count` records
/// came or the deadline passed: (partition, offset, key, value) in arrival order.
pub fn consume(
    bootstrap: &str,
    settings: &[(&str, &str)],
    topic: &str,
    partitions: i32,
    count: usize,
) -> Vec<(i32, i64, Option<String>, String)> {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap)
        .set("group.id", "kafka-listener-test")
        .set("enable.auto.commit", "false");
    for (k, v) in settings {
        c.set(*k, *v);
    }
    let consumer: BaseConsumer = c.create().expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).expect("assign");
    let mut got = Vec::new();
    let end = std::time::Instant::now() + DEADLINE;
    while got.len() < count && std::time::Instant::now() < end {
        if let Some(m) = consumer.poll(Duration::from_millis(100)) {
            // Errors (the group coordinator of the stand-in group module) are not records.
            let Ok(m) = m else { continue };
            got.push((
                m.partition(),
                m.offset(),
                m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
                String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
            ));
        }
    }
    got
}

/// `prefix-0` … `prefix-(n-1)`.
pub fn numbered(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

/// Runs blocking client code off the executor.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

/// Waits until the topic log holds `n` records of `topic` (read from the database beside the worker).
pub async fn wait_for_records(db: &Path, topic: &str, n: i64) {
    let sql = format!(
        "SELECT count(*) FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = '{topic}'"
    );
    let db = db.to_path_buf();
    wait_for(&format!("{n} records in {topic}"), DEADLINE, || {
        let (db, sql) = (db.clone(), sql.clone());
        async move { (crate::kafka::db_number(&db, &sql) == n).then_some(()) }
    })
    .await
}

/// Keeps every delivery's outcome.
#[derive(Default)]
struct Deliveries(std::sync::Mutex<Vec<Result<(), KafkaError>>>);

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        let outcome = result.as_ref().map(|_| ()).map_err(|(e, _)| e.clone());
        self.0.lock().unwrap().push(outcome);
    }
}

/// Produces one record to `topic` with a 3 s message timeout and returns how its delivery ended.
pub fn deliver_one(bootstrap: &str, topic: &str) -> Result<(), KafkaError> {
    let p: BaseProducer<Deliveries> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("message.timeout.ms", "3000")
        .create_with_context(Deliveries::default())
        .unwrap();
    p.send(BaseRecord::<(), _>::to(topic).payload("one"))
        .map_err(|(e, _)| e)
        .unwrap();
    let _ = p.flush(DEADLINE);
    let outcome = p.context().0.lock().unwrap().pop();
    outcome.expect("a delivery report")
}
