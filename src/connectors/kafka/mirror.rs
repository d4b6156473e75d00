//! `org.apache.kafka.connect.mirror.MirrorSourceConnector`: mirrors topics of a Kafka cluster into the local
//! log, as MirrorMaker 2's source connector does on one worker.
//!
//! Each task discovers the source topics that match `topics` and not `topics.exclude` (again every
//! `refresh.topics.interval.seconds`), takes its share of their partitions, and reads them with a
//! librdkafka consumer that commits nothing: progress lives in the source offsets, in MM2's format —
//! partition `{"cluster": alias, "topic": t, "partition": p}`, offset `{"offset": n}` with `n` the offset
//! of the last record mirrored. A task resumes at `n + 1` (or at `auto.offset.reset`, default `earliest`,
//! when there is no stored offset). Records keep their partition number, key, value, headers and timestamp.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use regex::Regex;
use serde_json::{json, Map, Value as Json};

use super::client::{self, Context};
use super::schema_ids::{self, Role, SchemaIds};
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::data::{Schema, SchemaRef, Value};
use crate::record::{ConnectRecord, Header, SourceRecord};
use crate::storage::Store;

/// MM2's `DefaultReplicationPolicy`.
pub const DEFAULT_POLICY: &str = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";
/// MM2's `IdentityReplicationPolicy`.
pub const IDENTITY_POLICY: &str = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";
/// MM2's default `topics.exclude`.
pub const DEFAULT_EXCLUDE: &str = ".*[\\-\\.]internal, .*\\.replica, __.*";

const MAX_RECORDS: usize = 1000;

/// How source topic names become local topic names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicationPolicy {
    /// `<alias><separator><topic>`.
    Default {
        /// The source cluster alias.
        alias: String,
        /// `replication.policy.separator`.
        separator: String,
    },
    /// The same name.
    Identity,
}

impl ReplicationPolicy {
    /// Reads `replication.policy.class` and `replication.policy.separator`.
    pub fn from_config(config: &Props) -> Result<Self, String> {
        let alias = config
            .get(super::SOURCE_ALIAS)
            .map(|a| a.trim().to_string())
            .unwrap_or_default();
        let class = config
            .get(super::POLICY_CLASS)
            .map(|c| c.trim())
            .unwrap_or(DEFAULT_POLICY);
        let simple = class.rsplit('.').next().unwrap_or(class);
        match simple {
            "DefaultReplicationPolicy" => Ok(ReplicationPolicy::Default {
                alias,
                separator: config
                    .get(super::POLICY_SEPARATOR)
                    .cloned()
                    .unwrap_or_else(|| ".".into()),
            }),
            "IdentityReplicationPolicy" => Ok(ReplicationPolicy::Identity),
            _ => Err(format!(
                "Unsupported replication.policy.class {class}: liteconnect supports {DEFAULT_POLICY} and {IDENTITY_POLICY}"
            )),
        }
    }

    /// The local topic a source topic is mirrored to.
    pub fn format_remote_topic(&self, topic: &str) -> String {
        match self {
            ReplicationPolicy::Default { alias, separator } => format!("{alias}{separator}{topic}"),
            ReplicationPolicy::Identity => topic.to_string(),
        }
    }
}

/// Comma-separated regexes, each matching a whole topic name.
pub fn patterns(list: &str) -> Result<Vec<Regex>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|p| Regex::new(&format!("^(?:{p})$")).map_err(|e| format!("Invalid regex {p}: {e}")))
        .collect()
}

/// MM2's source partition map.
pub fn source_partition(alias: &str, topic: &str, partition: i32) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("cluster".into(), json!(alias));
    m.insert("partition".into(), json!(partition));
    m.insert("topic".into(), json!(topic));
    m
}

fn describe(map: &Json) -> String {
    match map {
        Json::Object(o) => {
            let sorted: BTreeMap<&String, &Json> = o.iter().collect();
            let inner: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{k}={}", java(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        other => java(other),
    }
}

fn java(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "null".into(),
        other => other.to_string(),
    }
}

