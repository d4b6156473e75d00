//! The MQTT connection both connectors use: settings from the connector keys, TLS through rustls with
//! the ring provider, and one background thread per task that drives rumqttc's event loop (MQTT 3.1.1
//! or 5), reconnects with backoff, and hands the task the events it needs in order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use rumqttc::{QoS, TlsConfiguration, Transport};

use super::keys;
use crate::connectors::{Props, TaskError};

/// How many requests (publishes, acknowledgments) wait for the event loop before `try_*` refuses more.
pub const REQUEST_CAPACITY: usize = 4096;
/// How long an acknowledgment waits for room in the request queue.
const QUEUE_WAIT: Duration = Duration::from_secs(10);
/// The longest pause between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A broker address from `mqtt.server.uri`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub uri: String,
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

/// A refused setting: the key and the message.
pub type KeyError = (String, String);

fn key_error(key: &str, message: impl Into<String>) -> KeyError {
    (key.to_string(), message.into())
}

/// Parses one broker URI: `tcp://`, `mqtt://` (plain) or `ssl://`, `mqtts://` (TLS), with a port or the
/// scheme's default (1883, 8883).
pub fn parse_server(uri: &str) -> Result<Server, String> {
    let uri = uri.trim();
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| format!("'{uri}' has no scheme: use tcp://, ssl://, mqtt:// or mqtts://"))?;
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "tcp" | "mqtt" => false,
        "ssl" | "mqtts" => true,
        other => {
            return Err(format!(
                "'{uri}' has the scheme '{other}': use tcp://, ssl://, mqtt:// or mqtts://"
            ))
        }
    };
    let authority = rest.trim_end_matches('/');
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("'{uri}' has an invalid port '{p}'"))?,
        ),
        _ => (authority, if tls { 8883 } else { 1883 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host.contains('/') {
        return Err(format!("'{uri}' has no host"));
    }
    Ok(Server {
        uri: uri.to_string(),
        host: host.to_string(),
        port,
        tls,
    })
}

/// The comma-separated list under `key`, blanks dropped.
pub fn list(config: &Props, key: &str) -> Vec<String> {
    config
        .get(key)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The QoS of `mqtt.qos` (0 when absent).
pub fn qos(config: &Props) -> Result<QoS, KeyError> {
    match config.get(keys::QOS).map(|s| s.trim()).unwrap_or("0") {
        "0" => Ok(QoS::AtMostOnce),
        "1" => Ok(QoS::AtLeastOnce),
        "2" => Ok(QoS::ExactlyOnce),
        other => Err(key_error(
            keys::QOS,
            crate::config::invalid_value(keys::QOS, other, "must be 0, 1 or 2"),
        )),
    }
}

fn flag(config: &Props, key: &str, default: bool) -> bool {
    config
        .get(key)
        .map(|v| v.trim().eq_ignore_ascii_case("true"))
        .unwrap_or(default)
}

fn seconds(config: &Props, key: &str, default: u64) -> Result<u64, KeyError> {
    match config.get(key) {
        None => Ok(default),
        Some(v) => v.trim().parse::<u64>().map_err(|_| {
            key_error(
                key,
                crate::config::invalid_value(key, v, "a number of seconds"),
            )
        }),
    }
}

/// Everything a connection needs, checked without I/O (key and trust store files are read by
/// [`tls_config`] when a task starts).
#[derive(Clone, Debug)]
pub struct Settings {
    pub servers: Vec<Server>,
    pub client_id: String,
    pub clean_session: bool,
    pub keep_alive: Duration,
    pub connect_timeout: u64,
    pub credentials: Option<(String, String)>,
    pub v5: bool,
    pub trust_store: Option<String>,
    pub key_store: Option<String>,
}

/// Reads and checks the connection keys of a connector or task config.
pub fn settings(config: &Props) -> Result<Settings, KeyError> {
    let uris = list(config, keys::SERVER_URI);
    if uris.is_empty() {
        return Err(key_error(
            keys::SERVER_URI,
            format!(
                "Missing required configuration \"{}\" which has no default value.",
                keys::SERVER_URI
            ),
        ));
    }
    let servers = uris
        .iter()
        .map(|u| parse_server(u))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| key_error(keys::SERVER_URI, e))?;
    let v5 = match config.get(keys::VERSION).map(|v| v.trim()) {
        None | Some("3.1.1") => false,
        Some("5") => true,
        Some(other) => {
            return Err(key_error(
                keys::VERSION,
                crate::config::invalid_value(keys::VERSION, other, "use 3.1.1 or 5"),
            ))
        }
    };
    let keep_alive = seconds(config, keys::KEEPALIVE, 60)?;
    if keep_alive < 1 {
        return Err(key_error(keys::KEEPALIVE, "Value must be at least 1"));
    }
    let non_blank = |key: &str| {
        config
            .get(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let credentials = non_blank(keys::USERNAME).map(|user| {
        let password = config.get(keys::PASSWORD).cloned().unwrap_or_default();
        (user, password)
    });
    Ok(Settings {
        servers,
        client_id: non_blank(keys::CLIENT_ID).unwrap_or_default(),
        clean_session: flag(config, keys::CLEAN_SESSION, true),
        keep_alive: Duration::from_secs(keep_alive),
        connect_timeout: seconds(config, keys::CONNECT_TIMEOUT, 30)?.max(1),
        credentials,
        v5,
        trust_store: non_blank(keys::TRUST_STORE),
        key_store: non_blank(keys::KEY_STORE),
    })
}

/// Refuses Java's own store formats (and PKCS#12) with the command that converts them to PEM.
fn pem_file(key: &str, path: &str, what: &str) -> Result<Vec<u8>, TaskError> {
    let bytes = std::fs::read(path).map_err(|e| {
        TaskError::fatal(format!(
            "Could not read the {what} named by {key} ({path}): {e}"
        ))
    })?;
    let java = bytes.starts_with(&[0xFE, 0xED, 0xFE, 0xED])
        || bytes.starts_with(&[0xCE, 0xCE, 0xCE, 0xCE]);
    if java {
        let how = if key == keys::TRUST_STORE {
            "Export the CA certificates with `keytool -exportcert -rfc -keystore FILE -alias ALIAS` and name the PEM file"
        } else {
            "Convert it with `keytool -importkeystore -srckeystore FILE -destkeystore key.p12 -deststoretype PKCS12`, then `openssl pkcs12 -in key.p12 -nodes -out key.pem`, and name the PEM file"
        };
        return Err(TaskError::fatal(format!(
            "The {what} named by {key} is a JKS store; liteconnect reads PEM files only. {how} in {key}."
        )));
    }
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(TaskError::fatal(format!(
            "The {what} named by {key} is not a PEM file (a PKCS12 store?); liteconnect reads PEM files only. Convert it with `openssl pkcs12 -in FILE -nodes -out FILE.pem` and name the PEM file in {key}."
        )));
    }
    Ok(bytes)
}

/// The rustls client config (ring provider): CA certificates from the trust store PEM file (the
/// bundled Mozilla roots when none is named) and a client certificate with its key from the key store
/// PEM file.
pub fn tls_config(settings: &Settings) -> Result<Arc<rustls::ClientConfig>, TaskError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    match &settings.trust_store {
        Some(path) => {
            let pem = pem_file(keys::TRUST_STORE, path, "trust store")?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| {
                    TaskError::fatal(format!(
                        "{}: {path} holds an unreadable certificate: {e}",
                        keys::TRUST_STORE
                    ))
                })?;
                roots
                    .add(cert)
                    .map_err(|e| TaskError::fatal(format!("{}: {path}: {e}", keys::TRUST_STORE)))?;
            }
            if roots.is_empty() {
                return Err(TaskError::fatal(format!(
                    "{}: {path} holds no certificate",
                    keys::TRUST_STORE
                )));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TaskError::fatal(format!("TLS set-up failed: {e}")))?
        .with_root_certificates(roots);
    let config = match &settings.key_store {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let pem = pem_file(keys::KEY_STORE, path, "key store")?;
            let chain = CertificateDer::pem_slice_iter(&pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| TaskError::fatal(format!("{}: {path}: {e}", keys::KEY_STORE)))?;
            let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
                TaskError::fatal(format!(
                    "{}: {path} holds no unencrypted private key: {e}",
                    keys::KEY_STORE
                ))
            })?;
            if chain.is_empty() {
                return Err(TaskError::fatal(format!(
                    "{}: {path} holds no certificate",
                    keys::KEY_STORE
                )));
            }
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| TaskError::fatal(format!("{}: {path}: {e}", keys::KEY_STORE)))?
        }
    };
    Ok(Arc::new(config))
}

