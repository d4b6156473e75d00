//! The source task loop: poll, convert, and append the records with the offsets that produced them in one
//! transaction, so the log and the source offsets never disagree, even across `kill -9`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value as Json;

use super::convert::{last_offsets, StageError, TaskStage};
use super::{Checkpoint, Mode, TaskRuntime};
use crate::connectors::{SourceTask, SourceTaskContext, StoredAt, TaskError};
use crate::model::State;
use crate::record::SourceRecord;
use crate::storage::{AppendBatch, ProducedRecord};

struct Context<'a> {
    rt: &'a TaskRuntime,
}

impl SourceTaskContext for Context<'_> {
    fn offset(&self, partition: &Json) -> Result<Option<Json>, TaskError> {
        self.rt
            .store
            .source_offset_blocking(&self.rt.connector, partition)
            .map_err(|e| TaskError::Fatal(format!("Could not read the stored offset: {e}")))
    }

    fn wait(&self, timeout: Duration) -> bool {
        self.rt.control.wait(timeout)
    }

    fn ensure_topic(&self, topic: &str, partitions: i32) -> Result<i32, TaskError> {
        self.rt
            .store
            .ensure_partitions_blocking(topic, partitions)
            .map_err(|e| TaskError::Fatal(format!("Could not create the topic {topic}: {e}")))
    }
}

pub(super) fn run(rt: &TaskRuntime, mut task: Box<dyn SourceTask>) -> Result<(), StageError> {
    let context = Context { rt };
    task.start(&rt.config, &context)
        .map_err(|e| StageError::new(TaskStage::SourceStart, e))?;
    let result = poll_loop(rt, task.as_mut(), &context);
    task.stop();
    let skipped = rt.errors.skipped();
    if skipped > 0 {
        tracing::warn!(connector = %rt.connector, task = rt.task, skipped, "Records skipped by errors.tolerance=all while this task ran.");
    }
    result
}

fn poll_loop(
    rt: &TaskRuntime,
    task: &mut dyn SourceTask,
    context: &Context<'_>,
) -> Result<(), StageError> {
    let track_topics = rt.worker.topic_tracking_enable;
    // Whether the status shows the trace of a retriable poll error, cleared by the next good poll.
    let mut retrying = false;
    loop {
        match rt.checkpoint(|| Ok(()))? {
            Checkpoint::Stop => return Ok(()),
            Checkpoint::Resumed => continue,
            Checkpoint::Run => {}
        }
        if rt.statuses.task_state(&rt.connector, rt.task) != Some(State::Running) {
            rt.report(State::Running, None);
        }
        let polled_at = std::time::Instant::now();
        let records = match task.poll(context) {
            Ok(r) => {
                if retrying {
                    rt.report(State::Running, None);
                    retrying = false;
                }
                r
            }
            Err(TaskError::Retriable(message)) => {
                tracing::warn!(connector = %rt.connector, task = rt.task, %message, "Retriable error in poll; trying again.");
                // RUNNING with a trace saying why nothing comes, as a sink shows a failing flush.
                rt.report_retrying("SourceTask.poll", message);
                retrying = true;
                rt.control.wait(Duration::from_secs(1));
                continue;
            }
            Err(e) => return Err(StageError::new(TaskStage::Poll, e)),
        };
        if records.is_empty() {
            continue;
        }
        let m = &rt.metrics;
        m.batch_ms
            .record(polled_at.elapsed().as_secs_f64() * 1000.0);
        m.records_in.add(records.len() as u64);
        m.batch_size.record(records.len() as f64);
        m.active.store(records.len() as u64, Ordering::Relaxed);
        if rt.control.mode() == Mode::Stop {
            // Not stored, and neither are its offsets: the next run reads these records again.
            return Ok(());
        }
        // Offsets cover every polled record, also those a transform drops or the error handler skips.
        let offsets = last_offsets(&records);
        let (produced, kept) = convert_records(rt, records)?;
        let batch = AppendBatch {
            connector: rt.connector.clone(),
            offsets,
            records: produced,
            track_topics,
        };
        let written = batch.records.len() as u64;
        let appending = std::time::Instant::now();
        let Some(assigned) = append_waiting(rt, task, batch)? else {
            // Not stored, and neither are its offsets: the next run reads them again.
            return Ok(());
        };
        // The source offsets are committed in the append's transaction.
        m.offset_commit_ms
            .record(appending.elapsed().as_secs_f64() * 1000.0);
        m.records_out.add(written);
        m.active.store(0, Ordering::Relaxed);
        rt.log_signal.notify();
        let mut assigned = assigned.into_iter();
        let stored: Vec<Option<StoredAt>> = kept
            .iter()
            .map(|&kept| {
                kept.then(|| assigned.next())
                    .flatten()
                    .map(|(topic, partition, offset)| StoredAt {
                        topic,
                        partition,
                        offset,
                    })
            })
            .collect();
        task.commit_stored(&stored)
            .map_err(|e| StageError::new(TaskStage::SourceCommit, e))?;
    }
}

