//! The MQTT source and sink against a real mosquitto started by the test (see `common::mosquitto`).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use rumqttc::QoS;
use serde_json::{json, Value as Json};

use crate::common::certs::Ca;
use crate::common::mosquitto::{write_file, Mosquitto, Options, Subscriber};
use crate::common::*;

fn source(name: &str, uri: &str, topics: &str, qos: u8, kafka_topic: &str) -> Json {
    json!({"name": name, "config": {
        "connector.class": "MqttSource", "tasks.max": "1", "mqtt.server.uri": uri,
        "mqtt.topics": topics, "mqtt.qos": qos.to_string(), "kafka.topic": kafka_topic}})
}

fn with(mut connector: Json, extra: &[(&str, &str)]) -> Json {
    for (k, v) in extra {
        connector["config"][*k] = json!(v);
    }
    connector
}

fn numbered(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}-{i}")).collect()
}

/// Waits until the broker acknowledged `times` subscriptions of `client_id`.
async fn wait_subscribed(broker: &Mosquitto, client_id: &str, times: usize) {
    let line = format!("Sending SUBACK to {client_id}\n");
    wait_until(&format!("{client_id} to subscribe"), || async {
        broker.log().matches(&line).count() >= times
    })
    .await;
}

async fn wait_lines(path: &std::path::Path, n: usize) -> Vec<String> {
    wait_for(
        &format!("{n} lines in {}", path.display()),
        DEADLINE * 2,
        || async {
            let got = lines(path);
            (got.len() >= n).then_some(got)
        },
    )
    .await
}

/// Waits until task 0 of `name` is RUNNING with a trace containing every one of `parts`.
async fn wait_for_trace(w: &TestWorker, name: &str, parts: &[&str]) {
    wait_until(&format!("{name} to report {parts:?}"), || async {
        let s = w.status(name).await;
        s["tasks"][0]["state"] == "RUNNING"
            && s["tasks"][0]["trace"]
                .as_str()
                .is_some_and(|t| parts.iter().all(|p| t.contains(p)))
    })
    .await;
}

/// Waits until task 0 of `name` shows no trace.
async fn wait_for_trace_cleared(w: &TestWorker, name: &str) {
    wait_until(&format!("{name}'s trace to clear"), || async {
        w.status(name).await["tasks"][0]["trace"].is_null()
    })
    .await;
}

/// A file source from the fixture's input into `lines`, and the MQTT sink `pub` from there to `target`.
async fn file_to_mqtt(f: &Fixture, broker: &Mosquitto, target: &str, qos: u8, version: &str) {
    f.w.create(file_source("in", &f.input, "lines")).await;
    f.w.create(json!({"name": "pub", "config": {
        "connector.class": "MqttSink", "tasks.max": "1", "topics": "lines",
        "mqtt.server.uri": broker.uri(), "mqtt.topics": target, "mqtt.qos": qos.to_string(),
        "mqtt.version": version}}))
        .await;
}

/// Kills the real binary when the test ends, also when it fails half-way.
struct Killed(Option<Binary>);

impl Drop for Killed {
    fn drop(&mut self) {
        if let Some(b) = self.0.take() {
            b.kill();
        }
    }
}

fn qos_of(n: u8) -> QoS {
    [QoS::AtMostOnce, QoS::AtLeastOnce, QoS::ExactlyOnce][n as usize]
}

