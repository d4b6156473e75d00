//! Edges of the REST API: connector names no path can address, `HEAD`, non-JSON bodies, the request and
//! lifecycle log (and quieting it through `/admin/loggers`), and the commit `GET /` reports.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::common::*;

fn sink_config(dir: &Path) -> Json {
    json!({"connector.class": "FileStreamSink", "tasks.max": "1",
           "file": dir.join("sink.txt").display().to_string(), "topics": "t"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dot_segments_and_control_characters_are_refused_as_names() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let config = sink_config(dir.path());
    for name in [".", "..", "bell\u{7}", "new\nline", "nel\u{85}in"] {
        let (status, body) = w
            .post("/connectors", json!({"name": name, "config": config}))
            .await;
        assert_eq!(status, 400, "POST {name:?}: {body}");
        assert_eq!(body["error_code"], 400, "{body}");
        if name.starts_with('.') {
            // HTTP clients resolve `%2E` segments away: no `/connectors/{name}/config` reaches them.
            continue;
        }
        let (status, body) = w
            .put(&format!("/connectors/{}/config", enc(name)), config.clone())
            .await;
        assert_eq!(status, 400, "PUT {name:?}: {body}");
    }
    let (_, body) = w
        .post(
            "/connectors",
            json!({"name": "bell\u{7}", "config": config}),
        )
        .await;
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("for configuration name") && message.ends_with("ASCII chars: 7"),
        "{message}"
    );
    let (_, body) = w
        .post("/connectors", json!({"name": "..", "config": config}))
        .await;
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("'..'"),
        "{body}"
    );
    assert_eq!(
        w.get("/connectors").await.1,
        json!([]),
        "nothing was created"
    );
    // Dots within a name are fine, and the name is reachable afterwards.
    let (status, body) = w
        .post("/connectors", json!({"name": "...", "config": config}))
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(w.get("/connectors/%2E%2E%2E").await.0, 200);
    w.stop().await;
}

#[test]
fn connector_files_with_unaddressable_names_exit_like_other_invalid_files() {
    let dir = tempdir();
    let props = dir.path().join("worker.properties");
    std::fs::write(
        &props,
        format!(
            "listeners=http://127.0.0.1:0\nstorage.file={}\n",
            dir.path().join("bin.db").display()
        ),
    )
    .unwrap();
    for (file, text) in [
        ("dots.properties", "name=..\nconnector.class=FileStreamSink\ntopics=t\n".to_string()),
        (
            "bell.json",
            json!({"name": "bell\u{7}", "config": {"connector.class": "FileStreamSink", "topics": "t"}})
                .to_string(),
        ),
    ] {
        let path = dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        let (code, _, stderr) = run_binary(
            dir.path(),
            &[props.to_str().unwrap(), path.to_str().unwrap()],
        );
        assert_eq!(code, 3, "{file}: {stderr}");
        assert!(stderr.contains(file), "{file}: {stderr}");
        assert!(stderr.contains("for configuration name"), "{file}: {stderr}");
    }
}

