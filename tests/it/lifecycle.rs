//! Creating, running and moving records end to end.

use std::time::Duration;

use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_source_to_file_sink_moves_every_line() {
    let Fixture {
        dir: _dir,
        w,
        input,
        output,
    } = Fixture::start().await;
    let expected: Vec<String> = (0..500).map(|i| format!("line {i}")).collect();
    append_lines(&input, expected.clone());
    let (s, body) = w
        .post("/connectors", file_source("src", &input, "t1"))
        .await;
    assert_eq!(s, 201, "{body}");
    let (s, body) = w
        .post("/connectors", file_sink("sink", &output, "t1"))
        .await;
    assert_eq!(s, 201, "{body}");
    wait_until("all lines in the output", || async {
        lines(&output).len() >= expected.len()
    })
    .await;
    assert_eq!(lines(&output), expected);
    w.wait_for_state("src", "RUNNING", 1, "RUNNING").await;
    let (s, topics) = w.get("/connectors/sink/topics").await;
    assert_eq!(s, 200);
    assert_eq!(topics, json!({"sink": {"topics": ["t1"]}}));
    w.stop().await;
}

/// The threads of a process, from `/proc/<pid>/status`.
fn threads_of(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads line")
}

/// Idle tasks are parked off their threads (a source at the end of its file, a sink caught up): a
/// hundred of them leave the worker with fewer threads than tasks, and an append still wakes each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_tasks_hold_no_thread_and_an_append_wakes_them() {
    const PAIRS: usize = 50;
    let dir = tempdir();
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    let idle_threads = threads_of(bin.child.id());
    for i in 0..PAIRS {
        let input = dir.path().join(format!("in{i}.txt"));
        std::fs::write(&input, "").unwrap();
        let output = dir.path().join(format!("out{i}.txt"));
        create_through(
            &api,
            file_source(&format!("src{i}"), &input, &format!("t{i}")),
        )
        .await;
        create_through(
            &api,
            file_sink(&format!("sink{i}"), &output, &format!("t{i}")),
        )
        .await;
    }
    for i in 0..PAIRS {
        for name in [format!("src{i}"), format!("sink{i}")] {
            wait_for("every task RUNNING", DEADLINE, || async {
                let (_, s) = api
                    .get(&format!("/connectors/{name}/status"))
                    .await
                    .unwrap();
                (s["tasks"][0]["state"] == "RUNNING").then_some(())
            })
            .await;
        }
    }
    // Threads started for the tasks' first runs go back to the pool and exit once idle: a thread per
    // task would keep them all.
    let pid = bin.child.id();
    wait_for("fewer threads than idle tasks", DEADLINE, || async {
        (threads_of(pid) < idle_threads + PAIRS).then_some(())
    })
    .await;
    for i in 0..PAIRS {
        append_lines(
            &dir.path().join(format!("in{i}.txt")),
            [format!("line of pair {i}")],
        );
    }
    for i in 0..PAIRS {
        let output = dir.path().join(format!("out{i}.txt"));
        wait_until("each sink's line", || async {
            output.exists() && lines(&output) == [format!("line of pair {i}")]
        })
        .await;
    }
    // Paused, they hold no thread either, and a record appended meanwhile waits for the resume.
    for i in 0..PAIRS {
        let (s, body) = api
            .put_empty(&format!("/connectors/sink{i}/pause"))
            .await
            .unwrap();
        assert_eq!(s, 202, "{body}");
    }
    for i in 0..PAIRS {
        wait_for("every sink PAUSED", DEADLINE, || async {
            let (_, s) = api
                .get(&format!("/connectors/sink{i}/status"))
                .await
                .unwrap();
            (s["tasks"][0]["state"] == "PAUSED").then_some(())
        })
        .await;
    }
    for i in 0..PAIRS {
        append_lines(
            &dir.path().join(format!("in{i}.txt")),
            [format!("second of pair {i}")],
        );
    }
    let last = dir.path().join(format!("out{}.txt", PAIRS - 1));
    assert_holds_for(
        "a paused sink writes nothing",
        Duration::from_secs(1),
        || async { lines(&last).len() == 1 },
    )
    .await;
    // Threads the burst of appends and pauses started go back to the pool and exit once idle.
    wait_for("the pool to shrink back while paused", DEADLINE, || async {
        (threads_of(pid) < idle_threads + PAIRS).then_some(())
    })
    .await;
    for i in 0..PAIRS {
        let (s, body) = api
            .put_empty(&format!("/connectors/sink{i}/resume"))
            .await
            .unwrap();
        assert_eq!(s, 202, "{body}");
    }
    for i in 0..PAIRS {
        let output = dir.path().join(format!("out{i}.txt"));
        wait_until("each sink's second line after the resume", || async {
            lines(&output) == [format!("line of pair {i}"), format!("second of pair {i}")]
        })
        .await;
    }
    // Parked tasks stop when their connectors are deleted.
    for i in 0..PAIRS {
        for name in [format!("src{i}"), format!("sink{i}")] {
            let (s, body) = api.delete(&format!("/connectors/{name}")).await.unwrap();
            assert_eq!(s, 204, "{body}");
        }
    }
    bin.terminate();
}

