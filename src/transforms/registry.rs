//! The transformation and predicate classes, with their config definitions and constructors.

use std::collections::BTreeMap;

use super::{
    cast, extract_field, flatten, headers, hoist_field, insert_field, mask_field, predicates,
    replace_field, routers, set_schema_metadata, timestamp_converter, value_to_key, Predicate,
    Side, Transformation,
};
use crate::config::def::ConfigDef;

type MakeTransform = fn(&BTreeMap<String, String>) -> Result<Box<dyn Transformation>, String>;
type MakePredicate = fn(&BTreeMap<String, String>) -> Result<Box<dyn Predicate>, String>;

/// One transformation class.
struct TransformSpec {
    class: &'static str,
    def: fn() -> ConfigDef,
    make: MakeTransform,
}

/// One predicate class.
struct PredicateSpec {
    class: &'static str,
    def: fn() -> ConfigDef,
    make: MakePredicate,
}

fn boxed<T: Transformation + 'static>(
    r: Result<T, String>,
) -> Result<Box<dyn Transformation>, String> {
    r.map(|t| Box::new(t) as Box<dyn Transformation>)
}

fn boxed_predicate<T: Predicate + 'static>(
    r: Result<T, String>,
) -> Result<Box<dyn Predicate>, String> {
    r.map(|t| Box::new(t) as Box<dyn Predicate>)
}

macro_rules! keyed {
    ($name:literal, $module:ident :: $ty:ident) => {
        [
            TransformSpec {
                class: concat!("org.apache.kafka.connect.transforms.", $name, "$Key"),
                def: $module::$ty::config_def,
                make: |p| boxed($module::$ty::configure(Side::Key, p)),
            },
            TransformSpec {
                class: concat!("org.apache.kafka.connect.transforms.", $name, "$Value"),
                def: $module::$ty::config_def,
                make: |p| boxed($module::$ty::configure(Side::Value, p)),
            },
        ]
    };
}

macro_rules! single {
    ($name:literal, $module:ident :: $ty:ident) => {
        [TransformSpec {
            class: concat!("org.apache.kafka.connect.transforms.", $name),
            def: $module::$ty::config_def,
            make: |p| boxed($module::$ty::configure(p)),
        }]
    };
}

fn transform_specs() -> Vec<TransformSpec> {
    let groups: Vec<Vec<TransformSpec>> = vec![
        keyed!("Cast", cast::Cast).into(),
        single!("DropHeaders", headers::DropHeaders).into(),
        keyed!("ExtractField", extract_field::ExtractField).into(),
        single!("Filter", routers::Filter).into(),
        keyed!("Flatten", flatten::Flatten).into(),
        keyed!("HeaderFrom", headers::HeaderFrom).into(),
        keyed!("HoistField", hoist_field::HoistField).into(),
        keyed!("InsertField", insert_field::InsertField).into(),
        single!("InsertHeader", headers::InsertHeader).into(),
        keyed!("MaskField", mask_field::MaskField).into(),
        single!("RegexRouter", routers::RegexRouter).into(),
        keyed!("ReplaceField", replace_field::ReplaceField).into(),
        keyed!("SetSchemaMetadata", set_schema_metadata::SetSchemaMetadata).into(),
        keyed!(
            "TimestampConverter",
            timestamp_converter::TimestampConverter
        )
        .into(),
        single!("TimestampRouter", routers::TimestampRouter).into(),
        single!("ValueToKey", value_to_key::ValueToKey).into(),
    ];
    let mut specs: Vec<TransformSpec> = groups.into_iter().flatten().collect();
    specs.sort_by(|a, b| a.class.cmp(b.class));
    specs
}

fn predicate_specs() -> Vec<PredicateSpec> {
    vec![
        PredicateSpec {
            class: "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            def: predicates::HasHeaderKey::config_def,
            make: |p| boxed_predicate(predicates::HasHeaderKey::configure(p)),
        },
        PredicateSpec {
            class: "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
            def: predicates::RecordIsTombstone::config_def,
            make: |p| boxed_predicate(predicates::RecordIsTombstone::configure(p)),
        },
        PredicateSpec {
            class: "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            def: predicates::TopicNameMatches::config_def,
            make: |p| boxed_predicate(predicates::TopicNameMatches::configure(p)),
        },
    ]
}

/// Java's `getSimpleName()`: the part after the last `.` or `$`.
fn simple_name(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}

