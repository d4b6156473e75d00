//! Every version of every API key the listener advertises, asked over a real socket with requests encoded
//! by kafka-protocol's client side (the fields that version has set), and each answer decoded at the same
//! version to its last byte. An answer that fails to encode closes the connection (as ListOffsets v1–v3
//! did when it carried a leader epoch), so each exchange is also a check that the connection lives on.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_groups_response::DescribeGroupsResponse;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::KafkaWorker;

const TOPIC: &str = "versions";
/// Records produced before the version walk, so that Fetch and ListOffsets answer with data.
const SEEDED: i64 = 3;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// One connection speaking the protocol, with its own correlation ids.
struct Conn {
    stream: TcpStream,
    correlation: i32,
}

impl Conn {
    async fn open(bootstrap: &str) -> Conn {
        Conn {
            stream: TcpStream::connect(bootstrap).await.expect("connect"),
            correlation: 0,
        }
    }

    /// Sends `request` as API key `key` at `version` and decodes the answer at that version, checking that
    /// the correlation id comes back and that the body is read to its last byte.
    async fn call<Q, R>(&mut self, key: i16, version: i16, request: &Q) -> R
    where
        Q: Encodable + HeaderVersion,
        R: Decodable + HeaderVersion,
    {
        self.correlation += 1;
        let header = RequestHeader::default()
            .with_request_api_key(key)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(s("versions-test")));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, Q::header_version(version))
            .unwrap_or_else(|e| panic!("request header of key {key} v{version}: {e}"));
        request
            .encode(&mut body, version)
            .unwrap_or_else(|e| panic!("request of key {key} v{version} did not encode: {e}"));
        let mut frame = BytesMut::with_capacity(body.len() + 4);
        frame.put_i32(body.len() as i32);
        frame.extend_from_slice(&body);
        self.stream.write_all(&frame).await.expect("send");

        let length = self.stream.read_i32().await.unwrap_or_else(|e| {
            panic!("no answer to key {key} v{version} (the listener closed the connection): {e}")
        });
        let mut answer = vec![0u8; length as usize];
        self.stream
            .read_exact(&mut answer)
            .await
            .expect("the whole answer");
        let mut answer = Bytes::from(answer);
        let header = ResponseHeader::decode(&mut answer, R::header_version(version))
            .unwrap_or_else(|e| panic!("answer header of key {key} v{version}: {e}"));
        assert_eq!(
            header.correlation_id, self.correlation,
            "key {key} v{version}"
        );
        let response = R::decode(&mut answer, version)
            .unwrap_or_else(|e| panic!("answer of key {key} v{version} did not decode: {e}"));
        assert_eq!(
            answer.remaining(),
            0,
            "key {key} v{version}: bytes left after the answer"
        );
        response
    }
}

/// A record batch (format v2) of `count` records.
fn batch(count: i64) -> Bytes {
    let records: Vec<Record> = (0..count)
        .map(|i| Record {
            transactional: false,
            control: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i,
            sequence: -1,
            timestamp: 1_700_000_000_000 + i,
            key: Some(Bytes::from(format!("k{i}"))),
            value: Some(Bytes::from(format!("v{i}"))),
            headers: IndexMap::new(),
            delete_horizon: false,
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .expect("a record batch");
    buf.freeze()
}

/// CreateTopics for one topic of `partitions` partitions, one replica.
fn create_topic(name: &str, partitions: i32) -> CreateTopicsRequest {
    CreateTopicsRequest::default()
        .with_topics(vec![CreatableTopic::default()
            .with_name(s(name).into())
            .with_num_partitions(partitions)
            .with_replication_factor(1)])
        .with_timeout_ms(10_000)
}

fn produce_request(records: Option<Bytes>) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(10_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(s(TOPIC).into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(records)])])
}

/// The advertised (key, min, max) triples, from the listener's own ApiVersions answer.
async fn advertised(conn: &mut Conn) -> Vec<(i16, i16, i16)> {
    let answer: ApiVersionsResponse = conn.call(18, 0, &ApiVersionsRequest::default()).await;
    assert_eq!(answer.error_code, 0);
    answer
        .api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect()
}

