//! The idle scenario: 1,000 connectors (200 with --quick) with nothing to do, half sources with nothing
//! to read and half sinks that have consumed everything, and the worker's CPU time (utime + stime from
//! `/proc`) over 30 seconds (6 with --quick) of doing nothing, with its RSS and its thread count.

use std::time::Duration;

use serde_json::json;

use crate::report::{median, Row, Target};
use crate::worker::{TempDir, Worker};
use crate::{measured_runs, Ctx, Res, Settings};

const MOCK_SINK: &str = "org.apache.kafka.connect.tools.MockSinkConnector";

/// The topic the idle sinks read: one record, consumed before the measurement starts.
const TOPIC: &str = "idle";

/// Three load windows: 30 s, 6 s with --quick.
fn idle_window(s: &Settings) -> Duration {
    s.window * 3
}

struct IdleRun {
    /// Percent of one core over the window.
    cpu_pct: f64,
    rss_mib: f64,
    /// The worker's threads at the end of the window.
    threads: f64,
}

/// Which connectors sit idle.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Kafka's MockSourceConnector and MockSinkConnector.
    Mock,
    /// FileStreamSource on empty files and FileStreamSink writing to files, on a silent topic.
    Files,
}

async fn idle_run(s: &Settings) -> Res<IdleRun> {
    idle_run_of(s, Kind::Mock).await
}

async fn idle_run_of(s: &Settings, kind: Kind) -> Res<IdleRun> {
    let dir = TempDir::new(s, "idle")?;
    let w = Worker::spawn(s, dir.path(), &dir.path().join("liteconnect.db"), &[]).await?;
    w.wait_healthy().await?;
    let produced = w
        .api
        .request(reqwest::Method::POST, &format!("/topics/{TOPIC}"))
        .header("content-type", "application/vnd.kafka.json.v2+json")
        .body(r#"{"records": [{"value": "x"}]}"#)
        .send()
        .await?;
    if !produced.status().is_success() {
        let status = produced.status();
        return Err(format!("producing to {TOPIC}: {status} {}", produced.text().await?).into());
    }
    let sources = s.stored / 2;
    let sinks = s.stored - sources;
    match kind {
        Kind::Mock => w.create_idle_connectors(sources).await?,
        Kind::Files => {
            for i in 0..sources {
                let file = dir.path().join(format!("in-{i:04}.txt"));
                std::fs::write(&file, "")?;
                let config = json!({"connector.class": "FileStreamSource", "tasks.max": "1",
                    "file": file.display().to_string(), "topic": format!("files-{i:04}")});
                w.create(&format!("c{i:04}"), config).await?;
            }
        }
    }
    for i in 0..sinks {
        let config = match kind {
            Kind::Mock => json!({"connector.class": MOCK_SINK, "tasks.max": "1", "topics": TOPIC}),
            Kind::Files => json!({"connector.class": "FileStreamSink", "tasks.max": "1",
                "topics": TOPIC, "file": dir.path().join(format!("out-{i:04}.txt")).display().to_string()}),
        };
        w.create(&format!("k{i:04}"), config).await?;
    }
    w.wait_all_running(s.stored).await?;
    for i in 0..sinks {
        w.wait_sink_committed(&format!("k{i:04}"), Duration::from_millis(50), 1)
            .await?;
    }
    // Let start-up work (status writes, first commits) settle before the window opens.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let window = idle_window(s);
    let cpu0 = w.cpu()?;
    tokio::time::sleep(window).await;
    let cpu = (w.cpu()? - cpu0).as_secs_f64();
    let rss_mib = w.rss_mib()?;
    let threads = w.threads()?;
    w.stop()?;
    Ok(IdleRun {
        cpu_pct: cpu / window.as_secs_f64() * 100.0,
        rss_mib,
        threads,
    })
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let runs = measured_runs(
        &s,
        "idle",
        "runs",
        || idle_run(&s),
        |r: &IdleRun| {
            let figures = format!(
                "{:.2} % of a core, {:.1} MiB, {} threads",
                r.cpu_pct, r.rss_mib, r.threads
            );
            (figures, 0)
        },
    )
    .await?;
    let n = s.stored;
    let secs = idle_window(&s).as_secs();
    rows.push(
        Row::new(
            "idle",
            format!("CPU of {n} idle connectors (half sources, half sinks) over {secs} s"),
            "% core",
            median(runs.iter().map(|r| r.cpu_pct).collect()),
        )
        .target(Target::Below(1.0)),
    );
    rows.push(
        Row::new(
            "idle",
            "  RSS with them running",
            "MiB",
            median(runs.iter().map(|r| r.rss_mib).collect()),
        )
        .target(Target::AtMost(40.0)),
    );
    rows.push(Row::new(
        "idle",
        "  the worker's threads",
        "threads",
        median(runs.iter().map(|r| r.threads).collect()),
    ));
    Ok(())
}

/// The idle scenario with FileStream connectors, beside the same number of mock connectors in the same
/// run (the baseline: connectors that never look at anything).
pub(crate) async fn files_scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let describe = |r: &IdleRun| {
        (
            format!(
                "{:.2} % of a core, {:.1} MiB, {} threads",
                r.cpu_pct, r.rss_mib, r.threads
            ),
            0,
        )
    };
    let files = measured_runs(
        &s,
        "idle-files",
        "runs",
        || idle_run_of(&s, Kind::Files),
        describe,
    )
    .await?;
    let mock = measured_runs(
        &s,
        "idle-files",
        "mock runs",
        || idle_run_of(&s, Kind::Mock),
        describe,
    )
    .await?;
    let n = s.stored;
    let secs = idle_window(&s).as_secs();
    let cpu = |runs: &[IdleRun]| median(runs.iter().map(|r| r.cpu_pct).collect());
    let rss = |runs: &[IdleRun]| median(runs.iter().map(|r| r.rss_mib).collect());
    rows.push(
        Row::new(
            "idle-files",
            format!("CPU of {n} idle FileStream connectors (sources on empty files, sinks on a silent topic) over {secs} s"),
            "% core",
            cpu(&files),
        )
        .baseline(format!("{n} idle mock connectors"), cpu(&mock))
        .target(Target::Below(1.0)),
    );
    rows.push(
        Row::new("idle-files", "  RSS with them running", "MiB", rss(&files))
            .baseline(format!("{n} idle mock connectors"), rss(&mock))
            .target(Target::AtMost(40.0)),
    );
    Ok(())
}
