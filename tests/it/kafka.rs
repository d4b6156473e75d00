//! The bridge to Kafka, against librdkafka's built-in mock cluster (no external service): the Kafka sink
//! (delivery, order, outages, kill -9 of the real binary), the byte cap of the local log, and the
//! MirrorSourceConnector with its offsets. `real_broker_round_trip` runs against a real cluster: it is
//! ignored unless asked for (`LITECONNECT_KAFKA_BOOTSTRAP=host:port cargo test -- --ignored real_broker`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use liteconnect::connectors::kafka::sink::KafkaSinkTask;
use liteconnect::connectors::{Props, SinkTask, TaskError};
use liteconnect::data::Value;
use liteconnect::record::{ConnectRecord, SinkRecord};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::{json, Value as Json};

use crate::common::{self, append_lines, lines, tempdir, wait_for, wait_until, TestWorker};

/// Outages and a restart take longer than one ordinary condition.
pub(crate) const LONG: Duration = Duration::from_secs(90);

/// One record read back from Kafka.
#[derive(Clone, Debug)]
pub(crate) struct Got {
    pub(crate) partition: i32,
    pub(crate) key: Option<Vec<u8>>,
    pub(crate) value: String,
    pub(crate) headers: Vec<(String, Option<Vec<u8>>)>,
    pub(crate) timestamp: Option<i64>,
}

/// A reading consumer; `client` settings use the Java client's keys, translated as the connectors do.
fn consumer(bootstrap: &str, client: &[(String, String)]) -> BaseConsumer {
    let mut settings = vec![
        ("bootstrap.servers", bootstrap),
        ("group.id", "liteconnect-test-reader"),
        ("enable.auto.commit", "false"),
        ("enable.partition.eof", "false"),
    ];
    settings.extend(client.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    liteconnect::connectors::kafka::client::client_config("consumer", settings)
        .expect("client settings")
        .create()
        .expect("consumer")
}

/// Reads `topic` (partitions `0..partitions`) from the beginning until `until` holds for what was read, or
/// `deadline` passes; returns what was read (callers assert on it).
fn read_topic(
    bootstrap: &str,
    client: &[(String, String)],
    topic: &str,
    partitions: i32,
    deadline: Duration,
    until: impl Fn(&[Got]) -> bool,
) -> Vec<Got> {
    let c = consumer(bootstrap, client);
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    c.assign(&tpl).expect("assign");
    let mut got = Vec::new();
    let end = Instant::now() + deadline;
    // `until` is asked whenever the topic has nothing more for a moment, and every 1000 records.
    let mut check = true;
    while Instant::now() < end && !(check && until(&got)) {
        check = got.len() % 1000 == 999;
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => got.push(Got {
                partition: m.partition(),
                key: m.key().map(<[u8]>::to_vec),
                value: String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
                headers: m
                    .headers()
                    .map(|h| {
                        h.iter()
                            .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                            .collect()
                    })
                    .unwrap_or_default(),
                timestamp: m.timestamp().to_millis(),
            }),
            Some(Err(_)) | None => check = true,
        }
    }
    got
}

pub(crate) async fn read_topic_async(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    deadline: Duration,
    until: impl Fn(&[Got]) -> bool + Send + 'static,
) -> Vec<Got> {
    read_topic_with(bootstrap, Vec::new(), topic, partitions, deadline, until).await
}

/// [`read_topic_async`] with client settings (security) for the reading consumer.
async fn read_topic_with(
    bootstrap: &str,
    client: Vec<(String, String)>,
    topic: &str,
    partitions: i32,
    deadline: Duration,
    until: impl Fn(&[Got]) -> bool + Send + 'static,
) -> Vec<Got> {
    let (b, t) = (bootstrap.to_string(), topic.to_string());
    tokio::task::spawn_blocking(move || read_topic(&b, &client, &t, partitions, deadline, until))
        .await
        .unwrap()
}

