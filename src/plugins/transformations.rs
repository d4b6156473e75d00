//! The transformations and predicates as the plugin table knows them: their class names,
//! definitions and constructors, found by Kafka's alias rules. [`Plugins`] is the
//! [`TransformLookup`] a connector's transformation chain is built with.

use super::external::PLUGIN_VERSION;
use super::{Factory, PluginDesc, PluginKind, Plugins};
use crate::config::def::ConfigDef;
use crate::config::ConfigError;
use crate::connectors::Props;
use crate::transforms::{Predicate, TransformLookup, Transformation};

fn transformation(name: &str) -> Option<&'static PluginDesc> {
    super::resolve(&[PluginKind::Transformation], name).ok()
}

fn predicate(name: &str) -> Option<&'static PluginDesc> {
    super::resolve(&[PluginKind::Predicate], name).ok()
}

fn classes(kind: PluginKind) -> Vec<String> {
    super::of_kind(kind)
        .iter()
        .map(|r| r.class.to_string())
        .collect()
}

/// Full class names of every transformation, sorted.
pub fn transformation_classes() -> Vec<String> {
    classes(PluginKind::Transformation)
}

/// Full class names of every predicate, sorted.
pub fn predicate_classes() -> Vec<String> {
    classes(PluginKind::Predicate)
}

/// The full class name of a transformation given by full name or alias.
pub fn resolve_transformation(class_or_alias: &str) -> Option<&'static str> {
    transformation(class_or_alias).map(|r| r.class)
}

/// The full class name of a predicate given by full name or alias.
pub fn resolve_predicate(class_or_alias: &str) -> Option<&'static str> {
    predicate(class_or_alias).map(|r| r.class)
}

/// The config definition of a transformation (its own keys only).
pub fn transformation_def(class_or_alias: &str) -> Option<ConfigDef> {
    transformation(class_or_alias).map(PluginDesc::config_def)
}

/// The config definition of a predicate.
pub fn predicate_def(class_or_alias: &str) -> Option<ConfigDef> {
    predicate(class_or_alias).map(PluginDesc::config_def)
}

/// Configures a transformation from its own keys (no `transforms.<alias>.` prefix).
///
/// # Errors
/// `Class <c> could not be found.` for an unknown class, else the transformation's message.
pub fn configure_transformation(
    class_or_alias: &str,
    props: &Props,
) -> Result<Box<dyn Transformation>, ConfigError> {
    let found = transformation(class_or_alias);
    if let Some(Factory::TransformationProgram(program)) = found.map(|r| &r.factory) {
        return program.transformation(props);
    }
    configure(class_or_alias, props, found, |f| match f {
        Factory::Transformation { make, .. } => Some(*make),
        _ => None,
    })
}

/// Configures a predicate from its own keys.
///
/// # Errors
/// `Class <c> could not be found.` for an unknown class, else the predicate's message.
pub fn configure_predicate(
    class_or_alias: &str,
    props: &Props,
) -> Result<Box<dyn Predicate>, ConfigError> {
    let found = predicate(class_or_alias);
    if let Some(Factory::PredicateProgram(program)) = found.map(|r| &r.factory) {
        return program.predicate(props);
    }
    configure(class_or_alias, props, found, |f| match f {
        Factory::Predicate { make, .. } => Some(*make),
        _ => None,
    })
}

/// A plugin constructor.
type Make<T> = fn(&Props) -> Result<T, ConfigError>;

/// Builds the plugin `found` for `class_or_alias` with the constructor `make` takes from its
/// factory.
fn configure<T>(
    class_or_alias: &str,
    props: &Props,
    found: Option<&'static PluginDesc>,
    make: fn(&Factory) -> Option<Make<T>>,
) -> Result<T, ConfigError> {
    match found.and_then(|r| make(&r.factory).map(|m| (r, m))) {
        Some((r, make)) => {
            let mut props = props.clone();
            builtin_version(r, props.remove(PLUGIN_VERSION).as_deref())?;
            make(&props)
        }
        None => Err(format!("Class {class_or_alias} could not be found.").into()),
    }
}

/// Checks a built-in plugin's `plugin.version` (KIP-891): its one version must be in the range.
///
/// # Errors
/// Kafka's message when it is not, or when the range cannot be read.
pub fn builtin_version(r: &PluginDesc, wanted: Option<&str>) -> Result<(), String> {
    super::external::pick_index(r.class, PLUGIN_VERSION, &[r.version], wanted).map(|_| ())
}

