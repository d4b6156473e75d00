//! The REST API: Kafka Connect's paths, JSON shapes and status codes.
//!
//! One warp filter hands every request to `route`, which matches the path by hand. Routing by hand keeps
//! three things exact that matter for compatibility: path segments are percent-decoded (connector names
//! may contain `/`, `?`, `%`…), an unknown path is a 404 and a known path with the wrong method a 405,
//! both with Kafka's `{"error_code", "message"}` body. `HEAD` is answered wherever `GET` is, without the
//! body; a body sent with a `Content-Type` other than JSON is answered 415, as JAX-RS does. Every request
//! is logged at INFO on [`REQUEST_LOG_TARGET`] (Kafka's logger `org.apache.kafka.connect.runtime.rest.RestServer`).

mod connectors;
mod loggers;
mod plugins;
mod registry;
mod schemas;
pub(crate) mod topics;
mod tryout;
#[cfg(feature = "console")]
mod ui;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use futures::StreamExt;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Serialize;
use serde_json::{json, Value as Json};
use warp::http::{HeaderMap, HeaderValue, Method, StatusCode};
use warp::reply::Response;
use warp::Filter;

use crate::error::ConnectError;
use crate::herder::Herder;
use crate::logging::REQUEST_LOG_TARGET;
use crate::security::Security;

/// What the REST handlers share.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// The control plane.
    pub herder: Arc<Herder>,
    /// Whether `/admin` endpoints are served on this listener.
    pub admin: bool,
    /// Whether other endpoints are served on this listener (an admin-only listener has false).
    pub public: bool,
    /// Whether this listener serves the embedded Schema Registry's API instead of Kafka Connect's
    /// (`schema.registry.listeners`).
    pub registry: bool,
}

/// A reply before it becomes an HTTP response.
#[derive(Debug)]
pub(crate) struct Reply {
    status: u16,
    body: Option<Json>,
    location: Option<String>,
    /// The body's media type when not `application/json`.
    content_type: Option<&'static str>,
    /// The body is a JSON string to be sent as it is, not as JSON (its media type in `content_type`).
    raw: bool,
    /// `Retry-After` in seconds, on a 503 the client should try again.
    retry_after: Option<u16>,
}

impl Reply {
    pub(crate) fn json<T: Serialize>(status: u16, body: &T) -> Reply {
        Reply {
            status,
            body: Some(serde_json::to_value(body).unwrap_or(Json::Null)),
            location: None,
            content_type: None,
            raw: false,
            retry_after: None,
        }
    }
    /// A JSON reply serialized straight into its text, without a JSON tree in between (for answers
    /// nothing reads before they are sent).
    pub(crate) fn json_text<T: Serialize>(status: u16, body: &T) -> Reply {
        match serde_json::to_string(body) {
            Ok(text) => Reply::text(status, "application/json", text),
            Err(_) => Reply::json(status, &Json::Null),
        }
    }
    pub(crate) fn empty(status: u16) -> Reply {
        Reply {
            status,
            body: None,
            location: None,
            content_type: None,
            raw: false,
            retry_after: None,
        }
    }
    pub(crate) fn text(status: u16, content_type: &'static str, body: String) -> Reply {
        Reply {
            body: Some(Json::String(body)),
            raw: true,
            ..Reply::empty(status).with_content_type(content_type)
        }
    }
    pub(crate) fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::json(
            status,
            &json!({"error_code": status, "message": message.into()}),
        )
    }
    pub(crate) fn with_location(mut self, location: String) -> Reply {
        self.location = Some(location);
        self
    }
    pub(crate) fn with_retry_after(mut self, seconds: u16) -> Reply {
        self.retry_after = Some(seconds);
        self
    }
    pub(crate) fn with_content_type(mut self, content_type: &'static str) -> Reply {
        self.content_type = Some(content_type);
        self
    }
}

impl From<ConnectError> for Reply {
    fn from(e: ConnectError) -> Reply {
        Reply::error(e.status(), e.to_string())
    }
}

pub(crate) type Result<T = Reply> = std::result::Result<T, Reply>;

/// Characters percent-encoded in a `Location` header: everything but unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `/connectors/<name>` with the name percent-encoded, so any name round-trips.
pub(crate) fn connector_location(name: &str) -> String {
    format!("/connectors/{}", utf8_percent_encode(name, SEGMENT))
}

/// A request body, and whether its `Content-Type` lets it be read as JSON.
#[derive(Debug, Clone)]
pub(crate) struct Body {
    bytes: Bytes,
    json: bool,
}

impl Body {
    /// A body sent as JSON (or with no `Content-Type`).
    pub(crate) fn json(bytes: Bytes) -> Body {
        Body { bytes, json: true }
    }
}