/// Kafka's alias resolution over one plugin kind: the full name, else an unambiguous simple
/// name or simple name without `suffix`.
fn resolve<'a>(classes: &[&'a str], name: &str, suffix: &str) -> Option<&'a str> {
    let name = crate::config::def::java_trim(name);
    if let Some(c) = classes.iter().find(|c| **c == name) {
        return Some(c);
    }
    // Kafka builds one alias table over every plugin and drops aliases claimed twice.
    let mut aliases: BTreeMap<&str, Vec<&'a str>> = BTreeMap::new();
    for class in classes {
        let simple = simple_name(class);
        let mut names = vec![simple];
        if let Some(pruned) = simple.strip_suffix(suffix).filter(|p| !p.is_empty()) {
            names.push(pruned);
        }
        for alias in names {
            let entry = aliases.entry(alias).or_default();
            if !entry.contains(class) {
                entry.push(class);
            }
        }
    }
    match aliases.get(name).map(Vec::as_slice) {
        Some([one]) => Some(one),
        _ => None,
    }
}

/// Full class names of every transformation, sorted.
pub fn transformation_classes() -> Vec<String> {
    transform_specs()
        .iter()
        .map(|s| s.class.to_string())
        .collect()
}

/// Full class names of every predicate, sorted.
pub fn predicate_classes() -> Vec<String> {
    predicate_specs()
        .iter()
        .map(|s| s.class.to_string())
        .collect()
}

/// The full class name of a transformation given by full name or alias.
pub fn resolve_transformation(class_or_alias: &str) -> Option<&'static str> {
    let specs = transform_specs();
    let classes: Vec<&'static str> = specs.iter().map(|s| s.class).collect();
    resolve(&classes, class_or_alias, "Transformation")
}

/// The full class name of a predicate given by full name or alias.
pub fn resolve_predicate(class_or_alias: &str) -> Option<&'static str> {
    let specs = predicate_specs();
    let classes: Vec<&'static str> = specs.iter().map(|s| s.class).collect();
    resolve(&classes, class_or_alias, "Predicate")
}

/// The config definition of a transformation (its own keys only).
pub fn transformation_def(class_or_alias: &str) -> Option<ConfigDef> {
    let class = resolve_transformation(class_or_alias)?;
    transform_specs()
        .into_iter()
        .find(|s| s.class == class)
        .map(|s| (s.def)())
}

/// The config definition of a predicate.
pub fn predicate_def(class_or_alias: &str) -> Option<ConfigDef> {
    let class = resolve_predicate(class_or_alias)?;
    predicate_specs()
        .into_iter()
        .find(|s| s.class == class)
        .map(|s| (s.def)())
}

/// Configures a transformation from its own keys (no `transforms.<alias>.` prefix).
///
/// # Errors
/// `Class <c> could not be found.` for an unknown class, else the transformation's message.
pub fn configure_transformation(
    class_or_alias: &str,
    props: &BTreeMap<String, String>,
) -> Result<Box<dyn Transformation>, String> {
    let class = resolve_transformation(class_or_alias)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    let spec = transform_specs()
        .into_iter()
        .find(|s| s.class == class)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    (spec.make)(props)
}

/// Configures a predicate from its own keys.
///
/// # Errors
/// `Class <c> could not be found.` for an unknown class, else the predicate's message.
pub fn configure_predicate(
    class_or_alias: &str,
    props: &BTreeMap<String, String>,
) -> Result<Box<dyn Predicate>, String> {
    let class = resolve_predicate(class_or_alias)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    let spec = predicate_specs()
        .into_iter()
        .find(|s| s.class == class)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    (spec.make)(props)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                .configs
                .iter()
                .find(|c| c.value.name == name)
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
            assert_eq!(
                entry(&infos, "transforms.bad.type").value.errors,
                vec!["Invalid value com.example.Nope for configuration transforms.bad.type: Class com.example.Nope could not be found."]
            );
            assert_eq!(
                entry(&infos, "transforms.cast.spec").value.errors,
                vec!["Invalid value [a:bytes] for configuration spec: Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"]
            );
            assert_eq!(
                entry(&infos, "transforms.mask.fields").value.errors,
                vec!["Invalid value [] for configuration fields: Empty list"]
            );
            assert_eq!(
                entry(&infos, "transforms.conv.target.type").value.errors,
                vec!["Invalid value epoch for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"]
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
                .any(|p| p.plugin_type == "transformation"));
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
