//! Protobuf in the embedded Schema Registry and Confluent's ProtobufConverter, against Confluent's Python
//! client (`confluent-kafka[protobuf,schemaregistry]`, installed by `scripts/install-test-deps`): the
//! client registers, looks up and checks Protobuf schemas with a reference; its ProtobufSerializer
//! produces through the Kafka listener for a FileStreamSink with ProtobufConverter, and its
//! ProtobufDeserializer reads what a FileStreamSource wrote with it. Hostile records go to the DLQ.

use serde_json::{json, Value as Json};

use crate::common::{self, DEADLINE};
use crate::schema_registry::RegistryWorker;

fn error_code(body: &Json) -> i64 {
    body["error_code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error_code in {body}"))
}

/// `GET /schemas/types` lists PROTOBUF; an invalid `.proto` and an import no reference names are
/// refused with 42201 and the compiler's message; a schema with a reference registers and serves its
/// `FileDescriptorProto` with `format=serialized`.
#[tokio::test]
async fn protobuf_schemas_register_with_references_and_invalid_ones_are_refused() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let (_, types) = r.get("/schemas/types").await;
    assert!(
        types.as_array().unwrap().contains(&json!("PROTOBUF")),
        "{types}"
    );
    let bad = json!({"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\";\nmessage A { int32 x = 1 }"});
    let (status, body) = r.post("/subjects/bad-value/versions", bad).await;
    assert_eq!((status, error_code(&body)), (422, 42201), "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid schema: "),
        "{body}"
    );
    let missing = json!({"schemaType": "PROTOBUF",
        "schema": "syntax = \"proto3\";\nimport \"other.proto\";\nmessage A { Other o = 1; }"});
    let (status, body) = r.post("/subjects/bad-value/versions", missing).await;
    assert_eq!((status, error_code(&body)), (422, 42201), "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("other.proto"),
        "{body}"
    );
    let other = "syntax = \"proto3\";\nmessage Other { string s = 1; }";
    let (status, body) = r
        .post(
            "/subjects/other.proto/versions",
            json!({"schemaType": "PROTOBUF", "schema": other}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let main = json!({"schemaType": "PROTOBUF",
        "schema": "syntax = \"proto3\";\nimport \"other.proto\";\nmessage A { Other o = 1; }",
        "references": [{"name": "other.proto", "subject": "other.proto", "version": 1}]});
    let (status, body) = r.post("/subjects/a-value/versions", main).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_i64().unwrap();
    let (_, plain) = r.get(&format!("/schemas/ids/{id}")).await;
    assert_eq!(plain["schemaType"], "PROTOBUF", "{plain}");
    assert!(
        plain["schema"].as_str().unwrap().contains("message A"),
        "{plain}"
    );
    let (status, serialized) = r.get(&format!("/schemas/ids/{id}?format=serialized")).await;
    assert_eq!(status, 200, "{serialized}");
    let text = serialized["schema"].as_str().unwrap();
    assert!(
        !text.contains(' ') && !text.is_empty(),
        "base64, not text: {serialized}"
    );
    r.stop().await;
}

/// Confluent's SchemaRegistryClient registers ex/address.proto and ex/reading.proto importing it, looks
/// the latter up, and checks an added field (compatible) and a changed type (not).
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn confluents_python_client_registers_looks_up_and_checks_protobuf_schemas() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let seen =
        crate::schema_registry::python("schema_registry_protobuf.py", &["registry", &r.registry])
            .await;
    assert_eq!(seen["found_id"], seen["reading_id"], "{seen}");
    assert_eq!(seen["found_version"], 1, "{seen}");
    assert_eq!(seen["schema_type"], "PROTOBUF", "{seen}");
    assert_eq!(seen["references"], json!(["ex/address.proto"]), "{seen}");
    assert_eq!(seen["added_ok"], true, "{seen}");
    assert_eq!(seen["changed_ok"], false, "{seen}");
    r.stop().await;
}

