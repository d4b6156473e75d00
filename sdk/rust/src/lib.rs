//! Write liteconnect plugins in Rust: source and sink connectors and transformations that run as
//! separate programs on the worker's `plugin.path`, speaking the plugin protocol (version 1.1,
//! `docs/plugins/protocol.md`) over stdin and stdout. This crate hides the framing.
//!
//! A source (see `examples/counter_source.rs` for a whole one):
//!
//! ```no_run
//! use liteconnect_plugin::{Config, Data, Plugin, Record, Result, SourceContext, SourceTask};
//! use serde_json::json;
//!
//! struct Counter { n: i64, topic: String }
//!
//! impl SourceTask for Counter {
//!     fn start(&mut self, config: &Config, ctx: &mut SourceContext<'_>) -> Result<()> {
//!         self.topic = config.get("topic").cloned().unwrap_or_default();
//!         self.n = ctx.offset(&json!({"counter": 0}))?.and_then(|o| o["n"].as_i64()).unwrap_or(0);
//!         Ok(())
//!     }
//!     fn poll(&mut self, _ctx: &mut SourceContext<'_>) -> Result<Vec<Record>> {
//!         self.n += 1;
//!         Ok(vec![Record::source(&self.topic, Data::schemaless(json!(self.n)),
//!                                json!({"counter": 0}), json!({"n": self.n}))])
//!     }
//! }
//!
//! Plugin::new().source_task(|| Box::new(Counter { n: 0, topic: String::new() })).run();
//! ```

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use base64::Engine;
use serde_json::{json, Value};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u64 = 1;
/// The minor version of the protocol this crate speaks (1: long-lived connectors that may ask for a
/// reconfiguration; the sink task's assigned partitions).
pub const PROTOCOL_MINOR: u64 = 1;

/// A connector or task config: Kafka's flat string map.
pub type Config = BTreeMap<String, String>;

/// What a plugin's methods return.
pub type Result<T> = std::result::Result<T, Error>;

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A passing problem: the worker tries again and shows the message as the task's trace.
    Retriable(String),
    /// The task fails with this message.
    Fatal(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Retriable(m) | Error::Fatal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// Connect data as the protocol carries it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Data {
    /// A null value without a schema.
    #[default]
    Null,
    /// A value without a schema (objects are maps, integers int64, other numbers float64).
    Schemaless(Value),
    /// A value with a Connect schema in JsonConverter's JSON form (`{"type": "int64"}`, ...).
    WithSchema {
        /// The schema.
        schema: Value,
        /// The payload.
        payload: Value,
    },
    /// Raw bytes.
    Bytes(Vec<u8>),
}

impl Data {
    /// A value without a schema.
    pub fn schemaless(value: Value) -> Data {
        Data::Schemaless(value)
    }

    /// The payload (bytes as a base64 string), or `Null`.
    pub fn payload(&self) -> Value {
        match self {
            Data::Null => Value::Null,
            Data::Schemaless(v) | Data::WithSchema { payload: v, .. } => v.clone(),
            Data::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        }
    }

    /// Writes its protocol form: `null`, JsonConverter's envelope or `{"bytes": "<base64>"}`.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let (schema, payload) = match self {
            Data::Null => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
            Data::Bytes(b) => {
                let text = base64::engine::general_purpose::STANDARD.encode(b);
                return serde_json::to_writer(out, &json!({"bytes": text}));
            }
            Data::Schemaless(v) => (None, v),
            Data::WithSchema { schema, payload } => (Some(schema), payload),
        };
        out.extend_from_slice(b"{\"schema\":");
        serde_json::to_writer(&mut *out, &schema)?;
        out.extend_from_slice(b",\"payload\":");
        serde_json::to_writer(&mut *out, payload)?;
        out.push(b'}');
        Ok(())
    }

    fn from_json(j: Option<&Value>) -> Data {
        let Some(Value::Object(m)) = j else {
            return Data::Null;
        };
        if let Some(b) = m.get("bytes").and_then(Value::as_str) {
            return base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_or(Data::Null, Data::Bytes);
        }
        let payload = m.get("payload").cloned().unwrap_or(Value::Null);
        match m.get("schema") {
            None | Some(Value::Null) => Data::Schemaless(payload),
            Some(schema) => Data::WithSchema {
                schema: schema.clone(),
                payload,
            },
        }
    }
}