/// Where the log put one appended record: topic, partition, offset.
type Assigned = (String, i32, i64);

/// Transforms and converts polled records; those a transform drops or the error handler skips are
/// left out. Also says, for each polled record, whether it is among those produced.
fn convert_records(
    rt: &TaskRuntime,
    records: Vec<SourceRecord>,
) -> Result<(Vec<ProducedRecord>, Vec<bool>), StageError> {
    let mut produced = Vec::with_capacity(records.len());
    let mut kept = Vec::with_capacity(records.len());
    for r in records {
        let topic = r.record.topic.clone();
        let record = match rt.transform(r.record, None) {
            Ok(Some(record)) => record,
            Ok(None) => {
                kept.push(false);
                continue;
            }
            Err(failure) => {
                rt.errors.source_failure(failure, &topic)?;
                kept.push(false);
                continue;
            }
        };
        match rt.converters.encode(&record) {
            Ok(p) => {
                produced.push(p);
                kept.push(true);
            }
            Err(failure) => {
                rt.errors.source_failure(failure, &record.topic)?;
                kept.push(false);
            }
        }
    }
    Ok((produced, kept))
}

/// Appends a batch to the topic log. With log.buffer.max.bytes and the pause policy, a full log makes
/// the source wait here (it is not polled meanwhile); RUNNING with a trace says why. Returns where each
/// record went, or `None` when the task was stopped while waiting and the batch was not stored.
fn append_waiting(
    rt: &TaskRuntime,
    task: &mut dyn SourceTask,
    mut batch: AppendBatch,
) -> Result<Option<Vec<Assigned>>, StageError> {
    let mut backoff = Duration::from_millis(100);
    let mut waiting = false;
    let assigned = loop {
        let outcome = rt
            .store
            .try_append_blocking(batch)
            .map_err(|e| StageError::fatal(TaskStage::AppendToLog, e))?;
        match outcome {
            Ok(assigned) => break assigned,
            Err((refused, message)) => {
                batch = refused;
                if !waiting {
                    tracing::warn!(connector = %rt.connector, task = rt.task, %message, "The topic log is full; the source waits.");
                    rt.report_retrying(&TaskStage::AppendToLog.name(), message);
                    task.log_full(true);
                    waiting = true;
                }
                rt.log_signal.notify();
                if !rt.control.wait(backoff) {
                    match rt.checkpoint(|| Ok(()))? {
                        Checkpoint::Stop => {
                            if waiting {
                                task.log_full(false);
                            }
                            return Ok(None);
                        }
                        Checkpoint::Resumed => {
                            rt.report(State::Running, None);
                            task.log_full(false);
                            waiting = false;
                        }
                        Checkpoint::Run => {}
                    }
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    };
    if waiting {
        tracing::info!(connector = %rt.connector, task = rt.task, "The topic log has room again; the source goes on.");
        rt.report(State::Running, None);
        task.log_full(false);
    }
    Ok(Some(assigned))
}
