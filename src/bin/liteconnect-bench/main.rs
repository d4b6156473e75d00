//! `liteconnect-bench`: measures the release `liteconnect` binary from the outside, over its REST API,
//! and runs a physical-limit baseline for every figure in the same process, so results read as ratios.
//!
//! It builds nothing: it runs the `liteconnect` executable that sits next to its own (so build both with
//! `cargo build --release` first). Every worker gets its own temporary directory, SQLite file and
//! ephemeral port, and is stopped with SIGTERM when its scenario ends.
//!
//! ```text
//! cargo build --release && cargo run --release --bin liteconnect-bench -- [--runs N] [--quick] [--scenario NAME]...
//! ```

mod airbyte;
mod avro;
mod baseline;
mod control;
mod durability;
mod footprint;
mod group_commit;
mod http_sink;
mod idle;
mod jdbc;
mod kafka_listener;
mod log;
mod long_run;
mod mqtt;
mod pipeline;
mod plugin;
mod report;
mod rest;
mod scale;
mod scrape;
mod tryout;
mod webhook;
mod worker;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

use crate::report::{print_table, Row};
use crate::worker::TempDir;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, Error>;

const STRING_CONVERTER: &str = "org.apache.kafka.connect.storage.StringConverter";
const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";
const MOCK_SOURCE: &str = "org.apache.kafka.connect.tools.MockSourceConnector";
const VERIFIABLE_SOURCE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const VERIFIABLE_SINK: &str = "org.apache.kafka.connect.tools.VerifiableSinkConnector";
/// Bytes per line of the pipeline's input file, newline included.
const LINE_BYTES: usize = 100;
/// How long any single wait may take before the run is declared failed.
const DEADLINE: Duration = Duration::from_secs(600);

/// The scenarios, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Scenario {
    /// A file source into the log and a file sink out of it, String and JSON converters.
    Pipeline,
    /// The verifiable source into the log and the verifiable sink out of it.
    Log,
    /// Eight source tasks against one: what committing them together gains.
    GroupCommit,
    /// REST throughput and latency under 32 keep-alive connections.
    Rest,
    /// Memory, start-up time and binary size.
    Footprint,
    /// The pipeline with `storage.synchronous=FULL` against NORMAL.
    Durability,
    /// Cost per record of a small pipeline against a large one.
    Scale,
    /// A file source into the log and the HTTP sink out of it, batching on and off.
    HttpSink,
    /// Requests and records per second into the webhook source, answered after commit.
    Webhook,
    /// The MQTT source at QoS 0 and 1 against a bare subscriber, on a mosquitto started for it.
    Mqtt,
    /// The JDBC source and sink on SQLite and PostgreSQL, beside bare selects and batched inserts.
    Jdbc,
    /// Worker CPU per `GET /metrics` with 1,000 connectors (200 with --quick).
    Scrape,
    /// One Kafka client producing 100-byte records with acks=all to the Kafka listener.
    KafkaProduce,
    /// One Kafka client reading them back with assign().
    KafkaConsume,
    /// The String pipeline over ten times the lines, with the log kept small while it runs.
    LongRun,
    /// Creating 2,000 connectors, the expanded list over them and create-then-delete beside them.
    Control,
    /// CPU and RSS of 1,000 idle connectors over 30 s.
    Idle,
    /// The same with FileStream connectors: sources on empty files, sinks on silent topics.
    IdleFiles,
    /// `liteconnect test` through a five-transform chain, beside the same chain in a running sink.
    Test,
    /// Plugin programs: a Rust SDK source and a Python one against the built-in verifiable source, and
    /// one Python transformation's cost per record.
    Plugin,
    /// The pipeline with AvroConverter on both sides against the JsonConverter one, and registry reads.
    Avro,
    /// `airbyte-source-faker` into the log through AirbyteSource, beside its READ alone.
    Airbyte,
}

