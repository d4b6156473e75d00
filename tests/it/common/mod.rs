//! The test harness: a worker started in-process on an ephemeral port with its own SQLite file, or the
//! real binary as a child process, plus an HTTP client and a deadline-bounded wait.

#![allow(dead_code)]

pub mod certs;
pub mod kafka_gate;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tempfile::TempDir;
use tokio::sync::oneshot;

use liteconnect::config::worker::WorkerConfig;
use liteconnect::{RunError, StartupConnector};

/// How long any condition may take before a test fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// A worker running in this process.
pub struct TestWorker {
    pub url: String,
    pub dir: PathBuf,
    pub db: PathBuf,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<Result<(), RunError>>>,
}

/// A fresh temporary directory kept for the life of the test.
pub fn tempdir() -> TempDir {
    tempfile::Builder::new()
        .prefix("liteconnect-it")
        .tempdir()
        .expect("tempdir")
}

pub fn worker_config(dir: &Path, extra: &[(&str, &str)]) -> WorkerConfig {
    let mut props: BTreeMap<String, String> = BTreeMap::new();
    props.insert(
        "storage.file".into(),
        dir.join("worker.db").display().to_string(),
    );
    props.insert("offset.flush.interval.ms".into(), "1000".into());
    props.insert(
        "key.converter".into(),
        "org.apache.kafka.connect.storage.StringConverter".into(),
    );
    props.insert(
        "value.converter".into(),
        "org.apache.kafka.connect.storage.StringConverter".into(),
    );
    for (k, v) in extra {
        props.insert(k.to_string(), v.to_string());
    }
    WorkerConfig::from_props(props).expect("valid worker config")
}

impl TestWorker {
    /// Starts a worker whose database lives in `dir`.
    pub async fn start(dir: &Path) -> TestWorker {
        Self::start_with(dir, &[], Vec::new())
            .await
            .expect("worker starts")
    }

    /// Starts a worker with extra worker settings and start-up connectors.
    pub async fn start_with(
        dir: &Path,
        extra: &[(&str, &str)],
        startup: Vec<StartupConnector>,
    ) -> Result<TestWorker, RunError> {
        let config = worker_config(dir, extra);
        let db = config.storage_file.clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(liteconnect::run(listener.into(), config, startup, async {
            let _ = rx.await;
        }));
        let client = reqwest::Client::new();
        // Wait until healthy, or until the worker gave up.
        let deadline = Instant::now() + DEADLINE;
        loop {
            if handle.is_finished() {
                return Err(handle
                    .await
                    .expect("join")
                    .expect_err("a worker that stops early failed"));
            }
            if let Ok(r) = client.get(format!("{url}/health")).send().await {
                if r.status() == 200 {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "worker did not become healthy");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(TestWorker {
            url,
            dir: dir.to_path_buf(),
            db,
            client,
            shutdown: Some(tx),
            handle: Some(handle),
        })
    }

    /// Shuts the worker down gracefully and waits for it.
    pub async fn stop(mut self) {
        self.stop_inner().await;
    }

    async fn stop_inner(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            h.await.expect("join").expect("worker ran without error");
        }
    }

    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Json>,
    ) -> (u16, Json, reqwest::header::HeaderMap) {
        let mut req = self.client.request(method, format!("{}{}", self.url, path));
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let json = if text.is_empty() {
            Json::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Json::String(text))
        };
        (status, json, headers)
    }

    pub async fn get(&self, path: &str) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::GET, path, None).await;
        (s, j)
    }
    pub async fn post(&self, path: &str, body: Json) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::POST, path, Some(body)).await;
        (s, j)
    }
    pub async fn post_empty(&self, path: &str) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::POST, path, None).await;
        (s, j)
    }
    pub async fn put(&self, path: &str, body: Json) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::PUT, path, Some(body)).await;
        (s, j)
    }
    pub async fn put_empty(&self, path: &str) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::PUT, path, None).await;
        (s, j)
    }
    pub async fn patch(&self, path: &str, body: Json) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::PATCH, path, Some(body)).await;
        (s, j)
    }
    pub async fn delete(&self, path: &str) -> (u16, Json) {
        let (s, j, _) = self.request(reqwest::Method::DELETE, path, None).await;
        (s, j)
    }

    /// The connector's status body, or Null.
    pub async fn status(&self, name: &str) -> Json {
        self.get(&format!("/connectors/{}/status", enc(name)))
            .await
            .1
    }

    /// Waits until task 0 of the connector is FAILED and returns its trace.
    pub async fn wait_for_failed_task(&self, name: &str) -> String {
        let n = name.to_string();
        wait_until(&format!("{name}'s task to fail"), || async {
            self.status(&n).await["tasks"][0]["state"] == "FAILED"
        })
        .await;
        self.status(name).await["tasks"][0]["trace"]
            .as_str()
            .expect("a FAILED task has a trace")
            .to_string()
    }

    /// Waits until the connector and all `tasks` tasks are in `state`.
    pub async fn wait_for_state(
        &self,
        name: &str,
        connector: &str,
        tasks: usize,
        task_state: &str,
    ) {
        let n = name.to_string();
        wait_until(
            &format!("{name} to be {connector} with {tasks} {task_state} tasks"),
            || async {
                let s = self.status(&n).await;
                s["connector"]["state"] == connector
                    && s["tasks"].as_array().is_some_and(|t| {
                        t.len() == tasks && t.iter().all(|t| t["state"] == task_state)
                    })
            },
        )
        .await;
    }
}

