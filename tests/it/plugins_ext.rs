//! Plugins that run as separate programs (`plugin.path`): the real binary with the Python SDK's example
//! plugins and hostile ones as real child processes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::common::*;

const DEVICE: &str = "com.example.device.DeviceSourceConnector";
const FILE_SINK: &str = "com.example.files.AppendFileSinkConnector";

/// The example plugins of the repository.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plugins")
}

/// A worker config with `plugin.path` set to `paths`, plus `extra` lines.
fn props(dir: &Path, paths: &[&Path], extra: &str) -> String {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!(
        "{}plugin.path={}\n{extra}",
        binary_props(dir),
        paths.join(",")
    )
}

fn start(dir: &Path, paths: &[&Path], extra: &str) -> Binary {
    start_binary_with(dir, &props(dir, paths, extra), &[], 1)
}

/// The simulated device's connector, writing schemaless JSON values.
fn device(name: &str, topic: &str, extra: Json) -> Json {
    let mut config = json!({
        "connector.class": DEVICE, "topic": topic, "interval.ms": "0",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    });
    if let (Some(c), Json::Object(more)) = (config.as_object_mut(), extra) {
        c.extend(more);
    }
    json!({"name": name, "config": config})
}

/// The `seq` of every record of `topic`, in log order, read from the database file (through a file: the
/// output may be larger than a pipe holds).
fn seqs(dir: &Path, topic: &str) -> Vec<i64> {
    let db = dir.join("bin.db");
    let out = dir.join(format!("{topic}.consumed"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_liteconnect"))
        .args(["consume", topic, "--from-beginning", "--db"])
        .arg(&db)
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .expect("spawn consume");
    let status = wait_for_blocking("consume to finish", DEADLINE * 3, || {
        child.try_wait().expect("wait")
    });
    assert!(
        status.success(),
        "consume: {status}: {:?}",
        std::fs::read_to_string(&out)
    );
    lines(&out)
        .iter()
        .map(|l| {
            let v: Json = serde_json::from_str(l).expect("a JSON value");
            v["seq"].as_i64().expect("a seq")
        })
        .collect()
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// The processes below `pid`: its children, theirs, and so on.
fn descendants_of(pid: u32) -> Vec<u32> {
    let mut out = children_of(pid);
    let mut i = 0;
    while i < out.len() {
        let more = children_of(out[i]);
        out.extend(more);
        i += 1;
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

async fn status_of(api: &Client, name: &str) -> Json {
    api.get(&format!("/connectors/{name}/status"))
        .await
        .unwrap()
        .1
}

async fn task_state(api: &Client, name: &str) -> (String, String) {
    let s = status_of(api, name).await;
    let t = &s["tasks"][0];
    (
        t["state"].as_str().unwrap_or_default().to_string(),
        t["trace"].as_str().unwrap_or_default().to_string(),
    )
}

/// Waits until task 0 of `name` is FAILED and returns its trace.
async fn failed_trace(api: &Client, name: &str) -> String {
    wait_for(&format!("{name}'s task to fail"), DEADLINE, || async {
        let (state, trace) = task_state(api, name).await;
        (state == "FAILED").then_some(trace)
    })
    .await
}

async fn offset_seq(api: &Client, name: &str) -> Option<i64> {
    let o = api
        .get(&format!("/connectors/{name}/offsets"))
        .await
        .unwrap()
        .1;
    o["offsets"][0]["offset"]["seq"].as_i64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_on_plugin_path_are_listed_and_bad_manifests_are_left_out_with_the_reason() {
    let dir = tempdir();
    let bad = dir.path().join("bad");
    let manifest = |name: &str, text: &str| {
        let d = bad.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("liteconnect-plugin.json"), text).unwrap();
        std::fs::write(d.join("run.py"), "print('hi')\n").unwrap();
    };
    let entry = |class: &str, command: Json| {
        json!({"plugins": [{"class": class, "type": "source", "version": "1", "command": command}]})
            .to_string()
    };
    manifest("garbled", "{not json");
    manifest(
        "builtin",
        &entry(
            "org.apache.kafka.connect.file.FileStreamSourceConnector",
            json!(["python3", "run.py"]),
        ),
    );
    manifest("twice", &entry(DEVICE, json!(["python3", "run.py"])));
    manifest(
        "outside",
        &entry("com.example.Outside", json!(["../garbled/run.py"])),
    );
    manifest(
        "missing",
        &entry("com.example.Missing", json!(["./nope.py"])),
    );
    manifest(
        "nocommand",
        &entry("com.example.NoCommand", json!(["no-such-program-here"])),
    );
    let bin = start(dir.path(), &[&examples(), &bad], "");
    let api = bin.healthy_api().await;
    let all = api.get("/connector-plugins").await.unwrap().1;
    let listed: Vec<(String, String, String)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = |k: &str| p[k].as_str().unwrap_or_default().to_string();
            (s("class"), s("type"), s("version"))
        })
        .collect();
    assert!(
        listed.contains(&(DEVICE.into(), "source".into(), "1.0.0".into())),
        "{all}"
    );
    assert!(
        listed.contains(&(FILE_SINK.into(), "sink".into(), "1.0.0".into())),
        "{all}"
    );
    for left_out in [
        "com.example.Outside",
        "com.example.Missing",
        "com.example.NoCommand",
    ] {
        assert!(
            !listed.iter().any(|(c, _, _)| c == left_out),
            "{left_out} listed"
        );
    }
    let log = bin.log.lock().unwrap().join("\n");
    for (dir_name, reason) in [
        ("garbled", "is not a valid manifest"),
        (
            "builtin",
            "FileStreamSourceConnector clashes with a built-in plugin",
        ),
        ("twice", "is already provided by"),
        ("outside", "is outside the plugin's directory"),
        ("missing", "the command ./nope.py does not exist"),
        (
            "nocommand",
            "the command no-such-program-here is not found on PATH",
        ),
    ] {
        let file = bad.join(dir_name).join("liteconnect-plugin.json");
        assert!(
            log.lines()
                .any(|l| l.contains(&file.display().to_string()) && l.contains(reason)),
            "no line naming {} with {reason:?} in:\n{log}",
            file.display()
        );
    }
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_and_validation_come_from_the_plugin_program_and_the_framework() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let (status, keys) = api
        .get("/connector-plugins/DeviceSourceConnector/config")
        .await
        .unwrap();
    assert_eq!(status, 200, "{keys}");
    let topic = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "topic")
        .expect("topic");
    assert_eq!(topic["required"], true);
    assert_eq!(topic["importance"], "HIGH");
    assert!(
        keys.as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"] == "tasks.max"),
        "framework keys too"
    );
    let (status, answer) = api
        .put(
            "/connector-plugins/DeviceSourceConnector/config/validate",
            &json!({"connector.class": DEVICE, "interval.ms": "-5", "tasks.max": "zero"}),
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    let errors = validation_errors(&answer);
    assert!(
        errors["interval.ms"]
            .iter()
            .any(|e| e.contains("at least 0")),
        "{answer}"
    );
    assert!(
        !errors["topic"].is_empty(),
        "the plugin's required key: {answer}"
    );
    assert!(
        !errors["tasks.max"].is_empty(),
        "the framework's key: {answer}"
    );
    // A create with an invalid config is refused with the plugin's message.
    let (status, body) = api
        .post(
            "/connectors",
            &device("bad", "t", json!({"interval.ms": "-1"})),
        )
        .await
        .unwrap();
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("at least 0"),
        "{body}"
    );
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_source_into_file_sink_and_offsets_resumed_after_a_restart() {
    let dir = tempdir();
    let out = dir.path().join("out.jsonl");
    let ack = dir.path().join("ack.txt");
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let ack_file = ack.display().to_string();
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": "300", "ack.file": ack_file}),
        ),
    )
    .await;
    create_through(
        &api,
        json!({"name": "out", "config": {"connector.class": "AppendFileSink", "topics": "readings",
            "file": out.display().to_string(),
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"}}),
    )
    .await;
    wait_until("300 readings in the sink's file", || async {
        lines(&out).len() >= 300
    })
    .await;
    // The source acknowledged only what was committed, and all of it.
    wait_until("the last reading acknowledged", || async {
        std::fs::read_to_string(&ack).is_ok_and(|s| s.trim() == "300")
    })
    .await;
    assert_eq!(offset_seq(&api, "dev").await, Some(300));
    bin.terminate();
    assert_eq!(seqs(dir.path(), "readings"), (1..=300).collect::<Vec<_>>());

    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let (status, body) = api
        .put(
            "/connectors/dev/config",
            &device(
                "dev",
                "readings",
                json!({"count": "500", "ack.file": ack_file}),
            )["config"],
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{body}");
    wait_until("500 readings in the sink's file", || async {
        lines(&out).len() >= 500
    })
    .await;
    bin.terminate();
    // Resumed after the last committed reading: none lost, none twice, in the log and in the file.
    assert_eq!(seqs(dir.path(), "readings"), (1..=500).collect::<Vec<_>>());
    let written: Vec<i64> = lines(&out)
        .iter()
        .map(|l| {
            serde_json::from_str::<Json>(l).unwrap()["seq"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(written, (1..=500).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_plugin_process_fails_its_task_and_a_restart_resumes_from_the_committed_offset() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"interval.ms": "2", "batch.size": "10"}),
        ),
    )
    .await;
    wait_for("some readings committed", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s >= 50)
    })
    .await;
    let plugin = wait_for("the plugin's process", DEADLINE, || async {
        descendants_of(bin.child.id()).into_iter().find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.contains("device_source.py") && !c.contains("__child-host"))
        })
    })
    .await;
    std::process::Command::new("kill")
        .args(["-KILL", &plugin.to_string()])
        .status()
        .unwrap();
    let trace = failed_trace(&api, "dev").await;
    assert!(
        trace.contains("The plugin program exited (exit code 137)"),
        "{trace}"
    );
    assert!(
        trace.contains("starts after reading"),
        "the stderr tail: {trace}"
    );
    let before = offset_seq(&api, "dev").await.unwrap();
    let (status, _) = api
        .post_empty("/connectors/dev/tasks/0/restart")
        .await
        .unwrap();
    assert_eq!(status, 204);
    wait_for("more readings after the restart", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s >= before + 50)
    })
    .await;
    let (code, _) = api.put_empty("/connectors/dev/stop").await.unwrap();
    assert_eq!(code, 204);
    wait_until("the task stopped", || async {
        status_of(&api, "dev").await["connector"]["state"] == "STOPPED"
    })
    .await;
    let got = seqs(dir.path(), "readings");
    let expected: Vec<i64> = (1..=got.len() as i64).collect();
    assert_eq!(got, expected, "none lost, none twice across the kill");
    bin.terminate();
}

