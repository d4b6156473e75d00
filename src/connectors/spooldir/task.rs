//! The SpoolDir source task: reads one file at a time in batches, and cleans a file up only once every
//! record read from it is committed to the local log.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Map, Value as Json};

use super::config::{self, Format, SpoolConfig, TimestampMode};
use super::convert::{self, Schemas};
use super::files::{self, InputFile};
use super::parse::Parser;
use super::readers::{CsvRows, JsonValues, Lines, ReadError, Reader};
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::data::DataError;
use crate::data::{logical, Schema, Value};
use crate::model::now_ms;
use crate::record::{ConnectRecord, Header, SourceRecord};

/// The file being read.
struct Open {
    file: InputFile,
    reader: Box<dyn Reader>,
    partition: Map<String, Json>,
    /// Items at or below this stored offset were committed before: they are skipped.
    committed: Option<i64>,
    /// CSV column names (from the header row or the value schema).
    columns: Vec<String>,
}

/// How a file ended.
enum Outcome {
    Finished,
    Failed(String),
}

/// A SpoolDir task of one format.
pub struct SpoolTask {
    format: Format,
    config: Option<SpoolConfig>,
    parser: Parser,
    schemas: Option<Schemas>,
    queue: VecDeque<InputFile>,
    current: Option<Open>,
    /// Files read to their end (or to an error) whose cleanup waits for their records' commit.
    pending: Vec<(InputFile, Outcome)>,
    /// A poll returned records that are not committed yet.
    uncommitted: bool,
    /// `halt.on.error`: the error the next poll fails with.
    halt: Option<String>,
    /// Files left in place (cleanup.policy=NONE) and read to the end, with their size and time then: not
    /// read again unless they change.
    kept: HashMap<PathBuf, (u64, i64)>,
    /// Names of files this task moved or deleted: a new file under such a name starts from its first
    /// record, whatever offset the old one left.
    cleaned: HashSet<String>,
    empty_polls: u32,
}

impl SpoolTask {
    pub fn new(format: Format) -> SpoolTask {
        SpoolTask {
            format,
            config: None,
            parser: Parser::new(Vec::new()),
            schemas: None,
            queue: VecDeque::new(),
            current: None,
            pending: Vec::new(),
            uncommitted: false,
            halt: None,
            kept: HashMap::new(),
            cleaned: HashSet::new(),
            empty_polls: 0,
        }
    }

    fn config(&self) -> &SpoolConfig {
        self.config.as_ref().expect("the task is started")
    }

    /// Cleans up every pending file (all their records are committed).
    fn clean_up(&mut self) -> Result<(), TaskError> {
        let config = self.config.clone().expect("the task is started");
        for (file, outcome) in std::mem::take(&mut self.pending) {
            let result = match &outcome {
                Outcome::Finished => files::finish(&config, &file),
                Outcome::Failed(message) => files::fail(&config, &file, message),
            };
            if let Err(e) = result {
                tracing::error!(file = %file.path.display(), error = %e, "Could not clean up a file.");
            }
            if matches!(outcome, Outcome::Finished) && config.cleanup == config::CleanupPolicy::None
            {
                self.kept
                    .insert(file.path.clone(), (file.length, file.last_modified));
            } else {
                self.cleaned.insert(file.name.clone());
            }
        }
        Ok(())
    }

    /// Finds the next file, or None when there is none yet.
    fn next_file(&mut self) -> Result<Option<InputFile>, TaskError> {
        if self.queue.is_empty() {
            let config = self.config();
            let found = files::list(config, now_ms()).map_err(|e| {
                TaskError::Retriable(format!(
                    "Directory for '{}' '{}' does not exist or cannot be read: {e}",
                    config::INPUT_PATH,
                    config.input_path.display()
                ))
            })?;
            let kept = &self.kept;
            self.queue = found
                .into_iter()
                .filter(|f| kept.get(&f.path) != Some(&(f.length, f.last_modified)))
                .collect();
        }
        Ok(self.queue.pop_front())
    }

