//! The connector plugin contract and the built-in connectors.
//!
//! The runtime owns the loops, converters, offsets and statuses; a plugin owns only its logic: which task
//! configs to generate, and how a task polls (source) or writes (sink). Task methods are blocking: every
//! task runs on its own thread, as in Kafka Connect.

#[cfg(feature = "airbyte")]
pub(crate) mod airbyte;
pub mod child;
pub(crate) mod file;
#[cfg(feature = "http")]
pub(crate) mod http;
pub mod jdbc;
#[cfg(feature = "kafka-client")]
pub mod kafka;
#[cfg(feature = "mqtt")]
pub(crate) mod mqtt;
pub(crate) mod spooldir;
pub(crate) mod verifiable;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;

use crate::config::def::ConfigDef;
use crate::record::{SinkRecord, SourceRecord};
use crate::storage::{Store, TopicPartition};

pub use crate::model::ConnectorType;

/// A connector or task config: Kafka's flat string map.
pub type Props = BTreeMap<String, String>;

/// Why a task or connector failed. `trace` is what the status API shows.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TaskError {
    /// Worth trying again after a pause (Kafka's `RetriableException`).
    #[error("{0}")]
    Retriable(String),
    /// Fatal: the task fails (Kafka's `ConnectException`).
    #[error("{0}")]
    Fatal(String),
}

impl TaskError {
    /// A fatal error.
    pub fn fatal(message: impl Into<String>) -> Self {
        TaskError::Fatal(message.into())
    }
}

/// What a source task may ask the runtime while it runs.
pub trait SourceTaskContext: Send {
    /// The stored offset of a source partition, if any.
    fn offset(&self, partition: &Json) -> Result<Option<Json>, TaskError>;
    /// Waits up to `timeout` unless the task is asked to stop or pause first. Returns false when it should
    /// return from `poll` at once. Tasks use it instead of sleeping.
    fn wait(&self, timeout: Duration) -> bool;
    /// Asks to be polled again after `timeout`, or sooner when the task is woken, paused or stopped; call
    /// it just before returning no records. Unlike [`wait`], the task holds no thread meanwhile: the
    /// runtime parks it and polls it again on a pool thread. The default waits, for contexts without a
    /// pool.
    ///
    /// [`wait`]: SourceTaskContext::wait
    fn idle(&self, timeout: Duration) {
        let _ = self.wait(timeout);
    }
    /// Makes sure a topic of the local log exists with at least `partitions` partitions (creating it, or
    /// adding partitions, as Kafka's admin client would) and returns its partition count. Sources that keep
    /// their records' partition numbers call it before returning records for a topic.
    fn ensure_topic(&self, _topic: &str, partitions: i32) -> Result<i32, TaskError> {
        Ok(partitions)
    }
    /// Shows a problem on the task's status while it keeps running (RUNNING, with `problem` as its
    /// trace), or clears it with `None`: something the user should fix that does not stop the task, such
    /// as a listed table that does not exist.
    fn warn(&self, _problem: Option<String>) {}
    /// Wakes the task whenever `path` may have changed (created, written, replaced, deleted), for as long
    /// as the returned guard is kept, so that an idle task can ask to be polled rarely ([`idle`]) instead
    /// of checking the file often. `None` when no file-system events are available: poll as before.
    ///
    /// [`idle`]: SourceTaskContext::idle
    fn watch_file(&self, _path: &std::path::Path) -> Option<Box<dyn std::any::Any + Send>> {
        None
    }
}

/// Where a record a source task returned was stored in the local log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAt {
    /// The topic (after the transforms).
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The record's offset in the partition.
    pub offset: i64,
}

