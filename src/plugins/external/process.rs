//! One plugin program as a child process speaking the plugin protocol ([`docs/plugins/protocol.md`]):
//! newline-delimited JSON on its stdin and stdout; the process itself (its group, its stderr in the log,
//! its end) is a [`Child`].
//!
//! Reading stdout runs on a thread of its own, so that a request waits for its answer with a deadline
//! (`plugin.request.timeout.ms`), and a line longer than [`MAX_MESSAGE_BYTES`] is refused without being
//! held in memory.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::ChildStdin;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::connectors::child::{describe_exit, Child, ChildSpec};
use crate::connectors::TaskError;

/// The protocol version this worker speaks.
pub const PROTOCOL_VERSION: u64 = 1;
/// The longest message a plugin may write, in bytes (one line of JSON).
pub const MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;

/// How to run a plugin program: the command of its manifest, resolved against its directory.
#[derive(Clone, Debug)]
pub struct ProgramSpec {
    /// The program (a path inside the plugin's directory, or a name found on `PATH`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The plugin's directory: the program's working directory.
    pub dir: PathBuf,
    /// How long one request may wait for its answer (`plugin.request.timeout.ms`).
    pub timeout: Duration,
    /// How long the program gets to exit once asked to stop (`task.shutdown.graceful.timeout.ms`).
    pub grace: Duration,
}

/// What the stdout thread hands over: a line, or why there will be none (`None`: the output closed).
type Line = Result<Vec<u8>, Option<String>>;

/// A running plugin program.
pub struct PluginProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    timeout: Duration,
    /// Set once the program broke the protocol or died: nothing more is sent.
    broken: bool,
}

fn read_lines(stdout: impl Read, tx: mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        let read = (&mut reader)
            .take(MAX_MESSAGE_BYTES + 1)
            .read_until(b'\n', &mut buf);
        let line = match read {
            Ok(0) => Err(None),
            Ok(_) if buf.last() != Some(&b'\n') && buf.len() as u64 > MAX_MESSAGE_BYTES => {
                Err(Some(format!(
                    "The plugin program wrote a message longer than {MAX_MESSAGE_BYTES} bytes"
                )))
            }
            Ok(_) => Ok(buf),
            Err(e) => Err(Some(format!(
                "Could not read the plugin program's output: {e}"
            ))),
        };
        let last = line.is_err();
        if tx.send(line).is_err() || last {
            return;
        }
    }
}

impl PluginProcess {
    /// Starts the program and agrees on the protocol version: the worker offers the versions it speaks
    /// with the class and role wanted, the program answers with the one it chose.
    ///
    /// # Errors
    /// Fatal, saying why: the program could not be started, or its answer is not a valid handshake.
    pub fn start(
        spec: &ProgramSpec,
        name: &str,
        class: &str,
        role: &str,
    ) -> Result<Self, TaskError> {
        let mut child_spec = ChildSpec::new(spec.program.clone(), &spec.args, name);
        child_spec.cwd = Some(spec.dir.clone());
        let mut child = Child::spawn(&child_spec).map_err(|e| {
            TaskError::Fatal(format!(
                "Could not start the plugin program {}: {e}",
                spec.program.display()
            ))
        })?;
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = child.take_stdout() {
            std::thread::spawn(move || read_lines(stdout, tx));
        }
        let mut process = PluginProcess {
            stdin: child.take_stdin(),
            child,
            lines,
            timeout: spec.timeout,
            broken: false,
        };
        let hello =
            json!({"type": "hello", "protocol": [PROTOCOL_VERSION], "class": class, "role": role});
        let answer = process.request(&hello, "hello")?;
        match answer.get("protocol").and_then(Json::as_u64) {
            Some(PROTOCOL_VERSION) => Ok(process),
            other => Err(process.fatal(format!(
                "The plugin program answered the handshake with protocol {}, but this worker speaks {PROTOCOL_VERSION}",
                other.map_or_else(|| "none".to_string(), |v| v.to_string())
            ))),
        }
    }

