//! The test scenario: records per second through a five-transform chain with `liteconnect test` (offline,
//! JSON lines in, outcomes printed), beside the same chain in a running worker's FileStream sink (the log
//! already holding the records, to the sink's committed offsets). Also the time `liteconnect test` takes
//! for a thousand records, start-up included.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::report::{fmt_num, measure, Row, Target};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings, JSON_CONVERTER};

/// The chain: route, drop a field, add one, cast one, mask one.
fn chain() -> Json {
    json!({
        "transforms": "route,clean,site,cast,mask",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-out",
        "transforms.clean.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
        "transforms.clean.exclude": "card",
        "transforms.site.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.site.static.field": "site",
        "transforms.site.static.value": "edge-1",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "id:string",
        "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
        "transforms.mask.fields": "name",
    })
}

fn sink_config(output: &Path) -> Json {
    let mut config = json!({
        "connector.class": "FileStreamSink",
        "tasks.max": "1",
        "file": output.display().to_string(),
        "topics": "orders",
        "value.converter": JSON_CONVERTER,
        "value.converter.schemas.enable": "false",
    });
    for (k, v) in chain().as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    config
}

fn value(i: usize) -> Json {
    json!({"id": i, "name": format!("customer {i}"), "card": "4111111111111111", "amount": i % 1000})
}

/// Writes `n` records as `liteconnect test --input` reads them, and the same values one per line.
fn write_inputs(dir: &Path, n: usize) -> Res<()> {
    let mut records = std::io::BufWriter::new(std::fs::File::create(dir.join("records.jsonl"))?);
    let mut lines = std::io::BufWriter::new(std::fs::File::create(dir.join("values.txt"))?);
    for i in 0..n {
        let v = value(i);
        writeln!(records, "{}", json!({"topic": "orders", "value": v}))?;
        writeln!(lines, "{v}")?;
    }
    records.flush()?;
    lines.flush()?;
    Ok(())
}

/// Seconds `liteconnect test` takes over the first `n` records (its output thrown away).
fn offline_run(settings: &Settings, dir: &Path, n: usize) -> Res<f64> {
    let connector = dir.join("sink.json");
    std::fs::write(
        &connector,
        json!({"name": "bench", "config": sink_config(&dir.join("never.txt"))}).to_string(),
    )?;
    let input = dir.join(format!("records-{n}.jsonl"));
    if !input.exists() {
        let all = std::fs::read_to_string(dir.join("records.jsonl"))?;
        let mut text: String = all.lines().take(n).collect::<Vec<_>>().join("\n");
        text.push('\n');
        std::fs::write(&input, text)?;
    }
    let started = Instant::now();
    let status = Command::new(&settings.bin)
        .arg("test")
        .arg(&connector)
        .arg("--input")
        .arg(&input)
        .args(["--format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let elapsed = started.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("liteconnect test exited with {status}").into());
    }
    Ok(elapsed)
}

/// Seconds a running worker's FileStream sink with the chain takes over `n` records already in the log.
async fn worker_run(settings: &Settings, inputs: &Path, n: usize) -> Res<f64> {
    let dir = TempDir::new(settings, "tryout")?;
    let db = dir.path().join("liteconnect.db");
    let w = Worker::spawn(settings, dir.path(), &db, &[]).await?;
    w.wait_healthy().await?;
    let source = json!({"connector.class": "FileStreamSource", "tasks.max": "1",
        "file": inputs.join("values.txt").display().to_string(), "topic": "orders"});
    w.create("source", source).await?;
    w.wait_for(
        "the source to store every line",
        Duration::from_millis(20),
        || async {
            let (s, body) = w.api.get("/topics/orders/partitions/0/offsets").await?;
            Ok(s == 200 && body["end_offset"].as_i64().unwrap_or(0) >= n as i64)
        },
    )
    .await?;
    let output = dir.path().join("out.txt");
    let started = Instant::now();
    w.create("sink", sink_config(&output)).await?;
    w.wait_sink_committed("sink", Duration::from_millis(5), n as i64)
        .await?;
    let elapsed = started.elapsed().as_secs_f64();
    w.stop()?;
    let written = std::fs::read_to_string(&output)?;
    let first = written.lines().next().unwrap_or_default();
    if written.lines().count() != n || first.contains("card") || !first.contains("edge-1") {
        return Err(format!(
            "the sink wrote {} lines, the first {first}",
            written.lines().count()
        )
        .into());
    }
    Ok(elapsed)
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let n = (s.lines / 10).max(1_000);
    let inputs = TempDir::new(&s, "tryout-inputs")?;
    write_inputs(inputs.path(), n)?;
    let offline = measure("liteconnect test (s)", s.runs, || async {
        offline_run(&s, inputs.path(), n)
    })
    .await?;
    let thousand = measure("liteconnect test, 1,000 records (s)", s.runs, || async {
        offline_run(&s, inputs.path(), 1_000)
    })
    .await?;
    let worker = measure("the chain in a worker's sink (s)", s.runs, || {
        worker_run(&s, inputs.path(), n)
    })
    .await?;
    let records = fmt_num(n as f64);
    rows.push(
        Row::new(
            "test",
            format!("liteconnect test, five transforms, JSON, {records} records"),
            "records/s",
            n as f64 / offline,
        )
        .baseline(
            "the same chain in a running FileStream sink",
            n as f64 / worker,
        ),
    );
    rows.push(
        Row::new(
            "test",
            "liteconnect test over 1,000 records, start-up included",
            "ms",
            thousand * 1000.0,
        )
        .target(Target::Below(1000.0)),
    );
    Ok(())
}
