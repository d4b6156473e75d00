//! A throwaway PostgreSQL cluster: `initdb` in a temporary directory, the server on a free loopback port
//! with trust authentication and its socket inside that directory. As root, the server runs as the
//! unprivileged `postgres` user (it refuses to run as root).

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use super::free_port;

/// A running cluster; stopped (immediately) when dropped.
pub struct Postgres {
    dir: TempDir,
    pub port: u16,
    bin: PathBuf,
    running: bool,
}

fn bin_dir() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .collect()
        })
        .unwrap_or_default();
    dirs.retain(|d| d.join("initdb").exists());
    dirs.sort();
    dirs.pop()
        .expect("a PostgreSQL server (scripts/install-test-deps installs it)")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Runs a server program, as the `postgres` user when this process is root.
fn run(bin: &Path, program: &str, args: &[&str]) -> std::process::Output {
    let exe = bin.join(program);
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"))
}

impl Postgres {
    /// Creates and starts a cluster.
    pub fn start() -> Postgres {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("liteconnect-pg")
            .tempdir()
            .unwrap();
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
        let data = dir.path().join("data");
        let out = run(
            &bin,
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut pg = Postgres {
            dir,
            port: free_port(),
            bin,
            running: false,
        };
        pg.restart();
        pg
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Starts the server again (after [`Postgres::stop`]) on the same port.
    pub fn restart(&mut self) {
        let opts = format!(
            "-p {} -k {} -h 127.0.0.1 -c fsync=off -c synchronous_commit=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log").display().to_string();
        let out = run(
            &self.bin,
            "pg_ctl",
            &[
                "start",
                "-w",
                "-t",
                "60",
                "-D",
                &self.data(),
                "-o",
                &opts,
                "-l",
                &log,
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        self.running = true;
    }

    /// Stops the server (fast shutdown: connections are cut).
    pub fn stop(&mut self) {
        let out = run(
            &self.bin,
            "pg_ctl",
            &["stop", "-w", "-D", &self.data(), "-m", "fast"],
        );
        assert!(
            out.status.success(),
            "pg_ctl stop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.running = false;
    }

    /// Turns TLS on with this certificate and key, and refuses connections without it (`hostssl` only);
    /// restarts the server.
    pub fn require_tls(&mut self, cert_pem: &str, key_pem: &str) {
        let data = self.dir.path().join("data");
        std::fs::write(data.join("server.crt"), cert_pem).unwrap();
        std::fs::write(data.join("server.key"), key_pem).unwrap();
        use std::io::Write as _;
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .unwrap();
        writeln!(conf, "ssl = on").unwrap();
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
        )
        .unwrap();
        let key = data.join("server.key");
        let chmod = Command::new("chmod").arg("600").arg(&key).status().unwrap();
        assert!(chmod.success());
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(self.dir.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
        self.stop();
        self.restart();
    }

    /// The connector URL of database `postgres`.
    pub fn url(&self) -> String {
        format!(
            "jdbc:postgresql://127.0.0.1:{}/postgres?user=postgres&sslmode=disable",
            self.port
        )
    }

    /// Runs `f` with a client, on a thread of its own (the sync client must not run inside an async
    /// runtime); `None` when the server cannot be reached.
    pub fn with_client<T: Send>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> T + Send,
    ) -> Option<T> {
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut c = postgres::Config::new()
                    .host("127.0.0.1")
                    .port(self.port)
                    .user("postgres")
                    .dbname("postgres")
                    .connect(postgres::NoTls)
                    .ok()?;
                Some(f(&mut c))
            })
            .join()
            .expect("client thread")
        })
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            run(
                &self.bin,
                "pg_ctl",
                &["stop", "-D", &self.data(), "-m", "immediate"],
            );
        }
    }
}
