use std::collections::BTreeMap;

use super::super::{
    distinct_errors, ConnectorConfig, ConnectorType, ConverterRole, ErrorSettings, ToleranceType,
};
use super::validate_sink;

fn props(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn parses_a_sink_config_with_its_definition() {
    let c = ConnectorConfig::parse(
        &props(&[
            ("name", "s"),
            ("connector.class", "FileStreamSink"),
            ("tasks.max", " 3 "),
            ("tasks.max.enforce", "FALSE"),
            ("topics", "a, b"),
            ("errors.tolerance", "all"),
            ("errors.log.enable", "true"),
            ("errors.retry.timeout", "-1"),
            ("errors.deadletterqueue.topic.name", " dlq "),
            ("errors.deadletterqueue.context.headers.enable", "true"),
            ("value.converter", "StringConverter"),
            ("transforms", "x,y"),
        ]),
        ConnectorType::Sink,
    )
    .unwrap();
    assert_eq!(c.name, "s");
    assert_eq!(c.class, "FileStreamSink");
    assert_eq!(c.tasks_max, 3);
    assert!(!c.tasks_max_enforce);
    assert_eq!(c.topics, vec!["a", "b"]);
    assert_eq!(c.topics_regex, None);
    assert_eq!(c.errors.tolerance, ToleranceType::All);
    assert!(c.errors.log_enable);
    assert!(!c.errors.log_include_messages);
    assert_eq!(c.errors.retry_timeout_ms, -1);
    assert_eq!(c.errors.retry_delay_max_ms, 60_000);
    assert_eq!(c.errors.dlq_topic.as_deref(), Some("dlq"));
    assert_eq!(c.errors.dlq_replication_factor, 3);
    assert!(c.errors.dlq_context_headers);
    assert_eq!(c.converter(ConverterRole::Value), Some("StringConverter"));
    assert_eq!(c.converter(ConverterRole::Key), None);
    assert_eq!(c.transforms, vec!["x", "y"]);
    assert!(c.predicates.is_empty());
}

#[test]
fn strict_parse_reports_kafka_messages_and_lenient_takes_defaults() {
    let bad = props(&[
        ("name", "s"),
        ("connector.class", "FileStreamSource"),
        ("tasks.max", "abc"),
        ("errors.tolerance", "some"),
    ]);
    let e = ConnectorConfig::parse(&bad, ConnectorType::Source).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("Invalid value abc for configuration tasks.max: Not a number of type INT"),
        "{text}"
    );
    assert!(text.contains("errors.tolerance"), "{text}");
    let lenient = ConnectorConfig::lenient(&bad, ConnectorType::Source);
    assert_eq!(lenient.tasks_max, 1);
    assert!(lenient.tasks_max_enforce);
    assert_eq!(lenient.errors.tolerance, ToleranceType::None);
}

#[test]
fn dead_letter_queue_settings_apply_to_sinks_only() {
    let task = props(&[
        ("errors.tolerance", "all"),
        ("errors.deadletterqueue.topic.name", "dlq"),
        ("errors.deadletterqueue.context.headers.enable", "true"),
    ]);
    let sink = ErrorSettings::lenient(&task, ConnectorType::Sink);
    assert_eq!(sink.tolerance, ToleranceType::All);
    assert_eq!(sink.dlq_topic.as_deref(), Some("dlq"));
    let source = ErrorSettings::lenient(&task, ConnectorType::Source);
    assert_eq!(source.tolerance, ToleranceType::All);
    assert_eq!(source.dlq_topic, None);
    assert!(!source.dlq_context_headers);
}

#[test]
fn converter_roles_name_their_keys() {
    let keys: Vec<&str> = ConverterRole::ALL.iter().map(|r| r.key()).collect();
    assert_eq!(
        keys,
        ["key.converter", "value.converter", "header.converter"]
    );
    assert_eq!(
        ConverterRole::from_key("header.converter"),
        Some(ConverterRole::Header)
    );
    assert_eq!(ConverterRole::from_key("topics"), None);
    assert_eq!(ConverterRole::Value.as_str(), "value");
}

#[test]
fn distinct_errors_show_each_message_once() {
    let infos = validate_sink(&[
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("tasks.max", Some("abc")),
    ]);
    let shown = distinct_errors(&infos);
    let one_of = "Must configure one of topics or topics.regex";
    assert_eq!(shown.iter().filter(|(_, e)| *e == one_of).count(), 1);
    let tasks: Vec<&str> = shown
        .iter()
        .filter(|(k, _)| *k == "tasks.max")
        .map(|(_, e)| *e)
        .collect();
    assert_eq!(
        tasks,
        vec!["Invalid value abc for configuration tasks.max: Not a number of type INT"]
    );
    // The full answer still has every message, as Kafka's does.
    assert!(infos.error_count > shown.len());
}
