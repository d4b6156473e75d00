//! The footprint scenario: resident memory idle and with connectors, start-up time with an empty and a
//! full database, and the size of the release binary.

use std::process::Command;
use std::time::Duration;

use crate::report::{median, Row, Target};
use crate::rest::spawn_baseline_server;
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings};

/// Figures of fresh workers, one per run, and of the baseline server.
#[derive(Default)]
struct Fresh {
    rss_idle: Vec<f64>,
    rss_full: Vec<f64>,
    start_empty: Vec<f64>,
    base_start: Vec<f64>,
    base_rss: Vec<f64>,
    shutdown: Vec<f64>,
}

/// Figures of a worker restarted over a database of `stored` connectors, one per run.
#[derive(Default)]
struct Stored {
    start: Vec<f64>,
    all_running: Vec<f64>,
    rss: Vec<f64>,
}

/// Starts a worker on an empty database, measures it idle and with `connectors` connectors, then the
/// baseline server; `runs` times.
async fn fresh_runs(s: &Settings) -> Res<Fresh> {
    let mut f = Fresh::default();
    for run in 0..s.runs {
        let dir = TempDir::new(s, "footprint")?;
        let w = Worker::spawn(s, dir.path(), &dir.path().join("liteconnect.db"), &[]).await?;
        let t = w.wait_healthy().await?;
        f.start_empty.push(t.as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_secs(1)).await;
        f.rss_idle.push(w.rss_mib()?);
        w.create_idle_connectors(s.connectors).await?;
        w.wait_all_running(s.connectors).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        f.rss_full.push(w.rss_mib()?);
        // Connections a client left open must not hold the exit: one idle keep-alive connection after a
        // full request, one that never sent a byte, and one with half a request.
        let held = hold_connections(&w.url)?;
        f.shutdown.push(w.stop_timed()?.as_secs_f64() * 1000.0);
        drop(held);

        let b = spawn_baseline_server(s).await?;
        let t = b.wait_healthy().await?;
        f.base_start.push(t.as_secs_f64() * 1000.0);
        f.base_rss.push(b.rss_mib()?);
        b.stop()?;
        eprintln!(
            "  footprint run {}/{}: start-up {:.1} ms, idle {:.1} MiB, {} connectors {:.1} MiB, exit {:.1} ms after SIGTERM",
            run + 1,
            s.runs,
            f.start_empty[run],
            f.rss_idle[run],
            s.connectors,
            f.rss_full[run],
            f.shutdown[run]
        );
    }
    Ok(f)
}

/// Opens three connections to the worker at `url` (`http://host:port`) and leaves them open: a keep-alive
/// connection whose request was answered, a silent one, and one holding half a request's headers (a
/// request whose headers have all arrived is being handled, and is given up to 10 s to finish).
fn hold_connections(url: &str) -> Res<Vec<std::net::TcpStream>> {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut answered = std::net::TcpStream::connect(addr)?;
    answered.write_all(
        format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: keep-alive\r\n\r\n")
            .as_bytes(),
    )?;
    let mut buf = [0u8; 512];
    let n = answered.read(&mut buf)?;
    if n == 0 {
        return Err("the worker closed a keep-alive connection before answering".into());
    }
    let silent = std::net::TcpStream::connect(addr)?;
    let mut half = std::net::TcpStream::connect(addr)?;
    half.write_all(b"POST /connectors HTTP/1.1\r\nContent-Len")?;
    Ok(vec![answered, silent, half])
}

/// A database with many stored connectors, prepared once, then started `runs` times.
async fn stored_runs(s: &Settings) -> Res<Stored> {
    let dir = TempDir::new(s, "stored")?;
    let db = dir.path().join("liteconnect.db");
    {
        let w = Worker::spawn(s, dir.path(), &db, &[]).await?;
        w.wait_healthy().await?;
        eprintln!("  storing {} connectors", s.stored);
        w.create_idle_connectors(s.stored).await?;
        w.wait_all_running(s.stored).await?;
        w.stop()?;
    }
    let mut st = Stored::default();
    for run in 0..s.runs {
        let w = Worker::spawn(s, dir.path(), &db, &[]).await?;
        let t = w.wait_healthy().await?;
        st.start.push(t.as_secs_f64() * 1000.0);
        w.wait_all_running(s.stored).await?;
        st.all_running
            .push(w.spawned.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_secs(1)).await;
        st.rss.push(w.rss_mib()?);
        w.stop()?;
        eprintln!(
            "  stored run {}/{}: healthy after {:.0} ms, all running after {:.0} ms, {:.1} MiB",
            run + 1,
            s.runs,
            st.start[run],
            st.all_running[run],
            st.rss[run]
        );
    }
    Ok(st)
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let f = fresh_runs(&s).await?;
    let st = stored_runs(&s).await?;
    let size = std::fs::metadata(&s.bin)?.len() as f64 / (1024.0 * 1024.0);
    let stripped = Command::new("file")
        .arg(&s.bin)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(", stripped"))
        .unwrap_or(false);
    let exit = format!(
        "exit after SIGTERM, {} connectors, 3 idle client connections held open",
        s.connectors
    );
    rows.push(row(exit, "ms", median(f.shutdown.clone())).target(Target::AtMost(200.0)));
    push_rows(rows, &s, f, st);
    let binary = if stripped {
        "release binary size (stripped)"
    } else {
        "release binary size (NOT stripped)"
    };
    rows.push(row(binary, "MiB", size).target(Target::AtMost(15.0)));
    Ok(())
}

fn push_rows(rows: &mut Vec<Row>, s: &Settings, f: Fresh, st: Stored) {
    const FIXED: &str = "fixed-response HTTP server";
    let c = s.connectors;
    let (idle, empty) = (median(f.rss_idle), median(f.start_empty));
    rows.push(
        row("idle RSS, no connectors", "MiB", idle)
            .baseline(FIXED, median(f.base_rss))
            .target(Target::AtMost(20.0)),
    );
    let running = format!("idle RSS, {c} running connectors");
    rows.push(
        row(running, "MiB", median(f.rss_full))
            .baseline("no connectors", idle)
            .target(Target::AtMost(80.0)),
    );
    let stored = format!("idle RSS, {} running connectors", s.stored);
    rows.push(row(stored, "MiB", median(st.rss)).baseline("no connectors", idle));
    rows.push(
        row("start-up to /health 200, empty database", "ms", empty)
            .baseline(FIXED, median(f.base_start))
            .target(Target::Below(150.0)),
    );
    let start = format!("start-up to /health 200, {} stored connectors", s.stored);
    rows.push(
        row(start, "ms", median(st.start))
            .baseline("empty database", empty)
            .target(Target::Below(1000.0)),
    );
    let all = format!("start-up until all {} tasks RUNNING", s.stored);
    rows.push(row(all, "ms", median(st.all_running)));
}

/// A footprint row.
fn row(metric: impl Into<String>, unit: &'static str, value: f64) -> Row {
    Row::new("footprint", metric, unit, value)
}
