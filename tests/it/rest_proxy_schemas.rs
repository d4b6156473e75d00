//! Records framed by a Schema Registry converter shown decoded: REST Proxy v2's Avro embedded format
//! (produce by schema text or ID, read decoded, Confluent's error codes), `decode=true` on binary reads,
//! the registry's read routes under `/registry` on the REST listener, `liteconnect consume` (the real
//! binary, over REST and on the database file), and Confluent's `AvroDeserializer` reading what the
//! REST Proxy produced.

use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value as Json};

use crate::common;
use crate::schema_registry::RegistryWorker;

const AVRO: &str = "application/vnd.kafka.avro.v2+json";
const BINARY: &str = "application/vnd.kafka.binary.v2+json";

/// An order: a record with a union field and an enum.
const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
    {"name":"id","type":"long"},
    {"name":"note","type":["null","string"],"default":null},
    {"name":"state","type":{"type":"enum","name":"State","symbols":["NEW","PAID"]}}]}"#;

/// `method path` on the REST listener with `content_type` and `accept`: status and body.
async fn call(
    r: &RegistryWorker,
    method: Method,
    path: &str,
    content_type: &str,
    accept: &str,
    body: Option<Json>,
) -> (u16, Json) {
    let mut req = r
        .api
        .request(method, path)
        .header("content-type", content_type)
        .header("accept", accept);
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Json::String(text)),
    )
}

async fn produce(r: &RegistryWorker, topic: &str, content_type: &str, body: Json) -> (u16, Json) {
    let path = format!("/topics/{topic}");
    call(
        r,
        Method::POST,
        &path,
        content_type,
        "application/json",
        Some(body),
    )
    .await
}

async fn read(r: &RegistryWorker, topic: &str, accept: &str, query: &str) -> (u16, Json) {
    let path = format!("/topics/{topic}/partitions/0/records?offset=0&timeout=10{query}");
    call(r, Method::GET, &path, "application/json", accept, None).await
}

/// Produces two orders by schema text (registered as `orders-value`) and one by ID.
async fn produce_orders(r: &RegistryWorker) -> i64 {
    let first = json!({"value_schema": ORDER, "records": [
        {"value": {"id": 1, "note": {"string": "gift"}, "state": "NEW"}},
        {"value": {"id": 2, "note": null, "state": "PAID"}},
    ]});
    let (status, body) = produce(r, "orders", AVRO, first).await;
    assert_eq!(status, 200, "{body}");
    let id = body["value_schema_id"].as_i64().expect("value_schema_id");
    assert_eq!(body["key_schema_id"], Json::Null, "{body}");
    assert_eq!(body["offsets"].as_array().map(Vec::len), Some(2), "{body}");
    let (_, versions) = r.get("/subjects/orders-value/versions").await;
    assert_eq!(versions, json!([1]));
    let by_id = json!({"value_schema_id": id, "records": [{"value": {"id": 3, "state": "NEW"}}]});
    let (status, body) = produce(r, "orders", AVRO, by_id).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["value_schema_id"], json!(id), "{body}");
    id
}

/// The Avro format both ways, `decode=true`, `/registry` on the REST listener, and the error codes.
#[tokio::test]
async fn rest_proxy_produces_and_reads_avro_through_the_local_registry() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let id = produce_orders(&r).await;
    let (status, records) = read(&r, "orders", AVRO, "").await;
    assert_eq!(status, 200, "{records}");
    let values: Vec<&Json> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["value"])
        .collect();
    assert_eq!(
        values,
        [
            &json!({"id": 1, "note": {"string": "gift"}, "state": "NEW"}),
            &json!({"id": 2, "note": null, "state": "PAID"}),
            &json!({"id": 3, "note": null, "state": "NEW"}),
        ]
    );
    assert_eq!(records[0]["key"], Json::Null);
    // Keys by schema text under `<topic>-key`, values by ID.
    let keyed = json!({"key_schema": "\"string\"", "value_schema_id": id,
        "records": [{"key": "k1", "value": {"id": 9, "state": "PAID"}}]});
    let (status, body) = produce(&r, "keyed", AVRO, keyed).await;
    assert_eq!(status, 200, "{body}");
    let key_id = body["key_schema_id"].as_i64().expect("key_schema_id");
    assert_eq!(body["value_schema_id"], json!(id), "{body}");
    let (_, key_subject) = r.get("/subjects/keyed-key/versions/1").await;
    assert_eq!(key_subject["id"], json!(key_id), "{key_subject}");
    let (_, records) = read(&r, "keyed", AVRO, "").await;
    assert_eq!(records[0]["key"], "k1", "{records}");
    assert_eq!(records[0]["value"]["state"], "PAID", "{records}");
    // Binary with decode=true: the stored bytes and, beside them, the decoded value with its schema.
    let (_, records) = read(&r, "orders", BINARY, "&decode=true").await;
    let decoded = &records[0]["value_decoded"];
    assert_eq!(decoded["schema_id"], json!(id), "{records}");
    assert_eq!(decoded["subject"], "orders-value", "{records}");
    assert_eq!(decoded["schema_type"], "AVRO", "{records}");
    assert_eq!(decoded["value"]["id"], 1, "{records}");
    assert!(records[0]["value"].is_string(), "{records}");
    // The registry's read routes on the REST listener; writes are refused there.
    let (status, subjects) = r.api.get("/registry/subjects").await.unwrap();
    assert_eq!(
        (status, subjects),
        (200, json!(["keyed-key", "orders-value"]))
    );
    let (status, _) = r
        .api
        .post(
            "/registry/subjects/x/versions",
            &json!({"schema": "\"long\""}),
        )
        .await
        .unwrap();
    assert_eq!(status, 405);
    errors(&r).await;
    r.stop().await;
}

