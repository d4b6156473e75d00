//! The framework's connector settings as typed values, parsed with the connector config's own
//! definition ([`connector_config_def`]), so defaults and types live in one place.
//!
//! Two ways in: [`ConnectorConfig::parse`] is strict (every key must be valid, as a stored config
//! is after validation), [`ConnectorConfig::lenient`] gives each invalid or missing key its default,
//! which is what the runtime does with a task config that carries only some of the keys.

use std::collections::BTreeMap;

use super::definition::connector_config_def;
use super::{keys, ConnectorType};
use crate::config::def::{ConfigDef, ConfigValue, ValidatedValue};

/// `errors.tolerance`: what a failing record does to its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ToleranceType {
    /// `none`: the first failure fails the task.
    #[default]
    None,
    /// `all`: failing records are skipped.
    All,
}

/// Which converter a `*.converter` key configures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConverterRole {
    /// `key.converter`.
    Key,
    /// `value.converter`.
    Value,
    /// `header.converter`.
    Header,
}

impl ConverterRole {
    /// Every role, in Kafka's key, value, header order.
    pub const ALL: [ConverterRole; 3] = [
        ConverterRole::Key,
        ConverterRole::Value,
        ConverterRole::Header,
    ];

    /// The config key naming the class (`key.converter`, …).
    pub fn key(self) -> &'static str {
        match self {
            ConverterRole::Key => keys::KEY_CONVERTER,
            ConverterRole::Value => keys::VALUE_CONVERTER,
            ConverterRole::Header => keys::HEADER_CONVERTER,
        }
    }

    /// The role for a config key, when it is one of the three.
    pub fn from_key(key: &str) -> Option<ConverterRole> {
        ConverterRole::ALL.into_iter().find(|r| r.key() == key)
    }

    /// Kafka's `converter.type` value (`key`, `value`, `header`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConverterRole::Key => "key",
            ConverterRole::Value => "value",
            ConverterRole::Header => "header",
        }
    }
}

/// The `errors.*` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorSettings {
    /// `errors.retry.timeout` in milliseconds (0: no retries, -1: forever).
    pub retry_timeout_ms: i64,
    /// `errors.retry.delay.max.ms`.
    pub retry_delay_max_ms: i64,
    /// `errors.tolerance`.
    pub tolerance: ToleranceType,
    /// `errors.log.enable`.
    pub log_enable: bool,
    /// `errors.log.include.messages`.
    pub log_include_messages: bool,
    /// `errors.deadletterqueue.topic.name` (sinks only; `None` when blank).
    pub dlq_topic: Option<String>,
    /// `errors.deadletterqueue.topic.replication.factor` (sinks only).
    pub dlq_replication_factor: i16,
    /// `errors.deadletterqueue.context.headers.enable` (sinks only).
    pub dlq_context_headers: bool,
}

/// The framework's connector settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectorConfig {
    /// `name`.
    pub name: String,
    /// `connector.class`, as given (a full name or an alias).
    pub class: String,
    /// `tasks.max`.
    pub tasks_max: usize,
    /// `tasks.max.enforce`.
    pub tasks_max_enforce: bool,
    /// `topics` (sinks; empty for sources).
    pub topics: Vec<String>,
    /// `topics.regex` (sinks; `None` when blank).
    pub topics_regex: Option<String>,
    /// The `errors.*` settings.
    pub errors: ErrorSettings,
    /// The converters the connector sets itself; a role not here falls back to the worker's.
    pub converters: BTreeMap<ConverterRole, String>,
    /// `transforms` aliases, in order.
    pub transforms: Vec<String>,
    /// `predicates` aliases, in order.
    pub predicates: Vec<String>,
}

/// A connector config that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid connector configuration: {}", .0.join("; "))]
pub struct ConnectorConfigError(pub Vec<String>);

/// Typed values of one definition, by key.
struct Values(BTreeMap<String, ConfigValue>);

impl Values {
    /// Validates `props` against `def`. Strict: any error fails; lenient: a key in error takes its
    /// default (or null when it has none).
    fn of(
        def: &ConfigDef,
        props: &BTreeMap<String, String>,
        strict: bool,
    ) -> Result<Values, ConnectorConfigError> {
        let raw: BTreeMap<String, Option<String>> = props
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        let validated: Vec<ValidatedValue> = def.validate_values(&raw, &|_, c| Some(c.to_owned()));
        let mut errors = Vec::new();
        let mut values = BTreeMap::new();
        for v in validated {
            let value = if v.errors.is_empty() {
                v.value
            } else {
                errors.extend(v.errors);
                def.get(&v.name)
                    .and_then(|k| k.default_value())
                    .unwrap_or(ConfigValue::Null)
            };
            values.insert(v.name, value);
        }
        if strict && !errors.is_empty() {
            return Err(ConnectorConfigError(errors));
        }
        Ok(Values(values))
    }

