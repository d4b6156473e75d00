//! The `liteconnect` binary: parses the command line, sets up logging, binds the listeners, catches
//! signals, and hands over to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use liteconnect::cli::endpoint::Endpoint;
use liteconnect::cli::{connector_file, export, log, migrate};
use liteconnect::config::properties::parse_properties;
use liteconnect::config::worker::WorkerConfig;
use liteconnect::{Listeners, RunError, StartupConnector};

/// Kafka's exit codes: usage errors 1, an unusable worker config 2, a connector file that fails 3.
const EXIT_USAGE: u8 = 1;
const EXIT_WORKER_CONFIG: u8 = 2;
const EXIT_CONNECTOR: u8 = 3;

/// A Kafka Connect worker for one machine, with all of its state in one SQLite file.
///
/// Starts like Kafka's connect-standalone: `liteconnect worker.properties [connector1.properties connector2.json ...]`.
/// With no arguments it runs on its embedded defaults (config/worker.properties).
#[derive(Debug, Parser)]
#[command(name = "liteconnect", version, args_conflicts_with_subcommands = true)]
struct Cli {
    /// The worker config (Java properties), then connector files (.properties, flat JSON, or a POST /connectors body).
    files: Vec<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the worker (the same as giving the files without a subcommand).
    Run {
        /// The worker config, then connector files.
        files: Vec<PathBuf>,
    },
    /// Write one POST /connectors file (config, state and offsets) per connector of a running worker.
    Export {
        /// The worker's REST endpoint.
        #[arg(long, default_value = "http://127.0.0.1:8083")]
        from: String,
        /// The directory to write into.
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// Connectors to export (default: all).
        connectors: Vec<String>,
    },
    /// Move connectors with their offsets to another Kafka Connect cluster (KIP-980: stop, create STOPPED, patch offsets, resume).
    Migrate {
        /// The REST endpoint the connectors are on now.
        #[arg(long)]
        from: String,
        /// The REST endpoint to move them to (liteconnect or Apache Kafka Connect).
        #[arg(long)]
        to: String,
        /// Leave the connectors STOPPED on the target.
        #[arg(long)]
        leave_stopped: bool,
        /// Delete the connectors from the source once they run on the target.
        #[arg(long)]
        delete_source: bool,
        /// Sink offsets: `drain` lets each sink deliver what its topics hold on the source, then starts it
        /// on the target without offsets; `copy` copies them (only for targets whose topics hold the same records).
        #[arg(long, default_value = "drain")]
        sink_offsets: migrate::SinkOffsets,
        /// How long a sink may take to deliver what its topics hold before it moves (60, 90s, 500ms, 2m).
        #[arg(long, default_value = "60", value_parser = migrate::parse_duration)]
        drain_timeout: std::time::Duration,
        /// Carry the subjects the connectors' registry converters use (every version, with references) to
        /// this Schema Registry, and point their `schema.registry.url` at it on the target.
        #[arg(long, value_name = "URL")]
        schema_registry_to: Option<String>,
        /// `user:password` for --schema-registry-to's basic authentication.
        #[arg(long, value_name = "USER:PASSWORD", requires = "schema_registry_to")]
        schema_registry_to_user_info: Option<String>,
        /// Connectors to move (default: all).
        connectors: Vec<String>,
    },
    /// Validate connector files offline, as PUT /connector-plugins/{p}/config/validate would, without a worker.
    Validate {
        /// Print the ConfigInfos JSON for each file instead of a readable summary.
        #[arg(long)]
        json: bool,
        /// Directories of plugin programs, as the worker's `plugin.path` (comma-separated).
        #[arg(long, value_name = "DIRS")]
        plugin_path: Option<String>,
        /// Connector files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a connector file's record path offline: a sink's converters, transforms, predicates and
    /// errors.* on sample records, or a source's task for a while; print what comes out and compare it
    /// with an expected file. Exit 0 as expected, 1 different (or a record failed the task), 2
    /// unreadable input, 3 invalid config.
    Test(liteconnect::cli::tryout::TestArgs),
    #[command(flatten)]
    Log(log::LogCommand),
    /// Runs a plugin program for the worker and kills it when the worker is gone (internal).
    #[command(name = "__child-host", hide = true)]
    ChildHost {
        /// The worker's process id.
        #[arg(long)]
        parent: Option<u32>,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Some(Command::Validate {
            json,
            plugin_path,
            files,
        }) => validate(json, plugin_path.as_deref(), &files),
        Some(Command::Run { files }) => run(&files),
        Some(Command::Test(args)) => {
            let worker = match load_worker_config(args.worker.as_ref()) {
                Ok(w) => w,
                Err(message) => {
                    eprintln!("{message}");
                    return ExitCode::from(liteconnect::cli::tryout::EXIT_INPUT);
                }
            };
            ExitCode::from(liteconnect::cli::tryout::run(&args, &worker))
        }
        Some(Command::Log(command)) => log::run(command),
        Some(Command::ChildHost { parent, command }) => {
            ExitCode::from(liteconnect::cli::child_host::run(parent, &command))
        }
        Some(Command::Export {
            from,
            out,
            connectors,
        }) => client_command(async move {
            let report = export::export(&Endpoint::new(&from), &connectors, &out)
                .await
                .map_err(|e| e.to_string())?;
            for p in &report.written {
                println!("{}", p.display());
            }
            for e in &report.failed {
                eprintln!("{e}");
            }
            match report.failed.len() {
                0 => Ok(()),
                n => Err(format!("{n} connector(s) not exported")),
            }
        }),
        Some(Command::Migrate {
            from,
            to,
            leave_stopped,
            delete_source,
            sink_offsets,
            drain_timeout,
            schema_registry_to,
            schema_registry_to_user_info,
            connectors,
        }) => client_command(async move {
            let options = migrate::MigrateOptions {
                leave_stopped,
                delete_source,
                sink_offsets,
                drain_timeout,
                schema_registry_to: schema_registry_to.map(|url| {
                    liteconnect::cli::schemas::SchemaTarget {
                        url,
                        user_info: schema_registry_to_user_info,
                    }
                }),
            };
            let (from, to) = (Endpoint::new(&from), Endpoint::new(&to));
            migrate::migrate(&from, &to, &connectors, &options, &mut |line| {
                println!("{line}")
            })
            .await
            .map_err(|e| e.to_string())
        }),
        None => run(&cli.files),
    }
}

/// Runs a REST client command; a failure prints its message and exits 1.
fn client_command(f: impl std::future::Future<Output = Result<(), String>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match runtime.block_on(f) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn load_worker_config(path: Option<&PathBuf>) -> Result<WorkerConfig, String> {
    let Some(path) = path else {
        return Ok(WorkerConfig::defaults());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Cannot read the worker config '{}': {e}", path.display()))?;
    let props =
        parse_properties(&text).map_err(|e| format!("Worker config '{}': {e}", path.display()))?;
    // As Kafka does, the worker config's own `${provider:path:key}` placeholders (a keystore key, a
    // credentials file) are resolved by the providers it configures.
    let props: std::collections::BTreeMap<String, String> = props.into_iter().collect();
    let providers = liteconnect::config::providers::ConfigProviders::from_worker_props(&props)
        .map_err(|e| format!("Worker config '{}': {e}", path.display()))?;
    let props = providers
        .resolve(&props)
        .map_err(|e| format!("Worker config '{}': {e}", path.display()))?;
    WorkerConfig::from_props(props).map_err(|e| format!("Worker config '{}': {e}", path.display()))
}

fn run(files: &[PathBuf]) -> ExitCode {
    liteconnect::logging::init();
    let config = match load_worker_config(files.first()) {
        Ok(c) => c,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("{message}");
            return ExitCode::from(EXIT_WORKER_CONFIG);
        }
    };
    let mut connectors: Vec<StartupConnector> = Vec::new();
    for path in files.iter().skip(1) {
        match connector_file::read(path) {
            Ok(c) => {
                if let Some(other) = connectors.iter().find(|o| o.name == c.name) {
                    let message = format!(
                        "Connector {} is defined by both '{}' and '{}'; each connector may come from one file only",
                        c.name, other.source, c.source
                    );
                    eprintln!("{message}");
                    return ExitCode::from(EXIT_CONNECTOR);
                }
                connectors.push(c);
            }
            Err(message) => {
                tracing::error!("{message}");
                eprintln!("{message}");
                return ExitCode::from(EXIT_CONNECTOR);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_WORKER_CONFIG);
        }
    };
    runtime.block_on(serve(config, connectors))
}

/// Parsed and validated, the worker is prepared (its database opened and checked), then every listener is
/// bound, then it runs until a signal. A worker that cannot start never logs that it listens.
async fn serve(config: WorkerConfig, connectors: Vec<StartupConnector>) -> ExitCode {
    let started = async {
        // The handlers are installed before anything is logged or bound, so a signal that arrives while
        // the worker starts is kept and stops it once it serves, instead of killing the process.
        let shutdown = shutdown_signal();
        let worker = liteconnect::prepare(config, connectors).await?;
        let listeners = Listeners::bind(worker.config()).await?;
        liteconnect::serve(worker, listeners, shutdown).await
    };
    match started.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("{e}");
            ExitCode::from(match e {
                RunError::Startup(_) | RunError::Start(_) | RunError::OpenPanicked(_) => {
                    EXIT_CONNECTOR
                }
                RunError::Storage(_) | RunError::Bind { .. } | RunError::Config(_) => {
                    EXIT_WORKER_CONFIG
                }
            })
        }
    }
}

