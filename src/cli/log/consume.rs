//! `liteconnect consume`: prints the records of a topic, as Kafka's console consumer does: from the end
//! unless told otherwise, until the end seen at the start unless `--follow`.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use clap::{Args, ValueEnum};
use serde_json::{json, Map, Value as Json};

use super::rest::Record;
use super::source::Source;
use super::Remote;
use crate::storage::TopicPartition;

/// How long one read waits for a new record when following, shared by the partitions read in turn.
const FOLLOW_WAIT: Duration = Duration::from_millis(1_000);

/// The shortest wait per partition when following many.
const MIN_WAIT: Duration = Duration::from_millis(100);

/// How records are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The value, one record a line (`null` for a tombstone).
    Text,
    /// One JSON object a line: topic, partition, offset, key and value.
    Json,
}

/// `liteconnect consume`.
#[derive(Debug, Args)]
pub struct ConsumeArgs {
    /// The topic to read.
    pub topic: String,
    /// Read only this partition (default: every partition).
    #[arg(long, value_name = "P")]
    pub partition: Option<i32>,
    /// Start at this offset of --partition.
    #[arg(
        long,
        value_name = "N",
        requires = "partition",
        conflicts_with = "from_beginning"
    )]
    pub offset: Option<i64>,
    /// Start at the first record held (default: at the end, as Kafka's console consumer).
    #[arg(long)]
    pub from_beginning: bool,
    /// Keep waiting for new records instead of stopping at the end.
    #[arg(long)]
    pub follow: bool,
    /// Stop after this many records.
    #[arg(long, value_name = "N")]
    pub max: Option<u64>,
    /// How records are printed.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Read the worker's database file (read-only, also while the worker runs) instead of its REST API.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "config", "user"])]
    pub db: Option<PathBuf>,
    /// The worker to ask (`--url`, `--config`, `--user`).
    #[command(flatten)]
    pub remote: Remote,
}

/// Where one partition is read from, and where a read without `--follow` stops.
#[derive(Debug)]
struct Position {
    tp: TopicPartition,
    next: i64,
    stop: i64,
}

pub(super) fn run(args: &ConsumeArgs) -> Result<(), String> {
    let source = Source::open(&args.remote, args.db.as_deref())?;
    let count = source
        .partition_count(&args.topic)?
        .ok_or_else(|| format!("Topic {} not found.", args.topic))?;
    let partitions: Vec<i32> = match args.partition {
        Some(p) if p < 0 || p >= count => {
            return Err(format!(
                "Partition {p} of topic {} not found (it has {count}).",
                args.topic
            ))
        }
        Some(p) => vec![p],
        None => (0..count).collect(),
    };
    let mut positions = Vec::new();
    for partition in partitions {
        let (beginning, end) = source.offsets(&args.topic, partition)?;
        let next = match (args.offset, args.from_beginning) {
            (Some(n), _) => n.max(beginning),
            (None, true) => beginning,
            (None, false) => end,
        };
        positions.push(Position {
            tp: TopicPartition {
                topic: args.topic.clone(),
                partition,
            },
            next,
            stop: end,
        });
    }
    let wait = if args.follow {
        (FOLLOW_WAIT / positions.len().max(1) as u32).max(MIN_WAIT)
    } else {
        Duration::ZERO
    };
    let mut printed = 0u64;
    let mut out = std::io::stdout().lock();
    loop {
        let mut pending = false;
        for pos in &mut positions {
            if !args.follow && pos.next >= pos.stop {
                continue;
            }
            let records = source.read(&pos.tp, pos.next, wait)?;
            if records.is_empty() && !args.follow {
                // Nothing left below the end seen at the start (retention may have removed it).
                pos.next = pos.stop;
            }
            for r in records {
                if args.max.is_some_and(|m| printed >= m) {
                    return Ok(());
                }
                if !args.follow && r.offset >= pos.stop {
                    break;
                }
                pos.next = r.offset + 1;
                if !super::print_line(&mut out, &render(args.format, &args.topic, &r)) {
                    return Ok(());
                }
                printed += 1;
            }
            pending |= args.follow || pos.next < pos.stop;
        }
        if !pending || args.max.is_some_and(|m| printed >= m) {
            return Ok(());
        }
    }
}

/// A record as `format` prints it.
fn render(format: OutputFormat, topic: &str, r: &Record) -> String {
    match format {
        OutputFormat::Text => r
            .value
            .as_deref()
            .map_or_else(|| "null".to_string(), |v| String::from_utf8_lossy(v).into()),
        OutputFormat::Json => {
            let mut o = Map::new();
            o.insert("topic".into(), json!(topic));
            o.insert("partition".into(), json!(r.partition));
            o.insert("offset".into(), json!(r.offset));
            bytes_field(&mut o, "key", r.key.as_deref());
            bytes_field(&mut o, "value", r.value.as_deref());
            Json::Object(o).to_string()
        }
    }
}

/// `name` as a string (UTF-8) or null; bytes that are not UTF-8 go to `name_base64` instead.
fn bytes_field(o: &mut Map<String, Json>, name: &str, bytes: Option<&[u8]>) {
    match bytes.map(std::str::from_utf8) {
        None => {
            o.insert(name.into(), Json::Null);
        }
        Some(Ok(text)) => {
            o.insert(name.into(), json!(text));
        }
        Some(Err(_)) => {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(bytes.unwrap_or_default());
            o.insert(format!("{name}_base64"), json!(encoded));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_print_as_text_or_one_json_object_a_line() {
        let r = Record {
            partition: 1,
            offset: 7,
            key: Some(vec![0xff, 0x00]),
            value: Some(b"hello".to_vec()),
        };
        assert_eq!(render(OutputFormat::Text, "t", &r), "hello");
        let json: Json = serde_json::from_str(&render(OutputFormat::Json, "t", &r)).unwrap();
        assert_eq!(
            json,
            json!({"topic": "t", "partition": 1, "offset": 7, "key_base64": "/wA=", "value": "hello"})
        );
        let tombstone = Record {
            key: None,
            value: None,
            ..r
        };
        assert_eq!(render(OutputFormat::Text, "t", &tombstone), "null");
        let json: Json =
            serde_json::from_str(&render(OutputFormat::Json, "t", &tombstone)).unwrap();
        assert_eq!(json["key"], Json::Null);
        assert_eq!(json["value"], Json::Null);
    }
}
