//! The JDBC source task: one querier per table (or one for `query`), each polled every
//! `poll.interval.ms`, building Confluent's incremental queries and keeping its offsets.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value as Json};

use super::db::{ColumnInfo, Conn, DbError, TableId};
use super::quote;
use super::source_config::*;
use super::types::{self, Kind, Param, Raw};
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::data::{SchemaBuilder, SchemaRef, Struct, Value};
use crate::record::{ConnectRecord, SourceRecord};

/// Where one querier has got.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Offset {
    incrementing: Option<i64>,
    /// Nanoseconds since the epoch.
    timestamp: Option<i64>,
}

impl Offset {
    fn from_json(j: &Json) -> Offset {
        let ms = j.get(TIMESTAMP_FIELD).and_then(Json::as_i64);
        let nanos = j.get(TIMESTAMP_NANOS_FIELD).and_then(Json::as_i64);
        Offset {
            incrementing: j.get(INCREMENTING_FIELD).and_then(Json::as_i64),
            timestamp: ms.map(|ms| {
                ms.div_euclid(1000) * 1_000_000_000
                    + nanos.unwrap_or(ms.rem_euclid(1000) * 1_000_000)
            }),
        }
    }

    /// Confluent's `TimestampIncrementingOffset.toMap()`.
    fn to_json(self) -> Map<String, Json> {
        let mut m = Map::new();
        if let Some(i) = self.incrementing {
            m.insert(INCREMENTING_FIELD.into(), json!(i));
        }
        if let Some(ns) = self.timestamp {
            m.insert(TIMESTAMP_FIELD.into(), json!(ns.div_euclid(1_000_000)));
            m.insert(
                TIMESTAMP_NANOS_FIELD.into(),
                json!(ns.rem_euclid(1_000_000_000)),
            );
        }
        m
    }
}

/// One table (or the query) being copied.
struct Querier {
    table: Option<TableId>,
    topic: String,
    partition: Map<String, Json>,
    offset: Offset,
    incrementing_column: Option<String>,
    next_run: Instant,
    /// Rows of a bulk query not returned yet.
    pending: VecDeque<SourceRecord>,
    schema: Option<(Vec<String>, SchemaRef, Vec<Option<Kind>>)>,
    columns: Vec<ColumnInfo>,
}

/// `io.confluent.connect.jdbc.source.JdbcSourceTask`.
#[derive(Default)]
pub struct JdbcSourceTask {
    settings: Option<Settings>,
    config: Props,
    conn: Option<Conn>,
    queriers: Vec<Querier>,
    tables_checked: Option<Instant>,
    /// Columns of unsupported types already logged.
    dropped_logged: std::collections::HashSet<String>,
    /// The `table.whitelist` entries last found missing from the database (warned about once per change).
    missing: Vec<String>,
}

fn db_error(e: DbError) -> TaskError {
    if e.transient {
        TaskError::Retriable(format!("The database is unavailable: {e}"))
    } else {
        TaskError::fatal(e.message)
    }
}

impl SourceTask for JdbcSourceTask {
    fn start(&mut self, config: &Props, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let settings = settings(config)?;
        self.config = config.clone();
        if settings.query.is_some() {
            let partition = partition_map(&[("query", "query")]);
            let offset = context.offset(&Json::Object(partition.clone()))?;
            let inc = Some(settings.incrementing_column.clone())
                .filter(|_| settings.mode.has_incrementing());
            self.queriers.push(Querier::new(
                None,
                settings.topic_prefix.clone(),
                partition,
                offset.as_ref(),
                inc,
            ));
        }
        self.settings = Some(settings);
        self.connect(context)?;
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        let result = self.poll_inner(context);
        if let Err(TaskError::Retriable(_)) = &result {
            self.conn = None; // reconnect on the next poll
        }
        result
    }

    fn stop(&mut self) {
        self.conn = None;
    }
}

fn partition_map(pairs: &[(&str, &str)]) -> Map<String, Json> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}