/// A running source task.
pub trait SourceTask: Send {
    /// Called by the worker before `start` with the worker's store, for tasks that keep state of their
    /// own there or use the embedded Schema Registry (the mirror source's schema ID mappings). The
    /// default ignores it.
    fn attach_store(&mut self, store: &Store) {
        let _ = store;
    }
    /// Starts with the task config.
    fn start(&mut self, config: &Props, context: &dyn SourceTaskContext) -> Result<(), TaskError>;
    /// Returns the next records, or none after waiting a while (through `context.wait`).
    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError>;
    /// Called after everything the earlier polls returned is committed to the local log with its source
    /// offsets (records a transform dropped or the error handler skipped included), as Kafka's
    /// `SourceTask.commit()`. Sources that acknowledge to their origin (an MQTT broker, an HTTP client) or
    /// clean up after themselves (a spooled file) do it here, so nothing is acknowledged before it is
    /// stored. Not called for records that were not stored (the task stopped before they were).
    fn commit(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
    /// [`SourceTask::commit`] with where each record of the last poll was stored, in the order `poll`
    /// returned them (`None` for a record a transform dropped or the error handler skipped). The runtime
    /// calls this one; the default calls `commit`.
    fn commit_stored(&mut self, stored: &[Option<StoredAt>]) -> Result<(), TaskError> {
        let _ = stored;
        self.commit()
    }
    /// Whether the runtime may poll this task again while the records of its last poll are still
    /// being written to the log: the next batch is then read and converted while the writer stores the
    /// last one. Only for tasks with nothing to acknowledge (`commit` does nothing and `commit_stored` is
    /// not overridden): with `true`, the runtime calls `commit` once a batch is stored, possibly after
    /// the next `poll`, and never `commit_stored`. The default is `false`.
    fn polls_ahead(&self) -> bool {
        false
    }
    /// Called with `true` when the topic log is full (`log.buffer.max.bytes` with the `pause` policy) and
    /// the runtime holds the last poll's records until there is room (`poll` is not called meanwhile), and
    /// with `false` once they are stored or the wait ends. Sources that data is pushed to refuse new data
    /// meanwhile instead of letting it queue.
    fn log_full(&mut self, _full: bool) {}
    /// Releases resources; called once, after the last poll.
    fn stop(&mut self) {}
    /// Told, before `start`, which task this is: Kafka's task id, `<connector>-<task number>` (for its
    /// logs).
    fn identify(&mut self, _id: &str) {}
}

/// Where a sink task sends a record it could not write for a reason that lies in the record itself (a
/// constraint violation, a value the target refuses), as Kafka's `ErrantRecordReporter`: the worker's
/// `errors.tolerance` and dead letter queue rules apply to it as to a record that failed conversion.
pub trait ErrantRecordReporter {
    /// Reports `record` as failed with `message`. `Ok` means the record is skipped (and sent to the dead
    /// letter queue when one is set; the task goes on with the rest); `Err` means the tolerance is
    /// exceeded: the task should return that error from `put` or `flush`.
    fn report(&mut self, record: &SinkRecord, message: &str) -> Result<(), TaskError>;
}

/// The reporter of a plain `put` (a runtime without Kafka's errant record reporter): a failed record
/// fails the task with its message, followed by the record's place (`topic-partition@offset`) when
/// `with_place`.
#[derive(Debug, Clone, Copy)]
pub struct FailOnReport {
    /// Whether the message names the record's place.
    pub with_place: bool,
}

impl ErrantRecordReporter for FailOnReport {
    fn report(&mut self, record: &SinkRecord, message: &str) -> Result<(), TaskError> {
        if !self.with_place {
            return Err(TaskError::fatal(message));
        }
        Err(TaskError::Fatal(format!(
            "{message} ({}-{}@{})",
            record.record.topic,
            record.record.kafka_partition.unwrap_or(-1),
            record.kafka_offset
        )))
    }
}

/// What a sink task may tell the runtime while `put` runs (Kafka's `SinkTaskContext` with its errant
/// record reporter): records that failed, and how far records are delivered.
pub trait SinkTaskContext {
    /// Where records that failed for a reason of their own go.
    fn reporter(&mut self) -> &mut dyn ErrantRecordReporter;
    /// The log partition the records of this `put` were read from (their topic as stored, before any
    /// transform renamed it).
    fn partition(&self) -> &TopicPartition;
    /// Says that every record of `partition` below `next_offset` that `put` was given (in this call or an
    /// earlier one) is delivered or handled, as the offsets Kafka's `SinkTask.preCommit` returns: the
    /// runtime commits `next_offset` at once, before it returns, so a crash or a rewind after a failed
    /// `flush` repeats none of them. Sinks that deliver while `put` runs call it after each acknowledged
    /// request or run of messages. Offsets only move forward: a lower one is ignored, and so is a partition
    /// no longer assigned. `Err` (the offsets could not be stored): return it from `put`.
    fn delivered(&mut self, partition: &TopicPartition, next_offset: i64) -> Result<(), TaskError>;
    /// Says that the system the sink writes to is failing and `put` is retrying inside (`Some`, with why),
    /// or that an exchange went through again (`None`): the task shows RUNNING with a RetriableException
    /// trace meanwhile, as Kafka Connect shows a sink retrying, and the outage shows in the metrics.
    fn retrying(&mut self, _problem: Option<&str>) {}
}

/// A [`SinkTaskContext`] around a reporter alone, for a `put` outside the runtime: it commits nothing.
pub struct ReporterContext<'a> {
    /// The reporter.
    pub reporter: &'a mut dyn ErrantRecordReporter,
    /// The partition `put`'s records come from.
    pub partition: TopicPartition,
}

