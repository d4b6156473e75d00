//! A connector's transformation chain (Kafka's `TransformationChain`), built from its `transforms` and
//! `predicates` keys and applied record by record.

use std::collections::BTreeMap;

use super::{java_list, Predicate, RecordContext, Transformation};
use crate::config::ConfigError;
use crate::connectors::Props;
use crate::record::ConnectRecord;

/// The transformations and predicates a chain may name, found by Kafka's class names and aliases: the
/// plugin table (`plugins::Plugins`) implements it, as it implements validation's `PluginLookup`.
pub trait TransformLookup {
    /// The full class name of a transformation given by full name or alias; `None` when it names
    /// none (or, for an ambiguous alias, more than one).
    fn resolve_transformation(&self, class_or_alias: &str) -> Option<&'static str>;
    /// The full class name of a predicate given by full name or alias.
    fn resolve_predicate(&self, class_or_alias: &str) -> Option<&'static str>;
    /// Configures a transformation from its own keys (no `transforms.<alias>.` prefix).
    ///
    /// # Errors
    /// `Class <c> could not be found.` for an unknown class, else the transformation's message.
    fn configure_transformation(
        &self,
        class_or_alias: &str,
        props: &Props,
    ) -> Result<Box<dyn Transformation>, ConfigError>;
    /// Configures a predicate from its own keys (no `predicates.<alias>.` prefix).
    ///
    /// # Errors
    /// `Class <c> could not be found.` for an unknown class, else the predicate's message.
    fn configure_predicate(
        &self,
        class_or_alias: &str,
        props: &Props,
    ) -> Result<Box<dyn Predicate>, ConfigError>;
}

/// A failure inside the chain: which transformation failed and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TransformError {
    /// The alias in `transforms`.
    pub alias: String,
    /// The transformation's full class name.
    pub class: String,
    /// Kafka's message.
    pub message: String,
}

/// One step of the chain (Kafka's `TransformationStage`).
#[derive(Debug)]
struct Stage {
    alias: String,
    class: &'static str,
    transformation: Box<dyn Transformation>,
    predicate: Option<(String, usize)>,
    negate: bool,
}

/// A connector's transformation chain, built from its config (`transforms`,
/// `transforms.<a>.type`, `transforms.<a>.predicate`, `transforms.<a>.negate`, `predicates`,
/// `predicates.<p>.type` and each plugin's own keys).
#[derive(Debug, Default)]
pub struct TransformChain {
    stages: Vec<Stage>,
    predicates: Vec<(String, Box<dyn Predicate>)>,
}

/// Kafka's `originalsWithPrefix`.
fn with_prefix(config: &BTreeMap<String, String>, prefix: &str) -> BTreeMap<String, String> {
    config
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(prefix)
                .map(|rest| (rest.to_string(), v.clone()))
        })
        .collect()
}

/// An alias list (`transforms`, `predicates`), with Kafka's duplicate check.
fn alias_list(config: &BTreeMap<String, String>, key: &str) -> Result<Vec<String>, ConfigError> {
    let aliases = config
        .get(key)
        .map(|v| crate::config::def::parse_list(v))
        .unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    if !aliases.iter().all(|a| seen.insert(a)) {
        return Err(crate::config::invalid_value(
            key,
            java_list(&aliases),
            "Duplicate alias provided.",
        )
        .into());
    }
    Ok(aliases)
}

/// The value of `<family>.<alias>.type`, with Kafka's messages when it is missing.
fn type_of<'a>(
    config: &'a BTreeMap<String, String>,
    family: &str,
    alias: &str,
) -> Result<&'a str, ConfigError> {
    let key = format!("{family}.{alias}.type");
    config
        .get(&key)
        .map(|v| crate::config::def::java_trim(v))
        .ok_or_else(|| {
            ConfigError::message(format!(
                "Missing required configuration \"{key}\" which has no default value."
            ))
        })
}

/// The class `<family>.<alias>.type` names, through `resolve`; Kafka's messages when it is missing or
/// unknown.
fn class_of(
    config: &BTreeMap<String, String>,
    family: &str,
    alias: &str,
    resolve: impl Fn(&str) -> Option<&'static str>,
) -> Result<&'static str, ConfigError> {
    let given = type_of(config, family, alias)?;
    resolve(given).ok_or_else(|| {
        crate::config::invalid_value(
            format_args!("{family}.{alias}.type"),
            given,
            format_args!("Class {given} could not be found."),
        )
        .into()
    })
}

