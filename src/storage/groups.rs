//! Consumer-group offsets committed over the Kafka-protocol listener, and the sink connectors shown to Kafka
//! clients as read-only groups `connect-<name>`. Writes go through the writer thread (an acknowledged commit
//! is on disk), reads through the reader thread.

use rusqlite::{params, Connection};

use super::{StorageError, Store};

/// One committed offset of a consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupOffset {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The next offset the group will consume.
    pub offset: i64,
    /// The leader epoch the client sent (-1 when none).
    pub leader_epoch: i32,
    /// The metadata string the client sent.
    pub metadata: Option<String>,
}

/// A sink connector as a consumer group: its name and whether it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkGroup {
    /// The connector's name (the group is `connect-<name>`).
    pub connector: String,
    /// True when the connector's last recorded status is RUNNING.
    pub running: bool,
}

fn commit(conn: &Connection, group: &str, offsets: &[GroupOffset]) -> Result<(), StorageError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO group_offsets (group_id, topic, partition, offset, leader_epoch, metadata, commit_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (group_id, topic, partition) DO UPDATE SET offset = excluded.offset,
             leader_epoch = excluded.leader_epoch, metadata = excluded.metadata, commit_ms = excluded.commit_ms",
    )?;
    let now = crate::model::now_ms();
    for o in offsets {
        stmt.execute(params![
            group,
            o.topic,
            o.partition,
            o.offset,
            o.leader_epoch,
            o.metadata,
            now
        ])?;
    }
    Ok(())
}

fn offsets(conn: &Connection, group: &str) -> Result<Vec<GroupOffset>, StorageError> {
    let mut stmt = conn.prepare_cached(
        "SELECT topic, partition, offset, leader_epoch, metadata FROM group_offsets
         WHERE group_id = ?1 ORDER BY topic, partition",
    )?;
    let rows = stmt
        .query_map([group], |r| {
            Ok(GroupOffset {
                topic: r.get(0)?,
                partition: r.get(1)?,
                offset: r.get(2)?,
                leader_epoch: r.get(3)?,
                metadata: r.get(4)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn group_ids(conn: &Connection) -> Result<Vec<String>, StorageError> {
    let mut stmt =
        conn.prepare_cached("SELECT DISTINCT group_id FROM group_offsets ORDER BY group_id")?;
    let rows = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Sink connectors: those whose config names `topics` or `topics.regex` (the keys only sinks take).
fn sink_groups(conn: &Connection) -> Result<Vec<SinkGroup>, StorageError> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.name, COALESCE(s.state = 'RUNNING', 0) FROM connector_configs c
         LEFT JOIN connector_statuses s ON s.connector = c.name
         WHERE json_extract(c.config, '$.topics') IS NOT NULL
            OR json_extract(c.config, '$.\"topics.regex\"') IS NOT NULL
         ORDER BY c.name",
    )?;
    let groups = stmt
        .query_map([], |r| {
            Ok(SinkGroup {
                connector: r.get(0)?,
                running: r.get(1)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(groups)
}

impl Store {
    /// Stores a consumer group's committed offsets; returns once they are committed to the file.
    pub async fn commit_group_offsets(
        &self,
        group: String,
        offsets: Vec<GroupOffset>,
    ) -> Result<(), StorageError> {
        self.writer.call(move |c| commit(c, &group, &offsets)).await
    }

    /// A consumer group's committed offsets, sorted by topic and partition.
    pub async fn group_offsets(&self, group: String) -> Result<Vec<GroupOffset>, StorageError> {
        self.reader.call(move |c| offsets(c, &group)).await
    }

    /// The groups that have committed offsets, sorted.
    pub async fn committed_groups(&self) -> Result<Vec<String>, StorageError> {
        self.reader.call(group_ids).await
    }

    /// The sink connectors, which Kafka clients see as the groups `connect-<name>`.
    pub async fn sink_groups(&self) -> Result<Vec<SinkGroup>, StorageError> {
        self.reader.call(sink_groups).await
    }
}
