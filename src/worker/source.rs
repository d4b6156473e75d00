//! The source task loop: poll, convert, and append the records with the offsets that produced them in one
//! transaction, so the log and the source offsets never disagree, even across `kill -9`.

use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value as Json;

use super::convert::{last_offsets, StageError, TaskResult, TaskStage};
use super::job::Step;
use super::{Checkpoint, Mode, TaskRuntime};
use crate::connectors::{SourceTask, SourceTaskContext, StoredAt, TaskError};
use crate::model::State;
use crate::record::SourceRecord;
use crate::storage::{AppendBatch, PendingAppend, ProducedRecord};

struct Context<'a> {
    rt: &'a TaskRuntime,
    /// Set by [`SourceTaskContext::idle`] during a poll that returns no records.
    idle: Cell<Option<Duration>>,
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

    fn idle(&self, timeout: Duration) {
        self.idle.set(Some(timeout));
    }

    fn ensure_topic(&self, topic: &str, partitions: i32) -> Result<i32, TaskError> {
        self.rt
            .store
            .ensure_partitions_blocking(topic, partitions)
            .map_err(|e| TaskError::Fatal(format!("Could not create the topic {topic}: {e}")))
    }

    fn warn(&self, problem: Option<String>) {
        self.rt.set_problem(problem);
    }

    fn watch_file(&self, path: &std::path::Path) -> Option<Box<dyn std::any::Any + Send>> {
        let control = self.rt.control.clone();
        let watch = self
            .rt
            .files
            .watch(path, std::sync::Arc::new(move || control.wake()))?;
        Some(Box::new(watch))
    }
}

/// A source task's loop and what it keeps between runs on the pool (see [`super::pool`]).
pub(super) struct SourceLoop {
    task: Box<dyn SourceTask>,
    started: bool,
    /// A batch handed to the writer whose outcome the loop has not taken yet.
    in_flight: Option<InFlight>,
    /// Whether the status shows the trace of a retriable poll error, cleared by the next good poll.
    retrying: bool,
    /// After a retriable error from `start`: how long to wait before the next attempt.
    start_backoff: Option<Duration>,
}

/// The first and the longest wait between attempts to start a task whose `start` raised a retriable
/// error.
const START_BACKOFF: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(10));

impl SourceLoop {
    pub(super) fn new(task: Box<dyn SourceTask>) -> Self {
        SourceLoop {
            task,
            started: false,
            in_flight: None,
            retrying: false,
            start_backoff: None,
        }
    }

    /// Starts the task on the first call; then polls, converts and appends until the task is stopped
    /// ([`Step::Done`]) or has nothing to do ([`Step::Park`]).
    pub(super) fn resume(&mut self, rt: &TaskRuntime) -> Result<Step, StageError> {
        let context = Context {
            rt,
            idle: Cell::new(None),
        };
        if !self.started {
            if self.start_backoff.is_some() && rt.control.mode() == Mode::Stop {
                return Ok(Step::Done);
            }
            self.task.attach_store(&rt.store);
            match self.task.start(&rt.config, &context) {
                Ok(()) => {
                    if self.start_backoff.take().is_some() {
                        tracing::info!(connector = %rt.connector, task = rt.task, "The task started after retrying.");
                        rt.report(State::Running, None);
                    }
                }
                // A RetriableException from start (say, the port it listens on is still taken): the task
                // stays RUNNING with the trace and start is tried again, with a growing wait.
                Err(TaskError::Retriable(message)) => {
                    let wait = self
                        .start_backoff
                        .map_or(START_BACKOFF.0, |b| (b * 2).min(START_BACKOFF.1));
                    tracing::warn!(connector = %rt.connector, task = rt.task, %message, retry_in_ms = wait.as_millis() as u64, "Retriable error in start; trying again.");
                    rt.report_retrying(&TaskStage::SourceStart.name(), message);
                    self.start_backoff = Some(wait);
                    return Ok(Step::Park(wait));
                }
                Err(e) => return Err(StageError::new(TaskStage::SourceStart, e)),
            }
            self.started = true;
        }
        poll_batches(
            rt,
            self.task.as_mut(),
            &context,
            &mut self.in_flight,
            &mut self.retrying,
        )
    }

