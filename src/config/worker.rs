//! The worker config: Kafka's worker properties file, read into typed settings.
//!
//! Keys follow Kafka Connect's names. Keys that only make sense with a Kafka cluster (`bootstrap.servers`,
//! `offset.storage.file.filename`, …) are accepted and reported once as unused, so Kafka's
//! own sample files run unchanged.

use std::collections::BTreeMap;
use std::path::PathBuf;

mod definition;
pub mod kafka;

pub use definition::{worker_config_def, DEFAULT_TASKS_MAX_TOTAL};

use crate::config::connector::{ConverterRole, PluginLookup};
use crate::config::def::{ConfigDef, ConfigType, ConfigValue};
use crate::config::keys;
use crate::config::providers::ConfigProviders;
use crate::storage::{BufferCap, BufferPolicy, Synchronous};

/// The embedded default worker config (the same as `config/worker.properties`).
pub const DEFAULT_WORKER_PROPERTIES: &str = include_str!("../../config/worker.properties");

/// Prefixes whose keys are passed on (converter settings, TLS settings, config providers).
const KNOWN_PREFIXES: &[&str] = &[
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "ssl.",
    "listeners.https.",
    "admin.listeners.https.",
    "config.providers.",
    kafka::KAFKA_SSL_PREFIX,
];

/// One REST listener.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    /// `http` or `https`.
    pub scheme: String,
    /// Host to bind; empty means all interfaces.
    pub host: String,
    /// Port; 0 picks a free one.
    pub port: u16,
}

impl Listener {
    /// Parses `protocol://host:port` (Kafka's format; host may be empty or a bracketed IPv6 address).
    pub fn parse(s: &str) -> Result<Listener, String> {
        let bad = || {
            crate::config::invalid_value(
                "listeners",
                s,
                "Listener doesn't have the right format (protocol://hostname:port).",
            )
        };
        let (scheme, rest) = s.trim().split_once("://").ok_or_else(bad)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(crate::config::invalid_value(
                "listeners",
                s,
                "Listener protocol must be http or https",
            ));
        }
        let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Ok(Listener { scheme, host, port })
    }

    /// The address to bind.
    pub fn bind_address(&self) -> String {
        bind_address(&self.host, self.port)
    }
}

/// The address to bind for `host` (empty: every interface) and `port`, IPv6 hosts bracketed.
pub fn bind_address(host: &str, port: u16) -> String {
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The typed worker settings.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Every key as given (converter settings are read from here).
    pub originals: BTreeMap<String, String>,
    /// REST listeners (`listeners`).
    pub listeners: Vec<Listener>,
    /// `rest.advertised.host.name`.
    pub advertised_host: Option<String>,
    /// `rest.advertised.port`.
    pub advertised_port: Option<u16>,
    /// `admin.listeners`: None = admin endpoints on the main listeners; Some(empty) = disabled.
    pub admin_listeners: Option<Vec<Listener>>,
    /// `schema.registry.listeners`: the embedded Schema Registry's listeners (empty: none).
    pub schema_registry_listeners: Vec<Listener>,
    /// `key.converter`.
    pub key_converter: String,
    /// `value.converter`.
    pub value_converter: String,
    /// `header.converter`.
    pub header_converter: String,
    /// `offset.flush.interval.ms`: how often sink offsets are committed while records keep coming.
    pub offset_flush_interval_ms: u64,
    /// `task.shutdown.graceful.timeout.ms`.
    pub task_shutdown_graceful_timeout_ms: u64,
    /// `topic.tracking.enable`.
    pub topic_tracking_enable: bool,
    /// `topic.tracking.allow.reset`.
    pub topic_tracking_allow_reset: bool,
    /// `access.control.allow.origin`.
    pub cors_origin: Option<String>,
    /// `access.control.allow.methods`.
    pub cors_methods: Option<String>,
    /// `storage.file`: the SQLite database.
    pub storage_file: PathBuf,
    /// `storage.synchronous`: NORMAL (default) or FULL.
    pub storage_synchronous: Synchronous,
    /// `storage.max.bytes`: a cap on the database file's size.
    pub storage_max_bytes: Option<u64>,
    /// `retention.ms`: records older than this are deleted from the topic log (-1 keeps them).
    pub retention_ms: Option<i64>,
    /// `retention.bytes`: per partition, the oldest records beyond this size are deleted (-1 keeps them).
    pub retention_bytes: Option<i64>,
    /// `log.buffer.max.bytes` with `log.buffer.full.policy`: a cap on the bytes the topic log holds.
    pub log_buffer: Option<BufferCap>,
    /// `rest.request.max.bytes`: the largest request body accepted.
    pub request_max_bytes: u64,
    /// `plugin.path`: directories of plugins that run as separate programs.
    pub plugin_path: Vec<PathBuf>,
    /// `plugin.request.timeout.ms`: how long a plugin program gets to answer one request.
    pub plugin_request_timeout_ms: u64,
    /// `tasks.max.total`: the most tasks all connectors together may have on this worker.
    pub tasks_max_total: usize,
    /// `config.providers`: what resolves `${provider:path:key}` placeholders when tasks start.
    pub config_providers: ConfigProviders,
    /// The Kafka-protocol listener's settings (`kafka.*`, `num.partitions`, ...).
    pub kafka: kafka::KafkaSettings,
    /// Keys given that liteconnect does not use.
    pub unused: Vec<String>,
}