/// The test plugins that misbehave (tests/plugins/hostile).
fn hostile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_plugins_fail_their_own_task_and_nothing_else() {
    let dir = tempdir();
    let pids = dir.path().join("pids.txt");
    let bin = start(
        dir.path(),
        &[&examples(), &hostile()],
        "plugin.request.timeout.ms=1500\ntask.shutdown.graceful.timeout.ms=500\n",
    );
    let api = bin.healthy_api().await;
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"interval.ms": "5", "batch.size": "5"}),
        ),
    )
    .await;
    let cases = [
        (
            "garbage",
            "is not a protocol message: this is not a protocol message",
        ),
        ("huge", "wrote a message longer than 16777216 bytes"),
        (
            "silent",
            "did not answer \"poll\" within 1500 ms (plugin.request.timeout.ms)",
        ),
        ("exit", "The plugin program exited (exit code 3)"),
        ("fork", "did not answer \"poll\" within 1500 ms"),
    ];
    for (mode, _) in cases {
        create_through(
            &api,
            json!({"name": mode, "config": {"connector.class": "test.HostileSourceConnector",
                "topic": "hostile", "mode": mode, "pids.file": pids.display().to_string()}}),
        )
        .await;
    }
    for (mode, expected) in cases {
        let trace = failed_trace(&api, mode).await;
        assert!(trace.contains(expected), "{mode}: {trace}");
        assert!(
            trace.contains(&format!("hostile task in mode {mode}")),
            "{mode}, the stderr tail: {trace}"
        );
    }
    // The forked children went with the plugin's process group.
    let forked: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(forked.len(), 3);
    wait_until("the forked children gone", || async {
        !forked.iter().any(|p| alive(*p))
    })
    .await;
    // The worker and the well-behaved plugin carried on throughout.
    let before = offset_seq(&api, "dev").await.unwrap_or(0);
    wait_for("the device source still running", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s > before + 20)
    })
    .await;
    assert_eq!(task_state(&api, "dev").await.0, "RUNNING");
    bin.terminate();
    let got = seqs(dir.path(), "readings");
    assert_eq!(got, (1..=got.len() as i64).collect::<Vec<_>>());
}