#[tokio::test(flavor = "multi_thread")]
async fn source_at_qos_0_1_and_2_over_mqtt_3_and_5_feeds_a_file_sink() {
    let broker = Mosquitto::start();
    let f = Fixture::start().await;
    for (qos, version) in [
        (0u8, "3.1.1"),
        (1, "3.1.1"),
        (2, "3.1.1"),
        (1, "5"),
        (2, "5"),
    ] {
        let name = format!("q{qos}v{}", &version[..1]);
        let out = f.dir.path().join(format!("{name}.txt"));
        f.w.create(with(
            source(&name, &broker.uri(), &format!("{name}/data"), qos, &name),
            &[("mqtt.version", version)],
        ))
        .await;
        f.w.create(file_sink(&format!("{name}-out"), &out, &name))
            .await;
        wait_subscribed(&broker, &format!("{name}-0"), 1).await;
        let expected = numbered(&name, 0..200);
        let b = &broker;
        let topic = format!("{name}/data");
        let sent = expected.clone();
        tokio::task::block_in_place(|| b.publish(&topic, qos_of(qos), sent));
        let got = wait_lines(&out, expected.len()).await;
        // Over one connection nothing is redelivered: exactly the messages, in order.
        assert_eq!(got, expected, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn source_records_have_the_mqtt_topic_as_key_and_wildcards_match() {
    let broker = Mosquitto::start();
    let f = Fixture::start().await;
    f.w.create(source(
        "wild",
        &broker.uri(),
        "sensors/+/temp,alerts/#",
        1,
        "wild",
    ))
    .await;
    wait_subscribed(&broker, "wild-0", 1).await;
    tokio::task::block_in_place(|| {
        for topic in [
            "sensors/a/temp",
            "sensors/a/humidity",
            "sensors/b/temp",
            "alerts",
            "alerts/x/y",
            "other",
        ] {
            broker.publish(topic, QoS::AtLeastOnce, [format!("from {topic}")]);
        }
    });
    let records = wait_for("four records", DEADLINE, || async {
        let (s, r) =
            f.w.get("/topics/wild/partitions/0/records?offset=0&timeout=200")
                .await;
        (s == 200 && r.as_array().is_some_and(|a| a.len() >= 4)).then_some(r)
    })
    .await;
    let decode = |v: &Json| {
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str().unwrap())
                .unwrap(),
        )
        .unwrap()
    };
    let got: BTreeSet<(String, String)> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (decode(&r["key"]), decode(&r["value"])))
        .collect();
    let expected: BTreeSet<(String, String)> =
        ["sensors/a/temp", "sensors/b/temp", "alerts", "alerts/x/y"]
            .iter()
            .map(|t| (t.to_string(), format!("from {t}")))
            .collect();
    assert_eq!(got, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn file_source_through_the_mqtt_5_sink_reaches_a_subscriber() {
    let broker = Mosquitto::start();
    let f = Fixture::start().await;
    let mut sub = tokio::task::block_in_place(|| broker.subscribe("out/#", QoS::AtLeastOnce));
    file_to_mqtt(&f, &broker, "out/lines", 1, "5").await;
    let expected = numbered("line", 0..300);
    append_lines(&f.input, expected.clone());
    tokio::task::block_in_place(|| sub.wait_for(expected.len()));
    assert!(sub.got.iter().all(|(t, _)| t == "out/lines"));
    assert_delivered_in_order(&sub.payloads(), &expected);
    // Offsets are committed once the broker acknowledged.
    wait_until("the sink's offsets to be committed", || async {
        let (_, o) = f.w.get("/connectors/pub/offsets").await;
        o["offsets"][0]["offset"]["kafka_offset"] == json!(300)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_records_wait_in_the_log_through_a_broker_outage() {
    let mut broker = Mosquitto::start();
    let f = Fixture::start().await;
    let mut sub = tokio::task::block_in_place(|| {
        broker.subscribe_as(Some("outage-sub"), "out", QoS::AtLeastOnce)
    });
    file_to_mqtt(&f, &broker, "out", 2, "3.1.1").await;
    let first = numbered("before", 0..50);
    append_lines(&f.input, first.clone());
    tokio::task::block_in_place(|| sub.wait_for(first.len()));
    tokio::task::block_in_place(|| broker.stop());
    let second = numbered("during", 0..50);
    append_lines(&f.input, second.clone());
    // The task keeps running and says why nothing is delivered.
    wait_for_trace(&f.w, "pub", &["wait in the local log"]).await;
    tokio::task::block_in_place(|| broker.restart());
    let all: Vec<String> = first.iter().chain(&second).cloned().collect();
    tokio::task::block_in_place(|| sub.wait_for_all(&all));
    wait_for_trace_cleared(&f.w, "pub").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn source_stays_running_through_a_broker_outage_and_says_why() {
    let mut broker = Mosquitto::start();
    let f = Fixture::start().await;
    f.w.create(with(
        source("down", &broker.uri(), "d/#", 1, "down"),
        &[("mqtt.clean.session.enabled", "false")],
    ))
    .await;
    f.w.create(file_sink("down-out", &f.output, "down")).await;
    wait_subscribed(&broker, "down-0", 1).await;
    tokio::task::block_in_place(|| broker.stop());
    let uri = broker.uri();
    wait_for_trace(&f.w, "down", &[&uri, "retried with backoff"]).await;
    tokio::task::block_in_place(|| broker.restart());
    let expected = numbered("after", 0..50);
    tokio::task::block_in_place(|| broker.publish("d/x", QoS::AtLeastOnce, expected.clone()));
    assert_eq!(wait_lines(&f.output, 50).await, expected);
    wait_for_trace_cleared(&f.w, "down").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn persistent_session_source_loses_nothing_across_kill_9_and_broker_restarts() {
    let mut broker = Mosquitto::start();
    let dir = tempdir();
    let out = dir.path().join("out.txt");
    let connectors = [
        with(
            source("keep", &broker.uri(), "plant/#", 2, "plant"),
            &[("mqtt.clean.session.enabled", "false")],
        ),
        file_sink("keep-out", &out, "plant"),
    ];
    let mut bin = Killed(Some(start_binary(dir.path(), &[])));
    let api = bin.0.as_ref().unwrap().healthy_api().await;
    for c in &connectors {
        create_through(&api, c.clone()).await;
    }
    wait_subscribed(&broker, "keep-0", 1).await;
    let expected = numbered("m", 0..3000);
    let publish = |broker: &Mosquitto, topic: &str, range: std::ops::Range<usize>| {
        tokio::task::block_in_place(|| {
            broker.publish(topic, QoS::ExactlyOnce, expected[range].to_vec())
        })
    };
    publish(&broker, "plant/a", 0..1000);
    // The broker restarts mid-stream, under a running task...
    wait_lines(&out, 1).await;
    tokio::task::block_in_place(|| broker.restart());
    publish(&broker, "plant/a", 1000..1500);
    // ...and the worker is killed mid-stream, then the broker restarts again while it is down.
    wait_lines(&out, 1001).await;
    bin.0.take().unwrap().kill();
    publish(&broker, "plant/a", 1500..2000);
    tokio::task::block_in_place(|| broker.restart());
    publish(&broker, "plant/b", 2000..3000);
    let bin = Killed(Some(start_binary(dir.path(), &[])));
    let api = bin.0.as_ref().unwrap().healthy_api().await;
    let got = wait_for("every message", DEADLINE * 3, || async {
        let got = lines(&out);
        let unique: BTreeSet<&String> = got.iter().collect();
        (unique.len() >= expected.len()).then_some(got)
    })
    .await;
    let unique: BTreeSet<&String> = got.iter().collect();
    assert_eq!(
        unique,
        expected.iter().collect::<BTreeSet<_>>(),
        "none lost"
    );
    // QoS 2: a message the broker sent again after a stored copy was dropped, so the local log holds
    // each message once (the file sink after it may repeat lines after kill -9).
    let (_, offsets) = api
        .get("/topics/plant/partitions/0/offsets")
        .await
        .expect("offsets");
    assert_eq!(offsets["end_offset"], json!(3000), "{offsets}");
    // The session was found again after each restart: no second subscription was needed.
    assert_eq!(
        broker.log().matches("Sending SUBACK to keep-0\n").count(),
        0,
        "the restarted broker's log starts after the subscription"
    );
    drop(bin);
}

#[tokio::test(flavor = "multi_thread")]
async fn source_logs_in_with_a_password_over_tls_and_refuses_bad_settings() {
    let ca = Ca::new("mqtt-test-ca");
    let ca_pem = ca.pem();
    let (client_cert, client_key) = ca.leaf(&["edge-client"]);
    let broker = Mosquitto::start_with(Options {
        user: Some(("edge".into(), "s3cret".into())),
        tls: Some(ca),
    });
    broker.use_credentials("edge", "s3cret");
    let f = Fixture::start().await;
    let trust = write_file(f.dir.path(), "ca.pem", &ca_pem);
    let key_store = write_file(
        f.dir.path(),
        "client.pem",
        &format!("{client_cert}{client_key}"),
    );
    let secure = |name: &str, password: &str, trust: &str| {
        with(
            source(name, &broker.tls_uri(), "secure/data", 2, name),
            &[
                ("mqtt.username", "edge"),
                ("mqtt.password", password),
                ("mqtt.ssl.trust.store.path", trust),
                ("mqtt.ssl.key.store.path", &key_store),
            ],
        )
    };
    f.w.create(secure("tls", "s3cret", &trust)).await;
    f.w.create(file_sink("tls-out", &f.output, "tls")).await;
    wait_subscribed(&broker, "tls-0", 1).await;
    let expected = numbered("s", 0..20);
    tokio::task::block_in_place(|| {
        broker.publish("secure/data", QoS::ExactlyOnce, expected.clone())
    });
    assert_eq!(wait_lines(&f.output, 20).await, expected);

    f.w.create(secure("wrong", "nope", &trust)).await;
    let trace = f.w.wait_for_failed_task("wrong").await;
    assert!(trace.contains("mqtt.password"), "{trace}");

    let jks = f.dir.path().join("trust.jks");
    std::fs::write(&jks, [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]).unwrap();
    f.w.create(secure("jks", "s3cret", &jks.display().to_string()))
        .await;
    let trace = f.w.wait_for_failed_task("jks").await;
    assert!(
        trace.contains("JKS")
            && trace.contains("keytool")
            && trace.contains("mqtt.ssl.trust.store.path"),
        "{trace}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn validation_names_the_key_at_fault() {
    let f = Fixture::start().await;
    let (s, b) =
        f.w.put(
            "/connector-plugins/MqttSource/config/validate",
            json!({"connector.class": "MqttSource", "name": "v",
                   "mqtt.server.uri": "http://broker:1883", "mqtt.topics": "a/#/b",
                   "mqtt.qos": "3"}),
        )
        .await;
    assert_eq!(s, 200);
    let e = validation_errors(&b);
    let has = |key: &str, text: &str| {
        e.get(key)
            .is_some_and(|v| v.iter().any(|m| m.contains(text)))
    };
    assert!(has("mqtt.server.uri", "scheme 'http'"), "{e:?}");
    assert!(has("mqtt.topics", "not a valid MQTT topic filter"), "{e:?}");
    assert!(has("mqtt.qos", "no more than 2"), "{e:?}");
    assert!(
        has("kafka.topic", "Missing required configuration"),
        "{e:?}"
    );
    let (_, b) =
        f.w.put(
            "/connector-plugins/MqttSinkConnector/config/validate",
            json!({"connector.class": "MqttSink", "name": "v", "topics": "t",
                   "mqtt.server.uri": "tcp://broker", "mqtt.topics": "a/+",
                   "mqtt.version": "4"}),
        )
        .await;
    let e = validation_errors(&b);
    assert!(
        e.get("mqtt.topics")
            .is_some_and(|v| v.iter().any(|m| m.contains("wildcard"))),
        "{e:?}"
    );
    assert!(e.contains_key("mqtt.version"), "{e:?}");
}

/// The MQTT sink `name` of the real binary, from topic `lines` to MQTT topic `target`.
fn lines_sink(name: &str, broker: &Mosquitto, target: &str, qos: u8) -> Json {
    json!({"name": name, "config": {
        "connector.class": "MqttSink", "tasks.max": "1", "topics": "lines",
        "mqtt.server.uri": broker.uri(), "mqtt.topics": target, "mqtt.qos": qos.to_string()}})
}

/// The sink's bound on what a crash or an outage repeats: the messages in flight.
const IN_FLIGHT: usize = 100;

/// Waits until every expected payload arrived, then counts (duplicates, losses).
fn duplicates_and_losses(sub: &mut Subscriber, expected: &[String]) -> (usize, usize) {
    sub.wait_for_all(expected);
    let got = sub.payloads();
    let unique: BTreeSet<&String> = got.iter().collect();
    let wanted: BTreeSet<&String> = expected.iter().collect();
    (got.len() - unique.len(), wanted.difference(&unique).count())
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_after_kill_9_repeats_at_most_the_messages_in_flight() {
    let broker = Mosquitto::start();
    let mut sub = tokio::task::block_in_place(|| broker.subscribe("crash", QoS::AtLeastOnce));
    let dir = tempdir();
    let expected = numbered("m", 0..30_000);
    let mut bin = Killed(Some(start_binary(dir.path(), &[])));
    let api = bin.0.as_ref().unwrap().healthy_api().await;
    fill_topic(&api, dir.path(), "lines", &expected).await;
    create_through(&api, lines_sink("crash", &broker, "crash", 1)).await;
    tokio::task::block_in_place(|| sub.wait_for(5_000));
    bin.0.take().unwrap().kill();
    let at_kill = sub.got.len();
    assert!(at_kill < expected.len(), "killed mid-stream ({at_kill})");
    let _bin = Killed(Some(start_binary(dir.path(), &[])));
    let (duplicates, losses) =
        tokio::task::block_in_place(|| duplicates_and_losses(&mut sub, &expected));
    eprintln!(
        "MQTT sink, kill -9 after {at_kill} messages: {duplicates} duplicates, {losses} lost"
    );
    assert_eq!(losses, 0);
    assert!(
        duplicates <= IN_FLIGHT,
        "{duplicates} duplicates: more than the {IN_FLIGHT} in flight"
    );
}

/// A persistent QoS 1 subscription of its own that keeps each message's payload and DUP flag: across a
/// broker restart the broker sends it again what it had not acknowledged (DUP set), which is not the
/// sink's doing, while what the sink publishes again comes as a new message (DUP clear).
struct Counting {
    got: Arc<Mutex<Vec<(String, bool)>>>,
    stop: Arc<AtomicBool>,
    client: rumqttc::Client,
}

impl Counting {
    fn start(broker: &Mosquitto, id: &str, filter: &str) -> Counting {
        let mut o = rumqttc::MqttOptions::new(id, "127.0.0.1", broker.port);
        o.set_clean_session(false);
        let (client, mut connection) = rumqttc::Client::new(o, 1000);
        client.subscribe(filter, QoS::AtLeastOnce).unwrap();
        let (got, stop) = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(AtomicBool::new(false)),
        );
        let (into, stopped) = (got.clone(), stop.clone());
        let (ready, subscribed) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for event in connection.iter() {
                match event {
                    Ok(rumqttc::Event::Incoming(rumqttc::Packet::SubAck(_))) => {
                        let _ = ready.send(());
                    }
                    Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p))) => {
                        let payload = String::from_utf8_lossy(&p.payload).into_owned();
                        into.lock().unwrap().push((payload, p.dup));
                    }
                    Ok(_) => {}
                    Err(_) if stopped.load(Ordering::SeqCst) => return,
                    // Reconnected by the next turn; the pause spares a stopped broker.
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        });
        subscribed.recv_timeout(DEADLINE).expect("subscribed");
        Counting { got, stop, client }
    }

    fn len(&self) -> usize {
        self.got.lock().unwrap().len()
    }

    /// What the sink published, in order: the broker's redeliveries of a message already received left out.
    fn sink_payloads(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (payload, dup) in self.got.lock().unwrap().iter() {
            if seen.insert(payload.clone()) || !dup {
                out.push(payload.clone());
            }
        }
        out
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.client.disconnect();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_after_a_10_s_broker_outage_repeats_at_most_the_messages_in_flight() {
    let mut broker = Mosquitto::start();
    let sub = Counting::start(&broker, "outage-count", "gone");
    let dir = tempdir();
    let expected = numbered("m", 0..30_000);
    let bin = Killed(Some(start_binary(dir.path(), &[])));
    let api = bin.0.as_ref().unwrap().healthy_api().await;
    fill_topic(&api, dir.path(), "lines", &expected).await;
    create_through(&api, lines_sink("gone", &broker, "gone", 1)).await;
    wait_until("5,000 messages", || async { sub.len() >= 5_000 }).await;
    let outage = std::time::Instant::now();
    tokio::task::block_in_place(|| broker.stop());
    let at_stop = sub.len();
    assert!(at_stop < expected.len(), "stopped mid-stream ({at_stop})");
    // The task keeps running and says why nothing is delivered; the broker stays away ~10 s in all.
    wait_until("the sink to report the outage", || async {
        let (_, s) = api.get("/connectors/gone/status").await.expect("status");
        s["tasks"][0]["state"] == "RUNNING"
            && s["tasks"][0]["trace"]
                .as_str()
                .is_some_and(|t| t.contains("wait in the local log"))
    })
    .await;
    // The outage itself: its length is the scenario, no condition to wait for.
    tokio::time::sleep(Duration::from_secs(10).saturating_sub(outage.elapsed())).await;
    tokio::task::block_in_place(|| broker.restart());
    let wanted: BTreeSet<&String> = expected.iter().collect();
    let got = wait_for("every message after the outage", DEADLINE * 3, || async {
        let got = sub.sink_payloads();
        let unique: BTreeSet<&String> = got.iter().collect();
        (unique.len() >= wanted.len()).then_some(got)
    })
    .await;
    let unique: BTreeSet<&String> = got.iter().collect();
    let (duplicates, losses) = (got.len() - unique.len(), wanted.difference(&unique).count());
    eprintln!(
        "MQTT sink, broker down {:?} after {at_stop} messages: {duplicates} duplicates, {losses} lost",
        outage.elapsed()
    );
    assert_eq!(losses, 0);
    assert!(
        unique.iter().all(|p| wanted.contains(p)),
        "only the records"
    );
    assert!(
        duplicates <= IN_FLIGHT,
        "{duplicates} duplicates: more than the {IN_FLIGHT} in flight"
    );
    drop(bin);
}
