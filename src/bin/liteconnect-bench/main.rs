//! `liteconnect-bench`: measures the release `liteconnect` binary from the outside, over its REST API,
//! and runs a physical-limit baseline for every figure in the same process, so results read as ratios.
//!
//! It builds nothing: it runs the `liteconnect` executable that sits next to its own (so build both with
//! `cargo build --release` first). Every worker gets its own temporary directory, SQLite file and
//! ephemeral port, and is stopped with SIGTERM when its scenario ends.
//!
//! ```text
//! cargo build --release && cargo run --release --bin liteconnect-bench -- [--runs N] [--quick] [--scenario NAME]...
//! ```

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use rusqlite::{params, Connection};
use serde_json::{json, Value as Json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, Error>;

const SCENARIOS: &[&str] = &[
    "pipeline",
    "log",
    "group-commit",
    "rest",
    "footprint",
    "durability",
    "scale",
];
const STRING_CONVERTER: &str = "org.apache.kafka.connect.storage.StringConverter";
const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";
const MOCK_SOURCE: &str = "org.apache.kafka.connect.tools.MockSourceConnector";
const VERIFIABLE_SOURCE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const VERIFIABLE_SINK: &str = "org.apache.kafka.connect.tools.VerifiableSinkConnector";
/// Bytes per line of the pipeline's input file, newline included.
const LINE_BYTES: usize = 100;
/// How long any single wait may take before the run is declared failed.
const DEADLINE: Duration = Duration::from_secs(600);

/// Benchmarks of the release liteconnect binary against physical-limit baselines.
#[derive(Debug, Parser)]
#[command(name = "liteconnect-bench")]
struct Args {
    /// Runs per measurement; the table shows medians.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A short smoke run: one run, 100,000 lines, 2-second load windows, 200 stored connectors.
    #[arg(long)]
    quick: bool,
    /// Run only these scenarios (pipeline, log, group-commit, rest, footprint, durability, scale); repeatable.
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// Lines in the pipeline's input file (default 1,000,000; 100,000 with --quick).
    #[arg(long)]
    lines: Option<usize>,
    /// Where to put temporary directories (default: the system's temporary directory).
    #[arg(long)]
    tmp: Option<PathBuf>,
    /// Serve fixed HTTP responses (the REST baseline); used by the benchmark itself.
    #[arg(long, hide = true)]
    serve_baseline: bool,
}

/// Settings derived from the arguments.
#[derive(Clone, Debug)]
struct Settings {
    runs: usize,
    lines: usize,
    window: Duration,
    log_window: Duration,
    connectors: usize,
    stored: usize,
    tmp: PathBuf,
    bin: PathBuf,
    me: PathBuf,
}

// ----- results ----------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Target {
    AtLeast(f64),
    AtMost(f64),
    Below(f64),
    /// The value divided by the baseline is at least this.
    RatioAtLeast(f64),
}

#[derive(Clone, Debug)]
struct Row {
    scenario: &'static str,
    metric: String,
    unit: &'static str,
    value: f64,
    baseline: Option<(String, f64)>,
    targets: Vec<Target>,
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        let s = format!("{:.0}", v);
        let bytes = s.as_bytes();
        let mut out = String::new();
        for (i, c) in bytes.iter().enumerate() {
            if i > 0 && (bytes.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(*c as char);
        }
        out
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

impl Row {
    fn new(
        scenario: &'static str,
        metric: impl Into<String>,
        unit: &'static str,
        value: f64,
    ) -> Row {
        Row {
            scenario,
            metric: metric.into(),
            unit,
            value,
            baseline: None,
            targets: Vec::new(),
        }
    }
    fn baseline(mut self, what: impl Into<String>, value: f64) -> Row {
        self.baseline = Some((what.into(), value));
        self
    }
    fn target(mut self, t: Target) -> Row {
        self.targets.push(t);
        self
    }
    fn ratio(&self) -> Option<f64> {
        self.baseline
            .as_ref()
            .map(|(_, b)| if *b == 0.0 { f64::NAN } else { self.value / b })
    }
    fn verdict(&self) -> (String, String) {
        let mut text = Vec::new();
        let mut met = true;
        for t in &self.targets {
            let (desc, ok) = match *t {
                Target::AtLeast(x) => (format!("≥ {} {}", fmt_num(x), self.unit), self.value >= x),
                Target::AtMost(x) => (format!("≤ {} {}", fmt_num(x), self.unit), self.value <= x),
                Target::Below(x) => (format!("< {} {}", fmt_num(x), self.unit), self.value < x),
                Target::RatioAtLeast(x) => (
                    format!("≥ {:.0}% of baseline", x * 100.0),
                    self.ratio().is_some_and(|r| r >= x),
                ),
            };
            met &= ok;
            text.push(desc);
        }
        if text.is_empty() {
            (String::new(), String::new())
        } else {
            (
                text.join(", "),
                if met { "met".into() } else { "MISSED".into() },
            )
        }
    }
}

fn print_table(rows: &[Row]) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| scenario | metric | liteconnect | baseline | ratio | target | |"
    );
    let _ = writeln!(out, "| --- | --- | ---: | --- | ---: | --- | --- |");
    for r in rows {
        let baseline = r
            .baseline
            .as_ref()
            .map(|(what, v)| format!("{} {} ({what})", fmt_num(*v), r.unit))
            .unwrap_or_default();
        let ratio = r.ratio().map(|x| format!("{x:.2}")).unwrap_or_default();
        let (target, verdict) = r.verdict();
        let _ = writeln!(
            out,
            "| {} | {} | {} {} | {} | {} | {} | {} |",
            r.scenario,
            r.metric,
            fmt_num(r.value),
            r.unit,
            baseline,
            ratio,
            target,
            verdict
        );
    }
    println!("{out}");
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i.min(sorted.len() - 1)])
}

