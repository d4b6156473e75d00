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

async fn migrate_cli(from: &str, to: &str, names: &[&str]) -> (i32, String, String) {
    let mut args: Vec<String> = vec![
        "migrate".into(),
        "--from".into(),
        from.into(),
        "--to".into(),
        to.into(),
    ];
    args.extend(names.iter().map(|n| n.to_string()));
    cli(args).await
}

/// A Kafka Connect REST endpoint that holds no connector, lists `plugins` and answers every validation
/// with `validation`: a target that cannot take a connector for a reason two liteconnect workers never have.
struct FakeTarget {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl FakeTarget {
    async fn start(plugins: Json, validation: Json) -> FakeTarget {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // Read the head and the body its Content-Length announces.
                loop {
                    let n = socket.read(&mut buf).await.unwrap_or(0);
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                    if n == 0 {
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&request).to_string();
                let line = text.lines().next().unwrap_or_default().to_string();
                let (status, body) = if line.starts_with("GET /connector-plugins") {
                    (200, plugins.clone())
                } else if line.starts_with("PUT /connector-plugins/") {
                    (200, validation.clone())
                } else if line.starts_with("GET /connectors ") {
                    (200, json!([]))
                } else {
                    (404, json!({"error_code": 404, "message": "not found"}))
                };
                let body = body.to_string();
                let answer = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            }
        });
        FakeTarget { url, task }
    }
}

