//! A TLS and SASL front for librdkafka's mock cluster, which speaks neither. The tests need a Kafka
//! endpoint that really checks certificates and credentials, and no external service is installed.
//!
//! The gate listens on its own port for each mock broker and forwards Kafka's framed requests to that
//! broker unchanged, after:
//! - a TLS handshake (rustls), optionally requiring a client certificate signed by a given CA;
//! - a SASL exchange it answers itself, as a broker does: `SaslHandshake` v1 and `SaslAuthenticate` v0–v1
//!   with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, checked against one user's password), and
//!   OAUTHBEARER (RFC 7628) with unsecured tokens (`alg: none`, as Kafka's own unsecured validator takes
//!   them) whose `sub` is that user.
//!
//! Responses come back unchanged, with three exceptions:
//! - `ApiVersions` also lists the two SASL requests, when SASL is on.
//! - `Metadata` has each broker's port replaced by the gate's port for that broker, so that clients keep
//!   connecting through the gate.
//! - `FindCoordinator` has its port replaced in the same way.
//!
//! Only the fixed-width port fields change, so no length changes.
//!
//! What the gate saw is counted in [`GateStats`], so tests can tell the client really went through it.

use std::collections::HashMap;
use std::io;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ring::{digest, hmac, pbkdf2};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

const API_VERSIONS: i16 = 18;
const SASL_HANDSHAKE: i16 = 17;
const SASL_AUTHENTICATE: i16 = 36;
const METADATA: i16 = 3;
const FIND_COORDINATOR: i16 = 10;

const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
const ILLEGAL_SASL_STATE: i16 = 34;
const SASL_AUTHENTICATION_FAILED: i16 = 58;

/// SCRAM iterations (Kafka's minimum for SCRAM-SHA-256).
const ITERATIONS: u32 = 4096;

/// The gate's TLS side.
pub struct GateTls {
    /// The server certificate chain and its key, PEM.
    pub cert_pem: String,
    pub key_pem: String,
    /// When set, clients must present a certificate signed by this CA (PEM).
    pub client_ca_pem: Option<String>,
}

/// The one user SASL accepts.
#[derive(Clone)]
pub struct SaslUser {
    pub name: String,
    pub password: String,
}

/// What the gate did, for assertions.
#[derive(Default)]
pub struct GateStats {
    /// TLS handshakes completed.
    pub tls_sessions: AtomicUsize,
    /// Of those, the ones where the client presented a certificate.
    pub client_certificates: AtomicUsize,
    /// TLS handshakes that failed.
    pub tls_failures: AtomicUsize,
    /// (mechanism, user) of each successful SASL authentication.
    pub authenticated: Mutex<Vec<(String, String)>>,
    /// SASL authentications refused.
    pub refused: AtomicUsize,
    /// Requests forwarded to the mock cluster.
    pub forwarded: AtomicUsize,
}

impl GateStats {
    pub fn authenticated(&self) -> Vec<(String, String)> {
        self.authenticated.lock().unwrap().clone()
    }
}

/// A running gate; dropping it closes its listeners and connections.
pub struct KafkaGate {
    /// The gate's addresses, one per mock broker, as a `bootstrap.servers` value.
    pub bootstrap: String,
    pub stats: Arc<GateStats>,
    _listeners: JoinSet<()>,
}

struct Settings {
    tls: Option<TlsAcceptor>,
    sasl: Option<SaslUser>,
    /// Mock broker port → gate port.
    ports: HashMap<i32, i32>,
    stats: Arc<GateStats>,
}

impl KafkaGate {
    /// Starts a gate in front of the brokers of `upstream` (a mock cluster's `bootstrap_servers()`).
    pub async fn start(upstream: &str, tls: Option<GateTls>, sasl: Option<SaslUser>) -> KafkaGate {
        let brokers: Vec<String> = upstream.split(',').map(str::to_string).collect();
        let mut listeners = Vec::new();
        let mut ports = HashMap::new();
        for broker in &brokers {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let gate_port = listener.local_addr().unwrap().port() as i32;
            let broker_port: i32 = broker.rsplit(':').next().unwrap().parse().unwrap();
            ports.insert(broker_port, gate_port);
            listeners.push((listener, broker.clone()));
        }
        let bootstrap = listeners
            .iter()
            .map(|(l, _)| format!("127.0.0.1:{}", l.local_addr().unwrap().port()))
            .collect::<Vec<_>>()
            .join(",");
        let stats = Arc::new(GateStats::default());
        let settings = Arc::new(Settings {
            tls: tls.map(acceptor),
            sasl,
            ports,
            stats: stats.clone(),
        });
        let mut set = JoinSet::new();
        for (listener, broker) in listeners {
            set.spawn(accept_loop(listener, broker, settings.clone()));
        }
        KafkaGate {
            bootstrap,
            stats,
            _listeners: set,
        }
    }
}

