//! The long-run scenario: the String pipeline over ten times the lines (10,000,000 by default) while
//! the log is kept small, against the cost per record of the default run.
//!
//! The worker applies `retention.ms` / `retention.bytes` once a minute, which is about the length of the
//! whole run, so the log is bounded here by `log.buffer.max.bytes`: above three quarters of it, appends
//! delete records every sink has delivered in their own transactions. The run pays for that deletion as
//! it goes, as a long-running worker pays for retention.

use crate::pipeline::{pipeline_run, pipeline_run_with, Conv};
use crate::report::{fmt_num, measure, median, Row, Target};
use crate::{Ctx, Res, LINE_BYTES};

/// The log's cap: about half a million of the pipeline's records.
const LOG_CAP_BYTES: u64 = 50_000_000;

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let t_base = match ctx.string_pipeline {
        Some((t, _)) => t,
        None => {
            let input = ctx.input(s.lines)?;
            measure("pipeline String (s)", s.runs, || {
                pipeline_run(&s, &input, s.lines, Conv::String, false)
            })
            .await?
        }
    };
    let long = s.lines * 10;
    let input = ctx.input(long)?;
    let cap = LOG_CAP_BYTES.to_string();
    let extra = [
        ("log.buffer.max.bytes", cap.as_str()),
        ("log.buffer.full.policy", "pause"),
    ];
    let mut times = Vec::new();
    let mut sizes = Vec::new();
    for run in 0..s.runs {
        let r = pipeline_run_with(&s, &input, long, Conv::String, &extra).await?;
        eprintln!(
            "  pipeline String, {} lines, run {}/{}: {:.2} s, database {:.1} MB at the end",
            fmt_num(long as f64),
            run + 1,
            s.runs,
            r.seconds,
            r.db_bytes as f64 / 1e6
        );
        times.push(r.seconds);
        sizes.push(r.db_bytes as f64);
    }
    let (t_long, db_bytes) = (median(times), median(sizes));
    let per_base = t_base / s.lines as f64 * 1e6;
    let per_long = t_long / long as f64 * 1e6;
    rows.push(
        Row::new(
            "long-run",
            format!(
                "pipeline String, µs per record at {} lines, log.buffer.max.bytes={}",
                fmt_num(long as f64),
                fmt_num(LOG_CAP_BYTES as f64)
            ),
            "µs",
            per_long,
        )
        .baseline(format!("at {} lines", fmt_num(s.lines as f64)), per_base),
    );
    rows.push(
        Row::new(
            "long-run",
            "the same, as a multiple of the cost per record of the default run",
            "×",
            per_long / per_base,
        )
        .target(Target::AtMost(1.2)),
    );
    rows.push(
        Row::new(
            "long-run",
            "database file and WAL at the end of that run",
            "MB",
            db_bytes / 1e6,
        )
        .baseline("input file", (long * LINE_BYTES) as f64 / 1e6),
    );
    Ok(())
}
