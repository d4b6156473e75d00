//! Airbyte sources as source connectors: real sources from PyPI (`airbyte-source-faker`,
//! `airbyte-source-file`, installed by `scripts/install-test-deps` under `target/test-deps`) and a small
//! fake one (`tests/fixtures/airbyte/fake-source.py`) for exact counts and for sources that misbehave.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::common::{
    sample, start_binary, tempdir, validation_errors, wait_for, wait_for_blocking, TestWorker,
    FILE_CONFIG_PROVIDER,
};
use crate::jdbc::topic_values;
use liteconnect::connectors::child::process_alive;

/// Python sources start in seconds, several times per test on a loaded machine.
const SLOW: Duration = Duration::from_secs(120);

fn test_deps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-deps")
}

/// An installed Airbyte source command; fails the test, naming the script, when it is missing.
fn installed(venv: &str, command: &str) -> String {
    let path = test_deps().join(venv).join("bin").join(command);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-deps",
        path.display()
    );
    path.display().to_string()
}

pub(crate) fn fake() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/airbyte/fake-source.py")
        .display()
        .to_string()
}

/// A connector body: `command` with `config`, JSON values with schemas, String keys, and `extra` keys.
fn airbyte(name: &str, command: &str, config: Json, extra: &[(&str, &str)]) -> Json {
    let mut c = json!({
        "name": name,
        "connector.class": "AirbyteSource",
        "airbyte.command": command,
        "airbyte.config": config.to_string(),
        "airbyte.sync.interval.ms": "600000",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
    });
    for (k, v) in extra {
        c[*k] = json!(v);
    }
    json!({"name": name, "config": c})
}

/// The values of `topic` as JSON.
fn values(db: &Path, topic: &str) -> Vec<Json> {
    topic_values(db, topic)
        .iter()
        .map(|v| serde_json::from_str(v).expect("a JSON value"))
        .collect()
}

/// Waits until `topic` holds at least `n` records and returns its values.
async fn wait_records(db: &Path, topic: &str, n: usize) -> Vec<Json> {
    let (db, topic) = (db.to_path_buf(), topic.to_string());
    wait_for(&format!("{n} records in {topic}"), SLOW, || {
        let got = values(&db, &topic);
        async move { (got.len() >= n).then_some(got) }
    })
    .await
}

/// The `n` field of the fake source's records.
fn numbers(values: &[Json]) -> Vec<i64> {
    values
        .iter()
        .map(|v| v["payload"]["n"].as_i64().expect("n"))
        .collect()
}

async fn offsets(w: &TestWorker, name: &str) -> Json {
    w.get(&format!("/connectors/{name}/offsets")).await.1
}