// ----- temporary directories ----------------------------------------------------------------------------

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(settings: &Settings, what: &str) -> Res<TempDir> {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = settings.tmp.join(format!(
            "liteconnect-bench-{}-{n}-{what}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ----- the worker process ----------------------------------------------------------------------------

/// A running `liteconnect` process.
struct Worker {
    child: Child,
    url: String,
    /// When it was spawned.
    spawned: Instant,
    /// The last lines it wrote to stderr, for error messages.
    tail: Arc<Mutex<VecDeque<String>>>,
}

fn write_worker_config(dir: &Path, db: &Path, extra: &[(&str, &str)]) -> Res<PathBuf> {
    let props = dir.join("worker.properties");
    let mut text = format!(
        "listeners=http://127.0.0.1:0\nstorage.file={}\nkey.converter={STRING_CONVERTER}\nvalue.converter={STRING_CONVERTER}\n",
        db.display()
    );
    for (k, v) in extra {
        let _ = writeln!(text, "{k}={v}");
    }
    std::fs::write(&props, text)?;
    Ok(props)
}

impl Worker {
    /// Starts the binary with a worker config in `dir` and the database `db`; returns once it has logged
    /// the address it bound.
    async fn spawn(
        settings: &Settings,
        dir: &Path,
        db: &Path,
        extra: &[(&str, &str)],
    ) -> Res<Worker> {
        let props = write_worker_config(dir, db, extra)?;
        let spawned = Instant::now();
        let child = Command::new(&settings.bin)
            .current_dir(dir)
            .arg(&props)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("Cannot run {}: {e}", settings.bin.display()))?;
        Self::attach(child, spawned).await
    }

    async fn attach(mut child: Child, spawned: Instant) -> Res<Worker> {
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = tokio::sync::oneshot::channel::<String>();
        let keep = tail.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(
                            rest.split_whitespace()
                                .next()
                                .unwrap_or_default()
                                .to_string(),
                        );
                    }
                }
                let mut t = keep.lock().expect("tail lock");
                if t.len() >= 40 {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let url = match tokio::time::timeout(Duration::from_secs(60), rx).await {
            Ok(Ok(url)) => url,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                let tail = tail
                    .lock()
                    .expect("tail lock")
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n");
                return Err(
                    format!("The process did not log the address it listens on:\n{tail}").into(),
                );
            }
        };
        Ok(Worker {
            child,
            url,
            spawned,
            tail,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn tail(&self) -> String {
        self.tail
            .lock()
            .expect("tail lock")
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits for `GET /health` to answer 200; returns the time since the process was spawned.
    async fn wait_healthy(&self, client: &reqwest::Client) -> Res<Duration> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(r) = client.get(format!("{}/health", self.url)).send().await {
                if r.status() == 200 {
                    return Ok(self.spawned.elapsed());
                }
            }
            if Instant::now() > deadline {
                return Err(format!("{} never became healthy:\n{}", self.url, self.tail()).into());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// VmRSS in MiB.
    fn rss_mib(&self) -> Res<f64> {
        rss_mib(self.pid())
    }

    /// User plus system CPU time so far.
    fn cpu(&self) -> Res<Duration> {
        cpu_time(self.pid())
    }

    /// SIGTERM, then a bounded wait; SIGKILL if it does not exit.
    fn stop(mut self) -> Res<()> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err("the worker did not stop within 60 s of SIGTERM".into());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn rss_mib(pid: u32) -> Res<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or("no VmRSS in /proc/<pid>/status")?;
    Ok(kb / 1024.0)
}

fn cpu_time(pid: u32) -> Res<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or("bad /proc/<pid>/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let ticks: u64 = fields
        .get(11)
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0)
        + fields
            .get(12)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0);
    let hz = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(100);
    Ok(Duration::from_secs_f64(ticks as f64 / hz as f64))
}

// ----- HTTP helpers --------------------------------------------------------------------------------------

async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Json>,
) -> Res<(u16, Json)> {
    let mut req = client.request(method, url);
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await?;
    let status = resp.status().as_u16();
    let text = resp.text().await?;
    let json = if text.is_empty() {
        Json::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Json::String(text))
    };
    Ok((status, json))
}

async fn create(client: &reqwest::Client, w: &Worker, name: &str, config: Json) -> Res<()> {
    let (s, body) = call(
        client,
        reqwest::Method::POST,
        format!("{}/connectors", w.url),
        Some(json!({"name": name, "config": config})),
    )
    .await?;
    if s != 201 {
        return Err(format!("creating {name}: {s} {body}").into());
    }
    Ok(())
}

async fn get(client: &reqwest::Client, w: &Worker, path: &str) -> Res<(u16, Json)> {
    call(
        client,
        reqwest::Method::GET,
        format!("{}{path}", w.url),
        None,
    )
    .await
}

/// Sums the sink's committed offsets (the next offset to read, per partition).
async fn sink_committed(client: &reqwest::Client, w: &Worker, name: &str) -> Res<i64> {
    let (s, body) = get(client, w, &format!("/connectors/{name}/offsets")).await?;
    if s != 200 {
        return Err(format!("offsets of {name}: {s} {body}").into());
    }
    Ok(body["offsets"]
        .as_array()
        .map(|o| {
            o.iter()
                .filter_map(|e| e["offset"]["kafka_offset"].as_i64())
                .sum()
        })
        .unwrap_or(0))
}

/// The number of records the verifiable source's tasks have stored (the sum of `seqno + 1`).
async fn source_produced(client: &reqwest::Client, w: &Worker, name: &str) -> Res<i64> {
    let (s, body) = get(client, w, &format!("/connectors/{name}/offsets")).await?;
    if s != 200 {
        return Err(format!("offsets of {name}: {s} {body}").into());
    }
    Ok(body["offsets"]
        .as_array()
        .map(|o| {
            o.iter()
                .filter_map(|e| e["offset"]["seqno"].as_i64())
                .map(|s| s + 1)
                .sum()
        })
        .unwrap_or(0))
}

async fn wait_for<F, Fut>(what: &str, w: &Worker, every: Duration, mut check: F) -> Res<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Res<bool>>,
{
    let deadline = Instant::now() + DEADLINE;
    loop {
        if check().await? {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}:\n{}", w.tail()).into());
        }
        tokio::time::sleep(every).await;
    }
}

/// Waits until every connector is RUNNING with every task RUNNING.
async fn wait_all_running(client: &reqwest::Client, w: &Worker, count: usize) -> Res<()> {
    wait_for(
        "connectors to run",
        w,
        Duration::from_millis(50),
        || async {
            let (_, body) = get(client, w, "/connectors?expand=status").await?;
            let Some(map) = body.as_object() else {
                return Ok(false);
            };
            Ok(map.len() == count
                && map.values().all(|c| {
                    c["status"]["connector"]["state"] == "RUNNING"
                        && c["status"]["tasks"].as_array().is_some_and(|t| {
                            !t.is_empty() && t.iter().all(|t| t["state"] == "RUNNING")
                        })
                }))
        },
    )
    .await
}

