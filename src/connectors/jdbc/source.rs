//! The JDBC source task: one querier per table (or one for `query`), each polled every
//! `poll.interval.ms`, building Confluent's incremental queries and keeping its offsets.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value as Json};

use super::db::{ColumnInfo, Conn, DbError, TableId};
use super::types::{self, Kind, NumericMapping, Param, Raw};
use super::{quote, TASK_COUNT, TASK_INDEX};
use crate::config::def::{ConfigDef, ConfigType, Importance, Validator};
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::data::{SchemaBuilder, SchemaRef, Struct, Value};
use crate::record::{ConnectRecord, SourceRecord};

pub(crate) const QUERY: &str = "query";
const MODE: &str = "mode";
const INCREMENTING_COLUMN: &str = "incrementing.column.name";
const TIMESTAMP_COLUMN: &str = "timestamp.column.name";
const TIMESTAMP_INITIAL: &str = "timestamp.initial";
const TIMESTAMP_DELAY: &str = "timestamp.delay.interval.ms";
const VALIDATE_NON_NULL: &str = "validate.non.null";
const TOPIC_PREFIX: &str = "topic.prefix";
const POLL_INTERVAL: &str = "poll.interval.ms";
const BATCH_MAX_ROWS: &str = "batch.max.rows";
const TABLE_POLL_INTERVAL: &str = "table.poll.interval.ms";
const WHITELIST: &str = "table.whitelist";
const BLACKLIST: &str = "table.blacklist";
const INCLUDE_LIST: &str = "table.include.list";
const EXCLUDE_LIST: &str = "table.exclude.list";
const SCHEMA_PATTERN: &str = "schema.pattern";
const NUMERIC_MAPPING: &str = "numeric.mapping";
const NUMERIC_PRECISION_MAPPING: &str = "numeric.precision.mapping";
const QUERY_SUFFIX: &str = "query.suffix";
const MODES: [&str; 4] = [
    "bulk",
    "timestamp",
    "incrementing",
    "timestamp+incrementing",
];

const INCREMENTING_FIELD: &str = "incrementing";
const TIMESTAMP_FIELD: &str = "timestamp";
const TIMESTAMP_NANOS_FIELD: &str = "timestamp_nanos";

/// The source's own keys on top of the connection keys.
pub(crate) fn config_def(def: ConfigDef) -> ConfigDef {
    use super::key;
    use ConfigType::*;
    use Importance::*;
    def.define(key(MODE, String, Some(""), High, "The mode for updating a table each time it is polled: bulk, timestamp, incrementing or timestamp+incrementing.")
        .validator(Validator::OneOf(vec!["", "bulk", "timestamp", "incrementing", "timestamp+incrementing"])))
        .define(key(INCREMENTING_COLUMN, String, Some(""), Medium, "The name of the strictly incrementing column to use to detect new rows. Empty: the table's auto-increment column."))
        .define(key(TIMESTAMP_COLUMN, List, Some(""), Medium, "Comma-separated list of timestamp columns to detect new or modified rows, combined with COALESCE."))
        .define(key(TIMESTAMP_INITIAL, Long, None, Low, "The epoch timestamp (ms) used for initial queries in timestamp modes; -1 for the current time."))
        .define(key(TIMESTAMP_DELAY, Long, Some("0"), High, "How long to wait after a row with a certain timestamp appears before it is included in the result.").validator(Validator::AtLeast(0.0)))
        .define(key(VALIDATE_NON_NULL, Boolean, Some("true"), Low, "Whether to validate that the incrementing and timestamp columns are NOT NULL."))
        .define(key(QUERY, String, Some(""), Medium, "If specified, the query to perform to select new or updated rows."))
        .define(key(QUERY_SUFFIX, String, Some(""), Low, "Suffix to append at the end of the generated query."))
        .define(key(TOPIC_PREFIX, String, None, High, "Prefix to prepend to table names to generate the name of the Kafka topic to publish data to, or in the case of a custom query, the full name of the topic.").validator(Validator::NonNull))
        .define(key(POLL_INTERVAL, Int, Some("5000"), High, "Frequency in ms to poll for new data in each table.").validator(Validator::AtLeast(0.0)))
        .define(key(BATCH_MAX_ROWS, Int, Some("100"), Low, "Maximum number of rows to include in a single batch when polling for new data.").validator(Validator::AtLeast(1.0)))
        .define(key(TABLE_POLL_INTERVAL, Long, Some("60000"), Low, "Frequency in ms to poll for new or removed tables.").validator(Validator::AtLeast(0.0)))
        .define(key(WHITELIST, List, Some(""), Medium, "List of tables to include in copying. If specified, table.blacklist may not be set."))
        .define(key(BLACKLIST, List, Some(""), Medium, "List of tables to exclude from copying. If specified, table.whitelist may not be set."))
        .define(key(INCLUDE_LIST, List, Some(""), Medium, "A comma-separated list of regular expressions that match the fully-qualified names of tables to be copied."))
        .define(key(EXCLUDE_LIST, List, Some(""), Medium, "A comma-separated list of regular expressions that match the fully-qualified names of tables not to be copied."))
        .define(key(SCHEMA_PATTERN, String, None, Medium, "Schema pattern to fetch table metadata from the database."))
        .define(key("catalog.pattern", String, None, Medium, "Catalog pattern to fetch table metadata from the database."))
        .define(key("table.types", List, Some("TABLE"), Low, "By default, the JDBC connector will only detect tables with type TABLE from the source Database."))
        .define(key(NUMERIC_PRECISION_MAPPING, Boolean, Some("false"), Low, "Whether or not to attempt mapping NUMERIC values by precision to integral types (deprecated: numeric.mapping)."))
        .define(key(NUMERIC_MAPPING, String, None, Low, "Map NUMERIC values by precision and optionally scale to integral or decimal types: none, best_fit, best_fit_eager_double, precision_only.")
            .validator(Validator::NullOr(Box::new(Validator::OneOfCaseInsensitive(vec!["none", "best_fit", "best_fit_eager_double", "precision_only"])))))
}

