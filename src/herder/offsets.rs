//! The offsets API (KIP-875): reading, altering and resetting a connector's offsets, in Kafka's formats.
//! Source connectors keep whatever partition and offset maps they use; sink connectors use
//! `{"kafka_topic", "kafka_partition"}` → `{"kafka_offset"}`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};

use super::Herder;
use crate::connectors::{ConnectorPlugin, Props};
use crate::error::ConnectError;
use std::sync::Arc;

/// `{"offsets": [...]}`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConnectorOffsets {
    /// The offsets.
    pub offsets: Option<Vec<OffsetEntry>>,
}

/// `{"partition": {...}, "offset": {...} | null}`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OffsetEntry {
    /// The partition map.
    #[serde(default)]
    pub partition: Option<Map<String, Json>>,
    /// The offset map; null removes the partition's offset.
    #[serde(default)]
    pub offset: Option<Map<String, Json>>,
}

/// Offsets that passed validation, ready to store.
#[derive(Debug, Default)]
pub(super) struct Checked {
    pub(super) source: Vec<(Json, Option<Json>)>,
    pub(super) sink: Vec<(String, i32, Option<i64>)>,
    /// What the connector said (`alterOffsets` returned true).
    pub(super) acknowledged: bool,
}

const SINK_TOPIC: &str = "kafka_topic";
const SINK_PARTITION: &str = "kafka_partition";
const SINK_OFFSET: &str = "kafka_offset";

fn bad(m: impl Into<String>) -> ConnectError {
    ConnectError::BadRequest(m.into())
}