fn mock_source() -> Json {
    json!({"connector.class": MOCK_SOURCE, "tasks.max": "1"})
}

/// Creates `count` idle connectors named `c0000`…, eight requests at a time.
async fn create_idle_connectors(client: &reqwest::Client, w: &Worker, count: usize) -> Res<()> {
    use futures::StreamExt;
    let results: Vec<Res<()>> = futures::stream::iter(0..count)
        .map(|i| async move { create(client, w, &format!("c{i:04}"), mock_source()).await })
        .buffer_unordered(8)
        .collect()
        .await;
    results.into_iter().collect()
}

// ----- the pipeline (scenarios 1 and 5) ----------------------------------------------------------------

fn write_input(path: &Path, lines: usize) -> Res<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let filler = "x".repeat(LINE_BYTES);
    for i in 0..lines {
        let head = format!("{i:010} ");
        out.write_all(head.as_bytes())?;
        out.write_all(&filler.as_bytes()[..LINE_BYTES - 1 - head.len()])?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

fn same_contents(a: &Path, b: &Path) -> Res<bool> {
    let (mut fa, mut fb) = (
        BufReader::with_capacity(1 << 20, File::open(a)?),
        BufReader::with_capacity(1 << 20, File::open(b)?),
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let na = fa.read(&mut ba)?;
        if na == 0 {
            return Ok(fb.read(&mut bb)? == 0);
        }
        fb.read_exact(&mut bb[..na])
            .map_err(|_| "the output is shorter than the input")?;
        if ba[..na] != bb[..na] {
            return Ok(false);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Conv {
    String,
    Json,
}

fn converter_overrides(conv: Conv, config: &mut Json) {
    if conv == Conv::Json {
        config["value.converter"] = json!(JSON_CONVERTER);
        config["value.converter.schemas.enable"] = json!("true");
    }
}

/// One pipeline run: a file source into the log and a file sink out of it. Returns seconds from creating
/// the connectors to the last line written with the sink's offset committed at the end.
async fn pipeline_run(
    settings: &Settings,
    input: &Path,
    lines: usize,
    conv: Conv,
    full_sync: bool,
) -> Res<f64> {
    let dir = TempDir::new(settings, "pipeline")?;
    let db = dir.path().join("liteconnect.db");
    let extra: &[(&str, &str)] = if full_sync {
        &[("storage.synchronous", "FULL")]
    } else {
        &[]
    };
    let w = Worker::spawn(settings, dir.path(), &db, extra).await?;
    let client = reqwest::Client::new();
    w.wait_healthy(&client).await?;
    let output = dir.path().join("out.txt");
    let input_len = std::fs::metadata(input)?.len();
    let mut sink = json!({"connector.class": "FileStreamSink", "tasks.max": "1", "file": output.display().to_string(), "topics": "pipe"});
    let mut source = json!({"connector.class": "FileStreamSource", "tasks.max": "1", "file": input.display().to_string(), "topic": "pipe"});
    converter_overrides(conv, &mut sink);
    converter_overrides(conv, &mut source);

    let started = Instant::now();
    create(&client, &w, "sink", sink).await?;
    create(&client, &w, "source", source).await?;
    wait_for(
        "the output file to be complete",
        &w,
        Duration::from_millis(10),
        || async { Ok(std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0) >= input_len) },
    )
    .await?;
    wait_for(
        "the sink's offset to reach the end",
        &w,
        Duration::from_millis(5),
        || async { Ok(sink_committed(&client, &w, "sink").await? >= lines as i64) },
    )
    .await?;
    let elapsed = started.elapsed().as_secs_f64();
    w.stop()?;
    if !same_contents(input, &output)? {
        return Err("the sink's output differs from the input".into());
    }
    Ok(elapsed)
}

/// Inserts rows shaped like the log's into a bare SQLite table, 1,000 per transaction; returns seconds.
fn sqlite_insert_baseline(
    settings: &Settings,
    values: &[Vec<u8>],
    key: Option<&[u8]>,
    full_sync: bool,
) -> Res<f64> {
    let dir = TempDir::new(settings, "sqlite")?;
    let conn = Connection::open(dir.path().join("bare.db"))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(
        None,
        "synchronous",
        if full_sync { "FULL" } else { "NORMAL" },
    )?;
    conn.execute_batch(
        "CREATE TABLE records (topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
             timestamp_ms INTEGER, key BLOB, value BLOB, headers BLOB,
             PRIMARY KEY (topic_id, partition, offset)) WITHOUT ROWID;",
    )?;
    let started = Instant::now();
    let mut offset = 0i64;
    for chunk in values.chunks(1000) {
        let tx = conn.unchecked_transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO records (topic_id, partition, offset, timestamp_ms, key, value, headers) VALUES (1, 0, ?1, ?2, ?3, ?4, NULL)",
            )?;
            let now = 1_700_000_000_000i64;
            for v in chunk {
                insert.execute(params![offset, now, key, v])?;
                offset += 1;
            }
        }
        tx.commit()?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Reads every row of a bare table back in offset order; returns seconds.
fn sqlite_read_baseline(settings: &Settings, rows: usize) -> Res<f64> {
    let dir = TempDir::new(settings, "sqlite-read")?;
    let conn = Connection::open(dir.path().join("bare.db"))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.execute_batch(
        "CREATE TABLE records (topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
             timestamp_ms INTEGER, key BLOB, value BLOB, headers BLOB,
             PRIMARY KEY (topic_id, partition, offset)) WITHOUT ROWID;",
    )?;
    {
        let tx = conn.unchecked_transaction()?;
        {
            let mut insert =
                tx.prepare("INSERT INTO records VALUES (1, 0, ?1, 0, ?2, ?3, NULL)")?;
            for i in 0..rows as i64 {
                insert.execute(params![i, b"0".as_slice(), i.to_string().as_bytes()])?;
            }
        }
        tx.commit()?;
    }
    let started = Instant::now();
    let mut from = 0i64;
    let mut bytes = 0usize;
    let mut stmt = conn.prepare(
        "SELECT offset, timestamp_ms, key, value, headers FROM records WHERE topic_id = 1 AND partition = 0 AND offset >= ?1 ORDER BY offset LIMIT 2000",
    )?;
    loop {
        let mut n = 0;
        let mut rows_iter = stmt.query([from])?;
        while let Some(r) = rows_iter.next()? {
            let offset: i64 = r.get(0)?;
            let key: Option<Vec<u8>> = r.get(2)?;
            let value: Option<Vec<u8>> = r.get(3)?;
            bytes += key.map_or(0, |k| k.len()) + value.map_or(0, |v| v.len());
            from = offset + 1;
            n += 1;
        }
        if n == 0 {
            break;
        }
    }
    std::hint::black_box(bytes);
    Ok(started.elapsed().as_secs_f64())
}

/// Copies the file line by line through buffered I/O; returns seconds.
fn line_copy_baseline(settings: &Settings, input: &Path) -> Res<f64> {
    let dir = TempDir::new(settings, "copy")?;
    let started = Instant::now();
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(input)?);
    let mut writer =
        BufWriter::with_capacity(64 * 1024, File::create(dir.path().join("copy.txt"))?);
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        writer.write_all(&line)?;
    }
    writer.flush()?;
    Ok(started.elapsed().as_secs_f64())
}