fn set<'a>(config: &'a BTreeMap<String, Option<String>>, k: &str) -> Option<&'a str> {
    config
        .get(k)
        .and_then(|v| v.as_deref())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// Checks across keys, with Confluent's messages where it has them.
pub(crate) fn validate(
    config: &BTreeMap<String, Option<String>>,
    errors: &mut Vec<(String, String)>,
) {
    let legacy = set(config, WHITELIST).is_some() || set(config, BLACKLIST).is_some();
    let new = set(config, INCLUDE_LIST).is_some() || set(config, EXCLUDE_LIST).is_some();
    if set(config, WHITELIST).is_some() && set(config, BLACKLIST).is_some() {
        errors.push((
            BLACKLIST.into(),
            format!("{WHITELIST} and {BLACKLIST} cannot both be set"),
        ));
    }
    if legacy && new {
        errors.push((INCLUDE_LIST.into(), "Cannot mix legacy and new configuration approaches: table.whitelist/table.blacklist cannot be used together with table.include.list/table.exclude.list.".into()));
    }
    if set(config, EXCLUDE_LIST).is_some() && set(config, INCLUDE_LIST).is_none() {
        errors.push((EXCLUDE_LIST.into(), format!("{EXCLUDE_LIST} cannot be used without {INCLUDE_LIST}. Exclude list only applies to tables that match the include list.")));
    }
    for k in [INCLUDE_LIST, EXCLUDE_LIST] {
        for pattern in crate::config::def::parse_list(set(config, k).unwrap_or("")) {
            if regex::Regex::new(&pattern).is_err() {
                errors.push((k.into(), format!("Must be a valid comma-separated list of regular expression patterns: {pattern}")));
            }
        }
    }
    if set(config, QUERY).is_some() && (legacy || new) {
        errors.push((QUERY.into(), "Do not specify table filtering configs with 'query'. Remove table.whitelist / table.blacklist / table.include.list / table.exclude.list when using query mode or 'query' when using table filtering mode.".into()));
    }
    let mode = set(config, MODE);
    match mode {
        None => errors.push((MODE.into(), "Query mode must be specified".into())),
        Some(m) if m.contains("timestamp") && set(config, TIMESTAMP_COLUMN).is_none() => errors.push((
            TIMESTAMP_COLUMN.into(),
            format!("Timestamp column configuration must be provided when using mode '{m}'. Provide '{TIMESTAMP_COLUMN}'."),
        )),
        Some(m) if m.contains("incrementing") && set(config, QUERY).is_some() && set(config, INCREMENTING_COLUMN).is_none() => errors.push((
            INCREMENTING_COLUMN.into(),
            format!("'{INCREMENTING_COLUMN}' must be provided when using mode '{m}' with a custom query. The incrementing column cannot be auto-discovered in query mode because there is no table to inspect."),
        )),
        _ => {}
    }
}

