//! The security features of Kafka Connect's REST server: HTTPS listeners with optional client certificates
//! ([`tls`]), HTTP basic authentication compatible with Kafka's `BasicAuthSecurityRestExtension`
//! ([`auth`]), CORS and `response.http.headers.config` ([`http`]), and the accept loop that serves plain and
//! TLS connections ([`server`]).
//!
//! [`Security`] is what the REST filter consults for every request: it answers CORS preflights and
//! unauthenticated requests itself, and decorates every response.

pub(crate) mod auth;
mod error;
pub(crate) mod http;
pub mod server;
pub(crate) mod tls;

use std::sync::Arc;

use serde_json::json;
use warp::http::header::{HeaderMap, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

use crate::config::worker::WorkerConfig;
pub use error::SecurityError;

/// What the REST filter applies to every request and response.
#[derive(Debug, Clone, Default)]
pub struct Security {
    /// Basic authentication, when enabled.
    pub basic_auth: Option<auth::BasicAuth>,
    /// CORS, when `access.control.allow.origin` is set.
    pub cors: Option<http::Cors>,
    /// `response.http.headers.config`.
    pub header_rules: Vec<http::HeaderRule>,
}

impl Security {
    /// Reads the worker keys (and the credentials files they name).
    ///
    /// # Errors
    /// A message naming the key that is wrong.
    pub fn from_worker(config: &WorkerConfig) -> Result<Security, SecurityError> {
        let cors = match &config.cors_origin {
            Some(origin) => Some(http::Cors::new(origin, config.cors_methods.as_deref())?),
            None => None,
        };
        let header_rules = match config
            .originals
            .get(crate::config::keys::RESPONSE_HTTP_HEADERS_CONFIG)
        {
            Some(v) => http::parse_header_rules(v)?,
            None => Vec::new(),
        };
        Ok(Security {
            basic_auth: auth::BasicAuth::from_worker(&config.originals)?,
            cors,
            header_rules,
        })
    }

    /// An answer given before routing: a CORS preflight, or 401 without valid credentials.
    pub fn intercept(&self, method: &Method, path: &str, headers: &HeaderMap) -> Option<Response> {
        if let Some(cors) = &self.cors {
            if cors.is_preflight(method.as_str(), headers) {
                let mut response = Response::new("".into());
                for (name, value) in cors.preflight_headers(headers) {
                    if let Ok(v) = HeaderValue::from_str(&value) {
                        response.headers_mut().append(name, v);
                    }
                }
                return Some(response);
            }
        }
        let auth = self.basic_auth.as_ref()?;
        if auth.health_exempt && path.trim_end_matches('/') == "/health" {
            return None;
        }
        let authorization = headers.get("authorization").and_then(|v| v.to_str().ok());
        if auth.authenticate(authorization) {
            return None;
        }
        tracing::debug!(path, "Request failed authentication.");
        let body = json!({"error_code": 401, "message": "User cannot access the resource."});
        let mut response = Response::new(body.to_string().into());
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        response
            .headers_mut()
            .insert("content-type", HeaderValue::from_static("application/json"));
        response.headers_mut().insert(
            "www-authenticate",
            HeaderValue::from_static("Basic realm=\"Kafka Connect\", charset=\"UTF-8\""),
        );
        Some(response)
    }

    /// Adds the CORS headers (for a non-preflight request with an allowed `Origin`) and applies the header
    /// rules.
    pub fn decorate(&self, method: &Method, request: &HeaderMap, response: &mut Response) {
        if let Some(cors) = &self.cors {
            if !cors.is_preflight(method.as_str(), request) {
                for (name, value) in cors.response_headers(request) {
                    if let Ok(v) = HeaderValue::from_str(&value) {
                        response.headers_mut().append(name, v);
                    }
                }
            }
        }
        http::apply_rules(&self.header_rules, response.headers_mut());
    }
}

/// Checks every security setting of a worker config, so that a bad one stops the worker before it binds
/// anything: the REST settings and the TLS settings of every https listener.
///
/// # Errors
/// A message naming the key that is wrong.
pub fn check(config: &WorkerConfig) -> Result<(), SecurityError> {
    Security::from_worker(config)?;
    if config
        .listeners
        .iter()
        .chain(&config.schema_registry_listeners)
        .any(|l| l.scheme == "https")
    {
        tls::server_config(&config.originals, tls::LISTENERS_PREFIX)?;
    }
    if config
        .admin_listeners
        .iter()
        .flatten()
        .any(|l| l.scheme == "https")
    {
        tls::server_config(&config.originals, tls::ADMIN_LISTENERS_PREFIX)?;
    }
    Ok(())
}

/// The TLS acceptor for a listener (None for http).
///
/// # Errors
/// See [`tls::server_config`].
pub fn acceptor(
    config: &WorkerConfig,
    listener: &crate::config::worker::Listener,
    admin: bool,
) -> Result<Option<tokio_rustls::TlsAcceptor>, SecurityError> {
    if listener.scheme != "https" {
        return Ok(None);
    }
    let prefix = if admin {
        tls::ADMIN_LISTENERS_PREFIX
    } else {
        tls::LISTENERS_PREFIX
    };
    Ok(Some(tokio_rustls::TlsAcceptor::from(tls::server_config(
        &config.originals,
        prefix,
    )?)))
}

/// Shared handle for the REST filter.
pub type SharedSecurity = Arc<Security>;