/// A record: from a source, to a sink, or through a transformation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// The topic.
    pub topic: String,
    /// The partition; `None` lets the worker choose.
    pub partition: Option<i32>,
    /// The key.
    pub key: Data,
    /// The value.
    pub value: Data,
    /// Headers in order.
    pub headers: Vec<(String, Data)>,
    /// Epoch milliseconds.
    pub timestamp: Option<i64>,
    /// Where a source record came from (a JSON object).
    pub source_partition: Option<Value>,
    /// How far the source has got once the record is stored (a JSON object).
    pub source_offset: Option<Value>,
    /// A sink record's offset in its partition.
    pub offset: Option<i64>,
}

impl Record {
    /// A source record with its source partition and offset.
    pub fn source(
        topic: &str,
        value: Data,
        source_partition: Value,
        source_offset: Value,
    ) -> Record {
        Record {
            topic: topic.to_owned(),
            value,
            source_partition: Some(source_partition),
            source_offset: Some(source_offset),
            ..Record::default()
        }
    }

    /// Writes its protocol form (headers only when it has some, the source parts only when given),
    /// straight from the record: no JSON tree is built for it.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"topic\":");
        serde_json::to_writer(&mut *out, &self.topic)?;
        out.extend_from_slice(b",\"partition\":");
        serde_json::to_writer(&mut *out, &self.partition)?;
        out.extend_from_slice(b",\"key\":");
        self.key.write_json(out)?;
        out.extend_from_slice(b",\"value\":");
        self.value.write_json(out)?;
        out.extend_from_slice(b",\"timestamp\":");
        serde_json::to_writer(&mut *out, &self.timestamp)?;
        if !self.headers.is_empty() {
            out.extend_from_slice(b",\"headers\":[");
            for (i, (k, v)) in self.headers.iter().enumerate() {
                out.extend_from_slice(if i == 0 { b"{\"key\":" } else { b",{\"key\":" });
                serde_json::to_writer(&mut *out, k)?;
                out.extend_from_slice(b",\"value\":");
                v.write_json(out)?;
                out.push(b'}');
            }
            out.push(b']');
        }
        for (k, v) in [
            (&b",\"source_partition\":"[..], &self.source_partition),
            (b",\"source_offset\":", &self.source_offset),
        ] {
            if let Some(v) = v {
                out.extend_from_slice(k);
                serde_json::to_writer(&mut *out, v)?;
            }
        }
        out.push(b'}');
        Ok(())
    }

    fn from_json(j: &Value) -> Record {
        let headers = j["headers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| {
                (
                    h["key"].as_str().unwrap_or_default().to_owned(),
                    Data::from_json(h.get("value")),
                )
            })
            .collect();
        Record {
            topic: j["topic"].as_str().unwrap_or_default().to_owned(),
            partition: j["partition"].as_i64().and_then(|p| i32::try_from(p).ok()),
            key: Data::from_json(j.get("key")),
            value: Data::from_json(j.get("value")),
            headers,
            timestamp: j["timestamp"].as_i64(),
            source_partition: None,
            source_offset: None,
            offset: j["offset"].as_i64(),
        }
    }
}

/// One key of a config definition, with Kafka's types (`STRING`, `INT`, `LONG`, `DOUBLE`, `BOOLEAN`,
/// `LIST`, `PASSWORD`, `CLASS`, `SHORT`) and importance (`HIGH`, `MEDIUM`, `LOW`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigKey {
    name: String,
    key_type: String,
    default: Option<Option<String>>,
    importance: String,
    documentation: String,
}

impl ConfigKey {
    /// A required key of `key_type`.
    pub fn new(name: &str, key_type: &str) -> ConfigKey {
        ConfigKey {
            name: name.to_owned(),
            key_type: key_type.to_owned(),
            default: None,
            importance: "MEDIUM".into(),
            documentation: String::new(),
        }
    }