impl JdbcSourceTask {
    fn connect(&mut self, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        if self.conn.is_none() {
            let (spec, attempts, backoff) = super::conn_spec(&self.config, true);
            let conn = Conn::open_with_retries(&spec, attempts, backoff, &|d| context.wait(d))
                .map_err(db_error)?;
            self.conn = Some(conn);
        }
        Ok(())
    }

    fn poll_inner(
        &mut self,
        context: &dyn SourceTaskContext,
    ) -> Result<Vec<SourceRecord>, TaskError> {
        self.connect(context)?;
        let settings = self
            .settings
            .clone()
            .ok_or_else(|| TaskError::fatal("not started"))?;
        if settings.query.is_none() {
            let due = self
                .tables_checked
                .is_none_or(|t| t.elapsed() >= settings.table_poll_interval);
            if due {
                self.refresh_tables(&settings, context)?;
            }
        }
        let now = Instant::now();
        let Some(i) = (0..self.queriers.len()).min_by_key(|i| self.queriers[*i].next_run) else {
            let until = self
                .tables_checked
                .map(|t| t + settings.table_poll_interval)
                .unwrap_or(now);
            context.idle(
                until
                    .saturating_duration_since(now)
                    .clamp(Duration::from_millis(10), Duration::from_secs(1)),
            );
            return Ok(Vec::new());
        };
        let next = self.queriers[i].next_run;
        if next > now {
            context.idle((next - now).min(Duration::from_secs(1)));
            return Ok(Vec::new());
        }
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| TaskError::Retriable("not connected".into()))?;
        let querier = &mut self.queriers[i];
        let (records, full) = querier.step(conn, &settings, &mut self.dropped_logged)?;
        querier.next_run = if full {
            Instant::now()
        } else {
            Instant::now() + settings.poll_interval
        };
        Ok(records)
    }

    fn refresh_tables(
        &mut self,
        settings: &Settings,
        context: &dyn SourceTaskContext,
    ) -> Result<(), TaskError> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| TaskError::Retriable("not connected".into()))?;
        let all = conn
            .tables(settings.schema_pattern.as_deref())
            .map_err(db_error)?;
        let missing: Vec<String> = settings
            .whitelist
            .iter()
            .filter(|w| !all.iter().any(|t| t.name == **w || t.fqn() == **w))
            .cloned()
            .collect();
        if missing != self.missing {
            if missing.is_empty() {
                tracing::info!(
                    connector = self.config.get("name").map_or("", String::as_str),
                    "Every table in table.whitelist exists now."
                );
                context.warn(None);
            } else {
                let message = format!(
                    "Tables in table.whitelist that the database does not have: {}. The other tables are copied; the list is checked again every table.poll.interval.ms.",
                    missing.join(", ")
                );
                tracing::warn!(
                    connector = self.config.get("name").map_or("", String::as_str),
                    "{message}"
                );
                context.warn(Some(message));
            }
            self.missing = missing;
        }
        let tables: Vec<TableId> = all
            .into_iter()
            .filter(|t| settings.selects(t) && settings.owns(t))
            .collect();
        self.tables_checked = Some(Instant::now());
        let before = self.queriers.len();
        self.queriers
            .retain(|q| q.table.as_ref().is_some_and(|t| tables.contains(t)));
        for table in tables {
            if self
                .queriers
                .iter()
                .any(|q| q.table.as_ref() == Some(&table))
            {
                continue;
            }
            let partition = partition_map(&[("protocol", "1"), ("table", &table.fqn())]);
            let mut offset = context.offset(&Json::Object(partition.clone()))?;
            if offset.is_none() {
                offset = context.offset(&json!({ "table": table.name }))?;
            }
            let columns = conn.columns(&table).map_err(db_error)?;
            let inc = incrementing_column(settings, &table, &columns)?;
            check_non_null(settings, &table, &columns, inc.as_deref())?;
            tracing::info!(table = %table.fqn(), "JDBC source copies table");
            let topic = format!("{}{}", settings.topic_prefix, table.name);
            let mut q = Querier::new(Some(table), topic, partition, offset.as_ref(), inc);
            q.columns = columns;
            self.queriers.push(q);
        }
        if self.queriers.len() != before {
            tracing::debug!(
                tables = self.queriers.len(),
                "JDBC source table set changed"
            );
        }
        Ok(())
    }
}

