//! The local topic log over REST, in Confluent REST Proxy v2's shapes: metadata, produce, read (with its
//! long poll), delete, and the error codes.

use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value as Json};

use crate::common::*;

const JSON_V2: &str = "application/vnd.kafka.json.v2+json";
const BINARY_V2: &str = "application/vnd.kafka.binary.v2+json";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Sends `body` as `content_type` and answers the status and the JSON body (Null when empty).
async fn send(
    w: &TestWorker,
    method: reqwest::Method,
    path: &str,
    content_type: &str,
    body: String,
) -> (u16, Json) {
    let r = w
        .client
        .request(method, format!("{}{path}", w.url))
        .header("Content-Type", content_type)
        .body(body)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Json::Null))
}

async fn produce(w: &TestWorker, path: &str, content_type: &str, body: Json) -> (u16, Json) {
    send(
        w,
        reqwest::Method::POST,
        path,
        content_type,
        body.to_string(),
    )
    .await
}

/// `GET path` with the given `Accept`.
async fn get_as(w: &TestWorker, path: &str, accept: &str) -> (u16, Json) {
    let r = w
        .client
        .get(format!("{}{path}", w.url))
        .header("Accept", accept)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let media_type = r.headers().get("content-type").cloned();
    let body: Json = r.json().await.expect("JSON body");
    if status == 200 && [JSON_V2, BINARY_V2].contains(&accept) {
        assert_eq!(media_type.unwrap(), accept, "{body}");
    }
    (status, body)
}

