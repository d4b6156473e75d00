//! KIP-980: connectors created RUNNING, PAUSED or STOPPED, and every transition between the three.

use serde_json::{json, Value as Json};

use crate::common::*;

fn with_state(mut body: Json, state: Option<&str>) -> Json {
    if let Some(s) = state {
        body["initial_state"] = json!(s);
    }
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_paused_or_stopped_spawn_no_tasks() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    append_lines(&input, ["a".to_string(), "b".to_string()]);
    for (name, state, shown) in [
        ("p", "PAUSED", "PAUSED"),
        ("s", "stopped", "STOPPED"),
        ("p2", "Paused", "PAUSED"),
    ] {
        let (code, body) = w
            .post(
                "/connectors",
                with_state(
                    file_source(name, &input, &format!("topic-{name}")),
                    Some(state),
                ),
            )
            .await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["tasks"], json!([]), "create response of {name}");
        let status = w.status(name).await;
        assert_eq!(status["connector"]["state"], shown, "{status}");
        assert_eq!(status["tasks"], json!([]));
        assert_eq!(
            w.get(&format!("/connectors/{name}/tasks")).await,
            (200, json!([]))
        );
        assert_eq!(
            w.get(&format!("/connectors/{name}")).await.1["tasks"],
            json!([])
        );
    }
    // Nothing was read: no topic was written for either.
    assert_eq!(
        w.get("/connectors/p/topics").await.1,
        json!({"p": {"topics": []}})
    );
    assert_eq!(
        w.get("/connectors/s/topics").await.1,
        json!({"s": {"topics": []}})
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omitted_null_and_running_mean_running() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    append_lines(&input, ["x".to_string()]);
    let mut null_state = file_source("n", &input, "t");
    null_state["initial_state"] = Json::Null;
    for (name, body) in [
        ("o", file_source("o", &input, "t")),
        ("n", null_state),
        (
            "r",
            with_state(file_source("r", &input, "t"), Some("running")),
        ),
    ] {
        let (code, resp) = w.post("/connectors", body).await;
        assert_eq!(code, 201, "{resp}");
        assert_eq!(resp["tasks"], json!([{"connector": name, "task": 0}]));
        w.wait_for_state(name, "RUNNING", 1, "RUNNING").await;
    }
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_initial_state_creates_nothing() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    for bad in [json!("STARTED"), json!("FOO"), json!(3)] {
        let mut body = file_source("bad", &input, "t");
        body["initial_state"] = bad.clone();
        let (code, resp) = w.post("/connectors", body).await;
        assert_eq!(code, 400, "{bad}: {resp}");
        assert_eq!(resp["error_code"], 400);
        if bad.is_string() {
            let m = resp["message"].as_str().unwrap();
            assert!(
                m.contains("RUNNING") && m.contains("PAUSED") && m.contains("STOPPED"),
                "{m}"
            );
        }
    }
    assert_eq!(w.get("/connectors").await, (200, json!([])));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_from_paused_and_stopped_runs_and_delivers() {
    let Fixture {
        dir: _dir,
        w,
        input,
        output: out,
    } = Fixture::start().await;
    append_lines(&input, (0..20).map(|i| format!("r{i}")));
    assert_eq!(
        w.post(
            "/connectors",
            with_state(file_source("src", &input, "t"), Some("STOPPED"))
        )
        .await
        .0,
        201
    );
    assert_eq!(
        w.post(
            "/connectors",
            with_state(file_sink("snk", &out, "t"), Some("PAUSED"))
        )
        .await
        .0,
        201
    );
    assert_eq!(w.put_empty("/connectors/src/resume").await.0, 202);
    assert_eq!(w.put_empty("/connectors/snk/resume").await.0, 202);
    w.wait_for_state("src", "RUNNING", 1, "RUNNING").await;
    w.wait_for_state("snk", "RUNNING", 1, "RUNNING").await;
    wait_until("the sink to write every line", || async {
        lines(&out).len() == 20
    })
    .await;
    assert_eq!(
        lines(&out),
        (0..20).map(|i| format!("r{i}")).collect::<Vec<_>>()
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_works_from_paused_and_stopped() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    for (name, state) in [("a", "PAUSED"), ("b", "STOPPED")] {
        assert_eq!(
            w.post(
                "/connectors",
                with_state(file_source(name, &input, "t"), Some(state))
            )
            .await
            .0,
            201
        );
        assert_eq!(w.delete(&format!("/connectors/{name}")).await.0, 204);
        assert_eq!(w.get(&format!("/connectors/{name}")).await.0, 404);
        assert_eq!(w.get(&format!("/connectors/{name}/status")).await.0, 404);
    }
    assert_eq!(w.get("/connectors").await.1, json!([]));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_transition_between_the_three_states() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    append_lines(&input, ["x".to_string()]);
    w.create(file_source("c", &input, "t")).await;
    w.wait_for_state("c", "RUNNING", 1, "RUNNING").await;
    // RUNNING -> PAUSED (tasks stay, paused), twice is harmless
    for _ in 0..2 {
        assert_eq!(w.put_empty("/connectors/c/pause").await.0, 202);
        w.wait_for_state("c", "PAUSED", 1, "PAUSED").await;
    }
    // PAUSED -> STOPPED (tasks gone), twice is harmless
    for _ in 0..2 {
        assert_eq!(w.put_empty("/connectors/c/stop").await.0, 204);
        w.wait_for_state("c", "STOPPED", 0, "").await;
        assert_eq!(w.get("/connectors/c/tasks").await.1, json!([]));
    }
    // STOPPED -> PAUSED gives PAUSED with zero tasks
    assert_eq!(w.put_empty("/connectors/c/pause").await.0, 202);
    w.wait_for_state("c", "PAUSED", 0, "").await;
    // PAUSED (no tasks) -> RUNNING generates tasks
    assert_eq!(w.put_empty("/connectors/c/resume").await.0, 202);
    w.wait_for_state("c", "RUNNING", 1, "RUNNING").await;
    // RUNNING -> STOPPED -> RUNNING
    assert_eq!(w.put_empty("/connectors/c/stop").await.0, 204);
    w.wait_for_state("c", "STOPPED", 0, "").await;
    assert_eq!(w.put_empty("/connectors/c/resume").await.0, 202);
    w.wait_for_state("c", "RUNNING", 1, "RUNNING").await;
    // PAUSED -> RUNNING keeps the same task
    assert_eq!(w.put_empty("/connectors/c/pause").await.0, 202);
    w.wait_for_state("c", "PAUSED", 1, "PAUSED").await;
    assert_eq!(w.put_empty("/connectors/c/resume").await.0, 202);
    w.wait_for_state("c", "RUNNING", 1, "RUNNING").await;
    assert_eq!(w.put_empty("/connectors/c/resume").await.0, 202);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_connector_can_be_stopped() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    // A sink that cannot open its file fails its task; a sink file in a missing directory does that.
    let out = dir.path().join("missing-dir").join("out.txt");
    w.create(file_sink("f", &out, "t")).await;
    let trace = w.wait_for_failed_task("f").await;
    assert!(trace.contains("Couldn't find or create file"), "{trace}");
    assert_eq!(w.put_empty("/connectors/f/stop").await.0, 204);
    w.wait_for_state("f", "STOPPED", 0, "").await;
    w.stop().await;
}
