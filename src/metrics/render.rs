//! Encoding a scrape: the worker, connector and task families under Strimzi's names, liteconnect's own,
//! and the process's, through `prometheus-client`'s Prometheus text (0.0.4) or OpenMetrics encoder.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::task::{TaskMetrics, Throughput};
use super::Sampled;
use super::{process, ConnectorPlugin, Metrics, PartitionStat};
use crate::model::State;
use crate::storage::{Store, TopicPartition};

/// What a scrape reads of the worker besides the metrics' own state: the store's files, and the plugin a
/// connector's config names. The herder gives it; a scrape reads the statuses from the status board the
/// metrics are attached to.
pub trait ScrapeSource {
    /// The process's metrics.
    fn metrics(&self) -> &Arc<Metrics>;

    /// The store, for its file sizes and the log's fill.
    fn store(&self) -> &Store;

    /// The plugin a connector's config names, for a connector none of whose tasks has started; `None`
    /// for a connector that is gone.
    fn configured_plugin(&self, connector: &str) -> Option<ConnectorPlugin>;
}

/// The exposition format of a scrape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text format 0.0.4.
    Prometheus,
    /// OpenMetrics text 1.0.0.
    OpenMetrics,
}

impl Format {
    /// OpenMetrics when the `Accept` header names it, the Prometheus text format otherwise.
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Prometheus,
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// One connector as a scrape sees it.
#[derive(Debug)]
pub(super) struct ConnectorRow {
    pub(super) name: String,
    pub(super) class: String,
    pub(super) kind: &'static str,
    pub(super) version: String,
    pub(super) state: State,
    pub(super) tasks: Vec<(u32, State)>,
}

/// How a connector family's label value is read.
type ConnectorValue = fn(&ConnectorRow) -> String;

/// Everything a scrape reads, gathered once.
#[derive(Debug)]
pub(super) struct Snapshot {
    pub(super) now: Instant,
    pub(super) metrics: Arc<Metrics>,
    pub(super) connectors: Vec<ConnectorRow>,
    pub(super) tasks: Vec<(String, String, Arc<TaskMetrics>)>,
    pub(super) log: BTreeMap<TopicPartition, PartitionStat>,
    pub(super) store: StoreRow,
    pub(super) process: Option<process::ProcessStats>,
}

/// The database's sizes and the byte cap.
#[derive(Debug, Default)]
pub(super) struct StoreRow {
    pub(super) file_bytes: u64,
    pub(super) wal_bytes: u64,
    pub(super) checkpoints: u64,
    pub(super) fill_ratio: Option<f64>,
    pub(super) dropped: u64,
}

/// Renders a scrape of the worker `source` describes. Blocking (it reads `/proc` and file sizes): call it
/// off the executor.
pub fn render(source: &dyn ScrapeSource, format: Format) -> String {
    let store = source.store();
    let metrics = source.metrics().clone();
    let snapshot = Snapshot {
        now: Instant::now(),
        connectors: connectors(source, &metrics),
        tasks: metrics
            .tasks()
            .into_iter()
            .map(|((c, t), m)| (c, t.to_string(), m))
            .collect(),
        log: metrics.log.snapshot(),
        store: store_row(store),
        process: process::read(),
        metrics: metrics.clone(),
    };
    let mut registry = Registry::default();
    registry.register_collector(Box::new(snapshot));
    registry.register(
        "liteconnect_rest_requests",
        "REST requests answered, by method, route template and status.",
        metrics.rest.requests.clone(),
    );
    registry.register(
        "liteconnect_rest_request_duration_seconds",
        "How long REST requests took to answer, by method and route template.",
        metrics.rest.latency.clone(),
    );
    registry.register(
        "liteconnect_storage_commit_duration_seconds",
        "How long each group commit of the database took, from BEGIN to the end of COMMIT.",
        metrics.storage.commit_seconds.clone(),
    );
    metrics.kafka.register(&mut registry);
    let mut out = String::with_capacity(metrics.last_size());
    let encoded = match format {
        Format::Prometheus => {
            prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)
        }
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry),
    };
    if let Err(e) = encoded {
        tracing::warn!(error = %e, "Could not encode the metrics.");
    }
    metrics.set_last_size(out.len());
    out
}

