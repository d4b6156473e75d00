//! The SpoolDir connectors' config key names and the typed task config, with the checks across keys.

use std::path::{Path, PathBuf};

use regex::Regex;

use super::schema_json;
use crate::config::def::ParsedConfig;
use crate::config::ConfigError;
use crate::connectors::{Props, TaskError};
use crate::data::DataError;
use crate::data::SchemaRef;
use crate::transforms::datefmt::DateFormat;

pub const TOPIC: &str = "topic";
pub const BATCH_SIZE: &str = "batch.size";
pub const EMPTY_POLL_WAIT_MS: &str = "empty.poll.wait.ms";
pub const CLEANUP_POLICY: &str = "cleanup.policy";
pub const INPUT_PATH: &str = "input.path";
pub const FINISHED_PATH: &str = "finished.path";
pub const ERROR_PATH: &str = "error.path";
pub const INPUT_FILE_PATTERN: &str = "input.file.pattern";
pub const HALT_ON_ERROR: &str = "halt.on.error";
pub const FILE_MINIMUM_AGE_MS: &str = "file.minimum.age.ms";
pub const PROCESSING_FILE_EXTENSION: &str = "processing.file.extension";
pub const TIMESTAMP_MODE: &str = "timestamp.mode";
pub const FILE_SORT_ATTRIBUTES: &str = "files.sort.attributes";
pub const TASK_INDEX: &str = "task.index";
pub const TASK_COUNT: &str = "task.count";
pub const TASK_PARTITIONER: &str = "task.partitioner";
pub const WALK_RECURSIVELY: &str = "input.path.walk.recursively";
pub const MAINTAIN_RELATIVE_PATH: &str = "cleanup.policy.maintain.relative.path";
pub const FILE_BUFFER_SIZE: &str = "file.buffer.size.bytes";
pub const KEY_SCHEMA: &str = "key.schema";
pub const VALUE_SCHEMA: &str = "value.schema";
pub const SCHEMA_GENERATION_ENABLED: &str = "schema.generation.enabled";
pub const SCHEMA_GENERATION_KEY_FIELDS: &str = "schema.generation.key.fields";
pub const SCHEMA_GENERATION_KEY_NAME: &str = "schema.generation.key.name";
pub const SCHEMA_GENERATION_VALUE_NAME: &str = "schema.generation.value.name";
pub const TIMESTAMP_FIELD: &str = "timestamp.field";
pub const DATE_FORMATS: &str = "parser.timestamp.date.formats";
pub const TIMEZONE: &str = "parser.timestamp.timezone";
pub const FILE_CHARSET: &str = "file.charset";
pub const CSV_SKIP_LINES: &str = "csv.skip.lines";
pub const CSV_SEPARATOR_CHAR: &str = "csv.separator.char";
pub const CSV_QUOTE_CHAR: &str = "csv.quote.char";
pub const CSV_ESCAPE_CHAR: &str = "csv.escape.char";
pub const CSV_STRICT_QUOTES: &str = "csv.strict.quotes";
pub const CSV_IGNORE_LEADING_WHITESPACE: &str = "csv.ignore.leading.whitespace";
pub const CSV_IGNORE_QUOTATIONS: &str = "csv.ignore.quotations";
pub const CSV_KEEP_CARRIAGE_RETURN: &str = "csv.keep.carriage.return";
pub const CSV_VERIFY_READER: &str = "csv.verify.reader";
pub const CSV_NULL_FIELD_INDICATOR: &str = "csv.null.field.indicator";
pub const CSV_FIRST_ROW_AS_HEADER: &str = "csv.first.row.as.header";
pub const CSV_CHARSET: &str = "csv.file.charset";
pub const CSV_CASE_SENSITIVE_FIELD_NAMES: &str = "csv.case.sensitive.field.names";
pub const CSV_RFC_4180_PARSER: &str = "csv.rfc.4180.parser.enabled";

