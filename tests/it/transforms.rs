//! Single message transforms and predicates end to end, on the source and the sink side.

use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_chain_reshapes_and_routes_records() {
    let Fixture {
        dir: _dir,
        w,
        input,
        output: out,
    } = Fixture::start().await;
    append_lines(&input, ["alpha".to_string(), "beta".to_string()]);
    let source = json!({"name": "src", "config": {
        "connector.class": "FileStreamSource", "file": input.display().to_string(), "topic": "raw-events",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
        "transforms": "hoist,insert,key,route",
        "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.hoist.field": "line",
        "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.insert.static.field": "origin",
        "transforms.insert.static.value": "edge",
        "transforms.key.type": "ValueToKey",
        "transforms.key.fields": "line",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "raw-(.*)",
        "transforms.route.replacement": "routed-$1"}});
    let (s, body) = w.post("/connectors", source).await;
    assert_eq!(s, 201, "{body}");
    let sink = json!({"name": "snk", "config": {
        "connector.class": "FileStreamSink", "file": out.display().to_string(), "topics": "routed-events",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
        "transforms": "extract",
        "transforms.extract.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
        "transforms.extract.field": "line"}});
    let (s, body) = w.post("/connectors", sink).await;
    assert_eq!(s, 201, "{body}");
    wait_until("the routed records out", || async {
        lines(&out).len() == 2
    })
    .await;
    assert_eq!(lines(&out), ["alpha", "beta"]);
    // Topic tracking follows the router.
    assert_eq!(
        w.get("/connectors/src/topics").await.1,
        json!({"src": {"topics": ["routed-events"]}})
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_with_a_negated_predicate_drops_exactly_the_others() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    let out = dir.path().join("out.txt");
    append_lines(&a, (0..5).map(|i| format!("keep-{i}")));
    append_lines(&b, (0..5).map(|i| format!("drop-{i}")));
    w.create(file_source("sa", &a, "keep-a")).await;
    w.create(file_source("sb", &b, "drop-b")).await;
    let probe = dir.path().join("probe.txt");
    w.create(file_sink("probe", &probe, "keep-a,drop-b")).await;
    wait_until("both topics filled", || async { lines(&probe).len() == 10 }).await;
    let sink = json!({"name": "filtered", "config": {
        "connector.class": "FileStreamSink", "file": out.display().to_string(), "topics": "keep-a,drop-b",
        "transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "p", "transforms.f.negate": "true",
        "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "keep-.*"}});
    let (s, body) = w.post("/connectors", sink).await;
    assert_eq!(s, 201, "{body}");
    wait_until("the sink to commit both topics", || async {
        let offsets = w.get("/connectors/filtered/offsets").await.1;
        offsets["offsets"]
            .as_array()
            .is_some_and(|o| o.len() == 2 && o.iter().all(|e| e["offset"]["kafka_offset"] == 5))
    })
    .await;
    let mut got = lines(&out);
    got.sort();
    assert_eq!(got, (0..5).map(|i| format!("keep-{i}")).collect::<Vec<_>>());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transform_validation_is_reported_per_key() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, infos) = w
        .put(
            "/connector-plugins/FileStreamSink/config/validate",
            json!({"connector.class": "FileStreamSink", "name": "v", "topics": "t",
                   "transforms": "r,x", "transforms.r.type": "RegexRouter", "transforms.r.regex": "(",
                   "transforms.x.type": "NoSuchTransform"}),
        )
        .await;
    assert_eq!(s, 200);
    assert!(
        infos["groups"]
            .as_array()
            .unwrap()
            .contains(&json!("Transforms: r")),
        "{infos}"
    );
    let errors: Vec<String> = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            c["value"]["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| format!("{}: {}", c["value"]["name"], e))
        })
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("transforms.x.type")
            && e.contains("Class NoSuchTransform could not be found.")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("transforms.r.regex")),
        "{errors:?}"
    );
    // A create with the same config is refused with those messages.
    let (s, body) = w
        .post("/connectors", json!({"name": "v", "config": {"connector.class": "FileStreamSink", "topics": "t", "transforms": "x", "transforms.x.type": "NoSuchTransform"}}))
        .await;
    assert_eq!(s, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Class NoSuchTransform could not be found."),
        "{body}"
    );
    let (_, plugins) = w.get("/connector-plugins?connectorsOnly=false").await;
    let types: Vec<&str> = plugins
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"transformation") && types.contains(&"predicate"));
    assert_eq!(
        w.get("/connector-plugins/org.apache.kafka.connect.transforms.RegexRouter/config")
            .await
            .0,
        200
    );
    w.stop().await;
}
