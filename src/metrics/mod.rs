//! Prometheus metrics: `GET /metrics` in the Prometheus text format 0.0.4, or OpenMetrics when the scraper
//! asks for it through `Accept`.
//!
//! Kafka Connect's metrics are exposed under the names Strimzi's JMX exporter rules give them, so its
//! Grafana dashboard and alert rules work unchanged; liteconnect's own carry the `liteconnect_` prefix, and
//! the process's the `process_` prefix of the Prometheus client conventions.
//!
//! Scraping is cheap: the loops update atomics ([`TaskMetrics`], [`WorkerCounters`]); a scrape reads them,
//! the in-memory statuses and connector configs, and two file sizes. It runs no SQL: the per-partition
//! start offsets, record counts and bytes come from [`LogStats`], which a background loop refreshes with
//! one query every [`LOG_STATS_INTERVAL`] (on the reader thread), while end offsets are moved forward by
//! every append as it commits.

mod families;
mod kafka;
mod process;
mod render;
mod routes;
mod stats;
mod task;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};

#[cfg(feature = "kafka-listener")]
pub use kafka::CloseReason;
pub use kafka::KafkaMetrics;
pub use render::{render, Format, ScrapeSource};
pub use routes::route_template;
pub use stats::Sampled;
pub use task::{ErrorCounters, Phase, TaskMetrics};

use crate::status::{StartupCounter, StatusBoard};
pub use crate::storage::PartitionStat;
use crate::storage::{StoreObserver, TopicPartition};

/// How often the per-partition log statistics are read again from the database.
pub const LOG_STATS_INTERVAL: Duration = Duration::from_secs(15);

/// Connector and task start-ups, for `kafka_connect_worker_*_startup_*_total`.
#[derive(Debug, Default)]
pub struct WorkerCounters {
    /// Connectors started.
    pub connector_startup_success: AtomicU64,
    /// Connectors that failed to start.
    pub connector_startup_failure: AtomicU64,
    /// Tasks started.
    pub task_startup_success: AtomicU64,
    /// Tasks that failed to start.
    pub task_startup_failure: AtomicU64,
}

/// Per topic partition statistics of the log: end offsets are current (every append moves them), the rest
/// is as of the last refresh.
#[derive(Debug, Default)]
pub struct LogStats {
    parts: Mutex<BTreeMap<TopicPartition, PartitionStat>>,
    /// Per partition, when runs of records were stored: (first offset of the run, wall time in ms), oldest
    /// first, at most [`LogStats::MARKS`] (thinned by half when full, so the span is kept).
    marks: Mutex<BTreeMap<TopicPartition, std::collections::VecDeque<(i64, i64)>>>,
}

impl LogStats {
    /// Marks kept per partition.
    const MARKS: usize = 256;

