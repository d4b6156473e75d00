//! The HTTP side of the sink: one connection pool (reqwest, rustls on ring; HTTP/1.1 and HTTP/2;
//! `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` honoured), the `Authorization` header (static, basic or an
//! OAuth2 client credentials token, fetched when first needed and again when it expires or the endpoint
//! answers one of the renewal statuses), and the retries of one request.

use std::time::{Duration, Instant};

use reqwest::blocking::Response;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, RETRY_AFTER};

use super::config::{Auth, OAuth2, Settings};
use super::task::retry_after;

/// Why a request was not delivered.
#[derive(Debug)]
pub enum Failure {
    /// The endpoint cannot take it now (5xx, 429, no connection, a timeout): try again later.
    Retriable {
        /// What happened.
        message: String,
        /// The pause the endpoint asked for.
        retry_after: Option<Duration>,
    },
    /// The endpoint refused it (a 4xx other than 429). `retry`: the status is one of
    /// `retry.on.status.codes`, so the request is sent again while retries remain.
    Refused {
        /// What happened.
        message: String,
        /// Whether to try again while retries remain.
        retry: bool,
    },
    /// The task cannot go on (the token endpoint refused the credentials).
    Fatal(String),
}

/// An access token and when it stops being valid.
struct Token {
    header: String,
    expires: Option<Instant>,
}

/// The connection pool and the authorization state.
pub struct Client {
    http: reqwest::blocking::Client,
    headers: HeaderMap,
    auth: Auth,
    token: Option<Token>,
    backoff: Duration,
    retry_codes: Vec<(u16, u16)>,
}

/// The first bytes of an answer's body, for messages.
fn excerpt(response: Response) -> String {
    let mut body = response.text().unwrap_or_default();
    if body.len() > 500 {
        let mut end = 500;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
        body.push('…');
    }
    body
}

fn transport(e: &reqwest::Error) -> Failure {
    // reqwest's Display leaves out the cause (connection refused, timed out …); the chain has it.
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    Failure::Retriable {
        message,
        retry_after: None,
    }
}

