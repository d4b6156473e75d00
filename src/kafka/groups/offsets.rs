//! OffsetCommit, OffsetFetch, ListGroups and DescribeGroups: what a group has committed (in the store) and
//! what it looks like, for client groups and for the sink connectors' `connect-<name>` groups.

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::{
    DescribeGroupsRequest, DescribeGroupsResponse, ListGroupsRequest, ListGroupsResponse,
    OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse,
};
use tokio::time::Instant;

use super::{code, sink_connector, str, GroupState, Groups, SINK_GROUP_ERROR, SINK_GROUP_PREFIX};
use crate::storage::groups::GroupOffset;

/// The longest metadata string a commit may carry (Kafka's `offset.metadata.max.bytes` default).
pub const MAX_METADATA_BYTES: usize = 4096;

/// The protocol type shown for groups known only by their committed offsets, and for sink groups.
const CONSUMER: &str = "consumer";

/// Checks that a commit may be stored, as Kafka's classic coordinator does: a commit with generation -1
/// (a client using `assign()`) is accepted while the group has no members.
fn check_commit(groups: &Groups, request: &OffsetCommitRequest) -> Result<(), ResponseError> {
    let generation = request.generation_id_or_member_epoch;
    let instance = request.group_instance_id.as_ref().map(|s| s.to_string());
    groups.with_group(&request.group_id.0, |group| match group {
        None if generation < 0 => Ok(()),
        None => Err(ResponseError::IllegalGeneration),
        Some(g) if g.state == GroupState::Empty && generation < 0 => Ok(()),
        Some(g) if g.state == GroupState::CompletingRebalance => {
            Err(ResponseError::RebalanceInProgress)
        }
        Some(g) => {
            g.check_member(&request.member_id, instance.as_deref(), generation)?;
            g.touch(&request.member_id, Instant::now());
            Ok(())
        }
    })
}

pub(super) async fn commit(
    groups: &Groups,
    request: OffsetCommitRequest,
    _version: i16,
) -> OffsetCommitResponse {
    let group_id = request.group_id.0.to_string();
    let mut verdict = if group_id.is_empty() {
        Err(ResponseError::InvalidGroupId)
    } else if groups.is_sink_group(&group_id).await {
        Err(SINK_GROUP_ERROR)
    } else {
        check_commit(groups, &request)
    };
    let mut offsets = Vec::new();
    for topic in &request.topics {
        for p in &topic.partitions {
            let metadata = p.committed_metadata.as_ref().map(|m| m.to_string());
            if metadata
                .as_ref()
                .is_some_and(|m| m.len() > MAX_METADATA_BYTES)
            {
                continue;
            }
            offsets.push(GroupOffset {
                topic: topic.name.0.to_string(),
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata,
            });
        }
    }
    if verdict.is_ok() && !offsets.is_empty() {
        if let Err(error) = groups
            .shared
            .store
            .commit_group_offsets(group_id.clone(), offsets)
            .await
        {
            tracing::warn!(group = %group_id, %error, "Could not store a consumer group's offsets.");
            verdict = Err(ResponseError::KafkaStorageError);
        }
    }
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let too_large = p
                        .committed_metadata
                        .as_ref()
                        .is_some_and(|m| m.len() > MAX_METADATA_BYTES);
                    let error = match &verdict {
                        Err(e) => Some(*e),
                        Ok(()) if too_large => Some(ResponseError::OffsetMetadataTooLarge),
                        Ok(()) => None,
                    };
                    OffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code(error))
                })
                .collect();
            OffsetCommitResponseTopic::default()
                .with_name(topic.name.clone())
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    OffsetCommitResponse::default().with_topics(topics)
}

/// A group's committed offsets: the sink connector's for `connect-<sink>`, the store's otherwise.
async fn committed(groups: &Groups, group: &str) -> Result<Vec<GroupOffset>, ResponseError> {
    let store = &groups.shared.store;
    let result = match sink_connector(group) {
        Some(name) if groups.is_sink_group(group).await => {
            store.sink_offsets(name.to_string()).await.map(|rows| {
                rows.into_iter()
                    .map(|(topic, partition, offset)| GroupOffset {
                        topic,
                        partition,
                        offset,
                        leader_epoch: -1,
                        metadata: Some(String::new()),
                    })
                    .collect()
            })
        }
        _ => store.group_offsets(group.to_string()).await,
    };
    result.map_err(|error| {
        tracing::warn!(%group, %error, "Could not read a consumer group's offsets.");
        ResponseError::CoordinatorNotAvailable
    })
}