    /// Opens a file for reading from its stored offset on.
    fn open(
        &mut self,
        file: InputFile,
        context: &dyn SourceTaskContext,
    ) -> Result<Result<Open, DataError>, TaskError> {
        let config = self.config().clone();
        let partition: Map<String, Json> = [("fileName".to_string(), json!(file.name))]
            .into_iter()
            .collect();
        let stored = context.offset(&Json::Object(partition.clone()))?;
        let committed = stored
            .as_ref()
            .and_then(|o| o.get("offset"))
            .and_then(Json::as_i64)
            .filter(|_| !self.cleaned.remove(&file.name));
        let handle = match File::open(&file.path) {
            Ok(h) => h,
            Err(e) => {
                return Ok(Err(
                    format!("Could not open {}: {e}", file.path.display()).into()
                ))
            }
        };
        if let Err(e) = std::fs::write(file.processing_flag(&config.processing_extension), b"") {
            tracing::warn!(file = %file.path.display(), error = %e, "Could not create the processing flag.");
        }
        tracing::info!(file = %file.path.display(), ?committed, "Opening a file.");
        let mut columns = Vec::new();
        let buffer = config.buffer_size;
        let reader: Box<dyn Reader> = match config.format {
            Format::Lines => Box::new(Lines::new(handle, config.charset, buffer)),
            Format::SchemaLessJson => Box::new(JsonValues::new(handle, buffer, 1)),
            Format::Json => Box::new(JsonValues::new(handle, buffer, 0)),
            Format::Csv => {
                let csv = config.csv.as_ref().expect("CSV settings");
                let mut rows = match CsvRows::new(handle, csv, config.charset, buffer) {
                    Ok(r) => r,
                    Err(e) => return Ok(Err(line_message(&e).into())),
                };
                if csv.first_row_as_header {
                    match rows.header() {
                        Ok(h) => columns = h.unwrap_or_default(),
                        Err(e) => return Ok(Err(line_message(&e).into())),
                    }
                }
                Box::new(rows)
            }
        };
        if self.format.has_schemas() && self.schemas.is_none() {
            match convert::generate(&config, &file, &columns) {
                Ok(s) => self.schemas = s,
                Err(e) => return Ok(Err(e)),
            }
        }
        if self.format == Format::Csv && columns.is_empty() {
            if let Some(s) = &self.schemas {
                columns = s.value.fields.iter().map(|f| f.name.clone()).collect();
            }
        }
        Ok(Ok(Open {
            file,
            reader,
            partition,
            committed,
            columns,
        }))
    }

    /// Reads up to `batch.size` records from the open file. Returns them with how the file ended, if it
    /// did.
    fn read_batch(&mut self, open: &mut Open) -> (Vec<SourceRecord>, Option<Outcome>) {
        let batch = self.config().batch_size;
        let mut records = Vec::with_capacity(batch.min(4096));
        while records.len() < batch {
            let read = match open.reader.next() {
                Ok(Some(r)) => r,
                Ok(None) => return (records, Some(Outcome::Finished)),
                Err(e) => {
                    return (
                        records,
                        Some(Outcome::Failed(self.failure(open, &line_message(&e)))),
                    )
                }
            };
            if open.committed.is_some_and(|c| read.offset <= c) {
                continue;
            }
            match self.record(open, read.item, read.offset) {
                Ok(r) => records.push(r),
                Err(e) => {
                    let message = format!("line {}: {e}", read.line);
                    return (records, Some(Outcome::Failed(self.failure(open, &message))));
                }
            }
        }
        (records, None)
    }

    fn failure(&self, open: &Open, message: &str) -> String {
        format!(
            "Exception encountered processing {} at {message}",
            open.file.path.display()
        )
    }

    /// The record of one item.
    fn record(
        &self,
        open: &Open,
        item: super::readers::Item,
        offset: i64,
    ) -> Result<SourceRecord, DataError> {
        let config = self.config();
        let (key, value) = convert::key_and_value(
            config.format,
            &self.parser,
            self.schemas.as_ref(),
            &open.columns,
            item,
        )?;
        let timestamp = match config.timestamp_mode {
            TimestampMode::ProcessTime => now_ms(),
            TimestampMode::FileTime => open.file.last_modified,
            TimestampMode::Field => {
                let field = config
                    .schemas
                    .as_ref()
                    .and_then(|s| s.timestamp_field.clone())
                    .unwrap_or_default();
                match &value.1 {
                    Value::Struct(s) => s.get(&field).and_then(Value::as_i64),
                    _ => None,
                }
                .ok_or_else(|| DataError(format!("The timestamp field '{field}' is null")))?
            }
        };
        let mut record = ConnectRecord::new(config.topic.clone(), value.0, value.1);
        record.key_schema = key.0;
        record.key = key.1;
        record.timestamp = Some(timestamp);
        record.headers = headers(&open.file, offset);
        let mut source_offset = Map::new();
        source_offset.insert("offset".into(), json!(offset));
        Ok(SourceRecord {
            source_partition: Some(open.partition.clone()),
            source_offset: Some(source_offset),
            record,
        })
    }
}

fn line_message(e: &ReadError) -> String {
    format!("line {}: {}", e.line, e.message)
}

