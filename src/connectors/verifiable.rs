//! Kafka's tool connectors (`org.apache.kafka.connect.tools`): a source that generates an increasing
//! sequence number per task and a sink that checks what it receives, plus the mock connectors that
//! simulate a failing task.
//!
//! # The verifiable source
//! Each task `id` (0, 1, … as the connector numbers them) emits records with
//! - source partition `{"id": <task id>}` and source offset `{"seqno": <n>}`, as Kafka's task writes them;
//! - key: the task id, an `INT32`; value: the sequence number, an `INT64` (with `complete.record.data=true`,
//!   a struct `{name, task, topic, time_ms, seqno}`, as Kafka's option of that name).
//!
//! A task resumes at the stored `seqno` plus one, so a restarted task continues the sequence without gaps.
//! `throughput` is the records per second per task: a negative value is unthrottled, `0` emits nothing.
//! Kafka's task returns one record per poll; this one returns every record that is due, up to
//! [`MAX_BATCH`], which gives the same rate with far fewer round trips. Throttling waits through the task
//! context, so a paused or stopped task never sleeps past the request. Kafka prints a JSON line to stdout
//! for every record; these tasks log a summary per batch at `debug` instead.
//!
//! # The verifiable sink
//! Counts, per producing task (the record key), how many records arrived, the last sequence number, and
//! any gaps or repeats in the sequence, logging each batch at `debug` and a summary when it stops. It does
//! no I/O, so it is the cheapest way to read the log back.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value as Json};

use super::{ConnectorPlugin, Props, SinkTask, SourceTask, SourceTaskContext, TaskError};
use crate::config::def::KeyRow;
use crate::config::def::{ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, Validator};
use crate::connectors::file::topic_key;
use crate::connectors::plugin_identity;
use crate::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};
use crate::model::now_ms;
use crate::record::{ConnectRecord, SinkRecord, SourceRecord};

const VERSION: &str = "4.0.0";
const NAME: &str = "name";
const ID: &str = "id";
const TOPIC: &str = "topic";
const THROUGHPUT: &str = "throughput";
const COMPLETE_RECORD_DATA: &str = "complete.record.data";
const SEQNO: &str = "seqno";
const MOCK_MODE: &str = "mock_mode";
const DELAY_MS: &str = "delay_ms";
const TASK_FAILURE: &str = "task-failure";
const CONNECTOR_FAILURE: &str = "connector-failure";
/// Kafka's `MockConnector.DEFAULT_FAILURE_DELAY_MS`.
const DEFAULT_FAILURE_DELAY_MS: u64 = 15_000;

/// The most records one poll of the verifiable source returns.
pub const MAX_BATCH: usize = 1000;

/// One task config per task, each with its `id` (as Kafka's verifiable connectors do).
fn numbered_tasks(config: &Props, max_tasks: usize) -> Vec<Props> {
    (0..max_tasks)
        .map(|i| {
            let mut props = config.clone();
            props.insert(ID.into(), i.to_string());
            props
        })
        .collect()
}

#[rustfmt::skip]
const THROUGHPUT_KEY: KeyRow = (THROUGHPUT, ConfigType::Long, Some("-1"), Importance::High, "The records per second each task publishes; negative for no limit, 0 for none at all");
#[rustfmt::skip]
const COMPLETE_RECORD_DATA_KEY: KeyRow = (COMPLETE_RECORD_DATA, ConfigType::Boolean, Some("false"), Importance::Low, "Whether the value is a struct with the name, task, topic, time and seqno instead of the seqno alone");

/// The `id` key both verifiable connectors define.
fn id_key() -> ConfigKey {
    ConfigKey::new(
        ID,
        ConfigType::Int,
        DefaultValue::Null,
        Importance::Low,
        "The task id; the connector sets it for each task",
    )
}

fn parse_id(config: &Props, task: &str) -> Result<i32, TaskError> {
    config
        .get(ID)
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            TaskError::fatal(format!(
                "Invalid {task} configuration: '{ID}' must be an integer"
            ))
        })
}

/// `org.apache.kafka.connect.tools.VerifiableSourceConnector`.
#[derive(Debug)]
pub struct VerifiableSource;

