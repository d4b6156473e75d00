//! Protobuf in the embedded Schema Registry and Confluent's ProtobufConverter, against Confluent's Python
//! client (`confluent-kafka[protobuf,schemaregistry]`, installed by `scripts/install-test-deps`): the
//! client registers, looks up and checks Protobuf schemas with a reference; its ProtobufSerializer
//! produces through the Kafka listener for a FileStreamSink with ProtobufConverter, and its
//! ProtobufDeserializer reads what a FileStreamSource wrote with it; enums and oneofs go through
//! Connect and back; `use.latest.version` writes with a subject's latest schema. Hostile records go to
//! the DLQ.

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
    r.produce_binary(
        "raw",
        &[
            b"plain text",
            &[0, 0, 0, 0, 99, 0, 8, 1],
            &[0, 0, 0, 0, id, 2, 10],
        ],
    )
    .await;
    let sink_file = dir.path().join("out.txt");
    let mut sink = common::file_sink("pb-dlq", &sink_file, "raw");
    sink["config"]["value.converter"] = json!("ProtobufConverter");
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    sink["config"]["errors.tolerance"] = json!("all");
    sink["config"]["errors.deadletterqueue.topic.name"] = json!("raw-dlq");
    sink["config"]["errors.deadletterqueue.context.headers.enable"] = json!(true);
    common::create_through(&r.api, sink).await;
    let dlq = r.dead_letter_messages("raw-dlq", 3).await;
    assert!(dlq[0].contains("Unknown magic byte!"), "{dlq:?}");
    assert!(dlq[1].contains("schema ID 99"), "{dlq:?}");
    let bad_index = &dlq[2];
    assert!(
        bad_index.contains(&format!("schema ID {id}")) && bad_index.contains("message ind"),
        "{bad_index}"
    );
    let status = r.api.get("/connectors/pb-dlq/status").await.unwrap().1;
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    r.stop().await;
}

const PROTOBUF: &str = "io.confluent.connect.protobuf.ProtobufConverter";

/// The stored values of `topic`'s partition 0, as bytes, once there are `n`.
async fn stored_values(r: &RegistryWorker, topic: &str, n: usize) -> Vec<Vec<u8>> {
    use base64::Engine as _;
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

/// A FileStreamSource on `file` into `topic` whose lines become `Struct{line=…}` (an unnamed struct:
/// message `ConnectDefault1`), written with ProtobufConverter with `extra` converter keys.
fn line_source(
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
    config["value.converter"] = json!(PROTOBUF);
    config["value.converter.schema.registry.url"] = json!(registry);
    for (k, v) in extra {
        config[format!("value.converter.{k}")] = json!(v);
    }
    c
}

/// `use.latest.version=true` with `auto.register.schemas=false`: records are written with the subject's
/// latest `.proto` (its ID, its message index, its extra field unset), nothing is registered, and a sink
/// reads them back; with `latest.compatibility.strict` a latest schema that cannot read the record's own
/// (a field's type changed) fails the task naming the subject, the ID and the difference.
#[tokio::test(flavor = "multi_thread")]
async fn use_latest_version_writes_with_the_subjects_latest_protobuf_schema() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let latest = json!({"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\";\n\nmessage Other {\n  int32 x = 1;\n}\nmessage ConnectDefault1 {\n  string line = 1;\n  string note = 2;\n}\n"});
    let (status, body) = r.post("/subjects/lines-value/versions", latest).await;
    assert_eq!(status, 200, "{body}");
    let id = body["id"].as_i64().unwrap();
    let file = dir.path().join("in.txt");
    common::append_lines(&file, ["first".to_string(), "second".to_string()]);
    let keys = [
        ("auto.register.schemas", "false"),
        ("use.latest.version", "true"),
    ];
    common::create_through(
        &r.api,
        line_source("latest", &file, "lines", &r.registry, &keys),
    )
    .await;
    let values = stored_values(&r, "lines", 2).await;
    assert_eq!(
        values.iter().map(|v| schema_id(v)).collect::<Vec<_>>(),
        vec![id, id]
    );
    // Message index [1] (count 1, index 1, zig-zag), then field 1 "first"; note (field 2) unset.
    assert_eq!(&values[0][5..], b"\x02\x02\x0a\x05first", "{values:?}");
    let (_, versions) = r.get("/subjects/lines-value/versions").await;
    assert_eq!(versions, json!([1]), "nothing registered");
    let sink_file = dir.path().join("out.txt");
    let mut sink = common::file_sink("back", &sink_file, "lines");
    sink["config"]["value.converter"] = json!(PROTOBUF);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink's 2 lines", DEADLINE, || async {
        let l = common::lines(&sink_file);
        (l.len() >= 2).then_some(l)
    })
    .await;
    assert_eq!(lines[0], "Struct{line=first,note=}", "{lines:?}");
    // A latest schema whose `line` is an int32 cannot read the record's string.
    let changed = json!({"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\";\n\nmessage ConnectDefault1 {\n  int32 line = 1;\n}\n"});
    let (_, body) = r.post("/subjects/strict-value/versions", changed).await;
    let strict_id = body["id"].as_i64().unwrap();
    common::create_through(
        &r.api,
        line_source("strict", &file, "strict", &r.registry, &keys),
    )
    .await;
    let trace = common::wait_for("the strict task to fail", DEADLINE, || async {
        let (_, status) = r.api.get("/connectors/strict/status").await.ok()?;
        let task = &status["tasks"][0];
        (task["state"] == "FAILED").then(|| task["trace"].as_str().unwrap_or_default().to_string())
    })
    .await;
    assert!(trace.contains("cannot read the record's schema"), "{trace}");
    assert!(
        trace.contains("strict-value") && trace.contains(&format!("ID {strict_id}")),
        "{trace}"
    );
    assert!(trace.contains("FIELD_SCALAR_KIND_CHANGED"), "{trace}");
    r.stop().await;
}

