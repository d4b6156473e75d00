use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::StrBytes;

use super::*;

fn all() -> Vec<String> {
    MECHANISMS.iter().map(|m| m.to_string()).collect()
}

fn credentials() -> Arc<Credentials> {
    let mut c = Credentials::default();
    c.add("alice", "alice-secret", None);
    c.add("bob", "pa=ss,word", None);
    Arc::new(c)
}

fn handshake(session: &mut SaslSession, mechanism: &str) -> (i16, Outcome) {
    let request =
        SaslHandshakeRequest::default().with_mechanism(StrBytes::from_string(mechanism.into()));
    let (response, outcome) = session.handshake(request, 1);
    (response.error_code, outcome)
}

fn send(session: &mut SaslSession, bytes: &[u8]) -> (i16, Option<String>, Vec<u8>, Outcome) {
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(bytes.to_vec()));
    let (response, outcome) = session.authenticate(request, 2);
    (
        response.error_code,
        response.error_message.map(|m| m.to_string()),
        response.auth_bytes.to_vec(),
        outcome,
    )
}

#[test]
fn plain_accepts_the_right_password_and_refuses_a_wrong_one() {
    let mut ok = SaslSession::new(credentials(), all());
    assert_eq!(handshake(&mut ok, "PLAIN"), (0, Outcome::Continue));
    let (code, _, _, outcome) = send(&mut ok, b"\0alice\0alice-secret");
    assert_eq!(code, 0);
    assert_eq!(outcome, Outcome::Authenticated("alice".into()));

    let mut wrong = SaslSession::new(credentials(), all());
    handshake(&mut wrong, "PLAIN");
    let (code, message, _, outcome) = send(&mut wrong, b"\0alice\0guess");
    assert_eq!(code, ResponseError::SaslAuthenticationFailed.code());
    assert_eq!(
        message.as_deref(),
        Some("Authentication failed: Invalid username or password")
    );
    assert_eq!(outcome, Outcome::Failed);
    // Nothing more is accepted after a failure.
    let (code, _, _, outcome) = send(&mut wrong, b"\0alice\0alice-secret");
    assert_eq!(code, ResponseError::IllegalSaslState.code());
    assert_eq!(outcome, Outcome::Failed);

    let mut unknown = SaslSession::new(credentials(), all());
    handshake(&mut unknown, "PLAIN");
    assert_eq!(send(&mut unknown, b"\0mallory\0x").3, Outcome::Failed);
}

#[test]
fn an_unknown_or_disabled_mechanism_is_refused_with_the_enabled_list() {
    let mut session = SaslSession::new(credentials(), vec!["SCRAM-SHA-512".into()]);
    let request =
        SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str("PLAIN"));
    let (response, outcome) = session.handshake(request, 1);
    assert_eq!(
        response.error_code,
        ResponseError::UnsupportedSaslMechanism.code()
    );
    assert_eq!(
        response.mechanisms,
        vec![StrBytes::from_static_str("SCRAM-SHA-512")]
    );
    assert_eq!(outcome, Outcome::Failed);
    let mut session = SaslSession::new(credentials(), all());
    assert_eq!(
        handshake(&mut session, "GSSAPI").0,
        ResponseError::UnsupportedSaslMechanism.code()
    );
    // Authenticating before any handshake is out of order.
    let mut early = SaslSession::new(credentials(), all());
    assert_eq!(
        send(&mut early, b"\0alice\0alice-secret").0,
        ResponseError::IllegalSaslState.code()
    );
}

/// A SCRAM client, as RFC 5802 describes it.
struct Client {
    hash: Hash,
    password: String,
    nonce: String,
    first_bare: String,
}

impl Client {
    fn new(hash: Hash, user: &str, password: &str, nonce: &str) -> Client {
        let escaped = user.replace('=', "=3D").replace(',', "=2C");
        Client {
            hash,
            password: password.into(),
            nonce: nonce.into(),
            first_bare: format!("n={escaped},r={nonce}"),
        }
    }

    fn first(&self) -> String {
        format!("n,,{}", self.first_bare)
    }

