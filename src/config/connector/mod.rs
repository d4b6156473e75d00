//! The framework's own connector configuration (Kafka's `ConnectorConfig`,
//! `SinkConnectorConfig`, `SourceConnectorConfig`) and full connector validation, as
//! `AbstractHerder.validateConnectorConfig` performs it.
//!
//! A connector config mixes keys from several owners: the framework (`name`, `tasks.max`,
//! `errors.*`, …), the connector plugin, every transformation and predicate named in
//! `transforms`/`predicates` (under `transforms.<alias>.`), and the converters (under
//! `key.converter.` etc.). Kafka validates all of them in one pass and answers with one
//! `ConfigInfos`; create, update and patch refuse a config whose answer has errors. Tools
//! written against Kafka Connect read that answer, so the order of entries and groups and the
//! way errors are counted follow Kafka's code rather than anything tidier.

mod definition;
mod typed;
mod validate;

pub(crate) use super::keys;
pub use definition::connector_config_def;
pub use typed::{
    ConnectorConfig, ConnectorConfigError, ConverterRole, ErrorSettings, ToleranceType,
};
pub use validate::{
    distinct_errors, invalid_config_message, plugin_config_keys, validate_connector_config,
    PluginLookup,
};

pub use crate::model::ConnectorType;

/// Kafka's message for a key supplied as JSON `null`.
pub const NULL_VALUE_MESSAGE: &str = "Null value can not be supplied as the configuration value.";

#[cfg(test)]
mod tests;

/// Whether a sink connector config subscribes to `topic`, through `topics` or `topics.regex`.
pub fn subscribes(config: &std::collections::BTreeMap<String, String>, topic: &str) -> bool {
    let listed = config
        .get(crate::config::keys::TOPICS)
        .is_some_and(|t| t.split(',').any(|t| t.trim() == topic));
    let matched = config
        .get(crate::config::keys::TOPICS_REGEX)
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .and_then(|r| regex::Regex::new(&format!("^(?:{r})$")).ok())
        .is_some_and(|r| r.is_match(topic));
    listed || matched
}
