//! The SQLite file that holds all of liteconnect's state: connector configs, target states, task configs,
//! statuses, source and sink offsets, and the topic log.
//!
//! [`Store`] is a cheap, cloneable handle. Writes go to one writer thread (group commit); reads that need
//! no write ordering go to a reader thread. Async code uses the `async fn`s; task threads, which may
//! block, use the `*_blocking` twins. No SQLite call ever runs on an async executor thread.

mod append;
mod db;
pub mod groups;
pub mod id_map;
mod lock;
mod log;
mod open;
mod queries;
pub mod registry;
mod topics;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags};
use serde_json::Value as Json;

pub use append::PendingAppend;
pub use log::{AppendBatch, LogRecord, PartitionStat, ProducedRecord, TopicPartition};
pub use queries::{StoredConnector, StoredStatus};
pub use topics::{LogReader, PartitionOffsets, PartitionSummary};

use crate::model::TargetState;
use db::DbThread;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// A failure of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database file has no room left: the disk, or the configured size limit, is full.
    #[error("The disk is full: the database could not grow ({0}). Free some space, then resume or restart the affected connectors.")]
    DiskFull(String),
    /// Another liteconnect process holds the database (under this name or another: a symlink, a hard link).
    #[error("The database {path} is in use by another liteconnect worker ({holder} holds its lock). Only one worker may use a database at a time.")]
    Locked {
        /// The database file, its symlinks resolved.
        path: String,
        /// Who holds the lock: "process <pid>" when known.
        holder: String,
    },
    /// The database cannot be written: the file or its directory is read-only, or the file is broken.
    #[error("The database {path} cannot be written: {cause}")]
    Unwritable {
        /// The database file.
        path: String,
        /// What SQLite reported.
        cause: String,
    },
    /// The file is not one this version can use; it was left unchanged.
    #[error("{0}")]
    Incompatible(String),
    /// A write was refused because what it needs does not exist or already exists.
    #[error("{0}")]
    Conflict(String),
    /// SQLite reported an error.
    #[error("SQLite error: {0}")]
    Sqlite(String),
    /// The topic log holds `log.buffer.max.bytes` and the policy is `pause`: the append was refused.
    #[error("{0}")]
    BufferFull(String),
    /// The database threads have stopped.
    #[error("The database is closed.")]
    Closed,
}

impl StorageError {
    fn duplicate(&self) -> StorageError {
        match self {
            StorageError::DiskFull(m) => StorageError::DiskFull(m.clone()),
            StorageError::Locked { path, holder } => StorageError::Locked {
                path: path.clone(),
                holder: holder.clone(),
            },
            StorageError::Unwritable { path, cause } => StorageError::Unwritable {
                path: path.clone(),
                cause: cause.clone(),
            },
            StorageError::Incompatible(m) => StorageError::Incompatible(m.clone()),
            StorageError::Conflict(m) => StorageError::Conflict(m.clone()),
            StorageError::Sqlite(m) => StorageError::Sqlite(m.clone()),
            StorageError::BufferFull(m) => StorageError::BufferFull(m.clone()),
            StorageError::Closed => StorageError::Closed,
        }
    }

    /// True when the failure is the database having no room to grow.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, StorageError::DiskFull(_))
    }
}

impl From<rusqlite::Error> for StorageError {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(f, _) = &e {
            if f.code == rusqlite::ErrorCode::DiskFull {
                return StorageError::DiskFull(e.to_string());
            }
        }
        StorageError::Sqlite(e.to_string())
    }
}

impl From<serde_json::Error> for StorageError {
    fn from(e: serde_json::Error) -> Self {
        StorageError::Sqlite(format!("stored JSON could not be read: {e}"))
    }
}

/// How hard SQLite works to make each commit durable (`storage.synchronous`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synchronous {
    /// WAL with `synchronous=NORMAL`: a commit survives a crash of the process; a power loss may lose the last commits.
    Normal,
    /// `synchronous=FULL`: every commit is on disk before it is acknowledged, also across power loss.
    Full,
}

/// What happens when an append would take the topic log over `log.buffer.max.bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferPolicy {
    /// Sources wait: their appends are refused until sinks have delivered (and so freed) enough.
    Pause,
    /// The oldest records are deleted to make room, counted and logged.
    DropOldest,
}

/// The cap on the bytes the topic log holds (`log.buffer.max.bytes`, `log.buffer.full.policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferCap {
    /// The cap, in key + value + header bytes.
    pub max_bytes: u64,
    /// What to do when it is reached.
    pub policy: BufferPolicy,
}