impl TransformChain {
    /// Builds the chain a connector config describes, configuring every transformation and
    /// every listed predicate with the classes `lookup` knows.
    ///
    /// # Errors
    /// The first problem found, naming the key (`transforms.a.type`) or the alias and class
    /// (`Transformation 'a' (org.apache...RegexRouter): Missing required configuration "regex"
    /// which has no default value.`).
    pub fn from_config(
        config: &BTreeMap<String, String>,
        lookup: &dyn TransformLookup,
    ) -> Result<TransformChain, ConfigError> {
        let transform_aliases = alias_list(config, crate::config::keys::TRANSFORMS)?;
        let predicate_aliases = alias_list(config, crate::config::keys::PREDICATES)?;

        let mut predicates: Vec<(String, Box<dyn Predicate>)> = Vec::new();
        for alias in &predicate_aliases {
            let class = class_of(config, crate::config::keys::PREDICATES, alias, |given| {
                lookup.resolve_predicate(given)
            })?;
            let props = with_prefix(config, &format!("predicates.{alias}."));
            let predicate = lookup
                .configure_predicate(class, &props)
                .map_err(|e| format!("Predicate '{alias}' ({class}): {e}"))?;
            predicates.push((alias.clone(), predicate));
        }

        let mut stages = Vec::new();
        for alias in &transform_aliases {
            let class = class_of(config, crate::config::keys::TRANSFORMS, alias, |given| {
                lookup.resolve_transformation(given)
            })?;
            let prefix = format!("transforms.{alias}.");
            let mut props = with_prefix(config, &prefix);
            let predicate_alias = props
                .remove("predicate")
                .map(|p| crate::config::def::java_trim(&p).to_string());
            let negate_raw = props.remove("negate");
            if negate_raw.is_some() && predicate_alias.is_none() {
                return Err(format!(
                    "Config '{prefix}negate' was provided but there is no config '{prefix}predicate' defining a predicate to be negated."
                ).into());
            }
            let negate = match negate_raw.as_deref().map(crate::config::def::java_trim) {
                None => false,
                Some(v) if v.eq_ignore_ascii_case("true") => true,
                Some(v) if v.eq_ignore_ascii_case("false") => false,
                Some(v) => {
                    return Err(crate::config::invalid_value(
                        format_args!("{prefix}negate"),
                        v,
                        "Expected value to be either true or false",
                    )
                    .into())
                }
            };
            let transformation = lookup
                .configure_transformation(class, &props)
                .map_err(|e| format!("Transformation '{alias}' ({class}): {e}"))?;
            let predicate = match predicate_alias {
                None => None,
                Some(p) => {
                    let index = predicates.iter().position(|(a, _)| *a == p).ok_or_else(|| {
                        format!(
                            "Transformation '{alias}' ({class}): the predicate '{p}' named by '{prefix}predicate' is not listed in 'predicates'"
                        )
                    })?;
                    Some((p, index))
                }
            };
            stages.push(Stage {
                alias: alias.clone(),
                class,
                transformation,
                predicate,
                negate,
            });
        }
        Ok(TransformChain { stages, predicates })
    }

    /// True when the connector has no transformations.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    #[cfg(test)]
    /// The aliases of the transformations, in order.
    pub fn aliases(&self) -> Vec<&str> {
        self.stages.iter().map(|s| s.alias.as_str()).collect()
    }

    /// Applies each transformation in order; a stage with a predicate runs only when the
    /// predicate matches (or, negated, does not). `Ok(None)` means a transformation dropped the
    /// record, and the later ones did not see it.
    ///
    /// # Errors
    /// The failing transformation's alias, class and message.
    pub fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, TransformError> {
        self.apply_observed(record, ctx, |_| {})
    }

