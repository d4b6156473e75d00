//! Logging, with levels that can be changed while the worker runs (`/admin/loggers`, KIP-495).
//!
//! Logger names are tracing targets (`liteconnect::worker`, …). Kafka's names under
//! `org.apache.kafka.connect` are accepted too and steer liteconnect's own logs, so scripts written for
//! Kafka Connect keep working; `org.apache.kafka.connect.runtime.rest.RestServer`, Kafka's request log,
//! steers liteconnect's (target [`REQUEST_LOG_TARGET`]). `root` is the default level.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use tracing_subscriber::{reload, EnvFilter, Registry};

type Handle = reload::Handle<EnvFilter, Registry>;

/// The target of the REST request log: one INFO line per request (method, path, status, time).
pub const REQUEST_LOG_TARGET: &str = "liteconnect::rest::requests";

/// Kafka logger names whose liteconnect target is not the name with `org.apache.kafka.connect` swapped
/// for `liteconnect`, most specific first. The same holds for their descendants.
const KAFKA_TARGETS: &[(&str, &str)] = &[
    (
        "org.apache.kafka.connect.runtime.rest.RestServer",
        REQUEST_LOG_TARGET,
    ),
    ("org.apache.kafka.connect.runtime.rest", "liteconnect::rest"),
];

/// A level and when it was last changed through the API (epoch ms), as Kafka reports loggers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggerLevel {
    /// log4j level name (`INFO`, `DEBUG`, …).
    pub level: String,
    /// When this API last changed it.
    pub last_modified: Option<i64>,
}

struct Levels {
    handle: Option<Handle>,
    root: LoggerLevel,
    loggers: BTreeMap<String, LoggerLevel>,
}

static LEVELS: OnceLock<Mutex<Levels>> = OnceLock::new();

fn levels() -> &'static Mutex<Levels> {
    LEVELS.get_or_init(|| {
        Mutex::new(Levels {
            handle: None,
            root: LoggerLevel {
                level: "INFO".into(),
                last_modified: None,
            },
            loggers: BTreeMap::new(),
        })
    })
}

/// Installs the global subscriber: logs to stderr, at `RUST_LOG` or INFO.
pub fn init() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (layer, handle) = reload::Layer::new(filter);
    let installed = tracing_subscriber::registry()
        .with(layer)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(true)
                // Plain text when the log goes to a file or a pipe, so tools can parse it.
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .try_init();
    if installed.is_ok() {
        levels().lock().expect("levels lock").handle = Some(handle);
    }
}

/// Maps a log4j level to a tracing filter level; None for an unknown name.
fn filter_level(level: &str) -> Option<&'static str> {
    Some(match level.to_ascii_uppercase().as_str() {
        "OFF" => "off",
        "FATAL" | "ERROR" => "error",
        "WARN" => "warn",
        "INFO" => "info",
        "DEBUG" => "debug",
        "TRACE" | "ALL" => "trace",
        _ => return None,
    })
}

fn target_of(logger: &str) -> String {
    for (kafka, target) in KAFKA_TARGETS {
        if let Some(rest) = logger.strip_prefix(kafka) {
            if rest.is_empty() || rest.starts_with('.') {
                return format!("{target}{}", rest.replace('.', "::"));
            }
        }
    }
    match logger.strip_prefix("org.apache.kafka.connect") {
        Some(rest) => format!("liteconnect{}", rest.replace('.', "::")),
        None => logger.replace('.', "::"),
    }
}

fn apply(levels: &Levels) {
    let Some(handle) = &levels.handle else { return };
    let mut directives = vec![filter_level(&levels.root.level)
        .unwrap_or("info")
        .to_string()];
    for (name, l) in &levels.loggers {
        directives.push(format!(
            "{}={}",
            target_of(name),
            filter_level(&l.level).unwrap_or("info")
        ));
    }
    match EnvFilter::try_new(directives.join(",")) {
        Ok(filter) => {
            let _ = handle.reload(filter);
        }
        Err(error) => tracing::warn!(%error, "Could not apply the new log levels."),
    }
}

/// Every logger with an explicitly set level, plus `root`.
pub fn all() -> BTreeMap<String, LoggerLevel> {
    let l = levels().lock().expect("levels lock");
    let mut out = l.loggers.clone();
    out.insert("root".into(), l.root.clone());
    out
}

