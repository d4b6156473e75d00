//! The framework's own connector configuration (Kafka's `ConnectorConfig`,
//! `SinkConnectorConfig`, `SourceConnectorConfig`) and full connector validation, as
//! `AbstractHerder.validateConnectorConfig` performs it.
//!
//! A connector config mixes keys from several owners: the framework (`name`, `tasks.max`,
//! `errors.*`, …), the connector plugin, every transformation and predicate named in
//! `transforms`/`predicates` (under `transforms.<alias>.`), and the converters (under
//! `key.converter.` etc.). Kafka validates all of them in one pass and answers with one
//! `ConfigInfos`; create, update and patch refuse a config whose answer has errors. Tools
//! written against Kafka Connect read that answer, so the order of entries and groups and the
//! way errors are counted follow Kafka's code rather than anything tidier.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::def::{
    java_hash_order, java_trim, key_info, key_info_prefixed, parse_list, ConfigDef, ConfigInfo,
    ConfigInfos, ConfigKey, ConfigKeyInfo, ConfigType, DefaultValue, Importance, ValidatedValue,
    Validator, Width,
};

/// Whether a connector produces records into Kafka or consumes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectorType {
    /// A source connector.
    Source,
    /// A sink connector.
    Sink,
}

impl ConnectorType {
    /// The lower-case name used on the wire (`"source"`, `"sink"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorType::Source => "source",
            ConnectorType::Sink => "sink",
        }
    }
}

/// Key names and groups of the framework's connector config, for code that reads them.
pub mod keys {
    /// `name`.
    pub const NAME: &str = "name";
    /// `connector.class`.
    pub const CONNECTOR_CLASS: &str = "connector.class";
    /// `tasks.max`.
    pub const TASKS_MAX: &str = "tasks.max";
    /// `tasks.max.enforce`.
    pub const TASKS_MAX_ENFORCE: &str = "tasks.max.enforce";
    /// `key.converter`.
    pub const KEY_CONVERTER: &str = "key.converter";
    /// `value.converter`.
    pub const VALUE_CONVERTER: &str = "value.converter";
    /// `header.converter`.
    pub const HEADER_CONVERTER: &str = "header.converter";
    /// `transforms`.
    pub const TRANSFORMS: &str = "transforms";
    /// `predicates`.
    pub const PREDICATES: &str = "predicates";
    /// `config.action.reload`.
    pub const CONFIG_ACTION_RELOAD: &str = "config.action.reload";
    /// `errors.retry.timeout`.
    pub const ERRORS_RETRY_TIMEOUT: &str = "errors.retry.timeout";
    /// `errors.retry.delay.max.ms`.
    pub const ERRORS_RETRY_DELAY_MAX_MS: &str = "errors.retry.delay.max.ms";
    /// `errors.tolerance`.
    pub const ERRORS_TOLERANCE: &str = "errors.tolerance";
    /// `errors.log.enable`.
    pub const ERRORS_LOG_ENABLE: &str = "errors.log.enable";
    /// `errors.log.include.messages`.
    pub const ERRORS_LOG_INCLUDE_MESSAGES: &str = "errors.log.include.messages";
    /// `topics` (sink).
    pub const TOPICS: &str = "topics";
    /// `topics.regex` (sink).
    pub const TOPICS_REGEX: &str = "topics.regex";
    /// `errors.deadletterqueue.topic.name` (sink).
    pub const DLQ_TOPIC_NAME: &str = "errors.deadletterqueue.topic.name";
    /// `errors.deadletterqueue.topic.replication.factor` (sink).
    pub const DLQ_TOPIC_REPLICATION_FACTOR: &str =
        "errors.deadletterqueue.topic.replication.factor";
    /// `errors.deadletterqueue.context.headers.enable` (sink).
    pub const DLQ_CONTEXT_HEADERS_ENABLE: &str = "errors.deadletterqueue.context.headers.enable";
    /// `topic.creation.groups` (source).
    pub const TOPIC_CREATION_GROUPS: &str = "topic.creation.groups";
    /// `exactly.once.support` (source).
    pub const EXACTLY_ONCE_SUPPORT: &str = "exactly.once.support";
    /// `transaction.boundary` (source).
    pub const TRANSACTION_BOUNDARY: &str = "transaction.boundary";
    /// `transaction.boundary.interval.ms` (source).
    pub const TRANSACTION_BOUNDARY_INTERVAL_MS: &str = "transaction.boundary.interval.ms";
    /// `offsets.storage.topic` (source).
    pub const OFFSETS_STORAGE_TOPIC: &str = "offsets.storage.topic";
    /// The implicit per-transform key naming its predicate.
    pub const TRANSFORM_PREDICATE: &str = "predicate";
    /// The implicit per-transform key negating its predicate.
    pub const TRANSFORM_NEGATE: &str = "negate";
}

const COMMON_GROUP: &str = "Common";
const TRANSFORMS_GROUP: &str = "Transforms";
const PREDICATES_GROUP: &str = "Predicates";
const ERROR_GROUP: &str = "Error Handling";
const TOPIC_CREATION_GROUP: &str = "Topic Creation";
const EXACTLY_ONCE_SUPPORT_GROUP: &str = "Exactly Once Support";
const OFFSETS_TOPIC_GROUP: &str = "offsets.topic";

