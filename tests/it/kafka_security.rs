//! TLS and SASL to Kafka, against librdkafka's mock cluster behind the test gate
//! (`common::kafka_gate`). The gate really checks certificates (rustls) and credentials (SASL PLAIN and
//! SCRAM). The tests cover configs written with the Java client's keys and with librdkafka's, secrets from
//! config providers, refusals that fail the task, an outage over TLS that does not, and validation naming
//! the key at fault.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{json, Value as Json};

use crate::common::certs::Ca;
use crate::common::kafka_gate::{GateTls, KafkaGate, SaslUser};
use crate::common::{
    self, append_lines, lines, tempdir, validation_errors, wait_for, wait_until, TestWorker,
    FILE_CONFIG_PROVIDER,
};
use crate::kafka::{
    create, db_number, kafka_sink, mirror, mock, numbered, produce, read_all, read_topic_async,
    tally, task_trace, LONG,
};

const PLAIN: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";

fn user(name: &str, password: &str) -> SaslUser {
    SaslUser {
        name: name.into(),
        password: password.into(),
    }
}

/// A server certificate for the gate's address, signed by `ca`.
fn gate_tls(ca: &Ca, client_ca: Option<&Ca>) -> GateTls {
    gate_tls_for(&["127.0.0.1", "localhost"], ca, client_ca)
}

