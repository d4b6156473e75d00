//! The topic log seen from outside the task loops: what the REST API reads (topics, partitions, their
//! offsets, records) and writes (produced records, deleting a topic). Reads go to the reader thread,
//! writes to the writer thread; none of them runs on an async executor thread.

use rusqlite::{params, Connection, OptionalExtension};

use super::log::{self, AppendBatch, LogRecord, TopicPartition};
use super::{StorageError, Store};

/// The offsets of one partition: the first one still held and the next one to be assigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionOffsets {
    /// The first offset still held (the end offset when the partition is empty).
    pub beginning: i64,
    /// The offset the next record will get.
    pub end: i64,
}

fn partition_count(conn: &Connection, topic: &str) -> Result<Option<i32>, StorageError> {
    Ok(conn
        .prepare_cached("SELECT partitions FROM topics WHERE name = ?1")?
        .query_row([topic], |r| r.get(0))
        .optional()?)
}

fn partition_offsets(
    conn: &Connection,
    tp: &TopicPartition,
) -> Result<Option<PartitionOffsets>, StorageError> {
    let end: Option<i64> = conn
        .prepare_cached(
            "SELECT p.next_offset FROM partitions p JOIN topics t ON t.id = p.topic_id
             WHERE t.name = ?1 AND p.partition = ?2",
        )?
        .query_row(params![tp.topic, tp.partition], |r| r.get(0))
        .optional()?;
    let Some(end) = end else { return Ok(None) };
    let beginning = log::log_start(conn, tp)?;
    Ok(Some(PartitionOffsets { beginning, end }))
}

fn delete_topic(conn: &Connection, topic: &str) -> Result<bool, StorageError> {
    let Some(id) = conn
        .query_row("SELECT id FROM topics WHERE name = ?1", [topic], |r| {
            r.get::<_, i64>(0)
        })
        .optional()?
    else {
        return Ok(false);
    };
    conn.execute("DELETE FROM records WHERE topic_id = ?1", [id])?;
    conn.execute("DELETE FROM partitions WHERE topic_id = ?1", [id])?;
    conn.execute("DELETE FROM topics WHERE id = ?1", [id])?;
    conn.execute("DELETE FROM sink_offsets WHERE topic = ?1", [topic])?;
    conn.execute("DELETE FROM connector_topics WHERE topic = ?1", [topic])?;
    conn.execute("DELETE FROM group_offsets WHERE topic = ?1", [topic])?;
    Ok(true)
}

