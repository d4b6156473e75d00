//! The additions of protocol 1.1: a running connector's process that asks for its tasks to be
//! reconfigured, and the sink task's assigned partitions.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::common::*;

/// The test plugins of protocol 1.1 (tests/plugins/discovering).
fn discovering() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/discovering")
}

/// The `device` of each task config of `name`, in task order.
async fn task_devices(api: &Client, name: &str) -> Vec<String> {
    let tasks = api
        .get(&format!("/connectors/{name}/tasks"))
        .await
        .unwrap()
        .1;
    tasks
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| t["config"]["device"].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The states of `name`'s tasks in the status, in task order.
async fn task_states(api: &Client, name: &str) -> Vec<String> {
    let status = status_of(api, name).await;
    status["tasks"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| t["state"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The worker's processes running `script` (not their child hosts).
fn processes_running(bin: &Binary, script: &str) -> Vec<u32> {
    descendants_of(bin.child.id())
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.contains(script) && !c.contains("__child-host"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_plugin_connector_asks_for_a_reconfiguration_and_its_tasks_are_replaced() {
    let dir = tempdir();
    let devices = dir.path().join("devices.txt");
    std::fs::write(&devices, "a\n").unwrap();
    let bin = start(dir.path(), &[&discovering()], "");
    let api = bin.healthy_api().await;
    let config = json!({"connector.class": "test.DiscoveringSourceConnector", "topic": "t",
        "tasks.max": "5", "devices.file": devices.display().to_string()});
    create_through(&api, json!({"name": "disc", "config": config})).await;
    // The task configs come from the running connector (a process that was not started knows no device).
    wait_for("one task for device a", DEADLINE, || async {
        (task_devices(&api, "disc").await == ["a"]
            && task_states(&api, "disc").await == ["RUNNING"])
        .then_some(())
    })
    .await;
    // The connector discovers two more devices and asks for a reconfiguration: three tasks now run.
    std::fs::write(&devices, "a\nb\nc\n").unwrap();
    wait_for("three tasks, one a device, running", DEADLINE, || async {
        (task_devices(&api, "disc").await == ["a", "b", "c"]
            && task_states(&api, "disc").await == ["RUNNING"; 3])
            .then_some(())
    })
    .await;
    let status = status_of(&api, "disc").await;
    assert_eq!(status["connector"]["state"], "RUNNING", "{status}");
    // One device fewer: the tasks follow, down to two.
    std::fs::write(&devices, "b\nc\n").unwrap();
    wait_for("two tasks for b and c", DEADLINE, || async {
        (task_devices(&api, "disc").await == ["b", "c"]
            && task_states(&api, "disc").await == ["RUNNING"; 2])
            .then_some(())
    })
    .await;
    // The connector's process runs while the connector runs, and stops with it.
    let (status, body) = api.put_empty("/connectors/disc/pause").await.unwrap();
    assert_eq!(status, 202, "{body}");
    wait_for(
        "the connector's process to stop when paused",
        DEADLINE,
        || async {
            // The paused tasks keep their processes: only theirs remain (one a task).
            (processes_running(&bin, "discovering.py").len() == 2).then_some(())
        },
    )
    .await;
    let (status, body) = api.delete("/connectors/disc").await.unwrap();
    assert_eq!(status, 204, "{body}");
    wait_for("no plugin process once deleted", DEADLINE, || async {
        processes_running(&bin, "discovering.py")
            .is_empty()
            .then_some(())
    })
    .await;
    let log = bin.log.lock().unwrap().join("\n");
    assert!(log.contains("the devices changed: a,b,c"), "{log}");
    // Each task's stderr lines carry its task id; the connector's carry its name.
    for line in [
        "[disc-0] reading device a",
        "[disc-1] reading device b",
        "[disc-2] reading device c",
    ] {
        assert!(log.contains(line), "no {line:?} in:\n{log}");
    }
    assert!(
        log.contains("[disc (test.DiscoveringSourceConnector)] watching"),
        "{log}"
    );
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_plugin_connector_whose_process_dies_fails_and_a_restart_starts_it_again() {
    let dir = tempdir();
    let devices = dir.path().join("devices.txt");
    std::fs::write(&devices, "a\n").unwrap();
    let bin = start(dir.path(), &[&discovering()], "");
    let api = bin.healthy_api().await;
    let config = json!({"connector.class": "test.DiscoveringSourceConnector", "topic": "t",
        "tasks.max": "2", "devices.file": devices.display().to_string()});
    create_through(&api, json!({"name": "disc", "config": config})).await;
    wait_for("the task running", DEADLINE, || async {
        (task_states(&api, "disc").await == ["RUNNING"]).then_some(())
    })
    .await;
    std::fs::write(&devices, "a\nexit\n").unwrap();
    let trace = wait_for("the connector to fail", DEADLINE, || async {
        let status = status_of(&api, "disc").await;
        (status["connector"]["state"] == "FAILED").then(|| {
            status["connector"]["trace"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
    })
    .await;
    assert!(trace.contains("The plugin program exited"), "{trace}");
    assert!(
        trace.contains("told to exit"),
        "its stderr's last lines: {trace}"
    );
    // Its task goes on, as a Kafka task does when its connector fails.
    assert_eq!(task_states(&api, "disc").await, ["RUNNING"]);
    std::fs::write(&devices, "a\n").unwrap();
    let (status, body) = api.post_empty("/connectors/disc/restart").await.unwrap();
    assert!(status == 204 || status == 202, "{status} {body}");
    wait_for("the connector running again", DEADLINE, || async {
        (status_of(&api, "disc").await["connector"]["state"] == "RUNNING").then_some(())
    })
    .await;
    std::fs::write(&devices, "a\nb\n").unwrap();
    wait_for(
        "the restarted connector reconfiguring",
        DEADLINE,
        || async { (task_devices(&api, "disc").await == ["a", "b"]).then_some(()) },
    )
    .await;
    bin.terminate();
}

/// Appends one record to `topic` through the REST produce endpoint (the topic is created).
async fn produce_one(bin: &Binary, topic: &str) {
    let answer = reqwest::Client::new()
        .post(format!("{}/topics/{topic}", bin.url))
        .header("Content-Type", "application/vnd.kafka.json.v2+json")
        .body(json!({"records": [{"value": {"n": 1}}]}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "{:?}", answer.text().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_sink_task_is_started_with_its_partitions_and_told_of_new_ones() {
    let dir = tempdir();
    let file = dir.path().join("partitions.txt");
    let bin = start(dir.path(), &[&discovering()], "");
    let api = bin.healthy_api().await;
    for topic in ["p1", "p2", "p3"] {
        produce_one(&bin, topic).await;
    }
    let config = json!({"connector.class": "test.PartitionsSinkConnector", "tasks.max": "2",
        "topics": "p1,p2,p3,p4", "partitions.file": file.display().to_string()});
    create_through(&api, json!({"name": "parts", "config": config})).await;
    // Shared round-robin over p1-0, p2-0, p3-0: task 0 has the first and the third.
    let sorted = || {
        let mut got = lines(&file);
        got.sort();
        got
    };
    wait_for("both tasks' first assignment", DEADLINE, || async {
        (sorted() == ["p1-0 p3-0", "p2-0"]).then_some(())
    })
    .await;
    // A topic created later is opened on the task it falls to (the fourth partition: task 1).
    produce_one(&bin, "p4").await;
    wait_for("p4-0 opened", DEADLINE, || async {
        (sorted() == ["p1-0 p3-0", "p2-0", "p4-0"]).then_some(())
    })
    .await;
    let log = bin.log.lock().unwrap().join("\n");
    for line in [
        "[parts-0] opened p1-0 p3-0",
        "[parts-1] opened p2-0",
        "[parts-1] opened p4-0",
    ] {
        assert!(log.contains(line), "no {line:?} in:\n{log}");
    }
    bin.terminate();
}