impl TransformLookup for Plugins {
    fn resolve_transformation(&self, class_or_alias: &str) -> Option<&'static str> {
        resolve_transformation(class_or_alias)
    }
    fn resolve_predicate(&self, class_or_alias: &str) -> Option<&'static str> {
        resolve_predicate(class_or_alias)
    }
    fn configure_transformation(
        &self,
        class_or_alias: &str,
        props: &Props,
    ) -> Result<Box<dyn Transformation>, ConfigError> {
        configure_transformation(class_or_alias, props)
    }
    fn configure_predicate(
        &self,
        class_or_alias: &str,
        props: &Props,
    ) -> Result<Box<dyn Predicate>, ConfigError> {
        configure_predicate(class_or_alias, props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::simple_name;

    #[test]
    fn registry_lists_every_class_sorted() {
        let classes = transformation_classes();
        assert_eq!(classes.len(), 26);
        let mut sorted = classes.clone();
        sorted.sort();
        assert_eq!(classes, sorted);
        assert_eq!(classes[0], "org.apache.kafka.connect.transforms.Cast$Key");
        assert!(classes
            .contains(&"org.apache.kafka.connect.transforms.TimestampConverter$Value".to_string()));
        assert_eq!(
            predicate_classes(),
            vec![
                "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
                "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
                "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            ]
        );
    }

    #[test]
    fn aliases_follow_kafka_rules() {
        assert_eq!(
            resolve_transformation("RegexRouter"),
            Some("org.apache.kafka.connect.transforms.RegexRouter")
        );
        assert_eq!(
            resolve_transformation("Filter"),
            Some("org.apache.kafka.connect.transforms.Filter")
        );
        for unique in [
            "TimestampRouter",
            "DropHeaders",
            "InsertHeader",
            "ValueToKey",
        ] {
            assert_eq!(
                resolve_transformation(unique).map(simple_name),
                Some(unique),
                "{unique}"
            );
        }
        assert_eq!(
            resolve_transformation("org.apache.kafka.connect.transforms.Cast$Value"),
            Some("org.apache.kafka.connect.transforms.Cast$Value")
        );
        // inner classes are all called Key or Value: ambiguous
        assert_eq!(resolve_transformation("Value"), None);
        assert_eq!(resolve_transformation("Key"), None);
        assert_eq!(resolve_transformation("Cast"), None);
        assert_eq!(resolve_transformation("TopicNameMatches"), None);
        assert_eq!(
            resolve_predicate(" TopicNameMatches "),
            Some("org.apache.kafka.connect.transforms.predicates.TopicNameMatches")
        );
        assert_eq!(resolve_predicate("RegexRouter"), None);
        assert!(transformation_def("Filter").unwrap().keys().is_empty());
        assert!(predicate_def("HasHeaderKey").unwrap().get("name").is_some());
        assert!(transformation_def("Nope").is_none());
    }

    /// Connector validation with the real plugin registry.
    mod validation {
        use crate::config::def::{ConfigInfo, ConfigInfos};
        use crate::plugins::Plugins;
        use std::collections::BTreeMap;

        fn validate(pairs: &[(&str, &str)]) -> ConfigInfos {
            let mut config: BTreeMap<String, Option<String>> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Some(v.to_string())))
                .collect();
            config.insert("name".into(), Some("sink".into()));
            config.insert("connector.class".into(), Some("FileStreamSink".into()));
            config.insert("topics".into(), Some("t".into()));
            Plugins::new().validate(&config).unwrap()
        }

        fn entry<'a>(infos: &'a ConfigInfos, name: &str) -> &'a ConfigInfo {
            infos
                .entry(name)
                .unwrap_or_else(|| panic!("no entry {name}"))
        }

        #[test]
        fn per_alias_groups_keys_and_full_class_names() {
            let infos = validate(&[
                ("transforms", "a,b"),
                ("transforms.a.type", "RegexRouter"),
                ("transforms.a.regex", "(.*)"),
                ("transforms.a.replacement", "x-$1"),
                (
                    "transforms.b.type",
                    "org.apache.kafka.connect.transforms.Cast$Value",
                ),
                ("transforms.b.spec", "a:int32"),
                ("transforms.b.predicate", "p"),
                ("predicates", "p"),
                ("predicates.p.type", "RecordIsTombstone"),
            ]);
            assert_eq!(infos.error_count, 0, "{infos:#?}");
            for group in ["Transforms: a", "Transforms: b", "Predicates: p"] {
                assert!(infos.groups.contains(&group.to_string()), "{group}");
            }
            let regex = entry(&infos, "transforms.a.regex");
            assert_eq!(
                regex.definition.as_ref().unwrap().group.as_deref(),
                Some("Transforms: a")
            );
            assert_eq!(
                entry(&infos, "transforms.a.type").value.value.as_deref(),
                Some("org.apache.kafka.connect.transforms.RegexRouter")
            );
            assert_eq!(
                entry(&infos, "predicates.p.type").value.value.as_deref(),
                Some("org.apache.kafka.connect.transforms.predicates.RecordIsTombstone")
            );
            let spec = entry(&infos, "transforms.b.spec");
            assert_eq!(spec.definition.as_ref().unwrap().config_type, "LIST");
            assert!(entry(&infos, "transforms.b.replace.null.with.default")
                .value
                .errors
                .is_empty());
            let recommended = &entry(&infos, "transforms.a.type").value.recommended_values;
            assert_eq!(recommended.len(), 26);
        }

        #[test]
        fn unknown_type_and_smt_errors_with_kafka_messages() {
            let infos = validate(&[
                ("transforms", "bad,cast,mask,conv"),
                ("transforms.bad.type", "com.example.Nope"),
                (
                    "transforms.cast.type",
                    "org.apache.kafka.connect.transforms.Cast$Key",
                ),
                ("transforms.cast.spec", "a:bytes"),
                (
                    "transforms.mask.type",
                    "org.apache.kafka.connect.transforms.MaskField$Value",
                ),
                ("transforms.mask.fields", ""),
                (
                    "transforms.conv.type",
                    "org.apache.kafka.connect.transforms.TimestampConverter$Value",
                ),
                ("transforms.conv.target.type", "epoch"),
            ]);
            let keys = [
                "transforms.bad.type",
                "transforms.cast.spec",
                "transforms.mask.fields",
                "transforms.conv.target.type",
            ];
            assert_eq!(
                keys.map(|k| entry(&infos, k).value.errors.clone()),
                [
                    vec!["Invalid value com.example.Nope for configuration transforms.bad.type: Class com.example.Nope could not be found."],
                    vec!["Invalid value [a:bytes] for configuration spec: Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"],
                    vec!["Invalid value [] for configuration fields: Empty list"],
                    vec!["Invalid value epoch for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"],
                ]
            );
            assert_eq!(infos.error_count, 4);
            // the short name of an inner class is ambiguous, as in Kafka
            let ambiguous = validate(&[("transforms", "v"), ("transforms.v.type", "Value")]);
            assert_eq!(
                entry(&ambiguous, "transforms.v.type").value.errors,
                vec!["Invalid value Value for configuration transforms.v.type: Class Value could not be found."]
            );
        }

        #[test]
        fn plugin_listing_and_config_endpoints() {
            let plugins = Plugins::new();
            let all = plugins.list(false);
            let kinds: Vec<&str> = all.iter().map(|p| p.plugin_type.as_str()).collect();
            let first = |k: &str| kinds.iter().position(|x| *x == k).unwrap();
            let last = |k: &str| kinds.iter().rposition(|x| *x == k).unwrap();
            assert!(last("source") < first("transformation"));
            assert!(last("transformation") < first("predicate"));
            assert!(last("predicate") < first("converter"));
            assert_eq!(kinds.iter().filter(|k| **k == "transformation").count(), 26);
            assert_eq!(kinds.iter().filter(|k| **k == "predicate").count(), 3);
            assert!(!plugins
                .list(true)
                .iter()
                .any(|p| p.plugin_type.as_str() == "transformation"));
            let keys = plugins.plugin_config("TimestampRouter").unwrap();
            let names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
            assert_eq!(names, vec!["topic.format", "timestamp.format"]);
            assert_eq!(
                keys[0].default_value.as_deref(),
                Some("${topic}-${timestamp}")
            );
            let cast = plugins
                .plugin_config("org.apache.kafka.connect.transforms.Cast$Value")
                .unwrap();
            assert!(cast[0].required);
            assert_eq!(
                plugins.plugin_config("TopicNameMatches").unwrap()[0].name,
                "pattern"
            );
            assert!(plugins.plugin_config("Filter").unwrap().is_empty());
        }
    }
}