fn acceptor(tls: GateTls) -> TlsAcceptor {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(tls.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(tls.key_pem.as_bytes()).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let config = match tls.client_ca_pem {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca.as_bytes()) {
                roots.add(cert.unwrap()).unwrap();
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder
                .with_client_cert_verifier(verifier)
                .with_single_cert(chain, key)
        }
        None => builder.with_no_client_auth().with_single_cert(chain, key),
    }
    .unwrap();
    TlsAcceptor::from(Arc::new(config))
}

async fn accept_loop(listener: TcpListener, broker: String, settings: Arc<Settings>) {
    // Connections live in this set: they end with the listener.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let settings = settings.clone();
                let broker = broker.clone();
                connections.spawn(async move {
                    let _ = connection(stream, &broker, &settings).await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn connection(stream: TcpStream, broker: &str, settings: &Settings) -> io::Result<()> {
    let _ = stream.set_nodelay(true);
    match &settings.tls {
        None => serve(stream, broker, settings).await,
        Some(acceptor) => {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(e) => {
                    settings.stats.tls_failures.fetch_add(1, Ordering::SeqCst);
                    return Err(e);
                }
            };
            settings.stats.tls_sessions.fetch_add(1, Ordering::SeqCst);
            if tls
                .get_ref()
                .1
                .peer_certificates()
                .is_some_and(|c| !c.is_empty())
            {
                settings
                    .stats
                    .client_certificates
                    .fetch_add(1, Ordering::SeqCst);
            }
            serve(tls, broker, settings).await
        }
    }
}

async fn serve<S>(mut client: S, broker: &str, settings: &Settings) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let mut upstream = TcpStream::connect(broker).await?;
    let _ = upstream.set_nodelay(true);
    if let Some(user) = &settings.sasl {
        // Until authenticated, requests are answered one at a time, as a broker does.
        let mut auth = Auth::Start;
        loop {
            let Some(request) = read_frame(&mut client).await? else {
                return Ok(());
            };
            let header = RequestHeader::parse(&request)?;
            match header.api_key {
                API_VERSIONS => {
                    write_frame(&mut upstream, &request).await?;
                    let response = read_frame(&mut upstream)
                        .await?
                        .ok_or_else(|| broken("the mock broker closed the connection"))?;
                    write_frame(
                        &mut client,
                        &with_sasl_versions(response, header.api_version)?,
                    )
                    .await?;
                }
                SASL_HANDSHAKE => {
                    let mechanism = Reader::new(&request[header.body..]).string()?;
                    let known = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];
                    let error = if known.contains(&mechanism.as_str()) {
                        auth = Auth::Mechanism(mechanism);
                        0
                    } else {
                        UNSUPPORTED_SASL_MECHANISM
                    };
                    let mut body = Vec::new();
                    body.extend_from_slice(&error.to_be_bytes());
                    body.extend_from_slice(&(known.len() as i32).to_be_bytes());
                    for m in known {
                        put_string(&mut body, m);
                    }
                    write_frame(&mut client, &response(header.correlation_id, &body)).await?;
                    if error != 0 {
                        return Ok(());
                    }
                }
                SASL_AUTHENTICATE => {
                    let token = Reader::new(&request[header.body..]).bytes()?;
                    let (step, reply) = auth.step(&token, user);
                    let (error, message) = match &step {
                        Auth::Failed(message) => {
                            (SASL_AUTHENTICATION_FAILED, Some(message.clone()))
                        }
                        Auth::Start => (ILLEGAL_SASL_STATE, Some("no SaslHandshake first".into())),
                        _ => (0, None),
                    };
                    let mut body = Vec::new();
                    body.extend_from_slice(&error.to_be_bytes());
                    match &message {
                        Some(m) => put_string(&mut body, m),
                        None => body.extend_from_slice(&(-1i16).to_be_bytes()),
                    }
                    body.extend_from_slice(&(reply.len() as i32).to_be_bytes());
                    body.extend_from_slice(&reply);
                    if header.api_version >= 1 {
                        body.extend_from_slice(&0i64.to_be_bytes()); // session_lifetime_ms
                    }
                    write_frame(&mut client, &response(header.correlation_id, &body)).await?;
                    match step {
                        Auth::Done(mechanism, name) => {
                            settings
                                .stats
                                .authenticated
                                .lock()
                                .unwrap()
                                .push((mechanism, name));
                            break;
                        }
                        Auth::Failed(_) | Auth::Start => {
                            settings.stats.refused.fetch_add(1, Ordering::SeqCst);
                            return Ok(());
                        }
                        next => auth = next,
                    }
                }
                // Anything else before authentication: the broker closes the connection.
                _ => return Ok(()),
            }
        }
    }
    pump(client, upstream, settings).await
}

