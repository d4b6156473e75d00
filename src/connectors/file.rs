//! Kafka's file connectors (`org.apache.kafka.connect.file`): a source that tails a file line by line and a
//! sink that appends each record's value as a line. Keys, defaults, offsets and messages follow Kafka's.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value as Json};

use super::{ConnectorPlugin, Props, SinkTask, SourceTask, SourceTaskContext, TaskError};
use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, KeyRow, Validator, NULL_DEFAULT,
};
use crate::connectors::plugin_identity;
use crate::data::{Schema, Value};
use crate::logging::WarnThrottle;
use crate::model::now_ms;
use crate::record::{ConnectRecord, SinkRecord, SourceRecord};

const VERSION: &str = "4.0.0";
const FILE: &str = "file";
const TOPIC: &str = "topic";
const BATCH_SIZE: &str = "batch.size";
const FILENAME_FIELD: &str = "filename";
const POSITION_FIELD: &str = "position";

#[rustfmt::skip]
const SOURCE_FILE_KEY: KeyRow = (FILE, ConfigType::String, NULL_DEFAULT, Importance::High, "Source filename. If not specified, the standard input will be used");
#[rustfmt::skip]
const SOURCE_BATCH_SIZE_KEY: KeyRow = (BATCH_SIZE, ConfigType::Int, Some("2000"), Importance::Low, "The maximum number of records the source task can read from the file each time it is polled");

/// `org.apache.kafka.connect.file.FileStreamSourceConnector`.
#[derive(Debug)]
pub struct FileStreamSource;

/// The `topic` key of the file and verifiable sources: where the records go.
pub(crate) fn topic_key() -> ConfigKey {
    ConfigKey::new(
        TOPIC,
        ConfigType::String,
        DefaultValue::Required,
        Importance::High,
        "The topic to publish data to",
    )
    .validator(Validator::NonEmptyString)
}

impl ConnectorPlugin for FileStreamSource {
    plugin_identity!(
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        Source,
        VERSION,
        "org.apache.kafka.connect.file.FileStreamSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        ConfigDef::new()
            .define_rows(&[SOURCE_FILE_KEY])
            .define(topic_key())
            .define_rows(&[SOURCE_BATCH_SIZE_KEY])
    }
    fn task_configs(&self, config: &Props, _max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        // Kafka's file source always has exactly one task: a file cannot be split between readers.
        Ok(vec![config.clone()])
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(FileSourceTask::default()))
    }
    fn alter_offsets(
        &self,
        config: &Props,
        offsets: &[(Json, Option<Json>)],
    ) -> Result<bool, String> {
        if config.get(FILE).is_none_or(|f| f.is_empty()) {
            return Err("Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked.".into());
        }
        for (partition, offset) in offsets {
            let Some(offset) = offset else { continue };
            if partition.is_null() {
                return Err("Partition objects cannot be null".into());
            }
            if partition.get(FILENAME_FIELD).is_none() {
                return Err("Partition objects should contain the key 'filename'".into());
            }
            let Some(position) = offset.get(POSITION_FIELD) else {
                return Err(
                    "Offset objects should either be null or contain the key 'position'".into(),
                );
            };
            match position.as_i64() {
                Some(p) if p >= 0 => {}
                Some(_) => return Err(
                    "The value for the 'position' key in the offset should be a non-negative value"
                        .into(),
                ),
                None => return Err(
                    "The value for the 'position' key in the offset is expected to be a Long value"
                        .into(),
                ),
            }
        }
        Ok(true)
    }
}

/// Where the source reads from.
enum Input {
    File {
        file: File,
        path: String,
    },
    /// Lines from standard input, read by a helper thread so that polls never block.
    Stdin(mpsc::Receiver<Vec<u8>>),
}

