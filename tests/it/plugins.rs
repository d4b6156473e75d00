//! The plugin table through the REST API: every listed plugin's config definition, and the answer to
//! a connector class that is not installed.

use serde_json::{json, Value as Json};

use crate::common::*;

/// Plugins whose Kafka class declares no config keys at all.
const NO_KEYS_IN_KAFKA: [&str; 3] = [
    "org.apache.kafka.connect.transforms.Filter",
    "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
    "org.apache.kafka.connect.storage.SimpleHeaderConverter",
];

fn key_names(keys: &Json) -> Vec<&str> {
    keys.as_array()
        .unwrap_or_else(|| panic!("not a list: {keys}"))
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_plugin_answers_its_config_definition() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, all) = w.get("/connector-plugins?connectorsOnly=false").await;
    assert_eq!(s, 200, "{all}");
    let plugins = all.as_array().unwrap();
    assert!(plugins.len() > 40, "{all}");
    for plugin in plugins {
        let class = plugin["class"].as_str().unwrap();
        let (s, keys) = w.get(&format!("/connector-plugins/{class}/config")).await;
        assert_eq!(s, 200, "{class}: {keys}");
        let names = key_names(&keys);
        assert_eq!(
            names.is_empty(),
            NO_KEYS_IN_KAFKA.contains(&class),
            "{class} ({}): {names:?}",
            plugin["type"]
        );
    }

    let (_, json_keys) = w.get("/connector-plugins/JsonConverter/config").await;
    assert_eq!(
        key_names(&json_keys),
        [
            "converter.type",
            "schemas.enable",
            "schemas.cache.size",
            "decimal.format",
            "replace.null.with.default"
        ]
    );
    let schemas_enable = &json_keys[1];
    assert_eq!(schemas_enable["type"], "BOOLEAN", "{schemas_enable}");
    assert_eq!(schemas_enable["default_value"], "true", "{schemas_enable}");
    assert_eq!(schemas_enable["group"], "Schemas", "{schemas_enable}");
    let (_, string_keys) = w
        .get("/connector-plugins/org.apache.kafka.connect.storage.StringConverter/config")
        .await;
    assert_eq!(
        key_names(&string_keys),
        ["converter.type", "converter.encoding"]
    );
    let (_, long_keys) = w.get("/connector-plugins/Long/config").await;
    assert_eq!(key_names(&long_keys), ["converter.type"]);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converter_keys_are_validated_with_the_connector() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, infos) = w
        .put(
            "/connector-plugins/FileStreamSink/config/validate",
            json!({"connector.class": "FileStreamSink", "name": "x", "topics": "t",
                   "value.converter": "JsonConverter", "value.converter.decimal.format": "HEX"}),
        )
        .await;
    assert_eq!(s, 200, "{infos}");
    assert_eq!(infos["error_count"], 1, "{infos}");
    let decimal = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "value.converter.decimal.format")
        .unwrap_or_else(|| panic!("no converter entry: {infos}"));
    let errors = decimal["value"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{decimal}");
    assert!(
        errors[0]
            .as_str()
            .unwrap()
            .starts_with("Invalid value HEX for configuration decimal.format: String must be one of (case insensitive): "),
        "{decimal}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_connector_class_names_the_installed_classes_briefly() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, body) = w
        .post(
            "/connectors",
            json!({"name": "v", "config": {"connector.class": "NoSuchThing"}}),
        )
        .await;
    assert_eq!(s, 400, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Failed to find any class that implements Connector and which name matches NoSuchThing, available connectors are: "
        ),
        "{message}"
    );
    assert!(
        message.contains("org.apache.kafka.connect.file.FileStreamSinkConnector"),
        "{message}"
    );
    assert!(!message.contains("PluginDesc"), "{message}");
    // Briefly: the class names only, however many connectors are installed.
    let listed = message.split("available connectors are: ").nth(1).unwrap();
    assert!(
        listed
            .split(", ")
            .all(|c| c.contains('.') && !c.contains(' ') && !c.contains('{')),
        "{message}"
    );

    let (s, validated) = w
        .put(
            "/connector-plugins/NoSuchThing/config/validate",
            json!({"connector.class": "NoSuchThing"}),
        )
        .await;
    assert_eq!(s, 400, "{validated}");
    assert_eq!(validated["message"], body["message"]);
    w.stop().await;
}

/// A class of a Cargo feature: listed when the build has it, else Kafka's unknown-class 400 plus a
/// sentence naming the feature (docs/configuration.md, "Building a smaller binary").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_of_a_feature_left_out_names_the_feature() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let class = "io.confluent.connect.mqtt.MqttSourceConnector";
    let (s, plugins) = w.get("/connector-plugins").await;
    assert_eq!(s, 200, "{plugins}");
    let listed = plugins
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["class"] == class);
    assert_eq!(listed, cfg!(feature = "mqtt"), "{plugins}");
    if !cfg!(feature = "mqtt") {
        let (s, body) = w
            .post(
                "/connectors",
                json!({"name": "m", "config": {"connector.class": "MqttSource"}}),
            )
            .await;
        assert_eq!(s, 400, "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.starts_with("Failed to find any class that implements Connector and which name matches MqttSource, available connectors are: "),
            "{message}"
        );
        assert!(
            message.ends_with(". This build of liteconnect was made without the `mqtt` feature, which provides io.confluent.connect.mqtt.MqttSourceConnector."),
            "{message}"
        );
    }
    w.stop().await;
}