/// Rounds of `kill -9` of the worker while a Python source emits, and the records it emits in all
/// (`LITECONNECT_PLUGIN_KILLS` and `LITECONNECT_PLUGIN_RECORDS` change them).
fn kill_loop_size() -> (usize, i64) {
    let var = |k: &str, d: i64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    (
        var("LITECONNECT_PLUGIN_KILLS", 20) as usize,
        var("LITECONNECT_PLUGIN_RECORDS", 100_000),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_worker_while_a_python_source_emits_loses_and_repeats_nothing() {
    let (kills, records) = kill_loop_size();
    let started = std::time::Instant::now();
    let dir = tempdir();
    let mut bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let count = records.to_string();
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": count, "batch.size": "500"}),
        ),
    )
    .await;
    let mut rng = 0x5eed_f00d_u64;
    for round in 0..kills {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // Killed at a varying moment, the kills spread over the run.
        let api = bin.api();
        let step = records / (kills as i64 + 1);
        let at_least = (round as i64 + 1) * step + (rng % step.max(1) as u64) as i64 / 2;
        wait_for("records flowing before the kill", DEADLINE, || async {
            offset_seq(&api, "dev")
                .await
                .filter(|s| *s >= at_least.min(records))
        })
        .await;
        let plugins: Vec<u32> = descendants_of(bin.child.id());
        bin.kill();
        // No plugin process outlives the worker.
        wait_until(
            &format!("round {round}: the plugin processes gone"),
            || async { !plugins.iter().any(|p| alive(*p)) },
        )
        .await;
        bin = start(dir.path(), &[&examples()], "");
    }
    let api = bin.healthy_api().await;
    wait_for(
        "every record committed",
        Duration::from_secs(600),
        || async { offset_seq(&api, "dev").await.filter(|s| *s == records) },
    )
    .await;
    bin.terminate();
    let got = seqs(dir.path(), "readings");
    assert_eq!(got.len() as i64, records, "none lost, none twice");
    assert!(
        got.iter().zip(1..).all(|(s, i)| *s == i),
        "in order, each once"
    );
    eprintln!(
        "plugin kill loop: {kills} kills of the worker, {records} records from a Python source, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

async fn sink_committed(api: &Client, name: &str) -> Option<i64> {
    let o = api
        .get(&format!("/connectors/{name}/offsets"))
        .await
        .unwrap()
        .1;
    o["offsets"][0]["offset"]["kafka_offset"].as_i64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_plugin_killed_mid_batch_gets_again_only_what_was_not_committed() {
    const RECORDS: i64 = 1500;
    let dir = tempdir();
    let out = dir.path().join("out.jsonl");
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let count = RECORDS.to_string();
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": count, "interval.ms": "1", "batch.size": "10"}),
        ),
    )
    .await;
    create_through(
        &api,
        json!({"name": "out", "config": {"connector.class": FILE_SINK, "topics": "readings",
            "file": out.display().to_string(),
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"}}),
    )
    .await;
    wait_for("the sink past 300 committed", DEADLINE, || async {
        sink_committed(&api, "out").await.filter(|o| *o >= 300)
    })
    .await;
    let plugin = wait_for("the sink plugin's process", DEADLINE, || async {
        descendants_of(bin.child.id()).into_iter().find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.contains("file_sink.py") && !c.contains("__child-host"))
        })
    })
    .await;
    std::process::Command::new("kill")
        .args(["-KILL", &plugin.to_string()])
        .status()
        .unwrap();
    let trace = failed_trace(&api, "out").await;
    assert!(trace.contains("The plugin program"), "{trace}");
    let committed = sink_committed(&api, "out").await.unwrap();
    let (status, _) = api
        .post_empty("/connectors/out/tasks/0/restart")
        .await
        .unwrap();
    assert_eq!(status, 204);
    let expected: Vec<String> = (1..=RECORDS).map(|s| s.to_string()).collect();
    let seqs_written = || -> Vec<String> {
        lines(&out)
            .iter()
            .map(|l| serde_json::from_str::<Json>(l).unwrap()["seq"].to_string())
            .collect()
    };
    wait_until("every reading in the file", || async {
        let got = seqs_written();
        expected.iter().all(|e| got.contains(e))
    })
    .await;
    bin.terminate();
    let got = seqs_written();
    let repeats = assert_delivered_in_order(&got, &expected);
    // What is given again starts at the committed offset: only records after it are repeated.
    let mut seen = std::collections::BTreeSet::new();
    for s in &got {
        if !seen.insert(s.clone()) {
            let seq: i64 = s.parse().unwrap();
            assert!(
                seq > committed,
                "record {seq} repeated, though committed ({committed})"
            );
        }
    }
    eprintln!("sink plugin killed: committed {committed}, {repeats} records written again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transformation_plugin_runs_in_the_source_pipeline() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let all = api
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap()
        .1;
    assert!(
        all.as_array().unwrap().iter().any(|p| p["class"]
            == "com.example.transforms.CelsiusToFahrenheit"
            && p["type"] == "transformation"
            && p["version"] == "1.0.0"),
        "{all}"
    );
    let (status, keys) = api
        .get("/connector-plugins/CelsiusToFahrenheit/config")
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(keys[0]["name"], "field", "{keys}");
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": "200", "transforms": "f", "transforms.f.type": "CelsiusToFahrenheit"}),
        ),
    )
    .await;
    wait_for("200 readings", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s == 200)
    })
    .await;
    bin.terminate();
    let db = dir.path().join("bin.db").display().to_string();
    let (code, out, err) = run_binary(
        dir.path(),
        &[
            "consume",
            "readings",
            "--from-beginning",
            "--max",
            "50",
            "--db",
            &db,
        ],
    );
    assert_eq!(code, 0, "{err}");
    for line in out.lines() {
        let v: Json = serde_json::from_str(line).unwrap();
        let seq = v["seq"].as_f64().unwrap();
        let celsius = ((20.0 + 5.0 * (seq / 10.0).sin()) * 1000.0).round() / 1000.0;
        let fahrenheit = v["reading"].as_f64().unwrap();
        assert!(
            (fahrenheit - (celsius * 9.0 / 5.0 + 32.0)).abs() < 0.01,
            "{line}"
        );
    }
    assert_eq!(out.lines().count(), 50);
}