    /// After the loop's end (`result`): a batch already handed to the writer is settled, whatever
    /// ended the loop, and the task is stopped.
    pub(super) fn finish(mut self, rt: &TaskRuntime, result: TaskResult) -> TaskResult {
        if !self.started {
            return result;
        }
        let settled = match self.in_flight.take() {
            Some(flight) => settle(rt, self.task.as_mut(), flight).map(|_| ()),
            None => Ok(()),
        };
        self.task.stop();
        rt.warn_skipped();
        result.and(settled)
    }
}

/// A converted batch handed to the writer whose outcome the loop has not taken yet.
struct InFlight {
    pending: PendingAppend,
    /// For each polled record, whether it is among those appended.
    kept: Vec<bool>,
    started: std::time::Instant,
}

/// Hands a batch to the writer. Once it is stored, the writer thread counts its records and wakes the
/// sinks, whether or not this loop has taken the outcome yet.
fn start_append(rt: &TaskRuntime, batch: AppendBatch) -> Result<PendingAppend, StageError> {
    let written = batch.records.len() as u64;
    let (metrics, signal) = (rt.metrics.clone(), rt.log_signal.clone());
    rt.store
        .start_append(batch, move |stored| {
            if stored {
                metrics.records_out.add(written);
                metrics.active.store(0, Ordering::Relaxed);
                signal.notify();
            }
        })
        .map_err(|e| StageError::fatal(TaskStage::AppendToLog, e))
}