pub(super) const CLEANUP_POLICIES: [&str; 4] = ["NONE", "DELETE", "MOVE", "MOVEBYDATE"];
pub(super) const TIMESTAMP_MODES: [&str; 3] = ["FIELD", "FILE_TIME", "PROCESS_TIME"];
pub(super) const FILE_ATTRIBUTES: [&str; 6] = [
    "NameAsc",
    "NameDesc",
    "LengthAsc",
    "LengthDesc",
    "LastModifiedAsc",
    "LastModifiedDesc",
];
pub(super) const NULL_FIELD_INDICATORS: [&str; 4] =
    ["EMPTY_SEPARATORS", "EMPTY_QUOTES", "BOTH", "NEITHER"];

/// Which of the four formats a connector reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `SpoolDirCsvSourceConnector`.
    Csv,
    /// `SpoolDirJsonSourceConnector`.
    Json,
    /// `SpoolDirLineDelimitedSourceConnector`.
    Lines,
    /// `SpoolDirSchemaLessJsonSourceConnector`.
    SchemaLessJson,
}

impl Format {
    /// Whether the format reads values into `key.schema`/`value.schema` structs.
    pub fn has_schemas(self) -> bool {
        matches!(self, Format::Csv | Format::Json)
    }
}

pub use super::keys::config_def;

/// The character sets files may be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charset {
    /// UTF-8 (invalid sequences are an error).
    Utf8,
    /// ISO-8859-1: every byte is the code point of the same number.
    Latin1,
    /// US-ASCII (bytes over 127 are an error).
    Ascii,
}

impl Charset {
    /// The charset a Java name (or common alias) names.
    pub fn named(name: &str) -> Option<Charset> {
        match name.to_ascii_uppercase().replace('_', "-").as_str() {
            "UTF-8" | "UTF8" => Some(Charset::Utf8),
            "ISO-8859-1" | "ISO8859-1" | "LATIN1" | "ISO-LATIN-1" => Some(Charset::Latin1),
            "US-ASCII" | "ASCII" => Some(Charset::Ascii),
            _ => None,
        }
    }

    /// Decodes bytes of this charset.
    pub fn decode(self, bytes: &[u8]) -> Result<String, DataError> {
        match self {
            Charset::Utf8 => std::str::from_utf8(bytes)
                .map(str::to_string)
                .map_err(|e| DataError(format!("Input is not valid UTF-8: {e}"))),
            Charset::Latin1 => Ok(bytes.iter().map(|&b| b as char).collect()),
            Charset::Ascii => match bytes.iter().position(|b| *b > 127) {
                None => Ok(bytes.iter().map(|&b| b as char).collect()),
                Some(i) => Err(format!("Input is not US-ASCII: byte {} at {i}", bytes[i]).into()),
            },
        }
    }
}

/// How finished files are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CleanupPolicy {
    None,
    Delete,
    Move,
    MoveByDate,
}

/// Where a record's timestamp comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampMode {
    Field,
    FileTime,
    ProcessTime,
}

/// What a null field in a CSV row looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullIndicator {
    /// Empty fields are null.
    Empty,
    /// No field is null.
    Neither,
}

/// The CSV parser settings.
#[derive(Clone, Debug)]
pub struct CsvSettings {
    pub skip_lines: usize,
    pub separator: u8,
    pub quote: u8,
    pub escape: Option<u8>,
    pub ignore_quotations: bool,
    pub null_indicator: NullIndicator,
    pub first_row_as_header: bool,
}

/// The schema settings of the CSV and JSON connectors.
#[derive(Clone, Debug)]
pub struct SchemaSettings {
    /// `key.schema`, when given.
    pub key_schema: Option<SchemaRef>,
    /// `value.schema`, when given.
    pub value_schema: Option<SchemaRef>,
    /// `schema.generation.key.fields`.
    pub key_fields: Vec<String>,
    /// `schema.generation.key.name`.
    pub key_name: String,
    /// `schema.generation.value.name`.
    pub value_name: String,
    /// `timestamp.field`, with `timestamp.mode=FIELD`.
    pub timestamp_field: Option<String>,
    /// `parser.timestamp.date.formats`, compiled.
    pub date_formats: Vec<DateFormat>,
}

