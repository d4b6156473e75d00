//! The scrape scenario: what one `GET /metrics` costs the worker with many connectors running.
//!
//! A worker runs `stored` idle connectors (1,000 in a full run). Its CPU time (utime + stime from
//! `/proc/<pid>/stat`) is read around a series of sequential scrapes; the CPU an idle worker spends over
//! the same wall time, measured just before, is subtracted, and the rest divided by the number of scrapes.

use std::time::{Duration, Instant};

use crate::report::{fmt_num, median, Row, Target};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res};

/// One run's figures.
struct Run {
    /// Worker CPU per scrape, in milliseconds.
    cpu_ms: f64,
    /// Idle worker CPU over one scrape's wall time, in milliseconds.
    idle_ms: f64,
    /// Median wall time of a scrape, as the client sees it, in milliseconds.
    latency_ms: f64,
    /// Bytes of one scrape.
    bytes: usize,
    /// Samples in one scrape.
    samples: usize,
}

/// Scrapes `/metrics` `n` times in a row; answers the wall time of each and the last body.
async fn scrapes(w: &Worker, n: usize) -> Res<(Vec<f64>, String)> {
    let url = format!("{}/metrics", w.url);
    let mut times = Vec::with_capacity(n);
    let mut last = String::new();
    for _ in 0..n {
        let started = Instant::now();
        let r = w.api.http().get(&url).send().await?;
        if r.status() != 200 {
            return Err(format!("GET /metrics answered {}", r.status()).into());
        }
        last = r.text().await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((times, last))
}

async fn one_run(w: &Worker, n: usize) -> Res<Run> {
    // Warm up, then measure an idle stretch as long as the scrapes are expected to take.
    let (warm, body) = scrapes(w, 3).await?;
    let expected = Duration::from_secs_f64((median(warm) * n as f64 / 1000.0).clamp(1.0, 60.0));
    let idle_cpu = w.cpu()?;
    let idle_started = Instant::now();
    tokio::time::sleep(expected).await;
    let idle = (w.cpu()? - idle_cpu).as_secs_f64() / idle_started.elapsed().as_secs_f64();
    let cpu = w.cpu()?;
    let started = Instant::now();
    let (times, _) = scrapes(w, n).await?;
    let wall = started.elapsed().as_secs_f64();
    let spent = (w.cpu()? - cpu).as_secs_f64();
    let per_scrape = ((spent - idle * wall) / n as f64).max(0.0);
    Ok(Run {
        cpu_ms: per_scrape * 1000.0,
        idle_ms: idle * wall / n as f64 * 1000.0,
        latency_ms: median(times),
        bytes: body.len(),
        samples: body.lines().filter(|l| !l.starts_with('#')).count(),
    })
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let connectors = s.stored;
    let n = if s.runs == 1 { 50 } else { 200 };
    let dir = TempDir::new(&s, "scrape")?;
    let w = Worker::spawn(&s, dir.path(), &dir.path().join("worker.db"), &[]).await?;
    w.wait_healthy().await?;
    eprintln!("  creating {connectors} connectors");
    w.create_idle_connectors(connectors).await?;
    w.wait_all_running(connectors).await?;
    let mut runs = Vec::new();
    for i in 0..s.runs {
        let r = one_run(&w, n).await?;
        eprintln!(
            "  scrape run {}/{}: {} ms CPU per scrape (idle {} ms), {} ms latency, {} samples, {} bytes",
            i + 1,
            s.runs,
            fmt_num(r.cpu_ms),
            fmt_num(r.idle_ms),
            fmt_num(r.latency_ms),
            r.samples,
            fmt_num(r.bytes as f64)
        );
        runs.push(r);
    }
    w.stop()?;
    let med = |f: fn(&Run) -> f64| median(runs.iter().map(f).collect());
    let samples = med(|r| r.samples as f64);
    rows.push(
        Row::new(
            "scrape",
            format!(
                "worker CPU per GET /metrics, {connectors} connectors ({} samples)",
                fmt_num(samples)
            ),
            "ms",
            med(|r| r.cpu_ms),
        )
        .baseline(
            "idle worker CPU over the same wall time",
            med(|r| r.idle_ms),
        )
        .target(Target::Below(10.0)),
    );
    rows.push(Row::new(
        "scrape",
        format!("GET /metrics latency, {connectors} connectors"),
        "ms",
        med(|r| r.latency_ms),
    ));
    rows.push(Row::new(
        "scrape",
        format!("GET /metrics body, {connectors} connectors"),
        "KiB",
        med(|r| r.bytes as f64) / 1024.0,
    ));
    Ok(())
}