    /// Sends a message that has no answer.
    ///
    /// # Errors
    /// Fatal when the program can no longer be written to.
    pub fn send(&mut self, message: &Json) -> Result<(), TaskError> {
        if self.broken {
            return Err(self.fatal("The plugin program has stopped".into()));
        }
        let mut line = serde_json::to_vec(message)
            .map_err(|e| TaskError::Fatal(format!("Could not write a request: {e}")))?;
        line.push(b'\n');
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&line).and_then(|()| stdin.flush()),
            None => Err(std::io::Error::other("its input is closed")),
        };
        written.map_err(|e| {
            let why = self.exit_note(format!("Could not write to the plugin program: {e}"));
            self.fatal(why)
        })
    }

    /// Sends `message` and waits for the answer whose `type` is `expect`.
    ///
    /// # Errors
    /// As [`PluginProcess::request_serving`].
    pub fn request(&mut self, message: &Json, expect: &str) -> Result<Json, TaskError> {
        self.request_serving(message, expect, &mut |m| {
            Err(TaskError::Fatal(format!(
                "The plugin program asked for {} here, which the protocol does not allow",
                m.get("type").unwrap_or(&Json::Null)
            )))
        })
    }

    /// Sends `message` and waits for the answer whose `type` is `expect`, answering the program's own
    /// requests meanwhile with `serve` (a source task asking for a stored offset).
    ///
    /// # Errors
    /// The plugin's `error` answer (retriable or fatal, as it says); fatal when the program does not
    /// answer within the timeout, exits, writes something that is not a protocol message or a message
    /// too long.
    pub fn request_serving(
        &mut self,
        message: &Json,
        expect: &str,
        serve: &mut dyn FnMut(&Json) -> Result<Json, TaskError>,
    ) -> Result<Json, TaskError> {
        self.send(message)?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let answer = self.receive(deadline, message)?;
            match answer.get("type").and_then(Json::as_str) {
                Some(t) if t == expect => return Ok(answer),
                Some("error") => return Err(plugin_error(&answer, || self.tail())),
                Some(t) if t.ends_with("_request") => {
                    let reply = serve(&answer)?;
                    self.send(&reply)?;
                }
                other => {
                    let got = other.unwrap_or("a message without a type").to_string();
                    return Err(self.fatal(format!(
                        "The plugin program answered {got} where {expect} was expected"
                    )));
                }
            }
        }
    }

    fn receive(&mut self, deadline: Instant, request: &Json) -> Result<Json, TaskError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let line = match self.lines.recv_timeout(wait) {
            Ok(Ok(line)) => line,
            Ok(Err(Some(why))) => return Err(self.fatal(why)),
            Ok(Err(None)) => {
                let why = self.exit_note("The plugin program closed its output".into());
                return Err(self.fatal(why));
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(self.fatal(format!(
                    "The plugin program did not answer {} within {} ms (plugin.request.timeout.ms)",
                    request.get("type").unwrap_or(&Json::Null),
                    self.timeout.as_millis()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(self.fatal("The plugin program has stopped".into()))
            }
        };
        match serde_json::from_slice::<Json>(&line) {
            Ok(message @ Json::Object(_)) => Ok(message),
            _ => {
                let text = String::from_utf8_lossy(&line);
                let shown: String = text.trim_end().chars().take(200).collect();
                Err(self.fatal(format!(
                    "The plugin program wrote something that is not a protocol message: {shown}"
                )))
            }
        }
    }

    /// `why`, or how the program ended when it has (a closed pipe follows its exit by moments).
    fn exit_note(&mut self, why: String) -> String {
        let end = Instant::now() + Duration::from_millis(500);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    return format!("The plugin program exited ({})", describe_exit(status))
                }
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(2)),
                _ => return why,
            }
        }
    }

    /// The last lines the program wrote to stderr, once all of it has been read: the program has been
    /// killed, and the lines it wrote just before may still be in the pipe (half a second at most).
    fn tail(&mut self) -> String {
        self.child
            .final_stderr_tail(Duration::from_millis(500))
            .text()
    }

    /// A fatal error of this program: `message`, then its stderr tail; the program is killed, since
    /// nothing it says can be trusted any more.
    fn fatal(&mut self, message: String) -> TaskError {
        self.broken = true;
        self.kill();
        with_tail(message, &self.tail())
    }

    /// Asks the program to stop (`stop`, then its input closed) and waits up to `grace` for it to exit;
    /// kills its process group after that.
    pub fn stop(&mut self, grace: Duration) {
        if !self.broken {
            let _ = self.send(&json!({"type": "stop"}));
        }
        self.stdin = None;
        let _ = self.child.stop(grace);
    }

    /// Kills the program's process group (the program and anything it started) and reaps it.
    fn kill(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
    }

    /// Whether the program broke the protocol or ended: nothing more can be asked of it.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The program's process id (its host's, which heads its process group).
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

fn with_tail(message: String, tail: &str) -> TaskError {
    if tail.is_empty() {
        TaskError::Fatal(message)
    } else {
        TaskError::Fatal(format!(
            "{message}\nThe plugin program's last lines on stderr:\n{tail}"
        ))
    }
}

/// The plugin's `error` message as a task error: retriable when it says so, else fatal with its trace
/// (or its stderr tail).
fn plugin_error(answer: &Json, tail: impl FnOnce() -> String) -> TaskError {
    let text = |k: &str| answer.get(k).and_then(Json::as_str).unwrap_or_default();
    let message = match text("message") {
        "" => "The plugin reported an error without a message".to_string(),
        m => m.to_string(),
    };
    if answer.get("retriable").and_then(Json::as_bool) == Some(true) {
        return TaskError::Retriable(message);
    }
    match text("trace") {
        "" => with_tail(message, &tail()),
        trace => TaskError::Fatal(format!("{message}\n{trace}")),
    }
}
