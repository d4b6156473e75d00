//! The topic log: topics with partitions, appends that assign offsets, reads from an offset, and retention.
//! Records are stored as the bytes converters produced, exactly what a Kafka broker would hold.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value as Json;

use super::queries;
use super::StorageError;
use crate::model::now_ms;

/// A topic and one of its partitions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// The topic's name.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
}

/// What the log holds in one partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionStat {
    /// The first offset held (the end offset when empty).
    pub start: i64,
    /// The offset the next record gets.
    pub end: i64,
    /// How many records it holds.
    pub records: u64,
    /// Their bytes (key, value and headers, as `retention.bytes` counts them).
    pub bytes: u64,
}

/// A record on its way into the log.
#[derive(Clone, Debug, Default)]
pub struct ProducedRecord {
    /// Target topic.
    pub topic: String,
    /// Target partition; `None` lets the log choose (by key hash, as Kafka's default partitioner).
    pub partition: Option<i32>,
    /// Record timestamp in epoch milliseconds.
    pub timestamp: Option<i64>,
    /// Serialised key, `None` for a null key.
    pub key: Option<Vec<u8>>,
    /// Serialised value, `None` for a tombstone.
    pub value: Option<Vec<u8>>,
    /// Serialised headers in order.
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// A record read back from the log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    /// Where it is.
    pub topic: String,
    /// Its partition.
    pub partition: i32,
    /// Its offset.
    pub offset: i64,
    /// Its timestamp.
    pub timestamp: Option<i64>,
    /// Serialised key.
    pub key: Option<Vec<u8>>,
    /// Serialised value.
    pub value: Option<Vec<u8>>,
    /// Serialised headers.
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

impl LogRecord {
    /// About what the record takes in a record batch: its key, value and headers and 20 bytes for
    /// the lengths and deltas around them.
    pub fn size(&self) -> usize {
        20 + self.key.as_ref().map_or(0, Vec::len)
            + self.value.as_ref().map_or(0, Vec::len)
            + self
                .headers
                .iter()
                .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len) + 4)
                .sum::<usize>()
    }
}

/// Everything one source poll produced: written in one transaction, so the log and the source offsets
/// never disagree (exactly-once into the log).
#[derive(Clone, Debug, Default)]
pub struct AppendBatch {
    /// The connector whose offsets these are.
    pub connector: String,
    /// The records.
    pub records: Vec<ProducedRecord>,
    /// The source offsets to store (`None` removes a partition's offset).
    pub offsets: Vec<(Json, Option<Json>)>,
    /// Whether to record the topics used (KIP-558 topic tracking).
    pub track_topics: bool,
}

pub(super) fn ensure_topic(
    conn: &Connection,
    name: &str,
    partitions: i32,
) -> Result<(i64, i32), StorageError> {
    let mut select = conn.prepare_cached("SELECT id, partitions FROM topics WHERE name = ?1")?;
    if let Some(found) = select
        .query_row([name], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
    {
        return Ok(found);
    }
    conn.execute(
        "INSERT INTO topics (name, partitions, created_ms) VALUES (?1, ?2, ?3)",
        params![name, partitions, now_ms()],
    )?;
    let id = conn.last_insert_rowid();
    for p in 0..partitions {
        conn.execute(
            "INSERT INTO partitions (topic_id, partition, next_offset) VALUES (?1, ?2, 0)",
            params![id, p],
        )?;
    }
    Ok((id, partitions))
}

/// Rows one multi-row `INSERT` writes. The rows of one statement go to one partition at consecutive
/// offsets, so they share the topic id, the partition and the first offset as three parameters and bind
/// four each (timestamp, key, value, headers): 203 parameters instead of 350 in 50 statements.
const ROWS_PER_INSERT: usize = 50;

/// Where a run of a batch's records went: `len` records from index `first` of the batch, to one
/// partition at consecutive offsets from `offset` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Placed {
    /// The index in the batch of the run's first record.
    pub first: usize,
    /// The records in the run.
    pub len: usize,
    /// Their partition.
    pub partition: i32,
    /// The first record's offset.
    pub offset: i64,
}

