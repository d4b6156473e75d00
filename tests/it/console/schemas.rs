//! The console's Schemas page (subjects with their versions, levels, references and soft deletes) and
//! the record browser showing records framed by a Schema Registry converter decoded, in a real headless
//! Chromium at 1024 and 360 px.

use serde_json::{json, Value as Json};

use super::driver::Browser;
use crate::schema_registry::RegistryWorker;

const ORDER: &str =
    r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"}]}"#;
const ORDER_2: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"note","type":"string","default":""}]}"#;
const BOX: &str = r#"{"type":"record","name":"Box","namespace":"shop","fields":[{"name":"order","type":"shop.Order"}]}"#;

/// `method url` with a JSON body; fails the test unless it answers 200.
async fn send(method: reqwest::Method, url: &str, body: Option<Json>) -> Json {
    let mut req = reqwest::Client::new().request(method, url);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let body: Json = resp.json().await.unwrap_or(Json::Null);
    assert_eq!(status, 200, "{url}: {body}");
    body
}

/// Orders produced through the REST Proxy with a schema (`orders-value` version 1), a second version, a
/// level on the subject, a subject referencing it, and a soft-deleted subject.
async fn registry(r: &RegistryWorker) {
    let produced = r
        .api
        .request(reqwest::Method::POST, "/topics/orders")
        .header("content-type", "application/vnd.kafka.avro.v2+json")
        .body(
            json!({"value_schema": ORDER, "records": [{"value": {"id": 1}}, {"value": {"id": 2}}]})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(produced.status(), 200);
    assert_eq!(r.register("orders-value", ORDER_2).await, 2);
    let reg = &r.registry;
    use reqwest::Method;
    send(
        Method::PUT,
        &format!("{reg}/config/orders-value"),
        Some(json!({"compatibility": "FULL"})),
    )
    .await;
    let refs = json!({"schema": BOX, "references": [{"name": "shop.Order", "subject": "orders-value", "version": 1}]});
    send(
        Method::POST,
        &format!("{reg}/subjects/boxes-value/versions"),
        Some(refs),
    )
    .await;
    r.register("scratch", "\"long\"").await;
    send(Method::DELETE, &format!("{reg}/subjects/scratch"), None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schemas_page_lists_subjects_and_the_browser_decodes_framed_records() {
    let dir = crate::common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    registry(&r).await;
    let mut b = Browser::start(r.api.base(), 1024, 700).await;
    for (width, height, suffix) in [(1024, 700, ""), (360, 740, "-360")] {
        b.resize(width, height).await;
        subjects(&b).await;
        b.screenshot(&format!("schemas{suffix}")).await;
        b.assert_clean(&format!("#/schemas at {width} px")).await;
        subject(&b).await;
        b.screenshot(&format!("schema-subject{suffix}")).await;
        b.assert_clean(&format!("#/schemas/orders-value at {width} px"))
            .await;
        decoded_records(&b).await;
        b.screenshot(&format!("topic-records-decoded{suffix}"))
            .await;
        b.assert_clean(&format!("#/topics/orders at {width} px"))
            .await;
    }
    b.close().await;
    r.stop().await;
}

/// The list: live subjects with versions, IDs and levels; soft-deleted ones once asked for, marked.
async fn subjects(b: &Browser) {
    b.open("#/schemas").await;
    let cell =
        |s: &str, label: &str| format!("#subjects tr[data-subject='{s}'] td[data-label='{label}']");
    b.wait_text(&cell("orders-value", "Versions"), "orders' versions", |t| {
        t == "1, 2"
    })
    .await;
    assert_eq!(
        b.some_text(&cell("orders-value", "Compatibility")).await,
        "FULL"
    );
    assert_eq!(b.some_text(&cell("orders-value", "Latest ID")).await, "2");
    assert_eq!(b.some_text(&cell("orders-value", "Type")).await, "AVRO");
    assert_eq!(
        b.some_text(&cell("boxes-value", "Compatibility")).await,
        "BACKWARD (global)"
    );
    assert_eq!(b.some_text("#global-level").await, "BACKWARD");
    assert!(!b.exists("#subjects tr[data-subject='scratch']").await);
    b.click("#show-deleted").await;
    b.find("#subjects tr[data-subject='scratch'][data-deleted] [data-deleted]")
        .await;
}

/// A subject: its versions, the chosen one's ID, type and pretty text, its level, and references.
async fn subject(b: &Browser) {
    b.open("#/schemas/orders-value").await;
    b.wait_text("#schema-id", "the latest version's ID", |t| t == "2")
        .await;
    assert_eq!(b.some_text("#schema-type").await, "AVRO");
    assert!(b
        .some_text("#level")
        .await
        .contains("FULL (set on this subject)"));
    let text = b.some_text("#schema-text").await;
    assert!(text.contains("\"name\": \"note\""), "{text}");
    assert!(text.lines().count() > 5, "pretty-printed: {text}");
    b.click("#versions li[data-version='1'] a").await;
    b.wait_text("#schema-id", "version 1's ID", |t| t == "1")
        .await;
    b.open("#/schemas/boxes-value").await;
    b.wait_text("#references", "the reference", |t| {
        t.contains("shop.Order → orders-value version 1")
    })
    .await;
    assert!(b
        .some_text("#level")
        .await
        .contains("BACKWARD (the global level)"));
}

/// The record browser: framed values decoded with their schema ID and subject; raw on request.
async fn decoded_records(b: &Browser) {
    b.open("#/topics/orders").await;
    b.find("#records tr[data-offset='1'] [data-decoded]").await;
    let value = "#records tr[data-offset='0'] [data-part=value]";
    let text = b.some_text(value).await;
    assert!(text.contains("AVRO schema 1 · orders-value"), "{text}");
    assert!(text.contains("\"id\": 1"), "{text}");
    b.click("#raw").await;
    b.wait_gone("#records [data-decoded]").await;
    b.click("#raw").await;
    b.find("#records tr[data-offset='0'] [data-decoded]").await;
}