#[test]
fn liteconnect_validate_checks_a_plugin_connector_offline_with_its_plugin_path() {
    let dir = tempdir();
    let file = dir.path().join("dev.json");
    std::fs::write(
        &file,
        device("dev", "t", json!({"interval.ms": "-3"})).to_string(),
    )
    .unwrap();
    let file = file.display().to_string();
    let path = examples().display().to_string();
    let (code, out, err) = run_binary(dir.path(), &["validate", "--plugin-path", &path, &file]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("interval.ms must be a number of at least 0"),
        "{out}{err}"
    );
    std::fs::write(&file, device("dev", "t", json!({})).to_string()).unwrap();
    let (code, out, err) = run_binary(dir.path(), &["validate", "--plugin-path", &path, &file]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = run_binary(dir.path(), &["validate", &file]);
    assert_ne!(code, 0);
    assert!(
        err.contains("DeviceSourceConnector") || !err.is_empty(),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retriable_plugin_error_keeps_the_task_running_with_the_trace() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&hostile()], "");
    let api = bin.healthy_api().await;
    create_through(
        &api,
        json!({"name": "flaky", "config": {"connector.class": "test.HostileSourceConnector",
            "topic": "f", "mode": "flaky"}}),
    )
    .await;
    let trace = wait_for("the retriable error shown", DEADLINE, || async {
        let (state, trace) = task_state(&api, "flaky").await;
        (state == "RUNNING" && trace.contains("device busy")).then_some(trace)
    })
    .await;
    assert!(trace.contains("RetriableException"), "{trace}");
    wait_for(
        "records after the retries, the trace cleared",
        DEADLINE,
        || async {
            let o = api.get("/connectors/flaky/offsets").await.unwrap().1;
            let n = o["offsets"][0]["offset"]["n"].as_i64()?;
            let (state, trace) = task_state(&api, "flaky").await;
            (n >= 6 && state == "RUNNING" && trace.is_empty()).then_some(())
        },
    )
    .await;
    // Paused, the flow stops without the process being stopped; resumed, it goes on.
    let (code, _) = api.put_empty("/connectors/flaky/pause").await.unwrap();
    assert_eq!(code, 202);
    wait_until("paused", || async {
        task_state(&api, "flaky").await.0 == "PAUSED"
    })
    .await;
    let plugins = descendants_of(bin.child.id());
    assert!(!plugins.is_empty());
    let (code, _) = api.put_empty("/connectors/flaky/resume").await.unwrap();
    assert_eq!(code, 202);
    wait_until("running again", || async {
        task_state(&api, "flaky").await.0 == "RUNNING"
    })
    .await;
    assert!(
        plugins.iter().all(|p| alive(*p)),
        "the same processes after a pause"
    );
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_tolerance_applies_to_a_plugin_transformation_s_errors() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples(), &hostile()], "");
    let api = bin.healthy_api().await;
    let failing = json!({"count": "100", "transforms": "x", "transforms.x.type": "test.FailingTransformation"});
    let mut tolerant = failing.clone();
    tolerant["errors.tolerance"] = json!("all");
    create_through(&api, device("tolerant", "kept", tolerant)).await;
    create_through(&api, device("strict", "strict", failing)).await;
    wait_for("every reading handled", DEADLINE, || async {
        offset_seq(&api, "tolerant").await.filter(|s| *s == 100)
    })
    .await;
    let trace = failed_trace(&api, "strict").await;
    assert!(trace.contains("seq 10 refused"), "{trace}");
    // Nothing of the failed batch is stored, its offsets neither.
    assert_eq!(offset_seq(&api, "strict").await, None);
    bin.terminate();
    let kept = seqs(dir.path(), "kept");
    assert_eq!(kept, (1..=100).filter(|s| s % 10 != 0).collect::<Vec<_>>());
}

