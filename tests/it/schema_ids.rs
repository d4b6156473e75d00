//! Schema IDs translated between an edge worker's Schema Registry and a central one: the Kafka sink's
//! `destination.schema.registry.url`. The edge writes Avro records in Confluent's wire format with its own
//! IDs (a FileStreamSource with AvroConverter for key and value); the sink ships them to Kafka
//! (librdkafka's mock cluster) with the central registry's IDs, which Confluent's Python
//! `AvroDeserializer` reads against the central registry. Through an outage of the central registry and
//! a `kill -9` of the edge, nothing is lost and nothing leaves with an edge ID.

use std::path::Path;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::{json, Value as Json};

use crate::common::{self, wait_for, wait_until, Client};
use crate::kafka::{kafka_sink, mock, LONG};
use crate::schema_registry::{python, RegistryWorker};

/// One record as it reached Kafka: its key's and value's schema IDs (`None`: not framed).
#[derive(Debug, Clone, PartialEq)]
struct Shipped {
    key_id: Option<u32>,
    value_id: Option<u32>,
    /// The value's payload after its header (one per line written).
    payload: Vec<u8>,
}

fn id_of(bytes: Option<&[u8]>) -> Option<u32> {
    bytes
        .filter(|b| b.len() >= 5 && b[0] == 0)
        .map(|b| u32::from_be_bytes([b[1], b[2], b[3], b[4]]))
}

/// Reads `topic`'s partition 0 from the beginning for `window`, or until `count` records came.
async fn shipped(bootstrap: &str, topic: &str, count: usize, window: Duration) -> Vec<Shipped> {
    let (bootstrap, topic) = (bootstrap.to_string(), topic.to_string());
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("group.id", "schema-ids-reader")
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&topic, 0, Offset::Beginning)
            .unwrap();
        consumer.assign(&tpl).unwrap();
        let end = Instant::now() + window;
        let mut got = Vec::new();
        while Instant::now() < end && got.len() < count {
            if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                got.push(Shipped {
                    key_id: id_of(m.key()),
                    value_id: id_of(m.payload()),
                    payload: m
                        .payload()
                        .unwrap_or_default()
                        .iter()
                        .skip(5)
                        .copied()
                        .collect(),
                });
            }
        }
        got
    })
    .await
    .unwrap()
}

/// A FileStreamSource writing `{line}` keys and `{line, origin}` values with AvroConverter against
/// `registry`: two subjects, `<topic>-key` and `<topic>-value`.
fn avro_source(name: &str, input: &Path, topic: &str, registry: &str) -> Json {
    let mut source = common::file_source(name, input, topic);
    let c = &mut source["config"];
    for role in ["key", "value"] {
        c[format!("{role}.converter")] = json!("io.confluent.connect.avro.AvroConverter");
        c[format!("{role}.converter.schema.registry.url")] = json!(registry);
    }
    c["transforms"] = json!("hoist,key,origin");
    c["transforms.hoist.type"] = json!("org.apache.kafka.connect.transforms.HoistField$Value");
    c["transforms.hoist.field"] = json!("line");
    c["transforms.key.type"] = json!("org.apache.kafka.connect.transforms.ValueToKey");
    c["transforms.key.fields"] = json!("line");
    c["transforms.origin.type"] = json!("org.apache.kafka.connect.transforms.InsertField$Value");
    c["transforms.origin.static.field"] = json!("origin");
    c["transforms.origin.static.value"] = json!("edge");
    source
}

/// Registers schemas the edge does not have, so that the central registry's IDs differ from the edge's.
async fn preregister_unrelated(central: &RegistryWorker) {
    for i in 0..3 {
        let schema = format!(
            r#"{{"type":"record","name":"Other{i}","fields":[{{"name":"f","type":"int"}}]}}"#
        );
        central.register(&format!("other-{i}-value"), &schema).await;
    }
}

/// The ID `subject`'s latest version has in `registry`.
async fn latest_id(registry: &RegistryWorker, subject: &str) -> u32 {
    let (status, body) = registry
        .get(&format!("/subjects/{subject}/versions/latest"))
        .await;
    assert_eq!(status, 200, "{subject}: {body}");
    body["id"].as_u64().unwrap() as u32
}

