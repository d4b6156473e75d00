//! The MQTT source task: subscribes to its share of `mqtt.topics` and turns each message into a record
//! (key: the MQTT topic, value: the payload bytes).
//!
//! Messages are acknowledged to the broker (PUBACK, PUBREC) only in `commit`, after their records are in
//! the local log. With a persistent session the broker keeps every message not yet acknowledged and
//! sends it again after a reconnect or a restart, so none is lost. A QoS 2 message the broker sends again
//! (DUP set) with the packet id, topic and payload of one of the last [`RECENT`] QoS 2 messages stored is
//! the same message: it is acknowledged and dropped. Those packet ids travel in the source offset, so
//! this holds across `kill -9` too. They are kept past the broker's release (PUBREL): a broker restored
//! from its persistence file may send a message again even after releasing it.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{json, Map, Value as Json};

use super::client::{self, Connection, Event, Message};
use super::keys;
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::data::{Schema, Value};
use crate::model::now_ms;
use crate::record::{ConnectRecord, Header, SourceRecord};

/// The most records one poll returns.
const MAX_BATCH: usize = 2000;
/// How long a poll waits for the first message.
const POLL_WAIT: Duration = Duration::from_millis(200);
/// How many of the last QoS 2 messages a redelivery is recognized among (far more than a broker keeps
/// in flight).
pub const RECENT: usize = 1024;

/// One MQTT source task.
#[derive(Default)]
pub struct MqttSourceTask {
    connection: Option<Connection>,
    kafka_topic: String,
    partition: Map<String, Json>,
    /// Messages returned by a poll, to acknowledge once they are stored: (QoS, packet id).
    to_ack: Vec<(u8, u16)>,
    /// Whether the last non-empty poll's records are not yet committed.
    uncommitted: bool,
    /// The packet ids of the last QoS 2 messages returned, oldest first, with a digest of their topic
    /// and payload.
    recent: VecDeque<(u16, u32)>,
    /// Whether the session outlives the connection (only then are `recent` ids stored).
    persistent: bool,
    /// Why the broker cannot be reached, while it cannot.
    down: Option<String>,
}

/// The source offset's field: `[packet id, digest]` of the last QoS 2 messages.
const RECENT_FIELD: &str = "qos2.recent";

