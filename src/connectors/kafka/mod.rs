//! The bridge to real Kafka clusters, with librdkafka (compiled in):
//!
//! - [`KafkaSink`] (`liteconnect.kafka.KafkaSinkConnector`): ships local topics to a Kafka cluster,
//!   store-and-forward through outages (the local log is the buffer).
//! - [`MirrorSource`] (`org.apache.kafka.connect.mirror.MirrorSourceConnector`): mirrors a Kafka cluster's
//!   topics into the local log, with MirrorMaker 2's keys and offsets.
//!
//! Both carry bytes as they are: their converters default to `ByteArrayConverter`.

pub mod client;
pub(crate) mod mirror;
pub(crate) mod schema_ids;
pub(crate) mod security;
pub mod sink;

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{ConnectorPlugin, Props, SinkTask, SourceTask, TaskError};
use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, KeyRow, Validator,
};
use crate::connectors::plugin_identity;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const BYTE_ARRAY_CONVERTER: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

/// The Kafka sink's target cluster.
pub const BOOTSTRAP: &str = "bootstrap.servers";
/// The Kafka topic a local topic is shipped to; `${topic}` is the local topic's name.
pub const TOPIC_FORMAT: &str = "topic.format";
/// `keep` (the local partition number) or `key` (librdkafka's partitioner on the key).
pub const PARTITIONING: &str = "kafka.partitioning";

/// MM2: the source cluster's alias.
pub const SOURCE_ALIAS: &str = "source.cluster.alias";
/// MM2: the target cluster's alias (here: this worker's log).
pub const TARGET_ALIAS: &str = "target.cluster.alias";
/// MM2: the source cluster's bootstrap servers.
pub const SOURCE_BOOTSTRAP: &str = "source.cluster.bootstrap.servers";
/// MM2: topics to mirror (comma-separated regexes).
pub const TOPICS: &str = "topics";
/// MM2: topics not to mirror.
pub const TOPICS_EXCLUDE: &str = "topics.exclude";
/// MM2: how remote topics are named.
pub const POLICY_CLASS: &str = "replication.policy.class";
/// MM2: the separator of `DefaultReplicationPolicy`.
pub const POLICY_SEPARATOR: &str = "replication.policy.separator";
/// MM2: how often new source topics and partitions are looked for.
pub const REFRESH_TOPICS: &str = "refresh.topics.interval.seconds";
/// MM2: how long a poll of the source consumer waits.
pub const POLL_TIMEOUT: &str = "consumer.poll.timeout.ms";
/// Set by the connector in each task config: the task's index.
pub const TASK_INDEX: &str = "task.index";
/// Set by the connector in each task config: how many tasks share the partitions.
pub const TASK_COUNT: &str = "task.count";

/// The keys that have values.
fn present(config: &BTreeMap<String, Option<String>>) -> Props {
    config
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect()
}

/// A validation error for a client setting refused by [`client::check_settings`], reported on the
/// connector key it came from: the first of `prefixes` (highest precedence first) under which it is set.
fn client_setting_errors(
    config: &Props,
    checked: Result<(), security::SecurityError>,
    prefixes: &[&str],
) -> Vec<(String, String)> {
    let Err(e) = checked else {
        return Vec::new();
    };
    let key = prefixes
        .iter()
        .map(|p| format!("{p}{}", e.key))
        .find(|k| config.contains_key(k))
        .unwrap_or(e.key);
    vec![(key, e.message)]
}

fn byte_array_converters(key: &str) -> Option<&'static str> {
    match key {
        crate::config::keys::KEY_CONVERTER
        | crate::config::keys::VALUE_CONVERTER
        | crate::config::keys::HEADER_CONVERTER => Some(BYTE_ARRAY_CONVERTER),
        _ => None,
    }
}

/// `liteconnect.kafka.KafkaSinkConnector` (alias `KafkaSink`).
#[derive(Debug)]
pub struct KafkaSink;