const NAME_DOC: &str = "Globally unique name to use for this connector.";
const CONNECTOR_CLASS_DOC: &str = "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter";
const TASKS_MAX_DOC: &str = "Maximum number of tasks to use for this connector.";
const TASKS_MAX_ENFORCE_DOC: &str = "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.";
const KEY_CONVERTER_DOC: &str = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.";
const VALUE_CONVERTER_DOC: &str = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.";
const HEADER_CONVERTER_DOC: &str = "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.";
const TRANSFORMS_DOC: &str = "Aliases for the transformations to be applied to records.";
const PREDICATES_DOC: &str = "Aliases for the predicates used by transformations.";
const CONFIG_RELOAD_ACTION_DOC: &str = "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future.";
const ERRORS_RETRY_TIMEOUT_DOC: &str = "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.";
const ERRORS_RETRY_MAX_DELAY_DOC: &str = "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.";
const ERRORS_TOLERANCE_DOC: &str = "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.";
const ERRORS_LOG_ENABLE_DOC: &str = "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.";
const ERRORS_LOG_INCLUDE_MESSAGES_DOC: &str = "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.";

const TOPICS_DOC: &str = "List of topics to consume, separated by commas";
const TOPICS_REGEX_DOC: &str = "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified.";
const DLQ_TOPIC_NAME_DOC: &str = "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.";
const DLQ_TOPIC_REPLICATION_FACTOR_DOC: &str =
    "Replication factor used to create the dead letter queue topic when it doesn't already exist.";
const DLQ_CONTEXT_HEADERS_ENABLE_DOC: &str = "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>";

const TOPIC_CREATION_GROUPS_DOC: &str =
    "Groups of configurations for topics created by source connectors";
const EXACTLY_ONCE_SUPPORT_DOC: &str = "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.";
const TRANSACTION_BOUNDARY_DOC: &str = "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.";
const TRANSACTION_BOUNDARY_INTERVAL_DOC: &str = "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.";
const OFFSETS_TOPIC_DOC: &str = "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.";

/// Kafka's message for a key supplied as JSON `null`.
pub const NULL_VALUE_MESSAGE: &str = "Null value can not be supplied as the configuration value.";

fn value(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_owned())
}

/// Kafka's `ConnectorConfig.configDef()`: the keys every connector has.
fn base_config_def() -> ConfigDef {
    use ConfigType::{Boolean, Class, Int, List, Long, String};
    ConfigDef::new()
        .define(
            ConfigKey::new(
                keys::NAME,
                String,
                DefaultValue::Required,
                Importance::High,
                NAME_DOC,
            )
            .validator(Validator::NonEmptyStringWithoutControlChars)
            .group(COMMON_GROUP, 1)
            .width(Width::Medium)
            .display_name("Connector name"),
        )
        .define(
            ConfigKey::new(
                keys::CONNECTOR_CLASS,
                String,
                DefaultValue::Required,
                Importance::High,
                CONNECTOR_CLASS_DOC,
            )
            .group(COMMON_GROUP, 2)
            .width(Width::Long)
            .display_name("Connector class"),
        )
        .define(
            ConfigKey::new(
                keys::TASKS_MAX,
                Int,
                value("1"),
                Importance::High,
                TASKS_MAX_DOC,
            )
            .validator(Validator::AtLeast(1.0))
            .group(COMMON_GROUP, 3)
            .width(Width::Short)
            .display_name("Tasks max"),
        )
        .define(
            ConfigKey::new(
                keys::TASKS_MAX_ENFORCE,
                Boolean,
                value("true"),
                Importance::Low,
                TASKS_MAX_ENFORCE_DOC,
            )
            .group(COMMON_GROUP, 4)
            .width(Width::Short)
            .display_name("Enforce tasks max"),
        )
        .define(
            ConfigKey::new(
                keys::KEY_CONVERTER,
                Class,
                DefaultValue::Null,
                Importance::Low,
                KEY_CONVERTER_DOC,
            )
            .group(COMMON_GROUP, 5)
            .width(Width::Short)
            .display_name("Key converter class"),
        )
        .define(
            ConfigKey::new(
                keys::VALUE_CONVERTER,
                Class,
                DefaultValue::Null,
                Importance::Low,
                VALUE_CONVERTER_DOC,
            )
            .group(COMMON_GROUP, 6)
            .width(Width::Short)
            .display_name("Value converter class"),
        )
        .define(
            ConfigKey::new(
                keys::HEADER_CONVERTER,
                Class,
                DefaultValue::Null,
                Importance::Low,
                HEADER_CONVERTER_DOC,
            )
            .group(COMMON_GROUP, 7)
            .width(Width::Short)
            .display_name("Header converter class"),
        )
        .define(
            ConfigKey::new(
                keys::TRANSFORMS,
                List,
                value(""),
                Importance::Low,
                TRANSFORMS_DOC,
            )
            .validator(Validator::UniqueList)
            .group(TRANSFORMS_GROUP, 8)
            .width(Width::Long)
            .display_name("Transforms"),
        )
        .define(
            ConfigKey::new(
                keys::PREDICATES,
                List,
                value(""),
                Importance::Low,
                PREDICATES_DOC,
            )
            .validator(Validator::UniqueList)
            .group(PREDICATES_GROUP, 9)
            .width(Width::Long)
            .display_name("Predicates"),
        )
        .define(
            ConfigKey::new(
                keys::CONFIG_ACTION_RELOAD,
                String,
                value("restart"),
                Importance::Low,
                CONFIG_RELOAD_ACTION_DOC,
            )
            .validator(Validator::OneOf(vec!["none", "restart"]))
            .group(COMMON_GROUP, 10)
            .width(Width::Medium)
            .display_name("Reload Action"),
        )
        .define(
            ConfigKey::new(
                keys::ERRORS_RETRY_TIMEOUT,
                Long,
                value("0"),
                Importance::Medium,
                ERRORS_RETRY_TIMEOUT_DOC,
            )
            .group(ERROR_GROUP, 1)
            .width(Width::Medium)
            .display_name("Retry Timeout for Errors"),
        )
        .define(
            ConfigKey::new(
                keys::ERRORS_RETRY_DELAY_MAX_MS,
                Long,
                value("60000"),
                Importance::Medium,
                ERRORS_RETRY_MAX_DELAY_DOC,
            )
            .group(ERROR_GROUP, 2)
            .width(Width::Medium)
            .display_name("Maximum Delay Between Retries for Errors"),
        )
        .define(
            ConfigKey::new(
                keys::ERRORS_TOLERANCE,
                String,
                value("none"),
                Importance::Medium,
                ERRORS_TOLERANCE_DOC,
            )
            .validator(Validator::OneOf(vec!["none", "all"]))
            .group(ERROR_GROUP, 3)
            .width(Width::Short)
            .display_name("Error Tolerance"),
        )
        .define(
            ConfigKey::new(
                keys::ERRORS_LOG_ENABLE,
                Boolean,
                value("false"),
                Importance::Medium,
                ERRORS_LOG_ENABLE_DOC,
            )
            .group(ERROR_GROUP, 4)
            .width(Width::Short)
            .display_name("Log Errors"),
        )
        .define(
            ConfigKey::new(
                keys::ERRORS_LOG_INCLUDE_MESSAGES,
                Boolean,
                value("false"),
                Importance::Medium,
                ERRORS_LOG_INCLUDE_MESSAGES_DOC,
            )
            .group(ERROR_GROUP, 5)
            .width(Width::Short)
            .display_name("Log Error Details"),
        )
}