fn read_lines(input: &Path) -> Res<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for line in BufReader::new(File::open(input)?).split(b'\n') {
        out.push(line?);
    }
    Ok(out)
}

struct Ctx {
    settings: Settings,
    input: Option<(PathBuf, usize)>,
    _inputs: TempDir,
    /// Median seconds of the default String pipeline and of the SQLite baseline, once measured.
    string_pipeline: Option<(f64, f64)>,
}

impl Ctx {
    fn input(&mut self, lines: usize) -> Res<PathBuf> {
        if let Some((p, n)) = &self.input {
            if *n == lines {
                return Ok(p.clone());
            }
        }
        let path = self._inputs.path().join(format!("input-{lines}.txt"));
        eprintln!(
            "  writing {lines} lines of {LINE_BYTES} bytes to {}",
            path.display()
        );
        write_input(&path, lines)?;
        self.input = Some((path.clone(), lines));
        Ok(path)
    }
}

async fn measure<F, Fut>(label: &str, runs: usize, mut f: F) -> Res<f64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Res<f64>>,
{
    let mut xs = Vec::new();
    for i in 0..runs {
        let x = f().await?;
        eprintln!("  {label} run {}/{runs}: {}", i + 1, fmt_num(x));
        xs.push(x);
    }
    Ok(median(xs))
}

async fn scenario_pipeline(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let input = ctx.input(s.lines)?;
    let n = s.lines as f64;
    let values = read_lines(&input)?;
    let sqlite = measure("bare SQLite insert (s)", s.runs, || async {
        sqlite_insert_baseline(&s, &values, None, false)
    })
    .await?;
    drop(values);
    let copy = measure("buffered line copy (s)", s.runs, || async {
        line_copy_baseline(&s, &input)
    })
    .await?;
    let string = measure("pipeline String (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::String, false)
    })
    .await?;
    let json = measure("pipeline JSON (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::Json, false)
    })
    .await?;
    ctx.string_pipeline = Some((string, sqlite));
    let lines = fmt_num(n);
    rows.push(
        Row::new(
            "pipeline",
            format!("file → log → file, StringConverter, {lines} lines"),
            "records/s",
            n / string,
        )
        .baseline("bare SQLite insert", n / sqlite)
        .target(Target::AtLeast(300_000.0))
        .target(Target::RatioAtLeast(0.4)),
    );
    rows.push(
        Row::new(
            "pipeline",
            "same, as MB/s of input",
            "MB/s",
            n * LINE_BYTES as f64 / string / 1e6,
        )
        .baseline("buffered line copy", n * LINE_BYTES as f64 / copy / 1e6),
    );
    rows.push(
        Row::new(
            "pipeline",
            format!("file → log → file, JsonConverter schemas.enable, {lines} lines"),
            "records/s",
            n / json,
        )
        .baseline("bare SQLite insert", n / sqlite)
        .target(Target::AtLeast(150_000.0)),
    );
    Ok(())
}

async fn scenario_durability(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let input = ctx.input(s.lines)?;
    let n = s.lines as f64;
    let (normal, sqlite_normal) = match ctx.string_pipeline {
        Some(x) => x,
        None => {
            let values = read_lines(&input)?;
            let b = measure("bare SQLite insert NORMAL (s)", s.runs, || async {
                sqlite_insert_baseline(&s, &values, None, false)
            })
            .await?;
            (
                measure("pipeline String NORMAL (s)", s.runs, || {
                    pipeline_run(&s, &input, s.lines, Conv::String, false)
                })
                .await?,
                b,
            )
        }
    };
    let values = read_lines(&input)?;
    let sqlite_full = measure("bare SQLite insert FULL (s)", s.runs, || async {
        sqlite_insert_baseline(&s, &values, None, true)
    })
    .await?;
    drop(values);
    let full = measure("pipeline String FULL (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::String, true)
    })
    .await?;
    rows.push(
        Row::new(
            "durability",
            "pipeline String, storage.synchronous=NORMAL (default)",
            "records/s",
            n / normal,
        )
        .baseline("bare SQLite insert, NORMAL", n / sqlite_normal),
    );
    rows.push(
        Row::new(
            "durability",
            "pipeline String, storage.synchronous=FULL",
            "records/s",
            n / full,
        )
        .baseline("bare SQLite insert, FULL", n / sqlite_full),
    );
    rows.push(
        Row::new(
            "durability",
            "FULL as a fraction of NORMAL",
            "×",
            normal / full,
        )
        .baseline("bare SQLite FULL/NORMAL", sqlite_normal / sqlite_full),
    );
    Ok(())
}

async fn scenario_scale(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let small = (s.lines / 10).max(1000);
    let input_small = ctx.input(small)?;
    let t_small = measure("pipeline String, small (s)", s.runs, || {
        pipeline_run(&s, &input_small, small, Conv::String, false)
    })
    .await?;
    let input = ctx.input(s.lines)?;
    let t_large = match ctx.string_pipeline {
        Some((t, _)) => t,
        None => {
            measure("pipeline String (s)", s.runs, || {
                pipeline_run(&s, &input, s.lines, Conv::String, false)
            })
            .await?
        }
    };
    let per_small = t_small / small as f64 * 1e6;
    let per_large = t_large / s.lines as f64 * 1e6;
    rows.push(
        Row::new(
            "scale",
            format!(
                "pipeline String, µs per record at {} lines",
                fmt_num(s.lines as f64)
            ),
            "µs",
            per_large,
        )
        .baseline(format!("at {} lines", fmt_num(small as f64)), per_small),
    );
    Ok(())
}

