//! One task's metrics, as Kafka's `ConnectMetricsRegistry` defines them for the `connector-task-metrics`,
//! `source-task-metrics`, `sink-task-metrics` and `task-error-metrics` groups. The task loop updates them
//! with atomic adds and one uncontended lock per batch; a scrape only reads them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::stats::Sampled;
use crate::storage::TopicPartition;

/// A running total and its rate over Kafka's sample window.
#[derive(Debug, Default)]
pub struct Throughput {
    total: AtomicU64,
    rate: Sampled,
}

impl Throughput {
    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
        self.rate.record(n as f64);
    }

    /// The total so far.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Per second over the sample window.
    pub fn rate(&self, now: Instant) -> f64 {
        self.rate.rate(now)
    }
}

/// The part of a task's life spent running and paused, for `running-ratio` and `pause-ratio`.
#[derive(Debug)]
struct StateClock {
    started: Instant,
    since: Instant,
    current: Phase,
    running: Duration,
    paused: Duration,
}

/// What a task's time is counted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Polling or putting.
    Running,
    /// Paused.
    Paused,
    /// Starting, failed or stopping.
    Other,
}

impl StateClock {
    fn settle(&mut self, now: Instant) {
        let spent = now.saturating_duration_since(self.since);
        match self.current {
            Phase::Running => self.running += spent,
            Phase::Paused => self.paused += spent,
            Phase::Other => {}
        }
        self.since = now;
    }
}

/// The error counters of Kafka's `task-error-metrics` group.
#[derive(Debug, Default)]
pub struct ErrorCounters {
    /// `total-record-failures`: failed attempts to process a record.
    pub record_failures: AtomicU64,
    /// `total-record-errors`: records that failed.
    pub record_errors: AtomicU64,
    /// `total-records-skipped`: records skipped by `errors.tolerance=all`.
    pub records_skipped: AtomicU64,
    /// `total-retries`: retried operations.
    pub retries: AtomicU64,
    /// `total-errors-logged`: errors written to the log.
    pub errors_logged: AtomicU64,
    /// `deadletterqueue-produce-requests`.
    pub dlq_requests: AtomicU64,
    /// `deadletterqueue-produce-failures`.
    pub dlq_failures: AtomicU64,
    /// `last-error-timestamp`, epoch milliseconds (0: none).
    pub last_error_ms: AtomicI64,
}

impl ErrorCounters {
    /// Counts one failed record.
    pub fn failed(&self) {
        self.record_failures.fetch_add(1, Ordering::Relaxed);
        self.record_errors.fetch_add(1, Ordering::Relaxed);
        self.last_error_ms
            .store(crate::model::now_ms(), Ordering::Relaxed);
    }

    /// Adds one to a counter.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Where a sink task stands in one partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SinkPosition {
    /// The next offset to read.
    pub position: i64,
    /// The next offset after the last committed one.
    pub committed: i64,
    /// The timestamp of the oldest record read but not yet committed, when known.
    pub pending_since_ms: Option<i64>,
}

/// A task's metrics.
#[derive(Debug)]
pub struct TaskMetrics {
    /// Whether the task is a sink.
    pub sink: bool,
    clock: Mutex<StateClock>,
    /// `offset-commit-{max,avg}-time-ms`.
    pub offset_commit_ms: Sampled,
    /// `batch-size-{max,avg}`.
    pub batch_size: Sampled,
    /// Source `source-record-poll-{rate,total}`; sink `sink-record-read-{rate,total}`.
    pub records_in: Throughput,
    /// Source `source-record-write-{rate,total}`; sink `sink-record-send-{rate,total}`.
    pub records_out: Throughput,
    /// Source `poll-batch-{max,avg}-time-ms`; sink `put-batch-{max,avg}-time-ms`.
    pub batch_ms: Sampled,
    /// `source-record-active-count` / `sink-record-active-count`.
    pub active: AtomicU64,
    /// Sink `offset-commit-seq-no`.
    pub commit_seq_no: AtomicU64,
    /// Sink `offset-commit-completion-{rate,total}`.
    pub commit_completions: Throughput,
    /// Sink `offset-commit-skip-{rate,total}`.
    pub commit_skips: Throughput,
    /// `task-error-metrics`.
    pub errors: ErrorCounters,
    /// Sink positions per assigned partition.
    positions: Mutex<BTreeMap<TopicPartition, SinkPosition>>,
    /// Whether the task is retrying a retriable error (an outage of the system it talks to).
    pub retrying: std::sync::atomic::AtomicBool,
    /// When the task last exchanged records with the system it talks to without an error (a poll, or
    /// a delivery), in ms since the epoch; 0 before the first.
    pub last_success_ms: std::sync::atomic::AtomicI64,
}

