//! Consumer groups over the classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) with
//! their committed offsets in SQLite, and sink connectors shown as read-only groups `connect-<name>`.
//!
//! The coordinator keeps each group's membership in memory (as a Kafka broker does between restarts of its
//! coordinator: a restart makes members rejoin); committed offsets are written to the store before the
//! OffsetCommit answer leaves. Assignors run in the clients. A join waits on a oneshot channel the group
//! completes; one timer task per group ends sessions and rebalance phases whose time is up.

mod member;
mod offsets;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{
    DescribeGroupsRequest, DescribeGroupsResponse, FindCoordinatorRequest, FindCoordinatorResponse,
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;
use tokio::sync::Notify;
use tokio::time::Instant;

pub use member::GroupState;
use member::{Group, JoinOutcome, JoinRequest, JoinResult};

use super::Node;
use crate::storage::Store;

/// The smallest `session.timeout.ms` a member may ask for (Kafka's `group.min.session.timeout.ms` default).
pub const MIN_SESSION_TIMEOUT_MS: i32 = 6_000;
/// The largest `session.timeout.ms` a member may ask for (Kafka's `group.max.session.timeout.ms` default).
pub const MAX_SESSION_TIMEOUT_MS: i32 = 1_800_000;

/// The prefix of the groups that stand for sink connectors, as Kafka Connect names its consumer groups.
pub const SINK_GROUP_PREFIX: &str = "connect-";

/// The error every write to a `connect-<sink>` group gets: those groups belong to the worker.
pub const SINK_GROUP_ERROR: ResponseError = ResponseError::GroupAuthorizationFailed;

/// Who sent a request, as DescribeGroups shows members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientInfo {
    /// The request header's client id.
    pub client_id: String,
    /// The peer's address, as Kafka shows it (`/127.0.0.1`).
    pub client_host: String,
}

struct Slot {
    group: Group,
    wake: Arc<Notify>,
    /// True while the group's timer task runs (it stops when the group has no members).
    timer: bool,
}

struct Shared {
    store: Store,
    groups: Mutex<HashMap<String, Slot>>,
}

/// The group coordinator: one per worker, shared by every connection.
pub struct Groups {
    shared: Arc<Shared>,
}

pub(crate) fn str(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

fn code(error: Option<ResponseError>) -> i16 {
    error.map_or(0, |e| e.code())
}

/// The group a `connect-<name>` id stands for, if the id has that shape.
fn sink_connector(group: &str) -> Option<&str> {
    group.strip_prefix(SINK_GROUP_PREFIX)
}

/// Ends sessions and rebalance phases of one group when their time comes; stops when the group is idle.
fn spawn_timer(shared: Weak<Shared>, id: String, wake: Arc<Notify>) {
    tokio::spawn(async move {
        loop {
            let next = {
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let mut groups = shared.groups.lock().expect("groups lock");
                let Some(slot) = groups.get_mut(&id) else {
                    return;
                };
                slot.group.expire(Instant::now());
                if slot.group.is_idle() {
                    // An empty group stays known (as Empty) until the worker restarts.
                    slot.timer = false;
                    return;
                }
                slot.group.next_deadline()
            };
            match next {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = wake.notified() => {}
                    }
                }
                None => wake.notified().await,
            }
        }
    });
}

