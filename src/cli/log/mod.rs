//! `liteconnect status`, `topics`, `consume` and `produce`: looking at a worker and its local log from the
//! command line, through the REST API of a running worker or, with `--db`, on the database file itself.
//!
//! These commands are synchronous: the REST calls use a blocking HTTP client and the database is read on
//! this thread, so no async executor is involved.

mod consume;
mod produce;
mod rest;
mod source;
mod status;
mod table;
mod topics;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::config::properties::parse_properties;
use crate::config::worker::Listener;

pub use consume::ConsumeArgs;
pub use produce::ProduceArgs;
pub use status::StatusArgs;
pub use topics::TopicsArgs;

/// The URL used when neither `--url` nor `--config` gives one.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8083";

/// The environment variable holding `user:password` for basic authentication.
pub const USER_ENV: &str = "LITECONNECT_USER";

/// The exit code of a command that failed (Kafka's usage-error code, as `export` and `migrate` use).
const EXIT_FAILED: u8 = 1;

/// The commands of this module, flattened into the binary's subcommands.
#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// The connectors of a running worker: type, state, tasks running, sink lag, a failed task's error.
    Status(StatusArgs),
    /// The topics of the local log: partitions, records, bytes, oldest and newest record time.
    Topics(TopicsArgs),
    /// Print the records of a topic (through a running worker, or read-only from its database).
    Consume(ConsumeArgs),
    /// Append the lines of stdin to a topic as records (through a running worker, or to a stopped
    /// worker's database).
    Produce(ProduceArgs),
}

/// Where a running worker answers, and how to authenticate.
#[derive(Debug, Clone, Args)]
pub struct Remote {
    /// The worker's REST endpoint [default: the first of `listeners` in --config, else http://127.0.0.1:8083].
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The worker config whose `listeners` give the default URL.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Basic-auth credentials as `user:password` [default: the LITECONNECT_USER environment variable].
    #[arg(long, value_name = "USER:PASSWORD")]
    pub user: Option<String>,
}

impl Remote {
    /// The endpoint's base URL: `--url`, else the worker config's first listener, else [`DEFAULT_URL`].
    ///
    /// # Errors
    /// The worker config cannot be read or gives no address a client can reach.
    pub fn base_url(&self) -> Result<String, String> {
        if let Some(url) = &self.url {
            return Ok(url.trim_end_matches('/').to_string());
        }
        match &self.config {
            Some(path) => url_from_config(path),
            None => Ok(DEFAULT_URL.to_string()),
        }
    }

    /// `--user`, else the environment variable, split into user and password.
    ///
    /// # Errors
    /// The value has no `:`.
    pub fn credentials(&self) -> Result<Option<(String, String)>, String> {
        let (value, from) = match &self.user {
            Some(u) => (u.clone(), "--user"),
            None => match std::env::var(USER_ENV) {
                Ok(u) if !u.is_empty() => (u, USER_ENV),
                _ => return Ok(None),
            },
        };
        match value.split_once(':') {
            Some((user, password)) => Ok(Some((user.to_string(), password.to_string()))),
            None => Err(format!("{from} must be user:password")),
        }
    }

    fn client(&self) -> Result<rest::Rest, String> {
        rest::Rest::new(&self.base_url()?, self.credentials()?)
    }
}

/// The URL of the first listener in the worker config at `path` (Kafka's default `http://:8083` when it
/// sets none); a wildcard host becomes the loopback address.
fn url_from_config(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Cannot read the worker config '{}': {e}", path.display()))?;
    let props =
        parse_properties(&text).map_err(|e| format!("Worker config '{}': {e}", path.display()))?;
    let listeners = props
        .iter()
        .rev()
        .find(|(k, _)| k == crate::config::keys::LISTENERS)
        .map_or("http://:8083", |(_, v)| v.as_str());
    let first = listeners.split(',').next().unwrap_or_default();
    let listener =
        Listener::parse(first).map_err(|e| format!("Worker config '{}': {e}", path.display()))?;
    if listener.port == 0 {
        return Err(format!(
            "Worker config '{}': its first listener {first} takes a free port when the worker starts; give the address it logged with --url",
            path.display()
        ));
    }
    let host = match listener.host.as_str() {
        "" | "0.0.0.0" => "127.0.0.1".to_string(),
        "::" => "[::1]".to_string(),
        h if h.contains(':') => format!("[{h}]"),
        h => h.to_string(),
    };
    Ok(format!("{}://{host}:{}", listener.scheme, listener.port))
}

/// Runs one of the commands; a failure prints its message on stderr and exits 1.
pub fn run(command: LogCommand) -> ExitCode {
    let result = match command {
        LogCommand::Status(args) => status::run(&args),
        LogCommand::Topics(args) => topics::run(&args),
        LogCommand::Consume(args) => consume::run(&args),
        LogCommand::Produce(args) => produce::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Whether to colour what goes to stdout: only on a terminal, and not when `NO_COLOR` is set.
fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Writes `text` and a newline to stdout; false once stdout is closed (a pipe into `head`).
fn print_line(out: &mut impl std::io::Write, text: &str) -> bool {
    writeln!(out, "{text}").and_then(|()| out.flush()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(url: Option<&str>, config: Option<PathBuf>, user: Option<&str>) -> Remote {
        Remote {
            url: url.map(str::to_string),
            config,
            user: user.map(str::to_string),
        }
    }

    #[test]
    fn the_url_comes_from_the_flag_the_config_or_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        assert_eq!(remote(None, None, None).base_url().unwrap(), DEFAULT_URL);
        assert_eq!(
            remote(Some("http://h:1/"), None, None).base_url().unwrap(),
            "http://h:1"
        );
        let cases = [
            ("listeners=http://:9000\n", "http://127.0.0.1:9000"),
            (
                "listeners=https://0.0.0.0:9443,http://x:1\n",
                "https://127.0.0.1:9443",
            ),
            ("listeners=http://[::]:9000\n", "http://[::1]:9000"),
            (
                "listeners=http://edge.local:8084\n",
                "http://edge.local:8084",
            ),
            ("group.id=x\n", "http://127.0.0.1:8083"),
        ];
        for (i, (text, url)) in cases.iter().enumerate() {
            let p = write(&format!("w{i}.properties"), text);
            assert_eq!(remote(None, Some(p), None).base_url().unwrap(), *url);
        }
        let p = write("zero.properties", "listeners=http://127.0.0.1:0\n");
        let e = remote(None, Some(p), None).base_url().unwrap_err();
        assert!(e.contains("--url"), "{e}");
        let e = remote(None, Some(dir.path().join("absent")), None)
            .base_url()
            .unwrap_err();
        assert!(e.contains("absent"), "{e}");
    }

    #[test]
    fn credentials_need_a_colon() {
        assert_eq!(
            remote(None, None, Some("ops:s3:cret"))
                .credentials()
                .unwrap(),
            Some(("ops".into(), "s3:cret".into()))
        );
        let e = remote(None, None, Some("ops")).credentials().unwrap_err();
        assert!(e.contains("user:password"), "{e}");
    }
}
