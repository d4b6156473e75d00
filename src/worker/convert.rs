//! A connector's converters, chosen as Kafka chooses them: the connector's own `key.converter` (with its
//! `key.converter.*` settings) when it sets one, otherwise the worker's, with the worker's settings.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::worker::WorkerConfig;
use crate::connectors::{Props, TaskError};

use crate::converters::{Converter, HeaderConverter};
use crate::data::DataError;
use crate::plugins::{new_converter, new_header_converter};
use crate::record::{ConnectRecord, Header, SinkRecord, SourceRecord};
use crate::storage::{LogRecord, ProducedRecord};

/// Where in a task's life a failure happened. [`TaskStage::name`] is what the status trace shows after
/// "at": Kafka's `Stage` name where Kafka has one (`TASK_POLL`, `TASK_PUT`), otherwise the method or the
/// step that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TaskStage {
    /// The worker could not make a task of the plugin.
    StartTask,
    /// `SourceTask.start` failed.
    SourceStart,
    /// `SinkTask.start` failed (or the subscription it was given is invalid).
    SinkStart,
    /// `SinkTask.open` failed.
    SinkOpen,
    /// `SourceTask.poll` failed.
    Poll,
    /// `SourceTask.commit` failed.
    SourceCommit,
    /// `SinkTask.put` failed.
    Put,
    /// `SinkTask.flush` failed.
    Flush,
    /// Appending polled records to the topic log failed.
    AppendToLog,
    /// Reading the topic log failed.
    ReadLog,
    /// Committing sink offsets failed.
    CommitSinkOffsets,
    /// Writing a failed record to the dead letter queue failed.
    WriteDeadLetterQueue,
    /// A record failed in a converter or a transformation, beyond the error tolerance.
    Record {
        /// Kafka's stage: KEY_CONVERTER, VALUE_CONVERTER, HEADER_CONVERTER or TRANSFORMATION.
        stage: &'static str,
        /// The class that failed.
        class: String,
    },
}

impl TaskStage {
    /// The name the status trace shows.
    pub(crate) fn name(&self) -> std::borrow::Cow<'static, str> {
        let name = match self {
            TaskStage::StartTask => "Worker.startTask",
            TaskStage::SourceStart => "SourceTask.start",
            TaskStage::SinkStart => "SinkTask.start",
            TaskStage::SinkOpen => "SinkTask.open",
            TaskStage::Poll => "TASK_POLL",
            TaskStage::SourceCommit => "SourceTask.commit",
            TaskStage::Put => "TASK_PUT",
            TaskStage::Flush => "SinkTask.flush",
            TaskStage::AppendToLog => "Appending to the topic log",
            TaskStage::ReadLog => "Reading the topic log",
            TaskStage::CommitSinkOffsets => "Committing sink offsets",
            TaskStage::WriteDeadLetterQueue => "Writing to the dead letter queue",
            TaskStage::Record { stage, class } => {
                return format!("Executing stage '{stage}' with class '{class}'").into()
            }
        };
        name.into()
    }
}

impl std::fmt::Display for TaskStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// How a task's loop ended: done, or failed at a stage.
pub(crate) type TaskResult = Result<(), StageError>;

/// A task failure with the stage it happened in, for the status trace.
#[derive(Debug, thiserror::Error)]
#[error("{error} (at {stage})")]
pub(crate) struct StageError {
    /// Where it failed.
    pub(crate) stage: TaskStage,
    /// What failed.
    pub(crate) error: TaskError,
}

impl StageError {
    /// A failure at `stage`.
    pub(crate) fn new(stage: TaskStage, error: TaskError) -> Self {
        StageError { stage, error }
    }

    /// A fatal failure at `stage` with `message`.
    pub(crate) fn fatal(stage: TaskStage, message: impl std::fmt::Display) -> Self {
        StageError::new(stage, TaskError::Fatal(message.to_string()))
    }

    /// The trace the task's status shows.
    pub(crate) fn trace(&self) -> String {
        super::trace_of(&self.stage.name(), &self.error)
    }
}