/// Options for opening the database.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// The SQLite file.
    pub path: PathBuf,
    /// Durability of commits.
    pub synchronous: Synchronous,
    /// An upper bound on the file's size in bytes, if any (`storage.max.bytes`).
    pub max_bytes: Option<u64>,
    /// A cap on the bytes the topic log holds, if any.
    pub buffer: Option<BufferCap>,
}

/// What hears of the store's work as it commits: each run of records appended to the log, and how long
/// each group commit took. Whoever opens the store gives it one ([`Store::open_observed`]); the worker
/// gives its metrics. Calls come from the writer thread, so they must be quick and must not block.
pub trait StoreObserver: Send + Sync + std::fmt::Debug {
    /// A committed run of `records` records (`bytes` bytes) appended to one partition, ending before
    /// offset `end`.
    fn appended_run(&self, topic: &str, partition: i32, end: i64, records: u64, bytes: u64);

    /// The bytes the log holds as last known, when the store has not counted them itself (read for
    /// [`Store::buffer_fill_ratio`]).
    fn log_bytes(&self) -> u64;

    /// A group commit took `seconds`, from `BEGIN` to the end of `COMMIT`.
    fn committed(&self, seconds: f64);
}

/// The observer of a store opened without one: it hears nothing and knows no bytes.
#[derive(Debug)]
struct Unobserved;

impl StoreObserver for Unobserved {
    fn appended_run(&self, _: &str, _: i32, _: i64, _: u64, _: u64) {}

    fn log_bytes(&self) -> u64 {
        0
    }

    fn committed(&self, _: f64) {}
}

/// A handle to the database. Clones share the same threads.
#[derive(Clone, Debug)]
pub struct Store {
    writer: DbThread,
    reader: DbThread,
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    /// `path` with symlinks and `..` resolved: what the health probe opens.
    canonical: PathBuf,
    cluster_id: String,
    /// Held until the store is closed: the OS locks keep a second worker out. The database threads hold
    /// clones, so the locks outlive both SQLite connections.
    lock: std::sync::Mutex<Option<Arc<lock::StoreLock>>>,
    buffer: Option<BufferCap>,
    /// The log's size in bytes as last known (None: count again). Only kept when there is a cap.
    log_bytes: Arc<Mutex<Option<u64>>>,
    /// Records deleted by `drop_oldest` since the store was opened.
    dropped: Arc<AtomicU64>,
    /// What hears of appends and commits.
    observer: Arc<dyn StoreObserver>,
    /// Whether the last write failed for want of room (the disk, or `storage.max.bytes`).
    out_of_room: Arc<std::sync::atomic::AtomicBool>,
}

impl Store {
    /// Opens (creating if needed) the database, takes the single-writer lock, applies migrations and starts
    /// the database threads. Blocking: call it before the executor starts, or from `spawn_blocking`.
    ///
    /// # Errors
    /// [`StorageError::Locked`] when another worker holds the file, [`StorageError::Incompatible`] when the file
    /// is not a liteconnect database or was written by a newer version (the file is not modified then).
    pub fn open(options: &StoreOptions) -> Result<Store, StorageError> {
        Self::open_observed(options, Arc::new(Unobserved))
    }

