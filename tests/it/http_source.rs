//! The HTTP edge sources against real HTTP on real ports: the webhook source (clients posting to it) and
//! the polling HTTP source (a small API served from this process).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::common::{
    file_sink, free_port, lines, start_binary, tempdir, wait_for, wait_until, Client, Fixture,
    TestWorker, DEADLINE, FILE_CONFIG_PROVIDER,
};
use crate::kafka::{create, db_number, task_trace};

fn webhook(name: &str, port: u16, extra: &[(&str, &str)]) -> Json {
    let mut config = json!({
        "connector.class": "WebhookSource", "tasks.max": "1",
        "listener": format!("http://127.0.0.1:{port}"), "path": "/ingest", "topic": "hooks",
    });
    for (k, v) in extra {
        config[*k] = json!(v);
    }
    json!({"name": name, "config": config})
}

/// Posts `body` with `content_type` (and an `Authorization` header when given): status, Retry-After,
/// answer body. A refused connection is status 0.
async fn post(
    url: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
    auth: Option<&str>,
) -> (u16, Option<String>, String) {
    let client = reqwest::Client::new();
    let mut request = client
        .post(url)
        .header("content-type", content_type)
        .body(body);
    if let Some(a) = auth {
        request = request.header("authorization", a);
    }
    match request.send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            let retry = r
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            (status, retry, r.text().await.unwrap_or_default())
        }
        Err(e) => (0, None, e.to_string()),
    }
}

/// Waits until the webhook at `url` answers (a GET is refused with 405 and stores nothing).
async fn webhook_up(url: &str) {
    let client = reqwest::Client::new();
    wait_until("the webhook to listen", || async {
        client
            .get(url)
            .send()
            .await
            .is_ok_and(|r| r.status() == 405)
    })
    .await;
}

/// How many records of `topic` the local log holds.
fn stored(db: &Path, topic: &str) -> i64 {
    db_number(
        db,
        &format!("SELECT COUNT(*) FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = '{topic}'"),
    )
}