impl<'a> ReporterContext<'a> {
    /// A context for `records` (their partition is the first one's topic and partition).
    pub fn new(reporter: &'a mut dyn ErrantRecordReporter, records: &[SinkRecord]) -> Self {
        let partition = records
            .first()
            .map(|r| TopicPartition {
                topic: r.record.topic.clone(),
                partition: r.record.kafka_partition.unwrap_or(0),
            })
            .unwrap_or(TopicPartition {
                topic: String::new(),
                partition: 0,
            });
        ReporterContext {
            reporter,
            partition,
        }
    }
}

impl SinkTaskContext for ReporterContext<'_> {
    fn reporter(&mut self) -> &mut dyn ErrantRecordReporter {
        &mut *self.reporter
    }
    fn partition(&self) -> &TopicPartition {
        &self.partition
    }
    fn delivered(&mut self, _: &TopicPartition, _: i64) -> Result<(), TaskError> {
        Ok(())
    }
}

/// A running sink task.
pub trait SinkTask: Send {
    /// Called by the worker before `start` with the worker's store, for tasks that keep state of their
    /// own there or read the embedded Schema Registry (the Kafka sink's schema ID mappings). The default
    /// ignores it.
    fn attach_store(&mut self, store: &Store) {
        let _ = store;
    }
    /// Starts with the task config.
    fn start(&mut self, config: &Props) -> Result<(), TaskError>;
    /// Accepts records; they must be durable in the target after the next successful `flush`.
    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError>;
    /// `put` for sinks that report failed records one by one through `reporter` (the runtime calls this
    /// one; the default ignores the reporter).
    fn put_reporting(
        &mut self,
        records: &[SinkRecord],
        reporter: &mut dyn ErrantRecordReporter,
    ) -> Result<(), TaskError> {
        let _ = reporter;
        self.put(records)
    }
    /// `put` with the whole [`SinkTaskContext`]: sinks that know, while `put` runs, which records are
    /// delivered say so through it, so their offsets are committed before the next `flush` (the runtime
    /// calls this one; the default calls `put_reporting`).
    fn put_in_context(
        &mut self,
        records: &[SinkRecord],
        context: &mut dyn SinkTaskContext,
    ) -> Result<(), TaskError> {
        self.put_reporting(records, context.reporter())
    }
    /// Makes everything `put` so far durable; offsets are committed only after it returns Ok.
    fn flush(&mut self) -> Result<(), TaskError>;
    /// Releases resources.
    fn stop(&mut self) {}
    /// Told, before `start`, which task this is: Kafka's task id, `<connector>-<task number>` (for its
    /// logs).
    fn identify(&mut self, _id: &str) {}
    /// Kafka's `SinkTask.open`: the partitions assigned to the task. Called once right after `start`
    /// with the first assignment (empty when its topics do not exist yet), then with the partitions
    /// added to it (a topic created or grown later); partitions are never taken away from a running
    /// task.
    ///
    /// # Errors
    /// The task fails with it.
    fn open(&mut self, _partitions: &[TopicPartition]) -> Result<(), TaskError> {
        Ok(())
    }
    /// Asked while the task has nothing to put (its topics caught up), so a task whose resource died in
    /// the meantime (a plugin program's process) fails then rather than at its next record. Answers how
    /// soon to be asked again while still idle (`None`: only when records come).
    ///
    /// # Errors
    /// The task fails with it.
    fn check_idle(&mut self) -> Result<Option<std::time::Duration>, TaskError> {
        Ok(None)
    }
}

/// The identity methods of a [`ConnectorPlugin`] impl: `class`, `connector_type` (`Source` or
/// `Sink`), `version` and `task_class`.
macro_rules! plugin_identity {
    ($class:expr, $kind:ident, $version:expr, $task_class:expr) => {
        fn class(&self) -> &'static str {
            $class
        }
        fn connector_type(&self) -> $crate::config::connector::ConnectorType {
            $crate::config::connector::ConnectorType::$kind
        }
        fn version(&self) -> &'static str {
            $version
        }
        fn task_class(&self) -> &'static str {
            $task_class
        }
    };
}
pub(crate) use plugin_identity;