fn offsets_of(answer: &Json) -> Vec<(i64, i64)> {
    answer["offsets"]
        .as_array()
        .expect("offsets")
        .iter()
        .map(|o| {
            assert_eq!(o["error_code"], Json::Null, "{o}");
            (
                o["partition"].as_i64().unwrap(),
                o["offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sources_records_are_read_back_over_rest() {
    let f = Fixture::start().await;
    let w = &f.w;
    append_lines(&f.input, ["a", "b", "c"].map(String::from));
    w.create(file_source("src", &f.input, "logs")).await;
    wait_until("three records in the log", || async {
        w.get("/topics/logs/partitions/0/offsets").await.1["end_offset"] == 3
    })
    .await;

    assert_eq!(w.get("/topics").await, (200, json!(["logs"])));
    let replica = json!({"partition": 0, "leader": 0,
        "replicas": [{"broker": 0, "leader": true, "in_sync": true}]});
    let (s, topic) = w.get("/topics/logs").await;
    assert_eq!(s, 200);
    assert_eq!(topic["name"], "logs");
    assert_eq!(topic["partitions"], json!([replica]));
    assert_eq!(topic["configs"]["cleanup.policy"], "delete");
    assert_eq!(
        w.get("/topics/logs/partitions").await,
        (200, json!([replica]))
    );
    assert_eq!(w.get("/topics/logs/partitions/0").await, (200, replica));
    assert_eq!(
        w.get("/topics/logs/partitions/0/offsets").await,
        (200, json!({"beginning_offset": 0, "end_offset": 3}))
    );

    let (s, records) = get_as(w, "/topics/logs/partitions/0/records?offset=1", BINARY_V2).await;
    assert_eq!(s, 200);
    assert_eq!(
        records,
        json!([
            {"topic": "logs", "key": null, "value": b64(b"b"), "partition": 0, "offset": 1},
            {"topic": "logs", "key": null, "value": b64(b"c"), "partition": 0, "offset": 2},
        ])
    );
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_binary_records_round_trip() {
    let f = Fixture::start().await;
    let w = &f.w;
    let body = json!({"records": [{"key": "k1", "value": {"a": 1}}, {"value": [1, "two"]}]});
    let (s, answer) = produce(w, "/topics/j", JSON_V2, body).await;
    assert_eq!(s, 200, "{answer}");
    let (_, _, headers) = w.request(reqwest::Method::GET, "/topics/j", None).await;
    assert_eq!(headers["content-type"], "application/vnd.kafka.v2+json");
    assert_eq!(answer["key_schema_id"], Json::Null);
    assert_eq!(answer["value_schema_id"], Json::Null);
    assert_eq!(offsets_of(&answer), vec![(0, 0), (0, 1)]);

    let body = json!({"records": [{"key": b64(b"\"bk\""), "value": b64(b"{\"b\":2}")}]});
    let (s, answer) = produce(w, "/topics/j/partitions/0", BINARY_V2, body).await;
    assert_eq!(s, 200, "{answer}");
    assert_eq!(offsets_of(&answer), vec![(0, 2)]);
    assert_eq!(
        w.get("/topics/j/partitions/0/offsets").await.1,
        json!({"beginning_offset": 0, "end_offset": 3})
    );

    let (s, records) = get_as(w, "/topics/j/partitions/0/records?offset=0", JSON_V2).await;
    assert_eq!(s, 200);
    assert_eq!(
        records,
        json!([
            {"topic": "j", "key": "k1", "value": {"a": 1}, "partition": 0, "offset": 0},
            {"topic": "j", "key": null, "value": [1, "two"], "partition": 0, "offset": 1},
            {"topic": "j", "key": "bk", "value": {"b": 2}, "partition": 0, "offset": 2},
        ])
    );
    let (_, records) = get_as(w, "/topics/j/partitions/0/records?offset=0", BINARY_V2).await;
    let values: Vec<&Json> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["value"])
        .collect();
    assert_eq!(
        values,
        [
            &json!(b64(b"{\"a\":1}")),
            &json!(b64(b"[1,\"two\"]")),
            &json!(b64(b"{\"b\":2}"))
        ]
    );
    assert_eq!(records[0]["key"], json!(b64(b"\"k1\"")));

    // max_bytes bounds the answer, which still holds at least one record.
    let (_, records) = get_as(
        w,
        "/topics/j/partitions/0/records?offset=0&max_bytes=1",
        JSON_V2,
    )
    .await;
    assert_eq!(records.as_array().unwrap().len(), 1);
    assert_eq!(records[0]["offset"], 0);
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produced_records_reach_a_file_sink() {
    let f = Fixture::start().await;
    let w = &f.w;
    let (s, _) = produce(
        w,
        "/topics/out",
        JSON_V2,
        json!({"records": [{"value": "hello"}, {"value": {"x": 1}}]}),
    )
    .await;
    assert_eq!(s, 200);
    let (s, _) = produce(
        w,
        "/topics/out",
        BINARY_V2,
        json!({"records": [{"value": b64(b"raw line")}]}),
    )
    .await;
    assert_eq!(s, 200);
    w.create(file_sink("sink", &f.output, "out")).await;
    let expected = ["\"hello\"", "{\"x\":1}", "raw line"]
        .map(String::from)
        .to_vec();
    wait_until("the sink to write the produced records", || async {
        lines(&f.output) == expected
    })
    .await;
    // A record produced while the sink runs reaches it too.
    produce(
        w,
        "/topics/out",
        JSON_V2,
        json!({"records": [{"value": 7}]}),
    )
    .await;
    wait_until("the sink to write the later record", || async {
        lines(&f.output).last().map(String::as_str) == Some("7")
    })
    .await;
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_long_polls_until_a_record_is_appended() {
    let f = Fixture::start().await;
    let w = &f.w;
    produce(w, "/topics/lp", JSON_V2, json!({"records": [{"value": 0}]})).await;

    // Nothing past the end: the read answers an empty array once its timeout has passed.
    let started = Instant::now();
    let (s, records) = get_as(
        w,
        "/topics/lp/partitions/0/records?offset=1&timeout=200",
        JSON_V2,
    )
    .await;
    assert_eq!((s, records), (200, json!([])));
    assert!(started.elapsed() >= Duration::from_millis(200));

    let url = format!(
        "{}/topics/lp/partitions/0/records?offset=1&timeout=60000",
        w.url
    );
    let client = w.client.clone();
    let started = Instant::now();
    let read = tokio::spawn(async move {
        let r = client
            .get(url)
            .header("Accept", JSON_V2)
            .send()
            .await
            .expect("read");
        r.json::<Json>().await.expect("JSON")
    });
    // The read waits (it would answer at once were a record there), and the append comes after.
    assert_holds_for("the read to wait", Duration::from_millis(300), || async {
        !read.is_finished()
    })
    .await;
    let (s, _) = produce(w, "/topics/lp", JSON_V2, json!({"records": [{"value": 1}]})).await;
    assert_eq!(s, 200);
    let records = tokio::time::timeout(DEADLINE, read)
        .await
        .expect("the read returned")
        .unwrap();
    assert_eq!(
        records,
        json!([{"topic": "lp", "key": null, "value": 1, "partition": 0, "offset": 1}])
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the read waited out its timeout"
    );
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_ends_when_the_worker_shuts_down() {
    let f = Fixture::start().await;
    let w = f.w;
    produce(
        &w,
        "/topics/lp",
        JSON_V2,
        json!({"records": [{"value": 0}]}),
    )
    .await;
    let url = format!(
        "{}/topics/lp/partitions/0/records?offset=1&timeout=300000",
        w.url
    );
    let client = w.client.clone();
    let read = tokio::spawn(async move {
        let r = client.get(url).header("Accept", JSON_V2).send().await?;
        r.json::<Json>().await
    });
    assert_holds_for("the read to wait", Duration::from_millis(300), || async {
        !read.is_finished()
    })
    .await;
    let started = Instant::now();
    w.stop().await;
    let records = tokio::time::timeout(DEADLINE, read)
        .await
        .expect("the read returned")
        .unwrap()
        .expect("the read was answered");
    assert_eq!(records, json!([]));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the shutdown waited for the read: {:?}",
        started.elapsed()
    );
}

fn assert_error(answer: (u16, Json), code: u64) {
    let (status, body) = answer;
    assert_eq!(body["error_code"], code, "{body}");
    assert_eq!(u64::from(status), code / 100, "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_rest_proxy_codes() {
    let f = Fixture::start().await;
    let w = &f.w;
    for path in [
        "/topics/nope",
        "/topics/nope/partitions",
        "/topics/nope/partitions/0",
        "/topics/nope/partitions/0/offsets",
        "/topics/nope/partitions/0/records?offset=0",
    ] {
        assert_error(w.get(path).await, 40401);
    }
    assert_error(w.delete("/topics/nope").await, 40401);
    produce(w, "/topics/t", JSON_V2, json!({"records": [{"value": 1}]})).await;
    for path in [
        "/topics/t/partitions/1",
        "/topics/t/partitions/x",
        "/topics/t/partitions/-1/offsets",
        "/topics/t/partitions/3/records?offset=0",
    ] {
        assert_error(w.get(path).await, 40402);
    }
    let one = json!({"records": [{"value": 1}]});
    assert_error(
        produce(w, "/topics/t/partitions/3", JSON_V2, one.clone()).await,
        40402,
    );
    let elsewhere = json!({"records": [{"value": 1, "partition": 7}]});
    assert_error(produce(w, "/topics/t", JSON_V2, elsewhere).await, 40402);
    assert_error(w.get("/consumers/g/instances/i/records").await, 40403);

    let invalid = [
        (JSON_V2, "{not json".to_string()),
        (JSON_V2, json!({"records": []}).to_string()),
        (JSON_V2, json!({"values": [1]}).to_string()),
        (
            BINARY_V2,
            json!({"records": [{"value": "not base64!"}]}).to_string(),
        ),
        (BINARY_V2, json!({"records": [{"value": 5}]}).to_string()),
    ];
    for (content_type, body) in invalid {
        assert_error(
            send(w, reqwest::Method::POST, "/topics/t", content_type, body).await,
            42201,
        );
    }
    let bad_name = json!({"records": [{"value": 1}]});
    assert_error(produce(w, "/topics/a%20b", JSON_V2, bad_name).await, 42201);
    assert_error(w.get("/topics/t/partitions/0/records").await, 42201);
    assert_error(
        w.get("/topics/t/partitions/0/records?offset=-1").await,
        42201,
    );
    // The refused requests stored nothing.
    assert_eq!(
        w.get("/topics/t/partitions/0/offsets").await.1["end_offset"],
        1
    );

    let text = json!({"records": [{"value": b64(b"plain text")}]});
    produce(w, "/topics/b", BINARY_V2, text).await;
    let read = get_as(w, "/topics/b/partitions/0/records?offset=0", JSON_V2).await;
    assert_error(read, 50002);

    let (s, body) = produce(w, "/topics/t", "application/json", one).await;
    assert_eq!((s, body["error_code"].clone()), (415, json!(415)));
    let (s, body) = get_as(w, "/topics/t/partitions/0/records?offset=0", "text/plain").await;
    assert_eq!((s, body["error_code"].clone()), (406, json!(406)));
    assert_eq!(w.put("/topics/t", json!({})).await.0, 405);
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_is_refused_while_a_connector_uses_the_topic() {
    let f = Fixture::start().await;
    let w = &f.w;
    for topic in ["subscribed", "written", "free"] {
        produce(
            w,
            &format!("/topics/{topic}"),
            JSON_V2,
            json!({"records": [{"value": 1}]}),
        )
        .await;
    }
    w.create(file_sink("sink", &f.output, "subscribed")).await;
    append_lines(&f.input, ["line".to_string()]);
    w.create(file_source("src", &f.input, "written")).await;
    wait_until("the source to write", || async {
        w.get("/topics/written/partitions/0/offsets").await.1["end_offset"] == 2
    })
    .await;
    // The source is stopped: it no longer names the topic in its config, but KIP-558 remembers it.
    assert_eq!(w.put_empty("/connectors/src/stop").await.0, 204);

    assert_error(w.delete("/topics/subscribed").await, 40901);
    assert_error(w.delete("/topics/written").await, 40901);
    assert_eq!(w.delete("/topics/free").await.0, 204);
    assert_error(w.get("/topics/free").await, 40401);
    assert_eq!(w.get("/topics").await.1, json!(["subscribed", "written"]));

    assert_eq!(w.delete("/connectors/sink").await.0, 204);
    assert_eq!(w.delete("/topics/subscribed").await.0, 204);
    assert_error(
        w.get("/topics/subscribed/partitions/0/offsets").await,
        40401,
    );
    // Produced again, the topic starts over at offset 0.
    let (_, answer) = produce(
        w,
        "/topics/subscribed",
        JSON_V2,
        json!({"records": [{"value": 2}]}),
    )
    .await;
    assert_eq!(offsets_of(&answer), vec![(0, 0)]);
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_topic_routes_are_behind_basic_auth() {
    let dir = tempdir();
    let creds = dir.path().join("creds.properties");
    std::fs::write(&creds, "u: p\n").unwrap();
    let c = creds.display().to_string();
    let settings = [
        (
            "rest.extension.classes",
            "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
        ),
        ("rest.basic.auth.credentials.file", c.as_str()),
    ];
    let w = TestWorker::launch(dir.path(), &settings, Vec::new(), |url| {
        Client::new(url).basic_auth("u", "p")
    })
    .await
    .expect("the worker starts");
    let body = json!({"records": [{"value": 1}]}).to_string();
    let anonymous = w.api.anonymous();
    for (method, path) in [
        (reqwest::Method::GET, "/topics"),
        (reqwest::Method::POST, "/topics/t"),
        (
            reqwest::Method::GET,
            "/topics/t/partitions/0/records?offset=0",
        ),
        (reqwest::Method::DELETE, "/topics/t"),
    ] {
        let r = anonymous
            .request(method.clone(), path)
            .header("Content-Type", JSON_V2)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{method} {path}");
    }
    let r = w
        .api
        .request(reqwest::Method::POST, "/topics/t")
        .header("Content-Type", JSON_V2)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(w.get("/topics").await, (200, json!(["t"])));
    w.stop().await;
}
