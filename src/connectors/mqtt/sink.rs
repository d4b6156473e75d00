//! The MQTT sink task: publishes each record's value to `mqtt.topics` (or to the record's topic).
//!
//! `flush` returns only when the broker has acknowledged every message published since the last flush
//! (PUBACK for QoS 1, PUBCOMP for QoS 2; for QoS 0, when it is written to the connection), so the worker
//! commits sink offsets only for delivered records. While the broker is unreachable `flush` reports a
//! retriable error naming the cause: nothing is committed, the records stay in the local log, and they
//! are published again from the last committed offsets once the broker is back (store-and-forward). Each
//! such retry starts a fresh connection, so nothing held by the previous one is published twice by it.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use rumqttc::QoS;

use super::client::{self, Connection, Event, Settings};
use super::keys;
use crate::connectors::{Props, SinkTask, TaskError};
use crate::data::Value;
use crate::record::SinkRecord;

/// How long one `flush` waits for acknowledgments before reporting what is still missing.
pub const FLUSH_WAIT: Duration = Duration::from_secs(3);

/// One MQTT sink task.
pub struct MqttSinkTask {
    settings: Option<Settings>,
    connection: Option<Connection>,
    topic: Option<String>,
    qos: QoS,
    retained: bool,
    /// Messages not yet handed to the event loop: (topic, payload).
    outbox: VecDeque<(String, Vec<u8>)>,
    /// Messages handed to the event loop and not yet written.
    unsent: usize,
    /// Packet ids written and not yet acknowledged.
    unacked: HashSet<u16>,
    /// Why the broker cannot be reached, while it cannot.
    down: Option<String>,
}

impl Default for MqttSinkTask {
    fn default() -> Self {
        MqttSinkTask {
            settings: None,
            connection: None,
            topic: None,
            qos: QoS::AtMostOnce,
            retained: false,
            outbox: VecDeque::new(),
            unsent: 0,
            unacked: HashSet::new(),
            down: None,
        }
    }
}

/// The payload of a value: bytes or a string's UTF-8 bytes, as the original takes them.
fn payload(record: &SinkRecord) -> Result<Vec<u8>, TaskError> {
    let value = &record.record.value;
    if let Value::Bytes(b) = value {
        return Ok(b.clone());
    }
    if let Value::String(s) = value {
        return Ok(s.as_bytes().to_vec());
    }
    if value.is_null() {
        return Ok(Vec::new());
    }
    let at = format!(
        "{}-{}@{}",
        record.record.topic,
        record.record.kafka_partition.unwrap_or(0),
        record.kafka_offset
    );
    let class = value.java_class();
    Err(TaskError::fatal(format!("The MQTT sink publishes bytes, but the value of {at} is a {class}: use org.apache.kafka.connect.converters.ByteArrayConverter (the connector's default) or StringConverter for value.converter")))
}

impl MqttSinkTask {
    fn connect(&mut self) -> Result<(), TaskError> {
        let Some(settings) = &self.settings else {
            return Err(TaskError::fatal("not started"));
        };
        self.connection = Some(Connection::open(settings, Vec::new())?);
        Ok(())
    }

    fn on_event(&mut self, event: Event) -> Result<(), TaskError> {
        match event {
            Event::Up { .. } => {
                if self.down.take().is_some() {
                    tracing::info!("Connected to the MQTT broker again.");
                }
            }
            Event::Down(why) => self.down = Some(why),
            Event::Refused(why) => {
                return Err(TaskError::Fatal(format!(
                    "{why}. Correct {} and {} and restart the task; the records not yet delivered stay in the local log.",
                    keys::USERNAME,
                    keys::PASSWORD
                )))
            }
            Event::Sent(pkid) => {
                self.unsent = self.unsent.saturating_sub(1);
                if self.qos != QoS::AtMostOnce {
                    self.unacked.insert(pkid);
                }
            }
            Event::Acked(pkid) => {
                self.unacked.remove(&pkid);
            }
            Event::Message(_) | Event::Released(_) => {}
        }
        Ok(())
    }

    /// Hands queued messages to the event loop and reads the events that are ready; waits up to `wait`
    /// for one event when nothing else can be done.
    fn pump(&mut self, wait: Duration) -> Result<(), TaskError> {
        let Some(connection) = self.connection.as_ref() else {
            return Err(TaskError::fatal("not started"));
        };
        while let Some((topic, payload)) = self.outbox.front() {
            if !connection.publish(topic, self.qos, self.retained, payload.clone())? {
                break;
            }
            self.outbox.pop_front();
            self.unsent += 1;
        }
        let mut events = Vec::new();
        if let Some(e) = connection.recv(wait) {
            events.push(e);
            while let Some(e) = connection.try_recv() {
                events.push(e);
            }
        }
        for e in events {
            self.on_event(e)?;
        }
        Ok(())
    }

    fn pending(&self) -> usize {
        self.outbox.len() + self.unsent + self.unacked.len()
    }
}

impl SinkTask for MqttSinkTask {
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        let mut settings = client::settings(config).map_err(|(_, m)| TaskError::Fatal(m))?;
        if settings.client_id.is_empty() {
            settings.client_id = super::default_client_id(config);
        }
        // Records not acknowledged are published again from the log, so the broker need not keep them.
        settings.clean_session = true;
        self.qos = client::qos(config).map_err(|(_, m)| TaskError::Fatal(m))?;
        self.retained = config
            .get(keys::RETAINED)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        self.topic = client::list(config, keys::TOPICS).into_iter().next();
        self.settings = Some(settings);
        self.connect()
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        if self.connection.is_none() {
            self.connect()?;
        }
        for r in records {
            let topic = self.topic.clone().unwrap_or_else(|| r.record.topic.clone());
            self.outbox.push_back((topic, payload(r)?));
        }
        self.pump(Duration::ZERO)
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        if self.connection.is_none() {
            self.connect()?;
        }
        let deadline = Instant::now() + FLUSH_WAIT;
        while self.pending() > 0 && Instant::now() < deadline {
            self.pump(Duration::from_millis(20))?;
        }
        let pending = self.pending();
        if pending == 0 {
            return Ok(());
        }
        // The worker rewinds to the last committed offsets and hands these records over again: start
        // afresh, so the old connection publishes none of them a second time.
        self.outbox.clear();
        self.unsent = 0;
        self.unacked.clear();
        self.connection = None;
        let why = match self.down.take() {
            Some(why) => format!("the broker cannot be reached: {why}"),
            None => format!("not acknowledged within {} ms", FLUSH_WAIT.as_millis()),
        };
        Err(TaskError::Retriable(format!(
            "{pending} records were not delivered to MQTT ({why}); they wait in the local log and are published again from the last committed offsets"
        )))
    }

    fn stop(&mut self) {
        self.connection = None;
    }
}
