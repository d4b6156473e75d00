//! The console over plain HTTP: every file of `ui/` served as it is, with its media type, `ETag`, 304,
//! gzip and `Cache-Control`; the size budget; the redirect of a browser's `GET /`; basic auth.

use std::io::Read;
use std::path::{Path, PathBuf};

use reqwest::header::{HeaderMap, ACCEPT, ACCEPT_ENCODING, IF_NONE_MATCH};
use reqwest::{Client as Http, StatusCode};

use crate::common::*;

const BASIC_AUTH: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";

/// The console's files on disk, as paths under `ui/`.
fn ui_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("ui/") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).expect("under ui/");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

fn ui_bytes(file: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("ui").join(file)).expect("read")
}

fn expected_type(file: &str) -> &'static str {
    match file.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        other => panic!("no media type expected for {other:?}"),
    }
}

/// A client that neither follows redirects nor decompresses, to see the answers as they are.
fn raw() -> Http {
    Http::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name)
        .unwrap_or_else(|| panic!("no {name} header in {h:?}"))
        .to_str()
        .unwrap()
}

/// `GET url` with one request header.
async fn get_with(
    http: &Http,
    url: &str,
    name: reqwest::header::HeaderName,
    value: &str,
) -> reqwest::Response {
    http.get(url).header(name, value).send().await.unwrap()
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_is_served_with_its_type_etag_and_gzip() {
    let f = Fixture::start().await;
    let http = raw();
    let files = ui_files();
    assert!(files.contains(&"index.html".to_string()), "{files:?}");
    let total: usize = files.iter().map(|f| ui_bytes(f).len()).sum();
    assert!(
        total <= 300 * 1024,
        "the console's files take {total} bytes"
    );
    for file in &files {
        let url = format!("{}/ui/{file}", f.w.url);
        let plain = http.get(&url).send().await.unwrap();
        assert_eq!(plain.status(), StatusCode::OK, "{file}");
        let h = plain.headers().clone();
        assert_eq!(header(&h, "content-type"), expected_type(file), "{file}");
        assert_eq!(header(&h, "cache-control"), "no-cache", "{file}");
        assert!(h.get("content-encoding").is_none(), "{file}: {h:?}");
        let etag = header(&h, "etag").to_string();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        assert_eq!(
            plain.bytes().await.unwrap().to_vec(),
            ui_bytes(file),
            "{file}"
        );

        let again = get_with(&http, &url, IF_NONE_MATCH, &etag).await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{file}");
        assert_eq!(header(again.headers(), "etag"), etag);
        assert!(again.bytes().await.unwrap().is_empty());
        let stale = get_with(&http, &url, IF_NONE_MATCH, "\"0000000000000000\"").await;
        assert_eq!(stale.status(), StatusCode::OK, "{file}");

        let zipped = get_with(&http, &url, ACCEPT_ENCODING, "gzip, deflate, br").await;
        assert_eq!(zipped.status(), StatusCode::OK);
        assert_eq!(header(zipped.headers(), "content-encoding"), "gzip");
        assert_eq!(header(zipped.headers(), "etag"), etag);
        assert_eq!(
            header(zipped.headers(), "content-type"),
            expected_type(file)
        );
        let body = zipped.bytes().await.unwrap();
        assert_eq!(gunzip(&body), ui_bytes(file), "{file} gunzipped");
    }
    // The index answers /ui/; /ui sends the browser there (relative links need the slash).
    let index = http.get(format!("{}/ui/", f.w.url)).send().await.unwrap();
    assert_eq!(index.status(), StatusCode::OK);
    assert_eq!(
        index.bytes().await.unwrap().to_vec(),
        ui_bytes("index.html")
    );
    let send = |method: reqwest::Method, path: &str| {
        let request = http.request(method, format!("{}{path}", f.w.url)).send();
        async move { request.await.unwrap() }
    };
    let bare = send(reqwest::Method::GET, "/ui").await;
    assert_eq!(bare.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(header(bare.headers(), "location"), "ui/");
    let head = send(reqwest::Method::HEAD, "/ui/app.css").await;
    assert_eq!(head.status(), StatusCode::OK);
    let length: usize = header(head.headers(), "content-length").parse().unwrap();
    assert_eq!(length, ui_bytes("app.css").len());
    let missing = send(reqwest::Method::GET, "/ui/nope.js").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let post = send(reqwest::Method::POST, "/ui/").await;
    assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[test]
fn no_file_asks_for_anything_outside_the_device() {
    for file in ui_files() {
        let text = String::from_utf8(ui_bytes(&file)).expect("text");
        for (i, line) in text.lines().enumerate() {
            let outside = ["http://", "https://", "//cdn", "@import", "fonts.g"]
                .iter()
                .any(|p| line.replace("http://www.w3.org/2000/svg", "").contains(p));
            assert!(!outside, "{file}:{}: {line}", i + 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_redirects_browsers_only() {
    let f = Fixture::start().await;
    let http = raw();
    let page = get_with(
        &http,
        &f.w.url,
        ACCEPT,
        "text/html,application/xhtml+xml,*/*;q=0.8",
    )
    .await;
    assert_eq!(page.status(), StatusCode::FOUND);
    assert_eq!(header(page.headers(), "location"), "ui/");
    for accept in [None, Some("application/json"), Some("*/*")] {
        let mut req = http.get(&f.w.url);
        if let Some(a) = accept {
            req = req.header(ACCEPT, a);
        }
        let answer = req.send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{accept:?}");
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(body["version"], env!("CARGO_PKG_VERSION"), "{accept:?}");
    }
}

/// A credentials file of one user for the basic auth extension; its path.
fn credentials_file(dir: &Path, user: &str, password: &str) -> String {
    let path = dir.join("console-users.properties");
    std::fs::write(&path, format!("{user}: {password}\n")).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_guards_the_console() {
    let dir = tempdir();
    let credentials = credentials_file(dir.path(), "admin", "s3cret");
    let settings = [
        ("rest.extension.classes", BASIC_AUTH),
        ("rest.basic.auth.credentials.file", credentials.as_str()),
    ];
    let w = TestWorker::launch(dir.path(), &settings, Vec::new(), |url| {
        Client::new(url).basic_auth("admin", "s3cret")
    })
    .await
    .expect("the worker starts");
    let http = raw();
    let as_user = |path: &str, password: Option<&str>| {
        let mut request = http.get(format!("{}{path}", w.url));
        if let Some(p) = password {
            request = request.basic_auth("admin", Some(p));
        }
        async move { request.send().await.unwrap() }
    };
    for path in ["/ui/", "/ui/js/app.js", "/ui/nope"] {
        let denied = as_user(path, None).await;
        assert_eq!(denied.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert!(denied.headers().contains_key("www-authenticate"));
        let wrong = as_user(path, Some("wrong")).await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    let allowed = as_user("/ui/", Some("s3cret")).await;
    assert_eq!(allowed.status(), StatusCode::OK);
    assert_eq!(
        allowed.bytes().await.unwrap().to_vec(),
        ui_bytes("index.html")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_reads_add_timestamp_and_headers_only_when_asked() {
    let f = Fixture::start().await;
    let http = raw();
    let produced = http
        .post(format!("{}/topics/meta", f.w.url))
        .header("content-type", "application/vnd.kafka.binary.v2+json")
        .body(r#"{"records": [{"key": "aw==", "value": "dg=="}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(produced.status(), StatusCode::OK);
    let read = |query: &'static str| {
        let url = format!(
            "{}/topics/meta/partitions/0/records?offset=0&timeout=0{query}",
            f.w.url
        );
        let request = http
            .get(url)
            .header(ACCEPT, "application/vnd.kafka.binary.v2+json");
        async move {
            request
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    let plain = read("").await;
    assert_eq!(
        plain,
        serde_json::json!([{"topic": "meta", "key": "aw==", "value": "dg==", "partition": 0, "offset": 0}])
    );
    let with = read("&metadata=true").await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let stamp = with[0]["timestamp"].as_i64().expect("a timestamp");
    assert!((now - 60_000..=now).contains(&stamp), "{with}");
    assert_eq!(with[0]["headers"], serde_json::json!([]));
    assert_eq!(with[0]["value"], "dg==");
}