/// Forwards requests and responses until either side closes, rewriting ports in responses.
async fn pump<S>(client: S, upstream: TcpStream, settings: &Settings) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (mut client_r, mut client_w) = tokio::io::split(client);
    let (mut up_r, mut up_w) = upstream.into_split();
    let pending: Mutex<HashMap<i32, (i16, i16)>> = Mutex::new(HashMap::new());
    let requests = async {
        while let Some(request) = read_frame(&mut client_r).await? {
            let h = RequestHeader::parse(&request)?;
            pending
                .lock()
                .unwrap()
                .insert(h.correlation_id, (h.api_key, h.api_version));
            write_frame(&mut up_w, &request).await?;
            settings.stats.forwarded.fetch_add(1, Ordering::SeqCst);
        }
        io::Result::Ok(())
    };
    let responses = async {
        while let Some(mut response) = read_frame(&mut up_r).await? {
            let correlation = Reader::new(&response).i32()?;
            let request = pending.lock().unwrap().remove(&correlation);
            if let Some((key, version)) = request {
                rewrite_ports(&mut response, key, version, &settings.ports)?;
            }
            write_frame(&mut client_w, &response).await?;
        }
        io::Result::Ok(())
    };
    tokio::select! {
        r = requests => r,
        r = responses => r,
    }
}

// ----- SASL ----------------------------------------------------------------------------------------------

enum Auth {
    Start,
    Mechanism(String),
    /// SCRAM after the server-first message: (mechanism, user, auth message so far, full nonce, salt).
    Scram {
        mechanism: String,
        user: String,
        first: String,
        nonce: String,
        salt: Vec<u8>,
    },
    Done(String, String),
    Failed(String),
}