    /// With a default (`None`: optional without a value).
    pub fn default_value(mut self, default: Option<&str>) -> ConfigKey {
        self.default = Some(default.map(str::to_owned));
        self
    }

    /// With an importance.
    pub fn importance(mut self, importance: &str) -> ConfigKey {
        self.importance = importance.to_owned();
        self
    }

    /// With documentation.
    pub fn doc(mut self, documentation: &str) -> ConfigKey {
        self.documentation = documentation.to_owned();
        self
    }

    fn to_json(&self) -> Value {
        let mut out = json!({"name": self.name, "type": self.key_type,
            "importance": self.importance, "documentation": self.documentation});
        if let Some(default) = &self.default {
            out["default"] = json!(default);
        }
        out
    }
}

/// What a running connector may ask the worker; cheap to clone, usable from any thread.
#[derive(Clone)]
pub struct ConnectorContext {
    output: Output,
}

impl ConnectorContext {
    /// Asks the worker to call [`Connector::task_configs`] again (Kafka's
    /// `requestTaskReconfiguration`): when the answer differs from the running tasks' configs, the
    /// tasks are replaced.
    ///
    /// # Errors
    /// When the worker can no longer be written to.
    pub fn request_task_reconfiguration(&self) -> Result<()> {
        write_to(
            &self.output,
            &json!({"type": "request_task_reconfiguration"}),
        )
    }
}

/// The connector side: its config definition, validation and task configs. A running connector's
/// process is started with [`Connector::start`] and then answers its task configs until it is stopped;
/// the other questions are asked of processes of their own.
pub trait Connector {
    /// Whether the connector keeps running while the connector runs, to watch its source and ask for a
    /// reconfiguration when it changes: [`Connector::start`] is called then, and
    /// [`Connector::task_configs`] is asked of the running connector. Otherwise (the default) each
    /// question runs in a process of its own.
    fn monitors(&self) -> bool {
        false
    }
    /// The connector starts running with `config`; `ctx` may be kept (e.g. by a thread that watches
    /// the source) to ask for a reconfiguration.
    ///
    /// # Errors
    /// The connector fails with it.
    fn start(&mut self, _config: &Config, _ctx: ConnectorContext) -> Result<()> {
        Ok(())
    }
    /// The connector stops running.
    fn stop(&mut self) {}
    /// The connector's own keys.
    fn config_def(&self) -> Vec<ConfigKey> {
        Vec::new()
    }
    /// Checks beyond the definition: key → messages (empty when valid).
    fn validate(&self, _config: &Config) -> BTreeMap<String, Vec<String>> {
        BTreeMap::new()
    }
    /// At most `max_tasks` task configs; the default is one task with the connector's config.
    fn task_configs(&self, config: &Config, _max_tasks: usize) -> Result<Vec<Config>> {
        Ok(vec![config.clone()])
    }
}

/// A connector with nothing of its own to say.
struct DefaultConnector;
impl Connector for DefaultConnector {}

/// What a source task may ask the worker.
pub struct SourceContext<'a> {
    channel: &'a mut Channel,
    idle_ms: Option<u64>,
}

impl SourceContext<'_> {
    /// The stored offsets of `partitions`, in order.
    ///
    /// # Errors
    /// Fatal when the worker's answer is not the offsets.
    pub fn offsets(&mut self, partitions: &[Value]) -> Result<Vec<Option<Value>>> {
        self.channel
            .write(&json!({"type": "offset_request", "partitions": partitions}))?;
        let answer = self
            .channel
            .read()?
            .ok_or_else(|| Error::Fatal("the worker left".into()))?;
        if answer["type"] != "offsets" {
            return Err(Error::Fatal(format!(
                "expected offsets, got {}",
                answer["type"]
            )));
        }
        Ok(answer["offsets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| Some(o["offset"].clone()).filter(|o| !o.is_null()))
            .collect())
    }

    /// The stored offset of one source partition.
    ///
    /// # Errors
    /// As [`SourceContext::offsets`].
    pub fn offset(&mut self, partition: &Value) -> Result<Option<Value>> {
        Ok(self
            .offsets(std::slice::from_ref(partition))?
            .pop()
            .flatten())
    }

    /// With an empty poll: be polled again after `ms` milliseconds.
    pub fn idle(&mut self, ms: u64) {
        self.idle_ms = Some(ms);
    }
}

