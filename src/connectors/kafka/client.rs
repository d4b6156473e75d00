//! Client settings passed through to librdkafka, and the client context that routes librdkafka's logs and
//! errors into liteconnect's tracing and remembers the last error for the task's status.
//!
//! Kafka's Java client keys and librdkafka's mostly agree (`acks`, `compression.type`, `linger.ms`,
//! `batch.size`, `enable.idempotence`, `security.protocol`, `sasl.*`, `ssl.*`, …). The few Java-only keys
//! with no librdkafka meaning (serializers, `buffer.memory`, …) are dropped with a log line; any other key
//! is handed to librdkafka, which refuses unknown ones when the task starts, naming the key.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rdkafka::client::ClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

use super::security::{self, Files, SecurityError};
use crate::connectors::Props;

/// Plain (unprefixed) producer keys the Kafka sink accepts in its own config.
pub const PRODUCER_KEYS: &[&str] = &[
    "acks",
    "batch.num.messages",
    "batch.size",
    "client.id",
    "compression.level",
    "compression.type",
    "delivery.timeout.ms",
    "enable.idempotence",
    "enable.sasl.oauthbearer.unsecure.jwt",
    "linger.ms",
    "max.in.flight.requests.per.connection",
    "message.max.bytes",
    "message.timeout.ms",
    "queue.buffering.max.kbytes",
    "queue.buffering.max.messages",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "request.timeout.ms",
    "retries",
    "retry.backoff.ms",
    "security.protocol",
    "socket.timeout.ms",
];

/// Prefixes of plain keys passed on as they are (security settings).
pub const SECURITY_PREFIXES: &[&str] = &["sasl.", "ssl."];

/// Keys of the Java clients that mean nothing to librdkafka: dropped, and logged.
const JAVA_ONLY: &[&str] = &[
    "buffer.memory",
    "interceptor.classes",
    "key.deserializer",
    "key.serializer",
    "max.block.ms",
    "max.poll.records",
    "metric.reporters",
    "partitioner.class",
    "value.deserializer",
    "value.serializer",
];

/// Java key → librdkafka key, where they differ.
fn translate(key: &str) -> &str {
    match key {
        "max.request.size" => "message.max.bytes",
        other => other,
    }
}

/// Builds a librdkafka config from `(key, value)` settings applied in order (later ones win), with the Java
/// client's security keys translated (see [`super::security`]); files named by them are read to tell their
/// format. The error names the key librdkafka could not be given.
pub fn client_config<'a>(
    what: &str,
    settings: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<ClientConfig, SecurityError> {
    let mut merged = merge(what, settings);
    for key in security::translate(&mut merged, Files::Read)? {
        tracing::info!(
            key = %key,
            "The {what} setting '{key}' has no meaning for librdkafka and is not used."
        );
    }
    let mut config = ClientConfig::new();
    for (k, v) in merged {
        config.set(k, v);
    }
    config.set_log_level(RDKafkaLogLevel::Warning);
    Ok(config)
}

/// Checks what [`client_config`] would refuse, without opening any file (for validation).
pub fn check_settings<'a>(
    what: &str,
    settings: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), SecurityError> {
    security::translate(&mut merge(what, settings), Files::Skip).map(drop)
}

fn merge<'a>(
    what: &str,
    settings: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, String> {
    let mut merged: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in settings {
        if JAVA_ONLY.contains(&k) {
            tracing::info!(
                key = k,
                "The {what} setting '{k}' has no meaning for librdkafka and is not used."
            );
            continue;
        }
        merged.insert(translate(k).to_string(), v.to_string());
    }
    merged
}

/// The producer settings of a Kafka sink config: `bootstrap.servers`, the plain keys of [`PRODUCER_KEYS`]
/// and [`SECURITY_PREFIXES`], then every `producer.override.*` key (prefix removed), which wins.
pub fn producer_settings(config: &Props) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for (k, v) in config {
        if k == "bootstrap.servers"
            || PRODUCER_KEYS.contains(&k.as_str())
            || SECURITY_PREFIXES.iter().any(|p| k.starts_with(p))
        {
            out.push((k.as_str(), v.as_str()));
        }
    }
    for (k, v) in config {
        if let Some(stripped) = k.strip_prefix("producer.override.") {
            out.push((stripped, v.as_str()));
        }
    }
    out
}

