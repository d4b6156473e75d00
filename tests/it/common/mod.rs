//! The test harness: a worker started in-process on an ephemeral port with its own SQLite file, or the
//! real binary as a child process, plus an HTTP client and a deadline-bounded wait.

#![allow(dead_code)]

pub mod certs;
#[cfg(feature = "kafka-client")]
pub mod kafka_gate;
#[cfg(feature = "mqtt")]
pub mod mosquitto;
#[cfg(feature = "jdbc-postgres")]
pub mod postgres;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tempfile::TempDir;
use tokio::sync::oneshot;

pub use liteconnect::client::Client;
use liteconnect::config::worker::WorkerConfig;
use liteconnect::{RunError, StartupConnector};

/// How long any condition may take before a test fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How often a condition is polled.
const POLL: Duration = Duration::from_millis(25);

/// A worker running in this process.
pub struct TestWorker {
    pub url: String,
    pub dir: PathBuf,
    pub db: PathBuf,
    /// The worker's REST API, with the credentials the test gave.
    pub api: Client,
    /// The connection pool under [`TestWorker::api`], for requests the helpers do not cover.
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<Result<(), RunError>>>,
}

/// The usual set-up: a temporary directory, a worker whose database lives in it, and the paths of an input
/// and an output file there (not created).
pub struct Fixture {
    pub dir: TempDir,
    pub w: TestWorker,
    /// `in.txt` in the directory.
    pub input: PathBuf,
    /// `out.txt` in the directory.
    pub output: PathBuf,
}