impl ConnectorPlugin for VerifiableSource {
    plugin_identity!(
        "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        Source,
        VERSION,
        "org.apache.kafka.connect.tools.VerifiableSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        ConfigDef::new()
            .define(topic_key())
            .define_rows(&[THROUGHPUT_KEY])
            .define(id_key())
            .define_rows(&[COMPLETE_RECORD_DATA_KEY])
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        Ok(numbered_tasks(config, max_tasks))
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(VerifiableSourceTask::default()))
    }
    fn alter_offsets(
        &self,
        _config: &Props,
        offsets: &[(Json, Option<Json>)],
    ) -> Result<bool, String> {
        for (partition, offset) in offsets {
            if partition.get(ID).and_then(Json::as_i64).is_none() {
                return Err(format!(
                    "Partition objects should contain the integer key '{ID}'"
                ));
            }
            if let Some(offset) = offset {
                if offset.get(SEQNO).and_then(Json::as_i64).is_none() {
                    return Err(format!(
                        "Offset objects should either be null or contain the integer key '{SEQNO}'"
                    ));
                }
            }
        }
        Ok(true)
    }
}

/// Emits `seqno`, `seqno + 1`, … for one task id.
#[derive(Default)]
pub struct VerifiableSourceTask {
    name: String,
    id: i32,
    topic: String,
    throughput: i64,
    complete: bool,
    seqno: i64,
    starting_seqno: i64,
    started: Option<Instant>,
    partition: Map<String, Json>,
    key_schema: Option<SchemaRef>,
    value_schema: Option<SchemaRef>,
}

impl VerifiableSourceTask {
    /// How many records may be emitted now, `elapsed` after the start: enough to keep the rate at
    /// `throughput` per second (the first record goes at once), at most [`MAX_BATCH`].
    fn due(&self, elapsed: Duration) -> usize {
        if self.throughput < 0 {
            return MAX_BATCH;
        }
        if self.throughput == 0 {
            return 0;
        }
        let allowed = (self.throughput as f64 * elapsed.as_secs_f64()).floor() as i64 + 1;
        let sent = self.seqno - self.starting_seqno;
        (allowed - sent).clamp(0, MAX_BATCH as i64) as usize
    }

    /// How long until the next record is due, `elapsed` after the start.
    fn until_next(&self, elapsed: Duration) -> Duration {
        if self.throughput <= 0 {
            return Duration::from_secs(1);
        }
        let sent = (self.seqno - self.starting_seqno) as f64;
        let next_at = Duration::from_secs_f64(sent / self.throughput as f64);
        next_at
            .saturating_sub(elapsed)
            .clamp(Duration::from_millis(1), Duration::from_secs(1))
    }

    fn record(&self, seqno: i64, now: i64) -> SourceRecord {
        let value = if self.complete {
            let schema = self
                .value_schema
                .clone()
                .unwrap_or_else(complete_value_schema);
            Value::Struct(Struct {
                schema,
                values: vec![
                    Value::String(self.name.clone()),
                    Value::Int32(self.id),
                    Value::String(self.topic.clone()),
                    Value::Int64(now),
                    Value::Int64(seqno),
                ],
            })
        } else {
            Value::Int64(seqno)
        };
        let mut offset = Map::new();
        offset.insert(SEQNO.into(), json!(seqno));
        SourceRecord {
            source_partition: Some(self.partition.clone()),
            source_offset: Some(offset),
            record: ConnectRecord {
                topic: self.topic.clone(),
                kafka_partition: None,
                key_schema: self.key_schema.clone(),
                key: Value::Int32(self.id),
                value_schema: self.value_schema.clone(),
                value,
                timestamp: Some(now),
                headers: Vec::new(),
            },
        }
    }
}

fn complete_value_schema() -> SchemaRef {
    SchemaBuilder::struct_()
        .field("name", Schema::string())
        .field("task", Schema::int32())
        .field("topic", Schema::string())
        .field("time_ms", Schema::int64())
        .field("seqno", Schema::int64())
        .build()
}