fn join_request(group: &str, member: &str, version: i16) -> JoinGroupRequest {
    let mut r = JoinGroupRequest::default()
        .with_group_id(s(group).into())
        .with_session_timeout_ms(30_000)
        .with_member_id(s(member))
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name(s("range"))
            .with_metadata(Bytes::from_static(b"subscription"))]);
    if version >= 1 {
        r = r.with_rebalance_timeout_ms(30_000);
    }
    if version >= 5 {
        r = r.with_group_instance_id(None);
    }
    if version >= 7 {
        r = r.with_protocol_type(s("consumer"));
    }
    r
}

/// A member of `group` that joined and synced at the newest versions: (member id, generation).
async fn member_of(conn: &mut Conn, group: &str) -> (String, i32) {
    let first: JoinGroupResponse = conn.call(11, 9, &join_request(group, "", 9)).await;
    let member = first.member_id.to_string();
    let joined: JoinGroupResponse = conn.call(11, 9, &join_request(group, &member, 9)).await;
    assert_eq!(joined.error_code, 0, "join {group}");
    let sync = SyncGroupRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id(joined.generation_id)
        .with_member_id(s(&member))
        .with_protocol_type(Some(s("consumer")))
        .with_protocol_name(Some(s("range")))
        .with_assignments(vec![SyncGroupRequestAssignment::default()
            .with_member_id(s(&member))
            .with_assignment(Bytes::from_static(b"assignment"))]);
    let synced: SyncGroupResponse = conn.call(14, 5, &sync).await;
    assert_eq!(synced.error_code, 0, "sync {group}");
    (member, joined.generation_id)
}