/// Whether a request's `Content-Type` is one a JSON resource consumes, as JAX-RS decides it: none at all,
/// `application/json` with any parameters (`charset=utf-8`), or a wildcard that covers it.
fn json_content_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(warp::http::header::CONTENT_TYPE) else {
        return true;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    ["application/json", "application/*", "*/*"]
        .iter()
        .any(|t| essence.eq_ignore_ascii_case(t))
}

/// Parses a JSON body: 415 when its `Content-Type` is not JSON, 400 with what is wrong otherwise.
pub(crate) fn parse_body<T: serde::de::DeserializeOwned>(body: &Body) -> Result<T> {
    if !body.json {
        return Err(Reply::error(415, "HTTP 415 Unsupported Media Type"));
    }
    let body = &body.bytes;
    if body.is_empty() {
        return Err(Reply::error(
            400,
            "Request body is missing; a JSON body is required.",
        ));
    }
    let text = std::str::from_utf8(body)
        .map_err(|e| Reply::error(400, format!("Request body is not valid UTF-8: {e}")))?;
    serde_json::from_str(text).map_err(|e| Reply::error(400, format!("Invalid request body: {e}")))
}

/// The query string as decoded (key, value) pairs, in order.
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let decode = |s: &str| {
                percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// A boolean query parameter the way JAX-RS reads one: "true" (any case) is true, anything else false.
pub(crate) fn query_flag(pairs: &[(String, String)], key: &str, default: bool) -> bool {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.eq_ignore_ascii_case("true"))
        .unwrap_or(default)
}

fn not_found() -> Reply {
    Reply::error(404, "HTTP 404 Not Found")
}

fn method_not_allowed() -> Reply {
    Reply::error(405, "HTTP 405 Method Not Allowed")
}

/// A request as the router sees it.
pub(crate) struct Request<'a> {
    pub(crate) method: &'a Method,
    pub(crate) segments: Vec<String>,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) body: Body,
    pub(crate) headers: &'a HeaderMap,
}

impl Request<'_> {
    /// A header's value, when present and readable as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

async fn route(state: &ApiState, req: Request<'_>) -> Reply {
    let segs: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    let outcome = match segs.first().copied() {
        Some("admin") if state.admin => loggers::route(&req, &segs[1..]).await,
        // Served on the admin listeners too, where a scraper may be kept apart from the API's users.
        Some("metrics") if segs.len() == 1 => metrics(state, &req).await,
        _ if !state.public => Err(not_found()),
        None => root(state, &req).await,
        Some("health") if segs.len() == 1 => health(state, &req).await,
        Some("connectors") => connectors::route(state, &req, &segs[1..]).await,
        Some("connector-plugins") => plugins::route(state, &req, &segs[1..]).await,
        Some("topics") => topics::route(state, &req, &segs[1..]).await,
        Some("consumers") => Err(topics::consumers()),
        Some("registry") => schemas::registry_read(state, &req).await,
        _ => Err(not_found()),
    };
    outcome.unwrap_or_else(|e| e)
}

/// Answers a method other than the expected ones with 405.
pub(crate) fn only(method: &Method, allowed: &[Method]) -> Result<()> {
    if allowed.contains(method) {
        Ok(())
    } else {
        Err(method_not_allowed())
    }
}

async fn root(state: &ApiState, req: &Request<'_>) -> Result {
    only(req.method, &[Method::GET])?;
    #[cfg(feature = "console")]
    if ui::wants_html(req.headers) {
        return Ok(Reply::empty(302).with_location("ui/".into()));
    }
    Ok(Reply::json(
        200,
        &json!({
            "version": env!("CARGO_PKG_VERSION"),
            "commit": env!("LITECONNECT_COMMIT"),
            "kafka_cluster_id": state.herder.store().cluster_id(),
        }),
    ))
}

async fn health(state: &ApiState, req: &Request<'_>) -> Result {
    only(req.method, &[Method::GET])?;
    let probe = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        state.herder.health_probe(),
    )
    .await;
    let ready = state.herder.is_ready();
    let answered = match probe {
        Ok(Ok(())) => true,
        Ok(Err(error)) => {
            tracing::warn!(%error, "Health check: the database does not answer.");
            false
        }
        Err(_) => false,
    };
    Ok(match (answered, ready) {
        (true, true) => Reply::json(
            200,
            &json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}),
        ),
        (_, false) => Reply::json(
            503,
            &json!({"status": "starting", "message": "Worker is still starting up."}),
        ),
        (false, true) => Reply::json(
            500,
            &json!({"status": "unhealthy", "message": "Worker was unable to handle this request and may be unable to handle other requests."}),
        ),
    })
}

