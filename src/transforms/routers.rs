//! Topic routing and dropping: `RegexRouter`, `TimestampRouter` and `Filter`.

use crate::connectors::Props;
use std::collections::BTreeMap;

use super::datefmt::DateFormat;
use super::{
    key, parse_config, regex_value, required_string, JavaRegex, RecordContext, Transformation,
};
use crate::config::def::{ConfigDef, ConfigType, Importance, Validator};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::record::ConnectRecord;

/// `Filter`: drops every record (normally applied under a predicate).
#[derive(Clone, Debug, Default)]
pub struct Filter;

impl Filter {
    /// Kafka's `Filter.CONFIG_DEF`: no keys.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
    }

    /// Configures the transformation; it has nothing to configure.
    ///
    /// # Errors
    /// Never.
    pub fn configure(_props: &BTreeMap<String, String>) -> Result<Filter, ConfigError> {
        Ok(Filter)
    }
}

impl Transformation for Filter {
    fn apply(
        &self,
        _record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        Ok(None)
    }
}

/// `RegexRouter`: renames the topic when the whole topic name matches `regex`.
#[derive(Clone, Debug)]
pub struct RegexRouter {
    regex: JavaRegex,
    replacement: String,
}

impl RegexRouter {
    /// Kafka's `RegexRouter.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                required_string(
                    "regex",
                    Importance::High,
                    "Regular expression to use for matching.",
                )
                .validator(Validator::Regex),
            )
            .define(required_string(
                "replacement",
                Importance::High,
                "Replacement string.",
            ))
    }

    /// Configures the transformation.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages; `Invalid value <re> for configuration regex: Invalid
    /// regex: <why>` for a pattern the engine cannot compile.
    pub fn configure(props: &Props) -> Result<RegexRouter, ConfigError> {
        let config = parse_config(&RegexRouter::config_def(), props)?;
        let regex = regex_value(&config, "regex", "Invalid regex")?;
        Ok(RegexRouter {
            regex,
            replacement: config.get_string("replacement").unwrap_or_default(),
        })
    }
}

impl Transformation for RegexRouter {
    fn apply(
        &self,
        mut record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        if self.regex.matches(&record.topic) {
            record.topic = self.regex.replace_first(&record.topic, &self.replacement)?;
        }
        Ok(Some(record))
    }
}

/// `TimestampRouter`: renames the topic from a format with `${topic}` and `${timestamp}`.
#[derive(Clone, Debug)]
pub struct TimestampRouter {
    topic_format: String,
    timestamp_format: DateFormat,
}

impl TimestampRouter {
    /// Kafka's `TimestampRouter.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(key(
                "topic.format",
                ConfigType::String,
                super::default("${topic}-${timestamp}"),
                Importance::High,
                "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively.",
            ))
            .define(key(
                "timestamp.format",
                ConfigType::String,
                super::default("yyyyMMdd"),
                Importance::High,
                "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>.",
            ))
    }

    /// Configures the transformation.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages, or the pattern's `IllegalArgumentException` text
    /// (which Kafka only raises on the first record).
    pub fn configure(props: &Props) -> Result<TimestampRouter, ConfigError> {
        let config = parse_config(&TimestampRouter::config_def(), props)?;
        Ok(TimestampRouter {
            topic_format: config.get_string("topic.format").unwrap_or_default(),
            timestamp_format: DateFormat::new(
                &config.get_string("timestamp.format").unwrap_or_default(),
            )?,
        })
    }
}

/// A `ConnectRecord.toString()`-like rendering for Kafka's `Timestamp missing on record: ...`.
fn describe(record: &ConnectRecord, ctx: &RecordContext) -> String {
    let schema = |s: &Option<crate::data::SchemaRef>| {
        s.as_ref().map_or("null".to_string(), |s| s.to_string())
    };
    let headers: Vec<String> = record
        .headers
        .iter()
        .map(|h| {
            format!(
                "ConnectHeader(key={}, value={}, schema={})",
                h.key,
                h.value,
                schema(&h.schema)
            )
        })
        .collect();
    let inner = format!(
        "ConnectRecord{{topic='{}', kafkaPartition={}, key={}, keySchema={}, value={}, valueSchema={}, timestamp=null, headers=ConnectHeaders(headers={})}}",
        record.topic,
        record.kafka_partition.map_or("null".to_string(), |p| p.to_string()),
        record.key,
        schema(&record.key_schema),
        record.value,
        schema(&record.value_schema),
        headers.join(", ")
    );
    match ctx.kafka_offset {
        Some(offset) => {
            format!("SinkRecord{{kafkaOffset={offset}, timestampType=NoTimestampType}} {inner}")
        }
        None => format!("SourceRecord{{sourcePartition=null, sourceOffset=null}} {inner}"),
    }
}