/// A source task.
pub trait SourceTask {
    /// Starts with the task config.
    fn start(&mut self, config: &Config, ctx: &mut SourceContext<'_>) -> Result<()>;
    /// The next records; none (with `ctx.idle`) when nothing is ready.
    fn poll(&mut self, ctx: &mut SourceContext<'_>) -> Result<Vec<Record>>;
    /// Called once the last poll's records and offsets are committed: `(source partition, source
    /// offset)`, the last of each partition. Acknowledge upstream here.
    fn commit(&mut self, _offsets: &[(Value, Value)]) {}
    /// Releases resources.
    fn stop(&mut self) {}
}

/// A partition's next offset: `(topic, partition, next offset)`.
pub type TopicOffset = (String, i32, i64);

/// A sink task.
pub trait SinkTask {
    /// Starts with the task config.
    fn start(&mut self, config: &Config) -> Result<()>;
    /// The partitions assigned to the task, `(topic, partition)`: called right after `start` with the
    /// first assignment (maybe empty), then with each partition added later (a topic created or
    /// grown). Partitions are never taken away from a running task.
    ///
    /// # Errors
    /// The task fails with it.
    fn open(&mut self, _partitions: &[(String, i32)]) -> Result<()> {
        Ok(())
    }
    /// Takes records; returns the offsets already durable (may be empty).
    fn put(&mut self, records: Vec<Record>) -> Result<Vec<TopicOffset>>;
    /// Makes everything put durable; returns the offsets that are.
    fn flush(&mut self, offsets: &[TopicOffset]) -> Result<Vec<TopicOffset>> {
        Ok(offsets.to_vec())
    }
    /// Releases resources.
    fn stop(&mut self) {}
}

/// A single message transformation.
pub trait Transformation {
    /// Its own keys.
    fn config_def(&self) -> Vec<ConfigKey> {
        Vec::new()
    }
    /// Configures it.
    fn configure(&mut self, _config: &Config) -> Result<()> {
        Ok(())
    }
    /// The record, changed or not, or `None` to drop it.
    fn apply(&mut self, record: Record) -> Result<Option<Record>>;
}

/// A predicate: whether a record matches.
pub trait Predicate {
    /// Its own keys.
    fn config_def(&self) -> Vec<ConfigKey> {
        Vec::new()
    }
    /// Configures it.
    fn configure(&mut self, _config: &Config) -> Result<()> {
        Ok(())
    }
    /// Whether `record` matches.
    fn test(&mut self, record: &Record) -> Result<bool>;
}

/// The program's output, shared by the serving loop and the connector's context.
type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// Writes one message as a line to `output`.
fn write_to(output: &Output, message: &Value) -> Result<()> {
    let line = serde_json::to_vec(message).map_err(|e| Error::Fatal(e.to_string()))?;
    write_line(output, line)
}

/// A message in JSON: `head` (its start, up to the last member's name), what `last` writes as that
/// member's value, and the closing brace. Records are written this way, straight from the records.
fn message_ending_with(
    head: &str,
    last: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> Result<Vec<u8>> {
    let mut out = head.as_bytes().to_vec();
    last(&mut out).map_err(|e| Error::Fatal(e.to_string()))?;
    out.push(b'}');
    Ok(out)
}

/// Writes `records` as a JSON array.
fn write_records(out: &mut Vec<u8>, records: &[Record]) -> serde_json::Result<()> {
    out.reserve(96 * records.len());
    out.push(b'[');
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        r.write_json(out)?;
    }
    out.push(b']');
    Ok(())
}

/// Writes one message, already in JSON, as a line to `output`: one write and one flush.
fn write_line(output: &Output, mut line: Vec<u8>) -> Result<()> {
    line.push(b'\n');
    let mut out = output
        .lock()
        .map_err(|_| Error::Fatal("the output is poisoned".into()))?;
    out.write_all(&line)
        .and_then(|()| out.flush())
        .map_err(|e| Error::Fatal(e.to_string()))
}

struct Channel {
    input: Box<dyn BufRead>,
    output: Output,
}

impl Channel {
    fn read(&mut self) -> Result<Option<Value>> {
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => serde_json::from_str(&line)
                .map(Some)
                .map_err(|e| Error::Fatal(format!("not a protocol message: {e}"))),
            Err(e) => Err(Error::Fatal(e.to_string())),
        }
    }

    fn write(&mut self, message: &Value) -> Result<()> {
        write_to(&self.output, message)
    }

    fn write_line(&mut self, line: Vec<u8>) -> Result<()> {
        write_line(&self.output, line)
    }
}

fn error_message(e: &Error) -> Value {
    json!({"type": "error", "retriable": matches!(e, Error::Retriable(_)), "message": e.to_string()})
}

fn config_of(v: &Value) -> Config {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
            )
        })
        .collect()
}

