//! The worker config's definition: every key liteconnect reads, with its type, default, check and
//! documentation. [`super::WorkerConfig::from_props`] parses with it, and keys it does not define are
//! reported as unused.

use std::sync::Arc;

use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, ConfigValue, DefaultValue, Importance, Validator,
};
use crate::config::keys;

/// `JsonConverter`, the default key and value converter.
pub(super) const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";
/// `SimpleHeaderConverter`, the default header converter.
pub(super) const SIMPLE_HEADER_CONVERTER: &str =
    "org.apache.kafka.connect.storage.SimpleHeaderConverter";
/// The default `listeners` (loopback only; Kafka listens on all interfaces).
pub(super) const DEFAULT_LISTENERS: &str = "http://127.0.0.1:8083";
/// The default of `tasks.max.total`.
pub const DEFAULT_TASKS_MAX_TOTAL: i32 = 1000;

fn value(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_owned())
}

/// A check that the (trimmed) string is one of `options`, ignoring case, with the message naming
/// them as written.
fn one_of_ignoring_case(options: &'static [&'static str]) -> Validator {
    Validator::Custom(Arc::new(move |_, v: &ConfigValue| match v {
        ConfigValue::String(s) if !options.iter().any(|o| o.eq_ignore_ascii_case(s)) => {
            Err(format!("String must be one of: {}", options.join(", ")))
        }
        _ => Ok(()),
    }))
}

fn key(name: &str, t: ConfigType, default: DefaultValue, doc: &str) -> ConfigKey {
    ConfigKey::new(name, t, default, Importance::Medium, doc)
}

fn rest_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::{Boolean, Int, List, Long, Password, String};
    def.define(key(keys::LISTENERS, List, value(DEFAULT_LISTENERS), "Comma-separated REST listeners, `protocol://host:port` with protocol http or https; an empty host means all interfaces, port 0 a free port."))
        .define(key(keys::REST_ADVERTISED_HOST_NAME, String, DefaultValue::Null, "The host name given to others for this worker (its worker id); the bound address when unset."))
        .define(
            key(keys::REST_ADVERTISED_PORT, Int, DefaultValue::Null, "The port given to others for this worker; the bound port when unset.")
                .validator(Validator::NullOr(Box::new(Validator::Between(0.0, 65535.0)))),
        )
        .define(key(keys::REST_ADVERTISED_LISTENER, String, DefaultValue::Null, "Accepted for Kafka's sample files; not used."))
        .define(key(keys::ADMIN_LISTENERS, List, DefaultValue::Null, "Listeners for the /admin endpoints; unset serves them on the REST listeners, empty disables them."))
        .define(key(keys::SCHEMA_REGISTRY_LISTENERS, List, value(""), "Listeners of the embedded Schema Registry (Confluent's REST API v1), `http://host:port` or `https://host:port` with the REST listener's TLS and basic-auth settings; empty turns it off."))
        .define(key(keys::ACCESS_CONTROL_ALLOW_ORIGIN, String, value(""), "The Access-Control-Allow-Origin answer (CORS); empty disables CORS."))
        .define(key(keys::ACCESS_CONTROL_ALLOW_METHODS, String, value(""), "The Access-Control-Allow-Methods answer (CORS)."))
        .define(key(keys::REST_REQUEST_MAX_BYTES, Long, value("1048576"), "The largest request body accepted, in bytes.").validator(Validator::AtLeast(0.0)))
        .define(key(keys::REST_EXTENSION_CLASSES, List, value(""), "Kafka's REST extensions; liteconnect has none and refuses any."))
        .define(key(keys::RESPONSE_HTTP_HEADERS_CONFIG, String, value(""), "Rules for HTTP response headers, in Kafka's `set|add|setDate|addDate|unset name: value` form."))
        .define(key(keys::REST_BASIC_AUTH_CREDENTIALS_FILE, String, DefaultValue::Null, "A properties file of `user: password` lines; requests must then carry HTTP Basic credentials."))
        .define(key(keys::REST_BASIC_AUTH_JAAS_CONFIG, Password, DefaultValue::Null, "A JAAS file whose `KafkaConnect` section names the credentials file, as Kafka's basic auth extension reads it."))
        .define(key(keys::REST_BASIC_AUTH_HEALTH_EXEMPT, String, DefaultValue::Null, "When true, GET /health needs no credentials."))
        .define(key(keys::REST_BASIC_AUTH_METRICS_EXEMPT, Boolean, value("false"), "When true, GET /metrics needs no credentials, so a Prometheus server can scrape without them."))
        .define(key(keys::TOPIC_TRACKING_ENABLE, Boolean, value("true"), "Whether the topics each connector uses are recorded (KIP-558)."))
        .define(key(keys::TOPIC_TRACKING_ALLOW_RESET, Boolean, value("true"), "Whether the recorded topics of a connector may be reset over REST."))
}