impl Groups {
    /// A coordinator over the worker's store.
    pub fn new(store: Store) -> Groups {
        Groups {
            shared: Arc::new(Shared {
                store,
                groups: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Runs `f` on a group's membership (if the group is in memory) and wakes its timer.
    fn with_group<R>(&self, id: &str, f: impl FnOnce(Option<&mut Group>) -> R) -> R {
        let mut groups = self.shared.groups.lock().expect("groups lock");
        match groups.get_mut(id) {
            Some(slot) => {
                let r = f(Some(&mut slot.group));
                slot.wake.notify_one();
                r
            }
            None => f(None),
        }
    }

    /// True when `group` is `connect-<name>` for an existing sink connector.
    async fn is_sink_group(&self, group: &str) -> bool {
        let Some(name) = sink_connector(group) else {
            return false;
        };
        match self.shared.store.sink_groups().await {
            Ok(sinks) => sinks.iter().any(|s| s.connector == name),
            // When in doubt, a connect- group stays read-only.
            Err(_) => true,
        }
    }

    /// FindCoordinator answered with `node`: the address of the listener the request came in on, so that
    /// a client of a second listener (SASL, SSL) stays on it.
    pub fn find_coordinator_at(
        &self,
        request: FindCoordinatorRequest,
        version: i16,
        node: &Node,
    ) -> FindCoordinatorResponse {
        let response = FindCoordinatorResponse::default();
        if version < 4 {
            return response
                .with_node_id(node.id.into())
                .with_host(str(node.host.clone()))
                .with_port(node.port);
        }
        let coordinators = request
            .coordinator_keys
            .into_iter()
            .map(|key| {
                Coordinator::default()
                    .with_key(key)
                    .with_node_id(node.id.into())
                    .with_host(str(node.host.clone()))
                    .with_port(node.port)
            })
            .collect();
        response.with_coordinators(coordinators)
    }

    /// JoinGroup, with the client's id and address for DescribeGroups: waits until every known member
    /// has joined or the rebalance timeout ends.
    pub async fn join_group_from(
        &self,
        request: JoinGroupRequest,
        version: i16,
        client: ClientInfo,
    ) -> JoinGroupResponse {
        let result = self.join(request, version, client).await;
        let protocol_name = match (&result.protocol, version < 7) {
            (None, true) => Some(str("")),
            (p, _) => p.clone().map(str),
        };
        let members = result
            .members
            .into_iter()
            .map(|(id, instance, metadata)| {
                JoinGroupResponseMember::default()
                    .with_member_id(str(id))
                    .with_group_instance_id(if version >= 5 {
                        instance.map(str)
                    } else {
                        None
                    })
                    .with_metadata(metadata)
            })
            .collect();
        JoinGroupResponse::default()
            .with_error_code(code(result.error))
            .with_generation_id(result.generation)
            .with_protocol_type(result.protocol_type.map(str))
            .with_protocol_name(protocol_name)
            .with_leader(str(result.leader))
            .with_member_id(str(result.member_id))
            .with_members(members)
    }

    async fn join(
        &self,
        request: JoinGroupRequest,
        version: i16,
        client: ClientInfo,
    ) -> JoinResult {
        let group_id = request.group_id.0.to_string();
        let fail = |error| JoinResult {
            error: Some(error),
            generation: -1,
            protocol_type: None,
            protocol: None,
            leader: String::new(),
            member_id: request.member_id.to_string(),
            members: Vec::new(),
        };
        if group_id.is_empty() {
            return fail(ResponseError::InvalidGroupId);
        }
        if self.is_sink_group(&group_id).await {
            return fail(SINK_GROUP_ERROR);
        }
        if !(MIN_SESSION_TIMEOUT_MS..=MAX_SESSION_TIMEOUT_MS).contains(&request.session_timeout_ms)
        {
            return fail(ResponseError::InvalidSessionTimeout);
        }
        let session = Duration::from_millis(request.session_timeout_ms as u64);
        let rebalance = match request.rebalance_timeout_ms {
            t if t > 0 => Duration::from_millis(t as u64),
            _ => session,
        };
        let join = JoinRequest {
            member_id: request.member_id.to_string(),
            instance_id: request.group_instance_id.as_ref().map(|s| s.to_string()),
            client_id: client.client_id,
            client_host: client.client_host,
            session_timeout: session,
            rebalance_timeout: rebalance,
            protocol_type: request.protocol_type.to_string(),
            protocols: request
                .protocols
                .iter()
                .map(|p| (p.name.to_string(), p.metadata.clone()))
                .collect(),
            require_known_member_id: version >= 4,
        };
        let outcome = {
            let mut groups = self.shared.groups.lock().expect("groups lock");
            let slot = groups.entry(group_id.clone()).or_insert_with(|| Slot {
                group: Group::new(&group_id),
                wake: Arc::new(Notify::new()),
                timer: false,
            });
            if !slot.timer {
                slot.timer = true;
                spawn_timer(
                    Arc::downgrade(&self.shared),
                    group_id.clone(),
                    slot.wake.clone(),
                );
            }
            let outcome = slot.group.join(join, Instant::now());
            slot.wake.notify_one();
            outcome
        };
        match outcome {
            JoinOutcome::Now(result) => result,
            JoinOutcome::Wait(rx) => match rx.await {
                Ok(result) => result,
                Err(_) => fail(ResponseError::UnknownMemberId),
            },
        }
    }

    /// SyncGroup: the leader's assignment handed to every member.
    pub async fn sync_group(&self, request: SyncGroupRequest, _version: i16) -> SyncGroupResponse {
        let group_id = request.group_id.0.to_string();
        let member_id = request.member_id.to_string();
        let instance = request.group_instance_id.as_ref().map(|s| s.to_string());
        let assignments = request
            .assignments
            .iter()
            .map(|a| (a.member_id.to_string(), a.assignment.clone()))
            .collect();
        let waiting = self.with_group(&group_id, |group| {
            let group = group.ok_or(if group_id.is_empty() {
                ResponseError::InvalidGroupId
            } else {
                ResponseError::UnknownMemberId
            })?;
            if request
                .protocol_type
                .as_ref()
                .is_some_and(|t| group.protocol_type.as_deref() != Some(&**t))
                || request
                    .protocol_name
                    .as_ref()
                    .is_some_and(|n| group.protocol.as_deref() != Some(&**n))
            {
                return Err(ResponseError::InconsistentGroupProtocol);
            }
            let rx = group.sync(
                &member_id,
                instance.as_deref(),
                request.generation_id,
                assignments,
                Instant::now(),
            )?;
            Ok((rx, group.protocol_type.clone(), group.protocol.clone()))
        });
        let (result, protocol_type, protocol) = match waiting {
            Ok((rx, t, p)) => (
                rx.await.unwrap_or(Err(ResponseError::RebalanceInProgress)),
                t,
                p,
            ),
            Err(e) => (Err(e), None, None),
        };
        match result {
            Ok(assignment) => SyncGroupResponse::default()
                .with_protocol_type(protocol_type.map(str))
                .with_protocol_name(protocol.map(str))
                .with_assignment(assignment),
            Err(e) => SyncGroupResponse::default().with_error_code(e.code()),
        }
    }

    /// Heartbeat.
    pub async fn heartbeat(&self, request: HeartbeatRequest, _version: i16) -> HeartbeatResponse {
        let instance = request.group_instance_id.as_ref().map(|s| s.to_string());
        let result = self.with_group(&request.group_id.0, |group| match group {
            Some(group) => group.heartbeat(
                &request.member_id,
                instance.as_deref(),
                request.generation_id,
                Instant::now(),
            ),
            None if request.group_id.0.is_empty() => Err(ResponseError::InvalidGroupId),
            None => Err(ResponseError::UnknownMemberId),
        });
        HeartbeatResponse::default().with_error_code(code(result.err()))
    }

    /// LeaveGroup: one member (v0-v2) or a batch of members (v3+).
    pub async fn leave_group(
        &self,
        request: LeaveGroupRequest,
        version: i16,
    ) -> LeaveGroupResponse {
        let leaving: Vec<(String, Option<String>)> = if version >= 3 {
            request
                .members
                .iter()
                .map(|m| {
                    (
                        m.member_id.to_string(),
                        m.group_instance_id.as_ref().map(|s| s.to_string()),
                    )
                })
                .collect()
        } else {
            vec![(request.member_id.to_string(), None)]
        };
        let group_id = request.group_id.0.to_string();
        let results: Vec<Result<(), ResponseError>> = self.with_group(&group_id, |mut group| {
            leaving
                .iter()
                .map(|(member, instance)| match group.as_deref_mut() {
                    _ if group_id.is_empty() => Err(ResponseError::InvalidGroupId),
                    Some(g) => g.leave(member, instance.as_deref(), Instant::now()),
                    None => Err(ResponseError::UnknownMemberId),
                })
                .collect()
        });
        if version < 3 {
            return LeaveGroupResponse::default()
                .with_error_code(code(results.into_iter().next().and_then(Result::err)));
        }
        let members = leaving
            .into_iter()
            .zip(results)
            .map(|((member, instance), result)| {
                MemberResponse::default()
                    .with_member_id(str(member))
                    .with_group_instance_id(instance.map(str))
                    .with_error_code(code(result.err()))
            })
            .collect();
        LeaveGroupResponse::default().with_members(members)
    }

    /// OffsetCommit (refused for `connect-<sink>` groups).
    pub async fn offset_commit(
        &self,
        request: OffsetCommitRequest,
        version: i16,
    ) -> OffsetCommitResponse {
        offsets::commit(self, request, version).await
    }

    /// OffsetFetch: one group (v0-v7) or several (v8+); every committed partition when topics is null.
    pub async fn offset_fetch(
        &self,
        request: OffsetFetchRequest,
        version: i16,
    ) -> OffsetFetchResponse {
        offsets::fetch(self, request, version).await
    }

    /// ListGroups, with the states (v4+) and types (v5+) filters.
    pub async fn list_groups(
        &self,
        request: ListGroupsRequest,
        version: i16,
    ) -> ListGroupsResponse {
        offsets::list(self, request, version).await
    }

    /// DescribeGroups, with members and their assignment bytes.
    pub async fn describe_groups(
        &self,
        request: DescribeGroupsRequest,
        version: i16,
    ) -> DescribeGroupsResponse {
        offsets::describe(self, request, version).await
    }
}
