//! `GET /metrics`: parsed by a Prometheus text parser, with values that move as records flow.

use std::collections::BTreeMap;

use prometheus_parse::{Scrape, Value};
use serde_json::json;

use crate::common::*;

/// A scrape of `url` (`/metrics` on a listener) with an optional `Accept`: status, content type, body.
async fn fetch(http: &reqwest::Client, url: &str, accept: Option<&str>) -> (u16, String, String) {
    let mut req = http.get(format!("{url}/metrics"));
    if let Some(a) = accept {
        req = req.header("Accept", a);
    }
    let r = req.send().await.expect("scrape");
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, ct, r.text().await.expect("body"))
}

/// A sample's name, some of its labels, and the value it should have.
type Expected<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

/// A scrape parsed by `prometheus-parse`.
struct Metrics(Scrape);

impl Metrics {
    async fn scrape(w: &TestWorker) -> Metrics {
        let (status, _, body) = fetch(&w.client, &w.url, None).await;
        assert_eq!(status, 200, "{body}");
        Metrics(Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).expect("parses"))
    }

    /// The value of the sample with this name whose labels include `labels`.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.0
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
                _ => f64::NAN,
            })
    }

    /// Asserts the value of each `(name, labels, value)`.
    fn expect(&self, wanted: &[Expected<'_>]) {
        for (name, labels, v) in wanted {
            assert_eq!(self.value(name, labels), *v, "{name} {labels:?}");
        }
    }

    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels)
            .unwrap_or_else(|| panic!("no sample {name} {labels:?}"))
    }

    fn is_counter(&self, name: &str) -> bool {
        self.0
            .samples
            .iter()
            .any(|s| s.metric == name && matches!(s.value, Value::Counter(_)))
    }
}

/// Waits until a scrape satisfies `check`, returning that scrape.
async fn scrape_until(w: &TestWorker, what: &str, check: impl Fn(&Metrics) -> bool) -> Metrics {
    let check = &check;
    wait_for(what, DEADLINE, || async move {
        let m = Metrics::scrape(w).await;
        check(&m).then_some(m)
    })
    .await
}

