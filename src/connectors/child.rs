//! External programs run under the worker (plugin processes such as Airbyte sources).
//!
//! A program is started without a shell, in a process group of its own, with its stdin and stdout as
//! pipes for the caller; its stderr lines go to the worker's log prefixed with the caller's name, and the
//! last [`STDERR_TAIL_LINES`] of them are kept for traces. [`Child::stop`] closes stdin, waits, then kills
//! the whole group; dropping a [`Child`] kills the group too.
//!
//! So that nothing outlives a worker killed with `kill -9` (which runs no destructor), the program is
//! started through the worker's own binary: `liteconnect __child-host [--parent PID] -- <program> <args>`
//! (see `cli/child_host.rs`) puts itself at the head of a new process group, runs the program in it with
//! the pipes passed through, and kills the group as soon as its parent (the worker) is gone. The host
//! binary is the running executable, or the one named by [`set_host_program`] or by the environment
//! variable `LITECONNECT_CHILD_HOST` (the tests, whose in-process workers run inside a test binary).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The hidden subcommand of the `liteconnect` binary that hosts a child program.
pub const HOST_SUBCOMMAND: &str = "__child-host";
/// The environment variable naming the host binary, read when [`set_host_program`] was not called.
pub const HOST_ENV: &str = "LITECONNECT_CHILD_HOST";
/// How many of the last stderr lines are kept for traces.
pub const STDERR_TAIL_LINES: usize = 50;
/// How often the host checks that its parent is still there, and a waiting caller checks for the exit.
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);

static HOST_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Names the binary that hosts child programs for the rest of the process (the first call wins; false
/// when another path was set before). Tests whose workers run in-process name the real `liteconnect`.
pub fn set_host_program(path: impl Into<PathBuf>) -> bool {
    let path = path.into();
    HOST_PROGRAM.get_or_init(|| path.clone()) == &path
}

/// The binary that hosts child programs: [`set_host_program`]'s, else `LITECONNECT_CHILD_HOST`'s, else
/// the running executable.
pub fn host_program() -> std::io::Result<PathBuf> {
    if let Some(p) = HOST_PROGRAM.get() {
        return Ok(p.clone());
    }
    match std::env::var_os(HOST_ENV) {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => std::env::current_exe(),
    }
}

/// How a program is started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// Through the host subcommand of [`host_program`]: no orphans after `kill -9` of the worker.
    Worker,
    /// Through the host subcommand of this binary.
    Program(PathBuf),
    /// Directly (still in a group of its own, killed on drop), without the guard against the worker's
    /// sudden death.
    Direct,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ChildSpec {
    /// The executable: a name looked up in `PATH`, or a path.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Who runs it (a connector or task name): the prefix of its stderr lines in the log.
    pub name: String,
    /// Its working directory (the worker's when `None`).
    pub cwd: Option<PathBuf>,
    /// Environment variables set on top of the worker's.
    pub env: Vec<(OsString, OsString)>,
    /// How it is started.
    pub host: Host,
}

impl ChildSpec {
    /// `program` with `args`, hosted by the worker, logged as `name`.
    pub fn new<I, S>(program: impl Into<OsString>, args: I, name: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        ChildSpec {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            name: name.into(),
            cwd: None,
            env: Vec::new(),
            host: Host::Worker,
        }
    }

    /// The command line (the program and its arguments) as text, for messages.
    pub fn command_line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&self) -> std::io::Result<Command> {
        let mut command = match &self.host {
            Host::Direct => {
                let mut c = Command::new(&self.program);
                c.args(&self.args);
                c
            }
            host => {
                let binary = match host {
                    Host::Program(p) => p.clone(),
                    _ => host_program()?,
                };
                let mut c = Command::new(binary);
                c.arg(HOST_SUBCOMMAND)
                    .arg("--parent")
                    .arg(std::process::id().to_string())
                    .arg("--")
                    .arg(&self.program)
                    .args(&self.args);
                c
            }
        };
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        Ok(command)
    }
}

/// The last lines a child wrote to stderr.
#[derive(Clone, Debug, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == STDERR_TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The kept lines joined with newlines (empty when there are none).
    pub fn text(&self) -> String {
        self.lines().join("\n")
    }
}

