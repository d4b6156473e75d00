//! The worker config: Kafka's worker properties file, read into typed settings.
//!
//! Keys follow Kafka Connect's names. Keys that only make sense with a Kafka cluster (`bootstrap.servers`,
//! `offset.storage.file.filename`, `plugin.path`, …) are accepted and reported once as unused, so Kafka's
//! own sample files run unchanged.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::config::providers::ConfigProviders;
use crate::storage::{BufferCap, BufferPolicy, Synchronous};

/// The embedded default worker config (the same as `config/worker.properties`).
pub const DEFAULT_WORKER_PROPERTIES: &str = include_str!("../../config/worker.properties");

const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";
const SIMPLE_HEADER_CONVERTER: &str = "org.apache.kafka.connect.storage.SimpleHeaderConverter";

/// Keys liteconnect reads.
const KNOWN: &[&str] = &[
    "listeners",
    "rest.advertised.host.name",
    "rest.advertised.port",
    "rest.advertised.listener",
    "key.converter",
    "value.converter",
    "header.converter",
    "offset.flush.interval.ms",
    "offset.flush.timeout.ms",
    "task.shutdown.graceful.timeout.ms",
    "topic.tracking.enable",
    "topic.tracking.allow.reset",
    "admin.listeners",
    "access.control.allow.origin",
    "access.control.allow.methods",
    "storage.file",
    "storage.synchronous",
    "storage.max.bytes",
    "retention.ms",
    "retention.bytes",
    "log.buffer.max.bytes",
    "log.buffer.full.policy",
    "rest.request.max.bytes",
    "rest.extension.classes",
    "response.http.headers.config",
    "rest.basic.auth.credentials.file",
    "rest.basic.auth.jaas.config",
    "rest.basic.auth.health.exempt",
    "config.providers",
];

/// Prefixes whose keys are passed on (converter settings, TLS settings, config providers).
const KNOWN_PREFIXES: &[&str] = &[
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "ssl.",
    "listeners.https.",
    "admin.listeners.https.",
    "config.providers.",
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
            format!("Invalid value {s} for configuration listeners: Listener doesn't have the right format (protocol://hostname:port).")
        };
        let (scheme, rest) = s.trim().split_once("://").ok_or_else(bad)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("Invalid value {s} for configuration listeners: Listener protocol must be http or https"));
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
        let host = if self.host.is_empty() {
            "0.0.0.0"
        } else {
            &self.host
        };
        if host.contains(':') {
            format!("[{host}]:{}", self.port)
        } else {
            format!("{host}:{}", self.port)
        }
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
    /// `config.providers`: what resolves `${provider:path:key}` placeholders when tasks start.
    pub config_providers: ConfigProviders,
    /// Keys given that liteconnect does not use.
    pub unused: Vec<String>,
}

fn parse_bool(key: &str, v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!(
            "Invalid value {v} for configuration {key}: Expected value to be either true or false"
        )),
    }
}

fn parse_num<T: std::str::FromStr>(key: &str, v: &str, type_name: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| {
        format!("Invalid value {v} for configuration {key}: Not a number of type {type_name}")
    })
}

fn listeners(key: &str, v: &str) -> Result<Vec<Listener>, String> {
    let list: Vec<&str> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    list.into_iter()
        .map(|l| {
            Listener::parse(l)
                .map_err(|e| e.replace("configuration listeners", &format!("configuration {key}")))
        })
        .collect()
}

impl WorkerConfig {
    /// The embedded defaults.
    pub fn defaults() -> WorkerConfig {
        let props = crate::config::properties::parse_properties(DEFAULT_WORKER_PROPERTIES)
            .expect("the embedded worker config parses");
        WorkerConfig::from_props(props.into_iter().collect())
            .expect("the embedded worker config is valid")
    }

