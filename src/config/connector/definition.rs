//! The framework's connector config definition (Kafka's `ConnectorConfig`, `SinkConnectorConfig`,
//! `SourceConnectorConfig`): keys, types, defaults, validators, groups and documentation.

use super::{keys, ConnectorType};
use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, Validator, Width,
};

const COMMON_GROUP: &str = "Common";
pub(super) const TRANSFORMS_GROUP: &str = "Transforms";
pub(super) const PREDICATES_GROUP: &str = "Predicates";
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

pub(super) fn value(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_owned())
}

/// Kafka's `ConnectorConfig.configDef()`: the keys every connector has.
fn base_config_def() -> ConfigDef {
    error_keys(chain_keys(common_keys()))
}

/// The keys of the connector itself: name, class, tasks and converters.
fn common_keys() -> ConfigDef {
    use ConfigType::{Boolean, Class, Int, String};
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
}

/// The transformation chain and reload keys.
fn chain_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::{List, String};
    def.define(
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
}

/// The `errors.*` keys every connector has.
fn error_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::{Boolean, Long, String};
    def.define(
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