fn connectors(source: &dyn ScrapeSource, metrics: &Metrics) -> Vec<ConnectorRow> {
    let Some(statuses) = metrics.statuses() else {
        return Vec::new();
    };
    statuses
        .snapshot()
        .into_iter()
        .filter_map(|(name, state, tasks)| {
            // Read from the config only for a connector none of whose tasks has started.
            let plugin = match metrics.plugin_of(&name) {
                Some(p) => p,
                None => source.configured_plugin(&name)?,
            };
            Some(ConnectorRow {
                name,
                class: plugin.class,
                kind: plugin.kind,
                version: plugin.version,
                state,
                tasks,
            })
        })
        .collect()
}

/// The first 32 bytes of a WAL file hold its header; bytes 12 to 15 are the checkpoint sequence number,
/// which SQLite increments each time a checkpoint lets the WAL start over.
fn wal_checkpoints(wal: &std::path::Path) -> u64 {
    use std::io::Read;
    let mut header = [0u8; 16];
    match std::fs::File::open(wal).and_then(|mut f| f.read_exact(&mut header)) {
        Ok(()) => u64::from(u32::from_be_bytes([
            header[12], header[13], header[14], header[15],
        ])),
        Err(_) => 0,
    }
}

fn store_row(store: &Store) -> StoreRow {
    let path = store.path();
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal = std::path::PathBuf::from(wal);
    StoreRow {
        file_bytes: size(path),
        wal_bytes: size(&wal),
        checkpoints: wal_checkpoints(&wal),
        fill_ratio: store.buffer_fill_ratio(),
        dropped: store.dropped_records(),
    }
}

/// Whether a family's values are a gauge or a counter (the encoder adds `_total` to a counter's name).
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Gauge,
    Counter,
}

/// The labels of a task's series: connector and task.
pub(super) type Labels<'a> = [(&'static str, &'a str); 2];

/// Encodes one family with a row per label set.
pub(super) fn family<L: EncodeLabelSet>(
    enc: &mut DescriptorEncoder<'_>,
    (name, help, kind): (&str, &str, Kind),
    rows: impl IntoIterator<Item = (L, f64)>,
) -> fmt::Result {
    let metric_type = match kind {
        Kind::Gauge => MetricType::Gauge,
        Kind::Counter => MetricType::Counter,
    };
    let mut m = enc.encode_descriptor(name, help, None, metric_type)?;
    for (labels, v) in rows {
        let mut e = m.encode_family(&labels)?;
        match kind {
            Kind::Gauge => e.encode_gauge(&v)?,
            Kind::Counter => e.encode_counter::<NoLabelSet, f64, f64>(&v, None)?,
        }
    }
    Ok(())
}

/// Encodes one family without labels.
pub(super) fn single(
    enc: &mut DescriptorEncoder<'_>,
    (name, help, kind): (&str, &str, Kind),
    v: f64,
) -> fmt::Result {
    let metric_type = match kind {
        Kind::Gauge => MetricType::Gauge,
        Kind::Counter => MetricType::Counter,
    };
    let mut m = enc.encode_descriptor(name, help, None, metric_type)?;
    match kind {
        Kind::Gauge => m.encode_gauge(&v),
        Kind::Counter => m.encode_counter::<NoLabelSet, f64, f64>(&v, None),
    }
}

pub(super) fn load(a: &AtomicU64) -> f64 {
    a.load(Ordering::Relaxed) as f64
}

/// The task states counted per connector by `kafka_connect_worker_connector_<state>_task_count`.
/// (None: every task; liteconnect forgets a destroyed task at once, so none is ever counted as one.)
const TASK_STATES: [(&str, Option<&[State]>); 7] = [
    ("total", None),
    ("running", Some(&[State::Running])),
    ("paused", Some(&[State::Paused])),
    ("failed", Some(&[State::Failed])),
    ("unassigned", Some(&[State::Unassigned])),
    ("destroyed", Some(&[])),
    ("restarting", Some(&[State::Restarting])),
];