/// The incrementing column: the configured one, or the table's auto-increment column.
fn incrementing_column(
    settings: &Settings,
    table: &TableId,
    columns: &[ColumnInfo],
) -> Result<Option<String>, TaskError> {
    if !settings.mode.has_incrementing() {
        return Ok(None);
    }
    if !settings.incrementing_column.is_empty() {
        return Ok(Some(settings.incrementing_column.clone()));
    }
    match columns.iter().find(|c| c.auto_increment) {
        Some(c) => Ok(Some(c.name.clone())),
        None => Err(TaskError::fatal(format!(
            "Cannot find an auto-incrementing column in table {}: set {INCREMENTING_COLUMN}",
            table.fqn()
        ))),
    }
}

/// Confluent's `validate.non.null` check at start.
fn check_non_null(
    settings: &Settings,
    table: &TableId,
    columns: &[ColumnInfo],
    inc: Option<&str>,
) -> Result<(), TaskError> {
    if !settings.validate_non_null {
        return Ok(());
    }
    let nullable = |name: &str| {
        columns
            .iter()
            .find(|c| c.name == name)
            .is_some_and(|c| c.nullable)
    };
    if let Some(inc) = inc {
        if nullable(inc) && !columns.iter().any(|c| c.name == inc && c.primary_key) {
            return Err(TaskError::fatal(format!(
                "Cannot make incremental queries using incrementing column {inc} on {} because this column is nullable.",
                table.fqn()
            )));
        }
    }
    if settings.mode.has_timestamp() && settings.timestamp_columns.iter().all(|c| nullable(c)) {
        return Err(TaskError::fatal(format!(
            "Cannot make incremental queries using timestamp columns {} on {} because all of these columns are nullable.",
            settings.timestamp_columns.join(","),
            table.fqn()
        )));
    }
    Ok(())
}

impl Querier {
    fn new(
        table: Option<TableId>,
        topic: String,
        partition: Map<String, Json>,
        offset: Option<&Json>,
        inc: Option<String>,
    ) -> Self {
        Querier {
            table,
            topic,
            partition,
            offset: offset.map(Offset::from_json).unwrap_or_default(),
            incrementing_column: inc,
            next_run: Instant::now(),
            pending: VecDeque::new(),
            schema: None,
            columns: Vec::new(),
        }
    }

    /// Runs the next query; returns its records and whether more are waiting.
    fn step(
        &mut self,
        conn: &mut Conn,
        s: &Settings,
        dropped: &mut std::collections::HashSet<String>,
    ) -> Result<(Vec<SourceRecord>, bool), TaskError> {
        if !self.pending.is_empty() {
            let n = self.pending.len().min(s.batch_max_rows);
            let out: Vec<SourceRecord> = self.pending.drain(..n).collect();
            return Ok((out, !self.pending.is_empty()));
        }
        if let Some(table) = &self.table {
            self.columns = conn.columns(table).map_err(db_error)?;
        }
        let postgres = conn.is_postgres();
        let q = Some(conn.quote_char()).filter(|_| s.quote);
        let mut sql = self.select(postgres, s, q);
        let begin = self.begin_timestamp(conn, s)?;
        let end = if s.mode.has_timestamp() {
            conn.now_nanos().map_err(db_error)? - s.delay_ms * 1_000_000
        } else {
            0
        };
        let mut params = self.criteria(&mut sql, s, postgres, q, (begin, end));
        if !s.query_suffix.is_empty() {
            sql.push(' ');
            sql.push_str(&s.query_suffix);
        }
        let limited = s.mode != Mode::Bulk;
        let limited_sql = if limited {
            format!("{sql} LIMIT {}", s.batch_max_rows)
        } else {
            sql.clone()
        };
        tracing::trace!(sql = %limited_sql, "JDBC source query");
        let mut rs = conn.query(&limited_sql, &params).map_err(db_error)?;
        let mut full = limited && rs.rows.len() >= s.batch_max_rows;
        if full && s.mode == Mode::Timestamp {
            // Never stop inside a run of rows sharing a timestamp: the next query starts after it.
            let ts_index = self.ts_index(&rs.columns, s);
            let last = rs.rows.last().and_then(|r| row_timestamp(r, &ts_index));
            let keep = rs
                .rows
                .iter()
                .rposition(|r| row_timestamp(r, &ts_index) != last)
                .map_or(0, |p| p + 1);
            if keep > 0 {
                rs.rows.truncate(keep);
            } else if let Some(last) = last {
                let unit = if postgres { 1_000 } else { 1_000_000 };
                params[1] = ts_param(postgres, last + unit);
                rs = conn.query(&sql, &params).map_err(db_error)?;
            }
        }
        let records = self.records(rs, s, postgres, dropped)?;
        if s.mode == Mode::Bulk && records.len() > s.batch_max_rows {
            self.pending.extend(records);
            let out: Vec<SourceRecord> = self.pending.drain(..s.batch_max_rows).collect();
            return Ok((out, true));
        }
        full &= !records.is_empty();
        Ok((records, full))
    }

