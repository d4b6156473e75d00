//! `liteconnect status`, `topics`, `consume` and `produce`, run as the real binary against the real worker
//! binary, and offline on its database file.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value as Json};

use crate::common::*;

/// Starts the binary with `args` and `env` added (and `LITECONNECT_USER` removed), its stdin, stdout and
/// stderr piped.
fn spawn_cli<A: AsRef<str>>(cwd: &Path, args: &[A], env: &[(&str, &str)]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_liteconnect"))
        .current_dir(cwd)
        .args(args.iter().map(AsRef::as_ref))
        .env_remove("LITECONNECT_USER")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn liteconnect")
}

/// Waits for `child` to exit and returns its exit code, stdout and stderr; kills it when it outlives
/// [`DEADLINE`].
fn finish(child: Child) -> (i32, String, String) {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(DEADLINE) else {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        panic!("liteconnect (process {pid}) did not exit");
    };
    let out = out.expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `args`, `stdin` as its input and `env` added; returns the exit code, stdout and
/// stderr.
fn cli<A: AsRef<str>>(
    cwd: &Path,
    args: &[A],
    stdin: &str,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let mut child = spawn_cli(cwd, args, env);
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    // A command that refuses at once (a database in use) may exit before it reads its input.
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    finish(child)
}

/// Starts `consume TOPIC --follow` on partition 0 from `offset`, to stop after `max` records; `source`
/// says where it reads.
fn follow(d: &Path, topic: &str, offset: &str, max: &str, source: &[&str]) -> Child {
    let mut args = vec![
        "consume",
        topic,
        "--follow",
        "--partition",
        "0",
        "--offset",
        offset,
        "--max",
        max,
    ];
    args.extend_from_slice(source);
    spawn_cli(d, &args, &[])
}

/// Runs the binary and expects exit 0; returns stdout.
fn ok<A: AsRef<str>>(cwd: &Path, args: &[A], stdin: &str, env: &[(&str, &str)]) -> String {
    let (code, out, err) = cli(cwd, args, stdin, env);
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    assert_eq!(code, 0, "liteconnect {args:?}: {err}");
    out
}

/// `POST /connectors` through a blocking client; fails the test unless the answer is 201.
fn create(url: &str, body: Json) {
    let resp = reqwest::blocking::Client::new()
        .post(format!("{url}/connectors"))
        .json(&body)
        .send()
        .expect("request");
    assert_eq!(resp.status().as_u16(), 201, "creating {body}");
}

/// The rows of `status --json`, by connector name.
fn status_rows(dir: &Path, url: &str) -> std::collections::BTreeMap<String, Json> {
    let out = ok(dir, &["status", "--json", "--url", url], "", &[]);
    let rows: Vec<Json> = serde_json::from_str(&out).expect("status --json");
    rows.into_iter()
        .map(|r| (r["name"].as_str().unwrap_or_default().to_string(), r))
        .collect()
}

#[test]
fn status_and_topics_describe_a_running_worker() {
    let dir = tempdir();
    let d = dir.path();
    let bin = start_binary(d, &[]);
    let url = bin.url.clone();
    let out = ok(d, &["produce", "lines", "--url", &url], "a\nbb\nccc\n", &[]);
    assert_eq!(out, "");
    let input = d.join("in.txt");
    std::fs::write(&input, "x\ny\n").unwrap();
    create(&url, file_source("src", &input, "from-file"));
    create(&url, file_sink("delivered", &d.join("out.txt"), "lines"));
    create(
        &url,
        file_sink("broken", &d.join("missing").join("out.txt"), "lines"),
    );
    // A sink whose converter cannot read the records: its trace is Kafka's "Tolerance exceeded in error
    // handler" wrapping the cause, and the cause is what is shown.
    let mut strict = file_sink("strict", &d.join("strict.txt"), "lines");
    strict["config"]["value.converter"] = json!("org.apache.kafka.connect.json.JsonConverter");
    strict["config"]["value.converter.schemas.enable"] = json!("false");
    create(&url, strict);
    let rows = wait_for_blocking(
        "the sink to deliver and the broken ones to fail",
        DEADLINE,
        || {
            let rows = status_rows(d, &url);
            let settled = rows["delivered"]["lag"] == 0
                && rows["broken"]["tasks_total"] == 1
                && rows["broken"]["trace"].is_string()
                && rows["strict"]["tasks_failed"] == 1
                && rows["src"]["tasks_running"] == 1;
            settled.then_some(rows)
        },
    );
    let strict = &rows["strict"];
    let cause = strict["trace"].as_str().expect("the cause line");
    assert!(
        cause.starts_with("org.apache.kafka.connect.errors.DataException"),
        "the cause, not the wrapper: {cause}"
    );
    assert_eq!(strict["tasks"][0]["state"], "FAILED");
    let whole = strict["tasks"][0]["trace"]
        .as_str()
        .expect("the task's trace");
    assert!(
        whole.contains("Tolerance exceeded in error handler") && whole.contains(cause),
        "{whole}"
    );
    assert_eq!(rows["broken"]["tasks_failed"], 1);
    assert_eq!(rows["delivered"]["tasks_failed"], 0);
    assert_eq!(rows["delivered"]["tasks"][0]["state"], "RUNNING");
    assert_eq!(rows["delivered"]["tasks"][0]["trace"], Json::Null);
    assert_eq!(lines(&d.join("out.txt")), ["a", "bb", "ccc"]);
    assert_eq!(rows["delivered"]["type"], "sink");
    assert_eq!(rows["delivered"]["tasks_total"], 1);
    assert_eq!(rows["broken"]["lag"], 3, "nothing committed: all 3 records");
    let trace = rows["broken"]["trace"]
        .as_str()
        .expect("the failed task's trace");
    assert!(
        trace.contains("Couldn't find or create file") && !trace.contains('\n'),
        "{trace}"
    );
    assert_eq!(rows["src"]["type"], "source");
    assert_eq!(rows["src"]["lag"], Json::Null);
    // A paused sink falls behind by what is produced after its last commit.
    let paused = reqwest::blocking::Client::new()
        .put(format!("{url}/connectors/delivered/pause"))
        .send()
        .expect("pause");
    assert_eq!(paused.status().as_u16(), 202);
    wait_for_blocking("the sink's task to pause", DEADLINE, || {
        let row = &status_rows(d, &url)["delivered"];
        (row["state"] == "PAUSED" && row["tasks_running"] == 0 && row["tasks_total"] == 1)
            .then_some(())
    });
    ok(d, &["produce", "lines", "--url", &url], "dd\neee\n", &[]);
    let rows = status_rows(d, &url);
    assert_eq!(
        (&rows["delivered"]["lag"], &rows["broken"]["lag"]),
        (&json!(2), &json!(5))
    );

    // The table: not a terminal, so no colour.
    let table = ok(d, &["status", "--url", &url], "", &[]);
    let header = table.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("CONNECTOR") && header.contains("LAG"),
        "{table}"
    );
    let broken = table
        .lines()
        .find(|l| l.starts_with("broken"))
        .expect("row");
    assert!(
        broken.contains("0/1 (1 failed)") && broken.contains("Couldn't find"),
        "{broken}"
    );
    let strict = table
        .lines()
        .find(|l| l.starts_with("strict"))
        .expect("row");
    assert!(
        strict.contains("DataException") && !strict.contains("Tolerance exceeded"),
        "{strict}"
    );
    assert!(!table.contains('\x1b'), "{table:?}");
    // On a terminal (`script` gives it one) the states are coloured.
    let on_terminal = Command::new("script")
        .args([
            "-qec",
            &format!("{} status --url {url}", env!("CARGO_BIN_EXE_liteconnect")),
        ])
        .arg("/dev/null")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs the command on a pseudo-terminal");
    let (code, out, err) = finish(on_terminal);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\x1b[32mRUNNING\x1b[0m"), "{out:?}");

    wait_for_blocking("the source's records", DEADLINE, || {
        let out = ok(d, &["topics", "--json", "--url", &url], "", &[]);
        let topics: Json = serde_json::from_str(&out).expect("topics --json");
        (topics[0]["topic"] == "from-file" && topics[0]["records"] == 2).then_some(())
    });
    let out = ok(d, &["topics", "--json", "--url", &url], "", &[]);
    let topics: Json = serde_json::from_str(&out).unwrap();
    let t = &topics[1];
    assert_eq!(
        (&t["topic"], &t["partitions"], &t["records"], &t["bytes"]),
        (&json!("lines"), &json!(1), &json!(5), &json!(11))
    );
    let (oldest, newest) = (
        t["oldest_timestamp"].as_i64(),
        t["newest_timestamp"].as_i64(),
    );
    assert!(oldest.is_some() && oldest <= newest, "{t}");
    let table = ok(d, &["topics", "--url", &url], "", &[]);
    let row = table.lines().find(|l| l.starts_with("lines")).expect("row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["lines", "1", "5", "11"], "{table}");

    // The default URL from a worker config's listeners.
    let port = url.rsplit(':').next().unwrap();
    let config = d.join("client.properties");
    std::fs::write(&config, format!("listeners=http://0.0.0.0:{port}\n")).unwrap();
    let via_config = ok(
        d,
        &["topics", "--config", config.to_str().unwrap()],
        "",
        &[],
    );
    assert_eq!(via_config, table);
    bin.terminate();
    let (code, _, err) = cli(d, &["status", "--url", &url], "", &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("no worker answers at {url}")) && err.contains("refused"),
        "{err}"
    );
}

#[test]
fn consume_and_produce_through_a_worker_with_basic_auth() {
    let dir = tempdir();
    let d = dir.path();
    let creds = d.join("creds.properties");
    std::fs::write(&creds, "ops: s3cret\n").unwrap();
    let props = format!(
        "{}rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension\nrest.basic.auth.credentials.file={}\n",
        binary_props(d),
        creds.display()
    );
    let bin = start_binary_with(d, &props, &[], 1);
    let url = bin.url.clone();
    let user = ["--url", &url, "--user", "ops:s3cret"];
    let with = |args: &[&'static str]| -> Vec<String> {
        args.iter().chain(&user).map(|a| a.to_string()).collect()
    };

    let (code, _, err) = cli(d, &["produce", "kv", "--url", &url], "x\n", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("401") && err.contains("--user"), "{err}");
    ok(
        d,
        &with(&["produce", "kv", "--key-separator", ":"]),
        "k1:v1\nk2:v:2\n",
        &[],
    );
    // The lines before one without a separator are produced, the rest is not.
    let (code, _, err) = cli(
        d,
        &with(&["produce", "partial", "--key-separator", ":"]),
        "k:before\nnokey\nk:after\n",
        &[],
    );
    assert_eq!(code, 1);
    assert!(err.contains("Line 2 has no key separator"), "{err}");
    let out = ok(
        d,
        &with(&["consume", "partial", "--from-beginning"]),
        "",
        &[],
    );
    assert_eq!(out, "before\n");

    // From the end (the default) without --follow: nothing.
    assert_eq!(ok(d, &with(&["consume", "kv"]), "", &[]), "");
    let out = ok(
        d,
        &with(&["consume", "kv", "--from-beginning", "--format", "json"]),
        "",
        &[],
    );
    let records: Vec<Json> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records,
        [
            json!({"topic": "kv", "partition": 0, "offset": 0, "key": "k1", "value": "v1"}),
            json!({"topic": "kv", "partition": 0, "offset": 1, "key": "k2", "value": "v:2"}),
        ]
    );
    let env = [("LITECONNECT_USER", "ops:s3cret")];
    let args = [
        "consume",
        "kv",
        "--partition",
        "0",
        "--offset",
        "1",
        "--url",
        &url,
    ];
    assert_eq!(ok(d, &args, "", &env), "v:2\n");
    let args = [
        "consume",
        "kv",
        "--from-beginning",
        "--max",
        "1",
        "--url",
        &url,
    ];
    assert_eq!(ok(d, &args, "", &env), "v1\n");
    let (code, _, err) = cli(d, &with(&["consume", "nope"]), "", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("Topic nope not found"), "{err}");

    // --follow waits for records produced after it started, and stops after --max.
    let follower = follow(d, "kv", "2", "3", &user);
    ok(d, &with(&["produce", "kv"]), "one\ntwo\nthree\nfour\n", &[]);
    let (code, out, err) = finish(follower);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "one\ntwo\nthree\n");
    bin.terminate();
}

