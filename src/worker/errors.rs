//! Error tolerance, as Kafka's `errors.*` connector keys define it: with `errors.tolerance=none` the first
//! record that fails in a converter or a transform fails the task, with a trace naming the stage; with
//! `all` it is skipped, counted, optionally logged, and (for sinks) written with its original bytes to a
//! dead letter queue topic in the local log, with Kafka's `__connect.errors.*` context headers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::convert::{StageError, StageFailure, TaskStage};
use crate::config::connector::{ConnectorType, ErrorSettings, ToleranceType};
use crate::connectors::Props;
use crate::metrics::{ErrorCounters, TaskMetrics};
use crate::storage::{AppendBatch, LogRecord, ProducedRecord, Store};

const HEADER_PREFIX: &str = "__connect.errors.";

/// One task's error handling settings and counters.
#[derive(Debug)]
pub(crate) struct ErrorHandler {
    connector: String,
    task: u32,
    tolerate_all: bool,
    log_enable: bool,
    log_include_messages: bool,
    dlq_topic: Option<String>,
    dlq_context_headers: bool,
    skipped: AtomicU64,
    metrics: Arc<TaskMetrics>,
    /// Woken after a dead letter queue append, as every append wakes the log's readers.
    signal: Option<Arc<super::LogSignal>>,
}

impl ErrorHandler {
    /// Reads the `errors.*` keys of a connector (or task) config; errors are counted in the task's metrics.
    pub(crate) fn new(
        connector: &str,
        task: u32,
        config: &Props,
        (is_sink, metrics): (bool, Arc<TaskMetrics>),
    ) -> Self {
        let kind = if is_sink {
            ConnectorType::Sink
        } else {
            ConnectorType::Source
        };
        let settings = ErrorSettings::lenient(config, kind);
        ErrorHandler {
            connector: connector.to_string(),
            task,
            tolerate_all: settings.tolerance == ToleranceType::All,
            log_enable: settings.log_enable,
            log_include_messages: settings.log_include_messages,
            dlq_topic: settings.dlq_topic,
            dlq_context_headers: settings.dlq_context_headers,
            skipped: AtomicU64::new(0),
            metrics,
            signal: None,
        }
    }

    /// Wakes the log's readers through `signal` after each dead letter queue append.
    pub(crate) fn wakes(mut self, signal: Arc<super::LogSignal>) -> Self {
        self.signal = Some(signal);
        self
    }

    /// How many records were skipped so far.
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    fn trace(&self, failure: &StageFailure) -> StageError {
        self.metrics.errors.failed();
        StageError::fatal(
            TaskStage::Record {
                stage: failure.stage,
                class: failure.class.clone(),
            },
            format!(
                "Tolerance exceeded in error handler\nCaused by: org.apache.kafka.connect.errors.DataException: {}",
                failure.message
            ),
        )
    }

    /// Handles a failed source record: fails the task, or skips the record.
    pub(crate) fn source_failure(
        &self,
        failure: StageFailure,
        topic: &str,
    ) -> Result<(), StageError> {
        if !self.tolerate_all {
            return Err(self.trace(&failure));
        }
        self.note(&failure, topic, None);
        Ok(())
    }

    /// Handles a failed sink record: fails the task, or skips it and sends it to the dead letter queue.
    pub(crate) fn sink_failure(
        &self,
        failure: StageFailure,
        record: &LogRecord,
        store: &Store,
    ) -> Result<(), StageError> {
        if !self.tolerate_all {
            return Err(self.trace(&failure));
        }
        self.note(
            &failure,
            &record.topic,
            Some((record.partition, record.offset)),
        );
        if let Some(dlq) = &self.dlq_topic {
            let headers = if self.dlq_context_headers {
                with_context_headers(record, &self.connector, self.task, &failure)
            } else {
                record.headers.clone()
            };
            let batch = AppendBatch {
                connector: self.connector.clone(),
                records: vec![ProducedRecord {
                    topic: dlq.clone(),
                    partition: None,
                    timestamp: record.timestamp,
                    key: record.key.clone(),
                    value: record.value.clone(),
                    headers,
                }],
                offsets: Vec::new(),
                track_topics: false,
            };
            let errors = &self.metrics.errors;
            ErrorCounters::bump(&errors.dlq_requests);
            store.append_blocking(batch).map_err(|e| {
                ErrorCounters::bump(&errors.dlq_failures);
                StageError::fatal(TaskStage::WriteDeadLetterQueue, e)
            })?;
            if let Some(signal) = &self.signal {
                signal.notify();
            }
        }
        Ok(())
    }

    fn note(&self, failure: &StageFailure, topic: &str, place: Option<(i32, i64)>) {
        let n = self.skipped.fetch_add(1, Ordering::Relaxed) + 1;
        let errors = &self.metrics.errors;
        errors.failed();
        ErrorCounters::bump(&errors.records_skipped);
        if self.log_enable {
            ErrorCounters::bump(&errors.errors_logged);
            let at = place
                .map(|(p, o)| format!(" at {topic}-{p}@{o}"))
                .unwrap_or_default();
            if self.log_include_messages {
                tracing::error!(connector = %self.connector, task = self.task, stage = failure.stage, class = %failure.class, skipped = n,
                    "Error encountered in task {}-{}{at}: {}", self.connector, self.task, failure.message);
            } else {
                tracing::error!(connector = %self.connector, task = self.task, stage = failure.stage, class = %failure.class, skipped = n,
                    "Error encountered in task {}-{} executing stage '{}'{at}; the record was skipped.", self.connector, self.task, failure.stage);
            }
        }
    }
}

/// A failed record's headers followed by Kafka's `__connect.errors.*` context headers, as the dead
/// letter queue receives them.
pub(crate) fn with_context_headers(
    record: &LogRecord,
    connector: &str,
    task: u32,
    failure: &StageFailure,
) -> Vec<(String, Option<Vec<u8>>)> {
    let mut headers = record.headers.clone();
    let mut add =
        |k: &str, v: String| headers.push((format!("{HEADER_PREFIX}{k}"), Some(v.into_bytes())));
    add("topic", record.topic.clone());
    add("partition", record.partition.to_string());
    add("offset", record.offset.to_string());
    add("connector.name", connector.to_string());
    add("task.id", task.to_string());
    add("stage", failure.stage.to_string());
    add("class.name", failure.class.clone());
    add(
        "exception.class.name",
        "org.apache.kafka.connect.errors.DataException".into(),
    );
    add("exception.message", failure.message.clone());
    add(
        "exception.stacktrace",
        format!(
            "org.apache.kafka.connect.errors.DataException: {}",
            failure.message
        ),
    );
    headers
}