impl Fixture {
    pub async fn start() -> Fixture {
        let dir = tempdir();
        let w = TestWorker::start(dir.path()).await;
        let (input, output) = (dir.path().join("in.txt"), dir.path().join("out.txt"));
        Fixture {
            dir,
            w,
            input,
            output,
        }
    }
}
/// A fresh temporary directory kept for the life of the test.
/// A loopback port that was free a moment ago, for a server the test or a connector binds itself.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The errors a `PUT /connector-plugins/{p}/config/validate` answer reports, by key, for the keys that
/// have any (each key's errors in the answer's order).
pub fn validation_errors(answer: &Json) -> BTreeMap<String, Vec<String>> {
    answer["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            let errors: Vec<String> = c["value"]["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect();
            (!errors.is_empty()).then(|| (c["value"]["name"].as_str().unwrap().to_string(), errors))
        })
        .collect()
}

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
        Self::launch(dir, extra, startup, Client::new).await
    }

    /// Starts a worker and waits until `GET /health` answers 200 through the client `connect` makes for
    /// its URL (certificates, credentials). The URL's scheme is that of the `listeners` setting in `extra`
    /// (http when absent); the listener itself is bound here, on an ephemeral port.
    pub async fn launch(
        dir: &Path,
        extra: &[(&str, &str)],
        startup: Vec<StartupConnector>,
        connect: impl FnOnce(String) -> Client,
    ) -> Result<TestWorker, RunError> {
        // The worker runs inside the test binary: plugin programs are hosted by the real one.
        liteconnect::connectors::child::set_host_program(env!("CARGO_BIN_EXE_liteconnect"));
        let config = worker_config(dir, extra);
        let db = config.storage_file.clone();
        let scheme = match extra.iter().find(|(k, _)| *k == "listeners") {
            Some((_, v)) if v.starts_with("https:") => "https",
            _ => "http",
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("{scheme}://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(liteconnect::run(listener.into(), config, startup, async {
            let _ = rx.await;
        }));
        let api = connect(url.clone());
        // Healthy, or the worker gave up.
        let healthy = wait_for("the worker to become healthy", DEADLINE, || async {
            if handle.is_finished() {
                Some(false)
            } else {
                api.is_healthy().await.then_some(true)
            }
        })
        .await;
        if !healthy {
            return Err(handle
                .await
                .expect("join")
                .expect_err("a worker that stops early failed"));
        }
        Ok(TestWorker {
            url,
            dir: dir.to_path_buf(),
            db,
            client: api.http().clone(),
            api,
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
        let r = self
            .api
            .send(method, path, body.as_ref())
            .await
            .expect("request");
        (r.status, r.body, r.headers)
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

    /// Creates a connector from `{"name": …, "config": …}`; fails the test unless the answer is 201.
    pub async fn create(&self, body: Json) {
        create_through(&self.api, body).await;
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

/// Polls `check` until it answers `Some`, and returns what it answered; fails the test once `deadline` has
/// passed.
pub async fn wait_for<T, F, Fut>(what: &str, deadline: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            Instant::now() < end,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// [`wait_for`] outside a runtime: polls `check` from this thread.
pub fn wait_for_blocking<T>(
    what: &str,
    deadline: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            Instant::now() < end,
            "timed out after {deadline:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Polls `check` until it is true; fails the test after [`DEADLINE`].
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    wait_for(what, DEADLINE, || {
        let holds = check();
        async move { holds.await.then_some(()) }
    })
    .await
}

/// Asserts that `check` holds on every poll for `window` (at least three polls): a state that must last,
/// checked throughout rather than once after a pause.
pub async fn assert_holds_for<F, Fut>(what: &str, window: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let end = Instant::now() + window;
    let mut polls = 0;
    while polls < 3 || Instant::now() < end {
        assert!(check().await, "{what} stopped holding after {polls} polls");
        polls += 1;
        tokio::time::sleep(POLL).await;
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

/// The real binary, started on ephemeral ports.
pub struct Binary {
    pub child: Child,
    /// The URL of the first listener it logged.
    pub url: String,
    /// The URL of every listener it logged, in the order it logged them.
    pub urls: Vec<String>,
    /// Every line it has written to stderr so far (its log).
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// The worker config the binary tests use unless they write their own: an ephemeral port, `bin.db` in
/// `dir`, String converters.
pub fn binary_props(dir: &Path) -> String {
    format!(
        "listeners=http://127.0.0.1:0\nstorage.file={}\noffset.flush.interval.ms=200\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\n",
        dir.join("bin.db").display()
    )
}

/// Starts the binary with a worker config in `dir` and waits for its "listening on" line.
pub fn start_binary(dir: &Path, extra_args: &[&str]) -> Binary {
    start_binary_in(dir, dir, extra_args)
}

/// Starts the binary in working directory `cwd`, with the worker config `dir/worker.properties`
/// (written by [`binary_props`] when absent).
pub fn start_binary_in(dir: &Path, cwd: &Path, extra_args: &[&str]) -> Binary {
    let props = dir.join("worker.properties");
    if !props.exists() {
        std::fs::write(&props, binary_props(dir)).unwrap();
    }
    let mut args = vec![props.display().to_string()];
    args.extend(extra_args.iter().map(|a| a.to_string()));
    spawn_binary(cwd, &args, &[], 1)
}

/// Writes `props` to `dir/worker.properties`, starts the binary on it in `dir` with `env` added, and
/// waits until it logged `listeners` "listening on" lines.
pub fn start_binary_with(
    dir: &Path,
    props: &str,
    env: &[(&str, &str)],
    listeners: usize,
) -> Binary {
    let path = dir.join("worker.properties");
    std::fs::write(&path, props).unwrap();
    spawn_binary(dir, &[path.display().to_string()], env, listeners)
}

/// Runs the binary with `args` in `cwd` and waits for `listeners` "listening on" lines.
fn spawn_binary(cwd: &Path, args: &[String], env: &[(&str, &str)], listeners: usize) -> Binary {
    let mut child = Command::new(env!("CARGO_BIN_EXE_liteconnect"))
        .current_dir(cwd)
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn liteconnect");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            kept.lock().unwrap().push(line.clone());
            if let Some(rest) = line.split("listening on ").nth(1) {
                let _ = tx.send(
                    rest.split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        }
    });
    let urls: Vec<String> = (0..listeners)
        .map(|_| {
            rx.recv_timeout(DEADLINE)
                .expect("the binary logs the address it bound")
        })
        .collect();
    Binary {
        child,
        url: urls[0].clone(),
        urls,
        log,
    }
}

/// Creates a connector through `api` from `{"name": …, "config": …}`; fails the test unless the answer is
/// 201.
pub async fn create_through(api: &Client, body: Json) {
    let (status, answer) = api.post("/connectors", &body).await.expect("request");
    assert_eq!(status, 201, "creating {body}: {answer}");
}

/// Waits until `GET url/health` answers 200 to `client`.
pub async fn wait_healthy(client: &reqwest::Client, url: &str) {
    healthy(&Client::with_http(client.clone(), url)).await;
}

/// Waits until the worker behind `api` answers `GET /health` with 200.
pub async fn healthy(api: &Client) {
    wait_for("the worker to become healthy", DEADLINE, || async {
        api.is_healthy().await.then_some(())
    })
    .await
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
    // Killed rather than left behind when it hangs.
    let deadline = Instant::now() + DEADLINE;
    let exited = wait_for_blocking("the process or the deadline", DEADLINE * 2, || match child
        .try_wait()
        .expect("wait")
    {
        Some(_) => Some(true),
        None if Instant::now() > deadline => Some(false),
        None => None,
    });
    if !exited {
        let _ = child.kill();
        panic!("liteconnect {args:?} did not exit");
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A binary a test leaves behind (one that panicked before stopping it) is killed, not left running.
impl Drop for Binary {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
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
        let code = self.wait_exit("an exit after SIGTERM");
        assert!(code.success(), "{code:?}");
    }

    /// Waits (up to [`DEADLINE`]) for the process to exit and returns how it exited.
    pub fn wait_exit(&mut self, what: &str) -> std::process::ExitStatus {
        wait_for_blocking(what, DEADLINE, || self.child.try_wait().expect("wait"))
    }

    /// A client of its first listener.
    pub fn api(&self) -> Client {
        Client::new(self.url.clone())
    }

    /// Waits until it is healthy and returns a client of its first listener.
    pub async fn healthy_api(&self) -> Client {
        let api = self.api();
        healthy(&api).await;
        api
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

/// Stores `lines` as the records of `topic` through the worker behind `api` (a file source reading
/// `dir/<topic>.in`, deleted once every line is in the log, so a restart stores none twice), and returns
/// when the log holds them all.
pub async fn fill_topic(api: &Client, dir: &Path, topic: &str, lines: &[String]) {
    let input = dir.join(format!("{topic}.in"));
    append_lines(&input, lines.iter().cloned());
    let name = format!("{topic}-filler");
    create_through(api, file_source(&name, &input, topic)).await;
    let path = format!("/topics/{topic}/partitions/0/offsets");
    wait_for(
        &format!("{} records in {topic}", lines.len()),
        DEADLINE * 3,
        || async {
            let (status, o) = api.get(&path).await.ok()?;
            (status == 200 && o["end_offset"] == serde_json::json!(lines.len())).then_some(())
        },
    )
    .await;
    let (status, answer) = api
        .delete(&format!("/connectors/{name}"))
        .await
        .expect("request");
    assert!(status < 300, "deleting {name}: {answer}");
}

/// `GET {url}/metrics`, parsed.
pub async fn scrape(url: &str) -> prometheus_parse::Scrape {
    let body = reqwest::get(format!("{url}/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("a scrape");
    prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).expect("parses")
}

/// The value of the sample `name` whose labels are exactly `labels`, if the scrape has it.
pub fn sample(
    scrape: &prometheus_parse::Scrape,
    name: &str,
    labels: &[(&str, &str)],
) -> Option<f64> {
    scrape
        .samples
        .iter()
        .find(|s| {
            s.metric == name
                && s.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
        })
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            _ => f64::NAN,
        })
}

/// A per-task gauge of task 0 of `connector` in a scrape of the worker at `url` (NaN when absent).
pub async fn task_gauge(url: &str, name: &str, connector: &str) -> f64 {
    sample(
        &scrape(url).await,
        name,
        &[("connector", connector), ("task", "0")],
    )
    .unwrap_or(f64::NAN)
}

/// The worker settings that turn on Kafka's `FileConfigProvider` as `file` (`${file:path:key}`).
pub const FILE_CONFIG_PROVIDER: [(&str, &str); 2] = [
    ("config.providers", "file"),
    (
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider",
    ),
];
