//! Transformations and predicates as plugin programs, the Rust SDK, and `liteconnect validate` with a plugin path.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use super::*;
use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transformation_plugin_runs_in_the_source_pipeline() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let all = api
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap()
        .1;
    assert!(
        all.as_array().unwrap().iter().any(|p| p["class"]
            == "com.example.transforms.CelsiusToFahrenheit"
            && p["type"] == "transformation"
            && p["version"] == "1.0.0"),
        "{all}"
    );
    let (status, keys) = api
        .get("/connector-plugins/CelsiusToFahrenheit/config")
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(keys[0]["name"], "field", "{keys}");
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": "200", "transforms": "f", "transforms.f.type": "CelsiusToFahrenheit"}),
        ),
    )
    .await;
    wait_for("200 readings", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s == 200)
    })
    .await;
    bin.terminate();
    let db = dir.path().join("bin.db").display().to_string();
    let (code, out, err) = run_binary(
        dir.path(),
        &[
            "consume",
            "readings",
            "--from-beginning",
            "--max",
            "50",
            "--db",
            &db,
        ],
    );
    assert_eq!(code, 0, "{err}");
    for line in out.lines() {
        let v: Json = serde_json::from_str(line).unwrap();
        let seq = v["seq"].as_f64().unwrap();
        let celsius = ((20.0 + 5.0 * (seq / 10.0).sin()) * 1000.0).round() / 1000.0;
        let fahrenheit = v["reading"].as_f64().unwrap();
        assert!(
            (fahrenheit - (celsius * 9.0 / 5.0 + 32.0)).abs() < 0.01,
            "{line}"
        );
    }
    assert_eq!(out.lines().count(), 50);
}

#[test]
fn liteconnect_validate_checks_a_plugin_connector_offline_with_its_plugin_path() {
    let dir = tempdir();
    let file = dir.path().join("dev.json");
    std::fs::write(
        &file,
        device("dev", "t", json!({"interval.ms": "-3"})).to_string(),
    )
    .unwrap();
    let file = file.display().to_string();
    let path = examples().display().to_string();
    let (code, out, err) = run_binary(dir.path(), &["validate", "--plugin-path", &path, &file]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("interval.ms must be a number of at least 0"),
        "{out}{err}"
    );
    std::fs::write(&file, device("dev", "t", json!({})).to_string()).unwrap();
    let (code, out, err) = run_binary(dir.path(), &["validate", "--plugin-path", &path, &file]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = run_binary(dir.path(), &["validate", &file]);
    assert_ne!(code, 0);
    assert!(
        err.contains("DeviceSourceConnector") || !err.is_empty(),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_predicate_plugin_decides_which_records_a_transformation_sees() {
    let dir = tempdir();
    let bin = start(dir.path(), &[&examples()], "");
    let api = bin.healthy_api().await;
    let all = api
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap()
        .1;
    assert!(
        all.as_array().unwrap().iter().any(
            |p| p["class"] == "com.example.predicates.ReadingAbove" && p["type"] == "predicate"
        ),
        "{all}"
    );
    create_through(
        &api,
        device(
            "dev",
            "readings",
            json!({"count": "100", "transforms": "drop", "transforms.drop.type": "Filter",
                "transforms.drop.predicate": "above", "predicates": "above",
                "predicates.above.type": "ReadingAbove", "predicates.above.threshold": "22"}),
        ),
    )
    .await;
    wait_for("100 readings handled", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s == 100)
    })
    .await;
    bin.terminate();
    let reading = |seq: i64| ((20.0 + 5.0 * (seq as f64 / 10.0).sin()) * 1000.0).round() / 1000.0;
    let expected: Vec<i64> = (1..=100).filter(|s| reading(*s) <= 22.0).collect();
    assert!(
        expected.len() > 20 && expected.len() < 80,
        "{}",
        expected.len()
    );
    assert_eq!(seqs(dir.path(), "readings"), expected);
}

/// The Rust SDK's example source, built with cargo into a target directory of its own (kept between
/// runs), copied into a plugin directory with its manifest.
fn rust_counter_plugin(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target/plugin-sdk");
    let status =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "build",
                "--quiet",
                "--locked",
                "-p",
                "liteconnect-plugin",
                "--example",
                "counter_source",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(root)
            .status()
            .expect("cargo");
    assert!(status.success(), "building the Rust SDK's example");
    let plugin = dir.join("rust-plugins/counter");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::copy(
        target.join("debug/examples/counter_source"),
        plugin.join("counter_source"),
    )
    .unwrap();
    std::fs::write(
        plugin.join("liteconnect-plugin.json"),
        json!({"plugins": [{"class": "com.example.CounterSourceConnector", "type": "source",
            "version": "0.1.0", "command": ["./counter_source"]}]})
        .to_string(),
    )
    .unwrap();
    dir.join("rust-plugins")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_sdk_source_end_to_end() {
    let dir = tempdir();
    let plugins = rust_counter_plugin(dir.path());
    let bin = start(dir.path(), &[&plugins], "");
    let api = bin.healthy_api().await;
    let (status, keys) = api
        .get("/connector-plugins/CounterSource/config")
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(keys[0]["name"], "topic", "{keys}");
    create_through(
        &api,
        json!({"name": "count", "config": {"connector.class": "CounterSource", "topic": "counts",
            "count": "5000", "batch.size": "700"}}),
    )
    .await;
    wait_for("5,000 counts", DEADLINE, || async {
        let o = api.get("/connectors/count/offsets").await.unwrap().1;
        o["offsets"][0]["offset"]["n"]
            .as_i64()
            .filter(|n| *n == 5000)
    })
    .await;
    bin.terminate();
    let db = dir.path().join("bin.db").display().to_string();
    let (code, out, err) = run_binary(
        dir.path(),
        &[
            "consume",
            "counts",
            "--from-beginning",
            "--max",
            "3",
            "--db",
            &db,
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "1\n2\n3\n");
}
