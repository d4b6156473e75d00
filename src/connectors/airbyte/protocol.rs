//! The Airbyte protocol as a source speaks it: `spec`, `check`, `discover` and `read` with JSON files
//! as arguments, one JSON message per line of stdout (`SPEC`, `CONNECTION_STATUS`, `CATALOG`, `RECORD`,
//! `STATE`, `LOG`, `TRACE`, `CONTROL`); lines that are not JSON are logged and skipped, as Airbyte's
//! platform skips them.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value as Json};

use crate::connectors::child::{describe_exit, Child, ChildSpec};
use crate::connectors::TaskError;

/// One message of a source's output.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// `RECORD`: a stream's record.
    Record {
        /// The stream.
        stream: String,
        /// Its namespace.
        namespace: Option<String>,
        /// The record's data.
        data: Json,
        /// When the source read it (epoch ms).
        emitted_at: Option<i64>,
    },
    /// `STATE`: a checkpoint.
    State(State),
    /// `LOG`: a line for the log, at its level.
    Log {
        /// `FATAL`, `ERROR`, `WARN`, `INFO`, `DEBUG`, `TRACE`.
        level: String,
        /// The text (with a stack trace, if one came).
        message: String,
    },
    /// `TRACE` of type `ERROR`.
    Error {
        /// The message for the user.
        message: String,
        /// The stack trace and internal message, if any.
        details: String,
        /// `transient_error` (worth retrying), `config_error` or `system_error`.
        failure_type: String,
    },
    /// `SPEC`, `CONNECTION_STATUS`, `CATALOG`: the answer of the other commands, as it came.
    Answer {
        /// The message type.
        kind: String,
        /// The message's body (`spec`, `connectionStatus`, `catalog`).
        body: Json,
    },
    /// Anything else that is a valid message (other traces, `CONTROL`).
    Other,
    /// A line that is not an Airbyte message.
    Garbage(String),
}

/// A `STATE` message.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// One stream's state.
    Stream {
        /// The stream.
        stream: String,
        /// Its namespace.
        namespace: Option<String>,
        /// `stream_state`.
        blob: Map<String, Json>,
    },
    /// The state of every stream at once (`GLOBAL`: `shared_state` and `stream_states`).
    Global(Map<String, Json>),
    /// The old single-blob state (`LEGACY`, or a state without a type).
    Legacy(Map<String, Json>),
}

fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

fn object(v: Option<&Json>) -> Map<String, Json> {
    match v {
        Some(Json::Object(m)) => m.clone(),
        Some(Json::Null) | None => Map::new(),
        Some(other) => {
            let mut m = Map::new();
            m.insert("value".into(), other.clone());
            m
        }
    }
}

/// A stream's name and namespace from a `stream_descriptor`.
fn descriptor(v: &Json) -> (String, Option<String>) {
    let d = &v["stream_descriptor"];
    (
        text(&d["name"]),
        d["namespace"].as_str().map(str::to_string),
    )
}

/// Parses one line of a source's stdout.
pub fn parse_line(line: &str) -> Message {
    let trimmed = line.trim();
    let Ok(Json::Object(m)) = serde_json::from_str::<Json>(trimmed) else {
        return Message::Garbage(trimmed.to_string());
    };
    let kind = m.get("type").and_then(Json::as_str).unwrap_or_default();
    match kind {
        "RECORD" => {
            let r = &m["record"];
            Message::Record {
                stream: text(&r["stream"]),
                namespace: r["namespace"].as_str().map(str::to_string),
                data: r["data"].clone(),
                emitted_at: r["emitted_at"].as_f64().map(|f| f as i64),
            }
        }
        "STATE" => Message::State(parse_state(&m["state"])),
        "LOG" => {
            let l = &m["log"];
            let mut message = text(&l["message"]);
            if let Some(trace) = l["stack_trace"].as_str() {
                message = format!("{message}\n{trace}");
            }
            Message::Log {
                level: text(&l["level"]),
                message,
            }
        }
        "TRACE" if m["trace"]["type"] == "ERROR" => {
            let e = &m["trace"]["error"];
            let details = [text(&e["internal_message"]), text(&e["stack_trace"])]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("\n");
            Message::Error {
                message: text(&e["message"]),
                details,
                failure_type: text(&e["failure_type"]),
            }
        }
        "SPEC" | "CONNECTION_STATUS" | "CATALOG" => {
            let field = match kind {
                "SPEC" => "spec",
                "CONNECTION_STATUS" => "connectionStatus",
                _ => "catalog",
            };
            Message::Answer {
                kind: kind.to_string(),
                body: m.get(field).cloned().unwrap_or(Json::Null),
            }
        }
        "TRACE" | "CONTROL" | "ESTIMATE" | "DESTINATION_CATALOG" => Message::Other,
        _ => Message::Garbage(trimmed.to_string()),
    }
}

