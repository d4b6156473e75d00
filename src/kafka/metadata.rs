//! Metadata, DescribeCluster and ListOffsets: the topics of the local log seen as a one-node cluster
//! (this worker leads every partition), and the offsets of their partitions.

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId, DescribeClusterResponse, ListOffsetsRequest, ListOffsetsResponse, MetadataRequest,
    MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

use super::codec::Frame;
use super::dispatch::{respond, Broker, Connection, Reply};
use crate::storage::TopicPartition;

/// ListOffsets' timestamp asking for the log start.
const EARLIEST: i64 = -2;
/// ListOffsets' timestamp asking for the end of the log.
const LATEST: i64 = -1;
/// Records read per step when looking for an offset by timestamp.
const SCAN_STEP: usize = 5_000;

/// Whether `name` is a legal Kafka topic name.
pub(super) fn valid_topic_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

/// A topic's partition count, creating the topic when `create` and `auto.create.topics.enable` allow;
/// `None` when it does not exist.
pub(super) async fn partitions_of(
    broker: &Broker,
    topic: &str,
    create: bool,
) -> Result<Option<i32>, ResponseError> {
    if !valid_topic_name(topic) {
        return Err(ResponseError::InvalidTopicException);
    }
    let count = broker
        .store
        .partition_count(topic.to_string())
        .await
        .map_err(|_| ResponseError::KafkaStorageError)?;
    if count.is_some() || !create || !broker.settings.auto_create_topics {
        return Ok(count);
    }
    let n = broker.settings.num_partitions;
    broker
        .store
        .ensure_topic(topic.to_string(), n)
        .await
        .map_err(|_| ResponseError::KafkaStorageError)?;
    tracing::info!(
        topic,
        partitions = n,
        "Created a topic a Kafka client asked for."
    );
    broker
        .store
        .partition_count(topic.to_string())
        .await
        .map_err(|_| ResponseError::KafkaStorageError)
}

fn broker_entry(conn: &Connection) -> MetadataResponseBroker {
    MetadataResponseBroker::default()
        .with_node_id(BrokerId(conn.node.id))
        .with_host(StrBytes::from_string(conn.node.host.clone()))
        .with_port(conn.node.port)
}

fn topic_entry(
    conn: &Connection,
    name: &str,
    found: Result<Option<i32>, ResponseError>,
) -> MetadataResponseTopic {
    let topic = MetadataResponseTopic::default()
        .with_name(Some(TopicName(StrBytes::from_string(name.to_string()))));
    let count = match found {
        Ok(Some(n)) => n,
        Ok(None) => return topic.with_error_code(ResponseError::UnknownTopicOrPartition.code()),
        Err(e) => return topic.with_error_code(e.code()),
    };
    let me = BrokerId(conn.node.id);
    let partitions = (0..count)
        .map(|p| {
            MetadataResponsePartition::default()
                .with_partition_index(p)
                .with_leader_id(me)
                .with_leader_epoch(0)
                .with_replica_nodes(vec![me])
                .with_isr_nodes(vec![me])
        })
        .collect();
    topic.with_partitions(partitions)
}

/// Metadata: this node as the only broker and controller, the topics asked for (every topic when the
/// request names none), auto-created when the request and `auto.create.topics.enable` allow.
pub(super) async fn metadata(
    broker: &Broker,
    conn: &Connection,
    frame: &Frame,
    request: &MetadataRequest,
) -> Reply {
    let all = match &request.topics {
        None => true,
        Some(t) => t.is_empty() && frame.version == 0,
    };
    let mut topics = Vec::new();
    if all {
        match broker.store.topics().await {
            Ok(list) => {
                for (name, n) in list {
                    topics.push(topic_entry(conn, &name, Ok(Some(n))));
                }
            }
            Err(e) => tracing::warn!(error = %e, "Could not list the topics for a Kafka client."),
        }
    } else {
        let create = request.allow_auto_topic_creation || frame.version < 4;
        for t in request.topics.iter().flatten() {
            let Some(name) = t.name.as_ref().map(|n| n.to_string()) else {
                continue;
            };
            let found = partitions_of(broker, &name, create).await;
            topics.push(topic_entry(conn, &name, found));
        }
    }
    let response = MetadataResponse::default()
        .with_brokers(vec![broker_entry(conn)])
        .with_cluster_id(Some(StrBytes::from_string(
            broker.store.cluster_id().to_string(),
        )))
        .with_controller_id(BrokerId(conn.node.id))
        .with_topics(topics);
    respond(frame, &response)
}

