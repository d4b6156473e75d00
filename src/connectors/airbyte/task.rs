//! The source task: one READ after another, each RECORD buffered until the STATE that covers it, then
//! handed to the runtime with that state as its source offset, so records and state are committed in
//! one transaction.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value as Json};

use super::catalog::{global_partition, legacy_partition, Stream};
use super::protocol::{self, Message, Scratch, State};
use super::{schema, stats, Settings};
use crate::connectors::child::{describe_exit, Child};
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::record::{ConnectRecord, SourceRecord};

/// How long one poll waits for the source's messages before it returns to the runtime.
const POLL_SLICE: Duration = Duration::from_millis(250);
/// How long a READ may take to exit once its stdout is closed.
const EXIT_GRACE: Duration = Duration::from_secs(10);
/// How many lines of stdout may wait for the task before the source is held back.
const LINE_QUEUE: usize = 4096;

/// A READ in progress.
struct Read {
    child: Child,
    lines: Receiver<Message>,
    started: Instant,
    /// The TRACE error the source reported, if any.
    error: Option<TaskError>,
    /// How many valid messages came.
    messages: u64,
    /// The first line that was not a message.
    garbage: Option<String>,
}

/// The Airbyte source task.
#[derive(Default)]
pub struct AirbyteTask {
    settings: Option<Settings>,
    streams: Vec<Stream>,
    scratch: Option<Scratch>,
    read: Option<Read>,
    next_sync: Option<Instant>,
    /// RECORDs not yet covered by a STATE, per stream (name, namespace).
    buffers: HashMap<(String, Option<String>), Vec<SourceRecord>>,
    /// The streams whose STATE was handed to the runtime and is not yet committed.
    states_in_flight: Vec<String>,
}

fn fatal(e: impl std::fmt::Display) -> TaskError {
    TaskError::fatal(e.to_string())
}

impl AirbyteTask {
    fn settings(&self) -> Result<&Settings, TaskError> {
        self.settings
            .as_ref()
            .ok_or_else(|| fatal("The task is not started"))
    }

    fn scratch(&self) -> Result<&Scratch, TaskError> {
        self.scratch
            .as_ref()
            .ok_or_else(|| fatal("The task is not started"))
    }

    /// The `--state` file's content from the stored offsets: GLOBAL or LEGACY state when one is
    /// stored, else the incremental streams' states; `None` when nothing is stored.
    fn input_state(&self, context: &dyn SourceTaskContext) -> Result<Option<Json>, TaskError> {
        let stored = |p: Map<String, Json>| -> Result<Option<Map<String, Json>>, TaskError> {
            Ok(match context.offset(&Json::Object(p))? {
                Some(Json::Object(m)) => Some(m),
                _ => None,
            })
        };
        if let Some(blob) = stored(global_partition())? {
            return Ok(Some(Json::Array(vec![protocol::global_state(&blob)])));
        }
        if let Some(blob) = stored(legacy_partition())? {
            return Ok(Some(Json::Array(vec![protocol::legacy_state(&blob)])));
        }
        let mut states = Vec::new();
        for s in self.streams.iter().filter(|s| s.incremental) {
            if let Some(blob) = stored(s.partition.clone())? {
                states.push(protocol::stream_state(
                    &s.name,
                    s.namespace.as_deref(),
                    &blob,
                ));
            }
        }
        Ok((!states.is_empty()).then_some(Json::Array(states)))
    }