impl Snapshot {
    fn worker(&self, enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
        use Kind::{Counter, Gauge};
        let w = &self.metrics.worker;
        let tasks: usize = self.connectors.iter().map(|c| c.tasks.len()).sum();
        single(
            enc,
            (
                "kafka_connect_worker_connector_count",
                "The number of connectors run in this worker.",
                Gauge,
            ),
            self.connectors.len() as f64,
        )?;
        single(
            enc,
            (
                "kafka_connect_worker_task_count",
                "The number of tasks run in this worker.",
                Gauge,
            ),
            tasks as f64,
        )?;
        for (what, ok, failed) in [
            (
                "connector",
                &w.connector_startup_success,
                &w.connector_startup_failure,
            ),
            ("task", &w.task_startup_success, &w.task_startup_failure),
        ] {
            let name = |s: &str| format!("kafka_connect_worker_{what}_startup_{s}");
            let help = |s: &str| format!("The total number of {what} starts that {s}.");
            single(
                enc,
                (&name("attempts"), &help("were attempted"), Counter),
                load(ok) + load(failed),
            )?;
            single(
                enc,
                (&name("success"), &help("succeeded"), Counter),
                load(ok),
            )?;
            single(
                enc,
                (&name("failure"), &help("failed"), Counter),
                load(failed),
            )?;
        }
        for (state, wanted) in TASK_STATES {
            let name = format!("kafka_connect_worker_connector_{state}_task_count");
            let help = format!("The number of {state} tasks of the connector on the worker.");
            let rows = self.connectors.iter().map(|c| {
                let n = c
                    .tasks
                    .iter()
                    .filter(|(_, s)| wanted.is_none_or(|w| w.contains(s)))
                    .count();
                ([("connector", c.name.as_str())], n as f64)
            });
            family(enc, (&name, &help, Gauge), rows)?;
        }
        Ok(())
    }

    fn connector_families(&self, enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let info: [(&str, &str, &str, ConnectorValue); 4] = [
            (
                "kafka_connect_connector_status",
                "The status of the connector.",
                "status",
                |c| c.state.as_str().to_ascii_lowercase(),
            ),
            (
                "kafka_connect_connector_connector_class",
                "The name of the connector class.",
                "connector_class",
                |c| c.class.clone(),
            ),
            (
                "kafka_connect_connector_connector_type",
                "The type of the connector: source or sink.",
                "connector_type",
                |c| c.kind.to_string(),
            ),
            (
                "kafka_connect_connector_connector_version",
                "The version of the connector class, as reported by the connector.",
                "connector_version",
                |c| c.version.clone(),
            ),
        ];
        for (name, help, label, value) in info {
            let rows = self
                .connectors
                .iter()
                .map(|c| (vec![("connector", c.name.clone()), (label, value(c))], 1.0));
            family(enc, (name, help, Kind::Gauge), rows)?;
        }
        let mut task_ids = Vec::new();
        for c in &self.connectors {
            for (t, s) in &c.tasks {
                task_ids.push((
                    c.name.as_str(),
                    t.to_string(),
                    s.as_str().to_ascii_lowercase(),
                ));
            }
        }
        let rows = task_ids.iter().map(|(c, t, s)| {
            (
                vec![
                    ("connector", *c),
                    ("task", t.as_str()),
                    ("status", s.as_str()),
                ],
                1.0,
            )
        });
        family(
            enc,
            (
                "kafka_connect_connector_task_status",
                "The status of the connector task.",
                Kind::Gauge,
            ),
            rows,
        )
    }