/// A server certificate for `names`, signed by `ca`.
fn gate_tls_for(names: &[&str], ca: &Ca, client_ca: Option<&Ca>) -> GateTls {
    let (cert_pem, key_pem) = ca.leaf(names);
    GateTls {
        cert_pem,
        key_pem,
        client_ca_pem: client_ca.map(Ca::pem),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn jaas(module: &str, name: &str, password: &str) -> String {
    format!(r#"{module} required username="{name}" password="{password}";"#)
}

async fn worker_with_file_provider(dir: &Path) -> TestWorker {
    TestWorker::start_with(dir, &FILE_CONFIG_PROVIDER, Vec::new())
        .await
        .expect("worker starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_plain_with_java_keys_and_a_secret_from_a_file_provider() {
    let cluster = mock();
    cluster.create_topic("lines", 1, 1).unwrap();
    let ca = Ca::new("kafka-ca");
    let gate = KafkaGate::start(
        &cluster.bootstrap_servers(),
        Some(gate_tls(&ca, None)),
        Some(user("edge", "edge-secret-1")),
    )
    .await;
    let dir = tempdir();
    let ca_file = write(dir.path(), "ca.pem", &ca.pem());
    let secrets = write(
        dir.path(),
        "secrets.properties",
        "kafka.password=edge-secret-1\n",
    );
    let w = worker_with_file_provider(dir.path()).await;
    let input = dir.path().join("in.txt");
    let expected = numbered("tls", 0..20_000);
    append_lines(&input, expected.clone());
    let started = Instant::now();
    create(&w, common::file_source("src", &input, "lines")).await;
    let password = format!("${{file:{secrets}:kafka.password}}");
    create(
        &w,
        kafka_sink(
            "to-kafka",
            &gate.bootstrap,
            "lines",
            &[
                ("security.protocol", "SASL_SSL"),
                ("sasl.mechanism", "PLAIN"),
                ("sasl.jaas.config", &jaas(PLAIN, "edge", &password)),
                ("ssl.truststore.type", "PEM"),
                ("ssl.truststore.location", &ca_file),
            ],
        ),
    )
    .await;
    // Read straight from the mock cluster: what the gate let through.
    let n = expected.len();
    let got = read_topic_async(&cluster.bootstrap_servers(), "lines", 1, LONG, move |g| {
        g.len() >= n
    })
    .await;
    let elapsed = started.elapsed();
    eprintln!(
        "kafka sink over SASL_SSL (PLAIN) through the test gate: {n} records from a file through the log to the mock cluster in {:.2} s ({:.0} records/s)",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64()
    );
    let (distinct, dups, ordered) = tally(&got, &expected);
    assert_eq!((distinct, dups, ordered), (n, 0, true));
    // It went through TLS and SASL with the password from the file.
    assert!(gate.stats.tls_sessions.load(Ordering::SeqCst) >= 1);
    assert!(gate
        .stats
        .authenticated()
        .contains(&("PLAIN".to_string(), "edge".to_string())));
    assert!(gate.stats.forwarded.load(Ordering::SeqCst) > 0);
    assert_eq!(gate.stats.refused.load(Ordering::SeqCst), 0);
    wait_until("the sink's offsets to reach the end", || async {
        w.get("/connectors/to-kafka/offsets").await.1["offsets"][0]["offset"]["kafka_offset"]
            == json!(n)
    })
    .await;
    assert!(task_trace(&w, "to-kafka").await.is_none());
    // The stored config keeps the placeholder, never the secret.
    let (_, config) = w.get("/connectors/to-kafka/config").await;
    let shown = config["sasl.jaas.config"].as_str().unwrap();
    assert!(shown.contains("${file:"), "{shown}");
    assert!(!config.to_string().contains("edge-secret-1"));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirror_source_over_mutual_tls_with_a_pem_keystore() {
    let cluster = mock();
    cluster.create_topic("orders", 2, 1).unwrap();
    let values = numbered("order", 0..100);
    produce(&cluster.bootstrap_servers(), "orders", &values);
    let server_ca = Ca::new("server-ca");
    let client_ca = Ca::new("client-ca");
    let gate = KafkaGate::start(
        &cluster.bootstrap_servers(),
        Some(gate_tls(&server_ca, Some(&client_ca))),
        None,
    )
    .await;
    let dir = tempdir();
    let trust = write(dir.path(), "trust.pem", &server_ca.pem());
    // Java's PEM key store: the private key and the certificate chain in one file.
    let (cert, key) = client_ca.leaf(&["edge-device"]);
    let keystore = write(dir.path(), "keystore.pem", &format!("{key}{cert}"));
    let w = TestWorker::start(dir.path()).await;
    let out = dir.path().join("out.txt");
    create(
        &w,
        mirror(
            "mirror",
            &gate.bootstrap,
            "orders",
            &[
                ("source.cluster.security.protocol", "SSL"),
                ("source.cluster.ssl.truststore.location", &trust),
                ("source.cluster.ssl.keystore.type", "PEM"),
                ("source.cluster.ssl.keystore.location", &keystore),
            ],
        ),
    )
    .await;
    create(&w, common::file_sink("out", &out, "src.orders")).await;
    wait_until("100 mirrored lines", || async { lines(&out).len() == 100 }).await;
    let mut got = lines(&out);
    got.sort();
    assert_eq!(got, values);
    assert!(gate.stats.client_certificates.load(Ordering::SeqCst) >= 1);
    assert_eq!(
        gate.stats.client_certificates.load(Ordering::SeqCst),
        gate.stats.tls_sessions.load(Ordering::SeqCst),
        "every session presented the client certificate"
    );
    assert_eq!(gate.stats.tls_failures.load(Ordering::SeqCst), 0);

    // Without the key store the gate refuses the handshake. Under TLS 1.3 the client learns it from the
    // broker's alert after its own handshake is done; it is a refusal all the same, not an outage.
    create(
        &w,
        mirror(
            "anonymous",
            &gate.bootstrap,
            "orders",
            &[
                ("source.cluster.security.protocol", "SSL"),
                ("source.cluster.ssl.truststore.location", &trust),
                ("replication.policy.separator", "-"),
            ],
        ),
    )
    .await;
    let trace = w.wait_for_failed_task("anonymous").await;
    assert!(
        trace.contains("The TLS connection to the Kafka cluster failed"),
        "{trace}"
    );
    assert!(trace.contains("alert certificate required"), "{trace}");
    assert!(gate.stats.tls_failures.load(Ordering::SeqCst) >= 1);
    assert_eq!(lines(&out).len(), 100, "the first mirror goes on");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_sha_256_and_512_and_unsecured_oauthbearer_over_sasl_plaintext() {
    let cluster = mock();
    for t in ["events-256", "events-512", "events-oauth"] {
        cluster.create_topic(t, 1, 1).unwrap();
    }
    let gate = KafkaGate::start(
        &cluster.bootstrap_servers(),
        None,
        Some(user("scram-user", "pa,ss=word")),
    )
    .await;
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let expected = numbered("scram", 0..500);
    append_lines(&input, expected.clone());
    create(&w, common::file_source("src", &input, "events")).await;
    // Java's keys for SHA-256, librdkafka's for SHA-512.
    create(
        &w,
        kafka_sink(
            "s256",
            &gate.bootstrap,
            "events",
            &[
                ("topic.format", "${topic}-256"),
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "SCRAM-SHA-256"),
                ("sasl.jaas.config", &jaas(SCRAM, "scram-user", "pa,ss=word")),
            ],
        ),
    )
    .await;
    create(
        &w,
        kafka_sink(
            "s512",
            &gate.bootstrap,
            "events",
            &[
                ("topic.format", "${topic}-512"),
                ("producer.override.security.protocol", "sasl_plaintext"),
                ("producer.override.sasl.mechanisms", "SCRAM-SHA-512"),
                ("producer.override.sasl.username", "scram-user"),
                ("producer.override.sasl.password", "pa,ss=word"),
            ],
        ),
    )
    .await;
    // OAUTHBEARER with librdkafka's unsecured token for the principal (no token endpoint is compiled in).
    create(
        &w,
        kafka_sink(
            "oauth",
            &gate.bootstrap,
            "events",
            &[
                ("topic.format", "${topic}-oauth"),
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "OAUTHBEARER"),
                ("enable.sasl.oauthbearer.unsecure.jwt", "true"),
                ("sasl.oauthbearer.config", "principal=scram-user"),
            ],
        ),
    )
    .await;
    for topic in ["events-256", "events-512", "events-oauth"] {
        let n = expected.len();
        let got = read_topic_async(&cluster.bootstrap_servers(), topic, 1, LONG, move |g| {
            g.len() >= n
        })
        .await;
        assert_eq!(tally(&got, &expected), (n, 0, true), "{topic}");
    }
    let seen = gate.stats.authenticated();
    for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"] {
        assert!(
            seen.contains(&(mechanism.to_string(), "scram-user".to_string())),
            "{seen:?}"
        );
    }
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_password_fails_the_task_and_the_corrected_config_delivers_everything() {
    let cluster = mock();
    cluster.create_topic("t", 1, 1).unwrap();
    let gate = KafkaGate::start(
        &cluster.bootstrap_servers(),
        None,
        Some(user("edge", "right-password")),
    )
    .await;
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let expected = numbered("kept", 0..300);
    append_lines(&input, expected.clone());
    create(&w, common::file_source("src", &input, "t")).await;
    let sink = |password: &str| {
        kafka_sink(
            "sink",
            &gate.bootstrap,
            "t",
            &[
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "PLAIN"),
                ("sasl.jaas.config", &jaas(PLAIN, "edge", password)),
            ],
        )
    };
    create(&w, sink("wrong-password")).await;
    let trace = w.wait_for_failed_task("sink").await;
    assert!(
        trace.contains("Authentication to the Kafka cluster failed"),
        "{trace}"
    );
    assert!(trace.contains("Invalid username or password"), "{trace}");
    assert!(!trace.contains("wrong-password"), "{trace}");
    assert!(gate.stats.refused.load(Ordering::SeqCst) >= 1);
    // Nothing was committed, and the records wait in the local log.
    assert_eq!(
        db_number(
            &w.db,
            "SELECT COUNT(*) FROM sink_offsets WHERE connector = 'sink'"
        ),
        0
    );
    wait_until("the source to store all lines", || async {
        db_number(&w.db, "SELECT COUNT(*) FROM records") == 300
    })
    .await;

    let (s, b) = w
        .put(
            "/connectors/sink/config",
            sink("right-password")["config"].clone(),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let got = read_topic_async(&cluster.bootstrap_servers(), "t", 1, LONG, |g| {
        g.len() >= 300
    })
    .await;
    assert_eq!(tally(&got, &expected), (300, 0, true));
    w.wait_for_state("sink", "RUNNING", 1, "RUNNING").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_or_misnamed_broker_certificate_fails_the_task() {
    let cluster = mock();
    cluster.create_topic("t", 1, 1).unwrap();
    let real_ca = Ca::new("real-ca");
    let other_ca = Ca::new("other-ca");
    let gate = KafkaGate::start(
        &cluster.bootstrap_servers(),
        Some(gate_tls(&real_ca, None)),
        None,
    )
    .await;
    let dir = tempdir();
    let wrong = write(dir.path(), "wrong-ca.pem", &other_ca.pem());
    let w = TestWorker::start(dir.path()).await;
    create(
        &w,
        kafka_sink(
            "sink",
            &gate.bootstrap,
            "t",
            &[("security.protocol", "SSL"), ("ssl.ca.location", &wrong)],
        ),
    )
    .await;
    create(
        &w,
        mirror(
            "mirror",
            &gate.bootstrap,
            "t",
            &[
                ("source.cluster.security.protocol", "SSL"),
                ("source.cluster.ssl.ca.location", &wrong),
            ],
        ),
    )
    .await;
    // The sink fails once it has something to deliver.
    let input = dir.path().join("in.txt");
    append_lines(&input, numbered("x", 0..10));
    create(&w, common::file_source("src", &input, "t")).await;
    // A certificate from the trusted CA, but for another host name.
    let misnamed = KafkaGate::start(
        &cluster.bootstrap_servers(),
        Some(gate_tls_for(&["kafka.example"], &real_ca, None)),
        None,
    )
    .await;
    let trusted = write(dir.path(), "real-ca.pem", &real_ca.pem());
    create(
        &w,
        kafka_sink(
            "misnamed",
            &misnamed.bootstrap,
            "t",
            &[("security.protocol", "SSL"), ("ssl.ca.location", &trusted)],
        ),
    )
    .await;
    for name in ["sink", "mirror", "misnamed"] {
        let trace = w.wait_for_failed_task(name).await;
        assert!(
            trace.contains("The TLS connection to the Kafka cluster failed"),
            "{name}: {trace}"
        );
        assert!(
            trace.contains("certificate verify failed"),
            "{name}: {trace}"
        );
    }
    assert!(gate.stats.tls_failures.load(Ordering::SeqCst) >= 1);
    assert_eq!(gate.stats.forwarded.load(Ordering::SeqCst), 0);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_over_tls_keeps_the_task_running_and_loses_nothing() {
    let cluster = mock();
    cluster.create_topic("out", 1, 1).unwrap();
    let ca = Ca::new("kafka-ca");
    let gate = KafkaGate::start(
        &cluster.bootstrap_servers(),
        Some(gate_tls(&ca, None)),
        Some(user("edge", "pw")),
    )
    .await;
    let dir = tempdir();
    let ca_file = write(dir.path(), "ca.pem", &ca.pem());
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let first = numbered("a", 0..200);
    append_lines(&input, first.clone());
    create(&w, common::file_source("src", &input, "out")).await;
    create(
        &w,
        kafka_sink(
            "sink",
            &gate.bootstrap,
            "out",
            &[
                ("security.protocol", "SASL_SSL"),
                ("sasl.mechanism", "SCRAM-SHA-256"),
                ("sasl.jaas.config", &jaas(SCRAM, "edge", "pw")),
                ("ssl.truststore.location", &ca_file),
                ("producer.override.message.timeout.ms", "2000"),
            ],
        ),
    )
    .await;
    let bootstrap = cluster.bootstrap_servers();
    let got = read_topic_async(&bootstrap, "out", 1, LONG, |g| g.len() >= 200).await;
    assert_eq!(tally(&got, &first).0, 200);

    cluster.broker_down(1).unwrap();
    let second = numbered("b", 0..300);
    append_lines(&input, second.clone());
    // Connections through the gate now end after the handshake: an outage, not a refusal.
    let trace = wait_for("a trace during the outage", LONG, || async {
        let status = w.status("sink").await;
        assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
        status["tasks"][0]["trace"].as_str().map(str::to_string)
    })
    .await;
    assert!(trace.contains("RetriableException"), "{trace}");
    cluster.broker_up(1).unwrap();
    let mut all = first;
    all.extend(second);
    let got = read_all(&bootstrap, "out", &all).await;
    let (distinct, _dups, ordered) = tally(&got, &all);
    assert_eq!(distinct, all.len(), "nothing lost");
    assert!(ordered);
    assert_eq!(w.status("sink").await["tasks"][0]["state"], "RUNNING");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_names_the_security_key_librdkafka_cannot_take() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let errors_of = |body: &Json, key: &str| -> Vec<String> {
        validation_errors(body).remove(key).unwrap_or_default()
    };
    let sink = json!({
        "connector.class": "liteconnect.kafka.KafkaSinkConnector",
        "name": "s", "topics": "t", "bootstrap.servers": "kafka:9093",
        "producer.override.security.protocol": "SSL",
        "producer.override.ssl.truststore.type": "JKS",
        "producer.override.ssl.truststore.location": "/etc/kafka/truststore.jks",
    });
    let mirror = json!({
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "name": "m", "source.cluster.alias": "a", "source.cluster.bootstrap.servers": "kafka:9093",
        "source.cluster.security.protocol": "SASL_SSL",
        "source.cluster.sasl.mechanism": "GSSAPI",
        "source.cluster.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/etc/kafka.keytab\";",
    });
    for (plugin, config, key, expected) in [
        (
            "liteconnect.kafka.KafkaSinkConnector",
            &sink,
            "producer.override.ssl.truststore.location",
            "PEM only",
        ),
        (
            "MirrorSourceConnector",
            &mirror,
            "source.cluster.sasl.jaas.config",
            "GSSAPI",
        ),
    ] {
        let (s, b) = w
            .put(
                &format!("/connector-plugins/{plugin}/config/validate"),
                config.clone(),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["error_count"], 1, "{b}");
        let errors = errors_of(&b, key);
        assert!(errors[0].contains(expected), "{plugin}: {errors:?}");
    }

    // Creating either is refused with Kafka's message, and nothing is stored.
    for (name, config) in [("s", sink), ("m", mirror)] {
        let (s, b) = w
            .post("/connectors", json!({"name": name, "config": config}))
            .await;
        assert_eq!(s, 400, "{b}");
        assert!(
            b["message"]
                .as_str()
                .unwrap()
                .contains("Connector configuration is invalid"),
            "{b}"
        );
    }
    assert_eq!(w.get("/connectors").await.1, json!([]));
    w.stop().await;
}