    /// [`TransformChain::apply`], telling `observe` what each stage did with the record (the
    /// step-by-step view of `liteconnect test`). A failing stage is not observed: its error is
    /// returned.
    ///
    /// # Errors
    /// The failing transformation's alias, class and message.
    pub fn apply_observed(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
        mut observe: impl FnMut(Step<'_>),
    ) -> Result<Option<ConnectRecord>, TransformError> {
        let mut current = record;
        for stage in &self.stages {
            let step = |seen| Step {
                alias: &stage.alias,
                class: stage.class,
                predicate: stage.predicate.as_ref().map(|(p, _)| p.as_str()),
                negate: stage.negate,
                seen,
            };
            let run = match &stage.predicate {
                None => true,
                Some((_, index)) => match self.predicates[*index].1.try_test(&current) {
                    Ok(matches) => stage.negate ^ matches,
                    Err(message) => {
                        return Err(TransformError {
                            alias: stage.alias.clone(),
                            class: stage.class.to_string(),
                            message: message.to_string(),
                        })
                    }
                },
            };
            if !run {
                observe(step(StepSeen::Skipped));
                continue;
            }
            match stage.transformation.apply(current, ctx) {
                Ok(Some(next)) => {
                    current = next;
                    observe(step(StepSeen::Applied(&current)));
                }
                Ok(None) => {
                    observe(step(StepSeen::Dropped));
                    return Ok(None);
                }
                Err(message) => {
                    return Err(TransformError {
                        alias: stage.alias.clone(),
                        class: stage.class.to_string(),
                        message: message.to_string(),
                    })
                }
            }
        }
        Ok(Some(current))
    }
}

/// What one stage of a chain did with a record (see [`TransformChain::apply_observed`]).
#[derive(Debug)]
pub struct Step<'a> {
    /// The alias in `transforms`.
    pub alias: &'a str,
    /// The transformation's full class name.
    pub class: &'static str,
    /// The alias of the stage's predicate, if it has one.
    pub predicate: Option<&'a str>,
    /// Whether the predicate is negated.
    pub negate: bool,
    /// What happened.
    pub seen: StepSeen<'a>,
}

