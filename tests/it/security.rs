//! The REST server's security features on real workers and real ports: HTTPS with certificates generated
//! here, mutual TLS, basic authentication, CORS, response header rules, every listener served, and config
//! providers resolved for tasks only.

use std::path::Path;
use std::time::Duration;

use crate::common::certs::Ca;
use crate::common::*;
use base64::Engine;
use serde_json::{json, Value as Json};

const BASIC_AUTH: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";
const LOGIN_MODULE: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule";

fn client_trusting(ca: &Ca) -> reqwest::Client {
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn client_with_identity(ca: &Ca, identity_ca: &Ca) -> reqwest::Client {
    let (cert, key) = identity_ca.leaf(&["client"]);
    reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap())
        .identity(reqwest::Identity::from_pem(format!("{key}{cert}").as_bytes()).unwrap())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

// ----- an in-process worker with its own client ----------------------------------------------------------

/// Starts a worker whose listener is `scheme://127.0.0.1:<ephemeral>`, reached through `http` (with `auth`
/// when given), once `GET /health` answers it 200.
async fn start(
    dir: &Path,
    scheme: &str,
    extra: &[(&str, &str)],
    http: reqwest::Client,
    auth: Option<(&str, &str)>,
) -> TestWorker {
    let listeners = format!("{scheme}://127.0.0.1:0");
    let mut all = vec![("listeners", listeners.as_str())];
    all.extend_from_slice(extra);
    TestWorker::launch(dir, &all, Vec::new(), |url| {
        let api = Client::with_http(http, url);
        match auth {
            Some((user, password)) => api.basic_auth(user, password),
            None => api,
        }
    })
    .await
    .expect("the worker starts")
}

/// Starts an http worker with basic authentication whose credentials file holds one `user: password`
/// line, with `extra` settings; its client sends those credentials.
async fn start_with_credentials(
    dir: &Path,
    (user, password): (&str, &str),
    extra: &[(&str, &str)],
) -> TestWorker {
    let creds = dir.join("creds.properties");
    std::fs::write(&creds, format!("{user}: {password}\n")).unwrap();
    let c = creds.display().to_string();
    let mut settings = vec![
        ("rest.extension.classes", BASIC_AUTH),
        ("rest.basic.auth.credentials.file", c.as_str()),
    ];
    settings.extend_from_slice(extra);
    start(
        dir,
        "http",
        &settings,
        reqwest::Client::new(),
        Some((user, password)),
    )
    .await
}

async fn task_states(w: &TestWorker, name: &str) -> Json {
    w.get(&format!("/connectors/{name}/status")).await.1["tasks"].clone()
}

/// The keystore settings for inline PEM under `prefix`.
fn inline_keystore(prefix: &str, cert: &str, key: &str) -> Vec<(String, String)> {
    vec![
        (format!("{prefix}ssl.keystore.type"), "PEM".into()),
        (
            format!("{prefix}ssl.keystore.certificate.chain"),
            cert.into(),
        ),
        (format!("{prefix}ssl.keystore.key"), key.into()),
    ]
}

fn refs(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

// ----- HTTPS ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_succeeds_with_the_ca_and_fails_without_it() {
    let dir = tempdir();
    let ca = Ca::new("liteconnect test CA");
    let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"]);
    let settings = inline_keystore("listeners.https.", &cert, &key);
    let w = start(
        dir.path(),
        "https",
        &refs(&settings),
        client_trusting(&ca),
        None,
    )
    .await;

    let (status, root) = w.get("/").await;
    assert_eq!(status, 200);
    assert!(root["version"].is_string(), "{root}");
    assert_eq!(
        w.post(
            "/connectors",
            json!({"name": "s", "config": {"connector.class": "FileStreamSink", "topics": "t"}})
        )
        .await
        .0,
        201
    );
    assert_eq!(w.get("/connectors").await.1, json!(["s"]));

    // A client that does not trust the CA refuses the server.
    let stranger = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let e = stranger
        .get(format!("{}/", w.url))
        .send()
        .await
        .expect_err("an untrusted certificate");
    assert!(e.is_connect() || e.is_request(), "{e:?}");
    // A client trusting another CA refuses it too.
    let other = client_trusting(&Ca::new("another CA"));
    assert!(other.get(format!("{}/", w.url)).send().await.is_err());
    // Plain HTTP to the TLS port gets no answer.
    let plain = w.url.replace("https://", "http://");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    assert!(client.get(format!("{plain}/")).send().await.is_err());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_requires_a_certificate_signed_by_the_truststore() {
    let dir = tempdir();
    let ca = Ca::new("server CA");
    let clients_ca = Ca::new("clients CA");
    let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"]);
    // A keystore file holding the key and the chain, and a truststore file: the *.location forms, unprefixed.
    let keystore = dir.path().join("keystore.pem");
    std::fs::write(&keystore, format!("{key}{cert}")).unwrap();
    let truststore = dir.path().join("truststore.pem");
    std::fs::write(&truststore, clients_ca.pem()).unwrap();
    let (k, t) = (
        keystore.display().to_string(),
        truststore.display().to_string(),
    );
    let settings = [
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", k.as_str()),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", t.as_str()),
        ("ssl.client.auth", "required"),
    ];
    let w = start(
        dir.path(),
        "https",
        &settings,
        client_with_identity(&ca, &clients_ca),
        None,
    )
    .await;
    assert_eq!(w.get("/connectors").await, (200, json!([])));

    // No client certificate: the handshake is refused.
    let anonymous = client_trusting(&ca);
    assert!(anonymous
        .get(format!("{}/connectors", w.url))
        .send()
        .await
        .is_err());
    // A certificate from a CA the truststore does not hold: refused.
    let impostor = client_with_identity(&ca, &Ca::new("impostor CA"));
    assert!(impostor
        .get(format!("{}/connectors", w.url))
        .send()
        .await
        .is_err());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requested_client_auth_accepts_anonymous_clients_but_not_untrusted_certificates() {
    let dir = tempdir();
    let ca = Ca::new("server CA");
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    let mut settings = inline_keystore("listeners.https.", &cert, &key);
    settings.push((
        "listeners.https.ssl.truststore.certificates".into(),
        ca.pem(),
    ));
    settings.push(("listeners.https.ssl.client.auth".into(), "requested".into()));
    let w = start(
        dir.path(),
        "https",
        &refs(&settings),
        client_trusting(&ca),
        None,
    )
    .await;
    assert_eq!(w.get("/connectors").await.0, 200);
    let with_cert = Client::with_http(client_with_identity(&ca, &ca), &w.url);
    assert_eq!(with_cert.get("/connectors").await.unwrap().0, 200);
    let impostor = client_with_identity(&ca, &Ca::new("impostor CA"));
    assert!(impostor
        .get(format!("{}/connectors", w.url))
        .send()
        .await
        .is_err());
    w.stop().await;
}

// ----- basic authentication ------------------------------------------------------------------------------

fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_guards_every_endpoint() {
    let dir = tempdir();
    let creds = dir.path().join("credentials.properties");
    std::fs::write(
        &creds,
        "# Kafka's PropertyFileLoginModule format\nadmin: s3cret\nreader=read:only\n",
    )
    .unwrap();
    let jaas = dir.path().join("connect_jaas.conf");
    std::fs::write(
        &jaas,
        format!(
            "KafkaConnect {{\n  {LOGIN_MODULE} required\n  file=\"{}\";\n}};\n",
            creds.display()
        ),
    )
    .unwrap();
    let j = jaas.display().to_string();
    let settings = [
        ("rest.extension.classes", BASIC_AUTH),
        ("rest.basic.auth.jaas.config", j.as_str()),
    ];
    let w = start(
        dir.path(),
        "http",
        &settings,
        reqwest::Client::new(),
        Some(("admin", "s3cret")),
    )
    .await;

    let raw = w.api.anonymous();
    let paths = [
        (reqwest::Method::GET, "/"),
        (reqwest::Method::GET, "/health"),
        (reqwest::Method::GET, "/connectors"),
        (reqwest::Method::GET, "/connector-plugins"),
        (reqwest::Method::GET, "/admin/loggers"),
        (reqwest::Method::GET, "/connectors/nope/status"),
        (reqwest::Method::POST, "/connectors"),
    ];
    for (method, path) in &paths {
        for auth in [
            None,
            Some(basic("admin", "wrong")),
            Some(basic("nobody", "s3cret")),
            Some("Bearer x".to_string()),
        ] {
            let mut req = raw.request(method.clone(), path);
            if let Some(a) = &auth {
                req = req.header("Authorization", a);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), 401, "{method} {path} with {auth:?}");
            assert!(
                resp.headers()["www-authenticate"]
                    .to_str()
                    .unwrap()
                    .starts_with("Basic"),
                "{path}"
            );
            let body: Json = resp.json().await.unwrap();
            assert_eq!(
                body,
                json!({"error_code": 401, "message": "User cannot access the resource."})
            );
        }
    }
    // The right credentials, either user (a password may hold a colon).
    assert_eq!(w.get("/").await.0, 200);
    assert_eq!(w.get("/health").await.0, 200);
    assert_eq!(w.get("/connector-plugins").await.0, 200);
    assert_eq!(w.get("/admin/loggers").await.0, 200);
    assert_eq!(w.get("/connectors/nope/status").await.0, 404);
    assert_eq!(
        w.post(
            "/connectors",
            json!({"name": "a", "config": {"connector.class": "FileStreamSink", "topics": "t"}})
        )
        .await
        .0,
        201
    );
    let reader = Client::new(&w.url).basic_auth("reader", "read:only");
    assert_eq!(
        reader.get("/connectors").await.unwrap(),
        (200, json!(["a"]))
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_exempt_only_when_configured() {
    let dir = tempdir();
    let w = start_with_credentials(
        dir.path(),
        ("ops", "pw"),
        &[("rest.basic.auth.health.exempt", "true")],
    )
    .await;
    let raw = w.api.anonymous();
    assert_eq!(raw.get("/health").await.unwrap().0, 200);
    assert_eq!(raw.get("/connectors").await.unwrap().0, 401);
    assert_eq!(raw.get("/").await.unwrap().0, 401);
    assert_eq!(w.get("/connectors").await.0, 200);
    w.stop().await;
}

// ----- CORS and response headers -------------------------------------------------------------------------

/// `GET /connectors` through `api`, from `origin` when given.
async fn list_from(api: &Client, origin: Option<&str>) -> reqwest::Response {
    let mut req = api.request(reqwest::Method::GET, "/connectors");
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    req.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_preflights_are_answered_and_responses_carry_the_headers() {
    let dir = tempdir();
    let settings = [
        ("access.control.allow.origin", "http://ui.example.com"),
        ("access.control.allow.methods", "GET,POST,PUT,DELETE"),
    ];
    let w = start_with_credentials(dir.path(), ("ui", "pw"), &settings).await;
    let raw = w.api.anonymous();

    // A preflight carries no credentials; it is answered, not refused.
    let pre = raw
        .request(reqwest::Method::OPTIONS, "/connectors/x/config")
        .header("Origin", "http://ui.example.com")
        .header("Access-Control-Request-Method", "PUT")
        .header(
            "Access-Control-Request-Headers",
            "content-type,authorization",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), 200);
    let h = pre.headers();
    assert_eq!(h["access-control-allow-origin"], "http://ui.example.com");
    assert_eq!(h["access-control-allow-methods"], "GET,POST,PUT,DELETE");
    assert!(h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("Authorization"));
    assert!(h.contains_key("access-control-max-age"));

    // A method that is not allowed, or an origin that is not: no CORS headers.
    for (origin, method) in [
        ("http://ui.example.com", "PATCH"),
        ("http://evil.example.com", "GET"),
    ] {
        let pre = raw
            .request(reqwest::Method::OPTIONS, "/connectors")
            .header("Origin", origin)
            .header("Access-Control-Request-Method", method)
            .send()
            .await
            .unwrap();
        assert!(
            !pre.headers().contains_key("access-control-allow-origin"),
            "{origin} {method}"
        );
    }

    // Actual requests: the allowed origin is echoed, on successes and on refusals alike.
    let get = list_from(&w.api, Some("http://ui.example.com")).await;
    assert_eq!(get.status(), 200);
    let h = get.headers();
    assert_eq!(h["access-control-allow-origin"], "http://ui.example.com");
    assert_eq!(h["access-control-allow-credentials"], "true");
    let refused = list_from(&raw, Some("http://ui.example.com")).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["access-control-allow-origin"],
        "http://ui.example.com"
    );
    let other = list_from(&w.api, Some("http://evil.example.com")).await;
    assert!(!other.headers().contains_key("access-control-allow-origin"));
    let none = list_from(&w.api, None).await;
    assert!(!none.headers().contains_key("access-control-allow-origin"));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_header_rules_apply_to_every_response() {
    let dir = tempdir();
    let rules = r#"set X-Frame-Options: DENY, add X-Team: connect, add X-Team: platform, "set Cache-Control: no-cache, no-store", setDate Expires: 3600000, addDate X-Generated: 0"#;
    let w = start(
        dir.path(),
        "http",
        &[("response.http.headers.config", rules)],
        reqwest::Client::new(),
        None,
    )
    .await;
    for (path, expected) in [
        ("/connectors", 200),
        ("/connectors/missing", 404),
        ("/nowhere", 404),
    ] {
        let r = w
            .api
            .anonymous()
            .send(reqwest::Method::GET, path, None)
            .await
            .unwrap();
        let (status, h) = (r.status, r.headers);
        assert_eq!(status, expected, "{path}");
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        assert_eq!(
            h.get_all("x-team")
                .iter()
                .map(|v| v.to_str().unwrap())
                .collect::<Vec<_>>(),
            vec!["connect", "platform"]
        );
        assert_eq!(h["cache-control"], "no-cache, no-store");
        let expires = chrono::DateTime::parse_from_rfc2822(h["expires"].to_str().unwrap())
            .expect("an HTTP date");
        let ahead = expires.timestamp() - chrono::Utc::now().timestamp();
        assert!(
            (3500..=3700).contains(&ahead),
            "Expires is an hour ahead: {ahead}"
        );
        assert!(h["x-generated"].to_str().unwrap().ends_with(" GMT"));
    }
    w.stop().await;
}

// ----- config providers ----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_placeholders_are_resolved_for_tasks_and_shown_raw() {
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let output = dir.path().join("secret-out.txt");
    let secrets = dir.path().join("secrets.properties");
    std::fs::write(&secrets, format!("sink.file={}\n", output.display())).unwrap();
    let settings = FILE_CONFIG_PROVIDER;
    let w = start(dir.path(), "http", &settings, reqwest::Client::new(), None).await;
    append_lines(&input, ["one".to_string(), "two".to_string()]);
    w.create(file_source("src", &input, "t")).await;
    let placeholder = format!("${{file:{}:sink.file}}", secrets.display());
    let sink = json!({"name": "snk", "config": {"connector.class": "FileStreamSink", "tasks.max": "1", "topics": "t", "file": placeholder}});
    w.create(sink).await;
    wait_until("lines at the resolved path", || async {
        lines(&output) == ["one", "two"]
    })
    .await;

    assert_eq!(w.get("/connectors/snk/config").await.1["file"], placeholder);
    assert_eq!(
        w.get("/connectors/snk").await.1["config"]["file"],
        placeholder
    );
    let tasks = w.get("/connectors/snk/tasks").await.1;
    assert_eq!(tasks[0]["config"]["file"], placeholder, "{tasks}");
    assert!(!dir.path().join(&placeholder).exists());
    // Stored as given: the database holds the placeholder, never the value.
    w.stop().await;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("worker.db"))
        {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("secret-out.txt"),
                "{} holds the resolved value",
                path.display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unresolvable_placeholder_fails_the_task_with_a_trace() {
    let dir = tempdir();
    let secrets = dir.path().join("secrets.properties");
    std::fs::write(&secrets, "other=x\n").unwrap();
    let settings = [
        ("config.providers", "file"),
        ("config.providers.file.class", "FileConfigProvider"),
    ];
    let w = start(dir.path(), "http", &settings, reqwest::Client::new(), None).await;
    let placeholder = format!("${{file:{}:sink.file}}", secrets.display());
    let sink = json!({"name": "snk", "config": {"connector.class": "FileStreamSink", "topics": "t", "file": placeholder}});
    w.create(sink).await;
    wait_until("the task to fail", || async {
        task_states(&w, "snk").await[0]["state"] == "FAILED"
    })
    .await;
    let trace = task_states(&w, "snk").await[0]["trace"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        trace.starts_with("org.apache.kafka.common.config.ConfigException"),
        "{trace}"
    );
    assert!(
        trace.contains("sink.file") && trace.contains("configuration file"),
        "{trace}"
    );
    assert_eq!(
        w.get("/connectors/snk/status").await.1["connector"]["state"],
        "RUNNING"
    );

    // Once the secret exists, restarting the task resolves it.
    let output = dir.path().join("out.txt");
    std::fs::write(&secrets, format!("sink.file={}\n", output.display())).unwrap();
    assert_eq!(
        w.post("/connectors/snk/tasks/0/restart", json!({})).await.0,
        204
    );
    wait_until("the task to run", || async {
        task_states(&w, "snk").await[0]["state"] == "RUNNING"
    })
    .await;
    w.stop().await;
}

// ----- the binary: every listener, https admin listeners, env placeholders, bad settings ----------------

fn pem_property(pem: &str) -> String {
    // A properties value on one logical line, continued with backslashes, as Kafka's documentation shows.
    pem.trim().lines().collect::<Vec<_>>().join(" \\\n  ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listener_is_served_and_https_admin_listeners_work() {
    let dir = tempdir();
    let ca = Ca::new("listeners CA");
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    let (admin_cert, admin_key) = ca.leaf(&["127.0.0.1"]);
    let keystore = dir.path().join("admin-keystore.pem");
    std::fs::write(&keystore, format!("{admin_key}{admin_cert}")).unwrap();
    let props = format!(
        "listeners=http://127.0.0.1:0,https://127.0.0.1:0\n\
         admin.listeners=https://127.0.0.1:0\n\
         storage.file={db}\n\
         listeners.https.ssl.keystore.type=PEM\n\
         listeners.https.ssl.keystore.certificate.chain={cert}\n\
         listeners.https.ssl.keystore.key={key}\n\
         admin.listeners.https.ssl.keystore.type=PEM\n\
         admin.listeners.https.ssl.keystore.location={ks}\n",
        db = dir.path().join("bin.db").display(),
        cert = pem_property(&cert),
        key = pem_property(&key),
        ks = keystore.display(),
    );
    let bin = start_binary_with(dir.path(), &props, &[], 3);
    let find = |scheme: &str, nth: usize| {
        let url = bin
            .urls
            .iter()
            .filter(|u| u.starts_with(scheme))
            .nth(nth)
            .cloned()
            .expect("a listener");
        Client::with_http(client_trusting(&ca), url)
    };
    let (http, https) = (find("http://", 0), find("https://", 0));
    let admin = find("https://", 1);
    healthy(&http).await;
    let status = |api: &Client, path: &'static str| {
        let api = api.clone();
        async move { api.get(path).await.unwrap().0 }
    };
    assert_eq!(status(&https, "/connectors").await, 200);
    assert_eq!(status(&http, "/connectors").await, 200);
    // Admin endpoints live on the admin listener only.
    assert_eq!(status(&admin, "/admin/loggers").await, 200);
    assert_eq!(status(&admin, "/connectors").await, 404);
    assert_eq!(status(&https, "/admin/loggers").await, 404);
    assert_eq!(status(&http, "/admin/loggers").await, 404);
    bin.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_placeholders_are_resolved_from_the_workers_environment() {
    let dir = tempdir();
    let input = dir.path().join("in.txt");
    let output = dir.path().join("env-out.txt");
    append_lines(&input, ["alpha".to_string()]);
    let props = format!(
        "listeners=http://127.0.0.1:0\nstorage.file={}\noffset.flush.interval.ms=200\n\
         key.converter=org.apache.kafka.connect.storage.StringConverter\n\
         value.converter=org.apache.kafka.connect.storage.StringConverter\n\
         config.providers=env\n\
         config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
         config.providers.env.param.allowlist.pattern=^LITECONNECT_TEST_\n",
        dir.path().join("bin.db").display()
    );
    let out = output.display().to_string();
    let bin = start_binary_with(
        dir.path(),
        &props,
        &[
            ("LITECONNECT_TEST_SINK_FILE", out.as_str()),
            ("NOT_ALLOWED", "/tmp/x"),
        ],
        1,
    );
    let api = bin.api();
    healthy(&api).await;
    let post = |body: Json| {
        let api = api.clone();
        async move { api.post("/connectors", &body).await.unwrap().0 }
    };
    assert_eq!(post(file_source("src", &input, "t")).await, 201);
    let sink = json!({"name": "snk", "config": {"connector.class": "FileStreamSink", "topics": "t", "file": "${env:LITECONNECT_TEST_SINK_FILE}"}});
    assert_eq!(post(sink).await, 201);
    wait_until("the line at the path from the environment", || async {
        lines(&output) == ["alpha"]
    })
    .await;
    let config = api.get("/connectors/snk/config").await.unwrap().1;
    assert_eq!(config["file"], "${env:LITECONNECT_TEST_SINK_FILE}");
    let tasks = api.get("/connectors/snk/tasks").await.unwrap().1;
    assert_eq!(
        tasks[0]["config"]["file"],
        "${env:LITECONNECT_TEST_SINK_FILE}"
    );

    // A variable outside allowlist.pattern is not read.
    let blocked = json!({"name": "blocked", "config": {"connector.class": "FileStreamSink", "topics": "t", "file": "${env:NOT_ALLOWED}"}});
    assert_eq!(post(blocked).await, 201);
    wait_until("the blocked task to fail", || async {
        let s = api.get("/connectors/blocked/status").await.unwrap().1;
        s["tasks"][0]["state"] == "FAILED"
            && s["tasks"][0]["trace"]
                .as_str()
                .is_some_and(|t| t.contains("allowlist.pattern"))
    })
    .await;
    bin.kill();
}

#[test]
fn bad_security_settings_stop_the_binary_before_it_binds() {
    let dir = tempdir();
    for (props, expected) in [
        ("listeners=https://127.0.0.1:0\n", "ssl.keystore.location"),
        ("listeners=https://127.0.0.1:0\nssl.keystore.type=JKS\nssl.keystore.location=/x.jks\n", "PEM"),
        ("rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension\n", "rest.basic.auth"),
        ("response.http.headers.config=sett X-A: 1\n", "response.http.headers.config"),
        ("config.providers=vault\nconfig.providers.vault.class=com.example.Vault\n", "config.providers.vault.class"),
    ] {
        let path = dir.path().join("worker.properties");
        std::fs::write(&path, format!("storage.file={}\n{props}", dir.path().join("x.db").display())).unwrap();
        let (code, _, stderr) = run_binary(dir.path(), &[path.to_str().unwrap()]);
        assert_eq!(code, 2, "{props}: {stderr}");
        assert!(stderr.contains(expected), "{props}: {stderr}");
        assert!(!stderr.contains("listening on"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_config_itself_may_use_providers() {
    let dir = tempdir();
    let creds = dir.path().join("creds.properties");
    std::fs::write(&creds, "ops: pw\n").unwrap();
    let props = format!(
        "listeners=http://127.0.0.1:0\nstorage.file={}\n\
         config.providers=env\n\
         config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
         rest.extension.classes={BASIC_AUTH}\n\
         rest.basic.auth.credentials.file=${{env:LITECONNECT_TEST_CREDENTIALS}}\n\
         rest.basic.auth.health.exempt=true\n",
        dir.path().join("bin.db").display()
    );
    let c = creds.display().to_string();
    let bin = start_binary_with(
        dir.path(),
        &props,
        &[("LITECONNECT_TEST_CREDENTIALS", c.as_str())],
        1,
    );
    let api = bin.api();
    healthy(&api).await;
    assert_eq!(api.get("/connectors").await.unwrap().0, 401);
    let ops = api.basic_auth("ops", "pw");
    assert_eq!(ops.get("/connectors").await.unwrap().0, 200);
    bin.kill();
}