impl TaskMetrics {
    /// Fresh metrics for a task starting now.
    pub fn new(sink: bool) -> TaskMetrics {
        let now = Instant::now();
        TaskMetrics {
            sink,
            clock: Mutex::new(StateClock {
                started: now,
                since: now,
                current: Phase::Other,
                running: Duration::ZERO,
                paused: Duration::ZERO,
            }),
            offset_commit_ms: Sampled::new(now),
            batch_size: Sampled::new(now),
            records_in: Throughput::default(),
            records_out: Throughput::default(),
            batch_ms: Sampled::new(now),
            active: AtomicU64::new(0),
            commit_seq_no: AtomicU64::new(0),
            commit_completions: Throughput::default(),
            commit_skips: Throughput::default(),
            errors: ErrorCounters::default(),
            positions: Mutex::new(BTreeMap::new()),
            retrying: std::sync::atomic::AtomicBool::new(false),
            last_success_ms: std::sync::atomic::AtomicI64::new(0),
        }
    }

    /// Notes a successful exchange with the outside system now; the task is not retrying any more.
    pub fn succeeded(&self) {
        self.last_success_ms
            .store(crate::model::now_ms(), std::sync::atomic::Ordering::Relaxed);
        self.retrying
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Notes what the task's time counts as from now on.
    pub fn set_phase(&self, phase: Phase) {
        let mut c = self.clock.lock().expect("clock lock");
        if c.current != phase {
            c.settle(Instant::now());
            c.current = phase;
        }
    }

    /// The fractions of the task's life spent running and paused: (`running-ratio`, `pause-ratio`).
    pub fn ratios(&self, now: Instant) -> (f64, f64) {
        let mut c = self.clock.lock().expect("clock lock");
        c.settle(now);
        let life = now.saturating_duration_since(c.started).as_secs_f64();
        if life <= 0.0 {
            return (0.0, 0.0);
        }
        (
            c.running.as_secs_f64() / life,
            c.paused.as_secs_f64() / life,
        )
    }

    /// A partition newly assigned to a sink task, read (and committed) from `start`.
    pub fn sink_assigned(&self, tp: &TopicPartition, start: i64) {
        self.positions.lock().expect("positions lock").insert(
            tp.clone(),
            SinkPosition {
                position: start,
                committed: start,
                pending_since_ms: None,
            },
        );
    }

    /// A sink task forgot its partitions (it rewinds to its committed offsets).
    pub fn sink_unassigned(&self) {
        self.positions.lock().expect("positions lock").clear();
    }

    /// A sink task read records of a partition; `first_timestamp` is that of the first one.
    pub fn sink_read(&self, tp: &TopicPartition, first_timestamp: Option<i64>) {
        let mut positions = self.positions.lock().expect("positions lock");
        let p = positions.entry(tp.clone()).or_default();
        if p.pending_since_ms.is_none() {
            p.pending_since_ms = first_timestamp;
        }
    }

    /// A sink task put records of a partition up to `next` (exclusive).
    pub fn sink_put(&self, tp: &TopicPartition, next: i64) {
        let mut positions = self.positions.lock().expect("positions lock");
        positions.entry(tp.clone()).or_default().position = next;
    }

    /// A sink task committed its positions.
    pub fn sink_committed(&self) {
        for p in self.positions.lock().expect("positions lock").values_mut() {
            p.committed = p.position;
            p.pending_since_ms = None;
        }
    }

    /// The sink positions per partition.
    pub fn sink_positions(&self) -> Vec<(TopicPartition, SinkPosition)> {
        self.positions
            .lock()
            .expect("positions lock")
            .iter()
            .map(|(tp, p)| (tp.clone(), *p))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_split_the_life_of_a_task() {
        let m = TaskMetrics::new(false);
        m.set_phase(Phase::Running);
        std::thread::sleep(Duration::from_millis(30));
        m.set_phase(Phase::Paused);
        std::thread::sleep(Duration::from_millis(30));
        let (running, paused) = m.ratios(Instant::now());
        assert!(running > 0.2 && running < 0.8, "{running}");
        assert!(paused > 0.2 && paused < 0.8, "{paused}");
        assert!(running + paused <= 1.0 + 1e-9);
    }

    #[test]
    fn a_commit_clears_what_was_pending() {
        let m = TaskMetrics::new(true);
        let tp = TopicPartition {
            topic: "t".into(),
            partition: 0,
        };
        m.sink_assigned(&tp, 5);
        m.sink_read(&tp, Some(1000));
        m.sink_put(&tp, 9);
        m.sink_read(&tp, Some(2000));
        m.sink_put(&tp, 12);
        let p = m.sink_positions()[0].1;
        assert_eq!(
            (p.position, p.committed, p.pending_since_ms),
            (12, 5, Some(1000))
        );
        m.sink_committed();
        let p = m.sink_positions()[0].1;
        assert_eq!(
            (p.position, p.committed, p.pending_since_ms),
            (12, 12, None)
        );
    }
}
