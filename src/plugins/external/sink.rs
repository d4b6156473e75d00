//! A sink task run by a plugin program (the `sink_task` role): started with its config, given batches of
//! records (`put`), and asked to flush; the offsets it answers as durable (after a `put` or a `flush`)
//! are the ones the worker commits.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::connector::{task_process, Versions};
use super::data::sink_record;
use super::process::PluginProcess;
use crate::connectors::{Props, SinkTask, SinkTaskContext, TaskError};
use crate::converters::json::JsonConverter;
use crate::record::SinkRecord;
use crate::storage::TopicPartition;

/// A sink task of a plugin program.
pub struct ExternalSinkTask {
    versions: Versions,
    /// How long the process gets to stop.
    grace: Duration,
    process: Option<PluginProcess>,
    converter: JsonConverter,
    /// The next offset of each partition after the records given so far.
    given: BTreeMap<TopicPartition, i64>,
    /// The task id, which its stderr lines are logged under.
    id: Option<String>,
    /// The task config, until `start` is sent with the first assignment (protocol 1.1).
    pending_start: Option<Props>,
}

impl ExternalSinkTask {
    pub(super) fn new(versions: Versions) -> Self {
        ExternalSinkTask {
            versions,
            grace: Duration::ZERO,
            process: None,
            converter: JsonConverter::default(),
            given: BTreeMap::new(),
            id: None,
            pending_start: None,
        }
    }

    /// Gives the plugin `records` and returns its answer.
    fn send_put(&mut self, records: &[SinkRecord]) -> Result<Json, TaskError> {
        let list = records
            .iter()
            .map(|r| sink_record(r, &self.converter))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                TaskError::Fatal(format!("A record cannot be given to the plugin: {e}"))
            })?;
        for r in records {
            let tp = TopicPartition {
                topic: r.record.topic.clone(),
                partition: r.record.kafka_partition.unwrap_or(0),
            };
            self.given.insert(tp, r.kafka_offset + 1);
        }
        self.process()?
            .request(&json!({"type": "put", "records": list}), "put")
    }

    fn process(&mut self) -> Result<&mut PluginProcess, TaskError> {
        self.process
            .as_mut()
            .ok_or_else(|| TaskError::fatal("The plugin program is not running"))
    }
}

/// The `(partition, next offset)` pairs of an answer's `offsets`.
fn offsets_in(answer: &Json) -> Vec<(TopicPartition, i64)> {
    let list = answer.get("offsets").and_then(Json::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|o| {
            let topic = o.get("topic")?.as_str()?.to_owned();
            let partition = i32::try_from(o.get("partition")?.as_i64()?).ok()?;
            Some((
                TopicPartition { topic, partition },
                o.get("offset")?.as_i64()?,
            ))
        })
        .collect()
}

fn offsets_json(offsets: &BTreeMap<TopicPartition, i64>) -> Vec<Json> {
    offsets
        .iter()
        .map(|(tp, o)| json!({"topic": tp.topic, "partition": tp.partition, "offset": o}))
        .collect()
}

/// The protocol form of topic-partitions.
fn partitions_json(partitions: &[TopicPartition]) -> Vec<Json> {
    partitions
        .iter()
        .map(|tp| json!({"topic": tp.topic, "partition": tp.partition}))
        .collect()
}

impl SinkTask for ExternalSinkTask {
    fn identify(&mut self, id: &str) {
        self.id = Some(id.to_owned());
    }

    /// Starts the process; a 1.0 program is sent `start` now, a 1.1 program with the first assignment
    /// (`open`, which follows at once).
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        let (mut process, grace) =
            task_process(&self.versions, config, "sink_task", self.id.as_deref())?;
        self.grace = grace;
        if process.minor() >= 1 {
            self.pending_start = Some(config.clone());
        } else {
            process.request(&json!({"type": "start", "config": config}), "started")?;
        }
        self.process = Some(process);
        Ok(())
    }

    /// The first assignment goes in `start`; later ones in `open` (protocol 1.1; a 1.0 program is told
    /// nothing).
    fn open(&mut self, partitions: &[TopicPartition]) -> Result<(), TaskError> {
        let pending = self.pending_start.take();
        let process = self.process()?;
        if process.minor() < 1 {
            return Ok(());
        }
        let partitions = partitions_json(partitions);
        match pending {
            Some(config) => process
                .request(
                    &json!({"type": "start", "config": config, "partitions": partitions}),
                    "started",
                )
                .map(|_| ()),
            None => process
                .request(&json!({"type": "open", "partitions": partitions}), "opened")
                .map(|_| ()),
        }
    }

    /// The program's process is looked at every second while the task is idle.
    fn check_idle(&mut self) -> Result<Option<std::time::Duration>, TaskError> {
        if let Some(p) = self.process.as_mut() {
            p.check_running()?;
        }
        Ok(Some(std::time::Duration::from_secs(1)))
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        self.send_put(records).map(|_| ())
    }

    /// `put`, then the offsets the plugin says are durable committed at once.
    fn put_in_context(
        &mut self,
        records: &[SinkRecord],
        context: &mut dyn SinkTaskContext,
    ) -> Result<(), TaskError> {
        let answer = self.send_put(records)?;
        for (tp, offset) in offsets_in(&answer) {
            context.delivered(&tp, offset)?;
        }
        Ok(())
    }

    /// Asks the plugin to make everything given durable; the worker commits only when it says it did
    /// (a plugin answering less fails the flush as retriable: what it did make durable, it reported
    /// after its `put`s, and the rest is given again).
    fn flush(&mut self) -> Result<(), TaskError> {
        let asked = offsets_json(&self.given);
        let answer = self
            .process()?
            .request(&json!({"type": "flush", "offsets": asked}), "flushed")?;
        let done: BTreeMap<TopicPartition, i64> = offsets_in(&answer).into_iter().collect();
        let short = self
            .given
            .iter()
            .find(|(tp, o)| done.get(*tp).is_none_or(|d| d < *o));
        match short {
            None => Ok(()),
            Some((tp, o)) => Err(TaskError::Retriable(format!(
                "The plugin made {}-{} durable only up to {} of {o}",
                tp.topic,
                tp.partition,
                done.get(tp)
                    .map_or_else(|| "nothing".to_string(), i64::to_string)
            ))),
        }
    }

    fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.stop(self.grace);
        }
    }
}
