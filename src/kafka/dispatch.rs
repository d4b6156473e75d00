//! The shared broker state and the per-request dispatch: each decoded request goes to its handler, and
//! its response is encoded with the request's version.

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::ApiVersionsResponse;
use kafka_protocol::protocol::{Encodable, HeaderVersion};
use kafka_protocol::ResponseError;

use super::answers::ErrorCodes;
use super::codec::{self, Frame, Request, APIS};
use super::groups::{ClientInfo, Groups};
use super::sasl::{Credentials, Outcome, SaslSession};
use super::{produce, Node};
use crate::config::worker::kafka::KafkaSettings;
use crate::logging::WarnThrottle;
use crate::metrics::Metrics;
use crate::storage::Store;
use crate::worker::LogSignal;

/// What the listener shares between connections: the log, the settings, the group coordinator and the
/// idempotent producers' sequence numbers.
pub struct Broker {
    /// The topic log.
    pub store: Store,
    /// Bumped after every append; long-polling fetches wait on it.
    pub signal: Arc<LogSignal>,
    /// The consumer-group coordinator.
    pub groups: Arc<Groups>,
    /// The listener's settings.
    pub settings: KafkaSettings,
    /// `retention.ms` of the worker, shown as the topics' `retention.ms`.
    pub retention_ms: Option<i64>,
    /// `retention.bytes` of the worker.
    pub retention_bytes: Option<i64>,
    /// The users of SASL listeners.
    pub credentials: Option<Arc<Credentials>>,
    /// Idempotent producers: ids handed out and the last batches per partition.
    pub producers: produce::Producers,
    /// The worker's metrics (the listener's own are `metrics.kafka`).
    pub metrics: Arc<Metrics>,
    /// Repeated warnings about connections, held back per peer and reason.
    pub warnings: Warnings,
}

/// Repeated warnings about listener connections, held back per peer address and reason: the first at
/// once, then at most once a minute with the count held back (a client retrying in a loop writes one line
/// a minute, not one per attempt).
#[derive(Debug, Default)]
pub struct Warnings(
    std::sync::Mutex<std::collections::HashMap<(IpAddr, &'static str), WarnThrottle>>,
);

impl Warnings {
    /// Peers and reasons remembered at most; past that the memory starts again (a line may repeat).
    const MAX: usize = 4096;

    /// Notes one warning of `reason` about `peer`: `Some(held back)` when it is to be logged now.
    pub fn note(&self, peer: IpAddr, reason: &'static str) -> Option<u64> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= Self::MAX && !map.contains_key(&(peer, reason)) {
            map.clear();
        }
        map.entry((peer, reason))
            .or_default()
            .note(std::time::Instant::now())
    }
}

/// One connection's state.
pub struct Connection {
    /// This worker as the connection's listener advertises it.
    pub node: Node,
    /// The SASL exchange, on SASL listeners.
    pub sasl: Option<SaslSession>,
    /// Whether the connection may send requests other than ApiVersions and SASL (always on listeners
    /// without SASL).
    pub authenticated: bool,
    /// The peer's address as Kafka shows it in DescribeGroups (`/127.0.0.1`).
    pub client_host: String,
    /// Fetch's reads of what follows the records it last sent, per partition.
    pub read_ahead: super::fetch::ReadAhead,
}

/// What to do after a request.
pub enum Reply {
    /// Send these bytes and go on.
    Send(Bytes),
    /// Send nothing (Produce with acks=0) and go on.
    Nothing,
    /// Send these bytes, then close the connection.
    SendAndClose(Bytes),
    /// Close the connection with this reason, sending nothing.
    Close(String),
}

/// Encodes a response for the frame's correlation id and version.
pub(super) fn respond<R: Encodable + HeaderVersion + ErrorCodes>(
    frame: &Frame,
    response: &R,
) -> Reply {
    if let Ok(mut codes) = frame.error_codes.lock() {
        response.error_codes(&mut codes);
    }
    match codec::encode_response(frame.correlation_id, frame.version, response) {
        Ok(bytes) => Reply::Send(bytes),
        Err(e) => Reply::Close(format!(
            "the answer to API key {} v{} did not encode: {e}",
            frame.api_key, frame.version
        )),
    }
}