/// Asks API key `key` at `version` with the fields that version has, and checks what the answer says.
async fn ask(conn: &mut Conn, bootstrap: &str, key: i16, v: i16) {
    let group = format!("group-{key}-{v}");
    match key {
        0 if v < 3 => {
            // Produce v0–v2 (message formats v0/v1) is advertised, because librdkafka turns compression on
            // only when v0 is listed, but not answered: such a request closes its connection (the
            // documented difference). The client library encodes no such request, so it is written by
            // hand: the header, then acks, timeout and an empty topic array.
            let mut own = Conn::open(bootstrap).await;
            let mut body = BytesMut::new();
            body.put_i16(key);
            body.put_i16(v);
            body.put_i32(1);
            body.put_i16(-1);
            body.put_i16(-1);
            body.put_i32(1000);
            body.put_i32(0);
            let mut frame = BytesMut::new();
            frame.put_i32(body.len() as i32);
            frame.extend_from_slice(&body);
            own.stream.write_all(&frame).await.expect("send");
            let mut rest = Vec::new();
            let read =
                tokio::time::timeout(crate::common::DEADLINE, own.stream.read_to_end(&mut rest))
                    .await
                    .expect("the listener closes the connection");
            assert!(
                read.is_ok() && rest.is_empty(),
                "produce v{v}: closed without an answer"
            );
        }
        0 => {
            let request = produce_request(Some(batch(1))).with_transactional_id(None);
            let r: ProduceResponse = conn.call(key, v, &request).await;
            let p = &r.responses[0].partition_responses[0];
            assert_eq!(p.error_code, 0, "produce v{v}");
            assert!(p.base_offset >= SEEDED, "produce v{v}");
        }
        1 => {
            let mut partition = FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 20);
            if v >= 5 {
                partition = partition.with_log_start_offset(-1);
            }
            if v >= 9 {
                partition = partition.with_current_leader_epoch(-1);
            }
            let mut request = FetchRequest::default()
                .with_max_wait_ms(0)
                .with_min_bytes(1)
                .with_max_bytes(1 << 20)
                .with_topics(vec![FetchTopic::default()
                    .with_topic(s(TOPIC).into())
                    .with_partitions(vec![partition])]);
            if v >= 4 {
                request = request.with_isolation_level(0);
            }
            if v >= 7 {
                request = request.with_session_id(0).with_session_epoch(-1);
            }
            if v >= 11 {
                request = request.with_rack_id(s(""));
            }
            let r: FetchResponse = conn.call(key, v, &request).await;
            let p = &r.responses[0].partitions[0];
            assert_eq!(p.error_code, 0, "fetch v{v}");
            assert!(p.high_watermark >= SEEDED, "fetch v{v}");
            assert!(
                p.records.as_ref().is_some_and(|b| !b.is_empty()),
                "fetch v{v} returns records"
            );
        }
        2 => {
            for (timestamp, expected) in [(-2i64, Some(0i64)), (-1, None)] {
                let mut partition = ListOffsetsPartition::default()
                    .with_partition_index(0)
                    .with_timestamp(timestamp);
                if v >= 4 {
                    partition = partition.with_current_leader_epoch(-1);
                }
                let mut request = ListOffsetsRequest::default()
                    .with_replica_id((-1).into())
                    .with_topics(vec![ListOffsetsTopic::default()
                        .with_name(s(TOPIC).into())
                        .with_partitions(vec![partition])]);
                if v >= 2 {
                    request = request.with_isolation_level(0);
                }
                let r: ListOffsetsResponse = conn.call(key, v, &request).await;
                let p = &r.topics[0].partitions[0];
                assert_eq!(p.error_code, 0, "list offsets v{v} at {timestamp}");
                match expected {
                    Some(offset) => assert_eq!(p.offset, offset, "earliest at v{v}"),
                    None => assert!(p.offset >= SEEDED, "latest at v{v}: {}", p.offset),
                }
                if v >= 4 {
                    assert_eq!(p.leader_epoch, 0, "v{v} carries the leader epoch");
                }
            }
        }
        3 => {
            let mut request = MetadataRequest::default().with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some(s(TOPIC).into())),
            ]));
            if v >= 4 {
                request = request.with_allow_auto_topic_creation(false);
            }
            if v >= 8 {
                request = request.with_include_topic_authorized_operations(true);
            }
            let r: MetadataResponse = conn.call(key, v, &request).await;
            assert_eq!(r.brokers.len(), 1, "metadata v{v}");
            assert_eq!(r.topics[0].error_code, 0, "metadata v{v}");
            assert!(!r.topics[0].partitions.is_empty(), "metadata v{v}");
        }
        8 => {
            let (member, generation) = member_of(conn, &group).await;
            let mut partition = OffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(1)
                .with_committed_metadata(Some(s("m")));
            if v >= 6 {
                partition = partition.with_committed_leader_epoch(-1);
            }
            let mut request = OffsetCommitRequest::default()
                .with_group_id(s(&group).into())
                .with_generation_id_or_member_epoch(generation)
                .with_member_id(s(&member))
                .with_topics(vec![OffsetCommitRequestTopic::default()
                    .with_name(s(TOPIC).into())
                    .with_partitions(vec![partition])]);
            if (2..=4).contains(&v) {
                request = request.with_retention_time_ms(-1);
            }
            if v >= 7 {
                request = request.with_group_instance_id(None);
            }
            let r: OffsetCommitResponse = conn.call(key, v, &request).await;
            assert_eq!(
                r.topics[0].partitions[0].error_code, 0,
                "offset commit v{v}"
            );
        }
        9 => {
            let (member, generation) = member_of(conn, &group).await;
            let commit = OffsetCommitRequest::default()
                .with_group_id(s(&group).into())
                .with_generation_id_or_member_epoch(generation)
                .with_member_id(s(&member))
                .with_topics(vec![OffsetCommitRequestTopic::default()
                    .with_name(s(TOPIC).into())
                    .with_partitions(vec![OffsetCommitRequestPartition::default()
                        .with_partition_index(0)
                        .with_committed_offset(2)])]);
            let committed: OffsetCommitResponse = conn.call(8, 9, &commit).await;
            assert_eq!(committed.topics[0].partitions[0].error_code, 0);
            let request = if v < 8 {
                let mut r = OffsetFetchRequest::default()
                    .with_group_id(s(&group).into())
                    .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                        .with_name(s(TOPIC).into())
                        .with_partition_indexes(vec![0])]));
                if v >= 7 {
                    r = r.with_require_stable(true);
                }
                r
            } else {
                OffsetFetchRequest::default()
                    .with_groups(vec![OffsetFetchRequestGroup::default()
                        .with_group_id(s(&group).into())
                        .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                            .with_name(s(TOPIC).into())
                            .with_partition_indexes(vec![0])]))])
                    .with_require_stable(true)
            };
            let r: OffsetFetchResponse = conn.call(key, v, &request).await;
            let offset = if v < 8 {
                r.topics[0].partitions[0].committed_offset
            } else {
                r.groups[0].topics[0].partitions[0].committed_offset
            };
            assert_eq!(offset, 2, "offset fetch v{v}");
        }
        10 => {
            let request = if v < 4 {
                let mut r = FindCoordinatorRequest::default().with_key(s(&group));
                if v >= 1 {
                    r = r.with_key_type(0);
                }
                r
            } else {
                FindCoordinatorRequest::default()
                    .with_key_type(0)
                    .with_coordinator_keys(vec![s(&group)])
            };
            let r: FindCoordinatorResponse = conn.call(key, v, &request).await;
            if v < 4 {
                assert_eq!(r.error_code, 0, "find coordinator v{v}");
                assert!(r.port > 0, "find coordinator v{v}");
            } else {
                assert_eq!(r.coordinators[0].error_code, 0, "find coordinator v{v}");
                assert!(r.coordinators[0].port > 0, "find coordinator v{v}");
            }
        }
        11 => {
            let first: JoinGroupResponse = conn.call(key, v, &join_request(&group, "", v)).await;
            let member = if v >= 4 {
                assert_eq!(first.error_code, 79, "v{v} asks for a member id first");
                let again: JoinGroupResponse = conn
                    .call(key, v, &join_request(&group, &first.member_id, v))
                    .await;
                assert_eq!(again.error_code, 0, "join v{v}");
                again
            } else {
                assert_eq!(first.error_code, 0, "join v{v}");
                first
            };
            assert_eq!(
                member.leader, member.member_id,
                "join v{v}: the one member leads"
            );
            assert_eq!(member.members.len(), 1, "join v{v}");
        }
        12 => {
            let (member, generation) = member_of(conn, &group).await;
            let mut request = HeartbeatRequest::default()
                .with_group_id(s(&group).into())
                .with_generation_id(generation)
                .with_member_id(s(&member));
            if v >= 3 {
                request = request.with_group_instance_id(None);
            }
            let r: HeartbeatResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "heartbeat v{v}");
        }
        13 => {
            let (member, _) = member_of(conn, &group).await;
            let request = if v < 3 {
                LeaveGroupRequest::default()
                    .with_group_id(s(&group).into())
                    .with_member_id(s(&member))
            } else {
                LeaveGroupRequest::default()
                    .with_group_id(s(&group).into())
                    .with_members(vec![MemberIdentity::default()
                        .with_member_id(s(&member))
                        .with_group_instance_id(None)])
            };
            let r: LeaveGroupResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "leave v{v}");
        }
        14 => {
            let first: JoinGroupResponse = conn.call(11, 9, &join_request(&group, "", 9)).await;
            let joined: JoinGroupResponse = conn
                .call(11, 9, &join_request(&group, &first.member_id, 9))
                .await;
            let member = joined.member_id.to_string();
            let mut request = SyncGroupRequest::default()
                .with_group_id(s(&group).into())
                .with_generation_id(joined.generation_id)
                .with_member_id(s(&member))
                .with_assignments(vec![SyncGroupRequestAssignment::default()
                    .with_member_id(s(&member))
                    .with_assignment(Bytes::from_static(b"assignment"))]);
            if v >= 3 {
                request = request.with_group_instance_id(None);
            }
            if v >= 5 {
                request = request
                    .with_protocol_type(Some(s("consumer")))
                    .with_protocol_name(Some(s("range")));
            }
            let r: SyncGroupResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "sync v{v}");
            assert_eq!(r.assignment.as_ref(), b"assignment", "sync v{v}");
        }
        15 => {
            member_of(conn, &group).await;
            let mut request = DescribeGroupsRequest::default().with_groups(vec![s(&group).into()]);
            if v >= 3 {
                request = request.with_include_authorized_operations(true);
            }
            let r: DescribeGroupsResponse = conn.call(key, v, &request).await;
            assert_eq!(r.groups[0].error_code, 0, "describe groups v{v}");
            assert_eq!(r.groups[0].members.len(), 1, "describe groups v{v}");
        }
        16 => {
            member_of(conn, &group).await;
            let mut request = ListGroupsRequest::default();
            if v >= 4 {
                request = request.with_states_filter(vec![s("Stable")]);
            }
            let r: ListGroupsResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "list groups v{v}");
            assert!(
                r.groups.iter().any(|g| g.group_id.as_str() == group),
                "list groups v{v} names {group}"
            );
        }
        17 | 36 => {
            // SASL on a listener without it: the answer must still be well formed, on a connection
            // of its own (the listener may close it afterwards).
            let mut own = Conn::open(bootstrap).await;
            if key == 17 {
                let r: SaslHandshakeResponse = own
                    .call(
                        key,
                        v,
                        &SaslHandshakeRequest::default().with_mechanism(s("PLAIN")),
                    )
                    .await;
                assert_ne!(r.error_code, 0, "no SASL on a PLAINTEXT listener");
            } else {
                let request = SaslAuthenticateRequest::default()
                    .with_auth_bytes(Bytes::from_static(b"\0user\0secret"));
                let r: SaslAuthenticateResponse = own.call(key, v, &request).await;
                assert_ne!(r.error_code, 0, "no SASL on a PLAINTEXT listener");
            }
        }
        18 => {
            let mut request = ApiVersionsRequest::default();
            if v >= 3 {
                request = request
                    .with_client_software_name(s("versions-test"))
                    .with_client_software_version(s("1.0"));
            }
            let r: ApiVersionsResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "api versions v{v}");
            assert!(!r.api_keys.is_empty(), "api versions v{v}");
        }
        19 => {
            let request = create_topic(&format!("created-{v}"), 2);
            let r: CreateTopicsResponse = conn.call(key, v, &request).await;
            assert_eq!(r.topics[0].error_code, 0, "create topics v{v}");
        }
        20 => {
            let name = format!("deleted-{v}");
            let create = create_topic(&name, 1);
            let created: CreateTopicsResponse = conn.call(19, 7, &create).await;
            assert_eq!(created.topics[0].error_code, 0);
            let request = if v < 6 {
                DeleteTopicsRequest::default().with_topic_names(vec![s(&name).into()])
            } else {
                DeleteTopicsRequest::default().with_topics(vec![
                    DeleteTopicState::default().with_name(Some(s(&name).into()))
                ])
            }
            .with_timeout_ms(10_000);
            let r: DeleteTopicsResponse = conn.call(key, v, &request).await;
            assert_eq!(r.responses[0].error_code, 0, "delete topics v{v}");
        }
        22 => {
            let mut request = InitProducerIdRequest::default()
                .with_transactional_id(None)
                .with_transaction_timeout_ms(60_000);
            if v >= 3 {
                request = request
                    .with_producer_id((-1).into())
                    .with_producer_epoch(-1);
            }
            let r: InitProducerIdResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "init producer id v{v}");
            assert!(r.producer_id.0 >= 0, "init producer id v{v}");
        }
        32 => {
            let mut request = DescribeConfigsRequest::default().with_resources(vec![
                DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s(TOPIC))
                    .with_configuration_keys(None),
            ]);
            if v >= 1 {
                request = request.with_include_synonyms(true);
            }
            if v >= 3 {
                request = request.with_include_documentation(true);
            }
            let r: DescribeConfigsResponse = conn.call(key, v, &request).await;
            assert_eq!(r.results[0].error_code, 0, "describe configs v{v}");
            assert!(!r.results[0].configs.is_empty(), "describe configs v{v}");
        }
        60 => {
            let mut request =
                DescribeClusterRequest::default().with_include_cluster_authorized_operations(true);
            if v >= 1 {
                request = request.with_endpoint_type(1);
            }
            if v >= 2 {
                request = request.with_include_fenced_brokers(true);
            }
            let r: DescribeClusterResponse = conn.call(key, v, &request).await;
            assert_eq!(r.error_code, 0, "describe cluster v{v}");
            assert_eq!(r.brokers.len(), 1, "describe cluster v{v}");
        }
        other => panic!("API key {other} is advertised, and this test does not know how to ask it"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_advertised_version_of_every_api_key_is_answered_and_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let worker = KafkaWorker::start(dir.path(), &[], 0).await;
    let mut conn = Conn::open(&worker.bootstrap).await;

    let seed = create_topic(TOPIC, 1);
    let created: CreateTopicsResponse = conn.call(19, 7, &seed).await;
    assert_eq!(created.topics[0].error_code, 0);
    let seeded: ProduceResponse = conn.call(0, 9, &produce_request(Some(batch(SEEDED)))).await;
    assert_eq!(seeded.responses[0].partition_responses[0].error_code, 0);

    let apis = advertised(&mut conn).await;
    assert!(apis.len() >= 20, "advertised: {apis:?}");
    let mut asked = 0;
    for (key, min, max) in apis {
        for v in min..=max {
            ask(&mut conn, &worker.bootstrap, key, v).await;
            asked += 1;
        }
    }
    // The walk covered every version: one exchange per advertised version, on one connection that
    // stayed open throughout (a close shows as "no answer" above).
    assert!(asked > 100, "{asked} exchanges");
    worker.stop().await;
}

