//! Plugins that run as separate programs (`plugin.path`): the real binary with the SDKs' example plugins
//! and hostile ones as real child processes.

mod faults;
mod minor;
mod pipeline;
mod versions;

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use crate::common::*;

pub(super) const DEVICE: &str = "com.example.device.DeviceSourceConnector";
pub(super) const FILE_SINK: &str = "com.example.files.AppendFileSinkConnector";

/// The example plugins of the repository.
pub(super) fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plugins")
}

/// A worker config with `plugin.path` set to `paths`, plus `extra` lines.
pub(super) fn props(dir: &Path, paths: &[&Path], extra: &str) -> String {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!(
        "{}plugin.path={}\n{extra}",
        binary_props(dir),
        paths.join(",")
    )
}

pub(super) fn start(dir: &Path, paths: &[&Path], extra: &str) -> Binary {
    start_binary_with(dir, &props(dir, paths, extra), &[], 1)
}

/// The simulated device's connector, writing schemaless JSON values.
pub(super) fn device(name: &str, topic: &str, extra: Json) -> Json {
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
pub(super) fn seqs(dir: &Path, topic: &str) -> Vec<i64> {
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
pub(super) fn children_of(pid: u32) -> Vec<u32> {
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
pub(super) fn descendants_of(pid: u32) -> Vec<u32> {
    let mut out = children_of(pid);
    let mut i = 0;
    while i < out.len() {
        let more = children_of(out[i]);
        out.extend(more);
        i += 1;
    }
    out
}

pub(super) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

pub(super) async fn status_of(api: &Client, name: &str) -> Json {
    api.get(&format!("/connectors/{name}/status"))
        .await
        .unwrap()
        .1
}

pub(super) async fn task_state(api: &Client, name: &str) -> (String, String) {
    let s = status_of(api, name).await;
    let t = &s["tasks"][0];
    (
        t["state"].as_str().unwrap_or_default().to_string(),
        t["trace"].as_str().unwrap_or_default().to_string(),
    )
}

/// Waits until task 0 of `name` is FAILED and returns its trace.
pub(super) async fn failed_trace(api: &Client, name: &str) -> String {
    wait_for(&format!("{name}'s task to fail"), DEADLINE, || async {
        let (state, trace) = task_state(api, name).await;
        (state == "FAILED").then_some(trace)
    })
    .await
}

pub(super) async fn offset_seq(api: &Client, name: &str) -> Option<i64> {
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
