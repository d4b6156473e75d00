//! The plugin scenario: sources that run as separate programs (`plugin.path`) against the built-in
//! verifiable source in the same worker: the Rust SDK's counter source, the Python SDK's simulated device
//! beside Python itself writing the same protocol lines to /dev/null, and the cost per record of one Python
//! transformation in the pipeline.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::log::connector_rate;
use crate::report::{fmt_num, median, Row, Target};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings, VERIFIABLE_SOURCE};

/// The repository's example plugins.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plugins")
}

/// A plugin directory under `dir` with the Rust SDK's counter source, built beside the benchmark
/// (`cargo build --release -p liteconnect-plugin --example counter_source`).
fn rust_plugin(settings: &Settings, dir: &Path) -> Res<PathBuf> {
    let built = settings
        .bin
        .parent()
        .map(|d| d.join("examples/counter_source"))
        .filter(|p| p.is_file())
        .ok_or("the plugin scenario needs the Rust SDK's example: cargo build --release -p liteconnect-plugin --example counter_source")?;
    let plugin = dir.join("rust/counter");
    std::fs::create_dir_all(&plugin)?;
    std::fs::copy(built, plugin.join("counter_source"))?;
    let manifest = json!({"plugins": [{"class": "com.example.CounterSourceConnector", "type": "source",
        "version": "0.1.0", "command": ["./counter_source"]}]});
    std::fs::write(plugin.join("liteconnect-plugin.json"), manifest.to_string())?;
    Ok(dir.join("rust"))
}

/// Python building the device source's records and writing the protocol lines to /dev/null, with no
/// worker: the rate Python itself allows. Prints records/s.
const PYTHON_BASELINE: &str = r#"
import json, os, sys, time
sys.path[:0] = [sys.argv[1], os.path.join(sys.argv[1], "..", "..", "..", "sdk", "python")]
from device_source import DeviceSourceTask
class Ctx:
    def offset(self, p): return None
    def idle(self, ms): pass
task = DeviceSourceTask()
task.start({"topic": "t", "interval.ms": "0", "batch.size": "1000"}, Ctx())
n, end = 0, time.monotonic() + float(sys.argv[2])
start = time.monotonic()
with open(os.devnull, "w") as out:
    while time.monotonic() < end:
        records = task.poll(Ctx())
        out.write(json.dumps({"type": "records", "records": [r.to_json() for r in records]}, separators=(",", ":")) + "\n")
        n += len(records)
print(n / (time.monotonic() - start))
"#;

fn python_baseline(window: Duration) -> Res<f64> {
    let dir = examples().join("device-source");
    let out = std::process::Command::new("python3")
        .args(["-c", PYTHON_BASELINE])
        .arg(&dir)
        .arg(window.as_secs_f64().to_string())
        .output()
        .map_err(|e| format!("Cannot run python3: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().parse().map_err(|_| {
        format!(
            "python3 baseline: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into()
    })
}

struct PluginRun {
    verifiable: f64,
    rust: f64,
    python: f64,
    python_bare: f64,
    plain: f64,
    transformed: f64,
}

/// Stops the connector `name` and waits until its tasks are gone.
async fn stop(w: &Worker, name: &str) -> Res<()> {
    w.expect(
        reqwest::Method::PUT,
        &format!("/connectors/{name}/stop"),
        204,
    )
    .await?;
    w.wait_for("the source to stop", Duration::from_millis(20), || async {
        let (_, st) = w.api.get(&format!("/connectors/{name}/status")).await?;
        Ok(st["tasks"].as_array().is_some_and(|t| t.is_empty()))
    })
    .await
}

async fn plugin_run(s: &Settings) -> Res<PluginRun> {
    let dir = TempDir::new(s, "plugin")?;
    let rust = rust_plugin(s, dir.path())?;
    let path = format!("{},{}", rust.display(), examples().display());
    let db = dir.path().join("liteconnect.db");
    let w = Worker::spawn(s, dir.path(), &db, &[("plugin.path", &path)]).await?;
    w.wait_healthy().await?;
    let window = s.log_window;
    let verifiable =
        json!({"connector.class": VERIFIABLE_SOURCE, "topic": "v", "throughput": "-1"});
    let verifiable = connector_rate(&w, window, "v", verifiable, ("seqno", 1)).await?;
    stop(&w, "v").await?;
    let counter = |topic: &str| json!({"connector.class": "CounterSource", "topic": topic, "batch.size": "1000"});
    let rust = connector_rate(&w, window, "rust", counter("r"), ("n", 0)).await?;
    stop(&w, "rust").await?;
    let device = json!({"connector.class": "DeviceSource", "topic": "p", "interval.ms": "0", "batch.size": "1000"});
    let python = connector_rate(&w, window, "python", device, ("seq", 0)).await?;
    stop(&w, "python").await?;
    // One transformation plugin on the Rust source: the difference per record is its cost.
    let plain = connector_rate(&w, window, "plain", counter("c1"), ("n", 0)).await?;
    stop(&w, "plain").await?;
    let mut with = counter("c2");
    with["transforms"] = json!("f");
    with["transforms.f.type"] = json!("CelsiusToFahrenheit");
    let transformed = connector_rate(&w, window, "transformed", with, ("n", 0)).await?;
    stop(&w, "transformed").await?;
    w.stop()?;
    let python_bare = python_baseline(window)?;
    Ok(PluginRun {
        verifiable,
        rust,
        python,
        python_bare,
        plain,
        transformed,
    })
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let mut runs = Vec::new();
    for i in 0..s.runs {
        let r = plugin_run(&s).await?;
        eprintln!(
            "  plugin run {}/{}: verifiable {}, Rust plugin {}, Python plugin {} (Python alone {}), with a Python transformation {} against {} records/s",
            i + 1,
            s.runs,
            fmt_num(r.verifiable),
            fmt_num(r.rust),
            fmt_num(r.python),
            fmt_num(r.python_bare),
            fmt_num(r.transformed),
            fmt_num(r.plain)
        );
        runs.push(r);
    }
    let m = |f: fn(&PluginRun) -> f64| median(runs.iter().map(f).collect());
    let verifiable = m(|r| r.verifiable);
    rows.push(Row::new(
        "plugin",
        "verifiable source → log (built in, same worker)",
        "records/s",
        verifiable,
    ));
    rows.push(
        Row::new(
            "plugin",
            "Rust SDK counter source → log",
            "records/s",
            m(|r| r.rust),
        )
        .baseline("built-in verifiable source", verifiable)
        .target(Target::RatioAtLeast(0.5)),
    );
    rows.push(
        Row::new(
            "plugin",
            "Python SDK device source → log",
            "records/s",
            m(|r| r.python),
        )
        .baseline(
            "Python writing the same lines to /dev/null",
            m(|r| r.python_bare),
        ),
    );
    let cost = median(
        runs.iter()
            .map(|r| (1.0 / r.transformed - 1.0 / r.plain) * 1e6)
            .collect(),
    );
    rows.push(Row::new(
        "plugin",
        "one Python transformation plugin, cost per record",
        "µs",
        cost,
    ));
    Ok(())
}