impl ConnectorPlugin for KafkaSink {
    plugin_identity!(
        "liteconnect.kafka.KafkaSinkConnector",
        Sink,
        VERSION,
        "liteconnect.kafka.KafkaSinkTask"
    );
    fn config_def(&self) -> ConfigDef {
        let validators = [
            Validator::NonEmptyString,
            Validator::NonEmptyString,
            Validator::OneOf(vec!["keep", "key"]),
        ];
        let keys = SINK_KEYS.iter().zip(validators);
        keys.fold(ConfigDef::new(), |def, (row, validator)| {
            def.define(ConfigKey::from_row(row).validator(validator))
        })
        .define_rows(&registry_keys::DESTINATION)
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let props = present(config);
        let checked = client::check_settings("producer", client::producer_settings(&props));
        let mut errors = client_setting_errors(&props, checked, &["producer.override.", ""]);
        errors.extend(registry_errors(&props, schema_ids::DESTINATION_PREFIX));
        errors
    }
    fn default_converter(&self, key: &str) -> Option<&'static str> {
        byte_array_converters(key)
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        Ok(vec![config.clone(); max_tasks.max(1)])
    }
    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        Some(Box::new(sink::KafkaSinkTask::default()))
    }
    // Its offsets are the local log's positions, which the worker keeps: nothing else to change.
    fn acknowledges_offsets(&self) -> bool {
        true
    }
}

/// A refused `<prefix>url` or `<prefix>basic.auth.*` setting, on the URL's key.
fn registry_errors(config: &Props, prefix: &str) -> Vec<(String, String)> {
    match schema_ids::other_registry(config, prefix) {
        Ok(_) => Vec::new(),
        Err(e) => vec![(format!("{prefix}url"), e)],
    }
}

/// The keys of the registry whose schema IDs a connector translates to or from its own registry's.
mod registry_keys {
    use crate::config::def::{ConfigType, Importance, KeyRow};

    /// The Kafka sink's destination registry.
    #[rustfmt::skip]
    pub(super) const DESTINATION: [KeyRow; 3] = [
        ("destination.schema.registry.url", ConfigType::String, Some(""), Importance::Medium, "The Schema Registry of the destination cluster. When set, a key or value in Confluent's wire format whose schema ID the local registry has is shipped with the ID the destination registry gives its schema (registered there under the same subject, once)"),
        ("destination.schema.registry.basic.auth.credentials.source", ConfigType::String, Some("URL"), Importance::Low, "Where the destination registry's credentials come from: URL (user:password@ in the URL) or USER_INFO"),
        ("destination.schema.registry.basic.auth.user.info", ConfigType::Password, Some(""), Importance::Low, "user:password for the destination registry, with basic.auth.credentials.source=USER_INFO"),
    ];

    /// The mirror source's source registry.
    #[rustfmt::skip]
    pub(super) const SOURCE: [KeyRow; 3] = [
        ("source.schema.registry.url", ConfigType::String, Some(""), Importance::Medium, "The Schema Registry of the source cluster. When set, a key or value in Confluent's wire format whose schema ID that registry has is stored with the ID this worker's registry gives its schema (registered here under the same subject, once)"),
        ("source.schema.registry.basic.auth.credentials.source", ConfigType::String, Some("URL"), Importance::Low, "Where the source registry's credentials come from: URL (user:password@ in the URL) or USER_INFO"),
        ("source.schema.registry.basic.auth.user.info", ConfigType::Password, Some(""), Importance::Low, "user:password for the source registry, with basic.auth.credentials.source=USER_INFO"),
    ];
}

/// The KafkaSink keys, each with a validator.
#[rustfmt::skip]
const SINK_KEYS: [KeyRow; 3] = [
    (BOOTSTRAP, ConfigType::String, None, Importance::High, "The Kafka cluster to ship records to (host:port, comma-separated)"),
    (TOPIC_FORMAT, ConfigType::String, Some("${topic}"), Importance::Medium, "The Kafka topic for a local topic; ${topic} is replaced with the local topic's name"),
    (PARTITIONING, ConfigType::String, Some("keep"), Importance::Low, "keep: a record goes to the Kafka partition with its local partition number (per-partition order kept); key: librdkafka's partitioner chooses by key"),
];

