//! The web console: static files compiled into the binary and served under `/ui` by the REST listener,
//! behind the same TLS and basic authentication as the API.
//!
//! Each file is listed once in [`FILES`]. Its `ETag` is a hash of its bytes and its gzip form is made the
//! first time a client asks for it; both are kept for the life of the process. Every answer carries
//! `Cache-Control: no-cache`, so a browser revalidates with `If-None-Match` and gets a 304 while the
//! binary is the same.

use std::io::Write;
use std::sync::OnceLock;

use warp::http::{HeaderMap, HeaderValue, Method, StatusCode};
use warp::reply::Response;

/// One embedded file.
struct Asset {
    /// Its path under `/ui/`.
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $content_type:expr) => {
        Asset {
            path: $path,
            content_type: $content_type,
            bytes: include_bytes!(concat!("../../ui/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// The console's files; `index.html` is also what `/ui` and `/ui/` answer.
const FILES: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("js/app.js", JS),
    asset!("js/api.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/chart.js", JS),
    asset!("js/connectors.js", JS),
    asset!("js/connector.js", JS),
    asset!("js/create.js", JS),
    asset!("js/tryit.js", JS),
    asset!("js/airbyte.js", JS),
    asset!("js/topics.js", JS),
    asset!("js/schemas.js", JS),
    asset!("js/worker.js", JS),
];

/// What is computed once per file: its `ETag` and, when first asked for, its gzip form.
struct Prepared {
    etag: String,
    gzip: OnceLock<Vec<u8>>,
}

fn prepared() -> &'static [Prepared] {
    static PREPARED: OnceLock<Vec<Prepared>> = OnceLock::new();
    PREPARED.get_or_init(|| {
        FILES
            .iter()
            .map(|f| Prepared {
                etag: format!("\"{:016x}\"", fnv1a(f.bytes)),
                gzip: OnceLock::new(),
            })
            .collect()
    })
}

/// FNV-1a, 64 bits: stable across builds and platforms, enough to tell two versions of a file apart.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

/// Whether a path is the console's: `/ui` or anything below `/ui/`.
pub(super) fn is_ui(path: &str) -> bool {
    path == "/ui" || path.starts_with("/ui/")
}

/// The comma-separated items of every `name` header, each without its parameters (after `;`), and
/// the parameters themselves.
fn items<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = (&'a str, &'a str)> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            let (value, params) = item.split_once(';').unwrap_or((item, ""));
            (value.trim(), params)
        })
}

/// Whether `Accept-Encoding` admits gzip (a `q=0` refuses it).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    items(headers, "accept-encoding").any(|(name, params)| {
        let refused = params.split(';').map(str::trim).any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
    })
}

/// Whether `If-None-Match` names this `ETag` (or `*`); a weak validator matches too.
fn matches(headers: &HeaderMap, etag: &str) -> bool {
    items(headers, "if-none-match")
        .map(|(t, _)| t.trim_start_matches("W/"))
        .any(|t| t == etag || t == "*")
}

fn plain(status: StatusCode, content_type: &'static str, body: &'static str) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static(content_type));
    response
}

/// Answers a request under `/ui`: `GET` and `HEAD` of a listed file (`/ui/` is the index, `/ui` is
/// redirected there), 404 for any other path, 405 for any other method.
pub(super) fn serve(method: &Method, path: &str, headers: &HeaderMap) -> Response {
    if *method != Method::GET && *method != Method::HEAD {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "application/json",
            r#"{"error_code":405,"message":"HTTP 405 Method Not Allowed"}"#,
        );
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    if path == "/ui" {
        // The files refer to each other relatively: the index must be read as `/ui/`.
        let mut response = Response::new("".into());
        *response.status_mut() = StatusCode::MOVED_PERMANENTLY;
        response
            .headers_mut()
            .insert("location", HeaderValue::from_static("ui/"));
        return response;
    }
    let name = path
        .strip_prefix("/ui")
        .unwrap_or_default()
        .trim_start_matches('/');
    let name = if name.is_empty() { "index.html" } else { name };
    let Some(index) = FILES.iter().position(|f| f.path == name) else {
        return plain(
            StatusCode::NOT_FOUND,
            "application/json",
            r#"{"error_code":404,"message":"HTTP 404 Not Found"}"#,
        );
    };
    let (file, prepared) = (&FILES[index], &prepared()[index]);
    let mut response = Response::new("".into());
    let h = response.headers_mut();
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("vary", HeaderValue::from_static("Accept-Encoding"));
    if let Ok(etag) = HeaderValue::from_str(&prepared.etag) {
        h.insert("etag", etag);
    }
    if matches(headers, &prepared.etag) {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return response;
    }
    h.insert("content-type", HeaderValue::from_static(file.content_type));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    let body: &'static [u8] = if accepts_gzip(headers) {
        h.insert("content-encoding", HeaderValue::from_static("gzip"));
        prepared.gzip.get_or_init(|| gzip(file.bytes))
    } else {
        file.bytes
    };
    h.insert("content-length", HeaderValue::from(body.len()));
    if *method == Method::GET {
        *response.body_mut() = bytes::Bytes::from_static(body).into();
    }
    response
}

/// Whether a `GET /` comes from a browser navigating (its `Accept` names `text/html`), which is sent to
/// the console instead of the worker's JSON.
pub(super) fn wants_html(headers: &HeaderMap) -> bool {
    items(headers, "accept").any(|(t, _)| t.eq_ignore_ascii_case("text/html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    warp::http::HeaderName::from_static(k),
                    HeaderValue::from_static(v),
                )
            })
            .collect()
    }

    #[test]
    fn gzip_is_chosen_unless_refused() {
        assert!(accepts_gzip(&headers(&[(
            "accept-encoding",
            "gzip, deflate, br"
        )])));
        assert!(accepts_gzip(&headers(&[("accept-encoding", "*")])));
        assert!(!accepts_gzip(&headers(&[("accept-encoding", "gzip;q=0")])));
        assert!(!accepts_gzip(&headers(&[("accept-encoding", "identity")])));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn etags_match_strong_weak_and_lists() {
        let etag = "\"00ff\"";
        assert!(matches(&headers(&[("if-none-match", "\"00ff\"")]), etag));
        assert!(matches(&headers(&[("if-none-match", "W/\"00ff\"")]), etag));
        assert!(matches(
            &headers(&[("if-none-match", "\"a\", \"00ff\"")]),
            etag
        ));
        assert!(!matches(&headers(&[("if-none-match", "\"a\"")]), etag));
    }

    #[test]
    fn html_is_wanted_only_when_named() {
        assert!(wants_html(&headers(&[(
            "accept",
            "text/html,application/xhtml+xml,*/*;q=0.8"
        )])));
        assert!(!wants_html(&headers(&[("accept", "application/json")])));
        assert!(!wants_html(&headers(&[("accept", "*/*")])));
    }

    #[test]
    fn every_file_is_served_and_gzip_round_trips() {
        use std::io::Read;
        for f in FILES {
            let r = serve(
                &Method::GET,
                &format!("/ui/{}", f.path),
                &headers(&[("accept-encoding", "gzip")]),
            );
            assert_eq!(r.status(), StatusCode::OK, "{}", f.path);
            let body = prepared()[FILES.iter().position(|g| g.path == f.path).unwrap()]
                .gzip
                .get()
                .unwrap();
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, f.bytes, "{}", f.path);
        }
        let total: usize = FILES.iter().map(|f| f.bytes.len()).sum();
        assert!(total <= 300 * 1024, "{total} bytes");
    }
}
