use super::*;

#[test]
fn spec_example_file_sink_without_name_or_topics() {
    let infos = validate_sink(&[
        ("connector.class", Some("FileStreamSink")),
        ("file", Some("/tmp/out.txt")),
    ]);
    assert_eq!(infos.name, "FileStreamSink");
    assert_eq!(infos.groups, SINK_GROUPS);
    assert_eq!(infos.error_count, 3);
    let first = serde_json::to_value(&infos.configs[0]).unwrap();
    assert_eq!(
        first,
        serde_json::json!({
            "definition": {"name": "name", "type": "STRING", "required": true, "default_value": null,
                           "importance": "HIGH", "documentation": "Globally unique name to use for this connector.",
                           "group": "Common", "width": "MEDIUM", "display_name": "Connector name",
                           "dependents": [], "order": 1},
            "value": {"name": "name", "value": null, "recommended_values": [],
                      "errors": ["Missing required configuration \"name\" which has no default value."], "visible": true}
        })
    );
    let topics = serde_json::to_value(entry(&infos, "topics")).unwrap();
    assert_eq!(
        topics,
        serde_json::json!({
            "definition": {"name": "topics", "type": "LIST", "required": false, "default_value": "",
                           "importance": "HIGH", "documentation": "List of topics to consume, separated by commas",
                           "group": "Common", "width": "LONG", "display_name": "Topics", "dependents": [], "order": 4},
            "value": {"name": "topics", "value": "", "recommended_values": [],
                      "errors": ["Must configure one of topics or topics.regex"], "visible": true}
        })
    );
    assert_eq!(
        errors(&infos, "topics.regex"),
        vec!["Must configure one of topics or topics.regex"]
    );
    let file = serde_json::to_value(infos.configs.last().unwrap()).unwrap();
    assert_eq!(
        file,
        serde_json::json!({
            "definition": {"name": "file", "type": "STRING", "required": false, "default_value": null,
                           "importance": "HIGH", "documentation": "Destination filename. If not specified, the standard output will be used",
                           "group": null, "width": "NONE", "display_name": "file", "dependents": [], "order": -1},
            "value": {"name": "file", "value": "/tmp/out.txt", "recommended_values": [], "errors": [], "visible": true}
        })
    );
    assert_eq!(infos.configs.len(), 21);
    assert_eq!(entry(&infos, "tasks.max").value.value.as_deref(), Some("1"));
    assert_eq!(
        entry(&infos, "config.action.reload").value.value.as_deref(),
        Some("restart")
    );
    assert_eq!(entry(&infos, "key.converter").value.value, None);

    let json = serde_json::to_string(&infos).unwrap();
    let back: ConfigInfos = serde_json::from_str(&json).unwrap();
    assert_eq!(back, infos);
}

#[test]
fn valid_sink_has_no_errors() {
    let infos = validate_sink(&[
        ("name", Some("local-file-sink")),
        ("connector.class", Some("FileStreamSink")),
        ("tasks.max", Some("1")),
        ("file", Some("test.sink.txt")),
        ("topics", Some("connect-test")),
    ]);
    assert_eq!(infos.error_count, 0);
    assert_eq!(invalid_config_message(&infos), None);
}

#[test]
fn sink_topics_and_regex_are_exclusive() {
    let infos = validate_sink(&[
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("topics", Some("a")),
        ("topics.regex", Some("b.*")),
    ]);
    let message = "topics and topics.regex are mutually exclusive options, but both are set.";
    assert_eq!(errors(&infos, "topics"), vec![message]);
    assert_eq!(errors(&infos, "topics.regex"), vec![message]);
    assert_eq!(infos.error_count, 2);
}