/// FNV-1a over the topic and payload: tells a redelivered message from a new one that reuses its id.
fn digest(m: &Message) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in m.topic.bytes().chain([0]).chain(m.payload.iter().copied()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

impl MqttSourceTask {
    fn connection(&self) -> Result<&Connection, TaskError> {
        self.connection
            .as_ref()
            .ok_or_else(|| TaskError::fatal("not started"))
    }

    fn offset(&self) -> Map<String, Json> {
        let ids: Vec<Json> = self.recent.iter().map(|(id, d)| json!([id, d])).collect();
        let mut m = Map::new();
        m.insert(RECENT_FIELD.into(), Json::Array(ids));
        m
    }

    fn ack_all(&mut self) -> Result<(), TaskError> {
        let connection = self
            .connection
            .as_ref()
            .ok_or_else(|| TaskError::fatal("not started"))?;
        let mut lost = 0;
        for (qos, pkid) in self.to_ack.drain(..) {
            if !connection.ack(qos, pkid) {
                lost += 1;
            }
        }
        if lost > 0 {
            // Stored already: a persistent session sends them again, and QoS 2 copies are dropped.
            tracing::warn!(
                lost,
                "Could not acknowledge stored MQTT messages to the broker."
            );
        }
        Ok(())
    }

    /// Whether `m` is a broker's second delivery of a QoS 2 message already returned.
    fn is_redelivery(&self, m: &Message) -> bool {
        m.qos == 2
            && m.dup
            && self
                .recent
                .iter()
                .rev()
                .find(|(id, _)| *id == m.pkid)
                .is_some_and(|(_, d)| *d == digest(m))
    }

    fn record(&self, m: Message, now: i64) -> SourceRecord {
        let header = |key: &str, schema, value| Header {
            key: key.to_string(),
            schema: Some(schema),
            value,
        };
        let mut record = ConnectRecord::new(
            self.kafka_topic.clone(),
            Some(Schema::bytes()),
            Value::Bytes(m.payload),
        );
        record.key_schema = Some(Schema::string());
        record.key = Value::String(m.topic);
        record.timestamp = Some(now);
        record.headers = vec![
            header(
                "mqtt.message.id",
                Schema::int32(),
                Value::Int32(i32::from(m.pkid)),
            ),
            header("mqtt.qos", Schema::int32(), Value::Int32(i32::from(m.qos))),
            header("mqtt.retained", Schema::boolean(), Value::Boolean(m.retain)),
            header("mqtt.duplicate", Schema::boolean(), Value::Boolean(m.dup)),
        ];
        SourceRecord {
            source_partition: Some(self.partition.clone()),
            source_offset: None,
            record,
        }
    }

    /// Handles one event; a message that is to become a record is returned.
    fn on_event(&mut self, event: Event) -> Result<Option<Message>, TaskError> {
        match event {
            Event::Up { session_present } => {
                if self.down.take().is_some() {
                    tracing::info!(session_present, "Connected to the MQTT broker again.");
                }
                Ok(None)
            }
            Event::Down(why) => {
                if self.down.is_none() {
                    tracing::warn!(%why, "The MQTT broker cannot be reached; retrying with backoff.");
                }
                self.down = Some(why);
                Ok(None)
            }
            Event::Refused(why) => Err(TaskError::Fatal(format!(
                "{why}. Correct {} and {} and restart the task.",
                keys::USERNAME,
                keys::PASSWORD
            ))),
            Event::Released | Event::Sent(_) | Event::Acked(_) => Ok(None),
            Event::Message(m) => {
                if self.is_redelivery(&m) {
                    // Its first delivery is stored or about to be: acknowledged with the next commit.
                    self.to_ack.push((m.qos, m.pkid));
                    return Ok(None);
                }
                if m.qos == 2 {
                    self.recent.push_back((m.pkid, digest(&m)));
                    if self.recent.len() > RECENT {
                        self.recent.pop_front();
                    }
                }
                self.to_ack.push((m.qos, m.pkid));
                Ok(Some(m))
            }
        }
    }
}

impl SourceTask for MqttSourceTask {
    fn start(&mut self, config: &Props, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let mut settings = client::settings(config).map_err(|(_, m)| TaskError::Fatal(m))?;
        if settings.client_id.is_empty() {
            settings.client_id = super::default_client_id(config);
        }
        let qos = client::qos(config).map_err(|(_, m)| TaskError::Fatal(m))?;
        self.kafka_topic = config
            .get(keys::KAFKA_TOPIC)
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| TaskError::fatal(format!("{} is required", keys::KAFKA_TOPIC)))?;
        self.partition = Map::new();
        self.partition.insert(
            keys::CLIENT_ID.into(),
            Json::String(settings.client_id.clone()),
        );
        // Only a persistent session redelivers, so only then do stored packet ids matter.
        self.persistent = !settings.clean_session;
        if self.persistent {
            if let Some(offset) = context.offset(&Json::Object(self.partition.clone()))? {
                self.recent = offset[RECENT_FIELD]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| Some((p[0].as_u64()? as u16, p[1].as_u64()? as u32)))
                    .collect();
            }
        }
        let filters = client::list(config, keys::TOPICS)
            .into_iter()
            .map(|t| (t, qos))
            .collect();
        self.connection = Some(Connection::open(&settings, filters)?);
        Ok(())
    }

    fn poll(&mut self, _context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        if !self.uncommitted {
            // Everything returned so far is stored: redeliveries dropped since can be acknowledged now.
            self.ack_all()?;
        }
        let mut messages = Vec::new();
        let mut wait = POLL_WAIT;
        while messages.len() < MAX_BATCH {
            let event = if messages.is_empty() {
                self.connection()?.recv(wait)
            } else {
                self.connection()?.try_recv()
            };
            let Some(event) = event else { break };
            if let Some(m) = self.on_event(event)? {
                messages.push(m);
            }
            if self.down.is_some() && messages.is_empty() {
                // Wait longer for the broker to come back, then report why nothing comes.
                wait = Duration::from_secs(1);
            }
        }
        if messages.is_empty() {
            if let Some(why) = &self.down {
                return Err(TaskError::Retriable(format!(
                    "{why}; the connection is retried with backoff"
                )));
            }
            return Ok(Vec::new());
        }
        let now = now_ms();
        let offset = self.persistent.then(|| self.offset());
        let mut records: Vec<SourceRecord> =
            messages.into_iter().map(|m| self.record(m, now)).collect();
        if let Some(last) = records.last_mut() {
            last.source_offset = offset;
        }
        self.uncommitted = true;
        Ok(records)
    }

    fn commit(&mut self) -> Result<(), TaskError> {
        self.uncommitted = false;
        self.ack_all()
    }

    fn stop(&mut self) {
        // Messages not acknowledged stay with the broker (in a persistent session) and come again.
        self.connection = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(pkid: u16, payload: &str, qos: u8, dup: bool) -> Message {
        Message {
            topic: "plant/a".into(),
            payload: payload.as_bytes().to_vec(),
            qos,
            retain: false,
            dup,
            pkid,
        }
    }

    #[test]
    fn a_record_carries_the_topic_as_key_the_payload_as_bytes_and_mqtt_headers() {
        let mut task = MqttSourceTask {
            kafka_topic: "local".into(),
            ..Default::default()
        };
        task.partition
            .insert(keys::CLIENT_ID.into(), Json::String("c-0".into()));
        let mut m = message(7, "21.5", 1, true);
        m.retain = true;
        let r = task.record(m, 1234);
        assert_eq!(r.record.topic, "local");
        assert_eq!(r.record.key, Value::String("plant/a".into()));
        assert_eq!(r.record.value, Value::Bytes(b"21.5".to_vec()));
        assert_eq!(r.record.timestamp, Some(1234));
        let headers: Vec<(&str, &Value)> = r
            .record
            .headers
            .iter()
            .map(|h| (h.key.as_str(), &h.value))
            .collect();
        assert_eq!(
            headers,
            vec![
                ("mqtt.message.id", &Value::Int32(7)),
                ("mqtt.qos", &Value::Int32(1)),
                ("mqtt.retained", &Value::Boolean(true)),
                ("mqtt.duplicate", &Value::Boolean(true)),
            ]
        );
        assert_eq!(r.source_partition, Some(task.partition.clone()));
    }

    #[test]
    fn only_a_qos_2_redelivery_of_a_recent_message_is_dropped() {
        let mut task = MqttSourceTask::default();
        let kept = |task: &mut MqttSourceTask, m: Message| {
            task.on_event(Event::Message(m)).unwrap().is_some()
        };
        assert!(kept(&mut task, message(1, "a", 2, false)));
        // The same id, topic and payload, flagged as sent again: dropped, but acknowledged.
        assert!(!kept(&mut task, message(1, "a", 2, true)));
        assert_eq!(task.to_ack, vec![(2, 1), (2, 1)]);
        // Another payload under a reused id, or no DUP flag: a new message.
        assert!(kept(&mut task, message(1, "b", 2, true)));
        assert!(kept(&mut task, message(1, "b", 2, false)));
        // QoS 1 cannot tell: kept.
        assert!(kept(&mut task, message(2, "c", 1, false)));
        assert!(kept(&mut task, message(2, "c", 1, true)));
        // The window is bounded and travels in the offset.
        for i in 0..(RECENT as u16 + 10) {
            kept(&mut task, message(100 + i, "x", 2, false));
        }
        assert_eq!(task.recent.len(), RECENT);
        assert_eq!(
            task.offset()[RECENT_FIELD].as_array().unwrap().len(),
            RECENT
        );
        assert!(kept(&mut task, message(1, "b", 2, true)), "forgotten");
    }
}
