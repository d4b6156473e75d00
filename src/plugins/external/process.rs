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
/// The minor version of [`PROTOCOL_VERSION`] this worker speaks: additions a program may answer it knows
/// (1: the long-lived connector process and `request_task_reconfiguration`; the sink task's
/// assigned partitions).
pub const PROTOCOL_MINOR: u64 = 1;
/// The messages a program may send unasked, which have no answer: they are kept until
/// [`PluginProcess::next_message`] hands them over.
const NOTICES: &[&str] = &["request_task_reconfiguration"];
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

/// What the stdout thread hands over: a line, or why there will be none (`None`: the output closed);
/// or a wake-up from the process's owner ([`PluginProcess::waker`]).
pub enum Incoming {
    /// A line of the program's output.
    Line(Vec<u8>),
    /// The output ended: why (`None`: it closed).
    End(Option<String>),
    /// The owner has something to do: [`PluginProcess::next_message`] returns.
    Wake,
}

/// An answer to [`PluginProcess::request_quick`]: read the quick way, or as a protocol message.
pub enum Reply<T> {
    /// What the quick reading made of the line.
    Quick(T),
    /// The answer as a protocol message.
    Message(Json),
}

/// A running plugin program.
pub struct PluginProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Incoming>,
    /// A sender into `lines`, handed to whoever must wake the process's owner.
    waker: mpsc::Sender<Incoming>,
    /// Notices the program sent while a request waited for its answer, oldest first.
    notices: std::collections::VecDeque<Json>,
    /// The minor protocol version the program answered the handshake with (0 when it said none).
    minor: u64,
    /// The program's answer to the handshake.
    hello: Json,
    timeout: Duration,
    /// Set once the program broke the protocol or died: nothing more is sent.
    broken: bool,
}