/// ProtobufConverter both ways: what Confluent's ProtobufSerializer produced (a message importing
/// another, registered by the serializer itself) a FileStreamSink decodes; what a FileStreamSource
/// (its lines hoisted into a struct) wrote with ProtobufConverter Confluent's ProtobufDeserializer reads.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn protobuf_converter_reads_confluents_serializer_and_writes_for_its_deserializer() {
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    let py = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::schema_registry::python("schema_registry_protobuf.py", &args).await
    };
    let produced = py(vec![
        "produce".into(),
        r.registry.clone(),
        bootstrap.clone(),
        "readings".into(),
        "3".into(),
    ])
    .await;
    assert_eq!(produced["unsent"], 0, "{produced}");
    let protobuf = |c: &mut Json| {
        c["value.converter"] = json!("io.confluent.connect.protobuf.ProtobufConverter");
        c["value.converter.schema.registry.url"] = json!(r.registry);
    };
    let sink_file = dir.path().join("readings.txt");
    let mut sink = common::file_sink("pb-sink", &sink_file, "readings");
    protobuf(&mut sink["config"]);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink to write 3 lines", DEADLINE, || async {
        let lines = std::fs::read_to_string(&sink_file).unwrap_or_default();
        (lines.lines().count() >= 3).then_some(lines)
    })
    .await;
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(
        lines[0], "Struct{sensor=s0,value=0.0,place=Struct{city=c0},count=0}",
        "{lines:?}"
    );
    assert_eq!(
        lines[2], "Struct{sensor=s2,value=3.0,place=Struct{city=c2},count=2}",
        "{lines:?}"
    );
    let source_file = dir.path().join("in.txt");
    common::append_lines(&source_file, ["first".to_string(), "second".to_string()]);
    let mut source = common::file_source("pb-source", &source_file, "lines");
    protobuf(&mut source["config"]);
    source["config"]["transforms"] = json!("hoist");
    source["config"]["transforms.hoist.type"] =
        json!("org.apache.kafka.connect.transforms.HoistField$Value");
    source["config"]["transforms.hoist.field"] = json!("line");
    common::create_through(&r.api, source).await;
    let read = py(vec![
        "consume".into(),
        r.registry.clone(),
        bootstrap.clone(),
        "lines".into(),
        "2".into(),
    ])
    .await;
    assert_eq!(read["values"], json!(["first", "second"]), "{read}");
    let (_, subject) = r.get("/subjects/lines-value/versions/latest").await;
    assert_eq!(subject["schemaType"], "PROTOBUF", "{subject}");
    assert!(
        subject["schema"]
            .as_str()
            .unwrap()
            .contains("message ConnectDefault1 {\n  string line = 1;\n}"),
        "{subject}"
    );
    assert_eq!(read["ids"], json!([subject["id"], subject["id"]]), "{read}");
    r.stop().await;
}

/// Records ProtobufConverter cannot read (no magic byte, an unknown ID, a bad message-index array) go to
/// the dead letter queue with the reason, the ID named; the task keeps running.
#[tokio::test]
async fn protobuf_converter_sends_records_it_cannot_read_to_the_dead_letter_queue() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let other = json!({"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\";\nmessage A { int32 x = 1; }"});
    let (_, body) = r.post("/subjects/raw-value/versions", other).await;
    let id = u8::try_from(body["id"].as_i64().unwrap()).unwrap();
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let records = json!({"records": [
        {"value": b64(b"plain text")},
        {"value": b64(&[0, 0, 0, 0, 99, 0, 8, 1])},
        {"value": b64(&[0, 0, 0, 0, id, 2, 10])},
    ]});
    let answer = r
        .api
        .request(reqwest::Method::POST, "/topics/raw")
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(records.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let sink_file = dir.path().join("out.txt");
    let mut sink = common::file_sink("pb-dlq", &sink_file, "raw");
    sink["config"]["value.converter"] = json!("ProtobufConverter");
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    sink["config"]["errors.tolerance"] = json!("all");
    sink["config"]["errors.deadletterqueue.topic.name"] = json!("raw-dlq");
    sink["config"]["errors.deadletterqueue.context.headers.enable"] = json!(true);
    common::create_through(&r.api, sink).await;
    let dlq = common::wait_for(
        "three records in the dead letter queue",
        DEADLINE,
        || async {
            let (status, body) = r
                .api
                .get("/topics/raw-dlq/partitions/0/records?offset=0&metadata=true")
                .await
                .ok()?;
            (status == 200 && body.as_array().is_some_and(|a| a.len() == 3)).then_some(body)
        },
    )
    .await;
    let message = |record: &Json| {
        let header = record["headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["key"] == "__connect.errors.exception.message")
            .unwrap_or_else(|| panic!("no exception message in {record}"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(header["value"].as_str().unwrap())
            .unwrap();
        String::from_utf8(bytes).unwrap()
    };
    assert!(message(&dlq[0]).contains("Unknown magic byte!"), "{dlq}");
    assert!(message(&dlq[1]).contains("schema ID 99"), "{dlq}");
    let bad_index = message(&dlq[2]);
    assert!(
        bad_index.contains(&format!("schema ID {id}")) && bad_index.contains("message ind"),
        "{bad_index}"
    );
    let status = r.api.get("/connectors/pb-dlq/status").await.unwrap().1;
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    r.stop().await;
}