/// A task's typed config.
#[derive(Clone, Debug)]
pub struct SpoolConfig {
    /// Which connector.
    pub format: Format,
    /// `topic`.
    pub topic: String,
    /// `batch.size`.
    pub batch_size: usize,
    /// `empty.poll.wait.ms`.
    pub empty_poll_wait_ms: u64,
    /// `cleanup.policy`.
    pub cleanup: CleanupPolicy,
    /// `input.path`.
    pub input_path: PathBuf,
    /// `finished.path`, for MOVE and MOVEBYDATE.
    pub finished_path: Option<PathBuf>,
    /// `error.path`.
    pub error_path: PathBuf,
    /// `input.file.pattern`, anchored at both ends.
    pub pattern: Regex,
    /// `halt.on.error`.
    pub halt_on_error: bool,
    /// `file.minimum.age.ms`.
    pub minimum_age_ms: i64,
    /// `processing.file.extension`.
    pub processing_extension: String,
    /// `timestamp.mode`.
    pub timestamp_mode: TimestampMode,
    /// `files.sort.attributes`.
    pub sort: Vec<String>,
    /// `task.index`.
    pub task_index: u32,
    /// `task.count`.
    pub task_count: u32,
    /// `input.path.walk.recursively`.
    pub walk_recursively: bool,
    /// `cleanup.policy.maintain.relative.path`.
    pub maintain_relative_path: bool,
    /// `csv.file.charset` or `file.charset`.
    pub charset: Charset,
    /// `file.buffer.size.bytes`.
    pub buffer_size: usize,
    /// The schema keys (CSV and JSON).
    pub schemas: Option<SchemaSettings>,
    /// The CSV keys.
    pub csv: Option<CsvSettings>,
}

fn string(parsed: &ParsedConfig, name: &str) -> String {
    parsed.get_string(name).unwrap_or_default()
}

fn flag_of(parsed: &ParsedConfig, name: &str) -> bool {
    parsed.get_bool(name).unwrap_or(false)
}

fn char_of(parsed: &ParsedConfig, name: &str) -> u8 {
    parsed.get_int(name).unwrap_or(0) as u8
}

fn read_schema(parsed: &ParsedConfig, name: &str) -> Result<Option<SchemaRef>, ConfigError> {
    let text = string(parsed, name);
    if text.is_empty() {
        return Ok(None);
    }
    schema_json::parse(&text)
        .map(Some)
        .map_err(|e| ConfigError::message(format!("Could not read schema from '{name}': {e}")))
}

impl SpoolConfig {
    /// Parses and checks a connector or task config; the errors name their keys.
    pub fn parse(format: Format, props: &Props) -> Result<SpoolConfig, Vec<(String, String)>> {
        let parsed = config_def(format).parse(props).map_err(|errors| {
            errors
                .into_iter()
                .map(|e| (key_named_in(&e, format), e))
                .collect::<Vec<_>>()
        })?;
        let mut errors = Vec::new();
        let config = Self::from_parsed(format, &parsed, &mut errors);
        if errors.is_empty() {
            Ok(config)
        } else {
            Err(errors)
        }
    }