/// One answered partition: (partition, offset, leader epoch, metadata).
type Answer = (i32, i64, i32, String);

/// The answer for `wanted` topics (every committed one when `None`), sorted by topic.
fn select(
    committed: &[GroupOffset],
    wanted: Option<Vec<(String, Vec<i32>)>>,
) -> BTreeMap<String, Vec<Answer>> {
    let mut out: BTreeMap<String, Vec<Answer>> = BTreeMap::new();
    let answer = |o: &GroupOffset| {
        (
            o.partition,
            o.offset,
            o.leader_epoch,
            o.metadata.clone().unwrap_or_default(),
        )
    };
    match wanted {
        None => {
            for o in committed {
                out.entry(o.topic.clone()).or_default().push(answer(o));
            }
        }
        Some(topics) => {
            for (topic, partitions) in topics {
                let answers = partitions
                    .into_iter()
                    .map(|p| {
                        committed
                            .iter()
                            .find(|o| o.topic == topic && o.partition == p)
                            .map_or((p, -1, -1, String::new()), answer)
                    })
                    .collect();
                out.insert(topic, answers);
            }
        }
    }
    out
}

/// The topics of an OffsetFetch answer, in the message types of the version (`$topic`, `$partition`).
macro_rules! answer_topics {
    ($topic:ident, $partition:ident, $selected:expr) => {
        $selected
            .into_iter()
            .map(|(topic, answers)| {
                let partitions = answers
                    .into_iter()
                    .map(|(p, offset, epoch, metadata)| {
                        $partition::default()
                            .with_partition_index(p)
                            .with_committed_offset(offset)
                            .with_committed_leader_epoch(epoch)
                            .with_metadata(Some(str(metadata)))
                    })
                    .collect();
                $topic::default()
                    .with_name(str(topic).into())
                    .with_partitions(partitions)
            })
            .collect()
    };
}

/// One group's answer to OffsetFetch.
async fn fetch_group(
    groups: &Groups,
    group: &str,
    wanted: Option<Vec<(String, Vec<i32>)>>,
) -> Result<BTreeMap<String, Vec<Answer>>, ResponseError> {
    Ok(select(&committed(groups, group).await?, wanted))
}

pub(super) async fn fetch(
    groups: &Groups,
    request: OffsetFetchRequest,
    version: i16,
) -> OffsetFetchResponse {
    if version < 8 {
        let wanted = request.topics.map(|topics| {
            topics
                .into_iter()
                .map(|t| (t.name.0.to_string(), t.partition_indexes))
                .collect()
        });
        return match fetch_group(groups, &request.group_id.0, wanted).await {
            Ok(selected) => OffsetFetchResponse::default().with_topics(answer_topics!(
                OffsetFetchResponseTopic,
                OffsetFetchResponsePartition,
                selected
            )),
            Err(e) => OffsetFetchResponse::default().with_error_code(e.code()),
        };
    }
    let mut out = Vec::new();
    for group in request.groups {
        let wanted = group.topics.map(|topics| {
            topics
                .into_iter()
                .map(|t| (t.name.0.to_string(), t.partition_indexes))
                .collect()
        });
        let answer = OffsetFetchResponseGroup::default().with_group_id(group.group_id.clone());
        out.push(match fetch_group(groups, &group.group_id.0, wanted).await {
            Ok(selected) => answer.with_topics(answer_topics!(
                OffsetFetchResponseTopics,
                OffsetFetchResponsePartitions,
                selected
            )),
            Err(e) => answer.with_error_code(e.code()),
        });
    }
    OffsetFetchResponse::default().with_groups(out)
}

/// What ListGroups and DescribeGroups know of one group.
struct Summary {
    state: GroupState,
    protocol_type: String,
    protocol: String,
    members: Vec<DescribedGroupMember>,
}

