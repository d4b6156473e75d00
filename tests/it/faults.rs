//! Faults with nothing lost: a crash loop of `kill -9`, a full database, a second worker on the same file,
//! files that are not ours, and a source file that disappears and comes back.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use crate::common::*;

/// A small deterministic generator, so a failing run can be repeated.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_loop_of_kill_9_loses_nothing() {
    const KILLS: usize = 20;
    const PER_ROUND: usize = 500;
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let output = dir.path().join("out.txt");
    let mut rng = XorShift(0x5eed_1234_abcd_0042);
    let mut written = Vec::new();
    let mut next_line = 0usize;
    let mut add = |written: &mut Vec<String>| {
        let batch: Vec<String> = (0..PER_ROUND)
            .map(|i| format!("crash-{:07}", next_line + i))
            .collect();
        next_line += PER_ROUND;
        append_lines(&input, batch.clone());
        written.extend(batch);
    };
    add(&mut written);
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    create_through(&api, file_source("src", &input, "t")).await;
    create_through(&api, file_sink("snk", &output, "t")).await;
    create_through(&api, json!({"name": "parked", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": "STOPPED"})).await;
    let mut bin = Some(bin);
    for round in 0..KILLS {
        // Kill at a random moment while records flow.
        tokio::time::sleep(Duration::from_millis(rng.next() % 250)).await;
        bin.take().unwrap().kill();
        add(&mut written);
        let b = start_binary(dir.path(), &[]);
        let api = b.healthy_api().await;
        if round == KILLS / 2 {
            // A state change between crashes must survive the next ones.
            let (status, _) = api.put_empty("/connectors/parked/pause").await.unwrap();
            assert_eq!(status, 202);
        }
        bin = Some(b);
    }
    let b = bin.take().unwrap();
    wait_until("every line out after the crash loop", || async {
        let got: BTreeSet<String> = lines(&output).into_iter().collect();
        written.iter().all(|l| got.contains(l))
    })
    .await;
    let api = b.api();
    let status = api.get("/connectors/parked/status").await.unwrap().1;
    assert_eq!(status["connector"]["state"], "PAUSED");
    let status = api.get("/connectors/src/status").await.unwrap().1;
    assert_eq!(status["connector"]["state"], "RUNNING");
    b.terminate();

    let got = lines(&output);
    let duplicates = assert_delivered_in_order(&got, &written);
    // At-least-once bound: per crash, at most one uncommitted sink batch (2,000 records) is delivered again.
    assert!(duplicates <= KILLS * 2000, "{duplicates} duplicates");
    eprintln!(
        "crash loop: {KILLS} kills, {} lines in, {} lines out, {duplicates} duplicates",
        written.len(),
        got.len()
    );
    let conn = rusqlite::Connection::open(dir.path().join("bin.db")).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_database_fails_tasks_clearly_and_recovers() {
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let output = dir.path().join("out.txt");
    let all: Vec<String> = (0..20_000)
        .map(|i| format!("{i:06}-{}", "x".repeat(60)))
        .collect();
    append_lines(&input, all.clone());
    let w = TestWorker::start_with(dir.path(), &[("storage.max.bytes", "400000")], vec![])
        .await
        .unwrap();
    w.create(file_sink("snk", &output, "t")).await;
    w.create(file_source("src", &input, "t")).await;
    let trace = w.wait_for_failed_task("src").await;
    assert!(trace.contains("disk is full"), "{trace}");
    // The REST API keeps answering; writes that need room say so.
    assert_eq!(w.get("/connectors").await.0, 200);
    assert_eq!(w.get("/connectors/snk/status").await.0, 200);
    // Producing over REST is refused as retriable (503 with Retry-After), and /health says the worker
    // cannot do its job (KIP-1017's 500) while the store cannot write.
    let client = reqwest::Client::new();
    let big: Vec<_> = (0..200)
        .map(|i| serde_json::json!({"value": format!("{i}-{}", "y".repeat(2_000))}))
        .collect();
    let produced = client
        .post(format!("{}/topics/t", w.url))
        .header("Content-Type", "application/vnd.kafka.json.v2+json")
        .json(&serde_json::json!({"records": big}))
        .send()
        .await
        .unwrap();
    let status = produced.status().as_u16();
    let headers = produced.headers().clone();
    let text = produced.text().await.unwrap();
    assert_eq!(status, 503, "{text}");
    assert_eq!(
        headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["error_code"], 50003, "{body}");
    let health = client
        .get(format!("{}/health", w.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 500);
    // The write-ahead log counts against storage.max.bytes: file and log together stay within it.
    let size = |name: &str| std::fs::metadata(dir.path().join(name)).map_or(0, |m| m.len());
    let db_name = w.db.file_name().unwrap().to_string_lossy().to_string();
    let (file, wal) = (size(&db_name), size(&format!("{db_name}-wal")));
    assert!(file + wal <= 400_000, "file {file} + WAL {wal} bytes");
    let before = lines(&output);
    assert!(before.len() < all.len());
    assert_eq!(
        before[..],
        all[..before.len()],
        "what was delivered is a prefix, in order"
    );
    // The sink may have failed on the full disk too (committing its offsets needs room); if so, it says why.
    let sink = w.status("snk").await;
    if sink["tasks"][0]["state"] == "FAILED" {
        assert!(
            sink["tasks"][0]["trace"]
                .as_str()
                .unwrap()
                .contains("disk is full"),
            "{sink}"
        );
    }
    w.stop().await;

    // With room again, a restart brings everything through, and nothing stored earlier is lost.
    let w = TestWorker::start_with(dir.path(), &[("storage.max.bytes", "-1")], vec![])
        .await
        .unwrap();
    assert_eq!(
        w.post_empty("/connectors/src/restart?includeTasks=true")
            .await
            .0,
        202
    );
    assert_eq!(
        w.post_empty("/connectors/snk/restart?includeTasks=true")
            .await
            .0,
        202
    );
    wait_until("every line out", || async {
        lines(&output).len() >= all.len()
    })
    .await;
    assert_delivered_in_order(&lines(&output), &all);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_worker_on_the_same_database_is_refused() {
    let dir = tempdir();
    let first = start_binary(dir.path(), &[]);
    let api = first.healthy_api().await;
    let props = dir.path().join("worker.properties").display().to_string();
    let (code, _, err) = tokio::task::spawn_blocking({
        let cwd = dir.path().to_path_buf();
        move || run_binary(&cwd, &[&props])
    })
    .await
    .unwrap();
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("in use by another liteconnect worker"),
        "{err}"
    );
    // The first worker is unaffected.
    assert_eq!(api.get("/health").await.unwrap().0, 200);
    first.terminate();
}

#[test]
fn a_database_from_a_newer_version_is_refused_unchanged() {
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    // Make a real database, then mark it as written by a future schema version.
    let (code, _, _) = run_binary(dir.path(), &["validate", "--help"]);
    assert_eq!(code, 0);
    {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let w = TestWorker::start_with(
                dir.path(),
                &[("storage.file", db.to_str().unwrap())],
                vec![],
            )
            .await
            .unwrap();
            w.stop().await;
        });
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) VALUES (999, 'future', '2030-01-01', '0')",
        [],
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    let props = dir.path().join("w.properties");
    std::fs::write(
        &props,
        format!(
            "listeners=http://127.0.0.1:0\nstorage.file={}\n",
            db.display()
        ),
    )
    .unwrap();
    let (code, _, err) = run_binary(dir.path(), &[props.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("newer liteconnect"), "{err}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the file was not modified"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_file_that_disappears_and_comes_back_is_read_again() {
    let Fixture {
        dir: _dir,
        w,
        input,
        output,
    } = Fixture::start().await;
    append_lines(&input, ["first-1".to_string(), "first-2".to_string()]);
    w.create(file_source("src", &input, "t")).await;
    w.create(file_sink("snk", &output, "t")).await;
    wait_until("the first file out", || async { lines(&output).len() == 2 }).await;
    std::fs::remove_file(&input).unwrap();
    // Gone for a while; the task keeps running all along.
    assert_holds_for(
        "the source task to be RUNNING without its file",
        Duration::from_millis(300),
        || async { w.status("src").await["tasks"][0]["state"] == "RUNNING" },
    )
    .await;
    append_lines(
        &input,
        [
            "second-1".to_string(),
            "second-2".to_string(),
            "second-3".to_string(),
        ],
    );
    wait_until("the new file out", || async { lines(&output).len() == 5 }).await;
    assert_eq!(
        lines(&output),
        ["first-1", "first-2", "second-1", "second-2", "second-3"]
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_sink_target_fails_with_a_trace_and_recovers_on_restart() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    append_lines(&input, ["one".to_string(), "two".to_string()]);
    // The sink's file is a directory: it cannot be opened for writing.
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    w.create(file_source("src", &input, "t")).await;
    w.create(file_sink("snk", &target, "t")).await;
    let trace = w.wait_for_failed_task("snk").await;
    assert!(
        trace.contains("Couldn't find or create file") && trace.contains("target"),
        "{trace}"
    );
    // Nothing was committed, so once the target is writable a restart delivers everything.
    assert_eq!(
        w.get("/connectors/snk/offsets").await.1,
        json!({"offsets": []})
    );
    std::fs::remove_dir(&target).unwrap();
    assert_eq!(w.post_empty("/connectors/snk/tasks/0/restart").await.0, 204);
    wait_until("the records out", || async {
        lines(&target) == ["one", "two"]
    })
    .await;
    w.stop().await;
}