/// One message received from the broker.
#[derive(Clone, Debug)]
pub struct Message {
    pub topic: String,
    pub payload: Vec<u8>,
    pub qos: u8,
    pub retain: bool,
    pub dup: bool,
    pub pkid: u16,
}

/// What the connection thread reports, in the order it happened.
#[derive(Debug)]
pub enum Event {
    /// Connected (CONNACK).
    Up { session_present: bool },
    /// The connection failed or was lost; it is tried again with backoff.
    Down(String),
    /// The broker refused the credentials: retrying cannot help.
    Refused(String),
    /// A message arrived.
    Message(Message),
    /// The broker released a QoS 2 message (PUBREL) that this client had received.
    Released,
    /// An outgoing PUBLISH was written (its packet id; 0 for QoS 0).
    Sent(u16),
    /// The broker acknowledged an outgoing PUBLISH (PUBACK for QoS 1, PUBCOMP for QoS 2).
    Acked(u16),
}

/// The client side of the connection, for either protocol version.
#[derive(Clone)]
enum Handle {
    V4(rumqttc::AsyncClient),
    V5(rumqttc::v5::AsyncClient),
}

fn qos_of(n: u8) -> QoS {
    match n {
        0 => QoS::AtMostOnce,
        1 => QoS::AtLeastOnce,
        _ => QoS::ExactlyOnce,
    }
}