fn parse_state(s: &Json) -> State {
    match s["type"].as_str() {
        Some("STREAM") => {
            let (stream, namespace) = descriptor(&s["stream"]);
            State::Stream {
                stream,
                namespace,
                blob: object(s["stream"].get("stream_state")),
            }
        }
        Some("GLOBAL") => State::Global(object(s.get("global"))),
        _ => State::Legacy(object(s.get("data"))),
    }
}

/// A STREAM state message for READ's `--state` file.
pub fn stream_state(stream: &str, namespace: Option<&str>, blob: &Map<String, Json>) -> Json {
    let mut descriptor = json!({ "name": stream });
    if let Some(ns) = namespace {
        descriptor["namespace"] = json!(ns);
    }
    json!({"type": "STREAM", "stream": {"stream_descriptor": descriptor, "stream_state": blob}})
}

/// A GLOBAL state message for READ's `--state` file.
pub fn global_state(blob: &Map<String, Json>) -> Json {
    json!({"type": "GLOBAL", "global": blob})
}

/// A LEGACY state message for READ's `--state` file.
pub fn legacy_state(blob: &Map<String, Json>) -> Json {
    json!({"type": "LEGACY", "data": blob})
}

/// The start of the scratch directories' names, followed by the worker's pid.
const SCRATCH_PREFIX: &str = "liteconnect-airbyte-";