impl Scenario {
    /// The name `--scenario` takes.
    fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }

    async fn run(self, ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
        match self {
            Scenario::Pipeline => pipeline::scenario(ctx, rows).await,
            Scenario::Log => log::scenario(ctx, rows).await,
            Scenario::GroupCommit => group_commit::scenario(ctx, rows).await,
            Scenario::Rest => rest::scenario(ctx, rows).await,
            Scenario::Footprint => footprint::scenario(ctx, rows).await,
            Scenario::Durability => durability::scenario(ctx, rows).await,
            Scenario::Scale => scale::scenario(ctx, rows).await,
            Scenario::HttpSink => http_sink::scenario(ctx, rows).await,
            Scenario::Webhook => webhook::scenario(ctx, rows).await,
            Scenario::Mqtt => mqtt::scenario(ctx, rows).await,
            Scenario::Jdbc => jdbc::scenario(ctx, rows).await,
            Scenario::Scrape => scrape::scenario(ctx, rows).await,
            Scenario::KafkaProduce => kafka_listener::produce_scenario(ctx, rows).await,
            Scenario::KafkaConsume => kafka_listener::consume_scenario(ctx, rows).await,
            Scenario::LongRun => long_run::scenario(ctx, rows).await,
            Scenario::Control => control::scenario(ctx, rows).await,
            Scenario::Idle => idle::scenario(ctx, rows).await,
            Scenario::IdleFiles => idle::files_scenario(ctx, rows).await,
            Scenario::Test => tryout::scenario(ctx, rows).await,
            Scenario::Plugin => plugin::scenario(ctx, rows).await,
            Scenario::Avro => avro::scenario(ctx, rows).await,
            Scenario::Airbyte => airbyte::scenario(ctx, rows).await,
        }
    }
}

/// Benchmarks of the release liteconnect binary against physical-limit baselines.
#[derive(Debug, Parser)]
#[command(name = "liteconnect-bench")]
struct Args {
    /// Runs per measurement; the table shows medians.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A short smoke run: one run, 100,000 lines, 2-second load windows, 200 stored connectors.
    #[arg(long)]
    quick: bool,
    /// Run only these scenarios; repeatable.
    #[arg(long = "scenario", value_name = "NAME", value_enum)]
    scenarios: Vec<Scenario>,
    /// Lines in the pipeline's input file (default 1,000,000; 100,000 with --quick).
    #[arg(long)]
    lines: Option<usize>,
    /// Where to put temporary directories (default: the system's temporary directory).
    #[arg(long)]
    tmp: Option<PathBuf>,
    /// Serve fixed HTTP responses (the REST baseline); used by the benchmark itself.
    #[arg(long, hide = true)]
    serve_baseline: bool,
}

/// Settings derived from the arguments.
#[derive(Clone, Debug)]
struct Settings {
    runs: usize,
    lines: usize,
    window: Duration,
    log_window: Duration,
    connectors: usize,
    stored: usize,
    tmp: PathBuf,
    bin: PathBuf,
    me: PathBuf,
}

/// What scenarios share: the settings, the pipeline's input file, and figures one measured for another.
struct Ctx {
    settings: Settings,
    input: Option<(PathBuf, usize)>,
    _inputs: TempDir,
    /// Median seconds of the default String pipeline and of the SQLite baseline, once measured.
    string_pipeline: Option<(f64, f64)>,
}

impl Ctx {
    fn input(&mut self, lines: usize) -> Res<PathBuf> {
        if let Some((p, n)) = &self.input {
            if *n == lines {
                return Ok(p.clone());
            }
        }
        let path = self._inputs.path().join(format!("input-{lines}.txt"));
        eprintln!(
            "  writing {lines} lines of {LINE_BYTES} bytes to {}",
            path.display()
        );
        pipeline::write_input(&path, lines)?;
        self.input = Some((path.clone(), lines));
        Ok(path)
    }
}

// ----- main ------------------------------------------------------------------------------------------------

