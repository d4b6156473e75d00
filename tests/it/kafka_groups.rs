//! Consumer groups and SASL on the Kafka-protocol listener, with rdkafka as the client against the real
//! binary: a group of two members sharing four partitions, its rebalance when one leaves and its committed
//! offsets across a `kill -9`; a sink connector seen as the group `connect-<name>` with its offsets and lag;
//! SASL PLAIN and SCRAM logins, and a wrong password refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::json;

use crate::common::{self, binary_props, lines, start_binary_with, wait_until, Binary, DEADLINE};

/// Rebalances and restarts take longer than one ordinary condition.
const LONG: Duration = Duration::from_secs(90);

/// The binary with a Kafka listener (`kafka.listeners` = `listener`, port 0) and `extra` worker lines;
/// returns it with the listener's bootstrap address.
fn start(dir: &Path, listener: &str, extra: &str) -> (Binary, String) {
    let props = format!(
        "{}kafka.listeners={listener}://127.0.0.1:0\nnum.partitions=4\n{extra}",
        binary_props(dir)
    );
    let binary = start_binary_with(dir, &props, &[], 2);
    let prefix = format!("{listener}://");
    let bootstrap = binary
        .urls
        .iter()
        .find_map(|u| u.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no Kafka listener among {:?}", binary.urls))
        .to_string();
    (binary, bootstrap)
}

/// The REST address of a binary started by [`start`].
fn rest(binary: &Binary) -> crate::common::Client {
    let url = binary
        .urls
        .iter()
        .find(|u| u.starts_with("http"))
        .expect("a REST listener");
    crate::common::Client::new(url.clone())
}

fn client(bootstrap: &str, extra: &[(&str, &str)]) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    for (k, v) in extra {
        config.set(*k, *v);
    }
    config
}

fn produce(bootstrap: &str, extra: &[(&str, &str)], topic: &str, values: &[(i32, String)]) {
    let producer: BaseProducer = client(bootstrap, extra)
        .set("acks", "all")
        .create()
        .expect("producer");
    for (partition, value) in values {
        producer
            .send(
                BaseRecord::<(), _>::to(topic)
                    .partition(*partition)
                    .payload(value),
            )
            .expect("queued");
    }
    producer.flush(DEADLINE).expect("every record acknowledged");
}

fn group_member(bootstrap: &str, group: &str, topic: &str) -> BaseConsumer {
    let consumer: BaseConsumer = client(
        bootstrap,
        &[
            ("group.id", group),
            ("enable.auto.commit", "false"),
            ("auto.offset.reset", "earliest"),
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "300"),
            ("enable.partition.eof", "false"),
        ],
    )
    .create()
    .expect("consumer");
    consumer.subscribe(&[topic]).expect("subscribe");
    consumer
}

/// (partition, offset, value) of the records a member read.
type Read = Vec<(i32, i64, String)>;

/// Polls every member in turn until `done` holds (asked after each round), or `deadline` passes.
fn pump(
    members: &[&BaseConsumer],
    read: &mut [Read],
    deadline: Duration,
    done: impl Fn(&[Read]) -> bool,
) {
    let end = Instant::now() + deadline;
    while !done(read) {
        assert!(
            Instant::now() < end,
            "the group did not get there: read {read:?}"
        );
        for (member, got) in members.iter().zip(read.iter_mut()) {
            if let Some(message) = member.poll(Duration::from_millis(50)) {
                let m = message.expect("a record");
                let value = String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned();
                got.push((m.partition(), m.offset(), value));
            }
        }
    }
}

fn assigned(member: &BaseConsumer) -> BTreeSet<i32> {
    member
        .assignment()
        .map(|tpl| tpl.elements().iter().map(|e| e.partition()).collect())
        .unwrap_or_default()
}

/// True when the member's position in each of its partitions is `end`.
fn at_end(member: &BaseConsumer, end: i64) -> bool {
    member.position().is_ok_and(|tpl| {
        tpl.elements()
            .iter()
            .all(|e| e.offset() == Offset::Offset(end))
    })
}

fn values(range: std::ops::Range<usize>) -> Vec<(i32, String)> {
    range.map(|i| ((i % 4) as i32, format!("v{i}"))).collect()
}

