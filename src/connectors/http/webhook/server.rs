//! The webhook's HTTP side: checks a request (path, method, credentials, size), reads its body into
//! records, hands them to the task's `poll` and answers once `commit` says they are in the local log.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bytes::Buf;
use futures::StreamExt;
use serde_json::json;
use tokio::sync::oneshot;
use warp::http::{HeaderMap, Method, StatusCode};
use warp::reply::Response;
use warp::{Filter, Reply};

use super::body::{self, BodyShape, KeySource};
use crate::connectors::StoredAt;
use crate::model::now_ms;
use crate::record::SourceRecord;
use crate::security::auth::decode_basic;

/// What the task tells a waiting request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The records are committed to the local log, each where it went (`None`: a transform dropped it
    /// or the error handler skipped it).
    Stored(Vec<Option<StoredAt>>),
    /// The task stopped before they were.
    Stopped,
    /// The local log is full and the runtime holds them until there is room: they are stored then,
    /// unless the connector is stopped first.
    Held,
}

/// One request's records on their way to `poll`, with the way back to the request.
pub struct Submission {
    /// The parsed records.
    pub records: Vec<SourceRecord>,
    /// Answered by `commit` (or `stop`).
    pub reply: oneshot::Sender<Outcome>,
}

/// Credentials a request must present.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// `Authorization: Bearer <token>`.
    pub bearer: Option<String>,
    /// `Authorization: Basic` with this user and password.
    pub basic: Option<(String, String)>,
}

impl Credentials {
    fn required(&self) -> bool {
        self.bearer.is_some() || self.basic.is_some()
    }

    /// Whether the `Authorization` header value satisfies one of the configured schemes.
    pub fn accepts(&self, authorization: Option<&str>) -> bool {
        if !self.required() {
            return true;
        }
        let Some(header) = authorization else {
            return false;
        };
        if let (Some(token), Some((scheme, given))) = (&self.bearer, header.split_once(' ')) {
            if scheme.eq_ignore_ascii_case("bearer") && constant_time_eq(given.trim(), token) {
                return true;
            }
        }
        match (&self.basic, decode_basic(header)) {
            (Some((user, password)), Some((u, p))) => {
                constant_time_eq(&u, user) & constant_time_eq(&p, password)
            }
            _ => false,
        }
    }
}

fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What every request handler shares.
pub struct Endpoint {
    /// The one path records are posted to.
    pub path: String,
    /// The default topic (`topic`).
    pub topic: Option<String>,
    /// The header naming the topic (`topic.header`).
    pub topic_header: Option<String>,
    /// The header holding the key (`key.header`).
    pub key_header: Option<String>,
    /// The pointer to the key in each object (`key.pointer`).
    pub key_pointer: Option<String>,
    /// What requests must present.
    pub credentials: Credentials,
    /// `request.max.bytes`.
    pub max_bytes: u64,
    /// `request.timeout.ms`: how long a request waits for its records to be stored.
    pub timeout: Duration,
    /// `retry.after.seconds`, sent with every 503.
    pub retry_after: u32,
    /// What the task tells the handlers about itself.
    pub task: Arc<TaskState>,
    /// Where records go to `poll`.
    pub queue: mpsc::Sender<Submission>,
    /// Requests waiting for their records to be stored.
    pub waiting: AtomicUsize,
}

const PAUSED: &str = "The connector is paused; try again later";

/// The answer to a request whose records are in the batch the byte cap holds.
const HELD: &str = "The local log is full (log.buffer.max.bytes is reached): the records are held and will be stored once a sink makes room, unless the connector is stopped first; a retry may store them twice";

/// The answer to a request still queued when the byte cap was reached: its records are dropped.
const FULL_QUEUED: &str = "The local log is full (log.buffer.max.bytes is reached); the records were not stored, try again later";

/// How long the task may go without polling, with no records in hand, before it counts as paused.
const PAUSED_AFTER_MS: i64 = 1000;

/// What the task shares with the request handlers, so that they refuse at once what would only wait.
#[derive(Debug, Default)]
pub struct TaskState {
    /// Set while the byte cap holds the task's records back.
    pub log_full: AtomicBool,
    /// Set from a poll that returned records until their commit (or the task's stop).
    pub in_hand: AtomicBool,
    /// When `poll` last began or ended, epoch milliseconds.
    pub last_poll_ms: AtomicI64,
}

