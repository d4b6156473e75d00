//! The log scenario: the verifiable source into the log and the verifiable sink out of it, against rows
//! of the same shape into and out of a bare SQLite table.

use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::json;

use crate::baseline::{sqlite_insert_baseline, sqlite_read_baseline};
use crate::report::{fmt_num, measure, median, Row};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings, VERIFIABLE_SINK, VERIFIABLE_SOURCE};

pub(crate) struct LogRun {
    pub(crate) source_rate: f64,
    sink_rate: f64,
    payload_bytes_per_record: f64,
    file_bytes_per_record: f64,
}

/// Runs the verifiable source unthrottled with `tasks` tasks for the log window, then (with `read_back`)
/// a verifiable sink over what it wrote.
pub(crate) async fn log_run(settings: &Settings, tasks: usize, read_back: bool) -> Res<LogRun> {
    let dir = TempDir::new(settings, "log")?;
    let db = dir.path().join("liteconnect.db");
    let w = Worker::spawn(settings, dir.path(), &db, &[]).await?;
    w.wait_healthy().await?;
    let source_rate = source_rate(&w, settings.log_window, tasks).await?;
    w.expect(reqwest::Method::PUT, "/connectors/vsource/stop", 204)
        .await?;
    w.wait_for("the source to stop", Duration::from_millis(20), || async {
        let (_, st) = w.api.get("/connectors/vsource/status").await?;
        Ok(st["connector"]["state"] == "STOPPED"
            && st["tasks"].as_array().is_some_and(|t| t.is_empty()))
    })
    .await?;
    let total = w.source_produced("vsource").await?;
    let mut sink_rate = f64::NAN;
    if read_back {
        let started = Instant::now();
        w.create(
            "vsink",
            json!({"connector.class": VERIFIABLE_SINK, "tasks.max": "1", "topics": "vlog"}),
        )
        .await?;
        w.wait_sink_committed("vsink", Duration::from_millis(5), total)
            .await?;
        sink_rate = total as f64 / started.elapsed().as_secs_f64();
    }
    w.stop()?;
    let (count, payload) = stored(&db, total)?;
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

/// Creates the verifiable source `vsource` with `tasks` tasks and returns the records it stores a second
/// over `window`, measured between two readings after a warm-up so that start-up is not counted.
async fn source_rate(w: &Worker, window: Duration, tasks: usize) -> Res<f64> {
    let config = json!({"connector.class": VERIFIABLE_SOURCE, "tasks.max": tasks.to_string(), "topic": "vlog", "throughput": "-1"});
    connector_rate(w, window, "vsource", config, ("seqno", 1)).await
}

/// Creates the source `name` and returns the records it stores a second over `window`, read as the sum
/// of its offsets' `field` plus `plus` (what one stored offset counts), between two readings after a
/// warm-up so that start-up is not counted.
pub(crate) async fn connector_rate(
    w: &Worker,
    window: Duration,
    name: &str,
    config: serde_json::Value,
    (field, plus): (&str, i64),
) -> Res<f64> {
    w.create(name, config).await?;
    let produced = || w.offset_sum(name, field, plus);
    w.wait_for(
        "the source to start writing",
        Duration::from_millis(20),
        || async { Ok(produced().await? > 0) },
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (t1, s1) = (Instant::now(), produced().await?);
    tokio::time::sleep(window).await;
    let (s2, t2) = (produced().await?, Instant::now());
    Ok((s2 - s1) as f64 / (t2 - t1).as_secs_f64())
}

/// The log's record count and key + value bytes, checked against the `total` the source stored offsets for.
fn stored(db: &std::path::Path, total: i64) -> Res<(i64, i64)> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
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
    Ok((count, payload))
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
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
    // A records/s rate as the record bytes it moves.
    let bytes_row = |rate: f64| {
        Row::new(
            "log",
            "same, key + value bytes",
            "MB/s",
            rate * payload / 1e6,
        )
    };
    rows.push(
        Row::new(
            "log",
            "verifiable source → log (1 task, unthrottled)",
            "records/s",
            source,
        )
        .baseline("bare SQLite insert", n as f64 / insert),
    );
    rows.push(bytes_row(source));
    rows.push(
        Row::new("log", "log → verifiable sink", "records/s", sink)
            .baseline("bare SQLite read, 2,000 a query", n as f64 / read),
    );
    rows.push(bytes_row(sink));
    rows.push(Row::new(
        "log",
        "database bytes per record (file + WAL)",
        "B",
        on_disk,
    ));
    Ok(())
}
