//! The task families under Strimzi's names, and liteconnect's own and the process's families.

use std::fmt;
use std::sync::atomic::Ordering;

use prometheus_client::encoding::DescriptorEncoder;

use super::render::{family, load, single, Kind, Snapshot, TaskFamily};
use super::task::TaskMetrics;
use crate::storage::TopicPartition;
use TaskFamily::{Throughput, Value, Window};

use Kind::{Counter, Gauge};

/// `connector-task-metrics`, for every task.
#[rustfmt::skip]
pub(super) const COMMON: &[TaskFamily] = &[
    Value("kafka_connect_connector_task_running_ratio", "The fraction of time this task has spent in the running state.", Gauge, |m, s| m.ratios(s.now).0),
    Value("kafka_connect_connector_task_pause_ratio", "The fraction of time this task has spent in the pause state.", Gauge, |m, s| m.ratios(s.now).1),
    Window("kafka_connect_connector_task_offset_commit_{}_time_ms", "time in milliseconds taken by this task to commit offsets", |m| &m.offset_commit_ms),
    Window("kafka_connect_connector_task_batch_size_{}", "number of records in the batches the task has processed", |m| &m.batch_size),
];

/// `source-task-metrics`.
#[rustfmt::skip]
pub(super) const SOURCE: &[TaskFamily] = &[
    Throughput("kafka_connect_source_task_source_record_poll", "records produced/polled (before transformation) by this task", |m| &m.records_in),
    Throughput("kafka_connect_source_task_source_record_write", "records written to the log by this task (after transformations, without those dropped)", |m| &m.records_out),
    Window("kafka_connect_source_task_poll_batch_{}_time_ms", "time in milliseconds taken by this task to poll for a batch of source records", |m| &m.batch_ms),
    Value("kafka_connect_source_task_source_record_active_count", "The number of records that have been polled by this task but not yet written to the log.", Gauge, |m, _| load(&m.active)),
];

fn lag_max(m: &TaskMetrics, s: &Snapshot) -> f64 {
    m.sink_positions()
        .iter()
        .map(|(tp, p)| s.log.get(tp).map_or(0, |l| (l.end - p.position).max(0)))
        .max()
        .unwrap_or(0) as f64
}

/// `sink-task-metrics`.
#[rustfmt::skip]
pub(super) const SINK: &[TaskFamily] = &[
    Throughput("kafka_connect_sink_task_sink_record_read", "records read from the log by this task (before transformations)", |m| &m.records_in),
    Throughput("kafka_connect_sink_task_sink_record_send", "records output from the transformations and sent/put to this task", |m| &m.records_out),
    Value("kafka_connect_sink_task_sink_record_lag_max", "The maximum lag in terms of number of records that the sink task is behind the log end, over its partitions.", Gauge, lag_max),
    Value("kafka_connect_sink_task_partition_count", "The number of topic partitions assigned to this task.", Gauge, |m, _| m.sink_positions().len() as f64),
    Value("kafka_connect_sink_task_offset_commit_seq_no", "The current sequence number for offset commits.", Gauge, |m, _| load(&m.commit_seq_no)),
    Throughput("kafka_connect_sink_task_offset_commit_completion", "offset commit completions that completed successfully", |m| &m.commit_completions),
    Throughput("kafka_connect_sink_task_offset_commit_skip", "offset commit completions that were received too late and skipped/ignored", |m| &m.commit_skips),
    Window("kafka_connect_sink_task_put_batch_{}_time_ms", "time taken by this task to put a batch of sinks records", |m| &m.batch_ms),
    Value("kafka_connect_sink_task_sink_record_active_count", "The number of records that have been read from the log but not yet completely committed/flushed/acknowledged by the sink task.", Gauge, |m, _| load(&m.active)),
];

/// liteconnect's own per task: outages of the system the task talks to.
#[rustfmt::skip]
pub(super) const OUTAGE: &[TaskFamily] = &[
    Value("liteconnect_task_retrying", "1 while the task retries a retriable error (an outage of the system it talks to: its status is RUNNING with the error's trace), else 0.", Gauge, |m, _| if m.retrying.load(Ordering::Relaxed) { 1.0 } else { 0.0 }),
    Value("liteconnect_task_last_success_timestamp_seconds", "When the task last exchanged records with the system it talks to without an error (a poll or a delivery), in seconds since the epoch; 0 before the first.", Gauge, |m, _| m.last_success_ms.load(Ordering::Relaxed) as f64 / 1000.0),
];