/// `GET /metrics`: Prometheus text format 0.0.4, or OpenMetrics when `Accept` asks for it. Rendering
/// reads `/proc` and file sizes, so it runs off the executor.
async fn metrics(state: &ApiState, req: &Request<'_>) -> Result {
    only(req.method, &[Method::GET])?;
    let format = crate::metrics::Format::from_accept(req.header("accept"));
    let herder = state.herder.clone();
    let body = tokio::task::spawn_blocking(move || crate::metrics::render(herder.as_ref(), format))
        .await
        .map_err(|e| Reply::error(500, format!("Rendering the metrics failed: {e}")))?;
    Ok(Reply::text(200, format.content_type(), body))
}

/// The response to a reply; for `HEAD` without the body, but with the length a `GET` body would have.
fn into_response(reply: Reply, head: bool) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = warp::http::Response::builder().status(status);
    if let Some(l) = &reply.location {
        builder = builder.header("Location", l.as_str());
    }
    if let Some(seconds) = reply.retry_after {
        builder = builder.header("Retry-After", seconds);
    }
    let content_type = HeaderValue::from_static(reply.content_type.unwrap_or("application/json"));
    let body = reply.body.map(|b| match b {
        Json::String(text) if reply.raw => text,
        json => json.to_string(),
    });
    let response = match body {
        Some(body) if head => builder
            .header("Content-Type", content_type)
            .header("Content-Length", body.len())
            .body("".into()),
        Some(body) => builder
            .header("Content-Type", content_type)
            .body(body.into()),
        None => builder.body("".into()),
    };
    response.unwrap_or_else(|_| Response::new("".into()))
}

/// How much of a body over the limit is still read, and dropped, before the 413 answer: a client that is
/// still sending then gets the answer, where closing the connection under it would break its write. A
/// larger body gets the connection closed.
const DRAIN_BEYOND_LIMIT: u64 = 16 << 20;

/// Reads the body up to `limit` bytes; beyond it the request is answered 413.
async fn read_body<S, B>(mut stream: S, limit: u64) -> Result<Bytes>
where
    S: futures::Stream<Item = std::result::Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let mut chunk = chunk
            .map_err(|e| Reply::error(400, format!("Could not read the request body: {e}")))?;
        if out.len() as u64 + chunk.remaining() as u64 > limit {
            let mut dropped = 0u64;
            while dropped < DRAIN_BEYOND_LIMIT {
                match stream.next().await {
                    Some(Ok(rest)) => dropped += rest.remaining() as u64,
                    _ => break,
                }
            }
            return Err(Reply::error(413, format!("Request body is larger than the limit of {limit} bytes (rest.request.max.bytes).")));
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            out.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    Ok(Bytes::from(out))
}

/// Whether `rest.basic.auth.metrics.exempt` lets `/metrics` through without credentials.
fn metrics_exempt(state: &ApiState) -> bool {
    state
        .herder
        .worker_config()
        .originals
        .get(crate::config::keys::REST_BASIC_AUTH_METRICS_EXEMPT)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// One request as it came in.
struct Incoming {
    method: Method,
    path: String,
    query: String,
    headers: HeaderMap,
}

/// Answers one request: security first, then the body, then the route. `HEAD` is answered as `GET`
/// without the body. Every request is logged on [`REQUEST_LOG_TARGET`].
async fn serve<S, B>(
    state: &ApiState,
    security: &Security,
    limit: u64,
    incoming: Incoming,
    body: S,
) -> Response
where
    S: futures::Stream<Item = std::result::Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let started = std::time::Instant::now();
    let Incoming {
        method,
        path,
        query,
        headers,
    } = &incoming;
    let exempt =
        !state.registry && path.trim_end_matches('/') == "/metrics" && metrics_exempt(state);
    let intercepted = if exempt {
        None
    } else {
        security.intercept(method, path, headers)
    };
    let mut response = match intercepted {
        Some(response) => response,
        #[cfg(feature = "console")]
        None if state.public && !state.registry && ui::is_ui(path) => {
            ui::serve(method, path, headers)
        }
        None => {
            let head = *method == Method::HEAD;
            let reply = match read_body(body, limit).await {
                Ok(bytes) => {
                    let routed = if head { Method::GET } else { method.clone() };
                    let segments = path
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
                        .collect();
                    let json = if state.registry {
                        registry::accepts(headers)
                    } else {
                        json_content_type(headers)
                    };
                    let req = Request {
                        method: &routed,
                        segments,
                        query: query_pairs(query),
                        body: Body { bytes, json },
                        headers,
                    };
                    if state.registry {
                        registry::route(state, &req).await
                    } else {
                        route(state, req).await
                    }
                }
                Err(reply) => reply,
            };
            into_response(reply, head)
        }
    };
    security.decorate(method, headers, &mut response);
    let uri = if query.is_empty() {
        path.clone()
    } else {
        format!("{path}?{query}")
    };
    if !state.registry {
        state.herder.metrics().rest.observe(
            method.as_str(),
            path,
            response.status().as_u16(),
            started.elapsed(),
        );
    }
    tracing::info!(
        target: REQUEST_LOG_TARGET,
        "\"{method} {uri}\" {} {}ms",
        response.status().as_u16(),
        started.elapsed().as_millis()
    );
    response
}

