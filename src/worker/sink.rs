//! The sink task loop: read from the committed sink offsets, convert, put, and commit offsets only after a
//! successful flush (at-least-once), or sooner for records a task says are delivered while `put` runs
//! ([`SinkTaskContext::delivered`]). The loop sleeps on the task's condition variable and wakes when
//! records are appended, when it is paused or stopped, or when the commit interval ends.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use regex::Regex;

use super::convert::{StageError, TaskResult, TaskStage};
use super::job::Step;
use super::{Checkpoint, Mode, TaskRuntime};
use crate::connectors::{ErrantRecordReporter, SinkTask, SinkTaskContext, TaskError};
use crate::model::State;
use crate::record::SinkRecord;
use crate::storage::{LogRecord, TopicPartition};

/// Records read per partition per round.
const MAX_BATCH: usize = 2000;
/// How long a caught-up sink sleeps before it looks for new topics (for `topics.regex`), when records
/// were appended since it last looked.
const IDLE_WAIT: Duration = Duration::from_secs(1);
/// How long a caught-up sink sleeps when nothing was appended since it last looked for topics: until an
/// append or a control change wakes it (the hour only bounds the wait).
const EVENT_WAIT: Duration = Duration::from_secs(3600);

fn storage_error(e: crate::storage::StorageError) -> StageError {
    StageError::fatal(TaskStage::ReadLog, e)
}

struct Subscription {
    topics: BTreeSet<String>,
    regex: Option<Regex>,
}