fn parse_sink_int(v: &Json, what: &str) -> Result<i64, ConnectError> {
    let text = match v {
        Json::Number(n) => n.to_string(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    match v {
        Json::Number(n) if n.is_i64() => Ok(n.as_i64().unwrap_or_default()),
        Json::String(s) if s.trim().parse::<i64>().is_ok() => Ok(s.trim().parse().unwrap_or_default()),
        _ => Err(bad(format!(
            "Failed to parse the following Kafka {what} value in the provided offsets: '{text}'. {} values for sink connectors need to be integers.",
            if what == "partition" { "Partition" } else { "Offset" }
        ))),
    }
}

fn check_sink(entries: &[OffsetEntry]) -> Result<Vec<(String, i32, Option<i64>)>, ConnectError> {
    let mut out = Vec::new();
    for e in entries {
        let Some(p) = &e.partition else {
            return Err(bad(
                "The partition for a sink connector offset cannot be null or missing",
            ));
        };
        let (Some(topic), Some(partition)) = (p.get(SINK_TOPIC), p.get(SINK_PARTITION)) else {
            return Err(bad("The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"));
        };
        let Some(topic) = topic.as_str() else {
            return Err(bad(
                "Kafka topic names must be valid strings and may not be null",
            ));
        };
        if partition.is_null() {
            return Err(bad(
                "Kafka partitions must be valid numbers and may not be null",
            ));
        }
        let partition = parse_sink_int(partition, "partition")?;
        let partition = i32::try_from(partition).map_err(|_| {
            bad(format!("Failed to parse the following Kafka partition value in the provided offsets: '{partition}'. Partition values for sink connectors need to be integers."))
        })?;
        if partition < 0 {
            return Err(bad(format!(
                "Kafka partitions must be non-negative, but {partition} was given"
            )));
        }
        let offset = match &e.offset {
            None => None,
            Some(o) => {
                let Some(v) = o.get(SINK_OFFSET) else {
                    return Err(bad("The offset for a sink connector should either be null or contain the key 'kafka_offset'"));
                };
                let n = parse_sink_int(v, "offset")?;
                if n < 0 {
                    return Err(bad(format!(
                        "Kafka offsets must be non-negative, but {n} was given"
                    )));
                }
                Some(n)
            }
        };
        out.push((topic.to_string(), partition, offset));
    }
    Ok(out)
}

fn check_primitives(map: &Map<String, Json>) -> Result<(), ConnectError> {
    for (k, v) in map {
        let kind = match v {
            Json::Array(_) => "array",
            Json::Object(_) => "map",
            _ => continue,
        };
        return Err(bad(format!(
            "Offsets may only contain primitive types as values, but field {k} contains {kind}"
        )));
    }
    Ok(())
}

fn check_source(entries: &[OffsetEntry]) -> Result<Vec<(Json, Option<Json>)>, ConnectError> {
    let mut out = Vec::new();
    for e in entries {
        let Some(p) = &e.partition else {
            return Err(bad("Partition objects cannot be null"));
        };
        check_primitives(p)?;
        if let Some(o) = &e.offset {
            check_primitives(o)?;
        }
        out.push((Json::Object(p.clone()), e.offset.clone().map(Json::Object)));
    }
    Ok(out)
}

/// Validates offsets for a connector: the framework's format checks, then the connector's own.
pub(super) fn check(
    plugin: &Arc<dyn ConnectorPlugin>,
    config: &Props,
    entries: Vec<OffsetEntry>,
) -> Result<Checked, ConnectError> {
    let mut checked = Checked::default();
    let as_json: Vec<(Json, Option<Json>)>;
    if Herder::is_sink(plugin) {
        checked.sink = check_sink(&entries)?;
        as_json = checked
            .sink
            .iter()
            .map(|(t, p, o)| {
                (
                    json!({SINK_TOPIC: t, SINK_PARTITION: p}),
                    o.map(|o| json!({SINK_OFFSET: o})),
                )
            })
            .collect();
    } else {
        checked.source = check_source(&entries)?;
        as_json = checked.source.clone();
    }
    checked.acknowledged = plugin.alter_offsets(config, &as_json).map_err(bad)?;
    Ok(checked)
}

impl Herder {
    /// `GET /connectors/{c}/offsets`.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub async fn offsets(&self, name: &str) -> Result<ConnectorOffsets, ConnectError> {
        let (_, plugin) = self.plugin_for(name)?;
        let offsets = if Herder::is_sink(&plugin) {
            self.store
                .sink_offsets(name.to_string())
                .await?
                .into_iter()
                .map(|(topic, partition, offset)| OffsetEntry {
                    partition: Some(obj(json!({SINK_TOPIC: topic, SINK_PARTITION: partition}))),
                    offset: Some(obj(json!({SINK_OFFSET: offset}))),
                })
                .collect()
        } else {
            self.store
                .source_offsets(name.to_string())
                .await?
                .into_iter()
                .map(|(p, o)| OffsetEntry {
                    partition: p.as_object().cloned(),
                    offset: o.as_object().cloned(),
                })
                .collect()
        };
        Ok(ConnectorOffsets {
            offsets: Some(offsets),
        })
    }

    fn require_stopped(&self, name: &str) -> Result<(), ConnectError> {
        if self.is_stopped(name) {
            Ok(())
        } else {
            Err(bad(format!("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")))
        }
    }

    /// `PATCH /connectors/{c}/offsets`: returns Kafka's success message.
    ///
    /// # Errors
    /// 400 for an empty or invalid body or a connector that is not STOPPED, 404 for an unknown connector.
    pub async fn alter_offsets(
        &self,
        name: &str,
        body: ConnectorOffsets,
    ) -> Result<String, ConnectError> {
        let entries = match body.offsets {
            Some(o) if !o.is_empty() => o,
            _ => {
                return Err(bad(
                    "Partitions / offsets need to be provided for an alter offsets request",
                ))
            }
        };
        let _guard = self.ops.lock().await;
        let (e, plugin) = self.plugin_for(name)?;
        self.require_stopped(name)?;
        let checked = check(&plugin, &e.config, entries)?;
        if Herder::is_sink(&plugin) {
            self.store
                .write_sink_offsets(name.to_string(), checked.sink)
                .await?;
        } else {
            self.store
                .write_source_offsets(name.to_string(), checked.source)
                .await?;
        }
        Ok(if checked.acknowledged {
            "The offsets for this connector have been altered successfully".into()
        } else {
            "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses.".into()
        })
    }

    /// `DELETE /connectors/{c}/offsets`: returns Kafka's success message.
    ///
    /// # Errors
    /// 400 for a connector that is not STOPPED, 404 for an unknown connector.
    pub async fn reset_offsets(&self, name: &str) -> Result<String, ConnectError> {
        let _guard = self.ops.lock().await;
        let (e, plugin) = self.plugin_for(name)?;
        self.require_stopped(name)?;
        let acknowledged = if Herder::is_sink(&plugin) {
            let current = self.store.sink_offsets(name.to_string()).await?;
            let tombstones: Vec<(Json, Option<Json>)> = current
                .iter()
                .map(|(t, p, _)| (json!({SINK_TOPIC: t, SINK_PARTITION: p}), None))
                .collect();
            let ack = plugin.alter_offsets(&e.config, &tombstones).map_err(bad)?;
            self.store.reset_sink_offsets(name.to_string()).await?;
            ack
        } else {
            let current = self.store.source_offsets(name.to_string()).await?;
            let tombstones: Vec<(Json, Option<Json>)> =
                current.into_iter().map(|(p, _)| (p, None)).collect();
            let ack = plugin.alter_offsets(&e.config, &tombstones).map_err(bad)?;
            self.store
                .write_source_offsets(name.to_string(), tombstones)
                .await?;
            ack
        };
        Ok(if acknowledged {
            "The offsets for this connector have been reset successfully".into()
        } else {
            "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.".into()
        })
    }
}

fn obj(v: Json) -> Map<String, Json> {
    v.as_object().cloned().unwrap_or_default()
}