    fn start_read(&mut self, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let settings = self.settings()?;
        let scratch = self.scratch()?;
        let catalog = Json::Object(Map::from_iter([(
            "streams".to_string(),
            Json::Array(self.streams.iter().map(|s| s.configured.clone()).collect()),
        )]));
        let config_path = scratch
            .write("config.json", &settings.config)
            .map_err(fatal)?;
        let catalog_path = scratch.write("catalog.json", &catalog).map_err(fatal)?;
        let mut args: Vec<std::ffi::OsString> = vec![
            "read".into(),
            "--config".into(),
            config_path.into(),
            "--catalog".into(),
            catalog_path.into(),
        ];
        if let Some(state) = self.input_state(context)? {
            args.push("--state".into());
            args.push(scratch.write("state.json", &state).map_err(fatal)?.into());
        }
        let mut child = Child::spawn(&settings.source.spec(args)).map_err(fatal)?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| fatal("The source has no stdout"))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(LINE_QUEUE);
        let name = settings.source.name.clone();
        std::thread::Builder::new()
            .name(format!("airbyte-{name}"))
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut line = Vec::new();
                while matches!(reader.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                    let message = protocol::parse_line(&String::from_utf8_lossy(&line));
                    line.clear();
                    protocol::log_message(&name, &message);
                    if tx.send(message).is_err() {
                        return;
                    }
                }
            })
            .map_err(fatal)?;
        tracing::info!(connector = %settings.source.name, streams = self.streams.len(), "Airbyte READ started.");
        stats::update(&settings.source.name, |f| f.running = true);
        self.read = Some(Read {
            child,
            lines: rx,
            started: Instant::now(),
            error: None,
            messages: 0,
            garbage: None,
        });
        Ok(())
    }

    /// The Connect record of a RECORD message (its partition and offset are set when a STATE covers it).
    fn record(
        &self,
        stream: &str,
        namespace: Option<&str>,
        data: &Json,
        emitted_at: Option<i64>,
    ) -> Result<Option<SourceRecord>, TaskError> {
        let Some(s) = self
            .streams
            .iter()
            .find(|s| s.name == stream && s.namespace.as_deref() == namespace)
        else {
            tracing::debug!(stream, "A RECORD of a stream not asked for; skipped.");
            return Ok(None);
        };
        let bad = |e: crate::data::DataError| {
            fatal(format!(
                "A record of the stream {stream} does not fit its schema: {e}"
            ))
        };
        let (value, fields) = match (&s.schema, data.as_object()) {
            (Some(schema), Some(obj)) => {
                let v = schema::struct_value(schema, obj, "").map_err(bad)?;
                (crate::data::Value::Struct(v.clone()), Some(v))
            }
            _ => (schema::schemaless(data), None),
        };
        let mut record = ConnectRecord::new(&s.topic, s.schema.clone(), value);
        record.timestamp = emitted_at;
        if let (Some(key_schema), Some(fields)) = (&s.key_schema, fields) {
            let mut key = crate::data::Struct::new(key_schema.clone());
            for name in &s.primary_key {
                if let Some(v) = fields.get(name) {
                    key.put(name, v.clone()).map_err(bad)?;
                }
            }
            record.key_schema = Some(key_schema.clone());
            record.key = crate::data::Value::Struct(key);
        }
        Ok(Some(SourceRecord {
            source_partition: None,
            source_offset: None,
            record,
        }))
    }

    /// The records a STATE covers, the last one carrying the state as its source offset.
    fn covered(&mut self, state: State) -> Vec<SourceRecord> {
        let (mut records, partition, blob) = match state {
            State::Stream {
                stream,
                namespace,
                blob,
            } => {
                let partition = super::catalog::stream_partition(&stream, namespace.as_deref());
                self.states_in_flight
                    .push(stats::stream_key(&stream, namespace.as_deref()));
                let records = self
                    .buffers
                    .remove(&(stream, namespace))
                    .unwrap_or_default();
                (records, partition, blob)
            }
            State::Global(blob) => {
                self.all_streams_in_flight();
                (self.take_all(), global_partition(), blob)
            }
            State::Legacy(blob) => {
                self.all_streams_in_flight();
                (self.take_all(), legacy_partition(), blob)
            }
        };
        match records.last_mut() {
            Some(last) => {
                last.source_partition = Some(partition);
                last.source_offset = Some(blob);
            }
            // A checkpoint that covers no new record is committed too.
            None => records.push(SourceRecord::offset_only(partition, blob)),
        }
        records
    }

    fn count_record(&self, stream: &str, namespace: Option<&str>) {
        if let Some(s) = &self.settings {
            let key = stats::stream_key(stream, namespace);
            stats::update(&s.source.name, |f| {
                f.streams.entry(key).or_default().records += 1
            });
        }
    }

    fn all_streams_in_flight(&mut self) {
        let keys = self
            .streams
            .iter()
            .map(|s| stats::stream_key(&s.name, s.namespace.as_deref()));
        self.states_in_flight.extend(keys);
    }

    /// Counts a finished READ (`ok`: it ended well) that took `elapsed`.
    fn sync_done(&self, elapsed: Duration, ok: bool) {
        if let Some(s) = &self.settings {
            stats::update(&s.source.name, |f| {
                f.running = false;
                f.syncs += 1;
                f.last_duration_ms = elapsed.as_millis() as u64;
                f.last_ok = Some(ok);
            });
        }
    }

    fn take_all(&mut self) -> Vec<SourceRecord> {
        let mut keys: Vec<_> = self.buffers.keys().cloned().collect();
        keys.sort();
        keys.into_iter()
            .flat_map(|k| self.buffers.remove(&k).unwrap_or_default())
            .collect()
    }

    /// Reads the READ's messages for up to [`POLL_SLICE`]; returns records once a STATE covers some.
    fn pump(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        let until = Instant::now() + POLL_SLICE;
        loop {
            let read = self.read.as_mut().ok_or_else(|| fatal("No READ runs"))?;
            let limit = self.settings.as_ref().map(|s| s.read_timeout);
            if let Some(limit) = limit.filter(|l| !l.is_zero()) {
                if read.started.elapsed() > limit {
                    return self.time_out(context, limit);
                }
            }
            let left = until.saturating_duration_since(Instant::now());
            let message = match read.lines.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    // The rest of the output comes once the leftovers are killed.
                    protocol::leftovers_hold_stdout(&mut read.child);
                    return Ok(Vec::new());
                }
                Err(RecvTimeoutError::Disconnected) => return self.finish_read(context),
            };
            if !matches!(message, Message::Garbage(_)) {
                read.messages += 1;
            }
            match message {
                Message::Record {
                    stream,
                    namespace,
                    data,
                    emitted_at,
                } => {
                    self.count_record(&stream, namespace.as_deref());
                    if let Some(r) =
                        self.record(&stream, namespace.as_deref(), &data, emitted_at)?
                    {
                        self.buffers.entry((stream, namespace)).or_default().push(r);
                    }
                }
                Message::State(state) => {
                    let records = self.covered(state);
                    if !records.is_empty() {
                        return Ok(records);
                    }
                }
                Message::Error {
                    message,
                    details,
                    failure_type,
                } => read.error = Some(protocol::trace_error(&message, &details, &failure_type)),
                Message::Garbage(line) if read.garbage.is_none() && !line.is_empty() => {
                    read.garbage = Some(line)
                }
                _ => {}
            }
        }
    }

    /// Stops a READ that ran past `airbyte.read.timeout.ms`: what no STATE covered is dropped, the task
    /// shows the problem, and the next READ starts after the interval.
    fn time_out(
        &mut self,
        context: &dyn SourceTaskContext,
        limit: Duration,
    ) -> Result<Vec<SourceRecord>, TaskError> {
        if let Some(mut read) = self.read.take() {
            let _ = read.child.kill();
            self.sync_done(read.started.elapsed(), false);
        }
        self.buffers.clear();
        let problem = format!(
            "The Airbyte READ did not finish within {} ms (airbyte.read.timeout.ms) and was stopped; what its last STATE covered is committed, the rest is read again by the next READ",
            limit.as_millis()
        );
        tracing::warn!("{problem}");
        context.warn(Some(problem));
        self.schedule_next();
        Ok(Vec::new())
    }

    fn schedule_next(&mut self) {
        let interval = self
            .settings
            .as_ref()
            .map_or(Duration::from_secs(300), |s| s.interval);
        self.next_sync = Some(Instant::now() + interval);
    }

    /// The READ's stdout closed: takes its exit and decides. A clean exit commits what is left (records
    /// of streams without state, without a source offset); a failure drops it and fails the task (or
    /// retries, when the source says the failure is transient).
    fn finish_read(
        &mut self,
        context: &dyn SourceTaskContext,
    ) -> Result<Vec<SourceRecord>, TaskError> {
        let Some(mut read) = self.read.take() else {
            return Ok(Vec::new());
        };
        let status = read.child.stop(EXIT_GRACE).map_err(fatal)?;
        let elapsed = read.started.elapsed();
        self.schedule_next();
        let command = self.settings()?.source.command.clone();
        let tail = read.child.final_stderr_tail(Duration::from_secs(2)).text();
        let failure = if let Some(error) = read.error.take() {
            Some(error)
        } else if read.messages == 0 {
            Some(fatal(match &read.garbage {
                Some(line) => format!(
                    "{command} is not an Airbyte source: its READ printed no Airbyte message ({}); its output began with: {}",
                    describe_exit(status),
                    protocol::shorten(line)
                ),
                None => format!(
                    "{command} READ printed no Airbyte message ({}){}",
                    describe_exit(status),
                    stderr_suffix(&tail)
                ),
            }))
        } else if !status.success() {
            Some(fatal(format!(
                "{command} READ failed ({}){}",
                describe_exit(status),
                stderr_suffix(&tail)
            )))
        } else {
            None
        };
        self.sync_done(elapsed, failure.is_none());
        if let Some(e) = failure {
            self.buffers.clear();
            if matches!(e, TaskError::Retriable(_)) {
                self.next_sync = Some(Instant::now());
            }
            return Err(e);
        }
        tracing::info!(
            command,
            elapsed_ms = elapsed.as_millis() as u64,
            "Airbyte READ finished."
        );
        context.warn(None);
        Ok(self.take_all())
    }
}