    fn from_parsed(
        format: Format,
        parsed: &ParsedConfig,
        errors: &mut Vec<(String, String)>,
    ) -> SpoolConfig {
        let cleanup = match string(parsed, CLEANUP_POLICY).as_str() {
            "NONE" => CleanupPolicy::None,
            "DELETE" => CleanupPolicy::Delete,
            "MOVEBYDATE" => CleanupPolicy::MoveByDate,
            _ => CleanupPolicy::Move,
        };
        let finished = string(parsed, FINISHED_PATH);
        let finished_path = match cleanup {
            CleanupPolicy::Move | CleanupPolicy::MoveByDate => {
                if finished.is_empty() {
                    errors.push((
                        FINISHED_PATH.into(),
                        format!("'{FINISHED_PATH}' cannot be null or empty."),
                    ));
                } else if !Path::new(&finished).is_absolute() {
                    errors.push((
                        FINISHED_PATH.into(),
                        format!("'{FINISHED_PATH}'({finished}) is not an absolute path."),
                    ));
                }
                Some(PathBuf::from(finished))
            }
            _ => None,
        };
        let timestamp_mode = match string(parsed, TIMESTAMP_MODE).as_str() {
            "FIELD" => TimestampMode::Field,
            "FILE_TIME" => TimestampMode::FileTime,
            _ => TimestampMode::ProcessTime,
        };
        let pattern = Regex::new(&format!("^(?:{})$", string(parsed, INPUT_FILE_PATTERN)))
            .unwrap_or_else(|_| Regex::new("^$").expect("a valid regex"));
        let charset_key = if format == Format::Csv {
            CSV_CHARSET
        } else {
            FILE_CHARSET
        };
        let charset = parsed
            .get_string(charset_key)
            .and_then(|c| Charset::named(&c))
            .unwrap_or(Charset::Utf8);
        let schemas = format
            .has_schemas()
            .then(|| schema_settings(parsed, timestamp_mode, errors));
        let csv = (format == Format::Csv).then(|| csv_settings(parsed));
        SpoolConfig {
            format,
            topic: string(parsed, TOPIC),
            batch_size: parsed.get_int(BATCH_SIZE).unwrap_or(1000).max(1) as usize,
            empty_poll_wait_ms: parsed.get_long(EMPTY_POLL_WAIT_MS).unwrap_or(500).max(1) as u64,
            cleanup,
            input_path: PathBuf::from(string(parsed, INPUT_PATH)),
            finished_path,
            error_path: PathBuf::from(string(parsed, ERROR_PATH)),
            pattern,
            halt_on_error: flag_of(parsed, HALT_ON_ERROR),
            minimum_age_ms: parsed.get_long(FILE_MINIMUM_AGE_MS).unwrap_or(0),
            processing_extension: string(parsed, PROCESSING_FILE_EXTENSION),
            timestamp_mode,
            sort: parsed.get_list(FILE_SORT_ATTRIBUTES),
            task_index: parsed.get_int(TASK_INDEX).unwrap_or(0).max(0) as u32,
            task_count: parsed.get_int(TASK_COUNT).unwrap_or(1).max(1) as u32,
            walk_recursively: flag_of(parsed, WALK_RECURSIVELY),
            maintain_relative_path: flag_of(parsed, MAINTAIN_RELATIVE_PATH),
            charset,
            buffer_size: parsed.get_int(FILE_BUFFER_SIZE).unwrap_or(131_072).max(1) as usize,
            schemas,
            csv,
        }
    }
}

/// The key an error message of [`ConfigDef::parse`] is about (the first defined key it names).
fn key_named_in(message: &str, format: Format) -> String {
    config_def(format)
        .keys()
        .iter()
        .map(|k| k.name.clone())
        .filter(|k| {
            message.contains(&format!("configuration {k}:"))
                || message.contains(&format!("configuration \"{k}\""))
                || message.contains(&format!("configuration {k} "))
                || message.ends_with(&format!("configuration {k}"))
        })
        .max_by_key(|k| k.len())
        .unwrap_or_default()
}

fn schema_settings(
    parsed: &ParsedConfig,
    timestamp_mode: TimestampMode,
    errors: &mut Vec<(String, String)>,
) -> SchemaSettings {
    let mut schema = |name: &str| match read_schema(parsed, name) {
        Ok(s) => s,
        Err(e) => {
            errors.push((name.into(), e.to_string()));
            None
        }
    };
    let key_schema = schema(KEY_SCHEMA);
    let value_schema = schema(VALUE_SCHEMA);
    let generation_enabled = flag_of(parsed, SCHEMA_GENERATION_ENABLED);
    let key_name = string(parsed, SCHEMA_GENERATION_KEY_NAME);
    let value_name = string(parsed, SCHEMA_GENERATION_VALUE_NAME);
    if !generation_enabled {
        for (key, present) in [
            (KEY_SCHEMA, key_schema.is_some()),
            (VALUE_SCHEMA, value_schema.is_some()),
        ] {
            if !present && !errors.iter().any(|(k, _)| k == key) {
                errors.push((
                    key.into(),
                    format!("'{key}' must be set if '{SCHEMA_GENERATION_ENABLED}' = false."),
                ));
            }
        }
    } else {
        for (key, value) in [
            (SCHEMA_GENERATION_KEY_NAME, &key_name),
            (SCHEMA_GENERATION_VALUE_NAME, &value_name),
        ] {
            if value.is_empty() {
                errors.push((
                    key.into(),
                    format!("'{key}' must be set if '{SCHEMA_GENERATION_ENABLED}' = true."),
                ));
            }
        }
    }
    let timestamp_field = (timestamp_mode == TimestampMode::Field)
        .then(|| check_timestamp_field(parsed, value_schema.as_ref(), errors))
        .flatten();
    SchemaSettings {
        key_schema,
        value_schema,
        key_fields: parsed.get_list(SCHEMA_GENERATION_KEY_FIELDS),
        key_name,
        value_name,
        timestamp_field,
        date_formats: parsed
            .get_list(DATE_FORMATS)
            .iter()
            .filter_map(|p| DateFormat::new(p).ok())
            .collect(),
    }
}