#[test]
fn sink_dead_letter_queue_rules() {
    let infos = validate_sink(&[
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("topics", Some("a, dlq ,a")),
        ("errors.deadletterqueue.topic.name", Some(" dlq ")),
    ]);
    assert_eq!(
        errors(&infos, "topics"),
        vec!["The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"]
    );
    assert_eq!(infos.error_count, 1);

    let infos = validate_sink(&[
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("topics.regex", Some("d.*")),
        ("errors.deadletterqueue.topic.name", Some("dlq")),
    ]);
    assert_eq!(
        errors(&infos, "topics.regex"),
        vec!["The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the connector"]
    );
    // A partial match is not a match: Java's `matches()` is anchored.
    let infos = validate_sink(&[
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("topics.regex", Some("d")),
        ("errors.deadletterqueue.topic.name", Some("dlq")),
    ]);
    assert_eq!(infos.error_count, 0);
}

#[test]
fn invalid_topics_regex() {
    let infos = validate_sink(&[
        ("name", Some("s")),
        ("connector.class", Some("FileStreamSink")),
        ("topics.regex", Some("(")),
    ]);
    let errs = errors(&infos, "topics.regex");
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with("Invalid value ( for configuration topics.regex: Invalid regex: "));
}

#[test]
fn name_validation_messages() {
    let infos = validate_sink(&[
        ("name", Some("")),
        ("connector.class", Some("FileStreamSink")),
        ("topics", Some("t")),
    ]);
    assert_eq!(
        errors(&infos, "name"),
        vec!["Invalid value  for configuration name: String may not be empty"]
    );
    let infos = validate_sink(&[
        ("name", Some("a\u{7}b")),
        ("connector.class", Some("FileStreamSink")),
        ("topics", Some("t")),
    ]);
    assert_eq!(
        errors(&infos, "name"),
        vec!["Invalid value a\u{7}b for configuration name: String may not contain control sequences but had the following ASCII chars: 7"]
    );
}

#[test]
fn spec_400_message() {
    let infos = validate_source(&[
        ("name", Some("local-file-source")),
        ("connector.class", Some("FileStreamSource")),
        ("tasks.max", Some("0")),
        ("file", Some("test.txt")),
    ]);
    assert_eq!(infos.error_count, 2);
    assert_eq!(
        invalid_config_message(&infos).unwrap(),
        "Connector configuration is invalid and contains the following 2 error(s):\n\
         Invalid value 0 for configuration tasks.max: Value must be at least 1\n\
         Missing required configuration \"topic\" which has no default value.\n\
         You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
    );
}

#[test]
fn source_groups_and_case_insensitive_options() {
    let infos = validate_source(&[
        ("name", Some("src")),
        ("connector.class", Some("FileStreamSource")),
        ("topic", Some("t")),
        ("exactly.once.support", Some("REQUIRED")),
        ("transaction.boundary", Some("sometimes")),
        ("transaction.boundary.interval.ms", Some("-1")),
        ("offsets.storage.topic", Some("  ")),
    ]);
    assert_eq!(infos.groups, SOURCE_GROUPS);
    assert!(errors(&infos, "exactly.once.support").is_empty());
    let infos_eos = validate_source(&[
        ("name", Some("src")),
        ("connector.class", Some("FileStreamSource")),
        ("topic", Some("t")),
        ("exactly.once.support", Some("maybe")),
    ]);
    assert_eq!(
        errors(&infos_eos, "exactly.once.support"),
        vec!["Invalid value maybe for configuration exactly.once.support: String must be one of (case insensitive): REQUIRED, REQUESTED"]
    );
    assert_eq!(
        errors(&infos, "transaction.boundary"),
        vec!["Invalid value sometimes for configuration transaction.boundary: String must be one of (case insensitive): INTERVAL, POLL, CONNECTOR"]
    );
    assert_eq!(
        errors(&infos, "transaction.boundary.interval.ms"),
        vec!["Invalid value -1 for configuration transaction.boundary.interval.ms: Value must be at least 0"]
    );
    assert_eq!(
        errors(&infos, "offsets.storage.topic"),
        vec!["Invalid value  for configuration offsets.storage.topic: String must be non-empty"]
    );
    assert_eq!(infos.error_count, 3);
    assert_eq!(
        entry(&infos, "transaction.boundary.interval.ms")
            .value
            .value
            .as_deref(),
        Some("-1")
    );
}