/// Confluent REST Proxy's error codes for schema-based produces and reads.
async fn errors(r: &RegistryWorker) {
    let cases = [
        (json!({"records": [{"value": {"id": 1}}]}), 42202),
        (
            json!({"value_schema": ORDER, "records": [{"key": 1, "value": null}]}),
            42201,
        ),
        (
            json!({"value_schema": ORDER, "records": [{"value": {"id": "x", "state": "NEW"}}]}),
            42203,
        ),
        (
            json!({"value_schema": ORDER, "records": [{"value": {"id": 1, "note": "bare", "state": "NEW"}}]}),
            42203,
        ),
        (
            json!({"value_schema": "{\"type\":\"nope\"}", "records": [{"value": 1}]}),
            42205,
        ),
        (
            json!({"value_schema_id": 999, "records": [{"value": 1}]}),
            42205,
        ),
        (
            json!({"value_schema": "\"string\"", "records": [{"value": "x"}]}),
            42205,
        ),
    ];
    for (body, code) in cases {
        let (status, answer) = produce(r, "orders", AVRO, body.clone()).await;
        assert_eq!(answer["error_code"], json!(code), "{body}: {answer}");
        assert_eq!(i64::from(status), code / 100, "{body}: {answer}");
    }
    // A record that is not framed cannot be read as Avro.
    let plain = json!({"records": [{"value": "cGxhaW4="}]});
    let (status, _) = produce(r, "plain", BINARY, plain).await;
    assert_eq!(status, 200);
    let (status, answer) = read(r, "plain", AVRO, "").await;
    assert_eq!(
        (status, &answer["error_code"]),
        (500, &json!(50002)),
        "{answer}"
    );
}

/// `liteconnect consume` (the real binary) shows framed values decoded with their schema ID, over the
/// REST API and on the database file; `--raw` prints them as stored; `--verbose` notes what it left.
#[tokio::test(flavor = "multi_thread")]
async fn consume_shows_framed_records_decoded() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let id = produce_orders(&r).await;
    let plain = json!({"records": [{"value": "cGxhaW4="}]});
    assert_eq!(produce(&r, "orders", BINARY, plain).await.0, 200);
    let url = r.api.base().to_string();
    let db = dir.path().join("worker.db").display().to_string();
    let d = dir.path().to_path_buf();
    let run = move |args: Vec<String>| {
        let d = d.clone();
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, out, err) = common::run_binary(&d, &args);
            assert_eq!(code, 0, "{args:?}: {err}");
            (out, err)
        })
    };
    let args = |source: &[&str], extra: &[&str]| -> Vec<String> {
        ["consume", "orders", "--from-beginning"]
            .iter()
            .chain(source)
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    for source in [["--url", url.as_str()], ["--db", db.as_str()]] {
        let (out, _) = run(args(&source, &["--format", "json"])).await.unwrap();
        let lines: Vec<Json> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert_eq!(
            lines[0]["value"],
            json!({"id": 1, "note": {"string": "gift"}, "state": "NEW"}),
            "{out}"
        );
        assert_eq!(lines[0]["value_schema_id"], json!(id), "{out}");
        assert_eq!(lines[3]["value"], "plain", "{out}");
        assert_eq!(lines[3].get("value_schema_id"), None, "{out}");
        let (out, _) = run(args(&source, &["--format", "json", "--raw"]))
            .await
            .unwrap();
        let first: Json = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(first.get("value_schema_id"), None, "{out}");
        assert!(first["value"].is_string(), "{out}");
        let (out, err) = run(args(&source, &["--verbose"])).await.unwrap();
        let first = out.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            format!(
                r#"partition 0 offset 0 value schema {id} (orders-value): {{"id":1,"note":{{"string":"gift"}},"state":"NEW"}}"#
            ),
            "{out}"
        );
        assert!(
            err.contains("offset 3: the value is shown as stored: not framed"),
            "{err}"
        );
    }
    r.stop().await;
}