/// A record that failed in one stage of the pipeline (Kafka's `Stage`: KEY_CONVERTER, VALUE_CONVERTER,
/// HEADER_CONVERTER, TRANSFORMATION), for the error handler to tolerate or not.
#[derive(Clone, Debug)]
pub(crate) struct StageFailure {
    pub(crate) stage: &'static str,
    pub(crate) class: String,
    pub(crate) message: String,
}

/// A connector's converter could not be created.
#[derive(Debug, thiserror::Error)]
#[error("Failed to create the {role} converter {class}: {cause}")]
pub struct ConverterSetupError {
    /// "key", "value" or "header".
    pub role: &'static str,
    /// The converter's class.
    pub class: String,
    /// Why.
    pub cause: DataError,
}

/// The three converters of one connector.
#[derive(Clone, Debug)]
pub struct Converters {
    key: Arc<dyn Converter>,
    key_class: String,
    value: Arc<dyn Converter>,
    value_class: String,
    header: Arc<dyn HeaderConverter>,
    header_class: String,
}

fn choose(
    connector: &Props,
    worker: &WorkerConfig,
    key: &str,
) -> (String, BTreeMap<String, String>) {
    let prefix = format!("{key}.");
    let strip = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        m.iter()
            .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|s| (s.to_string(), v.clone())))
            .collect()
    };
    match connector.get(key).filter(|c| !c.trim().is_empty()) {
        Some(class) => (class.trim().to_string(), strip(connector)),
        None => (
            worker.converter_class(key).to_string(),
            strip(&worker.originals),
        ),
    }
}

fn stage(name: &'static str, class: &str, message: String) -> StageFailure {
    StageFailure {
        stage: name,
        class: class.to_string(),
        message,
    }
}

impl Converters {
    /// Builds the converters for a connector.
    ///
    /// # Errors
    /// [`ConverterSetupError`] naming the converter when a class is unknown or its settings are invalid.
    pub fn for_connector(
        connector: &Props,
        worker: &WorkerConfig,
    ) -> Result<Converters, ConverterSetupError> {
        let (key_class, key_props) = choose(connector, worker, crate::config::keys::KEY_CONVERTER);
        let (value_class, value_props) =
            choose(connector, worker, crate::config::keys::VALUE_CONVERTER);
        let (header_class, header_props) =
            choose(connector, worker, crate::config::keys::HEADER_CONVERTER);
        let failed = |role: &'static str, class: &str, cause: DataError| ConverterSetupError {
            role,
            class: class.to_string(),
            cause,
        };
        let key = new_converter(&key_class, &key_props, true)
            .map_err(|e| failed("key", &key_class, e))?;
        let value = new_converter(&value_class, &value_props, false)
            .map_err(|e| failed("value", &value_class, e))?;
        let header = new_header_converter(&header_class, &header_props)
            .map_err(|e| failed("header", &header_class, e))?;
        Ok(Converters {
            key,
            key_class,
            value,
            value_class,
            header,
            header_class,
        })
    }

    /// The converters a connector of `plugin` runs with: those its config names, else the plugin's
    /// own (the Kafka bridge carries bytes with `ByteArrayConverter`), else the worker's.
    ///
    /// # Errors
    /// As [`Converters::for_connector`].
    pub fn for_plugin(
        plugin: &dyn crate::connectors::ConnectorPlugin,
        connector: &Props,
        worker: &WorkerConfig,
    ) -> Result<Converters, ConverterSetupError> {
        let mut with_defaults = connector.clone();
        for key in crate::config::connector::ConverterRole::ALL.map(|r| r.key()) {
            if let Some(class) = plugin.default_converter(key) {
                if with_defaults.get(key).is_none_or(|c| c.trim().is_empty()) {
                    with_defaults.insert(key.to_string(), class.to_string());
                }
            }
        }
        Converters::for_connector(&with_defaults, worker)
    }

    /// Serialises a source record for the log.
    pub(crate) fn encode(&self, r: &ConnectRecord) -> Result<ProducedRecord, StageFailure> {
        let mut headers = Vec::with_capacity(r.headers.len());
        for h in &r.headers {
            let bytes = self
                .header
                .from_connect_header(&r.topic, &h.key, h.schema.as_deref(), &h.value)
                .map_err(|e| stage("HEADER_CONVERTER", &self.header_class, e.to_string()))?;
            headers.push((h.key.clone(), bytes));
        }
        Ok(ProducedRecord {
            topic: r.topic.clone(),
            partition: r.kafka_partition,
            timestamp: r.timestamp,
            key: self
                .key
                .from_connect(&r.topic, r.key_schema.as_deref(), &r.key)
                .map_err(|e| stage("KEY_CONVERTER", &self.key_class, e.to_string()))?,
            value: self
                .value
                .from_connect(&r.topic, r.value_schema.as_deref(), &r.value)
                .map_err(|e| stage("VALUE_CONVERTER", &self.value_class, e.to_string()))?,
            headers,
        })
    }

    /// Deserialises a record read from the log for a sink.
    pub(crate) fn decode(&self, r: &LogRecord) -> Result<SinkRecord, StageFailure> {
        let key = self
            .key
            .to_connect(&r.topic, r.key.as_deref())
            .map_err(|e| stage("KEY_CONVERTER", &self.key_class, e.to_string()))?;
        let value = self
            .value
            .to_connect(&r.topic, r.value.as_deref())
            .map_err(|e| stage("VALUE_CONVERTER", &self.value_class, e.to_string()))?;
        let mut headers = Vec::with_capacity(r.headers.len());
        for (k, v) in &r.headers {
            let h = self
                .header
                .to_connect_header(&r.topic, k, v.as_deref())
                .map_err(|e| stage("HEADER_CONVERTER", &self.header_class, e.to_string()))?;
            headers.push(Header {
                key: k.clone(),
                schema: h.schema,
                value: h.value,
            });
        }
        Ok(SinkRecord {
            record: ConnectRecord {
                topic: r.topic.clone(),
                kafka_partition: Some(r.partition),
                key_schema: key.schema,
                key: key.value,
                value_schema: value.schema,
                value: value.value,
                timestamp: r.timestamp,
                headers,
            },
            kafka_offset: r.offset,
        })
    }
}

