//! `liteconnect consume`: prints the records of a topic, as Kafka's console consumer does: from the end
//! unless told otherwise, until the end seen at the start unless `--follow`. Keys and values framed by a
//! Schema Registry converter are shown decoded with the registry's schemas (`--raw`: as stored).

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use clap::{Args, ValueEnum};
use serde_json::{json, Map, Value as Json};

use super::rest::Record;
use super::source::Source;
use super::Remote;
use crate::converters::registry::local::{LocalSchemas, SchemaLookup, Shown};
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
    /// Print keys and values as stored, without decoding records framed by a Schema Registry converter.
    #[arg(long)]
    pub raw: bool,
    /// Say where each record is and which schema decoded it; note keys and values left undecoded.
    #[arg(long, short = 'v')]
    pub verbose: bool,
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
    let schemas = LocalSchemas::default();
    let decoder = (!args.raw).then_some((&schemas, &source as &dyn SchemaLookup));
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
                let key = field(decoder, r.key.as_deref());
                let value = field(decoder, r.value.as_deref());
                if args.verbose {
                    for (name, f) in [("key", &key), ("value", &value)] {
                        if let Field::Bytes(_, Some(why)) = f {
                            eprintln!(
                                "note: partition {} offset {}: the {name} is shown as stored: {why}",
                                r.partition, r.offset
                            );
                        }
                    }
                }
                let line = render(args.format, args.verbose, &args.topic, &r, [&key, &value]);
                if !super::print_line(&mut out, &line) {
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

/// A key or value as printed.
#[derive(Debug)]
enum Field<'a> {
    /// Null (a tombstone's value, a record without key).
    Null,
    /// The bytes as stored; with why they were not decoded when decoding was asked for.
    Bytes(&'a [u8], Option<String>),
    /// Decoded along the schema its frame names.
    Decoded {
        /// The schema ID.
        id: i64,
        /// The first subject with a version of that schema.
        subject: Option<String>,
        /// The key or value as JSON.
        json: Json,
    },
}

/// `bytes` decoded when they are framed and `decoder` is given (not `--raw`).
fn field<'a>(
    decoder: Option<(&LocalSchemas, &dyn SchemaLookup)>,
    bytes: Option<&'a [u8]>,
) -> Field<'a> {
    let Some(bytes) = bytes else {
        return Field::Null;
    };
    let Some((schemas, lookup)) = decoder else {
        return Field::Bytes(bytes, None);
    };
    match schemas.show(lookup, bytes) {
        Shown::Decoded { schema, json } => Field::Decoded {
            id: schema.id,
            subject: schema.subject.clone(),
            json,
        },
        Shown::Unframed => Field::Bytes(
            bytes,
            Some("not framed by a Schema Registry converter".into()),
        ),
        Shown::Undecoded { id, reason } => Field::Bytes(
            bytes,
            Some(format!("framed with schema ID {id}, not decoded: {reason}")),
        ),
    }
}

/// A record as `format` prints it; `verbose` text starts with where the record is and the schemas
/// that decoded it.
fn render(
    format: OutputFormat,
    verbose: bool,
    topic: &str,
    r: &Record,
    fields: [&Field<'_>; 2],
) -> String {
    let [key, value] = fields;
    match format {
        OutputFormat::Text => {
            let text = match value {
                Field::Null => "null".to_string(),
                Field::Bytes(b, _) => String::from_utf8_lossy(b).into(),
                Field::Decoded { json, .. } => json.to_string(),
            };
            if !verbose {
                return text;
            }
            let mut prefix = format!("partition {} offset {}", r.partition, r.offset);
            for (name, f) in [("key", key), ("value", value)] {
                if let Field::Decoded { id, subject, .. } = f {
                    let subject = subject.as_deref().unwrap_or("no subject");
                    prefix.push_str(&format!(" {name} schema {id} ({subject})"));
                }
            }
            format!("{prefix}: {text}")
        }
        OutputFormat::Json => {
            let mut o = Map::new();
            o.insert("topic".into(), json!(topic));
            o.insert("partition".into(), json!(r.partition));
            o.insert("offset".into(), json!(r.offset));
            for (name, f) in [("key", key), ("value", value)] {
                match f {
                    Field::Null => bytes_field(&mut o, name, None),
                    Field::Bytes(b, _) => bytes_field(&mut o, name, Some(b)),
                    Field::Decoded { id, json, .. } => {
                        o.insert(name.into(), json.clone());
                        o.insert(format!("{name}_schema_id"), json!(id));
                    }
                }
            }
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
        let print = |format, verbose, r: &Record| {
            let k = field(None, r.key.as_deref());
            let v = field(None, r.value.as_deref());
            render(format, verbose, "t", r, [&k, &v])
        };
        assert_eq!(print(OutputFormat::Text, false, &r), "hello");
        assert_eq!(
            print(OutputFormat::Text, true, &r),
            "partition 1 offset 7: hello"
        );
        let json: Json = serde_json::from_str(&print(OutputFormat::Json, false, &r)).unwrap();
        assert_eq!(
            json,
            json!({"topic": "t", "partition": 1, "offset": 7, "key_base64": "/wA=", "value": "hello"})
        );
        let tombstone = Record {
            key: None,
            value: None,
            ..r
        };
        assert_eq!(print(OutputFormat::Text, false, &tombstone), "null");
        let json: Json =
            serde_json::from_str(&print(OutputFormat::Json, false, &tombstone)).unwrap();
        assert_eq!(json["key"], Json::Null);
        assert_eq!(json["value"], Json::Null);
    }

    #[test]
    fn decoded_fields_print_as_json_with_their_schema() {
        let r = Record {
            partition: 0,
            offset: 3,
            key: None,
            value: Some(vec![0, 0, 0, 0, 5, 2]),
        };
        let value = Field::Decoded {
            id: 5,
            subject: Some("t-value".into()),
            json: json!({"n": 1}),
        };
        let line = render(OutputFormat::Json, false, "t", &r, [&Field::Null, &value]);
        let json: Json = serde_json::from_str(&line).unwrap();
        assert_eq!(json["value"], json!({"n": 1}));
        assert_eq!(json["value_schema_id"], json!(5));
        assert_eq!(
            render(OutputFormat::Text, true, "t", &r, [&Field::Null, &value]),
            r#"partition 0 offset 3 value schema 5 (t-value): {"n":1}"#
        );
    }
}
