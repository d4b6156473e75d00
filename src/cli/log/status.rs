//! `liteconnect status`: one line per connector of a running worker.

use std::collections::HashMap;

use clap::Args;
use serde::Serialize;
use serde_json::Value as Json;

use super::rest::Rest;
use super::table::{Colour, Table};
use super::Remote;
use crate::cli::drain::Subscription;
use crate::cli::endpoint::seg;

/// `liteconnect status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The worker to ask (`--url`, `--config`, `--user`).
    #[command(flatten)]
    pub remote: Remote,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One connector as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Row {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    state: String,
    tasks_running: usize,
    tasks_total: usize,
    tasks_failed: usize,
    /// Records in a sink's topics past its committed offsets; `None` for a source, or when the endpoint
    /// has no topic routes.
    lag: Option<u64>,
    /// The cause line of the trace of the first failed task, else of the connector, else of a running
    /// task that reports a retriable error (an outage).
    trace: Option<String>,
    /// Each task's state and whole trace.
    tasks: Vec<TaskRow>,
}

/// One task as `status --json` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct TaskRow {
    id: i64,
    state: String,
    trace: Option<String>,
}

pub(super) fn run(args: &StatusArgs) -> Result<(), String> {
    let rest = args.remote.client()?;
    let all = rest.get("/connectors?expand=status&expand=info")?;
    let entries = all
        .as_object()
        .ok_or_else(|| format!("GET /connectors?expand=status: not an object: {all}"))?;
    let mut ends = EndOffsets::default();
    let mut rows = Vec::new();
    for (name, entry) in entries {
        rows.push(row(&rest, &mut ends, name, entry)?);
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = serde_json::to_string_pretty(&rows).unwrap_or_default();
        super::print_line(&mut out, &text);
        return Ok(());
    }
    let mut table = Table::new(&["CONNECTOR", "TYPE", "STATE", "TASKS", "LAG", "ERROR"]);
    for r in &rows {
        let plain = |s: String| (s, Colour::None);
        table.row(vec![
            plain(r.name.clone()),
            plain(r.kind.clone()),
            (r.state.clone(), state_colour(&r.state)),
            plain(tasks_cell(r)),
            plain(r.lag.map_or_else(|| "-".to_string(), |l| l.to_string())),
            (r.trace.clone().unwrap_or_default(), Colour::Red),
        ]);
    }
    let colour = super::colour();
    for line in table.render(colour) {
        if !super::print_line(&mut out, &line) {
            break;
        }
    }
    Ok(())
}

fn state_colour(state: &str) -> Colour {
    match state {
        "RUNNING" => Colour::Green,
        "FAILED" => Colour::Red,
        _ => Colour::Yellow,
    }
}

/// The TASKS cell: running of total, and how many failed when any did.
fn tasks_cell(r: &Row) -> String {
    match r.tasks_failed {
        0 => format!("{}/{}", r.tasks_running, r.tasks_total),
        n => format!("{}/{} ({n} failed)", r.tasks_running, r.tasks_total),
    }
}