/// Kafka's `SinkConnectorConfig` additions.
fn sink_keys(def: ConfigDef) -> ConfigDef {
    def.define(
        ConfigKey::new(
            keys::TOPICS,
            ConfigType::List,
            value(""),
            Importance::High,
            TOPICS_DOC,
        )
        .group(COMMON_GROUP, 4)
        .width(Width::Long)
        .display_name("Topics"),
    )
    .define(
        ConfigKey::new(
            keys::TOPICS_REGEX,
            ConfigType::String,
            value(""),
            Importance::High,
            TOPICS_REGEX_DOC,
        )
        .validator(Validator::Regex)
        .group(COMMON_GROUP, 4)
        .width(Width::Long)
        .display_name("Topics regex"),
    )
    .define(
        ConfigKey::new(
            keys::DLQ_TOPIC_NAME,
            ConfigType::String,
            value(""),
            Importance::Medium,
            DLQ_TOPIC_NAME_DOC,
        )
        .group(ERROR_GROUP, 6)
        .width(Width::Medium)
        .display_name("Dead Letter Queue Topic Name"),
    )
    .define(
        ConfigKey::new(
            keys::DLQ_TOPIC_REPLICATION_FACTOR,
            ConfigType::Short,
            value("3"),
            Importance::Medium,
            DLQ_TOPIC_REPLICATION_FACTOR_DOC,
        )
        .group(ERROR_GROUP, 7)
        .width(Width::Medium)
        .display_name("Dead Letter Queue Topic Replication Factor"),
    )
    .define(
        ConfigKey::new(
            keys::DLQ_CONTEXT_HEADERS_ENABLE,
            ConfigType::Boolean,
            value("false"),
            Importance::Medium,
            DLQ_CONTEXT_HEADERS_ENABLE_DOC,
        )
        .group(ERROR_GROUP, 8)
        .width(Width::Medium)
        .display_name("Enable Error Context Headers"),
    )
}