/// Sends raw HTTP/1.1 and returns the whole answer, read to the end of the connection.
fn raw_http(url: &str, request: &str) -> String {
    let addr = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_is_answered_wherever_get_is() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let url = w.url.clone();
    let get = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            raw_http(
                &url,
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            )
        }
    });
    let head = tokio::task::spawn_blocking(move || {
        raw_http(
            &url,
            "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
    });
    let (get, head) = (get.await.unwrap(), head.await.unwrap());
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (head_headers, head_body) = head.split_once("\r\n\r\n").unwrap();
    assert_eq!(head_body, "", "HEAD has no body");
    let (_, get_body) = get.split_once("\r\n\r\n").unwrap();
    assert!(
        head_headers
            .to_ascii_lowercase()
            .contains(&format!("content-length: {}", get_body.len())),
        "HEAD announces the length of GET's body: {head_headers} / {get_body}"
    );
    for path in [
        "/connectors",
        "/connector-plugins",
        "/health",
        "/admin/loggers",
    ] {
        let r = w
            .client
            .head(format!("{}{path}", w.url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "HEAD {path}");
    }
    let r = w
        .client
        .head(format!("{}/connectors/x", w.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "HEAD of an unknown connector is GET's 404");
    let r = w
        .client
        .head(format!("{}/connectors/x/pause", w.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405, "no HEAD where there is no GET");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_are_not_json_are_refused_with_415() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let send = |content_type: Option<&'static str>, name: &str| {
        let body = json!({"name": name, "config": sink_config(dir.path())}).to_string();
        let mut req = w.client.post(format!("{}/connectors", w.url)).body(body);
        if let Some(t) = content_type {
            req = req.header("Content-Type", t);
        }
        async move {
            let r = req.send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    for t in ["text/plain", "application/x-www-form-urlencoded"] {
        let (status, body) = send(Some(t), "refused").await;
        assert_eq!(status, 415, "{t}: {body}");
        assert_eq!(
            serde_json::from_str::<Json>(&body).unwrap(),
            json!({"error_code": 415, "message": "HTTP 415 Unsupported Media Type"})
        );
    }
    assert_eq!(send(None, "no-type").await.0, 201);
    assert_eq!(
        send(Some("application/json; charset=utf-8"), "charset")
            .await
            .0,
        201
    );
    let r = w
        .client
        .put(format!("{}/admin/loggers/root", w.url))
        .header("Content-Type", "text/plain")
        .body(r#"{"level":"INFO"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let r = w
        .client
        .post(format!("{}/no/such/path", w.url))
        .header("Content-Type", "text/plain")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "an unknown path stays 404");
    let names = w.get("/connectors").await.1;
    assert_eq!(names.as_array().map(Vec::len), Some(2), "{names}");
    w.stop().await;
}

/// The real binary with every line of its stderr kept.
struct LoggedBinary {
    child: Child,
    url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl LoggedBinary {
    fn start(dir: &Path) -> LoggedBinary {
        let props = dir.join("worker.properties");
        std::fs::write(
            &props,
            format!(
                "listeners=http://127.0.0.1:0\nstorage.file={}\n",
                dir.join("bin.db").display()
            ),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_liteconnect"))
            .current_dir(dir)
            .arg(&props)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn liteconnect");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut bin = LoggedBinary {
            child,
            url: String::new(),
            log,
        };
        let line = bin.wait_for_line("the listening address", |l| l.contains("listening on "));
        bin.url = line
            .split("listening on ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_default()
            .to_string();
        bin
    }

    /// Waits (up to [`DEADLINE`]) for a line matching `matches` and returns it.
    fn wait_for_line(&self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(l) = self.log.lock().unwrap().iter().find(|l| matches(l)) {
                return l.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no log line for {what}; the log:\n{}",
                self.log.lock().unwrap().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn lines_with(&self, text: &str) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter().filter(|l| l.contains(text)).cloned().collect()
    }
}

impl Drop for LoggedBinary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_lifecycle_changes_are_logged_and_the_request_log_can_be_quieted() {
    let dir = tempdir();
    let bin = LoggedBinary::start(dir.path());
    let client = reqwest::Client::new();
    let url = bin.url.clone();
    let status = |r: reqwest::Response| r.status().as_u16();
    let r = client
        .get(format!("{url}/connectors?expand=status"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 200);
    let line = bin.wait_for_line("GET /connectors", |l| {
        l.contains("GET /connectors?expand=status")
    });
    assert!(
        line.contains(" INFO ") && line.contains("\" 200 "),
        "{line}"
    );

    let body = json!({"name": "logged", "config": sink_config(dir.path())});
    let r = client
        .post(format!("{url}/connectors"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 201);
    bin.wait_for_line("the creation", |l| {
        l.contains("Connector created.") && l.contains("logged")
    });
    bin.wait_for_line("the POST", |l| l.contains("\"POST /connectors\" 201"));
    let r = client
        .put(format!("{url}/connectors/logged/pause"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 202);
    bin.wait_for_line("the pause", |l| {
        l.contains("Connector paused.") && l.contains("logged")
    });
    let r = client
        .get(format!("{url}/connectors/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 404);
    bin.wait_for_line("the 404", |l| l.contains("\"GET /connectors/nope\" 404"));

    let logger = "org.apache.kafka.connect.runtime.rest.RestServer";
    let r = client
        .put(format!("{url}/admin/loggers/{logger}"))
        .json(&json!({"level": "WARN"}))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 200);
    let r = client
        .get(format!("{url}/connectors?quiet=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 200);
    let r = client
        .put(format!("{url}/connectors/logged/resume"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 202);
    // The lifecycle log is another logger: it goes on, and it comes after the quiet request's line would.
    bin.wait_for_line("the resume", |l| {
        l.contains("Connector resumed.") && l.contains("logged")
    });
    assert_eq!(bin.lines_with("quiet=1"), Vec::<String>::new());
    assert_eq!(bin.lines_with("/resume\""), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_reports_the_commit_it_was_built_from() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (status, body) = w.get("/").await;
    assert_eq!(status, 200);
    let commit = body["commit"].as_str().unwrap_or_default().to_string();
    let manifest = env!("CARGO_MANIFEST_DIR");
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(manifest)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(head) if Path::new(manifest).join(".git").exists() => {
            assert_eq!(commit.len(), 40, "{commit}");
            assert!(commit.bytes().all(|b| b.is_ascii_hexdigit()), "{commit}");
            assert_eq!(commit, head, "the commit is the checkout's HEAD");
        }
        _ => {
            println!("not comparing with `git rev-parse HEAD`: {manifest} is not a git checkout, or git is not installed");
            assert!(!commit.is_empty(), "{body}");
        }
    }
    w.stop().await;
}