fn listeners(key: &str, list: &[String]) -> Result<Vec<Listener>, WorkerConfigError> {
    list.iter()
        .map(|l| l.trim())
        .filter(|s| !s.is_empty())
        .map(|l| {
            Listener::parse(l).map_err(|e| {
                WorkerConfigError::Listener(
                    e.replace("configuration listeners", &format!("configuration {key}")),
                )
            })
        })
        .collect()
}

/// A worker config that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkerConfigError {
    /// Keys whose values do not parse or pass their checks, with Kafka's messages.
    #[error("{}", .0.join("; "))]
    Invalid(Vec<String>),
    /// A listener that is not `protocol://host:port`.
    #[error("{0}")]
    Listener(String),
    /// The config providers' settings.
    #[error("{0}")]
    Providers(crate::config::ConfigError),
    /// A worker converter naming a class liteconnect does not have.
    #[error("{}", crate::config::invalid_value(.key, .class, format_args!("Class {} could not be found.", .class)))]
    UnknownConverter {
        /// `key.converter`, `value.converter` or `header.converter`.
        key: &'static str,
        /// The class as given.
        class: String,
    },
}

/// The settings with a blank value left out, so that they take their defaults (a blank list stays: it is
/// an empty list).
fn without_blanks(def: &ConfigDef, props: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    props
        .iter()
        .filter(|(k, v)| {
            !(v.trim().is_empty()
                && def
                    .get(k)
                    .is_some_and(|key| key.config_type != ConfigType::List))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `plugin.path`: its directories, blanks left out.
fn plugin_path(items: &[String]) -> Vec<PathBuf> {
    items
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

impl WorkerConfig {
    /// The embedded defaults.
    pub fn defaults() -> WorkerConfig {
        let props = crate::config::properties::parse_properties(DEFAULT_WORKER_PROPERTIES)
            .expect("the embedded worker config parses");
        #[cfg_attr(feature = "kafka-listener", allow(unused_mut))]
        let mut props: BTreeMap<String, String> = props.into_iter().collect();
        #[cfg(not(feature = "kafka-listener"))]
        if let Some(value) = props.remove(kafka::KAFKA_LISTENERS) {
            tracing::info!(
                "This build of liteconnect was made without the `kafka-listener` feature: the default {}={value} is left out.",
                kafka::KAFKA_LISTENERS
            );
        }
        WorkerConfig::from_props(props).expect("the embedded worker config is valid")
    }

    /// Reads typed settings from a properties map, with the definition of
    /// [`worker_config_def`].
    ///
    /// # Errors
    /// A message naming the key and the value for every invalid setting.
    pub fn from_props(props: BTreeMap<String, String>) -> Result<WorkerConfig, WorkerConfigError> {
        let def = worker_config_def();
        let parsed = def
            .parse(&without_blanks(&def, &props))
            .map_err(WorkerConfigError::Invalid)?;
        let string = |k: &str| parsed.get_string(k).filter(|s| !s.is_empty());
        let long = |k: &str| parsed.get_long(k);
        let bool_of = |k: &str| parsed.get_bool(k).unwrap_or(true);
        let listeners_v = listeners(keys::LISTENERS, &parsed.get_list(keys::LISTENERS))?;
        if listeners_v.is_empty() {
            return Err(WorkerConfigError::Listener(
                "Invalid value for configuration listeners: listeners must not be empty".into(),
            ));
        }
        let admin_listeners = match parsed.get(keys::ADMIN_LISTENERS) {
            Some(ConfigValue::List(l)) => Some(listeners(keys::ADMIN_LISTENERS, l)?),
            _ => None,
        };
        let schema_registry_listeners = listeners(
            keys::SCHEMA_REGISTRY_LISTENERS,
            &parsed.get_list(keys::SCHEMA_REGISTRY_LISTENERS),
        )?;
        let synchronous = match string(keys::STORAGE_SYNCHRONOUS).map(|s| s.to_ascii_uppercase()) {
            Some(s) if s == "FULL" => Synchronous::Full,
            _ => Synchronous::Normal,
        };
        let policy = match string(keys::LOG_BUFFER_FULL_POLICY).map(|s| s.to_ascii_lowercase()) {
            Some(s) if s == "drop_oldest" => BufferPolicy::DropOldest,
            _ => BufferPolicy::Pause,
        };
        let non_negative = |k: &str| long(k).filter(|n| *n >= 0);
        let log_buffer = non_negative(keys::LOG_BUFFER_MAX_BYTES).map(|n| BufferCap {
            max_bytes: n as u64,
            policy,
        });
        let unused = props
            .keys()
            .filter(|k| def.get(k).is_none() && !KNOWN_PREFIXES.iter().any(|p| k.starts_with(p)))
            .cloned()
            .collect();
        let class = |k: &str| string(k).unwrap_or_default();
        let kafka = kafka::parse(&parsed).map_err(WorkerConfigError::Listener)?;
        #[cfg(not(feature = "kafka-listener"))]
        if !kafka.listeners.is_empty() {
            return Err(WorkerConfigError::Listener(missing_feature_for_key(
                kafka::KAFKA_LISTENERS,
                "kafka-listener",
                "the Kafka-protocol listener",
            )));
        }
        Ok(WorkerConfig {
            listeners: listeners_v,
            advertised_host: string(keys::REST_ADVERTISED_HOST_NAME),
            advertised_port: parsed
                .get_int(keys::REST_ADVERTISED_PORT)
                .and_then(|p| u16::try_from(p).ok()),
            admin_listeners,
            schema_registry_listeners,
            key_converter: class(keys::KEY_CONVERTER),
            value_converter: class(keys::VALUE_CONVERTER),
            header_converter: class(keys::HEADER_CONVERTER),
            offset_flush_interval_ms: non_negative(keys::OFFSET_FLUSH_INTERVAL_MS).unwrap_or(0)
                as u64,
            task_shutdown_graceful_timeout_ms: non_negative(keys::TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS)
                .unwrap_or(0) as u64,
            topic_tracking_enable: bool_of(keys::TOPIC_TRACKING_ENABLE),
            topic_tracking_allow_reset: bool_of(keys::TOPIC_TRACKING_ALLOW_RESET),
            cors_origin: string(keys::ACCESS_CONTROL_ALLOW_ORIGIN),
            cors_methods: string(keys::ACCESS_CONTROL_ALLOW_METHODS),
            storage_file: PathBuf::from(class(keys::STORAGE_FILE)),
            storage_synchronous: synchronous,
            storage_max_bytes: non_negative(keys::STORAGE_MAX_BYTES).map(|n| n as u64),
            retention_ms: non_negative(keys::RETENTION_MS),
            retention_bytes: non_negative(keys::RETENTION_BYTES),
            log_buffer,
            request_max_bytes: non_negative(keys::REST_REQUEST_MAX_BYTES).unwrap_or(0) as u64,
            plugin_path: plugin_path(&parsed.get_list(keys::PLUGIN_PATH)),
            plugin_request_timeout_ms: non_negative(keys::PLUGIN_REQUEST_TIMEOUT_MS)
                .unwrap_or(30_000) as u64,
            tasks_max_total: parsed
                .get_int(keys::TASKS_MAX_TOTAL)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(DEFAULT_TASKS_MAX_TOTAL as usize),
            config_providers: ConfigProviders::from_worker_props(&props)
                .map_err(WorkerConfigError::Providers)?,
            kafka,
            originals: props,
            unused,
        })
    }

    /// Checks what parsing cannot: that the worker's converters are classes liteconnect has (Kafka
    /// refuses to start otherwise).
    ///
    /// # Errors
    /// [`WorkerConfigError::UnknownConverter`] naming the key and the class.
    pub fn validate(&self, plugins: &dyn PluginLookup) -> Result<(), WorkerConfigError> {
        for role in ConverterRole::ALL {
            let class = self.converter(role);
            let known = match role {
                ConverterRole::Header => plugins.header_converter_def(class).is_some(),
                _ => plugins.converter_def(class).is_some(),
            };
            if !known {
                return Err(WorkerConfigError::UnknownConverter {
                    key: role.key(),
                    class: class.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The worker's converter class for a role.
    pub fn converter(&self, role: ConverterRole) -> &str {
        match role {
            ConverterRole::Key => &self.key_converter,
            ConverterRole::Value => &self.value_converter,
            ConverterRole::Header => &self.header_converter,
        }
    }

    /// The worker's converter class for `key.converter`, `value.converter` or `header.converter`.
    pub fn converter_class(&self, key: &str) -> &str {
        match key {
            keys::KEY_CONVERTER => &self.key_converter,
            keys::VALUE_CONVERTER => &self.value_converter,
            _ => &self.header_converter,
        }
    }
}

/// The sentence for a worker key that needs a feature this build was made without.
#[cfg(not(feature = "kafka-listener"))]
fn missing_feature_for_key(key: &str, feature: &str, what: &str) -> String {
    format!(
        "The configuration {key} needs {what}, but this build of liteconnect was made without the `{feature}` feature: remove {key} or build with `--features {feature}`."
    )
}

#[cfg(test)]
mod tests {
    use super::definition::{JSON_CONVERTER, SIMPLE_HEADER_CONVERTER};
    use super::*;
    use crate::test_support::props;

    #[test]
    fn defaults_are_loopback_and_sqlite() {
        let c = WorkerConfig::defaults();
        assert_eq!(
            c.listeners,
            vec![Listener {
                scheme: "http".into(),
                host: "127.0.0.1".into(),
                port: 8083
            }]
        );
        assert_eq!(c.storage_file, PathBuf::from("data/liteconnect.db"));
        assert!(c.unused.is_empty(), "{:?}", c.unused);
    }

    #[test]
    fn kafka_keys_without_meaning_here_are_unused_not_rejected() {
        let c = WorkerConfig::from_props(props(&[
            ("bootstrap.servers", "localhost:9092"),
            ("offset.storage.file.filename", "/tmp/connect.offsets"),
            ("key.converter.schemas.enable", "true"),
        ]))
        .unwrap();
        assert_eq!(
            c.unused,
            vec![
                "bootstrap.servers".to_string(),
                "offset.storage.file.filename".to_string()
            ]
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = WorkerConfig::from_props(props(&[("listeners", "localhost:8083")])).unwrap_err();
        assert!(
            e.to_string()
                .contains("Listener doesn't have the right format"),
            "{e}"
        );
        let e =
            WorkerConfig::from_props(props(&[("offset.flush.interval.ms", "soon")])).unwrap_err();
        assert!(e.to_string().contains("offset.flush.interval.ms"), "{e}");
        let e = WorkerConfig::from_props(props(&[("topic.tracking.enable", "maybe")])).unwrap_err();
        assert!(e.to_string().contains("topic.tracking.enable"), "{e}");
    }

    #[test]
    fn listeners_parse() {
        assert_eq!(
            Listener::parse("http://:0").unwrap().bind_address(),
            "0.0.0.0:0"
        );
        assert_eq!(
            Listener::parse("HTTP://[::1]:8083").unwrap().bind_address(),
            "[::1]:8083"
        );
        assert!(Listener::parse("ftp://x:1").is_err());
    }

    /// Knows JsonConverter and SimpleHeaderConverter only.
    struct TwoConverters;

    impl PluginLookup for TwoConverters {
        fn transformation_def(&self, _: &str) -> Option<crate::config::ConfigDef> {
            None
        }
        fn predicate_def(&self, _: &str) -> Option<crate::config::ConfigDef> {
            None
        }
        fn transformation_classes(&self) -> Vec<String> {
            Vec::new()
        }
        fn predicate_classes(&self) -> Vec<String> {
            Vec::new()
        }
        fn converter_def(&self, class: &str) -> Option<crate::config::ConfigDef> {
            class
                .ends_with("JsonConverter")
                .then(crate::config::ConfigDef::new)
        }
        fn header_converter_def(&self, class: &str) -> Option<crate::config::ConfigDef> {
            class
                .ends_with("SimpleHeaderConverter")
                .then(crate::config::ConfigDef::new)
        }
    }

    #[test]
    fn unknown_worker_converter_names_key_and_class() {
        WorkerConfig::defaults().validate(&TwoConverters).unwrap();
        let c =
            WorkerConfig::from_props(props(&[("value.converter", "com.example.Nope")])).unwrap();
        let e = c.validate(&TwoConverters).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value com.example.Nope for configuration value.converter: Class com.example.Nope could not be found."
        );
        let c = WorkerConfig::from_props(props(&[("header.converter", JSON_CONVERTER)])).unwrap();
        assert!(c
            .validate(&TwoConverters)
            .unwrap_err()
            .to_string()
            .contains("configuration header.converter"));
    }

    #[test]
    fn every_key_read_is_defined_and_documented() {
        let def = worker_config_def();
        for key in def.keys() {
            assert!(!key.documentation.is_empty(), "{}", key.name);
        }
        let c = WorkerConfig::defaults();
        assert_eq!(c.tasks_max_total, DEFAULT_TASKS_MAX_TOTAL as usize);
        assert_eq!(c.offset_flush_interval_ms, 10_000);
        assert_eq!(c.retention_ms, Some(7 * 24 * 3600 * 1000));
        assert_eq!(c.retention_bytes, None);
        assert_eq!(c.request_max_bytes, 1024 * 1024);
        assert_eq!(c.key_converter, JSON_CONVERTER);
        assert_eq!(c.header_converter, SIMPLE_HEADER_CONVERTER);
        let c = WorkerConfig::from_props(props(&[
            ("tasks.max.total", "4"),
            ("storage.synchronous", "full"),
            ("log.buffer.max.bytes", "100"),
            ("log.buffer.full.policy", "DROP_OLDEST"),
            ("rest.advertised.port", ""),
        ]))
        .unwrap();
        assert_eq!(c.tasks_max_total, 4);
        assert_eq!(c.storage_synchronous, Synchronous::Full);
        assert_eq!(
            c.log_buffer,
            Some(BufferCap {
                max_bytes: 100,
                policy: BufferPolicy::DropOldest
            })
        );
        assert_eq!(c.advertised_port, None);
        let e = WorkerConfig::from_props(props(&[("tasks.max.total", "0")])).unwrap_err();
        assert!(e.to_string().contains("tasks.max.total"), "{e}");
        let e = WorkerConfig::from_props(props(&[("storage.synchronous", "OFF")])).unwrap_err();
        assert!(
            e.to_string()
                .contains("String must be one of: NORMAL, FULL"),
            "{e}"
        );
    }
}
