//! JSON Schema in the embedded Schema Registry and Confluent's JsonSchemaConverter: registrations,
//! look-ups and compatibility checks by Confluent's Python client; its JSONSerializer's records decoded
//! by a sink, a source's records read by its JSONDeserializer; invalid schemas refused with 42201; records
//! that are not framed or name an unknown ID routed to a dead letter queue naming why; records written
//! with their subject's latest schema (`use.latest.version`), documents that do not validate sent to the
//! dead letter queue (`json.fail.invalid.schema`), and `oneOf` properties read as `OneOf` structs.

use reqwest::Method;
use serde_json::json;
#[cfg(feature = "kafka-listener")]
use serde_json::Value as Json;

use crate::common::{self, DEADLINE};
#[cfg(feature = "kafka-listener")]
use crate::schema_registry::python;
use crate::schema_registry::RegistryWorker;

const CONVERTER: &str = "io.confluent.connect.json.JsonSchemaConverter";

/// The Python client against the registry, then both ways through the converter: what the client's
/// JSONSerializer produced a FileStreamSink decodes; what a FileStreamSource (its lines hoisted into a
/// struct) wrote with the converter the client's JSONDeserializer reads.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn json_schema_converter_reads_confluents_serializer_and_writes_for_its_deserializer() {
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    let seen = python(
        "schema_registry_json.py",
        &[&r.registry, &bootstrap, "readings"],
    )
    .await;
    assert_eq!(
        (&seen["id1"], &seen["id1_again"]),
        (&json!(1), &json!(1)),
        "{seen}"
    );
    assert!(
        seen["types"].as_array().unwrap().contains(&json!("JSON")),
        "{seen}"
    );
    assert_eq!(seen["required_added_allowed"], false, "{seen}");
    assert_eq!(seen["optional_added_allowed"], true, "{seen}");
    assert_eq!(seen["incompatible_code"], 409, "{seen}");
    assert_eq!(seen["id2"], 2, "{seen}");
    assert_eq!(seen["lookup"], 1, "{seen}");
    assert_eq!(seen["schema_by_id"], json!(["JSON", true]), "{seen}");
    assert_eq!(seen["invalid_schema_code"], 42201, "{seen}");
    assert_eq!(seen["not_json_code"], 42201, "{seen}");
    // The serializer's schema is V2, already registered as ID 2 under another subject: the same ID.
    assert_eq!(seen["header_of_first"], "0000000002", "{seen}");
    assert_eq!(seen["read_matches"], true, "{seen}");
    let sink_file = dir.path().join("readings.txt");
    let converter = |c: &mut Json| {
        c["value.converter"] = json!(CONVERTER);
        c["value.converter.schema.registry.url"] = json!(r.registry);
    };
    let mut sink = common::file_sink("json-sink", &sink_file, "readings");
    converter(&mut sink["config"]);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink to write 5 lines", DEADLINE, || async {
        let lines = std::fs::read_to_string(&sink_file).unwrap_or_default();
        (lines.lines().count() >= 5).then_some(lines)
    })
    .await;
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines[0], "Struct{sensor=s0,value=0.0,unit=C}", "{lines:?}");
    assert_eq!(lines[4], "Struct{sensor=s4,value=6.0,unit=C}", "{lines:?}");
    let source_file = dir.path().join("in.txt");
    common::append_lines(&source_file, ["first".to_string(), "second".to_string()]);
    let mut source = common::file_source("json-source", &source_file, "lines");
    converter(&mut source["config"]);
    source["config"]["transforms"] = json!("hoist");
    source["config"]["transforms.hoist.type"] =
        json!("org.apache.kafka.connect.transforms.HoistField$Value");
    source["config"]["transforms.hoist.field"] = json!("line");
    common::create_through(&r.api, source).await;
    let read = python(
        "schema_registry_json_consume.py",
        &[&r.registry, &bootstrap, "lines", "2"],
    )
    .await;
    assert_eq!(
        read["values"],
        json!([{"line": "first"}, {"line": "second"}]),
        "{read}"
    );
    let (_, latest) = r.get("/subjects/lines-value/versions/latest").await;
    assert_eq!(latest["schemaType"], "JSON", "{latest}");
    let schema: Json = serde_json::from_str(latest["schema"].as_str().unwrap()).unwrap();
    assert_eq!(
        schema,
        json!({"type": "object", "properties": {"line": {"type": "string", "connect.index": 0}}}),
        "{latest}"
    );
    assert_eq!(read["ids"], json!([latest["id"], latest["id"]]), "{read}");
    r.stop().await;
}