/// Reads lines from a file, remembering the byte position after each line's terminator.
#[derive(Default)]
pub struct FileSourceTask {
    path: Option<String>,
    topic: String,
    batch_size: usize,
    input: Option<Input>,
    /// Bytes read but not yet emitted (an unterminated last line).
    buffer: Vec<u8>,
    /// Position in the file of `buffer[0]`.
    position: u64,
    /// The file was replaced or truncated: the next open reads it from the start, not the stored offset.
    from_start: bool,
    /// Throttles the warning about a missing file.
    missing: WarnThrottle,
    /// The file-system watch on the file (`Some(None)`: asked for, none available, so the file is polled).
    watch: Option<Option<Box<dyn std::any::Any + Send>>>,
}

/// How long an idle source waits before looking at its file again: rarely when file-system events wake
/// it (the wait is only a safety net, e.g. for file systems that send no events), often when not.
const IDLE_WATCHED: Duration = Duration::from_secs(60);
const IDLE_POLLED: Duration = Duration::from_millis(100);

impl FileSourceTask {
    fn open(&mut self, context: &dyn SourceTaskContext) -> Result<bool, TaskError> {
        let Some(path) = self.path.clone() else {
            let (tx, rx) = mpsc::channel();
            std::thread::Builder::new()
                .name("liteconnect-stdin".into())
                .spawn(move || {
                    let mut stdin = std::io::stdin();
                    let mut chunk = [0u8; 8192];
                    while let Ok(n) = stdin.read(&mut chunk) {
                        if n == 0 || tx.send(chunk[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| TaskError::fatal(format!("Could not read stdin: {e}")))?;
            self.input = Some(Input::Stdin(rx));
            return Ok(true);
        };
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match self.missing.note(Instant::now()) {
                    Some(0) => {
                        tracing::warn!(file = %path, "Couldn't find file for FileStreamSourceTask, sleeping to wait for it to be created.")
                    }
                    Some(held_back) => {
                        tracing::warn!(file = %path, "Couldn't find file for FileStreamSourceTask, sleeping to wait for it to be created ({held_back} more times since the last warning).")
                    }
                    None => {}
                }
                return Ok(false);
            }
            Err(e) => {
                return Err(TaskError::fatal(format!(
                    "Error while trying to open file {path}: {e}"
                )))
            }
        };
        self.missing.reset();
        let stored = context.offset(&json!({ FILENAME_FIELD: path }))?;
        let stored = if std::mem::take(&mut self.from_start) {
            None
        } else {
            stored
        };
        let position = match stored.as_ref().and_then(|o| o.get(POSITION_FIELD)) {
            None => 0,
            Some(p) => match p.as_i64() {
                Some(p) if p >= 0 => p as u64,
                _ => return Err(TaskError::fatal("Offset position is the incorrect type")),
            },
        };
        if position > 0 {
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if position > len {
                tracing::warn!(file = %path, position, len, "The file is shorter than the stored position; reading it from the start.");
                self.position = 0;
            } else {
                file.seek(SeekFrom::Start(position)).map_err(|e| {
                    TaskError::fatal(format!(
                        "Error while trying to seek to offset {position} in {path}: {e}"
                    ))
                })?;
                self.position = position;
            }
        }
        self.buffer.clear();
        self.input = Some(Input::File { file, path });
        Ok(true)
    }

    /// Splits complete lines off the buffer: `\n`, `\r\n` and `\r` end a line; a trailing `\r` waits for the
    /// next byte to tell `\r` from `\r\n`.
    fn take_lines(&mut self, limit: usize, eof: bool) -> Vec<(String, u64)> {
        let mut lines = Vec::new();
        let mut start = 0;
        let mut i = 0;
        let buf = &self.buffer;
        while i < buf.len() && lines.len() < limit {
            match buf[i] {
                b'\n' => {
                    lines.push((
                        String::from_utf8_lossy(&buf[start..i]).into_owned(),
                        self.position + i as u64 + 1,
                    ));
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    if i + 1 < buf.len() {
                        let end = if buf[i + 1] == b'\n' { i + 2 } else { i + 1 };
                        lines.push((
                            String::from_utf8_lossy(&buf[start..i]).into_owned(),
                            self.position + end as u64,
                        ));
                        i = end;
                        start = i;
                    } else if eof {
                        // Nothing more will come to make this "\r\n"; it stays pending like Kafka's reader.
                        break;
                    } else {
                        break;
                    }
                }
                _ => i += 1,
            }
        }
        self.buffer.drain(..start);
        self.position += start as u64;
        lines
    }

    /// The records of one poll's lines. Only the last carries the source partition and offset: the
    /// runtime stores one offset per partition per poll, the last, and transforms never see them, so
    /// the stored offsets are what Kafka's task stores while the other records skip building two maps
    /// each.
    fn records(&self, lines: Vec<(String, u64)>) -> Vec<SourceRecord> {
        let now = now_ms();
        let schema = Schema::string();
        let last = lines.len().saturating_sub(1);
        lines
            .into_iter()
            .enumerate()
            .map(|(i, (line, position))| {
                let mut record = ConnectRecord::new(
                    self.topic.clone(),
                    Some(schema.clone()),
                    Value::String(line),
                );
                record.timestamp = Some(now);
                let (source_partition, source_offset) = match &self.path {
                    Some(path) if i == last => {
                        let mut partition = Map::new();
                        partition.insert(FILENAME_FIELD.into(), Json::String(path.clone()));
                        let mut offset = Map::new();
                        offset.insert(POSITION_FIELD.into(), json!(position));
                        (Some(partition), Some(offset))
                    }
                    _ => (None, None),
                };
                SourceRecord {
                    source_partition,
                    source_offset,
                    record,
                }
            })
            .collect()
    }
}

impl SourceTask for FileSourceTask {
    fn start(&mut self, config: &Props, _context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        self.path = config.get(FILE).filter(|f| !f.is_empty()).cloned();
        self.topic = config.get(TOPIC).cloned().unwrap_or_default();
        self.batch_size = config
            .get(BATCH_SIZE)
            .and_then(|b| b.trim().parse().ok())
            .unwrap_or(2000);
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        if self.watch.is_none() {
            self.watch = Some(
                self.path
                    .as_deref()
                    .and_then(|p| context.watch_file(std::path::Path::new(p))),
            );
        }
        let idle = match &self.watch {
            Some(Some(_)) => IDLE_WATCHED,
            _ => IDLE_POLLED,
        };
        if self.input.is_none() && !self.open(context)? {
            context.idle(idle.max(Duration::from_secs(1)));
            return Ok(Vec::new());
        }
        let mut lines = self.take_lines(self.batch_size, false);
        if lines.is_empty() {
            let got_data = match self.input.as_mut() {
                Some(Input::File { file, path }) => {
                    let mut chunk = vec![0u8; 64 * 1024];
                    match file.read(&mut chunk) {
                        Ok(0) => {
                            // At the end: if the file was replaced or truncated, start over on the new one.
                            let replaced = match (std::fs::metadata(&*path), file.metadata()) {
                                (Ok(now), Ok(open)) => {
                                    now.len() < self.position + self.buffer.len() as u64
                                        || !same_file(&now, &open)
                                }
                                (Err(_), _) => false,
                                _ => false,
                            };
                            if replaced {
                                tracing::info!(file = %path, "The source file was replaced or truncated; reading it again from the start.");
                                self.input = None;
                                self.position = 0;
                                self.from_start = true;
                                self.buffer.clear();
                            }
                            false
                        }
                        Ok(n) => {
                            self.buffer.extend_from_slice(&chunk[..n]);
                            true
                        }
                        Err(e) => {
                            let path = path.clone();
                            self.input = None;
                            return Err(TaskError::Retriable(format!(
                                "Error while reading {path}: {e}"
                            )));
                        }
                    }
                }
                Some(Input::Stdin(rx)) => match rx.try_recv() {
                    Ok(data) => {
                        self.buffer.extend_from_slice(&data);
                        true
                    }
                    Err(_) => false,
                },
                None => false,
            };
            if !got_data {
                context.idle(idle);
                return Ok(Vec::new());
            }
            lines = self.take_lines(self.batch_size, false);
        }
        Ok(self.records(lines))
    }
    /// Nothing is acknowledged to the file: the stored offsets are all the source needs.
    fn polls_ahead(&self) -> bool {
        true
    }

    fn stop(&mut self) {
        self.input = None;
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.ino() == b.ino() && a.dev() == b.dev()
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    true
}

/// `org.apache.kafka.connect.file.FileStreamSinkConnector`.
#[derive(Debug)]
pub struct FileStreamSink;

impl ConnectorPlugin for FileStreamSink {
    plugin_identity!(
        "org.apache.kafka.connect.file.FileStreamSinkConnector",
        Sink,
        VERSION,
        "org.apache.kafka.connect.file.FileStreamSinkTask"
    );
    fn config_def(&self) -> ConfigDef {
        ConfigDef::new().define(ConfigKey::new(
            FILE,
            ConfigType::String,
            DefaultValue::Null,
            Importance::High,
            "Destination filename. If not specified, the standard output will be used",
        ))
    }
    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        Ok(vec![config.clone(); max_tasks])
    }
    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        Some(Box::new(FileSinkTask {
            out: None,
            batch: Vec::new(),
        }))
    }
    fn acknowledges_offsets(&self) -> bool {
        true
    }
}

/// Appends each record's value, as Java's `String.valueOf` would print it, as one line.
pub struct FileSinkTask {
    out: Option<BufWriter<Box<dyn Write + Send>>>,
    /// The lines of the batch being written, kept to reuse its allocation.
    batch: Vec<u8>,
}

/// Cuts a line left half-written at the end of the sink file (a `kill -9` between the pages of one
/// write): the sink writes whole lines only, and the records of a write that did not finish are
/// uncommitted, so they are written again in full after the restart.
fn drop_partial_line(file: &File, path: &str) -> Result<(), TaskError> {
    use std::io::{Read, Seek, SeekFrom};
    let failed = |e: std::io::Error| {
        TaskError::fatal(format!(
            "Couldn't read the end of the sink file '{path}': {e}"
        ))
    };
    let len = file.metadata().map_err(failed)?.len();
    if len == 0 {
        return Ok(());
    }
    let mut reader = file;
    let mut end = len;
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..(end - start) as usize];
        reader.seek(SeekFrom::Start(start)).map_err(failed)?;
        reader.read_exact(chunk).map_err(failed)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                tracing::warn!(file = %path, bytes = len - keep, "The sink file ends in a partly written line (the worker stopped in the middle of a write); cutting it: its records were not committed and are written again.");
                file.set_len(keep).map_err(failed)?;
            }
            return Ok(());
        }
        end = start;
    }
    // No newline at all: a file of one partial line is left as it is (it may not be ours).
    Ok(())
}