/// Kafka's `SourceConnectorConfig` additions. Topic creation keys (`topic.creation.default.*`)
/// are not part of it: Kafka only adds them when building a running connector's config, never
/// when validating.
fn source_keys(def: ConfigDef) -> ConfigDef {
    def.define(
        ConfigKey::new(
            keys::TOPIC_CREATION_GROUPS,
            ConfigType::List,
            value(""),
            Importance::Low,
            TOPIC_CREATION_GROUPS_DOC,
        )
        .validator(Validator::UniqueList)
        .group(TOPIC_CREATION_GROUP, 1)
        .width(Width::Long)
        .display_name("Topic Creation Groups"),
    )
    .define(
        ConfigKey::new(
            keys::EXACTLY_ONCE_SUPPORT,
            ConfigType::String,
            value("requested"),
            Importance::Medium,
            EXACTLY_ONCE_SUPPORT_DOC,
        )
        .validator(Validator::OneOfCaseInsensitive(vec![
            "requested",
            "required",
        ]))
        .group(EXACTLY_ONCE_SUPPORT_GROUP, 2)
        .width(Width::Short)
        .display_name("Exactly once support"),
    )
    .define(
        ConfigKey::new(
            keys::TRANSACTION_BOUNDARY,
            ConfigType::String,
            value("poll"),
            Importance::Medium,
            TRANSACTION_BOUNDARY_DOC,
        )
        .validator(Validator::OneOfCaseInsensitive(vec![
            "poll",
            "interval",
            "connector",
        ]))
        .group(EXACTLY_ONCE_SUPPORT_GROUP, 3)
        .width(Width::Short)
        .display_name("Transaction Boundary"),
    )
    .define(
        ConfigKey::new(
            keys::TRANSACTION_BOUNDARY_INTERVAL_MS,
            ConfigType::Long,
            DefaultValue::Null,
            Importance::Low,
            TRANSACTION_BOUNDARY_INTERVAL_DOC,
        )
        .validator(Validator::NullOr(Box::new(Validator::AtLeast(0.0))))
        .group(EXACTLY_ONCE_SUPPORT_GROUP, 4)
        .width(Width::Short)
        .display_name("Transaction boundary interval"),
    )
    .define(
        ConfigKey::new(
            keys::OFFSETS_STORAGE_TOPIC,
            ConfigType::String,
            DefaultValue::Null,
            Importance::Low,
            OFFSETS_TOPIC_DOC,
        )
        .validator(Validator::NonEmptyString)
        .group(OFFSETS_TOPIC_GROUP, 1)
        .width(Width::Long)
        .display_name("Offsets topic"),
    )
}

/// The framework keys of a connector of the given kind, in Kafka's order, with Kafka's
/// groups, orders, widths and display names: `ConnectorConfig` plus the sink or source
/// additions.
pub fn connector_config_def(kind: ConnectorType) -> ConfigDef {
    match kind {
        ConnectorType::Sink => sink_keys(base_config_def()),
        ConnectorType::Source => source_keys(base_config_def()),
    }
}

/// What validation needs to know about the other plugins installed (transforms, predicates,
/// converters). Class names may be full names or aliases; the implementation resolves them.
pub trait PluginLookup {
    /// The config definition of a transformation class; `None` when no such transformation.
    fn transformation_def(&self, class: &str) -> Option<ConfigDef>;
    /// The config definition of a predicate class; `None` when no such predicate.
    fn predicate_def(&self, class: &str) -> Option<ConfigDef>;
    /// Full class names of every transformation (recommended values for `transforms.<a>.type`).
    fn transformation_classes(&self) -> Vec<String>;
    /// Full class names of every predicate (recommended values for `predicates.<p>.type`).
    fn predicate_classes(&self) -> Vec<String>;
    /// The config definition of a converter class; `None` when it is not a Converter.
    fn converter_def(&self, class: &str) -> Option<ConfigDef>;
    /// The config definition of a header converter class; `None` when it is not one.
    fn header_converter_def(&self, class: &str) -> Option<ConfigDef>;
    /// The full class name of a class given by name or alias. Kafka shows CLASS values by
    /// their full name (an alias in `transforms.a.type` comes back as the class it stands
    /// for); the default keeps the name as given.
    fn class_name(&self, class: &str) -> String {
        class.to_owned()
    }
}

/// Which plugin kind a CLASS key must name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PluginKind {
    Transformation,
    Predicate,
    Converter,
    HeaderConverter,
}

/// The two alias lists (`transforms`, `predicates`) work alike; this is what differs
/// (Kafka's `EnrichablePlugin` subclasses).
struct AliasFamily {
    config: &'static str,
    group: &'static str,
    kind_lower: &'static str,
    kind_title: &'static str,
    plugin_kind: PluginKind,
}

const TRANSFORM_FAMILY: AliasFamily = AliasFamily {
    config: keys::TRANSFORMS,
    group: TRANSFORMS_GROUP,
    kind_lower: "transformation",
    kind_title: "Transformation",
    plugin_kind: PluginKind::Transformation,
};

const PREDICATE_FAMILY: AliasFamily = AliasFamily {
    config: keys::PREDICATES,
    group: PREDICATES_GROUP,
    kind_lower: "predicate",
    kind_title: "Predicate",
    plugin_kind: PluginKind::Predicate,
};

/// The keys every transformation has implicitly (they mask an SMT's own keys of that name).
fn implicit_transform_keys() -> ConfigDef {
    ConfigDef::new()
        .define(ConfigKey::new(
            keys::TRANSFORM_PREDICATE,
            ConfigType::String,
            DefaultValue::Null,
            Importance::Medium,
            "The alias of a predicate used to determine whether to apply this transformation.",
        ))
        .define(ConfigKey::new(
            keys::TRANSFORM_NEGATE,
            ConfigType::Boolean,
            value("false"),
            Importance::Medium,
            "Whether the configured predicate should be negated.",
        ))
}

