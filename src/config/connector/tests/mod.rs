use std::collections::BTreeMap;

use super::*;
use crate::config::def::ConfigValueInfo;
use crate::config::def::*;
use crate::connectors::file::{FileStreamSink, FileStreamSource};
use crate::connectors::ConnectorPlugin;
use crate::transforms::routers::RegexRouter;

const REGEX_ROUTER: &str = "org.apache.kafka.connect.transforms.RegexRouter";
const FILTER: &str = "org.apache.kafka.connect.transforms.Filter";
const TOPIC_NAME_MATCHES: &str = "org.apache.kafka.connect.transforms.predicates.TopicNameMatches";
const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";

/// A few plugins shaped like Kafka's own; RegexRouter, the converters' `converter.type` and
/// the file connectors are the real definitions.
struct Plugins;

impl Plugins {
    fn full(class: &str) -> String {
        match class {
            "RegexRouter" => REGEX_ROUTER.to_owned(),
            "Filter" => FILTER.to_owned(),
            "TopicNameMatches" => TOPIC_NAME_MATCHES.to_owned(),
            "JsonConverter" => JSON_CONVERTER.to_owned(),
            other => other.to_owned(),
        }
    }
}

impl PluginLookup for Plugins {
    fn transformation_def(&self, class: &str) -> Option<ConfigDef> {
        match Plugins::full(class).as_str() {
            REGEX_ROUTER => Some(RegexRouter::config_def()),
            FILTER => Some(ConfigDef::new()),
            _ => None,
        }
    }
    fn predicate_def(&self, class: &str) -> Option<ConfigDef> {
        (Plugins::full(class) == TOPIC_NAME_MATCHES).then(|| {
            ConfigDef::new().define(
                ConfigKey::new(
                    "pattern",
                    ConfigType::String,
                    DefaultValue::Required,
                    Importance::Medium,
                    "A Java regular expression.",
                )
                .validator(Validator::All(vec![
                    Validator::NonEmptyString,
                    Validator::Regex,
                ])),
            )
        })
    }
    fn transformation_classes(&self) -> Vec<String> {
        vec![FILTER.to_owned(), REGEX_ROUTER.to_owned()]
    }
    fn predicate_classes(&self) -> Vec<String> {
        vec![TOPIC_NAME_MATCHES.to_owned()]
    }
    fn converter_def(&self, class: &str) -> Option<ConfigDef> {
        (Plugins::full(class) == JSON_CONVERTER).then(|| {
            crate::converters::defs::converter()
                .define(
                    key(
                        "schemas.enable",
                        ConfigType::Boolean,
                        Some("true"),
                        Importance::High,
                        "Include schemas.",
                    )
                    .group("Schemas", 0),
                )
                .define(
                    key(
                        "schemas.cache.size",
                        ConfigType::Int,
                        Some("1000"),
                        Importance::High,
                        "Cache size.",
                    )
                    .validator(Validator::AtLeast(0.0))
                    .group("Schemas", 1),
                )
        })
    }
    fn header_converter_def(&self, class: &str) -> Option<ConfigDef> {
        self.converter_def(class)
    }
    fn class_name(&self, class: &str) -> String {
        Plugins::full(class)
    }
}

fn file_sink_def() -> ConfigDef {
    FileStreamSink.config_def()
}

fn file_source_def() -> ConfigDef {
    FileStreamSource.config_def()
}

fn config(list: &[(&str, Option<&str>)]) -> BTreeMap<String, Option<String>> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
        .collect()
}

/// The framework's groups of a sink connector config, in order.
const SINK_GROUPS: [&str; 4] = ["Common", "Transforms", "Predicates", "Error Handling"];

/// The framework's groups of a source connector config, in order.
const SOURCE_GROUPS: [&str; 7] = [
    "Common",
    "Transforms",
    "Predicates",
    "Error Handling",
    "Topic Creation",
    "Exactly Once Support",
    "offsets.topic",
];

fn validate_sink(list: &[(&str, Option<&str>)]) -> ConfigInfos {
    validate_connector_config(
        "FileStreamSink",
        ConnectorType::Sink,
        &file_sink_def(),
        Vec::new(),
        &config(list),
        &Plugins,
    )
}

/// [`validate_sink`] of a FileStreamSink named `s` reading the topic `t`, with `extra` keys.
fn validate_file_sink(extra: &[(&str, Option<&str>)]) -> ConfigInfos {
    let mut list = vec![
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("topics", Some("t")),
    ];
    list.extend_from_slice(extra);
    validate_sink(&list)
}

fn validate_source(list: &[(&str, Option<&str>)]) -> ConfigInfos {
    validate_connector_config(
        "FileStreamSource",
        ConnectorType::Source,
        &file_source_def(),
        Vec::new(),
        &config(list),
        &Plugins,
    )
}

fn entry<'a>(infos: &'a ConfigInfos, name: &str) -> &'a ConfigInfo {
    infos
        .entry(name)
        .unwrap_or_else(|| panic!("no entry {name}"))
}

fn errors(infos: &ConfigInfos, name: &str) -> Vec<String> {
    entry(infos, name).value.errors.clone()
}

fn names(infos: &ConfigInfos) -> Vec<&str> {
    infos
        .configs
        .iter()
        .map(|c| c.value.name.as_str())
        .collect()
}

#[test]
fn base_definition_order_groups_and_display_names() {
    let sink = connector_config_def(ConnectorType::Sink);
    let names: Vec<&str> = sink.keys().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "name",
            "connector.class",
            "tasks.max",
            "tasks.max.enforce",
            "key.converter",
            "value.converter",
            "header.converter",
            "transforms",
            "predicates",
            "config.action.reload",
            "errors.retry.timeout",
            "errors.retry.delay.max.ms",
            "errors.tolerance",
            "errors.log.enable",
            "errors.log.include.messages",
            "topics",
            "topics.regex",
            "errors.deadletterqueue.topic.name",
            "errors.deadletterqueue.topic.replication.factor",
            "errors.deadletterqueue.context.headers.enable",
        ]
    );
    let display: Vec<&str> = sink.keys()[..15]
        .iter()
        .map(|k| k.display_name.as_str())
        .collect();
    assert_eq!(
        display,
        vec![
            "Connector name",
            "Connector class",
            "Tasks max",
            "Enforce tasks max",
            "Key converter class",
            "Value converter class",
            "Header converter class",
            "Transforms",
            "Predicates",
            "Reload Action",
            "Retry Timeout for Errors",
            "Maximum Delay Between Retries for Errors",
            "Error Tolerance",
            "Log Errors",
            "Log Error Details",
        ]
    );
    let orders: Vec<i32> = sink.keys().iter().map(|k| k.order_in_group).collect();
    assert_eq!(
        orders,
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 4, 4, 6, 7, 8]
    );
    assert_eq!(sink.groups(), SINK_GROUPS);

    let source = connector_config_def(ConnectorType::Source);
    let extra: Vec<&str> = source.keys()[15..]
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(
        extra,
        vec![
            "topic.creation.groups",
            "exactly.once.support",
            "transaction.boundary",
            "transaction.boundary.interval.ms",
            "offsets.storage.topic",
        ]
    );
    assert_eq!(source.groups(), SOURCE_GROUPS);
    assert_eq!(ConnectorType::Source.as_str(), "source");
    assert_eq!(ConnectorType::Sink.as_str(), "sink");
}

mod typed;
mod validate;