#[test]
fn transforms_with_known_types_are_enriched() {
    let infos = validate_file_sink(&[
        ("transforms", Some("route, drop")),
        ("transforms.route.type", Some("RegexRouter")),
        ("transforms.route.regex", Some("(.*)")),
        ("transforms.drop.type", Some(FILTER)),
        ("transforms.drop.predicate", Some("isFoo")),
        ("transforms.drop.negate", Some("true")),
        ("predicates", Some("isFoo")),
        ("predicates.isFoo.type", Some("TopicNameMatches")),
        ("predicates.isFoo.pattern", Some("foo.*")),
    ]);
    assert_eq!(
        infos.groups,
        [
            &SINK_GROUPS[..],
            &["Transforms: route", "Transforms: drop", "Predicates: isFoo"]
        ]
        .concat()
    );
    let enriched: Vec<&str> = names(&infos)[20..].to_vec();
    assert_eq!(
        enriched,
        vec![
            "transforms.route.type",
            "transforms.route.regex",
            "transforms.route.replacement",
            "transforms.route.negate",
            "transforms.route.predicate",
            "transforms.drop.type",
            "transforms.drop.negate",
            "transforms.drop.predicate",
            "predicates.isFoo.type",
            "predicates.isFoo.pattern",
            "file",
        ]
    );
    let route_type = entry(&infos, "transforms.route.type");
    let def = route_type.definition.as_ref().unwrap();
    assert_eq!(def.config_type, "CLASS");
    assert!(def.required);
    assert_eq!(def.group.as_deref(), Some("Transforms: route"));
    assert_eq!(def.order, 0);
    assert_eq!(def.width, "LONG");
    assert_eq!(def.display_name, "Transformation type for route");
    assert_eq!(def.documentation, "Class for the 'route' transformation.");
    assert_eq!(route_type.value.value.as_deref(), Some(REGEX_ROUTER));
    assert_eq!(
        route_type.value.recommended_values,
        vec![FILTER.to_owned(), REGEX_ROUTER.to_owned()]
    );
    let regex_def = entry(&infos, "transforms.route.regex")
        .definition
        .clone()
        .unwrap();
    assert_eq!(
        (regex_def.group.as_deref(), regex_def.order),
        (Some("Transforms: route"), 1)
    );
    assert_eq!(
        errors(&infos, "transforms.route.replacement"),
        vec!["Missing required configuration \"transforms.route.replacement\" which has no default value."]
    );
    let predicate_type = entry(&infos, "predicates.isFoo.type")
        .definition
        .clone()
        .unwrap();
    assert_eq!(predicate_type.display_name, "Predicate type for isFoo");
    assert_eq!(
        predicate_type.documentation,
        "Class for the 'isFoo' predicate."
    );
    assert_eq!(
        entry(&infos, "predicates.isFoo.type")
            .value
            .recommended_values,
        vec![TOPIC_NAME_MATCHES.to_owned()]
    );
    assert_eq!(
        entry(&infos, "transforms.drop.negate")
            .value
            .value
            .as_deref(),
        Some("true")
    );
    assert_eq!(infos.error_count, 1);
}

#[test]
fn unknown_transform_type() {
    let infos = validate_file_sink(&[
        ("transforms", Some("a")),
        ("transforms.a.type", Some("com.example.Nope")),
        ("transforms.a.something", Some("x")),
    ]);
    assert_eq!(
        errors(&infos, "transforms.a.type"),
        vec!["Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found."]
    );
    assert_eq!(entry(&infos, "transforms.a.type").value.value, None);
    // Keys of an unknown transformation are not listed.
    assert!(!names(&infos).contains(&"transforms.a.something"));
    assert_eq!(infos.error_count, 1);
    assert!(infos.groups.contains(&"Transforms: a".to_owned()));
}

