//! The worker's edges, with the real binary: what it refuses before it listens (another name for a database
//! in use, a database it cannot write, a broken database, a bad connector file, a taken port), a database
//! broken under a running worker, and a prompt exit on SIGTERM whatever connections are open.

use std::io::{Read, Seek, SeekFrom, Write};
use std::net::TcpStream;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// A worker config on an ephemeral port with the database at `db`.
fn props(dir: &Path, name: &str, db: &Path) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "listeners=http://127.0.0.1:0\nstorage.file={}\n",
            db.display()
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// Runs the binary with `args` (logging at info) until it exits, bounded by [`DEADLINE`]; `adjust` may
/// change the command first. Returns the exit code and stderr.
fn exit_of(cwd: &Path, args: &[&str], adjust: impl FnOnce(&mut Command)) -> (i32, String) {
    exit_of_program(
        Path::new(env!("CARGO_BIN_EXE_liteconnect")),
        cwd,
        args,
        adjust,
    )
}

/// [`exit_of`] with the binary at `program`.
fn exit_of_program(
    program: &Path,
    cwd: &Path,
    args: &[&str],
    adjust: impl FnOnce(&mut Command),
) -> (i32, String) {
    let mut command = Command::new(program);
    command
        .current_dir(cwd)
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    adjust(&mut command);
    // A binary copied just now may be "text file busy" for a moment: another test's fork can hold the
    // copy's write handle until its exec. That passes; wait for it with the deadline.
    let started = Instant::now();
    let mut child = loop {
        match command.spawn() {
            Ok(child) => break child,
            Err(e) if e.raw_os_error() == Some(26) && started.elapsed() < DEADLINE => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("spawn {}: {e}", program.display()),
        }
    };
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "liteconnect {args:?} did not exit; it logged:\n{}",
                reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (status.code().unwrap_or(-1), reader.join().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_name_for_a_database_in_use_is_refused() {
    let dir = tempdir();
    let client = reqwest::Client::new();
    let first = start_binary(dir.path(), &[]);
    wait_healthy(&client, &first.url).await;
    let db = dir.path().join("bin.db");
    std::os::unix::fs::symlink(&db, dir.path().join("symlink.db")).unwrap();
    std::fs::hard_link(&db, dir.path().join("hardlink.db")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let names = [
        dir.path().join("symlink.db"),
        dir.path().join("hardlink.db"),
        dir.path().join("sub").join("..").join("bin.db"),
    ];
    let holder = format!("process {}", first.child.id());
    for name in names {
        let config = props(dir.path(), "second.properties", &name);
        let cwd = dir.path().to_path_buf();
        let (code, err) = tokio::task::spawn_blocking(move || exit_of(&cwd, &[&config], |_| {}))
            .await
            .unwrap();
        let shown = name.display();
        assert_eq!(code, 2, "{shown}: {err}");
        assert!(
            err.contains("in use by another liteconnect worker") && err.contains(&holder),
            "{shown}: the refusal names the holder ({holder}): {err}"
        );
        // A symlink and `..` resolve to the file itself; a hard link is a name of its own.
        let named = std::fs::canonicalize(&name).unwrap();
        assert!(err.contains(&named.display().to_string()), "{shown}: {err}");
        assert!(!err.contains("listening on"), "{shown}: {err}");
    }
    // The first worker is unaffected.
    wait_healthy(&client, &first.url).await;
    first.terminate();
}

/// Whether this process runs as root, where permission bits do not stop a write.
fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[test]
fn a_database_it_cannot_write_is_refused_at_start_up() {
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    let config = props(dir.path(), "worker.properties", &db);
    // A real liteconnect database, created and closed by a first run.
    let first = start_binary(dir.path(), &[]);
    first.terminate();
    assert!(db.exists());
    // The file is read-only; its directory and lock file are not, so SQLite opens the file read-only
    // without a word. Root ignores permission bits, so when the tests run as root the worker runs as
    // `nobody` (uid 65534), for whom the bits hold. `nobody` may not reach the build's binary (a checkout
    // in a mode-700 home directory), so the worker run is a copy placed in the test's own directory.
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    mode(dir.path(), 0o777);
    mode(&db, 0o444);
    mode(&dir.path().join("bin.db.lock"), 0o666);
    mode(Path::new(&config), 0o644);
    let program = dir.path().join("liteconnect");
    std::fs::copy(env!("CARGO_BIN_EXE_liteconnect"), &program).unwrap();
    mode(&program, 0o755);
    let (code, err) = exit_of_program(&program, dir.path(), &[&config], |c| {
        if running_as_root() {
            c.uid(65534).gid(65534);
        }
    });
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&db.display().to_string()) && err.contains("cannot be written"),
        "the message names the file and the cause: {err}"
    );
    assert!(!err.contains("listening on"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_turns_unhealthy_when_the_database_breaks_on_disk() {
    let dir = tempdir();
    let client = reqwest::Client::new();
    let bin = start_binary(dir.path(), &[]);
    wait_healthy(&client, &bin.url).await;
    let db = dir.path().join("bin.db");
    // Move everything from the WAL into the file, then overwrite the file's first pages (the header and
    // the schema) as a failing disk or a stray writer would.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let mut file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&[0xA5; 16 * 1024]).unwrap();
    file.sync_all().unwrap();
    wait_until("GET /health answers 500 unhealthy", || async {
        match client.get(format!("{}/health", bin.url)).send().await {
            Ok(r) if r.status() == 500 => {
                let body: serde_json::Value = r.json().await.unwrap();
                body["status"] == "unhealthy"
            }
            _ => false,
        }
    })
    .await;
    bin.kill();
}

#[test]
fn a_bad_connector_file_leaves_no_database_behind() {
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    let config = props(dir.path(), "worker.properties", &db);
    let connector = dir.path().join("bad.json");
    std::fs::write(
        &connector,
        r#"{"name": "a", "config": {"connector.class": "Nope"}}"#,
    )
    .unwrap();
    let (code, err) = exit_of(dir.path(), &[&config, connector.to_str().unwrap()], |_| {});
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("Failed to find any class"), "{err}");
    assert!(!err.contains("listening on"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("bin.db"))
        .collect();
    assert!(
        left.is_empty(),
        "nothing of the database is created: {left:?}"
    );
}

#[test]
fn a_broken_database_is_refused_before_listening() {
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    std::fs::write(
        &db,
        "not a database, only text; long enough to look like a header\n".repeat(20),
    )
    .unwrap();
    let config = props(dir.path(), "worker.properties", &db);
    let (code, err) = exit_of(dir.path(), &[&config], |_| {});
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(!err.contains("listening on"), "{err}");
}

#[test]
fn a_taken_port_exits_2_naming_the_address() {
    let dir = tempdir();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    for key in ["listeners", "admin.listeners"] {
        let config = dir.path().join(format!("{key}.properties"));
        std::fs::write(
            &config,
            format!(
                "listeners=http://127.0.0.1:0\n{key}=http://{address}\nstorage.file={}\n",
                dir.path().join("bin.db").display()
            ),
        )
        .unwrap();
        let (code, err) = exit_of(dir.path(), &[config.to_str().unwrap()], |_| {});
        assert_eq!(code, 2, "{key}: {err}");
        assert!(
            err.contains(&format!("Could not bind the REST listener {address}")),
            "{key}: {err}"
        );
        assert!(!err.contains("listening on"), "{key}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_exits_promptly_whatever_connections_are_open() {
    let dir = tempdir();
    let client = reqwest::Client::new();
    let mut bin = start_binary(dir.path(), &[]);
    wait_healthy(&client, &bin.url).await;
    let address = bin.url.trim_start_matches("http://").to_string();
    // A keep-alive connection that has been answered once and stays open.
    let mut answered = TcpStream::connect(&address).unwrap();
    answered
        .write_all(b"GET /connectors HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    let mut head = [0u8; 12];
    answered.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // A connection with nothing sent yet, and one with half a request.
    let _silent = TcpStream::connect(&address).unwrap();
    let mut partial = TcpStream::connect(&address).unwrap();
    partial.write_all(b"GET /conn").unwrap();
    let ok = Command::new("kill")
        .arg("-TERM")
        .arg(bin.child.id().to_string())
        .status()
        .unwrap();
    assert!(ok.success());
    // Far more than the shutdown needs, far less than a client could hold a connection open.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(status) = bin.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        if Instant::now() > deadline {
            let _ = bin.child.kill();
            panic!("no exit within 5 s of SIGTERM with connections open");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