fn runtime_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::{Class, Int, List, Long};
    def.define(key(keys::KEY_CONVERTER, Class, value(JSON_CONVERTER), "The converter for record keys of connectors that set none; a class liteconnect does not have stops the worker at start-up."))
        .define(key(keys::VALUE_CONVERTER, Class, value(JSON_CONVERTER), "The converter for record values of connectors that set none."))
        .define(key(keys::HEADER_CONVERTER, Class, value(SIMPLE_HEADER_CONVERTER), "The header converter of connectors that set none."))
        .define(key(keys::OFFSET_FLUSH_INTERVAL_MS, Long, value("60000"), "How often sink offsets are committed while records keep coming, in milliseconds.").validator(Validator::AtLeast(0.0)))
        .define(key(keys::OFFSET_FLUSH_TIMEOUT_MS, Long, value("5000"), "Accepted for Kafka's sample files; offsets are committed in the database's transactions."))
        .define(key(keys::TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS, Long, value("5000"), "How long tasks get to stop on shutdown, in milliseconds.").validator(Validator::AtLeast(0.0)))
        .define(
            key(keys::TASKS_MAX_TOTAL, Int, value(&DEFAULT_TASKS_MAX_TOTAL.to_string()), "The most tasks all connectors together may have on this worker (a busy task holds a thread of the task pool). Creating or reconfiguring a connector whose tasks.max would go beyond it is refused with 400.")
                .validator(Validator::AtLeast(1.0)),
        )
        .define(key(keys::PLUGIN_PATH, List, value(""), "Directories of plugins that run as separate programs: each directory is a plugin (it holds a `liteconnect-plugin.json` manifest) or holds plugin directories."))
        .define(key(keys::PLUGIN_REQUEST_TIMEOUT_MS, Long, value("30000"), "How long a plugin program gets to answer one request, in milliseconds; a plugin that does not answer in time fails its task.").validator(Validator::AtLeast(1.0)))
        .define(key(keys::CONFIG_PROVIDERS, List, value(""), "Config providers resolving `${provider:path:key}` placeholders (file, env, directory), each configured under `config.providers.<name>.`."))
}

fn storage_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::{Long, String};
    def.define(key(keys::STORAGE_FILE, String, value("data/liteconnect.db"), "The SQLite file holding all state: connectors, offsets, statuses and the topic log."))
        .define(
            key(keys::STORAGE_SYNCHRONOUS, String, value("NORMAL"), "SQLite's synchronous setting: NORMAL (default) or FULL.")
                .validator(one_of_ignoring_case(&["NORMAL", "FULL"])),
        )
        .define(key(keys::STORAGE_MAX_BYTES, Long, DefaultValue::Null, "A cap on the database file's size, in bytes; negative means none."))
        .define(key(keys::RETENTION_MS, Long, value("604800000"), "Records older than this are deleted from the topic log, in milliseconds; -1 keeps them."))
        .define(key(keys::RETENTION_BYTES, Long, value("-1"), "Per partition, the oldest records beyond this size are deleted; -1 keeps them."))
        .define(key(keys::LOG_BUFFER_MAX_BYTES, Long, DefaultValue::Null, "A cap on the bytes the topic log holds; negative means none."))
        .define(
            key(keys::LOG_BUFFER_FULL_POLICY, String, value("pause"), "What happens when the topic log reaches log.buffer.max.bytes: pause the sources, or drop_oldest records.")
                .validator(one_of_ignoring_case(&["pause", "drop_oldest"])),
        )
}

/// The worker config's definition.
pub fn worker_config_def() -> ConfigDef {
    super::kafka::kafka_keys(storage_keys(runtime_keys(rest_keys(ConfigDef::new()))))
}
