//! The control plane at scale: creating 2,000 connectors (400 with --quick), the expanded list
//! (`?expand=status&expand=info`) one request at a time over them, and create-then-delete cycles beside
//! them; with `storage.synchronous` at its default and at FULL.

use std::sync::Arc;
use std::time::Instant;

use crate::report::{fmt_num, median, Load, Row, Target};
use crate::rest::{load, EXPANDED};
use crate::worker::{TempDir, Worker};
use crate::{measured_runs, Ctx, Res, Settings};

/// Twice the stored connectors of the footprint scenario: 2,000, 400 with --quick.
fn many(s: &Settings) -> usize {
    s.stored * 2
}

/// What one worker with `many` connectors measured.
struct ControlRun {
    /// Seconds to create them all, eight requests in flight.
    create_s: f64,
    /// The expanded list, one connection.
    list: Load,
    list_len: usize,
    /// Create-then-delete cycles a second beside them.
    cycles: f64,
}

async fn control_run(s: &Settings, synchronous: &str) -> Res<ControlRun> {
    let dir = TempDir::new(s, "control")?;
    // More tasks than the default `tasks.max.total` of 1,000 allows.
    let extra = [
        ("storage.synchronous", synchronous),
        ("tasks.max.total", "10000"),
    ];
    let w = Worker::spawn(s, dir.path(), &dir.path().join("liteconnect.db"), &extra).await?;
    w.wait_healthy().await?;
    let started = Instant::now();
    w.create_idle_connectors(many(s)).await?;
    let create_s = started.elapsed().as_secs_f64();
    w.wait_all_running(many(s)).await?;
    let (_, body) = w.api.get(EXPANDED).await?;
    let list_len = body.to_string().len();
    let list = load(&w.url, Arc::new(vec![EXPANDED.to_string()]), 1, s.window).await?;
    let cycles = crate::rest::create_delete_cycles(&w, s.window).await?;
    w.stop()?;
    Ok(ControlRun {
        create_s,
        list,
        list_len,
        cycles,
    })
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let n = many(&s);
    for synchronous in ["NORMAL", "FULL"] {
        let name = format!("control {synchronous}");
        let runs = measured_runs(
            &s,
            &name,
            "list requests",
            || control_run(&s, synchronous),
            |r: &ControlRun| {
                let figures = format!(
                    "{n} created in {:.2} s, expanded list {:.2} ms p50 ({} KB), {:.0} create+delete/s",
                    r.create_s,
                    r.list.p50_ms,
                    r.list_len / 1024,
                    r.cycles
                );
                (figures, r.list.errors)
            },
        )
        .await?;
        push_rows(rows, n, synchronous, &runs);
    }
    Ok(())
}

fn push_rows(rows: &mut Vec<Row>, n: usize, synchronous: &str, runs: &[ControlRun]) {
    let med = |f: fn(&ControlRun) -> f64| median(runs.iter().map(f).collect());
    let row = |metric: String, unit, value| Row::new("control", metric, unit, value);
    let sync = format!("storage.synchronous={synchronous}");
    let many = fmt_num(n as f64);
    let create = format!("create {many} connectors, 8 in flight, {sync}");
    rows.push(row(create, "s", med(|r| r.create_s)).target(Target::AtMost(1.0)));
    if synchronous == "NORMAL" {
        let kb = runs.last().map_or(0, |r| r.list_len / 1024);
        let list = format!("GET {EXPANDED}, {many} connectors ({kb} KB), one connection, p50");
        rows.push(row(list, "ms", med(|r| r.list.p50_ms)).target(Target::AtMost(15.0)));
        rows.push(row("  the same, p99".into(), "ms", med(|r| r.list.p99_ms)));
    }
    let cycles = format!("create-then-delete cycles beside {many} connectors, {sync}");
    rows.push(row(cycles, "cycles/s", med(|r| r.cycles)).target(Target::AtLeast(3000.0)));
}