// ----- the log (scenario 2) and group commit ------------------------------------------------------------

struct LogRun {
    source_rate: f64,
    sink_rate: f64,
    payload_bytes_per_record: f64,
    file_bytes_per_record: f64,
}

/// Runs the verifiable source unthrottled with `tasks` tasks for the log window, then (with `read_back`)
/// a verifiable sink over what it wrote.
async fn log_run(settings: &Settings, tasks: usize, read_back: bool) -> Res<LogRun> {
    let dir = TempDir::new(settings, "log")?;
    let db = dir.path().join("liteconnect.db");
    let w = Worker::spawn(settings, dir.path(), &db, &[]).await?;
    let client = reqwest::Client::new();
    w.wait_healthy(&client).await?;
    create(
        &client,
        &w,
        "vsource",
        json!({"connector.class": VERIFIABLE_SOURCE, "tasks.max": tasks.to_string(), "topic": "vlog", "throughput": "-1"}),
    )
    .await?;
    // Measure between two readings after a warm-up, so start-up is not counted.
    wait_for(
        "the source to start writing",
        &w,
        Duration::from_millis(20),
        || async { Ok(source_produced(&client, &w, "vsource").await? > 0) },
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (t1, s1) = (
        Instant::now(),
        source_produced(&client, &w, "vsource").await?,
    );
    tokio::time::sleep(settings.log_window).await;
    let (s2, t2) = (
        source_produced(&client, &w, "vsource").await?,
        Instant::now(),
    );
    let source_rate = (s2 - s1) as f64 / (t2 - t1).as_secs_f64();
    let (s, body) = call(
        &client,
        reqwest::Method::PUT,
        format!("{}/connectors/vsource/stop", w.url),
        None,
    )
    .await?;
    if s != 204 {
        return Err(format!("stopping the source: {s} {body}").into());
    }
    wait_for(
        "the source to stop",
        &w,
        Duration::from_millis(20),
        || async {
            let (_, st) = get(&client, &w, "/connectors/vsource/status").await?;
            Ok(st["connector"]["state"] == "STOPPED"
                && st["tasks"].as_array().is_some_and(|t| t.is_empty()))
        },
    )
    .await?;
    let total = source_produced(&client, &w, "vsource").await?;
    let mut sink_rate = f64::NAN;
    if read_back {
        let started = Instant::now();
        create(
            &client,
            &w,
            "vsink",
            json!({"connector.class": VERIFIABLE_SINK, "tasks.max": "1", "topics": "vlog"}),
        )
        .await?;
        wait_for(
            "the sink to read the whole log",
            &w,
            Duration::from_millis(5),
            || async { Ok(sink_committed(&client, &w, "vsink").await? >= total) },
        )
        .await?;
        sink_rate = total as f64 / started.elapsed().as_secs_f64();
    }
    w.stop()?;
    let conn = Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let (count, payload): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(COALESCE(length(key), 0) + COALESCE(length(value), 0)), 0) FROM records",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if count != total {
        return Err(format!(
            "the log holds {count} records but the source stored offsets for {total}"
        )
        .into());
    }
    let file_bytes: u64 = ["", "-wal"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", db.display())).ok())
        .map(|m| m.len())
        .sum();
    Ok(LogRun {
        source_rate,
        sink_rate,
        payload_bytes_per_record: payload as f64 / count.max(1) as f64,
        file_bytes_per_record: file_bytes as f64 / count.max(1) as f64,
    })
}

async fn scenario_log(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let mut runs = Vec::new();
    for i in 0..s.runs {
        let r = log_run(&s, 1, true).await?;
        eprintln!(
            "  log run {}/{}: source {} records/s, sink {} records/s",
            i + 1,
            s.runs,
            fmt_num(r.source_rate),
            fmt_num(r.sink_rate)
        );
        runs.push(r);
    }
    let source = median(runs.iter().map(|r| r.source_rate).collect());
    let sink = median(runs.iter().map(|r| r.sink_rate).collect());
    let payload = median(runs.iter().map(|r| r.payload_bytes_per_record).collect());
    let on_disk = median(runs.iter().map(|r| r.file_bytes_per_record).collect());
    // Baselines: the same number of rows of the same shape, into and out of a bare table.
    let n = s.lines;
    let values: Vec<Vec<u8>> = (0..n as i64).map(|i| i.to_string().into_bytes()).collect();
    let insert = measure("bare SQLite insert of small rows (s)", s.runs, || async {
        sqlite_insert_baseline(&s, &values, Some(b"0"), false)
    })
    .await?;
    drop(values);
    let read = measure("bare SQLite read of small rows (s)", s.runs, || async {
        sqlite_read_baseline(&s, n)
    })
    .await?;
    rows.push(
        Row::new(
            "log",
            "verifiable source → log (1 task, unthrottled)",
            "records/s",
            source,
        )
        .baseline("bare SQLite insert", n as f64 / insert),
    );
    rows.push(Row::new(
        "log",
        "same, key + value bytes",
        "MB/s",
        source * payload / 1e6,
    ));
    rows.push(
        Row::new("log", "log → verifiable sink", "records/s", sink)
            .baseline("bare SQLite read, 2,000 a query", n as f64 / read),
    );
    rows.push(Row::new(
        "log",
        "same, key + value bytes",
        "MB/s",
        sink * payload / 1e6,
    ));
    rows.push(Row::new(
        "log",
        "database bytes per record (file + WAL)",
        "B",
        on_disk,
    ));
    Ok(())
}

async fn scenario_group_commit(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let one = measure("1 source task (records/s)", s.runs, || async {
        Ok(log_run(&s, 1, false).await?.source_rate)
    })
    .await?;
    let eight = measure("8 source tasks (records/s)", s.runs, || async {
        Ok(log_run(&s, 8, false).await?.source_rate)
    })
    .await?;
    rows.push(
        Row::new(
            "group commit",
            "8 verifiable source tasks, unthrottled",
            "records/s",
            eight,
        )
        .baseline("1 task", one)
        .target(Target::RatioAtLeast(1.0)),
    );
    Ok(())
}