    /// Like [`Store::open`], with `observer` hearing of every append and group commit (the worker's
    /// metrics).
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_observed(
        options: &StoreOptions,
        observer: Arc<dyn StoreObserver>,
    ) -> Result<Store, StorageError> {
        let path = &options.path;
        if let Some(parent) = path.parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    StorageError::Incompatible(format!(
                        "Cannot create the directory {} for the database: {e}",
                        parent.display()
                    ))
                })?;
            }
        }
        let canonical = lock::canonical(path)?;
        let lock = Arc::new(lock::acquire(&canonical)?);
        open::check_compatible(path)?;
        let mut conn = Connection::open(&canonical)?;
        open::configure(&conn, options)?;
        embedded::migrations::runner().run(&mut conn).map_err(|e| {
            StorageError::Incompatible(format!("Migrating {}: {e}", path.display()))
        })?;
        let cluster_id = queries::ensure_identity(&conn)?;
        open::check_writable(&conn, path)?;
        let reader = Connection::open_with_flags(
            &canonical,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        reader.busy_timeout(std::time::Duration::from_secs(5))?;
        let out_of_room = Arc::new(std::sync::atomic::AtomicBool::new(false));
        Ok(Store {
            writer: DbThread::writer(conn, lock.clone(), observer.clone(), out_of_room.clone()),
            reader: DbThread::reader(reader, lock.clone()),
            inner: Arc::new(Inner {
                path: path.clone(),
                canonical,
                cluster_id,
                lock: std::sync::Mutex::new(Some(lock)),
                buffer: options.buffer,
                log_bytes: Arc::new(Mutex::new(None)),
                dropped: Arc::new(AtomicU64::new(0)),
                observer,
                out_of_room,
            }),
        })
    }

    /// Per topic partition: the first offset held, the end offset, the records and their bytes (one
    /// pass over the log, on the reader thread).
    pub async fn partition_stats(
        &self,
    ) -> Result<Vec<(TopicPartition, PartitionStat)>, StorageError> {
        self.reader.call(log::partition_stats).await
    }

    /// How full the log is against `log.buffer.max.bytes`, when there is a cap: from the size the
    /// appends keep, or what the observer last knew (the log statistics) when that is not known.
    pub fn buffer_fill_ratio(&self) -> Option<f64> {
        let cap = self.inner.buffer?;
        let known = *self.inner.log_bytes.lock().expect("log bytes lock");
        let bytes = known.unwrap_or_else(|| self.inner.observer.log_bytes());
        Some(bytes as f64 / cap.max_bytes.max(1) as f64)
    }

    /// Finishes every queued write, closes the connections and releases the single-writer lock, so another
    /// worker may open the file at once. Every later call on any clone fails with [`StorageError::Closed`].
    pub async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
        self.inner.lock.lock().expect("lock file mutex").take();
    }

    /// Checks that the database still answers: a round trip through the writer's transaction and a read on
    /// a fresh connection (which has no cached pages, so damage on disk shows).
    ///
    /// # Errors
    /// What SQLite reported.
    pub async fn probe(&self) -> Result<(), StorageError> {
        // A store that cannot write for want of room is not healthy, though it still answers reads.
        if self
            .inner
            .out_of_room
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(StorageError::DiskFull(
                "the last write found no room".into(),
            ));
        }
        self.writer
            .call(|c| {
                c.query_row("SELECT count(*) FROM worker_identity", [], |r| {
                    r.get::<_, i64>(0)
                })?;
                Ok(())
            })
            .await?;
        let canonical = self.inner.canonical.clone();
        tokio::task::spawn_blocking(move || open::probe_read(&canonical))
            .await
            .map_err(|e| StorageError::Sqlite(format!("The read probe panicked: {e}")))?
    }

    /// The file this store keeps its state in.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The stable id reported as `kafka_cluster_id`, generated when the database was created.
    pub fn cluster_id(&self) -> &str {
        &self.inner.cluster_id
    }

    // ----- connectors -------------------------------------------------------------------------------

    /// Every stored connector with its config, target state and task configs, in creation order.
    pub async fn load_connectors(&self) -> Result<Vec<StoredConnector>, StorageError> {
        self.writer.call(queries::load_connectors).await
    }

    /// Creates a connector with its target state, its first task configs (none until they are
    /// generated) and optional initial offsets (KIP-995), all in one transaction; fails if the name is
    /// taken.
    pub async fn create_connector(
        &self,
        name: String,
        config: BTreeMap<String, String>,
        target: TargetState,
        tasks: Vec<BTreeMap<String, String>>,
        source_offsets: Vec<(Json, Option<Json>)>,
        sink_offsets: Vec<(String, i32, Option<i64>)>,
    ) -> Result<(), StorageError> {
        self.writer
            .call(move |c| {
                queries::create_connector(c, &name, &config, target, &tasks, &source_offsets)?;
                queries::write_sink_offsets(c, &name, &sink_offsets)
            })
            .await
    }

    /// Replaces a connector's config, creating it (target state STARTED) when it does not exist.
    /// Returns true when it was created.
    pub async fn put_connector_config(
        &self,
        name: String,
        config: BTreeMap<String, String>,
    ) -> Result<bool, StorageError> {
        self.writer
            .call(move |c| queries::put_connector_config(c, &name, &config))
            .await
    }

    /// Removes a connector's config, target state, task configs, statuses and active topics.
    /// Offsets are kept, as Kafka keeps them.
    pub async fn delete_connector(&self, name: String) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::delete_connector(c, &name))
            .await
    }

    /// Writes a target state; STOPPED empties the task configs in the same transaction.
    pub async fn set_target_state(
        &self,
        name: String,
        target: TargetState,
    ) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::set_target_state(c, &name, target))
            .await
    }

    /// Replaces a connector's task configs with a new set.
    pub async fn put_task_configs(
        &self,
        name: String,
        tasks: Vec<BTreeMap<String, String>>,
    ) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::put_task_configs(c, &name, &tasks))
            .await
    }

    /// The config a command-line file last applied to a connector, as canonical JSON.
    pub async fn applied_file_config(&self, name: String) -> Result<Option<String>, StorageError> {
        self.writer
            .call(move |c| queries::applied_file_config(c, &name))
            .await
    }

    /// Records the config a command-line file applied.
    pub async fn set_applied_file_config(
        &self,
        name: String,
        config: String,
    ) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::set_applied_file_config(c, &name, &config))
            .await
    }

    // ----- statuses ---------------------------------------------------------------------------------

    /// Records a connector's status without waiting for it to be written.
    pub fn record_connector_status(&self, name: &str, status: StoredStatus) {
        let name = name.to_string();
        self.writer.send("connector status", move |c| {
            queries::put_connector_status(c, &name, &status)
        });
    }

    /// Records a task's status without waiting for it to be written.
    pub fn record_task_status(&self, name: &str, task: u32, status: StoredStatus) {
        let name = name.to_string();
        self.writer.send("task status", move |c| {
            queries::put_task_status(c, &name, task, &status)
        });
    }

    /// Forgets the statuses of a connector's tasks numbered `from` and above.
    pub fn forget_task_statuses(&self, name: &str, from: u32) {
        let name = name.to_string();
        self.writer.send("task statuses", move |c| {
            queries::delete_task_statuses(c, &name, from)
        });
    }

    // ----- source offsets ---------------------------------------------------------------------------

    /// All source offsets of a connector, as (partition, offset) JSON pairs.
    pub async fn source_offsets(
        &self,
        connector: String,
    ) -> Result<Vec<(Json, Json)>, StorageError> {
        self.writer
            .call(move |c| queries::source_offsets(c, &connector))
            .await
    }

    /// The stored offset for one source partition (blocking, for task threads).
    pub fn source_offset_blocking(
        &self,
        connector: &str,
        partition: &Json,
    ) -> Result<Option<Json>, StorageError> {
        let connector = connector.to_string();
        let key = queries::canonical_json(partition);
        self.writer
            .call_blocking(move |c| queries::source_offset(c, &connector, &key))
    }

    /// Writes source offsets (a `None` offset removes the partition) in one transaction.
    pub async fn write_source_offsets(
        &self,
        connector: String,
        offsets: Vec<(Json, Option<Json>)>,
    ) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::write_source_offsets(c, &connector, &offsets))
            .await
    }

    // ----- sink offsets -----------------------------------------------------------------------------

    /// A sink connector's committed offsets: (topic, partition) → next offset to read.
    pub async fn sink_offsets(
        &self,
        connector: String,
    ) -> Result<Vec<(String, i32, i64)>, StorageError> {
        self.writer
            .call(move |c| queries::sink_offsets(c, &connector))
            .await
    }

    /// Same as [`Store::sink_offsets`], for task threads.
    pub fn sink_offsets_blocking(
        &self,
        connector: &str,
    ) -> Result<Vec<(String, i32, i64)>, StorageError> {
        let connector = connector.to_string();
        self.writer
            .call_blocking(move |c| queries::sink_offsets(c, &connector))
    }

    /// Commits sink offsets (next offset to read per topic partition); `None` removes one.
    pub fn commit_sink_offsets_blocking(
        &self,
        connector: &str,
        offsets: Vec<(String, i32, Option<i64>)>,
    ) -> Result<(), StorageError> {
        let connector = connector.to_string();
        self.writer
            .call_blocking(move |c| queries::write_sink_offsets(c, &connector, &offsets))
    }

    /// Async twin of [`Store::commit_sink_offsets_blocking`], for the offsets API.
    pub async fn write_sink_offsets(
        &self,
        connector: String,
        offsets: Vec<(String, i32, Option<i64>)>,
    ) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::write_sink_offsets(c, &connector, &offsets))
            .await
    }

    /// Removes every sink offset of a connector.
    pub async fn reset_sink_offsets(&self, connector: String) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::reset_sink_offsets(c, &connector))
            .await
    }

    // ----- active topics (KIP-558) ------------------------------------------------------------------

    /// The topics a connector has used, sorted.
    pub async fn active_topics(&self, connector: String) -> Result<Vec<String>, StorageError> {
        self.writer
            .call(move |c| queries::active_topics(c, &connector))
            .await
    }

    /// Forgets the topics a connector has used.
    pub async fn reset_active_topics(&self, connector: String) -> Result<(), StorageError> {
        self.writer
            .call(move |c| queries::reset_active_topics(c, &connector))
            .await
    }

    /// Records that a sink connector consumed from a topic.
    pub fn record_active_topic_blocking(
        &self,
        connector: &str,
        topic: &str,
    ) -> Result<(), StorageError> {
        let (connector, topic) = (connector.to_string(), topic.to_string());
        self.writer
            .call_blocking(move |c| queries::add_active_topic(c, &connector, &topic))
    }

    // ----- the topic log ----------------------------------------------------------------------------

    /// How many records `log.buffer.full.policy=drop_oldest` has deleted since the worker started.
    pub fn dropped_records(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Makes sure a topic exists with at least `partitions` partitions (adding partitions if it has
    /// fewer) and returns its partition count.
    pub fn ensure_partitions_blocking(
        &self,
        topic: &str,
        partitions: i32,
    ) -> Result<i32, StorageError> {
        let topic = topic.to_string();
        self.writer
            .call_blocking(move |c| log::ensure_partitions(c, &topic, partitions))
    }

    /// Names of all topics, sorted.
    pub fn topics_blocking(&self) -> Result<Vec<(String, i32)>, StorageError> {
        self.reader.call_blocking(log::topics)
    }

    /// Reads up to `max` records of one partition from `from` on.
    pub fn read_blocking(
        &self,
        tp: TopicPartition,
        from: i64,
        max: usize,
    ) -> Result<Vec<LogRecord>, StorageError> {
        self.reader
            .call_blocking(move |c| log::read(c, &tp, from, max))
    }

    /// The first offset still retained in a partition (the log start), or the end offset when it is empty.
    pub fn log_start_blocking(&self, tp: TopicPartition) -> Result<i64, StorageError> {
        self.reader.call_blocking(move |c| log::log_start(c, &tp))
    }

    /// Deletes records older than `retention_ms` and, per partition, the oldest beyond `retention_bytes`.
    /// Returns how many records were deleted.
    pub async fn apply_retention(
        &self,
        retention_ms: Option<i64>,
        retention_bytes: Option<i64>,
    ) -> Result<u64, StorageError> {
        let cache = self.inner.log_bytes.clone();
        self.writer
            .call(move |c| {
                let deleted = log::apply_retention(c, retention_ms, retention_bytes)?;
                if deleted > 0 {
                    *cache.lock().expect("log bytes lock") = None;
                }
                Ok(deleted)
            })
            .await
    }

    /// Creates a topic with the given partition count if it does not exist.
    pub async fn ensure_topic(&self, name: String, partitions: i32) -> Result<(), StorageError> {
        self.writer
            .call(move |c| log::ensure_topic(c, &name, partitions).map(|_| ()))
            .await
    }
}

/// The canonical form of a source partition: JSON with sorted keys.
pub fn canonical_key(partition: &Json) -> String {
    queries::canonical_json(partition)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::State;
    use rusqlite::OptionalExtension;
    use serde_json::json;

    fn open(dir: &Path) -> Store {
        Store::open(&StoreOptions {
            path: dir.join("t.db"),
            synchronous: Synchronous::Normal,
            max_bytes: None,
            buffer: None,
        })
        .unwrap()
    }

    fn record(topic: &str, value: &str, timestamp: i64) -> ProducedRecord {
        ProducedRecord {
            topic: topic.into(),
            partition: None,
            timestamp: Some(timestamp),
            key: None,
            value: Some(value.as_bytes().to_vec()),
            headers: vec![("h".into(), Some(b"v".to_vec()))],
        }
    }

    /// Stores a connector with an empty config, STARTED, without tasks or offsets.
    async fn create(store: &Store, name: &str) {
        crate::test_support::create_running(store, name, BTreeMap::new()).await;
    }

    fn tp(topic: &str) -> TopicPartition {
        TopicPartition {
            topic: topic.into(),
            partition: 0,
        }
    }

    #[test]
    fn long_batches_across_topics_keep_offsets_order_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        // Runs longer and shorter than one multi-row statement, interleaved between two topics.
        let sizes = [("a", 120), ("b", 3), ("a", 51), ("b", 50), ("a", 1)];
        let mut records = Vec::new();
        for (topic, n) in sizes {
            for _ in 0..n {
                let i = records.len();
                let mut r = record(topic, &format!("v{i}"), i as i64);
                if i % 7 == 0 {
                    r.headers.clear();
                }
                records.push(r);
            }
        }
        let expected = records.clone();
        for round in 0..2i64 {
            let assigned = store
                .append_blocking(AppendBatch {
                    records: records.clone(),
                    ..AppendBatch::default()
                })
                .unwrap();
            let (mut next_a, mut next_b) = (round * 172, round * 53);
            for ((topic, partition, offset), r) in assigned.iter().zip(&expected) {
                assert_eq!((topic, *partition), (&r.topic, 0));
                let next = if topic == "a" {
                    &mut next_a
                } else {
                    &mut next_b
                };
                assert_eq!(*offset, *next, "{topic}");
                *next += 1;
            }
            assert_eq!(assigned.len(), expected.len());
        }
        for topic in ["a", "b"] {
            let read = store.read_blocking(tp(topic), 0, 1000).unwrap();
            let want: Vec<&ProducedRecord> = expected.iter().filter(|r| r.topic == topic).collect();
            assert_eq!(read.len(), want.len() * 2);
            for (i, got) in read.iter().enumerate() {
                let w = want[i % want.len()];
                assert_eq!(got.offset, i as i64);
                assert_eq!(
                    (&got.value, &got.headers, got.timestamp),
                    (&w.value, &w.headers, w.timestamp)
                );
            }
        }
    }

    #[test]
    fn appends_assign_offsets_and_store_offsets_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let batch = AppendBatch {
            connector: "c".into(),
            records: vec![record("t", "a", 1), record("t", "b", 2)],
            offsets: vec![(json!({"f": "x"}), Some(json!({"position": 2})))],
            track_topics: true,
        };
        let assigned = store.append_blocking(batch).unwrap();
        assert_eq!(assigned, vec![("t".into(), 0, 0), ("t".into(), 0, 1)]);
        let read = store.read_blocking(tp("t"), 1, 10).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].value.as_deref(), Some(&b"b"[..]));
        assert_eq!(
            read[0].headers,
            vec![("h".to_string(), Some(b"v".to_vec()))]
        );
        assert_eq!(
            store
                .source_offset_blocking("c", &json!({"f": "x"}))
                .unwrap(),
            Some(json!({"position": 2}))
        );
        // A batch naming a partition that does not exist is refused whole: no record, no offset.
        let mut bad = record("t", "c", 3);
        bad.partition = Some(5);
        let err = store.append_blocking(AppendBatch {
            connector: "c".into(),
            records: vec![record("t", "ok", 3), bad],
            offsets: vec![(json!({"f": "x"}), Some(json!({"position": 9})))],
            track_topics: false,
        });
        assert!(err.is_err());
        assert_eq!(store.read_blocking(tp("t"), 0, 10).unwrap().len(), 2);
        assert_eq!(
            store
                .source_offset_blocking("c", &json!({"f": "x"}))
                .unwrap(),
            Some(json!({"position": 2}))
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn retention_by_time_and_by_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let now = crate::model::now_ms();
        let records = (0..10)
            .map(|i| {
                record(
                    "r",
                    &"x".repeat(100),
                    if i < 4 { now - 10_000_000 } else { now },
                )
            })
            .collect();
        let s = store.clone();
        tokio::task::spawn_blocking(move || {
            s.append_blocking(AppendBatch {
                connector: "c".into(),
                records,
                offsets: vec![],
                track_topics: false,
            })
        })
        .await
        .unwrap()
        .unwrap();
        // Four records are older than an hour.
        assert_eq!(
            store.apply_retention(Some(3_600_000), None).await.unwrap(),
            4
        );
        let s = store.clone();
        let start = tokio::task::spawn_blocking(move || s.log_start_blocking(tp("r")))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(start, 4);
        // Each record is 100 value bytes plus 6 header bytes... keep roughly the newest 300 bytes.
        let deleted = store.apply_retention(None, Some(300)).await.unwrap();
        assert_eq!(deleted, 4, "six remain, the newest two fit in 300 bytes");
        let s = store.clone();
        let left = tokio::task::spawn_blocking(move || s.read_blocking(tp("r"), 0, 100))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            left.iter().map(|r| r.offset).collect::<Vec<_>>(),
            vec![8, 9]
        );
        // Offsets keep counting after deletion.
        let s = store.clone();
        let assigned = tokio::task::spawn_blocking(move || {
            s.append_blocking(AppendBatch {
                connector: "c".into(),
                records: vec![record("r", "y", now)],
                offsets: vec![],
                track_topics: false,
            })
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(assigned[0].2, 10);
    }

    fn capped(dir: &Path, policy: BufferPolicy) -> Store {
        Store::open(&StoreOptions {
            path: dir.join("c.db"),
            synchronous: Synchronous::Normal,
            max_bytes: None,
            buffer: Some(BufferCap {
                max_bytes: 1000,
                policy,
            }),
        })
        .unwrap()
    }

    fn batch(n: usize, ts: i64) -> AppendBatch {
        AppendBatch {
            connector: "src".into(),
            records: (0..n).map(|_| record("t", &"x".repeat(90), ts)).collect(),
            offsets: vec![],
            track_topics: false,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_byte_cap_pauses_until_sinks_have_delivered() {
        let dir = tempfile::tempdir().unwrap();
        let store = capped(dir.path(), BufferPolicy::Pause);
        // 100 bytes a record (90 + a 10-byte header): nine fit under 1000, the tenth batch waits.
        let s = store.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            s.append_blocking(batch(9, 1)).unwrap();
            s.try_append_blocking(batch(2, 2)).unwrap()
        })
        .await
        .unwrap();
        let (refused, message) = outcome.unwrap_err();
        assert_eq!(refused.records.len(), 2);
        assert!(message.contains("log.buffer.max.bytes=1000"), "{message}");
        // A sink connector that exists and has read past five records frees them.
        create(&store, "snk").await;
        store
            .write_sink_offsets("snk".into(), vec![("t".into(), 0, Some(5))])
            .await
            .unwrap();
        let s = store.clone();
        let assigned = tokio::task::spawn_blocking(move || s.append_blocking(refused))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(assigned[0].2, 9);
        let s = store.clone();
        let start = tokio::task::spawn_blocking(move || s.log_start_blocking(tp("t")))
            .await
            .unwrap()
            .unwrap();
        // Above three quarters of the cap, an append deletes at most twice its own records of those
        // delivered: four of the five, which make room for the two.
        assert_eq!(start, 4, "four delivered records were deleted");
        // The next append deletes the last delivered one and no undelivered record.
        let s = store.clone();
        tokio::task::spawn_blocking(move || s.append_blocking(batch(1, 3)))
            .await
            .unwrap()
            .unwrap();
        let s = store.clone();
        let start = tokio::task::spawn_blocking(move || s.log_start_blocking(tp("t")))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(start, 5, "only delivered records were deleted");
        assert_eq!(store.dropped_records(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_byte_cap_drops_the_oldest_when_told_to() {
        let dir = tempfile::tempdir().unwrap();
        let store = capped(dir.path(), BufferPolicy::DropOldest);
        let s = store.clone();
        tokio::task::spawn_blocking(move || {
            s.append_blocking(batch(8, 1)).unwrap();
            s.append_blocking(batch(5, 2)).unwrap();
            let left = s.read_blocking(tp("t"), 0, 100).unwrap();
            assert_eq!(left.first().map(|r| r.offset), Some(3));
            assert_eq!(left.len(), 10);
        })
        .await
        .unwrap();
        assert_eq!(store.dropped_records(), 3);
    }

    #[test]
    fn a_second_store_on_the_same_file_is_locked_out() {
        let dir = tempfile::tempdir().unwrap();
        let _first = open(dir.path());
        let second = Store::open(&StoreOptions {
            path: dir.path().join("t.db"),
            synchronous: Synchronous::Normal,
            max_bytes: None,
            buffer: None,
        });
        assert!(
            matches!(second, Err(StorageError::Locked { .. })),
            "{second:?}"
        );
    }

    #[test]
    fn other_names_for_an_open_store_are_locked_out_until_it_closes() {
        let dir = tempfile::tempdir().unwrap();
        let first = open(dir.path());
        let db = dir.path().join("t.db");
        std::os::unix::fs::symlink(&db, dir.path().join("symlink.db")).unwrap();
        std::fs::hard_link(&db, dir.path().join("hardlink.db")).unwrap();
        let at = |name: &str| {
            Store::open(&StoreOptions {
                path: dir.path().join(name),
                synchronous: Synchronous::Normal,
                max_bytes: None,
                buffer: None,
            })
        };
        let pid = format!("process {}", std::process::id());
        for name in ["symlink.db", "hardlink.db"] {
            match at(name) {
                Err(StorageError::Locked { holder, .. }) => assert_eq!(holder, pid, "{name}"),
                other => panic!("{name}: {other:?}"),
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(first.close());
        let again = at("symlink.db").expect("the lock is released on close");
        rt.block_on(again.close());
    }

    fn status(state: State) -> StoredStatus {
        StoredStatus {
            state,
            trace: None,
            worker_id: "w".into(),
        }
    }

    /// The connector's status as stored in the file, read on a connection of its own.
    fn stored_state(dir: &Path, name: &str) -> Option<String> {
        let conn = rusqlite::Connection::open(dir.join("t.db")).unwrap();
        conn.query_row(
            "SELECT state FROM connector_statuses WHERE connector = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn create_stores_the_first_task_configs_and_refuses_a_second_create() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let config = BTreeMap::from([("connector.class".to_string(), "X".to_string())]);
        let tasks: Vec<BTreeMap<String, String>> = (0..2)
            .map(|i| BTreeMap::from([("task".to_string(), i.to_string())]))
            .collect();
        store
            .create_connector(
                "c".into(),
                config.clone(),
                TargetState::Started,
                tasks.clone(),
                vec![],
                vec![],
            )
            .await
            .unwrap();
        let again = store
            .create_connector(
                "c".into(),
                BTreeMap::new(),
                TargetState::Paused,
                vec![],
                vec![],
                vec![],
            )
            .await;
        assert!(matches!(again, Err(StorageError::Conflict(_))), "{again:?}");
        store.close().await;
        let store = open(dir.path());
        let stored = store.load_connectors().await.unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].config, config);
        assert_eq!(stored[0].target, TargetState::Started);
        assert_eq!(stored[0].tasks, tasks);
        store.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn statuses_nobody_waits_for_are_committed_alone_with_the_next_write_and_at_close() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        for name in ["alone", "with-next", "at-close"] {
            create(&store, name).await;
        }
        // Alone: committed once the short wait for company is over.
        store.record_connector_status("alone", status(State::Running));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while stored_state(dir.path(), "alone").is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "the status was never committed"
            );
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        assert_eq!(
            stored_state(dir.path(), "alone").as_deref(),
            Some("RUNNING")
        );
        // Followed by a write with a caller: committed when that write's answer comes.
        store.record_connector_status("with-next", status(State::Paused));
        store
            .set_target_state("with-next".into(), TargetState::Paused)
            .await
            .unwrap();
        assert_eq!(
            stored_state(dir.path(), "with-next").as_deref(),
            Some("PAUSED")
        );
        // Followed by the store's close: committed before the connection closes.
        store.record_connector_status("at-close", status(State::Failed));
        store.close().await;
        assert_eq!(
            stored_state(dir.path(), "at-close").as_deref(),
            Some("FAILED")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_database_of_schema_3_keeps_its_connectors_in_the_without_rowid_tables() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
            embedded::migrations::runner()
                .set_target(refinery::Target::Version(3))
                .run(&mut conn)
                .unwrap();
            conn.execute_batch(
                "INSERT INTO worker_identity VALUES (1, 'cluster', 0);
                 INSERT INTO connector_configs VALUES ('c', '{\"connector.class\":\"X\"}', 1, 2);
                 INSERT INTO target_states VALUES ('c', 'PAUSED', 'STOPPED');
                 INSERT INTO task_configs VALUES ('c', 0, '{\"t\":\"0\"}'), ('c', 1, '{\"t\":\"1\"}');
                 INSERT INTO task_counts VALUES ('c', 2);
                 INSERT INTO connector_statuses VALUES ('c', 'STOPPED', NULL, 'w', 3);
                 INSERT INTO task_statuses VALUES ('c', 0, 'FAILED', 'trace', 'w', 4);",
            )
            .unwrap();
        }
        let store = open(dir.path());
        let stored = store.load_connectors().await.unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].name, "c");
        assert_eq!(stored[0].config["connector.class"], "X");
        assert_eq!(stored[0].target, TargetState::Stopped);
        assert_eq!(stored[0].tasks.len(), 2);
        assert_eq!(stored[0].tasks[1]["t"], "1");
        assert_eq!(store.cluster_id(), "cluster");
        store.close().await;
        let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
        let statuses: (String, String, String) = conn
            .query_row(
                "SELECT s.state, t.state, t.trace FROM connector_statuses s
                 JOIN task_statuses t ON t.connector = s.connector",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            statuses,
            ("STOPPED".into(), "FAILED".into(), "trace".into())
        );
        for table in [
            "connector_configs",
            "target_states",
            "task_configs",
            "task_counts",
            "connector_statuses",
            "task_statuses",
        ] {
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(sql.ends_with("WITHOUT ROWID"), "{table}: {sql}");
        }
    }
}