impl Drop for TestWorker {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Percent-encodes a path segment.
pub fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Polls `check` until it is true; fails the test after [`DEADLINE`].
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + DEADLINE;
    loop {
        if check().await {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Lines of a file (empty when it does not exist).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Appends lines to a file.
pub fn append_lines(path: &Path, lines: impl IntoIterator<Item = String>) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open");
    for l in lines {
        writeln!(f, "{l}").expect("write");
    }
    f.sync_all().expect("sync");
}

pub fn file_source(name: &str, file: &Path, topic: &str) -> Json {
    serde_json::json!({"name": name, "config": {
        "connector.class": "FileStreamSource", "tasks.max": "1", "file": file.display().to_string(), "topic": topic}})
}

pub fn file_sink(name: &str, file: &Path, topics: &str) -> Json {
    serde_json::json!({"name": name, "config": {
        "connector.class": "FileStreamSink", "tasks.max": "1", "file": file.display().to_string(), "topics": topics}})
}

/// The real binary, started on an ephemeral port.
pub struct Binary {
    pub child: Child,
    pub url: String,
}

/// Starts the binary with a worker config in `dir` and waits for its "listening on" line.
pub fn start_binary(dir: &Path, extra_args: &[&str]) -> Binary {
    start_binary_in(dir, dir, extra_args)
}

/// Starts the binary in working directory `cwd`, with the worker config `dir/worker.properties`
/// (written with an ephemeral port when absent).
pub fn start_binary_in(dir: &Path, cwd: &Path, extra_args: &[&str]) -> Binary {
    let props = dir.join("worker.properties");
    if !props.exists() {
        std::fs::write(
            &props,
            format!(
                "listeners=http://127.0.0.1:0\nstorage.file={}\noffset.flush.interval.ms=200\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\n",
                dir.join("bin.db").display()
            ),
        )
        .unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_liteconnect"))
        .current_dir(cwd)
        .arg(&props)
        .args(extra_args)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn liteconnect");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    let _ = tx.send(
                        rest.split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_string(),
                    );
                    sent = true;
                }
            }
        }
    });
    let url = rx
        .recv_timeout(DEADLINE)
        .expect("the binary logs the address it bound");
    Binary { child, url }
}

pub async fn wait_healthy(client: &reqwest::Client, url: &str) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Ok(r) = client.get(format!("{url}/health")).send().await {
            if r.status() == 200 {
                return;
            }
        }
        assert!(Instant::now() < deadline, "binary never became healthy");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs the binary to completion (bounded by [`DEADLINE`]) and returns its exit code, stdout and stderr.
pub fn run_binary(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_liteconnect"))
        .current_dir(cwd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn liteconnect");
    let deadline = Instant::now() + DEADLINE;
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("liteconnect {args:?} did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

impl Binary {
    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn terminate(mut self) {
        let ok = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(ok.success());
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(code) = self.child.try_wait().expect("wait") {
                assert!(code.success(), "{code:?}");
                return;
            }
            assert!(Instant::now() < deadline, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// At-least-once delivery check: every expected line is in `got`, in order of first appearance, and nothing
/// else is; repeats are allowed. Returns how many lines were repeats.
pub fn assert_delivered_in_order(got: &[String], expected: &[String]) -> usize {
    let mut seen = std::collections::BTreeSet::new();
    let first_seen: Vec<&String> = got.iter().filter(|l| seen.insert(l.as_str())).collect();
    assert_eq!(
        first_seen,
        expected.iter().collect::<Vec<_>>(),
        "every line, in order, none lost"
    );
    got.len() - expected.len()
}