#[test]
fn missing_transform_type_and_duplicate_alias() {
    let infos = validate_file_sink(&[("transforms", Some("a,a"))]);
    assert_eq!(
        errors(&infos, "transforms"),
        vec!["Invalid value [a, a] for configuration transforms: Duplicate alias provided."]
    );
    assert_eq!(
        errors(&infos, "transforms.a.type"),
        vec!["Missing required configuration \"transforms.a.type\" which has no default value."]
    );
    assert_eq!(
        names(&infos)
            .iter()
            .filter(|n| **n == "transforms.a.type")
            .count(),
        1
    );
    assert_eq!(infos.error_count, 2);
}

#[test]
fn negate_without_predicate() {
    let infos = validate_file_sink(&[
        ("transforms", Some("f")),
        ("transforms.f.type", Some("Filter")),
        ("transforms.f.negate", Some("true")),
    ]);
    assert_eq!(
        errors(&infos, "transforms.f.negate"),
        vec!["Config 'transforms.f.negate' was provided but there is no config 'transforms.f.predicate' defining a predicate to be negated."]
    );
    assert!(errors(&infos, "transforms.f.type").is_empty());
    assert_eq!(infos.error_count, 1);
    let message = invalid_config_message(&infos).unwrap();
    assert!(message.contains("\nConfig 'transforms.f.negate' was provided"));
}

#[test]
fn null_values() {
    let infos = validate_file_sink(&[("tasks.max", None), ("unknown.key", None), ("file", None)]);
    // Keys without a definition come first.
    assert!(infos.configs[0].definition.is_none());
    assert_eq!(
        infos.configs[0].value,
        ConfigValueInfo {
            name: "unknown.key".into(),
            value: None,
            recommended_values: vec![],
            errors: vec![NULL_VALUE_MESSAGE.into()],
            visible: true,
        }
    );
    assert_eq!(
        errors(&infos, "tasks.max"),
        vec![
            "Invalid value null for configuration tasks.max: Value must be non-null".to_owned(),
            NULL_VALUE_MESSAGE.to_owned(),
        ]
    );
    assert_eq!(errors(&infos, "file"), vec![NULL_VALUE_MESSAGE]);
    assert_eq!(infos.error_count, 4);
}

#[test]
fn null_name_is_only_the_null_error() {
    let infos = validate_sink(&[
        ("name", None),
        ("connector.class", Some("FileStreamSink")),
        ("topics", Some("t")),
    ]);
    assert_eq!(errors(&infos, "name"), vec![NULL_VALUE_MESSAGE]);
}

#[test]
fn converters_are_checked_and_their_keys_validated() {
    let infos = validate_file_sink(&[
        ("key.converter", Some("com.example.Nope")),
        ("value.converter", Some("JsonConverter")),
        ("value.converter.schemas.enable", Some("maybe")),
        ("value.converter.schemas.cache.size", Some("-5")),
    ]);
    assert_eq!(
        errors(&infos, "key.converter"),
        vec!["Invalid value com.example.Nope for configuration key.converter: Class com.example.Nope could not be found."]
    );
    assert_eq!(
        entry(&infos, "value.converter").value.value.as_deref(),
        Some(JSON_CONVERTER)
    );
    // Converter keys follow the connector's, under prefixed names; no key converter
    // section since that class is invalid.
    let tail: Vec<&str> = names(&infos)[21..].to_vec();
    let mut sorted_tail = tail.clone();
    sorted_tail.sort_unstable();
    assert_eq!(
        sorted_tail,
        vec![
            "value.converter.converter.type",
            "value.converter.schemas.cache.size",
            "value.converter.schemas.enable"
        ]
    );
    assert_eq!(
        entry(&infos, "value.converter.converter.type")
            .value
            .value
            .as_deref(),
        Some("value")
    );
    let enable = entry(&infos, "value.converter.schemas.enable");
    assert_eq!(
        enable.definition.as_ref().unwrap().name,
        "value.converter.schemas.enable"
    );
    assert_eq!(
        enable.value.errors,
        vec!["Invalid value maybe for configuration schemas.enable: Expected value to be either true or false"]
    );
    assert_eq!(
        errors(&infos, "value.converter.schemas.cache.size"),
        vec!["Invalid value -5 for configuration schemas.cache.size: Value must be at least 0"]
    );
    assert_eq!(infos.groups.last().map(String::as_str), Some("Schemas"));
    // One for key.converter, plus one per converter key in error.
    assert_eq!(infos.error_count, 3);
}

