//! The scale scenario: the cost per record of a pipeline a tenth the size against the full one.

use crate::pipeline::{pipeline_run, Conv};
use crate::report::{fmt_num, measure, Row};
use crate::{Ctx, Res};

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let small = (s.lines / 10).max(1000);
    let input_small = ctx.input(small)?;
    let t_small = measure("pipeline String, small (s)", s.runs, || {
        pipeline_run(&s, &input_small, small, Conv::String, false)
    })
    .await?;
    let input = ctx.input(s.lines)?;
    let t_large = match ctx.string_pipeline {
        Some((t, _)) => t,
        None => {
            measure("pipeline String (s)", s.runs, || {
                pipeline_run(&s, &input, s.lines, Conv::String, false)
            })
            .await?
        }
    };
    let per_small = t_small / small as f64 * 1e6;
    let per_large = t_large / s.lines as f64 * 1e6;
    rows.push(
        Row::new(
            "scale",
            format!(
                "pipeline String, µs per record at {} lines",
                fmt_num(s.lines as f64)
            ),
            "µs",
            per_large,
        )
        .baseline(format!("at {} lines", fmt_num(small as f64)), per_small),
    );
    Ok(())
}