/// Waits until task 0 is FAILED and returns its trace.
async fn failed_trace(w: &TestWorker, name: &str) -> String {
    wait_for(&format!("{name}'s task to fail"), SLOW, || async {
        let s = w.status(name).await;
        (s["tasks"][0]["state"] == "FAILED").then(|| {
            s["tasks"][0]["trace"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_source_records_commit_with_their_state_and_a_second_sync_reads_only_new_ones() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    w.create(airbyte(
        "fake",
        &fake(),
        json!({"count": 25, "per_state": 10}),
        &[],
    ))
    .await;
    let got = wait_records(&w.db, "numbers", 25).await;
    assert_eq!(numbers(&got), (1..=25).collect::<Vec<_>>());
    // A Struct from the discovered schema, a timestamp as Connect's Timestamp.
    let schema = &got[0]["schema"];
    assert_eq!(schema["type"], "struct");
    let at = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "at")
        .unwrap();
    assert_eq!(at["name"], "org.apache.kafka.connect.data.Timestamp");
    assert_eq!(got[0]["payload"]["at"], json!(1_704_067_201_000_i64));
    let answer = offsets(&w, "fake").await;
    assert_eq!(
        answer["offsets"],
        json!([{"partition": {"namespace": null, "stream": "numbers"}, "offset": {"n": 25}}])
    );
    // More numbers: the next READ starts from the committed state.
    let (status, _) = w
        .put(
            "/connectors/fake/config",
            airbyte("fake", &fake(), json!({"count": 32, "per_state": 10}), &[])["config"].clone(),
        )
        .await;
    assert_eq!(status, 200);
    let got = wait_records(&w.db, "numbers", 32).await;
    assert_eq!(numbers(&got), (1..=32).collect::<Vec<_>>());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sources_config_may_come_from_a_config_provider() {
    let dir = tempdir();
    let secrets = dir.path().join("secrets.properties");
    std::fs::write(&secrets, "source={\"count\": 6, \"per_state\": 3}\n").unwrap();
    let providers = FILE_CONFIG_PROVIDER;
    let w = TestWorker::start_with(dir.path(), &providers, Vec::new())
        .await
        .unwrap();
    let placeholder = format!("${{file:{}:source}}", secrets.display());
    let mut body = airbyte("secret", &fake(), json!({}), &[]);
    body["config"]["airbyte.config"] = json!(placeholder);
    w.create(body).await;
    // The source read the resolved config (six numbers), while the stored config keeps the placeholder.
    let got = wait_records(&w.db, "numbers", 6).await;
    assert_eq!(numbers(&got), (1..=6).collect::<Vec<_>>());
    let (status, config) = w.get("/connectors/secret/config").await;
    assert_eq!(status, 200);
    assert_eq!(config["airbyte.config"], json!(placeholder), "{config}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_after_the_last_state_of_a_failed_read_are_not_committed() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let config = json!({"count": 30, "per_state": 10, "behaviour": "fail_after", "fail_after": 15});
    w.create(airbyte("failing", &fake(), config, &[])).await;
    let trace = failed_trace(&w, "failing").await;
    assert!(trace.contains("READ failed (exit code 1)"), "{trace}");
    assert!(trace.contains("failing at 16"), "{trace}");
    assert_eq!(
        numbers(&values(&w.db, "numbers")),
        (1..=10).collect::<Vec<_>>()
    );
    let answer = offsets(&w, "failing").await;
    assert_eq!(answer["offsets"][0]["offset"], json!({"n": 10}));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_error_fails_the_task_with_its_message_and_stack_trace() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let config = json!({"count": 5, "behaviour": "trace_error"});
    w.create(airbyte("traced", &fake(), config, &[])).await;
    let trace = failed_trace(&w, "traced").await;
    assert!(trace.contains("The numbers ran out"), "{trace}");
    assert!(trace.contains("Traceback: numbers.py line 1"), "{trace}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_trace_error_is_retried_with_the_task_running() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let pid_file = dir.path().join("read.pid");
    let config = json!({"count": 5, "behaviour": "transient", "pid_file": pid_file});
    w.create(airbyte("busy", &fake(), config, &[])).await;
    let first = wait_for_blocking("the first READ's pid", SLOW, || {
        std::fs::read_to_string(&pid_file)
            .ok()?
            .trim()
            .parse::<u32>()
            .ok()
    });
    let trace = wait_for("the retriable error on the status", SLOW, || async {
        let s = w.status("busy").await;
        let task = &s["tasks"][0];
        assert_ne!(task["state"], "FAILED", "{s}");
        task["trace"].as_str().map(str::to_string)
    })
    .await;
    assert!(trace.contains("The numbers are busy"), "{trace}");
    assert_eq!(w.status("busy").await["tasks"][0]["state"], "RUNNING");
    wait_for_blocking("another READ", SLOW, || {
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        (pid != first).then_some(())
    });
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_runs_the_sources_spec_and_check() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let validate = |command: String, config: Json| {
        let body = airbyte("v", &command, config, &[])["config"].clone();
        let w = &w;
        async move {
            let (status, answer) = w
                .put("/connector-plugins/AirbyteSource/config/validate", body)
                .await;
            assert_eq!(status, 200, "{answer}");
            validation_errors(&answer)
        }
    };
    let ok = validate(fake(), json!({"count": 3})).await;
    assert!(ok.values().all(Vec::is_empty), "{ok:?}");
    let refused = validate(fake(), json!({"count": 0, "per_state": "x"})).await;
    assert_eq!(
        refused["airbyte.config"],
        [
            "The source's SPEC refuses it: $.count: 0 is less than the minimum of 1",
            "The source's SPEC refuses it: $.per_state: \"x\" is not of type integer"
        ]
    );
    let missing = validate(fake(), json!({})).await;
    assert_eq!(
        missing["airbyte.config"],
        ["The source's SPEC refuses it: $: the required property count is missing"]
    );
    let check = validate(fake(), json!({"count": 3, "behaviour": "check_fails"})).await;
    assert_eq!(
        check["airbyte.config"],
        ["The source's CHECK failed: The numbers are not reachable"]
    );
    let not_airbyte = validate("echo".into(), json!({})).await;
    let message = &not_airbyte["airbyte.command"][0];
    assert!(
        message.starts_with("echo is not an Airbyte source: spec printed no SPEC message (exit code 0); its output began with: spec"),
        "{message}"
    );
    let missing = validate("no-such-source-here".into(), json!({})).await;
    assert!(
        missing["airbyte.command"][0].starts_with("Cannot run no-such-source-here"),
        "{missing:?}"
    );
    let bad_json = w
        .put(
            "/connector-plugins/AirbyteSource/config/validate",
            json!({"name": "v", "connector.class": "AirbyteSource", "airbyte.command": fake(), "airbyte.config": "{nope"}),
        )
        .await
        .1;
    let errors = validation_errors(&bad_json);
    assert!(
        errors["airbyte.config"][0].starts_with("airbyte.config is not valid JSON"),
        "{errors:?}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_sources_fail_the_task_with_a_clear_message() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    w.create(airbyte("echo", "echo", json!({}), &[])).await;
    let garbage = json!({"count": 3, "behaviour": "garbage"});
    w.create(airbyte("garbage", &fake(), garbage, &[])).await;
    w.create(airbyte("refused", &fake(), json!({"count": "many"}), &[]))
        .await;
    let trace = failed_trace(&w, "echo").await;
    assert!(
        trace.contains("echo is not an Airbyte source: spec printed no SPEC message"),
        "{trace}"
    );
    let trace = failed_trace(&w, "garbage").await;
    assert!(
        trace.contains("is not an Airbyte source: its READ printed no Airbyte message (exit code 0); its output began with: Hello, this is not JSON"),
        "{trace}"
    );
    let trace = failed_trace(&w, "refused").await;
    assert!(
        trace.contains("airbyte.config does not match the source's SPEC: $.count: \"many\" is not of type integer"),
        "{trace}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_that_never_ends_is_stopped_by_its_timeout() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let pid_file = dir.path().join("read.pid");
    let config = json!({"count": 30, "per_state": 10, "behaviour": "hang", "pid_file": pid_file});
    w.create(airbyte(
        "hung",
        &fake(),
        config,
        &[("airbyte.read.timeout.ms", "3000")],
    ))
    .await;
    let got = wait_records(&w.db, "numbers", 10).await;
    assert_eq!(numbers(&got), (1..=10).collect::<Vec<_>>());
    let pid: u32 = wait_for_blocking("the READ's pid", SLOW, || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    let trace = wait_for("the timeout on the task's status", SLOW, || async {
        let s = w.status("hung").await;
        let trace = s["tasks"][0]["trace"].as_str().map(str::to_string);
        trace.filter(|t| t.contains("airbyte.read.timeout.ms"))
    })
    .await;
    assert!(trace.contains("did not finish within 3000 ms"), "{trace}");
    assert_eq!(w.status("hung").await["tasks"][0]["state"], "RUNNING");
    wait_for_blocking("the hung READ to be gone", SLOW, || {
        (!process_alive(pid)).then_some(())
    });
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_reset_while_stopped_give_a_full_sync() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    w.create(airbyte(
        "reset",
        &fake(),
        json!({"count": 12, "per_state": 5}),
        &[],
    ))
    .await;
    wait_records(&w.db, "numbers", 12).await;
    assert_eq!(
        offsets(&w, "reset").await["offsets"][0]["offset"],
        json!({"n": 12})
    );
    // The sync in the metrics: one READ, ended well, 12 records of the stream, its state committed.
    let scrape = wait_for("the sync's end in the metrics", SLOW, || async {
        let scrape = crate::common::scrape(&w.url).await;
        let syncs = sample(
            &scrape,
            "liteconnect_airbyte_syncs_total",
            &[("connector", "reset")],
        );
        (syncs == Some(1.0)).then_some(scrape)
    })
    .await;
    let stream = [("connector", "reset"), ("stream", "numbers")];
    let get = |name: &str, labels: &[(&str, &str)]| sample(&scrape, name, labels);
    assert_eq!(
        get("liteconnect_airbyte_records_read_total", &stream),
        Some(12.0)
    );
    let committed = get(
        "liteconnect_airbyte_last_state_commit_timestamp_seconds",
        &stream,
    );
    assert!(committed.is_some_and(|t| t > 1.7e9), "{committed:?}");
    let connector = [("connector", "reset")];
    assert_eq!(
        get("liteconnect_airbyte_last_sync_success", &connector),
        Some(1.0)
    );
    assert_eq!(
        get("liteconnect_airbyte_sync_running", &connector),
        Some(0.0)
    );
    assert!(get("liteconnect_airbyte_last_sync_duration_seconds", &connector).is_some());
    assert_eq!(w.put_empty("/connectors/reset/stop").await.0, 204);
    w.wait_for_state("reset", "STOPPED", 0, "RUNNING").await;
    let (status, answer) = w.delete("/connectors/reset/offsets").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(offsets(&w, "reset").await["offsets"], json!([]));
    assert_eq!(w.put_empty("/connectors/reset/resume").await.0, 202);
    let got = wait_records(&w.db, "numbers", 24).await;
    let mut expected: Vec<i64> = (1..=12).collect();
    expected.extend(1..=12);
    assert_eq!(numbers(&got), expected);
    w.stop().await;
}

/// The ids of the records of a faker topic.
fn ids(db: &Path, topic: &str) -> Vec<i64> {
    values(db, topic)
        .iter()
        .map(|v| v["payload"]["id"].as_i64().expect("id"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faker_syncs_incrementally_into_struct_records() {
    let faker = installed("airbyte-faker", "source-faker");
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let config = json!({"count": 40, "seed": 7, "records_per_slice": 10, "always_updated": false, "parallelism": 1});
    let extra = [
        ("airbyte.streams", "users,products"),
        ("topic.prefix", "faker."),
        ("airbyte.sync.interval.ms", "500"),
    ];
    w.create(airbyte("faker", &faker, config, &extra)).await;
    let users = wait_records(&w.db, "faker.users", 40).await;
    let schema = &users[0]["schema"];
    let field = |name: &str| {
        schema["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(field("id")["type"], "int64");
    assert_eq!(field("address")["type"], "struct");
    assert_eq!(
        field("updated_at")["name"],
        "org.apache.kafka.connect.data.Timestamp"
    );
    assert!(users[0]["payload"]["address"]["city"].is_string());
    let got: BTreeSet<i64> = ids(&w.db, "faker.users").into_iter().collect();
    assert_eq!(got, (1..=40).collect());
    let offsets = offsets(&w, "faker").await;
    let users_offset = offsets["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["partition"]["stream"] == "users")
        .cloned()
        .expect("the users stream's state");
    assert_eq!(users_offset["offset"]["loop_offset"], 40, "{offsets}");
    // The next READ is given the state and reads nothing new (faker's incremental sync with
    // `always_updated` false): seen as a READ with `--state` under this worker that ends.
    let marker = format!("--parent {}", std::process::id());
    let second = wait_for("a READ with the state", SLOW, || async {
        let status = w.status("faker").await;
        assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
        processes_with(&[&faker, " read ", "--state", &marker])
            .first()
            .copied()
    })
    .await;
    wait_for_blocking("the second READ to end", SLOW, || {
        (!process_alive(second)).then_some(())
    });
    assert_eq!(ids(&w.db, "faker.users").len(), 40);
    w.stop().await;
}

/// The rounds of the kill test: `LITECONNECT_AIRBYTE_KILL_ROUNDS`, 10 unless set.
fn kill_rounds() -> usize {
    std::env::var("LITECONNECT_AIRBYTE_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// Runs the real binary with the connector `body` reading `count` records into `topic`, killing it with
/// SIGKILL in the middle of the sync [`kill_rounds`] times, each time once more records are committed
/// than before, and checking that none of the source's processes outlives it; then lets the sync finish.
/// Returns the `field` of every record, in log order.
async fn killed_again_and_again(body: Json, topic: &str, field: &str, count: usize) -> Vec<i64> {
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    let read = |db: &Path| -> Vec<i64> {
        values(db, topic)
            .iter()
            .map(|v| v["payload"][field].as_i64().expect("a number"))
            .collect()
    };
    let mut last = 0;
    for round in 0..kill_rounds() {
        let bin = start_binary(dir.path(), &[]);
        let api = bin.healthy_api().await;
        if round == 0 {
            crate::common::create_through(&api, body.clone()).await;
        }
        let before = last;
        last = wait_for(
            &format!("round {round}: records past {before}"),
            SLOW,
            || {
                let n = values(&db, topic).len();
                async move { (n > before).then_some(n) }
            },
        )
        .await;
        let sources = descendants(bin.child.id());
        bin.kill();
        wait_for_blocking("the killed worker's sources to be gone", SLOW, || {
            sources.iter().all(|p| !process_alive(*p)).then_some(())
        });
        let got = read(&db);
        assert!(
            got.len() < count,
            "round {round}: the sync ended before the kill; make it longer"
        );
    }
    let bin = start_binary(dir.path(), &[]);
    bin.healthy_api().await;
    let got = wait_for("the sync to finish", SLOW * 2, || {
        let got = read(&db);
        let distinct: BTreeSet<i64> = got.iter().copied().collect();
        async move { (distinct.len() >= count).then_some(got) }
    })
    .await;
    bin.kill();
    got
}

/// Each STATE of the fake source covers exactly the records before it: after every `kill -9` the log
/// holds each number once, and at the end all of them, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_a_sync_leaves_every_record_exactly_once() {
    let count = 1000;
    let config = json!({"count": count, "per_state": 7, "delay": 0.01});
    let body = airbyte("fake", &fake(), config, &[]);
    let got = killed_again_and_again(body, "numbers", "n", count).await;
    assert_eq!(got, (1..=count as i64).collect::<Vec<_>>());
}

/// `source-faker` 7 does not resume an interrupted sync (a READ given a state with `updated_at` reads
/// nothing when `always_updated` is false), so one `kill -9` in the middle of its sync is enough: no
/// source process outlives the worker, and the log holds the users its committed STATEs cover, each
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_a_faker_sync_leaves_no_process_and_no_repeat() {
    let faker = installed("airbyte-faker", "source-faker");
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    let count = 3000;
    let config = json!({"count": count, "seed": 3, "records_per_slice": 100, "always_updated": false, "parallelism": 1});
    let body = airbyte("faker", &faker, config, &[("airbyte.streams", "users")]);
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    crate::common::create_through(&api, body).await;
    wait_for("the first users", SLOW, || {
        let n = values(&db, "users").len();
        async move { (n > 0).then_some(()) }
    })
    .await;
    let sources = descendants(bin.child.id());
    assert!(!sources.is_empty());
    bin.kill();
    wait_for_blocking("the killed worker's sources to be gone", SLOW, || {
        sources.iter().all(|p| !process_alive(*p)).then_some(())
    });
    let got = ids(&db, "users");
    assert!(got.len() < count, "the sync ended before the kill");
    assert_eq!(got, (1..=got.len() as i64).collect::<Vec<_>>());
}

/// The processes whose command line (arguments joined with spaces) holds every one of `parts`.
fn processes_with(parts: &[&str]) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let line = String::from_utf8_lossy(&c).replace('\0', " ");
                parts.iter().all(|p| line.contains(p))
            })
        })
        .collect()
}

/// The parent of a process, from `/proc/<pid>/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The processes below `root` (its children, their children, ...).
fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let all: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .collect();
    let mut found = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for pid in &all {
            if !found.contains(pid) && parent_of(*pid).is_some_and(|p| found.contains(&p)) {
                found.push(*pid);
                grew = true;
            }
        }
    }
    found.retain(|p| *p != root);
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_source_reads_csv_and_json_lines_in_full_each_interval() {
    let source_file = installed("airbyte-file", "source-file");
    let dir = tempdir();
    let csv = dir.path().join("people.csv");
    std::fs::write(&csv, "id,name,score\n1,ann,1.5\n2,bob,2\n").unwrap();
    let jsonl = dir.path().join("pets.jsonl");
    std::fs::write(&jsonl, "{\"id\": 1, \"kind\": \"cat\"}\n{\"id\": 2, \"kind\": \"dog\"}\n{\"id\": 3, \"kind\": \"eel\"}\n").unwrap();
    let w = TestWorker::start(dir.path()).await;
    let file_config = |name: &str, format: &str, path: &Path| json!({"dataset_name": name, "format": format, "url": path, "provider": {"storage": "local"}});
    let interval = [("airbyte.sync.interval.ms", "1000")];
    w.create(airbyte(
        "people",
        &source_file,
        file_config("people", "csv", &csv),
        &interval,
    ))
    .await;
    w.create(airbyte(
        "pets",
        &source_file,
        file_config("pets", "jsonl", &jsonl),
        &interval,
    ))
    .await;
    // Full refresh: every READ reads the whole file again.
    let people = wait_records(&w.db, "people", 4).await;
    let names: Vec<&str> = people
        .iter()
        .map(|v| v["payload"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[..4], ["ann", "bob", "ann", "bob"]);
    assert_eq!(people[0]["payload"]["score"], 1.5);
    let pets = wait_records(&w.db, "pets", 6).await;
    let kinds: Vec<&str> = pets
        .iter()
        .map(|v| v["payload"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[..6], ["cat", "dog", "eel", "cat", "dog", "eel"]);
    // A path that is not there: CHECK's own message in validate.
    let missing = dir.path().join("missing.csv");
    let body = airbyte("v", &source_file, file_config("x", "csv", &missing), &[])["config"].clone();
    let (status, answer) = w
        .put("/connector-plugins/AirbyteSource/config/validate", body)
        .await;
    assert_eq!(status, 200);
    let errors = validation_errors(&answer);
    let message = &errors["airbyte.config"][0];
    assert!(
        message.starts_with("The source's CHECK failed: Failed to load file://"),
        "{message}"
    );
    assert!(message.contains("missing.csv"), "{message}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spec_route_answers_the_sources_spec_or_a_kafka_style_error() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let route = "/connector-plugins/AirbyteSource/config/spec";
    let (status, spec) = w.put(route, json!({"airbyte.command": fake()})).await;
    assert_eq!(status, 200, "{spec}");
    let schema = &spec["connectionSpecification"];
    assert_eq!(schema["required"], json!(["count"]));
    assert_eq!(schema["properties"]["count"]["title"], "Count");
    assert_eq!(schema["properties"]["per_state"]["default"], 10);
    // The full class name works too.
    let full = "/connector-plugins/liteconnect.airbyte.AirbyteSourceConnector/config/spec";
    assert_eq!(w.put(full, json!({"airbyte.command": fake()})).await.0, 200);

    let (status, error) = w
        .put(route, json!({"airbyte.command": "no-such-source-here"}))
        .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error_code"], 400);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("The source's SPEC failed: ")
            && message.contains("no-such-source-here"),
        "{message}"
    );
    let (status, error) = w.put(route, json!({"airbyte.command": "echo"})).await;
    assert_eq!(status, 400, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("is not an Airbyte source"),
        "{error}"
    );
    let (status, error) = w.put(route, json!({})).await;
    assert_eq!(
        (status, &error["message"]),
        (
            400,
            &json!("The source's SPEC failed: airbyte.command is required")
        )
    );
    let other = "/connector-plugins/FileStreamSource/config/spec";
    let (status, error) = w.put(other, json!({"airbyte.command": fake()})).await;
    assert_eq!(status, 400, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("has no SPEC"),
        "{error}"
    );
    assert_eq!(w.get(route).await.0, 405);
    w.stop().await;
}