impl Auth {
    /// Takes one client token; returns the next state and the server's token.
    fn step(&self, token: &[u8], user: &SaslUser) -> (Auth, Vec<u8>) {
        let text = String::from_utf8_lossy(token).into_owned();
        match self {
            Auth::Mechanism(m) if m == "PLAIN" => {
                let parts: Vec<&str> = text.split('\0').collect();
                match parts.as_slice() {
                    [_authzid, name, password]
                        if *name == user.name && *password == user.password =>
                    {
                        (Auth::Done(m.clone(), name.to_string()), Vec::new())
                    }
                    _ => (
                        Auth::Failed("Authentication failed: Invalid username or password".into()),
                        Vec::new(),
                    ),
                }
            }
            Auth::Mechanism(m) if m == "OAUTHBEARER" => {
                // "n,,\x01auth=Bearer <token>\x01\x01"; an unsecured token is header.payload. (no signature).
                let subject = text
                    .split('\x01')
                    .find_map(|kv| kv.strip_prefix("auth=Bearer "))
                    .and_then(|token| token.split('.').nth(1))
                    .and_then(|payload| {
                        base64::engine::general_purpose::URL_SAFE_NO_PAD
                            .decode(payload.trim_end_matches('='))
                            .ok()
                    })
                    .and_then(|json| serde_json::from_slice::<serde_json::Value>(&json).ok())
                    .and_then(|claims| claims["sub"].as_str().map(str::to_string));
                match subject {
                    Some(sub) if sub == user.name => (Auth::Done(m.clone(), sub), Vec::new()),
                    _ => (
                        Auth::Failed("Authentication failed: invalid token".into()),
                        Vec::new(),
                    ),
                }
            }
            Auth::Mechanism(m) => {
                // client-first: gs2 header "n,," (or "n,a=authzid,"), then "n=user,r=nonce".
                let Some(bare) = text.splitn(3, ',').nth(2) else {
                    return (
                        Auth::Failed("Invalid SCRAM client first message".into()),
                        Vec::new(),
                    );
                };
                let field = |k: &str| {
                    bare.split(',')
                        .find_map(|f| f.strip_prefix(k))
                        .map(|v| v.replace("=2C", ",").replace("=3D", "="))
                };
                let (Some(name), Some(client_nonce)) = (field("n="), field("r=")) else {
                    return (
                        Auth::Failed("Invalid SCRAM client first message".into()),
                        Vec::new(),
                    );
                };
                if name != user.name {
                    return (
                        Auth::Failed(format!("Authentication failed during authentication due to invalid credentials with SASL mechanism {m}")),
                        Vec::new(),
                    );
                }
                let nonce = format!("{client_nonce}{}", uuid::Uuid::new_v4().simple());
                let salt = uuid::Uuid::new_v4().as_bytes().to_vec();
                let server_first = format!("r={nonce},s={},i={ITERATIONS}", B64.encode(&salt));
                let reply = server_first.clone().into_bytes();
                (
                    Auth::Scram {
                        mechanism: m.clone(),
                        user: name,
                        first: format!("{bare},{server_first}"),
                        nonce,
                        salt,
                    },
                    reply,
                )
            }
            Auth::Scram {
                mechanism,
                user: name,
                first,
                nonce,
                salt,
            } => {
                let failed = || {
                    (
                        Auth::Failed(format!("Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}")),
                        Vec::new(),
                    )
                };
                let Some((without_proof, proof)) = text.rsplit_once(",p=") else {
                    return failed();
                };
                if !without_proof.split(',').any(|f| f == format!("r={nonce}")) {
                    return failed();
                }
                let Ok(proof) = B64.decode(proof) else {
                    return failed();
                };
                let (mac, kdf, hash) = if mechanism == "SCRAM-SHA-512" {
                    (
                        hmac::HMAC_SHA512,
                        pbkdf2::PBKDF2_HMAC_SHA512,
                        &digest::SHA512,
                    )
                } else {
                    (
                        hmac::HMAC_SHA256,
                        pbkdf2::PBKDF2_HMAC_SHA256,
                        &digest::SHA256,
                    )
                };
                let mut salted = vec![0u8; hash.output_len()];
                pbkdf2::derive(
                    kdf,
                    NonZeroU32::new(ITERATIONS).unwrap(),
                    salt,
                    user.password.as_bytes(),
                    &mut salted,
                );
                let salted = hmac::Key::new(mac, &salted);
                let client_key = hmac::sign(&salted, b"Client Key");
                let stored_key = digest::digest(hash, client_key.as_ref());
                let auth_message = format!("{first},{without_proof}");
                let signature = hmac::sign(
                    &hmac::Key::new(mac, stored_key.as_ref()),
                    auth_message.as_bytes(),
                );
                if proof.len() != signature.as_ref().len() {
                    return failed();
                }
                let recovered: Vec<u8> = proof
                    .iter()
                    .zip(signature.as_ref())
                    .map(|(a, b)| a ^ b)
                    .collect();
                if digest::digest(hash, &recovered).as_ref() != stored_key.as_ref() {
                    return failed();
                }
                let server_key = hmac::sign(&salted, b"Server Key");
                let server_signature = hmac::sign(
                    &hmac::Key::new(mac, server_key.as_ref()),
                    auth_message.as_bytes(),
                );
                (
                    Auth::Done(mechanism.clone(), name.clone()),
                    format!("v={}", B64.encode(server_signature.as_ref())).into_bytes(),
                )
            }
            Auth::Start | Auth::Done(..) | Auth::Failed(_) => (Auth::Start, Vec::new()),
        }
    }
}

// ----- the wire ------------------------------------------------------------------------------------------

fn broken(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<Option<Vec<u8>>> {
    let mut size = [0u8; 4];
    match r.read_exact(&mut size).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let size = i32::from_be_bytes(size);
    if !(0..=128 << 20).contains(&size) {
        return Err(broken("bad frame size"));
    }
    let mut frame = vec![0u8; size as usize];
    r.read_exact(&mut frame).await?;
    Ok(Some(frame))
}

async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, frame: &[u8]) -> io::Result<()> {
    w.write_all(&(frame.len() as i32).to_be_bytes()).await?;
    w.write_all(frame).await?;
    w.flush().await
}