/// The ApiVersions answer: every key answered with the versions advertised; `UNSUPPORTED_VERSION` (and
/// a v0 answer) for a version this listener does not know, as KIP-511 asks.
fn api_versions(frame: &Frame, supported: bool) -> Reply {
    let api_keys = APIS
        .iter()
        .map(|(key, min, max)| {
            ApiVersion::default()
                .with_api_key(*key)
                .with_min_version(*min)
                .with_max_version(*max)
        })
        .collect();
    let mut response = ApiVersionsResponse::default().with_api_keys(api_keys);
    if supported {
        return respond(frame, &response);
    }
    response.error_code = ResponseError::UnsupportedVersion.code();
    if let Ok(mut codes) = frame.error_codes.lock() {
        codes.push(response.error_code);
    }
    match codec::encode_response(frame.correlation_id, 0, &response) {
        Ok(bytes) => Reply::Send(bytes),
        Err(e) => Reply::Close(e),
    }
}

impl Broker {
    /// Answers one request, and counts it with the error codes of its answer and its bytes.
    pub async fn handle(&self, conn: &mut Connection, frame: Frame) -> Reply {
        let kafka = &self.metrics.kafka;
        if let Request::Produce(r) = &frame.request {
            let bytes = r
                .topic_data
                .iter()
                .flat_map(|t| &t.partition_data)
                .filter_map(|p| p.records.as_ref())
                .map(|b| b.len() as u64)
                .sum::<u64>();
            kafka.produce_bytes.inc_by(bytes);
        }
        let (api_key, version) = (frame.api_key, frame.version);
        let reply = self.answer(conn, &frame).await;
        if let (codec::FETCH_KEY, Reply::Send(bytes)) = (api_key, &reply) {
            kafka.fetch_bytes.inc_by(bytes.len() as u64);
        }
        let codes = frame
            .error_codes
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default();
        if !matches!(reply, Reply::Close(_)) {
            kafka.answered(api_key, version, &codes);
        }
        reply
    }

    /// Answers one request.
    async fn answer(&self, conn: &mut Connection, frame: &Frame) -> Reply {
        if !conn.authenticated
            && !matches!(
                frame.request,
                Request::ApiVersions(_)
                    | Request::SaslHandshake(_)
                    | Request::SaslAuthenticate(_)
                    | Request::Unsupported
            )
        {
            return Reply::Close(format!(
                "API key {} sent before SASL authentication",
                frame.api_key
            ));
        }
        let v = frame.version;
        match &frame.request {
            Request::Unsupported if frame.api_key == codec::API_VERSIONS_KEY => {
                return api_versions(frame, false)
            }
            Request::Unsupported => {
                return Reply::Close(format!(
                    "API key {} version {} is not answered",
                    frame.api_key, frame.version
                ))
            }
            Request::ApiVersions(_) => return api_versions(frame, true),
            _ => {}
        }
        let Frame { request, .. } = frame;
        match request {
            Request::Produce(r) => produce::produce(self, frame, r.clone()).await,
            Request::Fetch(r) => {
                super::fetch::fetch(self, &mut conn.read_ahead, frame, r.clone()).await
            }
            Request::ListOffsets(r) => super::metadata::list_offsets(self, frame, r).await,
            Request::Metadata(r) => super::metadata::metadata(self, conn, frame, r).await,
            Request::DescribeCluster(_) => super::metadata::describe_cluster(self, conn, frame),
            Request::InitProducerId(r) => produce::init_producer_id(self, frame, r),
            Request::CreateTopics(r) => super::admin::create_topics(self, frame, r).await,
            Request::DeleteTopics(r) => super::admin::delete_topics(self, frame, r).await,
            Request::DescribeConfigs(r) => super::admin::describe_configs(self, frame, r).await,
            Request::SaslHandshake(_) | Request::SaslAuthenticate(_) => sasl(conn, frame),
            _ => self.group_request(conn, frame, v).await,
        }
    }