fn v5_qos(q: QoS) -> rumqttc::v5::mqttbytes::QoS {
    match q {
        QoS::AtMostOnce => rumqttc::v5::mqttbytes::QoS::AtMostOnce,
        QoS::AtLeastOnce => rumqttc::v5::mqttbytes::QoS::AtLeastOnce,
        QoS::ExactlyOnce => rumqttc::v5::mqttbytes::QoS::ExactlyOnce,
    }
}

impl Handle {
    fn subscribe(&self, filters: &[(String, QoS)]) -> Result<(), String> {
        match self {
            Handle::V4(c) => c
                .try_subscribe_many(
                    filters
                        .iter()
                        .map(|(f, q)| rumqttc::SubscribeFilter::new(f.clone(), *q)),
                )
                .map_err(|e| e.to_string()),
            Handle::V5(c) => c
                .try_subscribe_many(
                    filters.iter().map(|(f, q)| {
                        rumqttc::v5::mqttbytes::v5::Filter::new(f.clone(), v5_qos(*q))
                    }),
                )
                .map_err(|e| e.to_string()),
        }
    }

    fn ack(&self, qos: u8, pkid: u16) -> Result<(), String> {
        match self {
            Handle::V4(c) => {
                let mut p = rumqttc::Publish::new("", qos_of(qos), Vec::new());
                p.pkid = pkid;
                c.try_ack(&p).map_err(|e| e.to_string())
            }
            Handle::V5(c) => {
                let mut p = rumqttc::v5::mqttbytes::v5::Publish::new(
                    "",
                    v5_qos(qos_of(qos)),
                    Vec::new(),
                    None,
                );
                p.pkid = pkid;
                c.try_ack(&p).map_err(|e| e.to_string())
            }
        }
    }

    /// `Err` when the request queue does not take it now (full, or the event loop is gone).
    fn publish(&self, topic: &str, qos: QoS, retain: bool, payload: Vec<u8>) -> Result<(), ()> {
        match self {
            Handle::V4(c) => c.try_publish(topic, qos, retain, payload).map_err(|_| ()),
            Handle::V5(c) => c
                .try_publish(topic, v5_qos(qos), retain, payload)
                .map_err(|_| ()),
        }
    }

    async fn disconnect(&self) {
        let _ = match self {
            Handle::V4(c) => c.try_disconnect().map_err(|e| e.to_string()),
            Handle::V5(c) => c.try_disconnect().map_err(|e| e.to_string()),
        };
    }
}

/// The event loop of either protocol version.
enum Loop {
    V4(Box<rumqttc::EventLoop>),
    V5(Box<rumqttc::v5::EventLoop>),
}

