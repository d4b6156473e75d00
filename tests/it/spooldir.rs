//! The SpoolDir source connectors against a real worker and real directories: CSV with schema
//! generation through JsonConverter, JSON and line-delimited files, the cleanup policies, an unparsable
//! file, validation messages, the input directory going away and coming back, and `kill -9` of the real
//! binary in the middle of a file.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use crate::common::*;

const JSON_V2: &str = "application/vnd.kafka.json.v2+json";
const PKG: &str = "com.github.jcustenborder.kafka.connect.spooldir.";

/// The input, finished and error directories of a test.
struct Spool {
    input: PathBuf,
    finished: PathBuf,
    error: PathBuf,
}

fn spool(dir: &Path) -> Spool {
    let make = |n: &str| {
        let p = dir.join(n);
        std::fs::create_dir_all(&p).unwrap();
        p
    };
    Spool {
        input: make("spool-in"),
        finished: make("spool-finished"),
        error: make("spool-error"),
    }
}

/// Drops a file into a directory whole: written under a name no pattern matches, then renamed.
fn drop_file(dir: &Path, name: &str, content: &str) {
    let tmp = dir.join(format!(".{name}.part"));
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

fn connector(name: &str, class: &str, s: &Spool, extra: Json) -> Json {
    let mut config = json!({
        "connector.class": format!("{PKG}{class}"),
        "tasks.max": "1",
        "topic": name,
        "input.path": s.input.display().to_string(),
        "finished.path": s.finished.display().to_string(),
        "error.path": s.error.display().to_string(),
        "input.file.pattern": ".*\\.(csv|json|txt)",
        "empty.poll.wait.ms": "50",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    json!({"name": name, "config": config})
}

/// The records of partition 0 of `topic`, values parsed as JSON, once there are `n`.
async fn records(w: &TestWorker, topic: &str, n: usize) -> Vec<Json> {
    wait_for(&format!("{n} records in {topic}"), DEADLINE, || async {
        let r = w
            .client
            .get(format!(
                "{}/topics/{topic}/partitions/0/records?offset=0&timeout=100&max_bytes=10000000",
                w.url
            ))
            .header("Accept", JSON_V2)
            .send()
            .await
            .ok()?;
        if r.status() != 200 {
            return None;
        }
        let body: Vec<Json> = r.json().await.ok()?;
        (body.len() >= n).then_some(body)
    })
    .await
}

/// A worker with one connector of `class` reading `file` (name, content) dropped in its input directory.
async fn started(name: &str, class: &str, file: (&str, &str), extra: Json) -> (Fixture, Spool) {
    let f = Fixture::start().await;
    let s = spool(f.dir.path());
    drop_file(&s.input, file.0, file.1);
    f.w.create(connector(name, class, &s, extra)).await;
    (f, s)
}

async fn wait_for_file(path: &Path) {
    let p = path.to_path_buf();
    wait_until(&format!("{} to exist", p.display()), || {
        let exists = p.exists();
        async move { exists }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_with_a_header_and_generated_schemas_through_the_json_converter() {
    let (f, s) = started(
        "csv",
        "SpoolDirCsvSourceConnector",
        ("people.csv", "id,name,city\n1,Ann,Oslo\n2,Bo,\n"),
        json!({
            "csv.first.row.as.header": "true",
            "schema.generation.enabled": "true",
            "schema.generation.key.fields": "id",
            "csv.null.field.indicator": "EMPTY_SEPARATORS",
            "value.converter.schemas.enable": "true",
        }),
    )
    .await;
    let got = records(&f.w, "csv", 2).await;
    assert_eq!(got.len(), 2);
    let value = &got[0]["value"];
    let schema = &value["schema"];
    assert_eq!(schema["type"], "struct");
    assert_eq!(
        schema["name"],
        "com.github.jcustenborder.kafka.connect.model.Value"
    );
    let fields: Vec<(&str, &str, bool)> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["field"].as_str().unwrap(),
                f["type"].as_str().unwrap(),
                f["optional"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("id", "string", true),
            ("name", "string", true),
            ("city", "string", true)
        ]
    );
    assert_eq!(
        value["payload"],
        json!({"id": "1", "name": "Ann", "city": "Oslo"})
    );
    assert_eq!(
        got[1]["value"]["payload"]["city"],
        Json::Null,
        "empty is null"
    );
    assert_eq!(got[0]["key"], json!({"id": "1"}));
    assert_eq!(got[1]["key"], json!({"id": "2"}));
    // Cleaned up (MOVE) once committed, with the original's offset shape and counting.
    wait_for_file(&s.finished.join("people.csv")).await;
    assert!(!s.input.join("people.csv").exists());
    let (_, offsets) = f.w.get("/connectors/csv/offsets").await;
    assert_eq!(
        offsets["offsets"],
        json!([{"partition": {"fileName": "people.csv"}, "offset": {"offset": 2}}])
    );
    // The file headers are stored with the records.
    let conn = rusqlite::Connection::open(&f.w.db).unwrap();
    let headers: Vec<u8> = conn
        .query_row(
            "SELECT r.headers FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = 'csv' ORDER BY r.offset LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let text = String::from_utf8_lossy(&headers);
    for key in [
        "file.name",
        "file.name.without.extension",
        "file.path",
        "file.parent.dir.name",
        "file.length",
        "file.offset",
        "file.last.modified",
    ] {
        assert!(text.contains(key), "header {key} in {text}");
    }
    assert!(
        text.contains("people.csv") && text.contains("spool-in"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_line_delimited_files_with_each_cleanup_policy() {
    let f = Fixture::start().await;
    let schema = r#"{"name":"Reading","type":"STRUCT","isOptional":false,"fieldSchemas":{"id":{"type":"INT64","isOptional":false},"temp":{"type":"FLOAT64","isOptional":true},"at":{"name":"org.apache.kafka.connect.data.Timestamp","type":"INT64","version":1,"isOptional":false}}}"#;
    let key = r#"{"name":"ReadingKey","type":"STRUCT","isOptional":false,"fieldSchemas":{"id":{"type":"INT64","isOptional":false}}}"#;
    let cases = [
        ("json", "SpoolDirJsonSourceConnector", "DELETE"),
        (
            "lines",
            "SpoolDirLineDelimitedSourceConnector",
            "MOVEBYDATE",
        ),
        ("raw", "SpoolDirSchemaLessJsonSourceConnector", "NONE"),
    ];
    let mut spools = Vec::new();
    for (name, class, policy) in cases {
        let s = spool(&f.dir.path().join(name));
        let content = if name == "lines" {
            "first line\nsecond line\n".to_string()
        } else {
            "{\"id\": 1, \"temp\": 20.5, \"at\": \"2024-05-01T10:00:00\"}\n{\"id\": 2, \"at\": \"2024-05-01 11:00:00\"}\n".to_string()
        };
        drop_file(
            &s.input,
            &format!("data.{}", if name == "lines" { "txt" } else { "json" }),
            &content,
        );
        let extra = json!({
            "cleanup.policy": policy, "key.schema": key, "value.schema": schema,
            "timestamp.mode": "FIELD", "timestamp.field": "at",
        });
        let mut body = connector(name, class, &s, extra);
        if name != "json" {
            let config = body["config"].as_object_mut().unwrap();
            config.retain(|k, _| {
                ![
                    "key.schema",
                    "value.schema",
                    "timestamp.mode",
                    "timestamp.field",
                ]
                .contains(&k.as_str())
            });
        }
        f.w.create(body).await;
        spools.push(s);
    }
    let json_records = records(&f.w, "json", 2).await;
    assert_eq!(
        json_records[0]["value"],
        json!({"id": 1, "temp": 20.5, "at": 1714557600000i64})
    );
    assert_eq!(json_records[1]["value"]["temp"], Json::Null);
    wait_until("the JSON file to be deleted", || async {
        !spools[0].input.join("data.json").exists()
    })
    .await;
    assert!(!spools[0].finished.join("data.json").exists());

    let lines = records(&f.w, "lines", 2).await;
    assert_eq!(lines[0]["value"], "first line");
    assert_eq!(lines[1]["value"], "second line");
    wait_until("the text file to be moved by date", || async {
        std::fs::read_dir(&spools[1].finished)
            .unwrap()
            .filter_map(Result::ok)
            .any(|d| d.path().join("data.txt").exists())
    })
    .await;
    let (_, offsets) = f.w.get("/connectors/lines/offsets").await;
    assert_eq!(offsets["offsets"][0]["offset"], json!({"offset": 2}));

    let raw = records(&f.w, "raw", 2).await;
    // A string value holding the record's JSON text.
    let text: Json = serde_json::from_str(raw[0]["value"].as_str().unwrap()).unwrap();
    assert_eq!(
        text,
        json!({"id": 1, "temp": 20.5, "at": "2024-05-01T10:00:00"})
    );
    let (_, offsets) = f.w.get("/connectors/raw/offsets").await;
    assert_eq!(offsets["offsets"][0]["offset"], json!({"offset": 2}));
    assert_holds_for(
        "NONE leaves the file in place and reads it once",
        std::time::Duration::from_millis(500),
        || async {
            spools[2].input.join("data.json").exists()
                && f.w.get("/topics/raw/partitions/0/offsets").await.1["end_offset"] == 2
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unparsable_file_goes_to_the_error_path_or_fails_the_task() {
    let f = Fixture::start().await;
    let s = spool(f.dir.path());
    let schema = r#"{"type":"STRUCT","isOptional":false,"fieldSchemas":{"n":{"type":"INT32","isOptional":false}}}"#;
    let key = r#"{"type":"STRUCT","isOptional":false,"fieldSchemas":{}}"#;
    drop_file(&s.input, "a.csv", "1\n2\nnot a number\n4\n");
    drop_file(&s.input, "b.csv", "5\n");
    f.w.create(connector(
        "bad",
        "SpoolDirCsvSourceConnector",
        &s,
        json!({"key.schema": key, "value.schema": schema, "halt.on.error": "false"}),
    ))
    .await;
    let got = records(&f.w, "bad", 3).await;
    let values: Vec<&Json> = got.iter().map(|r| &r["value"]).collect();
    assert_eq!(
        values,
        [&json!({"n": 1}), &json!({"n": 2}), &json!({"n": 5})]
    );
    wait_for_file(&s.error.join("a.csv.error.txt")).await;
    let sidecar = std::fs::read_to_string(s.error.join("a.csv.error.txt")).unwrap();
    assert!(sidecar.contains("line 3"), "{sidecar}");
    assert!(sidecar.contains("'not a number'"), "{sidecar}");
    assert!(s.error.join("a.csv").exists());
    wait_for_file(&s.finished.join("b.csv")).await;

    // With halt.on.error (the default) the task fails with the message instead.
    let h = spool(&f.dir.path().join("halt"));
    drop_file(&h.input, "c.csv", "x\n");
    f.w.create(connector(
        "halt",
        "SpoolDirCsvSourceConnector",
        &h,
        json!({"key.schema": key, "value.schema": schema}),
    ))
    .await;
    let trace = f.w.wait_for_failed_task("halt").await;
    assert!(
        trace.contains("line 1") && trace.contains("c.csv"),
        "{trace}"
    );
    assert!(h.error.join("c.csv").exists());
    assert!(h.error.join("c.csv.error.txt").exists());
}

/// The errors validation reports for `key`.
fn errors_of(answer: &Json, key: &str) -> Vec<String> {
    validation_errors(answer).remove(key).unwrap_or_default()
}

/// Validates a CSV connector config: a valid base with `timestamp.mode=FIELD`, changed by `changes`.
async fn validate(w: &TestWorker, changes: Json) -> (u16, Json) {
    let mut config = json!({
        "connector.class": "SpoolDirCsvSourceConnector", "name": "v", "topic": "t",
        "input.path": "/tmp", "error.path": "/tmp", "input.file.pattern": ".*",
        "timestamp.mode": "FIELD",
    });
    for (k, v) in changes.as_object().unwrap() {
        config[k] = v.clone();
    }
    w.put(
        "/connector-plugins/SpoolDirCsvSourceConnector/config/validate",
        config,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_names_the_keys_in_the_originals_words() {
    let f = Fixture::start().await;
    let (status, answer) = validate(
        &f.w,
        json!({"input.path": "relative/dir", "input.file.pattern": "(bad", "cleanup.policy": "SHRED"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert!(errors_of(&answer, "input.path")
        .iter()
        .any(|e| e.contains("'input.path'(relative/dir) is not an absolute path.")));
    assert!(errors_of(&answer, "cleanup.policy").iter().any(|e| e.contains(
        "'SHRED' is not a valid value for CleanupPolicy. Valid values are NONE, DELETE, MOVE, MOVEBYDATE."
    )));
    assert!(errors_of(&answer, "input.file.pattern")
        .iter()
        .any(|e| e.contains("Invalid regex")));
    let (_, answer) = validate(&f.w, json!({})).await;
    assert_eq!(
        errors_of(&answer, "finished.path"),
        ["'finished.path' cannot be null or empty."]
    );
    assert_eq!(
        errors_of(&answer, "value.schema"),
        ["'value.schema' must be set if 'schema.generation.enabled' = false."]
    );
    assert_eq!(
        errors_of(&answer, "timestamp.field"),
        ["When `timestamp.mode` is set to `FIELD`, `timestamp.field` must be set to a timestamp field. Cannot be null or empty."]
    );
    // A missing error directory fails the task when it starts, naming the key.
    let s = spool(f.dir.path());
    let mut body = connector(
        "nodir",
        "SpoolDirLineDelimitedSourceConnector",
        &s,
        json!({}),
    );
    body["config"]["error.path"] = json!(f.dir.path().join("absent").display().to_string());
    f.w.create(body).await;
    let trace = f.w.wait_for_failed_task("nodir").await;
    assert!(trace.contains("Directory for 'error.path'"), "{trace}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_directory_going_away_and_coming_back_loses_nothing() {
    let (f, s) = started(
        "gone",
        "SpoolDirLineDelimitedSourceConnector",
        ("a.txt", "a1\na2\n"),
        json!({}),
    )
    .await;
    records(&f.w, "gone", 2).await;
    wait_for_file(&s.finished.join("a.txt")).await;
    let away = f.dir.path().join("spool-away");
    std::fs::rename(&s.input, &away).unwrap();
    wait_until("the task to report the missing input directory", || async {
        let status = f.w.status("gone").await;
        status["tasks"][0]["state"] == "RUNNING"
            && status["tasks"][0]["trace"]
                .as_str()
                .is_some_and(|t| t.contains("input.path"))
    })
    .await;
    drop_file(&away, "b.txt", "b1\nb2\nb3\n");
    std::fs::rename(&away, &s.input).unwrap();
    let got = records(&f.w, "gone", 5).await;
    let values: Vec<&str> = got.iter().map(|r| r["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["a1", "a2", "b1", "b2", "b3"]);
    wait_for_file(&s.finished.join("b.txt")).await;
    wait_until("the trace to clear", || async {
        f.w.status("gone").await["tasks"][0]["trace"].is_null()
    })
    .await;
}

/// The values stored in `topic`, read from the database file.
fn stored_values(db: &Path, topic: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT r.value FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = ?1 ORDER BY r.partition, r.offset")
        .unwrap();
    let rows = stmt
        .query_map([topic], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|v| String::from_utf8(v.unwrap()).unwrap())
        .collect();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_a_file_then_every_record_once_and_one_cleanup() {
    const N: usize = 200_000;
    let dir = tempdir();
    let s = spool(dir.path());
    let content: String = (1..=N).map(|i| format!("line-{i}\n")).collect();
    drop_file(&s.input, "big.txt", &content);
    let db = dir.path().join("bin.db");
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    create_through(
        &api,
        connector(
            "big",
            "SpoolDirLineDelimitedSourceConnector",
            &s,
            json!({"batch.size": "50",
                   "value.converter": "org.apache.kafka.connect.storage.StringConverter"}),
        ),
    )
    .await;
    wait_until("some records of the file", || async {
        api.get("/topics/big/partitions/0/offsets")
            .await
            .is_ok_and(|(s, b)| s == 200 && b["end_offset"].as_u64().unwrap_or(0) > 0)
    })
    .await;
    bin.kill();
    let before = stored_values(&db, "big").len();
    assert!(
        before > 0 && before < N,
        "killed in the middle: {before} of {N}"
    );
    assert!(
        s.input.join("big.txt").exists(),
        "not cleaned up before the end"
    );

    let bin = start_binary(dir.path(), &[]);
    let _api = bin.healthy_api().await;
    let finished = s.finished.join("big.txt");
    wait_for(
        "the file to be read to the end and moved",
        DEADLINE * 6,
        || {
            let done = finished.exists();
            async move { done.then_some(()) }
        },
    )
    .await;
    bin.kill();
    let values = stored_values(&db, "big");
    assert_eq!(values.len(), N, "every record once");
    for (i, v) in values.iter().enumerate() {
        assert_eq!(v, &format!("line-{}", i + 1));
    }
    assert!(!s.input.join("big.txt").exists());
    assert!(!s.input.join("big.txt.PROCESSING").exists());
}