impl Drop for FakeTarget {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Two workers, A and B, each on a database of its own.
async fn two_workers() -> (tempfile::TempDir, tempfile::TempDir, TestWorker, TestWorker) {
    let (da, db) = (tempdir(), tempdir());
    let a = TestWorker::start(da.path()).await;
    let b = TestWorker::start(db.path()).await;
    (da, db, a, b)
}

/// A file source `name` on `a` reading two lines from `dir/in.txt`, once it has stored an offset;
/// returns the file's path.
async fn source_with_an_offset(
    a: &TestWorker,
    dir: &std::path::Path,
    name: &str,
    two: [&str; 2],
) -> std::path::PathBuf {
    let input = dir.join("in.txt");
    append_lines(&input, two.map(str::to_string));
    a.create(file_source(name, &input, "t")).await;
    wait_until("an offset on A", || async {
        !a.get(&format!("/connectors/{name}/offsets")).await.1["offsets"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    input
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_source_continues_on_the_target_where_it_stopped() {
    let (da, db, a, b) = two_workers().await;
    let input = da.path().join("in.txt");
    let (out_a, out_b) = (da.path().join("out-a.txt"), db.path().join("out-b.txt"));
    let all: Vec<String> = (0..400).map(|i| format!("m{i:04}")).collect();
    append_lines(&input, all[..200].to_vec());
    a.create(file_source("mover", &input, "t")).await;
    a.create(file_sink("out", &out_a, "t")).await;
    b.create(file_sink("out", &out_b, "t")).await;
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
async fn failed_checks_leave_the_source_running_and_intact() {
    let (da, _db, a, b) = two_workers().await;
    source_with_an_offset(&a, da.path(), "c", ["x", "y"]).await;
    let config_before = a.get("/connectors/c/config").await.1;
    let offsets_before = a.get("/connectors/c/offsets").await.1;
    assert_eq!(offsets_before["offsets"][0]["offset"]["position"], 4);
    let untouched = || async {
        assert_eq!(a.status("c").await["connector"]["state"], "RUNNING");
        assert_eq!(a.get("/connectors/c/config").await.1, config_before);
        assert_eq!(a.get("/connectors/c/offsets").await.1, offsets_before);
    };

    // The target is unreachable.
    let (code, out, err) = migrate_cli(&a.url, "http://127.0.0.1:1", &["c"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("cannot be asked") && err.contains("Nothing was stopped"),
        "{err}"
    );
    assert!(!out.contains("stopped on"), "{out}");
    untouched().await;

    // The target lacks the plugin, or rejects the config.
    let no_plugin = FakeTarget::start(json!([]), json!({})).await;
    let (code, _, err) = migrate_cli(&a.url, &no_plugin.url, &["c"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("has no connector plugin FileStreamSource"),
        "{err}"
    );
    untouched().await;
    let rejecting = FakeTarget::start(
        json!([{"class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "type": "source", "version": "3.9.0"}]),
        json!({"name": "FileStreamSourceConnector", "error_count": 1, "groups": [], "configs": [
            {"definition": {"name": "file"}, "value": {"name": "file", "value": null, "recommended_values": [],
             "errors": ["not readable here"], "visible": true}}]}),
    )
    .await;
    let (code, _, err) = migrate_cli(&a.url, &rejecting.url, &["c"]).await;
    assert_ne!(code, 0);
    assert!(
        err.contains("rejects the config of c") && err.contains("file: not readable here"),
        "{err}"
    );
    untouched().await;

    // The name is taken on the target with another config.
    b.create(json!({"name": "c", "config": {"connector.class": "FileStreamSink", "topics": "z"}}))
        .await;
    let (code, _, err) = migrate_cli(&a.url, &b.url, &["c"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("already exists"), "{err}");
    untouched().await;
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
async fn an_unknown_connector_is_reported_not_found_and_nothing_is_claimed() {
    let (_da, _db, a, b) = two_workers().await;
    let (code, out, err) = migrate_cli(&a.url, &b.url, &["nope"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("Connector nope was not found on"), "{err}");
    for claim in ["STOPPED", "intact", "answered 404"] {
        assert!(!err.contains(claim), "{claim:?} in {err}");
    }
    assert_eq!(a.get("/connectors").await.1, json!([]));
    assert_eq!(b.get("/connectors").await.1, json!([]));
    a.stop().await;
    b.stop().await;
}

/// Everything a migration may change on both sides, for one connector.
async fn state_of(w: &TestWorker, name: &str) -> Json {
    let c = enc(name);
    json!({
        "connectors": w.get("/connectors").await.1,
        "config": w.get(&format!("/connectors/{c}/config")).await.1,
        "state": w.status(name).await["connector"]["state"],
        "offsets": w.get(&format!("/connectors/{c}/offsets")).await.1,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_a_finished_migration_again_succeeds_and_changes_nothing() {
    let (da, _db, a, b) = two_workers().await;
    source_with_an_offset(&a, da.path(), "again", ["p", "q"]).await;
    let (code, out, err) = migrate_cli(&a.url, &b.url, &["again"]).await;
    assert_eq!(code, 0, "{out}{err}");
    b.wait_for_state("again", "RUNNING", 1, "RUNNING").await;
    let (a_after, b_after) = (state_of(&a, "again").await, state_of(&b, "again").await);

    let (code, out, err) = migrate_cli(&a.url, &b.url, &["again"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("already stopped on"), "{out}");
    assert!(out.contains("already created on"), "{out}");
    assert!(out.contains("already RUNNING on"), "{out}");
    assert!(!out.contains("resumed on"), "{out}");
    assert_eq!(state_of(&a, "again").await, a_after);
    assert_eq!(state_of(&b, "again").await, b_after);

    // With --delete-source the source goes; a run after that finds it moved and changes nothing more.
    let delete = |name: &str| {
        vec![
            "migrate".to_string(),
            "--from".into(),
            a.url.clone(),
            "--to".into(),
            b.url.clone(),
            "--delete-source".into(),
            name.to_string(),
        ]
    };
    let (code, out, err) = cli(delete("again")).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(a.get("/connectors").await.1, json!([]));
    let (code, out, err) = cli(delete("again")).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("not on") && out.contains("moved by an earlier run"),
        "{out}"
    );
    assert_eq!(state_of(&b, "again").await, b_after);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_and_sink_pair_moves_without_losing_or_repeating_a_line() {
    let (da, _db, a, b) = two_workers().await;
    let (input, output) = (da.path().join("in.txt"), da.path().join("out.txt"));
    let all: Vec<String> = (1..=15).map(|i| i.to_string()).collect();
    append_lines(&input, all[..5].to_vec());
    // The sink's name sorts first: migrate must still move the source before it.
    a.create(file_sink("pair-sink", &output, "t")).await;
    a.create(file_source("pair-source", &input, "t")).await;
    wait_until("A to deliver lines 1-5", || async {
        lines(&output).len() == 5
    })
    .await;
    // Lines 6-10 arrive while the migration starts: A's source may or may not read them first.
    append_lines(&input, all[5..10].to_vec());
    let (code, out, err) = migrate_cli(&a.url, &b.url, &[]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("pair-sink: delivered everything"), "{out}");
    assert!(out.contains("pair-sink: sink offsets not copied"), "{out}");
    let source_at = out.find("pair-source: stopped on").expect("source stopped");
    assert!(
        source_at < out.find("pair-sink: stopped on").expect("sink stopped"),
        "{out}"
    );
    for name in ["pair-source", "pair-sink"] {
        assert_eq!(a.status(name).await["connector"]["state"], "STOPPED");
        b.wait_for_state(name, "RUNNING", 1, "RUNNING").await;
    }
    append_lines(&input, all[10..].to_vec());
    wait_until("B to deliver up to line 15", || async {
        lines(&output).len() >= 15
    })
    .await;
    assert_eq!(lines(&output), all, "every line exactly once, in order");
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_files_that_liteconnect_reads_back() {
    let (da, db) = (tempdir(), tempdir());
    let a = TestWorker::start(da.path()).await;
    let input = da.path().join("in.txt");
    append_lines(&input, ["1".to_string(), "2".to_string()]);
    a.create(file_source("exp/one", &input, "t")).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_names_files_readably_and_goes_on_past_a_failing_connector() {
    let da = tempdir();
    let a = TestWorker::start(da.path()).await;
    let input = da.path().join("in.txt");
    let long = "n".repeat(10_000);
    let names = ["src-p", ".hidden", "50%", "a/b", long.as_str()];
    for name in names {
        let mut body = file_source(name, &input, "t");
        body["initial_state"] = json!("STOPPED");
        assert_eq!(
            a.post("/connectors", body).await.0,
            201,
            "{}",
            &name[..5.min(name.len())]
        );
    }
    let out_dir = da.path().join("export");
    let export = |names: &[&str]| {
        let mut args: Vec<String> = vec![
            "export".into(),
            "--from".into(),
            a.url.clone(),
            "--out".into(),
            out_dir.display().to_string(),
        ];
        args.extend(names.iter().map(|n| n.to_string()));
        cli(args)
    };
    let (code, out, err) = export(&[]).await;
    assert_eq!(code, 0, "{err}");
    let mut files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 5, "{files:?}");
    for expected in ["src-p.json", "%2Ehidden.json", "50%25.json", "a%2Fb.json"] {
        assert!(
            files.iter().any(|f| f == expected),
            "{expected} in {files:?}"
        );
    }
    let shortened = files.iter().find(|f| f.starts_with("nnnn")).unwrap();
    assert!(shortened.len() <= 205, "{}", shortened.len());
    // Every file holds its connector's whole name and reads back as that connector.
    let mut read_back: Vec<String> = out
        .lines()
        .map(|f| {
            liteconnect::cli::connector_file::read(std::path::Path::new(f))
                .unwrap()
                .name
        })
        .collect();
    read_back.sort();
    let mut all: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    all.sort();
    assert_eq!(read_back, all);

    // A connector that cannot be exported is reported; the others are still written; the exit is non-zero.
    std::fs::remove_dir_all(&out_dir).unwrap();
    let (code, out, err) = export(&["nope", "src-p"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("Connector nope was not found"), "{err}");
    assert!(out.trim().ends_with("src-p.json"), "{out}");
    assert!(out_dir.join("src-p.json").exists());
    a.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_fed_by_a_source_left_behind_stays_unless_its_offsets_are_copied() {
    let (da, _db, a, b) = two_workers().await;
    let (input, output) = (da.path().join("in.txt"), da.path().join("out.txt"));
    append_lines(&input, ["1".to_string(), "2".to_string()]);
    a.create(file_source("feeder", &input, "t")).await;
    a.create(file_sink("fed", &output, "t")).await;
    wait_until("A to deliver both lines", || async {
        lines(&output).len() == 2
    })
    .await;

    let (code, out, err) = migrate_cli(&a.url, &b.url, &["fed"]).await;
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("source connector feeder still writes") && err.contains("Nothing was stopped"),
        "{err}"
    );
    assert_eq!(a.status("fed").await["connector"]["state"], "RUNNING");
    assert_eq!(b.get("/connectors").await.1, json!([]));

    // --sink-offsets copy moves it with its offsets, as for a target on the same Kafka cluster.
    let offsets = a.get("/connectors/fed/offsets").await.1;
    let (code, out, err) = cli(vec![
        "migrate".into(),
        "--from".into(),
        a.url.clone(),
        "--to".into(),
        b.url.clone(),
        "--sink-offsets".into(),
        "copy".into(),
        "--leave-stopped".into(),
        "fed".into(),
    ])
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("fed: offsets written and verified"), "{out}");
    assert_eq!(b.get("/connectors/fed/offsets").await.1, offsets);
    assert_eq!(a.status("fed").await["connector"]["state"], "STOPPED");
    a.stop().await;
    b.stop().await;
}

/// `--schema-registry-to`: the subjects a connector's AvroConverter uses move to the target's registry
/// with every version in order and the subject a version references first, and the migrated config's
/// `value.converter.schema.registry.url` names the target's registry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_registry_to_carries_subjects_and_rewrites_the_converter_urls() {
    use crate::schema_registry::RegistryWorker;
    let (da, db) = (tempdir(), tempdir());
    let a = RegistryWorker::start(da.path(), &[]).await;
    let b = RegistryWorker::start(db.path(), &[]).await;
    // Other schemas on the target first, so the IDs there differ.
    b.register("other-value", "\"long\"").await;
    let unit = r#"{"type":"record","name":"Unit","namespace":"edge","fields":[{"name":"name","type":"string"}]}"#;
    a.register("unit", unit).await;
    let v1 = r#"{"type":"record","name":"Reading","namespace":"edge","fields":[{"name":"sensor","type":"string"}]}"#;
    a.register("readings-value", v1).await;
    let v2 = r#"{"type":"record","name":"Reading","namespace":"edge","fields":[{"name":"sensor","type":"string"},{"name":"unit","type":["null","edge.Unit"],"default":null}]}"#;
    let (status, body) = a
        .post(
            "/subjects/readings-value/versions",
            json!({"schema": v2, "references": [{"name": "edge.Unit", "subject": "unit", "version": 1}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut sink = file_sink("decode", &da.path().join("out.txt"), "readings");
    sink["config"]["value.converter"] = json!("io.confluent.connect.avro.AvroConverter");
    sink["config"]["value.converter.schema.registry.url"] = json!(a.registry);
    create_through(&a.api, sink).await;

    let (code, out, err) = cli(vec![
        "migrate".into(),
        "--from".into(),
        a.api.base().to_string(),
        "--to".into(),
        b.api.base().to_string(),
        "--schema-registry-to".into(),
        b.registry.clone(),
        "decode".into(),
    ])
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("carried 2 schema version(s)"), "{out}");
    assert_eq!(
        b.get("/subjects/readings-value/versions").await,
        (200, json!([1, 2]))
    );
    assert_eq!(b.get("/subjects/unit/versions").await, (200, json!([1])));
    let (_, latest) = b.get("/subjects/readings-value/versions/2").await;
    assert_eq!(
        latest["references"],
        json!([{"name": "edge.Unit", "subject": "unit", "version": 1}]),
        "{latest}"
    );
    let (_, on_a) = a.get("/subjects/readings-value/versions/2").await;
    assert_ne!(latest["id"], on_a["id"], "the target's own IDs");
    let (_, config) = b.api.get("/connectors/decode/config").await.unwrap();
    assert_eq!(
        config["value.converter.schema.registry.url"],
        json!(b.registry),
        "{config}"
    );
    a.stop().await;
    b.stop().await;
}