impl TaskState {
    /// Why requests are refused now, if they are.
    fn refusal(&self) -> Option<&'static str> {
        if self.log_full.load(Ordering::SeqCst) {
            return Some("The local log is full (log.buffer.max.bytes); try again later");
        }
        self.paused().then_some(PAUSED)
    }

    /// Whether the task is not being polled (the connector is paused) with no records in hand.
    fn paused(&self) -> bool {
        let idle = now_ms() - self.last_poll_ms.load(Ordering::SeqCst);
        !self.in_hand.load(Ordering::SeqCst) && idle > PAUSED_AFTER_MS
    }
}

/// Counts a request in [`Endpoint::waiting`] while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn enter(count: &'a AtomicUsize) -> Waiting<'a> {
        count.fetch_add(1, Ordering::SeqCst);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The webhook as one warp filter.
pub fn routes(
    endpoint: Arc<Endpoint>,
) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static {
    warp::method()
        .and(warp::path::full())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(
            move |method: Method, path: warp::path::FullPath, headers: HeaderMap, body| {
                let endpoint = endpoint.clone();
                async move {
                    let path = path.as_str().to_string();
                    handle(&endpoint, method, &path, &headers, Box::pin(body)).await
                }
            },
        )
        .recover(|_rejection: warp::Rejection| async {
            Ok::<_, Infallible>(answer(
                StatusCode::BAD_REQUEST,
                "The request could not be read.",
            ))
        })
        .unify()
}

/// A JSON answer in the shape of Kafka Connect's REST errors.
fn answer(status: StatusCode, message: &str) -> Response {
    let body = json!({"error_code": status.as_u16(), "message": message});
    warp::reply::with_status(warp::reply::json(&body), status).into_response()
}

fn unavailable(endpoint: &Endpoint, message: &str) -> Response {
    let mut response = answer(StatusCode::SERVICE_UNAVAILABLE, message);
    response.headers_mut().insert(
        warp::http::header::RETRY_AFTER,
        endpoint.retry_after.to_string().parse().expect("a number"),
    );
    response
}

fn header<'a>(headers: &'a HeaderMap, name: &Option<String>) -> Option<&'a str> {
    headers.get(name.as_deref()?)?.to_str().ok()
}