/// What the scrape shows once the 25 lines of `src` have reached `snk` and been committed.
fn check_first_flow(m: &Metrics) {
    let src: &[(&str, &str)] = &[("connector", "src"), ("task", "0")];
    let snk: &[(&str, &str)] = &[("connector", "snk"), ("task", "0")];
    let lag: &[(&str, &str)] = &[("connector", "snk"), ("topic", "flow"), ("partition", "0")];
    let flow: &[(&str, &str)] = &[("topic", "flow"), ("partition", "0")];
    let sink_class = "org.apache.kafka.connect.file.FileStreamSinkConnector";
    #[rustfmt::skip]
    m.expect(&[
        // Source totals equal the records written; the sink read and put them all.
        ("kafka_connect_source_task_source_record_poll_total", src, 25.0),
        ("kafka_connect_source_task_source_record_write_total", src, 25.0),
        ("kafka_connect_sink_task_sink_record_read_total", snk, 25.0),
        ("kafka_connect_sink_task_partition_count", snk, 1.0),
        ("kafka_connect_sink_task_sink_record_lag_max", snk, 0.0),
        ("liteconnect_sink_lag_seconds", lag, 0.0),
        ("liteconnect_log_end_offset", flow, 25.0),
        ("liteconnect_log_records", flow, 25.0),
        // Statuses, classes and worker counts.
        ("kafka_connect_connector_status", &[("connector", "src"), ("status", "running")], 1.0),
        ("kafka_connect_connector_task_status", &[("connector", "snk"), ("task", "0"), ("status", "running")], 1.0),
        ("kafka_connect_connector_connector_class", &[("connector", "snk"), ("connector_class", sink_class)], 1.0),
        ("kafka_connect_connector_connector_type", &[("connector", "src"), ("connector_type", "source")], 1.0),
        ("kafka_connect_worker_connector_count", &[], 2.0),
        ("kafka_connect_worker_task_count", &[], 2.0),
        ("kafka_connect_worker_connector_running_task_count", &[("connector", "src")], 1.0),
        ("kafka_connect_worker_connector_startup_success_total", &[], 2.0),
        ("kafka_connect_worker_task_startup_attempts_total", &[], 2.0),
    ]);
    assert!(m.is_counter("kafka_connect_source_task_source_record_write_total"));
    #[rustfmt::skip]
    let at_least: &[Expected<'_>] = &[
        ("kafka_connect_source_task_source_record_write_rate", src, 0.01),
        ("kafka_connect_sink_task_offset_commit_completion_total", snk, 1.0),
        ("liteconnect_log_bytes", flow, 25.0 * 6.0),
        ("kafka_connect_connector_task_running_ratio", src, 0.01),
        // liteconnect's own and the process's.
        ("liteconnect_storage_file_bytes", &[], 1.0),
        ("liteconnect_storage_commit_duration_seconds_count", &[], 1.0),
        ("liteconnect_rest_requests_total", &[("route", "/connectors"), ("method", "POST"), ("status", "201")], 2.0),
        ("process_resident_memory_bytes", &[], 1.0),
        ("process_threads", &[], 2.0),
    ];
    for (name, labels, least) in at_least {
        let v = m.value(name, labels);
        assert!(v >= *least, "{name} {labels:?}: {v} < {least}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_follow_records_from_a_source_to_a_sink() {
    let f = Fixture::start().await;
    let w = &f.w;
    append_lines(&f.input, (0..25).map(|i| format!("line {i}")));
    w.create(file_source("src", &f.input, "flow")).await;
    w.create(file_sink("snk", &f.output, "flow")).await;
    wait_until("all lines out", || async { lines(&f.output).len() == 25 }).await;
    let (status, ct, _) = fetch(&w.client, &w.url, None).await;
    assert_eq!(
        (status, ct.as_str()),
        (200, "text/plain; version=0.0.4; charset=utf-8")
    );
    let src = [("connector", "src"), ("task", "0")];
    let snk = [("connector", "snk"), ("task", "0")];
    let lag = [("connector", "snk"), ("topic", "flow"), ("partition", "0")];
    let m = scrape_until(w, "the sink to commit everything", |m| {
        m.get("liteconnect_sink_lag_records", &lag) == Some(0.0)
            && m.get("kafka_connect_sink_task_sink_record_send_total", &snk) == Some(25.0)
    })
    .await;
    check_first_flow(&m);
    // New records move the end offset and the lag; delivering them brings the lag back to 0.
    w.put_empty("/connectors/snk/pause").await;
    w.wait_for_state("snk", "PAUSED", 1, "PAUSED").await;
    append_lines(&f.input, (0..5).map(|i| format!("more {i}")));
    scrape_until(w, "a lag of 5", |m| {
        m.get("liteconnect_sink_lag_records", &lag) == Some(5.0)
    })
    .await;
    // The paused sink read none of them: the lag's age is that of the oldest record it has not
    // committed, read or not, and grows while it waits.
    scrape_until(w, "the unread records to age", |m| {
        m.get("liteconnect_sink_lag_seconds", &lag)
            .is_some_and(|a| a >= 1.0)
    })
    .await;
    w.put_empty("/connectors/snk/resume").await;
    let m = scrape_until(w, "the lag to drain", |m| {
        m.get("liteconnect_sink_lag_records", &lag) == Some(0.0)
    })
    .await;
    m.expect(&[
        (
            "kafka_connect_source_task_source_record_write_total",
            &src,
            30.0,
        ),
        ("kafka_connect_sink_task_sink_record_send_total", &snk, 30.0),
    ]);
    assert!(m.value("kafka_connect_connector_task_pause_ratio", &snk) > 0.0);
    w.delete("/connectors/src").await;
    let m = Metrics::scrape(w).await;
    assert_eq!(
        m.get("kafka_connect_source_task_source_record_poll_total", &src),
        None
    );
    assert_eq!(m.value("kafka_connect_worker_connector_count", &[]), 1.0);
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_error_counters_count_a_record_sent_to_the_dead_letter_queue() {
    let f = Fixture::start().await;
    let w = &f.w;
    append_lines(&f.input, ["{\"a\":1}", "not json", "2"].map(String::from));
    w.create(file_source("src", &f.input, "raw")).await;
    w.create(json!({"name": "strict", "config": {
        "connector.class": "FileStreamSink", "file": f.output.display().to_string(), "topics": "raw",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "errors.tolerance": "all", "errors.log.enable": "true", "errors.deadletterqueue.topic.name": "dlq"}}))
        .await;
    wait_until("good records out", || async { lines(&f.output).len() == 2 }).await;
    let task = [("connector", "strict"), ("task", "0")];
    let m = scrape_until(w, "the error counted", |m| {
        m.get("kafka_connect_task_error_total_records_skipped", &task) == Some(1.0)
    })
    .await;
    m.expect(&[
        ("kafka_connect_task_error_total_record_errors", &task, 1.0),
        ("kafka_connect_task_error_total_record_failures", &task, 1.0),
        ("kafka_connect_task_error_total_errors_logged", &task, 1.0),
        (
            "kafka_connect_task_error_deadletterqueue_produce_requests",
            &task,
            1.0,
        ),
        (
            "kafka_connect_task_error_deadletterqueue_produce_failures",
            &task,
            0.0,
        ),
    ]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64;
    let last = m.value("kafka_connect_task_error_last_error_timestamp", &task);
    assert!(last > now - 120_000.0 && last <= now, "{last}");
    assert_eq!(
        m.value(
            "liteconnect_log_end_offset",
            &[("topic", "dlq"), ("partition", "0")]
        ),
        1.0
    );
    // The source saw no error.
    assert_eq!(
        m.value(
            "kafka_connect_task_error_total_record_errors",
            &[("connector", "src")]
        ),
        0.0
    );
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openmetrics_is_served_when_the_scraper_asks_for_it() {
    let f = Fixture::start().await;
    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let (status, ct, body) = fetch(&f.w.client, &f.w.url, Some(accept)).await;
    assert_eq!(status, 200);
    assert!(
        ct.starts_with("application/openmetrics-text; version=1.0.0"),
        "{ct}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    assert!(
        body.contains("# TYPE kafka_connect_worker_connector_startup_attempts counter\n"),
        "{body}"
    );
    assert!(
        body.contains("\nkafka_connect_worker_connector_startup_attempts_total 0"),
        "{body}"
    );
    // The text format has no EOF marker and names counters with their suffix.
    let (_, _, text) = fetch(&f.w.client, &f.w.url, None).await;
    assert!(!text.contains("# EOF"));
    assert!(
        text.contains("# TYPE kafka_connect_worker_connector_startup_attempts_total counter\n"),
        "{text}"
    );
    let (status, _, _) = fetch(&f.w.client, &format!("{}/metrics", f.w.url), None).await;
    assert_eq!(status, 404, "/metrics/metrics is no route");
    f.w.stop().await;
}

/// Starts a worker with basic authentication (user `ops`, password `pw`) and `extra` settings.
async fn with_basic_auth(dir: &std::path::Path, extra: &[(&str, &str)]) -> TestWorker {
    let creds = dir.join("creds.properties");
    std::fs::write(&creds, "ops: pw\n").unwrap();
    let c = creds.display().to_string();
    let mut settings = vec![
        (
            "rest.extension.classes",
            "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
        ),
        ("rest.basic.auth.credentials.file", c.as_str()),
    ];
    settings.extend_from_slice(extra);
    TestWorker::launch(dir, &settings, Vec::new(), |url| {
        Client::new(url).basic_auth("ops", "pw")
    })
    .await
    .expect("the worker starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_guards_metrics_unless_the_worker_exempts_them() {
    let dir = tempdir();
    let w = with_basic_auth(dir.path(), &[]).await;
    assert_eq!(fetch(&w.client, &w.url, None).await.0, 401);
    let r = w
        .client
        .get(format!("{}/metrics", w.url))
        .basic_auth("ops", Some("pw"));
    assert_eq!(r.send().await.unwrap().status().as_u16(), 200);
    w.stop().await;
    let dir = tempdir();
    let w = with_basic_auth(dir.path(), &[("rest.basic.auth.metrics.exempt", "true")]).await;
    assert_eq!(fetch(&w.client, &w.url, None).await.0, 200);
    assert_eq!(w.api.anonymous().get("/connectors").await.unwrap().0, 401);
    w.stop().await;
    // A value that is no boolean stops the worker, naming the key.
    let dir = tempdir();
    let mut props: BTreeMap<String, String> = BTreeMap::new();
    props.insert("rest.basic.auth.metrics.exempt".into(), "yes".into());
    let err = liteconnect::config::worker::WorkerConfig::from_props(props).unwrap_err();
    assert!(
        err.to_string().contains("rest.basic.auth.metrics.exempt"),
        "{err}"
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_served_on_the_admin_listener_too() {
    let dir = tempdir();
    let config = worker_config(dir.path(), &[("admin.listeners", "http://127.0.0.1:0")]);
    let rest = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let rest_url = format!("http://{}", rest.local_addr().unwrap());
    let admin_url = format!("http://{}", admin.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let listeners = liteconnect::Listeners {
        rest: vec![rest],
        admin: vec![admin],
        kafka: Vec::new(),
        registry: Vec::new(),
    };
    let handle = tokio::spawn(liteconnect::run(listeners, config, Vec::new(), async {
        let _ = rx.await;
    }));
    let http = reqwest::Client::new();
    healthy(&Client::new(rest_url.clone())).await;
    let (status, _, body) = fetch(&http, &admin_url, None).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("kafka_connect_worker_connector_count 0"),
        "{body}"
    );
    assert_eq!(fetch(&http, &rest_url, None).await.0, 200);
    // The admin listener serves nothing else of the public API.
    let r = http
        .get(format!("{admin_url}/connectors"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let _ = tx.send(());
    handle.await.unwrap().unwrap();
}

#[cfg(feature = "kafka-client")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kafka_sink_backlog_shows_while_the_broker_is_down() {
    use crate::kafka::{kafka_sink, mock, numbered, LONG};
    let cluster = mock();
    cluster.create_topic("out", 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let f = Fixture::start().await;
    let w = &f.w;
    append_lines(&f.input, numbered("a", 0..20));
    w.create(file_source("src", &f.input, "local")).await;
    let sink = kafka_sink(
        "ship",
        &bootstrap,
        "local",
        &[("producer.override.message.timeout.ms", "2000")],
    );
    w.create(sink).await;
    let task = [("connector", "ship"), ("task", "0")];
    let lag = [
        ("connector", "ship"),
        ("topic", "local"),
        ("partition", "0"),
    ];
    scrape_until(w, "the first records shipped", |m| {
        m.get("liteconnect_sink_lag_records", &lag) == Some(0.0)
            && m.get("liteconnect_kafka_sink_unacknowledged_records", &task) == Some(0.0)
    })
    .await;
    cluster.broker_down(1).unwrap();
    append_lines(&f.input, numbered("b", 0..30));
    // Both gauges reach 30; the lag follows the end offsets the metrics refresh reads, so it is
    // waited for too rather than read in the same scrape.
    wait_for("a backlog of 30 while the broker is down", LONG, || async {
        let m = Metrics::scrape(w).await;
        (m.get("liteconnect_kafka_sink_unacknowledged_records", &task) == Some(30.0)
            && m.get("liteconnect_sink_lag_records", &lag) == Some(30.0))
        .then_some(())
    })
    .await;
    let age = wait_for("the lag to age", LONG, || async {
        let m = Metrics::scrape(w).await;
        m.get("liteconnect_sink_lag_seconds", &lag)
            .filter(|a| *a >= 1.0)
    })
    .await;
    assert!(age < 120.0, "{age}");
    cluster.broker_up(1).unwrap();
    wait_for("the backlog to clear", LONG, || async {
        let m = Metrics::scrape(w).await;
        (m.get("liteconnect_kafka_sink_unacknowledged_records", &task) == Some(0.0)
            && m.get("liteconnect_sink_lag_records", &lag) == Some(0.0))
        .then_some(())
    })
    .await;
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_byte_cap_shows_how_full_the_log_is() {
    let dir = tempdir();
    let w = TestWorker::start_with(
        dir.path(),
        &[
            ("log.buffer.max.bytes", "1000"),
            ("log.buffer.full.policy", "drop_oldest"),
        ],
        Vec::new(),
    )
    .await
    .expect("the worker starts");
    let input = dir.path().join("in.txt");
    // 30 lines of 50 bytes: more than the cap holds, so the oldest are dropped.
    append_lines(&input, (0..30).map(|i| format!("{i:050}")));
    let mut source = file_source("src", &input, "capped");
    source["config"]["batch.size"] = json!("5");
    w.create(source).await;
    let flow = [("topic", "capped"), ("partition", "0")];
    let m = scrape_until(&w, "all lines stored", |m| {
        m.get("liteconnect_log_end_offset", &flow) == Some(30.0)
    })
    .await;
    let ratio = m.value("liteconnect_log_buffer_fill_ratio", &[]);
    assert!(ratio > 0.5 && ratio <= 1.0, "{ratio}");
    assert!(m.value("liteconnect_log_buffer_dropped_records_total", &[]) >= 10.0);
    w.stop().await;
}
