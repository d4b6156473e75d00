//! SASL on the Kafka listener: SaslHandshake and SaslAuthenticate with PLAIN and SCRAM-SHA-256/512,
//! checked against a credentials file.

use std::path::Path;
use std::sync::Arc;

use kafka_protocol::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};

/// The users a SASL listener accepts, loaded once at start-up.
#[derive(Debug, Default)]
pub struct Credentials {}

impl Credentials {
    /// Reads a credentials file.
    ///
    /// # Errors
    /// A message naming the file and what is wrong with it.
    pub fn load(_path: &Path) -> Result<Credentials, String> {
        Ok(Credentials {})
    }
}

/// Where a connection's authentication stands after a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// More exchanges are needed.
    Continue,
    /// The client is authenticated as this principal.
    Authenticated(String),
    /// Authentication failed: send the response, then close the connection.
    Failed,
}

/// One connection's SASL exchange.
pub struct SaslSession {
    #[allow(dead_code)]
    credentials: Arc<Credentials>,
    #[allow(dead_code)]
    mechanisms: Vec<String>,
}

impl SaslSession {
    /// A session accepting `mechanisms` (e.g. `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`).
    pub fn new(credentials: Arc<Credentials>, mechanisms: Vec<String>) -> SaslSession {
        SaslSession {
            credentials,
            mechanisms,
        }
    }

    /// SaslHandshake: picks the mechanism.
    pub fn handshake(
        &mut self,
        _request: SaslHandshakeRequest,
        _version: i16,
    ) -> (SaslHandshakeResponse, Outcome) {
        (SaslHandshakeResponse::default(), Outcome::Failed)
    }

    /// SaslAuthenticate: one round of the chosen mechanism.
    pub fn authenticate(
        &mut self,
        _request: SaslAuthenticateRequest,
        _version: i16,
    ) -> (SaslAuthenticateResponse, Outcome) {
        (SaslAuthenticateResponse::default(), Outcome::Failed)
    }
}
