//! An HTTP client for a worker's REST API: one base URL, optional basic credentials, and request helpers
//! that answer with the status code and the body read as JSON.
//!
//! A body that is not JSON comes back as a JSON string holding the text, and an empty body as `null`, so
//! callers can assert on Kafka Connect's error bodies and on plain-text answers alike.

use std::fmt;

use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::Value as Json;

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The request could not be sent, or the answer could not be read.
    #[error("{method} {url} failed: {}", describe(source, url))]
    Request {
        /// The request's method.
        method: Method,
        /// The URL asked.
        url: String,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
}

/// What went wrong with a request, in words that name the cause: "no worker answers at <url>" with the
/// reason (connection refused, a timeout) when nothing answered, else the innermost error of the chain
/// (reqwest's own outer text, "error sending request for url", says nothing about why).
pub fn describe(e: &reqwest::Error, url: &str) -> String {
    let cause = innermost(e);
    let base = url
        .find("://")
        .and_then(|scheme| url[scheme + 3..].find('/').map(|p| &url[..scheme + 3 + p]))
        .unwrap_or(url);
    if e.is_connect() {
        format!("no worker answers at {base} ({cause})")
    } else if e.is_timeout() {
        format!("no answer from {base} in time ({cause})")
    } else {
        cause
    }
}

/// The innermost error of a chain: the one that says why (e.g. "Connection refused (os error 111)").
pub fn innermost(e: &dyn std::error::Error) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// A failed request to another system, in words that keep the cause: "could not connect: Connection
/// refused (os error 111)", "timed out: …", else the innermost error.
pub fn cause(e: &reqwest::Error) -> String {
    let why = innermost(e);
    if e.is_connect() {
        format!("could not connect: {why}")
    } else if e.is_timeout() {
        format!("timed out: {why}")
    } else {
        why
    }
}

/// A status code, the response headers and the body as JSON.
#[derive(Debug, Clone)]
pub struct Response {
    /// The HTTP status of the answer.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body: JSON when it parses, a JSON string holding the text when not, `null` when empty.
    pub body: Json,
}

/// Basic credentials sent with every request.
#[derive(Clone)]
struct Credentials {
    user: String,
    password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// A client of one worker's REST API.
#[derive(Debug, Clone)]
pub struct Client {
    /// The connection pool (and its TLS settings, when the caller built one with them).
    http: reqwest::Client,
    /// The base URL without a trailing slash, e.g. `http://127.0.0.1:8083`.
    base: String,
    /// Sent as `Authorization: Basic …` when set.
    auth: Option<Credentials>,
}

impl Client {
    /// A client of the worker at `base` (e.g. `http://127.0.0.1:8083`) with a default connection pool.
    pub fn new(base: impl Into<String>) -> Client {
        Client::with_http(reqwest::Client::new(), base)
    }

    /// A client of the worker at `base` over `http` (for timeouts, certificates or a shared pool).
    pub fn with_http(http: reqwest::Client, base: impl Into<String>) -> Client {
        let base = base.into().trim_end_matches('/').to_string();
        Client {
            http,
            base,
            auth: None,
        }
    }

    /// The same client, sending basic credentials with every request.
    pub fn basic_auth(mut self, user: impl Into<String>, password: impl Into<String>) -> Client {
        self.auth = Some(Credentials {
            user: user.into(),
            password: password.into(),
        });
        self
    }

    /// The same client, sending no credentials.
    pub fn anonymous(&self) -> Client {
        Client {
            auth: None,
            ..self.clone()
        }
    }

    /// The base URL, without a trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The underlying connection pool.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request for `path` with the credentials set, for callers that need headers or bodies of their own.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let req = self.http.request(method, self.url(path));
        match &self.auth {
            Some(c) => req.basic_auth(&c.user, Some(&c.password)),
            None => req,
        }
    }

    /// Sends `method path`, with `body` as JSON when given, and reads the whole answer.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<Response, ClientError> {
        let mut req = self.request(method.clone(), path);
        if let Some(b) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        read(req, method, self.url(path)).await
    }

    /// Sends `method path` with `body` and returns the status and the body.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<(u16, Json), ClientError> {
        let r = self.send(method, path, body).await?;
        Ok((r.status, r.body))
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<(u16, Json), ClientError> {
        self.call(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: &Json) -> Result<(u16, Json), ClientError> {
        self.call(Method::POST, path, Some(body)).await
    }

    /// `POST path` without a body.
    pub async fn post_empty(&self, path: &str) -> Result<(u16, Json), ClientError> {
        self.call(Method::POST, path, None).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: &Json) -> Result<(u16, Json), ClientError> {
        self.call(Method::PUT, path, Some(body)).await
    }

    /// `PUT path` without a body.
    pub async fn put_empty(&self, path: &str) -> Result<(u16, Json), ClientError> {
        self.call(Method::PUT, path, None).await
    }

    /// `PATCH path` with a JSON body.
    pub async fn patch(&self, path: &str, body: &Json) -> Result<(u16, Json), ClientError> {
        self.call(Method::PATCH, path, Some(body)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<(u16, Json), ClientError> {
        self.call(Method::DELETE, path, None).await
    }

    /// Whether `GET /health` answers 200 now.
    pub async fn is_healthy(&self) -> bool {
        matches!(self.get("/health").await, Ok((200, _)))
    }
}

/// Sends `req` and reads its answer; `method` and `url` name it in errors.
async fn read(
    req: reqwest::RequestBuilder,
    method: Method,
    url: String,
) -> Result<Response, ClientError> {
    let failed = |source| ClientError::Request {
        method: method.clone(),
        url: url.clone(),
        source,
    };
    let resp = req.send().await.map_err(failed)?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.map_err(failed)?;
    Ok(Response {
        status,
        headers,
        body: parse_body(text),
    })
}

/// A body as JSON: `null` when empty, a JSON string when it is not JSON.
fn parse_body(text: String) -> Json {
    if text.is_empty() {
        Json::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Json::String(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_read_as_json_text_or_null() {
        assert_eq!(parse_body(String::new()), Json::Null);
        assert_eq!(
            parse_body(r#"{"a": 1}"#.into()),
            serde_json::json!({"a": 1})
        );
        assert_eq!(parse_body("not json".into()), Json::from("not json"));
    }

    #[test]
    fn the_base_loses_its_trailing_slash_and_credentials_stay_out_of_debug() {
        let c = Client::new("http://127.0.0.1:8083/").basic_auth("ops", "s3cret");
        assert_eq!(c.base(), "http://127.0.0.1:8083");
        assert_eq!(c.url("/connectors"), "http://127.0.0.1:8083/connectors");
        assert!(!format!("{c:?}").contains("s3cret"));
        assert!(c.anonymous().auth.is_none());
    }
}