/// What a running connector instance tells the worker.
#[derive(Clone, Debug)]
pub enum ConnectorEvent {
    /// Compute the task configs again and replace the tasks when they changed (Kafka's
    /// `ConnectorContext.requestTaskReconfiguration`).
    Reconfigure,
    /// The instance failed (Kafka's `ConnectorContext.raiseError`): the connector is FAILED with this
    /// error as its trace.
    Failed(TaskError),
}

/// Where a running connector instance sends its [`ConnectorEvent`]s; callable from any thread.
pub type ConnectorEvents = Arc<dyn Fn(ConnectorEvent) + Send + Sync>;

/// A connector instance that keeps running while its connector runs (Kafka's `Connector` between
/// `start` and `stop`): it answers the task configs, and may send [`ConnectorEvent`]s. Dropping it stops
/// it (without waiting for it).
pub trait ConnectorInstance: Send + Sync {
    /// At most `max_tasks` task configs, from the running instance.
    ///
    /// # Errors
    /// Why the instance could not answer.
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<Props>, TaskError>;
}

/// A connector plugin: the factory for its tasks and the owner of its config definition.
pub trait ConnectorPlugin: Send + Sync + std::fmt::Debug {
    /// Fully qualified class name, as Kafka names it.
    fn class(&self) -> &'static str;
    /// Source or sink.
    fn connector_type(&self) -> ConnectorType;
    /// Plugin version.
    fn version(&self) -> &'static str;
    /// Every installed version of this class, oldest first (KIP-891: plugin programs may have several);
    /// the default is [`ConnectorPlugin::version`] alone.
    fn versions(&self) -> Vec<&'static str> {
        vec![self.version()]
    }
    /// The connector's own config keys.
    fn config_def(&self) -> ConfigDef;
    /// Extra checks beyond the definition, as (key, message) errors. Pure: no I/O.
    fn validate(&self, _config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Checks that reach outside (run the source's own program, connect to it), as (key, message)
    /// errors: only `PUT /connector-plugins/{p}/config/validate` runs them, on a blocking thread, after
    /// the config passed the definition and [`ConnectorPlugin::validate`].
    fn check_live(&self, _config: &Props) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The `host:port` this connector's tasks listen on, if they listen (the webhook source). The herder
    /// refuses a second connector on an address one already holds, or on one of the worker's own listeners.
    fn listens_on(&self, _config: &Props) -> Option<String> {
        None
    }
    /// The converter class this connector uses for `key.converter`, `value.converter` or
    /// `header.converter` (the `key` given) when its config names none; `None` leaves it to the worker.
    /// The Kafka bridge connectors carry bytes as they are, with `ByteArrayConverter`.
    fn default_converter(&self, _key: &str) -> Option<&'static str> {
        None
    }
    /// The task class name reported in task configs.
    fn task_class(&self) -> &'static str;
    /// Generates at most `max_tasks` task configs from the connector config.
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError>;
    /// Starts an instance of the connector `name` that runs until it is dropped, when the plugin keeps
    /// one (plugin programs that speak protocol 1.1); `None`, the default, when its task configs are
    /// computed from the config alone. Blocks: call it off the async executor's threads.
    ///
    /// # Errors
    /// Why the instance could not start (the connector fails).
    fn start_instance(
        &self,
        _name: &str,
        _config: &Props,
        _events: ConnectorEvents,
    ) -> Result<Option<Box<dyn ConnectorInstance>>, TaskError> {
        Ok(None)
    }
    /// A new source task (source connectors).
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        None
    }
    /// A new sink task (sink connectors).
    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        None
    }
    /// What the default `alter_offsets` answers: whether the connector acknowledges any offsets change
    /// without looking at it (sinks whose offsets are the worker's own positions).
    fn acknowledges_offsets(&self) -> bool {
        false
    }
    /// Checks (and may act on) an offsets change made through the REST API (KIP-875). `Ok(true)` means the
    /// connector acknowledges the change; `Ok(false)` means it has no opinion; Err refuses it.
    fn alter_offsets(
        &self,
        _config: &Props,
        _offsets: &[(Json, Option<Json>)],
    ) -> Result<bool, String> {
        Ok(self.acknowledges_offsets())
    }
}
