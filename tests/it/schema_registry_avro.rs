//! AvroConverter's registry client beyond the basics: a registry over HTTPS with a PEM truststore
//! (`schema.registry.ssl.*`), `use.latest.version` with `latest.compatibility.strict`, and schemas with
//! references read by ID.

use base64::Engine;
use serde_json::{json, Value as Json};

use crate::common::certs::Ca;
use crate::common::{self, DEADLINE};
use crate::schema_registry::RegistryWorker;

const AVRO: &str = "io.confluent.connect.avro.AvroConverter";

/// A FileStreamSource on `file` into `topic` whose lines become `Struct{line=…}` (HoistField), written
/// with AvroConverter against `registry` with `extra` converter keys.
fn struct_source(
    name: &str,
    file: &std::path::Path,
    topic: &str,
    registry: &str,
    extra: &[(&str, &str)],
) -> Json {
    let mut c = common::file_source(name, file, topic);
    let config = &mut c["config"];
    config["transforms"] = json!("hoist");
    config["transforms.hoist.type"] = json!("org.apache.kafka.connect.transforms.HoistField$Value");
    config["transforms.hoist.field"] = json!("line");
    config["value.converter"] = json!(AVRO);
    config["value.converter.schema.registry.url"] = json!(registry);
    for (k, v) in extra {
        config[format!("value.converter.{k}")] = json!(v);
    }
    c
}

/// The stored values of `topic`'s partition 0, as bytes, once there are `n`.
async fn stored_values(r: &RegistryWorker, topic: &str, n: usize) -> Vec<Vec<u8>> {
    common::wait_for(&format!("{n} records in {topic}"), DEADLINE, || async {
        let answer = r
            .api
            .request(
                reqwest::Method::GET,
                &format!("/topics/{topic}/partitions/0/records?offset=0&timeout=100"),
            )
            .header("Accept", "application/vnd.kafka.binary.v2+json")
            .send()
            .await
            .ok()?;
        let body: Json = answer.json().await.ok()?;
        let values: Vec<Vec<u8>> = body
            .as_array()?
            .iter()
            .filter_map(|r| r["value"].as_str())
            .map(|v| base64::engine::general_purpose::STANDARD.decode(v).unwrap())
            .collect();
        (values.len() >= n).then_some(values)
    })
    .await
}

fn schema_id(framed: &[u8]) -> i64 {
    assert_eq!(framed[0], 0, "the magic byte");
    i64::from(u32::from_be_bytes([
        framed[1], framed[2], framed[3], framed[4],
    ]))
}

/// `use.latest.version=true` with `auto.register.schemas=false`: records are written with the subject's
/// latest schema (its ID, its extra optional field null), nothing is registered; with
/// `latest.compatibility.strict` a latest schema that cannot read the record's fails the task, saying so.
#[tokio::test(flavor = "multi_thread")]
async fn use_latest_version_writes_with_the_subjects_latest_schema() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let latest = r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"line","type":"string"},{"name":"note","type":["null","string"],"default":null}]}"#;
    let id = r.register("lines-value", latest).await;
    let file = dir.path().join("in.txt");
    common::append_lines(&file, ["first".to_string(), "second".to_string()]);
    let keys = [
        ("auto.register.schemas", "false"),
        ("use.latest.version", "true"),
    ];
    common::create_through(
        &r.api,
        struct_source("latest", &file, "lines", &r.registry, &keys),
    )
    .await;
    let values = stored_values(&r, "lines", 2).await;
    assert_eq!(
        values.iter().map(|v| schema_id(v)).collect::<Vec<_>>(),
        vec![id, id]
    );
    // line "first" (length 5 zig-zag = 10), then the union's null branch (index 0).
    assert_eq!(&values[0][5..], b"\x0afirst\x00", "{values:?}");
    let (_, versions) = r.get("/subjects/lines-value/versions").await;
    assert_eq!(versions, json!([1]), "nothing registered");
    // A sink reads them back with the latest schema.
    let sink_file = dir.path().join("out.txt");
    let mut sink = common::file_sink("back", &sink_file, "lines");
    sink["config"]["value.converter"] = json!(AVRO);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink's 2 lines", DEADLINE, || async {
        let l = common::lines(&sink_file);
        (l.len() >= 2).then_some(l)
    })
    .await;
    assert_eq!(lines[0], "Struct{line=first}", "{lines:?}");
    // A latest schema with a required field the record lacks cannot read it.
    let strict = r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"line","type":"string"},{"name":"site","type":"string"}]}"#;
    r.register("strict-value", strict).await;
    common::create_through(
        &r.api,
        struct_source("strict", &file, "strict", &r.registry, &keys),
    )
    .await;
    let trace = common::wait_for("the strict task to fail", DEADLINE, || async {
        let (_, status) = r.api.get("/connectors/strict/status").await.ok()?;
        let task = &status["tasks"][0];
        (task["state"] == "FAILED").then(|| task["trace"].as_str().unwrap_or_default().to_string())
    })
    .await;
    assert!(trace.contains("cannot read the record's schema"), "{trace}");
    assert!(trace.contains("site"), "{trace}");
    r.stop().await;
}