#[test]
fn offline_consume_reads_beside_the_worker_and_produce_waits_for_it_to_stop() {
    let dir = tempdir();
    let d = dir.path();
    let db = d.join("bin.db");
    let db_arg = db.to_str().unwrap();
    let bin = start_binary(d, &[]);
    ok(
        d,
        &["produce", "t", "--url", &bin.url],
        "first\nsecond\n",
        &[],
    );
    // Read-only beside the running worker.
    let out = ok(
        d,
        &["consume", "t", "--from-beginning", "--db", db_arg],
        "",
        &[],
    );
    assert_eq!(out, "first\nsecond\n");
    // --follow on the file sees what the running worker appends.
    let follower = follow(d, "t", "2", "1", &["--db", db_arg]);
    ok(d, &["produce", "t", "--url", &bin.url], "live\n", &[]);
    let (code, out, err) = finish(follower);
    assert_eq!((code, out.as_str()), (0, "live\n"), "{err}");
    let (code, _, err) = cli(d, &["produce", "t", "--db", db_arg], "refused\n", &[]);
    assert_eq!(code, 1);
    let pid = bin.child.id().to_string();
    assert!(
        err.contains("in use") && err.contains(&pid) && err.contains("REST"),
        "{err}"
    );
    let (code, _, err) = cli(
        d,
        &["produce", "t", "--db", db_arg, "--url", &bin.url],
        "",
        &[],
    );
    assert_eq!(code, 1, "--db and --url together are a usage error: {err}");
    bin.terminate();

    ok(d, &["produce", "t", "--db", db_arg], "third\nfourth\n", &[]);
    let out = ok(
        d,
        &["consume", "t", "--from-beginning", "--db", db_arg],
        "",
        &[],
    );
    assert_eq!(out, "first\nsecond\nlive\nthird\nfourth\n");
    let out = ok(d, &["topics", "--json", "--db", db_arg], "", &[]);
    let topics: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(topics[0]["records"], 5, "{topics}");
    let (code, _, err) = cli(d, &["produce", "a/b", "--db", db_arg], "x\n", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("Invalid topic name"), "{err}");
    let (code, _, err) = cli(d, &["consume", "t", "--db", "absent.db"], "", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("no database"), "{err}");

    // What was produced offline is what a sink delivers once the worker runs again.
    let sink = d.join("sink.json");
    let out_file = d.join("out.txt");
    std::fs::write(&sink, file_sink("snk", &out_file, "t").to_string()).unwrap();
    let bin = start_binary(d, &[sink.to_str().unwrap()]);
    wait_for_blocking("the sink to deliver all five", DEADLINE, || {
        (lines(&out_file).len() >= 5).then_some(())
    });
    assert_eq!(
        lines(&out_file),
        ["first", "second", "live", "third", "fourth"]
    );
    bin.terminate();
}