/// Raw value of a key, treating JSON null like absence.
fn raw<'a>(config: &'a BTreeMap<String, Option<String>>, key: &str) -> Option<&'a str> {
    config.get(key).and_then(|v| v.as_deref())
}

/// Kafka's `ConnectorConfig.enrich`: adds `<family>.<alias>.type` for every alias, and the
/// plugin's own keys under `<family>.<alias>.` when its class is known. Returns the aliases.
fn enrich(
    def: &mut ConfigDef,
    family: &AliasFamily,
    config: &BTreeMap<String, Option<String>>,
    plugins: &dyn PluginLookup,
    class_keys: &mut HashMap<String, PluginKind>,
) -> Vec<String> {
    let Some(list) = raw(config, family.config) else {
        return Vec::new();
    };
    let mut aliases: Vec<String> = Vec::new();
    for alias in parse_list(list) {
        if !aliases.contains(&alias) {
            aliases.push(alias);
        }
    }
    let recommended = match family.plugin_kind {
        PluginKind::Transformation => plugins.transformation_classes(),
        _ => plugins.predicate_classes(),
    };
    for alias in &aliases {
        let prefix = format!("{}.{alias}.", family.config);
        let group = format!("{}: {alias}", family.group);
        let type_key = format!("{prefix}type");
        def.add(
            ConfigKey::new(
                type_key.clone(),
                ConfigType::Class,
                DefaultValue::Required,
                Importance::High,
                format!("Class for the '{alias}' {}.", family.kind_lower),
            )
            .group(group.clone(), 0)
            .width(Width::Long)
            .display_name(format!("{} type for {alias}", family.kind_title))
            .recommended(recommended.clone()),
        );
        class_keys.insert(type_key.clone(), family.plugin_kind);

        let Some(class) = raw(config, &type_key).map(java_trim) else {
            continue;
        };
        let plugin_def = match family.plugin_kind {
            PluginKind::Transformation => plugins.transformation_def(class),
            _ => plugins.predicate_def(class),
        };
        let Some(plugin_def) = plugin_def else {
            continue;
        };
        let mut child = if family.plugin_kind == PluginKind::Transformation {
            implicit_transform_keys()
        } else {
            ConfigDef::new()
        };
        for key in plugin_def.keys() {
            let masked = family.plugin_kind == PluginKind::Transformation
                && (key.name == keys::TRANSFORM_PREDICATE || key.name == keys::TRANSFORM_NEGATE);
            if !masked {
                child.add(key.clone());
            }
        }
        def.embed(&prefix, &group, 1, &child);
    }
    aliases
}

/// Kafka's `SinkConnectorConfig.validate`: the rules that span `topics`, `topics.regex` and
/// the dead letter queue topic.
fn validate_sink_topics(config: &BTreeMap<String, Option<String>>, values: &mut [ValidatedValue]) {
    let topics = raw(config, keys::TOPICS);
    let topics_regex = raw(config, keys::TOPICS_REGEX);
    let dlq_topic = java_trim(raw(config, keys::DLQ_TOPIC_NAME).unwrap_or(""));
    let is_blank = |s: Option<&str>| s.is_none_or(|s| java_trim(s).is_empty());
    let has_topics = !is_blank(topics);
    let has_regex = !is_blank(topics_regex);

    let mut add_error = |name: &str, message: String| {
        if let Some(v) = values.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        }
    };
    if has_topics && has_regex {
        let message = "topics and topics.regex are mutually exclusive options, but both are set.";
        add_error(keys::TOPICS, message.to_owned());
        add_error(keys::TOPICS_REGEX, message.to_owned());
    }
    if !has_topics && !has_regex {
        let message = "Must configure one of topics or topics.regex";
        add_error(keys::TOPICS, message.to_owned());
        add_error(keys::TOPICS_REGEX, message.to_owned());
    }
    if dlq_topic.is_empty() {
        return;
    }
    if let Some(topics) = topics.filter(|_| has_topics) {
        let mut listed: Vec<String> = Vec::new();
        for topic in parse_list(topics) {
            if !topic.is_empty() && !listed.contains(&topic) {
                listed.push(topic);
            }
        }
        if listed.iter().any(|t| t == dlq_topic) {
            add_error(
                keys::TOPICS,
                format!(
                    "The DLQ topic '{dlq_topic}' may not be included in the list of topics ('topics=[{}]') consumed by the connector",
                    listed.join(", ")
                ),
            );
        }
    }
    if let Some(pattern) = topics_regex.filter(|_| has_regex) {
        // Java's `matcher(..).matches()` is a whole-string match. A pattern the regex crate
        // cannot compile was already reported by the key's validator (or is Java-only syntax).
        if let Ok(re) = regex::Regex::new(&format!("^(?:{pattern})$")) {
            if re.is_match(dlq_topic) {
                add_error(
                    keys::TOPICS_REGEX,
                    format!(
                        "The DLQ topic '{dlq_topic}' may not be matched by the regex for the topics ('topics.regex={pattern}') consumed by the connector"
                    ),
                );
            }
        }
    }
}

/// One section of a validation answer before sections are merged (Kafka merges the
/// connector's section with one per converter).
struct Section {
    error_count: usize,
    groups: Vec<String>,
    configs: Vec<ConfigInfo>,
}

