//! The SQL behind [`super::Store`]'s connector, status and offset methods. Each function runs on a
//! database thread, inside the transaction that thread opened.

use std::collections::BTreeMap;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value as Json;

use super::StorageError;
use crate::model::{now_ms, State, TargetState};

/// A connector as stored: what the herder loads at start.
#[derive(Clone, Debug)]
pub struct StoredConnector {
    /// The connector's name.
    pub name: String,
    /// The raw config.
    pub config: BTreeMap<String, String>,
    /// The target state (STARTED when none is stored, as Kafka assumes).
    pub target: TargetState,
    /// The committed task configs.
    pub tasks: Vec<BTreeMap<String, String>>,
    /// When it was created, epoch milliseconds (kept across config updates).
    pub created_ms: i64,
}

/// A status row.
#[derive(Clone, Debug)]
pub struct StoredStatus {
    /// The state.
    pub state: State,
    /// The failure trace, if any.
    pub trace: Option<String>,
    /// The worker that reported it.
    pub worker_id: String,
}

pub(super) fn ensure_identity(conn: &Connection) -> Result<String, StorageError> {
    let existing: Option<String> = conn
        .query_row(
            "SELECT kafka_cluster_id FROM worker_identity WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = existing {
        return Ok(id);
    }
    // Kafka cluster ids are a UUID in URL-safe base64 without padding (22 characters).
    use base64::Engine as _;
    let id =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes());
    exec(
        conn,
        "INSERT INTO worker_identity (id, kafka_cluster_id, created_ms) VALUES (1, ?1, ?2)",
        params![id, now_ms()],
    )?;
    Ok(id)
}