#[test]
fn header_converter_section_comes_first() {
    let infos = validate_file_sink(&[
        ("key.converter", Some(JSON_CONVERTER)),
        ("header.converter", Some(JSON_CONVERTER)),
    ]);
    assert_eq!(infos.error_count, 0);
    let tail: Vec<&str> = names(&infos)[21..].to_vec();
    assert_eq!(tail.len(), 6);
    assert!(tail[..3].iter().all(|n| n.starts_with("header.converter.")));
    assert!(tail[3..].iter().all(|n| n.starts_with("key.converter.")));
    assert_eq!(
        entry(&infos, "header.converter.converter.type")
            .value
            .value
            .as_deref(),
        Some("header")
    );
}

#[test]
fn connector_errors_are_attached() {
    let infos = validate_connector_config(
        "FileStreamSink",
        ConnectorType::Sink,
        &file_sink_def(),
        vec![
            ("file".to_owned(), "File is not writable".to_owned()),
            ("other".to_owned(), "Something else".to_owned()),
        ],
        &config(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
        ]),
        &Plugins,
    );
    assert_eq!(errors(&infos, "file"), vec!["File is not writable"]);
    assert!(infos.configs[0].definition.is_none());
    assert_eq!(infos.configs[0].value.errors, vec!["Something else"]);
    assert_eq!(infos.error_count, 2);
}

#[test]
fn connector_keys_replace_framework_keys_in_place() {
    let def = ConfigDef::new()
        .define(
            key(
                "tasks.max",
                ConfigType::Int,
                Some("4"),
                Importance::Low,
                "Own tasks.max",
            )
            .group("Connector", 1),
        )
        .define(key(
            "file",
            ConfigType::String,
            None,
            Importance::High,
            "file",
        ));
    let infos = validate_connector_config(
        "X",
        ConnectorType::Sink,
        &def,
        Vec::new(),
        &config(&[
            ("name", Some("s")),
            ("connector.class", Some("X")),
            ("topics", Some("t")),
        ]),
        &Plugins,
    );
    assert_eq!(names(&infos)[2], "tasks.max");
    let tasks = entry(&infos, "tasks.max");
    assert_eq!(
        tasks.definition.as_ref().unwrap().documentation,
        "Own tasks.max"
    );
    assert_eq!(tasks.value.value.as_deref(), Some("4"));
    assert_eq!(infos.groups.last().map(String::as_str), Some("Connector"));

    let keys = plugin_config_keys(ConnectorType::Sink, &def);
    let names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(&names[..3], &["tasks.max", "file", "name"]);
    assert_eq!(names.iter().filter(|n| **n == "tasks.max").count(), 1);
    assert_eq!(keys.len(), 21);
}

#[test]
fn plugin_config_keys_for_source() {
    let keys = plugin_config_keys(ConnectorType::Source, &file_source_def());
    let names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(&names[..4], &["file", "topic", "batch.size", "name"]);
    assert_eq!(names.last(), Some(&"offsets.storage.topic"));
    let header = keys.iter().find(|k| k.name == "header.converter").unwrap();
    assert_eq!(header.default_value, None);
    assert_eq!(header.config_type, "CLASS");
    let transforms = keys.iter().find(|k| k.name == "transforms").unwrap();
    assert_eq!(transforms.default_value.as_deref(), Some(""));
    let dlq = plugin_config_keys(ConnectorType::Sink, &ConfigDef::new())
        .into_iter()
        .find(|k| k.name == "errors.deadletterqueue.topic.replication.factor")
        .unwrap();
    assert_eq!(
        (dlq.config_type.as_str(), dlq.default_value.as_deref()),
        ("SHORT", Some("3"))
    );
}
