//! The HTTP sink connectors (Aiven's and Confluent's classes) against a real HTTP server in this process:
//! single requests and batches, authorization (static, basic, OAuth2 client credentials), retries on 503
//! and 429, an endpoint that goes away and comes back, refused records under `errors.tolerance`, and the
//! binary killed mid-batch.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value as Json};
use warp::Filter;

use crate::common::*;

const AIVEN: &str = "io.aiven.kafka.connect.http.HttpSinkConnector";
const CONFLUENT: &str = "io.confluent.connect.http.HttpSinkConnector";

/// One request the endpoint received, and the status it answered.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
    status: u16,
    at: Instant,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the endpoint does: scripted answers first, then 400 for bodies containing `refuse`, else 200.
#[derive(Default)]
struct Behaviour {
    seen: Vec<Seen>,
    script: VecDeque<(u16, Option<&'static str>)>,
    refuse: Option<&'static str>,
    tokens: usize,
}

/// An HTTP endpoint on an ephemeral port that records every request; `/token` is an OAuth2 token endpoint.
struct Endpoint {
    addr: SocketAddr,
    state: Arc<Mutex<Behaviour>>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    served: Option<tokio::task::JoinHandle<()>>,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

fn answer(state: &Mutex<Behaviour>, mut seen: Seen) -> warp::reply::Response {
    let mut b = state.lock().unwrap();
    let mut response = warp::http::Response::builder();
    let body = if seen.path == "/token" {
        b.tokens += 1;
        seen.status = 200;
        json!({"access_token": format!("tok-{}", b.tokens), "token_type": "Bearer", "expires_in": 3600})
            .to_string()
    } else {
        let auth_ok = match seen.header("authorization") {
            Some(a) if a.starts_with("Bearer tok-") => a == format!("Bearer tok-{}", b.tokens),
            _ => true,
        };
        seen.status = match b.script.pop_front() {
            Some((status, retry_after)) => {
                if let Some(r) = retry_after {
                    response = response.header("Retry-After", r);
                }
                status
            }
            None if !auth_ok => 401,
            None if b.refuse.is_some_and(|r| seen.body.contains(r)) => 400,
            None => 200,
        };
        format!("answered {}", seen.status)
    };
    let status = seen.status;
    b.seen.push(seen);
    response.status(status).body(body.into()).unwrap()
}

impl Endpoint {
    async fn start() -> Endpoint {
        Self::start_on("127.0.0.1:0".parse().unwrap(), Arc::default(), None).await
    }

