//! SASL on the Kafka listener: SaslHandshake and SaslAuthenticate with PLAIN and SCRAM-SHA-256/512,
//! checked against a credentials file.
//!
//! The file is the one the REST listener's basic authentication reads: `user=password` lines in Java
//! properties syntax. SCRAM keys are derived from each password when the file is loaded (a random salt per
//! user and hash, 4096 iterations); the passwords themselves are kept for PLAIN.

mod scram;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;
use ring::rand::{SecureRandom, SystemRandom};

pub use scram::{Hash, ITERATIONS};

#[cfg(test)]
/// The mechanisms this listener implements.
pub const MECHANISMS: [&str; 3] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

#[derive(Debug)]
struct User {
    password: String,
    sha256: scram::Keys,
    sha512: scram::Keys,
}

/// The users a SASL listener accepts, loaded once at start-up.
#[derive(Debug, Default)]
pub struct Credentials {
    users: BTreeMap<String, User>,
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = vec![0; n];
    SystemRandom::new()
        .fill(&mut out)
        .expect("the system random generator works");
    out
}

impl Credentials {
    /// Reads a credentials file.
    ///
    /// # Errors
    /// A message naming the file and what is wrong with it.
    pub fn load(path: &Path) -> Result<Credentials, String> {
        let users = crate::security::auth::read_credentials(path)?;
        if users.is_empty() {
            return Err(format!(
                "The SASL credentials file {} holds no users (one user=password line per user).",
                path.display()
            ));
        }
        let mut credentials = Credentials::default();
        for (user, password) in users {
            credentials.add(&user, &password, None);
        }
        Ok(credentials)
    }

    /// Adds a user; SCRAM keys get `salt` (a random one when `None`) and [`ITERATIONS`].
    pub fn add(&mut self, user: &str, password: &str, salt: Option<&[u8]>) {
        let keys = |hash| {
            let salt = salt.map_or_else(|| random_bytes(16), <[u8]>::to_vec);
            scram::Keys::derive(hash, password, &salt, ITERATIONS)
        };
        self.users.insert(
            user.to_string(),
            User {
                password: password.to_string(),
                sha256: keys(Hash::Sha256),
                sha512: keys(Hash::Sha512),
            },
        );
    }