/// The value of the sample `name` with exactly `labels` (0 when absent: a counter not yet counted).
fn sample(scrape: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    crate::common::sample(scrape, name, labels).unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_listener_counts_requests_errors_connections_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let worker = KafkaWorker::start(dir.path(), &[("auto.create.topics.enable", "false")], 0).await;
    let before = crate::common::scrape(&worker.url).await;
    assert_eq!(
        sample(&before, "liteconnect_kafka_connections_opened_total", &[]),
        0.0
    );

    let mut conn = Conn::open(&worker.bootstrap).await;
    let seed = create_topic(TOPIC, 1);
    let _: CreateTopicsResponse = conn.call(19, 7, &seed).await;
    let records = batch(SEEDED);
    let produced = records.len() as f64;
    let _: ProduceResponse = conn.call(0, 9, &produce_request(Some(records))).await;
    let _: ProduceResponse = conn.call(0, 9, &produce_request(Some(batch(1)))).await;
    // An unknown topic: UNKNOWN_TOPIC_OR_PARTITION (3) in the answer.
    let unknown = MetadataRequest::default()
        .with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some(s("no-such-topic").into()))
        ]))
        .with_allow_auto_topic_creation(false);
    let missing: MetadataResponse = conn.call(3, 12, &unknown).await;
    assert_eq!(missing.topics[0].error_code, 3);
    let fetch = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(s(TOPIC).into())
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 20)])]);
    let _: FetchResponse = conn.call(1, 12, &fetch).await;
    drop(conn);

    // A connection that sends a negative frame size is closed as malformed.
    let mut bad = Conn::open(&worker.bootstrap).await;
    bad.stream.write_all(&(-5i32).to_be_bytes()).await.unwrap();
    let mut rest = Vec::new();
    let _ = bad.stream.read_to_end(&mut rest).await;

    let url = worker.url.clone();
    let after = crate::common::wait_for(
        "both connections counted as closed",
        crate::common::DEADLINE,
        || {
            let url = url.clone();
            async move {
                let s = crate::common::scrape(&url).await;
                let closed = sample(
                    &s,
                    "liteconnect_kafka_connections_closed_total",
                    &[("reason", "client")],
                ) + sample(
                    &s,
                    "liteconnect_kafka_connections_closed_total",
                    &[("reason", "malformed")],
                );
                (closed >= 2.0).then_some(s)
            }
        },
    )
    .await;
    let requests = |key: &str, version: &str| {
        sample(
            &after,
            "liteconnect_kafka_requests_total",
            &[("api_key", key), ("version", version)],
        )
    };
    assert_eq!(requests("0", "9"), 2.0, "two produce requests at v9");
    assert_eq!(requests("19", "7"), 1.0);
    assert_eq!(requests("3", "12"), 1.0);
    assert_eq!(requests("1", "12"), 1.0);
    assert_eq!(
        sample(
            &after,
            "liteconnect_kafka_errors_total",
            &[("api_key", "3"), ("error_code", "3")]
        ),
        1.0,
        "the unknown topic's error code is counted"
    );
    assert_eq!(
        sample(&after, "liteconnect_kafka_connections_opened_total", &[]),
        2.0
    );
    assert_eq!(
        sample(
            &after,
            "liteconnect_kafka_connections_closed_total",
            &[("reason", "client")]
        ),
        1.0
    );
    assert_eq!(
        sample(
            &after,
            "liteconnect_kafka_connections_closed_total",
            &[("reason", "malformed")]
        ),
        1.0
    );
    let produce_bytes = sample(&after, "liteconnect_kafka_produce_bytes_total", &[]);
    assert!(
        produce_bytes > produced,
        "{produce_bytes} counts both batches"
    );
    assert!(
        sample(&after, "liteconnect_kafka_fetch_bytes_total", &[]) > 0.0,
        "the fetch answer is counted"
    );
    worker.stop().await;
}