/// `task-error-metrics`.
#[rustfmt::skip]
pub(super) const ERRORS: &[TaskFamily] = &[
    Value("kafka_connect_task_error_total_record_failures", "The number of record processing failures in this task.", Gauge, |m, _| load(&m.errors.record_failures)),
    Value("kafka_connect_task_error_total_record_errors", "The number of record processing errors in this task.", Gauge, |m, _| load(&m.errors.record_errors)),
    Value("kafka_connect_task_error_total_records_skipped", "The number of records skipped due to errors.", Gauge, |m, _| load(&m.errors.records_skipped)),
    Value("kafka_connect_task_error_total_retries", "The number of operations retried.", Gauge, |m, _| load(&m.errors.retries)),
    Value("kafka_connect_task_error_total_errors_logged", "The number of errors that were logged.", Gauge, |m, _| load(&m.errors.errors_logged)),
    Value("kafka_connect_task_error_deadletterqueue_produce_requests", "The number of attempted writes to the dead letter queue.", Gauge, |m, _| load(&m.errors.dlq_requests)),
    Value("kafka_connect_task_error_deadletterqueue_produce_failures", "The number of failed writes to the dead letter queue.", Gauge, |m, _| load(&m.errors.dlq_failures)),
    Value("kafka_connect_task_error_last_error_timestamp", "The epoch timestamp when this task last encountered an error, in milliseconds.", Gauge, |m, _| m.errors.last_error_ms.load(Ordering::Relaxed) as f64),
];

/// The Kafka sink's class.
const KAFKA_SINK: &str = "liteconnect.kafka.KafkaSinkConnector";

type PartitionValue = fn(&super::PartitionStat) -> f64;

/// The log's families per topic partition.
#[rustfmt::skip]
const LOG: [(&str, &str, PartitionValue); 4] = [
    ("liteconnect_log_start_offset", "The first offset the log still holds in the partition.", |s| s.start as f64),
    ("liteconnect_log_end_offset", "The offset the next record appended to the partition gets.", |s| s.end as f64),
    ("liteconnect_log_records", "The records the log holds in the partition.", |s| s.records as f64),
    ("liteconnect_log_bytes", "The bytes (keys, values and headers) the log holds in the partition.", |s| s.bytes as f64),
];

fn partition_labels(tp: &TopicPartition, partition: &str) -> Vec<(&'static str, String)> {
    vec![
        ("topic", tp.topic.clone()),
        ("partition", partition.to_string()),
    ]
}

impl Snapshot {
    /// liteconnect's own families.
    pub(super) fn own(&self, enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let parts: Vec<(&TopicPartition, String, &super::PartitionStat)> = self
            .log
            .iter()
            .map(|(tp, s)| (tp, tp.partition.to_string(), s))
            .collect();
        for (name, help, value) in LOG {
            let rows = parts
                .iter()
                .map(|(tp, p, s)| (partition_labels(tp, p), value(s)));
            family(enc, (name, help, Gauge), rows)?;
        }
        self.sink_lag(enc)?;
        self.kafka_backlog(enc)?;
        #[cfg(feature = "airbyte")]
        airbyte(enc)?;
        let st = &self.store;
        if let Some(ratio) = st.fill_ratio {
            single(
                enc,
                (
                    "liteconnect_log_buffer_fill_ratio",
                    "How full the log is against log.buffer.max.bytes.",
                    Gauge,
                ),
                ratio,
            )?;
        }
        single(
            enc,
            (
                "liteconnect_log_buffer_dropped_records",
                "Records deleted by log.buffer.full.policy=drop_oldest since the worker started.",
                Counter,
            ),
            st.dropped as f64,
        )?;
        single(
            enc,
            (
                "liteconnect_storage_file_bytes",
                "The size of the database file.",
                Gauge,
            ),
            st.file_bytes as f64,
        )?;
        single(
            enc,
            (
                "liteconnect_storage_wal_bytes",
                "The size of the database's write-ahead log.",
                Gauge,
            ),
            st.wal_bytes as f64,
        )?;
        single(
            enc,
            (
                "liteconnect_storage_checkpoints",
                "Checkpoints that let the write-ahead log start over since it was created.",
                Counter,
            ),
            st.checkpoints as f64,
        )
    }

