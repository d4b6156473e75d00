//! The MQTT connectors, with Confluent's class names and keys (MQTT 3.1.1 and 5, through rumqttc):
//!
//! - [`MqttSource`] (`io.confluent.connect.mqtt.MqttSourceConnector`): subscribes to MQTT topics and
//!   stores each message as a record; a message is acknowledged to the broker only once stored.
//! - [`MqttSink`] (`io.confluent.connect.mqtt.MqttSinkConnector`): publishes records to an MQTT topic;
//!   offsets are committed only for messages the broker acknowledged.
//!
//! Both carry bytes: their converters default to `ByteArrayConverter` (keys of the source: strings).

pub mod client;
pub mod repair;
pub mod sink;
pub mod source;

use std::collections::BTreeMap;

use super::{ConnectorPlugin, Props, SinkTask, SourceTask, TaskError};
use crate::config::def::{ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, Validator};
use crate::connectors::plugin_identity;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The connector keys.
pub mod keys {
    /// Brokers to connect to (a list; the next is tried when one fails).
    pub const SERVER_URI: &str = "mqtt.server.uri";
    /// Source: topic filters to subscribe to. Sink: the topic to publish to.
    pub const TOPICS: &str = "mqtt.topics";
    /// Source: the local topic records go to.
    pub const KAFKA_TOPIC: &str = "kafka.topic";
    /// 0, 1 or 2.
    pub const QOS: &str = "mqtt.qos";
    /// Source: whether the session is dropped on disconnect.
    pub const CLEAN_SESSION: &str = "mqtt.clean.session.enabled";
    /// The client id (default: from the connector name and the task number).
    pub const CLIENT_ID: &str = "mqtt.client.id";
    /// Seconds to wait for a connection.
    pub const CONNECT_TIMEOUT: &str = "mqtt.connect.timeout.seconds";
    /// Keep-alive interval in seconds.
    pub const KEEPALIVE: &str = "mqtt.keepalive.interval.seconds";
    /// User name (blank: none).
    pub const USERNAME: &str = "mqtt.username";
    /// Password.
    pub const PASSWORD: &str = "mqtt.password";
    /// PEM file of CA certificates.
    pub const TRUST_STORE: &str = "mqtt.ssl.trust.store.path";
    /// Accepted for compatibility; PEM files carry no password.
    pub const TRUST_STORE_PASSWORD: &str = "mqtt.ssl.trust.store.password";
    /// PEM file with the client certificate chain and its unencrypted key.
    pub const KEY_STORE: &str = "mqtt.ssl.key.store.path";
    /// Accepted for compatibility; PEM files carry no password.
    pub const KEY_STORE_PASSWORD: &str = "mqtt.ssl.key.store.password";
    /// Accepted for compatibility; the key must be unencrypted.
    pub const KEY_PASSWORD: &str = "mqtt.ssl.key.password";
    /// `3.1.1` (default) or `5`.
    pub const VERSION: &str = "mqtt.version";
    /// Sink: whether published messages are retained.
    pub const RETAINED: &str = "mqtt.retained.enabled";
    /// Set by the connector in each task config: the task's number.
    pub const TASK: &str = "mqtt.task.index";
}

/// The client id a task uses when `mqtt.client.id` is not set: the connector name and the task number,
/// the same across restarts (a persistent session is found again by it).
pub fn default_client_id(config: &Props) -> String {
    let name = config
        .get(crate::config::keys::NAME)
        .map(String::as_str)
        .unwrap_or("liteconnect");
    let task = config.get(keys::TASK).map(String::as_str).unwrap_or("0");
    format!("{name}-{task}")
}

/// Whether `filter` is a valid MQTT topic filter: `+` alone in a level, `#` alone in the last one.
pub fn valid_filter(filter: &str) -> bool {
    let levels: Vec<&str> = filter.split('/').collect();
    !filter.is_empty()
        && levels.iter().enumerate().all(|(i, l)| {
            (!l.contains('#') || (*l == "#" && i == levels.len() - 1))
                && (!l.contains('+') || *l == "+")
        })
}

fn present(config: &BTreeMap<String, Option<String>>) -> Props {
    config
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect()
}

/// A boolean key of low importance.
fn boolean(name: &'static str, default: &str, doc: &'static str) -> ConfigKey {
    ConfigKey::new(
        name,
        ConfigType::Boolean,
        DefaultValue::Value(default.into()),
        Importance::Low,
        doc,
    )
}

