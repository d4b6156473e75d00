//! Kafka clients not built on the bundled librdkafka, against the listener: kafkajs (npm) and aiokafka
//! (PyPI), at the versions `scripts/install-test-deps` pins under `target/test-deps`. Each client script
//! creates topics, produces, consumes from the earliest and from the latest offset, runs a consumer group
//! of two members over two partitions, and asks for the end offsets and the group list; the test checks
//! what it reports against what was produced.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::KafkaWorker;

fn deps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-deps")
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
}

/// Runs `program args` to its end (the scripts bound their own waits) and parses the JSON line it prints.
async fn run(mut command: Command, what: &str) -> Value {
    command.stdin(Stdio::null());
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{what} did not start ({e}); run scripts/install-test-deps"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stderr}\n{stdout}",
        output.status
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{what} printed {stdout:?}: {e}"))
}

/// What every client must have seen (the scripts use the same counts: 20 records, then 4 more).
fn check(seen: &Value, client: &str, prefix: &str) {
    assert_eq!(seen["earliest"], 20, "{client}: {seen}");
    assert_eq!(seen["latest"], 4, "{client}: {seen}");
    assert_eq!(seen["latest_only_new"], true, "{client}: {seen}");
    let pair = seen["pair"].as_array().expect("pair");
    assert!(
        pair.iter().all(|n| n.as_u64().unwrap_or(0) > 0),
        "{client}: both members of the group read records: {seen}"
    );
    assert_eq!(seen["pair_distinct"], 20, "{client}: {seen}");
    assert_eq!(seen["high_watermarks"], 24, "{client}: {seen}");
    assert_eq!(seen["low_watermarks"], 0, "{client}: {seen}");
    let groups: Vec<&str> = seen["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for suffix in ["earliest", "latest", "pair"] {
        assert!(
            groups
                .iter()
                .any(|g| g.starts_with(prefix) && g.ends_with(suffix)),
            "{client}: the group list names the {suffix} group: {groups:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kafkajs_produces_consumes_and_runs_a_group_of_two() {
    let module = deps().join("node/node_modules/kafkajs");
    assert!(
        module.exists(),
        "kafkajs is not installed at {}: run scripts/install-test-deps",
        module.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let worker = KafkaWorker::start(dir.path(), &[], 0).await;
    let mut command = Command::new("node");
    command
        .arg(script("kafkajs.js"))
        .arg(&worker.bootstrap)
        .arg("js")
        .env("NODE_PATH", deps().join("node/node_modules"));
    let seen = run(command, "kafkajs").await;
    check(&seen, "kafkajs", "js");
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn aiokafka_produces_consumes_and_runs_a_group_of_two() {
    let python = deps().join("venv/bin/python");
    assert!(
        python.exists(),
        "aiokafka's venv is not at {}: run scripts/install-test-deps",
        python.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let worker = KafkaWorker::start(dir.path(), &[], 0).await;
    let mut command = Command::new(python);
    command
        .arg(script("aiokafka_client.py"))
        .arg(&worker.bootstrap)
        .arg("py");
    let seen = run(command, "aiokafka").await;
    check(&seen, "aiokafka", "py");
    worker.stop().await;
}