    /// The client-final message and the server signature the client expects.
    fn last(&self, server_first: &str) -> (String, String) {
        let mut nonce = "";
        let mut salt = Vec::new();
        let mut iterations = 0;
        for attr in server_first.split(',') {
            match attr.split_at(2) {
                ("r=", v) => nonce = v,
                ("s=", v) => salt = BASE64.decode(v).unwrap(),
                ("i=", v) => iterations = v.parse().unwrap(),
                _ => {}
            }
        }
        assert!(nonce.starts_with(&self.nonce), "{server_first}");
        let h = self.hash;
        let salted = h.salted_password(&self.password, &salt, iterations);
        let client_key = h.hmac_of(&salted, b"Client Key");
        let stored_key = h.digest_of(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth = format!("{},{server_first},{without_proof}", self.first_bare);
        let signature = h.hmac_of(&stored_key, auth.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = h.hmac_of(&salted, b"Server Key");
        let expected = format!(
            "v={}",
            BASE64.encode(h.hmac_of(&server_key, auth.as_bytes()))
        );
        (
            format!("{without_proof},p={}", BASE64.encode(proof)),
            expected,
        )
    }
}

fn scram_exchange(hash: Hash, user: &str, password: &str) -> (Outcome, Option<String>) {
    let mut session = SaslSession::new(credentials(), all());
    assert_eq!(
        handshake(&mut session, hash.mechanism()),
        (0, Outcome::Continue)
    );
    let client = Client::new(hash, user, password, "fyko+d2lbbFgONRv9qkxdawL");
    let (code, _, server_first, outcome) = send(&mut session, client.first().as_bytes());
    assert_eq!((code, outcome), (0, Outcome::Continue));
    let server_first = String::from_utf8(server_first).unwrap();
    assert!(server_first.contains(",i=4096"), "{server_first}");
    let (last, expected) = client.last(&server_first);
    let (code, message, server_final, outcome) = send(&mut session, last.as_bytes());
    if code == 0 {
        assert_eq!(String::from_utf8(server_final).unwrap(), expected);
    }
    (outcome, message)
}

#[test]
fn a_full_scram_sha_256_and_512_exchange_authenticates() {
    for hash in [Hash::Sha256, Hash::Sha512] {
        assert_eq!(
            scram_exchange(hash, "alice", "alice-secret").0,
            Outcome::Authenticated("alice".into())
        );
        // A user name with the characters SCRAM escapes.
        let mut c = Credentials::default();
        c.add("we,ird=name", "pw", None);
        let mut session = SaslSession::new(Arc::new(c), all());
        handshake(&mut session, hash.mechanism());
        let client = Client::new(hash, "we,ird=name", "pw", "abc");
        let (_, _, server_first, _) = send(&mut session, client.first().as_bytes());
        let (last, _) = client.last(&String::from_utf8(server_first).unwrap());
        assert_eq!(
            send(&mut session, last.as_bytes()).3,
            Outcome::Authenticated("we,ird=name".into())
        );
    }
}

#[test]
fn scram_with_a_wrong_password_fails_with_a_message() {
    for hash in [Hash::Sha256, Hash::Sha512] {
        let (outcome, message) = scram_exchange(hash, "alice", "not-it");
        assert_eq!(outcome, Outcome::Failed);
        assert_eq!(
            message.unwrap(),
            format!("Authentication failed during authentication due to invalid credentials with SASL mechanism {}", hash.mechanism())
        );
    }
    let mut session = SaslSession::new(credentials(), all());
    handshake(&mut session, "SCRAM-SHA-256");
    let (code, _, _, outcome) = send(&mut session, b"n,,n=nobody,r=abc");
    assert_eq!(code, ResponseError::SaslAuthenticationFailed.code());
    assert_eq!(outcome, Outcome::Failed);
}

#[test]
fn rfc_7677_test_vector() {
    let mut c = Credentials::default();
    let salt = BASE64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
    c.add("user", "pencil", Some(&salt));
    let mut session =
        SaslSession::new(Arc::new(c), all()).with_server_nonce("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
    handshake(&mut session, "SCRAM-SHA-256");
    let (_, _, server_first, _) = send(&mut session, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
    assert_eq!(
        String::from_utf8(server_first).unwrap(),
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    );
    let (code, _, server_final, outcome) = send(
        &mut session,
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    );
    assert_eq!(code, 0);
    assert_eq!(
        String::from_utf8(server_final).unwrap(),
        "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    );
    assert_eq!(outcome, Outcome::Authenticated("user".into()));
}

#[test]
fn the_credentials_file_is_the_rest_listeners_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("users.properties");
    std::fs::write(&path, "# users\nalice=alice-secret\nbob: other\n").unwrap();
    let loaded = Arc::new(Credentials::load(&path).unwrap());
    let mut session = SaslSession::new(loaded, all());
    handshake(&mut session, "PLAIN");
    assert_eq!(
        send(&mut session, b"\0bob\0other").3,
        Outcome::Authenticated("bob".into())
    );
    std::fs::write(&path, "# nobody\n").unwrap();
    let err = Credentials::load(&path).unwrap_err();
    assert!(
        err.contains("holds no users") && err.contains("users.properties"),
        "{err}"
    );
    let err = Credentials::load(&dir.path().join("missing")).unwrap_err();
    assert!(err.contains("missing"), "{err}");
}