/// The keys both connectors share.
fn string(
    name: &'static str,
    default: &str,
    importance: Importance,
    doc: &'static str,
) -> ConfigKey {
    ConfigKey::new(
        name,
        ConfigType::String,
        DefaultValue::Value(default.into()),
        importance,
        doc,
    )
}

/// The credential and TLS keys.
fn security_keys(def: ConfigDef) -> ConfigDef {
    let password = |name, doc| {
        ConfigKey::new(
            name,
            ConfigType::Password,
            DefaultValue::Value(String::new()),
            Importance::High,
            doc,
        )
    };
    def.define(string(
        keys::USERNAME,
        "",
        Importance::High,
        "Username to connect with, or blank to connect without a username.",
    ))
    .define(password(
        keys::PASSWORD,
        "Password to connect with, or blank to connect without a password.",
    ))
    .define(string(
        keys::TRUST_STORE,
        "",
        Importance::High,
        "PEM file of the CA certificates that validate the broker's certificate (JKS is refused).",
    ))
    .define(password(
        keys::TRUST_STORE_PASSWORD,
        "Accepted and unused: PEM files have no password.",
    ))
    .define(string(
        keys::KEY_STORE,
        "",
        Importance::High,
        "PEM file with the client certificate chain and its unencrypted private key (JKS is refused).",
    ))
    .define(password(
        keys::KEY_STORE_PASSWORD,
        "Accepted and unused: PEM files have no password.",
    ))
    .define(password(
        keys::KEY_PASSWORD,
        "Accepted and unused: the private key must be unencrypted.",
    ))
}

fn connection_def() -> ConfigDef {
    let seconds = |name, default: &str, doc| {
        ConfigKey::new(
            name,
            ConfigType::Int,
            DefaultValue::Value(default.into()),
            Importance::Low,
            doc,
        )
        .validator(Validator::AtLeast(1.0))
    };
    security_keys(ConfigDef::new())
        .define(
            ConfigKey::new(
                keys::SERVER_URI,
                ConfigType::List,
                DefaultValue::Required,
                Importance::High,
                "List of MQTT brokers to connect to.",
            )
            .validator(Validator::NonEmptyList),
        )
        .define(
            ConfigKey::new(
                keys::QOS,
                ConfigType::Int,
                DefaultValue::Value("0".into()),
                Importance::Medium,
                "The MQTT QOS level to subscribe or publish with.",
            )
            .validator(Validator::Between(0.0, 2.0)),
        )
        .define(boolean(
            keys::CLEAN_SESSION,
            "true",
            "Sets whether the client and server should remember state across restarts and reconnects.",
        ))
        .define(string(
            keys::CLIENT_ID,
            "",
            Importance::Low,
            "The client id; blank: the connector name and the task number.",
        ))
        .define(seconds(
            keys::CONNECT_TIMEOUT,
            "30",
            "Sets the connection timeout value.",
        ))
        .define(seconds(
            keys::KEEPALIVE,
            "60",
            "Sets the \"keep alive\" interval.",
        ))
        .define(
            string(
                keys::VERSION,
                "3.1.1",
                Importance::Low,
                "The MQTT protocol version: 3.1.1 or 5.",
            )
            .validator(Validator::OneOf(vec!["3.1.1", "5"])),
        )
}

/// Checks the shared keys and the topic filters (`wildcards`: whether `+` and `#` are allowed).
fn validate_common(
    config: &BTreeMap<String, Option<String>>,
    wildcards: bool,
) -> Vec<(String, String)> {
    let props = present(config);
    let mut errors = Vec::new();
    if props.contains_key(keys::SERVER_URI) {
        if let Err(e) = client::settings(&props) {
            errors.push(e);
        }
    }
    for topic in client::list(&props, keys::TOPICS) {
        let bad = if wildcards {
            (!valid_filter(&topic)).then(|| format!("'{topic}' is not a valid MQTT topic filter: '+' must fill a whole level and '#' must be the whole last level"))
        } else {
            (topic.contains('+') || topic.contains('#'))
                .then(|| format!("'{topic}' contains a wildcard; the sink publishes to one topic"))
        };
        if let Some(message) = bad {
            errors.push((keys::TOPICS.to_string(), message));
        }
    }
    errors
}

/// `io.confluent.connect.mqtt.MqttSourceConnector` (alias `MqttSource`).
#[derive(Debug)]
pub struct MqttSource;