impl SourceTask for VerifiableSourceTask {
    fn start(&mut self, config: &Props, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        self.name = config.get(NAME).cloned().unwrap_or_default();
        self.id = parse_id(config, "VerifiableSourceTask")?;
        self.topic = config
            .get(TOPIC)
            .map(|t| t.trim().to_string())
            .unwrap_or_default();
        self.throughput = match config.get(THROUGHPUT) {
            None => -1,
            Some(t) => t.trim().parse().map_err(|_| {
                TaskError::fatal(
                    "Invalid VerifiableSourceTask configuration: 'throughput' must be a long",
                )
            })?,
        };
        self.complete = config
            .get(COMPLETE_RECORD_DATA)
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("true"));
        self.partition = Map::new();
        self.partition.insert(ID.into(), json!(self.id));
        let stored = context.offset(&Json::Object(self.partition.clone()))?;
        self.seqno = match stored.as_ref().map(|o| o.get(SEQNO)) {
            None => 0,
            Some(Some(s)) if s.is_i64() => s.as_i64().unwrap_or(0) + 1,
            Some(_) => return Err(TaskError::fatal("The stored offset has no integer 'seqno'")),
        };
        self.starting_seqno = self.seqno;
        self.started = Some(Instant::now());
        self.key_schema = Some(Schema::int32());
        self.value_schema = Some(if self.complete {
            complete_value_schema()
        } else {
            Schema::int64()
        });
        tracing::info!(
            name = %self.name, id = self.id, topic = %self.topic, seqno = self.starting_seqno,
            "Started VerifiableSourceTask {}-{} producing to topic {} resuming from seqno {}",
            self.name, self.id, self.topic, self.starting_seqno
        );
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        let elapsed = self.started.get_or_insert_with(Instant::now).elapsed();
        let due = self.due(elapsed);
        if due == 0 {
            context.idle(self.until_next(elapsed));
            return Ok(Vec::new());
        }
        let now = now_ms();
        let first = self.seqno;
        let records: Vec<SourceRecord> = (first..first + due as i64)
            .map(|s| self.record(s, now))
            .collect();
        self.seqno += due as i64;
        tracing::debug!(name = %self.name, task = self.id, topic = %self.topic, first, last = self.seqno - 1, "Emitted seqnos.");
        Ok(records)
    }
}

/// `org.apache.kafka.connect.tools.VerifiableSinkConnector`.
#[derive(Debug)]
pub struct VerifiableSink;

impl ConnectorPlugin for VerifiableSink {
    plugin_identity!(
        "org.apache.kafka.connect.tools.VerifiableSinkConnector",
        Sink,
        VERSION,
        "org.apache.kafka.connect.tools.VerifiableSinkTask"
    );
    fn config_def(&self) -> ConfigDef {
        ConfigDef::new().define(id_key())
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        Ok(numbered_tasks(config, max_tasks))
    }
    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        Some(Box::new(VerifiableSinkTask::default()))
    }
    fn acknowledges_offsets(&self) -> bool {
        true
    }
}

/// What one sink task has seen from one producing task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeqnoTally {
    /// Records received.
    pub count: u64,
    /// The last sequence number received.
    pub last: Option<i64>,
    /// Sequence numbers skipped (a record arrived more than one after the previous).
    pub missing: u64,
    /// Records that did not advance the sequence (redelivered or out of order).
    pub repeated: u64,
}

impl SeqnoTally {
    fn add(&mut self, seqno: i64) {
        self.count += 1;
        match self.last {
            Some(last) if seqno <= last => self.repeated += 1,
            Some(last) => {
                self.missing += (seqno - last - 1) as u64;
                self.last = Some(seqno);
            }
            None => self.last = Some(seqno),
        }
    }
}

/// Tallies sequence numbers per producing task.
#[derive(Default)]
pub struct VerifiableSinkTask {
    name: String,
    id: i32,
    tallies: BTreeMap<i64, SeqnoTally>,
    unflushed: u64,
    /// Records whose key or value was not a verifiable source's.
    foreign: u64,
}

/// A whole number from a record field: an integer, an integer string (StringConverter), or `field` of a struct.
fn number(value: &Value, field: &str) -> Option<i64> {
    match value {
        Value::Struct(s) => s.get(field).and_then(|v| number(v, field)),
        Value::String(s) => s.trim().parse().ok(),
        other => other.as_i64(),
    }
}

impl VerifiableSinkTask {
    #[cfg(test)]
    /// What this task has seen, per producing task id.
    pub fn tallies(&self) -> &BTreeMap<i64, SeqnoTally> {
        &self.tallies
    }
}

impl SinkTask for VerifiableSinkTask {
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        self.name = config.get(NAME).cloned().unwrap_or_default();
        self.id = parse_id(config, "VerifiableSinkTask")?;
        Ok(())
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        for r in records {
            let task = number(&r.record.key, "task");
            let seqno = number(&r.record.value, SEQNO);
            match (task, seqno) {
                (Some(task), Some(seqno)) => self.tallies.entry(task).or_default().add(seqno),
                _ => self.foreign += 1,
            }
        }
        self.unflushed += records.len() as u64;
        if let (Some(first), Some(last)) = (records.first(), records.last()) {
            tracing::debug!(
                name = %self.name, sink_task = self.id, topic = %first.record.topic,
                records = records.len(), first_offset = first.kafka_offset, last_offset = last.kafka_offset,
                "Received records."
            );
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        if self.unflushed > 0 {
            tracing::debug!(name = %self.name, sink_task = self.id, records = self.unflushed, "Flushed records.");
            self.unflushed = 0;
        }
        Ok(())
    }

