//! Which Cargo feature builds which plugin class, in every build: a config naming a class whose feature
//! was left out gets Kafka's unknown-class answer plus a sentence naming the feature
//! (docs/configuration.md, "Building a smaller binary").

use super::desc::simple_name;

/// Every connector class that a Cargo feature provides, with that feature.
pub const FEATURE_CLASSES: &[(&str, &str)] = &[
    ("liteconnect.kafka.KafkaSinkConnector", "kafka-client"),
    (
        "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "kafka-client",
    ),
    ("io.confluent.connect.mqtt.MqttSourceConnector", "mqtt"),
    ("io.confluent.connect.mqtt.MqttSinkConnector", "mqtt"),
    ("io.aiven.kafka.connect.http.HttpSinkConnector", "http"),
    ("io.confluent.connect.http.HttpSinkConnector", "http"),
    (
        "com.github.castorm.kafka.connect.http.HttpSourceConnector",
        "http",
    ),
    ("liteconnect.http.WebhookSourceConnector", "http"),
    ("liteconnect.airbyte.AirbyteSourceConnector", "airbyte"),
];

pub use crate::connectors::jdbc::POSTGRES_MISSING;

/// Whether this build was made with `feature`.
// With every feature on, each arm is `true`.
#[allow(clippy::match_like_matches_macro)]
pub fn enabled(feature: &str) -> bool {
    match feature {
        "kafka-client" => cfg!(feature = "kafka-client"),
        "kafka-listener" => cfg!(feature = "kafka-listener"),
        "mqtt" => cfg!(feature = "mqtt"),
        "jdbc-postgres" => cfg!(feature = "jdbc-postgres"),
        "http" => cfg!(feature = "http"),
        "console" => cfg!(feature = "console"),
        "airbyte" => cfg!(feature = "airbyte"),
        _ => false,
    }
}

/// The classes of [`FEATURE_CLASSES`] that `name` means (the class name, its simple name or its simple
/// name without `Connector`), with their feature.
pub fn classes_named(name: &str) -> Vec<(&'static str, &'static str)> {
    let name = name.trim();
    FEATURE_CLASSES
        .iter()
        .filter(|(class, _)| {
            let simple = simple_name(class);
            *class == name || simple == name || simple.strip_suffix("Connector") == Some(name)
        })
        .copied()
        .collect()
}

/// The sentence added to the unknown-class answer when `name` is a class of a feature this build was
/// made without; None otherwise.
pub fn missing_feature_sentence(name: &str) -> Option<String> {
    let found = classes_named(name);
    let (_, feature) = *found.iter().find(|(_, f)| !enabled(f))?;
    let classes: Vec<&str> = found
        .iter()
        .filter(|(_, f)| *f == feature)
        .map(|(c, _)| *c)
        .collect();
    Some(format!(
        "This build of liteconnect was made without the `{feature}` feature, which provides {}.",
        classes.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_names_the_feature_and_the_class() {
        let mqtt = "io.confluent.connect.mqtt.MqttSourceConnector";
        let expected = "This build of liteconnect was made without the `mqtt` feature, which provides io.confluent.connect.mqtt.MqttSourceConnector.";
        for name in [mqtt, "MqttSourceConnector", "MqttSource", " MqttSource "] {
            assert_eq!(classes_named(name), vec![(mqtt, "mqtt")]);
            if cfg!(feature = "mqtt") {
                assert_eq!(missing_feature_sentence(name), None);
            } else {
                assert_eq!(missing_feature_sentence(name).as_deref(), Some(expected));
            }
        }
        assert!(classes_named("FileStreamSource").is_empty());
        assert_eq!(missing_feature_sentence("NoSuchConnector"), None);
        assert_eq!(classes_named("HttpSink").len(), 2);
        if !cfg!(feature = "http") {
            assert_eq!(
                missing_feature_sentence("HttpSink").as_deref(),
                Some("This build of liteconnect was made without the `http` feature, which provides io.aiven.kafka.connect.http.HttpSinkConnector and io.confluent.connect.http.HttpSinkConnector.")
            );
        }
    }

    #[test]
    fn kafkas_unknown_class_answer_ends_with_the_sentence() {
        use crate::plugins::PluginKind;
        let kinds = [PluginKind::Source, PluginKind::Sink];
        for (class, feature) in FEATURE_CLASSES {
            let resolved = crate::plugins::resolve(&kinds, class);
            if enabled(feature) {
                assert_eq!(resolved.map(|r| r.class).ok(), Some(*class));
            } else {
                let message = resolved.map(|r| r.class).unwrap_err().to_string();
                let head = format!("Failed to find any class that implements Connector and which name matches {class}, available connectors are: ");
                assert!(message.starts_with(&head), "{message}");
                let tail = format!(". This build of liteconnect was made without the `{feature}` feature, which provides {class}.");
                assert!(message.ends_with(&tail), "{message}");
            }
        }
        let other = crate::plugins::resolve(&kinds, "NoSuchConnector").unwrap_err();
        assert!(!other.to_string().contains("This build"), "{other}");
    }

    #[test]
    fn every_class_of_the_table_is_installed_exactly_when_its_feature_is_on() {
        let installed: Vec<String> = crate::plugins::Plugins::new()
            .list(true)
            .into_iter()
            .map(|p| p.class)
            .collect();
        for (class, feature) in FEATURE_CLASSES {
            assert_eq!(
                installed.iter().any(|c| c == class),
                enabled(feature),
                "{class} ({feature})"
            );
            assert_eq!(missing_feature_sentence(class).is_some(), !enabled(feature));
        }
    }

    #[cfg(not(feature = "jdbc-postgres"))]
    #[test]
    fn a_postgres_url_names_the_feature() {
        use crate::connectors::jdbc::db::{Conn, ConnSpec};
        let spec = ConnSpec {
            url: "jdbc:postgresql://127.0.0.1:5432/db".into(),
            user: None,
            password: None,
            read_only: false,
            timezone: "UTC".into(),
        };
        let e = Conn::open(&spec).err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains(POSTGRES_MISSING)),
            "{e:?}"
        );
    }
}