    /// The consumer-group API keys, handed to the coordinator.
    async fn group_request(&self, conn: &Connection, frame: &Frame, v: i16) -> Reply {
        let g = &self.groups;
        match &frame.request {
            Request::FindCoordinator(r) => {
                respond(frame, &g.find_coordinator_at(r.clone(), v, &conn.node))
            }
            Request::JoinGroup(r) => {
                let client = ClientInfo {
                    client_id: frame.client_id.clone().unwrap_or_default(),
                    client_host: conn.client_host.clone(),
                };
                respond(frame, &g.join_group_from(r.clone(), v, client).await)
            }
            Request::SyncGroup(r) => respond(frame, &g.sync_group(r.clone(), v).await),
            Request::Heartbeat(r) => respond(frame, &g.heartbeat(r.clone(), v).await),
            Request::LeaveGroup(r) => respond(frame, &g.leave_group(r.clone(), v).await),
            Request::OffsetCommit(r) => respond(frame, &g.offset_commit(r.clone(), v).await),
            Request::OffsetFetch(r) => respond(frame, &g.offset_fetch(r.clone(), v).await),
            Request::ListGroups(r) => respond(frame, &g.list_groups(r.clone(), v).await),
            Request::DescribeGroups(r) => respond(frame, &g.describe_groups(r.clone(), v).await),
            _ => Reply::Close(format!("API key {} is not answered", frame.api_key)),
        }
    }
}

/// SaslHandshake and SaslAuthenticate, handed to the connection's SASL session.
fn sasl(conn: &mut Connection, frame: &Frame) -> Reply {
    let Some(session) = conn.sasl.as_mut() else {
        // As Kafka answers on a listener without SASL: ILLEGAL_SASL_STATE, and the connection lives on.
        let code = ResponseError::IllegalSaslState.code();
        return match &frame.request {
            Request::SaslHandshake(_) => respond(
                frame,
                &kafka_protocol::messages::SaslHandshakeResponse::default().with_error_code(code),
            ),
            _ => respond(
                frame,
                &kafka_protocol::messages::SaslAuthenticateResponse::default()
                    .with_error_code(code)
                    .with_error_message(Some(kafka_protocol::protocol::StrBytes::from_static_str(
                        "This listener does not use SASL.",
                    ))),
            ),
        };
    };
    let (reply, outcome) = match &frame.request {
        Request::SaslHandshake(r) => {
            let (response, outcome) = session.handshake(r.clone(), frame.version);
            (respond(frame, &response), outcome)
        }
        Request::SaslAuthenticate(r) => {
            let (response, outcome) = session.authenticate(r.clone(), frame.version);
            (respond(frame, &response), outcome)
        }
        _ => return Reply::Close(format!("API key {} is not a SASL key", frame.api_key)),
    };
    after_sasl(conn, reply, outcome)
}

fn after_sasl(conn: &mut Connection, reply: Reply, outcome: Outcome) -> Reply {
    match (outcome, reply) {
        (Outcome::Continue, reply) => reply,
        (Outcome::Authenticated(principal), reply) => {
            tracing::debug!(%principal, "Kafka client authenticated.");
            conn.authenticated = true;
            reply
        }
        (Outcome::Failed, Reply::Send(bytes)) => Reply::SendAndClose(bytes),
        (Outcome::Failed, reply) => reply,
    }
}

#[cfg(test)]
mod tests {
    use super::Warnings;

    #[test]
    fn connection_warnings_are_held_back_per_peer_and_reason() {
        let warnings = Warnings::default();
        let a = "127.0.0.1".parse().unwrap();
        let b = "127.0.0.2".parse().unwrap();
        assert_eq!(
            warnings.note(a, "malformed request"),
            Some(0),
            "the first at once"
        );
        for _ in 0..1000 {
            assert_eq!(
                warnings.note(a, "malformed request"),
                None,
                "then held back"
            );
        }
        assert_eq!(
            warnings.note(a, "protocol"),
            Some(0),
            "another reason is its own"
        );
        assert_eq!(
            warnings.note(b, "malformed request"),
            Some(0),
            "another peer too"
        );
    }
}