    /// An HTTPS endpoint with a self-signed certificate for 127.0.0.1, offering HTTP/2 and HTTP/1.1.
    async fn start_tls() -> Endpoint {
        let key = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        let chain = vec![key.cert.der().clone()];
        let private =
            rustls_pki_types::PrivateKeyDer::Pkcs8(key.signing_key.serialize_der().into());
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let tls = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        Self::start_on("127.0.0.1:0".parse().unwrap(), Arc::default(), Some(tls)).await
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    async fn start_on(
        addr: SocketAddr,
        state: Arc<Mutex<Behaviour>>,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> Endpoint {
        let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
        let addr = listener.local_addr().unwrap();
        let shared = state.clone();
        let filter = warp::method()
            .and(warp::path::full())
            .and(warp::header::headers_cloned())
            .and(warp::body::bytes())
            .map(
                move |method: warp::http::Method,
                      path: warp::path::FullPath,
                      headers: warp::http::HeaderMap,
                      body: bytes::Bytes| {
                    let seen = Seen {
                        method: method.to_string(),
                        path: path.as_str().to_string(),
                        headers: headers
                            .iter()
                            .map(|(n, v)| {
                                (n.to_string(), v.to_str().unwrap_or_default().to_string())
                            })
                            .collect(),
                        body: String::from_utf8_lossy(&body).into_owned(),
                        status: 0,
                        at: Instant::now(),
                    };
                    answer(&shared, seen)
                },
            )
            .recover(|_: warp::Rejection| async {
                Ok::<_, Infallible>(
                    warp::http::Response::builder()
                        .status(500)
                        .body("".into())
                        .unwrap(),
                )
            })
            .unify();
        let (tx, rx) = tokio::sync::watch::channel(false);
        let served = tokio::spawn(liteconnect::security::server::serve(
            listener,
            tls.clone(),
            filter,
            rx,
        ));
        Endpoint {
            addr,
            state,
            stop: Some(tx),
            served: Some(served),
            tls,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme(), self.addr)
    }

    /// Stops serving: connections are closed and new ones refused.
    async fn down(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(true);
        }
        if let Some(h) = self.served.take() {
            h.await.unwrap();
        }
    }

    /// Serves again on the same port, with the same records.
    async fn up(&mut self) {
        let again = Endpoint::start_on(self.addr, self.state.clone(), self.tls.clone()).await;
        *self = again;
    }

    fn with<T>(&self, f: impl FnOnce(&mut Behaviour) -> T) -> T {
        f(&mut self.state.lock().unwrap())
    }

    /// The requests to `path` (all but token requests when `None`).
    fn seen(&self, path: Option<&str>) -> Vec<Seen> {
        self.with(|b| {
            b.seen
                .iter()
                .filter(|s| path.map_or(s.path != "/token", |p| s.path == p))
                .cloned()
                .collect()
        })
    }

    /// The bodies answered with a 2xx.
    fn delivered(&self) -> Vec<String> {
        self.seen(None)
            .into_iter()
            .filter(|s| s.status < 300)
            .map(|s| s.body)
            .collect()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(true);
        }
    }
}

fn numbered(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:05}")).collect()
}

/// An HTTP sink connector of `class` reading topic `t`, with `extra` keys.
fn sink(name: &str, class: &str, extra: Json) -> Json {
    let mut config = json!({"connector.class": class, "tasks.max": "1", "topics": "t"});
    config
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    json!({"name": name, "config": config})
}

/// A worker with a file source writing `lines` into topic `t`, and the sink.
async fn pipeline(lines: &[String], sink_body: Json) -> Fixture {
    let f = Fixture::start().await;
    append_lines(&f.input, lines.iter().cloned());
    f.w.create(file_source("src", &f.input, "t")).await;
    f.w.create(sink_body).await;
    f
}

/// An endpoint, `n` numbered lines in the input, and sink `s` of `class` with the keys `keys` gives for the
/// endpoint.
async fn setup(
    n: usize,
    class: &str,
    keys: impl FnOnce(&Endpoint) -> Json,
) -> (Endpoint, Vec<String>, Fixture) {
    let e = Endpoint::start().await;
    let lines = numbered("r", n);
    let f = pipeline(&lines, sink("s", class, keys(&e))).await;
    (e, lines, f)
}

async fn wait_delivered(
    e: &Endpoint,
    split: impl Fn(&str) -> Vec<String>,
    expected: &[String],
) -> Vec<String> {
    wait_for("every record delivered", DEADLINE, || async {
        let got: Vec<String> = e.delivered().iter().flat_map(|b| split(b)).collect();
        let distinct: std::collections::BTreeSet<&String> = got.iter().collect();
        (distinct.len() >= expected.len()).then_some(got)
    })
    .await
}

fn one(body: &str) -> Vec<String> {
    vec![body.to_string()]
}

/// The committed offset of topic `t` partition 0, if any.
async fn committed(w: &TestWorker, name: &str) -> Option<i64> {
    let (_, body) = w.get(&format!("/connectors/{name}/offsets")).await;
    body["offsets"]
        .as_array()?
        .iter()
        .find(|o| o["partition"]["kafka_topic"] == "t")
        .and_then(|o| o["offset"]["kafka_offset"].as_i64())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aiven_single_requests_carry_static_auth_and_headers() {
    let (e, lines, f) = setup(5, AIVEN, |e| {
        json!({
            "http.url": e.url("/ingest"), "http.authorization.type": "static",
            "http.headers.authorization": "Bearer s3cret", "http.headers.content.type": "text/plain",
            "http.headers.additional": "X-Env:test,X-Team:data"})
    })
    .await;
    let got = wait_delivered(&e, one, &lines).await;
    assert_eq!(got, lines, "one request per record, in order");
    for s in e.seen(None) {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/ingest"));
        assert_eq!(s.header("authorization"), Some("Bearer s3cret"));
        assert_eq!(s.header("content-type"), Some("text/plain"));
        assert_eq!(
            (s.header("x-env"), s.header("x-team")),
            (Some("test"), Some("data"))
        );
    }
    wait_until("offsets committed past the last record", || async {
        committed(&f.w, "s").await == Some(5)
    })
    .await;
}

fn split_batch(
    prefix: &'static str,
    suffix: &'static str,
    sep: &'static str,
) -> impl Fn(&str) -> Vec<String> {
    move |b: &str| {
        assert!(
            b.starts_with(prefix) && b.ends_with(suffix),
            "framing of {b:?}"
        );
        b[prefix.len()..b.len() - suffix.len()]
            .split(sep)
            .map(str::to_string)
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aiven_batches_with_prefix_suffix_and_separator() {
    let (e, lines, _f) = setup(30, AIVEN, |e| {
        json!({
            "http.url": e.url("/batch"), "http.authorization.type": "none", "batching.enabled": "true",
            "batch.max.size": "4", "batch.prefix": "<", "batch.suffix": ">\n", "batch.separator": ";"})
    })
    .await;
    let split = split_batch("<", ">\n", ";");
    let got = wait_delivered(&e, &split, &lines).await;
    assert_eq!(got, lines);
    let sizes: Vec<usize> = e.delivered().iter().map(|b| split(b).len()).collect();
    assert!(
        sizes.iter().all(|n| *n <= 4) && sizes.contains(&4),
        "batch sizes {sizes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluent_batches_json_arrays_to_a_topic_url_with_basic_auth() {
    let (e, lines, _f) = setup(12, CONFLUENT, |e| {
        let url = e.url("/topics/${topic}");
        json!({"http.api.url": url, "request.method": "PUT", "headers": "X-Trace:abc|Accept:text/plain",
            "auth.type": "BASIC", "connection.user": "alice", "connection.password": "wonder",
            "request.body.format": "json", "batch.max.size": "5", "batch.json.as.array": "true"})
    })
    .await;
    let array = |b: &str| -> Vec<String> {
        serde_json::from_str::<Vec<String>>(b)
            .unwrap_or_else(|e| panic!("{b:?} is not a JSON array of strings: {e}"))
    };
    let got = wait_delivered(&e, array, &lines).await;
    assert_eq!(got, lines);
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("alice:wonder")
    );
    for s in e.seen(None) {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("PUT", "/topics/t"));
        assert_eq!(s.header("authorization"), Some(basic.as_str()));
        assert_eq!(s.header("x-trace"), Some("abc"));
        assert_eq!(s.header("content-type"), Some("application/json"));
        assert!(array(&s.body).len() <= 5);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluent_single_string_requests_by_default() {
    let (e, lines, _f) = setup(4, CONFLUENT, |e| json!({"http.api.url": e.url("/in")})).await;
    let got = wait_delivered(&e, one, &lines).await;
    assert_eq!(
        got, lines,
        "batch.max.size=1: one POST per record, the value as it is"
    );
    assert!(e
        .seen(None)
        .iter()
        .all(|s| s.method == "POST" && s.header("authorization").is_none()));
}

/// Delivers through an OAuth2-protected endpoint whose first token is revoked after the first request.
/// Aiven's class sends the client credentials in a Basic header, Confluent's (`auth.mode=url`) in the form.
async fn oauth2_round_trip(class: &str) {
    let in_form = class == CONFLUENT;
    let e = Endpoint::start().await;
    let lines = numbered("o", 6);
    let f = Fixture::start().await;
    append_lines(&f.input, lines[..3].iter().cloned());
    f.w.create(file_source("src", &f.input, "t")).await;
    let keys = if in_form {
        json!({"http.api.url": e.url("/api"), "auth.type": "OAUTH2", "oauth2.token.url": e.url("/token"),
            "oauth2.client.auth.mode": "url"})
    } else {
        json!({"http.url": e.url("/api"), "http.authorization.type": "oauth2",
            "oauth2.access.token.url": e.url("/token"), "oauth2.client.scope": "write"})
    };
    let mut keys = keys.as_object().unwrap().clone();
    keys.insert("oauth2.client.id".into(), json!("app"));
    keys.insert("oauth2.client.secret".into(), json!("secret"));
    f.w.create(sink("o", class, Json::Object(keys))).await;
    wait_delivered(&e, one, &lines[..3]).await;
    // A new token is issued elsewhere: the one the sink holds is now refused with 401.
    e.with(|b| b.tokens += 1);
    append_lines(&f.input, lines[3..].iter().cloned());
    let got = wait_delivered(&e, one, &lines).await;
    assert_eq!(got, lines);
    let tokens = e.seen(Some("/token"));
    assert_eq!(tokens.len(), 2, "fetched once, and again after the 401");
    let form = &tokens[0].body;
    assert!(form.contains("grant_type=client_credentials"), "{form}");
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("app:secret")
    );
    if in_form {
        assert!(
            form.contains("client_id=app") && form.contains("client_secret=secret"),
            "{form}"
        );
        assert_eq!(tokens[0].header("authorization"), None);
    } else {
        assert_eq!(tokens[0].header("authorization"), Some(basic.as_str()));
        assert!(!form.contains("secret"), "{form}");
    }
    let seen = e.seen(None);
    assert_eq!(seen.iter().filter(|s| s.status == 401).count(), 1);
    assert_eq!(
        seen.last().unwrap().header("authorization"),
        Some("Bearer tok-3")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aiven_oauth2_client_credentials_in_a_basic_header() {
    oauth2_round_trip(AIVEN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluent_oauth2_client_credentials_in_the_form() {
    oauth2_round_trip(CONFLUENT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_on_503_and_on_429_after_its_retry_after() {
    let (e, lines, _f) = setup(5, AIVEN, |e| {
        // The first attempts meet a 503, a 429 asking for a second's pause, and a 503 again.
        e.with(|b| {
            b.script
                .extend([(503, None), (429, Some("1")), (503, None)])
        });
        json!({"http.url": e.url("/r"), "http.authorization.type": "none",
            "max.retries": "5", "retry.backoff.ms": "50"})
    })
    .await;
    let got = wait_delivered(&e, one, &lines).await;
    assert_eq!(got, lines, "nothing lost, nothing repeated, in order");
    let seen = e.seen(None);
    let statuses: Vec<u16> = seen.iter().map(|s| s.status).collect();
    assert_eq!(statuses[..4], [503, 429, 503, 200], "{statuses:?}");
    assert!(
        seen.iter().take(4).all(|s| s.body == lines[0]),
        "the first record was retried"
    );
    let waited = seen[2].at - seen[1].at;
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 honoured, waited {waited:?}"
    );
    assert!(
        seen[1].at - seen[0].at < Duration::from_millis(900),
        "503: the configured backoff"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_down_for_a_while_gets_everything_in_order_when_back() {
    let mut e = Endpoint::start().await;
    let lines = numbered("d", 40);
    let f = pipeline(
        &lines[..10],
        sink(
            "d",
            CONFLUENT,
            json!({"http.api.url": e.url("/d"), "batch.max.size": "3",
            "batch.separator": "\n", "max.retries": "1", "retry.backoff.ms": "100"}),
        ),
    )
    .await;
    let split = |b: &str| b.split('\n').map(str::to_string).collect::<Vec<_>>();
    wait_delivered(&e, split, &lines[..10]).await;
    wait_until("the first records committed", || async {
        committed(&f.w, "d").await == Some(10)
    })
    .await;
    e.down().await;
    append_lines(&f.input, lines[10..].iter().cloned());
    // The task stays RUNNING, with a trace saying why; the records wait in the log, uncommitted.
    let trace = wait_for("a RUNNING task with a trace", DEADLINE, || async {
        let s = f.w.status("d").await;
        let t = &s["tasks"][0];
        (t["state"] == "RUNNING" && t["trace"].is_string())
            .then(|| t["trace"].as_str().unwrap().to_string())
    })
    .await;
    assert!(
        trace.contains("not delivered") && trace.contains("/d"),
        "{trace}"
    );
    assert_eq!(committed(&f.w, "d").await, Some(10));
    e.up().await;
    let got = wait_delivered(&e, split, &lines).await;
    assert_delivered_in_order(&got, &lines);
    wait_until("committed to the end and the trace cleared", || async {
        let s = f.w.status("d").await;
        committed(&f.w, "d").await == Some(40) && s["tasks"][0]["trace"].is_null()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_shows_in_the_status_and_the_metrics_while_the_client_retries() {
    let mut e = Endpoint::start().await;
    let lines = numbered("o", 20);
    // Many retries: the client keeps trying inside one put for the whole outage.
    let f = pipeline(
        &lines[..5],
        sink(
            "o",
            CONFLUENT,
            json!({"http.api.url": e.url("/o"), "batch.max.size": "5",
            "batch.separator": "\n", "max.retries": "1000", "retry.backoff.ms": "100"}),
        ),
    )
    .await;
    let split = |b: &str| b.split('\n').map(str::to_string).collect::<Vec<_>>();
    wait_delivered(&e, split, &lines[..5]).await;
    e.down().await;
    append_lines(&f.input, lines[5..].iter().cloned());
    let trace = wait_for("the retries in the status", DEADLINE, || async {
        let s = f.w.status("o").await;
        let t = &s["tasks"][0];
        (t["state"] == "RUNNING" && t["trace"].is_string())
            .then(|| t["trace"].as_str().unwrap().to_string())
    })
    .await;
    assert!(
        trace.contains("RetriableException") && trace.contains("/o") && trace.contains("attempt"),
        "{trace}"
    );
    assert_eq!(
        crate::common::task_gauge(&f.w.url, "liteconnect_task_retrying", "o").await,
        1.0
    );
    e.up().await;
    let got = wait_delivered(&e, split, &lines).await;
    assert_delivered_in_order(&got, &lines);
    wait_until("the trace cleared", || async {
        f.w.status("o").await["tasks"][0]["trace"].is_null()
    })
    .await;
    assert_eq!(
        crate::common::task_gauge(&f.w.url, "liteconnect_task_retrying", "o").await,
        0.0
    );
    assert!(
        task_gauge(
            &f.w.url,
            "liteconnect_task_last_success_timestamp_seconds",
            "o"
        )
        .await
            > 0.0
    );
}

/// A DLQ reader sink and an Aiven sink whose endpoint refuses records containing "bad".
async fn refusing_pipeline(e: &Endpoint, extra: Json) -> Fixture {
    e.with(|b| b.refuse = Some("bad"));
    let lines: Vec<String> = ["ok-1", "bad-2", "ok-3", "bad-4", "ok-5"]
        .map(String::from)
        .to_vec();
    let mut keys =
        json!({"http.url": e.url("/x"), "http.authorization.type": "none", "max.retries": "0"});
    keys.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    pipeline(&lines, sink("x", AIVEN, keys)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_record_goes_to_the_dlq_with_tolerance_all() {
    let e = Endpoint::start().await;
    let f = refusing_pipeline(
        &e,
        json!({"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dlq",
        "errors.deadletterqueue.context.headers.enable": "true"}),
    )
    .await;
    let dlq = f.dir.path().join("dlq.txt");
    f.w.create(file_sink("dlq-reader", &dlq, "dlq")).await;
    let ok: Vec<String> = ["ok-1", "ok-3", "ok-5"].map(String::from).to_vec();
    assert_eq!(wait_delivered(&e, one, &ok).await, ok);
    wait_until("the refused records in the DLQ", || async {
        lines(&dlq).len() == 2
    })
    .await;
    assert_eq!(lines(&dlq), ["bad-2", "bad-4"]);
    wait_until("everything committed", || async {
        committed(&f.w, "x").await == Some(5)
    })
    .await;
    f.w.wait_for_state("x", "RUNNING", 1, "RUNNING").await;
    let db = f.w.db.clone();
    f.w.stop().await;
    let conn = rusqlite::Connection::open(db).unwrap();
    let headers: Vec<u8> = conn
        .query_row("SELECT r.headers FROM records r JOIN topics t ON t.id = r.topic_id WHERE t.name = 'dlq' ORDER BY r.offset LIMIT 1", [], |r| r.get(0))
        .unwrap();
    let headers = String::from_utf8_lossy(&headers);
    for needle in ["TASK_PUT", "status code 400", AIVEN] {
        assert!(headers.contains(needle), "missing {needle} in {headers}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_record_fails_the_task_with_tolerance_none() {
    let e = Endpoint::start().await;
    let f = refusing_pipeline(&e, json!({})).await;
    let trace = f.w.wait_for_failed_task("x").await;
    assert!(
        trace.contains("Tolerance exceeded") && trace.contains("status code 400"),
        "{trace}"
    );
    assert_eq!(e.delivered(), ["ok-1"]);
    // Nothing past the refused record is committed.
    assert!(committed(&f.w, "x").await.is_none_or(|o| o <= 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluent_behavior_on_error_log_skips_refused_records() {
    let e = Endpoint::start().await;
    e.with(|b| b.refuse = Some("bad"));
    let lines: Vec<String> = ["ok-1", "bad-2", "ok-3"].map(String::from).to_vec();
    let f = pipeline(
        &lines,
        sink(
            "l",
            CONFLUENT,
            json!({"http.api.url": e.url("/l"),
        "behavior.on.error": "log", "retry.on.status.codes": "500-", "max.retries": "0"}),
        ),
    )
    .await;
    let ok: Vec<String> = ["ok-1", "ok-3"].map(String::from).to_vec();
    assert_eq!(wait_delivered(&e, one, &ok).await, ok);
    wait_until("everything committed", || async {
        committed(&f.w, "l").await == Some(3)
    })
    .await;
    assert_eq!(
        e.seen(None).iter().filter(|s| s.status == 400).count(),
        1,
        "400 is not retried here"
    );
    assert_eq!(f.w.status("l").await["tasks"][0]["state"], "RUNNING");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_config_names_the_key() {
    let f = Fixture::start().await;
    let validate = |class: &'static str, config: Json| {
        let w = &f.w;
        async move {
            let mut config = config;
            config["connector.class"] = json!(class);
            config["topics"] = json!("t");
            config["name"] = json!("v");
            let (s, b) = w
                .put(
                    &format!("/connector-plugins/{class}/config/validate"),
                    config,
                )
                .await;
            assert_eq!(s, 200, "{b}");
            validation_errors(&b)
                .into_iter()
                .map(|(key, errors)| (key, errors[0].clone()))
                .collect::<Vec<_>>()
        }
    };
    let e = validate(
        AIVEN,
        json!({"http.url": "http://h/", "http.authorization.type": "bearer"}),
    )
    .await;
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, "http.authorization.type");
    assert!(
        e[0].1
            .contains("supported values are: [none, oauth2, static]"),
        "{e:?}"
    );
    let e = validate(AIVEN, json!({"http.authorization.type": "static"})).await;
    let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.contains(&"http.url"), "{e:?}");
    let e = validate(
        CONFLUENT,
        json!({"http.api.url": "ftp:/x", "request.method": "DELETE"}),
    )
    .await;
    let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["http.api.url", "request.method"], "{e:?}");
    // Both classes are named HttpSinkConnector: as in Kafka Connect, the short names match both.
    let (status, answer) =
        f.w.api
            .post(
                "/connectors",
                &json!({"name": "a", "config": {"connector.class": "HttpSink", "topics": "t"}}),
            )
            .await
            .unwrap();
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        status == 400 && message.contains("More than one connector matches alias HttpSink"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_killed_mid_batch_resends_from_the_last_commit() {
    let e = Endpoint::start().await;
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let expected = numbered("k", 20_000);
    append_lines(&input, expected.clone());
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    create_through(&api, file_source("src", &input, "t")).await;
    create_through(
        &api,
        sink(
            "k",
            AIVEN,
            json!({"http.url": e.url("/k"), "http.authorization.type": "none",
        "batching.enabled": "true", "batch.max.size": "50"}),
        ),
    )
    .await;
    let split = split_batch("", "\n", "\n");
    wait_for("some batches delivered", DEADLINE, || async {
        (e.delivered().len() >= 5).then_some(())
    })
    .await;
    bin.kill();
    let at_kill = e.delivered().len();
    assert!(
        at_kill < expected.len() / 50,
        "killed before the last batch ({at_kill} batches)"
    );
    let bin = start_binary(dir.path(), &[]);
    bin.healthy_api().await;
    let got = wait_for(
        "every record delivered after the restart",
        DEADLINE * 3,
        || async {
            let got: Vec<String> = e.delivered().iter().flat_map(|b| split(b)).collect();
            let distinct: std::collections::BTreeSet<&String> = got.iter().collect();
            (distinct.len() >= expected.len()).then_some(got)
        },
    )
    .await;
    let repeats = assert_delivered_in_order(&got, &expected);
    eprintln!("kill -9: {at_kill} batches before the kill, {repeats} records sent twice");
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aiven_proxy_keys_route_requests_through_the_proxy() {
    // The endpoint stands in for a forward proxy: it gets the request for the unresolvable host.
    let (e, lines, _f) = setup(3, AIVEN, |e| {
        json!({"http.url": "http://sink.invalid/via", "http.authorization.type": "none",
            "http.proxy.host": "127.0.0.1", "http.proxy.port": e.addr.port().to_string()})
    })
    .await;
    assert_eq!(wait_delivered(&e, one, &lines).await, lines);
    assert!(e
        .seen(None)
        .iter()
        .all(|s| s.path == "/via" && s.header("host") == Some("sink.invalid")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_honours_http_proxy_and_no_proxy() {
    let proxy = Endpoint::start().await;
    let direct = Endpoint::start().await;
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let lines = numbered("p", 4);
    append_lines(&input, lines.clone());
    let proxy_url = proxy.url("");
    let bin = start_binary_with(
        dir.path(),
        &binary_props(dir.path()),
        &[
            ("HTTP_PROXY", proxy_url.as_str()),
            ("NO_PROXY", "127.0.0.1"),
        ],
        1,
    );
    let api = bin.healthy_api().await;
    create_through(&api, file_source("src", &input, "t")).await;
    for (name, url) in [
        ("via", "http://sink.invalid/env".to_string()),
        ("direct", direct.url("/direct")),
    ] {
        create_through(&api, sink(name, CONFLUENT, json!({"http.api.url": url}))).await;
    }
    assert_eq!(wait_delivered(&proxy, one, &lines).await, lines);
    assert_eq!(wait_delivered(&direct, one, &lines).await, lines);
    assert!(
        proxy
            .seen(None)
            .iter()
            .all(|s| s.header("host") == Some("sink.invalid")),
        "NO_PROXY: 127.0.0.1 is reached directly"
    );
    bin.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_handed_over_again_skips_what_was_delivered() {
    // The second request of the batch meets a 503 with no retries left: the worker hands the batch over
    // again, and only what was not delivered is sent.
    let (e, lines, f) = setup(6, CONFLUENT, |e| {
        e.with(|b| b.script.extend([(200, None), (503, None)]));
        json!({"http.api.url": e.url("/again"), "batch.max.size": "2", "max.retries": "0",
            "retry.backoff.ms": "10"})
    })
    .await;
    let split = |b: &str| b.split(',').map(str::to_string).collect::<Vec<_>>();
    let got = wait_delivered(&e, split, &lines).await;
    assert_eq!(got, lines, "nothing sent twice");
    assert_eq!(e.seen(None).iter().filter(|s| s.status == 503).count(), 1);
    wait_until("everything committed", || async {
        committed(&f.w, "s").await == Some(6)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_http2_when_the_server_offers_it() {
    let e = Endpoint::start_tls().await;
    let lines = numbered("tls", 3);
    let f = Fixture::start().await;
    append_lines(&f.input, lines.iter().cloned());
    f.w.create(file_source("src", &f.input, "t")).await;
    // A self-signed certificate: accepted only with http.ssl.trust.all.certs.
    f.w.create(sink(
        "strict",
        AIVEN,
        json!({"http.url": e.url("/strict"), "http.authorization.type": "none",
        "max.retries": "0", "retry.backoff.ms": "10"}),
    ))
    .await;
    let trace = wait_for(
        "the strict sink to report the certificate",
        DEADLINE,
        || async {
            let t = f.w.status("strict").await["tasks"][0]["trace"].clone();
            t.as_str().map(str::to_string)
        },
    )
    .await;
    assert!(
        trace.contains("certificate") || trace.contains("Certificate"),
        "{trace}"
    );
    f.w.create(sink(
        "trusting",
        AIVEN,
        json!({"http.url": e.url("/tls"), "http.authorization.type": "none",
        "http.ssl.trust.all.certs": "true"}),
    ))
    .await;
    assert_eq!(wait_delivered(&e, one, &lines).await, lines);
    let seen = e.seen(None);
    assert!(
        seen.iter().all(|s| s.path == "/tls"),
        "nothing passed the strict sink"
    );
    // An HTTP/2 request carries its authority in a pseudo-header: no Host header reaches the handler (over
    // HTTP/1.1 reqwest always sends one).
    assert!(
        seen.iter().all(|s| s.header("host").is_none()),
        "{:?}",
        seen[0].headers
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confluent_refused_batch_sends_all_its_records_to_the_dlq() {
    let e = Endpoint::start().await;
    e.with(|b| b.refuse = Some("bad"));
    let input: Vec<String> = ["a", "bad", "c", "d", "e", "f"].map(String::from).to_vec();
    let f = pipeline(
        &input,
        sink(
            "b",
            CONFLUENT,
            json!({"http.api.url": e.url("/b"), "batch.max.size": "3",
        "retry.on.status.codes": "500-", "max.retries": "0", "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": "dlq"}),
        ),
    )
    .await;
    let dlq = f.dir.path().join("dlq.txt");
    f.w.create(file_sink("dlq-reader", &dlq, "dlq")).await;
    wait_until("every record settled", || async {
        committed(&f.w, "b").await == Some(6)
    })
    .await;
    // Batches follow what the worker hands over; whatever they were, the refused one went to the DLQ whole.
    let delivered: Vec<String> = e
        .delivered()
        .iter()
        .flat_map(|b| b.split(',').map(String::from).collect::<Vec<_>>())
        .collect();
    wait_until("the DLQ written", || async {
        lines(&dlq).len() + delivered.len() == 6
    })
    .await;
    let in_dlq = lines(&dlq);
    assert!(
        in_dlq.contains(&"bad".to_string()) && !delivered.contains(&"bad".to_string()),
        "{in_dlq:?} {delivered:?}"
    );
    let refused: Vec<String> = e
        .seen(None)
        .iter()
        .filter(|s| s.status == 400)
        .flat_map(|s| s.body.split(',').map(String::from).collect::<Vec<_>>())
        .collect();
    assert_eq!(
        in_dlq, refused,
        "the refused request's records, all of them"
    );
    let mut all: Vec<String> = delivered.iter().chain(in_dlq.iter()).cloned().collect();
    all.sort();
    let mut expected = input.clone();
    expected.sort();
    assert_eq!(all, expected, "each record delivered or in the DLQ, once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_killed_mid_stream_repeats_at_most_the_request_in_flight() {
    const BATCH: usize = 50;
    let e = Endpoint::start().await;
    let dir = tempdir();
    let expected = numbered("c", 30_000);
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    // The records are all in the log before the sink starts, so only the sink can repeat one.
    fill_topic(&api, dir.path(), "t", &expected).await;
    create_through(
        &api,
        sink(
            "c",
            AIVEN,
            json!({"http.url": e.url("/c"), "http.authorization.type": "none",
        "batching.enabled": "true", "batch.max.size": BATCH.to_string()}),
        ),
    )
    .await;
    let split = split_batch("", "\n", "\n");
    wait_for("100 batches delivered", DEADLINE, || async {
        (e.delivered().len() >= 100).then_some(())
    })
    .await;
    bin.kill();
    let at_kill = e.delivered().len();
    assert!(
        at_kill < expected.len() / BATCH,
        "killed before the last batch ({at_kill} batches)"
    );
    let bin = start_binary(dir.path(), &[]);
    bin.healthy_api().await;
    let got = wait_delivered(&e, &split, &expected).await;
    let distinct: std::collections::BTreeSet<&String> = got.iter().collect();
    let losses = expected.iter().filter(|r| !distinct.contains(r)).count();
    let repeats = assert_delivered_in_order(&got, &expected);
    eprintln!(
        "HTTP sink, kill -9 after {at_kill} requests: {repeats} records sent twice, {losses} lost"
    );
    assert_eq!(losses, 0);
    assert!(
        repeats <= BATCH,
        "{repeats} records sent twice: more than the request in flight ({BATCH})"
    );
    bin.terminate();
}