/// Writes a batch's records and source offsets. Records are written in runs of consecutive records to
/// the same partition, each run by multi-row statements; returns the runs.
pub(super) fn append(conn: &Connection, batch: &AppendBatch) -> Result<Vec<Placed>, StorageError> {
    let mut topic_ids: std::collections::HashMap<&str, (i64, i32)> =
        std::collections::HashMap::new();
    // The topic of the previous record: a batch mostly goes to one topic, so most records need no look-up.
    let mut last: Option<(&str, (i64, i32))> = None;
    // (topic id, partition, first index, length) per run of records to one partition.
    let mut runs: Vec<(i64, i32, usize, usize)> = Vec::new();
    for (i, record) in batch.records.iter().enumerate() {
        let (topic_id, partitions) = match last {
            Some((name, found)) if name == record.topic => found,
            _ => match topic_ids.get(record.topic.as_str()) {
                Some(found) => *found,
                None => {
                    let found = ensure_topic(conn, &record.topic, 1)?;
                    topic_ids.insert(&record.topic, found);
                    if batch.track_topics {
                        queries::add_active_topic(conn, &batch.connector, &record.topic)?;
                    }
                    found
                }
            },
        };
        last = Some((&record.topic, (topic_id, partitions)));
        let partition = match record.partition {
            Some(p) if p >= 0 && p < partitions => p,
            Some(p) => {
                return Err(StorageError::Conflict(format!(
                "Partition {p} of topic {} does not exist (the topic has {partitions} partitions)",
                record.topic
            )))
            }
            None => choose_partition(record.key.as_deref(), partitions),
        };
        match runs.last_mut() {
            Some(run) if run.0 == topic_id && run.1 == partition => run.3 += 1,
            _ => runs.push((topic_id, partition, i, 1)),
        }
    }
    let mut next: std::collections::HashMap<(i64, i32), i64> = std::collections::HashMap::new();
    let mut next_offset = conn.prepare_cached(
        "SELECT next_offset FROM partitions WHERE topic_id = ?1 AND partition = ?2",
    )?;
    let mut placed = Vec::with_capacity(runs.len());
    for (topic_id, partition, first, len) in runs {
        let offset = match next.get(&(topic_id, partition)) {
            Some(o) => *o,
            None => next_offset.query_row(params![topic_id, partition], |r| r.get::<_, i64>(0))?,
        };
        insert_run(
            conn,
            (topic_id, partition, offset),
            &batch.records[first..first + len],
        )?;
        next.insert((topic_id, partition), offset + len as i64);
        placed.push(Placed {
            first,
            len,
            partition,
            offset,
        });
    }
    let mut update = conn.prepare_cached(
        "UPDATE partitions SET next_offset = ?3 WHERE topic_id = ?1 AND partition = ?2",
    )?;
    for ((topic_id, partition), offset) in next {
        update.execute(params![topic_id, partition, offset])?;
    }
    queries::write_source_offsets(conn, &batch.connector, &batch.offsets)?;
    Ok(placed)
}

/// The multi-row statement of [`ROWS_PER_INSERT`] rows.
fn multi_row_insert() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let rows: Vec<String> = (0..ROWS_PER_INSERT)
            .map(|k| {
                let p = 4 + 4 * k;
                format!(
                    "(?1, ?2, ?3 + {k}, ?{}, ?{}, ?{}, ?{})",
                    p,
                    p + 1,
                    p + 2,
                    p + 3
                )
            })
            .collect();
        format!(
            "INSERT INTO records (topic_id, partition, offset, timestamp_ms, key, value, headers) VALUES {}",
            rows.join(", ")
        )
    })
}