impl Subscription {
    fn new(rt: &TaskRuntime) -> Result<Self, StageError> {
        let topics = rt
            .config
            .get(crate::config::keys::TOPICS)
            .map(|t| {
                t.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let regex = match rt
            .config
            .get(crate::config::keys::TOPICS_REGEX)
            .map(|r| r.trim())
            .filter(|r| !r.is_empty())
        {
            Some(r) => Some(Regex::new(&format!("^(?:{r})$")).map_err(|e| {
                StageError::fatal(TaskStage::SinkStart, format!("Invalid topics.regex: {e}"))
            })?),
            None => None,
        };
        Ok(Subscription { topics, regex })
    }

    fn matches(&self, topic: &str) -> bool {
        self.topics.contains(topic) || self.regex.as_ref().is_some_and(|r| r.is_match(topic))
    }
}

/// A sink task's loop and what it keeps between runs on the pool (see [`super::pool`]).
pub(super) struct SinkLoop {
    task: Box<dyn SinkTask>,
    started: bool,
    /// Set at the first run after the start.
    state: Option<LoopState>,
}

/// The put loop's state.
struct LoopState {
    sub: Subscription,
    interval: Duration,
    positions: Positions,
    backoff: Duration,
    last_commit: Instant,
    last_assign: Option<Instant>,
    /// The append count when the topics were last listed.
    assigned_at: u64,
}

impl LoopState {
    fn new(rt: &TaskRuntime) -> Result<Self, StageError> {
        Ok(LoopState {
            sub: Subscription::new(rt)?,
            interval: Duration::from_millis(rt.worker.offset_flush_interval_ms),
            positions: Positions {
                next: BTreeMap::new(),
                committed: BTreeMap::new(),
                dirty: false,
                noted: false,
                tracked: BTreeSet::new(),
                opened: BTreeSet::new(),
            },
            backoff: Duration::from_millis(100),
            last_commit: Instant::now(),
            last_assign: None,
            assigned_at: 0,
        })
    }
}

impl SinkLoop {
    pub(super) fn new(task: Box<dyn SinkTask>) -> Self {
        SinkLoop {
            task,
            started: false,
            state: None,
        }
    }

    /// Starts the task on the first call; then reads, converts and puts until the task is stopped
    /// ([`Step::Done`]), paused ([`Step::Paused`]) or caught up ([`Step::Park`]).
    pub(super) fn resume(&mut self, rt: &TaskRuntime) -> Result<Step, StageError> {
        if !self.started {
            rt.log_signal.register(&rt.control);
            self.task.attach_store(&rt.store);
            let mut state = LoopState::new(rt)?;
            // Kafka's order: start, then open with the first assignment.
            let first = assign(rt, &state.sub, &mut state.positions)?;
            self.task
                .start(&rt.config)
                .map_err(|e| StageError::new(TaskStage::SinkStart, e))?;
            self.started = true;
            self.state = Some(state);
            self.task
                .open(&first)
                .map_err(|e| StageError::new(TaskStage::SinkOpen, e))?;
        }
        let state = match &mut self.state {
            Some(state) => state,
            None => self.state.insert(LoopState::new(rt)?),
        };
        put_loop(rt, self.task.as_mut(), state)
    }

    /// After the loop's end (`result`): the task is stopped (if it started).
    pub(super) fn finish(mut self, rt: &TaskRuntime, result: TaskResult) -> TaskResult {
        if !self.started {
            return result;
        }
        self.task.stop();
        rt.warn_skipped();
        result
    }
}

struct Positions {
    /// Next offset to read per assigned partition.
    next: BTreeMap<TopicPartition, i64>,
    /// The last offset committed per assigned partition (by this loop or through `delivered`).
    committed: BTreeMap<TopicPartition, i64>,
    /// What has been put but not yet committed.
    dirty: bool,
    /// The status shows a retriable failure (cleared by the next successful commit).
    noted: bool,
    tracked: BTreeSet<String>,
    /// The partitions the task was told of (`SinkTask.open`); a rewind keeps them.
    opened: BTreeSet<TopicPartition>,
}

/// Adds the partitions of the subscription that fall to this task and are not yet read; returns those
/// the task has not been told of yet (for `SinkTask.open`).
fn assign(
    rt: &TaskRuntime,
    sub: &Subscription,
    positions: &mut Positions,
) -> Result<Vec<TopicPartition>, StageError> {
    let mut all: Vec<TopicPartition> = Vec::new();
    for (topic, partitions) in rt.store.topics_blocking().map_err(storage_error)? {
        if sub.matches(&topic) {
            for partition in 0..partitions {
                all.push(TopicPartition {
                    topic: topic.clone(),
                    partition,
                });
            }
        }
    }
    // Partitions are shared among the connector's tasks the way a consumer group's round-robin assignor would.
    let count = rt.task_count.max(1) as usize;
    let new: Vec<TopicPartition> = all
        .into_iter()
        .enumerate()
        .filter(|(i, tp)| i % count == rt.task as usize && !positions.next.contains_key(tp))
        .map(|(_, tp)| tp)
        .collect();
    if new.is_empty() {
        return Ok(Vec::new());
    }
    let committed: BTreeMap<TopicPartition, i64> = rt
        .store
        .sink_offsets_blocking(&rt.connector)
        .map_err(storage_error)?
        .into_iter()
        .map(|(topic, partition, offset)| (TopicPartition { topic, partition }, offset))
        .collect();
    for tp in new {
        let start = match committed.get(&tp) {
            Some(o) => {
                positions.committed.insert(tp.clone(), *o);
                *o
            }
            None => rt
                .store
                .log_start_blocking(tp.clone())
                .map_err(storage_error)?,
        };
        rt.metrics.sink_assigned(&tp, start);
        positions.next.insert(tp, start);
    }
    let opened: Vec<TopicPartition> = positions
        .next
        .keys()
        .filter(|tp| !positions.opened.contains(*tp))
        .cloned()
        .collect();
    positions.opened.extend(opened.iter().cloned());
    Ok(opened)
}

/// Flushes the task and commits the positions. A retriable flush failure (the target did not acknowledge
/// everything) commits nothing and rewinds to the last committed offsets, as Kafka's WorkerSinkTask does,
/// so the records are delivered again; it returns `Ok(false)` then, and the task shows RUNNING with a trace.
fn commit(
    rt: &TaskRuntime,
    sub: &Subscription,
    task: &mut dyn SinkTask,
    positions: &mut Positions,
) -> Result<bool, StageError> {
    if !positions.dirty {
        return Ok(true);
    }
    let m = &rt.metrics;
    m.commit_seq_no.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    match task.flush() {
        Ok(()) => {}
        Err(TaskError::Retriable(message)) => {
            tracing::warn!(connector = %rt.connector, task = rt.task, %message, "Retriable error in flush; offsets not committed, rewinding to the last committed offsets.");
            rt.report_retrying("SinkTask.flush", message);
            positions.noted = true;
            positions.next.clear();
            positions.committed.clear();
            m.sink_unassigned();
            m.active.store(0, Ordering::Relaxed);
            positions.dirty = false;
            assign(rt, sub, positions)?;
            return Ok(false);
        }
        Err(e) => return Err(StageError::new(TaskStage::Flush, e)),
    }
    let offsets = positions
        .next
        .iter()
        .map(|(tp, o)| (tp.topic.clone(), tp.partition, Some(*o)))
        .collect();
    rt.store
        .commit_sink_offsets_blocking(&rt.connector, offsets)
        .map_err(|e| StageError::fatal(TaskStage::CommitSinkOffsets, e))?;
    positions.dirty = false;
    positions.committed = positions.next.clone();
    m.offset_commit_ms
        .record(started.elapsed().as_secs_f64() * 1000.0);
    m.commit_completions.add(1);
    m.active.store(0, Ordering::Relaxed);
    m.sink_committed();
    m.succeeded();
    if std::mem::take(&mut positions.noted) {
        rt.report(State::Running, None);
    }
    Ok(true)
}

fn put_loop(
    rt: &TaskRuntime,
    task: &mut dyn SinkTask,
    state: &mut LoopState,
) -> Result<Step, StageError> {
    let LoopState {
        sub,
        interval,
        positions,
        backoff,
        last_commit,
        last_assign,
        assigned_at,
    } = state;
    let (sub, interval) = (&*sub, *interval);
    loop {
        let settle = || commit(rt, sub, task, positions).map(|_| ());
        match rt.checkpoint_parking(settle)? {
            Checkpoint::Stop => return Ok(Step::Done),
            Checkpoint::Paused => return Ok(Step::Paused),
            Checkpoint::Resumed => continue,
            Checkpoint::Run => {}
        }
        if rt.statuses.task_state(&rt.connector, rt.task) != Some(State::Running) {
            rt.report(State::Running, None);
        }
        // A sink with nothing assigned yet looks for its topics whenever the log wakes it, so a topic created
        // after the sink started is found at its first append rather than up to IDLE_WAIT later.
        if positions.next.is_empty() || last_assign.is_none_or(|t| t.elapsed() >= IDLE_WAIT) {
            *assigned_at = rt.log_signal.appends();
            let added = assign(rt, sub, positions)?;
            *last_assign = Some(Instant::now());
            if !added.is_empty() {
                task.open(&added)
                    .map_err(|e| StageError::new(TaskStage::SinkOpen, e))?;
            }
        }
        let mut delivered = 0usize;
        let mut caught_up = true;
        let partitions: Vec<(TopicPartition, i64)> = positions
            .next
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for (tp, from) in partitions {
            let batch = rt
                .store
                .read_blocking(tp.clone(), from, MAX_BATCH)
                .map_err(storage_error)?;
            if batch.is_empty() {
                continue;
            }
            if batch.len() == MAX_BATCH {
                caught_up = false;
            }
            rt.metrics.records_in.add(batch.len() as u64);
            rt.metrics.sink_read(&tp, batch[0].timestamp);
            let last = batch.last().map(|r| r.offset).unwrap_or(from);
            let records = convert_batch(rt, &batch)?;
            if rt.worker.topic_tracking_enable && positions.tracked.insert(tp.topic.clone()) {
                rt.store
                    .record_active_topic_blocking(&rt.connector, &tp.topic)
                    .map_err(storage_error)?;
            }
            delivered += batch.len();
            if !records.is_empty() && !put_with_retries(rt, task, records, &batch, &tp, positions)?
            {
                break; // stopping: this batch was not delivered, so its offsets are not advanced
            }
            rt.metrics.sink_put(&tp, last + 1);
            positions.next.insert(tp, last + 1);
            positions.dirty = true;
        }
        if positions.dirty && (caught_up || last_commit.elapsed() >= interval) {
            let committed = commit(rt, sub, task, positions)?;
            *last_commit = Instant::now();
            if committed {
                *backoff = Duration::from_millis(100);
            } else {
                let wait = *backoff;
                *backoff = (*backoff * 2).min(Duration::from_secs(10));
                return Ok(Step::Park(wait));
            }
        }
        if delivered == 0 {
            let again = task
                .check_idle()
                .map_err(|e| StageError::new(TaskStage::Put, e))?;
            let wait = idle_wait(rt, *assigned_at);
            return Ok(Step::Park(again.map_or(wait, |a| a.min(wait))));
        }
    }
}

/// Records read from the log through the converters and the transforms, as the task receives them;
/// failures go to the error handler (which fails the task or skips them, to the dead letter queue).
fn convert_batch(rt: &TaskRuntime, batch: &[LogRecord]) -> Result<Vec<SinkRecord>, StageError> {
    let mut records = Vec::with_capacity(batch.len());
    for r in batch {
        let decoded = match rt.converters.decode(r) {
            Ok(d) => d,
            Err(failure) => {
                rt.errors.sink_failure(failure, r, &rt.store)?;
                continue;
            }
        };
        let ctx_offset = decoded.kafka_offset;
        match rt.transform(decoded.record, Some(ctx_offset)) {
            Ok(Some(record)) => records.push(SinkRecord {
                record,
                kafka_offset: ctx_offset,
            }),
            Ok(None) => {}
            Err(failure) => rt.errors.sink_failure(failure, r, &rt.store)?,
        }
    }
    Ok(records)
}

/// A caught-up sink with no append since it listed the topics has nothing to look for until one comes;
/// otherwise it lists them again after [`IDLE_WAIT`] (a new topic's first records).
fn idle_wait(rt: &TaskRuntime, assigned_at: u64) -> Duration {
    if rt.log_signal.appends() == assigned_at {
        EVENT_WAIT
    } else {
        IDLE_WAIT
    }
}

/// Kafka redelivers a batch whose `put` threw a RetriableException; so does this, until the task is stopped.
/// Returns false when the task was stopped before the batch was delivered.
fn put_with_retries(
    rt: &TaskRuntime,
    task: &mut dyn SinkTask,
    records: Vec<SinkRecord>,
    raw: &[LogRecord],
    partition: &TopicPartition,
    positions: &mut Positions,
) -> Result<bool, StageError> {
    let mut backoff = Duration::from_millis(100);
    loop {
        let mut context = Context {
            reporter: Reporter {
                rt,
                raw,
                failed: None,
            },
            partition,
            positions: &mut *positions,
            failed: None,
        };
        let started = Instant::now();
        let outcome = task.put_in_context(&records, &mut context);
        if let Some(e) = context.reporter.failed.or(context.failed) {
            // The tolerance was exceeded, or delivered offsets could not be stored: the trace is the
            // runtime's, whatever the task returned.
            return Err(e);
        }
        match outcome {
            Ok(()) => {
                let m = &rt.metrics;
                m.batch_ms.record(started.elapsed().as_secs_f64() * 1000.0);
                m.records_out.add(records.len() as u64);
                m.batch_size.record(records.len() as f64);
                m.active.fetch_add(records.len() as u64, Ordering::Relaxed);
                return Ok(true);
            }
            Err(TaskError::Retriable(message)) => {
                tracing::warn!(connector = %rt.connector, task = rt.task, %message, "Retriable error in put; redelivering.");
                rt.report_retrying("SinkTask.put", message);
                positions.noted = true;
                if !rt.control.wait(backoff) && rt.control.mode() != Mode::Run {
                    return Ok(false);
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
            Err(e) => return Err(StageError::new(TaskStage::Put, e)),
        }
    }
}

/// The runtime's [`SinkTaskContext`] for one `put`: the reporter, and offsets committed as the task says
/// records are delivered.
struct Context<'a> {
    reporter: Reporter<'a>,
    partition: &'a TopicPartition,
    positions: &'a mut Positions,
    failed: Option<StageError>,
}

impl SinkTaskContext for Context<'_> {
    fn reporter(&mut self) -> &mut dyn ErrantRecordReporter {
        &mut self.reporter
    }

    fn partition(&self) -> &TopicPartition {
        self.partition
    }

    fn retrying(&mut self, problem: Option<&str>) {
        let rt = self.reporter.rt;
        match problem {
            Some(why) => rt.report_retrying("SinkTask.put", why.to_string()),
            None => {
                rt.metrics.succeeded();
                rt.report(State::Running, None);
            }
        }
    }

    fn delivered(&mut self, partition: &TopicPartition, next_offset: i64) -> Result<(), TaskError> {
        if let Some(e) = &self.failed {
            return Err(e.error.clone());
        }
        let positions = &mut *self.positions;
        let Some(next) = positions.next.get_mut(partition) else {
            return Ok(()); // no longer assigned (rewound or revoked)
        };
        if positions
            .committed
            .get(partition)
            .is_some_and(|c| *c >= next_offset)
        {
            return Ok(());
        }
        let rt = self.reporter.rt;
        let offsets = vec![(
            partition.topic.clone(),
            partition.partition,
            Some(next_offset),
        )];
        if let Err(e) = rt
            .store
            .commit_sink_offsets_blocking(&rt.connector, offsets)
        {
            let e = StageError::fatal(TaskStage::CommitSinkOffsets, e);
            let error = e.error.clone();
            self.failed = Some(e);
            return Err(error);
        }
        // The records below it are done: a later read, or a rewind, starts there.
        if *next < next_offset {
            *next = next_offset;
        }
        positions.committed.insert(partition.clone(), next_offset);
        rt.metrics
            .last_success_ms
            .store(crate::model::now_ms(), Ordering::Relaxed);
        Ok(())
    }
}

/// The runtime's [`ErrantRecordReporter`]: a record a sink task reports goes through the error handler
/// (tolerance, log, dead letter queue) with the stored bytes it was read from.
struct Reporter<'a> {
    rt: &'a TaskRuntime,
    raw: &'a [LogRecord],
    failed: Option<StageError>,
}

impl ErrantRecordReporter for Reporter<'_> {
    fn report(&mut self, record: &SinkRecord, message: &str) -> Result<(), TaskError> {
        if let Some(e) = &self.failed {
            return Err(e.error.clone());
        }
        // One batch is one partition's range, so the offset alone finds the record (a transform may have
        // renamed its topic).
        let Some(stored) = self.raw.iter().find(|r| r.offset == record.kafka_offset) else {
            return Err(TaskError::fatal(format!(
                "A sink task reported a record this batch does not hold: {}@{}",
                record.record.topic, record.kafka_offset
            )));
        };
        let failure = super::convert::StageFailure {
            stage: "TASK_PUT",
            class: self
                .rt
                .config
                .get(crate::config::keys::CONNECTOR_CLASS)
                .cloned()
                .unwrap_or_default(),
            message: message.to_string(),
        };
        match self.rt.errors.sink_failure(failure, stored, &self.rt.store) {
            Ok(()) => Ok(()),
            Err(e) => {
                let error = e.error.clone();
                self.failed = Some(e);
                Err(error)
            }
        }
    }
}