fn read_lines(stdout: impl Read, tx: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    // Each line's buffer starts as large as the last line (a source's batches are much alike).
    let mut last = 0;
    loop {
        let mut buf = Vec::with_capacity(last);
        let read = (&mut reader)
            .take(MAX_MESSAGE_BYTES + 1)
            .read_until(b'\n', &mut buf);
        let line = match read {
            Ok(0) => Incoming::End(None),
            Ok(_) if buf.last() != Some(&b'\n') && buf.len() as u64 > MAX_MESSAGE_BYTES => {
                Incoming::End(Some(format!(
                    "The plugin program wrote a message longer than {MAX_MESSAGE_BYTES} bytes"
                )))
            }
            Ok(_) => {
                last = buf.len().min(MAX_MESSAGE_BYTES as usize);
                Incoming::Line(buf)
            }
            Err(e) => Incoming::End(Some(format!(
                "Could not read the plugin program's output: {e}"
            ))),
        };
        let last = matches!(line, Incoming::End(_));
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
        let waker = tx.clone();
        if let Some(stdout) = child.take_stdout() {
            std::thread::spawn(move || read_lines(stdout, tx));
        }
        let mut process = PluginProcess {
            stdin: child.take_stdin(),
            child,
            lines,
            waker,
            notices: Default::default(),
            minor: 0,
            hello: Json::Null,
            timeout: spec.timeout,
            broken: false,
        };
        let hello = json!({"type": "hello", "protocol": [PROTOCOL_VERSION], "minor": PROTOCOL_MINOR,
            "class": class, "role": role});
        let answer = process.request(&hello, "hello")?;
        // A program may know more minor additions than this worker: only those both know are used.
        let minor = answer.get("minor").and_then(Json::as_u64).unwrap_or(0);
        process.minor = minor.min(PROTOCOL_MINOR);
        process.hello = answer.clone();
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
        let no_quick = &mut |_: &[u8]| None::<std::convert::Infallible>;
        match self.request_quick(message, expect, serve, no_quick)? {
            Reply::Message(answer) => Ok(answer),
            Reply::Quick(never) => match never {},
        }
    }

    /// As [`PluginProcess::request_serving`], but each line is first offered to `quick`, which may
    /// read it straight into what the caller wants (without a JSON tree); a line it returns `None`
    /// for is read as a protocol message as usual.
    ///
    /// # Errors
    /// As [`PluginProcess::request_serving`].
    pub fn request_quick<T>(
        &mut self,
        message: &Json,
        expect: &str,
        serve: &mut dyn FnMut(&Json) -> Result<Json, TaskError>,
        quick: &mut dyn FnMut(&[u8]) -> Option<T>,
    ) -> Result<Reply<T>, TaskError> {
        self.send(message)?;
        self.answer_quick(message, expect, serve, quick)
    }

    /// Waits for the answer to `message`, already sent, as [`PluginProcess::request_quick`] does.
    ///
    /// # Errors
    /// As [`PluginProcess::request_serving`].
    pub fn answer_quick<T>(
        &mut self,
        message: &Json,
        expect: &str,
        serve: &mut dyn FnMut(&Json) -> Result<Json, TaskError>,
        quick: &mut dyn FnMut(&[u8]) -> Option<T>,
    ) -> Result<Reply<T>, TaskError> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let line = self.receive(deadline, message)?;
            if let Some(quick) = quick(&line) {
                return Ok(Reply::Quick(quick));
            }
            let answer = self.parse(&line)?;
            match answer.get("type").and_then(Json::as_str) {
                Some(t) if t == expect => return Ok(Reply::Message(answer)),
                Some("error") => return Err(plugin_error(&answer, || self.tail())),
                Some(t) if NOTICES.contains(&t) => self.notices.push_back(answer),
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

    /// The minor protocol version agreed in the handshake.
    pub fn minor(&self) -> u64 {
        self.minor
    }

    /// Whether the program's handshake answer holds `key: true` (an addition it says it uses).
    pub fn says(&self, key: &str) -> bool {
        self.hello.get(key) == Some(&Json::Bool(true))
    }

    /// A sender that makes [`PluginProcess::next_message`] return `None` (wakes the process's owner).
    pub fn waker(&self) -> mpsc::Sender<Incoming> {
        self.waker.clone()
    }

    /// The next message the program sends unasked (a notice kept while a request waited first), or
    /// `None` when woken through [`PluginProcess::waker`]. Waits as long as it takes.
    ///
    /// # Errors
    /// Fatal when the program ends or writes something that is not a protocol message.
    pub fn next_message(&mut self) -> Result<Option<Json>, TaskError> {
        if let Some(notice) = self.notices.pop_front() {
            return Ok(Some(notice));
        }
        let line = match self.lines.recv() {
            Ok(Incoming::Wake) => return Ok(None),
            Ok(incoming) => self.line_of(incoming)?,
            Err(_) => return Err(self.fatal("The plugin program has stopped".into())),
        };
        self.parse(&line).map(Some)
    }

    /// The next line of output, waiting until `deadline` for it.
    fn receive(&mut self, deadline: Instant, request: &Json) -> Result<Vec<u8>, TaskError> {
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(wait) {
                Ok(Incoming::Wake) => continue,
                Ok(incoming) => return self.line_of(incoming),
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
            }
        }
    }

    /// The line `incoming` carries, or the fatal error of its end.
    fn line_of(&mut self, incoming: Incoming) -> Result<Vec<u8>, TaskError> {
        match incoming {
            Incoming::Line(line) => Ok(line),
            Incoming::End(Some(why)) => Err(self.fatal(why)),
            Incoming::End(None) | Incoming::Wake => {
                let why = self.exit_note("The plugin program closed its output".into());
                Err(self.fatal(why))
            }
        }
    }

    /// One line of output as a protocol message.
    fn parse(&mut self, line: &[u8]) -> Result<Json, TaskError> {
        match serde_json::from_slice::<Json>(line) {
            Ok(message @ Json::Object(_)) => Ok(message),
            _ => {
                let text = String::from_utf8_lossy(line);
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

    /// Fatal when the program has exited (it is not asked anything: a task with nothing to do calls this).
    ///
    /// # Errors
    /// The exit, with the program's stderr tail.
    pub fn check_running(&mut self) -> Result<(), TaskError> {
        match self.child.try_wait() {
            Ok(Some(status)) => Err(self.fatal(format!(
                "The plugin program exited ({})",
                describe_exit(status)
            ))),
            _ => Ok(()),
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