/// A schema whose record type comes from a reference (`ex.Inner` in its own subject) is read by ID: the
/// converter fetches the referenced version and parses the schema after it.
#[tokio::test(flavor = "multi_thread")]
async fn avro_converter_reads_schemas_with_references() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let inner =
        r#"{"type":"record","name":"Inner","namespace":"ex","fields":[{"name":"n","type":"int"}]}"#;
    r.register("ex.Inner", inner).await;
    let outer = r#"{"type":"record","name":"Outer","namespace":"ex","fields":[{"name":"inner","type":"ex.Inner"}]}"#;
    let (status, body) = r
        .post(
            "/subjects/refs-value/versions",
            json!({"schema": outer, "references": [{"name": "ex.Inner", "subject": "ex.Inner", "version": 1}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let id = u32::try_from(body["id"].as_i64().unwrap()).unwrap();
    let mut framed = vec![0];
    framed.extend_from_slice(&id.to_be_bytes());
    framed.push(42); // n = 21, zig-zag
    let value = base64::engine::general_purpose::STANDARD.encode(&framed);
    let answer = r
        .api
        .request(reqwest::Method::POST, "/topics/refs")
        .header("Content-Type", "application/vnd.kafka.binary.v2+json")
        .body(json!({"records": [{"value": value}]}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200, "{:?}", answer.text().await);
    let sink_file = dir.path().join("out.txt");
    let mut sink = common::file_sink("refs", &sink_file, "refs");
    sink["config"]["value.converter"] = json!(AVRO);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink's line", DEADLINE, || async {
        let l = common::lines(&sink_file);
        (!l.is_empty()).then_some(l)
    })
    .await;
    assert_eq!(lines, vec!["Struct{inner=Struct{n=21}}".to_string()]);
    r.stop().await;
}

/// A registry served over HTTPS: AvroConverter trusts its certificate through
/// `schema.registry.ssl.truststore.location` (PEM); without it the task fails naming the registry.
#[tokio::test(flavor = "multi_thread")]
async fn avro_converter_reaches_a_registry_over_https_with_a_pem_truststore() {
    let dir = common::tempdir();
    let ca = Ca::new("registry CA");
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    let truststore = dir.path().join("ca.pem");
    std::fs::write(&truststore, ca.pem()).unwrap();
    let r = RegistryWorker::launch_tls(dir.path(), &cert, &key).await;
    assert!(r.registry.starts_with("https://"), "{}", r.registry);
    let file = dir.path().join("in.txt");
    common::append_lines(&file, ["first".to_string()]);
    let trusting = [(
        "schema.registry.ssl.truststore.location",
        truststore.to_str().unwrap(),
    )];
    common::create_through(
        &r.api,
        struct_source("trusting", &file, "tls", &r.registry, &trusting),
    )
    .await;
    let values = stored_values(&r, "tls", 1).await;
    assert_eq!(&values[0][5..], b"\x0afirst");
    common::create_through(
        &r.api,
        struct_source("untrusting", &file, "plain", &r.registry, &[]),
    )
    .await;
    let trace = common::wait_for("the untrusting task to fail", DEADLINE, || async {
        let (_, status) = r.api.get("/connectors/untrusting/status").await.ok()?;
        let task = &status["tasks"][0];
        (task["state"] == "FAILED").then(|| task["trace"].as_str().unwrap_or_default().to_string())
    })
    .await;
    assert!(trace.contains("cannot be reached"), "{trace}");
    r.stop().await;
}