/// `timestamp.mode=FIELD` needs a required Timestamp field of the value schema (checked when the schema
/// is given; a generated schema has only optional strings, so FIELD cannot work with it).
fn check_timestamp_field(
    parsed: &ParsedConfig,
    value_schema: Option<&SchemaRef>,
    errors: &mut Vec<(String, String)>,
) -> Option<String> {
    let field = string(parsed, TIMESTAMP_FIELD);
    if field.is_empty() {
        errors.push((TIMESTAMP_FIELD.into(), format!("When `{TIMESTAMP_MODE}` is set to `FIELD`, `{TIMESTAMP_FIELD}` must be set to a timestamp field. Cannot be null or empty.")));
        return None;
    }
    let ok = value_schema.is_none_or(|schema| {
        schema.field(&field).is_some_and(|f| {
            !f.schema.optional
                && f.schema.name.as_deref() == Some(crate::data::logical::TIMESTAMP_NAME)
        })
    });
    if !ok {
        errors.push((TIMESTAMP_FIELD.into(), format!("Field '{field}' must be present and set to a timestamp and cannot be optional. Example {{\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"type\":\"INT64\",\"version\":1,\"isOptional\":false}}")));
    }
    Some(field)
}

fn csv_settings(parsed: &ParsedConfig) -> CsvSettings {
    let escape = char_of(parsed, CSV_ESCAPE_CHAR);
    let rfc = flag_of(parsed, CSV_RFC_4180_PARSER) || char_of(parsed, CSV_SEPARATOR_CHAR) == 0;
    CsvSettings {
        skip_lines: parsed.get_int(CSV_SKIP_LINES).unwrap_or(0).max(0) as usize,
        separator: match char_of(parsed, CSV_SEPARATOR_CHAR) {
            0 => b',',
            c => c,
        },
        quote: char_of(parsed, CSV_QUOTE_CHAR),
        // The RFC 4180 parser knows no escape character: quotes are doubled.
        escape: (escape != 0 && !rfc).then_some(escape),
        ignore_quotations: flag_of(parsed, CSV_IGNORE_QUOTATIONS),
        null_indicator: match string(parsed, CSV_NULL_FIELD_INDICATOR).as_str() {
            "NEITHER" => NullIndicator::Neither,
            _ => NullIndicator::Empty,
        },
        first_row_as_header: flag_of(parsed, CSV_FIRST_ROW_AS_HEADER),
    }
}

/// Fails a task with every config error, each naming its key.
pub fn task_error(errors: Vec<(String, String)>) -> TaskError {
    TaskError::fatal(
        errors
            .into_iter()
            .map(|(k, m)| format!("{k}: {m}"))
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// The checks across keys that the definition cannot make (`finished.path` for MOVE, the schemas,
/// `timestamp.field`), as (key, message); none while a key's own value is invalid.
pub fn cross_key_errors(
    format: Format,
    config: &std::collections::BTreeMap<String, Option<String>>,
) -> Vec<(String, String)> {
    let props: Props = config
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect();
    let Ok(parsed) = config_def(format).parse(&props) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    SpoolConfig::from_parsed(format, &parsed, &mut errors);
    errors
}