/// DescribeCluster: this node alone.
pub(super) fn describe_cluster(broker: &Broker, conn: &Connection, frame: &Frame) -> Reply {
    let me = DescribeClusterBroker::default()
        .with_broker_id(BrokerId(conn.node.id))
        .with_host(StrBytes::from_string(conn.node.host.clone()))
        .with_port(conn.node.port);
    let response = DescribeClusterResponse::default()
        .with_cluster_id(StrBytes::from_string(broker.store.cluster_id().to_string()))
        .with_controller_id(BrokerId(conn.node.id))
        .with_brokers(vec![me]);
    respond(frame, &response)
}

/// The first offset whose record has a timestamp at or after `ts`, scanning from the log start; -1 when
/// there is none (as Kafka answers).
async fn offset_for_timestamp(
    broker: &Broker,
    tp: &TopicPartition,
    start: i64,
    end: i64,
    ts: i64,
) -> Result<(i64, i64), ResponseError> {
    let mut from = start;
    while from < end {
        let records = broker
            .store
            .read(tp.clone(), from, SCAN_STEP)
            .await
            .map_err(|_| ResponseError::KafkaStorageError)?;
        let Some(last) = records.last() else { break };
        if let Some(r) = records
            .iter()
            .find(|r| r.timestamp.is_some_and(|t| t >= ts))
        {
            return Ok((r.offset, r.timestamp.unwrap_or(-1)));
        }
        from = last.offset + 1;
    }
    Ok((-1, -1))
}

async fn list_one(
    broker: &Broker,
    version: i16,
    topic: &str,
    partition: i32,
    ts: i64,
) -> ListOffsetsPartitionResponse {
    let answer = ListOffsetsPartitionResponse::default().with_partition_index(partition);
    let tp = TopicPartition {
        topic: topic.to_string(),
        partition,
    };
    let offsets = match broker.store.partition_offsets(tp.clone()).await {
        Ok(Some(o)) => o,
        Ok(None) => return answer.with_error_code(ResponseError::UnknownTopicOrPartition.code()),
        Err(_) => return answer.with_error_code(ResponseError::KafkaStorageError.code()),
    };
    let found = match ts {
        EARLIEST => Ok((offsets.beginning, -1)),
        LATEST => Ok((offsets.end, -1)),
        ts if ts < 0 => Ok((offsets.end, -1)),
        ts => offset_for_timestamp(broker, &tp, offsets.beginning, offsets.end, ts).await,
    };
    match found {
        // The leader epoch is a field from v4 on; an older answer carries none (-1 is its absence).
        Ok((offset, timestamp)) => answer
            .with_offset(offset)
            .with_timestamp(timestamp)
            .with_leader_epoch(if version >= 4 { 0 } else { -1 }),
        Err(e) => answer.with_error_code(e.code()),
    }
}

/// ListOffsets: earliest (-2), latest (-1) or the first offset at or after a timestamp.
pub(super) async fn list_offsets(
    broker: &Broker,
    frame: &Frame,
    request: &ListOffsetsRequest,
) -> Reply {
    let mut topics = Vec::new();
    for t in &request.topics {
        let mut partitions = Vec::new();
        for p in &t.partitions {
            partitions.push(
                list_one(
                    broker,
                    frame.version,
                    t.name.as_str(),
                    p.partition_index,
                    p.timestamp,
                )
                .await,
            );
        }
        topics.push(
            ListOffsetsTopicResponse::default()
                .with_name(t.name.clone())
                .with_partitions(partitions),
        );
    }
    respond(frame, &ListOffsetsResponse::default().with_topics(topics))
}