/// Reads `topic` until every one of `expected` arrived (or the deadline passed).
pub(crate) async fn read_all(bootstrap: &str, topic: &str, expected: &[String]) -> Vec<Got> {
    read_all_with(bootstrap, Vec::new(), topic, expected).await
}

async fn read_all_with(
    bootstrap: &str,
    client: Vec<(String, String)>,
    topic: &str,
    expected: &[String],
) -> Vec<Got> {
    let expected = expected.to_vec();
    read_topic_with(bootstrap, client, topic, 1, LONG, move |g| {
        tally(g, &expected).0 == expected.len()
    })
    .await
}

/// Produces `values` to partition-less `topic` and waits until the cluster has them.
pub(crate) fn produce(bootstrap: &str, topic: &str, values: &[String]) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    for v in values {
        producer
            .send(BaseRecord::<(), _>::to(topic).payload(v))
            .map_err(|(e, _)| e)
            .unwrap();
    }
    producer.flush(Duration::from_secs(30)).unwrap();
}

/// Counts of what arrived: (distinct lines among `expected`, duplicates), and whether the first
/// occurrences came in order.
pub(crate) fn tally(got: &[Got], expected: &[String]) -> (usize, usize, bool) {
    let index: BTreeMap<&str, usize> = expected
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let mut seen = vec![false; expected.len()];
    let mut dups = 0;
    let mut last_first = None;
    let mut ordered = true;
    for g in got {
        let Some(&i) = index.get(g.value.as_str()) else {
            continue;
        };
        if seen[i] {
            dups += 1;
        } else {
            seen[i] = true;
            if last_first.is_some_and(|l| i < l) {
                ordered = false;
            }
            last_first = Some(i);
        }
    }
    (seen.iter().filter(|s| **s).count(), dups, ordered)
}

pub(crate) fn numbered(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}-{i:06}")).collect()
}

pub(crate) fn kafka_sink(
    name: &str,
    bootstrap: &str,
    topics: &str,
    extra: &[(&str, &str)],
) -> Json {
    let mut config = json!({
        "connector.class": "KafkaSink",
        "tasks.max": "1",
        "topics": topics,
        "bootstrap.servers": bootstrap,
    });
    for (k, v) in extra {
        config[*k] = json!(v);
    }
    json!({"name": name, "config": config})
}

/// A MirrorSourceConnector from source cluster `src`, looking for new topics every second.
pub(crate) fn mirror(name: &str, bootstrap: &str, topics: &str, extra: &[(&str, &str)]) -> Json {
    let mut config = json!({
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "src",
        "source.cluster.bootstrap.servers": bootstrap,
        "topics": topics,
        "refresh.topics.interval.seconds": "1",
        "consumer.poll.timeout.ms": "200",
    });
    for (k, v) in extra {
        config[*k] = json!(v);
    }
    json!({"name": name, "config": config})
}

fn source_with_batch(name: &str, file: &Path, topic: &str, batch: &str) -> Json {
    let mut s = common::file_source(name, file, topic);
    s["config"]["batch.size"] = json!(batch);
    s
}

pub(crate) async fn create(w: &TestWorker, body: Json) {
    let (s, b) = w.post("/connectors", body).await;
    assert_eq!(s, 201, "{b}");
}

/// The first task's trace, if any.
pub(crate) async fn task_trace(w: &TestWorker, name: &str) -> Option<String> {
    w.status(name).await["tasks"][0]["trace"]
        .as_str()
        .map(str::to_string)
}

pub(crate) fn mock() -> MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    MockCluster::new(1).expect("mock cluster")
}

