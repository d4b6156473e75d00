//! The durability scenario: the pipeline with `storage.synchronous=FULL` against the default NORMAL, each
//! beside a bare SQLite insert with the same setting.

use crate::baseline::{read_lines, sqlite_insert_baseline};
use crate::pipeline::{pipeline_run, Conv};
use crate::report::{measure, Row};
use crate::{Ctx, Res};

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let input = ctx.input(s.lines)?;
    let n = s.lines as f64;
    let (normal, sqlite_normal) = match ctx.string_pipeline {
        Some(x) => x,
        None => {
            let values = read_lines(&input)?;
            let b = measure("bare SQLite insert NORMAL (s)", s.runs, || async {
                sqlite_insert_baseline(&s, &values, None, false)
            })
            .await?;
            (
                measure("pipeline String NORMAL (s)", s.runs, || {
                    pipeline_run(&s, &input, s.lines, Conv::String, false)
                })
                .await?,
                b,
            )
        }
    };
    let values = read_lines(&input)?;
    let sqlite_full = measure("bare SQLite insert FULL (s)", s.runs, || async {
        sqlite_insert_baseline(&s, &values, None, true)
    })
    .await?;
    drop(values);
    let full = measure("pipeline String FULL (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::String, true)
    })
    .await?;
    rows.push(
        Row::new(
            "durability",
            "pipeline String, storage.synchronous=NORMAL (default)",
            "records/s",
            n / normal,
        )
        .baseline("bare SQLite insert, NORMAL", n / sqlite_normal),
    );
    rows.push(
        Row::new(
            "durability",
            "pipeline String, storage.synchronous=FULL",
            "records/s",
            n / full,
        )
        .baseline("bare SQLite insert, FULL", n / sqlite_full),
    );
    rows.push(
        Row::new(
            "durability",
            "FULL as a fraction of NORMAL",
            "×",
            normal / full,
        )
        .baseline("bare SQLite FULL/NORMAL", sqlite_normal / sqlite_full),
    );
    Ok(())
}
