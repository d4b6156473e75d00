//! `liteconnect test` and `POST /connector-plugins/{p}/config/test`: a config's record path offline.
//!
//! The cases under `tests/tryout/` (a connector file, sample records, and the expected outcomes written
//! by hand from Kafka's documented semantics of each transform, predicate and converter) run through
//! the binary; together they use every transformation and predicate of the catalog.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use crate::common::*;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tryout")
}

/// Each case directory: its connector file (`connector.json`, or the path in `connector.path`).
fn cases() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|dir| {
            let connector = match std::fs::read_to_string(dir.join("connector.path")) {
                Ok(relative) => dir.join(relative.trim()),
                Err(_) => dir.join("connector.json"),
            };
            (
                dir.file_name().unwrap().to_string_lossy().into_owned(),
                connector,
            )
        })
        .collect();
    out.sort();
    out
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn every_case_comes_out_as_its_expected_file_says() {
    let dir = tempdir();
    let cases = cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let mut failed = Vec::new();
    for (name, connector) in &cases {
        let case = cases_dir().join(name);
        let (code, out, err) = run_binary(
            dir.path(),
            &[
                "test",
                &path(connector),
                "--input",
                &path(&case.join("input.jsonl")),
                "--expect",
                &path(&case.join("expected.jsonl")),
                "--format",
                "json",
            ],
        );
        if code != 0 || !err.contains("as expected") {
            failed.push(format!("{name}: exit {code}\n{err}\n{out}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // Nothing was written where the test ran (the sinks' files included).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn the_cases_use_every_transformation_and_predicate() {
    let mut configs = String::new();
    for (_, connector) in cases() {
        configs.push_str(&std::fs::read_to_string(connector).unwrap());
    }
    let mut missing = Vec::new();
    for kind in [
        liteconnect::plugins::PluginKind::Transformation,
        liteconnect::plugins::PluginKind::Predicate,
    ] {
        for plugin in liteconnect::plugins::of_kind(kind) {
            // `Cast$Key` is covered by `Cast$Value`: the same class with the other part of the record.
            let base = plugin.class.split('$').next().unwrap();
            let short = base.rsplit('.').next().unwrap();
            let used =
                configs.contains(&format!("\"{base}")) || configs.contains(&format!("\"{short}\""));
            if !used {
                missing.push(plugin.class);
            }
        }
    }
    assert!(missing.is_empty(), "no case uses {missing:?}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    path(&p)
}

fn json_sink(dir: &Path, tolerance: &str) -> String {
    write(
        dir,
        "sink.json",
        &json!({"name": "s", "config": {
            "connector.class": "FileStreamSink", "file": path(&dir.join("never.txt")), "topics": "t",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "errors.tolerance": tolerance}})
        .to_string(),
    )
}

#[test]
fn exit_codes_name_the_file_the_line_the_key_and_the_record() {
    let dir = tempdir();
    let d = dir.path();
    let sink = json_sink(d, "none");
    let input = write(
        d,
        "in.jsonl",
        "{\"value\": {\"id\": 1}}\n{\"value\": \"{broken\"}\n{\"value\": {\"id\": 3}}\n",
    );

    // A record the converter cannot read, errors.tolerance=none: exit 1, the record and the stage named,
    // the records after it not run.
    let (code, out, err) = run_binary(d, &["test", &sink, "--input", &input]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("#0 delivered → t partition 0 offset 0"),
        "{out}"
    );
    assert!(
        out.contains("#1 failed at VALUE_CONVERTER (org.apache.kafka.connect.json.JsonConverter)"),
        "{out}"
    );
    assert!(!out.contains("#2"), "{out}");
    assert!(err.contains("record 1 failed the task"), "{err}");

    // The same with errors.tolerance=all: every record run, the bad one skipped; exit 0.
    let tolerant = json_sink(d, "all");
    let (code, out, _) = run_binary(
        d,
        &["test", &tolerant, "--input", &input, "--format", "json"],
    );
    assert_eq!(code, 0, "{out}");
    let lines: Vec<Json> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["result"], "failed");
    assert_eq!(lines[1]["skipped"], true);
    assert_eq!(lines[2]["value"]["payload"], json!({"id": 3}));

    // An expected file that differs: exit 1 with each difference on its record and field.
    let expected = write(
        d,
        "expected.jsonl",
        "{\"value\": {\"payload\": {\"id\": 2}}}\n{\"result\": \"delivered\"}\n{}\n",
    );
    let (code, _, err) = run_binary(
        d,
        &["test", &tolerant, "--input", &input, "--expect", &expected],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("2 difference(s)"), "{err}");
    assert!(
        err.contains("record 0: value.payload.id: expected 2, got 1"),
        "{err}"
    );
    assert!(
        err.contains("record 1: result: expected \"delivered\", got \"failed\""),
        "{err}"
    );

    // An input line that is not JSON: exit 2 naming the file and the line.
    let bad = write(d, "bad.jsonl", "{\"value\": 1}\nnot json\n");
    let (code, _, err) = run_binary(d, &["test", &sink, "--input", &bad]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("bad.jsonl: line 2: not a JSON record"),
        "{err}"
    );
    let (code, _, err) = run_binary(
        d,
        &["test", &sink, "--input", &path(&d.join("missing.jsonl"))],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing.jsonl"), "{err}");
    let (code, _, err) = run_binary(d, &["test", &sink]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--input"), "{err}");

    // A config with an unknown transform: exit 3 with validate's message on its key.
    let unknown = write(
        d,
        "unknown.properties",
        "name=u\nconnector.class=FileStreamSink\nfile=x.txt\ntopics=t\ntransforms=x\ntransforms.x.type=com.example.Nope\n",
    );
    let (code, _, err) = run_binary(d, &["test", &unknown, "--input", &input]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("unknown.properties") && err.contains("transforms.x.type"),
        "{err}"
    );
    assert!(err.contains("com.example.Nope"), "{err}");
    // Nothing was written beside the files the test wrote.
    assert!(!d.join("never.txt").exists() && !d.join("x.txt").exists());
}

#[test]
fn a_dead_letter_queue_view_carries_kafkas_context_headers() {
    let dir = tempdir();
    let d = dir.path();
    let sink = write(
        d,
        "dlq.json",
        &json!({"name": "to-dlq", "config": {
            "connector.class": "FileStreamSink", "file": "out.txt", "topics": "t",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "errors.tolerance": "all", "errors.deadletterqueue.topic.name": "t-dlq",
            "errors.deadletterqueue.context.headers.enable": "true"}})
        .to_string(),
    );
    let input = write(
        d,
        "in.jsonl",
        "{\"offset\": 41, \"value\": \"oops\", \"headers\": {\"h\": \"v\"}}\n",
    );
    let (code, out, err) = run_binary(d, &["test", &sink, "--input", &input, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let outcome: Json = serde_json::from_str(out.trim()).unwrap();
    let dlq = &outcome["dlq"];
    assert_eq!(dlq["topic"], "t-dlq");
    assert_eq!(dlq["value"], "oops");
    let headers: Vec<(String, Json)> = dlq["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["key"].as_str().unwrap().to_string(), h["value"].clone()))
        .collect();
    assert_eq!(headers[0], ("h".to_string(), json!("v")));
    let get = |k: &str| {
        headers
            .iter()
            .find(|(key, _)| key == &format!("__connect.errors.{k}"))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {k} in {headers:?}"))
    };
    assert_eq!(get("topic"), "t");
    assert_eq!(get("offset"), "41");
    assert_eq!(get("connector.name"), "to-dlq");
    assert_eq!(get("stage"), "VALUE_CONVERTER");
    assert_eq!(
        get("class.name"),
        "org.apache.kafka.connect.json.JsonConverter"
    );
    assert_eq!(
        get("exception.class.name"),
        "org.apache.kafka.connect.errors.DataException"
    );
}

#[test]
fn a_file_source_runs_offline_and_stores_nothing() {
    let dir = tempdir();
    let d = dir.path();
    let data = d.join("data.txt");
    std::fs::write(&data, "alpha\nbeta\n{\"n\": 3}\n").unwrap();
    let state = d.join("state");
    std::fs::create_dir(&state).unwrap();
    let worker = write(
        d,
        "worker.properties",
        &format!(
            "storage.file={}\noffset.storage.file.filename={}\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\n",
            path(&state.join("worker.db")),
            path(&state.join("offsets.dat"))
        ),
    );
    let source = write(
        d,
        "source.properties",
        &format!(
            "name=lines\nconnector.class=FileStreamSource\nfile={}\ntopic=lines\ntransforms=tag\ntransforms.tag.type=InsertHeader\ntransforms.tag.header=origin\ntransforms.tag.value.literal=edge\n",
            path(&data)
        ),
    );
    let args = [
        "test",
        &source,
        "--worker",
        &worker,
        "--max-records",
        "3",
        "--format",
        "json",
    ];
    let (code, first, err) = run_binary(d, &args);
    assert_eq!(code, 0, "{err}");
    let records: Vec<Json> = first
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let values: Vec<&Json> = records.iter().map(|r| &r["value"]).collect();
    assert_eq!(values, [&json!("alpha"), &json!("beta"), &json!({"n": 3})]);
    for r in &records {
        assert_eq!(r["result"], "stored");
        assert_eq!(r["topic"], "lines");
        assert_eq!(r["headers"], json!([{"key": "origin", "value": "edge"}]));
    }
    // Kafka's FileStreamSource offset: the byte position after the line. liteconnect's file source gives
    // it with the last record of each read (what is stored), so the first two show none.
    assert_eq!(
        records[2]["source_partition"],
        json!({"filename": path(&data)})
    );
    assert_eq!(records[2]["source_offset"], json!({"position": 20}));
    assert_eq!(records[0]["source_offset"], Json::Null);
    // Nothing of the run is stored: not the worker's database, not an offsets file.
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
    // And a second run prints the same records.
    let (code, second, _) = run_binary(d, &args);
    assert_eq!(code, 0);
    // (Records are stamped with the time they are read.)
    let unstamped = |out: &str| -> Vec<Json> {
        out.lines()
            .map(|l| {
                let mut r: Json = serde_json::from_str(l).unwrap();
                r.as_object_mut().unwrap().remove("timestamp");
                r
            })
            .collect()
    };
    assert_eq!(unstamped(&second), unstamped(&first));
    // Asked for more than the file has, it stops at the timeout with what there is.
    let (code, out, _) = run_binary(
        d,
        &[
            "test",
            &source,
            "--worker",
            &worker,
            "--max-records",
            "10",
            "--timeout",
            "0.5",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 3);
    // A source test takes no --input.
    let (code, _, err) = run_binary(d, &["test", &source, "--input", &path(&data)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("source connector"), "{err}");
}

#[tokio::test]
async fn the_test_route_answers_over_http_and_creates_nothing() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let case = cases_dir().join("route-replace-filter");
    let connector: Json =
        serde_json::from_str(&std::fs::read_to_string(case.join("connector.json")).unwrap())
            .unwrap();
    let records: Vec<Json> = std::fs::read_to_string(case.join("input.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (status, answer) = w
        .post(
            "/connector-plugins/FileStreamSink/config/test",
            json!({"config": connector["config"], "records": records}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["type"], "sink");
    let out = answer["records"].as_array().unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[0]["topic"], "orders-eu");
    assert_eq!(
        out[0]["value"]["payload"],
        json!({"id": 1, "customer": "ada"})
    );
    assert_eq!(out[1]["result"], "dropped");
    assert_eq!(out[1]["by"], "dropTests");
    // The step view: the converted record, then each transform in order.
    let steps = out[0]["steps"].as_array().unwrap();
    let names: Vec<&str> = steps
        .iter()
        .map(|s| s["alias"].as_str().unwrap_or(s["step"].as_str().unwrap()))
        .collect();
    assert_eq!(names, ["converters", "route", "clean", "dropTests"]);
    assert_eq!(steps[0]["record"]["topic"], "orders");
    assert_eq!(steps[1]["record"]["topic"], "orders-eu");
    assert_eq!(steps[1]["record"]["value"]["payload"]["card"], "4111");
    assert!(steps[2]["record"]["value"]["payload"].get("card").is_none());
    assert_eq!(steps[3]["result"], "skipped by its predicate");

    // A source config over REST: its task runs for at most max.records.
    let data = dir.path().join("data.txt");
    std::fs::write(&data, "one\ntwo\nthree\n").unwrap();
    let (status, answer) = w
        .post(
            "/connector-plugins/FileStreamSource/config/test",
            json!({"config": {"file": path(&data), "topic": "lines",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter"},
                "max.records": 2, "steps": false}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["type"], "source");
    let values: Vec<&Json> = answer["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["value"])
        .collect();
    assert_eq!(values, [&json!("one"), &json!("two")]);

    // Bad bodies and configs: Kafka's error body.
    let sink = json!({"connector.class": "FileStreamSink", "file": "x", "topics": "t"});
    for (body, says) in [
        (
            json!({"config": sink, "records": {"value": 1}}),
            "\"records\" must be a list",
        ),
        (
            json!({"config": sink, "records": [{"value": 1}, "nope"]}),
            "Invalid record at index 1",
        ),
        (json!({"records": []}), "needs a \"config\""),
        (json!({"config": sink, "max.records": 0}), "max.records"),
        (
            json!({"config": {"connector.class": "FileStreamSink", "topics": "t", "transforms": "x", "transforms.x.type": "Nope"}}),
            "transforms.x.type",
        ),
        (
            json!({"config": {"connector.class": "FileStreamSource", "file": "x", "topic": "t"}}),
            "does not match request type FileStreamSink",
        ),
    ] {
        let (status, answer) = w
            .post("/connector-plugins/FileStreamSink/config/test", body)
            .await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["error_code"], 400, "{answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(says),
            "{says}: {answer}"
        );
    }
    let (status, answer) = w.get("/connector-plugins/FileStreamSink/config/test").await;
    assert_eq!(status, 405, "{answer}");
    // Trying created nothing.
    assert_eq!(w.get("/connectors").await.1, json!([]));
    assert_eq!(w.get("/topics").await.1, json!([]));
}