/// Kafka's `validateConverterConfig` + `prefixedConfigInfos`: validates a converter's own keys
/// against the `<prop>.`-prefixed entries, reporting them under prefixed names. Errors are
/// counted per key here, not per message, as Kafka does.
fn validate_converter(
    config: &BTreeMap<String, Option<String>>,
    prop: &str,
    converter_type: &str,
    class_value: Option<&ValidatedValue>,
    plugins: &dyn PluginLookup,
) -> Option<Section> {
    let class = java_trim(raw(config, prop)?);
    if class_value.is_none_or(|v| !v.errors.is_empty()) {
        return None;
    }
    let def = if prop == keys::HEADER_CONVERTER {
        plugins.header_converter_def(class)?
    } else {
        plugins.converter_def(class)?
    };
    let prefix = format!("{prop}.");
    let mut converter_config: BTreeMap<String, Option<String>> = config
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(&prefix)
                .map(|rest| (rest.to_owned(), v.clone()))
        })
        .collect();
    // Java's `putIfAbsent` also replaces a null value.
    let converter_type_entry = converter_config
        .entry("converter.type".to_owned())
        .or_insert(None);
    if converter_type_entry.is_none() {
        *converter_type_entry = Some(converter_type.to_owned());
    }

    let values = def.validate_values(&converter_config, &|_, c| Some(c.to_owned()));
    // Kafka collects these results in a HashMap; keep its iteration order.
    let ordered = java_hash_order(values.into_iter().map(|v| (v.name.clone(), v)).collect());
    let mut section = Section {
        error_count: 0,
        groups: Vec::new(),
        configs: Vec::new(),
    };
    for (name, value) in ordered {
        let key = def.get(&name);
        if let Some(group) = key.and_then(|k| k.group.as_ref()) {
            if !section.groups.contains(group) {
                section.groups.push(group.clone());
            }
        }
        if !value.errors.is_empty() {
            section.error_count += 1;
        }
        section.configs.push(ConfigInfo {
            definition: key.map(|k| key_info_prefixed(k, &prefix)),
            value: value.info_named(format!("{prefix}{name}")),
        });
    }
    Some(section)
}

