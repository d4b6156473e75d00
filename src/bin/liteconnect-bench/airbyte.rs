//! The airbyte scenario: records per second from a real Airbyte source (`airbyte-source-faker`, installed
//! by `scripts/install-test-deps`) into the local log through `AirbyteSource`, beside the same source's
//! READ on its own with its output read and thrown away (the source's own speed is the ceiling). Both
//! rates run from the first record to the last, so the Python start-up (and the connector's SPEC and
//! DISCOVER before its READ) is left out of both.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::mqtt::stored;
use crate::report::{fmt_num, median, Row};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings};

/// The faker's users read per run.
const USERS: i64 = 20_000;

/// The source's config: `USERS` users in slices of 1,000, one process.
fn faker_config() -> Json {
    json!({"count": USERS, "seed": 1, "records_per_slice": 1000, "always_updated": false, "parallelism": 1})
}

/// `source-faker` from the venv `scripts/install-test-deps` makes.
fn faker() -> Res<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-deps/airbyte-faker/bin/source-faker");
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the airbyte scenario needs {}: run scripts/install-test-deps",
            path.display()
        )
        .into())
    }
}

/// The catalog of the `users` stream in full refresh, from the source's own DISCOVER.
fn users_catalog(faker: &Path, config: &Path) -> Res<Json> {
    let out = Command::new(faker)
        .arg("discover")
        .arg("--config")
        .arg(config)
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let catalog: Json = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .find(|m| m["type"] == "CATALOG")
        .ok_or_else(|| format!("source-faker discover printed no CATALOG: {text}"))?;
    let users = catalog["catalog"]["streams"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "users"))
        .ok_or("source-faker's catalog has no users stream")?;
    Ok(
        json!({"streams": [{"stream": users, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}),
    )
}

/// The source's READ alone, its output read line by line and dropped: RECORD lines per second from the
/// first to the last.
fn bare_rate(faker: &Path, dir: &Path) -> Res<f64> {
    let config = dir.join("faker.json");
    std::fs::write(&config, faker_config().to_string())?;
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, users_catalog(faker, &config)?.to_string())?;
    let mut child = Command::new(faker)
        .arg("read")
        .arg("--config")
        .arg(&config)
        .arg("--catalog")
        .arg(&catalog)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (mut first, mut last, mut n) = (None, Instant::now(), 0i64);
    for line in BufReader::new(stdout).lines() {
        if line?.starts_with("{\"type\":\"RECORD\"") {
            first.get_or_insert_with(Instant::now);
            last = Instant::now();
            n += 1;
        }
    }
    child.wait()?;
    let first = first.ok_or("source-faker read printed no RECORD")?;
    Ok((n - 1) as f64 / (last - first).as_secs_f64())
}

/// `AirbyteSource` on the same READ: records stored per second from the first commit to the last.
async fn worker_rate(s: &Settings, faker: &Path, dir: &Path) -> Res<f64> {
    let db = dir.join("liteconnect.db");
    let w = Worker::spawn(s, dir, &db, &[]).await?;
    w.wait_healthy().await?;
    let config = json!({
        "connector.class": "AirbyteSource",
        "airbyte.command": faker.display().to_string(),
        "airbyte.config": faker_config().to_string(),
        "airbyte.streams": "users",
        "airbyte.sync.mode": "full_refresh",
        "airbyte.sync.interval.ms": "3600000",
        "topic.prefix": "faker.",
    });
    w.create("faker", config).await?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut first: Option<(Instant, i64)> = None;
    let done = loop {
        let n = stored(&w, "faker.users").await?;
        let now = Instant::now();
        if n > 0 && first.is_none() {
            first = Some((now, n));
        }
        if n >= USERS {
            break now;
        }
        if now > deadline {
            return Err(format!("the faker's users did not reach the log: {n} of {USERS}").into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    w.stop()?;
    let (first, first_count) = first.ok_or("no record")?;
    Ok((USERS - first_count) as f64 / (done - first).as_secs_f64().max(1e-3))
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let faker = faker()?;
    let (mut worker, mut bare) = (Vec::new(), Vec::new());
    for i in 0..s.runs {
        let dir = TempDir::new(&s, "airbyte")?;
        let w = worker_rate(&s, &faker, dir.path()).await?;
        let f = faker.clone();
        let d = dir.path().to_path_buf();
        let b = tokio::task::spawn_blocking(move || bare_rate(&f, &d)).await??;
        eprintln!(
            "  airbyte run {}/{}: AirbyteSource {} records/s, source-faker alone {} records/s",
            i + 1,
            s.runs,
            fmt_num(w),
            fmt_num(b)
        );
        worker.push(w);
        bare.push(b);
    }
    rows.push(
        Row::new(
            "airbyte",
            "source-faker users → log through AirbyteSource (20,000 records)",
            "records/s",
            median(worker),
        )
        .baseline(
            "the same READ alone, its output read and dropped",
            median(bare),
        ),
    );
    Ok(())
}