/// Every group: those with members, those known only by their offsets, and the sink connectors.
async fn summaries(groups: &Groups) -> Result<BTreeMap<String, Summary>, ResponseError> {
    let store = &groups.shared.store;
    let unavailable = |error: crate::storage::StorageError| {
        tracing::warn!(%error, "Could not read the consumer groups.");
        ResponseError::CoordinatorNotAvailable
    };
    let committed = store.committed_groups().await.map_err(unavailable)?;
    let sinks = store.sink_groups().await.map_err(unavailable)?;
    let mut out = BTreeMap::new();
    for id in committed {
        out.insert(id, summary(GroupState::Empty));
    }
    {
        let live = groups.shared.groups.lock().expect("groups lock");
        for (id, slot) in live.iter() {
            out.insert(id.clone(), live_summary(&slot.group));
        }
    }
    for sink in sinks {
        let state = if sink.running {
            GroupState::Stable
        } else {
            GroupState::Empty
        };
        out.insert(
            format!("{SINK_GROUP_PREFIX}{}", sink.connector),
            summary(state),
        );
    }
    Ok(out)
}

fn summary(state: GroupState) -> Summary {
    Summary {
        state,
        protocol_type: CONSUMER.into(),
        protocol: String::new(),
        members: Vec::new(),
    }
}

fn live_summary(group: &super::Group) -> Summary {
    let protocol = group.protocol.clone().unwrap_or_default();
    let members = group
        .members
        .values()
        .map(|m| {
            DescribedGroupMember::default()
                .with_member_id(str(m.id.clone()))
                .with_group_instance_id(m.instance_id.clone().map(str))
                .with_client_id(str(m.client_id.clone()))
                .with_client_host(str(m.client_host.clone()))
                .with_member_metadata(
                    m.protocols
                        .iter()
                        .find(|(name, _)| *name == protocol)
                        .map(|(_, metadata)| metadata.clone())
                        .unwrap_or_default(),
                )
                .with_member_assignment(m.assignment.clone())
        })
        .collect();
    Summary {
        state: group.state,
        protocol_type: group
            .protocol_type
            .clone()
            .unwrap_or_else(|| CONSUMER.into()),
        protocol,
        members,
    }
}

pub(super) async fn list(
    groups: &Groups,
    request: ListGroupsRequest,
    _version: i16,
) -> ListGroupsResponse {
    let all = match summaries(groups).await {
        Ok(all) => all,
        Err(e) => return ListGroupsResponse::default().with_error_code(e.code()),
    };
    let states: BTreeSet<String> = request
        .states_filter
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let classic_wanted = request.types_filter.is_empty()
        || request
            .types_filter
            .iter()
            .any(|t| t.eq_ignore_ascii_case("classic"));
    let listed = all
        .into_iter()
        .filter(|(_, s)| {
            classic_wanted
                && (states.is_empty() || states.contains(&s.state.name().to_ascii_lowercase()))
        })
        .map(|(id, s)| {
            ListedGroup::default()
                .with_group_id(str(id).into())
                .with_protocol_type(str(s.protocol_type))
                .with_group_state(str(s.state.name()))
                .with_group_type(str("classic"))
        })
        .collect();
    ListGroupsResponse::default().with_groups(listed)
}

pub(super) async fn describe(
    groups: &Groups,
    request: DescribeGroupsRequest,
    version: i16,
) -> DescribeGroupsResponse {
    let all = summaries(groups).await;
    let described = request
        .groups
        .into_iter()
        .map(|id| {
            let answer = DescribedGroup::default().with_group_id(id.clone());
            if id.0.is_empty() {
                return answer.with_error_code(ResponseError::InvalidGroupId.code());
            }
            let all = match &all {
                Ok(all) => all,
                Err(e) => return answer.with_error_code(e.code()),
            };
            match all.get(&*id.0) {
                Some(s) => answer
                    .with_group_state(str(s.state.name()))
                    .with_protocol_type(str(s.protocol_type.clone()))
                    .with_protocol_data(str(s.protocol.clone()))
                    .with_members(s.members.clone()),
                None if version >= 6 => answer
                    .with_group_state(str(GroupState::Dead.name()))
                    .with_error_code(ResponseError::GroupIdNotFound.code())
                    .with_error_message(Some(str(format!("Group {} not found.", &*id.0)))),
                None => answer.with_group_state(str(GroupState::Dead.name())),
            }
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(described)
}