#[test]
fn a_consumer_group_shares_partitions_rebalances_and_resumes_after_kill_9() {
    let dir = common::tempdir();
    let (binary, bootstrap) = start(dir.path(), "PLAINTEXT", "");
    produce(&bootstrap, &[], "orders", &values(0..40));

    let a = group_member(&bootstrap, "billing", "orders");
    let b = group_member(&bootstrap, "billing", "orders");
    let mut read = vec![Vec::new(), Vec::new()];
    // Both members end up with two partitions each and, between them, every record.
    pump(&[&a, &b], &mut read, LONG, |read| {
        let total: BTreeSet<&String> = read.iter().flatten().map(|(_, _, v)| v).collect();
        total.len() == 40
            && assigned(&a).len() == 2
            && assigned(&b).len() == 2
            && at_end(&a, 10)
            && at_end(&b, 10)
    });
    assert!(assigned(&a).is_disjoint(&assigned(&b)));
    a.commit_consumer_state(CommitMode::Sync).expect("commit a");
    b.commit_consumer_state(CommitMode::Sync).expect("commit b");

    // One member leaves: the other takes over all four partitions.
    drop(b);
    produce(&bootstrap, &[], "orders", &values(40..48));
    let mut after = vec![Vec::new()];
    let expected: BTreeSet<String> = values(40..48).into_iter().map(|(_, v)| v).collect();
    // (Records read before the rebalance may be read again after it: delivery is at least once.)
    pump(&[&a], &mut after, LONG, |read| {
        let new: BTreeSet<String> = read[0].iter().map(|(_, _, v)| v.clone()).collect();
        assigned(&a).len() == 4 && new == expected && at_end(&a, 12)
    });
    assert!(
        after[0]
            .iter()
            .all(|(_, offset, _)| (10..12).contains(offset)),
        "nothing before the committed offsets is read again: {after:?}"
    );
    a.commit_consumer_state(CommitMode::Sync)
        .expect("commit after the rebalance");
    drop(a);

    // Records produced before a kill -9 of the worker are read after it, from the committed offsets.
    produce(&bootstrap, &[], "orders", &values(48..52));
    binary.kill();
    let (binary, bootstrap) = start(dir.path(), "PLAINTEXT", "");
    let c = group_member(&bootstrap, "billing", "orders");
    let mut resumed = vec![Vec::new()];
    pump(&[&c], &mut resumed, LONG, |read| read[0].len() >= 4);
    let again: Vec<&String> = resumed[0].iter().map(|(_, _, v)| v).collect();
    let mut sorted = again.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec!["v48", "v49", "v50", "v51"],
        "nothing committed is read again"
    );
    // Each partition resumed at offset 12: ten records before, two after the rebalance.
    assert!(
        resumed[0].iter().all(|(_, offset, _)| *offset == 12),
        "{resumed:?}"
    );
    drop(c);
    binary.kill();
}

/// Runs blocking client code off the executor.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .expect("blocking client code")
}

/// The state and protocol type of `group` as ListGroups shows it.
fn listed(observer: &BaseConsumer, group: &str) -> Option<(String, String)> {
    let list = observer
        .fetch_group_list(None, DEADLINE)
        .expect("ListGroups");
    list.groups()
        .iter()
        .find(|g| g.name() == group)
        .map(|g| (g.state().to_string(), g.protocol_type().to_string()))
}