impl Transformation for TimestampRouter {
    fn apply(
        &self,
        mut record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        let Some(ts) = record.timestamp else {
            return Err(format!("Timestamp missing on record: {}", describe(&record, ctx)).into());
        };
        let formatted = self.timestamp_format.format(ts);
        let with_topic = self.topic_format.replace("${topic}", &record.topic);
        record.topic = with_topic.replace("${timestamp}", &formatted);
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::Value;

    #[test]
    fn filter_drops_everything() {
        let f = Filter::configure(&BTreeMap::new()).unwrap();
        assert_eq!(
            f.apply(record("t", None, Value::from(1)), &source())
                .unwrap(),
            None
        );
        assert!(Filter::config_def().keys().is_empty());
    }

    #[test]
    fn regex_router_documented_example() {
        let t = RegexRouter::configure(&props(&[("regex", "(.*)-(.*)"), ("replacement", "$2")]))
            .unwrap();
        assert_eq!(
            apply_ok(&t, record("foo-bar", None, Value::Null)).topic,
            "bar"
        );
        // no full match: unchanged
        assert_eq!(
            apply_ok(&t, record("foobar", None, Value::Null)).topic,
            "foobar"
        );
        let prefix =
            RegexRouter::configure(&props(&[("regex", "(.*)"), ("replacement", "prefix_$1")]))
                .unwrap();
        assert_eq!(
            apply_ok(&prefix, record("orders", None, Value::Null)).topic,
            "prefix_orders"
        );
        let drop_suffix = RegexRouter::configure(&props(&[
            ("regex", "([^.]+)\\.([^.]+)\\.([^.]+)"),
            ("replacement", "$3"),
        ]))
        .unwrap();
        assert_eq!(
            apply_ok(&drop_suffix, record("server.db.table", None, Value::Null)).topic,
            "table"
        );
    }

    #[test]
    fn regex_router_errors() {
        assert_eq!(
            RegexRouter::configure(&props(&[("regex", "(.*")]))
                .unwrap_err()
                .to_string()
                .split(':')
                .next(),
            Some("Invalid value (.* for configuration regex")
        );
        assert_eq!(
            RegexRouter::configure(&props(&[("regex", ".*")])).unwrap_err(),
            "Missing required configuration \"replacement\" which has no default value."
        );
        let t =
            RegexRouter::configure(&props(&[("regex", "(.*)"), ("replacement", "$2")])).unwrap();
        assert_eq!(
            t.apply(record("a", None, Value::Null), &source())
                .unwrap_err(),
            "No group 2"
        );
    }

    #[test]
    fn timestamp_router_default_format() {
        let t = TimestampRouter::configure(&BTreeMap::new()).unwrap();
        let mut r = record("events", None, Value::Null);
        r.timestamp = Some(1_483_369_445_007); // 2017-01-02T15:04:05.007Z
        assert_eq!(apply_ok(&t, r).topic, "events-20170102");
        let custom = TimestampRouter::configure(&props(&[
            ("topic.format", "${timestamp}_${topic}_${topic}"),
            ("timestamp.format", "yyyy-MM-dd'T'HH"),
        ]))
        .unwrap();
        let mut r = record("t$1", None, Value::Null);
        r.timestamp = Some(0);
        assert_eq!(apply_ok(&custom, r).topic, "1970-01-01T00_t$1_t$1");
    }

    #[test]
    fn timestamp_router_errors() {
        let t = TimestampRouter::configure(&BTreeMap::new()).unwrap();
        let err = t
            .apply(record("events", None, Value::Null), &RecordContext::sink(3))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("Timestamp missing on record: SinkRecord{kafkaOffset=3"),
            "{err}"
        );
        assert!(err.contains("topic='events'"), "{err}");
        assert_eq!(
            TimestampRouter::configure(&props(&[("timestamp.format", "yyyyMMddq")])).unwrap_err(),
            "Illegal pattern character 'q'"
        );
    }
}