// ----- REST (scenario 3) -------------------------------------------------------------------------------

struct Load {
    rate: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: usize,
}

/// One keep-alive HTTP/1.1 connection that sends GETs and reads `Content-Length` bodies. It costs far
/// less CPU per request than a general-purpose client, which leaves more of the machine to the server
/// under test (client and server share the cores).
struct RawConn {
    sock: tokio::net::TcpStream,
    host: String,
    buf: Vec<u8>,
}

impl RawConn {
    async fn connect(base: &str) -> Res<RawConn> {
        let host = base
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let sock = tokio::net::TcpStream::connect(&host).await?;
        sock.set_nodelay(true)?;
        Ok(RawConn {
            sock,
            host,
            buf: Vec::with_capacity(64 * 1024),
        })
    }

    /// Sends `GET path` and reads the whole response; returns its status code.
    async fn get(&mut self, path: &str) -> Res<u16> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", self.host);
        self.sock.write_all(request.as_bytes()).await?;
        let mut chunk = [0u8; 16 * 1024];
        let end = loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
            let n = self.sock.read(&mut chunk).await?;
            if n == 0 {
                return Err("the server closed the connection".into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        };
        let head = std::str::from_utf8(&self.buf[..end])?;
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or("bad status line")?;
        let mut length = None;
        for line in head.split("\r\n").skip(1) {
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err("chunked responses are not supported by the load client".into());
            }
        }
        let total = end + 4 + length.ok_or("no Content-Length")?;
        while self.buf.len() < total {
            let n = self.sock.read(&mut chunk).await?;
            if n == 0 {
                return Err("the server closed the connection".into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
        self.buf.drain(..total);
        Ok(status)
    }
}

/// `conns` concurrent clients, each on its own keep-alive connection, send GETs for `window`.
async fn load(base: &str, paths: Arc<Vec<String>>, conns: usize, window: Duration) -> Res<Load> {
    let deadline = Instant::now() + window;
    let started = Instant::now();
    let mut handles = Vec::new();
    for c in 0..conns {
        let paths = paths.clone();
        let base = base.to_string();
        handles.push(tokio::spawn(async move {
            let mut latencies: Vec<u32> = Vec::with_capacity(1 << 16);
            let mut errors = 0usize;
            let mut i = c;
            let mut conn = RawConn::connect(&base).await?;
            while Instant::now() < deadline {
                let path = &paths[i % paths.len()];
                i += conns;
                let t = Instant::now();
                match conn.get(path).await {
                    Ok(200) => {}
                    Ok(_) => errors += 1,
                    Err(_) => {
                        errors += 1;
                        conn = RawConn::connect(&base).await?;
                    }
                }
                latencies.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
            }
            Ok::<_, Error>((latencies, errors))
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for h in handles {
        let (l, e) = h.await??;
        all.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    Ok(Load {
        rate: all.len() as f64 / elapsed,
        p50_ms: percentile(&all, 0.50) / 1000.0,
        p99_ms: percentile(&all, 0.99) / 1000.0,
        errors,
    })
}

/// The baseline HTTP server: answers every request with `200` and a body of the length the path names
/// (`GET /123`), keeping connections open. Runs as a child process so that it competes for the CPU as the
/// worker does.
fn serve_baseline() -> Res<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(serve_fixed())
}

async fn serve_fixed() -> Res<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    eprintln!(
        "Baseline HTTP server listening on http://{}",
        listener.local_addr()?
    );
    loop {
        let (sock, _) = listener.accept().await?;
        tokio::spawn(answer_fixed(sock));
    }
}

async fn answer_fixed(mut sock: tokio::net::TcpStream) {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end + 4);
        let len: usize = head
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.trim_start_matches('/').split('?').next()?.parse().ok())
            .unwrap_or(2);
        let mut resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n"
        )
        .into_bytes();
        resp.resize(resp.len() + len, b' ');
        if sock.write_all(&resp).await.is_err() {
            return;
        }
    }
}

async fn spawn_baseline_server(settings: &Settings) -> Res<Worker> {
    let spawned = Instant::now();
    let child = Command::new(&settings.me)
        .arg("--serve-baseline")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    Worker::attach(child, spawned).await
}

async fn scenario_rest(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let conns = 32;
    let mut status_runs = Vec::new();
    let mut list_runs = Vec::new();
    let mut cycle_runs = Vec::new();
    let mut cpu_per_req = Vec::new();
    let mut status_len = 0usize;
    let mut list_len = 0usize;
    for run in 0..s.runs {
        let dir = TempDir::new(&s, "rest")?;
        let w = Worker::spawn(&s, dir.path(), &dir.path().join("liteconnect.db"), &[]).await?;
        let client = reqwest::Client::new();
        w.wait_healthy(&client).await?;
        create_idle_connectors(&client, &w, s.connectors).await?;
        wait_all_running(&client, &w, s.connectors).await?;
        let paths: Arc<Vec<String>> = Arc::new(
            (0..s.connectors)
                .map(|i| format!("/connectors/c{i:04}/status"))
                .collect(),
        );
        status_len = client
            .get(format!("{}{}", w.url, paths[0]))
            .send()
            .await?
            .bytes()
            .await?
            .len();
        let cpu0 = w.cpu()?;
        let status = load(&w.url, paths, conns, s.window).await?;
        let cpu = (w.cpu()? - cpu0).as_secs_f64();
        cpu_per_req.push(cpu / (status.rate * s.window.as_secs_f64()) * 1e6);
        let list_path = "/connectors?expand=status".to_string();
        list_len = client
            .get(format!("{}{list_path}", w.url))
            .send()
            .await?
            .bytes()
            .await?
            .len();
        let list = load(&w.url, Arc::new(vec![list_path]), conns, s.window).await?;
        // Create-then-delete cycles, one after another.
        let started = Instant::now();
        let mut cycles = 0u64;
        while started.elapsed() < s.window {
            let name = format!("cd{cycles}");
            create(&client, &w, &name, mock_source()).await?;
            let (st, body) = call(
                &client,
                reqwest::Method::DELETE,
                format!("{}/connectors/{name}", w.url),
                None,
            )
            .await?;
            if st != 204 {
                return Err(format!("deleting {name}: {st} {body}").into());
            }
            cycles += 1;
        }
        let cycle_rate = cycles as f64 / started.elapsed().as_secs_f64();
        eprintln!(
            "  rest run {}/{}: status {} req/s (p50 {:.2} ms, p99 {:.2} ms, {} errors), list {} req/s (p99 {:.2} ms), {:.0} create+delete/s",
            run + 1,
            s.runs,
            fmt_num(status.rate),
            status.p50_ms,
            status.p99_ms,
            status.errors,
            fmt_num(list.rate),
            list.p99_ms,
            cycle_rate
        );
        if status.errors + list.errors > 0 {
            return Err(format!("{} requests failed", status.errors + list.errors).into());
        }
        status_runs.push(status);
        list_runs.push(list);
        cycle_runs.push(cycle_rate);
        w.stop()?;
    }
    // Baseline: a server that does nothing but answer with a body of the same size.
    let mut base_status = Vec::new();
    let mut base_list = Vec::new();
    for _ in 0..s.runs {
        let b = spawn_baseline_server(&s).await?;
        base_status.push(
            load(
                &b.url,
                Arc::new(vec![format!("/{status_len}")]),
                conns,
                s.window,
            )
            .await?,
        );
        base_list.push(
            load(
                &b.url,
                Arc::new(vec![format!("/{list_len}")]),
                conns,
                s.window,
            )
            .await?,
        );
        b.stop()?;
    }
    let med = |xs: &[Load], f: fn(&Load) -> f64| median(xs.iter().map(f).collect());
    // Bare SQLite: two autocommit transactions per cycle, the least a create and a delete must store.
    let cycle_base = {
        let dir = TempDir::new(&s, "cycles")?;
        let conn = Connection::open(dir.path().join("bare.db"))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch("CREATE TABLE c (name TEXT PRIMARY KEY, config TEXT)")?;
        let started = Instant::now();
        let mut n = 0u64;
        while started.elapsed() < s.window.min(Duration::from_secs(2)) {
            conn.execute("INSERT INTO c VALUES (?1, '{}')", [n.to_string()])?;
            conn.execute("DELETE FROM c WHERE name = ?1", [n.to_string()])?;
            n += 1;
        }
        n as f64 / started.elapsed().as_secs_f64()
    };
    let c = s.connectors;
    rows.push(
        Row::new(
            "rest",
            format!("GET /connectors/{{c}}/status, {c} connectors, {conns} connections"),
            "req/s",
            med(&status_runs, |l| l.rate),
        )
        .baseline("fixed-response HTTP server", med(&base_status, |l| l.rate))
        .target(Target::AtLeast(15_000.0)),
    );
    rows.push(
        Row::new(
            "rest",
            "  p50 latency",
            "ms",
            med(&status_runs, |l| l.p50_ms),
        )
        .baseline(
            "fixed-response HTTP server",
            med(&base_status, |l| l.p50_ms),
        ),
    );
    rows.push(
        Row::new(
            "rest",
            "  p99 latency",
            "ms",
            med(&status_runs, |l| l.p99_ms),
        )
        .baseline(
            "fixed-response HTTP server",
            med(&base_status, |l| l.p99_ms),
        )
        .target(Target::Below(5.0)),
    );
    rows.push(Row::new(
        "rest",
        "  worker CPU per status request",
        "µs",
        median(cpu_per_req),
    ));
    rows.push(
        Row::new(
            "rest",
            format!(
                "GET /connectors?expand=status, {c} connectors ({} KB)",
                list_len / 1024
            ),
            "req/s",
            med(&list_runs, |l| l.rate),
        )
        .baseline("fixed-response HTTP server", med(&base_list, |l| l.rate)),
    );
    rows.push(
        Row::new("rest", "  p50 latency", "ms", med(&list_runs, |l| l.p50_ms))
            .baseline("fixed-response HTTP server", med(&base_list, |l| l.p50_ms)),
    );
    rows.push(
        Row::new("rest", "  p99 latency", "ms", med(&list_runs, |l| l.p99_ms))
            .baseline("fixed-response HTTP server", med(&base_list, |l| l.p99_ms)),
    );
    rows.push(
        Row::new(
            "rest",
            "create-then-delete cycles, sequential",
            "cycles/s",
            median(cycle_runs),
        )
        .baseline("bare SQLite insert + delete", cycle_base),
    );
    Ok(())
}

// ----- footprint (scenario 4) --------------------------------------------------------------------------

async fn scenario_footprint(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let client = reqwest::Client::new();
    let mut rss_idle = Vec::new();
    let mut rss_full = Vec::new();
    let mut start_empty = Vec::new();
    let mut base_start = Vec::new();
    let mut base_rss = Vec::new();
    for run in 0..s.runs {
        let dir = TempDir::new(&s, "footprint")?;
        let w = Worker::spawn(&s, dir.path(), &dir.path().join("liteconnect.db"), &[]).await?;
        let t = w.wait_healthy(&client).await?;
        start_empty.push(t.as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_secs(1)).await;
        rss_idle.push(w.rss_mib()?);
        create_idle_connectors(&client, &w, s.connectors).await?;
        wait_all_running(&client, &w, s.connectors).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        rss_full.push(w.rss_mib()?);
        w.stop()?;

        let b = spawn_baseline_server(&s).await?;
        let t = b.wait_healthy(&client).await?;
        base_start.push(t.as_secs_f64() * 1000.0);
        base_rss.push(b.rss_mib()?);
        b.stop()?;
        eprintln!(
            "  footprint run {}/{}: start-up {:.1} ms, idle {:.1} MiB, {} connectors {:.1} MiB",
            run + 1,
            s.runs,
            start_empty[run],
            rss_idle[run],
            s.connectors,
            rss_full[run]
        );
    }

    // A database with many stored connectors, prepared once, then started `runs` times.
    let dir = TempDir::new(&s, "stored")?;
    let db = dir.path().join("liteconnect.db");
    {
        let w = Worker::spawn(&s, dir.path(), &db, &[]).await?;
        w.wait_healthy(&client).await?;
        eprintln!("  storing {} connectors", s.stored);
        create_idle_connectors(&client, &w, s.stored).await?;
        wait_all_running(&client, &w, s.stored).await?;
        w.stop()?;
    }
    let mut start_stored = Vec::new();
    let mut all_running = Vec::new();
    let mut rss_stored = Vec::new();
    for run in 0..s.runs {
        let w = Worker::spawn(&s, dir.path(), &db, &[]).await?;
        let t = w.wait_healthy(&client).await?;
        start_stored.push(t.as_secs_f64() * 1000.0);
        wait_all_running(&client, &w, s.stored).await?;
        all_running.push(w.spawned.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_secs(1)).await;
        rss_stored.push(w.rss_mib()?);
        w.stop()?;
        eprintln!(
            "  stored run {}/{}: healthy after {:.0} ms, all running after {:.0} ms, {:.1} MiB",
            run + 1,
            s.runs,
            start_stored[run],
            all_running[run],
            rss_stored[run]
        );
    }
    let size = std::fs::metadata(&s.bin)?.len() as f64 / (1024.0 * 1024.0);
    let stripped = Command::new("file")
        .arg(&s.bin)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(", stripped"))
        .unwrap_or(false);
    let c = s.connectors;
    rows.push(
        Row::new(
            "footprint",
            "idle RSS, no connectors",
            "MiB",
            median(rss_idle.clone()),
        )
        .baseline("fixed-response HTTP server", median(base_rss))
        .target(Target::AtMost(20.0)),
    );
    rows.push(
        Row::new(
            "footprint",
            format!("idle RSS, {c} running connectors"),
            "MiB",
            median(rss_full.clone()),
        )
        .baseline("no connectors", median(rss_idle.clone()))
        .target(Target::AtMost(80.0)),
    );
    rows.push(
        Row::new(
            "footprint",
            format!("idle RSS, {} running connectors", s.stored),
            "MiB",
            median(rss_stored),
        )
        .baseline("no connectors", median(rss_idle)),
    );
    rows.push(
        Row::new(
            "footprint",
            "start-up to /health 200, empty database",
            "ms",
            median(start_empty.clone()),
        )
        .baseline("fixed-response HTTP server", median(base_start))
        .target(Target::Below(150.0)),
    );
    rows.push(
        Row::new(
            "footprint",
            format!("start-up to /health 200, {} stored connectors", s.stored),
            "ms",
            median(start_stored),
        )
        .baseline("empty database", median(start_empty))
        .target(Target::Below(1000.0)),
    );
    rows.push(Row::new(
        "footprint",
        format!("start-up until all {} tasks RUNNING", s.stored),
        "ms",
        median(all_running),
    ));
    rows.push(
        Row::new(
            "footprint",
            if stripped {
                "release binary size (stripped)"
            } else {
                "release binary size (NOT stripped)"
            },
            "MiB",
            size,
        )
        .target(Target::AtMost(15.0)),
    );
    Ok(())
}