/// Serialises JSON with object keys sorted, so equal partitions always have the same key.
pub(crate) fn canonical_json(value: &Json) -> String {
    fn sorted(value: &Json) -> Json {
        match value {
            Json::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Json::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Json::Array(items) => Json::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Runs one statement through the connection's statement cache: the control plane's statements are
/// parsed once, not at every change.
fn exec(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

fn to_json(config: &BTreeMap<String, String>) -> Result<String, StorageError> {
    Ok(serde_json::to_string(config)?)
}

fn exists(conn: &Connection, name: &str) -> Result<bool, StorageError> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM connector_configs WHERE name = ?1",
            [name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

pub(super) fn load_connectors(conn: &Connection) -> Result<Vec<StoredConnector>, StorageError> {
    let mut stmt = conn.prepare(
        "SELECT c.name, c.config, t.state, t.state_v2, c.created_ms FROM connector_configs c
         LEFT JOIN target_states t ON t.connector = c.name ORDER BY c.created_ms, c.name",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(rows.len());
    for (name, config, state, state_v2, created_ms) in rows {
        let target = TargetState::from_columns(state.as_deref(), state_v2.as_deref())
            .unwrap_or(TargetState::Started);
        let tasks = task_configs(conn, &name)?;
        out.push(StoredConnector {
            config: serde_json::from_str(&config)?,
            name,
            target,
            tasks,
            created_ms: created_ms.unwrap_or_default(),
        });
    }
    Ok(out)
}

fn task_configs(
    conn: &Connection,
    name: &str,
) -> Result<Vec<BTreeMap<String, String>>, StorageError> {
    let count: Option<i64> = conn
        .query_row(
            "SELECT tasks FROM task_counts WHERE connector = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?;
    let count = count.unwrap_or(0);
    let mut stmt = conn.prepare(
        "SELECT config FROM task_configs WHERE connector = ?1 AND task < ?2 ORDER BY task",
    )?;
    let tasks = stmt
        .query_map(params![name, count], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    tasks.iter().map(|t| Ok(serde_json::from_str(t)?)).collect()
}

fn write_target_state(
    conn: &Connection,
    name: &str,
    target: TargetState,
) -> Result<(), StorageError> {
    exec(
        conn,
        "INSERT INTO target_states (connector, state, state_v2) VALUES (?1, ?2, ?3)
         ON CONFLICT (connector) DO UPDATE SET state = excluded.state, state_v2 = excluded.state_v2",
        params![name, target.legacy_column(), target.v2_column()],
    )?;
    Ok(())
}

pub(super) fn create_connector(
    conn: &Connection,
    name: &str,
    config: &BTreeMap<String, String>,
    target: TargetState,
    tasks: &[BTreeMap<String, String>],
    offsets: &[(Json, Option<Json>)],
) -> Result<(), StorageError> {
    if exists(conn, name)? {
        return Err(StorageError::Conflict(format!(
            "Connector {name} already exists"
        )));
    }
    let now = now_ms();
    // As Kafka's config topic does for KIP-980: the target state is written with the config, atomically.
    write_target_state(conn, name, target)?;
    exec(
        conn,
        "INSERT INTO connector_configs (name, config, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
        params![name, to_json(config)?, now],
    )?;
    put_task_configs(conn, name, tasks)?;
    write_source_offsets(conn, name, offsets)
}

pub(super) fn put_connector_config(
    conn: &Connection,
    name: &str,
    config: &BTreeMap<String, String>,
) -> Result<bool, StorageError> {
    let now = now_ms();
    let created = !exists(conn, name)?;
    if created {
        write_target_state(conn, name, TargetState::Started)?;
        put_task_configs(conn, name, &[])?;
    }
    exec(
        conn,
        "INSERT INTO connector_configs (name, config, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)
         ON CONFLICT (name) DO UPDATE SET config = excluded.config, updated_ms = excluded.updated_ms",
        params![name, to_json(config)?, now],
    )?;
    Ok(created)
}

pub(super) fn delete_connector(conn: &Connection, name: &str) -> Result<(), StorageError> {
    for sql in [
        "DELETE FROM connector_configs WHERE connector_configs.name = ?1",
        "DELETE FROM target_states WHERE connector = ?1",
        "DELETE FROM task_configs WHERE connector = ?1",
        "DELETE FROM task_counts WHERE connector = ?1",
        "DELETE FROM connector_statuses WHERE connector = ?1",
        "DELETE FROM task_statuses WHERE connector = ?1",
        "DELETE FROM connector_topics WHERE connector = ?1",
        "DELETE FROM connector_files WHERE connector = ?1",
    ] {
        exec(conn, sql, [name])?;
    }
    Ok(())
}

pub(super) fn set_target_state(
    conn: &Connection,
    name: &str,
    target: TargetState,
) -> Result<(), StorageError> {
    if !exists(conn, name)? {
        return Err(StorageError::Conflict(format!(
            "Connector {name} not found"
        )));
    }
    if target == TargetState::Stopped {
        // KIP-875: the empty task set is written before the STOPPED state, so a STOPPED connector never has tasks.
        put_task_configs(conn, name, &[])?;
    }
    write_target_state(conn, name, target)
}

pub(super) fn put_task_configs(
    conn: &Connection,
    name: &str,
    tasks: &[BTreeMap<String, String>],
) -> Result<(), StorageError> {
    exec(
        conn,
        "DELETE FROM task_configs WHERE connector = ?1",
        [name],
    )?;
    let mut insert = conn
        .prepare_cached("INSERT INTO task_configs (connector, task, config) VALUES (?1, ?2, ?3)")?;
    for (i, task) in tasks.iter().enumerate() {
        insert.execute(params![name, i as i64, to_json(task)?])?;
    }
    exec(
        conn,
        "INSERT INTO task_counts (connector, tasks) VALUES (?1, ?2)
         ON CONFLICT (connector) DO UPDATE SET tasks = excluded.tasks",
        params![name, tasks.len() as i64],
    )?;
    Ok(())
}

pub(super) fn put_connector_status(
    conn: &Connection,
    name: &str,
    s: &StoredStatus,
) -> Result<(), StorageError> {
    if !exists(conn, name)? {
        return Ok(()); // a late report about a deleted connector
    }
    exec(
        conn,
        "INSERT INTO connector_statuses (connector, state, trace, worker_id, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (connector) DO UPDATE SET state = excluded.state, trace = excluded.trace,
             worker_id = excluded.worker_id, updated_ms = excluded.updated_ms",
        params![name, s.state.as_str(), s.trace, s.worker_id, now_ms()],
    )?;
    Ok(())
}

pub(super) fn put_task_status(
    conn: &Connection,
    name: &str,
    task: u32,
    s: &StoredStatus,
) -> Result<(), StorageError> {
    if !exists(conn, name)? {
        return Ok(());
    }
    exec(
        conn,
        "INSERT INTO task_statuses (connector, task, state, trace, worker_id, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (connector, task) DO UPDATE SET state = excluded.state, trace = excluded.trace,
             worker_id = excluded.worker_id, updated_ms = excluded.updated_ms",
        params![name, task, s.state.as_str(), s.trace, s.worker_id, now_ms()],
    )?;
    Ok(())
}

pub(super) fn delete_task_statuses(
    conn: &Connection,
    name: &str,
    from: u32,
) -> Result<(), StorageError> {
    exec(
        conn,
        "DELETE FROM task_statuses WHERE connector = ?1 AND task >= ?2",
        params![name, from],
    )?;
    Ok(())
}

pub(super) fn source_offsets(
    conn: &Connection,
    connector: &str,
) -> Result<Vec<(Json, Json)>, StorageError> {
    let mut stmt = conn.prepare(
        "SELECT partition, offset FROM source_offsets WHERE connector = ?1 ORDER BY partition",
    )?;
    let rows = stmt
        .query_map([connector], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(p, o)| Ok((serde_json::from_str(&p)?, serde_json::from_str(&o)?)))
        .collect()
}

pub(super) fn source_offset(
    conn: &Connection,
    connector: &str,
    partition_key: &str,
) -> Result<Option<Json>, StorageError> {
    let offset: Option<String> = conn
        .query_row(
            "SELECT offset FROM source_offsets WHERE connector = ?1 AND partition = ?2",
            params![connector, partition_key],
            |r| r.get(0),
        )
        .optional()?;
    offset.map(|o| Ok(serde_json::from_str(&o)?)).transpose()
}

pub(crate) fn write_source_offsets(
    conn: &Connection,
    connector: &str,
    offsets: &[(Json, Option<Json>)],
) -> Result<(), StorageError> {
    let mut upsert = conn.prepare_cached(
        "INSERT INTO source_offsets (connector, partition, offset) VALUES (?1, ?2, ?3)
         ON CONFLICT (connector, partition) DO UPDATE SET offset = excluded.offset",
    )?;
    let mut delete =
        conn.prepare_cached("DELETE FROM source_offsets WHERE connector = ?1 AND partition = ?2")?;
    for (partition, offset) in offsets {
        let key = canonical_json(partition);
        match offset {
            Some(o) => upsert.execute(params![connector, key, o.to_string()])?,
            None => delete.execute(params![connector, key])?,
        };
    }
    Ok(())
}

pub(super) fn sink_offsets(
    conn: &Connection,
    connector: &str,
) -> Result<Vec<(String, i32, i64)>, StorageError> {
    let mut stmt = conn.prepare(
        "SELECT topic, partition, offset FROM sink_offsets WHERE connector = ?1 ORDER BY topic, partition",
    )?;
    let rows = stmt
        .query_map([connector], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub(super) fn write_sink_offsets(
    conn: &Connection,
    connector: &str,
    offsets: &[(String, i32, Option<i64>)],
) -> Result<(), StorageError> {
    let mut upsert = conn.prepare_cached(
        "INSERT INTO sink_offsets (connector, topic, partition, offset) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (connector, topic, partition) DO UPDATE SET offset = excluded.offset",
    )?;
    let mut delete = conn.prepare_cached(
        "DELETE FROM sink_offsets WHERE connector = ?1 AND topic = ?2 AND partition = ?3",
    )?;
    for (topic, partition, offset) in offsets {
        match offset {
            Some(o) => upsert.execute(params![connector, topic, partition, o])?,
            None => delete.execute(params![connector, topic, partition])?,
        };
    }
    Ok(())
}

pub(super) fn reset_sink_offsets(conn: &Connection, connector: &str) -> Result<(), StorageError> {
    exec(
        conn,
        "DELETE FROM sink_offsets WHERE connector = ?1",
        [connector],
    )?;
    Ok(())
}

pub(super) fn active_topics(
    conn: &Connection,
    connector: &str,
) -> Result<Vec<String>, StorageError> {
    let mut stmt =
        conn.prepare("SELECT topic FROM connector_topics WHERE connector = ?1 ORDER BY topic")?;
    let rows = stmt
        .query_map([connector], |r| r.get(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub(super) fn reset_active_topics(conn: &Connection, connector: &str) -> Result<(), StorageError> {
    exec(
        conn,
        "DELETE FROM connector_topics WHERE connector = ?1",
        [connector],
    )?;
    Ok(())
}

pub(crate) fn add_active_topic(
    conn: &Connection,
    connector: &str,
    topic: &str,
) -> Result<(), StorageError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO connector_topics (connector, topic) VALUES (?1, ?2)",
    )?
    .execute(params![connector, topic])?;
    Ok(())
}

pub(super) fn applied_file_config(
    conn: &Connection,
    name: &str,
) -> Result<Option<String>, StorageError> {
    Ok(conn
        .query_row(
            "SELECT applied_config FROM connector_files WHERE connector = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?)
}

pub(super) fn set_applied_file_config(
    conn: &Connection,
    name: &str,
    config: &str,
) -> Result<(), StorageError> {
    exec(
        conn,
        "INSERT INTO connector_files (connector, applied_config) VALUES (?1, ?2)
         ON CONFLICT (connector) DO UPDATE SET applied_config = excluded.applied_config",
        params![name, config],
    )?;
    Ok(())
}
