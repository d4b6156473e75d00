//! The offsets API (KIP-875) with KIP-980's STOPPED state, and offsets on create (KIP-995).

use serde_json::{json, Value as Json};

use crate::common::*;

fn stopped(mut body: Json) -> Json {
    body["initial_state"] = json!("STOPPED");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn source_resumes_from_patched_offset_and_rereads_after_reset() {
    let Fixture {
        dir: _dir,
        w,
        input,
        output: out,
    } = Fixture::start().await;
    // Ten lines of 7 bytes ("line-N\n"): line k starts at byte 7k.
    append_lines(&input, (0..10).map(|i| format!("line-{i}")));
    let file = input.display().to_string();
    w.create(stopped(file_source("src", &input, "t"))).await;
    assert_eq!(
        w.get("/connectors/src/offsets").await,
        (200, json!({"offsets": []}))
    );
    let (s, body) = w
        .patch(
            "/connectors/src/offsets",
            json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": 42}}]}),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(
        body,
        json!({"message": "The offsets for this connector have been altered successfully"})
    );
    assert_eq!(
        w.get("/connectors/src/offsets").await.1,
        json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": 42}}]})
    );
    w.create(file_sink("snk", &out, "t")).await;
    assert_eq!(w.put_empty("/connectors/src/resume").await.0, 202);
    wait_until("lines 6..9 out", || async { lines(&out).len() >= 4 }).await;
    assert_eq!(
        lines(&out),
        ["line-6", "line-7", "line-8", "line-9"],
        "lines before the patched position are not re-read"
    );
    wait_until("the offset to reach the end", || async {
        w.get("/connectors/src/offsets").await.1["offsets"][0]["offset"]["position"] == 70
    })
    .await;

    // Alter and reset are refused unless STOPPED.
    for state in ["RUNNING", "PAUSED"] {
        if state == "PAUSED" {
            assert_eq!(w.put_empty("/connectors/src/pause").await.0, 202);
        }
        let (s, body) = w
            .patch(
                "/connectors/src/offsets",
                json!({"offsets": [{"partition": {"filename": file}, "offset": null}]}),
            )
            .await;
        assert_eq!(s, 400, "{state}: {body}");
        assert!(
            body["message"].as_str().unwrap().starts_with(
                "Connectors must be in the STOPPED state before their offsets can be modified."
            ),
            "{body}"
        );
        assert!(body["message"]
            .as_str()
            .unwrap()
            .contains("'/connectors/src/stop'"));
        assert_eq!(w.delete("/connectors/src/offsets").await.0, 400);
    }
    // Reset, resume: everything is read again.
    assert_eq!(w.put_empty("/connectors/src/stop").await.0, 204);
    let (s, body) = w.delete("/connectors/src/offsets").await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(
        body,
        json!({"message": "The offsets for this connector have been reset successfully"})
    );
    assert_eq!(
        w.get("/connectors/src/offsets").await.1,
        json!({"offsets": []})
    );
    assert_eq!(w.put_empty("/connectors/src/resume").await.0, 202);
    wait_until("all ten lines again", || async { lines(&out).len() >= 14 }).await;
    assert_eq!(
        lines(&out)[4..],
        (0..10).map(|i| format!("line-{i}")).collect::<Vec<_>>()[..]
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sink_created_stopped_with_offset_5_delivers_from_5() {
    let Fixture {
        dir,
        w,
        input,
        output: out,
    } = Fixture::start().await;
    append_lines(&input, (0..10).map(|i| format!("r{i}")));
    w.create(file_source("src", &input, "t")).await;
    // A probe sink proves all ten records are in the log before the real one starts.
    let probe = dir.path().join("probe.txt");
    w.create(file_sink("probe", &probe, "t")).await;
    wait_until("ten records in the log", || async {
        lines(&probe).len() == 10
    })
    .await;

    w.create(stopped(file_sink("snk", &out, "t"))).await;
    let (s, body) = w
        .patch("/connectors/snk/offsets", json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": "0"}, "offset": {"kafka_offset": 5}}]}))
        .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(
        w.get("/connectors/snk/offsets").await.1,
        json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]})
    );
    assert_eq!(w.put_empty("/connectors/snk/resume").await.0, 202);
    wait_until("records 5..9", || async { lines(&out).len() >= 5 }).await;
    assert_eq!(lines(&out), ["r5", "r6", "r7", "r8", "r9"]);
    wait_until("the committed offset", || async {
        w.get("/connectors/snk/offsets").await.1["offsets"][0]["offset"]["kafka_offset"] == 10
    })
    .await;
    // Reset then resume: from the start of what the log retains.
    assert_eq!(w.put_empty("/connectors/snk/stop").await.0, 204);
    assert_eq!(w.delete("/connectors/snk/offsets").await.0, 200);
    assert_eq!(
        w.get("/connectors/snk/offsets").await.1,
        json!({"offsets": []})
    );
    assert_eq!(w.put_empty("/connectors/snk/resume").await.0, 202);
    wait_until("all ten after reset", || async { lines(&out).len() >= 15 }).await;
    assert_eq!(
        lines(&out)[5..],
        (0..10).map(|i| format!("r{i}")).collect::<Vec<_>>()[..]
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_offsets_are_400_and_change_nothing() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let file = input.display().to_string();
    w.create(stopped(file_source("src", &input, "t"))).await;
    assert_eq!(
        w.post(
            "/connectors",
            stopped(file_sink("snk", &dir.path().join("o.txt"), "t"))
        )
        .await
        .0,
        201
    );
    let good = json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": 3}}]});
    assert_eq!(w.patch("/connectors/src/offsets", good).await.0, 200);
    let sink_cases = [
        (json!({"offsets": []}), "Partitions / offsets need to be provided for an alter offsets request"),
        (json!({}), "Partitions / offsets need to be provided"),
        (json!({"offsets": [{"offset": {"kafka_offset": 1}}]}), "The partition for a sink connector offset cannot be null or missing"),
        (json!({"offsets": [{"partition": {"kafka_topic": "t"}, "offset": {"kafka_offset": 1}}]}), "must contain the keys 'kafka_topic' and 'kafka_partition'"),
        (json!({"offsets": [{"partition": {"kafka_topic": null, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}]}), "Kafka topic names must be valid strings and may not be null"),
        (json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": null}, "offset": {"kafka_offset": 1}}]}), "Kafka partitions must be valid numbers and may not be null"),
        (json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": "zero"}, "offset": {"kafka_offset": 1}}]}), "Failed to parse the following Kafka partition value in the provided offsets: 'zero'. Partition values for sink connectors need to be integers."),
        (json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"offset": 1}}]}), "The offset for a sink connector should either be null or contain the key 'kafka_offset'"),
        (json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": "x"}}]}), "Failed to parse the following Kafka offset value in the provided offsets: 'x'. Offset values for sink connectors need to be integers."),
        (json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": -1}}]}), "non-negative"),
        (json!({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 1}, "extra": 1}]}), "unknown field"),
    ];
    for (body, expected) in sink_cases {
        let (s, resp) = w.patch("/connectors/snk/offsets", body.clone()).await;
        assert_eq!(s, 400, "{body}: {resp}");
        assert!(
            resp["message"].as_str().unwrap().contains(expected),
            "{body}: {resp}"
        );
    }
    let source_cases = [
        (
            json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": -5}}]}),
            "The value for the 'position' key in the offset should be a non-negative value",
        ),
        (
            json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": "12"}}]}),
            "The value for the 'position' key in the offset is expected to be a Long value",
        ),
        (
            json!({"offsets": [{"partition": {"filename": file}, "offset": {"other": 1}}]}),
            "Offset objects should either be null or contain the key 'position'",
        ),
        (
            json!({"offsets": [{"partition": {"file": file}, "offset": {"position": 1}}]}),
            "Partition objects should contain the key 'filename'",
        ),
        (
            json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": [1]}}]}),
            "Offsets may only contain primitive types as values, but field position contains array",
        ),
        (json!("not an object"), "Invalid request body"),
    ];
    for (body, expected) in source_cases {
        let (s, resp) = w.patch("/connectors/src/offsets", body.clone()).await;
        assert_eq!(s, 400, "{body}: {resp}");
        assert!(
            resp["message"].as_str().unwrap().contains(expected),
            "{body}: {resp}"
        );
    }
    assert_eq!(
        w.get("/connectors/snk/offsets").await.1,
        json!({"offsets": []})
    );
    assert_eq!(
        w.get("/connectors/src/offsets").await.1,
        json!({"offsets": [{"partition": {"filename": file}, "offset": {"position": 3}}]})
    );
    let (s, resp) = w
        .patch(
            "/connectors/nope/offsets",
            json!({"offsets": [{"partition": {"a": 1}, "offset": null}]}),
        )
        .await;
    assert_eq!(
        (s, resp["message"].clone()),
        (404, json!("Connector nope not found"))
    );
    assert_eq!(w.get("/connectors/nope/offsets").await.0, 404);
    assert_eq!(w.delete("/connectors/nope/offsets").await.0, 404);
    // A tombstone removes one partition's offset.
    let (s, _) = w
        .patch(
            "/connectors/src/offsets",
            json!({"offsets": [{"partition": {"filename": file}, "offset": null}]}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        w.get("/connectors/src/offsets").await.1,
        json!({"offsets": []})
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_on_create_are_used_from_the_first_poll() {
    let Fixture {
        dir: _dir,
        w,
        input,
        output: out,
    } = Fixture::start().await;
    append_lines(&input, (0..5).map(|i| format!("l-{i}")));
    let file = input.display().to_string();
    // Invalid offsets: 400 and no connector.
    let mut bad = file_source("src", &input, "t");
    bad["offsets"] = json!([{"partition": {"filename": file}, "offset": {"position": -1}}]);
    let (s, resp) = w.post("/connectors", bad).await;
    assert_eq!(s, 400, "{resp}");
    assert_eq!(w.get("/connectors").await.1, json!([]));
    // Valid ones: lines before position 8 ("l-0\nl-1\n") are skipped.
    let mut good = file_source("src", &input, "t");
    good["offsets"] = json!([{"partition": {"filename": file}, "offset": {"position": 8}}]);
    w.create(good).await;
    w.create(file_sink("snk", &out, "t")).await;
    wait_until("three lines", || async { lines(&out).len() >= 3 }).await;
    assert_eq!(lines(&out), ["l-2", "l-3", "l-4"]);
    w.stop().await;
}
