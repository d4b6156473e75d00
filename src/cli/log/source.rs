//! Where `topics` and `consume` read the log: a running worker's REST API, or (`--db`) the database file
//! opened read-only, which works with or without a worker on it.

use std::path::Path;
use std::time::{Duration, Instant};

use super::rest::{Record, Rest};
use super::Remote;
use crate::cli::endpoint::seg;
use crate::converters::registry::local::SchemaLookup;
use crate::storage::registry::StoredSchema;
use crate::storage::{LogReader, PartitionSummary, TopicPartition};

/// How often a read on the database file looks again for new records while it waits.
const DB_POLL: Duration = Duration::from_millis(100);

/// The most records one read of the database file answers.
const DB_BATCH: usize = 1_000;

/// A log to read.
#[derive(Debug)]
pub(super) enum Source {
    Rest(Rest),
    Db(LogReader),
}

impl Source {
    /// The database file when `db` is given, else the worker `remote` names.
    pub(super) fn open(remote: &Remote, db: Option<&Path>) -> Result<Source, String> {
        match db {
            Some(path) => LogReader::open(path)
                .map(Source::Db)
                .map_err(|e| e.to_string()),
            None => remote.client().map(Source::Rest),
        }
    }

    /// The topic names, sorted.
    pub(super) fn topics(&self) -> Result<Vec<String>, String> {
        match self {
            Source::Rest(rest) => rest.topics(),
            Source::Db(db) => Ok(db
                .topics()
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|(name, _)| name)
                .collect()),
        }
    }

    /// What each partition of `topic` holds, `None` when there is no such topic.
    pub(super) fn summaries(&self, topic: &str) -> Result<Option<Vec<PartitionSummary>>, String> {
        match self {
            Source::Rest(rest) => {
                let Some(json) = rest.get_optional(&format!("/topics/{}/summary", seg(topic)))?
                else {
                    return Ok(None);
                };
                serde_json::from_value(json["partitions"].clone())
                    .map(Some)
                    .map_err(|e| format!("The summary of topic {topic} cannot be read: {e}"))
            }
            Source::Db(db) => db.partition_summaries(topic).map_err(|e| e.to_string()),
        }
    }

    /// A topic's partition count, `None` when there is no such topic.
    pub(super) fn partition_count(&self, topic: &str) -> Result<Option<i32>, String> {
        match self {
            Source::Rest(rest) => rest.partition_count(topic),
            Source::Db(db) => Ok(db
                .topics()
                .map_err(|e| e.to_string())?
                .into_iter()
                .find(|(name, _)| name == topic)
                .map(|(_, count)| count)),
        }
    }

    /// A partition's beginning and end offsets.
    pub(super) fn offsets(&self, topic: &str, partition: i32) -> Result<(i64, i64), String> {
        match self {
            Source::Rest(rest) => rest.offsets(topic, partition),
            Source::Db(db) => {
                let tp = TopicPartition {
                    topic: topic.to_string(),
                    partition,
                };
                let o = db
                    .partition_offsets(&tp)
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| format!("Partition {partition} of topic {topic} not found."))?;
                Ok((o.beginning, o.end))
            }
        }
    }

    /// The records of `tp` from `from` on, waiting up to `wait` for a first one.
    pub(super) fn read(
        &self,
        tp: &TopicPartition,
        from: i64,
        wait: Duration,
    ) -> Result<Vec<Record>, String> {
        let db = match self {
            Source::Rest(rest) => return rest.read(&tp.topic, tp.partition, from, wait),
            Source::Db(db) => db,
        };
        let until = Instant::now() + wait;
        loop {
            let records = db.read(tp, from, DB_BATCH).map_err(|e| e.to_string())?;
            if !records.is_empty() || Instant::now() >= until {
                return Ok(records
                    .into_iter()
                    .map(|r| Record {
                        partition: r.partition,
                        offset: r.offset,
                        key: r.key,
                        value: r.value,
                    })
                    .collect());
            }
            std::thread::sleep(DB_POLL.min(until.saturating_duration_since(Instant::now())));
        }
    }
}

/// The registry of the worker or the database file read.
impl SchemaLookup for Source {
    fn schema(&self, id: i64) -> Result<Option<StoredSchema>, String> {
        match self {
            Source::Rest(rest) => rest.schema(id),
            Source::Db(db) => db.schema(id),
        }
    }

    fn version(&self, subject: &str, version: i32) -> Result<Option<StoredSchema>, String> {
        match self {
            Source::Rest(rest) => rest.version(subject, version),
            Source::Db(db) => db.version(subject, version),
        }
    }

    fn subject_of(&self, id: i64) -> Result<Option<String>, String> {
        match self {
            Source::Rest(rest) => rest.subject_of(id),
            Source::Db(db) => db.subject_of(id),
        }
    }
}
