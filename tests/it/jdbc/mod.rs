//! The JDBC source and sink (issue #18): SQLite always, PostgreSQL for real in a throwaway cluster.

#[cfg(feature = "jdbc-postgres")]
mod postgres;
mod sink;
mod source;

use std::path::Path;

use serde_json::{json, Value as Json};

/// Runs SQL on a SQLite file (created when absent).
pub fn exec(db: &Path, sql: &str) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    c.execute_batch(sql).unwrap();
}

/// One integer from a SQLite query.
pub fn count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap_or(-1)
}

/// The values of a topic of the worker's local log, as text, in offset order.
pub fn topic_values(worker_db: &Path, topic: &str) -> Vec<String> {
    let c = rusqlite::Connection::open(worker_db).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    let mut stmt = c
        .prepare("SELECT r.value FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = ?1 ORDER BY r.partition, r.offset")
        .unwrap();
    stmt.query_map([topic], |r| r.get::<_, Option<Vec<u8>>>(0))
        .unwrap()
        .map(|v| String::from_utf8_lossy(&v.unwrap().unwrap_or_default()).into_owned())
        .collect()
}

/// `name=value` pairs of a `Struct{...}` text, for one field.
pub fn field(text: &str, name: &str) -> Option<String> {
    let body = text.strip_prefix("Struct{")?.strip_suffix('}')?;
    body.split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_string))
}

/// A JDBC source connector body.
pub fn jdbc_source(name: &str, url: &str, extra: &[(&str, &str)]) -> Json {
    let mut config = json!({
        "connector.class": "JdbcSource", "connection.url": url,
        "poll.interval.ms": "50", "table.poll.interval.ms": "200",
    });
    for (k, v) in extra {
        config[*k] = json!(v);
    }
    json!({"name": name, "config": config})
}

/// A JDBC sink connector body reading JSON with schemas.
pub fn jdbc_sink(name: &str, url: &str, topics: &str, extra: &[(&str, &str)]) -> Json {
    let mut config = json!({
        "connector.class": "JdbcSink", "connection.url": url, "topics": topics,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    });
    for (k, v) in extra {
        config[*k] = json!(v);
    }
    json!({"name": name, "config": config})
}

/// Source-side converters writing JSON with schemas, for a sink to read.
pub const JSON_OUT: [(&str, &str); 2] = [
    (
        "key.converter",
        "org.apache.kafka.connect.json.JsonConverter",
    ),
    (
        "value.converter",
        "org.apache.kafka.connect.json.JsonConverter",
    ),
];
