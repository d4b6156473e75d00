//! The worker under test as a child process (its temporary directory, address, memory and CPU time), and
//! the REST calls the scenarios make to it through the shared client.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use liteconnect::client::Client;
use serde_json::{json, Value as Json};

use crate::{Res, Settings, DEADLINE, MOCK_SOURCE, STRING_CONVERTER};

/// A directory removed when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(settings: &Settings, what: &str) -> Res<TempDir> {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = settings.tmp.join(format!(
            "liteconnect-bench-{}-{n}-{what}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir(path))
    }
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `liteconnect` process.
pub(crate) struct Worker {
    child: Child,
    pub(crate) url: String,
    /// Its REST API.
    pub(crate) api: Client,
    /// When it was spawned.
    pub(crate) spawned: Instant,
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
    pub(crate) async fn spawn(
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

    pub(crate) async fn attach(mut child: Child, spawned: Instant) -> Res<Worker> {
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
            api: Client::new(url.clone()),
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
    pub(crate) async fn wait_healthy(&self) -> Res<Duration> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if self.api.is_healthy().await {
                return Ok(self.spawned.elapsed());
            }
            if Instant::now() > deadline {
                return Err(format!("{} never became healthy:\n{}", self.url, self.tail()).into());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// VmRSS in MiB.
    pub(crate) fn rss_mib(&self) -> Res<f64> {
        rss_mib(self.pid())
    }

    /// Threads of the process now.
    pub(crate) fn threads(&self) -> Res<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))?;
        Ok(status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or("no Threads in /proc/<pid>/status")?)
    }

    /// User plus system CPU time so far.
    pub(crate) fn cpu(&self) -> Res<Duration> {
        cpu_time(self.pid())
    }

    /// SIGTERM, then a bounded wait; SIGKILL if it does not exit.
    pub(crate) fn stop(self) -> Res<()> {
        self.stop_timed().map(|_| ())
    }

    /// SIGTERM, then a bounded wait; answers how long the process took to exit after the signal.
    pub(crate) fn stop_timed(mut self) -> Res<Duration> {
        let signalled = Instant::now();
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if self.child.try_wait()?.is_some() {
                return Ok(signalled.elapsed());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err("the worker did not stop within 60 s of SIGTERM".into());
            }
            std::thread::sleep(Duration::from_millis(1));
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

// ----- REST calls -----------------------------------------------------------------------------------------

impl Worker {
    /// Creates connector `name`; anything but 201 is an error.
    pub(crate) async fn create(&self, name: &str, config: Json) -> Res<()> {
        let (s, body) = self
            .api
            .post("/connectors", &json!({"name": name, "config": config}))
            .await?;
        if s != 201 {
            return Err(format!("creating {name}: {s} {body}").into());
        }
        Ok(())
    }

    /// Sends `method path` without a body and expects `status`.
    pub(crate) async fn expect(&self, method: reqwest::Method, path: &str, status: u16) -> Res<()> {
        let r = self.api.send(method.clone(), path, None).await?;
        if r.status != status {
            return Err(format!("{method} {path}: {} {}", r.status, r.body).into());
        }
        Ok(())
    }

    /// The connector's offsets, as `GET /connectors/{name}/offsets` shows them.
    async fn offsets(&self, name: &str) -> Res<Vec<Json>> {
        let (s, body) = self.api.get(&format!("/connectors/{name}/offsets")).await?;
        if s != 200 {
            return Err(format!("offsets of {name}: {s} {body}").into());
        }
        Ok(body["offsets"].as_array().cloned().unwrap_or_default())
    }

    /// Sums the sink's committed offsets (the next offset to read, per partition).
    pub(crate) async fn sink_committed(&self, name: &str) -> Res<i64> {
        self.offset_sum(name, "kafka_offset", 0).await
    }

    /// The number of records the verifiable source's tasks have stored (the sum of `seqno + 1`).
    pub(crate) async fn source_produced(&self, name: &str) -> Res<i64> {
        self.offset_sum(name, "seqno", 1).await
    }

    /// The sum over the connector's offsets of `field + plus`.
    pub(crate) async fn offset_sum(&self, name: &str, field: &str, plus: i64) -> Res<i64> {
        let offsets = self.offsets(name).await?;
        Ok(offsets
            .iter()
            .filter_map(|e| e["offset"][field].as_i64())
            .map(|v| v + plus)
            .sum())
    }

    /// Polls `check` every `every` until it holds; an error after [`DEADLINE`], with the worker's last log
    /// lines.
    pub(crate) async fn wait_for<F, Fut>(
        &self,
        what: &str,
        every: Duration,
        mut check: F,
    ) -> Res<()>
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
                return Err(format!("timed out waiting for {what}:\n{}", self.tail()).into());
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Polls every `every` until the sink `name` has committed `at_least` records.
    pub(crate) async fn wait_sink_committed(
        &self,
        name: &str,
        every: Duration,
        at_least: i64,
    ) -> Res<()> {
        let what = format!("{name} to commit {at_least} records");
        self.wait_for(&what, every, || async {
            Ok(self.sink_committed(name).await? >= at_least)
        })
        .await
    }

    /// Waits until every connector is RUNNING with every task RUNNING.
    pub(crate) async fn wait_all_running(&self, count: usize) -> Res<()> {
        self.wait_for("connectors to run", Duration::from_millis(50), || async {
            let (_, body) = self.api.get("/connectors?expand=status").await?;
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
        })
        .await
    }

    /// Creates `count` idle connectors named `c0000`…, eight requests at a time.
    pub(crate) async fn create_idle_connectors(&self, count: usize) -> Res<()> {
        use futures::StreamExt;
        let results: Vec<Res<()>> = futures::stream::iter(0..count)
            .map(|i| async move { self.create(&format!("c{i:04}"), mock_source()).await })
            .buffer_unordered(8)
            .collect()
            .await;
        results.into_iter().collect()
    }
}

/// An idle connector's config.
pub(crate) fn mock_source() -> Json {
    json!({"connector.class": MOCK_SOURCE, "tasks.max": "1"})
}
