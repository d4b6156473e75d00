//! Plugin programs under the real binary's `__child-host`: exit codes and pipes passed through, stop
//! and kill of the whole group, and no orphan after `kill -9` of the process that started them.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use liteconnect::connectors::child::{process_alive, Child, ChildSpec, Host, HOST_SUBCOMMAND};

use crate::common::{wait_for_blocking, DEADLINE};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_liteconnect"))
}

fn hosted(program: &str, args: &[&str]) -> ChildSpec {
    let mut spec = ChildSpec::new(program, args.iter().copied(), "child-test");
    spec.host = Host::Program(binary());
    spec
}

/// Reads the first line of `out` as a process id.
fn first_pid(out: impl Read) -> u32 {
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).expect("read");
    line.trim().parse().expect("a pid")
}

#[test]
fn a_hosted_program_gets_the_pipes_and_its_exit_code_comes_back() {
    let mut child = Child::spawn(&hosted(
        "sh",
        &["-c", "read x; echo got $x; echo oops >&2; exit 3"],
    ))
    .expect("spawn");
    let mut stdin = child.take_stdin().expect("stdin");
    stdin.write_all(b"hello\n").expect("write");
    let mut out = String::new();
    child
        .take_stdout()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    assert_eq!(out, "got hello\n");
    let status = child.stop(DEADLINE).expect("stop");
    assert_eq!(status.code(), Some(3));
    let tail = child.stderr_tail();
    wait_for_blocking("the stderr line", DEADLINE, || {
        (tail.lines() == ["oops"]).then_some(())
    });
}

#[test]
fn a_hosted_program_that_cannot_start_says_why() {
    let mut child = Child::spawn(&hosted("no-such-program-here", &[])).expect("the host starts");
    let status = child.stop(DEADLINE).expect("stop");
    assert_eq!(status.code(), Some(127));
    let tail = child.stderr_tail();
    wait_for_blocking("the host's message", DEADLINE, || {
        tail.text()
            .contains("Cannot run no-such-program-here")
            .then_some(())
    });
}

#[test]
fn stop_kills_the_whole_group_of_a_program_that_does_not_exit() {
    let mut child = Child::spawn(&hosted(
        "sh",
        &["-c", "sleep 300 & echo $!; exec sleep 300"],
    ))
    .expect("spawn");
    let background = first_pid(child.take_stdout().expect("stdout"));
    assert!(process_alive(background));
    child.stop(Duration::from_millis(200)).expect("stop");
    wait_for_blocking("the background process to be gone", DEADLINE, || {
        (!process_alive(background)).then_some(())
    });
}

/// The process that started the host (here another host, standing for the worker) is killed with
/// SIGKILL: the host notices and kills the program and what it started.
#[test]
fn no_orphan_after_kill_9_of_the_parent() {
    let mut parent = Command::new(binary())
        .args([HOST_SUBCOMMAND, "--"])
        .arg(binary())
        .args([
            HOST_SUBCOMMAND,
            "--",
            "sh",
            "-c",
            "sleep 300 & echo $!; exec sleep 300",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let grandchild = first_pid(parent.stdout.take().expect("stdout"));
    assert!(process_alive(grandchild));
    parent.kill().expect("kill -9");
    parent.wait().expect("reap");
    wait_for_blocking("the grandchild to be gone", DEADLINE, || {
        (!process_alive(grandchild)).then_some(())
    });
}