/// Client keys MirrorMaker 2 reads from `source.cluster.*` (its `MirrorClientConfig` set).
fn is_client_key(key: &str) -> bool {
    matches!(
        key,
        "bootstrap.servers"
            | "client.id"
            | "security.protocol"
            | "request.timeout.ms"
            | "socket.connection.setup.timeout.ms"
            | "socket.connection.setup.timeout.max.ms"
            | "reconnect.backoff.ms"
            | "reconnect.backoff.max.ms"
            | "retry.backoff.ms"
            | "metadata.max.age.ms"
            | "client.dns.lookup"
            | "enable.sasl.oauthbearer.unsecure.jwt"
    ) || SECURITY_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// The consumer settings of a MirrorSourceConnector config, as MM2 builds them: the client keys under
/// `source.cluster.`, then `consumer.*`, then `source.consumer.*` (each prefix removed; later wins).
pub fn mirror_consumer_settings(config: &Props) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for (k, v) in config {
        if let Some(stripped) = k.strip_prefix("source.cluster.") {
            if is_client_key(stripped) {
                out.push((stripped, v.as_str()));
            }
        }
    }
    for prefix in ["consumer.", "source.consumer."] {
        for (k, v) in config {
            if let Some(stripped) = k.strip_prefix(prefix) {
                if prefix == "consumer." && k.starts_with("consumer.poll.") {
                    continue; // consumer.poll.timeout.ms is the connector's own key
                }
                out.push((stripped, v.as_str()));
            }
        }
    }
    out
}

/// What a client last complained about (shown in the task's status while deliveries fail), and whether
/// the cluster refused it outright.
#[derive(Clone, Debug, Default)]
pub struct LastError(Arc<Mutex<Complaints>>);

#[derive(Debug, Default)]
struct Complaints {
    last: Option<String>,
    /// The last error-level line librdkafka logged: it has the broker's own words.
    last_logged: Option<String>,
    refused: Option<String>,
}

impl LastError {
    /// The last error, if any since the last [`LastError::clear`].
    pub fn get(&self) -> Option<String> {
        self.lock().last.clone()
    }
    /// Forgets it (after a success).
    pub fn clear(&self) {
        self.lock().last = None;
    }
    /// Why the cluster refused this client (authentication failed, or TLS could not be set up), if it
    /// did: not an outage, so waiting does not help. The task fails, as Kafka's clients fail on
    /// `SaslAuthenticationException` and `SslAuthenticationException`.
    pub fn refused(&self) -> Option<String> {
        self.lock().refused.clone()
    }
    /// Records that the client saw `code`; a refusal is described by librdkafka's last logged error.
    pub fn saw(&self, code: RDKafkaErrorCode) {
        if let Some(kind) = refusal(code) {
            let mut c = self.lock();
            let detail = c.last_logged.clone().unwrap_or_else(|| code.to_string());
            c.refused = Some(format!("{kind}: {detail}"));
        }
    }
    fn logged(&self, message: &str) {
        // librdkafka starts its lines with the thread's name: "[thrd:ssl://host:port/bootstrap]: ".
        let message = message
            .strip_prefix("[thrd:")
            .and_then(|rest| rest.split_once("]: "))
            .map_or(message, |(_, text)| text);
        self.lock().last_logged = Some(message.to_string());
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Complaints> {
        self.0.lock().expect("last error lock")
    }
}

const TLS_REFUSED: &str = "The TLS connection to the Kafka cluster failed";

/// The error codes with which librdkafka reports that a cluster refused the client, not that it is
/// unreachable (a disconnect during a TLS handshake is reported as a transport error, not as these).
fn refusal(code: RDKafkaErrorCode) -> Option<&'static str> {
    match code {
        RDKafkaErrorCode::Authentication => Some("Authentication to the Kafka cluster failed"),
        RDKafkaErrorCode::SSL => Some(TLS_REFUSED),
        _ => None,
    }
}

/// A transport failure that is the broker's TLS refusal: with TLS 1.3 a broker rejects the client's
/// certificate (or its lack of one) after the client finished its handshake, so librdkafka reports the
/// broker's alert on the first read, as a transport error ("Receive failed: ... SSL routines::tlsv13
/// alert certificate required"). Alerts of other kinds, and plain disconnects, stay outages.
fn tls_alert_refusal(reason: &str) -> bool {
    const REFUSALS: &[&str] = &[
        "alert certificate",
        "alert bad certificate",
        "alert unknown ca",
        "alert unsupported certificate",
        "alert handshake failure",
        "alert protocol version",
        "alert access denied",
    ];
    reason.contains("SSL routines::") && REFUSALS.iter().any(|r| reason.contains(r))
}

/// A client context that logs through tracing and remembers the last error.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The connector, for log lines.
    pub connector: String,
    /// The last client-level error (broker down, authentication failed, …).
    pub last_error: LastError,
}