/// Inserts records into one partition at consecutive offsets from `at.2` on.
fn insert_run(
    conn: &Connection,
    at: (i64, i32, i64),
    records: &[ProducedRecord],
) -> Result<(), StorageError> {
    let (topic_id, partition, mut offset) = at;
    let mut chunks = records.chunks_exact(ROWS_PER_INSERT);
    if records.len() >= ROWS_PER_INSERT {
        let mut many = conn.prepare_cached(multi_row_insert())?;
        for chunk in &mut chunks {
            many.raw_bind_parameter(1, topic_id)?;
            many.raw_bind_parameter(2, partition)?;
            many.raw_bind_parameter(3, offset)?;
            for (k, record) in chunk.iter().enumerate() {
                let p = 4 + 4 * k;
                many.raw_bind_parameter(p, record.timestamp)?;
                many.raw_bind_parameter(p + 1, &record.key)?;
                many.raw_bind_parameter(p + 2, &record.value)?;
                many.raw_bind_parameter(p + 3, encode_headers(&record.headers))?;
            }
            many.raw_execute()?;
            offset += ROWS_PER_INSERT as i64;
        }
    }
    let rest = chunks.remainder();
    if rest.is_empty() {
        return Ok(());
    }
    let mut one = conn.prepare_cached(
        "INSERT INTO records (topic_id, partition, offset, timestamp_ms, key, value, headers)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for record in rest {
        one.execute(params![
            topic_id,
            partition,
            offset,
            record.timestamp,
            record.key,
            record.value,
            encode_headers(&record.headers),
        ])?;
        offset += 1;
    }
    Ok(())
}

/// Where each record of an appended batch went, in the batch's order: (topic, partition, offset). The
/// topic names are moved out of the records, so nothing is copied.
pub(super) fn assigned(records: Vec<ProducedRecord>, placed: &[Placed]) -> Vec<(String, i32, i64)> {
    let mut out = Vec::with_capacity(records.len());
    let mut records = records.into_iter();
    for run in placed {
        for (k, record) in records.by_ref().take(run.len).enumerate() {
            out.push((record.topic, run.partition, run.offset + k as i64));
        }
    }
    out
}

pub(super) fn topics(conn: &Connection) -> Result<Vec<(String, i32)>, StorageError> {
    let mut stmt = conn.prepare_cached("SELECT name, partitions FROM topics ORDER BY name")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub(super) fn read(
    conn: &Connection,
    tp: &TopicPartition,
    from: i64,
    max: usize,
) -> Result<Vec<LogRecord>, StorageError> {
    read_within(conn, tp, from, max, usize::MAX)
}

/// Up to `max` records from `from` on, stopping before the record that would take the sum of their
/// [`LogRecord::size`] past `max_bytes` (the first record is always read).
pub(super) fn read_within(
    conn: &Connection,
    tp: &TopicPartition,
    from: i64,
    max: usize,
    max_bytes: usize,
) -> Result<Vec<LogRecord>, StorageError> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.offset, r.timestamp_ms, r.key, r.value, r.headers FROM records r
         JOIN topics t ON t.id = r.topic_id
         WHERE t.name = ?1 AND r.partition = ?2 AND r.offset >= ?3 ORDER BY r.offset LIMIT ?4",
    )?;
    let mut rows = stmt.query(params![tp.topic, tp.partition, from, max as i64])?;
    let mut out = Vec::new();
    let mut bytes = 0usize;
    while let Some(r) = rows.next()? {
        let record = LogRecord {
            topic: tp.topic.clone(),
            partition: tp.partition,
            offset: r.get(0)?,
            timestamp: r.get(1)?,
            key: r.get(2)?,
            value: r.get(3)?,
            headers: decode_headers(r.get::<_, Option<Vec<u8>>>(4)?.as_deref()),
        };
        bytes = bytes.saturating_add(record.size());
        if bytes > max_bytes && !out.is_empty() {
            break;
        }
        out.push(record);
    }
    Ok(out)
}

pub(super) fn log_start(conn: &Connection, tp: &TopicPartition) -> Result<i64, StorageError> {
    // One statement, so one read snapshot: asked in two, a commit landing between them made an empty
    // partition's start its new end, and a sink assigned then skipped the partition's first records.
    let start: Option<i64> = conn
        .query_row(
            "SELECT COALESCE(
                 (SELECT MIN(r.offset) FROM records r JOIN topics t ON t.id = r.topic_id
                  WHERE t.name = ?1 AND r.partition = ?2),
                 (SELECT p.next_offset FROM partitions p JOIN topics t ON t.id = p.topic_id
                  WHERE t.name = ?1 AND p.partition = ?2))",
            params![tp.topic, tp.partition],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    Ok(start.unwrap_or(0))
}