/// Polls, converts and appends until the task is stopped. A task that polls ahead
/// ([`SourceTask::polls_ahead`]) is polled again while its last batch is being written (`in_flight`);
/// any other waits for each append before the next poll.
fn poll_batches(
    rt: &TaskRuntime,
    task: &mut dyn SourceTask,
    context: &Context<'_>,
    in_flight: &mut Option<InFlight>,
    retrying: &mut bool,
) -> Result<Step, StageError> {
    let track_topics = rt.worker.topic_tracking_enable;
    let ahead = task.polls_ahead();
    loop {
        match rt.checkpoint_parking(|| Ok(()))? {
            Checkpoint::Stop => return Ok(Step::Done),
            Checkpoint::Paused => {
                // A batch handed over before the pause is settled first: its offsets and the task's
                // commit do not wait for the resume.
                if !settle_any(rt, task, in_flight)? {
                    return Ok(Step::Done);
                }
                return Ok(Step::Paused);
            }
            Checkpoint::Resumed => continue,
            Checkpoint::Run => {}
        }
        if rt.statuses.task_state(&rt.connector, rt.task) != Some(State::Running) {
            rt.report(State::Running, None);
        }
        let polled_at = std::time::Instant::now();
        context.idle.set(None);
        let records = match task.poll(context) {
            Ok(r) => {
                rt.metrics.succeeded();
                if *retrying {
                    rt.report(State::Running, None);
                    *retrying = false;
                }
                r
            }
            Err(TaskError::Retriable(message)) => {
                tracing::warn!(connector = %rt.connector, task = rt.task, %message, "Retriable error in poll; trying again.");
                // RUNNING with a trace saying why nothing comes, as a sink shows a failing flush.
                rt.report_retrying("SourceTask.poll", message);
                *retrying = true;
                if !settle_any(rt, task, in_flight)? {
                    return Ok(Step::Done);
                }
                return Ok(Step::Park(Duration::from_secs(1)));
            }
            Err(e) => return Err(StageError::new(TaskStage::Poll, e)),
        };
        if records.is_empty() {
            if !settle_any(rt, task, in_flight)? {
                return Ok(Step::Done);
            }
            match context.idle.take() {
                Some(timeout) => return Ok(Step::Park(timeout)),
                None => continue,
            }
        }
        let m = &rt.metrics;
        m.batch_ms
            .record(polled_at.elapsed().as_secs_f64() * 1000.0);
        m.records_in.add(records.len() as u64);
        m.batch_size.record(records.len() as f64);
        m.active.store(records.len() as u64, Ordering::Relaxed);
        if rt.control.mode() == Mode::Stop {
            // Not stored, and neither are its offsets: the next run reads these records again.
            return Ok(Step::Done);
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
        // The previous batch is stored before this one is handed over: offsets are committed in order.
        if !settle_any(rt, task, in_flight)? {
            return Ok(Step::Done);
        }
        let flight = InFlight {
            started: std::time::Instant::now(),
            pending: start_append(rt, batch)?,
            kept,
        };
        if ahead {
            *in_flight = Some(flight);
        } else if !settle(rt, task, flight)? {
            return Ok(Step::Done);
        }
    }
}

/// [`settle`] for the batch in flight, if there is one; false when the task should end.
fn settle_any(
    rt: &TaskRuntime,
    task: &mut dyn SourceTask,
    in_flight: &mut Option<InFlight>,
) -> Result<bool, StageError> {
    match in_flight.take() {
        Some(flight) => settle(rt, task, flight),
        None => Ok(true),
    }
}

/// Takes a handed-over batch's outcome (waiting while the log is full) and tells the task. Returns false
/// when the task was stopped while waiting for room and the batch was not stored.
fn settle(
    rt: &TaskRuntime,
    task: &mut dyn SourceTask,
    flight: InFlight,
) -> Result<bool, StageError> {
    let InFlight {
        pending,
        kept,
        started,
    } = flight;
    let Some(assigned) = append_waiting(rt, task, pending)? else {
        // Not stored, and neither are its offsets: the next run reads them again.
        return Ok(false);
    };
    // The source offsets are committed in the append's transaction.
    tracing::debug!(connector = %rt.connector, task = rt.task, records = assigned.len(), "Records and source offsets committed.");
    let m = &rt.metrics;
    m.offset_commit_ms
        .record(started.elapsed().as_secs_f64() * 1000.0);
    if task.polls_ahead() {
        task.commit()
    } else {
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
    }
    .map_err(|e| StageError::new(TaskStage::SourceCommit, e))?;
    Ok(true)
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
        if r.is_offset_only() {
            kept.push(false);
            continue;
        }
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

/// Takes an append's outcome. With log.buffer.max.bytes and the pause policy, a full log makes the
/// source wait here (it is not polled meanwhile) and the refused batch is offered again; RUNNING with a
/// trace says why. Returns where each record went, or `None` when the task was stopped while waiting
/// and the batch was not stored.
fn append_waiting(
    rt: &TaskRuntime,
    task: &mut dyn SourceTask,
    pending: PendingAppend,
) -> Result<Option<Vec<Assigned>>, StageError> {
    let fatal = |e| StageError::fatal(TaskStage::AppendToLog, e);
    let mut outcome = pending.wait().map_err(fatal)?;
    let mut backoff = Duration::from_millis(100);
    let mut waiting = false;
    let assigned = loop {
        let (refused, message) = match outcome {
            Ok(assigned) => break assigned,
            Err(refused) => refused,
        };
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
                // `checkpoint` waits out a pause itself.
                Checkpoint::Run | Checkpoint::Paused => {}
            }
        }
        backoff = (backoff * 2).min(Duration::from_secs(2));
        outcome = start_append(rt, refused)?.wait().map_err(fatal)?;
    };
    if waiting {
        tracing::info!(connector = %rt.connector, task = rt.task, "The topic log has room again; the source goes on.");
        rt.report(State::Running, None);
        task.log_full(false);
    }
    Ok(Some(assigned))
}