impl ClientContext for Context {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        match level {
            RDKafkaLogLevel::Emerg
            | RDKafkaLogLevel::Alert
            | RDKafkaLogLevel::Critical
            | RDKafkaLogLevel::Error => {
                self.last_error.logged(log_message);
                tracing::error!(connector = %self.connector, facility = fac, "librdkafka: {log_message}")
            }
            RDKafkaLogLevel::Warning => {
                tracing::warn!(connector = %self.connector, facility = fac, "librdkafka: {log_message}")
            }
            RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
                tracing::info!(connector = %self.connector, facility = fac, "librdkafka: {log_message}")
            }
            RDKafkaLogLevel::Debug => {
                tracing::debug!(connector = %self.connector, facility = fac, "librdkafka: {log_message}")
            }
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        tracing::warn!(connector = %self.connector, %error, "Kafka client error: {reason}");
        let code = error.rdkafka_error_code();
        let mut c = self.last_error.lock();
        // "1/1 brokers are down" sums up the error before it, which says more.
        if code != Some(RDKafkaErrorCode::AllBrokersDown) || c.last.is_none() {
            c.last = Some(format!("{error}: {reason}"));
        }
        let kind = code.and_then(refusal).or_else(|| {
            (code == Some(RDKafkaErrorCode::BrokerTransportFailure) && tls_alert_refusal(reason))
                .then_some(TLS_REFUSED)
        });
        if let Some(kind) = kind {
            c.refused = Some(format!("{kind}: {reason}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::props;

    #[test]
    fn producer_overrides_win_over_plain_keys_and_others_are_left_out() {
        let p = props(&[
            ("bootstrap.servers", "b:9092"),
            ("acks", "1"),
            ("producer.override.acks", "all"),
            ("ssl.ca.location", "/ca.pem"),
            ("topics", "t"),
            ("tasks.max", "1"),
        ]);
        let s = producer_settings(&p);
        assert!(s.contains(&("bootstrap.servers", "b:9092")));
        assert!(s.contains(&("ssl.ca.location", "/ca.pem")));
        assert_eq!(s.iter().rev().find(|(k, _)| *k == "acks").unwrap().1, "all");
        assert!(!s.iter().any(|(k, _)| *k == "topics" || *k == "tasks.max"));
        let c = client_config("producer", s).unwrap();
        assert_eq!(c.get("acks"), Some("all"));
    }

    /// The refusal the context has told from what it saw; the test expects one.
    fn refusal(context: &Context) -> String {
        context.last_error.refused().expect("a refusal")
    }

    #[test]
    fn refusals_are_told_from_outages_and_keep_librdkafkas_words() {
        let context = Context::default();
        context.log(
            RDKafkaLogLevel::Error,
            "FAIL",
            "[thrd:sasl_ssl://k:9093/bootstrap]: sasl_ssl://k:9093/bootstrap: SASL authentication error: Authentication failed",
        );
        for code in [
            RDKafkaErrorCode::BrokerTransportFailure,
            RDKafkaErrorCode::AllBrokersDown,
            RDKafkaErrorCode::MessageTimedOut,
        ] {
            context.last_error.saw(code);
            assert_eq!(context.last_error.refused(), None, "{code:?}");
        }
        context.last_error.saw(RDKafkaErrorCode::Authentication);
        assert_eq!(
            context.last_error.refused().as_deref(),
            Some("Authentication to the Kafka cluster failed: sasl_ssl://k:9093/bootstrap: SASL authentication error: Authentication failed")
        );
        let producer_side = Context::default();
        producer_side.error(
            KafkaError::Global(RDKafkaErrorCode::SSL),
            "ssl://k:9093/bootstrap: SSL handshake failed: certificate verify failed",
        );
        assert!(refusal(&producer_side)
            .starts_with("The TLS connection to the Kafka cluster failed: ssl://k:9093"));

        // TLS 1.3: the broker's refusal of the client certificate arrives as a transport failure.
        let outage = Context::default();
        outage.error(
            KafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure),
            "ssl://k:9093/bootstrap: Connection refused (after 0ms in state CONNECT)",
        );
        outage.error(
            KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            "1/1 brokers are down",
        );
        assert_eq!(outage.last_error.refused(), None);
        assert!(
            outage
                .last_error
                .get()
                .unwrap()
                .contains("Connection refused"),
            "the summary does not hide the cause"
        );
        outage.error(
            KafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure),
            "ssl://k:9093/bootstrap: Receive failed: error:0A00045C:SSL routines::tlsv13 alert certificate required: SSL alert number 116",
        );
        assert!(refusal(&outage).contains("alert certificate required"));
    }

    #[test]
    fn mirror_consumer_settings_follow_mm2_prefixes() {
        let p = props(&[
            ("source.cluster.bootstrap.servers", "src:9092"),
            ("source.cluster.alias", "a"),
            ("consumer.fetch.min.bytes", "1"),
            ("source.consumer.fetch.min.bytes", "2"),
            ("consumer.poll.timeout.ms", "10"),
            ("source.cluster.key.deserializer", "x"),
        ]);
        let c = client_config("consumer", mirror_consumer_settings(&p)).unwrap();
        assert_eq!(c.get("bootstrap.servers"), Some("src:9092"));
        assert_eq!(c.get("fetch.min.bytes"), Some("2"));
        assert_eq!(c.get("alias"), None);
        assert_eq!(c.get("poll.timeout.ms"), None);
        assert_eq!(c.get("key.deserializer"), None);
    }
}
