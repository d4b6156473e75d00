//! The http-sink scenario: a file source into the log and Aiven's HTTP sink out of it to an HTTP server in
//! this process, with batching on (500 records a request) and off (one request a record). Baseline: the
//! same HTTP client posting the same lines to the same server directly, as the sink would.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use warp::Filter;

use crate::baseline::read_lines;
use crate::report::{fmt_num, measure, Row};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings};

const AIVEN: &str = "io.aiven.kafka.connect.http.HttpSinkConnector";
/// Records per request with batching on (Aiven's default `batch.max.size`).
const BATCH: usize = 500;

/// An HTTP server on an ephemeral port that answers 200 to everything and counts the records it got
/// (newline-terminated lines in a batch; one in a body without a newline).
struct Receiver {
    url: String,
    records: Arc<AtomicU64>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Receiver {
    async fn start() -> Res<Receiver> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/ingest", listener.local_addr()?);
        let records = Arc::new(AtomicU64::new(0));
        let counter = records.clone();
        let filter = warp::body::bytes()
            .map(move |body: bytes::Bytes| {
                let lines = body.iter().filter(|b| **b == b'\n').count().max(1);
                counter.fetch_add(lines as u64, Ordering::Relaxed);
                warp::reply::Response::new("ok".into())
            })
            .recover(|_: warp::Rejection| async {
                Ok::<_, std::convert::Infallible>(warp::reply::Response::new("".into()))
            })
            .unify();
        let (stop, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(liteconnect::security::server::serve(
            listener, None, filter, rx,
        ));
        Ok(Receiver { url, records, stop })
    }

    fn count(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// One run: seconds from creating the connectors until the server has every record and the sink's offset
/// is committed at the end.
async fn sink_run(settings: &Settings, input: &Path, lines: usize, batching: bool) -> Res<f64> {
    let receiver = Receiver::start().await?;
    let dir = TempDir::new(settings, "http-sink")?;
    let w = Worker::spawn(
        settings,
        dir.path(),
        &dir.path().join("liteconnect.db"),
        &[],
    )
    .await?;
    w.wait_healthy().await?;
    let started = Instant::now();
    w.create(
        "sink",
        json!({"connector.class": AIVEN, "tasks.max": "1", "topics": "web",
            "http.url": receiver.url, "http.authorization.type": "none",
            "batching.enabled": batching.to_string(), "batch.max.size": BATCH.to_string()}),
    )
    .await?;
    w.create(
        "source",
        json!({"connector.class": "FileStreamSource", "tasks.max": "1",
            "file": input.display().to_string(), "topic": "web"}),
    )
    .await?;
    let all = lines as u64;
    w.wait_for(
        "every record at the server and committed",
        Duration::from_millis(5),
        || async { Ok(receiver.count() >= all && w.sink_committed("sink").await? >= all as i64) },
    )
    .await?;
    let elapsed = started.elapsed().as_secs_f64();
    w.stop()?;
    Ok(elapsed)
}

/// The baseline: the lines posted to the server by one blocking client, `per_request` at a time.
async fn direct_run(input: &Path, per_request: usize) -> Res<f64> {
    let receiver = Receiver::start().await?;
    let lines = read_lines(input)?;
    let url = receiver.url.clone();
    let started = Instant::now();
    tokio::task::spawn_blocking(move || -> Res<()> {
        let client = reqwest::blocking::Client::new();
        for chunk in lines.chunks(per_request) {
            let mut body = Vec::new();
            for line in chunk {
                body.extend_from_slice(line);
                if per_request > 1 {
                    body.push(b'\n');
                }
            }
            let answer = client.post(&url).body(body).send()?;
            if !answer.status().is_success() {
                return Err(format!("the server answered {}", answer.status()).into());
            }
            answer.bytes()?;
        }
        Ok(())
    })
    .await??;
    Ok(started.elapsed().as_secs_f64())
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    // One request a record is far slower: a tenth of the lines keeps its run as long as the batched one's.
    let batched_lines = s.lines;
    let single_lines = (s.lines / 10).max(1);
    for (batching, lines) in [(true, batched_lines), (false, single_lines)] {
        let input = ctx.input(lines)?;
        let per_request = if batching { BATCH } else { 1 };
        let label = if batching { "batched" } else { "single" };
        let direct = measure(&format!("direct POSTs, {label} (s)"), s.runs, || {
            direct_run(&input, per_request)
        })
        .await?;
        let sink = measure(&format!("http sink, {label} (s)"), s.runs, || {
            sink_run(&s, &input, lines, batching)
        })
        .await?;
        let n = lines as f64;
        let metric = if batching {
            format!(
                "file → log → HTTP, batching.enabled, {BATCH} a request, {} lines",
                fmt_num(n)
            )
        } else {
            format!(
                "file → log → HTTP, one request a record, {} lines",
                fmt_num(n)
            )
        };
        rows.push(
            Row::new("http-sink", metric, "records/s", n / sink)
                .baseline("the same client posting directly", n / direct),
        );
    }
    Ok(())
}