/// Over the registry's REST API: JSON schemas registered with their canonical (compact) text, refused
/// with 42201 when invalid, and checked by Confluent's content-model rules.
#[tokio::test]
async fn json_schemas_register_canonically_and_invalid_ones_are_refused() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let body = |schema: &str| json!({"schemaType": "JSON", "schema": schema});
    let open = "{ \"type\": \"object\", \"properties\": { \"a\": { \"type\": \"string\" } } }";
    let (status, answer) = r.post("/subjects/j/versions", body(open)).await;
    assert_eq!((status, &answer["id"]), (200, &json!(1)), "{answer}");
    let (_, stored) = r.get("/schemas/ids/1").await;
    assert_eq!(
        stored,
        json!({"schemaType": "JSON",
               "schema": "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}"})
    );
    for bad in [
        "{\"type\": 5}",
        "[1]",
        "{\"properties\": {\"a\": 1}}",
        "not json",
    ] {
        let (status, answer) = r.post("/subjects/j/versions", body(bad)).await;
        assert_eq!(
            (status, &answer["error_code"]),
            (422, &json!(42201)),
            "{bad}: {answer}"
        );
    }
    // A property added to an open content model is refused at BACKWARD (the default).
    let added = r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}"#;
    let (status, answer) = r
        .post(
            "/compatibility/subjects/j/versions/latest?verbose=true",
            body(added),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["is_compatible"], false, "{answer}");
    assert!(
        answer["messages"]
            .to_string()
            .contains("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"),
        "{answer}"
    );
    let (status, answer) = r.post("/subjects/j/versions", body(added)).await;
    assert_eq!(
        (status, &answer["error_code"]),
        (409, &json!(409)),
        "{answer}"
    );
    r.stop().await;
}

/// A record that is not in Confluent's wire format, or names an ID the registry does not have, fails
/// the sink's conversion with the ID named; `errors.tolerance=all` with a dead letter queue keeps the
/// task running and routes the record there.
#[tokio::test]
async fn json_schema_converter_sends_records_it_cannot_read_to_the_dead_letter_queue() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    r.produce_binary("raw", &[b"{\"plain\":\"json\"}", b"\x00\x00\x00\x00\x63{}"])
        .await;
    let mut sink = common::file_sink("json-dlq", &dir.path().join("out.txt"), "raw");
    sink["config"]["value.converter"] = json!(CONVERTER);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    sink["config"]["errors.tolerance"] = json!("all");
    sink["config"]["errors.deadletterqueue.topic.name"] = json!("raw-dlq");
    sink["config"]["errors.deadletterqueue.context.headers.enable"] = json!(true);
    common::create_through(&r.api, sink).await;
    let dlq = r.dead_letter_messages("raw-dlq", 2).await;
    assert!(dlq[0].contains("Unknown magic byte!"), "{dlq:?}");
    assert!(dlq[1].contains("schema ID 99"), "{dlq:?}");
    let status = r.api.get("/connectors/json-dlq/status").await.unwrap().1;
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    r.stop().await;
}