/// The original's file headers.
fn headers(file: &InputFile, offset: i64) -> Vec<Header> {
    let string = |key: &str, v: Option<String>| Header {
        key: key.into(),
        schema: Some(if v.is_some() {
            Schema::string()
        } else {
            Schema::optional_string()
        }),
        value: v.map_or(Value::Null, Value::String),
    };
    let long = |key: &str, v: i64| Header {
        key: key.into(),
        schema: Some(Schema::int64()),
        value: Value::Int64(v),
    };
    let path = std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone());
    let mut headers = vec![
        string("file.name", Some(file.name.clone())),
        string(
            "file.name.without.extension",
            Some(file.name_without_extension().to_string()),
        ),
        string("file.path", Some(path.display().to_string())),
        string("file.parent.dir.name", file.parent_dir_name()),
        long("file.length", file.length as i64),
        long("file.offset", offset),
        Header {
            key: "file.last.modified".into(),
            schema: Some(logical::timestamp().build()),
            value: Value::Int64(file.last_modified),
        },
    ];
    if let Some(relative) = &file.relative {
        headers.push(string(
            "file.relative.path",
            Some(relative.display().to_string()),
        ));
    }
    headers
}

/// Checks that a directory exists and can be written to, with the original's messages.
fn check_directory(key: &str, path: &std::path::Path) -> Result<(), TaskError> {
    if !path.is_dir() {
        return Err(TaskError::fatal(format!(
            "Directory for '{key}' '{}' does not exist ",
            path.display()
        )));
    }
    let probe = path.join(format!(".permission-{}.testing", uuid::Uuid::new_v4()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(TaskError::fatal(format!(
            "Directory for '{key}' '{}' it not writable. {e}",
            path.display()
        ))),
    }
}

impl SourceTask for SpoolTask {
    fn start(&mut self, props: &Props, _context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let config = SpoolConfig::parse(self.format, props).map_err(config::task_error)?;
        check_directory(config::ERROR_PATH, &config.error_path)?;
        if let Some(finished) = &config.finished_path {
            check_directory(config::FINISHED_PATH, finished)?;
        }
        if let Some(s) = &config.schemas {
            self.parser = Parser::new(s.date_formats.clone());
            if let (Some(key), Some(value)) = (&s.key_schema, &s.value_schema) {
                self.schemas = Some(Schemas {
                    key: key.clone(),
                    value: value.clone(),
                });
            }
        }
        files::remove_stale_flags(&config);
        self.config = Some(config);
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        if let Some(message) = self.halt.take() {
            return Err(TaskError::fatal(message));
        }
        if !self.uncommitted {
            self.clean_up()?;
        }
        // Files that end without a new record are cleaned up at once; a few per poll at most.
        for _ in 0..64 {
            let mut open = match self.current.take() {
                Some(open) => open,
                None => {
                    let Some(file) = self.next_file()? else { break };
                    if !file.path.exists() {
                        // Gone since it was listed (taken away, or cleaned up by an earlier run).
                        continue;
                    }
                    match self.open(file.clone(), context)? {
                        Ok(open) => open,
                        Err(message) => {
                            let message = format!(
                                "Exception encountered processing {}: {message}",
                                file.path.display()
                            );
                            self.pending.push((file, Outcome::Failed(message.clone())));
                            self.clean_up()?;
                            if self.config().halt_on_error {
                                return Err(TaskError::fatal(message));
                            }
                            continue;
                        }
                    }
                }
            };
            let (records, outcome) = self.read_batch(&mut open);
            match outcome {
                None => self.current = Some(open),
                Some(outcome) => {
                    if let Outcome::Failed(message) = &outcome {
                        if self.config().halt_on_error {
                            self.halt = Some(message.clone());
                        }
                    }
                    self.pending.push((open.file, outcome));
                }
            }
            if !records.is_empty() {
                self.uncommitted = true;
                self.empty_polls = 0;
                return Ok(records);
            }
            // Nothing new from this file: everything it gave is committed already.
            self.clean_up()?;
            if let Some(message) = self.halt.take() {
                return Err(TaskError::fatal(message));
            }
        }
        self.empty_polls += 1;
        if self.empty_polls > 1 {
            context.idle(Duration::from_millis(self.config().empty_poll_wait_ms));
        }
        Ok(Vec::new())
    }

    fn commit(&mut self) -> Result<(), TaskError> {
        self.uncommitted = false;
        self.clean_up()
    }

    fn stop(&mut self) {
        if let (Some(open), Some(config)) = (self.current.take(), self.config.as_ref()) {
            let _ = std::fs::remove_file(open.file.processing_flag(&config.processing_extension));
        }
    }
}