    /// Notes that the records from `first` on were stored at `at_ms`.
    fn mark(&self, tp: &TopicPartition, first: i64, at_ms: i64) {
        let mut marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
        let list = marks.entry(tp.clone()).or_default();
        if list.back().is_some_and(|(o, _)| *o >= first) {
            return;
        }
        if list.len() >= Self::MARKS {
            let mut i = 0;
            list.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        list.push_back((first, at_ms));
    }

    /// When the record at `offset` was stored, as far as the marks tell: the time of the last run that
    /// began at or before it (the record came then or later). `None` when no mark reaches back that far.
    pub fn stored_at(&self, tp: &TopicPartition, offset: i64) -> Option<i64> {
        let marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
        marks
            .get(tp)?
            .iter()
            .rev()
            .find(|(first, _)| *first <= offset)
            .map(|(_, at)| *at)
    }

    /// Counts the records of a committed append: `assigned` holds where each went, `sizes` its bytes.
    /// End offsets move past them; records and bytes grow until the next refresh counts them again
    /// (with what retention and delivery have deleted since).
    pub fn appended(&self, assigned: &[(String, i32, i64)], sizes: &[u64]) {
        let mut rows = assigned.iter().zip(sizes).peekable();
        while let Some(((topic, partition, offset), size)) = rows.next() {
            // One map entry per run of records to the same partition, not one per record.
            let (mut end, mut records, mut bytes) = (offset + 1, 1u64, *size);
            while let Some(((_, _, o), s)) =
                rows.next_if(|((t, p, _), _)| t == topic && p == partition)
            {
                end = end.max(o + 1);
                records += 1;
                bytes += s;
            }
            self.appended_run(topic, *partition, end, records, bytes);
        }
    }

    /// Counts a committed run of `records` records (`bytes` bytes) appended to one partition, ending
    /// before offset `end`.
    pub fn appended_run(&self, topic: &str, partition: i32, end: i64, records: u64, bytes: u64) {
        let tp = TopicPartition {
            topic: topic.to_string(),
            partition,
        };
        self.mark(&tp, end - records as i64, crate::model::now_ms());
        let mut parts = self.parts.lock().expect("log stats lock");
        let stat = parts.entry(tp).or_default();
        stat.end = stat.end.max(end);
        stat.records += records;
        stat.bytes += bytes;
    }

    /// Replaces the statistics with a fresh reading, keeping end offsets that appends have moved since.
    pub fn refreshed(&self, fresh: Vec<(TopicPartition, PartitionStat)>) {
        // Records stored before this process started have no mark: their age counts from the first
        // reading that saw them.
        let now = crate::model::now_ms();
        for (tp, stat) in &fresh {
            if stat.records > 0 && self.stored_at(tp, stat.start).is_none() {
                let mut marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
                marks
                    .entry(tp.clone())
                    .or_default()
                    .push_front((stat.start, now));
            }
        }
        let mut parts = self.parts.lock().expect("log stats lock");
        let next: BTreeMap<TopicPartition, PartitionStat> = fresh
            .into_iter()
            .map(|(tp, mut stat)| {
                if let Some(known) = parts.get(&tp) {
                    stat.end = stat.end.max(known.end);
                }
                (tp, stat)
            })
            .collect();
        *parts = next;
    }

    /// The end offset of a partition, when known.
    pub fn end(&self, tp: &TopicPartition) -> Option<i64> {
        self.parts
            .lock()
            .expect("log stats lock")
            .get(tp)
            .map(|s| s.end)
    }

    /// Every partition's statistics.
    pub fn snapshot(&self) -> BTreeMap<TopicPartition, PartitionStat> {
        self.parts.lock().expect("log stats lock").clone()
    }
}

/// Labels of a REST request counter: method, route template, status.
pub type RequestLabels = [(&'static str, String); 3];
/// Labels of the REST latency histogram: method, route template.
pub type RouteLabels = [(&'static str, String); 2];

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// REST requests by route template and status, with their latency.
#[derive(Debug)]
pub struct RestMetrics {
    /// `liteconnect_rest_requests_total`.
    pub requests: Family<RequestLabels, Counter>,
    /// `liteconnect_rest_request_duration_seconds`.
    pub latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
}

impl Default for RestMetrics {
    fn default() -> Self {
        RestMetrics {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
        }
    }
}

impl RestMetrics {
    /// Counts one answered request.
    pub fn observe(&self, method: &str, path: &str, status: u16, elapsed: Duration) {
        let route = route_template(path);
        // Any other method is answered 405; counting it apart would let clients make up label values.
        const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
        let method = METHODS
            .into_iter()
            .find(|m| *m == method)
            .unwrap_or("other");
        self.requests
            .get_or_create(&[
                ("method", method.to_string()),
                ("route", route.to_string()),
                ("status", status.to_string()),
            ])
            .inc();
        self.latency
            .get_or_create(&[("method", method.to_string()), ("route", route.to_string())])
            .observe(elapsed.as_secs_f64());
    }
}

/// The database's own metrics.
#[derive(Debug)]
pub struct StorageMetrics {
    /// How long each group commit took, from `BEGIN` to the end of `COMMIT`.
    pub commit_seconds: Histogram,
}

impl Default for StorageMetrics {
    fn default() -> Self {
        StorageMetrics {
            commit_seconds: Histogram::new(exponential_buckets(0.0001, 2.0, 16)),
        }
    }
}

/// A connector's plugin as the connector metrics show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectorPlugin {
    /// The fully qualified class.
    pub class: String,
    /// `source` or `sink`.
    pub kind: &'static str,
    /// The plugin's version.
    pub version: String,
}

impl ConnectorPlugin {
    /// What the metrics show of a plugin.
    pub fn of(plugin: &dyn crate::connectors::ConnectorPlugin) -> ConnectorPlugin {
        ConnectorPlugin {
            class: plugin.class().to_string(),
            kind: match plugin.connector_type() {
                crate::config::connector::ConnectorType::Sink => "sink",
                crate::config::connector::ConnectorType::Source => "source",
            },
            version: plugin.version().to_string(),
        }
    }
}

/// Every metric of one worker. Whoever opens the store creates it (`lib.rs`) and gives it to the store as
/// its [`StoreObserver`], and to the worker, the herder and the listeners.
#[derive(Debug)]
pub struct Metrics {
    tasks: RwLock<BTreeMap<(String, u32), Arc<TaskMetrics>>>,
    /// The plugin of each connector whose tasks have started, so a scrape need not read its config.
    plugins: RwLock<BTreeMap<String, ConnectorPlugin>>,
    statuses: OnceLock<Weak<StatusBoard>>,
    /// The size of the last scrape, to size the next one's buffer.
    last_size: AtomicUsize,
    /// Connector and task start-ups.
    pub worker: WorkerCounters,
    /// The database.
    pub storage: StorageMetrics,
    /// The topic log.
    pub log: LogStats,
    /// The REST API.
    pub rest: RestMetrics,
    /// The Kafka listeners.
    pub kafka: KafkaMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            tasks: RwLock::new(BTreeMap::new()),
            plugins: RwLock::new(BTreeMap::new()),
            statuses: OnceLock::new(),
            last_size: AtomicUsize::new(0),
            worker: WorkerCounters::default(),
            storage: StorageMetrics::default(),
            log: LogStats::default(),
            rest: RestMetrics::default(),
            kafka: KafkaMetrics::default(),
        }
    }
}

impl Metrics {
    /// Fresh metrics for a task of a connector of `plugin` (re)starting now; they replace those of its
    /// previous run.
    pub fn start_task(
        &self,
        connector: &str,
        task: u32,
        plugin: &dyn crate::connectors::ConnectorPlugin,
    ) -> Arc<TaskMetrics> {
        let shown = ConnectorPlugin::of(plugin);
        let m = Arc::new(TaskMetrics::new(shown.kind == "sink"));
        let mut plugins = self.plugins.write().expect("plugins lock");
        if plugins.get(connector) != Some(&shown) {
            plugins.insert(connector.to_string(), shown);
        }
        drop(plugins);
        self.tasks
            .write()
            .expect("task metrics lock")
            .insert((connector.to_string(), task), m.clone());
        m
    }

    /// The plugin of a connector whose tasks have started.
    pub fn plugin_of(&self, connector: &str) -> Option<ConnectorPlugin> {
        self.plugins
            .read()
            .expect("plugins lock")
            .get(connector)
            .cloned()
    }

    /// Forgets a task's metrics (it was stopped).
    pub fn remove_task(&self, connector: &str, task: u32) {
        self.tasks
            .write()
            .expect("task metrics lock")
            .remove(&(connector.to_string(), task));
    }

    /// Every task's metrics, by connector and task.
    pub fn tasks(&self) -> Vec<((String, u32), Arc<TaskMetrics>)> {
        self.tasks
            .read()
            .expect("task metrics lock")
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The size of the last scrape, with some room to grow.
    pub fn last_size(&self) -> usize {
        let n = self.last_size.load(Ordering::Relaxed);
        n + n / 8
    }

    /// Notes the size of a scrape.
    pub fn set_last_size(&self, n: usize) {
        self.last_size.store(n, Ordering::Relaxed);
    }

    /// Lets the scrape read the worker's live statuses.
    pub fn attach_statuses(&self, statuses: &Arc<StatusBoard>) {
        let _ = self.statuses.set(Arc::downgrade(statuses));
    }

    fn statuses(&self) -> Option<Arc<StatusBoard>> {
        self.statuses.get().and_then(Weak::upgrade)
    }

    /// Counts a connector start-up.
    pub fn connector_started(&self, ok: bool) {
        let w = &self.worker;
        count(
            ok,
            &w.connector_startup_success,
            &w.connector_startup_failure,
        );
    }

    /// Counts a task start-up.
    pub fn task_started(&self, ok: bool) {
        let w = &self.worker;
        count(ok, &w.task_startup_success, &w.task_startup_failure);
    }
}

/// The store reports appends to the log statistics and times its group commits here.
impl StoreObserver for Metrics {
    fn appended_run(&self, topic: &str, partition: i32, end: i64, records: u64, bytes: u64) {
        self.log.appended_run(topic, partition, end, records, bytes);
    }

    fn log_bytes(&self) -> u64 {
        self.log.snapshot().values().map(|s| s.bytes).sum()
    }

    fn committed(&self, seconds: f64) {
        self.storage.commit_seconds.observe(seconds);
    }
}

/// The status board counts connector start-ups here.
impl StartupCounter for Metrics {
    fn connector_started(&self, ok: bool) {
        Metrics::connector_started(self, ok);
    }
}

/// Adds one to `success` or to `failure`.
fn count(ok: bool, success: &AtomicU64, failure: &AtomicU64) {
    let counter = if ok { success } else { failure };
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Refreshes the per-partition log statistics of `metrics` from `store` now, then every
/// [`LOG_STATS_INTERVAL`], until `stop`.
pub async fn refresh_loop(
    store: crate::storage::Store,
    metrics: Arc<Metrics>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(LOG_STATS_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                match store.partition_stats().await {
                    Ok(fresh) => metrics.log.refreshed(fresh),
                    Err(error) => tracing::debug!(%error, "Could not read the log statistics."),
                }
            }
            _ = async { let _ = stop.wait_for(|s| *s).await; } => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_tell_when_an_offset_was_stored_and_stay_bounded() {
        let log = LogStats::default();
        let tp = TopicPartition {
            topic: "t".into(),
            partition: 0,
        };
        assert_eq!(log.stored_at(&tp, 0), None);
        log.mark(&tp, 0, 1_000);
        log.mark(&tp, 10, 2_000);
        log.mark(&tp, 10, 9_000); // not a new run
        assert_eq!(log.stored_at(&tp, 0), Some(1_000));
        assert_eq!(log.stored_at(&tp, 9), Some(1_000));
        assert_eq!(log.stored_at(&tp, 10), Some(2_000));
        assert_eq!(log.stored_at(&tp, 500), Some(2_000));
        for i in 2..2_000 {
            log.mark(&tp, i * 10, 1_000 + i);
        }
        let kept = log.marks.lock().unwrap()[&tp].len();
        assert!(kept <= LogStats::MARKS, "{kept}");
        assert_eq!(
            log.stored_at(&tp, 0),
            Some(1_000),
            "the oldest mark is kept"
        );
        // A reading of records stored before any mark: they count from that reading.
        let other = TopicPartition {
            topic: "u".into(),
            partition: 0,
        };
        log.refreshed(vec![(
            other.clone(),
            PartitionStat {
                start: 5,
                end: 9,
                records: 4,
                bytes: 40,
            },
        )]);
        assert!(log.stored_at(&other, 5).is_some());
        assert_eq!(log.stored_at(&other, 4), None);
    }

    #[test]
    fn rest_labels_are_bounded() {
        let rest = RestMetrics::default();
        rest.observe("BREW", "/coffee/pot/1", 405, Duration::from_millis(1));
        rest.observe("GET", "/connectors/a/status", 200, Duration::from_millis(1));
        let count = |m: &str, r: &str, s: &str| {
            rest.requests
                .get_or_create(&[
                    ("method", m.to_string()),
                    ("route", r.to_string()),
                    ("status", s.to_string()),
                ])
                .get()
        };
        assert_eq!(count("other", "other", "405"), 1);
        assert_eq!(count("GET", "/connectors/{connector}/status", "200"), 1);
    }

    #[test]
    fn appends_move_the_log_statistics_and_a_refresh_replaces_them() {
        let log = LogStats::default();
        let tp = TopicPartition {
            topic: "t".into(),
            partition: 0,
        };
        log.appended(&[("t".into(), 0, 0), ("t".into(), 0, 1)], &[10, 20]);
        let stat = log.snapshot()[&tp];
        assert_eq!((stat.end, stat.records, stat.bytes), (2, 2, 30));
        // A reading taken before the last append keeps the newer end offset.
        let older = PartitionStat {
            start: 1,
            end: 1,
            records: 0,
            bytes: 0,
        };
        log.refreshed(vec![(tp.clone(), older)]);
        assert_eq!(log.end(&tp), Some(2));
        assert_eq!(log.snapshot()[&tp].start, 1);
        // A topic that is gone from the reading is gone.
        log.refreshed(Vec::new());
        assert_eq!(log.end(&tp), None);
    }
}