/// What one turn of the event loop gave.
enum Turn {
    Event(Event),
    Nothing,
    Failed {
        message: String,
        refused: bool,
        /// The broker resumed a QoS 2 exchange rumqttc does not know (see [`super::repair`]).
        unsolicited: bool,
    },
}

/// Why [`Driver::drive`] returned.
enum Exit {
    Stopped,
    Repair,
}

impl Loop {
    async fn poll(&mut self) -> Turn {
        match self {
            Loop::V4(l) => match l.poll().await {
                Ok(e) => v4_event(e),
                Err(e) => Turn::Failed {
                    unsolicited: matches!(
                        e,
                        rumqttc::ConnectionError::MqttState(rumqttc::StateError::Unsolicited(_))
                    ),
                    refused: matches!(
                        e,
                        rumqttc::ConnectionError::ConnectionRefused(
                            rumqttc::ConnectReturnCode::BadUserNamePassword
                                | rumqttc::ConnectReturnCode::NotAuthorized
                        )
                    ),
                    message: e.to_string(),
                },
            },
            Loop::V5(l) => match l.poll().await {
                Ok(e) => v5_event(e),
                Err(e) => {
                    use rumqttc::v5::mqttbytes::v5::ConnectReturnCode as C;
                    Turn::Failed {
                        unsolicited: matches!(
                            e,
                            rumqttc::v5::ConnectionError::MqttState(
                                rumqttc::v5::StateError::Unsolicited(_)
                            )
                        ),
                        refused: matches!(
                            e,
                            rumqttc::v5::ConnectionError::ConnectionRefused(
                                C::BadUserNamePassword | C::NotAuthorized
                            )
                        ),
                        message: e.to_string(),
                    }
                }
            },
        }
    }

    /// Points the next connection attempt at `server`.
    fn target(
        &mut self,
        settings: &Settings,
        server: &Server,
        tls: Option<&Arc<rustls::ClientConfig>>,
    ) {
        match self {
            Loop::V4(l) => l.mqtt_options = v4_options(settings, server, tls),
            Loop::V5(l) => l.options = v5_options(settings, server, tls),
        }
    }
}

/// Maps an event of either protocol version to an [`Event`]: `$event` of the enum `$ev` whose packets
/// are `$pk`; `$topic` reads the topic of the PUBLISH `$p`. The two versions' packets share field names.
macro_rules! turn_of {
    ($event:expr, $ev:ident, $pk:ident, |$p:ident| $topic:expr) => {
        Turn::Event(match $event {
            $ev::Incoming($pk::ConnAck(c)) => Event::Up {
                session_present: c.session_present,
            },
            $ev::Incoming($pk::Publish($p)) => Event::Message(Message {
                topic: $topic,
                payload: $p.payload.to_vec(),
                qos: $p.qos as u8,
                retain: $p.retain,
                dup: $p.dup,
                pkid: $p.pkid,
            }),
            $ev::Incoming($pk::PubRel(_)) => Event::Released,
            $ev::Incoming($pk::PubAck(a)) => Event::Acked(a.pkid),
            $ev::Incoming($pk::PubComp(a)) => Event::Acked(a.pkid),
            $ev::Outgoing(rumqttc::Outgoing::Publish(pkid)) => Event::Sent(pkid),
            _ => return Turn::Nothing,
        })
    };
}

fn v4_event(e: rumqttc::Event) -> Turn {
    use rumqttc::{Event as E, Packet as P};
    turn_of!(e, E, P, |p| p.topic.clone())
}

fn v5_event(e: rumqttc::v5::Event) -> Turn {
    use rumqttc::v5::mqttbytes::v5::Packet as P;
    use rumqttc::v5::Event as E;
    turn_of!(e, E, P, |p| String::from_utf8_lossy(&p.topic).into_owned())
}

fn transport(server: &Server, tls: Option<&Arc<rustls::ClientConfig>>) -> Transport {
    match tls {
        Some(config) if server.tls => {
            Transport::tls_with_config(TlsConfiguration::Rustls(config.clone()))
        }
        _ => Transport::tcp(),
    }
}

