//! Plugin programs that die, are killed, misbehave or fail: the task says why, nothing stored is lost.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::*;
use crate::common::*;

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
    kill_plugin_process(&bin, "device_source.py").await;
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
/// Kills with SIGKILL the worker's plugin process running `script` (not its child host), once it runs.
async fn kill_plugin_process(bin: &Binary, script: &str) {
    let plugin = wait_for("the plugin's process", DEADLINE, || async {
        descendants_of(bin.child.id()).into_iter().find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.contains(script) && !c.contains("__child-host"))
        })
    })
    .await;
    std::process::Command::new("kill")
        .args(["-KILL", &plugin.to_string()])
        .status()
        .unwrap();
}

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
    kill_plugin_process(&bin, "file_sink.py").await;
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