/// A running child program; its process group is killed when this is dropped.
#[derive(Debug)]
pub struct Child {
    process: std::process::Child,
    /// The group's id (the started process's pid); `None` once the group was killed.
    group: Option<u32>,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    tail: StderrTail,
    /// The thread forwarding stderr: finished once every writer of the pipe is gone.
    stderr: Option<std::thread::JoinHandle<()>>,
    name: String,
    exited: Option<ExitStatus>,
    /// When the exit was first seen.
    exited_at: Option<Instant>,
}

impl Child {
    /// Starts the program. Errors say which program could not be started and why.
    pub fn spawn(spec: &ChildSpec) -> std::io::Result<Child> {
        let mut process = spec.command()?.spawn().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("Cannot run {}: {e}", spec.program.to_string_lossy()),
            )
        })?;
        let group = process.id();
        let tail = StderrTail::default();
        let stderr = process.stderr.take().and_then(|stderr| {
            let (tail, name) = (tail.clone(), spec.name.clone());
            // Not joined on drop: it ends when the last writer of the pipe is gone.
            std::thread::Builder::new()
                .name(format!("stderr-{}", spec.name))
                .spawn(move || forward_stderr(stderr, &name, &tail))
                .ok()
        });
        Ok(Child {
            stdin: process.stdin.take(),
            stdout: process.stdout.take(),
            process,
            group: Some(group),
            tail,
            stderr,
            name: spec.name.clone(),
            exited: None,
            exited_at: None,
        })
    }

    /// The started process's id (the host's, when hosted), also the id of its group.
    pub fn id(&self) -> u32 {
        self.process.id()
    }

    /// The pipe to the program's stdin (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The pipe from the program's stdout (once).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// The last lines of stderr.
    pub fn stderr_tail(&self) -> StderrTail {
        self.tail.clone()
    }

    /// The last lines of stderr once all of it has been read (every writer of the pipe gone), waiting
    /// up to `timeout` for that: after the program exited, its last words may still be in the pipe.
    pub fn final_stderr_tail(&mut self, timeout: Duration) -> StderrTail {
        let deadline = Instant::now() + timeout;
        while self
            .stderr
            .as_ref()
            .is_some_and(|h| !h.is_finished() && Instant::now() < deadline)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.tail.clone()
    }

    /// The exit status, if the program has exited.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.exited.is_none() {
            self.exited = self.process.try_wait()?;
            if self.exited.is_some() {
                self.exited_at = Some(Instant::now());
            }
        }
        Ok(self.exited)
    }

    /// How long ago the program was first seen to have exited (`None` while it runs). A program that
    /// exited can leave processes behind that still hold its stdout open (a helper it started in its
    /// group): a caller reading stdout to its end kills them ([`Child::kill`]) once this is long enough.
    pub fn exited_for(&mut self) -> std::io::Result<Option<Duration>> {
        self.try_wait()?;
        Ok(self.exited_at.map(|t| t.elapsed()))
    }

    /// Waits up to `timeout` for the program to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }

    /// Stops the program: closes its stdin, waits up to `grace` for it to exit, then kills its whole
    /// group. Returns how it exited (killed, when it did not exit in time). Whatever is left of the group
    /// afterwards is killed.
    pub fn stop(&mut self, grace: Duration) -> std::io::Result<ExitStatus> {
        self.stdin = None;
        let status = match self.wait_timeout(grace)? {
            Some(status) => status,
            None => {
                tracing::warn!(
                    "[{}] The process did not exit within {} ms; killing it.",
                    self.name,
                    grace.as_millis()
                );
                self.kill_group();
                let status = self.process.wait()?;
                self.exited = Some(status);
                status
            }
        };
        self.kill_group();
        Ok(status)
    }

    /// Kills the whole group now and reaps the process.
    pub fn kill(&mut self) -> std::io::Result<ExitStatus> {
        self.kill_group();
        let status = self.process.wait()?;
        self.exited = Some(status);
        Ok(status)
    }

    fn kill_group(&mut self) {
        if let Some(group) = self.group.take() {
            kill_group(group);
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stdin = None;
        self.kill_group();
        if self.exited.is_none() {
            let _ = self.process.wait();
        }
    }
}