/// Reads a number from the worker's database (read-only, alongside the running worker).
pub(crate) fn db_number(db: &Path, sql: &str) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open db");
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    conn.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
        .expect("query")
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_source_to_kafka_in_order_with_bytes_and_offsets() {
    let cluster = mock();
    cluster.create_topic("lines", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let expected = numbered("line", 0..20_000);
    append_lines(&input, expected.clone());
    let started = Instant::now();
    create(&w, common::file_source("src", &input, "lines")).await;
    create(&w, kafka_sink("to-kafka", &bootstrap, "lines", &[])).await;
    let n = expected.len();
    let got = read_topic_async(&bootstrap, "lines", 1, LONG, move |g| g.len() >= n).await;
    let elapsed = started.elapsed();
    let (distinct, dups, ordered) = tally(&got, &expected);
    eprintln!(
        "kafka sink: {n} records from a file through the log to the mock cluster in {:.2} s ({:.0} records/s), {dups} duplicates",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64()
    );
    assert_eq!(distinct, n, "every record arrives");
    assert_eq!(dups, 0, "no outage, no duplicates");
    assert!(ordered);
    assert_eq!(
        got.iter().map(|g| g.value.clone()).collect::<Vec<_>>(),
        expected,
        "in order"
    );
    assert!(got.iter().all(|g| g.partition == 0 && g.key.is_none()));
    assert!(got.iter().all(|g| g.timestamp.is_some()));
    // Offsets are committed once the cluster acknowledged everything.
    wait_until("the sink's offsets to reach the end", || async {
        w.get("/connectors/to-kafka/offsets").await.1["offsets"][0]["offset"]["kafka_offset"]
            == json!(n)
    })
    .await;
    assert_eq!(w.status("to-kafka").await["tasks"][0]["state"], "RUNNING");
    assert!(task_trace(&w, "to-kafka").await.is_none());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_headers_timestamps_and_partitions_are_carried_as_stored() {
    // A mirror of a Kafka topic into the log carries raw bytes; the sink ships them to another topic
    // (`topic.format`) with the same partition, key, headers and timestamp.
    let cluster = mock();
    cluster.create_topic("events", 2, 1).unwrap();
    cluster.create_topic("copy.events", 2, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    for i in 0..20 {
        let key = format!("k{i}");
        let value = format!("v{i}");
        let bytes: Vec<u8> = vec![0, 159, 146, 150, i as u8];
        producer
            .send(
                BaseRecord::to("events")
                    .partition(i % 2)
                    .key(&key)
                    .payload(&value)
                    .timestamp(1_000_000 + i64::from(i))
                    .headers(OwnedHeaders::new().insert(Header {
                        key: "bin",
                        value: Some(&bytes),
                    })),
            )
            .map_err(|(e, _)| e)
            .unwrap();
    }
    producer.flush(Duration::from_secs(10)).unwrap();
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    create(
        &w,
        json!({"name": "mirror", "config": {
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": "src", "source.cluster.bootstrap.servers": bootstrap,
            "topics": "events", "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            "consumer.poll.timeout.ms": "200"}}),
    )
    .await;
    create(
        &w,
        kafka_sink(
            "copy",
            &bootstrap,
            "events",
            &[("topic.format", "copy.${topic}")],
        ),
    )
    .await;
    let got = read_topic_async(&bootstrap, "copy.events", 2, LONG, |g| g.len() >= 20).await;
    assert_eq!(got.len(), 20, "{got:?}");
    for g in &got {
        let i: i32 = g.value.trim_start_matches('v').parse().unwrap();
        assert_eq!(g.partition, i % 2);
        assert_eq!(g.key.as_deref(), Some(format!("k{i}").as_bytes()));
        assert_eq!(g.timestamp, Some(1_000_000 + i64::from(i)));
        assert_eq!(
            g.headers,
            vec![("bin".to_string(), Some(vec![0, 159, 146, 150, i as u8]))]
        );
    }
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_down_and_back_loses_nothing() {
    let cluster = mock();
    cluster.create_topic("out", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let first = numbered("a", 0..300);
    append_lines(&input, first.clone());
    create(&w, source_with_batch("src", &input, "out", "50")).await;
    // Short delivery timeouts, so that deliveries really fail during the outage and are redone.
    create(
        &w,
        kafka_sink(
            "sink",
            &bootstrap,
            "out",
            &[("producer.override.message.timeout.ms", "2000")],
        ),
    )
    .await;
    let got = read_topic_async(&bootstrap, "out", 1, LONG, |g| g.len() >= 300).await;
    assert_eq!(tally(&got, &first).0, 300);

    cluster.broker_down(1).unwrap();
    let second = numbered("b", 0..700);
    append_lines(&input, second.clone());
    // The task stays RUNNING and its trace says why nothing is delivered.
    let trace = wait_for("a trace while the broker is down", LONG, || {
        task_trace(&w, "sink")
    })
    .await;
    assert_eq!(w.status("sink").await["tasks"][0]["state"], "RUNNING");
    assert!(trace.contains("RetriableException"), "{trace}");
    // Everything is in the local log meanwhile.
    wait_until("the source to store all lines", || async {
        db_number(&w.db, "SELECT COUNT(*) FROM records") == 1000
    })
    .await;
    let sink_offset = db_number(
        &w.db,
        "SELECT MAX(offset) FROM sink_offsets WHERE connector = 'sink'",
    );
    assert!(
        sink_offset < 1000,
        "nothing past the outage is committed: {sink_offset}"
    );

    cluster.broker_up(1).unwrap();
    let mut all = first.clone();
    all.extend(second);
    let got = read_all(&bootstrap, "out", &all).await;
    let (distinct, dups, ordered) = tally(&got, &all);
    eprintln!(
        "outage: {} records in, {} read from Kafka, {distinct} distinct, {dups} duplicates",
        all.len(),
        got.len()
    );
    assert_eq!(distinct, all.len(), "nothing lost");
    assert!(ordered, "first arrivals in order");
    wait_until("the trace to clear once delivery resumed", || async {
        task_trace(&w, "sink").await.is_none()
    })
    .await;
    w.stop().await;
}

/// The sink task alone through an outage long enough for the first records to reach their delivery
/// timeout while later ones have not: once the cluster is back, the later records must not reach Kafka
/// ahead of the earlier ones, which the worker hands over again after the failed flush.
#[test]
fn records_past_their_timeout_in_an_outage_are_not_overtaken() {
    let cluster = mock();
    cluster.create_topic("late", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let config: Props = [
        ("name", "sink"),
        ("topics", "late"),
        ("bootstrap.servers", bootstrap.as_str()),
        ("message.timeout.ms", "4000"),
        ("reconnect.backoff.max.ms", "100"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let lines = numbered("late", 0..10);
    let records = |range: std::ops::Range<usize>| -> Vec<SinkRecord> {
        range
            .map(|i| {
                let mut record = ConnectRecord::new("late", None, Value::String(lines[i].clone()));
                record.kafka_partition = Some(0);
                SinkRecord {
                    record,
                    kafka_offset: i as i64,
                }
            })
            .collect()
    };
    let mut task = KafkaSinkTask::default();
    task.start(&config).unwrap();
    cluster.broker_down(1).unwrap();
    // The scenario is one of elapsed time: the first half is put 3 s before the second, and the cluster
    // comes back after the first half's timeout (librdkafka checks timeouts once a second), well before the
    // second half's.
    let outage = Instant::now();
    task.put(&records(0..5)).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    task.put(&records(5..10)).unwrap();
    std::thread::sleep(Duration::from_millis(5200).saturating_sub(outage.elapsed()));
    cluster.broker_up(1).unwrap();
    let some = read_topic(&bootstrap, &[], "late", 1, LONG, |g| !g.is_empty());
    assert!(!some.is_empty(), "delivery resumed");
    // As the worker does: after a failed flush, everything since the last commit is put again.
    let deadline = Instant::now() + LONG;
    while let Err(e) = task.flush() {
        assert!(matches!(e, TaskError::Retriable(_)), "{e:?}");
        assert!(Instant::now() < deadline, "still failing: {e:?}");
        task.put(&records(0..10)).unwrap();
    }
    task.stop();
    let got = read_topic(&bootstrap, &[], "late", 1, LONG, |g| {
        tally(g, &lines).0 == 10
    });
    let values: Vec<&str> = got.iter().map(|g| g.value.as_str()).collect();
    let (distinct, _, ordered) = tally(&got, &lines);
    assert_eq!(distinct, 10, "nothing lost: {values:?}");
    assert!(ordered, "first arrivals in order: {values:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_killed_mid_delivery_delivers_everything_after_restart() {
    let cluster = mock();
    cluster.create_topic("k9", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let expected = numbered("k", 0..50_000);
    append_lines(&input, expected.clone());
    let bin = common::start_binary(dir.path(), &[]);
    let api = bin.api();
    common::healthy(&api).await;
    for body in [
        source_with_batch("src", &input, "k9", "100"),
        kafka_sink("sink", &bootstrap, "k9", &[]),
    ] {
        assert_eq!(api.post("/connectors", &body).await.unwrap().0, 201);
    }
    // Kill it as soon as the first records reached Kafka.
    let before = read_topic_async(&bootstrap, "k9", 1, LONG, |g| !g.is_empty()).await;
    assert!(!before.is_empty());
    bin.kill();
    let at_kill = read_topic_async(&bootstrap, "k9", 1, Duration::from_secs(2), |_| false).await;

    let bin = common::start_binary(dir.path(), &[]);
    common::healthy(&bin.api()).await;
    let got = read_all(&bootstrap, "k9", &expected).await;
    let (distinct, dups, ordered) = tally(&got, &expected);
    eprintln!(
        "kill -9: {} records in, {} in Kafka when killed, {} read after restart, {distinct} distinct, {dups} duplicates",
        expected.len(),
        at_kill.len(),
        got.len()
    );
    assert_eq!(
        distinct,
        expected.len(),
        "everything delivered at least once"
    );
    assert!(ordered);
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirror_source_into_the_log_with_mm2_offsets() {
    let cluster = mock();
    cluster.create_topic("orders", 2, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    let produce = |from: usize, to: usize| {
        for i in from..to {
            let value = format!("order-{i:04}");
            producer
                .send(
                    BaseRecord::<(), _>::to("orders")
                        .partition((i % 2) as i32)
                        .payload(&value),
                )
                .map_err(|(e, _)| e)
                .unwrap();
        }
        producer.flush(Duration::from_secs(10)).unwrap();
    };
    produce(0, 100);
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let out = dir.path().join("out.txt");
    create(
        &w,
        mirror(
            "mirror",
            &bootstrap,
            "ord.*",
            &[("topics.exclude", "orders-internal")],
        ),
    )
    .await;
    create(&w, common::file_sink("out", &out, "src.orders")).await;
    wait_until("100 mirrored lines", || async { lines(&out).len() == 100 }).await;
    let mut sorted = lines(&out);
    sorted.sort();
    assert_eq!(
        sorted,
        (0..100)
            .map(|i| format!("order-{i:04}"))
            .collect::<Vec<_>>()
    );
    // The local topic has the source's two partitions.
    assert_eq!(
        db_number(
            &w.db,
            "SELECT partitions FROM topics WHERE name = 'src.orders'"
        ),
        2
    );
    // MM2's offsets: the last mirrored offset per source partition.
    let offsets = w.get("/connectors/mirror/offsets").await.1;
    let mut found: Vec<(i64, i64)> = offsets["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            assert_eq!(o["partition"]["cluster"], "src");
            assert_eq!(o["partition"]["topic"], "orders");
            (
                o["partition"]["partition"].as_i64().unwrap(),
                o["offset"]["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(found, vec![(0, 49), (1, 49)], "{offsets}");

    // Stop, rewind partition 0 to after its 10th record (offset 9), resume: 40 records come again.
    assert_eq!(w.put_empty("/connectors/mirror/stop").await.0, 204);
    w.wait_for_state("mirror", "STOPPED", 0, "RUNNING").await;
    for (body, message) in [
        (
            json!({"offsets": [{"partition": {"topic": "orders", "partition": 0}, "offset": {"offset": 9}}]}),
            "Source partition {partition=0, topic=orders} is missing the 'cluster' key, which is required",
        ),
        (
            json!({"offsets": [{"partition": {"cluster": "src", "topic": "orders", "partition": 0}, "offset": {"position": 9}}]}),
            "is missing the 'offset' key, which is required",
        ),
        (
            json!({"offsets": [{"partition": {"cluster": "src", "topic": "orders", "partition": 0}, "offset": {"offset": "nine"}}]}),
            "for the 'offset' key, which must be an integer",
        ),
    ] {
        let (s, b) = w.patch("/connectors/mirror/offsets", body).await;
        assert_eq!(s, 400, "{b}");
        assert!(b["message"].as_str().unwrap().contains(message), "{b}");
    }
    let (s, b) = w
        .patch(
            "/connectors/mirror/offsets",
            json!({"offsets": [{"partition": {"cluster": "src", "topic": "orders", "partition": 0}, "offset": {"offset": 9}}]}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["message"],
        "The offsets for this connector have been altered successfully"
    );
    assert_eq!(w.put_empty("/connectors/mirror/resume").await.0, 202);
    wait_until("40 records of partition 0 mirrored again", || async {
        lines(&out).len() == 140
    })
    .await;
    let again: Vec<String> = lines(&out)[100..].to_vec();
    let expected: Vec<String> = (10..50).map(|i| format!("order-{:04}", i * 2)).collect();
    assert_eq!(again, expected, "partition 0 from offset 10, in order");
    // And it goes on with new records.
    produce(100, 110);
    wait_until("new records mirrored", || async {
        lines(&out).len() == 150
    })
    .await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirror_source_through_an_outage_shows_why_and_resumes() {
    let cluster = mock();
    cluster.create_topic("metrics", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let first = numbered("m", 0..50);
    produce(&bootstrap, "metrics", &first);
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let out = dir.path().join("out.txt");
    create(&w, mirror("mirror", &bootstrap, "metrics", &[])).await;
    create(&w, common::file_sink("out", &out, "src.metrics")).await;
    wait_until("50 mirrored lines", || async { lines(&out).len() == 50 }).await;

    cluster.broker_down(1).unwrap();
    let trace = wait_for("a trace while the source cluster is down", LONG, || async {
        let status = w.status("mirror").await;
        assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
        status["tasks"][0]["trace"].as_str().map(str::to_string)
    })
    .await;
    assert!(trace.contains("RetriableException"), "{trace}");
    assert!(trace.contains("source cluster src"), "{trace}");

    cluster.broker_up(1).unwrap();
    let second = numbered("n", 0..50);
    produce(&bootstrap, "metrics", &second);
    wait_until("the second 50 mirrored", || async {
        lines(&out).len() >= 100
    })
    .await;
    let mut expected = first;
    expected.extend(second);
    assert_eq!(lines(&out), expected, "each record once, in order");
    wait_until("the trace to clear once records come again", || async {
        task_trace(&w, "mirror").await.is_none()
    })
    .await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kafka_compression_type_ships_and_a_zstd_topic_mirrors() {
    let codecs = ["gzip", "snappy", "lz4", "zstd"];
    let cluster = mock();
    cluster.create_topic("plain", 1, 1).unwrap();
    for codec in codecs {
        cluster
            .create_topic(&format!("plain-{codec}"), 1, 1)
            .unwrap();
    }
    cluster.create_topic("zorders", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let expected = numbered("c", 0..300);
    append_lines(&input, expected.clone());
    create(&w, common::file_source("src", &input, "plain")).await;
    for codec in codecs {
        create(
            &w,
            kafka_sink(
                &format!("to-{codec}"),
                &bootstrap,
                "plain",
                &[
                    ("topic.format", &format!("${{topic}}-{codec}")),
                    ("compression.type", codec),
                ],
            ),
        )
        .await;
    }
    for codec in codecs {
        let got = read_all(&bootstrap, &format!("plain-{codec}"), &expected).await;
        assert_eq!(tally(&got, &expected), (300, 0, true), "{codec}");
    }

    // A topic its producers compressed with zstd mirrors into the log.
    let zstd: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("compression.type", "zstd")
        .create()
        .unwrap();
    let orders = numbered("z", 0..100);
    for v in &orders {
        zstd.send(BaseRecord::<(), _>::to("zorders").payload(v))
            .map_err(|(e, _)| e)
            .unwrap();
    }
    zstd.flush(Duration::from_secs(30)).unwrap();
    let out = dir.path().join("out.txt");
    create(&w, mirror("mirror", &bootstrap, "zorders", &[])).await;
    create(&w, common::file_sink("out", &out, "src.zorders")).await;
    wait_until("100 mirrored lines", || async { lines(&out).len() == 100 }).await;
    assert_eq!(lines(&out), orders);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byte_cap_pause_backpressures_the_source_and_loses_nothing() {
    let cluster = mock();
    cluster.create_topic("capped", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    cluster.broker_down(1).unwrap();
    let dir = tempdir();
    let w = TestWorker::start_with(
        dir.path(),
        &[
            ("log.buffer.max.bytes", "3000"),
            ("log.buffer.full.policy", "pause"),
        ],
        Vec::new(),
    )
    .await
    .unwrap();
    let input = dir.path().join("in.txt");
    let expected = numbered("capped-line", 0..400); // 18 bytes a record: 7200 bytes in all
    append_lines(&input, expected.clone());
    create(&w, source_with_batch("src", &input, "capped", "10")).await;
    create(
        &w,
        kafka_sink(
            "sink",
            &bootstrap,
            "capped",
            &[("producer.override.message.timeout.ms", "2000")],
        ),
    )
    .await;
    wait_until("the source to wait for room", || async {
        task_trace(&w, "src")
            .await
            .is_some_and(|t| t.contains("log.buffer.max.bytes"))
    })
    .await;
    assert_eq!(w.status("src").await["tasks"][0]["state"], "RUNNING");
    let stored = db_number(&w.db, "SELECT COUNT(*) FROM records");
    let bytes = db_number(&w.db, "SELECT SUM(length(value)) FROM records");
    assert!(bytes <= 3000, "the log stays under the cap: {bytes}");
    assert!(stored < 400, "the source is held back: {stored}");
    eprintln!("byte cap (pause): {stored} records ({bytes} bytes) stored while the cluster was down, cap 3000");

    cluster.broker_up(1).unwrap();
    let got = read_all(&bootstrap, "capped", &expected).await;
    let (distinct, dups, ordered) = tally(&got, &expected);
    eprintln!("byte cap (pause): 400 in, {distinct} distinct out, {dups} duplicates");
    assert_eq!(distinct, 400, "nothing dropped");
    assert!(ordered);
    wait_until("the source trace to clear", || async {
        task_trace(&w, "src").await.is_none()
    })
    .await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byte_cap_drop_oldest_keeps_the_newest_records() {
    let cluster = mock();
    cluster.create_topic("dropped", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    cluster.broker_down(1).unwrap();
    let dir = tempdir();
    let w = TestWorker::start_with(
        dir.path(),
        &[
            ("log.buffer.max.bytes", "2000"),
            ("log.buffer.full.policy", "drop_oldest"),
        ],
        Vec::new(),
    )
    .await
    .unwrap();
    let input = dir.path().join("in.txt");
    let expected = numbered("dropped-line", 0..400);
    append_lines(&input, expected.clone());
    create(&w, source_with_batch("src", &input, "dropped", "10")).await;
    create(
        &w,
        kafka_sink(
            "sink",
            &bootstrap,
            "dropped",
            &[("producer.override.message.timeout.ms", "1000")],
        ),
    )
    .await;
    // The source is never held back: it reads the whole file while the oldest records make room.
    let file_len = std::fs::metadata(&input).unwrap().len() as i64;
    wait_until("the source to read the whole file", || async {
        let offsets = w.get("/connectors/src/offsets").await.1;
        offsets["offsets"][0]["offset"]["position"] == json!(file_len)
    })
    .await;
    let first_kept = db_number(&w.db, "SELECT MIN(offset) FROM records");
    let bytes = db_number(&w.db, "SELECT SUM(length(value)) FROM records");
    assert!(first_kept > 0, "the oldest records were dropped");
    assert!(bytes <= 2000, "{bytes}");
    assert_eq!(db_number(&w.db, "SELECT MAX(offset) FROM records"), 399);
    eprintln!("byte cap (drop_oldest): {first_kept} of 400 records dropped from the log while the cluster was down, cap 2000");

    cluster.broker_up(1).unwrap();
    let kept: Vec<String> = expected[first_kept as usize..].to_vec();
    let got = read_all(&bootstrap, "dropped", &kept).await;
    let (distinct, _, ordered) = tally(&got, &kept);
    assert_eq!(
        distinct,
        kept.len(),
        "every record still in the log is delivered"
    );
    assert!(ordered);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_validation_and_offsets_shape() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let plugins = w.get("/connector-plugins").await.1;
    let classes: Vec<&str> = plugins
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["class"].as_str().unwrap())
        .collect();
    assert!(classes.contains(&"liteconnect.kafka.KafkaSinkConnector"));
    assert!(classes.contains(&"org.apache.kafka.connect.mirror.MirrorSourceConnector"));
    let (s, b) = w
        .put(
            "/connector-plugins/KafkaSink/config/validate",
            json!({"connector.class": "KafkaSink", "topics": "t", "name": "x"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(b["error_count"], 1, "{b}");
    let (s, b) = w
        .put(
            "/connector-plugins/MirrorSourceConnector/config/validate",
            json!({"connector.class": "MirrorSourceConnector", "name": "m",
                   "source.cluster.alias": "a", "source.cluster.bootstrap.servers": "x:1",
                   "replication.policy.class": "com.example.Custom", "topics": "(bad"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(b["error_count"], 2, "{b}");
    // An unknown producer setting fails the task with librdkafka's message naming it.
    create(
        &w,
        kafka_sink(
            "bad",
            "127.0.0.1:1",
            "t",
            &[("producer.override.no.such.key", "1")],
        ),
    )
    .await;
    w.wait_for_state("bad", "RUNNING", 1, "FAILED").await;
    let trace = task_trace(&w, "bad").await.unwrap();
    assert!(trace.contains("no.such.key"), "{trace}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: set LITECONNECT_KAFKA_BOOTSTRAP=host:port and run cargo test -- --ignored real_broker"]
async fn real_broker_round_trip() {
    // For a TLS or SASL listener, LITECONNECT_KAFKA_CLIENT_PROPERTIES names a Java client properties file
    // (security.protocol, sasl.*, ssl.*): the sink and the test's reader both use it. The broker must allow
    // topic auto-creation, or have a topic named liteconnect-it-<pid>.
    let bootstrap = std::env::var("LITECONNECT_KAFKA_BOOTSTRAP")
        .expect("LITECONNECT_KAFKA_BOOTSTRAP=host:port names the Kafka broker");
    // A secured broker's client settings, with the Java client's keys (translated as the connectors do).
    let client: Vec<(String, String)> = match std::env::var("LITECONNECT_KAFKA_CLIENT_PROPERTIES") {
        Ok(path) => liteconnect::config::properties::parse_properties(
            &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        )
        .unwrap_or_else(|e| panic!("{path}: {e}")),
        Err(_) => Vec::new(),
    };
    let topic = format!("liteconnect-it-{}", std::process::id());
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let expected = numbered("real", 0..1000);
    append_lines(&input, expected.clone());
    create(&w, common::file_source("src", &input, &topic)).await;
    let extra: Vec<(&str, &str)> = client
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    create(&w, kafka_sink("sink", &bootstrap, &topic, &extra)).await;
    let got = read_all_with(&bootstrap, client.clone(), &topic, &expected).await;
    let (distinct, dups, ordered) = tally(&got, &expected);
    eprintln!("real broker {bootstrap}: 1000 in, {distinct} distinct, {dups} duplicates");
    assert_eq!(distinct, 1000);
    assert!(ordered);
    w.stop().await;
}
