//! The SpoolDir connectors' config definitions: every key with its type, default, importance and the
//! original's documentation, and the validators with the original's messages.

use std::path::Path;
use std::sync::Arc;

use regex::Regex;

use super::config::*;
use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, ConfigValue, Importance, KeyRow, Validator,
};
use crate::transforms::datefmt::DateFormat;

/// A key: name, type, default (`None`: required), importance, documentation.
type Spec = KeyRow;

/// The keys every SpoolDir connector has (`AbstractSourceConnectorConfig`).
const COMMON_KEYS: &[Spec] = &[
    (
        TOPIC,
        ConfigType::String,
        None,
        Importance::High,
        "The Kafka topic to write the data to.",
    ),
    (
        BATCH_SIZE,
        ConfigType::Int,
        Some("1000"),
        Importance::Low,
        "The number of records that should be returned with each batch.",
    ),
    (
        EMPTY_POLL_WAIT_MS,
        ConfigType::Long,
        Some("500"),
        Importance::Low,
        "The amount of time to wait if a poll returns an empty list of records.",
    ),
    (
        CLEANUP_POLICY,
        ConfigType::String,
        Some("MOVE"),
        Importance::Medium,
        "Determines how the connector should cleanup the files that have been successfully processed. NONE leaves the files in place which could cause them to be reprocessed if the connector is restarted. DELETE removes the file from the filesystem. MOVE will move the file to a finished directory. MOVEBYDATE will move the file to a finished directory with subdirectories by date",
    ),
    (
        INPUT_PATH,
        ConfigType::String,
        None,
        Importance::High,
        "The directory to read files that will be processed. This directory must exist and be writable by the user running Kafka Connect.",
    ),
    (
        FINISHED_PATH,
        ConfigType::String,
        Some(""),
        Importance::High,
        "The directory to place files that have been successfully processed. This directory must exist and be writable by the user running Kafka Connect.",
    ),
    (
        ERROR_PATH,
        ConfigType::String,
        None,
        Importance::High,
        "The directory to place files in which have error(s). This directory must exist and be writable by the user running Kafka Connect.",
    ),
    (
        INPUT_FILE_PATTERN,
        ConfigType::String,
        None,
        Importance::High,
        "Regular expression to check input file names against. This expression must match the entire filename. The equivalent of Matcher.matches().",
    ),
    (
        HALT_ON_ERROR,
        ConfigType::Boolean,
        Some("true"),
        Importance::High,
        "Should the task halt when it encounters an error or continue to the next file.",
    ),
    (
        FILE_MINIMUM_AGE_MS,
        ConfigType::Long,
        Some("0"),
        Importance::Low,
        "The amount of time in milliseconds after the file was last written to before the file can be processed.",
    ),
    (
        PROCESSING_FILE_EXTENSION,
        ConfigType::String,
        Some(".PROCESSING"),
        Importance::Low,
        "Before a file is processed, a flag is created in its directory to indicate the file is being handled. The flag file has the same name as the file, but with this property appended as a suffix.",
    ),
    (
        TIMESTAMP_MODE,
        ConfigType::String,
        Some("PROCESS_TIME"),
        Importance::Medium,
        "Determines how the connector will set the timestamp for the ConnectRecord. If set to `Field` then the timestamp will be read from a field in the value. This field cannot be optional and must be a Timestamp. Specify the field  in `timestamp.field`. If set to `FILE_TIME` then the last modified time of the file will be used. If set to `PROCESS_TIME` the time the record is read will be used.",
    ),
    (
        FILE_SORT_ATTRIBUTES,
        ConfigType::List,
        Some("NameAsc"),
        Importance::Low,
        "The attributes each file will use to determine the sort order. `Name` is name of the file. `Length` is the length of the file preferring larger files first. `LastModified` is the LastModified attribute of the file preferring older files first.",
    ),
    (
        TASK_INDEX,
        ConfigType::Int,
        Some("0"),
        Importance::Low,
        "Internal setting to the connector used to instruct a task on which files to select. The connector will override this setting.",
    ),
    (
        TASK_COUNT,
        ConfigType::Int,
        Some("1"),
        Importance::Low,
        "Internal setting to the connector used to instruct a task on which files to select. The connector will override this setting.",
    ),
    (
        TASK_PARTITIONER,
        ConfigType::String,
        Some("ByName"),
        Importance::Medium,
        "The task partitioner implementation is used when the connector is configured to use more than one task. This is used by each task to identify which files will be processed by that task. This ensures that each file is only assigned to one task.",
    ),
    (
        WALK_RECURSIVELY,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "If enabled, any sub-directories dropped under `input.path` will be recursively walked looking for files matching the configured `input.file.pattern`. After processing is complete the discovered sub directory structure (as well as files within them) will handled according to the configured `cleanup.policy` (i.e. moved or deleted etc). For each discovered file, the walked sub-directory path will be set as a header named `file.relative.path`",
    ),
    (
        MAINTAIN_RELATIVE_PATH,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "If `input.path.walk.recursively` is enabled in combination with this flag being `true`, the walked sub-directories which contained files will be retained as-is under the `input.path`. The actual files within the sub-directories will moved (with a copy of the sub-dir structure) or deleted as per the `cleanup.policy` defined, but the parent sub-directory structure will remain.",
    ),
    (
        FILE_BUFFER_SIZE,
        ConfigType::Int,
        Some("131072"),
        Importance::Low,
        "The size of buffer for the BufferedInputStream that will be used to interact with the file system.",
    ),
];

