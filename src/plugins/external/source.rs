//! A source task run by a plugin program (the `source_task` role): started with its config, it answers
//! the stored offsets it asks for, is polled for batches of records, and is told which offsets are
//! committed once the records and their offsets are in one SQLite transaction, so that it acknowledges
//! upstream only then.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{json, Map as JsonMap, Value as Json};

use super::connector::{task_process, Versions};
use super::data::source_record;
use super::process::{PluginProcess, Reply};
use super::wire::quick_records;
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::converters::json::JsonConverter;
use crate::record::SourceRecord;

/// How long an idle task sleeps when the program says nothing about when to poll again.
const DEFAULT_IDLE: Duration = Duration::from_millis(100);

/// A source task of a plugin program.
pub struct ExternalSourceTask {
    versions: Versions,
    /// How long the process gets to stop.
    grace: Duration,
    process: Option<PluginProcess>,
    converter: JsonConverter,
    /// The last source offset of each source partition in the last poll, to say what is committed.
    /// For each poll with records not yet committed, oldest first: the last offset of each source
    /// partition, and how many records it returned.
    polled: VecDeque<(Vec<Json>, usize)>,
    /// The task id, which its stderr lines are logged under.
    id: Option<String>,
    /// Whether the next `poll` has been sent already (its answer is the next poll's).
    asked: bool,
    /// Why sending the next `poll` ahead failed: the next poll's error.
    ask_failed: Option<TaskError>,
}

impl ExternalSourceTask {
    pub(super) fn new(versions: Versions) -> Self {
        ExternalSourceTask {
            versions,
            grace: Duration::ZERO,
            process: None,
            converter: JsonConverter::default(),
            polled: VecDeque::new(),
            id: None,
            asked: false,
            ask_failed: None,
        }
    }

    fn process(&mut self) -> Result<&mut PluginProcess, TaskError> {
        running(&mut self.process)
    }
}

/// The running program, or why there is none.
fn running(process: &mut Option<PluginProcess>) -> Result<&mut PluginProcess, TaskError> {
    process
        .as_mut()
        .ok_or_else(|| TaskError::fatal("The plugin program is not running"))
}

/// The answer to the program's `offset_request`: the stored offset of each partition it names.
fn offsets_answer(request: &Json, context: &dyn SourceTaskContext) -> Result<Json, TaskError> {
    let partitions = request
        .get("partitions")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let offsets = partitions
        .into_iter()
        .map(|p| {
            let offset = context.offset(&p)?;
            Ok(json!({"partition": p, "offset": offset}))
        })
        .collect::<Result<Vec<_>, TaskError>>()?;
    Ok(json!({"type": "offsets", "offsets": offsets}))
}

/// The last offset of each source partition of `records`, as the protocol's `commit` gives them: read
/// from the end, each partition once (a poll's records mostly share one or a few).
fn last_offsets(records: &[SourceRecord]) -> Vec<Json> {
    let mut seen: Vec<&JsonMap<String, Json>> = Vec::new();
    let mut out = Vec::new();
    for r in records.iter().rev() {
        if let (Some(p), Some(o)) = (&r.source_partition, &r.source_offset) {
            if !seen.contains(&p) {
                seen.push(p);
                out.push(json!({"partition": p, "offset": o}));
            }
        }
    }
    out
}

/// The records of a `records` answer read as a protocol message (taken out of it, not copied).
fn records_of(
    answer: &mut Json,
    converter: &JsonConverter,
) -> Result<Vec<SourceRecord>, TaskError> {
    let list = answer
        .get_mut("records")
        .and_then(Json::as_array_mut)
        .ok_or_else(|| TaskError::fatal("The plugin's records answer has no records array"))?;
    list.iter_mut()
        .enumerate()
        .map(|(i, r)| {
            source_record(r, converter)
                .map_err(|e| TaskError::Fatal(format!("The plugin's record {i} is invalid: {e}")))
        })
        .collect()
}

impl SourceTask for ExternalSourceTask {
    fn identify(&mut self, id: &str) {
        self.id = Some(id.to_owned());
    }

    fn start(&mut self, config: &Props, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let (mut process, grace) =
            task_process(&self.versions, config, "source_task", self.id.as_deref())?;
        self.grace = grace;
        process.request_serving(
            &json!({"type": "start", "config": config}),
            "started",
            &mut |r| offsets_answer(r, context),
        )?;
        self.process = Some(process);
        Ok(())
    }

    /// A poll whose answer held records is followed at once by the next `poll` request, so that the
    /// program makes its next batch while the worker converts and stores this one.
    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        if let Some(failed) = self.ask_failed.take() {
            return Err(failed);
        }
        let poll = json!({"type": "poll"});
        let converter = &self.converter;
        let process = running(&mut self.process)?;
        if !std::mem::take(&mut self.asked) {
            process.send(&poll)?;
        }
        let reply = process.answer_quick(
            &poll,
            "records",
            &mut |r| offsets_answer(r, context),
            &mut |line| quick_records(line, converter),
        )?;
        let (records, idle_ms) = match reply {
            Reply::Quick(quick) => (quick.records, quick.idle_ms),
            Reply::Message(mut answer) => {
                let idle_ms = answer.get("idle_ms").and_then(Json::as_u64);
                (records_of(&mut answer, &self.converter)?, idle_ms)
            }
        };
        if !records.is_empty() {
            self.polled
                .push_back((last_offsets(&records), records.len()));
            // A failure to ask is the next poll's error: these records are still handed over.
            match running(&mut self.process)?.send(&poll) {
                Ok(()) => self.asked = true,
                Err(e) => self.ask_failed = Some(e),
            }
        }
        if records.is_empty() {
            context.idle(idle_ms.map_or(DEFAULT_IDLE, Duration::from_millis));
        }
        Ok(records)
    }

    /// The next poll is read (the program makes its next batch) while the writer stores the last one.
    fn polls_ahead(&self) -> bool {
        true
    }

    /// Tells the program what is committed, poll by poll in order: the last offset of each source
    /// partition of the oldest poll not yet committed, and how many records it returned.
    fn commit(&mut self) -> Result<(), TaskError> {
        let Some((offsets, count)) = self.polled.pop_front() else {
            return Ok(());
        };
        self.process()?
            .send(&json!({"type": "commit", "offsets": offsets, "records": count}))
    }

    fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.stop(self.grace);
        }
    }
}
