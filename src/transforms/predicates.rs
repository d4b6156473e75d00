//! The built-in predicates of `org.apache.kafka.connect.transforms.predicates`:
//! `TopicNameMatches`, `HasHeaderKey` and `RecordIsTombstone`.

use crate::connectors::Props;
use std::collections::BTreeMap;

use super::{parse_config, regex_value, required_string, JavaRegex, Predicate};
use crate::config::def::{ConfigDef, Importance, Validator};
use crate::config::ConfigError;
use crate::record::ConnectRecord;

/// `TopicNameMatches`: true when the whole topic name matches `pattern`.
#[derive(Clone, Debug)]
pub struct TopicNameMatches {
    pattern: JavaRegex,
}

impl TopicNameMatches {
    /// Kafka's `TopicNameMatches.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(
            required_string(
                "pattern",
                Importance::Medium,
                "A Java regular expression for matching against the name of a record's topic.",
            )
            .validator(Validator::All(vec![
                Validator::NonEmptyString,
                Validator::Regex,
            ])),
        )
    }

    /// Configures the predicate.
    ///
    /// # Errors
    /// Kafka's messages, e.g. `Invalid value ( for configuration pattern: entry must be a
    /// Java-compatible regular expression: ...`.
    pub fn configure(props: &Props) -> Result<TopicNameMatches, ConfigError> {
        let config = parse_config(&TopicNameMatches::config_def(), props)?;
        let why = "entry must be a Java-compatible regular expression";
        let pattern = regex_value(&config, "pattern", why)?;
        Ok(TopicNameMatches { pattern })
    }
}

impl Predicate for TopicNameMatches {
    fn test(&self, record: &ConnectRecord) -> bool {
        self.pattern.matches(&record.topic)
    }
}

/// `HasHeaderKey`: true when the record has at least one header called `name`.
#[derive(Clone, Debug)]
pub struct HasHeaderKey {
    name: String,
}

impl HasHeaderKey {
    /// Kafka's `HasHeaderKey.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(
            required_string("name", Importance::Medium, "The header name.")
                .validator(Validator::NonEmptyString),
        )
    }

    /// Configures the predicate.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(props: &Props) -> Result<HasHeaderKey, ConfigError> {
        let config = parse_config(&HasHeaderKey::config_def(), props)?;
        Ok(HasHeaderKey {
            name: config.get_string("name").unwrap_or_default(),
        })
    }
}

impl Predicate for HasHeaderKey {
    fn test(&self, record: &ConnectRecord) -> bool {
        record.headers.iter().any(|h| h.key == self.name)
    }
}

/// `RecordIsTombstone`: true when the record's value is null.
#[derive(Clone, Debug, Default)]
pub struct RecordIsTombstone;

impl RecordIsTombstone {
    /// Kafka's `RecordIsTombstone.CONFIG_DEF`: no keys.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
    }

    /// Configures the predicate; it has nothing to configure.
    ///
    /// # Errors
    /// Never.
    pub fn configure(_props: &BTreeMap<String, String>) -> Result<RecordIsTombstone, ConfigError> {
        Ok(RecordIsTombstone)
    }
}

impl Predicate for RecordIsTombstone {
    fn test(&self, record: &ConnectRecord) -> bool {
        record.value.is_null()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::{Schema, Value};
    use crate::record::Header;

    #[test]
    fn topic_name_matches_whole_names() {
        let p = TopicNameMatches::configure(&props(&[("pattern", "my-prefix-.*")])).unwrap();
        assert!(p.test(&record("my-prefix-orders", None, Value::Null)));
        assert!(!p.test(&record("x-my-prefix-orders", None, Value::Null)));
        let exact = TopicNameMatches::configure(&props(&[("pattern", "foo")])).unwrap();
        assert!(!exact.test(&record("foobar", None, Value::Null)));
        assert_eq!(
            TopicNameMatches::configure(&props(&[("pattern", "")])).unwrap_err(),
            "Invalid value  for configuration pattern: String must be non-empty"
        );
        assert_eq!(
            TopicNameMatches::configure(&BTreeMap::new()).unwrap_err(),
            "Missing required configuration \"pattern\" which has no default value."
        );
        assert!(TopicNameMatches::configure(&props(&[("pattern", "[")]))
            .unwrap_err()
            .to_string()
            .starts_with("Invalid value [ for configuration pattern: Invalid regex: "));
    }

    #[test]
    fn has_header_key() {
        let p = HasHeaderKey::configure(&props(&[("name", "trace")])).unwrap();
        let mut r = record("t", None, Value::Null);
        assert!(!p.test(&r));
        r.headers.push(Header {
            key: "trace".into(),
            schema: None,
            value: Value::Null,
        });
        assert!(p.test(&r));
        assert_eq!(
            HasHeaderKey::configure(&props(&[("name", " ")])).unwrap_err(),
            "Invalid value  for configuration name: String must be non-empty"
        );
    }

    #[test]
    fn record_is_tombstone() {
        let p = RecordIsTombstone::configure(&BTreeMap::new()).unwrap();
        assert!(p.test(&record("t", None, Value::Null)));
        assert!(p.test(&record("t", Some(Schema::optional_string()), Value::Null)));
        assert!(!p.test(&record("t", None, Value::from(""))));
        let mut keyed = record("t", None, Value::Null);
        keyed.key = Value::from("k");
        assert!(p.test(&keyed));
        assert!(RecordIsTombstone::config_def().keys().is_empty());
    }
}