/// The line of a trace that says what went wrong: the innermost `Caused by:` when there is one (not the
/// wrapper's "Tolerance exceeded in error handler"), else the first line.
fn cause_line(trace: &Json) -> Option<String> {
    let trace = trace.as_str()?;
    let caused = trace
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Caused by:"))
        .map(str::trim)
        .rfind(|l| !l.is_empty());
    caused
        .or_else(|| trace.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(str::to_string)
}

fn row(rest: &Rest, ends: &mut EndOffsets, name: &str, entry: &Json) -> Result<Row, String> {
    let status = &entry["status"];
    let tasks: Vec<&Json> = status["tasks"].as_array().into_iter().flatten().collect();
    let state = status["connector"]["state"]
        .as_str()
        .unwrap_or("UNASSIGNED")
        .to_string();
    let failed_task = tasks
        .iter()
        .find(|t| t["state"] == "FAILED")
        .and_then(|t| cause_line(&t["trace"]));
    let retrying_task = tasks
        .iter()
        .find(|t| t["state"] == "RUNNING")
        .and_then(|t| cause_line(&t["trace"]));
    let kind = status["type"]
        .as_str()
        .or_else(|| entry["info"]["type"].as_str())
        .unwrap_or("unknown")
        .to_string();
    let lag = if kind == "sink" {
        sink_lag(rest, ends, name, &entry["info"]["config"])?
    } else {
        None
    };
    Ok(Row {
        name: name.to_string(),
        kind,
        tasks_running: tasks.iter().filter(|t| t["state"] == "RUNNING").count(),
        tasks_total: tasks.len(),
        tasks_failed: tasks.iter().filter(|t| t["state"] == "FAILED").count(),
        lag,
        trace: failed_task
            .or_else(|| cause_line(&status["connector"]["trace"]))
            .or(retrying_task),
        tasks: tasks
            .iter()
            .map(|t| TaskRow {
                id: t["id"].as_i64().unwrap_or(-1),
                state: t["state"].as_str().unwrap_or("UNASSIGNED").to_string(),
                trace: t["trace"].as_str().map(str::to_string),
            })
            .collect(),
        state,
    })
}

/// Each partition's beginning and end offsets, asked once per topic for all connectors.
#[derive(Debug, Default)]
struct EndOffsets {
    topics: Option<Option<Vec<String>>>,
    partitions: HashMap<String, Vec<(i64, i64)>>,
}

impl EndOffsets {
    /// The topic names; `None` when the endpoint has no topic routes (Apache Kafka Connect).
    fn topics(&mut self, rest: &Rest) -> Result<Option<&[String]>, String> {
        if self.topics.is_none() {
            self.topics = Some(match rest.get_optional("/topics")? {
                Some(_) => Some(rest.topics()?),
                None => None,
            });
        }
        Ok(self.topics.as_ref().and_then(Option::as_deref))
    }

    fn of(&mut self, rest: &Rest, topic: &str) -> Result<&[(i64, i64)], String> {
        if !self.partitions.contains_key(topic) {
            let count = rest.partition_count(topic)?.unwrap_or(0);
            let offsets = (0..count)
                .map(|p| rest.offsets(topic, p))
                .collect::<Result<Vec<_>, _>>()?;
            self.partitions.insert(topic.to_string(), offsets);
        }
        Ok(self.partitions.get(topic).map_or(&[], Vec::as_slice))
    }
}

/// The records in a sink's topics past its committed offsets: a partition without a committed offset is
/// read from its beginning, and records already gone (retention) are not counted. `None` when the
/// endpoint does not serve the topic log.
fn sink_lag(
    rest: &Rest,
    ends: &mut EndOffsets,
    name: &str,
    config: &Json,
) -> Result<Option<u64>, String> {
    let subscription = Subscription::of(config);
    let answer = rest.get(&format!("/connectors/{}/offsets", seg(name)))?;
    let committed: HashMap<(String, i64), i64> = answer["offsets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            let topic = o["partition"]["kafka_topic"].as_str()?.to_string();
            let partition = o["partition"]["kafka_partition"].as_i64()?;
            Some(((topic, partition), o["offset"]["kafka_offset"].as_i64()?))
        })
        .collect();
    let Some(topics) = ends.topics(rest)? else {
        return Ok(None);
    };
    let topics: Vec<String> = topics
        .iter()
        .filter(|t| subscription.matches(t))
        .cloned()
        .collect();
    let mut lag = 0u64;
    for topic in topics {
        for (p, (beginning, end)) in ends.of(rest, &topic)?.iter().enumerate() {
            let at = committed
                .get(&(topic.clone(), p as i64))
                .copied()
                .unwrap_or(*beginning)
                .max(*beginning);
            lag += (end - at).max(0) as u64;
        }
    }
    Ok(Some(lag))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_tasks_cause_line_is_shown() {
        assert_eq!(
            cause_line(&json!("\n  org.Boom: disk gone\n\tat x.y(Z.java:1)\n")),
            Some("org.Boom: disk gone".to_string())
        );
        assert_eq!(
            cause_line(&json!(
                "Tolerance exceeded in error handler\nCaused by: org.apache.kafka.connect.errors.DataException: not JSON\n\tat x"
            )),
            Some("org.apache.kafka.connect.errors.DataException: not JSON".to_string()),
            "the cause, not the wrapper"
        );
        assert_eq!(cause_line(&Json::Null), None);
        assert_eq!(state_colour("FAILED"), Colour::Red);
        assert_eq!(state_colour("PAUSED"), Colour::Yellow);
    }
}