/// The Rust SDK's example source, built with cargo into a target directory of its own (kept between
/// runs), copied into a plugin directory with its manifest.
fn rust_counter_plugin(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target/plugin-sdk");
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "build",
                "--quiet",
                "--locked",
                "-p",
                "liteconnect-plugin",
                "--example",
                "counter_source",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(root)
            .status()
            .expect("cargo");
    assert!(status.success(), "building the Rust SDK's example");
    let plugin = dir.join("rust-plugins/counter");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::copy(
        target.join("debug/examples/counter_source"),
        plugin.join("counter_source"),
    )
    .unwrap();
    std::fs::write(
        plugin.join("liteconnect-plugin.json"),
        json!({"plugins": [{"class": "com.example.CounterSourceConnector", "type": "source",
            "version": "0.1.0", "command": ["./counter_source"]}]})
        .to_string(),
    )
    .unwrap();
    dir.join("rust-plugins")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_sdk_source_end_to_end() {
    let dir = tempdir();
    let plugins = rust_counter_plugin(dir.path());
    let bin = start(dir.path(), &[&plugins], "");
    let api = bin.healthy_api().await;
    let (status, keys) = api
        .get("/connector-plugins/CounterSource/config")
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(keys[0]["name"], "topic", "{keys}");
    create_through(
        &api,
        json!({"name": "count", "config": {"connector.class": "CounterSource", "topic": "counts",
            "count": "5000", "batch.size": "700"}}),
    )
    .await;
    wait_for("5,000 counts", DEADLINE, || async {
        let o = api.get("/connectors/count/offsets").await.unwrap().1;
        o["offsets"][0]["offset"]["n"]
            .as_i64()
            .filter(|n| *n == 5000)
    })
    .await;
    bin.terminate();
    let db = dir.path().join("bin.db").display().to_string();
    let (code, out, err) = run_binary(
        dir.path(),
        &[
            "consume",
            "counts",
            "--from-beginning",
            "--max",
            "3",
            "--db",
            &db,
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "1\n2\n3\n");
}

/// The example device source copied into `dir/<version>` with its manifest saying `version`.
fn device_in_version(dir: &Path, version: &str) -> PathBuf {
    let plugin = dir.join(version);
    std::fs::create_dir_all(&plugin).unwrap();
    let example = examples().join("device-source");
    std::fs::copy(
        example.join("device_source.py"),
        plugin.join("device_source.py"),
    )
    .unwrap();
    let sdk =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/python/liteconnect_plugin/__init__.py");
    std::fs::create_dir_all(plugin.join("liteconnect_plugin")).unwrap();
    std::fs::copy(sdk, plugin.join("liteconnect_plugin/__init__.py")).unwrap();
    let manifest = std::fs::read_to_string(example.join("liteconnect-plugin.json"))
        .unwrap()
        .replace("1.0.0", version);
    std::fs::write(plugin.join("liteconnect-plugin.json"), manifest).unwrap();
    plugin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip_891_picks_a_version_by_range_and_the_newest_by_default() {
    let dir = tempdir();
    let versions = dir.path().join("versions");
    device_in_version(&versions, "1.0.0");
    device_in_version(&versions, "2.0.0");
    let bin = start(dir.path(), &[&versions], "");
    let api = bin.healthy_api().await;
    let all = api.get("/connector-plugins").await.unwrap().1;
    let listed: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == DEVICE)
        .map(|p| p["version"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["1.0.0", "2.0.0"]);
    let running = |name: &'static str| {
        let api = api.clone();
        async move {
            let tasks = api
                .get(&format!("/connectors/{name}/tasks"))
                .await
                .unwrap()
                .1;
            tasks[0]["config"]["connector.plugin.version"]
                .as_str()
                .map(str::to_owned)
        }
    };
    create_through(
        &api,
        device(
            "older",
            "o",
            json!({"connector.plugin.version": "[1.0,2.0)", "count": "5"}),
        ),
    )
    .await;
    create_through(&api, device("newest", "n", json!({"count": "5"}))).await;
    create_through(
        &api,
        device(
            "exact",
            "e",
            json!({"connector.plugin.version": "2.0.0", "count": "5"}),
        ),
    )
    .await;
    assert_eq!(running("older").await.as_deref(), Some("1.0.0"));
    assert_eq!(running("newest").await.as_deref(), Some("2.0.0"));
    assert_eq!(running("exact").await.as_deref(), Some("2.0.0"));
    wait_for("the older version running", DEADLINE, || async {
        offset_seq(&api, "older").await.filter(|s| *s == 5)
    })
    .await;
    let (status, body) = api
        .post(
            "/connectors",
            &device("none", "x", json!({"connector.plugin.version": "[3.0,)"})),
        )
        .await
        .unwrap();
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(&format!(
            "Plugin {DEVICE} not found that matches the version range [3.0,), available versions: [1.0.0, 2.0.0]"
        )),
        "{body}"
    );
    bin.terminate();
}

async fn cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let dir = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_binary(&dir, &args)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_connector_migrates_only_to_a_worker_that_has_its_class_and_exports_like_any() {
    let (a, b, c) = (tempdir(), tempdir(), tempdir());
    let from = start(a.path(), &[&examples()], "");
    let without = start(b.path(), &[], "");
    let with = start(c.path(), &[&examples()], "");
    let api = from.healthy_api().await;
    create_through(&api, device("dev", "readings", json!({"count": "50"}))).await;
    wait_for("50 readings", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s == 50)
    })
    .await;
    let (code, _, err) = cli(
        a.path(),
        &["migrate", "--from", &from.url, "--to", &without.url],
    )
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("has no connector plugin {DEVICE}")),
        "{err}"
    );
    let (code, _, err) = cli(
        a.path(),
        &[
            "export",
            "--from",
            &from.url,
            "--out",
            &a.path().display().to_string(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let exported: Json =
        serde_json::from_str(&std::fs::read_to_string(a.path().join("dev.json")).unwrap()).unwrap();
    assert_eq!(exported["config"]["connector.class"], DEVICE);
    assert_eq!(exported["offsets"][0]["offset"]["seq"], 50, "{exported}");
    let (code, out, err) = cli(
        a.path(),
        &["migrate", "--from", &from.url, "--to", &with.url],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let target = with.api();
    assert_eq!(offset_seq(&target, "dev").await, Some(50));
    from.terminate();
    without.terminate();
    with.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_predicate_plugin_decides_which_records_a_transformation_sees() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let all = api
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap()
        .1;
    assert!(
        all.as_array().unwrap().iter().any(
            |p| p["class"] == "com.example.predicates.ReadingAbove" && p["type"] == "predicate"
        ),
        "{all}"
    );
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": "100", "transforms": "drop", "transforms.drop.type": "Filter",
                "transforms.drop.predicate": "above", "predicates": "above",
                "predicates.above.type": "ReadingAbove", "predicates.above.threshold": "22"}),
        ),
    )
    .await;
    wait_for("100 readings handled", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s == 100)
    })
    .await;
    bin.terminate();
    let reading = |seq: i64| ((20.0 + 5.0 * (seq as f64 / 10.0).sin()) * 1000.0).round() / 1000.0;
    let expected: Vec<i64> = (1..=100).filter(|s| reading(*s) <= 22.0).collect();
    assert!(
        expected.len() > 20 && expected.len() < 80,
        "{}",
        expected.len()
    );
    assert_eq!(seqs(dir.path(), "readings"), expected);
}
