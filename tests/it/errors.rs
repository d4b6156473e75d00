//! Error tolerance end to end: bad records skipped into a dead letter queue, or failing the task.

use serde_json::json;

use crate::common::*;

fn mixed_input(dir: &std::path::Path) -> std::path::PathBuf {
    let input = dir.join("in.txt");
    append_lines(
        &input,
        ["{\"a\":1}", "not json", "\"text\"", "[1,2", "42"]
            .iter()
            .map(|s| s.to_string()),
    );
    input
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tolerance_all_skips_bad_records_into_the_dlq() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = mixed_input(dir.path());
    let out = dir.path().join("out.txt");
    let dlq_out = dir.path().join("dlq.txt");
    w.create(file_source("src", &input, "raw")).await;
    let sink = json!({"name": "json-sink", "config": {
        "connector.class": "FileStreamSink", "file": out.display().to_string(), "topics": "raw",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "errors.tolerance": "all", "errors.log.enable": "true", "errors.log.include.messages": "true",
        "errors.deadletterqueue.topic.name": "dlq", "errors.deadletterqueue.context.headers.enable": "true"}});
    w.create(sink).await;
    // The DLQ is a normal topic: another sink reads it.
    w.create(file_sink("dlq-reader", &dlq_out, "dlq")).await;
    wait_until("good records out", || async { lines(&out).len() == 3 }).await;
    assert_eq!(lines(&out), ["{a=1}", "text", "42"]);
    wait_until("bad records in the DLQ", || async {
        lines(&dlq_out).len() == 2
    })
    .await;
    assert_eq!(lines(&dlq_out), ["not json", "[1,2"]);
    w.wait_for_state("json-sink", "RUNNING", 1, "RUNNING").await;
    let db = w.db.clone();
    w.stop().await;
    let conn = rusqlite::Connection::open(db).unwrap();
    let headers: Vec<Vec<u8>> = conn
        .prepare("SELECT r.headers FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = 'dlq' ORDER BY r.offset")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(headers.len(), 2);
    let first = String::from_utf8_lossy(&headers[0]);
    for needle in [
        "__connect.errors.topic",
        "raw",
        "__connect.errors.offset",
        "__connect.errors.stage",
        "VALUE_CONVERTER",
        "__connect.errors.connector.name",
        "json-sink",
        "__connect.errors.exception.message",
        "__connect.errors.class.name",
        "org.apache.kafka.connect.json.JsonConverter",
    ] {
        assert!(first.contains(needle), "missing {needle} in {first}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tolerance_none_fails_the_task_naming_the_stage() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = mixed_input(dir.path());
    let out = dir.path().join("out.txt");
    w.create(file_source("src", &input, "raw")).await;
    let sink = json!({"name": "strict", "config": {
        "connector.class": "FileStreamSink", "file": out.display().to_string(), "topics": "raw",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}});
    w.create(sink).await;
    let trace = w.wait_for_failed_task("strict").await;
    assert!(
        trace.contains("Tolerance exceeded in error handler"),
        "{trace}"
    );
    assert!(
        trace.contains("VALUE_CONVERTER")
            && trace.contains("org.apache.kafka.connect.json.JsonConverter"),
        "{trace}"
    );
    // As in Kafka, the batch is converted before `put`, so nothing of it was delivered or committed.
    assert!(lines(&out).is_empty());
    assert_eq!(
        w.get("/connectors/strict/offsets").await.1,
        json!({"offsets": []})
    );
    w.stop().await;
}