pub(super) fn apply_retention(
    conn: &Connection,
    retention_ms: Option<i64>,
    retention_bytes: Option<i64>,
) -> Result<u64, StorageError> {
    let mut deleted = 0u64;
    if let Some(ms) = retention_ms.filter(|ms| *ms >= 0) {
        deleted += conn.execute(
            "DELETE FROM records WHERE timestamp_ms < ?1",
            [now_ms() - ms],
        )? as u64;
    }
    if let Some(bytes) = retention_bytes.filter(|b| *b >= 0) {
        let parts: Vec<(i64, i32)> = conn
            .prepare("SELECT topic_id, partition FROM partitions")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (topic_id, partition) in parts {
            let cutoff: Option<i64> = conn
                .query_row(
                    "SELECT offset FROM (
                         SELECT offset, SUM(COALESCE(length(key), 0) + COALESCE(length(value), 0)
                                            + COALESCE(length(headers), 0)) OVER (ORDER BY offset DESC) AS total
                         FROM records WHERE topic_id = ?1 AND partition = ?2)
                     WHERE total > ?3 ORDER BY offset DESC LIMIT 1",
                    params![topic_id, partition, bytes],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(cutoff) = cutoff {
                deleted += conn.execute(
                    "DELETE FROM records WHERE topic_id = ?1 AND partition = ?2 AND offset <= ?3",
                    params![topic_id, partition, cutoff],
                )? as u64;
            }
        }
    }
    Ok(deleted)
}

/// The bytes a record takes in the log, measured as `retention.bytes` and `log.buffer.max.bytes` measure
/// them: key, value and the encoded headers.
pub(super) fn record_bytes(record: &ProducedRecord) -> u64 {
    let headers: usize = record
        .headers
        .iter()
        .map(|(k, v)| 8 + k.len() + v.as_ref().map_or(0, Vec::len))
        .sum();
    (record.key.as_ref().map_or(0, Vec::len) + record.value.as_ref().map_or(0, Vec::len) + headers)
        as u64
}

/// The bytes every record of the log takes together.
pub(super) fn log_bytes(conn: &Connection) -> Result<u64, StorageError> {
    let total: i64 = conn.query_row(
        "SELECT COALESCE(SUM(COALESCE(length(key), 0) + COALESCE(length(value), 0)
                             + COALESCE(length(headers), 0)), 0) FROM records",
        [],
        |r| r.get(0),
    )?;
    Ok(total.max(0) as u64)
}