/// A schema whose `$ref` names another subject's schema by a reference: registered (a reference that
/// resolves to nothing is 42201), and read by JsonSchemaConverter, which fetches the referenced schema.
#[tokio::test]
async fn json_schema_references_resolve_in_the_registry_and_the_converter() {
    use base64::Engine as _;
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let address =
        r#"{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false}"#;
    let (status, answer) = r
        .post(
            "/subjects/address/versions",
            json!({"schemaType": "JSON", "schema": address}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let person = r#"{"type":"object","title":"Person","properties":{"name":{"type":"string"},"home":{"$ref":"address.json"}}}"#;
    let reference = json!([{"name": "address.json", "subject": "address", "version": 1}]);
    let (status, answer) = r
        .post(
            "/subjects/people-value/versions",
            json!({"schemaType": "JSON", "schema": person}),
        )
        .await;
    assert_eq!(
        (status, &answer["error_code"]),
        (422, &json!(42201)),
        "{answer}"
    );
    let (status, answer) = r
        .post(
            "/subjects/people-value/versions",
            json!({"schemaType": "JSON", "schema": person, "references": reference}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let id = u32::try_from(answer["id"].as_u64().unwrap()).unwrap();
    let mut framed = vec![0];
    framed.extend_from_slice(&id.to_be_bytes());
    framed.extend_from_slice(br#"{"name":"Ada","home":{"city":"London"}}"#);
    let records = json!({"records": [
        {"value": base64::engine::general_purpose::STANDARD.encode(&framed)},
    ]});
    let answer = r
        .api
        .request(Method::POST, "/topics/people")
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(records.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let out = dir.path().join("people.txt");
    let mut sink = common::file_sink("people-sink", &out, "people");
    sink["config"]["value.converter"] = json!(CONVERTER);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    common::create_through(&r.api, sink).await;
    let line = common::wait_for("the sink to write the record", DEADLINE, || async {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        text.lines().next().map(String::from)
    })
    .await;
    assert_eq!(line, "Struct{name=Ada,home=Struct{city=London}}");
    r.stop().await;
}

/// `use.latest.version` with `auto.register.schemas=false`: a FileStreamSource's records (hoisted into
/// a struct) are written with their subject's latest schema, registered beforehand, their value
/// projected onto it (the field the record lacks takes the latest schema's default); Confluent's
/// JSONDeserializer reads them (validating them against that schema) with the latest's ID. Strict (the
/// default), a latest schema that cannot read the record's own fails the task naming subject and ID;
/// not strict, with `json.fail.invalid.schema`, a record the latest schema does not validate fails it.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn use_latest_version_writes_with_the_subjects_latest_schema() {
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    let worker = &r;
    let register = |subject: &str, schema: Json| {
        let body = json!({"schemaType": "JSON", "schema": schema.to_string()});
        let path = format!("/subjects/{subject}/versions");
        async move {
            let (status, answer) = worker.post(&path, body).await;
            assert_eq!(status, 200, "{answer}");
            answer["id"].clone()
        }
    };
    // An older version first, so the latest is not the subject's only one.
    register(
        "lines-value",
        json!({"type": "object", "title": "Line", "properties": {"line": {"type": "string"}},
               "additionalProperties": false}),
    )
    .await;
    let latest = register(
        "lines-value",
        json!({"type": "object", "title": "Line",
               "properties": {"line": {"type": "string"},
                              "source": {"type": "string", "default": "file"}},
               "additionalProperties": false}),
    )
    .await;
    let incompatible = register(
        "numbers-value",
        json!({"type": "object", "properties": {"line": {"type": "integer"}}}),
    )
    .await;
    let source = |name: &str, file: &str, topic: &str| {
        let path = dir.path().join(file);
        common::append_lines(&path, ["first".to_string(), "second".to_string()]);
        let mut s = common::file_source(name, &path, topic);
        let c = &mut s["config"];
        c["value.converter"] = json!(CONVERTER);
        c["value.converter.schema.registry.url"] = json!(r.registry);
        c["value.converter.auto.register.schemas"] = json!(false);
        c["value.converter.use.latest.version"] = json!(true);
        // The record's own schema closed, as the latest is: the latest can read it (strict).
        c["value.converter.object.additional.properties"] = json!(false);
        c["transforms"] = json!("hoist");
        c["transforms.hoist.type"] = json!("org.apache.kafka.connect.transforms.HoistField$Value");
        c["transforms.hoist.field"] = json!("line");
        s
    };
    common::create_through(&r.api, source("latest-source", "in.txt", "lines")).await;
    let read = python(
        "schema_registry_json_consume.py",
        &[&r.registry, &bootstrap, "lines", "2"],
    )
    .await;
    assert_eq!(
        read["values"],
        json!([{"line": "first", "source": "file"}, {"line": "second", "source": "file"}]),
        "{read}"
    );
    assert_eq!(read["ids"], json!([latest, latest]), "{read}");
    let (_, versions) = r.get("/subjects/lines-value/versions").await;
    assert_eq!(versions, json!([1, 2]), "nothing registered: {versions}");
    common::create_through(&r.api, source("strict-source", "in2.txt", "numbers")).await;
    let trace = common::wait_for("the strict source's task to fail", DEADLINE, || async {
        let (_, status) = r.api.get("/connectors/strict-source/status").await.ok()?;
        (status["tasks"][0]["state"] == "FAILED").then(|| {
            status["tasks"][0]["trace"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    })
    .await;
    assert!(
        trace.contains(&format!(
            "The latest schema of subject numbers-value (ID {incompatible}) cannot read the record's schema"
        )) && trace.contains("TYPE_CHANGED"),
        "{trace}"
    );
    // Not strict, with json.fail.invalid.schema: the projected record is checked against the latest
    // schema as it is written, and "first" is longer than that schema allows.
    let short = register(
        "short-value",
        json!({"type": "object", "properties": {"line": {"type": "string", "maxLength": 3}},
               "additionalProperties": false}),
    )
    .await;
    let mut checked = source("checked-source", "in3.txt", "short");
    checked["config"]["value.converter.latest.compatibility.strict"] = json!(false);
    checked["config"]["value.converter.json.fail.invalid.schema"] = json!(true);
    common::create_through(&r.api, checked).await;
    let trace = common::wait_for("the checked source's task to fail", DEADLINE, || async {
        let (_, status) = r.api.get("/connectors/checked-source/status").await.ok()?;
        (status["tasks"][0]["state"] == "FAILED").then(|| {
            status["tasks"][0]["trace"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    })
    .await;
    assert!(
        trace.contains(&format!("JSON does not match the schema with ID {short}"))
            && trace.contains("#/line: the string's length 5 is above maxLength 3"),
        "{trace}"
    );
    r.stop().await;
}

/// `json.fail.invalid.schema=true`: a record whose document does not validate against its schema (a
/// value above the schema's `maximum`, framed by hand with the registry's ID) goes to the dead letter
/// queue with the path and the keyword named, while the valid one reaches the file; without the key
/// both are read.
#[tokio::test]
async fn json_fail_invalid_schema_sends_invalid_documents_to_the_dead_letter_queue() {
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let schema = r#"{"type":"object","title":"Line","required":["qty"],"properties":{"qty":{"type":"integer","maximum":10}}}"#;
    let (status, answer) = r
        .post(
            "/subjects/orders-value/versions",
            json!({"schemaType": "JSON", "schema": schema}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let id = u32::try_from(answer["id"].as_u64().unwrap()).unwrap();
    let framed = |doc: &str| {
        let mut out = vec![0];
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(doc.as_bytes());
        b64(&out)
    };
    let records = json!({"records": [
        {"value": framed(r#"{"qty":12}"#)},
        {"value": framed(r#"{"qty":3}"#)},
    ]});
    let answer = r
        .api
        .request(Method::POST, "/topics/orders")
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(records.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let sink = |name: &str, file: &str, validate: bool| {
        let mut s = common::file_sink(name, &dir.path().join(file), "orders");
        let c = &mut s["config"];
        c["value.converter"] = json!(CONVERTER);
        c["value.converter.schema.registry.url"] = json!(r.registry);
        c["value.converter.json.fail.invalid.schema"] = json!(validate);
        c["errors.tolerance"] = json!("all");
        c["errors.deadletterqueue.topic.name"] = json!(format!("{name}-dlq"));
        c["errors.deadletterqueue.context.headers.enable"] = json!(true);
        s
    };
    common::create_through(&r.api, sink("checked", "checked.txt", true)).await;
    common::create_through(&r.api, sink("unchecked", "unchecked.txt", false)).await;
    let dlq = common::wait_for(
        "the invalid record in the dead letter queue",
        DEADLINE,
        || async {
            let (status, body) = r
                .api
                .get("/topics/checked-dlq/partitions/0/records?offset=0&metadata=true")
                .await
                .ok()?;
            (status == 200 && body.as_array().is_some_and(|a| !a.is_empty())).then_some(body)
        },
    )
    .await;
    let header = dlq[0]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["key"] == "__connect.errors.exception.message")
        .unwrap_or_else(|| panic!("no exception message in {dlq}"));
    let message = base64::engine::general_purpose::STANDARD
        .decode(header["value"].as_str().unwrap())
        .unwrap();
    let message = String::from_utf8(message).unwrap();
    assert!(
        message.contains(&format!("JSON does not match the schema with ID {id}"))
            && message.contains("#/qty: 12 is above the maximum 10"),
        "{message}"
    );
    let read = |file: &str, count: usize| {
        let path = dir.path().join(file);
        common::wait_for("the sink's lines", DEADLINE, move || {
            let path = path.clone();
            async move {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                (text.lines().count() >= count).then_some(text)
            }
        })
    };
    assert_eq!(read("checked.txt", 1).await, "Struct{qty=3}\n");
    assert_eq!(
        read("unchecked.txt", 2).await,
        "Struct{qty=12}\nStruct{qty=3}\n"
    );
    let (_, status) = r.api.get("/connectors/checked/status").await.unwrap();
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    r.stop().await;
}

/// A property whose schema is a `oneOf` of several types reads as Confluent's
/// `io.confluent.connect.json.OneOf` struct, the field of the branch the value takes set; with
/// `use.optional.for.nonrequired=true` a property outside `required` may be absent.
#[tokio::test]
async fn one_of_properties_read_as_one_of_structs() {
    use base64::Engine as _;
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let schema = r#"{"type":"object","required":["id"],"properties":{"id":{"oneOf":[{"type":"string"},{"type":"integer"}]},"note":{"type":"string"}}}"#;
    let (status, answer) = r
        .post(
            "/subjects/ids-value/versions",
            json!({"schemaType": "JSON", "schema": schema}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let id = u32::try_from(answer["id"].as_u64().unwrap()).unwrap();
    let framed = |doc: &str| {
        let mut out = vec![0];
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(doc.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(out)
    };
    let records = json!({"records": [
        {"value": framed(r#"{"id":"a-1","note":"first"}"#)},
        {"value": framed(r#"{"id":7}"#)},
    ]});
    let answer = r
        .api
        .request(Method::POST, "/topics/ids")
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(records.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let out = dir.path().join("ids.txt");
    let mut sink = common::file_sink("ids-sink", &out, "ids");
    sink["config"]["value.converter"] = json!(CONVERTER);
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    sink["config"]["value.converter.use.optional.for.nonrequired"] = json!(true);
    common::create_through(&r.api, sink).await;
    let text = common::wait_for("the sink to write both records", DEADLINE, || async {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        (text.lines().count() >= 2).then_some(text)
    })
    .await;
    assert_eq!(
        text,
        "Struct{id=Struct{io.confluent.connect.json.OneOf.field.0=a-1},note=first}\n\
         Struct{id=Struct{io.confluent.connect.json.OneOf.field.1=7}}\n"
    );
    r.stop().await;
}
