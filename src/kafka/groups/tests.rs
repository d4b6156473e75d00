use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic,
};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, Message, StrBytes};

use super::*;
use crate::config::worker::WorkerConfig;
use crate::model::State;
use crate::storage::StoredStatus;
use crate::test_support::props;

const GROUP: &str = "app";

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// The store as the worker opens it, from a worker config naming a file in `dir`.
async fn open(dir: &Path) -> Store {
    let file = dir.join("groups.db").display().to_string();
    let config = WorkerConfig::from_props(props(&[("storage.file", &file)])).unwrap();
    let metrics = Arc::new(crate::metrics::Metrics::default());
    crate::open_store(&config, &metrics).await.unwrap()
}

fn coordinator(store: Store) -> Arc<Groups> {
    Arc::new(Groups::new(store))
}

impl Groups {
    /// JoinGroup from a client that gave no id.
    async fn join_group(&self, request: JoinGroupRequest, version: i16) -> JoinGroupResponse {
        self.join_group_from(request, version, ClientInfo::default())
            .await
    }

    /// FindCoordinator answered as the listener `localhost:9092` (node 1) answers it.
    async fn find_coordinator(
        &self,
        request: FindCoordinatorRequest,
        version: i16,
    ) -> FindCoordinatorResponse {
        let node = Node {
            id: 1,
            host: "localhost".into(),
            port: 9092,
        };
        self.find_coordinator_at(request, version, &node)
    }
}

fn join_request(member: &str, protocols: &[&str]) -> JoinGroupRequest {
    JoinGroupRequest::default()
        .with_group_id(s(GROUP).into())
        .with_session_timeout_ms(30_000)
        .with_rebalance_timeout_ms(30_000)
        .with_member_id(s(member))
        .with_protocol_type(s("consumer"))
        .with_protocols(
            protocols
                .iter()
                .map(|p| {
                    JoinGroupRequestProtocol::default()
                        .with_name(s(p))
                        .with_metadata(Bytes::from(format!("{member}/{p}")))
                })
                .collect(),
        )
}

/// Joins as a new member (v5: MEMBER_ID_REQUIRED first, then the join that waits for the rebalance).
fn spawn_join(groups: &Arc<Groups>, member: &str) -> tokio::task::JoinHandle<JoinGroupResponse> {
    spawn_join_with(groups, member, 30_000)
}

fn spawn_join_with(
    groups: &Arc<Groups>,
    member: &str,
    session_ms: i32,
) -> tokio::task::JoinHandle<JoinGroupResponse> {
    let groups = groups.clone();
    let request =
        join_request(member, &["range", "roundrobin"]).with_session_timeout_ms(session_ms);
    tokio::spawn(async move {
        let mut request = request;
        if request.member_id.is_empty() {
            let first = groups.join_group(request.clone(), 5).await;
            assert_eq!(first.error_code, ResponseError::MemberIdRequired.code());
            assert!(!first.member_id.is_empty());
            request.member_id = first.member_id;
        }
        groups.join_group(request, 5).await
    })
}

fn spawn_sync(
    groups: &Arc<Groups>,
    member: &str,
    generation: i32,
    assignments: &[(&str, &str)],
) -> tokio::task::JoinHandle<SyncGroupResponse> {
    let groups = groups.clone();
    let request = SyncGroupRequest::default()
        .with_group_id(s(GROUP).into())
        .with_member_id(s(member))
        .with_generation_id(generation)
        .with_assignments(
            assignments
                .iter()
                .map(|(m, a)| {
                    SyncGroupRequestAssignment::default()
                        .with_member_id(s(m))
                        .with_assignment(Bytes::from(a.to_string()))
                })
                .collect(),
        );
    tokio::spawn(async move { groups.sync_group(request, 5).await })
}

async fn heartbeat(groups: &Groups, member: &str, generation: i32) -> i16 {
    let request = HeartbeatRequest::default()
        .with_group_id(s(GROUP).into())
        .with_member_id(s(member))
        .with_generation_id(generation);
    groups.heartbeat(request, 4).await.error_code
}

/// Two members in a stable group at generation 2: (leader, follower).
async fn two_member_group(groups: &Arc<Groups>) -> (String, String) {
    two_member_group_with(groups, 30_000).await
}

