//! `tasks.max.total`: the worker's cap on the tasks of all connectors together.

use serde_json::{json, Value as Json};

use crate::common::*;

fn sink(name: &str, dir: &std::path::Path, tasks: &str) -> Json {
    json!({"name": name, "config": {
        "connector.class": "FileStreamSink", "tasks.max": tasks, "topics": "t",
        "file": dir.join(format!("{name}.out")).display().to_string()}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_beyond_the_worker_cap_are_refused_with_400() {
    let dir = tempdir();
    let w = TestWorker::start_with(dir.path(), &[("tasks.max.total", "4")], Vec::new())
        .await
        .expect("worker starts");

    let resp = w.post("/connectors", sink("big", dir.path(), "10")).await;
    assert_eq!(resp.0, 400, "{}", resp.1);
    assert_eq!(resp.1["error_code"], 400, "{}", resp.1);
    let m = resp.1["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("tasks.max=10") && m.contains("tasks.max.total"),
        "{m}"
    );
    assert_eq!(w.get("/connectors").await.1, json!([]));

    // Within the cap it is created, and reconfiguring it does not count its own tasks twice.
    let resp = w.post("/connectors", sink("a", dir.path(), "3")).await;
    assert_eq!(resp.0, 201, "{}", resp.1);
    wait_until("connector a has 3 tasks", || async {
        w.get("/connectors/a/tasks")
            .await
            .1
            .as_array()
            .is_some_and(|t| t.len() == 3)
    })
    .await;
    let resp = w
        .put(
            "/connectors/a/config",
            sink("a", dir.path(), "4")["config"].clone(),
        )
        .await;
    assert_eq!(resp.0, 200, "{}", resp.1);
    wait_until("connector a has 4 tasks", || async {
        w.get("/connectors/a/tasks")
            .await
            .1
            .as_array()
            .is_some_and(|t| t.len() == 4)
    })
    .await;

    // The other connector's tasks count: one more is one too many.
    let resp = w
        .put(
            "/connectors/b/config",
            sink("b", dir.path(), "1")["config"].clone(),
        )
        .await;
    assert_eq!(resp.0, 400, "{}", resp.1);
    let m = resp.1["message"].as_str().unwrap_or_default();
    assert!(m.contains("the other connectors have 4"), "{m}");
    assert_eq!(w.get("/connectors").await.1, json!(["a"]));
    w.stop().await;
}
