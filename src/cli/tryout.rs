//! `liteconnect test`: a connector file's record path run offline on sample records (a sink) or on what
//! its task reads for a while (a source), printed, and compared with an expected file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value as Json;

use crate::config::worker::WorkerConfig;
use crate::tryout::{self, TryError};

/// Exit code: the records came out as expected (or nothing was expected and none failed the task).
pub const EXIT_OK: u8 = 0;
/// Exit code: the output differs from the expected file, or a record failed the task.
pub const EXIT_DIFFERENT: u8 = 1;
/// Exit code: the input, the expected file or the worker config cannot be read.
pub const EXIT_INPUT: u8 = 2;
/// Exit code: the connector file is unreadable or its config invalid.
pub const EXIT_CONFIG: u8 = 3;

/// How the records are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One outcome per record, readable.
    Text,
    /// One JSON object per record per line (the shape `--expect` takes).
    Json,
}

/// What `liteconnect test` is asked (its command-line arguments).
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The connector file (.properties, flat JSON, or a POST /connectors body).
    pub connector: PathBuf,
    /// The worker config whose converters apply where the connector names none (default: the embedded one).
    #[arg(long)]
    pub worker: Option<PathBuf>,
    /// Sample records for a sink, one JSON object per line: topic, partition, offset, timestamp,
    /// key, value (or key_b64, value_b64), headers.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// The expected output (JSON lines as --format json prints; fields left out are not compared).
    #[arg(long)]
    pub expect: Option<PathBuf>,
    /// How to print the records.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// A source test stops after this many records.
    #[arg(long, default_value_t = 100)]
    pub max_records: usize,
    /// A source test stops after this many seconds.
    #[arg(long, default_value_t = 5.0)]
    pub timeout: f64,
    /// Show each record after every step (converters, then each transform).
    #[arg(long)]
    pub steps: bool,
}

impl TestArgs {
    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout.clamp(0.0, 86_400.0))
    }
}

/// Runs the test and prints what came out; returns the exit code.
pub fn run(args: &TestArgs, worker: &WorkerConfig) -> u8 {
    match run_inner(args, worker) {
        Ok(code) => code,
        Err((code, message)) => {
            eprintln!("{message}");
            code
        }
    }
}

fn run_inner(args: &TestArgs, worker: &WorkerConfig) -> Result<u8, (u8, String)> {
    let shown = args.connector.display();
    let connector =
        crate::cli::connector_file::read(&args.connector).map_err(|m| (EXIT_CONFIG, m))?;
    let providers = crate::config::providers::ConfigProviders::from_worker_props(&worker.originals)
        .map_err(|e| (EXIT_INPUT, format!("Worker config: {e}")))?;
    let config = providers
        .resolve(&connector.config)
        .map_err(|e| (EXIT_CONFIG, format!("{shown}: {e}")))?;
    let prepared = tryout::prepare(&config, worker).map_err(|e| match e {
        TryError::Config(errors) => (
            EXIT_CONFIG,
            format!(
                "{shown}: {} error(s)\n{}",
                errors.len(),
                errors
                    .iter()
                    .map(|e| format!("  {e}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        ),
        other => (EXIT_CONFIG, format!("{shown}: {other}")),
    })?;
    let expected = match &args.expect {
        None => None,
        Some(path) => {
            let text = read(path)?;
            Some(tryout::expect::parse(&text).map_err(|(line, e)| {
                (
                    EXIT_INPUT,
                    format!("{}: line {line}: not JSON: {e}", path.display()),
                )
            })?)
        }
    };
    let outcomes = if prepared.is_sink() {
        let Some(path) = &args.input else {
            return Err((
                EXIT_INPUT,
                format!("{shown} is a sink connector: give its sample records with --input FILE (JSON lines)"),
            ));
        };
        let records = tryout::input::parse_lines(&read(path)?)
            .map_err(|e| (EXIT_INPUT, format!("{}: {e}", path.display())))?;
        prepared.run_sink(&records, args.steps)
    } else {
        if let Some(path) = &args.input {
            return Err((
                EXIT_INPUT,
                format!("{shown} is a source connector: it reads its own records, so --input {} is not used; leave it out", path.display()),
            ));
        }
        prepared
            .run_source(args.max_records, args.timeout(), args.steps)
            .map_err(|e| (EXIT_DIFFERENT, format!("{shown}: {e}")))?
    };
    print(&outcomes, args.format);
    let task_failed = outcomes.last().is_some_and(|o| {
        o.get("result") == Some(&Json::from("failed"))
            && o.get("skipped") == Some(&Json::from(false))
    });
    let Some(expected) = expected else {
        if task_failed {
            eprintln!(
                "{shown}: record {} failed the task (errors.tolerance=none)",
                outcomes.len() - 1
            );
            return Ok(EXIT_DIFFERENT);
        }
        return Ok(EXIT_OK);
    };
    let differences = tryout::expect::differences(&expected, &outcomes);
    if differences.is_empty() {
        eprintln!("{shown}: {} record(s) as expected", outcomes.len());
        return Ok(EXIT_OK);
    }
    eprintln!(
        "{shown}: {} difference(s) from the expected records:",
        differences.len()
    );
    for d in differences {
        eprintln!("  {d}");
    }
    Ok(EXIT_DIFFERENT)
}

/// Prints the outcomes through one buffer (stdout alone writes each line).
fn print(outcomes: &[Json], format: Format) {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for outcome in outcomes {
        let written = match format {
            Format::Json => writeln!(out, "{outcome}"),
            Format::Text => writeln!(out, "{}", tryout::text(outcome)),
        };
        if written.is_err() {
            return;
        }
    }
    let _ = out.flush();
}

fn read(path: &Path) -> Result<String, (u8, String)> {
    std::fs::read_to_string(path)
        .map_err(|e| (EXIT_INPUT, format!("Cannot read {}: {e}", path.display())))
}