/// Confluent's AvroDeserializer reads `count` values of `topic` against the central registry.
async fn decode_centrally(
    central: &RegistryWorker,
    bootstrap: &str,
    topic: &str,
    count: usize,
) -> Json {
    python(
        "schema_registry_consume.py",
        &[&central.registry, bootstrap, topic, &count.to_string()],
    )
    .await
}

/// The first task's status.
async fn task(api: &Client, name: &str) -> Json {
    let (_, status) = api
        .get(&format!("/connectors/{name}/status"))
        .await
        .unwrap();
    status["tasks"][0].clone()
}

fn expected_values(lines: &[String]) -> Json {
    Json::Array(
        lines
            .iter()
            .map(|l| json!({"line": l, "origin": "edge"}))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_sink_ships_records_with_the_central_registrys_schema_ids() {
    let cluster = mock();
    cluster.create_topic("readings", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let (central_dir, edge_dir) = (common::tempdir(), common::tempdir());
    let central = RegistryWorker::start(central_dir.path(), &[]).await;
    preregister_unrelated(&central).await;
    let edge = RegistryWorker::start(edge_dir.path(), &[]).await;
    let input = edge_dir.path().join("in.txt");
    let lines: Vec<String> = (0..20).map(|i| format!("reading {i}")).collect();
    common::append_lines(&input, lines.clone());
    common::create_through(
        &edge.api,
        avro_source("src", &input, "readings", &edge.registry),
    )
    .await;
    let sink = kafka_sink(
        "ship",
        &bootstrap,
        "readings",
        &[("destination.schema.registry.url", central.registry.as_str())],
    );
    common::create_through(&edge.api, sink).await;

    let got = shipped(&bootstrap, "readings", lines.len(), LONG).await;
    assert_eq!(got.len(), lines.len(), "{got:?}");
    let (edge_key, edge_value) = (
        latest_id(&edge, "readings-key").await,
        latest_id(&edge, "readings-value").await,
    );
    let (key_id, value_id) = (
        latest_id(&central, "readings-key").await,
        latest_id(&central, "readings-value").await,
    );
    assert_ne!((edge_key, edge_value), (key_id, value_id), "the IDs differ");
    assert!(
        got.iter()
            .all(|s| s.key_id == Some(key_id) && s.value_id == Some(value_id)),
        "every record carries the central IDs {key_id}/{value_id} (edge: {edge_key}/{edge_value}): {got:?}"
    );
    let read = decode_centrally(&central, &bootstrap, "readings", lines.len()).await;
    assert_eq!(read["values"], expected_values(&lines), "{read}");
    // One version per subject in the central registry: registered once.
    for subject in ["readings-key", "readings-value"] {
        assert_eq!(
            central.get(&format!("/subjects/{subject}/versions")).await,
            (200, json!([1]))
        );
    }
    edge.stop().await;
    central.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_wait_while_the_central_registry_is_down_then_ship_translated() {
    let cluster = mock();
    cluster.create_topic("readings", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let (central_dir, edge_dir) = (common::tempdir(), common::tempdir());
    // The central registry has other schemas, and is down when the edge starts shipping.
    let central = RegistryWorker::start(central_dir.path(), &[]).await;
    preregister_unrelated(&central).await;
    let central_url = central.registry.clone();
    central.stop().await;
    let edge = RegistryWorker::start(edge_dir.path(), &[]).await;
    let input = edge_dir.path().join("in.txt");
    let lines: Vec<String> = (0..50).map(|i| format!("reading {i}")).collect();
    common::append_lines(&input, lines.clone());
    common::create_through(
        &edge.api,
        avro_source("src", &input, "readings", &edge.registry),
    )
    .await;
    common::create_through(
        &edge.api,
        kafka_sink(
            "ship",
            &bootstrap,
            "readings",
            &[("destination.schema.registry.url", &central_url)],
        ),
    )
    .await;
    let trace = wait_for("a trace naming the central registry", LONG, || async {
        task(&edge.api, "ship").await["trace"]
            .as_str()
            .map(str::to_string)
    })
    .await;
    assert!(trace.contains("cannot be reached"), "{trace}");
    common::assert_holds_for("the sink RUNNING", Duration::from_secs(10), || async {
        task(&edge.api, "ship").await["state"] == "RUNNING"
    })
    .await;
    assert!(
        shipped(&bootstrap, "readings", 1, Duration::from_secs(1))
            .await
            .is_empty(),
        "nothing left untranslated"
    );

    let central = RegistryWorker::start_at(
        central_dir.path(),
        central_url.trim_start_matches("http://"),
    )
    .await;
    let got = shipped(&bootstrap, "readings", lines.len(), LONG).await;
    assert_eq!(got.len(), lines.len(), "all of them: {got:?}");
    let again = shipped(
        &bootstrap,
        "readings",
        lines.len() + 1,
        Duration::from_secs(3),
    )
    .await;
    assert_eq!(again.len(), lines.len(), "none twice");
    let value_id = latest_id(&central, "readings-value").await;
    assert!(got.iter().all(|s| s.value_id == Some(value_id)), "{got:?}");
    let read = decode_centrally(&central, &bootstrap, "readings", lines.len()).await;
    assert_eq!(read["values"], expected_values(&lines), "{read}");
    wait_until("the trace to clear", || async {
        task(&edge.api, "ship").await["trace"].is_null()
    })
    .await;
    edge.stop().await;
    central.stop().await;
}

/// The edge is the real binary, killed with SIGKILL while it ships: after a restart every record arrives
/// with the central IDs, and the mappings kept in its database are used as they are. The central registry
/// is READONLY after the kill, so a second registration would fail the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_edge_killed_mid_flow_ships_everything_with_the_mappings_it_kept() {
    let cluster = mock();
    cluster.create_topic("k9", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let (central_dir, edge_dir) = (common::tempdir(), common::tempdir());
    let central = RegistryWorker::start(central_dir.path(), &[]).await;
    preregister_unrelated(&central).await;
    let registry = format!("http://127.0.0.1:{}", common::free_port());
    let props = format!(
        "{}schema.registry.listeners={registry}\n",
        common::binary_props(edge_dir.path())
    );
    let input = edge_dir.path().join("in.txt");
    let lines: Vec<String> = (0..3000).map(|i| format!("reading {i:05}")).collect();
    common::append_lines(&input, lines.clone());
    let bin = common::start_binary_with(edge_dir.path(), &props, &[], 2);
    let api = bin.healthy_api().await;
    let mut source = avro_source("src", &input, "k9", &registry);
    source["config"]["batch.size"] = json!("50");
    common::create_through(&api, source).await;
    let sink = kafka_sink(
        "ship",
        &bootstrap,
        "k9",
        &[("destination.schema.registry.url", central.registry.as_str())],
    );
    common::create_through(&api, sink).await;
    let before = shipped(&bootstrap, "k9", 1, LONG).await;
    assert!(!before.is_empty());
    bin.kill();
    let (status, _) = central.put("/mode", json!({"mode": "READONLY"})).await;
    assert_eq!(status, 200);

    let bin = common::start_binary_with(edge_dir.path(), &props, &[], 2);
    let api = bin.healthy_api().await;
    let value_id = latest_id(&central, "k9-value").await;
    let key_id = latest_id(&central, "k9-key").await;
    let got = wait_for("every line in Kafka", LONG, || async {
        let got = shipped(&bootstrap, "k9", usize::MAX, Duration::from_secs(2)).await;
        let distinct: std::collections::BTreeSet<&Vec<u8>> =
            got.iter().map(|s| &s.payload).collect();
        (distinct.len() >= lines.len()).then_some(got)
    })
    .await;
    let distinct: std::collections::BTreeSet<&Vec<u8>> = got.iter().map(|s| &s.payload).collect();
    eprintln!(
        "edge kill -9: {} lines, {} read before the kill, {} read after restart, {} distinct",
        lines.len(),
        before.len(),
        got.len(),
        distinct.len()
    );
    assert_eq!(distinct.len(), lines.len(), "nothing lost");
    assert!(
        got.iter()
            .all(|s| s.key_id == Some(key_id) && s.value_id == Some(value_id)),
        "only central IDs"
    );
    assert_eq!(task(&api, "ship").await["state"], "RUNNING");
    for subject in ["k9-key", "k9-value"] {
        assert_eq!(
            central.get(&format!("/subjects/{subject}/versions")).await,
            (200, json!([1]))
        );
    }
    let read = decode_centrally(&central, &bootstrap, "k9", 10).await;
    assert_eq!(
        read["values"][0],
        json!({"line": lines[0], "origin": "edge"}),
        "{read}"
    );
    bin.terminate();
    central.stop().await;
}

/// Avro's encoding of a short string (under 64 bytes): its zig-zag length, then its bytes.
fn avro_string(s: &str, out: &mut Vec<u8>) {
    assert!(s.len() < 64);
    out.push((s.len() * 2) as u8);
    out.extend_from_slice(s.as_bytes());
}

fn framed(id: u32, strings: &[&str]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&id.to_be_bytes());
    for s in strings {
        avro_string(s, &mut out);
    }
    out
}

/// The schema IDs of the values stored in a local topic, read over the worker's REST API.
async fn stored_ids(api: &Client, topic: &str) -> Vec<Option<u32>> {
    use base64::Engine as _;
    let (status, records) = api
        .get(&format!("/topics/{topic}/partitions/0/records?offset=0"))
        .await
        .unwrap();
    if status != 200 {
        return Vec::new();
    }
    records
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(r["value"].as_str().unwrap_or_default())
                .unwrap();
            id_of(Some(&bytes))
        })
        .collect()
}

/// The other way: a MirrorSourceConnector with `source.schema.registry.url` brings records framed with
/// the central registry's IDs into the edge's log with the edge registry's IDs, their schemas (and the
/// schemas those reference) registered in the edge registry under the same subjects; a FileStreamSink
/// with AvroConverter against the edge registry decodes them. Bytes that are not framed pass as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirror_source_registers_central_schemas_locally_and_rewrites_their_ids() {
    let cluster = mock();
    for topic in ["plain", "nested"] {
        cluster.create_topic(topic, 1, 1).unwrap();
    }
    let bootstrap = cluster.bootstrap_servers();
    let (central_dir, edge_dir) = (common::tempdir(), common::tempdir());
    let central = RegistryWorker::start(central_dir.path(), &[]).await;
    let edge = RegistryWorker::start(edge_dir.path(), &[]).await;
    preregister_unrelated(&edge).await;
    // Central: a string schema, and a record schema referencing another subject's record.
    let plain_id = central.register("plain-value", "\"string\"").await as u32;
    let unit = r#"{"type":"record","name":"Unit","namespace":"edge","fields":[{"name":"name","type":"string"}]}"#;
    central.register("unit", unit).await;
    let reading = r#"{"type":"record","name":"Reading","namespace":"edge","fields":[{"name":"sensor","type":"string"},{"name":"unit","type":"edge.Unit"}]}"#;
    let (status, body) = central
        .post(
            "/subjects/nested-value/versions",
            json!({"schema": reading, "references": [{"name": "edge.Unit", "subject": "unit", "version": 1}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let nested_id = body["id"].as_u64().unwrap() as u32;
    let lines: Vec<String> = (0..5).map(|i| format!("line {i}")).collect();
    let mut plain: Vec<Vec<u8>> = lines.iter().map(|l| framed(plain_id, &[l])).collect();
    plain.push(b"not framed".to_vec());
    let nested: Vec<Vec<u8>> = (0..3)
        .map(|i| framed(nested_id, &[&format!("s{i}"), "C"]))
        .collect();
    tokio::task::spawn_blocking(move || {
        let producer: rdkafka::producer::BaseProducer = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .create()
            .unwrap();
        for (topic, values) in [("plain", plain), ("nested", nested)] {
            for v in values {
                producer
                    .send(rdkafka::producer::BaseRecord::<(), _>::to(topic).payload(&v))
                    .map_err(|(e, _)| e)
                    .unwrap();
            }
        }
        rdkafka::producer::Producer::flush(&producer, Duration::from_secs(30)).unwrap();
    })
    .await
    .unwrap();
    let mut mirror = crate::kafka::mirror(
        "from-central",
        &cluster.bootstrap_servers(),
        "plain,nested",
        &[("source.schema.registry.url", central.registry.as_str())],
    );
    mirror["config"]["tasks.max"] = json!("1");
    common::create_through(&edge.api, mirror).await;
    let out = edge_dir.path().join("plain.txt");
    let mut sink = common::file_sink("decode", &out, "src.plain");
    sink["config"]["value.converter"] = json!("io.confluent.connect.avro.AvroConverter");
    sink["config"]["value.converter.schema.registry.url"] = json!(edge.registry);
    sink["config"]["errors.tolerance"] = json!("all");
    common::create_through(&edge.api, sink).await;
    wait_until("the framed lines decoded at the edge", || async {
        common::lines(&out) == lines
    })
    .await;
    let nested_ids = wait_for("the nested records in the edge's log", LONG, || async {
        let ids = stored_ids(&edge.api, "src.nested").await;
        (ids.len() == 3).then_some(ids)
    })
    .await;
    let plain_ids = stored_ids(&edge.api, "src.plain").await;
    let (edge_plain, edge_nested) = (
        latest_id(&edge, "plain-value").await,
        latest_id(&edge, "nested-value").await,
    );
    assert_ne!(
        (edge_plain, edge_nested),
        (plain_id, nested_id),
        "the IDs differ"
    );
    let mut expected = vec![Some(edge_plain); 5];
    expected.push(None);
    assert_eq!(
        plain_ids, expected,
        "framed ones rewritten, the other as it was"
    );
    assert_eq!(nested_ids, vec![Some(edge_nested); 3]);
    let (_, latest) = edge.get("/subjects/nested-value/versions/latest").await;
    assert_eq!(
        latest["references"],
        json!([{"name": "edge.Unit", "subject": "unit", "version": 1}]),
        "{latest}"
    );
    assert_eq!(edge.get("/subjects/unit/versions").await, (200, json!([1])));
    edge.stop().await;
    central.stop().await;
}

/// A local schema with a reference: the sink registers the referenced subject's version in the central
/// registry first, then the schema with the reference renumbered as the central registry numbers it.
/// Records produced into the edge's log over its REST API (binary) are shipped with the central ID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_sink_registers_referenced_schemas_first() {
    use base64::Engine as _;
    let cluster = mock();
    cluster.create_topic("nested", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let (central_dir, edge_dir) = (common::tempdir(), common::tempdir());
    let central = RegistryWorker::start(central_dir.path(), &[]).await;
    preregister_unrelated(&central).await;
    // The central registry already has a version of `unit`, so the edge's version 1 is its version 2.
    central
        .register("unit", r#"{"type":"record","name":"Unit","namespace":"edge","fields":[{"name":"code","type":"int"}],"aliases":["Other"]}"#)
        .await;
    let edge = RegistryWorker::start(edge_dir.path(), &[]).await;
    let unit = r#"{"type":"record","name":"Unit","namespace":"edge","fields":[{"name":"code","type":"int"},{"name":"name","type":"string","default":"C"}],"aliases":["Other"]}"#;
    edge.register("unit", unit).await;
    let reading = r#"{"type":"record","name":"Reading","namespace":"edge","fields":[{"name":"sensor","type":"string"},{"name":"unit","type":"edge.Unit"}]}"#;
    let (status, body) = edge
        .post(
            "/subjects/nested-value/versions",
            json!({"schema": reading, "references": [{"name": "edge.Unit", "subject": "unit", "version": 1}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let edge_id = body["id"].as_u64().unwrap() as u32;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let records: Vec<Json> = (0..3)
        .map(|i| {
            let mut value = framed(edge_id, &[&format!("s{i}")]);
            value.extend_from_slice(&[2]); // code 1 (zig-zag)
            avro_string("C", &mut value);
            json!({ "value": b64(&value) })
        })
        .collect();
    let answer = edge
        .api
        .request(reqwest::Method::POST, "/topics/nested")
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(json!({ "records": records }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let sink = kafka_sink(
        "ship",
        &bootstrap,
        "nested",
        &[("destination.schema.registry.url", central.registry.as_str())],
    );
    common::create_through(&edge.api, sink).await;
    let got = shipped(&bootstrap, "nested", 3, LONG).await;
    let central_id = latest_id(&central, "nested-value").await;
    assert_ne!(central_id, edge_id);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got.iter().all(|s| s.value_id == Some(central_id)),
        "{got:?}"
    );
    let (_, latest) = central.get("/subjects/nested-value/versions/latest").await;
    assert_eq!(
        latest["references"],
        json!([{"name": "edge.Unit", "subject": "unit", "version": 2}]),
        "{latest}"
    );
    edge.stop().await;
    central.stop().await;
}