fn offsets_of(v: &Value) -> Vec<TopicOffset> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                o["topic"].as_str()?.to_owned(),
                i32::try_from(o["partition"].as_i64()?).ok()?,
                o["offset"].as_i64()?,
            ))
        })
        .collect()
}

fn partitions_of(v: &Value) -> Vec<(String, i32)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let partition = p["partition"].as_i64().unwrap_or(0);
            (
                p["topic"].as_str().unwrap_or_default().to_owned(),
                i32::try_from(partition).unwrap_or(0),
            )
        })
        .collect()
}

fn offsets_json(offsets: &[TopicOffset]) -> Vec<Value> {
    offsets
        .iter()
        .map(|(t, p, o)| json!({"topic": t, "partition": p, "offset": o}))
        .collect()
}

type Make<T> = Box<dyn Fn() -> Box<T>>;

/// A plugin program: its classes, served by [`Plugin::run`] in the role the worker asks for.
#[derive(Default)]
pub struct Plugin {
    connector: Option<Box<dyn Connector>>,
    source: Option<Make<dyn SourceTask>>,
    sink: Option<Make<dyn SinkTask>>,
    transformation: Option<Make<dyn Transformation>>,
    predicate: Option<Make<dyn Predicate>>,
}

impl Plugin {
    /// A plugin with nothing yet.
    pub fn new() -> Plugin {
        Plugin::default()
    }

    /// The connector side (the default has no keys and runs one task).
    pub fn connector(mut self, connector: impl Connector + 'static) -> Plugin {
        self.connector = Some(Box::new(connector));
        self
    }

    /// The source task, made by `make` for each task.
    pub fn source_task(mut self, make: impl Fn() -> Box<dyn SourceTask> + 'static) -> Plugin {
        self.source = Some(Box::new(make));
        self
    }

    /// The sink task, made by `make` for each task.
    pub fn sink_task(mut self, make: impl Fn() -> Box<dyn SinkTask> + 'static) -> Plugin {
        self.sink = Some(Box::new(make));
        self
    }

    /// The transformation, made by `make` for each configured use.
    pub fn transformation(
        mut self,
        make: impl Fn() -> Box<dyn Transformation> + 'static,
    ) -> Plugin {
        self.transformation = Some(Box::new(make));
        self
    }

    /// The predicate, made by `make` for each configured use.
    pub fn predicate(mut self, make: impl Fn() -> Box<dyn Predicate> + 'static) -> Plugin {
        self.predicate = Some(Box::new(make));
        self
    }

    /// Serves this process on stdin and stdout until the worker stops it.
    pub fn run(self) {
        let stdin = std::io::stdin().lock();
        let stdout = std::io::BufWriter::new(std::io::stdout());
        let _ = self.serve(Box::new(stdin), Box::new(stdout));
    }