/// A response with header v0 (the SASL responses' header version).
fn response(correlation_id: i32, body: &[u8]) -> Vec<u8> {
    let mut out = correlation_id.to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

struct RequestHeader {
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    /// Where the body starts (after client_id; the SASL requests have header v1, with no tagged fields).
    body: usize,
}

impl RequestHeader {
    fn parse(frame: &[u8]) -> io::Result<RequestHeader> {
        let mut r = Reader::new(frame);
        let api_key = r.i16()?;
        let api_version = r.i16()?;
        let correlation_id = r.i32()?;
        r.nullable_string()?;
        Ok(RequestHeader {
            api_key,
            api_version,
            correlation_id,
            body: r.pos,
        })
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0 }
    }
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or_else(|| broken("short frame"))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn i16(&mut self) -> io::Result<i16> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> io::Result<i32> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn uvarint(&mut self) -> io::Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(broken("bad varint"))
    }
    fn nullable_string(&mut self) -> io::Result<Option<String>> {
        let n = self.i16()?;
        if n < 0 {
            return Ok(None);
        }
        Ok(Some(
            String::from_utf8_lossy(self.take(n as usize)?).into_owned(),
        ))
    }
    fn string(&mut self) -> io::Result<String> {
        self.nullable_string()?.ok_or_else(|| broken("null string"))
    }
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let n = self.i32()?;
        Ok(self.take(n.max(0) as usize)?.to_vec())
    }
    /// A string (compact when `flexible`), skipped.
    fn skip_string(&mut self, flexible: bool) -> io::Result<()> {
        if flexible {
            let n = self.uvarint()?;
            self.take(n.saturating_sub(1) as usize)?;
        } else {
            let n = self.i16()?;
            self.take(n.max(0) as usize)?;
        }
        Ok(())
    }
    fn array_len(&mut self, flexible: bool) -> io::Result<usize> {
        Ok(if flexible {
            self.uvarint()?.saturating_sub(1) as usize
        } else {
            self.i32()?.max(0) as usize
        })
    }
    fn skip_tags(&mut self) -> io::Result<()> {
        for _ in 0..self.uvarint()? {
            self.uvarint()?;
            let size = self.uvarint()?;
            self.take(size as usize)?;
        }
        Ok(())
    }
}

/// Adds SaslHandshake 0–1 and SaslAuthenticate 0–1 to an ApiVersions response (header v0 always).
fn with_sasl_versions(response: Vec<u8>, version: i16) -> io::Result<Vec<u8>> {
    let flexible = version >= 3;
    let mut r = Reader::new(&response);
    r.i32()?; // correlation id
    if r.i16()? != 0 {
        return Ok(response); // an error (such as an unsupported version): passed on as it is
    }
    let count_at = r.pos;
    let count = r.array_len(flexible)?;
    let entries_at = r.pos;
    for _ in 0..count {
        r.take(6)?;
        if flexible {
            r.skip_tags()?;
        }
    }
    let entries_end = r.pos;
    let mut out = response[..count_at].to_vec();
    if flexible {
        let mut n = count as u64 + 3; // compact arrays count N + 1
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    } else {
        out.extend_from_slice(&(count as i32 + 2).to_be_bytes());
    }
    out.extend_from_slice(&response[entries_at..entries_end]);
    for key in [SASL_HANDSHAKE, SASL_AUTHENTICATE] {
        out.extend_from_slice(&key.to_be_bytes());
        out.extend_from_slice(&0i16.to_be_bytes());
        out.extend_from_slice(&1i16.to_be_bytes());
        if flexible {
            out.push(0);
        }
    }
    out.extend_from_slice(&response[entries_end..]);
    Ok(out)
}

/// Replaces mock broker ports with the gate's in Metadata and FindCoordinator (v0–v3) responses.
fn rewrite_ports(
    response: &mut [u8],
    api_key: i16,
    version: i16,
    ports: &HashMap<i32, i32>,
) -> io::Result<()> {
    let mut at = Vec::new();
    {
        let mut r = Reader::new(response);
        r.i32()?; // correlation id
        match api_key {
            METADATA => {
                let flexible = version >= 9;
                if flexible {
                    r.skip_tags()?; // response header v1
                }
                if version >= 3 {
                    r.i32()?; // throttle_time_ms
                }
                for _ in 0..r.array_len(flexible)? {
                    r.i32()?; // node_id
                    r.skip_string(flexible)?; // host
                    at.push(r.pos);
                    r.i32()?; // port
                    if version >= 1 {
                        r.skip_string(flexible)?; // rack (nullable: the same on the wire)
                    }
                    if flexible {
                        r.skip_tags()?;
                    }
                }
            }
            FIND_COORDINATOR if version <= 3 => {
                let flexible = version >= 3;
                if flexible {
                    r.skip_tags()?;
                }
                if version >= 1 {
                    r.i32()?; // throttle_time_ms
                }
                r.i16()?; // error_code
                if version >= 1 {
                    r.skip_string(flexible)?; // error_message
                }
                r.i32()?; // node_id
                r.skip_string(flexible)?; // host
                at.push(r.pos);
            }
            _ => return Ok(()),
        }
    }
    for pos in at {
        let port = i32::from_be_bytes(response[pos..pos + 4].try_into().unwrap());
        if let Some(gate) = ports.get(&port) {
            response[pos..pos + 4].copy_from_slice(&gate.to_be_bytes());
        }
    }
    Ok(())
}