async fn handle<S, B>(
    endpoint: &Endpoint,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: S,
) -> Response
where
    S: futures::Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    if path != endpoint.path {
        return answer(
            StatusCode::NOT_FOUND,
            &format!(
                "No webhook at {path}; records are posted to {}",
                endpoint.path
            ),
        );
    }
    if method != Method::POST {
        return answer(
            StatusCode::METHOD_NOT_ALLOWED,
            "Records are posted with POST",
        );
    }
    let authorization = headers
        .get(warp::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if !endpoint.credentials.accepts(authorization) {
        let mut response = answer(
            StatusCode::UNAUTHORIZED,
            "The request's credentials are missing or wrong",
        );
        let scheme = if endpoint.credentials.bearer.is_some() {
            "Bearer"
        } else {
            "Basic"
        };
        response.headers_mut().insert(
            warp::http::header::WWW_AUTHENTICATE,
            format!("{scheme} realm=\"webhook\"")
                .parse()
                .expect("a header value"),
        );
        return response;
    }
    let bytes = match read_limited(body, endpoint.max_bytes).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    if let Some(why) = endpoint.task.refusal() {
        return unavailable(endpoint, why);
    }
    let Some(topic) = header(headers, &endpoint.topic_header).or(endpoint.topic.as_deref()) else {
        return answer(
            StatusCode::BAD_REQUEST,
            &format!(
                "The request has no {} header and the connector has no default topic",
                endpoint.topic_header.as_deref().unwrap_or("topic")
            ),
        );
    };
    let keys = KeySource {
        header_value: header(headers, &endpoint.key_header).map(str::to_string),
        pointer: endpoint.key_pointer.clone(),
    };
    let content_type = headers
        .get(warp::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let records = match body::parse(&bytes, BodyShape::of(content_type), topic, &keys) {
        Ok(r) => r,
        Err(message) => return answer(StatusCode::BAD_REQUEST, &message.0),
    };
    let count = records.len();
    if count == 0 {
        return stored(topic, &[]);
    }
    let (reply, outcome) = oneshot::channel();
    let sent = endpoint.queue.send(Submission { records, reply });
    if sent.is_err() {
        return unavailable(endpoint, "The connector is stopping");
    }
    let _waiting = Waiting::enter(&endpoint.waiting);
    match wait_stored(endpoint, outcome).await {
        Ok(at) => stored(topic, &at),
        Err(why) => unavailable(endpoint, &why),
    }
}

/// Waits for the task's word on a request's records. Gives up after `request.timeout.ms`, or as soon as
/// the task turns out to be paused with the records still queued (dropping the receiver then keeps `poll`
/// from taking them).
async fn wait_stored(
    endpoint: &Endpoint,
    mut outcome: oneshot::Receiver<Outcome>,
) -> Result<Vec<Option<StoredAt>>, String> {
    let deadline = tokio::time::Instant::now() + endpoint.timeout;
    loop {
        let slice = deadline.min(tokio::time::Instant::now() + Duration::from_millis(250));
        match tokio::time::timeout_at(slice, &mut outcome).await {
            Ok(Ok(Outcome::Stored(at))) => return Ok(at),
            Ok(Ok(Outcome::Held)) => return Err(HELD.into()),
            Ok(_) => return Err("The connector stopped before the records were stored".into()),
            Err(_) if slice >= deadline => {
                return Err(format!("The records were not stored within request.timeout.ms={}ms (the local log is full); they may still be stored", endpoint.timeout.as_millis()));
            }
            Err(_) => {
                if endpoint.task.log_full.load(Ordering::SeqCst) {
                    // The task answers the requests it holds before it sets the flag; one without an
                    // answer is still queued, and dropping its receiver keeps `poll` from taking it.
                    return Err(match outcome.try_recv() {
                        Ok(Outcome::Stored(at)) => return Ok(at),
                        Ok(Outcome::Held) => HELD.into(),
                        _ => FULL_QUEUED.into(),
                    });
                }
                if endpoint.task.paused() {
                    return Err(PAUSED.into());
                }
            }
        }
    }
}

/// 201 with where each of the request's records was stored, in the order the body held them (`null`
/// for one a transform dropped or `errors.tolerance=all` skipped).
fn stored(topic: &str, at: &[Option<StoredAt>]) -> Response {
    let offsets: Vec<serde_json::Value> = at
        .iter()
        .map(|a| match a {
            Some(a) => json!({"topic": a.topic, "partition": a.partition, "offset": a.offset}),
            None => serde_json::Value::Null,
        })
        .collect();
    let body = json!({"topic": topic, "records": at.len(), "offsets": offsets});
    warp::reply::with_status(warp::reply::json(&body), StatusCode::CREATED).into_response()
}

/// Reads the body, or answers 413 once it passes `limit` bytes.
async fn read_limited<S, B>(mut stream: S, limit: u64) -> Result<Vec<u8>, Response>
where
    S: futures::Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let mut out: Vec<u8> = Vec::new();
    while let Some(next) = stream.next().await {
        let mut chunk = next.map_err(|e| {
            answer(
                StatusCode::BAD_REQUEST,
                &format!("Could not read the request body: {e}"),
            )
        })?;
        if (out.len() + chunk.remaining()) as u64 > limit {
            return Err(answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "The request body is larger than request.max.bytes={limit}; nothing was stored"
                ),
            ));
        }
        let n = chunk.remaining();
        out.extend_from_slice(&chunk.copy_to_bytes(n));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    #[test]
    fn credentials_accept_the_configured_schemes_only() {
        let open = Credentials::default();
        assert!(open.accepts(None));
        let c = Credentials {
            bearer: Some("s3cret".into()),
            basic: Some(("dev".into(), "pw".into())),
        };
        assert!(c.accepts(Some("Bearer s3cret")));
        assert!(!c.accepts(Some("Bearer wrong")));
        assert!(!c.accepts(None));
        let basic = base64::engine::general_purpose::STANDARD.encode("dev:pw");
        assert!(c.accepts(Some(&format!("Basic {basic}"))));
        let wrong = base64::engine::general_purpose::STANDARD.encode("dev:no");
        assert!(!c.accepts(Some(&format!("Basic {wrong}"))));
    }
}