    /// Appends Confluent's WHERE and ORDER BY clause for the mode to `sql`; returns its parameters.
    fn criteria(
        &self,
        sql: &mut String,
        s: &Settings,
        postgres: bool,
        q: Option<char>,
        (begin, end): (i64, i64),
    ) -> Vec<Param> {
        let placeholder = |n: usize, ts: bool| match (postgres, ts) {
            (true, true) => format!("${n}::timestamptz"),
            (true, false) => format!("${n}"),
            (false, _) => "?".into(),
        };
        let t = self.timestamp_expr(postgres, s, q);
        let c = quote(self.incrementing_column.as_deref().unwrap_or_default(), q);
        let last_inc = Param::Int(self.offset.incrementing.unwrap_or(-1));
        let ts = |nanos: i64| ts_param(postgres, nanos);
        match s.mode {
            Mode::Bulk => Vec::new(),
            Mode::Incrementing => {
                let p = placeholder(1, false);
                sql.push_str(&format!(" WHERE {c} > {p} ORDER BY {c} ASC"));
                vec![last_inc]
            }
            Mode::Timestamp => {
                let (p1, p2) = (placeholder(1, true), placeholder(2, true));
                sql.push_str(&format!(
                    " WHERE {t} > {p1} AND {t} < {p2} ORDER BY {t} ASC"
                ));
                vec![ts(begin), ts(end)]
            }
            Mode::TimestampIncrementing => {
                let p: Vec<String> = [(1, true), (2, true), (3, false), (4, true)]
                    .iter()
                    .map(|(n, is_ts)| placeholder(*n, *is_ts))
                    .collect();
                sql.push_str(&format!(
                    " WHERE {t} < {} AND (({t} = {} AND {c} > {}) OR {t} > {}) ORDER BY {t},{c} ASC",
                    p[0], p[1], p[2], p[3]
                ));
                vec![ts(end), ts(begin), last_inc, ts(begin)]
            }
        }
    }