/// Sends SIGKILL to the process group `group` (nothing when it is gone).
pub fn kill_group(group: u32) {
    let Some(pid) = i32::try_from(group)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

/// An exit status in words: `exit code N` or `killed by signal N`; a hosted program killed by a signal
/// shows as exit code 128 + N, as a shell shows it.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// Forwards stderr lines to the log, prefixed with `name`, keeping the last ones in `tail`.
fn forward_stderr(stderr: impl Read, name: &str, tail: &StderrTail) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                tracing::info!(target: "liteconnect::child", "[{name}] {line}");
                tail.push(line.to_string());
            }
        }
    }
}

/// Whether a process with this id is running (a zombie, dead but not yet reaped, is not).
pub fn process_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat"))
    else {
        return false;
    };
    // `pid (comm) state ...`: the state follows the last parenthesis.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z' | 'X') | None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn direct(program: &str, args: &[&str]) -> ChildSpec {
        let mut spec = ChildSpec::new(program, args.iter().copied(), "test");
        spec.host = Host::Direct;
        spec
    }

    #[test]
    fn pipes_stdin_to_stdout_and_stops_when_stdin_closes() {
        let mut child = Child::spawn(&direct("cat", &[])).unwrap();
        let mut stdin = child.take_stdin().unwrap();
        stdin.write_all(b"hello\n").unwrap();
        drop(stdin);
        let mut out = String::new();
        child
            .take_stdout()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "hello\n");
        let status = child.stop(Duration::from_secs(5)).unwrap();
        assert!(status.success(), "{status:?}");
    }

    #[test]
    fn keeps_the_last_stderr_lines() {
        let script = "i=0; while [ $i -lt 60 ]; do echo line$i >&2; i=$((i+1)); done";
        let mut child = Child::spawn(&direct("sh", &["-c", script])).unwrap();
        let mut out = String::new();
        child
            .take_stdout()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child.stop(Duration::from_secs(5)).unwrap();
        let tail = child.stderr_tail();
        let lines = crate::test_support::wait_until(Duration::from_secs(5), || {
            let l = tail.lines();
            (l.last().map(String::as_str) == Some("line59")).then_some(l)
        });
        assert_eq!(lines.len(), STDERR_TAIL_LINES);
        assert_eq!(lines[0], "line10");
    }

    #[test]
    fn a_program_that_ignores_stdin_is_killed_with_its_group_after_the_grace() {
        // A background grandchild in the same group, and a foreground process that never exits.
        let script = "sleep 300 & echo $!; exec sleep 300";
        let mut child = Child::spawn(&direct("sh", &["-c", script])).unwrap();
        let mut line = String::new();
        BufReader::new(child.take_stdout().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        assert!(process_alive(grandchild));
        let started = Instant::now();
        let status = child.stop(Duration::from_millis(300)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(status.signal(), Some(9), "{status:?}");
        // The grandchild is reparented and reaped by init once killed.
        crate::test_support::wait_until(Duration::from_secs(5), || {
            (!process_alive(grandchild)).then_some(())
        });
    }

    #[test]
    fn dropping_kills_the_group() {
        let mut child = Child::spawn(&direct("sh", &["-c", "echo $$; exec sleep 300"])).unwrap();
        let mut line = String::new();
        BufReader::new(child.take_stdout().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pid: u32 = line.trim().parse().unwrap();
        drop(child);
        assert!(!process_alive(pid));
    }

    #[test]
    fn a_missing_program_is_named_in_the_error() {
        let e = Child::spawn(&direct("no-such-program-here", &[])).unwrap_err();
        assert!(e.to_string().contains("no-such-program-here"), "{e}");
    }

    #[test]
    fn the_host_command_line_names_the_parent_and_the_program() {
        let mut spec = ChildSpec::new("source-faker", ["read", "--config", "c.json"], "t");
        spec.host = Host::Program(PathBuf::from("/bin/liteconnect"));
        let command = spec.command().unwrap();
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(command.get_program(), "/bin/liteconnect");
        assert_eq!(
            args,
            [
                HOST_SUBCOMMAND,
                "--parent",
                &std::process::id().to_string(),
                "--",
                "source-faker",
                "read",
                "--config",
                "c.json"
            ]
        );
        assert_eq!(spec.command_line(), "source-faker read --config c.json");
    }
}