/// The outcome of one stage for one record.
#[derive(Debug)]
pub enum StepSeen<'a> {
    /// The predicate said no: the record went past unchanged.
    Skipped,
    /// The transformation gave this record.
    Applied(&'a ConnectRecord),
    /// The transformation dropped the record.
    Dropped,
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::Value;
    use crate::record::Header;

    fn chain(pairs: &[(&str, &str)]) -> Result<TransformChain, ConfigError> {
        TransformChain::from_config(&props(pairs), &crate::plugins::Plugins)
    }

    #[test]
    fn negated_predicate_drops_exactly_the_non_matching_records() {
        let c = chain(&[
            ("transforms", "keepFoo"),
            ("transforms.keepFoo.type", "Filter"),
            ("transforms.keepFoo.predicate", "isFoo"),
            ("transforms.keepFoo.negate", "true"),
            ("predicates", "isFoo"),
            ("predicates.isFoo.type", "TopicNameMatches"),
            ("predicates.isFoo.pattern", "foo.*"),
        ])
        .unwrap();
        let topics = ["foo", "foobar", "bar", "xfoo", "foo-1", "baz"];
        let kept: Vec<String> = topics
            .iter()
            .filter_map(|t| c.apply(record(t, None, Value::Null), &source()).unwrap())
            .map(|r| r.topic)
            .collect();
        assert_eq!(kept, vec!["foo", "foobar", "foo-1"]);

        let plain = chain(&[
            ("transforms", "dropFoo"),
            (
                "transforms.dropFoo.type",
                "org.apache.kafka.connect.transforms.Filter",
            ),
            ("transforms.dropFoo.predicate", "isFoo"),
            ("predicates", "isFoo"),
            ("predicates.isFoo.type", "TopicNameMatches"),
            ("predicates.isFoo.pattern", "foo.*"),
        ])
        .unwrap();
        let kept: Vec<String> = topics
            .iter()
            .filter_map(|t| {
                plain
                    .apply(record(t, None, Value::Null), &source())
                    .unwrap()
            })
            .map(|r| r.topic)
            .collect();
        assert_eq!(kept, vec!["bar", "xfoo", "baz"]);
    }

    #[test]
    fn chain_applies_in_order_and_stops_after_a_drop() {
        let c = chain(&[
            ("transforms", "hoist,route,tomb,insert"),
            (
                "transforms.hoist.type",
                "org.apache.kafka.connect.transforms.HoistField$Value",
            ),
            ("transforms.hoist.field", "line"),
            ("transforms.route.type", "RegexRouter"),
            ("transforms.route.regex", "(.*)-(.*)"),
            ("transforms.route.replacement", "$2"),
            ("transforms.tomb.type", "Filter"),
            ("transforms.tomb.predicate", "hasH"),
            ("transforms.insert.type", "InsertHeader"),
            ("transforms.insert.header", "h"),
            ("transforms.insert.value.literal", "1"),
            ("predicates", "hasH"),
            ("predicates.hasH.type", "HasHeaderKey"),
            ("predicates.hasH.name", "drop-me"),
        ])
        .unwrap();
        assert!(!c.is_empty());
        assert_eq!(c.aliases(), vec!["hoist", "route", "tomb", "insert"]);
        let out = c
            .apply(record("a-b", None, Value::from("hello")), &source())
            .unwrap()
            .unwrap();
        assert_eq!(out.topic, "b");
        assert_eq!(out.value, map(&[("line", Value::from("hello"))]));
        assert_eq!(out.headers.len(), 1);
        assert_eq!(out.headers[0].value, Value::Int8(1));

        let mut marked = record("a-b", None, Value::from("x"));
        marked.headers.push(Header {
            key: "drop-me".into(),
            schema: None,
            value: Value::Null,
        });
        assert_eq!(c.apply(marked, &source()).unwrap(), None);
    }

    #[test]
    fn chain_errors_carry_alias_and_class() {
        let c = chain(&[
            ("transforms", "x"),
            (
                "transforms.x.type",
                "org.apache.kafka.connect.transforms.ExtractField$Value",
            ),
            ("transforms.x.field", "id"),
        ])
        .unwrap();
        let err = c
            .apply(record("t", None, Value::from(5)), &source())
            .unwrap_err();
        assert_eq!(err.alias, "x");
        assert_eq!(
            err.class,
            "org.apache.kafka.connect.transforms.ExtractField$Value"
        );
        assert_eq!(
            err.to_string(),
            "Only Map objects supported in absence of schema for [field extraction], found: java.lang.Integer"
        );
        assert!(
            TransformChain::from_config(&BTreeMap::new(), &crate::plugins::Plugins)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn chain_config_errors_name_alias_and_key() {
        assert_eq!(
            chain(&[("transforms", "a,a")]).unwrap_err(),
            "Invalid value [a, a] for configuration transforms: Duplicate alias provided."
        );
        assert_eq!(
            chain(&[("transforms", "a")]).unwrap_err(),
            "Missing required configuration \"transforms.a.type\" which has no default value."
        );
        assert_eq!(
            chain(&[("transforms", "a"), ("transforms.a.type", "Nope")]).unwrap_err(),
            "Invalid value Nope for configuration transforms.a.type: Class Nope could not be found."
        );
        assert_eq!(
            chain(&[("transforms", "a"), ("transforms.a.type", "RegexRouter"), ("transforms.a.regex", "x")])
                .unwrap_err(),
            "Transformation 'a' (org.apache.kafka.connect.transforms.RegexRouter): Missing required configuration \"replacement\" which has no default value."
        );
        assert_eq!(
            chain(&[("transforms", "a"), ("transforms.a.type", "Filter"), ("transforms.a.negate", "true")])
                .unwrap_err(),
            "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."
        );
        assert!(chain(&[
            ("transforms", "a"),
            ("transforms.a.type", "Filter"),
            ("transforms.a.predicate", "p")
        ])
        .unwrap_err()
        .to_string()
        .contains(
            "the predicate 'p' named by 'transforms.a.predicate' is not listed in 'predicates'"
        ));
        assert_eq!(
            chain(&[("predicates", "p"), ("predicates.p.type", "TopicNameMatches")]).unwrap_err(),
            "Predicate 'p' (org.apache.kafka.connect.transforms.predicates.TopicNameMatches): Missing required configuration \"pattern\" which has no default value."
        );
    }
}