/// The schema keys of the CSV and JSON connectors (`AbstractSpoolDirSourceConnectorConfig`).
const SCHEMA_KEYS: &[Spec] = &[
    (
        KEY_SCHEMA,
        ConfigType::String,
        Some(""),
        Importance::High,
        "The schema for the key written to Kafka.",
    ),
    (
        VALUE_SCHEMA,
        ConfigType::String,
        Some(""),
        Importance::High,
        "The schema for the value written to Kafka.",
    ),
    (
        SCHEMA_GENERATION_ENABLED,
        ConfigType::Boolean,
        Some("false"),
        Importance::Medium,
        "Flag to determine if schemas should be dynamically generated. If set  to true, `key.schema` and `value.schema` can be omitted, but `schema.generation.key.name` and `schema.generation.value.name` must be set.",
    ),
    (
        SCHEMA_GENERATION_KEY_FIELDS,
        ConfigType::List,
        Some(""),
        Importance::Medium,
        "The field(s) to use to build a key schema. This is only used during schema generation.",
    ),
    (
        SCHEMA_GENERATION_KEY_NAME,
        ConfigType::String,
        Some("com.github.jcustenborder.kafka.connect.model.Key"),
        Importance::Medium,
        "The name of the generated key schema.",
    ),
    (
        SCHEMA_GENERATION_VALUE_NAME,
        ConfigType::String,
        Some("com.github.jcustenborder.kafka.connect.model.Value"),
        Importance::Medium,
        "The name of the generated value schema.",
    ),
    (
        TIMEZONE,
        ConfigType::String,
        Some("UTC"),
        Importance::Low,
        "The timezone that all of the dates will be parsed with.",
    ),
    (
        DATE_FORMATS,
        ConfigType::List,
        Some("yyyy-MM-dd'T'HH:mm:ss,yyyy-MM-dd' 'HH:mm:ss"),
        Importance::Low,
        "The date formats that are expected in the file. This is a list of strings that will be used to parse the date fields in order. The most accurate date format should be the first in the list. Take a look at the Java documentation for more info. https://docs.oracle.com/javase/6/docs/api/java/text/SimpleDateFormat.html",
    ),
    (
        TIMESTAMP_FIELD,
        ConfigType::String,
        Some(""),
        Importance::Medium,
        "The field in the value schema that will contain the parsed timestamp for the record. This field cannot be marked as optional and must be a Timestamp",
    ),
];