    fn stop(&mut self) {
        for (task, t) in &self.tallies {
            tracing::info!(
                name = %self.name, sink_task = self.id, task, count = t.count, last_seqno = ?t.last,
                missing = t.missing, repeated = t.repeated, "VerifiableSinkTask summary."
            );
        }
        if self.foreign > 0 {
            tracing::info!(name = %self.name, sink_task = self.id, records = self.foreign, "Records without a task key and seqno.");
        }
    }
}

fn mock_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                MOCK_MODE,
                ConfigType::String,
                DefaultValue::Null,
                Importance::Medium,
                "'task-failure' makes the task fail after delay_ms; anything else runs a task that does nothing",
            )
            .validator(Validator::NullOr(Box::new(Validator::OneOf(vec![TASK_FAILURE, CONNECTOR_FAILURE])))),
        )
        .define(ConfigKey::new(
            DELAY_MS,
            ConfigType::Long,
            DefaultValue::Value(DEFAULT_FAILURE_DELAY_MS.to_string()),
            Importance::Low,
            "How long after starting the task fails",
        ))
}

fn mock_validate(config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
    match config.get(MOCK_MODE) {
        Some(Some(m)) if m.trim() == CONNECTOR_FAILURE => vec![(
            MOCK_MODE.into(),
            "connector-failure is not supported: liteconnect runs no connector instance that could fail on its own".into(),
        )],
        _ => Vec::new(),
    }
}

/// When a mock task should fail, if it should.
fn failure_deadline(config: &Props) -> Option<Instant> {
    if config.get(MOCK_MODE).map(|m| m.trim()) != Some(TASK_FAILURE) {
        return None;
    }
    let delay = config
        .get(DELAY_MS)
        .and_then(|d| d.trim().parse().ok())
        .unwrap_or(DEFAULT_FAILURE_DELAY_MS);
    Some(Instant::now() + Duration::from_millis(delay))
}

/// A mock connector: the mock keys and validation, and one [`MockTask`] that gets the
/// connector's config.
macro_rules! mock_connector {
    (
        $(#[$doc:meta])*
        $name:ident, $kind:ident, $class:literal, $task_class:literal, $task:ident: $task_trait:ident
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl ConnectorPlugin for $name {
            plugin_identity!($class, $kind, VERSION, $task_class);
            fn config_def(&self) -> ConfigDef {
                mock_config_def()
            }
            fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
                mock_validate(config)
            }
            fn task_configs(&self, config: &Props, _max_tasks: usize) -> Result<Vec<Props>, TaskError> {
                Ok(vec![config.clone()])
            }
            fn $task(&self) -> Option<Box<dyn $task_trait>> {
                Some(Box::new(MockTask { fail_at: None }))
            }
        }
    };
}

mock_connector!(
    /// `org.apache.kafka.connect.tools.MockSourceConnector`: one task that emits nothing and, with
    /// `mock_mode=task-failure`, fails after `delay_ms`.
    MockSource,
    Source,
    "org.apache.kafka.connect.tools.MockSourceConnector",
    "org.apache.kafka.connect.tools.MockSourceTask",
    source_task: SourceTask
);

mock_connector!(
    /// `org.apache.kafka.connect.tools.MockSinkConnector`: one task that drops what it gets and,
    /// with `mock_mode=task-failure`, fails on the first `put` after `delay_ms`.
    MockSink,
    Sink,
    "org.apache.kafka.connect.tools.MockSinkConnector",
    "org.apache.kafka.connect.tools.MockSinkTask",
    sink_task: SinkTask
);

/// The task of both mock connectors. As a source it waits, emitting nothing, until it is stopped
/// or its failure is due; as a sink it drops records and fails on a `put` once its failure is due
/// (as Kafka's, which fails only when called).
pub struct MockTask {
    fail_at: Option<Instant>,
}