/// Validates a full connector config the way Kafka's `AbstractHerder.validateConnectorConfig`
/// does, and builds the `ConfigInfos` answer.
///
/// `connector_def` is the connector plugin's own definition and `connector_errors` any extra
/// `(key, message)` pairs its own multi-key validation found. `config` values of `None` are
/// keys sent as JSON `null`, which are always an error.
///
/// What the answer holds, in Kafka's order:
/// * entries without a definition first (keys sent as `null` that nobody defines), then one
///   entry per defined key: framework keys, `transforms.<a>.*` and `predicates.<p>.*` keys,
///   then the connector's keys (a connector key redefining a framework key takes its place);
/// * then the header, key and value converters' own keys (`key.converter.schemas.enable`),
///   when those converters are set on the connector and valid;
/// * `groups`: framework groups, per-alias groups, the connector's groups, converter groups;
/// * `error_count`: every message in the connector section, plus one per converter key in
///   error.
///
/// Deliberate difference: a connector key sent as `null` keeps its `Null value …` error
/// (Kafka loses it when the connector's own result for that key replaces the framework's).
/// Client overrides (`producer.override.*` …) are not validated here: only the Kafka connectors have
/// clients, and they check their own security settings (through `connector_errors`).
pub fn validate_connector_config(
    connector_class_as_given: &str,
    kind: ConnectorType,
    connector_def: &ConfigDef,
    connector_errors: Vec<(String, String)>,
    config: &BTreeMap<String, Option<String>>,
    plugins: &dyn PluginLookup,
) -> ConfigInfos {
    // The framework definition, enriched with one group of keys per alias.
    let mut enriched = connector_config_def(kind);
    let mut class_keys: HashMap<String, PluginKind> = HashMap::from([
        (keys::KEY_CONVERTER.to_owned(), PluginKind::Converter),
        (keys::VALUE_CONVERTER.to_owned(), PluginKind::Converter),
        (
            keys::HEADER_CONVERTER.to_owned(),
            PluginKind::HeaderConverter,
        ),
    ]);
    let transform_aliases = enrich(
        &mut enriched,
        &TRANSFORM_FAMILY,
        config,
        plugins,
        &mut class_keys,
    );
    enrich(
        &mut enriched,
        &PREDICATE_FAMILY,
        config,
        plugins,
        &mut class_keys,
    );

    let resolve = |key: &str, class: &str| -> Option<String> {
        let known = match class_keys.get(key) {
            None => return Some(class.to_owned()),
            Some(PluginKind::Transformation) => plugins.transformation_def(class).is_some(),
            Some(PluginKind::Predicate) => plugins.predicate_def(class).is_some(),
            Some(PluginKind::Converter) => plugins.converter_def(class).is_some(),
            Some(PluginKind::HeaderConverter) => plugins.header_converter_def(class).is_some(),
        };
        known.then(|| plugins.class_name(class))
    };
    let mut base_values = enriched.validate_values(config, &resolve);

    // The check Kafka runs inside each `transforms.<a>.type` validator.
    for alias in &transform_aliases {
        let prefix = format!("{}.{alias}.", keys::TRANSFORMS);
        let negate = format!("{prefix}{}", keys::TRANSFORM_NEGATE);
        let predicate = format!("{prefix}{}", keys::TRANSFORM_PREDICATE);
        if config.contains_key(&negate) && !config.contains_key(&predicate) {
            let type_key = format!("{prefix}type");
            if let Some(v) = base_values.iter_mut().find(|v| v.name == type_key) {
                v.errors.push(format!(
                    "Config '{negate}' was provided but there is no config '{predicate}' defining a predicate to be negated."
                ));
            }
        }
    }

    if kind == ConnectorType::Sink {
        validate_sink_topics(config, &mut base_values);
    }

    let mut connector_values = connector_def.validate_values(config, &|_, c| Some(c.to_owned()));
    let mut bare: Vec<ValidatedValue> = Vec::new();
    let mut attach = |name: &str, message: String, bare: &mut Vec<ValidatedValue>| {
        if let Some(v) = connector_values.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        } else if let Some(v) = base_values.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        } else if let Some(v) = bare.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        } else {
            let mut v = ValidatedValue::bare(name);
            v.errors.push(message);
            bare.push(v);
        }
    };
    for (name, v) in config {
        if v.is_none() {
            attach(name, NULL_VALUE_MESSAGE.to_owned(), &mut bare);
        }
    }
    for (name, message) in connector_errors {
        attach(&name, message, &mut bare);
    }

    // The connector section: definitions (connector keys replace framework keys in place),
    // values (the connector's result for a key wins), groups.
    let mut groups = enriched.groups();
    for group in connector_def.groups() {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    let mut all_keys = enriched.clone();
    for key in connector_def.keys() {
        all_keys.define_or_replace(key.clone());
    }
    let mut by_name: HashMap<&str, &ValidatedValue> = HashMap::new();
    for v in base_values.iter().chain(connector_values.iter()) {
        by_name.insert(v.name.as_str(), v);
    }
    let mut main = Section {
        error_count: 0,
        groups,
        configs: Vec::new(),
    };
    for v in &bare {
        main.error_count += v.errors.len();
        main.configs.push(ConfigInfo {
            definition: None,
            value: v.info(),
        });
    }
    for key in all_keys.keys() {
        let v = by_name
            .get(key.name.as_str())
            .map(|v| (*v).clone())
            .unwrap_or_else(|| ValidatedValue::bare(key.name.clone()));
        main.error_count += v.errors.len();
        main.configs.push(ConfigInfo {
            definition: Some(key_info(key)),
            value: v.info(),
        });
    }

    let mut sections = vec![main];
    for (prop, converter_type) in [
        (keys::HEADER_CONVERTER, "header"),
        (keys::KEY_CONVERTER, "key"),
        (keys::VALUE_CONVERTER, "value"),
    ] {
        let class_value = base_values.iter().find(|v| v.name == prop);
        if let Some(section) =
            validate_converter(config, prop, converter_type, class_value, plugins)
        {
            sections.push(section);
        }
    }

    let mut infos = ConfigInfos {
        name: connector_class_as_given.to_owned(),
        error_count: 0,
        groups: Vec::new(),
        configs: Vec::new(),
    };
    for section in sections {
        infos.error_count += section.error_count;
        for group in section.groups {
            if !infos.groups.contains(&group) {
                infos.groups.push(group);
            }
        }
        infos.configs.extend(section.configs);
    }
    infos
}

/// The message of the 400 answer to a create/update/patch whose config has errors (Kafka's
/// wording, one error per line, the endpoint hint with its literal backticks and braces);
/// `None` when there are no errors.
pub fn invalid_config_message(infos: &ConfigInfos) -> Option<String> {
    if infos.error_count == 0 {
        return None;
    }
    let mut message = format!(
        "Connector configuration is invalid and contains the following {} error(s):",
        infos.error_count
    );
    for info in &infos.configs {
        for error in &info.value.errors {
            message.push('\n');
            message.push_str(error);
        }
    }
    message.push_str(
        "\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
    );
    Some(message)
}