/// The CSV connector's own keys (`SpoolDirCsvSourceConnectorConfig`).
const CSV_KEYS: &[Spec] = &[
    (
        CSV_SKIP_LINES,
        ConfigType::Int,
        Some("0"),
        Importance::Low,
        "Number of lines to skip in the beginning of the file.",
    ),
    (
        CSV_SEPARATOR_CHAR,
        ConfigType::Int,
        Some("44"),
        Importance::Low,
        "The character that separates each field in the form of an integer. Typically in a CSV this is a ,(44) character. A TSV would use a tab(9) character. If `csv.separator.char` is defined as a null(0), then the RFC 4180 parser must be utilized by default. This is the equivalent of `csv.rfc.4180.parser.enabled = true`.",
    ),
    (
        CSV_QUOTE_CHAR,
        ConfigType::Int,
        Some("34"),
        Importance::Low,
        "The character that is used to quote a field. This typically happens when the csv.separator.char character is within the data.",
    ),
    (
        CSV_ESCAPE_CHAR,
        ConfigType::Int,
        Some("92"),
        Importance::Low,
        "The character as an integer to use when a special character is encountered. The default escape character is typically a \\(92)",
    ),
    (
        CSV_STRICT_QUOTES,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "Sets the strict quotes setting - if true, characters outside the quotes are ignored.",
    ),
    (
        CSV_IGNORE_LEADING_WHITESPACE,
        ConfigType::Boolean,
        Some("true"),
        Importance::Low,
        "Sets the ignore leading whitespace setting - if true, white space in front of a quote in a field is ignored.",
    ),
    (
        CSV_IGNORE_QUOTATIONS,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "Sets the ignore quotations mode - if true, quotations are ignored.",
    ),
    (
        CSV_KEEP_CARRIAGE_RETURN,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "Flag to determine if the carriage return at the end of the line should be maintained.",
    ),
    (
        CSV_VERIFY_READER,
        ConfigType::Boolean,
        Some("true"),
        Importance::Low,
        "Flag to determine if the reader should be verified.",
    ),
    (
        CSV_NULL_FIELD_INDICATOR,
        ConfigType::String,
        Some("NEITHER"),
        Importance::Low,
        "Indicator to determine how the CSV Reader can determine if a field is null. Valid values are EMPTY_SEPARATORS, EMPTY_QUOTES, BOTH, NEITHER. For more information see http://opencsv.sourceforge.net/apidocs/com/opencsv/enums/CSVReaderNullFieldIndicator.html.",
    ),
    (
        CSV_FIRST_ROW_AS_HEADER,
        ConfigType::Boolean,
        Some("false"),
        Importance::Medium,
        "Flag to indicate if the fist row of data contains the header of the file. If true the position of the columns will be determined by the first row to the CSV. The column position will be inferred from the position of the schema supplied in `value.schema`. If set to true the number of columns must be greater than or equal to the number of fields in the schema.",
    ),
    (
        CSV_CHARSET,
        ConfigType::String,
        Some("UTF-8"),
        Importance::Low,
        "Character set to read wth file with.",
    ),
    (
        CSV_CASE_SENSITIVE_FIELD_NAMES,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "Flag to determine if the field names in the header row should be treated as case sensitive.",
    ),
    (
        CSV_RFC_4180_PARSER,
        ConfigType::Boolean,
        Some("false"),
        Importance::Low,
        "Flag to determine if the RFC 4180 parser should be used instead of the default parser.",
    ),
];

/// The charset key of the line-delimited and schemaless JSON connectors.
const FILE_CHARSET_KEY: &[Spec] = &[(
    FILE_CHARSET,
    ConfigType::String,
    Some("UTF-8"),
    Importance::Low,
    "Character set to read wth file with.",
)];

/// The config definition of a format's connector.
pub fn config_def(format: Format) -> ConfigDef {
    let tables: &[&[Spec]] = match format {
        Format::Csv => &[COMMON_KEYS, SCHEMA_KEYS, CSV_KEYS],
        Format::Json => &[COMMON_KEYS, SCHEMA_KEYS],
        Format::Lines | Format::SchemaLessJson => &[COMMON_KEYS, FILE_CHARSET_KEY],
    };
    let mut def = ConfigDef::new();
    for row in tables.iter().flat_map(|t| t.iter()) {
        let mut key = ConfigKey::from_row(row);
        if let Some(validator) = validator_of(row.0) {
            key = key.validator(validator);
        }
        def.add(key);
    }
    def
}

