//! The webhook scenario: clients on keep-alive connections post JSON arrays of 100 records to the webhook
//! source, each answered only once its records are committed to the local log; against a server that
//! reads the same requests and answers 200 without doing anything with them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::report::{fmt_num, median, micros_since, Load, Row};
use crate::worker::{TempDir, Worker};
use crate::{measured_runs, Error, Res, Settings};

/// Concurrent client connections.
const CONNS: usize = 16;
/// Records in one request body.
const RECORDS: usize = 100;

/// A JSON array of `RECORDS` objects of about 100 bytes each.
fn body() -> Vec<u8> {
    let items: Vec<_> = (0..RECORDS)
        .map(|i| json!({"device": format!("sensor-{:04}", i), "seq": i, "temperature": 21.5, "humidity": 40, "status": "ok-ok-ok-ok-ok-ok"}))
        .collect();
    serde_json::to_vec(&items).expect("json")
}

/// Reads one HTTP/1.1 message head and its `Content-Length` body from `sock` into `buf`; returns the head
/// and the body's length, or `None` when the peer closed the connection.
async fn read_message(
    sock: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
) -> Res<Option<(String, usize)>> {
    let mut chunk = [0u8; 16 * 1024];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length = head
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let total = end + 4 + length;
    while buf.len() < total {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    buf.drain(..total);
    Ok(Some((head, length)))
}

/// One client: posts `body` on a keep-alive connection until `deadline`; returns latencies (µs) and errors.
async fn client(addr: String, body: Arc<Vec<u8>>, deadline: Instant) -> Res<(Vec<u32>, usize)> {
    let mut sock = tokio::net::TcpStream::connect(&addr).await?;
    sock.set_nodelay(true)?;
    let mut request = format!(
        "POST /ingest HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let (mut latencies, mut errors, mut buf) = (Vec::new(), 0usize, Vec::new());
    while Instant::now() < deadline {
        let t = Instant::now();
        sock.write_all(&request).await?;
        match read_message(&mut sock, &mut buf).await? {
            Some((head, _))
                if head
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|c| c.starts_with('2')) => {}
            Some(_) => errors += 1,
            None => return Err("the server closed the connection".into()),
        }
        latencies.push(micros_since(t));
    }
    Ok((latencies, errors))
}

async fn load(addr: &str, window: Duration) -> Res<Load> {
    let body = Arc::new(body());
    let started = Instant::now();
    let deadline = started + window;
    let clients =
        (0..CONNS).map(|_| tokio::spawn(client(addr.to_string(), body.clone(), deadline)));
    let results = futures::future::try_join_all(clients).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let errors = results
        .iter()
        .map(|r| r.as_ref().map_or(1, |(_, e)| *e))
        .sum();
    let latencies = results
        .into_iter()
        .flat_map(|r| r.map(|(l, _)| l).unwrap_or_default())
        .collect();
    Ok(Load::of(latencies, errors, elapsed))
}

/// The baseline: reads each request whole and answers `200 {}` at once, on a runtime of its own.
fn spawn_null_server() -> Res<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((mut sock, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    while let Ok(Some(_)) = read_message(&mut sock, &mut buf).await {
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                        if sock.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    Ok(addr)
}

/// One run against a fresh worker with the webhook source.
async fn webhook_run(s: &Settings) -> Res<Load> {
    let dir = TempDir::new(s, "webhook")?;
    let w = Worker::spawn(s, dir.path(), &dir.path().join("bench.db"), &[]).await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let addr = format!("127.0.0.1:{port}");
    w.create(
        "webhook",
        json!({"connector.class": "WebhookSource", "tasks.max": "1", "listener": format!("http://{addr}"),
               "path": "/ingest", "topic": "bench", "request.max.bytes": "10485760"}),
    )
    .await?;
    let http = reqwest::Client::new();
    w.wait_for("the webhook to answer", Duration::from_millis(50), || {
        let (http, url) = (http.clone(), format!("http://{addr}/ingest"));
        async move {
            let r = http
                .post(&url)
                .header("content-type", "application/json")
                .body("[]")
                .send()
                .await;
            Ok::<_, Error>(r.is_ok_and(|r| r.status() == 201))
        }
    })
    .await?;
    let result = load(&addr, s.window).await;
    w.stop()?;
    result
}

pub(crate) async fn scenario(ctx: &mut crate::Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let describe = |r: &Load| {
        let figures = format!(
            "{} req/s, {} records/s (p50 {:.2} ms, p99 {:.2} ms, {} errors)",
            fmt_num(r.rate),
            fmt_num(r.rate * RECORDS as f64),
            r.p50_ms,
            r.p99_ms,
            r.errors
        );
        (figures, r.errors)
    };
    let runs = measured_runs(
        &s,
        "webhook",
        "webhook requests",
        || webhook_run(&s),
        describe,
    )
    .await?;
    let null = spawn_null_server()?;
    let mut base = Vec::new();
    for _ in 0..s.runs {
        base.push(load(&null, s.window).await?);
    }
    const NULL: &str = "do-nothing HTTP server";
    let med = |xs: &[Load], f: fn(&Load) -> f64| median(xs.iter().map(f).collect());
    let what = format!("POST {RECORDS}-record JSON arrays, {CONNS} connections, 201 after commit");
    rows.push(
        Row::new("webhook", what, "req/s", med(&runs, |l| l.rate))
            .baseline(NULL, med(&base, |l| l.rate)),
    );
    rows.push(
        Row::new(
            "webhook",
            "  records",
            "records/s",
            med(&runs, |l| l.rate * RECORDS as f64),
        )
        .baseline(NULL, med(&base, |l| l.rate * RECORDS as f64)),
    );
    rows.extend(Row::latencies("webhook", NULL, |f| {
        (med(&runs, f), med(&base, f))
    }));
    Ok(())
}