/// The lag of the observer's group on each partition of `topic`: end offset minus committed offset.
fn lag(observer: &BaseConsumer, topic: &str, partitions: i32) -> BTreeMap<i32, i64> {
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    let committed = observer
        .committed_offsets(tpl, DEADLINE)
        .expect("OffsetFetch");
    committed
        .elements()
        .iter()
        .map(|e| {
            let (_, high) = observer
                .fetch_watermarks(topic, e.partition(), DEADLINE)
                .expect("ListOffsets");
            let at = match e.offset() {
                Offset::Offset(o) => o,
                _ => 0,
            };
            (e.partition(), high - at)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_connector_is_the_group_connect_name_with_its_offsets_and_lag() {
    let dir = common::tempdir();
    let (binary, bootstrap) = start(dir.path(), "PLAINTEXT", "");
    let api = rest(&binary);
    common::healthy(&api).await;
    let b = bootstrap.clone();
    blocking(move || produce(&b, &[], "events", &values(0..8))).await;
    let out = dir.path().join("out.txt");
    let sink = json!({"name": "archive", "config": {"connector.class": "FileStreamSink", "tasks.max": "1",
        "file": out.display().to_string(), "topics": "events"}});
    common::create_through(&api, sink).await;
    wait_until("the sink wrote every record", || async {
        lines(&out).len() == 8
    })
    .await;

    let b = bootstrap.clone();
    let observer = Arc::new(
        blocking(move || {
            let settings = [
                ("group.id", "connect-archive"),
                ("enable.auto.commit", "false"),
            ];
            client(&b, &settings)
                .create::<BaseConsumer>()
                .expect("consumer")
        })
        .await,
    );
    let running = Some(("Stable".to_string(), "consumer".to_string()));
    wait_until(
        "connect-archive is listed as a Stable consumer group",
        || {
            let o = observer.clone();
            let running = running.clone();
            async move { blocking(move || listed(&o, "connect-archive") == running).await }
        },
    )
    .await;
    wait_until("the sink's committed offsets reach the end (lag 0)", || {
        let o = observer.clone();
        async move { blocking(move || lag(&o, "events", 4).values().all(|l| *l == 0)).await }
    })
    .await;

    // Paused, the sink falls behind: the lag shows, and the group is Empty.
    let (status, _) = api
        .put_empty("/connectors/archive/pause")
        .await
        .expect("pause");
    assert_eq!(status, 202);
    let o = observer.clone();
    wait_until("the paused sink's group is Empty", || {
        let o = o.clone();
        async move {
            blocking(move || listed(&o, "connect-archive"))
                .await
                .is_some_and(|(s, _)| s == "Empty")
        }
    })
    .await;
    let b = bootstrap.clone();
    blocking(move || produce(&b, &[], "events", &values(8..12))).await;
    let o = observer.clone();
    let total: i64 = blocking(move || lag(&o, "events", 4)).await.values().sum();
    assert_eq!(total, 4, "four records wait for the paused sink");

    // The group is read-only for clients.
    let o = observer.clone();
    let refused = blocking(move || {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset("events", 0, Offset::Offset(0))
            .unwrap();
        o.commit(&tpl, CommitMode::Sync)
    })
    .await;
    let error = refused.expect_err("a commit to connect-archive is refused");
    assert!(error.to_string().contains("uthoriz"), "{error}");
    drop(observer);
    binary.kill();
}

#[test]
fn sasl_plain_and_scram_logins_and_a_wrong_password_refused() {
    let dir = common::tempdir();
    let users = dir.path().join("kafka-users.properties");
    std::fs::write(&users, "alice=alice-secret\nbob=bob-secret\n").unwrap();
    let extra = format!(
        "kafka.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512\nkafka.sasl.credentials.file={}\n",
        users.display()
    );
    let (binary, bootstrap) = start(dir.path(), "SASL_PLAINTEXT", &extra);
    for (i, mechanism) in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        .iter()
        .enumerate()
    {
        let login = [
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", *mechanism),
            ("sasl.username", "alice"),
            ("sasl.password", "alice-secret"),
        ];
        let topic = format!("t{i}");
        produce(
            &bootstrap,
            &login,
            &topic,
            &[(0, format!("via {mechanism}"))],
        );
        let reader: BaseConsumer = client(&bootstrap, &login)
            .set("group.id", "sasl-reader")
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&topic, 0, Offset::Beginning)
            .unwrap();
        reader.assign(&tpl).unwrap();
        let got = common::wait_for_blocking("the record read back", DEADLINE, || {
            reader.poll(Duration::from_millis(100)).map(|m| {
                String::from_utf8_lossy(m.expect("record").payload().unwrap_or_default())
                    .into_owned()
            })
        });
        assert_eq!(got, format!("via {mechanism}"));

        let wrong = [
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", *mechanism),
            ("sasl.username", "alice"),
            ("sasl.password", "guess"),
        ];
        let intruder: BaseConsumer = client(&bootstrap, &wrong).create().unwrap();
        let refused = intruder.fetch_metadata(None, Duration::from_secs(5));
        assert!(
            refused.is_err(),
            "{mechanism}: a wrong password gets no metadata"
        );
    }
    binary.kill();
}