fn stderr_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; stderr:\n{}", protocol::shorten(tail))
    }
}

impl SourceTask for AirbyteTask {
    fn start(&mut self, config: &Props, _context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let settings = Settings::from_props(config).map_err(fatal)?;
        let scratch = Scratch::new().map_err(fatal)?;
        let config_path = scratch
            .write("config.json", &settings.config)
            .map_err(fatal)?;
        let spec = settings
            .source
            .ask(&[], "spec", "SPEC")
            .map_err(TaskError::Fatal)?;
        let errors = super::spec::check(&spec["connectionSpecification"], &settings.config);
        if !errors.is_empty() {
            return Err(fatal(format!(
                "airbyte.config does not match the source's SPEC: {}",
                errors.join("; ")
            )));
        }
        let catalog = settings
            .source
            .ask(&[&config_path], "discover", "CATALOG")
            .map_err(TaskError::Fatal)?;
        self.streams = settings.selection.streams(&catalog).map_err(fatal)?;
        self.settings = Some(settings);
        self.scratch = Some(scratch);
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        if self.read.is_none() {
            if let Some(at) = self.next_sync {
                let wait = at.saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    context.idle(wait);
                    return Ok(Vec::new());
                }
            }
            self.start_read(context)?;
        }
        self.pump(context)
    }

    fn commit(&mut self) -> Result<(), TaskError> {
        if let Some(s) = &self.settings {
            let now = crate::model::now_ms();
            let committed = std::mem::take(&mut self.states_in_flight);
            stats::update(&s.source.name, |f| {
                for key in committed {
                    f.streams.entry(key).or_default().last_state_ms = now;
                }
            });
        }
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut read) = self.read.take() {
            let _ = read.child.stop(Duration::from_secs(2));
        }
        if let Some(s) = &self.settings {
            stats::forget(&s.source.name);
        }
        self.buffers.clear();
        self.scratch = None;
    }
}