/// The MirrorSourceConnector keys after the cluster aliases and bootstrap servers.
#[rustfmt::skip]
const MIRROR_KEYS: &[KeyRow] = &[
    (TOPICS, ConfigType::List, Some(".*"), Importance::High, "Topics to replicate. Supports comma-separated topic names and regexes."),
    (TOPICS_EXCLUDE, ConfigType::List, Some(mirror::DEFAULT_EXCLUDE), Importance::High, "Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence over includes."),
    (POLICY_CLASS, ConfigType::Class, Some(mirror::DEFAULT_POLICY), Importance::Low, "Class which defines the remote topic naming convention."),
    (POLICY_SEPARATOR, ConfigType::String, Some("."), Importance::Low, "Separator used in remote topic naming convention."),
    (REFRESH_TOPICS, ConfigType::Long, Some("600"), Importance::Low, "Frequency of topic refresh."),
    (POLL_TIMEOUT, ConfigType::Long, Some("1000"), Importance::Low, "Timeout when polling source cluster."),
];

/// `org.apache.kafka.connect.mirror.MirrorSourceConnector`.
#[derive(Debug)]
pub struct MirrorSource;

impl ConnectorPlugin for MirrorSource {
    plugin_identity!(
        "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        Source,
        VERSION,
        "org.apache.kafka.connect.mirror.MirrorSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        let string = |name: &'static str, default: DefaultValue, doc: &'static str| {
            ConfigKey::new(name, ConfigType::String, default, Importance::High, doc)
        };
        ConfigDef::new()
            .define(
                string(
                    SOURCE_ALIAS,
                    DefaultValue::Required,
                    "Alias of source cluster",
                )
                .validator(Validator::NonEmptyString),
            )
            .define(string(
                TARGET_ALIAS,
                DefaultValue::Value("target".into()),
                "Alias of target cluster. Used in metrics reporting.",
            ))
            .define(
                string(
                    SOURCE_BOOTSTRAP,
                    DefaultValue::Required,
                    "The source cluster's bootstrap servers",
                )
                .validator(Validator::NonEmptyString),
            )
            .define_rows(MIRROR_KEYS)
            .define_rows(&registry_keys::SOURCE)
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let props = present(config);
        let checked = client::check_settings("consumer", client::mirror_consumer_settings(&props));
        let mut errors = client_setting_errors(
            &props,
            checked,
            &["source.consumer.", "consumer.", "source.cluster."],
        );
        errors.extend(registry_errors(&props, schema_ids::SOURCE_PREFIX));
        if let Err(e) = mirror::ReplicationPolicy::from_config(&props) {
            errors.push((POLICY_CLASS.to_string(), e));
        }
        for key in [TOPICS, TOPICS_EXCLUDE] {
            if let Some(list) = props.get(key) {
                if let Err(e) = mirror::patterns(list) {
                    errors.push((key.to_string(), e));
                }
            }
        }
        errors
    }
    fn default_converter(&self, key: &str) -> Option<&'static str> {
        byte_array_converters(key)
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        let count = max_tasks.max(1);
        Ok((0..count)
            .map(|i| {
                let mut c = config.clone();
                c.insert(TASK_INDEX.into(), i.to_string());
                c.insert(TASK_COUNT.into(), count.to_string());
                c
            })
            .collect())
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(mirror::MirrorSourceTask::default()))
    }
    fn alter_offsets(
        &self,
        _config: &Props,
        offsets: &[(Json, Option<Json>)],
    ) -> Result<bool, String> {
        // MM2 never commits offsets with its source consumer, so checking the format is all there is to do.
        mirror::validate_offsets(offsets)?;
        Ok(true)
    }
}
