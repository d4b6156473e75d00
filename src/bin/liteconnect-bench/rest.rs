//! The REST scenario: status and list requests from 32 keep-alive connections, and create-then-delete
//! cycles, against a server that answers fixed bodies of the same sizes and a bare SQLite table.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::report::{fmt_num, median, micros_since, Load, Row, Target};
use crate::worker::{mock_source, TempDir, Worker};
use crate::{measured_runs, Ctx, Error, Res, Settings};

/// Concurrent connections of the load.
const CONNS: usize = 32;
/// The list with both expansions.
pub(crate) const EXPANDED: &str = "/connectors?expand=status&expand=info";

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
pub(crate) async fn load(
    base: &str,
    paths: Arc<Vec<String>>,
    conns: usize,
    window: Duration,
) -> Res<Load> {
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
                latencies.push(micros_since(t));
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
    Ok(Load::of(all, errors, started.elapsed().as_secs_f64()))
}

/// The baseline HTTP server: answers every request with `200` and a body of the length the path names
/// (`GET /123`), keeping connections open. Runs as a child process so that it competes for the CPU as the
/// worker does.
pub(crate) fn serve_baseline() -> Res<()> {
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

pub(crate) async fn spawn_baseline_server(settings: &Settings) -> Res<Worker> {
    let spawned = Instant::now();
    let child = Command::new(&settings.me)
        .arg("--serve-baseline")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    Worker::attach(child, spawned).await
}

/// What one run against the worker measured.
struct RestRun {
    status: Load,
    list: Load,
    /// The list with both expansions.
    expanded: Load,
    /// Create-then-delete cycles a second.
    cycles: f64,
    /// Worker CPU time per status request, in µs.
    cpu_per_req: f64,
    /// Body sizes of one status answer and of the list, for the baseline server to answer with.
    status_len: usize,
    list_len: usize,
    expanded_len: usize,
}

/// One worker with `connectors` idle connectors under the status load, the list load and the cycles.
async fn rest_run(s: &Settings) -> Res<RestRun> {
    let dir = TempDir::new(s, "rest")?;
    let w = Worker::spawn(s, dir.path(), &dir.path().join("liteconnect.db"), &[]).await?;
    w.wait_healthy().await?;
    w.create_idle_connectors(s.connectors).await?;
    w.wait_all_running(s.connectors).await?;
    let paths: Arc<Vec<String>> = Arc::new(
        (0..s.connectors)
            .map(|i| format!("/connectors/c{i:04}/status"))
            .collect(),
    );
    let api = &w.api;
    let body_len = |path: String| async move {
        let bytes = api
            .request(reqwest::Method::GET, &path)
            .send()
            .await?
            .bytes()
            .await?;
        Ok::<_, Error>(bytes.len())
    };
    let status_len = body_len(paths[0].clone()).await?;
    let cpu0 = w.cpu()?;
    let status = load(&w.url, paths, CONNS, s.window).await?;
    let cpu = (w.cpu()? - cpu0).as_secs_f64();
    let cpu_per_req = cpu / (status.rate * s.window.as_secs_f64()) * 1e6;
    let list_path = "/connectors?expand=status".to_string();
    let list_len = body_len(list_path.clone()).await?;
    let list = load(&w.url, Arc::new(vec![list_path]), CONNS, s.window).await?;
    let expanded_len = body_len(EXPANDED.to_string()).await?;
    let expanded = load(
        &w.url,
        Arc::new(vec![EXPANDED.to_string()]),
        CONNS,
        s.window,
    )
    .await?;
    let cycles = create_delete_cycles(&w, s.window).await?;
    w.stop()?;
    Ok(RestRun {
        status,
        list,
        expanded,
        cycles,
        cpu_per_req,
        status_len,
        list_len,
        expanded_len,
    })
}

/// Create-then-delete cycles, one after another, for `window`; returns cycles a second.
pub(crate) async fn create_delete_cycles(w: &Worker, window: Duration) -> Res<f64> {
    let started = Instant::now();
    let mut cycles = 0u64;
    while started.elapsed() < window {
        let name = format!("cd{cycles}");
        w.create(&name, mock_source()).await?;
        w.expect(reqwest::Method::DELETE, &format!("/connectors/{name}"), 204)
            .await?;
        cycles += 1;
    }
    Ok(cycles as f64 / started.elapsed().as_secs_f64())
}

/// The load against a server that does nothing but answer with bodies of `len` bytes.
async fn baseline_load(s: &Settings, len: usize) -> Res<Load> {
    let b = spawn_baseline_server(s).await?;
    let l = load(&b.url, Arc::new(vec![format!("/{len}")]), CONNS, s.window).await?;
    b.stop()?;
    Ok(l)
}

/// Bare SQLite: two autocommit transactions per cycle, the least a create and a delete must store.
fn sqlite_cycles(s: &Settings) -> Res<f64> {
    let dir = TempDir::new(s, "cycles")?;
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
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let runs = measured_runs(&s, "rest", "requests", || rest_run(&s), |r: &RestRun| {
        let figures = format!(
            "status {} req/s (p50 {:.2} ms, p99 {:.2} ms, {} errors), list {} req/s (p99 {:.2} ms), status+info {} req/s, {:.0} create+delete/s",
            fmt_num(r.status.rate),
            r.status.p50_ms,
            r.status.p99_ms,
            r.status.errors,
            fmt_num(r.list.rate),
            r.list.p99_ms,
            fmt_num(r.expanded.rate),
            r.cycles
        );
        (figures, r.status.errors + r.list.errors + r.expanded.errors)
    })
    .await?;
    let (status_len, list_len, expanded_len) = runs
        .last()
        .map(|r| (r.status_len, r.list_len, r.expanded_len))
        .unwrap_or_default();
    // Baseline: a server that does nothing but answer with a body of the same size.
    let mut base_status = Vec::new();
    let mut base_list = Vec::new();
    let mut base_expanded = Vec::new();
    for _ in 0..s.runs {
        base_status.push(baseline_load(&s, status_len).await?);
        base_list.push(baseline_load(&s, list_len).await?);
        base_expanded.push(baseline_load(&s, expanded_len).await?);
    }
    let base = Baselines {
        status: base_status,
        list: base_list,
        expanded: base_expanded,
        cycles: sqlite_cycles(&s)?,
    };
    push_rows(rows, &s, &runs, &base);
    Ok(())
}

/// What the worker's figures are set against.
struct Baselines {
    status: Vec<Load>,
    list: Vec<Load>,
    expanded: Vec<Load>,
    cycles: f64,
}

fn push_rows(rows: &mut Vec<Row>, s: &Settings, runs: &[RestRun], base: &Baselines) {
    const FIXED: &str = "fixed-response HTTP server";
    let med = |xs: &[&Load], f: fn(&Load) -> f64| median(xs.iter().map(|l| f(l)).collect());
    let status: Vec<&Load> = runs.iter().map(|r| &r.status).collect();
    let list: Vec<&Load> = runs.iter().map(|r| &r.list).collect();
    let base_status: Vec<&Load> = base.status.iter().collect();
    let base_list: Vec<&Load> = base.list.iter().collect();
    let list_len = runs.last().map_or(0, |r| r.list_len);
    let c = s.connectors;
    rows.push(
        Row::new(
            "rest",
            format!("GET /connectors/{{c}}/status, {c} connectors, {CONNS} connections"),
            "req/s",
            med(&status, |l| l.rate),
        )
        .baseline(FIXED, med(&base_status, |l| l.rate))
        .target(Target::AtLeast(15_000.0)),
    );
    let status_ms = |f| (med(&status, f), med(&base_status, f));
    let [p50, p99] = Row::latencies("rest", FIXED, status_ms);
    rows.extend([p50, p99.target(Target::Below(5.0))]);
    rows.push(Row::new(
        "rest",
        "  worker CPU per status request",
        "µs",
        median(runs.iter().map(|r| r.cpu_per_req).collect()),
    ));
    rows.push(
        Row::new(
            "rest",
            format!(
                "GET /connectors?expand=status, {c} connectors ({} KB)",
                list_len / 1024
            ),
            "req/s",
            med(&list, |l| l.rate),
        )
        .baseline(FIXED, med(&base_list, |l| l.rate)),
    );
    rows.extend(Row::latencies("rest", FIXED, |f| {
        (med(&list, f), med(&base_list, f))
    }));
    let expanded: Vec<&Load> = runs.iter().map(|r| &r.expanded).collect();
    let base_expanded: Vec<&Load> = base.expanded.iter().collect();
    let expanded_len = runs.last().map_or(0, |r| r.expanded_len);
    rows.push(
        Row::new(
            "rest",
            format!(
                "GET {EXPANDED}, {c} connectors ({} KB)",
                expanded_len / 1024
            ),
            "req/s",
            med(&expanded, |l| l.rate),
        )
        .baseline(FIXED, med(&base_expanded, |l| l.rate))
        .target(Target::AtLeast(10_000.0)),
    );
    rows.extend(Row::latencies("rest", FIXED, |f| {
        (med(&expanded, f), med(&base_expanded, f))
    }));
    rows.push(
        Row::new(
            "rest",
            "create-then-delete cycles, sequential",
            "cycles/s",
            median(runs.iter().map(|r| r.cycles).collect()),
        )
        .baseline("bare SQLite insert + delete", base.cycles)
        .target(Target::AtLeast(3000.0)),
    );
}
