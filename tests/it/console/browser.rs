//! The console's pages in a real headless Chromium against a worker on an ephemeral port: the scenarios
//! of the console's issue, each ending with no error in the browser's console.

use base64::Engine;
use serde_json::{json, Value as Json};

use super::driver::Browser;
use crate::common::*;

const SINK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// Waits until the topic's partition 0 holds `n` records.
async fn wait_records(w: &TestWorker, topic: &str, n: i64) {
    let path = format!("/topics/{topic}/partitions/0/offsets");
    wait_until(&format!("{n} records in {topic}"), || async {
        w.get(&path).await.1["end_offset"].as_i64() == Some(n)
    })
    .await;
}

/// Fills the new-connector form for a FileStreamSink (the plugin picked, the fields typed).
async fn fill_sink_form(b: &Browser, name: &str, topics: &str, file: &str) {
    b.open("#/new").await;
    b.choose("#plugin", SINK_CLASS).await;
    b.type_into("input[name='name']", name).await;
    if !topics.is_empty() {
        b.type_into("input[name='topics']", topics).await;
    }
    b.type_into("input[name='file']", file).await;
}

/// Text with its whitespace runs made single spaces, as a browser may render them.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first number in a cell ("–" reads as none).
fn number(text: &str) -> Option<f64> {
    text.trim().replace(',', "").parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_sink_from_the_form_gets_offsets_resumes_and_runs() {
    let f = Fixture::start().await;
    let fed: Vec<String> = (0..200).map(|i| format!("line-{i}")).collect();
    append_lines(&f.input, fed.clone());
    f.w.create(file_source("feed", &f.input, "feed-topic"))
        .await;
    wait_records(&f.w, "feed-topic", 200).await;
    let b = Browser::start(&f.w.url, 1024, 700).await;

    // Created STOPPED with the form: listed STOPPED, with no tasks.
    fill_sink_form(&b, "sink", "feed-topic", &f.output.display().to_string()).await;
    b.click("input[name='initial_state'][value='STOPPED']")
        .await;
    b.click("#create").await;
    b.wait_text("h1", "the new connector's page", |t| t == "sink")
        .await;
    assert_eq!(f.w.status("sink").await["connector"]["state"], "STOPPED");
    b.open("#/connectors").await;
    b.find("tr[data-connector='sink'][data-state='STOPPED']")
        .await;
    b.wait_text("tr[data-connector='sink'] [data-tasks]", "no tasks", |t| {
        t == "0/0"
    })
    .await;

    set_offsets_and_resume(&f, &b, &fed).await;
    b.find("#tasks tr[data-task='0'] .state[data-state='RUNNING']")
        .await;

    // The list, refreshed without a reload: RUNNING, 1/1 task, records/s moving.
    b.open("#/connectors").await;
    b.eval("window.__notReloaded = true; return null").await;
    append_lines(&f.input, (200..300).map(|i| format!("line-{i}")));
    b.find("tr[data-connector='sink'][data-state='RUNNING']")
        .await;
    b.wait_text(
        "tr[data-connector='sink'] [data-tasks]",
        "one task running",
        |t| t == "1/1",
    )
    .await;
    b.wait_text(
        "tr[data-connector='sink'] [data-rate='in']",
        "the sink's records/s",
        |t| number(t).is_some_and(|n| n > 0.0),
    )
    .await;
    b.wait_text(
        "tr[data-connector='feed'] [data-rate='out']",
        "the source's records/s",
        |t| number(t).is_some_and(|n| n > 0.0),
    )
    .await;
    assert_eq!(b.eval("return window.__notReloaded === true").await, true);
    b.screenshot("connectors-running").await;

    buttons_pause_restart_delete(&f.w, &b).await;
    b.assert_clean("the connectors list").await;
    b.close().await;
}

/// On the STOPPED sink's page: offsets set to 150 through the editor, then resumed through its button;
/// the sink delivers from offset 150 on.
async fn set_offsets_and_resume(f: &Fixture, b: &Browser, fed: &[String]) {
    // Offsets: edited on the connector's page while STOPPED.
    b.click("tr[data-connector='sink'] a").await;
    b.wait_text("#offsets-reason", "offsets editable", |t| {
        t.contains("stopped")
    })
    .await;
    let offsets = json!({"offsets": [{"partition": {"kafka_topic": "feed-topic", "kafka_partition": 0},
        "offset": {"kafka_offset": 150}}]});
    b.type_into("#offsets-json", &offsets.to_string()).await;
    b.click("#offsets-save").await;
    b.wait_text("#notice", "the offsets answer", |t| {
        t.contains("Offsets of sink")
    })
    .await;
    let stored = f.w.get("/connectors/sink/offsets").await.1;
    assert_eq!(
        stored["offsets"][0]["offset"]["kafka_offset"], 150,
        "{stored}"
    );

    // Resumed: RUNNING, and it delivers from offset 150 on.
    b.click("#connector-head button[data-action='resume']")
        .await;
    b.find("#connector-head .state[data-state='RUNNING']").await;
    b.wait_text("#offsets-reason", "offsets locked", |t| {
        t.contains("only while")
    })
    .await;
    assert!(!b.find("#offsets-save").await.is_enabled().await.unwrap());
    wait_until("the sink to deliver from offset 150", || async {
        std::fs::read_to_string(&f.output).is_ok_and(|t| t.lines().count() == 50)
    })
    .await;
    assert_eq!(lines(&f.output), fed[150..].to_vec());
    b.wait_text("#active-topics", "the active topic", |t| {
        t.contains("feed-topic")
    })
    .await;
}

/// Clicks a button of the sink's row in the list.
async fn press(b: &Browser, action: &str) {
    b.click(&format!(
        "tr[data-connector='sink'] button[data-action='{action}']"
    ))
    .await;
}

/// Waits until the list shows the sink in `state`, and the notice reads `answer`.
async fn listed(b: &Browser, state: &str, answer: &str) {
    b.find(&format!("tr[data-connector='sink'][data-state='{state}']"))
        .await;
    b.wait_text("#notice", answer, |t| t.contains(answer)).await;
}

/// Pause, resume, restart and delete through the list's buttons, each checked through the API.
async fn buttons_pause_restart_delete(w: &TestWorker, b: &Browser) {
    // Pause from the keyboard: the actions are real buttons.
    b.find("tr[data-connector='sink'] button[data-action='pause']")
        .await
        .send_keys(&fantoccini::key::Key::Enter.to_string())
        .await
        .expect("Enter on the pause button");
    listed(b, "PAUSED", "Pause sink: done").await;
    assert_eq!(w.status("sink").await["connector"]["state"], "PAUSED");
    press(b, "resume").await;
    listed(b, "RUNNING", "Resume sink: done").await;
    assert_eq!(w.status("sink").await["connector"]["state"], "RUNNING");

    press(b, "restart").await;
    let asked = b
        .wait_text("#dialog-title", "the restart dialog", |t| !t.is_empty())
        .await;
    assert_eq!(asked, "Restart sink?");
    b.click("#dialog-ok").await;
    listed(b, "RUNNING", "Restart sink: done").await;

    press(b, "delete").await;
    let asked = b
        .wait_text("#dialog", "the delete dialog", |t| {
            t.contains("Delete sink?")
        })
        .await;
    assert!(asked.contains("The connector sink"), "{asked}");
    // Cancelled first: nothing happens.
    b.click("#dialog-cancel").await;
    assert_eq!(w.status("sink").await["connector"]["state"], "RUNNING");
    press(b, "delete").await;
    b.wait_text("#dialog-ok", "the delete button", |t| t == "Delete sink")
        .await;
    b.click("#dialog-ok").await;
    b.wait_gone("tr[data-connector='sink']").await;
    assert_eq!(w.get("/connectors").await.1, json!(["feed"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_required_key_is_shown_on_its_field_and_nothing_is_created() {
    let f = Fixture::start().await;
    let b = Browser::start(&f.w.url, 1024, 700).await;
    fill_sink_form(&b, "nosink", "", &f.output.display().to_string()).await;
    b.click("#create").await;
    let error = b
        .wait_text("#err-topics", "the error on topics", |t| !t.is_empty())
        .await;
    assert!(error.contains("topics"), "{error}");
    let field = b.find("[data-field='topics']").await;
    assert!(field
        .attr("class")
        .await
        .unwrap()
        .unwrap_or_default()
        .contains("invalid"));
    assert_eq!(
        b.find("input[name='topics']")
            .await
            .attr("aria-invalid")
            .await
            .unwrap()
            .as_deref(),
        Some("true")
    );
    b.wait_text("#notice", "the form's refusal", |t| {
        t.contains("nothing was created")
    })
    .await;
    // The field keeps its own error only: `file` was given and has none.
    assert_eq!(b.find("#err-file").await.text().await.unwrap(), "");
    b.screenshot("new-connector-errors").await;
    assert_eq!(f.w.get("/connectors").await.1, json!([]));

    // Typing the key validates again (debounced) and takes the error away.
    b.type_into("input[name='topics']", "t").await;
    b.wait_text("#validation", "the form valid", |t| {
        t == "The config is valid."
    })
    .await;
    assert_eq!(b.find("#err-topics").await.text().await.unwrap(), "");
    assert_eq!(f.w.get("/connectors").await.1, json!([]));
    b.assert_clean("the new connector form").await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_shows_its_trace_and_the_record_browser_shows_records() {
    let f = Fixture::start().await;
    append_lines(
        &f.input,
        ["alpha".to_string(), "beta".into(), "{\"n\": 3}".into()],
    );
    let mut source = file_source("lines", &f.input, "lines");
    source["config"]["transforms"] = json!("origin");
    source["config"]["transforms.origin.type"] = json!("InsertHeader");
    source["config"]["transforms.origin.header"] = json!("origin");
    source["config"]["transforms.origin.value.literal"] = json!("edge");
    f.w.create(source).await;
    wait_records(&f.w, "lines", 3).await;
    let b = Browser::start(&f.w.url, 1024, 700).await;

    // A source whose path goes through a regular file, created from a pasted JSON body.
    let broken = f.dir.path().join("plain-file");
    std::fs::write(&broken, "not a directory").unwrap();
    let body = file_source("broken", &broken.join("in.txt"), "nowhere");
    b.open("#/new").await;
    b.click("button[data-mode='json']").await;
    b.type_into("#create-json", &body.to_string()).await;
    b.click("#json-form button[type='submit']").await;
    b.wait_text("h1", "the new connector's page", |t| t == "broken")
        .await;
    let trace = f.w.wait_for_failed_task("broken").await;
    b.open("#/connectors").await;
    let first = b.some_text("tr[data-connector='broken'] .firstline").await;
    assert_eq!(words(&first), words(trace.lines().next().unwrap()));
    let tasks = b
        .some_text("tr[data-connector='broken'] [data-failed='1']")
        .await;
    assert_eq!(words(&tasks), words("0/1 (1 failed)"));
    b.click("tr[data-connector='broken'] .firstline").await;
    let shown = b.some_text("tr[data-connector='broken'] pre.trace").await;
    assert_eq!(words(&shown), words(&trace));
    b.open("#/connectors/broken").await;
    b.find("#tasks tr[data-task='0'] .state[data-state='FAILED']")
        .await;
    b.click("#tasks tr[data-task='0'] summary").await;
    b.wait_text("#tasks pre.trace", "the task's trace", |t| {
        words(t) == words(&trace)
    })
    .await;
    b.screenshot("connector-failed").await;
    b.assert_clean("the failed connector").await;
    config_editor(&f.w, &b, &f.input).await;

    record_browser(&f.w, &b).await;
    b.assert_clean("the record browser").await;
    b.close().await;
}

/// On the broken connector's page: a bad value refused by Validate, on its key; a fixed path saved.
async fn config_editor(w: &TestWorker, b: &Browser, readable: &std::path::Path) {
    let mut config = w.get("/connectors/broken/config").await.1;
    config["tasks.max"] = json!("many");
    b.type_into("#config-json", &config.to_string()).await;
    b.click("#config-validate").await;
    let refused = b
        .some_text("#config-result [data-error-for='tasks.max']")
        .await;
    assert!(refused.starts_with("tasks.max: "), "{refused}");
    config["tasks.max"] = json!("1");
    config["file"] = json!(readable.display().to_string());
    b.type_into("#config-json", &config.to_string()).await;
    b.click("#config-save").await;
    b.wait_text("#notice", "the saved config", |t| {
        t.contains("Saved the config of broken")
    })
    .await;
    let saved = w.get("/connectors/broken/config").await.1;
    assert_eq!(
        saved["file"],
        json!(readable.display().to_string()),
        "{saved}"
    );
}

/// The source's records newest first and oldest first; a produced keyed JSON record pretty-printed.
async fn record_browser(w: &TestWorker, b: &Browser) {
    b.open("#/topics/lines").await;
    b.find("#records tr[data-offset='2']").await;
    let values = b
        .eval("return [...document.querySelectorAll('#records [data-part=value]')].map(e => e.textContent)")
        .await;
    assert_eq!(
        values,
        json!(["{\n  \"n\": 3\n}", "beta", "alpha"]),
        "newest first"
    );
    let keys = b
        .eval("return [...document.querySelectorAll('#records [data-part=key]')].map(e => e.textContent)")
        .await;
    assert_eq!(keys, json!(["null", "null", "null"]));
    let headers = b
        .eval("return [...document.querySelectorAll('#records td[data-label=Headers]')].map(e => e.textContent)")
        .await;
    assert_eq!(
        headers,
        json!(["origin: edge", "origin: edge", "origin: edge"])
    );
    b.choose("#order", "oldest").await;
    b.type_into("#from-offset", "1").await;
    b.click("#load").await;
    b.wait_text(
        "#records tbody tr:first-child",
        "oldest first from 1",
        |t| t.contains("beta"),
    )
    .await;
    assert_eq!(
        b.client
            .find_all(fantoccini::Locator::Css("#records tbody tr"))
            .await
            .unwrap()
            .len(),
        2
    );

    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let records = json!({"records": [{"key": b64("k1"), "value": b64("{\"a\":1}")},
        {"key": b64("k2"), "value": b64("plain")}]});
    let produced = w
        .client
        .post(format!("{}/topics/keyed", w.url))
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(records.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(produced.status(), 200);
    b.open("#/topics/keyed").await;
    b.find("#records tr[data-offset='1']").await;
    let row = |offset: i64, part: &str| {
        format!("return document.querySelector('#records tr[data-offset=\"{offset}\"] [data-part={part}]').textContent")
    };
    assert_eq!(b.eval(&row(0, "key")).await, json!("k1"));
    assert_eq!(b.eval(&row(0, "value")).await, json!("{\n  \"a\": 1\n}"));
    assert_eq!(b.eval(&row(1, "key")).await, json!("k2"));
    assert_eq!(b.eval(&row(1, "value")).await, json!("plain"));
    let stamp = b
        .eval("return document.querySelector('#records tr[data-offset=\"0\"] td[data-label=Timestamp]').textContent")
        .await;
    assert!(stamp.as_str().unwrap().ends_with('Z'), "{stamp}");
    b.screenshot("topic-records-keyed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_fits_360_pixels_and_logs_no_error() {
    let f = Fixture::start().await;
    append_lines(&f.input, (0..20).map(|i| format!("{{\"reading\": {i}}}")));
    f.w.create(file_source("meter-source", &f.input, "readings"))
        .await;
    f.w.create(file_sink("meter-sink", &f.output, "readings"))
        .await;
    wait_records(&f.w, "readings", 20).await;
    let mut b = Browser::start(&f.w.url, 1024, 700).await;
    // The console check sees what a page logs.
    b.open("#/connectors").await;
    b.eval("console.error('probe ' + 42); return null").await;
    let seen = b.console_errors().await;
    assert!(seen.iter().any(|e| e.contains("probe 42")), "{seen:?}");
    // And the contrast check sees faint text.
    b.eval("const p = document.createElement('p'); p.id = 'faint'; p.style.color = '#bbb'; p.textContent = 'faint'; document.body.append(p); return null").await;
    let low = b.low_contrast().await;
    assert!(low.to_string().contains("faint"), "{low}");
    b.eval("document.getElementById('faint').remove(); return null")
        .await;
    let pages: [(&str, &str, &str); 6] = [
        (
            "connectors",
            "#/connectors",
            "tr[data-connector='meter-sink'][data-state='RUNNING']",
        ),
        ("new-connector-form", "#/new", "#plugin"),
        ("connector", "#/connectors/meter-sink", "#charts polyline"),
        ("topics", "#/topics", "tr[data-topic='readings']"),
        (
            "topic-records",
            "#/topics/readings",
            "#records tr[data-offset='19']",
        ),
        ("worker", "#/worker", "#loggers"),
    ];
    for (width, height, suffix) in [(1024, 700, ""), (360, 740, "-360")] {
        b.resize(width, height).await;
        for (name, route, ready) in pages {
            b.open(route).await;
            b.find(ready).await;
            if route == "#/new" {
                b.choose("#plugin", SINK_CLASS).await;
                b.find("input[name='topics']").await;
            }
            b.screenshot(&format!("{name}{suffix}")).await;
            b.assert_clean(&format!("{route} at {width} px")).await;
        }
    }
    // The topics' records/s: a number once sampled twice, above 0 while the source appends.
    b.open("#/topics").await;
    let rate = "tr[data-topic='readings'] td[data-label='Records/s']";
    b.wait_text(rate, "a sampled rate", |t| number(t).is_some())
        .await;
    append_lines(&f.input, (20..60).map(|i| format!("{{\"reading\": {i}}}")));
    b.wait_text(rate, "records/s of readings", |t| {
        number(t).is_some_and(|n| n > 0.0)
    })
    .await;
    filters_and_hidden_tab(&b).await;
    worker_page(&f.w, &b).await;
    b.assert_clean("the worker page").await;
    b.close().await;
}

/// The list's filters by name and state; no refresh while the tab is hidden, refreshes again once shown.
async fn filters_and_hidden_tab(b: &Browser) {
    b.open("#/connectors").await;
    b.find("tr[data-connector='meter-sink']").await;
    b.type_into("#filter-name", "SOURCE").await;
    b.wait_gone("tr[data-connector='meter-sink']").await;
    b.find("tr[data-connector='meter-source']").await;
    b.type_into("#filter-name", "").await;
    b.choose("#filter-state", "PAUSED").await;
    b.wait_gone("tr[data-connector]").await;
    b.some_text("#connectors tbody").await;
    b.choose("#filter-state", "RUNNING").await;
    b.find("tr[data-connector='meter-sink']").await;

    let hide = |hidden: bool| {
        format!("Object.defineProperty(document, 'hidden', {{configurable: true, get: () => {hidden}}}); \
                 document.dispatchEvent(new Event('visibilitychange')); return null")
    };
    b.eval(&hide(true)).await;
    // A refresh already under way may still land: the summary settles, then stays.
    let summary = || async { b.find("#list-summary").await.text().await.unwrap() };
    let mut before = summary().await;
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        // Longer than the 2 s period: an unchanged summary means no refresh ran.
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        let now = summary().await;
        if now == before {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the list kept refreshing while the tab was hidden: {now}"
        );
        before = now;
    }
    let hidden_text = summary().await;
    b.eval(&hide(false)).await;
    b.wait_text("#list-summary", "a refresh once shown", |t| {
        t != hidden_text
    })
    .await;
}

/// The worker page's facts, and a log level changed through it.
async fn worker_page(w: &TestWorker, b: &Browser) {
    b.open("#/worker").await;
    let facts = b
        .wait_text("#worker-facts", "the worker's facts", |t| {
            t.contains("Database file")
        })
        .await;
    assert!(facts.contains(env!("CARGO_PKG_VERSION")), "{facts}");
    assert!(facts.contains("Uptime"), "{facts}");
    b.type_into("#new-logger", "org.example.console").await;
    b.choose("#new-level", "WARN").await;
    b.click("#loggers + form button[type='submit']").await;
    b.find("tr[data-logger='org.example.console']").await;
    let level: Json = w.get("/admin/loggers/org.example.console").await.1;
    assert_eq!(level["level"], "WARN", "{level}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_names_twin_plugins_and_the_generated_form_read_well() {
    let f = Fixture::start().await;
    // A topic with the longest name Kafka allows.
    let long = format!("t{}", "x".repeat(248));
    let produced = reqwest::Client::new()
        .post(format!("{}/topics/{long}", f.w.url))
        .header("Content-Type", "application/vnd.kafka.json.v2+json")
        .body(r#"{"records": [{"value": "one"}]}"#)
        .send()
        .await
        .unwrap();
    assert!(produced.status().is_success(), "{produced:?}");
    // A failed task, whose trace sits under its state badge.
    let broken = f.dir.path().join("plain-file");
    std::fs::write(&broken, "not a directory").unwrap();
    f.w.create(file_source("broken", &broken.join("in.txt"), "nowhere"))
        .await;
    f.w.wait_for_failed_task("broken").await;
    let mut b = Browser::start(&f.w.url, 1280, 800).await;
    for (width, height) in [(1280, 800), (390, 844)] {
        b.resize(width, height).await;
        b.open("#/topics").await;
        let link = format!("tr[data-topic='{long}'] a.name");
        b.find(&link).await;
        let title = b
            .eval(&format!(
                "return document.querySelector(\"{link}\").getAttribute('title')"
            ))
            .await;
        assert_eq!(title, json!(long), "the full name on hover");
        b.assert_clean(&format!(
            "the topics with a 249-character name at {width} px"
        ))
        .await;
        b.open("#/connectors").await;
        b.find("tr[data-connector='broken'] .firstline").await;
        let apart = b
            .eval(
                "const row = document.querySelector(\"tr[data-connector='broken']\");
                 const a = row.querySelector('.state').getBoundingClientRect();
                 const t = row.querySelector('.trace-box').getBoundingClientRect();
                 return a.bottom <= t.top || t.bottom <= a.top || a.right <= t.left || t.right <= a.left;",
            )
            .await;
        assert_eq!(
            apart,
            json!(true),
            "the trace overlaps the state badge at {width} px"
        );
        b.assert_clean(&format!("the connectors at {width} px"))
            .await;
    }
    b.resize(1280, 800).await;
    // Two HTTP sinks share a simple name: the list tells them apart by package.
    b.open("#/new").await;
    b.find("#plugin").await;
    let labels = b
        .eval(
            "return [...document.querySelectorAll('#plugin option')].map((o) => o.textContent)
               .filter((t) => t.startsWith('HttpSinkConnector'))",
        )
        .await;
    let labels: Vec<&str> = labels
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels.iter().any(|l| l.contains("io.aiven")), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.contains("io.confluent")),
        "{labels:?}"
    );
    // The generated form: required keys first in each group; a password key shows no default.
    b.choose("#plugin", "io.aiven.kafka.connect.http.HttpSinkConnector")
        .await;
    b.find("input[name='http.url']").await;
    let order = b
        .eval(
            "return [...document.querySelectorAll('#fields fieldset')].map((fs) =>
               [...fs.querySelectorAll('.field')].map((f) => !!f.querySelector('.req')))",
        )
        .await;
    for group in order.as_array().unwrap() {
        let flags: Vec<bool> = group
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_bool().unwrap())
            .collect();
        let first_optional = flags.iter().position(|r| !r).unwrap_or(flags.len());
        assert!(
            flags[first_optional..].iter().all(|r| !r),
            "a required key after an optional one: {order}"
        );
    }
    let hidden = b
        .eval(
            "return [...document.querySelectorAll(\"input[type='password']\")]
               .filter((i) => (i.placeholder || '').includes('[hidden]')).length",
        )
        .await;
    assert_eq!(hidden, json!(0));
    b.assert_clean("the generated form").await;
    b.close().await;
}

/// A sink chain for the "Try it" panel: RegexRouter, ReplaceField$Value without `secret`, and a Filter
/// for the records with a `drop-me` header; JSON values, failures to a dead letter queue.
fn tried_sink(output: &std::path::Path) -> Json {
    json!({"name": "tried", "config": {
        "connector.class": SINK_CLASS, "tasks.max": "1", "topics": "orders",
        "file": output.display().to_string(),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "transforms": "route,trim,keep",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "orders", "transforms.route.replacement": "orders-routed",
        "transforms.trim.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
        "transforms.trim.exclude": "secret",
        "transforms.keep.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.keep.predicate": "marked",
        "predicates": "marked",
        "predicates.marked.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
        "predicates.marked.name": "drop-me",
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": "orders-dlq"}})
}

/// The text of each element `css` selects, in order.
async fn texts(b: &Browser, css: &str) -> Vec<String> {
    let list = b
        .eval(&format!(
            "return [...document.querySelectorAll(\"{css}\")].map((e) => e.textContent)"
        ))
        .await;
    serde_json::from_value(list).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_it_runs_a_sink_chain_on_sample_records_and_creates_nothing() {
    let f = Fixture::start().await;
    let mut b = Browser::start(&f.w.url, 1024, 900).await;

    // The form: collapsed at first. For a source, its task runs for a few records, none stored.
    append_lines(&f.input, ["one".to_string(), "two".into()]);
    b.open("#/new").await;
    b.choose(
        "#plugin",
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
    )
    .await;
    b.type_into("input[name='name']", "polled").await;
    b.type_into("input[name='file']", &f.input.display().to_string())
        .await;
    b.type_into("input[name='topic']", "lines").await;
    assert_eq!(
        b.eval("return document.getElementById('try-it').open")
            .await,
        json!(false)
    );
    assert!(!b.find("#try-run").await.is_displayed().await.unwrap());
    b.click("#try-it > summary").await;
    b.find("#try-source:not([hidden])").await;
    assert!(!b.find("#try-records").await.is_displayed().await.unwrap());
    b.type_into("#try-max", "2").await;
    b.click("#try-run").await;
    b.find("#try-result li[data-index='1'][data-result='stored']")
        .await;
    assert_eq!(
        texts(&b, "#try-result li.try-record > dl [data-part='value']").await,
        ["one", "two"]
    );
    assert_eq!(
        texts(&b, "#try-result li[data-index='0'] li[data-step]")
            .await
            .len(),
        1,
        "the polled step"
    );
    b.assert_clean("the form's Try it for a source").await;

    // Another plugin, a sink: the panel offers an example record; a config with a bad value is
    // refused by the route, and the refusal is shown in the panel.
    b.choose("#plugin", SINK_CLASS).await;
    b.type_into("input[name='topics']", "orders").await;
    b.type_into("input[name='tasks.max']", "many").await;
    b.find("#try-sink:not([hidden])").await;
    let example = "return document.getElementById('try-records').value";
    wait_until("the example record", || async {
        b.eval(example)
            .await
            .as_str()
            .is_some_and(|v| v.starts_with('{'))
    })
    .await;
    b.click("#try-run").await;
    let refused = b.some_text("#try-error").await;
    assert!(refused.contains("HTTP 400"), "{refused}");
    assert!(refused.contains("tasks.max"), "{refused}");
    // The browser logs the refused request itself (a network line, not a script error): that one only.
    let logged = b.console_errors().await;
    assert!(
        logged
            .iter()
            .all(|e| e.contains("/config/test") && e.contains("status of 400")),
        "{logged:#?}"
    );
    b.assert_clean("the form's Try it refusal").await;

    // The JSON mode: three records, one delivered, one dropped by the filter, one the JSON converter
    // cannot read (to the dead letter queue).
    b.click("button[data-mode='json']").await;
    b.type_into("#create-json", &tried_sink(&f.output).to_string())
        .await;
    b.click("#try-it > summary").await;
    wait_until("the example record in the JSON mode", || async {
        b.eval(example)
            .await
            .as_str()
            .is_some_and(|v| v.starts_with('{'))
    })
    .await;
    let records = [
        r#"{"key": "k1", "value": {"id": 1, "secret": "s1"}}"#,
        r#"{"key": "k2", "value": {"id": 2, "secret": "s2"}, "headers": {"drop-me": "yes"}}"#,
        r#"{"key": "k3", "value": "not json"}"#,
    ];
    b.type_into("#try-records", &records.join("\n")).await;
    b.click("#try-run").await;
    b.find("#try-result li[data-index='2']").await;
    let results = b
        .eval("return [...document.querySelectorAll('#try-result li.try-record')].map((e) => e.dataset.result)")
        .await;
    assert_eq!(results, json!(["delivered", "dropped", "failed"]));
    let first = "#try-result li[data-index='0']";
    let topic = b
        .some_text(&format!("{first} > dl [data-part='topic']"))
        .await;
    assert_eq!(topic, "orders-routed · partition 0");
    let value = b
        .some_text(&format!("{first} > dl [data-part='value']"))
        .await;
    assert_eq!(value, r#"{"id":1}"#, "the excluded field is gone");
    let dropped = b
        .some_text("#try-result li[data-index='1'] .try-head")
        .await;
    assert!(
        dropped.contains("dropped by transform keep (Filter)"),
        "{dropped}"
    );
    assert_eq!(
        b.some_text("#try-result li[data-index='1'] [data-by]")
            .await,
        "keep"
    );
    let failed = "#try-result li[data-index='2']";
    assert_eq!(
        b.some_text(&format!("{failed} [data-stage]")).await,
        "VALUE_CONVERTER"
    );
    let error = b.some_text(&format!("{failed} .try-error")).await;
    assert!(
        error.contains("Converting byte[] to Kafka Connect data failed"),
        "{error}"
    );
    let dlq = b.some_text(&format!("{failed} [data-dlq]")).await;
    assert!(dlq.contains("dead letter queue orders-dlq"), "{dlq}");
    assert_eq!(
        b.some_text(&format!("{failed} dl [data-part='value']"))
            .await,
        "not json"
    );
    let summary = b.some_text("#try-status").await;
    assert!(
        summary.contains("1 delivered, 1 dropped, 1 failed"),
        "{summary}"
    );

    // The first record step by step: what each transform changed is marked.
    b.click(&format!("{first} .try-steps > summary")).await;
    let step =
        |n: usize, part: &str| format!("{first} li[data-step]:nth-child({n}) [data-part='{part}']");
    let steps = b
        .eval(&format!(
            "return [...document.querySelectorAll(\"{first} li[data-step]\")]
               .map((e) => [e.dataset.step, e.dataset.alias || '', e.dataset.stepResult || ''])"
        ))
        .await;
    assert_eq!(
        steps,
        json!([
            ["converters", "", ""],
            ["transform", "route", "applied"],
            ["transform", "trim", "applied"],
            ["transform", "keep", "skipped by its predicate"]
        ])
    );
    assert_eq!(b.some_text(&step(1, "topic")).await, "orders · partition 0");
    assert_eq!(
        b.some_text(&step(1, "value")).await,
        r#"{"id":1,"secret":"s1"}"#
    );
    assert_eq!(
        b.some_text(&step(2, "topic")).await,
        "orders-routed · partition 0"
    );
    assert_eq!(b.some_text(&step(3, "value")).await, r#"{"id":1}"#);
    let changed = texts(&b, &format!("{first} li[data-step] [data-changed]")).await;
    assert_eq!(changed, ["orders-routed · partition 0", r#"{"id":1}"#]);
    b.eval("document.getElementById('try-it').scrollIntoView(); return null")
        .await;
    b.assert_clean("the Try it results").await;
    b.resize(1024, 1400).await;
    b.eval("document.getElementById('try-it').scrollIntoView(); return null")
        .await;
    b.screenshot("try-it").await;
    b.resize(360, 740).await;
    b.assert_clean("the Try it results at 360 px").await;
    let inside = b
        .eval("const c = document.getElementById('try-it').closest('.card'); return c.scrollWidth <= c.clientWidth")
        .await;
    assert_eq!(
        inside,
        json!(true),
        "the panel scrolls sideways in its card at 360 px"
    );
    b.screenshot("try-it-360").await;
    b.resize(1024, 900).await;

    // Trying created nothing and wrote nothing.
    assert_eq!(f.w.get("/connectors").await.1, json!([]));
    let topics = f.w.get("/topics").await.1;
    assert!(!topics.to_string().contains("orders"), "{topics}");
    assert!(!topics.to_string().contains("lines"), "{topics}");
    assert!(!f.output.exists(), "the sink's file was written");

    // A connector's page: the panel tries the config editor's config, with records from a file.
    // Its class by alias: the panel still knows it for a sink's and offers the example record.
    let mut tried = tried_sink(&f.output);
    tried["config"]["connector.class"] = json!("FileStreamSink");
    f.w.create(tried).await;
    b.open("#/connectors/tried").await;
    b.find("#config-json").await;
    b.click("#try-it > summary").await;
    wait_until("the example record on the connector's page", || async {
        b.eval(example)
            .await
            .as_str()
            .is_some_and(|v| v.starts_with('{'))
    })
    .await;
    let file = f.dir.path().join("records.jsonl");
    std::fs::write(&file, "{\"value\": {\"id\": 7, \"secret\": \"x\"}}\n").unwrap();
    b.find("#try-file")
        .await
        .send_keys(&file.display().to_string())
        .await
        .expect("choose the file");
    wait_until("the file's records", || async {
        b.eval("return document.getElementById('try-records').value")
            .await
            .as_str()
            .is_some_and(|v| v.contains("\"id\": 7"))
    })
    .await;
    b.click("#try-run").await;
    b.find("#try-result li[data-index='0'][data-result='delivered']")
        .await;
    assert_eq!(
        b.some_text("#try-result li[data-index='0'] > dl [data-part='value']")
            .await,
        r#"{"id":7}"#
    );
    // Invalid JSON in the editor is shown in the panel, not thrown.
    b.type_into("#config-json", "{not json").await;
    b.click("#try-run").await;
    b.wait_text("#try-error", "the editor's bad JSON", |t| {
        t.contains("not valid JSON")
    })
    .await;
    assert_eq!(f.w.get("/connectors").await.1, json!(["tried"]));
    b.assert_clean("the connector page's Try it").await;
    b.close().await;
}
