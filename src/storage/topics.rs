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
}