/// How many records of `topic` hold `needle` in their value.
fn stored_with(db: &Path, topic: &str, needle: &str) -> i64 {
    db_number(
        db,
        &format!("SELECT COUNT(*) FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = '{topic}' AND instr(CAST(r.value AS TEXT), '{}') > 0", needle.replace('\'', "''")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_bodies_of_every_shape_reach_a_file_sink() {
    let f = Fixture::start().await;
    let port = free_port();
    let extra = [("key.pointer", "/id"), ("topic.header", "X-Topic")];
    create(&f.w, webhook("hook", port, &extra)).await;
    create(&f.w, file_sink("out", &f.output, "hooks")).await;
    let url = format!("http://127.0.0.1:{port}/ingest");
    webhook_up(&url).await;
    let shapes: [(&str, &str); 4] = [
        ("application/json", r#"{"id":1,"shape":"object"}"#),
        (
            "application/json",
            r#"[{"id":2,"shape":"array"},{"id":3,"shape":"array"}]"#,
        ),
        (
            "application/x-ndjson",
            "{\"id\":4,\"shape\":\"ndjson\"}\n{\"id\":5,\"shape\":\"ndjson\"}\n",
        ),
        ("text/plain", "raw text body"),
    ];
    let mut answers = Vec::new();
    for (content_type, body) in shapes {
        let (status, _, answer) = post(&url, content_type, body, None).await;
        assert_eq!(status, 201, "{content_type}: {answer}");
        answers.push(serde_json::from_str::<Json>(&answer).unwrap());
    }
    // Each answer says where its records went, in the body's order: the array's two records follow the
    // object's one in the topic's one partition.
    let at = |topic: &str, offset: i64| json!({"topic": topic, "partition": 0, "offset": offset});
    assert_eq!(
        answers[0]["offsets"],
        json!([at("hooks", 0)]),
        "{answers:?}"
    );
    assert_eq!(
        answers[1]["offsets"],
        json!([at("hooks", 1), at("hooks", 2)])
    );
    assert_eq!(answers[1]["records"], 2);
    assert_eq!(
        answers[2]["offsets"],
        json!([at("hooks", 3), at("hooks", 4)])
    );
    assert_eq!(answers[3]["offsets"], json!([at("hooks", 5)]));
    // A 201 means stored: the records are in the log when the answer comes.
    assert_eq!(stored(&f.w.db, "hooks"), 6);
    let got = wait_for("six lines in the sink's file", DEADLINE, || async {
        let l = lines(&f.output);
        (l.len() >= 6).then_some(l)
    })
    .await;
    for (i, shape) in [
        (1, "object"),
        (2, "array"),
        (3, "array"),
        (4, "ndjson"),
        (5, "ndjson"),
    ] {
        assert!(
            got.iter()
                .any(|l| l.contains(&format!("id={i}")) && l.contains(shape)),
            "record {i} ({shape}) in {got:?}"
        );
    }
    assert!(got.contains(&"raw text body".to_string()), "{got:?}");
    // The topic from a header, when the request has it.
    let routed = reqwest::Client::new()
        .post(&url)
        .header("content-type", "text/plain")
        .header("x-topic", "alerts")
        .body("routed")
        .send()
        .await
        .unwrap();
    assert_eq!(routed.status(), 201);
    assert_eq!(stored(&f.w.db, "alerts"), 1);
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_refuses_bad_credentials_and_stores_nothing_of_bad_bodies() {
    let dir = tempdir();
    let secrets = dir.path().join("secrets.properties");
    std::fs::write(&secrets, "token=t0ken\npassword=pw\n").unwrap();
    let providers = FILE_CONFIG_PROVIDER;
    let w = TestWorker::start_with(dir.path(), &providers, Vec::new())
        .await
        .unwrap();
    let port = free_port();
    let token = format!("${{file:{}:token}}", secrets.display());
    let password = format!("${{file:{}:password}}", secrets.display());
    let extra = [
        ("auth.bearer.token", token.as_str()),
        ("auth.basic.user", "device"),
        ("auth.basic.password", password.as_str()),
        ("request.max.bytes", "200"),
    ];
    create(&w, webhook("guarded", port, &extra)).await;
    let url = format!("http://127.0.0.1:{port}/ingest");
    webhook_up(&url).await;
    let ok = Some("Bearer t0ken");
    let (status, _, _) = post(&url, "text/plain", "no credentials", None).await;
    assert_eq!(status, 401);
    let (status, _, _) = post(&url, "text/plain", "wrong token", Some("Bearer nope")).await;
    assert_eq!(status, 401);
    let (status, _, answer) = post(&url, "text/plain", "x".repeat(300), ok).await;
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains("request.max.bytes"), "{answer}");
    let malformed = r#"[{"id":1},{"id":2},"three"]"#;
    let (status, _, answer) = post(&url, "application/json", malformed, ok).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("Element 2"), "{answer}");
    let (status, _, answer) = post(&url, "application/x-ndjson", "{\"id\":1}\n{broken\n", ok).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("Line 2"), "{answer}");
    assert_eq!(
        stored(&w.db, "hooks"),
        0,
        "nothing of a refused request is stored"
    );
    let (status, _, answer) = post(&url, "application/json", r#"[{"id":1},{"id":2}]"#, ok).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(stored(&w.db, "hooks"), 2);
    let basic = Some("Basic ZGV2aWNlOnB3"); // device:pw
    let (status, _, answer) = post(&url, "text/plain", "basic credentials", basic).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(stored(&w.db, "hooks"), 3);
    // A bad config is refused naming the key.
    let (status, body) = w
        .put(
            "/connector-plugins/WebhookSource/config/validate",
            json!({"connector.class": "WebhookSource", "listener": "ftp://nowhere:1", "topic": "t"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let listener = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "listener")
        .unwrap();
    assert!(
        listener["value"]["errors"][0]
            .as_str()
            .unwrap()
            .contains("scheme"),
        "{listener}"
    );
    w.stop().await;
}

/// A worker whose log holds at most `cap` bytes (policy `pause`), running webhook `name` with `extra`:
/// its directory, the worker, and the webhook's URL once it answers.
async fn capped_webhook(
    cap: u64,
    name: &str,
    extra: &[(&str, &str)],
) -> (tempfile::TempDir, TestWorker, String) {
    let dir = tempdir();
    let cap = cap.to_string();
    let caps = [
        ("log.buffer.max.bytes", cap.as_str()),
        ("log.buffer.full.policy", "pause"),
    ];
    let w = TestWorker::start_with(dir.path(), &caps, Vec::new())
        .await
        .unwrap();
    let port = free_port();
    create(&w, webhook(name, port, extra)).await;
    let url = format!("http://127.0.0.1:{port}/ingest");
    webhook_up(&url).await;
    (dir, w, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_answers_503_while_the_byte_cap_pauses_it() {
    let extra = [("request.timeout.ms", "1000"), ("retry.after.seconds", "2")];
    let (dir, w, url) = capped_webhook(2000, "capped", &extra).await;
    let body = "b".repeat(300);
    let mut refused = None;
    for _ in 0..40 {
        let (status, retry, answer) = post(&url, "text/plain", body.clone(), None).await;
        match status {
            201 => continue,
            503 => {
                refused = Some((retry, answer));
                break;
            }
            other => panic!("unexpected {other}: {answer}"),
        }
    }
    let (retry, _) = refused.expect("a 503 once the log is full");
    assert_eq!(retry.as_deref(), Some("2"));
    // While the log stays full, requests are refused at once with Retry-After.
    let started = std::time::Instant::now();
    let (status, retry, answer) = post(&url, "text/plain", body.clone(), None).await;
    assert_eq!((status, retry.as_deref()), (503, Some("2")), "{answer}");
    assert!(answer.contains("log.buffer.max.bytes"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "refused without waiting"
    );
    assert_eq!(w.status("capped").await["tasks"][0]["state"], "RUNNING");
    // A sink delivers the log; there is room again and requests are stored.
    let out = dir.path().join("out.txt");
    create(&w, file_sink("drain", &out, "hooks")).await;
    wait_for("a 201 once the sink made room", DEADLINE, || async {
        let (status, _, _) = post(&url, "text/plain", "after the cap", None).await;
        (status == 201).then_some(())
    })
    .await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_answers_503_to_requests_held_when_it_stops() {
    let (_dir, w, url) = capped_webhook(1000, "held", &[("request.timeout.ms", "60000")]).await;
    // Posts until one is held: its batch waits for room that never comes.
    let (tx, mut answers) = tokio::sync::mpsc::unbounded_channel();
    let poster = tokio::spawn(async move {
        for _ in 0..20 {
            let answer = post(&url, "text/plain", "h".repeat(400), None).await;
            let done = answer.0 != 201;
            tx.send(answer).unwrap();
            if done {
                return;
            }
        }
    });
    wait_until("the source to wait for room", || async {
        task_trace(&w, "held")
            .await
            .is_some_and(|t| t.contains("log.buffer.max.bytes"))
    })
    .await;
    let before = stored(&w.db, "hooks");
    let (status, _) = w.delete("/connectors/held").await;
    assert_eq!(status, 204);
    poster.await.unwrap();
    let mut last = None;
    while let Ok(answer) = answers.try_recv() {
        last = Some(answer);
    }
    let (status, retry, message) = last.expect("answers");
    assert_eq!((status, retry.as_deref()), (503, Some("1")), "{message}");
    assert!(message.contains("stopped"), "{message}");
    assert_eq!(
        stored(&w.db, "hooks"),
        before,
        "the held batch was not stored"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_refuses_at_once_while_paused() {
    let f = Fixture::start().await;
    let port = free_port();
    create(&f.w, webhook("pausable", port, &[])).await;
    let url = format!("http://127.0.0.1:{port}/ingest");
    webhook_up(&url).await;
    let (status, _) = f.w.put_empty("/connectors/pausable/pause").await;
    assert_eq!(status, 202);
    let attempt = AtomicUsize::new(0);
    let (retry, message, body) = wait_for("a refusal while paused", DEADLINE, || async {
        let body = format!("attempt-{}.", attempt.fetch_add(1, Ordering::SeqCst));
        let started = std::time::Instant::now();
        let (status, retry, message) = post(&url, "text/plain", body.clone(), None).await;
        let at_once = started.elapsed() < Duration::from_millis(900);
        (status == 503 && at_once).then_some((retry, message, body))
    })
    .await;
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(message.contains("paused"), "{message}");
    let (status, _) = f.w.put_empty("/connectors/pausable/resume").await;
    assert_eq!(status, 202);
    wait_for("a 201 once resumed", DEADLINE, || async {
        (post(&url, "text/plain", "resumed", None).await.0 == 201).then_some(())
    })
    .await;
    assert_eq!(stored_with(&f.w.db, "hooks", "resumed"), 1);
    assert_eq!(
        stored_with(&f.w.db, "hooks", &body),
        0,
        "{body} was refused"
    );
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_200_means_stored_across_kill_9() {
    let dir = tempdir();
    let binary = start_binary(dir.path(), &[]);
    let api = binary.healthy_api().await;
    let port = free_port();
    crate::common::create_through(&api, webhook("durable", port, &[])).await;
    let url = format!("http://127.0.0.1:{port}/ingest");
    webhook_up(&url).await;
    let acked = Arc::new(Mutex::new(Vec::new()));
    let mut posters = Vec::new();
    for poster in 0..3 {
        let (url, acked) = (url.clone(), acked.clone());
        posters.push(tokio::spawn(async move {
            for i in 0.. {
                let id = format!("req-{poster}-{i}.");
                match post(&url, "text/plain", id.clone(), None).await.0 {
                    201 => acked.lock().unwrap().push(id),
                    0 => return,
                    _ => {}
                }
            }
        }));
    }
    wait_until("some requests acknowledged", || async {
        acked.lock().unwrap().len() >= 30
    })
    .await;
    binary.kill();
    for p in posters {
        p.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let db = dir.path().join("bin.db");
    for id in &acked {
        assert_eq!(stored_with(&db, "hooks", id), 1, "{id} was acknowledged");
    }
    eprintln!(
        "webhook kill -9: {} acknowledged requests all stored",
        acked.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_with_mutual_tls_refuses_clients_without_a_certificate() {
    let f = Fixture::start().await;
    let ca = crate::common::certs::Ca::new("webhook-ca");
    let (cert, key) = ca.leaf(&["127.0.0.1", "localhost"]);
    let (client_cert, client_key) = ca.leaf(&["device-1"]);
    let port = free_port();
    let listener = format!("https://127.0.0.1:{port}");
    let extra = [
        ("listener", listener.as_str()),
        ("ssl.keystore.certificate.chain", cert.as_str()),
        ("ssl.keystore.key", key.as_str()),
        ("ssl.client.auth", "required"),
        ("ssl.truststore.certificates", &ca.pem()),
    ];
    create(&f.w, webhook("tls", port, &extra)).await;
    let url = format!("https://127.0.0.1:{port}/ingest");
    let root = reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap();
    let identity =
        reqwest::Identity::from_pem(format!("{client_key}{client_cert}").as_bytes()).unwrap();
    let with_cert = reqwest::Client::builder()
        .add_root_certificate(root.clone())
        .identity(identity)
        .build()
        .unwrap();
    let without = reqwest::Client::builder()
        .add_root_certificate(root)
        .build()
        .unwrap();
    let status = wait_for("the TLS webhook to store a record", DEADLINE, || async {
        let r = with_cert
            .post(&url)
            .header("content-type", "text/plain")
            .body("over tls")
            .send()
            .await;
        r.ok().map(|r| r.status().as_u16())
    })
    .await;
    assert_eq!(status, 201);
    let refused = without
        .post(&url)
        .header("content-type", "text/plain")
        .body("no cert")
        .send()
        .await;
    assert!(refused.is_err() || refused.unwrap().status() != 201);
    assert_eq!(stored(&f.w.db, "hooks"), 1);
    f.w.stop().await;
}

/// A pagination-free JSON API served from this process, that can go down (connections refused) and come
/// back on the same port.
struct Api {
    port: u16,
    items: Arc<Mutex<Vec<Json>>>,
    up: Arc<AtomicBool>,
    /// The request lines it answered.
    requests: Arc<Mutex<Vec<String>>>,
    served: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
}

impl Api {
    fn start() -> Api {
        let port = free_port();
        let api = Api {
            port,
            items: Arc::default(),
            up: Arc::new(AtomicBool::new(true)),
            requests: Arc::default(),
            served: Arc::default(),
            done: Arc::default(),
        };
        let (items, up, requests, served, done) = (
            api.items.clone(),
            api.up.clone(),
            api.requests.clone(),
            api.served.clone(),
            api.done.clone(),
        );
        std::thread::spawn(move || {
            let mut listener: Option<TcpListener> = None;
            while !done.load(Ordering::SeqCst) {
                if !up.load(Ordering::SeqCst) {
                    listener = None;
                } else if listener.is_none() {
                    let l = TcpListener::bind(("127.0.0.1", port)).expect("rebind the API port");
                    l.set_nonblocking(true).unwrap();
                    listener = Some(l);
                }
                let Some(Ok((mut stream, _))) = listener.as_ref().map(|l| l.accept()) else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                stream.set_nonblocking(false).unwrap();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head);
                requests
                    .lock()
                    .unwrap()
                    .push(text.lines().next().unwrap_or_default().to_string());
                let body = json!({"items": *items.lock().unwrap()}).to_string();
                let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                served.fetch_add(1, Ordering::SeqCst);
            }
        });
        api
    }

    fn add(&self, ids: std::ops::Range<u32>) {
        let mut items = self.items.lock().unwrap();
        for id in ids {
            let ts = item_time(id);
            items.push(json!({"id": id, "ts": ts, "name": format!("item-{id}")}));
        }
    }
}

/// Item `id`'s timestamp: recent (older records would fall to the log's retention), a second apart.
fn item_time(id: u32) -> String {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| chrono::Utc::now().timestamp() - 3600);
    chrono::DateTime::from_timestamp(base + i64::from(id), 0)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Drop for Api {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

fn http_source(name: &str, api: &Api) -> Json {
    json!({"name": name, "config": {
        "connector.class": "HttpSource", "tasks.max": "1",
        "http.request.url": format!("http://127.0.0.1:{}/items", api.port),
        "http.request.params": "after=${offset.key}",
        "http.request.headers": "Accept: application/json",
        "http.response.list.pointer": "/items",
        "http.response.record.offset.pointer": "key=/id, timestamp=/ts",
        "http.timer.interval.millis": "100",
        "http.timer.catchup.interval.millis": "50",
        "kafka.topic": "items",
    }})
}

/// Every item 1..=n is in the log exactly once.
async fn each_item_once(db: &Path, n: u32) {
    wait_until("every item in the log", || async {
        stored(db, "items") >= i64::from(n)
    })
    .await;
    for id in 1..=n {
        assert_eq!(
            stored_with(db, "items", &format!("\"item-{id}\"")),
            1,
            "item {id}"
        );
    }
    assert_eq!(stored(db, "items"), i64::from(n), "no duplicates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_source_resumes_by_id_and_timestamp_after_kill_9() {
    let api = Api::start();
    api.add(1..6);
    let dir = tempdir();
    let binary = start_binary(dir.path(), &[]);
    let client = binary.healthy_api().await;
    crate::common::create_through(&client, http_source("poller", &api)).await;
    let db = dir.path().join("bin.db");
    each_item_once(&db, 5).await;
    binary.kill();
    api.add(6..9);
    let binary = start_binary(dir.path(), &[]);
    let client: Client = binary.healthy_api().await;
    each_item_once(&db, 8).await;
    // Offsets in the original's shape: partition {}, offset {key, timestamp}.
    let (status, offsets) = client.get("/connectors/poller/offsets").await.unwrap();
    assert_eq!(status, 200, "{offsets}");
    assert_eq!(
        offsets["offsets"][0],
        json!({"partition": {}, "offset": {"key": "8", "timestamp": item_time(8)}})
    );
    // The request template takes the offset.
    wait_until("a request after item 8", || async {
        api.requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.contains("/items?after=8 "))
    })
    .await;
    binary.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_source_rides_out_an_api_outage() {
    let api = Api::start();
    api.add(1..4);
    let f = Fixture::start().await;
    create(&f.w, http_source("poller", &api)).await;
    each_item_once(&f.w.db, 3).await;
    api.up.store(false, Ordering::SeqCst);
    wait_until("the outage to show in the status", || async {
        task_trace(&f.w, "poller")
            .await
            .is_some_and(|t| t.contains("failed"))
    })
    .await;
    assert_eq!(f.w.status("poller").await["tasks"][0]["state"], "RUNNING");
    // The outage shows in the metrics too.
    let (retrying, before) = retry_gauges(&f.w, "poller").await;
    assert_eq!(retrying, 1.0);
    assert!(before > 0.0, "the polls before the outage succeeded");
    api.add(4..6);
    api.up.store(true, Ordering::SeqCst);
    each_item_once(&f.w.db, 5).await;
    wait_until("the trace to clear", || async {
        task_trace(&f.w, "poller").await.is_none()
    })
    .await;
    let (retrying, after) = retry_gauges(&f.w, "poller").await;
    assert_eq!(retrying, 0.0);
    assert!(after >= before, "{after} >= {before}");
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_source_refuses_a_bad_url_or_interval_and_names_a_refused_connection() {
    let f = Fixture::start().await;
    // Refused at validation, on the key, instead of failing later with "builder error".
    for (key, value, expected) in [
        ("http.request.url", "::::", "not a URL"),
        (
            "http.request.url",
            "ftp://127.0.0.1/items",
            "not http or https",
        ),
        (
            "http.timer.interval.millis",
            "-1",
            "Value must be at least 0",
        ),
        (
            "http.client.read.timeout.millis",
            "-5",
            "Value must be at least 0",
        ),
    ] {
        let mut config = json!({
            "name": "checked", "connector.class": "HttpSource", "kafka.topic": "items",
            "http.request.url": "http://127.0.0.1:1/items?after=${offset.key}",
        });
        config[key] = json!(value);
        let (status, body) =
            f.w.put("/connector-plugins/HttpSource/config/validate", config)
                .await;
        assert_eq!(status, 200, "{body}");
        let errors = crate::common::validation_errors(&body);
        assert!(
            errors
                .get(key)
                .is_some_and(|e| e.iter().any(|m| m.contains(expected))),
            "{key}={value}: {errors:?}"
        );
        assert_eq!(
            body["error_count"], 1,
            "{key}={value}: only that key: {errors:?}"
        );
    }
    // Nothing listens on the port: the trace says the connection was refused.
    let port = free_port();
    let api = json!({"name": "nowhere", "config": {
        "connector.class": "HttpSource", "kafka.topic": "items",
        "http.request.url": format!("http://127.0.0.1:{port}/items"),
        "http.timer.interval.millis": "100",
    }});
    create(&f.w, api).await;
    let trace = wait_for("the refused connection in the trace", DEADLINE, || async {
        task_trace(&f.w, "nowhere").await
    })
    .await;
    assert!(trace.contains("Connection refused"), "{trace}");
    assert_eq!(f.w.status("nowhere").await["tasks"][0]["state"], "RUNNING");
    f.w.stop().await;
}

/// Posts `body` as text with a client that gives up after `timeout`: status (0 when no answer came in
/// time), Retry-After, answer body.
async fn post_within(url: &str, body: String, timeout: Duration) -> (u16, Option<String>, String) {
    let client = reqwest::Client::builder().timeout(timeout).build().unwrap();
    match client
        .post(url)
        .header("content-type", "text/plain")
        .body(body)
        .send()
        .await
    {
        Ok(r) => {
            let status = r.status().as_u16();
            let retry = r
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            (status, retry, r.text().await.unwrap_or_default())
        }
        Err(e) => (0, None, e.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_answers_503_at_once_when_its_request_fills_the_log() {
    // The default request.timeout.ms (30 s): the request whose batch reaches the cap is not left waiting.
    let (dir, w, url) = capped_webhook(2000, "filling", &[]).await;
    let body = "f".repeat(300);
    let mut refused = None;
    for _ in 0..40 {
        let (status, retry, answer) = post_within(&url, body.clone(), Duration::from_secs(5)).await;
        match status {
            201 => continue,
            503 => {
                refused = Some((retry, answer));
                break;
            }
            other => panic!("unexpected {other}: {answer}"),
        }
    }
    let (retry, answer) = refused.expect("a 503 once the log is full");
    assert_eq!(retry.as_deref(), Some("1"), "{answer}");
    assert!(answer.contains("log.buffer.max.bytes"), "{answer}");
    let (status, retry, answer) = post_within(&url, body.clone(), Duration::from_secs(5)).await;
    assert_eq!((status, retry.as_deref()), (503, Some("1")), "{answer}");
    // A sink delivers the log: there is room again and requests are stored.
    create(&w, file_sink("drain", &dir.path().join("out.txt"), "hooks")).await;
    wait_for("a 201 once the sink made room", DEADLINE, || async {
        let (status, _, _) =
            post_within(&url, "after the cap".into(), Duration::from_secs(5)).await;
        (status == 201).then_some(())
    })
    .await;
    assert_eq!(stored_with(&w.db, "hooks", "after the cap"), 1);
    w.stop().await;
}

/// A webhook named `name` on `port` with its own path and topic.
fn hook(name: &str, host: &str, port: u16) -> Json {
    json!({"name": name, "config": {
        "connector.class": "WebhookSource", "tasks.max": "1",
        "listener": format!("http://{host}:{port}"), "path": format!("/{name}"), "topic": name}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_listener_held_by_another_connector_or_the_worker_is_refused() {
    let f = Fixture::start().await;
    let port = free_port();
    create(&f.w, hook("hooks-a", "127.0.0.1", port)).await;
    let holder = format!("127.0.0.1:{port} is already the listener of connector 'hooks-a'");
    let (status, answer) =
        f.w.post("/connectors", hook("hooks-b", "127.0.0.1", port))
            .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error_code"], 400, "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains(&holder),
        "{answer}"
    );
    let (status, answer) =
        f.w.put(
            "/connectors/hooks-b/config",
            hook("hooks-b", "127.0.0.1", port)["config"].clone(),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    // The wildcard address holds the port on every host.
    let mut wildcard = hook("hooks-b", "0.0.0.0", port)["config"].clone();
    wildcard["name"] = json!("hooks-b");
    let (status, answer) =
        f.w.put("/connector-plugins/WebhookSource/config/validate", wildcard)
            .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["error_count"], 1, "{answer}");
    let errors = crate::common::validation_errors(&answer);
    assert!(
        errors["listener"].iter().any(|e| e.contains(&format!(
            "0.0.0.0:{port} is already the listener of connector 'hooks-a'"
        ))),
        "{answer}"
    );
    // The worker's own REST listener.
    let rest_port: u16 = f.w.url.rsplit(':').next().unwrap().parse().unwrap();
    let (status, answer) =
        f.w.post("/connectors", hook("hooks-c", "127.0.0.1", rest_port))
            .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains(&format!(
            "127.0.0.1:{rest_port} is already the listener of the worker's REST listener"
        )),
        "{answer}"
    );
    // A connector keeps its own address when its config changes; another port is free.
    let (status, answer) =
        f.w.put(
            "/connectors/hooks-a/config",
            hook("hooks-a", "127.0.0.1", port)["config"].clone(),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    create(&f.w, hook("hooks-b", "127.0.0.1", free_port())).await;
    f.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connector_created_first_keeps_a_listener_two_stored_connectors_claim() {
    let dir = tempdir();
    let db = dir.path().join("bin.db");
    let (port, other) = (free_port(), free_port());
    {
        let b = start_binary(dir.path(), &[]);
        let api = b.healthy_api().await;
        // Created first, last by name: starting by name would let the other one take the port.
        crate::common::create_through(&api, hook("hooks-b", "127.0.0.1", port)).await;
        webhook_up(&format!("http://127.0.0.1:{port}/hooks-b")).await;
        crate::common::create_through(&api, hook("hooks-a", "127.0.0.1", other)).await;
        b.terminate();
    }
    // A clash stored before validation refused it: hooks-a moved onto hooks-b's port.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let listener = format!("http://127.0.0.1:{port}");
    for sql in [
        "UPDATE connector_configs SET config = json_set(config, '$.listener', ?1) WHERE name = 'hooks-a'",
        "UPDATE task_configs SET config = json_set(config, '$.listener', ?1) WHERE connector = 'hooks-a'",
    ] {
        assert_eq!(conn.execute(sql, [&listener]).unwrap(), 1, "{sql}");
    }
    drop(conn);
    for run in 0..3 {
        let b = start_binary(dir.path(), &[]);
        let api = b.healthy_api().await;
        let body = format!("run {run}");
        let url = format!("http://127.0.0.1:{port}/hooks-b");
        let (status, answer) = wait_for("an answer on the port", DEADLINE, || async {
            let (status, _, answer) = post_within(&url, body.clone(), Duration::from_secs(5)).await;
            (status != 0).then_some((status, answer))
        })
        .await;
        assert_eq!(status, 201, "run {run}: hooks-b owns the port: {answer}");
        let trace = wait_for("hooks-a to fail", DEADLINE, || async {
            let (_, s) = api.get("/connectors/hooks-a/status").await.unwrap();
            (s["connector"]["state"] == "FAILED").then(|| s["connector"]["trace"].to_string())
        })
        .await;
        assert!(
            trace.contains(&format!(
                "127.0.0.1:{port} is already the listener of connector 'hooks-b'"
            )),
            "run {run}: {trace}"
        );
        b.terminate();
        assert_eq!(stored_with(&db, "hooks-b", &body), 1, "run {run}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_retries_a_port_that_is_taken_until_it_is_free() {
    let f = Fixture::start().await;
    // Another program holds the port.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    create(&f.w, webhook("patient", port, &[])).await;
    let trace = wait_for("the retriable start error", DEADLINE, || async {
        let status = f.w.status("patient").await;
        let task = &status["tasks"][0];
        (task["state"] == "RUNNING")
            .then(|| task["trace"].as_str().map(str::to_string))
            .flatten()
    })
    .await;
    assert!(trace.contains("RetriableException"), "{trace}");
    assert!(trace.contains("SourceTask.start"), "{trace}");
    drop(taken);
    let url = format!("http://127.0.0.1:{port}/ingest");
    webhook_up(&url).await;
    let (status, _, answer) = post(&url, "text/plain", "once free", None).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(f.w.status("patient").await["tasks"][0]["state"], "RUNNING");
    f.w.stop().await;
}

/// The connector's `liteconnect_task_retrying` and `liteconnect_task_last_success_timestamp_seconds`.
async fn retry_gauges(w: &TestWorker, connector: &str) -> (f64, f64) {
    let gauge = |name| crate::common::task_gauge(&w.url, name, connector);
    (
        gauge("liteconnect_task_retrying").await,
        gauge("liteconnect_task_last_success_timestamp_seconds").await,
    )
}
