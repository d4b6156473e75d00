//! Confluent's JDBC connectors (`io.confluent.connect.jdbc`) for SQLite and PostgreSQL: a source that
//! copies tables (or one query) into topics in bulk, incrementing, timestamp or timestamp+incrementing
//! mode, and a sink that inserts, upserts, updates or deletes rows. Keys, defaults, queries, record
//! shapes and source offsets follow Confluent's; differences are listed in docs/connectors/jdbc.md.

pub(crate) mod db;
#[cfg(feature = "jdbc-postgres")]
mod pg;
pub mod sink;
pub(crate) mod source;
mod source_config;
pub(crate) mod types;

/// Why a `jdbc:postgresql:` URL fails in a build without the `jdbc-postgres` feature.
pub const POSTGRES_MISSING: &str = "This build of liteconnect was made without the `jdbc-postgres` feature, which provides PostgreSQL (jdbc:postgresql: URLs) for io.confluent.connect.jdbc.JdbcSourceConnector and io.confluent.connect.jdbc.JdbcSinkConnector.";

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value as Json;

use super::{ConnectorPlugin, Props, SinkTask, SourceTask, TaskError};
use crate::config::def::{
    key, ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, Validator,
};
use crate::connectors::plugin_identity;

const VERSION: &str = "10.8.0";

pub(crate) const CONNECTION_URL: &str = "connection.url";
pub(crate) const CONNECTION_USER: &str = "connection.user";
pub(crate) const CONNECTION_PASSWORD: &str = "connection.password";
pub(crate) const CONNECTION_ATTEMPTS: &str = "connection.attempts";
pub(crate) const CONNECTION_BACKOFF: &str = "connection.backoff.ms";
pub(crate) const DB_TIMEZONE: &str = "db.timezone";
pub(crate) const QUOTE_IDENTIFIERS: &str = "quote.sql.identifiers";
/// Which share of the tables a source task copies (set by `task_configs`).
pub(crate) const TASK_INDEX: &str = "liteconnect.jdbc.task.index";
pub(crate) const TASK_COUNT: &str = "liteconnect.jdbc.task.count";

/// The connection keys both connectors share.
fn connection_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    def.define(
        ConfigKey::new(
            CONNECTION_URL,
            String,
            DefaultValue::Required,
            High,
            "JDBC connection URL: jdbc:sqlite:PATH or jdbc:postgresql://host:port/db?user=...&password=...&sslmode=...",
        )
        .validator(Validator::NonEmptyString),
    )
    .define(key(CONNECTION_USER, String, None, High, "JDBC connection user."))
    .define(key(CONNECTION_PASSWORD, Password, None, High, "JDBC connection password."))
    .define(
        key(CONNECTION_ATTEMPTS, Int, Some("3"), Low, "Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer.")
            .validator(Validator::AtLeast(1.0)),
    )
    .define(
        key(CONNECTION_BACKOFF, Long, Some("10000"), Low, "Backoff time in milliseconds between connection attempts.")
            .validator(Validator::AtLeast(0.0)),
    )
    .define(key(DB_TIMEZONE, String, Some("UTC"), Medium, "Name of the JDBC timezone used in the connector when querying with time-based criteria."))
    .define(
        key(QUOTE_IDENTIFIERS, String, Some("always"), Medium, "When to quote table names, column names, and other identifiers in SQL statements.")
            .validator(Validator::OneOfCaseInsensitive(vec!["always", "never"])),
    )
    .define(key("dialect.name", String, Some(""), Low, "The name of the database dialect (chosen from the URL when empty)."))
}