    /// Task families of one group: `(name, help, kind, value)`; `sink` picks the tasks (None: all).
    fn task_group(
        &self,
        enc: &mut DescriptorEncoder<'_>,
        sink: Option<bool>,
        group: &[TaskFamily],
    ) -> fmt::Result {
        let tasks: Vec<(Labels<'_>, &TaskMetrics)> = self
            .tasks
            .iter()
            .filter(|(_, _, m)| sink.is_none_or(|s| m.sink == s))
            .map(|(c, t, m)| {
                (
                    [("connector", c.as_str()), ("task", t.as_str())],
                    m.as_ref(),
                )
            })
            .collect();
        let mut emit = |name: &str, help: &str, kind: Kind, value: &dyn Fn(&TaskMetrics) -> f64| {
            let rows = tasks.iter().map(|(labels, m)| (*labels, value(m)));
            family(enc, (name, help, kind), rows)
        };
        let now = self.now;
        for f in group {
            match *f {
                TaskFamily::Value(name, help, kind, value) => {
                    emit(name, help, kind, &|m| value(m, self))?
                }
                TaskFamily::Throughput(name, what, of) => {
                    let rate = format!("The average per-second number of {what}.");
                    emit(&format!("{name}_rate"), &rate, Kind::Gauge, &|m| {
                        of(m).rate(now)
                    })?;
                    let total = format!("The total number of {what}.");
                    emit(name, &total, Kind::Counter, &|m| of(m).total() as f64)?;
                }
                TaskFamily::Window(pattern, what, of) => {
                    for (stat, read) in [("max", Sampled::max as WindowRead), ("avg", Sampled::avg)]
                    {
                        let name = pattern.replace("{}", stat);
                        let help = format!(
                            "The {stat} {what}.",
                            stat = if stat == "max" { "maximum" } else { "average" }
                        );
                        emit(&name, &help, Kind::Gauge, &|m| read(of(m), now))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// One task family, or a pair of them read from one statistic.
#[derive(Clone, Copy)]
pub(super) enum TaskFamily {
    /// Name, help, kind and how to read its value.
    Value(&'static str, &'static str, Kind, TaskValue),
    /// A total and its rate, read from one [`Throughput`]: the counter `name` (`_total` added) and the
    /// gauge `name_rate`; the help names what is counted.
    Throughput(&'static str, &'static str, fn(&TaskMetrics) -> &Throughput),
    /// A windowed maximum and average: `{}` in the name becomes `max` and `avg`; the help names what is
    /// measured.
    Window(&'static str, &'static str, fn(&TaskMetrics) -> &Sampled),
}

type WindowRead = fn(&Sampled, Instant) -> f64;

pub(super) type TaskValue = fn(&TaskMetrics, &Snapshot) -> f64;

impl Collector for Snapshot {
    fn encode(&self, mut enc: DescriptorEncoder<'_>) -> fmt::Result {
        self.worker(&mut enc)?;
        self.connector_families(&mut enc)?;
        self.task_group(&mut enc, None, super::families::COMMON)?;
        self.task_group(&mut enc, Some(false), super::families::SOURCE)?;
        self.task_group(&mut enc, Some(true), super::families::SINK)?;
        self.task_group(&mut enc, None, super::families::ERRORS)?;
        self.task_group(&mut enc, None, super::families::OUTAGE)?;
        self.own(&mut enc)?;
        self.process(&mut enc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{AppendBatch, ProducedRecord};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_header_counts_checkpoints_that_restart_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.db").display().to_string();
        let config = crate::config::worker::WorkerConfig::from_props(crate::test_support::props(
            &[("storage.file", &file)],
        ))
        .unwrap();
        let metrics = Arc::new(Metrics::default());
        let store = crate::open_store(&config, &metrics).await.unwrap();
        tokio::task::spawn_blocking(move || fill_the_wal(&store, &metrics))
            .await
            .unwrap();
    }

    fn fill_the_wal(store: &crate::storage::Store, metrics: &Metrics) {
        let before = store_row(store);
        assert!(before.file_bytes > 0);
        // SQLite checkpoints once the WAL passes 1,000 pages (4 MB): write well past that.
        for _ in 0..24 {
            let records = (0..64)
                .map(|_| ProducedRecord {
                    topic: "t".into(),
                    value: Some(vec![b'x'; 4096]),
                    ..ProducedRecord::default()
                })
                .collect();
            store
                .append_blocking(AppendBatch {
                    connector: "c".into(),
                    records,
                    ..AppendBatch::default()
                })
                .unwrap();
        }
        let after = store_row(store);
        assert!(
            after.checkpoints > before.checkpoints,
            "{before:?} {after:?}"
        );
        assert!(after.wal_bytes > 0, "{after:?}");
        let log = metrics.log.snapshot();
        let t = &log[&TopicPartition {
            topic: "t".into(),
            partition: 0,
        }];
        assert_eq!((t.end, t.records), (24 * 64, 24 * 64));
    }
}