    /// `liteconnect_sink_lag_records` and `liteconnect_sink_lag_seconds` per sink connector and partition.
    fn sink_lag(&self, enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let now_ms = crate::model::now_ms();
        let mut rows: Vec<(String, TopicPartition, String, i64, f64)> = Vec::new();
        for (connector, _, m) in self.tasks.iter().filter(|(_, _, m)| m.sink) {
            for (tp, p) in m.sink_positions() {
                let end = self.log.get(&tp).map_or(p.committed, |l| l.end);
                let lag = (end - p.committed).max(0);
                // The age of the oldest record not committed yet, read or not: the one at the committed
                // offset. Read ones carry their timestamp; an unread one (a paused or slow sink) is
                // as old as the append that stored it.
                let since = match p.pending_since_ms {
                    Some(ts) => Some(ts),
                    None => self.metrics.log.stored_at(&tp, p.committed),
                };
                let age = match since {
                    Some(ts) if lag > 0 => ((now_ms - ts).max(0) as f64) / 1000.0,
                    _ => 0.0,
                };
                let partition = tp.partition.to_string();
                rows.push((connector.clone(), tp, partition, lag, age));
            }
        }
        fn labels(r: &(String, TopicPartition, String, i64, f64)) -> [(&'static str, &str); 3] {
            [
                ("connector", r.0.as_str()),
                ("topic", r.1.topic.as_str()),
                ("partition", r.2.as_str()),
            ]
        }
        family(
            enc,
            (
                "liteconnect_sink_lag_records",
                "Records of the partition the sink connector has not delivered and committed yet.",
                Gauge,
            ),
            rows.iter().map(|r| (labels(r), r.3 as f64)),
        )?;
        family(enc, ("liteconnect_sink_lag_seconds", "The age of the oldest record of the partition the sink connector has not committed yet, read or not (0 when caught up).", Gauge), rows.iter().map(|r| (labels(r), r.4)))
    }

    /// `liteconnect_kafka_sink_unacknowledged_records`: per Kafka sink task, the records handed to the
    /// producer that no successful flush has confirmed yet (the flush waits for every acknowledgement).
    fn kafka_backlog(&self, enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let kafka: std::collections::BTreeSet<&str> = self
            .connectors
            .iter()
            .filter(|c| c.class == KAFKA_SINK)
            .map(|c| c.name.as_str())
            .collect();
        let rows = self
            .tasks
            .iter()
            .filter(|(c, _, _)| kafka.contains(c.as_str()))
            .map(|(c, t, m)| {
                (
                    [("connector", c.as_str()), ("task", t.as_str())],
                    load(&m.active),
                )
            });
        family(enc, ("liteconnect_kafka_sink_unacknowledged_records", "Records a Kafka sink task has sent that no flush has confirmed as acknowledged yet.", Gauge), rows)
    }

    /// The process families of the Prometheus client conventions.
    pub(super) fn process(&self, enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
        let Some(p) = self.process else { return Ok(()) };
        single(
            enc,
            (
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                Counter,
            ),
            p.cpu_seconds,
        )?;
        single(
            enc,
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                Gauge,
            ),
            p.resident_bytes as f64,
        )?;
        single(
            enc,
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                Gauge,
            ),
            p.virtual_bytes as f64,
        )?;
        single(
            enc,
            (
                "process_open_fds",
                "Number of open file descriptors.",
                Gauge,
            ),
            p.open_fds as f64,
        )?;
        if let Some(max) = p.max_fds {
            single(
                enc,
                (
                    "process_max_fds",
                    "Maximum number of open file descriptors.",
                    Gauge,
                ),
                max as f64,
            )?;
        }
        single(
            enc,
            (
                "process_threads",
                "Number of OS threads in the process.",
                Gauge,
            ),
            p.threads as f64,
        )?;
        single(
            enc,
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                Gauge,
            ),
            p.start_time_seconds,
        )
    }
}

/// `liteconnect_airbyte_*`: per Airbyte source connector, the sync in progress and the last one's
/// duration and outcome; per stream, the records read and the last state commit.
#[cfg(feature = "airbyte")]
fn airbyte(enc: &mut DescriptorEncoder<'_>) -> fmt::Result {
    use crate::connectors::airbyte::stats::{snapshot, StreamFigures, SyncFigures};
    let all = snapshot();
    let streams: Vec<(&str, &str, &StreamFigures)> = all
        .iter()
        .flat_map(|(c, f)| {
            f.streams
                .iter()
                .map(move |(s, v)| (c.as_str(), s.as_str(), v))
        })
        .collect();
    let per_stream = |get: fn(&StreamFigures) -> f64| {
        streams
            .iter()
            .map(move |(c, s, v)| ([("connector", *c), ("stream", *s)], get(v)))
    };
    family(
        enc,
        (
            "liteconnect_airbyte_records_read",
            "RECORDs the Airbyte source emitted for the stream since its task started.",
            Counter,
        ),
        per_stream(|v| v.records as f64),
    )?;
    family(enc, ("liteconnect_airbyte_last_state_commit_timestamp_seconds", "When a STATE of the stream was last committed with its records, in seconds since the epoch; 0 before the first.", Gauge), per_stream(|v| v.last_state_ms as f64 / 1000.0))?;
    let per_connector = |get: fn(&SyncFigures) -> Option<f64>| {
        all.iter()
            .filter_map(move |(c, f)| Some(([("connector", c.as_str())], get(f)?)))
    };
    family(
        enc,
        (
            "liteconnect_airbyte_sync_running",
            "1 while a READ of the Airbyte source runs, else 0.",
            Gauge,
        ),
        per_connector(|f| Some(if f.running { 1.0 } else { 0.0 })),
    )?;
    family(
        enc,
        (
            "liteconnect_airbyte_syncs",
            "READs of the Airbyte source finished since its task started.",
            Counter,
        ),
        per_connector(|f| Some(f.syncs as f64)),
    )?;
    family(
        enc,
        (
            "liteconnect_airbyte_last_sync_duration_seconds",
            "How long the last finished READ took.",
            Gauge,
        ),
        per_connector(|f| f.last_ok.map(|_| f.last_duration_ms as f64 / 1000.0)),
    )?;
    family(enc, ("liteconnect_airbyte_last_sync_success", "1 when the last finished READ ended well, 0 when it failed or was stopped by its timeout.", Gauge), per_connector(|f| f.last_ok.map(|ok| if ok { 1.0 } else { 0.0 })))
}
