//! State that survives restarts, graceful and `kill -9`, and the target-state columns written as Kafka writes them.

use std::process::Command;

use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_is_as_it_was_after_a_restart() {
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    append_lines(&input, ["a".to_string()]);
    let w = TestWorker::start(dir.path()).await;
    for name in ["run", "paused", "stopped", "reconf"] {
        w.create(file_source(name, &input, "t")).await;
    }
    assert_eq!(w.put_empty("/connectors/paused/pause").await.0, 202);
    assert_eq!(w.put_empty("/connectors/stopped/stop").await.0, 204);
    let (s, _) = w
        .patch("/connectors/reconf/config", json!({"batch.size": "7"}))
        .await;
    assert_eq!(s, 200);
    w.create(json!({"name": "born-paused", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": "PAUSED"})).await;
    w.stop().await;

    let w = TestWorker::start(dir.path()).await;
    assert_eq!(
        w.get("/connectors").await.1,
        json!(["born-paused", "paused", "reconf", "run", "stopped"])
    );
    w.wait_for_state("run", "RUNNING", 1, "RUNNING").await;
    w.wait_for_state("paused", "PAUSED", 1, "PAUSED").await;
    w.wait_for_state("stopped", "STOPPED", 0, "").await;
    w.wait_for_state("born-paused", "PAUSED", 0, "").await;
    assert_eq!(
        w.get("/connectors/reconf/config").await.1["batch.size"],
        "7"
    );
    w.wait_for_state("reconf", "RUNNING", 1, "RUNNING").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_state_columns_hold_kafkas_values() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    for (name, state) in [("r", "RUNNING"), ("p", "PAUSED"), ("s", "STOPPED")] {
        let mut body = file_source(name, &input, "t");
        body["initial_state"] = json!(state);
        w.create(body).await;
    }
    let db = w.db.clone();
    w.stop().await;
    let conn = rusqlite::Connection::open(&db).unwrap();
    let row = |name: &str| -> (String, Option<String>) {
        conn.query_row(
            "SELECT state, state_v2 FROM target_states WHERE connector = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    assert_eq!(row("r"), ("STARTED".into(), Some("STARTED".into())));
    assert_eq!(row("p"), ("PAUSED".into(), Some("PAUSED".into())));
    assert_eq!(row("s"), ("PAUSED".into(), Some("STOPPED".into())));
    // A row an older writer left, with only the legacy column, is read from `state`.
    conn.execute(
        "UPDATE target_states SET state = 'PAUSED', state_v2 = NULL WHERE connector = 'r'",
        [],
    )
    .unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    drop(conn);
    let w = TestWorker::start(dir.path()).await;
    // It had one task config stored while it ran; paused, that task exists but idles.
    w.wait_for_state("r", "PAUSED", 1, "PAUSED").await;
    w.wait_for_state("s", "STOPPED", 0, "").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_survives_kill_9_of_the_binary() {
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let output = dir.path().join("out.txt");
    let all: Vec<String> = (0..2000).map(|i| format!("record-{i:05}")).collect();
    append_lines(&input, all[..1000].to_vec());
    let mut bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    create_through(&api, file_source("src", &input, "t")).await;
    create_through(&api, file_sink("snk", &output, "t")).await;
    create_through(&api, json!({"name": "held", "config": {"connector.class": "FileStreamSink", "topics": "x"}, "initial_state": "STOPPED"})).await;
    assert_eq!(
        api.put_empty("/connectors/held/pause").await.unwrap().0,
        202
    );
    wait_until("half the lines out", || async {
        lines(&output).len() >= 1000
    })
    .await;
    bin.child.kill().unwrap(); // SIGKILL
    bin.child.wait().unwrap();

    append_lines(&input, all[1000..].to_vec());
    let mut bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    wait_until("every line out", || async {
        let got = lines(&output);
        all.iter().all(|l| got.contains(l))
    })
    .await;
    // At-least-once: nothing is lost; anything seen twice was delivered after the last committed offset.
    assert_delivered_in_order(&lines(&output), &all);
    let status = api.get("/connectors/held/status").await.unwrap().1;
    assert_eq!(status["connector"]["state"], "PAUSED");
    let names = api.get("/connectors").await.unwrap().1;
    assert_eq!(names, json!(["held", "snk", "src"]));
    bin.child.kill().unwrap();
    bin.child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_down_gracefully_and_commits() {
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let output = dir.path().join("out.txt");
    append_lines(&input, (0..300).map(|i| format!("l{i}")));
    let mut bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    create_through(&api, file_source("src", &input, "t")).await;
    create_through(&api, file_sink("snk", &output, "t")).await;
    wait_until("all lines out", || async { lines(&output).len() == 300 }).await;
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(bin.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let code = wait_for("the worker to exit on SIGTERM", DEADLINE, || {
        let exited = bin.child.try_wait().unwrap();
        async move { exited }
    })
    .await;
    assert!(code.success(), "{code:?}");
    // Committed before exit: a restart delivers nothing twice.
    let mut bin = start_binary(dir.path(), &[]);
    healthy(&bin.api()).await;
    append_lines(&input, ["after".to_string()]);
    wait_until("the new line out", || async {
        lines(&output).last().map(String::as_str) == Some("after")
    })
    .await;
    assert_eq!(lines(&output).len(), 301);
    bin.child.kill().unwrap();
    bin.child.wait().unwrap();
}