async fn two_member_group_with(groups: &Arc<Groups>, session_ms: i32) -> (String, String) {
    let a = spawn_join_with(groups, "", session_ms).await.unwrap();
    assert_eq!(a.error_code, 0);
    assert_eq!(
        (a.generation_id, a.leader.clone()),
        (1, a.member_id.clone())
    );
    assert_eq!(a.members.len(), 1);
    let a_id = a.member_id.to_string();
    let synced = spawn_sync(groups, &a_id, 1, &[(&a_id, "all")])
        .await
        .unwrap();
    assert_eq!(synced.assignment, Bytes::from("all"));

    let b = spawn_join_with(groups, "", session_ms);
    // The leader learns of the rebalance through its heartbeat, then rejoins.
    wait(|| async {
        heartbeat(groups, &a_id, 1).await == ResponseError::RebalanceInProgress.code()
    })
    .await;
    let a = spawn_join_with(groups, &a_id, session_ms).await.unwrap();
    let b = b.await.unwrap();
    assert_eq!((a.error_code, b.error_code), (0, 0));
    assert_eq!((a.generation_id, b.generation_id), (2, 2));
    assert_eq!(a.leader, a.member_id, "the first member stays leader");
    assert_eq!(b.leader, a.member_id);
    assert_eq!(a.protocol_name.as_deref(), Some("range"));
    let ids: Vec<_> = a.members.iter().map(|m| m.member_id.to_string()).collect();
    assert_eq!(ids, vec![a_id.clone(), b.member_id.to_string()]);
    assert!(b.members.is_empty(), "only the leader gets the members");
    let b_id = b.member_id.to_string();

    let follower = spawn_sync(groups, &b_id, 2, &[]);
    tokio::task::yield_now().await;
    let leader = spawn_sync(groups, &a_id, 2, &[(&a_id, "p0,p1"), (&b_id, "p2,p3")]);
    assert_eq!(leader.await.unwrap().assignment, Bytes::from("p0,p1"));
    assert_eq!(follower.await.unwrap().assignment, Bytes::from("p2,p3"));
    (a_id, b_id)
}

async fn wait<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..500 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached");
}

async fn describe(groups: &Groups, group: &str, version: i16) -> DescribedGroup {
    let request = DescribeGroupsRequest::default().with_groups(vec![s(group).into()]);
    groups
        .describe_groups(request, version)
        .await
        .groups
        .remove(0)
}

use kafka_protocol::messages::describe_groups_response::DescribedGroup;