/// Checks offsets written through the REST API: the partition must name a table or the query, the
/// offset hold integers under Confluent's keys.
pub(crate) fn check_offsets(offsets: &[(Json, Option<Json>)]) -> Result<(), String> {
    for (partition, offset) in offsets {
        if partition.get("table").is_none() && partition.get("query").is_none() {
            return Err(format!(
                "Source partition {partition} names neither a 'table' nor the 'query'"
            ));
        }
        let Some(offset) = offset else { continue };
        for k in [INCREMENTING_FIELD, TIMESTAMP_FIELD, TIMESTAMP_NANOS_FIELD] {
            if let Some(v) = offset.get(k) {
                if !v.is_i64() {
                    return Err(format!(
                        "The value of '{k}' in the offset {offset} must be an integer"
                    ));
                }
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Bulk,
    Timestamp,
    Incrementing,
    TimestampIncrementing,
}

impl Mode {
    fn has_timestamp(self) -> bool {
        matches!(self, Mode::Timestamp | Mode::TimestampIncrementing)
    }
    fn has_incrementing(self) -> bool {
        matches!(self, Mode::Incrementing | Mode::TimestampIncrementing)
    }
}

/// The task settings.
#[derive(Clone, Debug)]
struct Settings {
    mode: Mode,
    query: Option<String>,
    query_suffix: String,
    topic_prefix: String,
    incrementing_column: String,
    timestamp_columns: Vec<String>,
    timestamp_initial: Option<i64>,
    delay_ms: i64,
    validate_non_null: bool,
    poll_interval: Duration,
    batch_max_rows: usize,
    table_poll_interval: Duration,
    whitelist: Vec<String>,
    blacklist: Vec<String>,
    include: Vec<regex::Regex>,
    exclude: Vec<regex::Regex>,
    schema_pattern: Option<String>,
    numeric: NumericMapping,
    quote: bool,
    task_index: usize,
    task_count: usize,
}

fn settings(config: &Props) -> Result<Settings, TaskError> {
    let def = config_def(super::connection_keys(ConfigDef::new()));
    let parsed = def
        .parse(config)
        .map_err(|e| TaskError::fatal(e.join("; ")))?;
    let string = |k: &str| parsed.get_string(k).unwrap_or_default();
    let mode = match string(MODE).as_str() {
        "bulk" => Mode::Bulk,
        "timestamp" => Mode::Timestamp,
        "incrementing" => Mode::Incrementing,
        "timestamp+incrementing" => Mode::TimestampIncrementing,
        other => {
            return Err(TaskError::fatal(format!(
                "Invalid mode '{other}': one of {}",
                MODES.join(", ")
            )))
        }
    };
    let regexes = |k: &str| -> Result<Vec<regex::Regex>, TaskError> {
        parsed
            .get_list(k)
            .iter()
            .map(|p| {
                regex::Regex::new(&format!("^(?:{p})$"))
                    .map_err(|e| TaskError::fatal(format!("{k}: {e}")))
            })
            .collect()
    };
    let numeric = match parsed.get_string(NUMERIC_MAPPING) {
        Some(m) => NumericMapping::parse(&m).unwrap_or(NumericMapping::None),
        None if parsed.get_bool(NUMERIC_PRECISION_MAPPING) == Some(true) => {
            NumericMapping::PrecisionOnly
        }
        None => NumericMapping::None,
    };
    Ok(Settings {
        mode,
        query: Some(string(QUERY)).filter(|q| !q.trim().is_empty()),
        query_suffix: string(QUERY_SUFFIX),
        topic_prefix: string(TOPIC_PREFIX),
        incrementing_column: string(INCREMENTING_COLUMN),
        timestamp_columns: parsed.get_list(TIMESTAMP_COLUMN),
        timestamp_initial: parsed.get_long(TIMESTAMP_INITIAL),
        delay_ms: parsed.get_long(TIMESTAMP_DELAY).unwrap_or(0),
        validate_non_null: parsed.get_bool(VALIDATE_NON_NULL).unwrap_or(true),
        poll_interval: Duration::from_millis(
            parsed.get_int(POLL_INTERVAL).unwrap_or(5000).max(0) as u64
        ),
        batch_max_rows: parsed.get_int(BATCH_MAX_ROWS).unwrap_or(100).max(1) as usize,
        table_poll_interval: Duration::from_millis(
            parsed
                .get_long(TABLE_POLL_INTERVAL)
                .unwrap_or(60_000)
                .max(0) as u64,
        ),
        whitelist: parsed.get_list(WHITELIST),
        blacklist: parsed.get_list(BLACKLIST),
        include: regexes(INCLUDE_LIST)?,
        exclude: regexes(EXCLUDE_LIST)?,
        schema_pattern: parsed.get_string(SCHEMA_PATTERN),
        numeric,
        quote: !string(super::QUOTE_IDENTIFIERS).eq_ignore_ascii_case("never"),
        task_index: config
            .get(TASK_INDEX)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
        task_count: config
            .get(TASK_COUNT)
            .and_then(|s| s.parse().ok())
            .unwrap_or(1)
            .max(1),
    })
}

impl Settings {
    /// Whether the table filters select `table` (whitelist entries match the name or `schema.name`).
    fn selects(&self, table: &TableId) -> bool {
        let names = [table.name.clone(), table.fqn()];
        let listed = |list: &[String]| list.iter().any(|t| names.contains(t));
        if !self.whitelist.is_empty() && !listed(&self.whitelist) {
            return false;
        }
        if listed(&self.blacklist) {
            return false;
        }
        let matches =
            |res: &[regex::Regex]| res.iter().any(|r| names.iter().any(|n| r.is_match(n)));
        if !self.include.is_empty() && !matches(&self.include) {
            return false;
        }
        !matches(&self.exclude)
    }

    /// Whether this task copies `table` (tables are shared among tasks by a stable hash of the name).
    fn owns(&self, table: &TableId) -> bool {
        let hash = table
            .fqn()
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        (hash % self.task_count as u64) as usize == self.task_index
    }
}

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
            context.wait(
                until
                    .saturating_duration_since(now)
                    .clamp(Duration::from_millis(10), Duration::from_secs(1)),
            );
            return Ok(Vec::new());
        };
        let next = self.queriers[i].next_run;
        if next > now {
            context.wait((next - now).min(Duration::from_secs(1)));
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
        let tables: Vec<TableId> = conn
            .tables(settings.schema_pattern.as_deref())
            .map_err(db_error)?
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
        let q = if conn.is_postgres() {
            Some('"')
        } else {
            Some('`')
        }
        .filter(|_| s.quote);
        let ts_expr = self.timestamp_expr(conn.is_postgres(), s, q);
        let inc_col = self.incrementing_column.as_deref().map(|c| quote(c, q));
        let mut sql = self.select(conn.is_postgres(), s, q);
        let mut params = Vec::new();
        let postgres = conn.is_postgres();
        let placeholder = |n: usize, ts: bool| match (postgres, ts) {
            (true, true) => format!("${n}::timestamptz"),
            (true, false) => format!("${n}"),
            (false, _) => "?".into(),
        };
        let begin = self.begin_timestamp(conn, s)?;
        let end = if s.mode.has_timestamp() {
            Some(conn.now_nanos().map_err(db_error)? - s.delay_ms * 1_000_000)
        } else {
            None
        };
        let ts_param = |nanos: i64| ts_param(postgres, nanos);
        match s.mode {
            Mode::Bulk => {}
            Mode::Incrementing => {
                let c = inc_col.clone().unwrap_or_default();
                sql.push_str(&format!(
                    " WHERE {c} > {} ORDER BY {c} ASC",
                    placeholder(1, false)
                ));
                params.push(Param::Int(self.offset.incrementing.unwrap_or(-1)));
            }
            Mode::Timestamp => {
                let t = &ts_expr;
                sql.push_str(&format!(
                    " WHERE {t} > {} AND {t} < {} ORDER BY {t} ASC",
                    placeholder(1, true),
                    placeholder(2, true)
                ));
                params.push(ts_param(begin));
                params.push(ts_param(end.unwrap_or(0)));
            }
            Mode::TimestampIncrementing => {
                let t = &ts_expr;
                let c = inc_col.clone().unwrap_or_default();
                sql.push_str(&format!(
                    " WHERE {t} < {} AND (({t} = {} AND {c} > {}) OR {t} > {}) ORDER BY {t},{c} ASC",
                    placeholder(1, true),
                    placeholder(2, true),
                    placeholder(3, false),
                    placeholder(4, true)
                ));
                params.extend([
                    ts_param(end.unwrap_or(0)),
                    ts_param(begin),
                    Param::Int(self.offset.incrementing.unwrap_or(-1)),
                    ts_param(begin),
                ]);
            }
        }
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
                params[1] = ts_param(last + unit);
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