/// Runs a scenario's measurement `s.runs` times and prints each run's figures after
/// `  {name} run i/n: `. `describe` gives the figures and the number of failed requests; a run
/// with any ends the scenario with `{failed} {what} failed`.
async fn measured_runs<R, Fut>(
    s: &Settings,
    name: &str,
    what: &str,
    mut one: impl FnMut() -> Fut,
    describe: impl Fn(&R) -> (String, usize),
) -> Res<Vec<R>>
where
    Fut: std::future::Future<Output = Res<R>>,
{
    let mut runs = Vec::new();
    for run in 0..s.runs {
        let r = one().await?;
        let (figures, failed) = describe(&r);
        eprintln!("  {name} run {}/{}: {figures}", run + 1, s.runs);
        if failed > 0 {
            return Err(format!("{failed} {what} failed").into());
        }
        runs.push(r);
    }
    Ok(runs)
}

fn machine() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map(|kb| format!("{:.1} GiB", kb / 1024.0 / 1024.0))
        .unwrap_or_else(|| "unknown".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores ({cpu}), {mem} memory")
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.serve_baseline {
        return match rest::serve_baseline() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    match run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("liteconnect-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Finds the `liteconnect` binary next to this one and derives the settings from the arguments.
fn settings(args: &Args) -> Res<Settings> {
    let me = std::env::current_exe()?;
    let bin = me.with_file_name(format!("liteconnect{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        return Err(format!(
            "{} does not exist: build it first with `cargo build --release` (this tool builds nothing)",
            bin.display()
        )
        .into());
    }
    if let (Ok(b), Ok(m)) = (
        std::fs::metadata(&bin).and_then(|m| m.modified()),
        std::fs::metadata(&me).and_then(|m| m.modified()),
    ) {
        if b + Duration::from_secs(600) < m {
            eprintln!("warning: {} is older than this benchmark; run `cargo build --release` if the sources changed", bin.display());
        }
    }
    let quick = args.quick;
    Ok(Settings {
        runs: if quick { 1 } else { args.runs.max(1) },
        lines: args
            .lines
            .unwrap_or(if quick { 100_000 } else { 1_000_000 }),
        window: Duration::from_secs(if quick { 2 } else { 10 }),
        log_window: Duration::from_secs(if quick { 2 } else { 5 }),
        connectors: 100,
        stored: if quick { 200 } else { 1000 },
        tmp: args.tmp.clone().unwrap_or_else(std::env::temp_dir),
        bin,
        me,
    })
}

fn run(args: Args) -> Res<()> {
    let settings = settings(&args)?;
    // In the order of the list, each once, whatever the order of the arguments.
    let selected: Vec<Scenario> = Scenario::value_variants()
        .iter()
        .copied()
        .filter(|s| args.scenarios.is_empty() || args.scenarios.contains(s))
        .collect();
    let names: Vec<String> = selected.iter().map(|s| s.name()).collect();
    eprintln!(
        "liteconnect-bench: {} on {}",
        settings.bin.display(),
        machine()
    );
    eprintln!(
        "  {} run(s) per figure, {} pipeline lines, scenarios: {}",
        settings.runs,
        settings.lines,
        names.join(", ")
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let inputs = TempDir::new(&settings, "inputs")?;
        let mut ctx = Ctx { settings: settings.clone(), input: None, _inputs: inputs, string_pipeline: None };
        let mut rows = Vec::new();
        for scenario in selected {
            eprintln!("scenario {}", scenario.name());
            let started = Instant::now();
            scenario.run(&mut ctx, &mut rows).await?;
            eprintln!("  ({:.0} s)", started.elapsed().as_secs_f64());
        }
        println!("\nliteconnect-bench — {}; medians of {} run(s)\n", machine(), settings.runs);
        print_table(&rows);
        println!("ratio = liteconnect ÷ baseline (for rates, the fraction of the baseline reached; for times and sizes, how many times the baseline).");
        Ok::<(), Error>(())
    })
}