/// Errors of a connection URL, for validation.
fn check_url(config: &BTreeMap<String, Option<String>>, errors: &mut Vec<(String, String)>) {
    if let Some(Some(url)) = config.get(CONNECTION_URL) {
        if !url.trim().is_empty() {
            if let Err(e) = db::parse_url(url.trim()) {
                errors.push((
                    CONNECTION_URL.into(),
                    crate::config::invalid_value(CONNECTION_URL, url, e),
                ));
            } else if let Ok(db::Target::Postgres { params, .. }) = db::parse_url(url.trim()) {
                #[cfg(feature = "jdbc-postgres")]
                if let Some((_, mode)) = params.iter().find(|(k, _)| k == "sslmode") {
                    if let Err(e) = pg::SslMode::parse(Some(mode)) {
                        errors.push((CONNECTION_URL.into(), e));
                    }
                }
                #[cfg(not(feature = "jdbc-postgres"))]
                {
                    let _ = params;
                    errors.push((
                        CONNECTION_URL.into(),
                        crate::config::invalid_value(CONNECTION_URL, url, POSTGRES_MISSING),
                    ));
                }
            }
        }
    }
}

/// The connection settings of a parsed task config.
pub(crate) fn conn_spec(config: &Props, read_only: bool) -> (db::ConnSpec, u32, Duration) {
    let get = |k: &str| {
        config
            .get(k)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let spec = db::ConnSpec {
        url: get(CONNECTION_URL).unwrap_or_default(),
        user: get(CONNECTION_USER),
        password: config
            .get(CONNECTION_PASSWORD)
            .filter(|s| !s.is_empty())
            .cloned(),
        read_only,
        timezone: get(DB_TIMEZONE).unwrap_or_else(|| "UTC".into()),
    };
    let attempts = get(CONNECTION_ATTEMPTS)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let backoff = get(CONNECTION_BACKOFF)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    (spec, attempts, Duration::from_millis(backoff))
}

/// Quotes an identifier unless `quote.sql.identifiers=never`.
pub(crate) fn quote(ident: &str, q: Option<char>) -> String {
    match q {
        Some(c) => {
            let doubled = format!("{c}{c}");
            format!("{c}{}{c}", ident.replace(c, &doubled))
        }
        None => ident.to_string(),
    }
}

/// What both JDBC connectors share: their identity, a definition of the connection keys and then
/// those of `$keys`, and validation of the connection URL and then by `$keys::validate`.
macro_rules! jdbc_connector {
    ($class:expr, $kind:ident, $task_class:expr, $keys:ident) => {
        plugin_identity!($class, $kind, VERSION, $task_class);
        fn config_def(&self) -> ConfigDef {
            $keys::config_def(connection_keys(ConfigDef::new()))
        }
        fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
            let mut errors = Vec::new();
            check_url(config, &mut errors);
            $keys::validate(config, &mut errors);
            errors
        }
    };
}

/// `io.confluent.connect.jdbc.JdbcSourceConnector`.
#[derive(Debug)]
pub struct JdbcSource;

impl ConnectorPlugin for JdbcSource {
    jdbc_connector!(
        "io.confluent.connect.jdbc.JdbcSourceConnector",
        Source,
        "io.confluent.connect.jdbc.source.JdbcSourceTask",
        source_config
    );
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        let query_mode = config
            .get(source_config::QUERY)
            .is_some_and(|q| !q.trim().is_empty());
        let count = if query_mode { 1 } else { max_tasks.max(1) };
        let share = |i: usize| {
            let mut c = config.clone();
            c.extend([
                (TASK_INDEX.to_string(), i.to_string()),
                (TASK_COUNT.to_string(), count.to_string()),
            ]);
            c
        };
        Ok((0..count).map(share).collect())
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(source::JdbcSourceTask::default()))
    }
    fn alter_offsets(
        &self,
        _config: &Props,
        offsets: &[(Json, Option<Json>)],
    ) -> Result<bool, String> {
        source_config::check_offsets(offsets).map(|()| true)
    }
}

/// `io.confluent.connect.jdbc.JdbcSinkConnector`.
#[derive(Debug)]
pub struct JdbcSink;

impl ConnectorPlugin for JdbcSink {
    jdbc_connector!(
        "io.confluent.connect.jdbc.JdbcSinkConnector",
        Sink,
        "io.confluent.connect.jdbc.sink.JdbcSinkTask",
        sink
    );
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        Ok(vec![config.clone(); max_tasks.max(1)])
    }
    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        Some(Box::new(sink::JdbcSinkTask::default()))
    }
    fn acknowledges_offsets(&self) -> bool {
        true
    }
}