    /// `SELECT ... FROM table` (or the query): PostgreSQL timestamps without time zone are read in
    /// `db.timezone`.
    fn select(&self, postgres: bool, s: &Settings, q: Option<char>) -> String {
        if let Some(query) = &s.query {
            return query.clone();
        }
        let table = self.table.as_ref().expect("table mode");
        let from = match &table.schema {
            Some(schema) => format!("{}.{}", quote(schema, q), quote(&table.name, q)),
            None => quote(&table.name, q),
        };
        if !postgres {
            return format!("SELECT * FROM {from}");
        }
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                if c.type_name == "timestamp" {
                    format!(
                        "{}::timestamptz AS {}",
                        quote(&c.name, q),
                        quote(&c.name, q)
                    )
                } else {
                    quote(&c.name, q)
                }
            })
            .collect();
        format!("SELECT {} FROM {from}", cols.join(","))
    }

    /// The timestamp columns combined with COALESCE; on SQLite normalised to one text form so that text
    /// and epoch-millisecond values compare correctly.
    fn timestamp_expr(&self, postgres: bool, s: &Settings, q: Option<char>) -> String {
        let cols: Vec<String> = s.timestamp_columns.iter().map(|c| quote(c, q)).collect();
        let x = if cols.len() == 1 {
            cols[0].clone()
        } else {
            format!("COALESCE({})", cols.join(","))
        };
        if postgres {
            x
        } else {
            format!("(CASE typeof({x}) WHEN 'integer' THEN strftime('%Y-%m-%d %H:%M:%f', {x}/1000.0, 'unixepoch') ELSE strftime('%Y-%m-%d %H:%M:%f', {x}) END)")
        }
    }

    /// The lower timestamp bound: the offset, else `timestamp.initial` (-1: the database's current time),
    /// else the epoch.
    fn begin_timestamp(&mut self, conn: &mut Conn, s: &Settings) -> Result<i64, TaskError> {
        if let Some(ts) = self.offset.timestamp {
            return Ok(ts);
        }
        match s.timestamp_initial {
            Some(-1) if s.mode.has_timestamp() => {
                let now = conn.now_nanos().map_err(db_error)?;
                self.offset.timestamp = Some(now);
                Ok(now)
            }
            Some(ms) => Ok(ms * 1_000_000),
            None => Ok(0),
        }
    }

    fn ts_index(&self, columns: &[(String, Option<String>)], s: &Settings) -> Vec<usize> {
        s.timestamp_columns
            .iter()
            .filter_map(|t| {
                columns
                    .iter()
                    .position(|(n, _)| n == t)
                    .or_else(|| columns.iter().position(|(n, _)| n.eq_ignore_ascii_case(t)))
            })
            .collect()
    }

    fn schema_for(
        &mut self,
        columns: &[(String, Option<String>)],
        s: &Settings,
        postgres: bool,
        dropped: &mut std::collections::HashSet<String>,
    ) -> (SchemaRef, Vec<Option<Kind>>) {
        let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        if let Some((n, schema, kinds)) = &self.schema {
            if *n == names {
                return (schema.clone(), kinds.clone());
            }
        }
        let mut b = SchemaBuilder::struct_();
        if let Some(t) = &self.table {
            b = b.name(t.name.clone());
        }
        let mut kinds = Vec::new();
        for (name, decl) in columns {
            let info = self.columns.iter().find(|c| &c.name == name);
            let kind = if postgres {
                let (p, sc) = info.map(|c| (c.precision, c.scale)).unwrap_or((0, None));
                types::pg_kind(decl.as_deref().unwrap_or(""), p, sc, s.numeric)
            } else {
                types::sqlite_kind(decl.as_deref(), s.numeric)
            };
            match kind {
                Some(k) => {
                    b = b.field(
                        name.clone(),
                        types::schema_for(k, info.is_none_or(|c| c.nullable)),
                    );
                }
                None => {
                    if dropped.insert(format!("{}.{name}", self.topic)) {
                        tracing::warn!(column = %name, r#type = decl.as_deref().unwrap_or(""), topic = %self.topic, "JDBC type is not currently supported; the column is dropped");
                    }
                }
            }
            kinds.push(kind);
        }
        let schema = b.build();
        self.schema = Some((names, schema.clone(), kinds.clone()));
        (schema, kinds)
    }

    fn records(
        &mut self,
        rs: super::db::ResultSet,
        s: &Settings,
        postgres: bool,
        dropped: &mut std::collections::HashSet<String>,
    ) -> Result<Vec<SourceRecord>, TaskError> {
        let (schema, kinds) = self.schema_for(&rs.columns, s, postgres, dropped);
        let ts_index = self.ts_index(&rs.columns, s);
        let inc_index = self
            .incrementing_column
            .as_ref()
            .map(|c| {
                rs.columns.iter().position(|(n, _)| n == c).ok_or_else(|| {
                    TaskError::fatal(format!(
                        "Incrementing column {c} not found in {}",
                        rs.columns
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    ))
                })
            })
            .transpose()?;
        let mut out = Vec::with_capacity(rs.rows.len());
        for row in rs.rows {
            if s.mode.has_timestamp() {
                if let Some(ts) = row_timestamp(&row, &ts_index) {
                    self.offset.timestamp = Some(if postgres {
                        ts
                    } else {
                        (ts + 500_000).div_euclid(1_000_000) * 1_000_000
                    });
                }
            }
            if let Some(i) = inc_index {
                match &row[i] {
                    Raw::Int(v) => self.offset.incrementing = Some(*v),
                    Raw::Text(t) => {
                        self.offset.incrementing = t.split('.').next().and_then(|v| v.parse().ok())
                    }
                    Raw::Null => {
                        return Err(TaskError::fatal("Null value for incrementing column"))
                    }
                    other => {
                        return Err(TaskError::fatal(format!(
                            "Invalid type for incrementing column: {other:?}"
                        )))
                    }
                }
            }
            let mut values = Vec::with_capacity(schema.fields.len());
            for (raw, kind) in row.into_iter().zip(&kinds) {
                if let Some(kind) = kind {
                    values.push(types::to_value(raw, *kind).map_err(TaskError::fatal)?);
                }
            }
            let value = Value::Struct(Struct {
                schema: schema.clone(),
                values,
            });
            let offset = (s.mode != Mode::Bulk).then(|| self.offset.to_json());
            out.push(SourceRecord {
                source_partition: Some(self.partition.clone()),
                source_offset: offset,
                record: ConnectRecord::new(self.topic.clone(), Some(schema.clone()), value),
            });
        }
        Ok(out)
    }
}