/// The validator of a key, if it has one.
fn validator_of(name: &str) -> Option<Validator> {
    Some(match name {
        TOPIC => Validator::NonEmptyString,
        BATCH_SIZE | TASK_COUNT | FILE_BUFFER_SIZE => Validator::AtLeast(1.0),
        FILE_MINIMUM_AGE_MS | TASK_INDEX | CSV_SKIP_LINES => Validator::AtLeast(0.0),
        EMPTY_POLL_WAIT_MS => Validator::Between(1.0, i64::MAX as f64),
        CLEANUP_POLICY => valid_enum("CleanupPolicy", &CLEANUP_POLICIES),
        TIMESTAMP_MODE => valid_enum("TimestampMode", &TIMESTAMP_MODES),
        FILE_SORT_ATTRIBUTES => valid_enum("FileAttribute", &FILE_ATTRIBUTES),
        TASK_PARTITIONER => valid_enum("TaskPartitioner", &["ByName"]),
        CSV_NULL_FIELD_INDICATOR => {
            valid_enum("CSVReaderNullFieldIndicator", &NULL_FIELD_INDICATORS)
        }
        INPUT_PATH | ERROR_PATH => absolute_path(),
        INPUT_FILE_PATTERN => regex_validator(),
        PROCESSING_FILE_EXTENSION => extension_validator(),
        TIMEZONE => timezone_validator(),
        DATE_FORMATS => date_formats_validator(),
        CSV_SEPARATOR_CHAR | CSV_QUOTE_CHAR | CSV_ESCAPE_CHAR => Validator::Between(0.0, 127.0),
        CSV_CHARSET | FILE_CHARSET => charset_validator(),
        _ => return None,
    })
}

/// `ValidEnum`'s message, as the original's connect-utils words it.
fn valid_enum(class: &'static str, values: &'static [&'static str]) -> Validator {
    Validator::Custom(Arc::new(move |_, value| match value {
        ConfigValue::String(s) if values.contains(&s.as_str()) => Ok(()),
        ConfigValue::List(items) => match items.iter().find(|i| !values.contains(&i.as_str())) {
            None => Ok(()),
            Some(bad) => Err(enum_message(bad, class, values)),
        },
        other => Err(enum_message(
            &other.render().unwrap_or_else(|| "null".into()),
            class,
            values,
        )),
    }))
}

fn enum_message(value: &str, class: &str, values: &[&str]) -> String {
    format!(
        "'{value}' is not a valid value for {class}. Valid values are {}.",
        values.join(", ")
    )
}

/// The path checks of connect-utils' `ValidDirectoryWritable` that need no file system access: set and
/// absolute. Whether the directory exists and is writable is checked when a task starts.
fn absolute_path() -> Validator {
    Validator::Custom(Arc::new(|key, value| {
        let text = match value {
            ConfigValue::String(s) => s.as_str(),
            _ => "",
        };
        if text.is_empty() {
            return Err(format!("'{key}' cannot be null or empty."));
        }
        if !Path::new(text).is_absolute() {
            return Err(format!("'{key}'({text}) is not an absolute path."));
        }
        Ok(())
    }))
}

fn regex_validator() -> Validator {
    Validator::Custom(Arc::new(|_, value| match value {
        ConfigValue::String(s) => Regex::new(&format!("^(?:{s})$"))
            .map(|_| ())
            .map_err(|e| format!("Invalid regex: {e}")),
        _ => Ok(()),
    }))
}

fn charset_validator() -> Validator {
    Validator::Custom(Arc::new(|key, value| match value {
        ConfigValue::String(s) if Charset::named(s).is_some() => Ok(()),
        other => Err(format!(
            "Charset '{}' is invalid for {key}",
            other.render().unwrap_or_default()
        )),
    }))
}

fn extension_validator() -> Validator {
    Validator::Custom(Arc::new(|_, v| match v {
        ConfigValue::String(s) if s.char_indices().any(|(i, c)| c == '.' && i + 1 < s.len()) => {
            Ok(())
        }
        other => Err(format!(
            "'{}' does not match pattern '^.*\\..+$'.",
            other.render().unwrap_or_default()
        )),
    }))
}

fn timezone_validator() -> Validator {
    Validator::Custom(Arc::new(|_, v| match v {
        ConfigValue::String(s) if utc_like(s) => Ok(()),
        _ => Err("only UTC (or GMT) is supported".into()),
    }))
}

fn date_formats_validator() -> Validator {
    Validator::Custom(Arc::new(|_, v| match v {
        ConfigValue::List(items) => items
            .iter()
            .try_for_each(|p| DateFormat::new(p).map(|_| ()).map_err(String::from)),
        _ => Ok(()),
    }))
}

fn utc_like(zone: &str) -> bool {
    matches!(zone, "UTC" | "GMT" | "Z" | "UT" | "Etc/UTC" | "Etc/GMT")
}