/// The client rule: Confluent's Python `AvroDeserializer` reads, through the Kafka listener and by the
/// registry's ID, what the REST Proxy produced with `value_schema`.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn confluents_avro_deserializer_reads_what_the_rest_proxy_produced() {
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let id = produce_orders(&r).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    let read = crate::schema_registry::python(
        "schema_registry_consume.py",
        &[&r.registry, &bootstrap, "orders", "3"],
    )
    .await;
    assert_eq!(
        read["values"],
        json!([
            {"id": 1, "note": "gift", "state": "NEW"},
            {"id": 2, "note": null, "state": "PAID"},
            {"id": 3, "note": null, "state": "NEW"},
        ]),
        "{read}"
    );
    assert_eq!(read["ids"], json!([id, id, id]), "{read}");
    r.stop().await;
}

/// The registry's read routes under `/registry` on the REST listener take its basic auth.
#[tokio::test]
async fn registry_routes_on_the_rest_listener_take_its_basic_auth() {
    let dir = common::tempdir();
    let creds = dir.path().join("creds.properties");
    std::fs::write(&creds, "alice: secret\n").unwrap();
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
    let http = reqwest::Client::new();
    let url = format!("{}/registry/subjects", r.api.base());
    let anonymous = common::wait_for("the REST listener to answer", common::DEADLINE, || async {
        http.get(&url)
            .send()
            .await
            .ok()
            .map(|a| a.status().as_u16())
    })
    .await;
    assert_eq!(anonymous, 401);
    let answer = http
        .get(&url)
        .basic_auth("alice", Some("secret"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 200);
    assert_eq!(answer.json::<Json>().await.unwrap(), json!([]));
    r.stop().await;
}

/// The Protobuf and JSON Schema formats both ways: a schema given as text is registered under
/// `<topic>-value`, the records stored framed (Protobuf with its message indexes) and read back as the
/// JSON they were produced as.
#[tokio::test]
async fn rest_proxy_produces_and_reads_protobuf_and_json_schema() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let mut formats = vec![(
        "jsonschema",
        "JSON",
        json!(
            r#"{"type":"object","properties":{"sensor":{"type":"string"},"n":{"type":"integer"}}}"#
        ),
        json!({"sensor": "s1", "n": 7}),
    )];
    if cfg!(feature = "protobuf") {
        formats.push((
            "protobuf",
            "PROTOBUF",
            json!("syntax = \"proto3\";\nmessage Reading { string sensor = 1; int64 n = 2; }"),
            json!({"sensor": "s1", "n": 7}),
        ));
    }
    for (format, schema_type, schema, value) in formats {
        let media = format!("application/vnd.kafka.{format}.v2+json");
        let topic = format!("readings-{format}");
        let body = json!({"value_schema": schema, "records": [{"value": value}]});
        let (status, answer) = produce(&r, &topic, &media, body).await;
        assert_eq!(status, 200, "{format}: {answer}");
        let id = answer["value_schema_id"].as_i64().expect("value_schema_id");
        let (_, latest) = r
            .get(&format!("/subjects/{topic}-value/versions/latest"))
            .await;
        assert_eq!(latest["id"], json!(id), "{latest}");
        assert_eq!(latest["schemaType"], json!(schema_type), "{latest}");
        let (status, records) = read(&r, &topic, &media, "").await;
        assert_eq!(status, 200, "{format}: {records}");
        assert_eq!(records[0]["value"], value, "{format}: {records}");
        // Stored framed: magic byte 0, then the ID.
        let (_, raw) = read(&r, &topic, BINARY, "").await;
        let stored = base64::engine::general_purpose::STANDARD
            .decode(raw[0]["value"].as_str().unwrap())
            .unwrap();
        assert_eq!(stored[0], 0, "{format}");
        assert_eq!(
            i64::from(u32::from_be_bytes([
                stored[1], stored[2], stored[3], stored[4]
            ])),
            id
        );
        // JSON that does not fit the message is refused (JSON Schema payloads are not validated).
        if format == "protobuf" {
            let bad = json!({"value_schema_id": id, "records": [{"value": {"n": "seven"}}]});
            let (status, answer) = produce(&r, &topic, &media, bad).await;
            assert_eq!(status, 422, "{format}: {answer}");
        }
    }
    r.stop().await;
}