    /// Reads typed settings from a properties map.
    ///
    /// # Errors
    /// A message naming the key and the value for every invalid setting.
    pub fn from_props(props: BTreeMap<String, String>) -> Result<WorkerConfig, String> {
        let get = |k: &str| props.get(k).map(|s| s.as_str());
        let listeners_v = match get("listeners") {
            Some(v) => {
                let l = listeners("listeners", v)?;
                if l.is_empty() {
                    return Err(
                        "Invalid value for configuration listeners: listeners must not be empty"
                            .into(),
                    );
                }
                l
            }
            None => vec![Listener {
                scheme: "http".into(),
                host: "127.0.0.1".into(),
                port: 8083,
            }],
        };
        let admin_listeners = match get("admin.listeners") {
            None => None,
            Some(v) => Some(listeners("admin.listeners", v)?),
        };
        let synchronous = match get("storage.synchronous").map(|s| s.trim().to_ascii_uppercase()) {
            None => Synchronous::Normal,
            Some(s) if s == "NORMAL" => Synchronous::Normal,
            Some(s) if s == "FULL" => Synchronous::Full,
            Some(s) => {
                return Err(format!(
                    "Invalid value {s} for configuration storage.synchronous: String must be one of: NORMAL, FULL"
                ))
            }
        };
        let optional_i64 = |k: &str, default: Option<i64>| -> Result<Option<i64>, String> {
            match get(k) {
                None => Ok(default),
                Some(v) => {
                    let n: i64 = parse_num(k, v, "LONG")?;
                    Ok(if n < 0 { None } else { Some(n) })
                }
            }
        };
        let policy = match get("log.buffer.full.policy").map(|s| s.trim().to_ascii_lowercase()) {
            None => BufferPolicy::Pause,
            Some(s) if s == "pause" => BufferPolicy::Pause,
            Some(s) if s == "drop_oldest" => BufferPolicy::DropOldest,
            Some(s) => {
                return Err(format!(
                    "Invalid value {s} for configuration log.buffer.full.policy: String must be one of: pause, drop_oldest"
                ))
            }
        };
        let log_buffer = optional_i64("log.buffer.max.bytes", None)?.map(|n| BufferCap {
            max_bytes: n as u64,
            policy,
        });
        let non_empty = |k: &str| {
            get(k)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let unused = props
            .keys()
            .filter(|k| {
                !KNOWN.contains(&k.as_str()) && !KNOWN_PREFIXES.iter().any(|p| k.starts_with(p))
            })
            .cloned()
            .collect();
        Ok(WorkerConfig {
            listeners: listeners_v,
            advertised_host: non_empty("rest.advertised.host.name"),
            advertised_port: match get("rest.advertised.port") {
                Some(v) if !v.trim().is_empty() => {
                    Some(parse_num("rest.advertised.port", v, "INT")?)
                }
                _ => None,
            },
            admin_listeners,
            key_converter: non_empty("key.converter").unwrap_or_else(|| JSON_CONVERTER.into()),
            value_converter: non_empty("value.converter").unwrap_or_else(|| JSON_CONVERTER.into()),
            header_converter: non_empty("header.converter")
                .unwrap_or_else(|| SIMPLE_HEADER_CONVERTER.into()),
            offset_flush_interval_ms: match get("offset.flush.interval.ms") {
                Some(v) => parse_num("offset.flush.interval.ms", v, "LONG")?,
                None => 60_000,
            },
            task_shutdown_graceful_timeout_ms: match get("task.shutdown.graceful.timeout.ms") {
                Some(v) => parse_num("task.shutdown.graceful.timeout.ms", v, "LONG")?,
                None => 5_000,
            },
            topic_tracking_enable: match get("topic.tracking.enable") {
                Some(v) => parse_bool("topic.tracking.enable", v)?,
                None => true,
            },
            topic_tracking_allow_reset: match get("topic.tracking.allow.reset") {
                Some(v) => parse_bool("topic.tracking.allow.reset", v)?,
                None => true,
            },
            cors_origin: non_empty("access.control.allow.origin"),
            cors_methods: non_empty("access.control.allow.methods"),
            storage_file: non_empty("storage.file")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("data/liteconnect.db")),
            storage_synchronous: synchronous,
            storage_max_bytes: optional_i64("storage.max.bytes", None)?.map(|n| n as u64),
            retention_ms: optional_i64("retention.ms", Some(7 * 24 * 3600 * 1000))?,
            retention_bytes: optional_i64("retention.bytes", None)?,
            log_buffer,
            request_max_bytes: match get("rest.request.max.bytes") {
                Some(v) => parse_num("rest.request.max.bytes", v, "LONG")?,
                None => 1024 * 1024,
            },
            config_providers: ConfigProviders::from_worker_props(&props)?,
            originals: props,
            unused,
        })
    }

    /// The worker's converter class for `key.converter`, `value.converter` or `header.converter`.
    pub fn converter_class(&self, key: &str) -> &str {
        match key {
            "key.converter" => &self.key_converter,
            "value.converter" => &self.value_converter,
            _ => &self.header_converter,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

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
        assert!(e.contains("Listener doesn't have the right format"), "{e}");
        let e =
            WorkerConfig::from_props(props(&[("offset.flush.interval.ms", "soon")])).unwrap_err();
        assert!(e.contains("offset.flush.interval.ms"), "{e}");
        let e = WorkerConfig::from_props(props(&[("topic.tracking.enable", "maybe")])).unwrap_err();
        assert!(e.contains("topic.tracking.enable"), "{e}");
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
}