fn v4_options(
    s: &Settings,
    server: &Server,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> rumqttc::MqttOptions {
    let mut o = rumqttc::MqttOptions::new(s.client_id.clone(), server.host.clone(), server.port);
    o.set_keep_alive(s.keep_alive)
        .set_clean_session(s.clean_session)
        .set_manual_acks(true)
        .set_request_channel_capacity(REQUEST_CAPACITY)
        .set_max_packet_size(256 * 1024 * 1024, 256 * 1024 * 1024)
        .set_transport(transport(server, tls));
    if let Some((user, password)) = &s.credentials {
        o.set_credentials(user.clone(), password.clone());
    }
    o
}

fn v5_options(
    s: &Settings,
    server: &Server,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> rumqttc::v5::MqttOptions {
    let mut o =
        rumqttc::v5::MqttOptions::new(s.client_id.clone(), server.host.clone(), server.port);
    o.set_keep_alive(s.keep_alive)
        .set_clean_start(s.clean_session)
        .set_manual_acks(true)
        .set_request_channel_capacity(REQUEST_CAPACITY)
        .set_connection_timeout(s.connect_timeout)
        .set_transport(transport(server, tls));
    if !s.clean_session {
        // MQTT 5 ends a session when its connection closes unless it is given an expiry interval.
        o.set_session_expiry_interval(Some(u32::MAX));
    }
    if let Some((user, password)) = &s.credentials {
        o.set_credentials(user.clone(), password.clone());
    }
    o
}

/// A connection to the broker, driven by its own thread.
pub struct Connection {
    handle: Handle,
    events: mpsc::Receiver<Event>,
    stop: Arc<AtomicBool>,
    wake: Arc<tokio::sync::Notify>,
    thread: Option<JoinHandle<()>>,
}

impl Connection {
    /// Starts connecting; `subscriptions` are subscribed on every connection that starts without a
    /// session.
    pub fn open(
        settings: &Settings,
        subscriptions: Vec<(String, QoS)>,
    ) -> Result<Connection, TaskError> {
        let tls = if settings.servers.iter().any(|s| s.tls) {
            Some(tls_config(settings)?)
        } else {
            None
        };
        let first = &settings.servers[0];
        let (handle, event_loop) = if settings.v5 {
            let (c, l) = rumqttc::v5::AsyncClient::new(
                v5_options(settings, first, tls.as_ref()),
                REQUEST_CAPACITY,
            );
            (Handle::V5(c), Loop::V5(Box::new(l)))
        } else {
            let (c, mut l) = rumqttc::AsyncClient::new(
                v4_options(settings, first, tls.as_ref()),
                REQUEST_CAPACITY,
            );
            let mut network = rumqttc::NetworkOptions::new();
            network.set_connection_timeout(settings.connect_timeout);
            l.set_network_options(network);
            (Handle::V4(c), Loop::V4(Box::new(l)))
        };
        let (tx, events) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(tokio::sync::Notify::new());
        let driver = Driver {
            settings: settings.clone(),
            tls,
            handle: handle.clone(),
            event_loop,
            subscriptions,
            tx,
            stop: stop.clone(),
            wake: wake.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("mqtt-connection".into())
            .spawn(move || driver.run())
            .map_err(|e| {
                TaskError::fatal(format!("Could not start the MQTT connection thread: {e}"))
            })?;
        Ok(Connection {
            handle,
            events,
            stop,
            wake,
            thread: Some(thread),
        })
    }

    /// The next event, waiting up to `timeout`.
    pub fn recv(&self, timeout: Duration) -> Option<Event> {
        self.events.recv_timeout(timeout).ok()
    }

    /// The next event if one is ready.
    pub fn try_recv(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    /// Whether the connection thread has ended (its requests are never sent then).
    fn gone(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Acknowledges a received message (PUBACK for QoS 1, PUBREC for QoS 2; nothing for QoS 0), waiting
    /// for room in the request queue. `false` when it could not be handed over: the broker then sends the
    /// message again on the next connection of a persistent session.
    pub fn ack(&self, qos: u8, pkid: u16) -> bool {
        if qos == 0 {
            return true;
        }
        let deadline = std::time::Instant::now() + QUEUE_WAIT;
        loop {
            match self.handle.ack(qos, pkid) {
                Ok(()) => return true,
                Err(_) if self.gone() || std::time::Instant::now() >= deadline => return false,
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// Hands a message to the event loop: `Ok(false)` when its queue is full (try again after reading
    /// events).
    pub fn publish(
        &self,
        topic: &str,
        qos: QoS,
        retain: bool,
        payload: Vec<u8>,
    ) -> Result<bool, TaskError> {
        match self.handle.publish(topic, qos, retain, payload) {
            Ok(()) => Ok(true),
            Err(()) if self.gone() => Err(TaskError::Retriable(
                "The MQTT connection thread has stopped".into(),
            )),
            Err(()) => Ok(false),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The connection thread's state.
struct Driver {
    settings: Settings,
    tls: Option<Arc<rustls::ClientConfig>>,
    handle: Handle,
    event_loop: Loop,
    subscriptions: Vec<(String, QoS)>,
    tx: mpsc::Sender<Event>,
    stop: Arc<AtomicBool>,
    wake: Arc<tokio::sync::Notify>,
}

impl Driver {
    fn run(mut self) {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                let _ = self.tx.send(Event::Refused(format!(
                    "Could not start the MQTT runtime: {e}"
                )));
                return;
            }
        };
        let mut server = 0;
        while let Exit::Repair = runtime.block_on(self.drive(&mut server)) {
            // Blocking I/O, outside the runtime.
            let target = self.settings.servers[server].clone();
            let event = match super::repair::complete_releases(
                &self.settings,
                &target,
                self.tls.as_ref(),
            ) {
                Ok(released) => {
                    tracing::info!(
                        count = released.len(),
                        "Completed the QoS 2 releases the MQTT broker resumed."
                    );
                    for _ in released {
                        let _ = self.tx.send(Event::Released);
                    }
                    continue;
                }
                Err(e) => Event::Down(format!(
                    "MQTT broker {}: completing resumed QoS 2 releases failed: {e}",
                    target.uri
                )),
            };
            if self.tx.send(event).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    async fn drive(&mut self, server: &mut usize) -> Exit {
        let mut backoff = Duration::from_millis(100);
        while !self.stop.load(Ordering::SeqCst) {
            let turn = tokio::select! {
                t = self.event_loop.poll() => t,
                _ = self.wake.notified() => continue,
            };
            let event = match turn {
                Turn::Nothing => continue,
                Turn::Event(e) => e,
                Turn::Failed {
                    unsolicited: true, ..
                } if !self.settings.clean_session => return Exit::Repair,
                Turn::Failed {
                    message, refused, ..
                } => {
                    let uri = &self.settings.servers[*server].uri;
                    let message = format!("MQTT broker {uri}: {message}");
                    let event = if refused {
                        Event::Refused(message)
                    } else {
                        Event::Down(message)
                    };
                    if self.tx.send(event).is_err() {
                        return Exit::Stopped;
                    }
                    *server = (*server + 1) % self.settings.servers.len();
                    let next = self.settings.servers[*server].clone();
                    self.event_loop
                        .target(&self.settings, &next, self.tls.as_ref());
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = self.wake.notified() => {}
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            if let Event::Up { session_present } = event {
                backoff = Duration::from_millis(100);
                if !session_present && !self.subscriptions.is_empty() {
                    if let Err(e) = self.handle.subscribe(&self.subscriptions) {
                        tracing::warn!(error = %e, "Could not subscribe to the MQTT topics");
                    }
                }
            }
            if self.tx.send(event).is_err() {
                return Exit::Stopped;
            }
        }
        self.handle.disconnect().await;
        // One more turn sends the DISCONNECT, when connected.
        let _ = tokio::time::timeout(Duration::from_millis(200), self.event_loop.poll()).await;
        Exit::Stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_uris_take_four_schemes_and_default_ports() {
        let s = parse_server("tcp://broker:1884").unwrap();
        assert_eq!((s.host.as_str(), s.port, s.tls), ("broker", 1884, false));
        let s = parse_server("mqtts://broker").unwrap();
        assert_eq!((s.port, s.tls), (8883, true));
        let s = parse_server("ssl://10.0.0.1:9999/").unwrap();
        assert_eq!((s.host.as_str(), s.port, s.tls), ("10.0.0.1", 9999, true));
        assert_eq!(parse_server("mqtt://h").unwrap().port, 1883);
        assert!(parse_server("http://h:1")
            .unwrap_err()
            .contains("scheme 'http'"));
        assert!(parse_server("broker:1883")
            .unwrap_err()
            .contains("no scheme"));
        assert!(parse_server("tcp://h:x")
            .unwrap_err()
            .contains("invalid port"));
    }
}