/// MM2's `MirrorSourceConnector.alterOffsets` checks (`MirrorUtils.validateSource*`), with its messages.
pub fn validate_offsets(offsets: &[(Json, Option<Json>)]) -> Result<(), String> {
    for (partition, offset) in offsets {
        let Some(offset) = offset else {
            continue; // tombstones are always allowed, to clean up anything
        };
        let Some(p) = partition.as_object() else {
            return Err("Source partitions may not be null".into());
        };
        for key in ["cluster", "topic"] {
            match p.get(key) {
                None => {
                    return Err(format!(
                        "Source partition {} is missing the '{key}' key, which is required",
                        describe(partition)
                    ))
                }
                Some(Json::String(_)) => {}
                Some(v) => {
                    return Err(format!(
                        "Source partition {} has an invalid value {} for the '{key}' key, which must be a string",
                        describe(partition),
                        java(v)
                    ))
                }
            }
        }
        match p.get("partition") {
            None => {
                return Err(format!(
                    "Source partition {} is missing the 'partition' key, which is required",
                    describe(partition)
                ))
            }
            Some(v) if v.as_i64().is_some_and(|n| n <= i64::from(i32::MAX)) => {}
            Some(v) => {
                return Err(format!(
                    "Source partition {} has an invalid value {} for the 'partition' key, which must be an integer",
                    describe(partition),
                    java(v)
                ))
            }
        }
        match offset.as_object().and_then(|o| o.get("offset")) {
            None => {
                return Err(format!(
                    "Source offset {} for source partition {} is missing the 'offset' key, which is required",
                    describe(offset),
                    describe(partition)
                ))
            }
            Some(v) if v.as_i64().is_some() => {}
            Some(v) => {
                return Err(format!(
                    "Source offset {} for source partition {} has an invalid value {} for the 'offset' key, which must be an integer",
                    describe(offset),
                    describe(partition),
                    java(v)
                ))
            }
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct MirrorContext(Context);

impl ClientContext for MirrorContext {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.0.log(level, fac, log_message);
    }
    fn error(&self, error: KafkaError, reason: &str) {
        self.0.error(error, reason);
    }
}

impl ConsumerContext for MirrorContext {}

/// How many queued consumer events are read, at most, after a failed metadata request.
const QUEUED_EVENTS: usize = 256;

/// FNV-1a, for a stable share of partitions among tasks.
fn share(topic: &str, partition: i32, count: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in topic.bytes().chain(partition.to_be_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % u64::from(count.max(1))) as u32
}

/// One mirror task: a consumer of its share of the source partitions.
pub struct MirrorSourceTask {
    consumer: Option<BaseConsumer<MirrorContext>>,
    alias: String,
    policy: ReplicationPolicy,
    include: Vec<Regex>,
    exclude: Vec<Regex>,
    refresh: Duration,
    last_refresh: Option<Instant>,
    poll_timeout: Duration,
    reset_earliest: bool,
    task: u32,
    tasks: u32,
    /// Source topic → partitions assigned to this task so far.
    assigned: BTreeMap<String, i32>,
    /// Local topic → partitions known to exist.
    local_partitions: HashMap<String, i32>,
    bytes_schema: SchemaRef,
    /// The worker's store, given before `start`.
    store: Option<Store>,
    /// With `source.schema.registry.url`: the schema IDs of framed keys and values translated to the
    /// local registry's.
    schema_ids: Option<SchemaIds>,
    /// Records consumed whose IDs could not be translated yet (the source registry unreachable): handed
    /// over, translated, before anything else is consumed.
    pending: Vec<SourceRecord>,
}

impl Default for MirrorSourceTask {
    fn default() -> Self {
        MirrorSourceTask {
            consumer: None,
            alias: String::new(),
            policy: ReplicationPolicy::Identity,
            include: Vec::new(),
            exclude: Vec::new(),
            refresh: Duration::from_secs(600),
            last_refresh: None,
            poll_timeout: Duration::from_millis(1000),
            reset_earliest: true,
            task: 0,
            tasks: 1,
            assigned: BTreeMap::new(),
            local_partitions: HashMap::new(),
            bytes_schema: Schema::optional_bytes(),
            store: None,
            schema_ids: None,
            pending: Vec::new(),
        }
    }
}

impl MirrorSourceTask {
    /// A batch with the schema IDs of its framed keys and values translated (all of it, or none: on a
    /// failure the batch waits in `pending`, as it was consumed).
    fn translated(&mut self, batch: Vec<SourceRecord>) -> Result<Vec<SourceRecord>, TaskError> {
        let Some(ids) = self.schema_ids.as_mut() else {
            return Ok(batch);
        };
        let result = batch
            .iter()
            .map(|r| translate_record(ids, r))
            .collect::<Result<Vec<_>, _>>();
        if result.is_err() {
            self.pending = batch;
        }
        result
    }

    /// Fails the task when the source cluster refused the consumer (credentials or TLS), which waiting
    /// does not mend; the stored offsets are untouched.
    fn check_refused(&self) -> Result<(), TaskError> {
        let Some(consumer) = self.consumer.as_ref() else {
            return Ok(());
        };
        match consumer.context().0.last_error.refused() {
            Some(why) => Err(TaskError::Fatal(format!(
                "{why}. Correct the source cluster's client settings (source.cluster.security.protocol, source.cluster.sasl.*, source.cluster.ssl.*) and restart the task."
            ))),
            None => Ok(()),
        }
    }

    /// The client's last error, for retriable errors' messages.
    fn cause(&self) -> String {
        self.consumer
            .as_ref()
            .and_then(|c| c.context().0.last_error.get())
            .map(|e| format!("; last client error: {e}"))
            .unwrap_or_default()
    }

    /// Notes a consumer error's code, so that a refusal fails the task.
    fn saw(&self, error: &KafkaError) {
        if let (Some(consumer), Some(code)) = (self.consumer.as_ref(), error.rdkafka_error_code()) {
            consumer.context().0.last_error.saw(code);
        }
    }

    fn wanted(&self, topic: &str) -> bool {
        self.include.iter().any(|r| r.is_match(topic))
            && !self.exclude.iter().any(|r| r.is_match(topic))
    }

    /// Finds the source partitions this task should read and assigns the new ones, starting after the
    /// stored offsets.
    fn refresh_assignment(&mut self, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let Some(consumer) = self.consumer.as_ref() else {
            return Err(TaskError::fatal("not started"));
        };
        let metadata = consumer
            .fetch_metadata(None, Duration::from_secs(5))
            .map_err(|e| {
                TaskError::Retriable(format!(
                    "Could not list the topics of source cluster {}: {e}{}",
                    self.alias,
                    self.cause()
                ))
            })?;
        let mut new = TopicPartitionList::new();
        let mut grown: Vec<(String, i32)> = Vec::new();
        for topic in metadata.topics() {
            let name = topic.name();
            if topic.error().is_some() || !self.wanted(name) {
                continue;
            }
            let count = topic.partitions().len() as i32;
            let known = self.assigned.get(name).copied().unwrap_or(0);
            if count <= known {
                continue;
            }
            for p in known..count {
                if share(name, p, self.tasks) != self.task {
                    continue;
                }
                let stored =
                    context.offset(&Json::Object(source_partition(&self.alias, name, p)))?;
                let next = stored
                    .as_ref()
                    .and_then(|o| o.get("offset"))
                    .and_then(Json::as_i64)
                    .filter(|n| *n >= 0);
                let offset = match next {
                    Some(n) => Offset::Offset(n + 1),
                    None if self.reset_earliest => Offset::Beginning,
                    None => Offset::End,
                };
                new.add_partition_offset(name, p, offset)
                    .map_err(|e| TaskError::fatal(format!("Could not assign {name}-{p}: {e}")))?;
            }
            grown.push((name.to_string(), count));
        }
        for (topic, count) in &grown {
            let local = self.policy.format_remote_topic(topic);
            if self.local_partitions.get(&local).is_none_or(|n| n < count) {
                let n = context.ensure_topic(&local, *count)?;
                self.local_partitions.insert(local, n);
            }
        }
        if new.count() > 0 {
            consumer.incremental_assign(&new).map_err(|e| {
                TaskError::Retriable(format!("Could not assign source partitions: {e}"))
            })?;
            tracing::info!(alias = %self.alias, partitions = new.count(), "Mirroring new source partitions.");
        }
        for (topic, count) in grown {
            self.assigned.insert(topic, count);
        }
        Ok(())
    }
}

impl SourceTask for MirrorSourceTask {
    fn attach_store(&mut self, store: &Store) {
        self.store = Some(store.clone());
    }

    fn start(&mut self, config: &Props, _context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        self.schema_ids = match schema_ids::other_registry(config, schema_ids::SOURCE_PREFIX)
            .map_err(TaskError::Fatal)?
        {
            Some(other) => {
                let store = self.store.clone().ok_or_else(|| {
                    TaskError::fatal("source.schema.registry.url needs the worker's store")
                })?;
                Some(SchemaIds::new(store, other, true))
            }
            None => None,
        };
        self.alias = config
            .get(super::SOURCE_ALIAS)
            .map(|a| a.trim().to_string())
            .unwrap_or_default();
        self.policy = ReplicationPolicy::from_config(config).map_err(TaskError::Fatal)?;
        self.include = patterns(config.get(super::TOPICS).map_or(".*", |s| s.as_str()))
            .map_err(TaskError::Fatal)?;
        self.exclude = patterns(
            config
                .get(super::TOPICS_EXCLUDE)
                .map_or(DEFAULT_EXCLUDE, |s| s.as_str()),
        )
        .map_err(TaskError::Fatal)?;
        let number = |key: &str, default: u64| -> Result<u64, TaskError> {
            match config.get(key) {
                None => Ok(default),
                Some(v) => v.trim().parse().map_err(|_| {
                    TaskError::fatal(format!("Invalid value {v} for configuration {key}"))
                }),
            }
        };
        self.refresh = Duration::from_secs(number(super::REFRESH_TOPICS, 600)?);
        self.poll_timeout = Duration::from_millis(number(super::POLL_TIMEOUT, 1000)?);
        self.task = number(super::TASK_INDEX, 0)? as u32;
        self.tasks = number(super::TASK_COUNT, 1)?.max(1) as u32;
        let name = config
            .get(crate::config::keys::NAME)
            .cloned()
            .unwrap_or_default();
        let mut settings = vec![
            ("auto.offset.reset", "earliest"),
            ("enable.partition.eof", "false"),
        ];
        settings.extend(client::mirror_consumer_settings(config));
        let group = format!("liteconnect-mirror-{name}");
        settings.push(("enable.auto.commit", "false"));
        settings.push(("enable.auto.offset.store", "false"));
        if !settings.iter().any(|(k, _)| *k == "group.id") {
            settings.push(("group.id", group.as_str()));
        }
        self.reset_earliest = settings
            .iter()
            .rev()
            .find(|(k, _)| *k == "auto.offset.reset")
            .is_none_or(|(_, v)| matches!(v.trim(), "earliest" | "smallest" | "beginning"));
        let consumer: BaseConsumer<MirrorContext> = client::client_config("consumer", settings)
            .map_err(|e| TaskError::Fatal(e.message))?
            .create_with_context(MirrorContext(Context {
                connector: name,
                last_error: Default::default(),
            }))
            .map_err(|e| TaskError::fatal(format!("Could not create the Kafka consumer: {e}")))?;
        self.consumer = Some(consumer);
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        if !self.pending.is_empty() {
            let batch = std::mem::take(&mut self.pending);
            return self.translated(batch);
        }
        if self
            .last_refresh
            .is_none_or(|t| t.elapsed() >= self.refresh)
        {
            // Counted from the attempt, so an unreachable cluster is asked again after the interval too.
            let first = self.last_refresh.is_none();
            self.last_refresh = Some(Instant::now());
            if let Err(e) = self.refresh_assignment(context) {
                if first {
                    self.last_refresh = None;
                }
                if self.assigned.is_empty() {
                    // Nothing is assigned, so the consumer's queue holds no records: read what it holds
                    // without waiting, since a refused connection shows there and not in the failed
                    // metadata request. Log lines come back as `None` too, hence a bounded count.
                    if let Some(consumer) = self.consumer.as_ref() {
                        for _ in 0..QUEUED_EVENTS {
                            if let Some(Err(error)) = consumer.poll(Duration::ZERO) {
                                self.saw(&error);
                            }
                        }
                    }
                    self.check_refused()?;
                }
                return Err(e);
            }
        }
        if self.assigned.is_empty() {
            context.idle(self.poll_timeout.min(self.refresh));
            return Ok(Vec::new());
        }
        let Some(consumer) = self.consumer.as_ref() else {
            return Err(TaskError::fatal("not started"));
        };
        let mut out = Vec::new();
        let mut timeout = self.poll_timeout;
        while out.len() < MAX_RECORDS {
            let Some(result) = consumer.poll(timeout) else {
                break;
            };
            timeout = Duration::ZERO;
            let message = match result {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(alias = %self.alias, error = %e, "Error while consuming from the source cluster.");
                    self.saw(&e);
                    if out.is_empty() {
                        self.check_refused()?;
                        return Err(TaskError::Retriable(format!(
                            "Consuming from source cluster {} failed: {e}{}",
                            self.alias,
                            self.cause()
                        )));
                    }
                    break;
                }
            };
            let topic = message.topic().to_string();
            let partition = message.partition();
            let bytes = |b: Option<&[u8]>| b.map_or(Value::Null, |b| Value::Bytes(b.to_vec()));
            let mut headers = Vec::new();
            if let Some(h) = message.headers() {
                for header in h.iter() {
                    headers.push(Header {
                        key: header.key.to_string(),
                        schema: Some(self.bytes_schema.clone()),
                        value: bytes(header.value),
                    });
                }
            }
            let mut offset = Map::new();
            offset.insert("offset".into(), json!(message.offset()));
            out.push(SourceRecord {
                source_partition: Some(source_partition(&self.alias, &topic, partition)),
                source_offset: Some(offset),
                record: ConnectRecord {
                    topic: self.policy.format_remote_topic(&topic),
                    kafka_partition: Some(partition),
                    key_schema: Some(self.bytes_schema.clone()),
                    key: bytes(message.key()),
                    value_schema: Some(self.bytes_schema.clone()),
                    value: bytes(message.payload()),
                    timestamp: message.timestamp().to_millis(),
                    headers,
                },
            });
        }
        if out.is_empty() {
            self.check_refused()?;
        }
        self.translated(out)
    }

    fn stop(&mut self) {
        self.consumer = None;
    }
}

/// A record with its framed key and value translated (by the subjects of its topic in the source
/// cluster).
fn translate_record(ids: &mut SchemaIds, r: &SourceRecord) -> Result<SourceRecord, TaskError> {
    let topic = r
        .source_partition
        .as_ref()
        .and_then(|p| p.get("topic"))
        .and_then(Json::as_str)
        .unwrap_or(&r.record.topic)
        .to_string();
    let mut out = r.clone();
    for (role, value) in [
        (Role::Key, &mut out.record.key),
        (Role::Value, &mut out.record.value),
    ] {
        if let Value::Bytes(b) = value {
            if let Some(rewritten) = ids.rewrite(&topic, role, b)? {
                *b = rewritten;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_policies_name_topics_as_mm2() {
        let mut config = Props::new();
        config.insert("source.cluster.alias".into(), "us".into());
        let p = ReplicationPolicy::from_config(&config).unwrap();
        assert_eq!(p.format_remote_topic("orders"), "us.orders");
        config.insert("replication.policy.separator".into(), "_".into());
        let p = ReplicationPolicy::from_config(&config).unwrap();
        assert_eq!(p.format_remote_topic("orders"), "us_orders");
        config.insert("replication.policy.class".into(), IDENTITY_POLICY.into());
        let p = ReplicationPolicy::from_config(&config).unwrap();
        assert_eq!(p.format_remote_topic("orders"), "orders");
        config.insert("replication.policy.class".into(), "com.example.Mine".into());
        assert!(ReplicationPolicy::from_config(&config).is_err());
    }

    #[test]
    fn default_exclusions_skip_internal_topics() {
        let ex = patterns(DEFAULT_EXCLUDE).unwrap();
        for t in [
            "__consumer_offsets",
            "mm2-offsets.internal",
            "x.replica",
            "a-internal",
        ] {
            assert!(ex.iter().any(|r| r.is_match(t)), "{t}");
        }
        assert!(!ex.iter().any(|r| r.is_match("orders")));
    }

    #[test]
    fn offsets_are_checked_with_mm2_messages() {
        let p = json!({"cluster": "a", "topic": "t", "partition": 0});
        assert!(validate_offsets(&[(p.clone(), Some(json!({"offset": 5})))]).is_ok());
        assert!(validate_offsets(&[(json!({"junk": 1}), None)]).is_ok());
        let e = validate_offsets(&[(
            json!({"topic": "t", "partition": 0}),
            Some(json!({"offset": 1})),
        )])
        .unwrap_err();
        assert_eq!(e, "Source partition {partition=0, topic=t} is missing the 'cluster' key, which is required");
        let e = validate_offsets(&[(
            json!({"cluster": "a", "topic": "t", "partition": "x"}),
            Some(json!({"offset": 1})),
        )])
        .unwrap_err();
        assert!(
            e.contains("invalid value x for the 'partition' key, which must be an integer"),
            "{e}"
        );
        let e = validate_offsets(&[(p.clone(), Some(json!({"position": 1})))]).unwrap_err();
        assert!(e.contains("is missing the 'offset' key"), "{e}");
        let e = validate_offsets(&[(p, Some(json!({"offset": "ten"})))]).unwrap_err();
        assert!(
            e.contains("invalid value ten for the 'offset' key, which must be an integer"),
            "{e}"
        );
    }

    #[test]
    fn tasks_share_partitions_stably() {
        let counts = (0..64).fold([0u32; 3], |mut acc, p| {
            acc[share("orders", p, 3) as usize] += 1;
            acc
        });
        assert!(counts.iter().all(|c| *c > 0), "{counts:?}");
        assert_eq!(share("orders", 7, 3), share("orders", 7, 3));
    }
}