/// An enum and a oneof both ways: Confluent's ProtobufSerializer produces `ex.Shape` records (a oneof
/// `kind` of `radius` or `side`, an enum `color`) that a FileStreamSink with ProtobufConverter decodes
/// (the oneof as Confluent's `io.confluent.connect.protobuf.Union` struct, the enum as its symbol);
/// ProtobufConverter writes the decoded records back to another topic as a source task's records are
/// written (registering a `.proto` with the oneof and the enum), and Confluent's ProtobufDeserializer
/// reads them as the same shapes.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn enums_and_oneofs_go_from_confluents_serializer_through_connect_and_back() {
    use base64::Engine as _;
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    let py = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::schema_registry::python("schema_registry_protobuf.py", &args).await
    };
    let produced = py(vec![
        "produce-shapes".into(),
        r.registry.clone(),
        bootstrap.clone(),
        "shapes".into(),
    ])
    .await;
    assert_eq!(produced["unsent"], 0, "{produced}");
    let sink_file = dir.path().join("shapes.txt");
    let mut sink = common::file_sink("shapes-sink", &sink_file, "shapes");
    sink["config"]["value.converter"] = json!(PROTOBUF);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink to write 3 lines", DEADLINE, || async {
        let l = common::lines(&sink_file);
        (l.len() >= 3).then_some(l)
    })
    .await;
    assert_eq!(
        lines[0], "Struct{kind_0=Struct{radius=1.5},id=a,color=GREEN}",
        "{lines:?}"
    );
    assert_eq!(
        lines[1], "Struct{kind_0=Struct{side=4},id=b,color=BLUE}",
        "{lines:?}"
    );
    assert_eq!(lines[2], "Struct{id=c,color=RED}", "{lines:?}");
    // The decoded records written back with ProtobufConverter, as a source task's would be.
    let mut props = std::collections::BTreeMap::new();
    props.insert("schema.registry.url".to_string(), r.registry.clone());
    let converter = liteconnect::plugins::new_converter(PROTOBUF, &props, false).unwrap();
    let stored = stored_values(&r, "shapes", 3).await;
    let mut records = Vec::new();
    for bytes in &stored {
        let read =
            tokio::task::block_in_place(|| converter.to_connect("shapes", Some(bytes))).unwrap();
        let written = tokio::task::block_in_place(|| {
            converter.from_connect("shapes-back", read.schema.as_deref(), &read.value)
        })
        .unwrap()
        .unwrap();
        records.push(json!({"value": base64::engine::general_purpose::STANDARD.encode(written)}));
    }
    let answer = r
        .api
        .request(reqwest::Method::POST, "/topics/shapes-back")
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(json!({"records": records}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let (_, subject) = r.get("/subjects/shapes-back-value/versions/latest").await;
    let text = subject["schema"].as_str().unwrap();
    assert!(text.contains("oneof kind {"), "{text}");
    assert!(text.contains("Color color = 4;"), "{text}");
    assert!(
        text.contains("enum Color {\n    RED = 0;\n    GREEN = 1;\n    BLUE = 2;\n  }"),
        "{text}"
    );
    let read = py(vec![
        "consume-shapes".into(),
        r.registry.clone(),
        bootstrap,
        "shapes-back".into(),
        "3".into(),
    ])
    .await;
    assert_eq!(
        read["shapes"],
        json!([
            {"id": "a", "kind": "radius", "size": 1.5, "color": "GREEN"},
            {"id": "b", "kind": "side", "size": 4, "color": "BLUE"},
            {"id": "c", "kind": null, "size": null, "color": "RED"},
        ]),
        "{read}"
    );
    assert_eq!(
        read["ids"],
        json!([subject["id"], subject["id"], subject["id"]]),
        "{read}"
    );
    r.stop().await;
}
