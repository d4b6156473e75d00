//! Moving a connector with its offsets between two workers: `liteconnect migrate` and `liteconnect export`.

use serde_json::{json, Value as Json};

use crate::common::*;

async fn cli(args: Vec<String>) -> (i32, String, String) {
    let dir = std::env::temp_dir();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_binary(&dir, &args)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_source_continues_on_the_target_where_it_stopped() {
    let (da, db) = (tempdir(), tempdir());
    let a = TestWorker::start(da.path()).await;
    let b = TestWorker::start(db.path()).await;
    let input = da.path().join("in.txt");
    let (out_a, out_b) = (da.path().join("out-a.txt"), db.path().join("out-b.txt"));
    let all: Vec<String> = (0..400).map(|i| format!("m{i:04}")).collect();
    append_lines(&input, all[..200].to_vec());
    assert_eq!(
        a.post("/connectors", file_source("mover", &input, "t"))
            .await
            .0,
        201
    );
    assert_eq!(
        a.post("/connectors", file_sink("out", &out_a, "t")).await.0,
        201
    );
    assert_eq!(
        b.post("/connectors", file_sink("out", &out_b, "t")).await.0,
        201
    );
    wait_until("A to deliver the first half", || async {
        lines(&out_a).len() == 200
    })
    .await;

    let (code, out, err) = cli(vec![
        "migrate".into(),
        "--from".into(),
        a.url.clone(),
        "--to".into(),
        b.url.clone(),
        "mover".into(),
    ])
    .await;
    assert_eq!(code, 0, "{out}{err}");
    for step in [
        "stopped on",
        "read config and 1 offset(s)",
        "created STOPPED on",
        "offsets written and verified",
        "resumed on",
    ] {
        assert!(out.contains(step), "missing step {step:?} in {out}");
    }
    assert_eq!(a.status("mover").await["connector"]["state"], "STOPPED");
    b.wait_for_state("mover", "RUNNING", 1, "RUNNING").await;
    assert_eq!(
        b.get("/connectors/mover/offsets").await.1,
        a.get("/connectors/mover/offsets").await.1
    );

    append_lines(&input, all[200..].to_vec());
    wait_until("B to deliver the second half", || async {
        lines(&out_b).len() == 200
    })
    .await;
    let mut combined = lines(&out_a);
    combined.extend(lines(&out_b));
    assert_eq!(combined, all, "no line lost, none duplicated");
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_leave_the_source_stopped_and_intact() {
    let (da, db) = (tempdir(), tempdir());
    let a = TestWorker::start(da.path()).await;
    let b = TestWorker::start(db.path()).await;
    let input = da.path().join("in.txt");
    append_lines(&input, ["x".to_string(), "y".to_string()]);
    assert_eq!(
        a.post("/connectors", file_source("c", &input, "t")).await.0,
        201
    );
    wait_until("an offset on A", || async {
        !a.get("/connectors/c/offsets").await.1["offsets"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    let config_before = a.get("/connectors/c/config").await.1;

    // The target is unreachable.
    let (code, _, err) = cli(vec![
        "migrate".into(),
        "--from".into(),
        a.url.clone(),
        "--to".into(),
        "http://127.0.0.1:1".into(),
        "c".into(),
    ])
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains("STOPPED") && err.contains("run the same command again"),
        "{err}"
    );
    assert_eq!(a.status("c").await["connector"]["state"], "STOPPED");
    assert_eq!(a.get("/connectors/c/config").await.1, config_before);
    let offsets_before = a.get("/connectors/c/offsets").await.1;
    assert_eq!(offsets_before["offsets"][0]["offset"]["position"], 4);

    // The name is taken on the target with another config.
    assert_eq!(
        b.post(
            "/connectors",
            json!({"name": "c", "config": {"connector.class": "FileStreamSink", "topics": "z"}})
        )
        .await
        .0,
        201
    );
    let (code, _, err) = cli(vec![
        "migrate".into(),
        "--from".into(),
        a.url.clone(),
        "--to".into(),
        b.url.clone(),
        "c".into(),
    ])
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(a.get("/connectors/c/config").await.1, config_before);
    assert_eq!(a.get("/connectors/c/offsets").await.1, offsets_before);
    assert_eq!(
        b.get("/connectors/c/config").await.1["topics"],
        "z",
        "the target's connector is untouched"
    );

    // Once the target is free, the same command succeeds; --delete-source removes it from A.
    assert_eq!(b.delete("/connectors/c").await.0, 204);
    let (code, out, err) = cli(vec![
        "migrate".into(),
        "--from".into(),
        a.url.clone(),
        "--to".into(),
        b.url.clone(),
        "--leave-stopped".into(),
        "--delete-source".into(),
    ])
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(b.status("c").await["connector"]["state"], "STOPPED");
    assert_eq!(b.get("/connectors/c/offsets").await.1, offsets_before);
    assert_eq!(a.get("/connectors").await.1, json!([]));
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_files_that_liteconnect_reads_back() {
    let (da, db) = (tempdir(), tempdir());
    let a = TestWorker::start(da.path()).await;
    let input = da.path().join("in.txt");
    append_lines(&input, ["1".to_string(), "2".to_string()]);
    assert_eq!(
        a.post("/connectors", file_source("exp/one", &input, "t"))
            .await
            .0,
        201
    );
    wait_until("an offset", || async {
        !a.get(&format!("/connectors/{}/offsets", enc("exp/one")))
            .await
            .1["offsets"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    assert_eq!(
        a.put_empty(&format!("/connectors/{}/stop", enc("exp/one")))
            .await
            .0,
        204
    );
    let out_dir = da.path().join("export");
    let (code, out, err) = cli(vec![
        "export".into(),
        "--from".into(),
        a.url.clone(),
        "--out".into(),
        out_dir.display().to_string(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let file = out.trim().to_string();
    let exported: Json = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(exported["name"], "exp/one");
    assert_eq!(exported["initial_state"], "STOPPED");
    assert_eq!(exported["offsets"][0]["offset"]["position"], 4);
    a.stop().await;

    // The exported file, given to another worker, creates the connector STOPPED with its offsets.
    let connector = liteconnect::cli::connector_file::read(std::path::Path::new(&file)).unwrap();
    let b = TestWorker::start_with(db.path(), &[], vec![connector])
        .await
        .unwrap();
    assert_eq!(b.status("exp/one").await["connector"]["state"], "STOPPED");
    assert_eq!(
        b.get(&format!("/connectors/{}/offsets", enc("exp/one")))
            .await
            .1["offsets"][0]["offset"]["position"],
        4
    );
    b.stop().await;
}