/// The binary with its log written to `dir/worker.log`; returns it once it logged its REST address.
fn binary_logging_to_a_file(dir: &std::path::Path) -> (Binary, std::path::PathBuf) {
    let props = dir.join("worker.properties");
    std::fs::write(&props, binary_props(dir)).unwrap();
    let log = dir.join("worker.log");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_liteconnect"))
        .current_dir(dir)
        .arg(&props)
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn liteconnect");
    let url = wait_for_blocking("the REST address in the log", DEADLINE, || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
    });
    let binary = Binary {
        child,
        url: url.clone(),
        urls: vec![url],
        log: Default::default(),
    };
    (binary, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_at_debug_logs_the_control_plane_and_the_task_lifecycle() {
    let dir = tempdir();
    let (bin, log) = binary_logging_to_a_file(dir.path());
    let api = Client::new(bin.url.clone());
    let input = dir.path().join("in.txt");
    append_lines(&input, ["one".to_string(), "two".into()]);

    // At INFO, creating a connector writes no DEBUG line.
    create_through(&api, file_source("quiet", &input, "quiet")).await;
    let at_info = std::fs::read_to_string(&log).unwrap();
    assert!(!at_info.contains("DEBUG"), "{at_info}");

    let (status, body) = api
        .put("/admin/loggers/root", &json!({"level": "DEBUG"}))
        .await
        .expect("request");
    assert_eq!(status, 200, "{body}");
    create_through(&api, file_source("traced", &input, "traced")).await;
    wait_until("the task to run", || async {
        let (_, s) = api.get("/connectors/traced/status").await.expect("status");
        s["tasks"][0]["state"] == "RUNNING"
    })
    .await;
    for (method, path) in [
        ("PUT", "/connectors/traced/pause"),
        ("PUT", "/connectors/traced/resume"),
        ("PUT", "/connectors/traced/stop"),
        ("DELETE", "/connectors/traced"),
    ] {
        let (status, body) = match method {
            "PUT" => api.put_empty(path).await,
            _ => api.delete(path).await,
        }
        .expect("request");
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {body}"
        );
    }
    let expected = [
        "Connector created; config stored.",
        "Task configs generated.",
        "Starting task.",
        "Task state changed.",
        "Records and source offsets committed.",
        "Target state set to PAUSED.",
        "Target state set to STARTED.",
        "Target state set to STOPPED",
        "Tasks stopped.",
        "Connector deleted",
    ];
    let text = wait_for("every DEBUG line", DEADLINE, || {
        let log = log.clone();
        async move {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let debug: Vec<&str> = text
                .lines()
                .filter(|l| l.contains("DEBUG") && l.contains("traced"))
                .collect();
            expected
                .iter()
                .all(|e| debug.iter().any(|l| l.contains(e)))
                .then_some(text)
        }
    })
    .await;
    assert!(
        text.lines()
            .any(|l| l.contains("Task state changed.") && l.contains("to=Running")),
        "a transition names its states"
    );
    bin.terminate();
}
