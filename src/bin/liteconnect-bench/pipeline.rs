//! The pipeline scenario: a file source into the log and a file sink out of it, against a bare SQLite
//! insert and a buffered line copy. The durability and scale scenarios run it too.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::baseline::{line_copy_baseline, read_lines, sqlite_insert_baseline};
use crate::report::{fmt_num, measure, Row, Target};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings, JSON_CONVERTER, LINE_BYTES};

pub(crate) fn write_input(path: &Path, lines: usize) -> Res<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let filler = "x".repeat(LINE_BYTES);
    for i in 0..lines {
        let head = format!("{i:010} ");
        out.write_all(head.as_bytes())?;
        out.write_all(&filler.as_bytes()[..LINE_BYTES - 1 - head.len()])?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

fn same_contents(a: &Path, b: &Path) -> Res<bool> {
    let (mut fa, mut fb) = (
        BufReader::with_capacity(1 << 20, File::open(a)?),
        BufReader::with_capacity(1 << 20, File::open(b)?),
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let na = fa.read(&mut ba)?;
        if na == 0 {
            return Ok(fb.read(&mut bb)? == 0);
        }
        fb.read_exact(&mut bb[..na])
            .map_err(|_| "the output is shorter than the input")?;
        if ba[..na] != bb[..na] {
            return Ok(false);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Conv {
    String,
    Json,
    /// A registry converter (this class) against the worker's own Schema Registry, on this port.
    Registry(&'static str, u16),
}

fn converter_overrides(conv: Conv, config: &mut Json) {
    match conv {
        Conv::String => {}
        Conv::Json => {
            config["value.converter"] = json!(JSON_CONVERTER);
            config["value.converter.schemas.enable"] = json!("true");
        }
        Conv::Registry(class, port) => {
            config["value.converter"] = json!(class);
            config["value.converter.schema.registry.url"] =
                json!(format!("http://127.0.0.1:{port}"));
        }
    }
}

/// One pipeline run: a file source into the log and a file sink out of it. Returns seconds from creating
/// the connectors to the last line written with the sink's offset committed at the end.
pub(crate) async fn pipeline_run(
    settings: &Settings,
    input: &Path,
    lines: usize,
    conv: Conv,
    full_sync: bool,
) -> Res<f64> {
    let extra: &[(&str, &str)] = if full_sync {
        &[("storage.synchronous", "FULL")]
    } else {
        &[]
    };
    Ok(pipeline_run_with(settings, input, lines, conv, extra)
        .await?
        .seconds)
}

/// What one pipeline run measured.
pub(crate) struct PipelineRun {
    /// From creating the connectors to the last line written with the sink's offset committed.
    pub(crate) seconds: f64,
    /// The database file and its write-ahead log at the end, in bytes.
    pub(crate) db_bytes: u64,
}

/// [`pipeline_run`] with these worker settings added.
pub(crate) async fn pipeline_run_with(
    settings: &Settings,
    input: &Path,
    lines: usize,
    conv: Conv,
    extra: &[(&str, &str)],
) -> Res<PipelineRun> {
    let dir = TempDir::new(settings, "pipeline")?;
    let db = dir.path().join("liteconnect.db");
    let w = Worker::spawn(settings, dir.path(), &db, extra).await?;
    w.wait_healthy().await?;
    let output = dir.path().join("out.txt");
    let input_len = std::fs::metadata(input)?.len();
    let mut sink = json!({"connector.class": "FileStreamSink", "tasks.max": "1", "file": output.display().to_string(), "topics": "pipe"});
    let mut source = json!({"connector.class": "FileStreamSource", "tasks.max": "1", "file": input.display().to_string(), "topic": "pipe"});
    converter_overrides(conv, &mut sink);
    converter_overrides(conv, &mut source);

    let started = Instant::now();
    w.create("sink", sink).await?;
    w.create("source", source).await?;
    w.wait_for(
        "the output file to be complete",
        Duration::from_millis(10),
        || async { Ok(std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0) >= input_len) },
    )
    .await?;
    w.wait_sink_committed("sink", Duration::from_millis(5), lines as i64)
        .await?;
    let elapsed = started.elapsed().as_secs_f64();
    w.stop()?;
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let db_bytes = size(&db) + size(&dir.path().join("liteconnect.db-wal"));
    if !same_contents(input, &output)? {
        return Err("the sink's output differs from the input".into());
    }
    Ok(PipelineRun {
        seconds: elapsed,
        db_bytes,
    })
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let input = ctx.input(s.lines)?;
    let n = s.lines as f64;
    let values = read_lines(&input)?;
    let sqlite = measure("bare SQLite insert (s)", s.runs, || async {
        sqlite_insert_baseline(&s, &values, None, false)
    })
    .await?;
    drop(values);
    let copy = measure("buffered line copy (s)", s.runs, || async {
        line_copy_baseline(&s, &input)
    })
    .await?;
    let string = measure("pipeline String (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::String, false)
    })
    .await?;
    let json = measure("pipeline JSON (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::Json, false)
    })
    .await?;
    ctx.string_pipeline = Some((string, sqlite));
    let lines = fmt_num(n);
    rows.push(
        Row::new(
            "pipeline",
            format!("file → log → file, StringConverter, {lines} lines"),
            "records/s",
            n / string,
        )
        .baseline("bare SQLite insert", n / sqlite)
        .target(Target::AtLeast(400_000.0))
        .target(Target::RatioAtLeast(0.7)),
    );
    rows.push(
        Row::new(
            "pipeline",
            "same, as MB/s of input",
            "MB/s",
            n * LINE_BYTES as f64 / string / 1e6,
        )
        .baseline("buffered line copy", n * LINE_BYTES as f64 / copy / 1e6),
    );
    rows.push(
        Row::new(
            "pipeline",
            format!("file → log → file, JsonConverter schemas.enable, {lines} lines"),
            "records/s",
            n / json,
        )
        .baseline("bare SQLite insert", n / sqlite)
        .target(Target::AtLeast(200_000.0)),
    );
    Ok(())
}
