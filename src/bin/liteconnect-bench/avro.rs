//! The Avro scenario: the file → log → file pipeline with Confluent's AvroConverter, then with its
//! JsonSchemaConverter and its ProtobufConverter (with the `protobuf` feature), on both sides against the worker's own Schema Registry, beside the JsonConverter
//! pipeline measured in the same run; and `GET /schemas/ids/{id}` from 32 keep-alive connections against
//! the registry.

use std::sync::Arc;

use serde_json::json;

use crate::pipeline::{pipeline_run, pipeline_run_with, Conv};
use crate::report::{fmt_num, measure, Row, Target};
use crate::rest::load;
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings};

/// The registry converters measured: a name for the report and the class.
const CONVERTERS: &[(&str, &str)] = &[
    ("AvroConverter", "io.confluent.connect.avro.AvroConverter"),
    (
        "JsonSchemaConverter",
        "io.confluent.connect.json.JsonSchemaConverter",
    ),
    #[cfg(feature = "protobuf")]
    (
        "ProtobufConverter",
        "io.confluent.connect.protobuf.ProtobufConverter",
    ),
];

/// Concurrent connections of the registry load.
const CONNS: usize = 32;

/// A loopback port that was free a moment ago, for the worker's registry listener.
fn free_port() -> Res<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// One pipeline run with a registry converter of this class, in seconds.
async fn registry_run(s: &Settings, input: &std::path::Path, class: &'static str) -> Res<f64> {
    let port = free_port()?;
    let listener = format!("http://127.0.0.1:{port}");
    let extra = [("schema.registry.listeners", listener.as_str())];
    Ok(
        pipeline_run_with(s, input, s.lines, Conv::Registry(class, port), &extra)
            .await?
            .seconds,
    )
}

/// Registry reads a second: one schema registered, then `GET /schemas/ids/1` under load.
async fn registry_reads(s: &Settings) -> Res<f64> {
    let dir = TempDir::new(s, "avro-registry")?;
    let port = free_port()?;
    let url = format!("http://127.0.0.1:{port}");
    let w = Worker::spawn(
        s,
        dir.path(),
        &dir.path().join("liteconnect.db"),
        &[("schema.registry.listeners", url.as_str())],
    )
    .await?;
    w.wait_healthy().await?;
    let schema = r#"{"type":"record","name":"Reading","fields":[{"name":"sensor","type":"string"},{"name":"value","type":"double"}]}"#;
    let answer = reqwest::Client::new()
        .post(format!("{url}/subjects/readings-value/versions"))
        .json(&json!({ "schema": schema }))
        .send()
        .await?;
    if !answer.status().is_success() {
        return Err(format!("registering the schema answered {}", answer.status()).into());
    }
    let reads = load(
        &url,
        Arc::new(vec!["/schemas/ids/1".into()]),
        CONNS,
        s.window,
    )
    .await?;
    w.stop()?;
    if reads.errors > 0 {
        return Err(format!("{} registry reads failed", reads.errors).into());
    }
    Ok(reads.rate)
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let input = ctx.input(s.lines)?;
    let n = s.lines as f64;
    let json_seconds = measure("pipeline JSON (s)", s.runs, || {
        pipeline_run(&s, &input, s.lines, Conv::Json, false)
    })
    .await?;
    let lines = fmt_num(n);
    for (name, class) in CONVERTERS {
        let seconds = measure(&format!("pipeline {name} (s)"), s.runs, || {
            registry_run(&s, &input, class)
        })
        .await?;
        rows.push(
            Row::new(
                "avro",
                format!("file → log → file, {name} with the embedded registry, {lines} lines"),
                "records/s",
                n / seconds,
            )
            .baseline("JsonConverter pipeline, same run", n / json_seconds)
            .target(Target::RatioAtLeast(0.6)),
        );
    }
    let reads = measure("registry reads (req/s)", s.runs, || registry_reads(&s)).await?;
    rows.push(
        Row::new(
            "avro",
            format!("GET /schemas/ids/{{id}}, {CONNS} keep-alive connections"),
            "requests/s",
            reads,
        )
        .target(Target::AtLeast(10_000.0)),
    );
    Ok(())
}