    fn scram_keys(&self, user: &str, hash: Hash) -> Option<&scram::Keys> {
        self.users.get(user).map(|u| match hash {
            Hash::Sha256 => &u.sha256,
            Hash::Sha512 => &u.sha512,
        })
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

#[derive(Debug)]
enum Stage {
    /// No handshake yet.
    Start,
    /// PLAIN chosen: one SaslAuthenticate carries everything.
    Plain,
    /// SCRAM chosen: the client-first message is next.
    ScramFirst(Hash),
    /// The server-first message was sent: the client-final message is next.
    ScramFinal {
        hash: Hash,
        first: scram::ClientFirst,
        server_first: String,
        nonce: String,
    },
    /// Authenticated or failed: nothing more is accepted.
    Done,
}

/// One connection's SASL exchange.
pub struct SaslSession {
    credentials: Arc<Credentials>,
    mechanisms: Vec<String>,
    stage: Stage,
    /// The server's part of the SCRAM nonce (random unless a test sets it).
    server_nonce: Option<String>,
}

fn str(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

impl SaslSession {
    /// A session accepting `mechanisms` (e.g. `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`).
    pub fn new(credentials: Arc<Credentials>, mechanisms: Vec<String>) -> SaslSession {
        SaslSession {
            credentials,
            mechanisms,
            stage: Stage::Start,
            server_nonce: None,
        }
    }

    #[cfg(test)]
    /// Fixes the server's part of the SCRAM nonce (for reproducing published test vectors).
    pub fn with_server_nonce(mut self, nonce: &str) -> SaslSession {
        self.server_nonce = Some(nonce.to_string());
        self
    }

    /// SaslHandshake: picks the mechanism.
    pub fn handshake(
        &mut self,
        request: SaslHandshakeRequest,
        _version: i16,
    ) -> (SaslHandshakeResponse, Outcome) {
        let enabled = self.mechanisms.iter().cloned().map(str).collect();
        let response = SaslHandshakeResponse::default().with_mechanisms(enabled);
        if !matches!(self.stage, Stage::Start) {
            self.stage = Stage::Done;
            let code = ResponseError::IllegalSaslState.code();
            return (response.with_error_code(code), Outcome::Failed);
        }
        let wanted = request.mechanism.to_string();
        let stage = match wanted.as_str() {
            m if !self.mechanisms.iter().any(|e| e == m) => None,
            "PLAIN" => Some(Stage::Plain),
            "SCRAM-SHA-256" => Some(Stage::ScramFirst(Hash::Sha256)),
            "SCRAM-SHA-512" => Some(Stage::ScramFirst(Hash::Sha512)),
            _ => None,
        };
        match stage {
            Some(stage) => {
                self.stage = stage;
                (response, Outcome::Continue)
            }
            None => {
                self.stage = Stage::Done;
                let code = ResponseError::UnsupportedSaslMechanism.code();
                (response.with_error_code(code), Outcome::Failed)
            }
        }
    }

    /// SaslAuthenticate: one round of the chosen mechanism.
    pub fn authenticate(
        &mut self,
        request: SaslAuthenticateRequest,
        _version: i16,
    ) -> (SaslAuthenticateResponse, Outcome) {
        let stage = std::mem::replace(&mut self.stage, Stage::Done);
        let step = match stage {
            Stage::Plain => self.plain(&request.auth_bytes),
            Stage::ScramFirst(hash) => self.scram_first(hash, &request.auth_bytes),
            Stage::ScramFinal {
                hash,
                first,
                server_first,
                nonce,
            } => self.scram_final(hash, &first, &server_first, &nonce, &request.auth_bytes),
            Stage::Start | Stage::Done => Err((
                ResponseError::IllegalSaslState,
                "Unexpected SaslAuthenticate request: no SASL mechanism is in progress.".into(),
            )),
        };
        match step {
            Ok((bytes, outcome)) => (
                SaslAuthenticateResponse::default().with_auth_bytes(Bytes::from(bytes)),
                outcome,
            ),
            Err((error, message)) => {
                tracing::info!(%message, "A Kafka client failed SASL authentication.");
                (
                    SaslAuthenticateResponse::default()
                        .with_error_code(error.code())
                        .with_error_message(Some(str(message))),
                    Outcome::Failed,
                )
            }
        }
    }

    fn plain(&self, bytes: &[u8]) -> Step {
        let failed = || {
            (
                ResponseError::SaslAuthenticationFailed,
                "Authentication failed: Invalid username or password".to_string(),
            )
        };
        let text = std::str::from_utf8(bytes).map_err(|_| failed())?;
        let mut parts = text.split('\0');
        let (Some(authzid), Some(user), Some(password), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err((
                ResponseError::SaslAuthenticationFailed,
                "Invalid SASL/PLAIN response: expected 3 tokens".into(),
            ));
        };
        if !authzid.is_empty() && authzid != user {
            return Err((
                ResponseError::SaslAuthenticationFailed,
                "Authentication failed: Client requested an authorization id that is different from username".into(),
            ));
        }
        match self.credentials.users.get(user) {
            Some(u) if scram::equal(u.password.as_bytes(), password.as_bytes()) => {
                Ok((Vec::new(), Outcome::Authenticated(user.to_string())))
            }
            _ => Err(failed()),
        }
    }

    fn scram_first(&mut self, hash: Hash, bytes: &[u8]) -> Step {
        let invalid = |message: String| (ResponseError::SaslAuthenticationFailed, message);
        let text = std::str::from_utf8(bytes)
            .map_err(|_| invalid("Invalid SCRAM client-first message".into()))?;
        let first = scram::parse_client_first(text).map_err(invalid)?;
        let Some(keys) = self.credentials.scram_keys(&first.user, hash) else {
            return Err(scram_failed(hash));
        };
        use base64::Engine;
        let server_nonce = self
            .server_nonce
            .clone()
            .unwrap_or_else(|| base64::engine::general_purpose::STANDARD.encode(random_bytes(18)));
        let nonce = format!("{}{server_nonce}", first.nonce);
        let server_first = scram::server_first(&nonce, keys);
        let reply = server_first.clone().into_bytes();
        self.stage = Stage::ScramFinal {
            hash,
            first,
            server_first,
            nonce,
        };
        Ok((reply, Outcome::Continue))
    }

    fn scram_final(
        &self,
        hash: Hash,
        first: &scram::ClientFirst,
        server_first: &str,
        nonce: &str,
        bytes: &[u8],
    ) -> Step {
        let keys = self
            .credentials
            .scram_keys(&first.user, hash)
            .ok_or_else(|| scram_failed(hash))?;
        let text = std::str::from_utf8(bytes).map_err(|_| scram_failed(hash))?;
        match scram::verify_client_final(hash, keys, first, server_first, nonce, text) {
            Ok(server_final) => Ok((
                server_final.into_bytes(),
                Outcome::Authenticated(first.user.clone()),
            )),
            Err(message) if message.is_empty() => Err(scram_failed(hash)),
            Err(message) => Err((ResponseError::SaslAuthenticationFailed, message)),
        }
    }
}

/// The bytes to send back and the outcome, or the error and its message.
type Step = Result<(Vec<u8>, Outcome), (ResponseError, String)>;

fn scram_failed(hash: Hash) -> (ResponseError, String) {
    (
        ResponseError::SaslAuthenticationFailed,
        format!(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
            hash.mechanism()
        ),
    )
}
