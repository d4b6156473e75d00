//! CreateTopics, DeleteTopics and DescribeConfigs on the local log's topics.

use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult,
};
use kafka_protocol::messages::{
    CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    DescribeConfigsRequest, DescribeConfigsResponse,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;

use super::codec::Frame;
use super::dispatch::{respond, Broker, Reply};
use super::metadata::valid_topic_name;

/// DescribeConfigs' resource type of a topic.
const TOPIC: i8 = 2;
/// DescribeConfigs' resource type of a broker.
const BROKER: i8 = 4;
/// Config sources: the topic's own setting, the broker's static config, the default.
const SOURCE_STATIC_BROKER: i8 = 4;
const SOURCE_DEFAULT: i8 = 5;

fn str(s: impl Into<String>) -> StrBytes {
    StrBytes::from_string(s.into())
}

async fn create_one(
    broker: &Broker,
    name: &str,
    partitions: i32,
    validate_only: bool,
) -> Result<i32, (ResponseError, String)> {
    if !valid_topic_name(name) {
        return Err((
            ResponseError::InvalidTopicException,
            format!("{name} is not a legal topic name."),
        ));
    }
    let partitions = if partitions == -1 {
        broker.settings.num_partitions
    } else {
        partitions
    };
    if partitions < 1 {
        return Err((
            ResponseError::InvalidPartitions,
            "The number of partitions must be at least 1.".into(),
        ));
    }
    let storage =
        |e: crate::storage::StorageError| (ResponseError::KafkaStorageError, e.to_string());
    if broker
        .store
        .partition_count(name.to_string())
        .await
        .map_err(storage)?
        .is_some()
    {
        return Err((
            ResponseError::TopicAlreadyExists,
            format!("Topic '{name}' already exists."),
        ));
    }
    if !validate_only {
        broker
            .store
            .ensure_topic(name.to_string(), partitions)
            .await
            .map_err(storage)?;
    }
    Ok(partitions)
}

/// CreateTopics: each topic with its partition count (`num.partitions` for -1); replication is 1.
pub(super) async fn create_topics(
    broker: &Broker,
    frame: &Frame,
    request: &CreateTopicsRequest,
) -> Reply {
    let mut topics = Vec::new();
    for t in &request.topics {
        let result = CreatableTopicResult::default().with_name(t.name.clone());
        let result = match create_one(
            broker,
            t.name.as_str(),
            t.num_partitions,
            request.validate_only,
        )
        .await
        {
            Ok(n) => result.with_num_partitions(n).with_replication_factor(1),
            Err((code, message)) => result
                .with_error_code(code.code())
                .with_error_message(Some(str(message))),
        };
        topics.push(result);
    }
    respond(frame, &CreateTopicsResponse::default().with_topics(topics))
}

async fn delete_one(broker: &Broker, name: &str) -> Result<(), (ResponseError, String)> {
    let storage =
        |e: crate::storage::StorageError| (ResponseError::KafkaStorageError, e.to_string());
    let users = broker
        .store
        .topic_users(name.to_string())
        .await
        .map_err(storage)?;
    if !users.is_empty() {
        return Err((
            ResponseError::PolicyViolation,
            format!(
                "Topic {name} is used by the connector(s) {}; delete or reconfigure them first.",
                users.join(", ")
            ),
        ));
    }
    if broker
        .store
        .delete_topic(name.to_string())
        .await
        .map_err(storage)?
    {
        Ok(())
    } else {
        Err((
            ResponseError::UnknownTopicOrPartition,
            format!("Topic {name} does not exist."),
        ))
    }
}

/// DeleteTopics: a topic a connector uses is refused, as `DELETE /topics/{t}` refuses it.
pub(super) async fn delete_topics(
    broker: &Broker,
    frame: &Frame,
    request: &DeleteTopicsRequest,
) -> Reply {
    let names: Vec<String> = request
        .topic_names
        .iter()
        .map(|n| n.to_string())
        .chain(
            request
                .topics
                .iter()
                .filter_map(|t| t.name.as_ref().map(|n| n.to_string())),
        )
        .collect();
    let mut responses = Vec::new();
    for name in names {
        let result = DeletableTopicResult::default()
            .with_name(Some(kafka_protocol::messages::TopicName(str(name.clone()))));
        responses.push(match delete_one(broker, &name).await {
            Ok(()) => result,
            Err((code, message)) => result
                .with_error_code(code.code())
                .with_error_message(Some(str(message))),
        });
    }
    respond(
        frame,
        &DeleteTopicsResponse::default().with_responses(responses),
    )
}

/// The configs a topic shows: the worker's retention and the listener's limits.
fn topic_configs(broker: &Broker) -> Vec<(&'static str, String, i8)> {
    let retention_ms = broker.retention_ms.unwrap_or(-1).to_string();
    let retention_bytes = broker.retention_bytes.unwrap_or(-1).to_string();
    vec![
        ("cleanup.policy", "delete".into(), SOURCE_DEFAULT),
        ("retention.ms", retention_ms, SOURCE_STATIC_BROKER),
        ("retention.bytes", retention_bytes, SOURCE_STATIC_BROKER),
        (
            "max.message.bytes",
            broker.settings.message_max_bytes.to_string(),
            SOURCE_STATIC_BROKER,
        ),
        ("compression.type", "producer".into(), SOURCE_DEFAULT),
        ("min.insync.replicas", "1".into(), SOURCE_DEFAULT),
        (
            "message.timestamp.type",
            "CreateTime".into(),
            SOURCE_DEFAULT,
        ),
    ]
}

/// The configs the broker shows.
fn broker_configs(broker: &Broker) -> Vec<(&'static str, String, i8)> {
    let s = &broker.settings;
    vec![
        (
            "auto.create.topics.enable",
            s.auto_create_topics.to_string(),
            SOURCE_STATIC_BROKER,
        ),
        (
            "num.partitions",
            s.num_partitions.to_string(),
            SOURCE_STATIC_BROKER,
        ),
        (
            "message.max.bytes",
            s.message_max_bytes.to_string(),
            SOURCE_STATIC_BROKER,
        ),
        (
            "log.retention.ms",
            broker.retention_ms.unwrap_or(-1).to_string(),
            SOURCE_STATIC_BROKER,
        ),
        (
            "log.retention.bytes",
            broker.retention_bytes.unwrap_or(-1).to_string(),
            SOURCE_STATIC_BROKER,
        ),
        ("default.replication.factor", "1".into(), SOURCE_DEFAULT),
        ("log.cleanup.policy", "delete".into(), SOURCE_DEFAULT),
    ]
}

/// DescribeConfigs for topics and the broker (every config read-only).
pub(super) async fn describe_configs(
    broker: &Broker,
    frame: &Frame,
    request: &DescribeConfigsRequest,
) -> Reply {
    let mut results = Vec::new();
    for r in &request.resources {
        let name = r.resource_name.to_string();
        let result = DescribeConfigsResult::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        let configs = match r.resource_type {
            TOPIC => match broker.store.partition_count(name.clone()).await {
                Ok(Some(_)) => topic_configs(broker),
                _ => {
                    results.push(
                        result
                            .with_error_code(ResponseError::UnknownTopicOrPartition.code())
                            .with_error_message(Some(str(format!("Topic {name} does not exist.")))),
                    );
                    continue;
                }
            },
            BROKER => broker_configs(broker),
            _ => {
                results.push(
                    result
                        .with_error_code(ResponseError::InvalidRequest.code())
                        .with_error_message(Some(str(
                            "Only topic and broker configs are described.",
                        ))),
                );
                continue;
            }
        };
        let wanted = |k: &str| {
            r.configuration_keys
                .as_ref()
                .is_none_or(|keys| keys.iter().any(|w| w.as_str() == k))
        };
        let configs = configs
            .into_iter()
            .filter(|(k, _, _)| wanted(k))
            .map(|(k, v, source)| {
                DescribeConfigsResourceResult::default()
                    .with_name(str(k))
                    .with_value(Some(str(v)))
                    .with_read_only(true)
                    .with_config_source(source)
            })
            .collect();
        results.push(result.with_configs(configs));
    }
    respond(
        frame,
        &DescribeConfigsResponse::default().with_results(results),
    )
}
