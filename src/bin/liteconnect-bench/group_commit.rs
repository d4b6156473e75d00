//! The group-commit scenario: eight unthrottled source tasks against one, on one writer.

use crate::log::log_run;
use crate::report::{measure, Row, Target};
use crate::{Ctx, Res};

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let one = measure("1 source task (records/s)", s.runs, || async {
        Ok(log_run(&s, 1, false).await?.source_rate)
    })
    .await?;
    let eight = measure("8 source tasks (records/s)", s.runs, || async {
        Ok(log_run(&s, 8, false).await?.source_rate)
    })
    .await?;
    rows.push(
        Row::new(
            "group commit",
            "8 verifiable source tasks, unthrottled",
            "records/s",
            eight,
        )
        .baseline("1 task", one)
        .target(Target::RatioAtLeast(1.0)),
    );
    Ok(())
}