async fn listed(groups: &Groups, states: &[&str]) -> Vec<(String, String, String)> {
    let request =
        ListGroupsRequest::default().with_states_filter(states.iter().map(|v| s(v)).collect());
    groups
        .list_groups(request, 4)
        .await
        .groups
        .into_iter()
        .map(|g| {
            (
                g.group_id.0.to_string(),
                g.protocol_type.to_string(),
                g.group_state.to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_join_sync_and_heartbeat() {
    let dir = tempfile::tempdir().unwrap();
    let groups = coordinator(open(dir.path()).await);
    let (a, b) = two_member_group(&groups).await;
    assert_eq!(heartbeat(&groups, &a, 2).await, 0);
    assert_eq!(heartbeat(&groups, &b, 2).await, 0);
    assert_eq!(
        heartbeat(&groups, &b, 1).await,
        ResponseError::IllegalGeneration.code()
    );
    assert_eq!(
        heartbeat(&groups, "stranger", 2).await,
        ResponseError::UnknownMemberId.code()
    );
    // A sync in a stable group hands back the member's assignment.
    let again = spawn_sync(&groups, &b, 2, &[]).await.unwrap();
    assert_eq!(again.assignment, Bytes::from("p2,p3"));

    let d = describe(&groups, GROUP, 5).await;
    assert_eq!(
        (d.group_state.as_str(), d.protocol_data.as_str()),
        ("Stable", "range")
    );
    let members: BTreeMap<String, Bytes> = d
        .members
        .iter()
        .map(|m| (m.member_id.to_string(), m.member_assignment.clone()))
        .collect();
    assert_eq!(members.get(&a), Some(&Bytes::from("p0,p1")));
    assert_eq!(members.get(&b), Some(&Bytes::from("p2,p3")));
    assert_eq!(
        d.members
            .iter()
            .find(|m| *m.member_id == *a)
            .unwrap()
            .member_metadata,
        Bytes::from(format!("{a}/range"))
    );
    assert_eq!(
        listed(&groups, &["stable"]).await,
        vec![(GROUP.to_string(), "consumer".into(), "Stable".into())]
    );
    assert!(listed(&groups, &["Empty"]).await.is_empty());

    // A member whose protocols match none of the group's is refused.
    let odd = groups
        .join_group(join_request("", &["sticky-only"]), 3)
        .await;
    assert_eq!(
        odd.error_code,
        ResponseError::InconsistentGroupProtocol.code()
    );
    // An unknown group answers Dead (GROUP_ID_NOT_FOUND from v6).
    let unknown = describe(&groups, "nope", 6).await;
    assert_eq!(unknown.error_code, ResponseError::GroupIdNotFound.code());
    assert_eq!(
        describe(&groups, "nope", 5).await.group_state.as_str(),
        "Dead"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaving_member_makes_the_group_rebalance() {
    let dir = tempfile::tempdir().unwrap();
    let groups = coordinator(open(dir.path()).await);
    let (a, b) = two_member_group(&groups).await;
    let leave = LeaveGroupRequest::default()
        .with_group_id(s(GROUP).into())
        .with_members(vec![
            MemberIdentity::default().with_member_id(s(&b)),
            MemberIdentity::default().with_member_id(s("stranger")),
        ]);
    let answer = groups.leave_group(leave, 3).await;
    let codes: Vec<i16> = answer.members.iter().map(|m| m.error_code).collect();
    assert_eq!(codes, vec![0, ResponseError::UnknownMemberId.code()]);
    assert_eq!(
        heartbeat(&groups, &a, 2).await,
        ResponseError::RebalanceInProgress.code()
    );
    assert_eq!(
        describe(&groups, GROUP, 5).await.group_state.as_str(),
        "PreparingRebalance"
    );
    let rejoined = spawn_join(&groups, &a).await.unwrap();
    assert_eq!((rejoined.error_code, rejoined.generation_id), (0, 3));
    assert_eq!(rejoined.members.len(), 1);
    // The last member leaving (v0 form) empties the group.
    let leave = LeaveGroupRequest::default()
        .with_group_id(s(GROUP).into())
        .with_member_id(s(&a));
    assert_eq!(groups.leave_group(leave, 0).await.error_code, 0);
    assert_eq!(
        describe(&groups, GROUP, 5).await.group_state.as_str(),
        "Empty"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_member_is_removed_when_its_session_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let groups = coordinator(open(dir.path()).await);
    let session = MIN_SESSION_TIMEOUT_MS;
    let (a, b) = two_member_group_with(&groups, session).await;
    let started = std::time::Instant::now();
    // Only the leader heartbeats, until the follower's session has ended.
    wait_long(|| async {
        let code = heartbeat(&groups, &a, 2).await;
        assert!(
            code == 0 || code == ResponseError::RebalanceInProgress.code(),
            "{code}"
        );
        code != 0
    })
    .await;
    assert!(started.elapsed() >= Duration::from_millis(session as u64 - 500));
    let rejoined = spawn_join_with(&groups, &a, session).await.unwrap();
    assert_eq!(rejoined.generation_id, 3);
    let ids: Vec<_> = rejoined
        .members
        .iter()
        .map(|m| m.member_id.to_string())
        .collect();
    assert_eq!(ids, vec![a.clone()]);
    assert_eq!(
        heartbeat(&groups, &b, 3).await,
        ResponseError::UnknownMemberId.code()
    );
    // The leader now stays silent: a newcomer's join completes once the leader is dropped.
    let joined = spawn_join_with(&groups, "", session).await.unwrap();
    assert_eq!(joined.error_code, 0);
    assert_eq!(joined.generation_id, 4);
    assert_eq!(joined.leader, joined.member_id);
    assert_eq!(
        heartbeat(&groups, &a, 3).await,
        ResponseError::UnknownMemberId.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_never_syncs_is_dropped_after_the_rebalance_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let groups = coordinator(open(dir.path()).await);
    let request = join_request("", &["range"]).with_rebalance_timeout_ms(500);
    let joined = groups.join_group(request, 3).await;
    assert_eq!((joined.error_code, joined.generation_id), (0, 1));
    assert_eq!(
        describe(&groups, GROUP, 5).await.group_state.as_str(),
        "CompletingRebalance"
    );
    let id = joined.member_id.to_string();
    // Its heartbeats do not save it: the assignment never came.
    wait_long(|| async {
        let code = heartbeat(&groups, &id, 1).await;
        code == ResponseError::UnknownMemberId.code()
    })
    .await;
    assert_eq!(
        describe(&groups, GROUP, 5).await.group_state.as_str(),
        "Empty"
    );
}

/// Polls `check` every 50 ms for up to a minute.
async fn wait_long<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("condition not reached in a minute");
}

fn commit_request(
    group: &str,
    generation: i32,
    member: &str,
    offsets: &[(&str, i32, i64)],
) -> OffsetCommitRequest {
    let mut topics: BTreeMap<&str, Vec<OffsetCommitRequestPartition>> = BTreeMap::new();
    for (topic, partition, offset) in offsets {
        topics.entry(topic).or_default().push(
            OffsetCommitRequestPartition::default()
                .with_partition_index(*partition)
                .with_committed_offset(*offset)
                .with_committed_metadata(Some(s("meta"))),
        );
    }
    OffsetCommitRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id_or_member_epoch(generation)
        .with_member_id(s(member))
        .with_topics(
            topics
                .into_iter()
                .map(|(t, p)| {
                    OffsetCommitRequestTopic::default()
                        .with_name(s(t).into())
                        .with_partitions(p)
                })
                .collect(),
        )
}

fn commit_codes(response: OffsetCommitResponse) -> Vec<i16> {
    response
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| p.error_code))
        .collect()
}

/// OffsetFetch v7: (topic, partition, offset) for `topics` (every committed one when None).
async fn fetched(
    groups: &Groups,
    group: &str,
    topics: Option<Vec<(&str, Vec<i32>)>>,
) -> Vec<(String, i32, i64)> {
    let request = OffsetFetchRequest::default()
        .with_group_id(s(group).into())
        .with_topics(topics.map(|ts| {
            ts.into_iter()
                .map(|(t, p)| {
                    OffsetFetchRequestTopic::default()
                        .with_name(s(t).into())
                        .with_partition_indexes(p)
                })
                .collect()
        }));
    let response = groups.offset_fetch(request, 7).await;
    assert_eq!(response.error_code, 0);
    response
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.0.to_string(), p.partition_index, p.committed_offset))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_offsets_survive_reopening_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let groups = coordinator(store.clone());
    // A client using assign() commits with generation -1.
    let simple = commit_request("simple", -1, "", &[("t", 0, 5), ("t", 1, 7), ("u", 0, 1)]);
    assert_eq!(
        commit_codes(groups.offset_commit(simple, 8).await),
        vec![0, 0, 0]
    );
    // A member of a live group must name its generation.
    let (a, _b) = two_member_group(&groups).await;
    let stale = commit_request(GROUP, 1, &a, &[("t", 0, 3)]);
    assert_eq!(
        commit_codes(groups.offset_commit(stale, 8).await),
        vec![ResponseError::IllegalGeneration.code()]
    );
    let fresh = commit_request(GROUP, 2, &a, &[("t", 0, 3)]);
    assert_eq!(commit_codes(groups.offset_commit(fresh, 8).await), vec![0]);
    let stranger = commit_request(GROUP, 2, "stranger", &[("t", 0, 9)]);
    assert_eq!(
        commit_codes(groups.offset_commit(stranger, 8).await),
        vec![ResponseError::UnknownMemberId.code()]
    );
    let too_long = "x".repeat(offsets::MAX_METADATA_BYTES + 1);
    let mut big = commit_request("simple", -1, "", &[("t", 2, 1)]);
    big.topics[0].partitions[0].committed_metadata = Some(s(&too_long));
    assert_eq!(
        commit_codes(groups.offset_commit(big, 8).await),
        vec![ResponseError::OffsetMetadataTooLarge.code()]
    );
    drop(groups);
    store.close().await;

    let store = open(dir.path()).await;
    let groups = coordinator(store.clone());
    assert_eq!(
        fetched(&groups, "simple", None).await,
        vec![("t".into(), 0, 5), ("t".into(), 1, 7), ("u".into(), 0, 1)]
    );
    assert_eq!(
        fetched(&groups, "simple", Some(vec![("t", vec![1, 2])])).await,
        vec![("t".into(), 1, 7), ("t".into(), 2, -1)]
    );
    // v8+: several groups in one request.
    let request = OffsetFetchRequest::default().with_groups(vec![
        OffsetFetchRequestGroup::default()
            .with_group_id(s(GROUP).into())
            .with_topics(None),
        OffsetFetchRequestGroup::default()
            .with_group_id(s("none").into())
            .with_topics(None),
    ]);
    let answer = groups.offset_fetch(request, 8).await;
    assert_eq!(answer.groups.len(), 2);
    let first = &answer.groups[0].topics[0];
    assert_eq!(
        (first.name.0.as_str(), first.partitions[0].committed_offset),
        ("t", 3)
    );
    assert_eq!(first.partitions[0].metadata.as_deref(), Some("meta"));
    assert!(answer.groups[1].topics.is_empty());
    // Groups known only by their offsets are listed as Empty.
    assert_eq!(
        listed(&groups, &[]).await,
        vec![
            (GROUP.to_string(), "consumer".into(), "Empty".into()),
            ("simple".to_string(), "consumer".into(), "Empty".into())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sink_connectors_are_read_only_connect_groups() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let config = BTreeMap::from([
        ("connector.class".to_string(), "FileStreamSink".to_string()),
        ("topics".to_string(), "t".to_string()),
    ]);
    for (name, config) in [("snk", config), ("src", BTreeMap::new())] {
        crate::test_support::create_running(&store, name, config).await;
    }
    store.record_connector_status(
        "snk",
        StoredStatus {
            state: State::Running,
            trace: None,
            worker_id: "w".into(),
        },
    );
    store
        .write_sink_offsets("snk".into(), vec![("t".into(), 0, Some(42))])
        .await
        .unwrap();
    let groups = coordinator(store);
    assert_eq!(
        listed(&groups, &[]).await,
        vec![(
            "connect-snk".to_string(),
            "consumer".into(),
            "Stable".into()
        )]
    );
    assert_eq!(
        describe(&groups, "connect-snk", 5)
            .await
            .group_state
            .as_str(),
        "Stable"
    );
    assert_eq!(
        fetched(&groups, "connect-snk", None).await,
        vec![("t".into(), 0, 42)]
    );
    let commit = commit_request("connect-snk", -1, "", &[("t", 0, 1)]);
    assert_eq!(
        commit_codes(groups.offset_commit(commit, 8).await),
        vec![SINK_GROUP_ERROR.code()]
    );
    let mut join = join_request("", &["range"]);
    join.group_id = s("connect-snk").into();
    assert_eq!(
        groups.join_group(join, 5).await.error_code,
        SINK_GROUP_ERROR.code()
    );
    assert_eq!(
        fetched(&groups, "connect-snk", None).await,
        vec![("t".into(), 0, 42)]
    );
    // connect-<name> without such a sink is an ordinary group.
    let other = commit_request("connect-src", -1, "", &[("t", 0, 1)]);
    assert_eq!(commit_codes(groups.offset_commit(other, 8).await), vec![0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_members_and_the_coordinator_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let groups = coordinator(open(dir.path()).await);
    let mut request = join_request("", &["range"]);
    request.group_instance_id = Some(s("host-1"));
    // A static member gets its id at once (no MEMBER_ID_REQUIRED round).
    let first = groups.join_group(request.clone(), 5).await;
    assert_eq!((first.error_code, first.generation_id), (0, 1));
    // Coming back without its id replaces the former incarnation, which is fenced.
    let again = groups.join_group(request, 5).await;
    assert_eq!(again.error_code, 0);
    assert_ne!(again.member_id, first.member_id);
    let fenced = HeartbeatRequest::default()
        .with_group_id(s(GROUP).into())
        .with_member_id(first.member_id.clone())
        .with_group_instance_id(Some(s("host-1")))
        .with_generation_id(again.generation_id);
    assert_eq!(
        groups.heartbeat(fenced, 4).await.error_code,
        ResponseError::FencedInstanceId.code()
    );

    let old = groups
        .find_coordinator(FindCoordinatorRequest::default().with_key(s(GROUP)), 3)
        .await;
    assert_eq!(
        (old.node_id.0, old.host.as_str(), old.port),
        (1, "localhost", 9092)
    );
    let new = groups
        .find_coordinator(
            FindCoordinatorRequest::default().with_coordinator_keys(vec![s("a"), s("b")]),
            4,
        )
        .await;
    let keys: Vec<_> = new.coordinators.iter().map(|c| c.key.to_string()).collect();
    assert_eq!(keys, vec!["a", "b"]);
    assert_eq!(new.coordinators[1].port, 9092);
    // The client's id and address, when the listener passes them, name the member and describe it.
    let mut request = join_request("", &["range"]);
    request.group_id = s("described").into();
    let client = ClientInfo {
        client_id: "billing-app".into(),
        client_host: "/127.0.0.1".into(),
    };
    let joined = groups.join_group_from(request, 3, client).await;
    assert!(
        joined.member_id.starts_with("billing-app-"),
        "{:?}",
        joined.member_id
    );
    let d = describe(&groups, "described", 5).await;
    let member = &d.members[0];
    assert_eq!(
        (member.client_id.as_str(), member.client_host.as_str()),
        ("billing-app", "/127.0.0.1")
    );
    // A second listener answers with its own address.
    let sasl = Node {
        id: 1,
        host: "edge".into(),
        port: 9093,
    };
    let request = FindCoordinatorRequest::default().with_key(s(GROUP));
    let at = groups.find_coordinator_at(request, 3, &sasl);
    assert_eq!((at.host.as_str(), at.port), ("edge", 9093));
}

fn encodes<M: Encodable + Message>(message: &M) {
    encodes_at(message, M::VERSIONS.min..=M::VERSIONS.max);
}

fn encodes_at<M: Encodable + Message>(message: &M, versions: std::ops::RangeInclusive<i16>) {
    for version in versions {
        let mut buf = BytesMut::new();
        message
            .encode(&mut buf, version)
            .unwrap_or_else(|e| panic!("{} v{version}: {e}", std::any::type_name::<M>()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_encodes_in_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let groups = coordinator(open(dir.path()).await);
    let (a, b) = two_member_group(&groups).await;
    for version in 0..=9 {
        // A group of its own per version: the join completes at once.
        let mut request = join_request("", &["range", "roundrobin"]);
        request.group_id = s(&format!("enc-{version}")).into();
        request.group_instance_id = (version >= 5).then(|| s("static"));
        let mut answer = groups.join_group(request.clone(), version).await;
        if answer.error_code == ResponseError::MemberIdRequired.code() {
            encodes(&answer);
            request.member_id = answer.member_id.clone();
            answer = groups.join_group(request, version).await;
        }
        assert_eq!(answer.error_code, 0, "v{version}");
        assert_eq!(answer.members.len(), 1);
        encodes(&answer);
        encodes(&groups.join_group(join_request("", &["x"]), version).await);
    }
    let _ = a;
    encodes(&spawn_sync(&groups, &b, 9, &[]).await.unwrap());
    encodes(&groups.heartbeat(HeartbeatRequest::default(), 0).await);
    encodes(&describe_all(&groups).await);
    encodes(&groups.list_groups(ListGroupsRequest::default(), 5).await);
    encodes(
        &groups
            .offset_commit(commit_request("simple", -1, "", &[("t", 0, 1)]), 8)
            .await,
    );
    let request = OffsetFetchRequest::default()
        .with_group_id(s("simple").into())
        .with_topics(None);
    encodes_at(&groups.offset_fetch(request.clone(), 7).await, 1..=7);
    let request =
        OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
            .with_group_id(s("simple").into())
            .with_topics(None)]);
    encodes_at(&groups.offset_fetch(request, 8).await, 8..=9);
    for version in 0..=5 {
        let leave = LeaveGroupRequest::default()
            .with_group_id(s(GROUP).into())
            .with_member_id(s("x"))
            .with_members(vec![MemberIdentity::default().with_member_id(s("x"))]);
        encodes_at(&groups.leave_group(leave, version).await, version..=version);
    }
    for version in 0..=6 {
        let request = FindCoordinatorRequest::default()
            .with_key(s("k"))
            .with_coordinator_keys(vec![s("k")]);
        let answer = groups.find_coordinator(request, version).await;
        encodes_at(&answer, version..=version);
    }
}

async fn describe_all(groups: &Groups) -> DescribeGroupsResponse {
    let request =
        DescribeGroupsRequest::default().with_groups(vec![s(GROUP).into(), s("none").into()]);
    groups.describe_groups(request, 3).await
}
