//! The command line: connect-standalone's positional form, connector files of every shape, exit codes,
//! the stored-state rule for files given again, and offline validation.

use std::path::Path;

use serde_json::{json, Value as Json};

use crate::common::*;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn worker_props(dir: &Path) -> String {
    write(
        dir,
        "worker.properties",
        &format!(
            "listeners=http://127.0.0.1:0\nstorage.file={}\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\n",
            dir.join("bin.db").display()
        ),
    )
}

async fn get(client: &reqwest::Client, url: &str) -> (u16, Json) {
    Client::with_http(client.clone(), url)
        .get("")
        .await
        .unwrap()
}

#[test]
fn help_and_usage_errors() {
    let dir = tempdir();
    let (code, out, _) = run_binary(dir.path(), &["--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("worker.properties") && out.contains("validate"),
        "{out}"
    );
    let (code, _, err) = run_binary(dir.path(), &["--no-such-flag"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.to_lowercase().contains("usage"), "{err}");
}

#[test]
fn an_unusable_worker_config_exits_2() {
    let dir = tempdir();
    let (code, _, err) = run_binary(dir.path(), &["missing.properties"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.properties"), "{err}");
    let bad = write(dir.path(), "bad.properties", "listeners=localhost:8083\n");
    let (code, _, err) = run_binary(dir.path(), &[&bad]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.properties") && err.contains("listeners"),
        "{err}"
    );
    // A file that is not a liteconnect database is refused and left unchanged.
    let not_db = dir.path().join("not.db");
    std::fs::write(&not_db, b"just some text, not SQLite").unwrap();
    let props = write(
        dir.path(),
        "w.properties",
        &format!(
            "listeners=http://127.0.0.1:0\nstorage.file={}\n",
            not_db.display()
        ),
    );
    let (code, _, err) = run_binary(dir.path(), &[&props]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        std::fs::read(&not_db).unwrap(),
        b"just some text, not SQLite"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connector_file_errors_exit_3_and_change_nothing() {
    let dir = tempdir();
    let props = worker_props(dir.path());
    let good = write(
        dir.path(),
        "good.json",
        r#"{"name": "good", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": "PAUSED"}"#,
    );
    // First run: creates "good" PAUSED; then it is resumed over REST.
    let bin = start_binary(dir.path(), &[&good]);
    let client = reqwest::Client::new();
    wait_healthy(&client, &bin.url).await;
    assert_eq!(
        bin.api()
            .put_empty("/connectors/good/resume")
            .await
            .unwrap()
            .0,
        202
    );
    bin.terminate();

    let cases: Vec<(String, &str)> = vec![
        (
            write(
                dir.path(),
                "noname.properties",
                "connector.class=FileStreamSink\ntopics=t\n",
            ),
            "Connector configuration at '",
        ),
        (
            write(
                dir.path(),
                "noname.json",
                r#"{"connector.class": "FileStreamSink"}"#,
            ),
            "is missing the mandatory 'name' configuration",
        ),
        (
            write(
                dir.path(),
                "mismatch.json",
                r#"{"name": "a", "config": {"name": "b", "connector.class": "FileStreamSink"}}"#,
            ),
            "doesn't match the one specified in 'name'",
        ),
        (
            write(
                dir.path(),
                "state.json",
                r#"{"name": "a", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": "SLEEPING"}"#,
            ),
            "RUNNING, PAUSED and STOPPED",
        ),
        (
            write(
                dir.path(),
                "syntax.json",
                "{\"name\": \"a\",\n \"config\": {",
            ),
            "line",
        ),
        (
            dir.path().join("absent.json").display().to_string(),
            "absent.json",
        ),
        (
            write(
                dir.path(),
                "invalid.json",
                r#"{"name": "a", "config": {"connector.class": "FileStreamSink", "topics": "t", "tasks.max": "0"}}"#,
            ),
            "Value must be at least 1",
        ),
        (
            write(
                dir.path(),
                "unknown.json",
                r#"{"name": "a", "config": {"connector.class": "Nope"}}"#,
            ),
            "Failed to find any class",
        ),
    ];
    for (file, expected) in &cases {
        let (code, _, err) = run_binary(dir.path(), &[&props, &good, file]);
        assert_eq!(code, 3, "{file}: {err}");
        assert!(err.contains(expected), "{file}: {err}");
        let shown = Path::new(file).file_name().unwrap().to_str().unwrap();
        assert!(
            err.contains(shown),
            "the message names the file {shown}: {err}"
        );
    }
    // The same connector in two files is an error too.
    let twin = write(
        dir.path(),
        "twin.properties",
        "name=good\nconnector.class=FileStreamSink\ntopics=t\n",
    );
    let (code, _, err) = run_binary(dir.path(), &[&props, &good, &twin]);
    assert_eq!(code, 3);
    assert!(
        err.contains("good") && err.contains("twin.properties"),
        "{err}"
    );

    // Nothing stored was changed: "good" is still RUNNING (as REST left it) and nothing else exists.
    let bin = start_binary(dir.path(), &[]);
    wait_healthy(&client, &bin.url).await;
    assert_eq!(
        get(&client, &format!("{}/connectors", bin.url)).await.1,
        json!(["good"])
    );
    assert_eq!(
        get(&client, &format!("{}/connectors/good/status", bin.url))
            .await
            .1["connector"]["state"],
        "RUNNING"
    );
    bin.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip_980_files_and_the_stored_state_rule() {
    let dir = tempdir();
    worker_props(dir.path());
    let input = dir.path().join("in.txt");
    append_lines(&input, ["x".to_string()]);
    let paused = write(dir.path(), "paused.json", &json!({"name": "paused", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": "paused", "ignored": {"x": 1}}).to_string());
    let stopped = write(dir.path(), "stopped.json", &json!({"name": "stopped", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": "STOPPED"}).to_string());
    let props_file = write(
        dir.path(),
        "running.properties",
        &format!(
            "name=running\nconnector.class=FileStreamSource\nfile={}\ntopic=t\n",
            input.display()
        ),
    );
    let flat = write(
        dir.path(),
        "flat.json",
        &json!({"name": "flat", "connector.class": "FileStreamSink", "topics": "t"}).to_string(),
    );
    let files = [
        paused.as_str(),
        stopped.as_str(),
        props_file.as_str(),
        flat.as_str(),
    ];
    let client = reqwest::Client::new();
    let bin = start_binary(dir.path(), &files);
    wait_healthy(&client, &bin.url).await;
    let status = |name: &'static str| {
        let url = format!("{}/connectors/{name}/status", bin.url);
        let client = client.clone();
        async move { get(&client, &url).await.1 }
    };
    assert_eq!(status("paused").await["connector"]["state"], "PAUSED");
    assert_eq!(status("paused").await["tasks"], json!([]));
    assert_eq!(status("stopped").await["connector"]["state"], "STOPPED");
    assert_eq!(status("stopped").await["tasks"], json!([]));
    wait_until("file-created connectors to run", || async {
        status("running").await["tasks"][0]["state"] == "RUNNING"
            && status("flat").await["tasks"][0]["state"] == "RUNNING"
    })
    .await;
    // Pause one over REST; resume another; then restart with the same files: nothing changes.
    assert_eq!(
        bin.api()
            .put_empty("/connectors/running/pause")
            .await
            .unwrap()
            .0,
        202
    );
    assert_eq!(
        bin.api()
            .put_empty("/connectors/stopped/resume")
            .await
            .unwrap()
            .0,
        202
    );
    bin.terminate();

    let bin = start_binary(dir.path(), &files);
    wait_healthy(&client, &bin.url).await;
    let status = |name: &'static str| {
        let url = format!("{}/connectors/{name}/status", bin.url);
        let client = client.clone();
        async move { get(&client, &url).await.1 }
    };
    assert_eq!(status("running").await["connector"]["state"], "PAUSED");
    assert_eq!(status("stopped").await["connector"]["state"], "RUNNING");
    assert_eq!(status("paused").await["connector"]["state"], "PAUSED");
    // Each can be resumed and deleted over REST.
    assert_eq!(
        bin.api()
            .put_empty("/connectors/paused/resume")
            .await
            .unwrap()
            .0,
        202
    );
    wait_until("paused to run", || async {
        status("paused").await["tasks"][0]["state"] == "RUNNING"
    })
    .await;
    assert_eq!(bin.api().delete("/connectors/flat").await.unwrap().0, 204);
    bin.terminate();

    // Edit a file: its config is replaced, its state kept. A new file creates its connector.
    std::fs::write(
        &props_file,
        format!(
            "name=running\nconnector.class=FileStreamSource\nfile={}\ntopic=edited\n",
            input.display()
        ),
    )
    .unwrap();
    let fresh = write(
        dir.path(),
        "fresh.properties",
        "name=fresh\nconnector.class=FileStreamSink\ntopics=t\n",
    );
    let bin = start_binary(dir.path(), &[&props_file, &fresh]);
    wait_healthy(&client, &bin.url).await;
    let (_, config) = get(&client, &format!("{}/connectors/running/config", bin.url)).await;
    assert_eq!(config["topic"], "edited");
    assert_eq!(
        get(&client, &format!("{}/connectors/running/status", bin.url))
            .await
            .1["connector"]["state"],
        "PAUSED"
    );
    assert_eq!(
        get(&client, &format!("{}/connectors/fresh", bin.url))
            .await
            .0,
        200
    );
    assert_eq!(
        get(&client, &format!("{}/connectors", bin.url)).await.1,
        json!(["fresh", "paused", "running", "stopped"])
    );
    bin.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_sample_files_run_the_quickstart() {
    let dir = tempdir();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    for f in [
        "connect-standalone.properties",
        "connect-file-source.properties",
        "connect-file-sink.properties",
    ] {
        std::fs::copy(root.join(f), dir.path().join(f)).unwrap();
    }
    // Kafka's sample worker config has no listeners key, so the worker uses its default port; the copy here
    // only adds an ephemeral listener so tests never collide. Everything else is Kafka's file as shipped.
    let mut worker =
        std::fs::read_to_string(dir.path().join("connect-standalone.properties")).unwrap();
    worker.push_str("\nlisteners=http://127.0.0.1:0\n");
    std::fs::write(dir.path().join("worker.properties"), worker).unwrap();
    append_lines(
        &dir.path().join("test.txt"),
        ["foo".to_string(), "bar".to_string()],
    );
    let client = reqwest::Client::new();
    let bin = start_binary_in(
        dir.path(),
        dir.path(),
        &[
            "connect-file-source.properties",
            "connect-file-sink.properties",
        ],
    );
    wait_healthy(&client, &bin.url).await;
    let sink = dir.path().join("test.sink.txt");
    wait_until("the quickstart lines in test.sink.txt", || async {
        lines(&sink) == ["foo", "bar"]
    })
    .await;
    append_lines(&dir.path().join("test.txt"), ["another line".to_string()]);
    wait_until("the appended line", || async { lines(&sink).len() == 3 }).await;
    assert_eq!(lines(&sink), ["foo", "bar", "another line"]);
    assert!(
        dir.path().join("data").join("liteconnect.db").exists(),
        "state goes to the default storage.file"
    );
    bin.terminate();
}

#[test]
fn validate_checks_files_offline() {
    let dir = tempdir();
    let ok = write(
        dir.path(),
        "ok.properties",
        "name=ok\nconnector.class=FileStreamSink\ntopics=t\n",
    );
    let bad = write(
        dir.path(),
        "bad.json",
        r#"{"name": "bad", "config": {"connector.class": "FileStreamSource", "tasks.max": "0"}}"#,
    );
    let (code, out, err) = run_binary(dir.path(), &["validate", &ok]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok.properties") && out.contains("valid"),
        "{out}"
    );
    let (code, out, _) = run_binary(dir.path(), &["validate", &ok, &bad]);
    assert_ne!(code, 0);
    assert!(out.contains("bad.json: 2 error(s)"), "{out}");
    assert!(
        out.contains(
            "tasks.max: Invalid value 0 for configuration tasks.max: Value must be at least 1"
        ),
        "{out}"
    );
    assert!(
        out.contains("topic: Missing required configuration \"topic\" which has no default value."),
        "{out}"
    );
    let (code, out, _) = run_binary(dir.path(), &["validate", "--json", &bad]);
    assert_ne!(code, 0);
    let infos: Json = serde_json::from_str(&out).expect("ConfigInfos JSON");
    assert_eq!(infos["error_count"], 2);
    assert_eq!(infos["name"], "FileStreamSource");
    // Kafka reports "Must configure one of topics or topics.regex" on both keys: listed once, and the
    // count says so.
    let twice = write(
        dir.path(),
        "twice.properties",
        "name=twice\nconnector.class=FileStreamSink\n",
    );
    let (code, out, _) = run_binary(dir.path(), &["validate", &twice]);
    assert_ne!(code, 0);
    let listed = out.lines().filter(|l| l.starts_with("  ")).count();
    assert_eq!(listed, 1, "{out}");
    assert!(
        out.contains(
            "twice.properties: 1 error(s) (1 more reported by the validation answer repeats these)"
        ),
        "{out}"
    );
    // Nothing was created: validation touches no database.
    assert!(!dir.path().join("data").exists());
}

#[test]
fn an_unknown_worker_converter_exits_2_naming_the_key() {
    let dir = tempdir();
    let props = write(
        dir.path(),
        "w.properties",
        &format!(
            "listeners=http://127.0.0.1:0\nstorage.file={}\nvalue.converter=com.example.NoSuchConverter\n",
            dir.path().join("w.db").display()
        ),
    );
    let (code, _, err) = run_binary(dir.path(), &[&props]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Invalid value com.example.NoSuchConverter for configuration value.converter: Class com.example.NoSuchConverter could not be found."),
        "{err}"
    );
    // Refused before the database is created.
    assert!(!dir.path().join("w.db").exists());
}

#[test]
fn validate_prints_each_message_once() {
    let dir = tempdir();
    let file = write(
        dir.path(),
        "sink.properties",
        "name=s\nconnector.class=FileStreamSink\ntasks.max=abc\n",
    );
    let (code, out, _) = run_binary(dir.path(), &["validate", &file]);
    assert_ne!(code, 0);
    assert_eq!(
        out.matches("Must configure one of topics or topics.regex")
            .count(),
        1,
        "{out}"
    );
    assert!(
        out.contains(
            "tasks.max: Invalid value abc for configuration tasks.max: Not a number of type INT"
        ),
        "{out}"
    );
    assert!(!out.contains("Invalid value null"), "{out}");
}