/// A future that resolves on SIGINT or SIGTERM; the handlers are installed when this is called, not when
/// the future is first polled.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    // `ctrl_c` installs its handler on first poll: poll it once now.
    let mut ctrl_c = Box::pin(tokio::signal::ctrl_c());
    let interrupted = futures::FutureExt::now_or_never(ctrl_c.as_mut()).is_some();
    async move {
        if interrupted {
            return;
        }
        #[cfg(unix)]
        if let Some(mut term) = term {
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = ctrl_c.await;
    }
}

fn validate(json: bool, plugin_path: Option<&str>, files: &[PathBuf]) -> ExitCode {
    if let Some(dirs) = plugin_path {
        let mut worker = liteconnect::config::worker::WorkerConfig::defaults();
        worker.plugin_path = dirs
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .collect();
        liteconnect::plugins::install_external(&worker);
    }
    let plugins = liteconnect::plugins::Plugins::new();
    let mut failed = false;
    for path in files {
        let connector = match connector_file::read(path) {
            Ok(c) => c,
            Err(message) => {
                eprintln!("{message}");
                failed = true;
                continue;
            }
        };
        let config = connector
            .config
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        match plugins.validate(&config) {
            Ok(infos) => {
                if json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&infos).unwrap_or_default()
                    );
                }
                if infos.error_count > 0 {
                    failed = true;
                    if !json {
                        // Count what is listed; say how many repeats were folded into it.
                        let shown = liteconnect::config::connector::distinct_errors(&infos);
                        let folded = infos.error_count.saturating_sub(shown.len());
                        let also = match folded {
                            0 => String::new(),
                            n => format!(
                                " ({n} more reported by the validation answer repeat{} these)",
                                if n == 1 { "s" } else { "" }
                            ),
                        };
                        println!("{}: {} error(s){also}", path.display(), shown.len());
                        for (name, e) in shown {
                            println!("  {name}: {e}");
                        }
                    }
                } else if !json {
                    println!(
                        "{}: valid ({} {})",
                        path.display(),
                        connector.name,
                        infos.name
                    );
                }
            }
            Err(e) => {
                failed = true;
                eprintln!("{}: {e}", path.display());
            }
        }
    }
    if failed {
        ExitCode::from(EXIT_USAGE)
    } else {
        ExitCode::SUCCESS
    }
}