/// Removes the scratch directories of workers that are gone (killed before they could remove them).
fn remove_stale_scratch(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !crate::connectors::child::process_alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A private directory for the JSON files given to a source (its config holds secrets): created with
/// mode 0700, its files 0600, removed when dropped; those of workers killed meanwhile are removed when
/// the next one is created.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// A new directory under the system's temporary directory.
    pub fn new() -> std::io::Result<Scratch> {
        let base = std::env::temp_dir();
        remove_stale_scratch(&base);
        let dir = base.join(format!(
            "{SCRATCH_PREFIX}{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(&dir)
            .map_err(|e| {
                std::io::Error::new(e.kind(), format!("Cannot create {}: {e}", dir.display()))
            })?;
        Ok(Scratch { dir })
    }

    /// Writes `value` to `name` in the directory and returns its path.
    pub fn write(&self, name: &str, value: &Json) -> std::io::Result<PathBuf> {
        let path = self.dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)?;
        file.write_all(value.to_string().as_bytes())?;
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How a source is run: its command, the name its log lines carry, and the time each of `spec`,
/// `check` and `discover` may take.
#[derive(Clone, Debug)]
pub struct Source {
    /// The executable.
    pub command: String,
    /// The connector or task name, for the log.
    pub name: String,
    /// How long `spec`, `check` and `discover` may take.
    pub timeout: Duration,
}

impl Source {
    /// A child spec of the source with `args`.
    pub fn spec<I: IntoIterator<Item = S>, S: Into<std::ffi::OsString>>(
        &self,
        args: I,
    ) -> ChildSpec {
        ChildSpec::new(&self.command, args, &self.name)
    }

    /// Runs `spec`, `check` or `discover` (`args`) and returns the body of its `kind` answer. A TRACE
    /// error, an exit without the answer, or the timeout is an error with the source's words.
    pub fn ask(&self, args: &[&Path], verb: &str, kind: &str) -> Result<Json, String> {
        let mut argv: Vec<std::ffi::OsString> = vec![verb.into()];
        for (flag, path) in ["--config", "--catalog"].iter().zip(args) {
            argv.push(flag.into());
            argv.push(path.as_os_str().to_owned());
        }
        let mut child = Child::spawn(&self.spec(argv)).map_err(|e| e.to_string())?;
        let stdout = child.take_stdout().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        let name = self.name.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let message = parse_line(&line);
                log_message(&name, &message);
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        let deadline = Instant::now() + self.timeout;
        let (mut answer, mut error, mut garbage) = (None, None, None);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.min(LEFTOVER_GRACE)) {
                Ok(Message::Answer { kind: k, body }) if k == kind => answer = Some(body),
                Ok(Message::Error {
                    message, details, ..
                }) => error = Some(join(&message, &details)),
                Ok(Message::Garbage(line)) if garbage.is_none() => garbage = Some(line),
                Ok(_) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {
                    if leftovers_hold_stdout(&mut child) {
                        break;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    return Err(format!(
                        "{} {verb} did not finish within {} ms",
                        self.command,
                        self.timeout.as_millis()
                    ));
                }
            }
        }
        let status = child
            .stop(Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        if let Some(body) = answer {
            return Ok(body);
        }
        let tail = child.final_stderr_tail(Duration::from_secs(2)).text();
        Err(match (error, garbage) {
            (Some(e), _) => e,
            (None, Some(line)) => format!(
                "{} is not an Airbyte source: {verb} printed no {kind} message ({}); its output began with: {}",
                self.command,
                describe_exit(status),
                shorten(&line)
            ),
            // The host could not start the program: its own words.
            (None, None) if tail.starts_with("Cannot run ") => shorten(&tail),
            (None, None) => format!(
                "{} {verb} printed no {kind} message ({}){}",
                self.command,
                describe_exit(status),
                if tail.is_empty() { String::new() } else { format!("; stderr: {}", shorten(&tail)) }
            ),
        })
    }
}

/// How long the processes a source left behind may keep its stdout open after it exited.
pub const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// Whether the source exited more than [`LEFTOVER_GRACE`] ago while its stdout is still open (a helper
/// it started, such as Python's multiprocessing resource tracker, holds it): its group is then killed,
/// so that the output ends.
pub fn leftovers_hold_stdout(child: &mut Child) -> bool {
    match child.exited_for() {
        Ok(Some(t)) if t >= LEFTOVER_GRACE => {
            let _ = child.kill();
            true
        }
        Ok(_) => false,
        Err(_) => true,
    }
}

/// `message`, then `details` on the next lines when there are any.
pub fn join(message: &str, details: &str) -> String {
    if details.is_empty() {
        message.to_string()
    } else {
        format!("{message}\n{details}")
    }
}

/// At most 500 characters of `s`.
pub fn shorten(s: &str) -> String {
    match s.char_indices().nth(500) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Writes a LOG message to the worker's log at its level, prefixed with `name`; a line that is not a
/// message at debug level.
pub fn log_message(name: &str, message: &Message) {
    match message {
        Message::Log { level, message } => match level.as_str() {
            "FATAL" | "ERROR" => {
                tracing::error!(target: "liteconnect::airbyte", "[{name}] {message}")
            }
            "WARN" => tracing::warn!(target: "liteconnect::airbyte", "[{name}] {message}"),
            "DEBUG" => tracing::debug!(target: "liteconnect::airbyte", "[{name}] {message}"),
            "TRACE" => tracing::trace!(target: "liteconnect::airbyte", "[{name}] {message}"),
            _ => tracing::info!(target: "liteconnect::airbyte", "[{name}] {message}"),
        },
        Message::Garbage(line) if !line.is_empty() => {
            tracing::debug!(target: "liteconnect::airbyte", "[{name}] not a message: {}", shorten(line));
        }
        _ => {}
    }
}

/// The task error of a TRACE error: retriable when the source says the failure is transient.
pub fn trace_error(message: &str, details: &str, failure_type: &str) -> TaskError {
    let text = join(message, details);
    if failure_type == "transient_error" {
        TaskError::Retriable(text)
    } else {
        TaskError::Fatal(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_message_types() {
        let record = parse_line(
            r#"{"type":"RECORD","record":{"stream":"users","data":{"id":1},"emitted_at":1796543211181.5}}"#,
        );
        assert_eq!(
            record,
            Message::Record {
                stream: "users".into(),
                namespace: None,
                data: json!({"id": 1}),
                emitted_at: Some(1796543211181)
            }
        );
        let state = parse_line(
            r#"{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"users","namespace":"n"},"stream_state":{"c":5}}}}"#,
        );
        let Message::State(State::Stream {
            stream,
            namespace,
            blob,
        }) = state
        else {
            panic!("{state:?}")
        };
        assert_eq!(
            (stream.as_str(), namespace.as_deref()),
            ("users", Some("n"))
        );
        assert_eq!(Json::Object(blob), json!({"c": 5}));
        assert!(matches!(
            parse_line(
                r#"{"type":"STATE","state":{"type":"GLOBAL","global":{"shared_state":{}}}}"#
            ),
            Message::State(State::Global(_))
        ));
        assert!(matches!(
            parse_line(r#"{"type":"STATE","state":{"data":{"x":1}}}"#),
            Message::State(State::Legacy(_))
        ));
        let error = parse_line(
            r#"{"type":"TRACE","trace":{"type":"ERROR","error":{"message":"bad","stack_trace":"at x","failure_type":"config_error"}}}"#,
        );
        assert_eq!(
            error,
            Message::Error {
                message: "bad".into(),
                details: "at x".into(),
                failure_type: "config_error".into()
            }
        );
        assert_eq!(parse_line("hello"), Message::Garbage("hello".into()));
        assert_eq!(parse_line("[1]"), Message::Garbage("[1]".into()));
        assert_eq!(
            parse_line(r#"{"type":"TRACE","trace":{"type":"ESTIMATE"}}"#),
            Message::Other
        );
    }

    #[test]
    fn state_files_round_trip_through_the_parser() {
        let blob = object(Some(&json!({"cursor": "2024"})));
        let line = json!({"type": "STATE", "state": stream_state("s", Some("n"), &blob)});
        assert_eq!(
            parse_line(&line.to_string()),
            Message::State(State::Stream {
                stream: "s".into(),
                namespace: Some("n".into()),
                blob: blob.clone()
            })
        );
        let line = json!({"type": "STATE", "state": global_state(&blob)});
        assert_eq!(
            parse_line(&line.to_string()),
            Message::State(State::Global(blob))
        );
    }

    #[test]
    fn scratch_directories_of_dead_workers_are_removed() {
        let base = tempfile::tempdir().unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let stale = base.path().join(format!("{SCRATCH_PREFIX}{dead}-x"));
        let ours = base
            .path()
            .join(format!("{SCRATCH_PREFIX}{}-y", std::process::id()));
        let other = base.path().join("something-else");
        for d in [&stale, &ours, &other] {
            std::fs::create_dir(d).unwrap();
        }
        remove_stale_scratch(base.path());
        assert!(!stale.exists() && ours.exists() && other.exists());
    }

    #[test]
    fn transient_errors_are_retriable() {
        assert!(matches!(
            trace_error("m", "", "transient_error"),
            TaskError::Retriable(_)
        ));
        assert!(matches!(
            trace_error("m", "", "config_error"),
            TaskError::Fatal(_)
        ));
    }
}