    /// Serves one process over `input` and `output`.
    ///
    /// # Errors
    /// When the channel itself fails.
    pub fn serve(mut self, input: Box<dyn BufRead>, output: Box<dyn Write + Send>) -> Result<()> {
        let mut ch = Channel {
            input,
            output: Arc::new(Mutex::new(output)),
        };
        let Some(hello) = ch.read()? else {
            return Ok(());
        };
        let offered = hello["protocol"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(PROTOCOL_VERSION)));
        if hello["type"] != "hello" || !offered {
            return ch.write(&json!({"type": "error", "retriable": false,
                "message": format!("this plugin speaks protocol {PROTOCOL_VERSION} only")}));
        }
        let mut answer =
            json!({"type": "hello", "protocol": PROTOCOL_VERSION, "minor": PROTOCOL_MINOR});
        if hello["role"] == "connector" && self.connector.as_ref().is_some_and(|c| c.monitors()) {
            answer["monitors"] = json!(true);
        }
        ch.write(&answer)?;
        match hello["role"].as_str() {
            Some("connector") => {
                let mut connector = self
                    .connector
                    .take()
                    .unwrap_or_else(|| Box::new(DefaultConnector));
                serve_connector(&mut ch, connector.as_mut())
            }
            Some("source_task") if self.source.is_some() => {
                let task = self.source.as_ref().map(|m| m());
                task.map_or(Ok(()), |mut t| serve_source(&mut ch, t.as_mut()))
            }
            Some("sink_task") if self.sink.is_some() => {
                let task = self.sink.as_ref().map(|m| m());
                task.map_or(Ok(()), |mut t| serve_sink(&mut ch, t.as_mut()))
            }
            Some("transformation") if self.transformation.is_some() => {
                let t = self.transformation.as_ref().map(|m| m());
                t.map_or(Ok(()), |mut t| serve_transformation(&mut ch, t.as_mut()))
            }
            Some("predicate") if self.predicate.is_some() => {
                let p = self.predicate.as_ref().map(|m| m());
                p.map_or(Ok(()), |mut p| serve_predicate(&mut ch, p.as_mut()))
            }
            role => ch.write(&json!({"type": "error", "retriable": false,
                "message": format!("this plugin has no {}", role.unwrap_or("such role"))})),
        }
    }
}

/// Reads requests until `stop` or the end of input, answering each with `answer` (`None`: no answer).
fn serve_loop(
    ch: &mut Channel,
    mut answer: impl FnMut(&mut Channel, &Value) -> Result<Option<Value>>,
) -> Result<()> {
    while let Some(msg) = ch.read()? {
        if msg["type"] == "stop" {
            break;
        }
        let reply = match answer(ch, &msg) {
            Ok(reply) => reply,
            Err(e) => Some(error_message(&e)),
        };
        if let Some(reply) = reply {
            ch.write(&reply)?;
        }
    }
    Ok(())
}

fn unknown(msg: &Value) -> Result<Option<Value>> {
    Err(Error::Fatal(format!("unknown request {}", msg["type"])))
}

fn serve_connector(ch: &mut Channel, c: &mut dyn Connector) -> Result<()> {
    let mut started = false;
    let result = serve_loop(ch, |ch, msg| match msg["type"].as_str() {
        Some("start") => {
            let ctx = ConnectorContext {
                output: ch.output.clone(),
            };
            c.start(&config_of(&msg["config"]), ctx)?;
            started = true;
            Ok(Some(json!({"type": "started"})))
        }
        Some("config_def") => {
            let keys: Vec<Value> = c.config_def().iter().map(ConfigKey::to_json).collect();
            Ok(Some(json!({"type": "config_def", "keys": keys})))
        }
        Some("validate") => Ok(Some(
            json!({"type": "validate", "errors": c.validate(&config_of(&msg["config"]))}),
        )),
        Some("task_configs") => {
            let max = usize::try_from(msg["max_tasks"].as_u64().unwrap_or(1)).unwrap_or(1);
            let tasks = c.task_configs(&config_of(&msg["config"]), max)?;
            Ok(Some(json!({"type": "task_configs", "tasks": tasks})))
        }
        _ => unknown(msg),
    });
    if started {
        c.stop();
    }
    result
}

