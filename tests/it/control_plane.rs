//! The control plane's fast paths: the expanded list built in one pass and kept until something
//! changes, a create answered only once its task configs are stored, and sinks that sleep until
//! something is appended.

use serde_json::{json, Value as Json};

use crate::common::*;

/// The keys of one entry of the expanded list, in the order the answer has them.
fn keys(entry: &Json) -> Vec<String> {
    entry
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expanded_list_shows_what_each_connector_answers() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let output = dir.path().join("out.txt");
    w.create(file_source("src a/b", &input, "t")).await;
    w.create(file_sink("snk", &output, "t")).await;
    let (s, body) = w
        .post(
            "/connectors",
            json!({"name": "held", "config": {"connector.class": "MockSource", "tasks.max": "1"},
                   "initial_state": "PAUSED"}),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    w.wait_for_state("src a/b", "RUNNING", 1, "RUNNING").await;
    w.wait_for_state("snk", "RUNNING", 1, "RUNNING").await;

    let (s, both) = w.get("/connectors?expand=status&expand=info").await;
    assert_eq!(s, 200);
    let names = ["held", "snk", "src a/b"];
    assert_eq!(keys(&both), names);
    for name in names {
        let entry = &both[name];
        assert_eq!(keys(entry), ["status", "info"], "{name}: {entry}");
        let path = format!("/connectors/{}", enc(name));
        assert_eq!(entry["status"], w.status(name).await, "{name}");
        assert_eq!(entry["info"], w.get(&path).await.1, "{name}");
    }
    assert_eq!(both["held"]["status"]["connector"]["state"], "PAUSED");
    assert_eq!(both["snk"]["info"]["type"], "sink");
    assert_eq!(
        both["src a/b"]["info"]["tasks"],
        json!([{"connector": "src a/b", "task": 0}])
    );

    // The order of the expansions follows the query; a repeated one counts once.
    let (_, reversed) = w
        .get("/connectors?expand=info&expand=status&expand=info")
        .await;
    for name in names {
        assert_eq!(keys(&reversed[name]), ["info", "status"], "{name}");
        assert_eq!(reversed[name]["info"], both[name]["info"]);
    }
    let (_, info) = w.get("/connectors?expand=info").await;
    assert_eq!(keys(&info), names);
    assert_eq!(keys(&info["snk"]), ["info"]);

    // The list is kept between requests, and answers anew after any change.
    let path = "/connectors?expand=status&expand=info";
    assert_eq!(w.get(path).await.1, both);
    assert_eq!(w.put_empty("/connectors/snk/pause").await.0, 202);
    wait_until("the list to show the pause", || async {
        w.get(path).await.1["snk"]["status"]["tasks"][0]["state"] == "PAUSED"
    })
    .await;
    assert_eq!(w.get(path).await.1["snk"]["status"], w.status("snk").await);
    assert_eq!(w.delete("/connectors/held").await.0, 204);
    assert_eq!(keys(&w.get(path).await.1), ["snk", "src a/b"]);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_connector_has_its_task_configs_at_once_and_after_a_kill() {
    let dir = tempdir();
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    let input = dir.path().join("in.txt");
    let (s, created) = api
        .post("/connectors", &file_source("src", &input, "t"))
        .await
        .expect("create");
    assert_eq!(s, 201, "{created}");
    assert_eq!(created["tasks"], json!([{"connector": "src", "task": 0}]));
    let (_, tasks) = api.get("/connectors/src/tasks").await.expect("tasks");
    let class = "org.apache.kafka.connect.file.FileStreamSourceTask";
    assert_eq!(tasks[0]["config"]["task.class"], class);
    bin.kill();

    // The 201 came after both the config and the task configs were committed.
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    let (_, tasks) = api.get("/connectors/src/tasks").await.expect("tasks");
    assert_eq!(tasks[0]["config"]["task.class"], class, "{tasks}");
    assert_eq!(tasks.as_array().map(Vec::len), Some(1));
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_sink_wakes_for_a_new_topic_it_matches() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let output = dir.path().join("out.txt");
    let produce = |topic: &'static str, value: &'static str| {
        let w = &w;
        async move {
            let r = w
                .client
                .post(format!("{}/topics/{topic}", w.url))
                .header("content-type", "application/vnd.kafka.json.v2+json")
                .body(json!({"records": [{"value": value}]}).to_string())
                .send()
                .await
                .expect("produce");
            assert!(r.status().is_success(), "{}", r.status());
        }
    };
    produce("ev-1", "first").await;
    let sink = json!({"name": "snk", "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1",
        "file": output.display().to_string(), "topics.regex": "ev-.*"}});
    w.create(sink).await;
    wait_until("the first record to be delivered", || async {
        lines(&output) == ["\"first\""] || lines(&output) == ["first"]
    })
    .await;
    // Idle well past the time a polling sink would have looked again; then a new topic gets a record.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    produce("ev-2", "second").await;
    wait_until("the new topic's record to be delivered", || async {
        lines(&output).len() == 2
    })
    .await;
    assert!(lines(&output)[1].contains("second"), "{:?}", lines(&output));
    w.stop().await;
}
