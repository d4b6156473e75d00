//! The hidden `liteconnect __child-host [--parent PID] -- <program> <args>` command: the worker starts
//! plugin programs through it (`connectors/child.rs`) so that none outlives a worker killed with
//! `kill -9`.
//!
//! It puts itself at the head of a new process group, runs the program in that group with stdin, stdout
//! and stderr passed through, and exits with the program's exit code (128 + N when a signal N ended it).
//! Every [`POLL_INTERVAL`] it checks its parent: when the parent is no longer the one it started under
//! (the worker died and the process was handed to init or a subreaper), it kills its whole group,
//! itself included.

use std::ffi::OsString;
use std::os::unix::process::{parent_id, ExitStatusExt};
use std::process::Command;
use std::sync::mpsc::{self, RecvTimeoutError};

use crate::connectors::child::POLL_INTERVAL;

/// The exit code when the program cannot be started, as a shell's for a missing command.
pub const EXIT_CANNOT_RUN: u8 = 127;

/// Runs `command` (the program, then its arguments) under the guard; `parent` is the worker's pid, when
/// the worker gave it. Returns the exit code to exit with.
pub fn run(parent: Option<u32>, command: &[OsString]) -> u8 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("__child-host: no program given");
        return EXIT_CANNOT_RUN;
    };
    // A group of our own (a no-op when the worker already started us as a group leader), so that
    // killing it takes the program and whatever it starts, and nothing of whoever started us.
    let _ = rustix::process::setpgid(None, None);
    let parent = parent.unwrap_or_else(parent_id);
    if parent_id() != parent {
        kill_own_group();
        return EXIT_CANNOT_RUN;
    }
    supervise(parent, program, args)
}

/// Runs `program` and waits for it, killing the group when the parent changes from `parent`.
fn supervise(parent: u32, program: &OsString, args: &[OsString]) -> u8 {
    let mut child = match Command::new(program).args(args).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Cannot run {}: {e}", program.to_string_lossy());
            return EXIT_CANNOT_RUN;
        }
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    loop {
        match rx.recv_timeout(POLL_INTERVAL) {
            Ok(Ok(status)) => return exit_code(status),
            Ok(Err(e)) => {
                eprintln!(
                    "__child-host: waiting for {}: {e}",
                    program.to_string_lossy()
                );
                kill_own_group();
                return EXIT_CANNOT_RUN;
            }
            Err(RecvTimeoutError::Disconnected) => {
                kill_own_group();
                return EXIT_CANNOT_RUN;
            }
            Err(RecvTimeoutError::Timeout) => {
                if parent_id() != parent {
                    kill_own_group();
                    return EXIT_CANNOT_RUN;
                }
            }
        }
    }
}

fn kill_own_group() {
    let _ = rustix::process::kill_current_process_group(rustix::process::Signal::KILL);
}

/// The program's exit code, or 128 + the signal that ended it.
fn exit_code(status: std::process::ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + (signal & 0x7f)).unwrap_or(1),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `run` itself is tested on the real binary (tests/it/child.rs): it changes the process group of
    // whoever calls it.
    fn sh(script: &str) -> u8 {
        let args = ["-c".into(), script.into()];
        supervise(parent_id(), &"sh".into(), &args)
    }

    #[test]
    fn passes_the_exit_code_through() {
        assert_eq!(sh("exit 7"), 7);
        assert_eq!(sh("true"), 0);
    }

    #[test]
    fn a_missing_program_is_127() {
        assert_eq!(
            supervise(parent_id(), &"no-such-program-here".into(), &[]),
            EXIT_CANNOT_RUN
        );
        assert_eq!(run(None, &[]), EXIT_CANNOT_RUN);
    }

    #[test]
    fn a_signal_is_128_plus_its_number() {
        assert_eq!(sh("kill -9 $$"), 137);
    }
}