    fn string(&self, key: &str) -> Option<String> {
        match self.0.get(key) {
            Some(ConfigValue::String(s) | ConfigValue::Class(s) | ConfigValue::Password(s)) => {
                Some(s.clone()).filter(|s| !s.is_empty())
            }
            _ => None,
        }
    }

    fn int(&self, key: &str) -> Option<i64> {
        match self.0.get(key) {
            Some(ConfigValue::Int(n)) => Some(i64::from(*n)),
            Some(ConfigValue::Short(n)) => Some(i64::from(*n)),
            Some(ConfigValue::Long(n)) => Some(*n),
            _ => None,
        }
    }

    fn bool(&self, key: &str) -> bool {
        matches!(self.0.get(key), Some(ConfigValue::Boolean(true)))
    }

    fn list(&self, key: &str) -> Vec<String> {
        match self.0.get(key) {
            Some(ConfigValue::List(items)) => items.clone(),
            _ => Vec::new(),
        }
    }
}

impl ErrorSettings {
    fn from_values(values: &Values, kind: ConnectorType) -> ErrorSettings {
        let sink = kind == ConnectorType::Sink;
        let tolerance = match values.string(keys::ERRORS_TOLERANCE) {
            Some(t) if t.eq_ignore_ascii_case("all") => ToleranceType::All,
            _ => ToleranceType::None,
        };
        ErrorSettings {
            retry_timeout_ms: values.int(keys::ERRORS_RETRY_TIMEOUT).unwrap_or(0),
            retry_delay_max_ms: values
                .int(keys::ERRORS_RETRY_DELAY_MAX_MS)
                .unwrap_or(60_000),
            tolerance,
            log_enable: values.bool(keys::ERRORS_LOG_ENABLE),
            log_include_messages: values.bool(keys::ERRORS_LOG_INCLUDE_MESSAGES),
            dlq_topic: values.string(keys::DLQ_TOPIC_NAME).filter(|_| sink),
            dlq_replication_factor: values
                .int(keys::DLQ_TOPIC_REPLICATION_FACTOR)
                .and_then(|n| i16::try_from(n).ok())
                .unwrap_or(3),
            dlq_context_headers: sink && values.bool(keys::DLQ_CONTEXT_HEADERS_ENABLE),
        }
    }

    /// The `errors.*` settings of a connector or task config; invalid or missing keys take their
    /// defaults. The dead letter queue settings apply to sinks only.
    pub fn lenient(props: &BTreeMap<String, String>, kind: ConnectorType) -> ErrorSettings {
        let def = connector_config_def(kind);
        let values = Values::of(&def, props, false).unwrap_or(Values(BTreeMap::new()));
        ErrorSettings::from_values(&values, kind)
    }
}

impl ConnectorConfig {
    fn from_values(values: &Values, kind: ConnectorType) -> ConnectorConfig {
        let converters = ConverterRole::ALL
            .into_iter()
            .filter_map(|role| values.string(role.key()).map(|class| (role, class)))
            .collect();
        let sink = kind == ConnectorType::Sink;
        ConnectorConfig {
            name: values.string(keys::NAME).unwrap_or_default(),
            class: values.string(keys::CONNECTOR_CLASS).unwrap_or_default(),
            tasks_max: values
                .int(keys::TASKS_MAX)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(1),
            tasks_max_enforce: !matches!(
                values.0.get(keys::TASKS_MAX_ENFORCE),
                Some(ConfigValue::Boolean(false))
            ),
            topics: if sink {
                values.list(keys::TOPICS)
            } else {
                Vec::new()
            },
            topics_regex: values.string(keys::TOPICS_REGEX).filter(|_| sink),
            errors: ErrorSettings::from_values(values, kind),
            converters,
            transforms: values.list(keys::TRANSFORMS),
            predicates: values.list(keys::PREDICATES),
        }
    }

    /// Parses a connector config with the framework's definition for `kind`.
    ///
    /// # Errors
    /// Every message Kafka's parsing and validators give for the framework's keys.
    pub fn parse(
        props: &BTreeMap<String, String>,
        kind: ConnectorType,
    ) -> Result<ConnectorConfig, ConnectorConfigError> {
        let def = connector_config_def(kind);
        Ok(ConnectorConfig::from_values(
            &Values::of(&def, props, true)?,
            kind,
        ))
    }

    /// Like [`ConnectorConfig::parse`], but a key that is missing or invalid takes its default
    /// (`tasks.max` 1, tolerance `none`, …), as the runtime has always treated stored configs.
    pub fn lenient(props: &BTreeMap<String, String>, kind: ConnectorType) -> ConnectorConfig {
        let def = connector_config_def(kind);
        let values = Values::of(&def, props, false).unwrap_or(Values(BTreeMap::new()));
        ConnectorConfig::from_values(&values, kind)
    }

    /// The converter class the connector sets for `role`, if any.
    pub fn converter(&self, role: ConverterRole) -> Option<&str> {
        self.converters.get(&role).map(String::as_str)
    }
}