fn topic_users(conn: &Connection, topic: &str) -> Result<Vec<String>, StorageError> {
    let mut stmt = conn.prepare_cached(
        "SELECT connector FROM connector_topics WHERE topic = ?1 ORDER BY connector",
    )?;
    let rows = stmt
        .query_map([topic], |r| r.get(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// What one partition of a topic holds: its offsets, how many records and bytes are still there, and the
/// timestamps of its oldest and newest record.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartitionSummary {
    /// The partition number.
    pub partition: i32,
    /// The first offset still held (the end offset when the partition is empty).
    pub beginning_offset: i64,
    /// The offset the next record will get.
    pub end_offset: i64,
    /// The records still held.
    pub records: u64,
    /// Their key, value and header bytes, measured as `retention.bytes` measures them.
    pub bytes: u64,
    /// The smallest record timestamp (epoch ms), `None` when no held record has one.
    pub oldest_timestamp: Option<i64>,
    /// The largest record timestamp (epoch ms).
    pub newest_timestamp: Option<i64>,
}

/// The summary of every partition of `topic`, `None` when the topic does not exist.
fn partition_summaries(
    conn: &Connection,
    topic: &str,
) -> Result<Option<Vec<PartitionSummary>>, StorageError> {
    let Some(id) = conn
        .prepare_cached("SELECT id FROM topics WHERE name = ?1")?
        .query_row([topic], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT p.partition, p.next_offset, COUNT(r.offset), MIN(r.offset),
                COALESCE(SUM(COALESCE(length(r.key), 0) + COALESCE(length(r.value), 0)
                             + COALESCE(length(r.headers), 0)), 0),
                MIN(r.timestamp_ms), MAX(r.timestamp_ms)
         FROM partitions p LEFT JOIN records r ON r.topic_id = p.topic_id AND r.partition = p.partition
         WHERE p.topic_id = ?1 GROUP BY p.partition ORDER BY p.partition",
    )?;
    let rows = stmt
        .query_map([id], |r| {
            let end: i64 = r.get(1)?;
            Ok(PartitionSummary {
                partition: r.get(0)?,
                beginning_offset: r.get::<_, Option<i64>>(3)?.unwrap_or(end),
                end_offset: end,
                records: r.get::<_, i64>(2)?.max(0) as u64,
                bytes: r.get::<_, i64>(4)?.max(0) as u64,
                oldest_timestamp: r.get(5)?,
                newest_timestamp: r.get(6)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(rows))
}

/// A read-only view of a database's topic log for tools that run beside the worker (in WAL mode a reader
/// sees every committed append without waiting for the writer) or while no worker runs. It takes no lock
/// and never writes; its methods block, so they belong on plain threads.
#[derive(Debug)]
pub struct LogReader {
    pub(super) conn: Connection,
}

impl LogReader {
    /// Opens the liteconnect database at `path` read-only.
    ///
    /// # Errors
    /// The file does not exist, is not a liteconnect database, or cannot be read.
    pub fn open(path: &std::path::Path) -> Result<LogReader, StorageError> {
        if !path.is_file() {
            return Err(StorageError::Incompatible(format!(
                "There is no database at {}.",
                path.display()
            )));
        }
        super::open::check_compatible(path)?;
        let conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.query_row("SELECT count(*) FROM topics", [], |r| r.get::<_, i64>(0))
            .map_err(|e| {
                StorageError::Incompatible(format!(
                    "{} is not a liteconnect database: {e}",
                    path.display()
                ))
            })?;
        Ok(LogReader { conn })
    }

    /// Every topic with its partition count, sorted by name.
    pub fn topics(&self) -> Result<Vec<(String, i32)>, StorageError> {
        log::topics(&self.conn)
    }

    /// A topic's partitions as [`Store::partition_summaries`] describes them.
    pub fn partition_summaries(
        &self,
        topic: &str,
    ) -> Result<Option<Vec<PartitionSummary>>, StorageError> {
        partition_summaries(&self.conn, topic)
    }

    /// The offsets of one partition, `None` when the partition does not exist.
    pub fn partition_offsets(
        &self,
        tp: &TopicPartition,
    ) -> Result<Option<PartitionOffsets>, StorageError> {
        partition_offsets(&self.conn, tp)
    }

    /// Up to `max` records of one partition from `from` on.
    pub fn read(
        &self,
        tp: &TopicPartition,
        from: i64,
        max: usize,
    ) -> Result<Vec<LogRecord>, StorageError> {
        log::read(&self.conn, tp, from, max)
    }
}

impl Store {
    /// Every topic with its partition count, sorted by name.
    pub async fn topics(&self) -> Result<Vec<(String, i32)>, StorageError> {
        self.reader.call(log::topics).await
    }

    /// A topic's partition count, `None` when it does not exist.
    pub async fn partition_count(&self, topic: String) -> Result<Option<i32>, StorageError> {
        self.reader.call(move |c| partition_count(c, &topic)).await
    }

    /// The offsets of one partition, `None` when the partition does not exist.
    pub async fn partition_offsets(
        &self,
        tp: TopicPartition,
    ) -> Result<Option<PartitionOffsets>, StorageError> {
        self.reader.call(move |c| partition_offsets(c, &tp)).await
    }

    /// Every partition of a topic with what it holds, `None` when the topic does not exist.
    pub async fn partition_summaries(
        &self,
        topic: String,
    ) -> Result<Option<Vec<PartitionSummary>>, StorageError> {
        self.reader
            .call(move |c| partition_summaries(c, &topic))
            .await
    }

    /// Up to `max` records of one partition from `from` on.
    pub async fn read(
        &self,
        tp: TopicPartition,
        from: i64,
        max: usize,
    ) -> Result<Vec<LogRecord>, StorageError> {
        self.reader
            .call(move |c| log::read(c, &tp, from, max))
            .await
    }

    /// Up to `max` records of one partition from `from` on whose [`LogRecord::size`] add up to at most
    /// `max_bytes` (at least one record when there is any).
    pub async fn read_within(
        &self,
        tp: TopicPartition,
        from: i64,
        max: usize,
        max_bytes: usize,
    ) -> Result<Vec<LogRecord>, StorageError> {
        self.reader
            .call(move |c| log::read_within(c, &tp, from, max, max_bytes))
            .await
    }

    /// Appends records as [`Store::append_blocking`] does (committed before it returns, within the
    /// `log.buffer.max.bytes` cap), from async code: the append runs on a blocking thread.
    pub async fn append(
        &self,
        batch: AppendBatch,
    ) -> Result<Vec<(String, i32, i64)>, StorageError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.append_blocking(batch))
            .await
            .map_err(|e| StorageError::Sqlite(format!("The append panicked: {e}")))?
    }

    /// The connectors that have used a topic (KIP-558 active topics), sorted.
    pub async fn topic_users(&self, topic: String) -> Result<Vec<String>, StorageError> {
        self.writer.call(move |c| topic_users(c, &topic)).await
    }

    /// Deletes a topic with its records, partitions, sink offsets and active-topic rows in one
    /// transaction. Returns false when there was no such topic.
    pub async fn delete_topic(&self, topic: String) -> Result<bool, StorageError> {
        let cache = self.inner.log_bytes.clone();
        self.writer
            .call(move |c| {
                let deleted = delete_topic(c, &topic)?;
                if deleted {
                    *cache.lock().expect("log bytes lock") = None;
                }
                Ok(deleted)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{ProducedRecord, StoreOptions, Synchronous};

    fn store(dir: &std::path::Path) -> Store {
        Store::open(&StoreOptions {
            path: dir.join("t.db"),
            synchronous: Synchronous::Normal,
            max_bytes: None,
            buffer: None,
        })
        .expect("open")
    }

    fn record(topic: &str, value: &str) -> ProducedRecord {
        ProducedRecord {
            topic: topic.into(),
            value: Some(value.as_bytes().to_vec()),
            ..ProducedRecord::default()
        }
    }

    #[tokio::test]
    async fn append_read_offsets_and_delete() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store(dir.path());
        let tp = TopicPartition {
            topic: "t".into(),
            partition: 0,
        };
        assert_eq!(store.partition_offsets(tp.clone()).await.unwrap(), None);
        let batch = AppendBatch {
            records: vec![record("t", "a"), record("t", "b")],
            ..AppendBatch::default()
        };
        let assigned = store.append(batch).await.expect("append");
        assert_eq!(assigned, vec![("t".into(), 0, 0), ("t".into(), 0, 1)]);
        assert_eq!(store.partition_count("t".into()).await.unwrap(), Some(1));
        assert_eq!(
            store.partition_offsets(tp.clone()).await.unwrap(),
            Some(PartitionOffsets {
                beginning: 0,
                end: 2
            })
        );
        let read = store.read(tp.clone(), 1, 10).await.expect("read");
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].value.as_deref(), Some(&b"b"[..]));
        assert!(store.delete_topic("t".into()).await.expect("delete"));
        assert!(!store.delete_topic("t".into()).await.expect("delete"));
        assert_eq!(store.partition_count("t".into()).await.unwrap(), None);
        assert!(store.topics().await.unwrap().is_empty());
        store.close().await;
    }

    #[tokio::test]
    async fn a_bounded_read_stops_at_its_byte_budget_and_always_reads_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store(dir.path());
        let tp = TopicPartition {
            topic: "t".into(),
            partition: 0,
        };
        let value = "v".repeat(100);
        let batch = AppendBatch {
            records: (0..10).map(|_| record("t", &value)).collect(),
            ..AppendBatch::default()
        };
        store.append(batch).await.expect("append");
        let all = store.read(tp.clone(), 0, 100).await.expect("read");
        assert_eq!(all.len(), 10);
        let each = all[0].size();
        assert_eq!(each, 120, "20 bytes around a 100-byte value");
        let offsets = |rs: &[LogRecord]| rs.iter().map(|r| r.offset).collect::<Vec<_>>();
        let three = store
            .read_within(tp.clone(), 2, 100, 3 * each + each / 2)
            .await
            .expect("read");
        assert_eq!(offsets(&three), vec![2, 3, 4]);
        let exact = store
            .read_within(tp.clone(), 0, 100, 4 * each)
            .await
            .expect("read");
        assert_eq!(exact.len(), 4);
        let one = store
            .read_within(tp.clone(), 9, 100, 0)
            .await
            .expect("read");
        assert_eq!(offsets(&one), vec![9]);
        let capped = store
            .read_within(tp.clone(), 0, 2, usize::MAX)
            .await
            .expect("read");
        assert_eq!(offsets(&capped), vec![0, 1]);
        store.close().await;
    }

    #[tokio::test]
    async fn summaries_count_records_bytes_and_times_also_read_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = store(dir.path());
        let stamped = |value: &str, ts: i64| ProducedRecord {
            key: Some(b"k".to_vec()),
            timestamp: Some(ts),
            ..record("t", value)
        };
        let batch = AppendBatch {
            records: vec![stamped("ab", 2_000), stamped("cde", 1_000)],
            ..AppendBatch::default()
        };
        store.append(batch).await.expect("append");
        let expected = vec![PartitionSummary {
            partition: 0,
            beginning_offset: 0,
            end_offset: 2,
            records: 2,
            bytes: 7,
            oldest_timestamp: Some(1_000),
            newest_timestamp: Some(2_000),
        }];
        let got = store
            .partition_summaries("t".into())
            .await
            .expect("summary");
        assert_eq!(got.as_ref(), Some(&expected));
        assert_eq!(store.partition_summaries("u".into()).await.unwrap(), None);
        // A reader beside the open store sees the same, and cannot write.
        let reader = LogReader::open(&dir.path().join("t.db")).expect("read-only");
        assert_eq!(reader.partition_summaries("t").unwrap(), Some(expected));
        assert_eq!(reader.topics().unwrap(), vec![("t".to_string(), 1)]);
        let tp = TopicPartition {
            topic: "t".into(),
            partition: 0,
        };
        assert_eq!(
            reader.read(&tp, 1, 10).unwrap()[0].value.as_deref(),
            Some(&b"cde"[..])
        );
        assert!(reader.conn.execute("DELETE FROM records", []).is_err());
        assert!(LogReader::open(&dir.path().join("absent.db")).is_err());
        store.close().await;
    }
}