/// The answer of `GET /connector-plugins/{p}/config` for a connector: the plugin's keys first,
/// then the framework keys it does not redefine.
pub fn plugin_config_keys(kind: ConnectorType, connector_def: &ConfigDef) -> Vec<ConfigKeyInfo> {
    let own: HashSet<&str> = connector_def
        .keys()
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    connector_def
        .keys()
        .iter()
        .map(key_info)
        .chain(
            connector_config_def(kind)
                .keys()
                .iter()
                .filter(|k| !own.contains(k.name.as_str()))
                .map(key_info),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::def::ConfigValueInfo;

    const REGEX_ROUTER: &str = "org.apache.kafka.connect.transforms.RegexRouter";
    const FILTER: &str = "org.apache.kafka.connect.transforms.Filter";
    const TOPIC_NAME_MATCHES: &str =
        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches";
    const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";

    /// A few plugins shaped like Kafka's own.
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
                REGEX_ROUTER => Some(
                    ConfigDef::new()
                        .define(
                            ConfigKey::new(
                                "regex",
                                ConfigType::String,
                                DefaultValue::Required,
                                Importance::High,
                                "Regular expression to use for matching.",
                            )
                            .validator(Validator::Regex),
                        )
                        .define(ConfigKey::new(
                            "replacement",
                            ConfigType::String,
                            DefaultValue::Required,
                            Importance::High,
                            "Replacement string.",
                        )),
                ),
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
                ConfigDef::new()
                    .define(
                        ConfigKey::new(
                            "converter.type",
                            ConfigType::String,
                            DefaultValue::Required,
                            Importance::Low,
                            "How this converter will be used.",
                        )
                        .validator(Validator::OneOf(vec!["key", "value", "header"])),
                    )
                    .define(
                        ConfigKey::new(
                            "schemas.enable",
                            ConfigType::Boolean,
                            DefaultValue::Value("true".into()),
                            Importance::High,
                            "Include schemas.",
                        )
                        .group("Schemas", 0),
                    )
                    .define(
                        ConfigKey::new(
                            "schemas.cache.size",
                            ConfigType::Int,
                            DefaultValue::Value("1000".into()),
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
        ConfigDef::new().define(ConfigKey::new(
            "file",
            ConfigType::String,
            DefaultValue::Null,
            Importance::High,
            "Destination filename. If not specified, the standard output will be used",
        ))
    }

    fn file_source_def() -> ConfigDef {
        ConfigDef::new()
            .define(ConfigKey::new(
                "file",
                ConfigType::String,
                DefaultValue::Null,
                Importance::High,
                "Source filename.",
            ))
            .define(
                ConfigKey::new(
                    "topic",
                    ConfigType::List,
                    DefaultValue::Required,
                    Importance::High,
                    "The topic to publish data to",
                )
                .validator(Validator::NonEmptyString),
            )
            .define(ConfigKey::new(
                "batch.size",
                ConfigType::Int,
                DefaultValue::Value("2000".into()),
                Importance::Low,
                "Batch size",
            ))
    }

    fn config(list: &[(&str, Option<&str>)]) -> BTreeMap<String, Option<String>> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect()
    }

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
            .configs
            .iter()
            .find(|c| c.value.name == name)
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
        assert_eq!(
            sink.groups(),
            vec!["Common", "Transforms", "Predicates", "Error Handling"]
        );

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
        assert_eq!(
            source.groups(),
            vec![
                "Common",
                "Transforms",
                "Predicates",
                "Error Handling",
                "Topic Creation",
                "Exactly Once Support",
                "offsets.topic"
            ]
        );
        assert_eq!(ConnectorType::Source.as_str(), "source");
        assert_eq!(ConnectorType::Sink.as_str(), "sink");
    }

    #[test]
    fn spec_example_file_sink_without_name_or_topics() {
        let infos = validate_sink(&[
            ("connector.class", Some("FileStreamSink")),
            ("file", Some("/tmp/out.txt")),
        ]);
        assert_eq!(infos.name, "FileStreamSink");
        assert_eq!(
            infos.groups,
            vec!["Common", "Transforms", "Predicates", "Error Handling"]
        );
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
        assert!(
            errs[0].starts_with("Invalid value ( for configuration topics.regex: Invalid regex: ")
        );
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
        assert_eq!(
            infos.groups,
            vec![
                "Common",
                "Transforms",
                "Predicates",
                "Error Handling",
                "Topic Creation",
                "Exactly Once Support",
                "offsets.topic"
            ]
        );
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
            vec![
                "Invalid value  for configuration offsets.storage.topic: String must be non-empty"
            ]
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
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
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
            vec![
                "Common",
                "Transforms",
                "Predicates",
                "Error Handling",
                "Transforms: route",
                "Transforms: drop",
                "Predicates: isFoo"
            ]
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
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
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
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
            ("transforms", Some("a,a")),
        ]);
        assert_eq!(
            errors(&infos, "transforms"),
            vec!["Invalid value [a, a] for configuration transforms: Duplicate alias provided."]
        );
        assert_eq!(
            errors(&infos, "transforms.a.type"),
            vec![
                "Missing required configuration \"transforms.a.type\" which has no default value."
            ]
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
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
            ("transforms", Some("f")),
            ("transforms.f.type", Some("Filter")),
            ("transforms.f.negate", Some("true")),
        ]);
        assert_eq!(
            errors(&infos, "transforms.f.type"),
            vec!["Config 'transforms.f.negate' was provided but there is no config 'transforms.f.predicate' defining a predicate to be negated."]
        );
        assert_eq!(infos.error_count, 1);
        let message = invalid_config_message(&infos).unwrap();
        assert!(message.contains("\nConfig 'transforms.f.negate' was provided"));
    }

    #[test]
    fn null_values() {
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
            ("tasks.max", None),
            ("unknown.key", None),
            ("file", None),
        ]);
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
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
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
        let infos = validate_sink(&[
            ("name", Some("s")),
            ("connector.class", Some("FileStreamSink")),
            ("topics", Some("t")),
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
                ConfigKey::new(
                    "tasks.max",
                    ConfigType::Int,
                    DefaultValue::Value("4".into()),
                    Importance::Low,
                    "Own tasks.max",
                )
                .group("Connector", 1),
            )
            .define(ConfigKey::new(
                "file",
                ConfigType::String,
                DefaultValue::Null,
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
}
