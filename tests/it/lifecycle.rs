//! Creating, running and moving records end to end.

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
