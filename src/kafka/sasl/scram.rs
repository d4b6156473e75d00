//! The server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677): the keys kept per user, and
//! the two rounds of the exchange.

use std::num::NonZeroU32;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ring::{digest, hmac, pbkdf2};

/// The iteration count of the keys derived when the credentials are loaded.
pub const ITERATIONS: u32 = 4096;

/// A SCRAM hash function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    /// SCRAM-SHA-256.
    Sha256,
    /// SCRAM-SHA-512.
    Sha512,
}

impl Hash {
    /// The SASL mechanism name.
    pub fn mechanism(self) -> &'static str {
        match self {
            Hash::Sha256 => "SCRAM-SHA-256",
            Hash::Sha512 => "SCRAM-SHA-512",
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            Hash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            Hash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn hmac(self) -> hmac::Algorithm {
        match self {
            Hash::Sha256 => hmac::HMAC_SHA256,
            Hash::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Hash::Sha256 => &digest::SHA256,
            Hash::Sha512 => &digest::SHA512,
        }
    }

    fn len(self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha512 => 64,
        }
    }

    /// HMAC(key, data).
    pub fn hmac_of(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        hmac::sign(&hmac::Key::new(self.hmac(), key), data)
            .as_ref()
            .to_vec()
    }

    /// H(data).
    pub fn digest_of(self, data: &[u8]) -> Vec<u8> {
        digest::digest(self.digest(), data).as_ref().to_vec()
    }

    /// Hi(password, salt, iterations): the salted password.
    pub fn salted_password(self, password: &str, salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut out = vec![0; self.len()];
        let iterations = NonZeroU32::new(iterations.max(1)).expect("at least one iteration");
        pbkdf2::derive(
            self.pbkdf2(),
            iterations,
            salt,
            password.as_bytes(),
            &mut out,
        );
        out
    }
}

/// What the server keeps of a password for one hash: never the password itself.
#[derive(Clone, Debug)]
pub struct Keys {
    /// The salt sent to clients.
    pub salt: Vec<u8>,
    /// The PBKDF2 iteration count sent to clients.
    pub iterations: u32,
    /// H(ClientKey): checks the client's proof.
    pub stored_key: Vec<u8>,
    /// Signs the server's final message.
    pub server_key: Vec<u8>,
}

impl Keys {
    /// Derives the stored and server keys of `password`.
    pub fn derive(hash: Hash, password: &str, salt: &[u8], iterations: u32) -> Keys {
        let salted = hash.salted_password(password, salt, iterations);
        let client_key = hash.hmac_of(&salted, b"Client Key");
        Keys {
            salt: salt.to_vec(),
            iterations,
            stored_key: hash.digest_of(&client_key),
            server_key: hash.hmac_of(&salted, b"Server Key"),
        }
    }
}

/// Compares two byte strings in time that depends only on their lengths.
pub fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The client's first message, parsed.
#[derive(Debug, PartialEq, Eq)]
pub struct ClientFirst {
    /// The GS2 header (`n,,`), echoed base64-encoded in the client's final message.
    pub gs2_header: String,
    /// The user name, `=2C` and `=3D` decoded.
    pub user: String,
    pub nonce: String,
    /// The message without its GS2 header (part of the AuthMessage).
    pub bare: String,
}

/// Reads a SCRAM attribute `name=value`.
fn attribute(part: Option<&str>, name: char) -> Result<&str, String> {
    part.and_then(|p| p.strip_prefix(name))
        .and_then(|p| p.strip_prefix('='))
        .ok_or_else(|| format!("Invalid SCRAM message: the attribute '{name}' is missing"))
}

/// Parses `client-first-message` (RFC 5802 section 7).
pub fn parse_client_first(message: &str) -> Result<ClientFirst, String> {
    let mut parts = message.splitn(3, ',');
    let flag = parts.next().unwrap_or_default();
    let authzid = parts.next().ok_or("Invalid SCRAM client-first message")?;
    let bare = parts.next().ok_or("Invalid SCRAM client-first message")?;
    if flag != "n" && flag != "y" {
        return Err("Channel binding is not supported by this server".into());
    }
    let mut attrs = bare.split(',');
    let user = attribute(attrs.next(), 'n')?
        .replace("=2C", ",")
        .replace("=3D", "=");
    let nonce = attribute(attrs.next(), 'r')?.to_string();
    if attrs.any(|a| a.starts_with("tokenauth=")) {
        return Err("Delegation tokens are not supported by this server".into());
    }
    if !authzid.is_empty() && authzid.strip_prefix("a=") != Some(user.as_str()) {
        return Err("Authorization id does not match the user name".into());
    }
    if user.is_empty() || nonce.is_empty() {
        return Err("Invalid SCRAM client-first message".into());
    }
    Ok(ClientFirst {
        gs2_header: format!("{flag},{authzid},"),
        user,
        nonce,
        bare: bare.to_string(),
    })
}

/// The server's first message: the combined nonce, the salt and the iteration count.
pub fn server_first(nonce: &str, keys: &Keys) -> String {
    format!(
        "r={nonce},s={},i={}",
        BASE64.encode(&keys.salt),
        keys.iterations
    )
}

/// Checks `client-final-message` and returns the server's final message (`v=<signature>`).
pub fn verify_client_final(
    hash: Hash,
    keys: &Keys,
    first: &ClientFirst,
    server_first: &str,
    nonce: &str,
    message: &str,
) -> Result<String, String> {
    let (without_proof, proof) = message
        .rsplit_once(",p=")
        .ok_or("Invalid SCRAM client-final message: no proof")?;
    let mut attrs = without_proof.split(',');
    let binding = attribute(attrs.next(), 'c')?;
    let final_nonce = attribute(attrs.next(), 'r')?;
    if BASE64.decode(binding).ok().as_deref() != Some(first.gs2_header.as_bytes()) {
        return Err("Invalid SCRAM client-final message: channel binding mismatch".into());
    }
    if final_nonce != nonce {
        return Err("Invalid SCRAM client-final message: nonce mismatch".into());
    }
    let proof = BASE64
        .decode(proof)
        .map_err(|_| "Invalid SCRAM client-final message: the proof is not base64".to_string())?;
    let auth_message = format!("{},{server_first},{without_proof}", first.bare);
    let client_signature = hash.hmac_of(&keys.stored_key, auth_message.as_bytes());
    if proof.len() != client_signature.len() {
        return Err(String::new());
    }
    let client_key: Vec<u8> = proof
        .iter()
        .zip(&client_signature)
        .map(|(p, s)| p ^ s)
        .collect();
    if !equal(&hash.digest_of(&client_key), &keys.stored_key) {
        return Err(String::new());
    }
    let server_signature = hash.hmac_of(&keys.server_key, auth_message.as_bytes());
    Ok(format!("v={}", BASE64.encode(server_signature)))
}