impl SourceTask for MockTask {
    fn start(&mut self, config: &Props, _context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        self.fail_at = failure_deadline(config);
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        let wait = match self.fail_at {
            Some(at) => {
                let left = at.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(TaskError::fatal(
                        "MockSourceTask failed as configured (mock_mode=task-failure)",
                    ));
                }
                left
            }
            // Nothing will ever be due: sleep until stopped, paused or woken. The hour only bounds the
            // deadline's arithmetic; the wait ends as soon as the mode changes.
            None => Duration::from_secs(3600),
        };
        context.idle(wait);
        Ok(Vec::new())
    }
}

impl SinkTask for MockTask {
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        self.fail_at = failure_deadline(config);
        Ok(())
    }

    fn put(&mut self, _records: &[SinkRecord]) -> Result<(), TaskError> {
        match self.fail_at {
            Some(at) if Instant::now() >= at => Err(TaskError::fatal(
                "MockSinkTask failed as configured (mock_mode=task-failure)",
            )),
            _ => Ok(()),
        }
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::props;
    use std::cell::{Cell, RefCell};

    use super::*;

    /// A context with an optional stored offset that records the waits asked of it without sleeping.
    #[derive(Default)]
    struct FakeContext {
        stored: Option<Json>,
        asked: RefCell<Vec<Json>>,
        waits: Cell<usize>,
    }

    impl SourceTaskContext for FakeContext {
        fn offset(&self, partition: &Json) -> Result<Option<Json>, TaskError> {
            self.asked.borrow_mut().push(partition.clone());
            Ok(self.stored.clone())
        }
        fn wait(&self, _timeout: Duration) -> bool {
            self.waits.set(self.waits.get() + 1);
            true
        }
    }

    fn seqnos(records: &[SourceRecord]) -> Vec<i64> {
        records
            .iter()
            .map(|r| r.record.value.as_i64().unwrap())
            .collect()
    }

    #[test]
    fn tasks_are_numbered() {
        let configs = VerifiableSource
            .task_configs(&props(&[("topic", "t"), ("id", "9")]), 3)
            .unwrap();
        let ids: Vec<&str> = configs.iter().map(|c| c["id"].as_str()).collect();
        assert_eq!(ids, ["0", "1", "2"]);
        assert!(configs.iter().all(|c| c["topic"] == "t"));
        assert_eq!(
            VerifiableSink.task_configs(&props(&[]), 2).unwrap().len(),
            2
        );
    }

    /// Source task `id` of connector `v` on topic `t`, started with these further settings.
    fn started(id: &str, extra: &[(&str, &str)], ctx: &FakeContext) -> VerifiableSourceTask {
        let mut config = props(&[("name", "v"), ("id", id), ("topic", "t")]);
        config.extend(props(extra));
        let mut task = VerifiableSourceTask::default();
        task.start(&config, ctx).unwrap();
        task
    }

    #[test]
    fn unthrottled_source_emits_batches_and_never_waits() {
        let ctx = FakeContext::default();
        let mut task = started("2", &[("throughput", "-1")], &ctx);
        assert_eq!(ctx.asked.borrow().as_slice(), [json!({"id": 2})]);
        let first = task.poll(&ctx).unwrap();
        let second = task.poll(&ctx).unwrap();
        assert_eq!(first.len(), MAX_BATCH);
        assert_eq!(seqnos(&first)[..3], [0, 1, 2]);
        assert_eq!(seqnos(&second)[0], MAX_BATCH as i64);
        assert_eq!(ctx.waits.get(), 0);
        let r = &first[5];
        assert_eq!(
            r.source_partition,
            Some(json!({"id": 2}).as_object().unwrap().clone())
        );
        assert_eq!(
            r.source_offset,
            Some(json!({"seqno": 5}).as_object().unwrap().clone())
        );
        assert_eq!(r.record.key, Value::Int32(2));
        assert_eq!(r.record.topic, "t");
    }

    #[test]
    fn source_resumes_after_the_stored_offset() {
        let ctx = FakeContext {
            stored: Some(json!({"seqno": 41})),
            ..FakeContext::default()
        };
        let mut task = started("0", &[], &ctx);
        assert_eq!(seqnos(&task.poll(&ctx).unwrap())[0], 42);
        let bad = FakeContext {
            stored: Some(json!({"seqno": "x"})),
            ..FakeContext::default()
        };
        assert!(VerifiableSourceTask::default()
            .start(&props(&[("id", "0"), ("topic", "t")]), &bad)
            .is_err());
        assert!(VerifiableSourceTask::default()
            .start(&props(&[("topic", "t")]), &ctx)
            .is_err());
    }

    #[test]
    fn throttling_follows_the_rate_and_waits_through_the_context() {
        let mut task = VerifiableSourceTask {
            throughput: 100,
            ..Default::default()
        };
        assert_eq!(task.due(Duration::ZERO), 1, "the first record goes at once");
        assert_eq!(task.due(Duration::from_millis(500)), 51);
        task.seqno = 51;
        assert_eq!(task.due(Duration::from_millis(505)), 0);
        assert_eq!(
            task.until_next(Duration::from_millis(505)),
            Duration::from_millis(5)
        );
        assert_eq!(
            task.due(Duration::from_secs(100)),
            MAX_BATCH,
            "catching up is bounded per poll"
        );

        let ctx = FakeContext::default();
        let mut task = started("0", &[("throughput", "1")], &ctx);
        assert_eq!(task.poll(&ctx).unwrap().len(), 1);
        assert!(task.poll(&ctx).unwrap().is_empty());
        assert_eq!(
            ctx.waits.get(),
            1,
            "a throttled task waits through the context"
        );

        let mut task = started("0", &[("throughput", "0")], &ctx);
        assert!(
            task.poll(&ctx).unwrap().is_empty(),
            "throughput 0 emits nothing"
        );
        assert_eq!(ctx.waits.get(), 2);
    }

    #[test]
    fn complete_record_data_is_a_struct() {
        let ctx = FakeContext::default();
        let mut task = started("1", &[("complete.record.data", "true")], &ctx);
        let records = task.poll(&ctx).unwrap();
        let Value::Struct(s) = &records[3].record.value else {
            panic!("not a struct")
        };
        s.validate().unwrap();
        assert_eq!(s.get("seqno"), Some(&Value::Int64(3)));
        assert_eq!(s.get("name"), Some(&Value::String("v".into())));
        assert_eq!(s.get("task"), Some(&Value::Int32(1)));
    }

    fn sink_record(key: Value, value: Value, offset: i64) -> SinkRecord {
        let mut record = ConnectRecord::new("t", None, value);
        record.key = key;
        SinkRecord {
            record,
            kafka_offset: offset,
        }
    }

    #[test]
    fn sink_tallies_gaps_and_repeats_per_task() {
        let mut sink = VerifiableSinkTask::default();
        sink.start(&props(&[("id", "0")])).unwrap();
        let records = vec![
            sink_record(Value::Int32(0), Value::Int64(0), 0),
            sink_record(Value::Int32(0), Value::Int64(1), 1),
            sink_record(Value::String("1".into()), Value::String("0".into()), 2),
            sink_record(Value::Int32(0), Value::Int64(4), 3),
            sink_record(Value::Int32(0), Value::Int64(4), 4),
            sink_record(Value::Null, Value::String("not a number".into()), 5),
        ];
        sink.put(&records).unwrap();
        sink.flush().unwrap();
        assert_eq!(
            sink.tallies()[&0],
            SeqnoTally {
                count: 4,
                last: Some(4),
                missing: 2,
                repeated: 1
            }
        );
        assert_eq!(
            sink.tallies()[&1],
            SeqnoTally {
                count: 1,
                last: Some(0),
                missing: 0,
                repeated: 0
            }
        );
        assert_eq!(sink.foreign, 1);
        assert!(VerifiableSinkTask::default().start(&props(&[])).is_err());
    }

    #[test]
    fn mock_task_failure() {
        let ctx = FakeContext::default();
        let mut task = MockTask { fail_at: None };
        SourceTask::start(
            &mut task,
            &props(&[("mock_mode", "task-failure"), ("delay_ms", "0")]),
            &ctx,
        )
        .unwrap();
        assert!(task.poll(&ctx).is_err());
        let mut idle = MockTask { fail_at: None };
        SourceTask::start(&mut idle, &props(&[]), &ctx).unwrap();
        assert!(idle.poll(&ctx).unwrap().is_empty());
        let mut sink = MockTask { fail_at: None };
        SinkTask::start(
            &mut sink,
            &props(&[("mock_mode", "task-failure"), ("delay_ms", "0")]),
        )
        .unwrap();
        assert!(sink.put(&[]).is_err());
        let cfg: BTreeMap<String, Option<String>> = [(
            "mock_mode".to_string(),
            Some("connector-failure".to_string()),
        )]
        .into();
        assert_eq!(MockSource.validate(&cfg).len(), 1);
    }
}
