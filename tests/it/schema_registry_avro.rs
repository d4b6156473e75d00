//! AvroConverter's registry client beyond the basics: a registry over HTTPS with a PEM truststore
//! (`schema.registry.ssl.*`), `use.latest.version` with `latest.compatibility.strict`, schemas with
//! references read by ID, and enums and fixed types from Confluent's serializer read and written back
//! (`enhanced.avro.schema.support`).

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

/// Bytes from their hex text.
#[cfg(feature = "kafka-listener")]
fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// An AvroConverter built as a worker builds it, against `registry` with `extra` keys.
#[cfg(feature = "kafka-listener")]
fn avro_converter(
    registry: &str,
    extra: &[(&str, &str)],
) -> std::sync::Arc<dyn liteconnect::plugins::Converter> {
    let mut config = std::collections::BTreeMap::new();
    config.insert("schema.registry.url".to_string(), registry.to_string());
    for (k, v) in extra {
        config.insert((*k).to_string(), (*v).to_string());
    }
    liteconnect::plugins::new_converter(AVRO, &config, false).unwrap()
}

/// What an AvroConverter with `extra` keys writes to `topic` of each record it reads from `from`.
#[cfg(feature = "kafka-listener")]
fn read_and_write(
    registry: &str,
    extra: &[(&str, &str)],
    from: &str,
    topic: &str,
    records: &[Vec<u8>],
) -> Vec<Vec<u8>> {
    let converter = avro_converter(registry, extra);
    records
        .iter()
        .map(|bytes| {
            let read = converter.to_connect(from, Some(bytes)).unwrap();
            converter
                .from_connect(topic, read.schema.as_deref(), &read.value)
                .unwrap()
                .unwrap()
        })
        .collect()
}

/// Confluent's AvroSerializer produces records whose schema has an enum and a fixed type through the
/// Kafka listener. A FileStreamSink with AvroConverter decodes them (the enum as its symbol, the fixed
/// type as its bytes). AvroConverter writes what it reads back: with `enhanced.avro.schema.support` and
/// `connect.meta.data=false` under the very schema and ID the serializer registered, byte for byte; with
/// the Connect metadata under a schema of its own, still with the enum and the fixed type, which a
/// second pass reads and writes again under the same ID; without enhanced support the enum is written
/// as a string.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn avro_enums_and_fixed_types_from_confluents_serializer_are_read_and_written_back() {
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    let produced = crate::schema_registry::python(
        "schema_registry_avro_enum.py",
        &[&r.registry, &bootstrap, "payments"],
    )
    .await;
    let id = produced["id"].as_i64().unwrap();
    let payloads: Vec<Vec<u8>> = produced["payloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| unhex(h.as_str().unwrap()))
        .collect();
    let sink_file = dir.path().join("payments.txt");
    let mut sink = common::file_sink("payments-out", &sink_file, "payments");
    sink["config"]["value.converter"] = json!(AVRO);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink's 2 lines", DEADLINE, || async {
        let l = common::lines(&sink_file);
        (l.len() >= 2).then_some(l)
    })
    .await;
    assert_eq!(
        lines,
        [
            "Struct{id=1,status=PAID,digest=3q2+7w==}",
            "Struct{id=2,status=SHIPPED,digest=AAECAw==}"
        ]
    );
    let stored = stored_values(&r, "payments", 2).await;
    assert_eq!(stored, payloads, "stored as produced");

    let registry = r.registry.clone();
    let (copies, enriched, again, strings) = tokio::task::spawn_blocking(move || {
        let enhanced = [("enhanced.avro.schema.support", "true")];
        let bare = [
            ("enhanced.avro.schema.support", "true"),
            ("connect.meta.data", "false"),
        ];
        let copies = read_and_write(&registry, &bare, "payments", "copies", &stored);
        let enriched = read_and_write(&registry, &enhanced, "payments", "enriched", &stored);
        let again = read_and_write(&registry, &enhanced, "enriched", "again", &enriched);
        let strings = read_and_write(&registry, &[], "payments", "strings", &stored);
        (copies, enriched, again, strings)
    })
    .await
    .unwrap();
    assert_eq!(copies, payloads, "the serializer's ID and bytes");
    let (_, latest) = r.get("/subjects/copies-value/versions/latest").await;
    assert_eq!(latest["id"], id, "{latest}");

    let enriched_id = schema_id(&enriched[0]);
    assert_ne!(
        enriched_id, id,
        "the Connect metadata makes a schema of its own"
    );
    assert_eq!(&enriched[0][5..], &payloads[0][5..], "the same Avro body");
    assert_eq!(again, enriched, "read and written again: the same ID");
    let (_, schema) = r.get(&format!("/schemas/ids/{enriched_id}")).await;
    let schema: Json = serde_json::from_str(schema["schema"].as_str().unwrap()).unwrap();
    let status = &schema["fields"][1]["type"];
    assert_eq!(status["type"], "enum", "{schema}");
    assert_eq!(
        status["symbols"],
        json!(["NEW", "PAID", "SHIPPED"]),
        "{schema}"
    );
    assert_eq!(schema["fields"][2]["type"]["type"], "fixed", "{schema}");
    assert_eq!(schema["fields"][2]["type"]["size"], 4, "{schema}");

    // Without enhanced support, as Confluent's: the enum written as a string, the fixed type as fixed.
    let (_, schema) = r
        .get(&format!("/schemas/ids/{}", schema_id(&strings[0])))
        .await;
    let schema: Json = serde_json::from_str(schema["schema"].as_str().unwrap()).unwrap();
    assert_eq!(schema["fields"][1]["type"]["type"], "string", "{schema}");
    assert_eq!(schema["fields"][2]["type"]["type"], "fixed", "{schema}");
    // id 1 (zig-zag 2), "PAID" (length 4, zig-zag 8), then the 4 fixed bytes.
    assert_eq!(&strings[0][5..], b"\x02\x08PAID\xde\xad\xbe\xef");
    r.stop().await;
}