impl Client {
    /// A client for the settings.
    pub fn new(settings: &Settings) -> Result<Client, String> {
        let mut builder = reqwest::blocking::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.request_timeout)
            .user_agent(concat!("liteconnect/", env!("CARGO_PKG_VERSION")))
            .danger_accept_invalid_certs(settings.trust_all);
        if let Some(proxy) = &settings.proxy {
            let proxy = reqwest::Proxy::all(format!("http://{proxy}"))
                .map_err(|e| format!("Invalid proxy {proxy}: {e}"))?;
            builder = builder.proxy(proxy);
        }
        let http = builder
            .build()
            .map_err(|e| format!("Could not create the HTTP client: {e}"))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &settings.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("Invalid header name {name}: {e}"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| format!("Invalid value of header {name}: {e}"))?;
            headers.append(name, value);
        }
        Ok(Client {
            http,
            headers,
            auth: settings.auth.clone(),
            token: None,
            backoff: settings.backoff,
            retry_codes: settings.retry_codes.clone(),
        })
    }

    /// Sends one request until it gets a 2xx, retrying up to `retries` times after a retriable failure
    /// or a status of `retry.on.status.codes`, with the configured backoff (or the `Retry-After` asked).
    /// `retrying` hears of each failed attempt that is retried, before the wait.
    pub fn deliver(
        &mut self,
        method: &reqwest::Method,
        url: &str,
        body: Option<&str>,
        retries: u32,
        retrying: &mut dyn FnMut(&str),
    ) -> Result<(), Failure> {
        let mut attempt = 0;
        let mut renewed = false;
        loop {
            let failure = match self.attempt(method, url, body) {
                Ok(None) => return Ok(()),
                Ok(Some((status, _))) if !renewed && self.renews_on(status) => {
                    // The token may have expired: fetch a new one and send again once.
                    self.token = None;
                    renewed = true;
                    continue;
                }
                Ok(Some((status, response))) => self.classify(status, response),
                Err(f) => f,
            };
            let wait = match &failure {
                Failure::Retriable { retry_after, .. } => {
                    retry_after.unwrap_or_default().max(self.backoff)
                }
                Failure::Refused { retry: true, .. } => self.backoff,
                Failure::Refused { .. } | Failure::Fatal(_) => return Err(failure),
            };
            if attempt >= retries {
                return Err(failure);
            }
            attempt += 1;
            let why = match &failure {
                Failure::Retriable { message, .. } | Failure::Refused { message, .. } => message,
                Failure::Fatal(message) => message,
            };
            retrying(&format!(
                "attempt {attempt} of {} failed: {why}",
                retries + 1
            ));
            tracing::info!(%url, attempt, retries, wait_ms = wait.as_millis() as u64, "Sending failed; retrying.");
            std::thread::sleep(wait);
        }
    }

    fn renews_on(&self, status: u16) -> bool {
        matches!(&self.auth, Auth::OAuth2(o) if o.renew_on.contains(&status))
    }

    /// A non-2xx answer as a failure.
    fn classify(&self, status: u16, response: Response) -> Failure {
        let after = retry_after(
            response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
        );
        let message = format!(
            "Server replied with status code {status} and body {}",
            excerpt(response)
        );
        if status == 429 || status >= 500 {
            return Failure::Retriable {
                message,
                retry_after: after,
            };
        }
        let retry = self
            .retry_codes
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&status));
        Failure::Refused { message, retry }
    }

    /// One request: `Ok(None)` on a 2xx, the status and answer otherwise.
    fn attempt(
        &mut self,
        method: &reqwest::Method,
        url: &str,
        body: Option<&str>,
    ) -> Result<Option<(u16, Response)>, Failure> {
        let mut request = self
            .http
            .request(method.clone(), url)
            .headers(self.headers.clone());
        if let Some(auth) = self.authorization()? {
            request = request.header(AUTHORIZATION, auth);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().map_err(|e| transport(&e))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            // Read the answer to the end so the connection goes back to the pool.
            let _ = response.bytes();
            return Ok(None);
        }
        Ok(Some((status, response)))
    }

    /// The `Authorization` header value, fetching a token when needed.
    fn authorization(&mut self) -> Result<Option<String>, Failure> {
        let oauth = match &self.auth {
            Auth::None => return Ok(None),
            Auth::Header(h) => return Ok(Some(h.clone())),
            Auth::OAuth2(o) => (**o).clone(),
        };
        if let Some(t) = &self.token {
            if t.expires.is_none_or(|e| Instant::now() < e) {
                return Ok(Some(t.header.clone()));
            }
        }
        let token = self.fetch_token(&oauth)?;
        let header = token.header.clone();
        self.token = Some(token);
        Ok(Some(header))
    }

    fn fetch_token(&self, o: &OAuth2) -> Result<Token, Failure> {
        let mut form = vec![(o.form_names[0].clone(), o.grant_type.clone())];
        if let Some(scope) = &o.scope {
            form.push(("scope".into(), scope.clone()));
        }
        let mut request = self.http.post(&o.token_url);
        if o.in_header {
            request = request.basic_auth(&o.client_id, Some(&o.client_secret));
        } else {
            form.push((o.form_names[1].clone(), o.client_id.clone()));
            form.push((o.form_names[2].clone(), o.client_secret.clone()));
        }
        let fail =
            |m: String| format!("Couldn't get OAuth2 access token from {}: {m}", o.token_url);
        let response = request
            .form(&form)
            .send()
            .map_err(|e| match transport(&e) {
                Failure::Retriable { message, .. } => Failure::Retriable {
                    message: fail(message),
                    retry_after: None,
                },
                other => other,
            })?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let message = fail(format!(
                "status code {status} and body {}",
                excerpt(response)
            ));
            return Err(if status == 429 || status >= 500 {
                Failure::Retriable {
                    message,
                    retry_after: None,
                }
            } else {
                Failure::Fatal(message)
            });
        }
        let answer: serde_json::Value = response
            .json()
            .map_err(|e| Failure::Fatal(fail(format!("the answer is not JSON: {e}"))))?;
        let Some(token) = answer.get(&o.token_property).and_then(|t| t.as_str()) else {
            let keys: Vec<&String> = answer
                .as_object()
                .map(|m| m.keys().collect())
                .unwrap_or_default();
            return Err(Failure::Fatal(fail(format!(
                "Couldn't find access token property {} in response properties: {keys:?}",
                o.token_property
            ))));
        };
        let kind = answer
            .get("token_type")
            .and_then(|t| t.as_str())
            .unwrap_or("Bearer");
        // Renewed a little before it expires, so a request does not carry a token that lapses on the way.
        let expires = answer
            .get("expires_in")
            .and_then(|e| e.as_u64())
            .map(|secs| Instant::now() + Duration::from_secs(secs.saturating_sub(secs / 10 + 1)));
        Ok(Token {
            header: format!("{kind} {token}"),
            expires,
        })
    }
}