/// The first non-null timestamp column of a row, in nanoseconds.
fn row_timestamp(row: &[Raw], ts_index: &[usize]) -> Option<i64> {
    ts_index
        .iter()
        .find_map(|i| row.get(*i).and_then(types::raw_timestamp_nanos))
}

/// A timestamp bound: `2024-05-01 10:00:00.123456+00` for PostgreSQL (a timestamptz), the normalised
/// `2024-05-01 10:00:00.123` text for SQLite.
fn ts_param(postgres: bool, nanos: i64) -> Param {
    let text = types::format_timestamp(nanos);
    if postgres {
        Param::Text(format!("{text}+00"))
    } else {
        Param::Text(text[..text.len() - 3].to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn offsets_round_trip_in_confluents_shape() {
        let o = Offset {
            incrementing: Some(7),
            timestamp: Some(1_700_000_000_123_456_789),
        };
        let j = Json::Object(o.to_json());
        assert_eq!(
            j,
            json!({"incrementing": 7, "timestamp": 1_700_000_000_123i64, "timestamp_nanos": 123_456_789})
        );
        assert_eq!(Offset::from_json(&j), o);
        let legacy = Offset::from_json(&json!({"timestamp": 1500}));
        assert_eq!(legacy.timestamp, Some(1_500_000_000));
    }

    #[test]
    fn validation_names_the_key() {
        let cfg: BTreeMap<String, Option<String>> = [
            ("mode", "timestamp"),
            ("table.whitelist", "a"),
            ("table.blacklist", "b"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
        let mut errors = Vec::new();
        validate(&cfg, &mut errors);
        let keys: Vec<&str> = errors.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"table.blacklist"), "{errors:?}");
        assert!(keys.contains(&"timestamp.column.name"), "{errors:?}");
    }

    #[test]
    fn sqlite_bound_has_milliseconds() {
        assert_eq!(
            ts_param(false, 1_500_000_000),
            Param::Text("1970-01-01 00:00:01.500".into())
        );
        assert_eq!(
            ts_param(true, 1_500_000_000),
            Param::Text("1970-01-01 00:00:01.500000+00".into())
        );
    }
}