/// A value without a schema is written under Confluent's `io.confluent.connect.avro.Anything` schema,
/// registered under the topic's subject, and read back as a value without a schema.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn avro_converter_writes_values_without_a_schema_under_confluents_anything_schema() {
    use liteconnect::data::Value;
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let registry = r.registry.clone();
    let value = Value::Map(vec![
        (Value::String("n".into()), Value::Int64(3)),
        (
            Value::String("tags".into()),
            Value::Array(vec![Value::String("a".into()), Value::Boolean(true)]),
        ),
    ]);
    let sent = value.clone();
    let (written, read) = tokio::task::spawn_blocking(move || {
        let converter = avro_converter(&registry, &[]);
        let written = converter
            .from_connect("loose", None, &sent)
            .unwrap()
            .unwrap();
        let read = converter.to_connect("loose", Some(&written)).unwrap();
        (written, read)
    })
    .await
    .unwrap();
    assert!(read.schema.is_none(), "{:?}", read.schema);
    assert_eq!(read.value, value);
    let (_, latest) = r.get("/subjects/loose-value/versions/latest").await;
    assert_eq!(latest["id"], schema_id(&written), "{latest}");
    let schema: Json = serde_json::from_str(latest["schema"].as_str().unwrap()).unwrap();
    assert_eq!(schema["name"], "Anything", "{schema}");
    assert_eq!(schema["namespace"], "io.confluent.connect.avro", "{schema}");
    r.stop().await;
}

/// Behind the registry's basic auth the converter's credentials come from `basic.auth.user.info`
/// (`basic.auth.credentials.source=USER_INFO`) or from the URL's user and password (`URL`, Confluent's
/// default); without them, or with a wrong password, the record fails with the registry's 401, and no
/// message shows a password.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn avro_converter_authenticates_with_user_info_or_the_credentials_in_its_url() {
    use liteconnect::data::Value;
    let dir = common::tempdir();
    let creds = dir.path().join("creds.properties");
    std::fs::write(&creds, "alice: s3cret\n").unwrap();
    let creds = creds.display().to_string();
    let r = RegistryWorker::start(
        dir.path(),
        &[
            (
                "rest.extension.classes",
                "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
            ),
            ("rest.basic.auth.credentials.file", &creds),
        ],
    )
    .await;
    let anonymous = common::wait_for("the registry to answer", DEADLINE, || async {
        reqwest::Client::new()
            .get(format!("{}/subjects", r.registry))
            .send()
            .await
            .ok()
            .map(|a| a.status().as_u16())
    })
    .await;
    assert_eq!(anonymous, 401);
    let registry = r.registry.clone();
    let (by_user_info, by_url, without, wrong) = tokio::task::spawn_blocking(move || {
        let write = |url: &str, extra: &[(&str, &str)]| {
            avro_converter(url, extra)
                .from_connect("secured", None, &Value::String("x".into()))
                .map(|bytes| schema_id(&bytes.unwrap()))
                .map_err(|e| e.to_string())
        };
        let with = |user_password: &str| registry.replacen("http://", user_password, 1);
        (
            write(
                &registry,
                &[
                    ("basic.auth.credentials.source", "USER_INFO"),
                    ("basic.auth.user.info", "alice:s3cret"),
                ],
            ),
            write(&with("http://alice:s3cret@"), &[]),
            write(&registry, &[]),
            write(&with("http://alice:wr0ng@"), &[]),
        )
    })
    .await
    .unwrap();
    let id = by_user_info.unwrap();
    assert_eq!(
        by_url,
        Ok(id),
        "the URL's credentials register the same schema"
    );
    for e in [without.unwrap_err(), wrong.unwrap_err()] {
        assert!(e.contains("401"), "{e}");
        assert!(!e.contains("wr0ng") && !e.contains("s3cret"), "{e}");
    }
    r.stop().await;
}