/// One logger's level: its own, or that of its nearest configured ancestor. None when the name is unknown.
pub fn get(name: &str) -> Option<LoggerLevel> {
    let l = levels().lock().expect("levels lock");
    if name.eq_ignore_ascii_case("root") {
        return Some(l.root.clone());
    }
    l.loggers.get(name).cloned()
}

/// Sets a level on a logger and its configured descendants. Returns the affected names, sorted, or None
/// when the level is not a log4j level.
pub fn set(name: &str, level: &str, now_ms: i64) -> Option<Vec<String>> {
    filter_level(level)?;
    let level = level.to_ascii_uppercase();
    let mut l = levels().lock().expect("levels lock");
    let mut changed = Vec::new();
    if name.eq_ignore_ascii_case("root") {
        if l.root.level != level {
            l.root = LoggerLevel {
                level: level.clone(),
                last_modified: Some(now_ms),
            };
        }
        changed.push("root".to_string());
        let names: Vec<String> = l.loggers.keys().cloned().collect();
        for n in names {
            set_one(&mut l.loggers, &n, &level, now_ms);
            changed.push(n);
        }
    } else {
        set_one(&mut l.loggers, name, &level, now_ms);
        changed.push(name.to_string());
        let prefix = format!("{name}.");
        let descendants: Vec<String> = l
            .loggers
            .keys()
            .filter(|n| n.starts_with(&prefix))
            .cloned()
            .collect();
        for n in descendants {
            set_one(&mut l.loggers, &n, &level, now_ms);
            changed.push(n);
        }
    }
    apply(&l);
    changed.sort();
    Some(changed)
}

fn set_one(loggers: &mut BTreeMap<String, LoggerLevel>, name: &str, level: &str, now_ms: i64) {
    match loggers.get_mut(name) {
        Some(existing) if existing.level == level => {}
        Some(existing) => {
            *existing = LoggerLevel {
                level: level.to_string(),
                last_modified: Some(now_ms),
            }
        }
        None => {
            loggers.insert(
                name.to_string(),
                LoggerLevel {
                    level: level.to_string(),
                    last_modified: Some(now_ms),
                },
            );
        }
    }
}

/// How often a repeated warning is logged again: the first time at once, then at most once per interval
/// with the number of times it was held back.
#[derive(Debug, Default)]
pub(crate) struct WarnThrottle {
    last: Option<Instant>,
    held_back: u64,
}

impl WarnThrottle {
    /// Logging a repeated warning again at most this often.
    const INTERVAL: Duration = Duration::from_secs(60);

    /// Notes one occurrence at `now`. Returns whether to log it, with how many occurrences were held back
    /// since the last one logged.
    pub(crate) fn note(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(last) if now.saturating_duration_since(last) < Self::INTERVAL => {
                self.held_back += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.held_back))
            }
        }
    }

    /// The condition is over: the next occurrence is logged at once.
    pub(crate) fn reset(&mut self) {
        *self = WarnThrottle::default();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_repeated_warning_is_logged_once_then_once_a_minute_with_a_count() {
        let mut throttle = WarnThrottle::default();
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        assert_eq!(throttle.note(at(0)), Some(0), "the first one is logged");
        for s in 1..60 {
            assert_eq!(throttle.note(at(s)), None, "held back at {s}s");
        }
        assert_eq!(
            throttle.note(at(60)),
            Some(59),
            "a minute later, with the count"
        );
        assert_eq!(throttle.note(at(61)), None);
        assert_eq!(throttle.note(at(125)), Some(1));
        throttle.reset();
        assert_eq!(
            throttle.note(at(126)),
            Some(0),
            "after a reset, at once again"
        );
    }

    use super::*;

    #[test]
    fn kafka_names_map_to_liteconnect_targets() {
        assert_eq!(target_of("org.apache.kafka.connect"), "liteconnect");
        assert_eq!(
            target_of("org.apache.kafka.connect.worker"),
            "liteconnect::worker"
        );
        assert_eq!(target_of("liteconnect::rest"), "liteconnect::rest");
        assert_eq!(
            target_of("org.apache.kafka.connect.runtime.rest.RestServer"),
            REQUEST_LOG_TARGET
        );
        assert_eq!(
            target_of("org.apache.kafka.connect.runtime.rest.resources"),
            "liteconnect::rest::resources"
        );
        assert_eq!(
            target_of("org.apache.kafka.connect.runtime.restish"),
            "liteconnect::runtime::restish"
        );
        assert_eq!(filter_level("fatal"), Some("error"));
        assert_eq!(filter_level("LOUD"), None);
    }
}
