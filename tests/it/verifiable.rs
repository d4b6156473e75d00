//! Kafka's verifiable connectors: a source's sequence numbers reach a file sink in order, with no gaps
//! and no repeats, also across a stop and resume of the source.

use serde_json::json;

use crate::common::*;

fn verifiable_source(name: &str, topic: &str) -> serde_json::Value {
    json!({"name": name, "config": {
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": "1", "topic": topic, "throughput": "2000"}})
}

/// The last seqno the source has stored, if any.
async fn stored_seqno(w: &TestWorker, name: &str) -> Option<i64> {
    let (s, body) = w.get(&format!("/connectors/{name}/offsets")).await;
    assert_eq!(s, 200, "{body}");
    let offsets = body["offsets"].as_array()?;
    assert!(offsets.len() <= 1, "{body}");
    let entry = offsets.first()?;
    assert_eq!(entry["partition"], json!({"id": 0}));
    entry["offset"]["seqno"].as_i64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verifiable_source_reaches_a_file_sink_in_sequence() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let output = dir.path().join("out.txt");
    let (s, body) = w
        .post("/connectors", verifiable_source("seq", "numbers"))
        .await;
    assert_eq!(s, 201, "{body}");
    let (s, body) = w
        .post("/connectors", file_sink("sink", &output, "numbers"))
        .await;
    assert_eq!(s, 201, "{body}");
    wait_until("the first records in the output", || async {
        lines(&output).len() >= 300
    })
    .await;

    // Stop and resume: the task starts again after its stored seqno.
    let (s, body) = w.put_empty("/connectors/seq/stop").await;
    assert_eq!(s, 204, "{body}");
    w.wait_for_state("seq", "STOPPED", 0, "").await;
    let before = stored_seqno(&w, "seq").await.expect("an offset was stored");
    let (s, body) = w.put_empty("/connectors/seq/resume").await;
    assert_eq!(s, 202, "{body}");
    let want = before as usize + 301;
    wait_until("more records after the resume", || async {
        lines(&output).len() >= want
    })
    .await;

    let (s, body) = w.put_empty("/connectors/seq/stop").await;
    assert_eq!(s, 204, "{body}");
    w.wait_for_state("seq", "STOPPED", 0, "").await;
    wait_until("every stored record in the output", || async {
        let last = stored_seqno(&w, "seq").await.unwrap_or(0);
        lines(&output).len() == last as usize + 1
    })
    .await;
    let last = stored_seqno(&w, "seq").await.expect("an offset was stored");
    assert!(last > before);
    let expected: Vec<String> = (0..=last).map(|n| n.to_string()).collect();
    assert_eq!(lines(&output), expected, "every seqno once, in order");
    w.stop().await;
}