impl ConnectorPlugin for MqttSource {
    plugin_identity!(
        "io.confluent.connect.mqtt.MqttSourceConnector",
        Source,
        VERSION,
        "io.confluent.connect.mqtt.MqttSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        connection_def()
            .define(
                ConfigKey::new(
                    keys::TOPICS,
                    ConfigType::List,
                    DefaultValue::Required,
                    Importance::High,
                    "The MQTT topics to subscribe to (+ and # wildcards allowed).",
                )
                .validator(Validator::NonEmptyList),
            )
            .define(
                ConfigKey::new(
                    keys::KAFKA_TOPIC,
                    ConfigType::String,
                    DefaultValue::Required,
                    Importance::High,
                    "The Kafka topic to write the data to.",
                )
                .validator(Validator::NonEmptyString),
            )
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        validate_common(config, true)
    }
    fn default_converter(&self, key: &str) -> Option<&'static str> {
        match key {
            crate::config::keys::KEY_CONVERTER => {
                Some("org.apache.kafka.connect.storage.StringConverter")
            }
            crate::config::keys::VALUE_CONVERTER => {
                Some("org.apache.kafka.connect.converters.ByteArrayConverter")
            }
            _ => None,
        }
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        // The topics are spread over the tasks, as the original does; each task has its own client id.
        let topics = client::list(config, keys::TOPICS);
        let count = max_tasks.max(1).min(topics.len().max(1));
        Ok((0..count)
            .map(|i| {
                let mut c = config.clone();
                let share: Vec<&str> = topics
                    .iter()
                    .skip(i)
                    .step_by(count)
                    .map(String::as_str)
                    .collect();
                c.insert(keys::TOPICS.into(), share.join(","));
                c.insert(keys::TASK.into(), i.to_string());
                c
            })
            .collect())
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(source::MqttSourceTask::default()))
    }
}

/// `io.confluent.connect.mqtt.MqttSinkConnector` (alias `MqttSink`).
#[derive(Debug)]
pub struct MqttSink;

impl ConnectorPlugin for MqttSink {
    plugin_identity!(
        "io.confluent.connect.mqtt.MqttSinkConnector",
        Sink,
        VERSION,
        "io.confluent.connect.mqtt.MqttSinkTask"
    );
    fn config_def(&self) -> ConfigDef {
        connection_def()
            .define(ConfigKey::new(
                keys::TOPICS,
                ConfigType::String,
                DefaultValue::Value(String::new()),
                Importance::High,
                "The MQTT topic to publish to; blank: the record's topic.",
            ))
            .define(boolean(
                keys::RETAINED,
                "false",
                "Whether the broker retains the published messages.",
            ))
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        validate_common(config, false)
    }
    fn default_converter(&self, key: &str) -> Option<&'static str> {
        match key {
            crate::config::keys::KEY_CONVERTER
            | crate::config::keys::VALUE_CONVERTER
            | crate::config::keys::HEADER_CONVERTER => {
                Some("org.apache.kafka.connect.converters.ByteArrayConverter")
            }
            _ => None,
        }
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        Ok((0..max_tasks.max(1))
            .map(|i| {
                let mut c = config.clone();
                c.insert(keys::TASK.into(), i.to_string());
                c
            })
            .collect())
    }
    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        Some(Box::new(sink::MqttSinkTask::default()))
    }
    // Its offsets are the local log's positions, which the worker keeps.
    fn acknowledges_offsets(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_filters_allow_wildcards_only_as_whole_levels() {
        for ok in ["a/b", "a/+/c", "#", "a/#", "+", "+/+"] {
            assert!(valid_filter(ok), "{ok}");
        }
        for bad in ["", "a/#/c", "a#", "a/b+", "a/+b/c"] {
            assert!(!valid_filter(bad), "{bad}");
        }
    }

    #[test]
    fn source_topics_are_spread_over_tasks_with_stable_client_ids() {
        let mut config = Props::new();
        config.insert("name".into(), "m".into());
        config.insert(keys::TOPICS.into(), "a,b,c".into());
        let tasks = MqttSource.task_configs(&config, 2).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0][keys::TOPICS], "a,c");
        assert_eq!(tasks[1][keys::TOPICS], "b");
        assert_eq!(default_client_id(&tasks[1]), "m-1");
        assert_eq!(MqttSource.task_configs(&config, 9).unwrap().len(), 3);
    }
}