fn serve_source(ch: &mut Channel, task: &mut dyn SourceTask) -> Result<()> {
    let result = serve_loop(ch, |ch, msg| {
        let mut ctx = SourceContext {
            channel: ch,
            idle_ms: None,
        };
        match msg["type"].as_str() {
            Some("start") => {
                task.start(&config_of(&msg["config"]), &mut ctx)?;
                Ok(Some(json!({"type": "started"})))
            }
            Some("poll") => {
                let records = task.poll(&mut ctx)?;
                let head = match (records.is_empty(), ctx.idle_ms) {
                    (true, Some(ms)) => format!(r#"{{"type":"records","idle_ms":{ms},"records":"#),
                    _ => r#"{"type":"records","records":"#.to_string(),
                };
                let answer = message_ending_with(&head, |out| write_records(out, &records))?;
                ctx.channel.write_line(answer)?;
                Ok(None)
            }
            Some("commit") => {
                let offsets: Vec<(Value, Value)> = msg["offsets"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|o| (o["partition"].clone(), o["offset"].clone()))
                    .collect();
                task.commit(&offsets);
                Ok(None)
            }
            _ => unknown(msg),
        }
    });
    task.stop();
    result
}

fn serve_sink(ch: &mut Channel, task: &mut dyn SinkTask) -> Result<()> {
    let result = serve_loop(ch, |_, msg| match msg["type"].as_str() {
        Some("start") => {
            task.start(&config_of(&msg["config"]))?;
            if msg.get("partitions").is_some() {
                task.open(&partitions_of(&msg["partitions"]))?;
            }
            Ok(Some(json!({"type": "started"})))
        }
        Some("open") => {
            task.open(&partitions_of(&msg["partitions"]))?;
            Ok(Some(json!({"type": "opened"})))
        }
        Some("put") => {
            let records = msg["records"]
                .as_array()
                .into_iter()
                .flatten()
                .map(Record::from_json)
                .collect();
            let durable = task.put(records)?;
            Ok(Some(
                json!({"type": "put", "offsets": offsets_json(&durable)}),
            ))
        }
        Some("flush") => {
            let done = task.flush(&offsets_of(&msg["offsets"]))?;
            Ok(Some(
                json!({"type": "flushed", "offsets": offsets_json(&done)}),
            ))
        }
        _ => unknown(msg),
    });
    task.stop();
    result
}

fn serve_transformation(ch: &mut Channel, t: &mut dyn Transformation) -> Result<()> {
    serve_loop(ch, |ch, msg| match msg["type"].as_str() {
        Some("config_def") => {
            let keys: Vec<Value> = t.config_def().iter().map(ConfigKey::to_json).collect();
            Ok(Some(json!({"type": "config_def", "keys": keys})))
        }
        Some("start") => {
            t.configure(&config_of(&msg["config"]))?;
            Ok(Some(json!({"type": "started"})))
        }
        Some("transform") => {
            let out = t.apply(Record::from_json(&msg["record"]))?;
            let answer =
                message_ending_with(r#"{"type":"transformed","record":"#, |o| match &out {
                    Some(r) => r.write_json(o),
                    None => serde_json::to_writer(o, &Value::Null),
                })?;
            ch.write_line(answer)?;
            Ok(None)
        }
        _ => unknown(msg),
    })
}

fn serve_predicate(ch: &mut Channel, p: &mut dyn Predicate) -> Result<()> {
    serve_loop(ch, |_, msg| match msg["type"].as_str() {
        Some("config_def") => {
            let keys: Vec<Value> = p.config_def().iter().map(ConfigKey::to_json).collect();
            Ok(Some(json!({"type": "config_def", "keys": keys})))
        }
        Some("start") => {
            p.configure(&config_of(&msg["config"]))?;
            Ok(Some(json!({"type": "started"})))
        }
        Some("test") => {
            let matches = p.test(&Record::from_json(&msg["record"]))?;
            Ok(Some(json!({"type": "tested", "matches": matches})))
        }
        _ => unknown(msg),
    })
}

/// Writes a line to the worker's log (through stderr).
pub fn log(line: &str) {
    eprintln!("{line}");
}

#[cfg(test)]
mod tests;
