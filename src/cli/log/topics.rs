//! `liteconnect topics`: one line per topic of the local log.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::source::Source;
use super::table::{time, Colour, Table};
use super::Remote;
use crate::storage::PartitionSummary;

/// `liteconnect topics`.
#[derive(Debug, Args)]
pub struct TopicsArgs {
    /// The worker to ask (`--url`, `--config`, `--user`).
    #[command(flatten)]
    pub remote: Remote,
    /// Read the worker's database file (read-only) instead of asking a running worker.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "config", "user"])]
    pub db: Option<PathBuf>,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One topic as `topics` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Row {
    topic: String,
    partitions: usize,
    records: u64,
    bytes: u64,
    /// Epoch milliseconds.
    oldest_timestamp: Option<i64>,
    newest_timestamp: Option<i64>,
}

fn row(topic: String, partitions: &[PartitionSummary]) -> Row {
    Row {
        topic,
        partitions: partitions.len(),
        records: partitions.iter().map(|p| p.records).sum(),
        bytes: partitions.iter().map(|p| p.bytes).sum(),
        oldest_timestamp: partitions.iter().filter_map(|p| p.oldest_timestamp).min(),
        newest_timestamp: partitions.iter().filter_map(|p| p.newest_timestamp).max(),
    }
}

pub(super) fn run(args: &TopicsArgs) -> Result<(), String> {
    let source = Source::open(&args.remote, args.db.as_deref())?;
    let mut rows = Vec::new();
    for topic in source.topics()? {
        // A topic deleted between the two requests is left out.
        if let Some(partitions) = source.summaries(&topic)? {
            rows.push(row(topic, &partitions));
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = serde_json::to_string_pretty(&rows).unwrap_or_default();
        super::print_line(&mut out, &text);
        return Ok(());
    }
    let mut table = Table::new(&[
        "TOPIC",
        "PARTITIONS",
        "RECORDS",
        "BYTES",
        "OLDEST (UTC)",
        "NEWEST (UTC)",
    ]);
    for r in rows {
        table.row(
            [
                r.topic,
                r.partitions.to_string(),
                r.records.to_string(),
                r.bytes.to_string(),
                time(r.oldest_timestamp),
                time(r.newest_timestamp),
            ]
            .into_iter()
            .map(|cell| (cell, Colour::None))
            .collect(),
        );
    }
    for line in table.render(false) {
        if !super::print_line(&mut out, &line) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_adds_up_its_partitions() {
        let p = |partition, records, oldest, newest| PartitionSummary {
            partition,
            beginning_offset: 0,
            end_offset: records as i64,
            records,
            bytes: records * 10,
            oldest_timestamp: oldest,
            newest_timestamp: newest,
        };
        let r = row(
            "t".into(),
            &[
                p(0, 2, Some(5), Some(9)),
                p(1, 0, None, None),
                p(2, 1, Some(3), Some(4)),
            ],
        );
        assert_eq!(
            r,
            Row {
                topic: "t".into(),
                partitions: 3,
                records: 3,
                bytes: 30,
                oldest_timestamp: Some(3),
                newest_timestamp: Some(9),
            }
        );
    }
}