impl SinkTask for FileSinkTask {
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        let writer: Box<dyn Write + Send> = match config.get(FILE).filter(|f| !f.is_empty()) {
            None => Box::new(std::io::stdout()),
            Some(path) => {
                let file = File::options()
                    .create(true)
                    .append(true)
                    .read(true)
                    .open(path)
                    .map_err(|e| {
                        TaskError::fatal(format!(
                            "Couldn't find or create file '{path}' for FileStreamSinkTask: {e}"
                        ))
                    })?;
                drop_partial_line(&file, path)?;
                Box::new(file)
            }
        };
        self.out = Some(BufWriter::with_capacity(64 * 1024, writer));
        Ok(())
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| TaskError::fatal("FileStreamSinkTask was not started"))?;
        // The batch's lines are gathered first and written with one call: one system call per batch
        // rather than one per 64 KiB of lines, and no line copied into a string of its own.
        let batch = &mut self.batch;
        batch.clear();
        for r in records {
            match &r.record.value {
                Value::String(s) => batch.extend_from_slice(s.as_bytes()),
                other => batch.extend_from_slice(other.to_java_string().as_bytes()),
            }
            batch.push(b'\n');
        }
        out.write_all(batch)
            .map_err(|e| TaskError::Retriable(format!("Failed to write to the sink file: {e}")))
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        if let Some(out) = self.out.as_mut() {
            out.flush()
                .map_err(|e| TaskError::Retriable(format!("Failed to flush the sink file: {e}")))?;
        }
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut out) = self.out.take() {
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(task: &mut FileSourceTask, data: &[u8]) -> Vec<(String, u64)> {
        task.buffer.extend_from_slice(data);
        task.take_lines(usize::MAX, false)
    }

    #[test]
    fn positions_follow_kafkas_test() {
        let mut task = FileSourceTask::default();
        assert_eq!(
            lines_of(&mut task, b"partial line finished\n"),
            vec![("partial line finished".into(), 22)]
        );
        let got = lines_of(&mut task, b"line1\rline2\r\nline3\nline4\n");
        let positions: Vec<u64> = got.iter().map(|(_, p)| *p).collect();
        assert_eq!(positions, vec![28, 35, 41, 47]);
        assert_eq!(got[1].0, "line2");
    }

    #[test]
    fn a_partly_written_last_line_is_cut_when_the_sink_starts() {
        let dir = tempfile::tempdir().unwrap();
        let start = |content: &[u8]| {
            let path = dir.path().join("out.txt");
            std::fs::write(&path, content).unwrap();
            let mut task = FileSinkTask {
                out: None,
                batch: Vec::new(),
            };
            let config = Props::from([(FILE.to_string(), path.display().to_string())]);
            task.start(&config).unwrap();
            task.stop();
            std::fs::read(&path).unwrap()
        };
        assert_eq!(start(b"one\ntwo\nthr"), b"one\ntwo\n");
        assert_eq!(start(b"one\ntwo\n"), b"one\ntwo\n");
        assert_eq!(start(b""), b"");
        let long = format!("{}\n{}", "x".repeat(100_000), "y".repeat(70_000));
        assert_eq!(
            start(long.as_bytes()),
            format!("{}\n", "x".repeat(100_000)).as_bytes()
        );
    }

    #[test]
    fn partial_lines_and_trailing_cr_wait() {
        let mut task = FileSourceTask::default();
        assert!(lines_of(&mut task, b"no end yet").is_empty());
        assert!(
            lines_of(&mut task, b"\r").is_empty(),
            "a trailing CR waits for the next byte"
        );
        assert_eq!(
            lines_of(&mut task, b"\nnext"),
            vec![("no end yet".into(), 12)]
        );
    }

    #[test]
    fn alter_offsets_messages() {
        let plugin = FileStreamSource;
        let mut cfg = Props::new();
        let p = json!({"filename": "/tmp/x"});
        assert!(plugin
            .alter_offsets(&cfg, &[(p.clone(), Some(json!({"position": 1})))])
            .unwrap_err()
            .contains("stdin"));
        cfg.insert("file".into(), "/tmp/x".into());
        assert!(plugin
            .alter_offsets(&cfg, &[(p.clone(), Some(json!({"position": 1})))])
            .unwrap());
        assert!(plugin.alter_offsets(&cfg, &[(p.clone(), None)]).unwrap());
        let err = plugin
            .alter_offsets(&cfg, &[(p.clone(), Some(json!({"position": -1})))])
            .unwrap_err();
        assert!(err.contains("non-negative"), "{err}");
        let err = plugin
            .alter_offsets(&cfg, &[(p.clone(), Some(json!({"position": "1"})))])
            .unwrap_err();
        assert!(err.contains("Long value"), "{err}");
        let err = plugin
            .alter_offsets(&cfg, &[(p, Some(json!({"x": 1})))])
            .unwrap_err();
        assert!(err.contains("'position'"), "{err}");
        let err = plugin
            .alter_offsets(&cfg, &[(json!({"f": 1}), Some(json!({"position": 1})))])
            .unwrap_err();
        assert!(err.contains("'filename'"), "{err}");
    }
}