/// Keeps the last offset per source partition of a batch, in first-seen order. Runs of records from the same
/// partition (the usual case) are recognised by comparing with the previous record's partition, so the
/// canonical key is computed once per run rather than once per record.
pub(crate) fn last_offsets(
    records: &[SourceRecord],
) -> Vec<(serde_json::Value, Option<serde_json::Value>)> {
    type JsonMap = serde_json::Map<String, serde_json::Value>;
    let mut order: Vec<(&JsonMap, &JsonMap)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut previous: Option<(&JsonMap, usize)> = None;
    for r in records {
        let (Some(p), Some(o)) = (&r.source_partition, &r.source_offset) else {
            continue;
        };
        if let Some((pp, i)) = previous {
            if pp == p {
                order[i].1 = o;
                continue;
            }
        }
        let key = crate::storage::canonical_key(&serde_json::Value::Object(p.clone()));
        let i = match index.get(&key) {
            Some(i) => {
                order[*i].1 = o;
                *i
            }
            None => {
                index.insert(key, order.len());
                order.push((p, o));
                order.len() - 1
            }
        };
        previous = Some((p, i));
    }
    order
        .into_iter()
        .map(|(p, o)| {
            (
                serde_json::Value::Object(p.clone()),
                Some(serde_json::Value::Object(o.clone())),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::data::Value;

    fn record(partition: Option<serde_json::Value>, offset: i64) -> SourceRecord {
        let as_map = |v: serde_json::Value| v.as_object().cloned();
        SourceRecord {
            source_partition: partition.and_then(as_map),
            source_offset: as_map(json!({"position": offset})),
            record: ConnectRecord::new("t", None, Value::Null),
        }
    }

    #[test]
    fn last_offset_per_partition_in_first_seen_order() {
        let a = json!({"file": "a", "n": 1});
        let a_reordered = json!({"n": 1, "file": "a"});
        let b = json!({"file": "b"});
        let records = vec![
            record(Some(a.clone()), 1),
            record(Some(a.clone()), 2),
            record(Some(b.clone()), 10),
            record(None, 99),
            record(Some(a_reordered), 3),
            record(Some(b.clone()), 11),
        ];
        assert_eq!(
            last_offsets(&records),
            vec![
                (a, Some(json!({"position": 3}))),
                (b, Some(json!({"position": 11})))
            ]
        );
        assert!(last_offsets(&[]).is_empty());
    }
}