/// The whole API as one warp filter, with CORS as configured and no authentication (see [`routes_with`]).
pub fn routes(state: ApiState) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone {
    let config = state.herder.worker_config().clone();
    let cors = config
        .cors_origin
        .as_deref()
        .and_then(|o| crate::security::http::Cors::new(o, config.cors_methods.as_deref()).ok());
    routes_with(
        state,
        Arc::new(Security {
            cors,
            ..Security::default()
        }),
    )
}

/// The whole API as one warp filter: `security` answers CORS preflights and unauthenticated requests
/// before routing, and decorates every response (CORS headers, `response.http.headers.config`).
pub fn routes_with(
    state: ApiState,
    security: Arc<Security>,
) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone {
    let limit = state.herder.worker_config().request_max_bytes;
    warp::method()
        .and(warp::path::full())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(
            move |method: Method,
                  path: warp::path::FullPath,
                  query: String,
                  headers: HeaderMap,
                  body| {
                let state = state.clone();
                let security = security.clone();
                let incoming = Incoming {
                    method,
                    path: path.as_str().to_string(),
                    query,
                    headers,
                };
                async move { serve(&state, &security, limit, incoming, Box::pin(body)).await }
            },
        )
        .recover(|_rejection: warp::Rejection| async {
            Ok::<_, Infallible>(into_response(
                Reply::error(400, "The request could not be read."),
                false,
            ))
        })
        .unify()
}

/// The REST API's request-body parsing on its own, without a worker: the same functions the handlers
/// use, for the fuzz targets. Each returns the 400 message a client would get.
#[doc(hidden)]
pub mod bodies {
    use bytes::Bytes;
    use serde_json::{Map, Value as Json};

    fn json(body: &[u8]) -> super::Body {
        super::Body::json(Bytes::copy_from_slice(body))
    }

    fn message(reply: super::Reply) -> String {
        reply
            .body
            .map(|b| b["message"].to_string())
            .unwrap_or_default()
    }

    /// `POST /connectors`.
    pub fn create_connector(body: &[u8]) -> Result<(), String> {
        super::connectors::parse_create(&json(body))
            .map(|_| ())
            .map_err(message)
    }

    /// `PUT` / `PATCH /connectors/{c}/config` and `PUT /connector-plugins/{p}/config/validate`.
    pub fn connector_config(body: &[u8]) -> Result<(), String> {
        let map: Map<String, Json> = super::parse_body(&json(body)).map_err(message)?;
        super::connectors::config_map(map)
            .map(|_| ())
            .map_err(message)
    }

    /// `POST /topics/{t}` with a JSON (`binary` false) or binary embedded body; the error is the
    /// 42201 message.
    pub fn produce(body: &[u8], binary: bool) -> Result<(), String> {
        let format = if binary {
            super::topics::Format::Binary
        } else {
            super::topics::Format::Json
        };
        super::topics::produce_records(format, body, "topic", None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// `PATCH /connectors/{c}/offsets`.
    pub fn offsets(body: &[u8]) -> Result<(), String> {
        super::parse_body::<crate::herder::ConnectorOffsets>(&json(body))
            .map(|_| ())
            .map_err(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_round_trip_any_name() {
        for name in ["plain", "a b", "a/b?c#d%e+f&g=h", "ünï\\côde"] {
            let loc = connector_location(name);
            let seg = loc.strip_prefix("/connectors/").unwrap();
            assert!(!seg.contains('/') && !seg.contains('?'), "{loc}");
            assert_eq!(percent_decode_str(seg).decode_utf8().unwrap(), name);
        }
    }

    #[test]
    fn query_pairs_decode_and_repeat() {
        let q = query_pairs("expand=status&expand=info&x=a%20b+c");
        assert_eq!(q[0], ("expand".into(), "status".into()));
        assert_eq!(q[1], ("expand".into(), "info".into()));
        assert_eq!(q[2], ("x".into(), "a b c".into()));
        assert!(query_flag(
            &query_pairs("includeTasks=TRUE"),
            "includeTasks",
            false
        ));
        assert!(!query_flag(
            &query_pairs("includeTasks=yes"),
            "includeTasks",
            true
        ));
    }
}