// ----- main ------------------------------------------------------------------------------------------------

fn machine() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map(|kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_else(|| "unknown".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores ({cpu}), {mem} memory")
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.serve_baseline {
        return match serve_baseline() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    match run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("liteconnect-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Res<()> {
    for s in &args.scenarios {
        if !SCENARIOS.contains(&s.as_str()) {
            return Err(format!(
                "Unknown scenario '{s}'; the scenarios are: {}",
                SCENARIOS.join(", ")
            )
            .into());
        }
    }
    let me = std::env::current_exe()?;
    let bin = me.with_file_name(format!("liteconnect{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        return Err(format!(
            "{} does not exist: build it first with `cargo build --release` (this tool builds nothing)",
            bin.display()
        )
        .into());
    }
    if let (Ok(b), Ok(m)) = (
        std::fs::metadata(&bin).and_then(|m| m.modified()),
        std::fs::metadata(&me).and_then(|m| m.modified()),
    ) {
        if b + Duration::from_secs(600) < m {
            eprintln!("warning: {} is older than this benchmark; run `cargo build --release` if the sources changed", bin.display());
        }
    }
    let quick = args.quick;
    let settings = Settings {
        runs: if quick { 1 } else { args.runs.max(1) },
        lines: args
            .lines
            .unwrap_or(if quick { 100_000 } else { 1_000_000 }),
        window: Duration::from_secs(if quick { 2 } else { 10 }),
        log_window: Duration::from_secs(if quick { 2 } else { 5 }),
        connectors: 100,
        stored: if quick { 200 } else { 1000 },
        tmp: args.tmp.clone().unwrap_or_else(std::env::temp_dir),
        bin,
        me,
    };
    let selected: Vec<&str> = if args.scenarios.is_empty() {
        SCENARIOS.to_vec()
    } else {
        SCENARIOS
            .iter()
            .copied()
            .filter(|s| args.scenarios.iter().any(|a| a == s))
            .collect()
    };
    eprintln!(
        "liteconnect-bench: {} on {}",
        settings.bin.display(),
        machine()
    );
    eprintln!(
        "  {} run(s) per figure, {} pipeline lines, scenarios: {}",
        settings.runs,
        settings.lines,
        selected.join(", ")
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let inputs = TempDir::new(&settings, "inputs")?;
        let mut ctx = Ctx { settings: settings.clone(), input: None, _inputs: inputs, string_pipeline: None };
        let mut rows = Vec::new();
        for name in &selected {
            eprintln!("scenario {name}");
            let started = Instant::now();
            match *name {
                "pipeline" => scenario_pipeline(&mut ctx, &mut rows).await?,
                "log" => scenario_log(&mut ctx, &mut rows).await?,
                "group-commit" => scenario_group_commit(&mut ctx, &mut rows).await?,
                "rest" => scenario_rest(&mut ctx, &mut rows).await?,
                "footprint" => scenario_footprint(&mut ctx, &mut rows).await?,
                "durability" => scenario_durability(&mut ctx, &mut rows).await?,
                "scale" => scenario_scale(&mut ctx, &mut rows).await?,
                _ => unreachable!("checked above"),
            }
            eprintln!("  ({:.0} s)", started.elapsed().as_secs_f64());
        }
        println!("\nliteconnect-bench — {}; medians of {} run(s)\n", machine(), settings.runs);
        print_table(&rows);
        println!("ratio = liteconnect ÷ baseline (for rates, the fraction of the baseline reached; for times and sizes, how many times the baseline).");
        Ok::<(), Error>(())
    })
}
