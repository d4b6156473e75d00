//! An Airbyte source in the console: the create form's fields from the source's SPEC, and the
//! per-stream status on the connector's page, with the fake source of `tests/fixtures/airbyte`.

use serde_json::{json, Value as Json};

use super::driver::Browser;
use crate::airbyte::fake;
use crate::common::*;

const CLASS: &str = "liteconnect.airbyte.AirbyteSourceConnector";
/// The WebDriver key code of Tab: leaving a field fires its `change` event.
const TAB: &str = "\u{E004}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_shows_the_spec_fields_and_the_page_the_streams_records() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let b = Browser::start(&w.url, 1024, 900).await;
    b.open("#/new").await;
    b.choose("#plugin", CLASS).await;
    b.type_into("input[name='name']", "fake-ui").await;
    b.type_into("input[name='airbyte.command']", &format!("{}{TAB}", fake()))
        .await;

    // One field per top-level property, with its title, description, default and required mark.
    let count = b
        .wait_text("label[for='spec-count']", "the SPEC's count field", |t| {
            t.contains("Count")
        })
        .await;
    assert!(
        count.contains("(count)") && count.contains("required"),
        "{count}"
    );
    let per_state = b.some_text("label[for='spec-per_state']").await;
    assert!(per_state.contains("Records per state"), "{per_state}");
    assert!(!per_state.contains("required"), "{per_state}");
    assert_eq!(b.some_text("#spec-doc-count").await, "How many records.");
    let placeholder = b.find("#spec-per_state").await.attr("placeholder").await;
    assert_eq!(placeholder.unwrap().as_deref(), Some("default: 10"));
    for name in ["behaviour", "pid_file", "delay"] {
        assert!(b.exists(&format!("#spec-{name}")).await, "{name}");
    }

    // Their values make up airbyte.config, typed as the SPEC says.
    b.type_into("#spec-count", "7").await;
    b.type_into("#spec-per_state", "3").await;
    let raw = b
        .eval("return document.querySelector(\"input[name='airbyte.config']\").value")
        .await;
    let typed: Json = serde_json::from_str(raw.as_str().unwrap()).unwrap();
    assert_eq!(typed, json!({"count": 7, "per_state": 3}));
    // The SPEC and CHECK of the validation as you type accept them.
    b.wait_text("#validation", "the form valid", |t| {
        t == "The config is valid."
    })
    .await;
    b.screenshot("new-airbyte-connector").await;
    b.assert_clean("the new connector form with a SPEC").await;

    b.click("#create").await;
    b.wait_text("h1", "the new connector's page", |t| t == "fake-ui")
        .await;
    let config = w.get("/connectors/fake-ui/config").await.1;
    let stored: Json = serde_json::from_str(config["airbyte.config"].as_str().unwrap()).unwrap();
    assert_eq!(stored, json!({"count": 7, "per_state": 3}));

    // The page shows the stream's records and the last sync once it ends.
    let records = "#airbyte-streams [data-stream='numbers'] td[data-label='Records read']";
    b.wait_text(records, "7 records read", |t| t == "7").await;
    let sync = b
        .wait_text("#airbyte-sync", "a finished sync", |t| {
            t.contains("last sync: succeeded")
        })
        .await;
    assert!(sync.contains("syncs finished: 1"), "{sync}");
    let commit = b
        .some_text("#airbyte-streams [data-stream='numbers'] td[data-label='Last state commit']")
        .await;
    assert!(commit.ends_with(" UTC"), "{commit}");
    b.screenshot("connector-airbyte").await;
    b.assert_clean("an Airbyte connector's page").await;
    b.close().await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_is_no_source_shows_the_apis_message() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let b = Browser::start(&w.url, 1024, 700).await;
    b.open("#/new").await;
    b.choose("#plugin", CLASS).await;
    b.type_into(
        "input[name='airbyte.command']",
        &format!("no-such-source-here{TAB}"),
    )
    .await;
    let shown = b
        .wait_text("#airbyte-spec-status", "the SPEC's error", |t| {
            t.starts_with("The source's SPEC failed")
        })
        .await;
    assert!(shown.contains("no-such-source-here"), "{shown}");
    assert!(!b.exists("[data-spec]").await);
    b.close().await;
    w.stop().await;
}
