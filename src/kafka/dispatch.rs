//! The shared broker state and the per-request dispatch: each decoded request goes to its handler, and
//! its response is encoded with the request's version.

use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::ApiVersionsResponse;
use kafka_protocol::protocol::{Encodable, HeaderVersion};
use kafka_protocol::ResponseError;

use super::codec::{self, Frame, Request, APIS};
use super::groups::{ClientInfo, Groups};
use super::sasl::{Credentials, Outcome, SaslSession};
use super::{produce, Node};
use crate::config::worker::kafka::KafkaSettings;
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
pub(super) fn respond<R: Encodable + HeaderVersion>(frame: &Frame, response: &R) -> Reply {
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
    match codec::encode_response(frame.correlation_id, 0, &response) {
        Ok(bytes) => Reply::Send(bytes),
        Err(e) => Reply::Close(e),
    }
}

impl Broker {
    /// Answers one request.
    pub async fn handle(&self, conn: &mut Connection, frame: Frame) -> Reply {
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
                return api_versions(&frame, false)
            }
            Request::Unsupported => {
                return Reply::Close(format!(
                    "API key {} version {} is not answered",
                    frame.api_key, frame.version
                ))
            }
            Request::ApiVersions(_) => return api_versions(&frame, true),
            _ => {}
        }
        let Frame { request, .. } = &frame;
        match request {
            Request::Produce(r) => produce::produce(self, &frame, r.clone()).await,
            Request::Fetch(r) => {
                super::fetch::fetch(self, &mut conn.read_ahead, &frame, r.clone()).await
            }
            Request::ListOffsets(r) => super::metadata::list_offsets(self, &frame, r).await,
            Request::Metadata(r) => super::metadata::metadata(self, conn, &frame, r).await,
            Request::DescribeCluster(_) => super::metadata::describe_cluster(self, conn, &frame),
            Request::InitProducerId(r) => produce::init_producer_id(self, &frame, r),
            Request::CreateTopics(r) => super::admin::create_topics(self, &frame, r).await,
            Request::DeleteTopics(r) => super::admin::delete_topics(self, &frame, r).await,
            Request::DescribeConfigs(r) => super::admin::describe_configs(self, &frame, r).await,
            Request::SaslHandshake(_) | Request::SaslAuthenticate(_) => sasl(conn, &frame),
            _ => self.group_request(conn, &frame, v).await,
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
        return Reply::Close(format!(
            "API key {} on a listener without SASL",
            frame.api_key
        ));
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