/// Per topic partition: the first offset held (the end offset when empty), the end offset, the records
/// held and their bytes, in one pass over the log.
pub(super) fn partition_stats(
    conn: &Connection,
) -> Result<Vec<(TopicPartition, PartitionStat)>, StorageError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.name, p.partition, p.next_offset, s.start, COALESCE(s.n, 0), COALESCE(s.bytes, 0)
         FROM partitions p JOIN topics t ON t.id = p.topic_id
         LEFT JOIN (SELECT topic_id, partition, MIN(offset) AS start, COUNT(*) AS n,
                           SUM(COALESCE(length(key), 0) + COALESCE(length(value), 0)
                               + COALESCE(length(headers), 0)) AS bytes
                    FROM records GROUP BY topic_id, partition) s
           ON s.topic_id = p.topic_id AND s.partition = p.partition
         ORDER BY t.name, p.partition",
    )?;
    let rows = stmt.query_map([], |r| {
        let end: i64 = r.get(2)?;
        Ok((
            TopicPartition {
                topic: r.get(0)?,
                partition: r.get(1)?,
            },
            PartitionStat {
                start: r.get::<_, Option<i64>>(3)?.unwrap_or(end),
                end,
                records: r.get::<_, i64>(4)?.max(0) as u64,
                bytes: r.get::<_, i64>(5)?.max(0) as u64,
            },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Deletes the records that every existing sink connector with a committed offset on their partition has
/// already read past (they were delivered). Returns how many were deleted.
pub(super) fn reclaim_delivered(conn: &Connection) -> Result<u64, StorageError> {
    let delivered = delivered_below(conn)?;
    let mut deleted = 0u64;
    let mut delete = conn.prepare_cached(
        "DELETE FROM records WHERE topic_id = ?1 AND partition = ?2 AND offset < ?3",
    )?;
    for (topic_id, partition, below) in delivered {
        deleted += delete.execute(params![topic_id, partition, below])? as u64;
    }
    Ok(deleted)
}

/// Per partition that existing sink connectors read, as (topic id, partition, offset): the offset below
/// which every one of them has delivered.
fn delivered_below(conn: &Connection) -> Result<Vec<(i64, i32, i64)>, StorageError> {
    Ok(conn
        .prepare_cached(
            "SELECT t.id, s.partition, MIN(s.offset) FROM sink_offsets s
             JOIN topics t ON t.name = s.topic
             JOIN connector_configs c ON c.name = s.connector
             GROUP BY t.id, s.partition",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?)
}

/// Deletes, in each partition, at most `max_records` of the oldest records that every sink reading it
/// has delivered. Returns (records, bytes) deleted.
pub(super) fn reclaim_delivered_step(
    conn: &Connection,
    max_records: i64,
) -> Result<(u64, u64), StorageError> {
    let (mut records, mut bytes) = (0u64, 0u64);
    for (topic_id, partition, below) in delivered_below(conn)? {
        let first: Option<i64> = conn
            .prepare_cached(
                "SELECT MIN(offset) FROM records WHERE topic_id = ?1 AND partition = ?2",
            )?
            .query_row(params![topic_id, partition], |r| r.get(0))?;
        let Some(first) = first else { continue };
        let upto = below.min(first.saturating_add(max_records));
        if upto <= first {
            continue;
        }
        let (n, b): (i64, i64) = conn
            .prepare_cached(
                "SELECT COUNT(*), COALESCE(SUM(COALESCE(length(key), 0) + COALESCE(length(value), 0)
                        + COALESCE(length(headers), 0)), 0)
                 FROM records WHERE topic_id = ?1 AND partition = ?2 AND offset < ?3",
            )?
            .query_row(params![topic_id, partition, upto], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        conn.prepare_cached(
            "DELETE FROM records WHERE topic_id = ?1 AND partition = ?2 AND offset < ?3",
        )?
        .execute(params![topic_id, partition, upto])?;
        records += n.max(0) as u64;
        bytes += b.max(0) as u64;
    }
    Ok((records, bytes))
}

/// Deletes the oldest records (by timestamp, always a prefix of each partition) until at least `to_free`
/// bytes are gone or the log is empty. Returns (records, bytes) deleted.
pub(super) fn drop_oldest(conn: &Connection, to_free: u64) -> Result<(u64, u64), StorageError> {
    let mut upto: std::collections::HashMap<(i64, i32), i64> = std::collections::HashMap::new();
    let mut freed = 0u64;
    {
        let mut stmt = conn.prepare_cached(
            "SELECT topic_id, partition, offset, COALESCE(length(key), 0) + COALESCE(length(value), 0)
                    + COALESCE(length(headers), 0)
             FROM records ORDER BY COALESCE(timestamp_ms, 0), offset",
        )?;
        let mut rows = stmt.query([])?;
        while freed < to_free {
            let Some(row) = rows.next()? else { break };
            let (topic_id, partition, offset, bytes): (i64, i32, i64, i64) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            let entry = upto.entry((topic_id, partition)).or_insert(offset);
            *entry = (*entry).max(offset);
            freed += bytes.max(0) as u64;
        }
    }
    let mut records = 0u64;
    let mut bytes = 0u64;
    for ((topic_id, partition), offset) in upto {
        let (n, b): (i64, i64) = conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(COALESCE(length(key), 0) + COALESCE(length(value), 0)
                    + COALESCE(length(headers), 0)), 0)
             FROM records WHERE topic_id = ?1 AND partition = ?2 AND offset <= ?3",
            params![topic_id, partition, offset],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        conn.execute(
            "DELETE FROM records WHERE topic_id = ?1 AND partition = ?2 AND offset <= ?3",
            params![topic_id, partition, offset],
        )?;
        records += n.max(0) as u64;
        bytes += b.max(0) as u64;
    }
    Ok((records, bytes))
}

/// Makes sure a topic exists with at least `partitions` partitions, adding partitions when it has fewer
/// (as Kafka's `createPartitions` does). Returns the partition count.
pub(super) fn ensure_partitions(
    conn: &Connection,
    name: &str,
    partitions: i32,
) -> Result<i32, StorageError> {
    let (id, existing) = ensure_topic(conn, name, partitions.max(1))?;
    if existing >= partitions {
        return Ok(existing);
    }
    for p in existing..partitions {
        conn.execute(
            "INSERT INTO partitions (topic_id, partition, next_offset) VALUES (?1, ?2, 0)",
            params![id, p],
        )?;
    }
    conn.execute(
        "UPDATE topics SET partitions = ?2 WHERE id = ?1",
        params![id, partitions],
    )?;
    Ok(partitions)
}

/// Kafka's default partitioner for keyed records: murmur2 of the key bytes, made positive, modulo the count.
fn choose_partition(key: Option<&[u8]>, partitions: i32) -> i32 {
    match key {
        Some(k) if partitions > 1 => ((murmur2(k) & 0x7fff_ffff) % partitions as u32) as i32,
        _ => 0,
    }
}

/// Kafka's `Utils.murmur2`.
fn murmur2(data: &[u8]) -> u32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let len = data.len();
    let mut h = SEED ^ len as u32;
    let chunks = data.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    match tail.len() {
        3 => {
            h ^= u32::from(tail[2]) << 16;
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        2 => {
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        1 => {
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

/// Headers as a compact binary: per header, a u32 key length, the key, an i32 value length (-1 for null)
/// and the value. `None` when there are no headers, so most rows store nothing.
fn encode_headers(headers: &[(String, Option<Vec<u8>>)]) -> Option<Vec<u8>> {
    if headers.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (key, value) in headers {
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(key.as_bytes());
        match value {
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(v);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    Some(out)
}

fn decode_headers(data: Option<&[u8]>) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let Some(mut rest) = data else { return out };
    fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if rest.len() < n {
            return None;
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Some(head)
    }
    while !rest.is_empty() {
        let Some(kl) = take(&mut rest, 4) else { break };
        let kl = u32::from_be_bytes([kl[0], kl[1], kl[2], kl[3]]) as usize;
        let Some(key) = take(&mut rest, kl) else {
            break;
        };
        let Some(vl) = take(&mut rest, 4) else { break };
        let vl = i32::from_be_bytes([vl[0], vl[1], vl[2], vl[3]]);
        let value = if vl < 0 {
            None
        } else {
            match take(&mut rest, vl as usize) {
                Some(v) => Some(v.to_vec()),
                None => break,
            }
        };
        out.push((String::from_utf8_lossy(key).into_owned(), value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur2_matches_kafka() {
        // Values from Kafka's UtilsTest.testMurmur2.
        let cases: [(&[u8], i32); 3] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
        ];
        for (input, expected) in cases {
            assert_eq!(
                murmur2(input) as i32,
                expected,
                "{:?}",
                std::str::from_utf8(input)
            );
        }
    }

    #[test]
    fn headers_round_trip() {
        let headers = vec![
            ("a".to_string(), Some(b"1".to_vec())),
            ("b".to_string(), None),
        ];
        assert_eq!(decode_headers(encode_headers(&headers).as_deref()), headers);
        assert_eq!(encode_headers(&[]), None);
        assert!(decode_headers(None).is_empty());
    }
}
