//! The JDBC source's config: its keys and defaults, the checks across keys, and the settings a task
//! runs with.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value as Json;

use super::db::TableId;
use super::types::NumericMapping;
use super::{TASK_COUNT, TASK_INDEX};
use crate::config::def::{ConfigDef, ConfigType, Importance, Validator};
use crate::connectors::{Props, TaskError};

pub(crate) const QUERY: &str = "query";
pub(super) const MODE: &str = "mode";
pub(super) const INCREMENTING_COLUMN: &str = "incrementing.column.name";
pub(super) const TIMESTAMP_COLUMN: &str = "timestamp.column.name";
pub(super) const TIMESTAMP_INITIAL: &str = "timestamp.initial";
pub(super) const TIMESTAMP_DELAY: &str = "timestamp.delay.interval.ms";
pub(super) const VALIDATE_NON_NULL: &str = "validate.non.null";
pub(super) const TOPIC_PREFIX: &str = "topic.prefix";
pub(super) const POLL_INTERVAL: &str = "poll.interval.ms";
pub(super) const BATCH_MAX_ROWS: &str = "batch.max.rows";
pub(super) const TABLE_POLL_INTERVAL: &str = "table.poll.interval.ms";
pub(super) const WHITELIST: &str = "table.whitelist";
pub(super) const BLACKLIST: &str = "table.blacklist";
pub(super) const INCLUDE_LIST: &str = "table.include.list";
pub(super) const EXCLUDE_LIST: &str = "table.exclude.list";
pub(super) const SCHEMA_PATTERN: &str = "schema.pattern";
pub(super) const NUMERIC_MAPPING: &str = "numeric.mapping";
pub(super) const NUMERIC_PRECISION_MAPPING: &str = "numeric.precision.mapping";
pub(super) const QUERY_SUFFIX: &str = "query.suffix";
pub(super) const MODES: [&str; 4] = [
    "bulk",
    "timestamp",
    "incrementing",
    "timestamp+incrementing",
];

pub(super) const INCREMENTING_FIELD: &str = "incrementing";
pub(super) const TIMESTAMP_FIELD: &str = "timestamp";
pub(super) const TIMESTAMP_NANOS_FIELD: &str = "timestamp_nanos";

/// The source's own keys on top of the connection keys.
pub(crate) fn config_def(def: ConfigDef) -> ConfigDef {
    use crate::config::def::key;
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

pub(super) fn set<'a>(config: &'a BTreeMap<String, Option<String>>, k: &str) -> Option<&'a str> {
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
pub(super) enum Mode {
    Bulk,
    Timestamp,
    Incrementing,
    TimestampIncrementing,
}

impl Mode {
    pub(super) fn has_timestamp(self) -> bool {
        matches!(self, Mode::Timestamp | Mode::TimestampIncrementing)
    }
    pub(super) fn has_incrementing(self) -> bool {
        matches!(self, Mode::Incrementing | Mode::TimestampIncrementing)
    }
}

/// The task settings.
#[derive(Clone, Debug)]
pub(super) struct Settings {
    pub(super) mode: Mode,
    pub(super) query: Option<String>,
    pub(super) query_suffix: String,
    pub(super) topic_prefix: String,
    pub(super) incrementing_column: String,
    pub(super) timestamp_columns: Vec<String>,
    pub(super) timestamp_initial: Option<i64>,
    pub(super) delay_ms: i64,
    pub(super) validate_non_null: bool,
    pub(super) poll_interval: Duration,
    pub(super) batch_max_rows: usize,
    pub(super) table_poll_interval: Duration,
    pub(super) whitelist: Vec<String>,
    pub(super) blacklist: Vec<String>,
    pub(super) include: Vec<regex::Regex>,
    pub(super) exclude: Vec<regex::Regex>,
    pub(super) schema_pattern: Option<String>,
    pub(super) numeric: NumericMapping,
    pub(super) quote: bool,
    pub(super) task_index: usize,
    pub(super) task_count: usize,
}

pub(super) fn settings(config: &Props) -> Result<Settings, TaskError> {
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
    pub(super) fn selects(&self, table: &TableId) -> bool {
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
    pub(super) fn owns(&self, table: &TableId) -> bool {
        let hash = table
            .fqn()
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        (hash % self.task_count as u64) as usize == self.task_index
    }
}
