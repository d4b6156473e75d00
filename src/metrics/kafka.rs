//! The Kafka listener's own metrics: requests by API key and version, error codes in the answers,
//! connections opened and closed (with the reason), and the bytes produced and fetched.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// Labels of the request counter: API key and version.
pub type ApiLabels = [(&'static str, String); 2];
/// Labels of the close counter: the reason.
pub type ReasonLabels = [(&'static str, &'static str); 1];

/// Why a listener connection ended, as `liteconnect_kafka_connections_closed_total` labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The client closed it (or the socket failed under it).
    Client,
    /// The worker stopped.
    Shutdown,
    /// A frame that did not decode, a negative size or one over `message.max.bytes`.
    Malformed,
    /// A request the listener does not answer, an answer that did not encode, or a request before SASL.
    Protocol,
    /// SASL authentication failed.
    Authentication,
    /// The TLS handshake failed.
    Tls,
}

impl CloseReason {
    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            CloseReason::Client => "client",
            CloseReason::Shutdown => "shutdown",
            CloseReason::Malformed => "malformed",
            CloseReason::Protocol => "protocol",
            CloseReason::Authentication => "authentication",
            CloseReason::Tls => "tls",
        }
    }
}

/// The counters of every Kafka listener of the worker.
#[derive(Debug, Default)]
pub struct KafkaMetrics {
    /// `liteconnect_kafka_requests_total{api_key,version}`.
    pub requests: Family<ApiLabels, Counter>,
    /// `liteconnect_kafka_errors_total{api_key,error_code}`: one per non-zero error code in an answer
    /// (per partition, topic or group where the answer carries one per item).
    pub errors: Family<ApiLabels, Counter>,
    /// `liteconnect_kafka_connections_opened_total`.
    pub opened: Counter,
    /// `liteconnect_kafka_connections_closed_total{reason}`.
    pub closed: Family<ReasonLabels, Counter>,
    /// `liteconnect_kafka_produce_bytes_total`: record-batch bytes in Produce requests.
    pub produce_bytes: Counter,
    /// `liteconnect_kafka_fetch_bytes_total`: bytes of the Fetch answers sent.
    pub fetch_bytes: Counter,
}

impl KafkaMetrics {
    /// Counts one request and the error codes of its answer.
    pub fn answered(&self, api_key: i16, version: i16, error_codes: &[i16]) {
        self.requests
            .get_or_create(&[
                ("api_key", api_key.to_string()),
                ("version", version.to_string()),
            ])
            .inc();
        for code in error_codes.iter().filter(|c| **c != 0) {
            self.errors
                .get_or_create(&[
                    ("api_key", api_key.to_string()),
                    ("error_code", code.to_string()),
                ])
                .inc();
        }
    }

    /// Counts a connection that ended.
    pub fn closed(&self, reason: CloseReason) {
        self.closed
            .get_or_create(&[("reason", reason.label())])
            .inc();
    }

    /// Adds the families to a scrape's registry.
    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "liteconnect_kafka_requests",
            "Requests the Kafka listener answered, by API key and version.",
            self.requests.clone(),
        );
        registry.register(
            "liteconnect_kafka_errors",
            "Non-zero error codes in the Kafka listener's answers, by API key and error code.",
            self.errors.clone(),
        );
        registry.register(
            "liteconnect_kafka_connections_opened",
            "Connections the Kafka listener accepted.",
            self.opened.clone(),
        );
        registry.register(
            "liteconnect_kafka_connections_closed",
            "Kafka listener connections that ended, by reason (client, shutdown, malformed, protocol, authentication, tls).",
            self.closed.clone(),
        );
        registry.register(
            "liteconnect_kafka_produce_bytes",
            "Record-batch bytes received in Produce requests.",
            self.produce_bytes.clone(),
        );
        registry.register(
            "liteconnect_kafka_fetch_bytes",
            "Bytes of Fetch answers sent.",
            self.fetch_bytes.clone(),
        );
    }
}
