//! The MQTT sink task: publishes each record's value to `mqtt.topics` (or to the record's topic).
//!
//! `put` publishes its records with at most [`MAX_IN_FLIGHT`] messages handed to the connection and not
//! yet acknowledged (PUBACK for QoS 1, PUBCOMP for QoS 2; for QoS 0, written to the connection), and after
//! each run of acknowledgments tells the worker how far the records are delivered, which commits those
//! offsets at once ([`SinkTaskContext::delivered`]). So a crash (`kill -9`) or a lost connection repeats at
//! most the messages in flight. A connection lost with messages in flight is replaced by a fresh one and
//! those messages are published again on it (they may reach subscribers twice: MQTT at-least-once); while
//! the broker is unreachable `put` reports a retriable error naming the cause after [`FLUSH_WAIT`] without
//! progress, and the worker hands the same batch over again with backoff (the records already taken are
//! not taken twice). `flush` waits for the messages still in flight; when they are not acknowledged in
//! time it reports a retriable error: nothing more is committed, the worker rewinds to the last committed
//! offsets, and the records are published again from there once the broker is back (store-and-forward).

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use rumqttc::QoS;

use super::client::{self, Connection, Event, Settings};
use super::keys;
use crate::connectors::{Props, ReporterContext, SinkTask, SinkTaskContext, TaskError};
use crate::data::Value;
use crate::record::SinkRecord;
use crate::storage::TopicPartition;

/// How long one `flush` waits for acknowledgments, and `put` for any progress, before reporting what is
/// still missing.
pub const FLUSH_WAIT: Duration = Duration::from_secs(3);

/// The most messages handed to the connection and not yet acknowledged and committed: what a crash or a
/// lost connection may repeat. rumqttc's own limit of outgoing messages in flight is 100 too.
pub const MAX_IN_FLIGHT: usize = 100;

/// A message to publish, with the record it comes from.
struct Message {
    partition: TopicPartition,
    offset: i64,
    topic: String,
    payload: Vec<u8>,
}

/// A message handed to the connection.
struct Flying {
    message: Message,
    /// Its packet id, once written.
    pkid: Option<u16>,
    acked: bool,
}

/// One MQTT sink task.
pub struct MqttSinkTask {
    settings: Option<Settings>,
    connection: Option<Connection>,
    topic: Option<String>,
    qos: QoS,
    retained: bool,
    /// Messages not yet handed to the connection, in order.
    outbox: VecDeque<Message>,
    /// Messages handed to the connection and not yet acknowledged and reported, in order.
    flight: VecDeque<Flying>,
    /// Per log partition, the offset after the last record taken (queued, in flight or delivered), so a
    /// batch handed over again is not published twice.
    taken: HashMap<TopicPartition, i64>,
    /// Why the broker cannot be reached, while it cannot.
    down: Option<String>,
    /// The current connection has been up: losing it now drops what it held.
    was_up: bool,
    /// The connection was lost with messages in flight: they were dropped with it.
    lost: bool,
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
            flight: VecDeque::new(),
            taken: HashMap::new(),
            down: None,
            was_up: false,
            lost: false,
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
        // The old connection (if any) is closed first: nothing it holds is published by it any more.
        self.connection = None;
        self.connection = Some(Connection::open(settings, Vec::new())?);
        self.was_up = false;
        self.lost = false;
        Ok(())
    }

    /// Forgets everything not yet delivered (the worker rewinds to the last committed offsets) and drops
    /// the connection.
    fn reset(&mut self) {
        self.outbox.clear();
        self.flight.clear();
        self.taken.clear();
        self.connection = None;
        self.lost = false;
    }

    /// Applies one event; returns whether it was progress (a message written or acknowledged).
    fn on_event(&mut self, event: Event) -> Result<bool, TaskError> {
        match event {
            Event::Up { .. } => {
                self.was_up = true;
                if self.down.take().is_some() {
                    tracing::info!("Connected to the MQTT broker again.");
                }
            }
            Event::Down(why) => {
                // A connection that was up drops the messages it held when it is lost (a new session
                // starts on the next one), also those handed over since.
                if self.was_up && !self.flight.is_empty() {
                    self.lost = true;
                }
                self.down = Some(why);
            }
            Event::Refused(why) => {
                return Err(TaskError::Fatal(format!(
                    "{why}. Correct {} and {} and restart the task; the records not yet delivered stay in the local log.",
                    keys::USERNAME,
                    keys::PASSWORD
                )))
            }
            // After the loss, nothing this connection reports is trusted: what it held is published again.
            Event::Sent(_) | Event::Acked(_) if self.lost => {}
            Event::Sent(pkid) => {
                // Messages are written in the order they were handed over.
                if let Some(f) = self.flight.iter_mut().find(|f| f.pkid.is_none() && !f.acked) {
                    if self.qos == QoS::AtMostOnce {
                        f.acked = true;
                    } else {
                        f.pkid = Some(pkid);
                    }
                }
                return Ok(true);
            }
            Event::Acked(pkid) => {
                if let Some(f) = self
                    .flight
                    .iter_mut()
                    .find(|f| f.pkid == Some(pkid) && !f.acked)
                {
                    f.acked = true;
                }
                return Ok(true);
            }
            Event::Message(_) | Event::Released => {}
        }
        Ok(false)
    }

    /// Reads the events that are ready, waiting up to `wait` for the first one; then drops the
    /// acknowledged messages at the head of the flight and, with a `context`, reports each partition's
    /// delivered offset (which the worker commits before it returns). Returns whether anything progressed.
    fn settle(
        &mut self,
        wait: Duration,
        context: Option<&mut dyn SinkTaskContext>,
    ) -> Result<bool, TaskError> {
        let Some(connection) = self.connection.as_ref() else {
            return Err(TaskError::fatal("not started"));
        };
        let mut events = Vec::new();
        if let Some(e) = connection.recv(wait) {
            events.push(e);
            while let Some(e) = connection.try_recv() {
                events.push(e);
            }
        }
        let mut progress = false;
        for e in events {
            progress |= self.on_event(e)?;
        }
        let mut run: Vec<(TopicPartition, i64)> = Vec::new();
        while self.flight.front().is_some_and(|f| f.acked) {
            let Some(f) = self.flight.pop_front() else {
                break;
            };
            let next = f.message.offset + 1;
            match run.iter_mut().find(|(p, _)| *p == f.message.partition) {
                Some((_, o)) => *o = next,
                None => run.push((f.message.partition, next)),
            }
        }
        if let Some(context) = context {
            for (partition, next) in &run {
                context.delivered(partition, *next)?;
            }
        }
        Ok(progress)
    }

    /// Hands queued messages to the connection while fewer than [`MAX_IN_FLIGHT`] are in flight.
    fn hand_over(&mut self) -> Result<(), TaskError> {
        let Some(connection) = self.connection.as_ref() else {
            return Err(TaskError::fatal("not started"));
        };
        while self.flight.len() < MAX_IN_FLIGHT {
            let Some(m) = self.outbox.front() else {
                break;
            };
            if !connection.publish(&m.topic, self.qos, self.retained, m.payload.clone())? {
                break;
            }
            if let Some(message) = self.outbox.pop_front() {
                self.flight.push_back(Flying {
                    message,
                    pkid: None,
                    acked: false,
                });
            }
        }
        Ok(())
    }

    /// After a lost connection: the messages it held go back to the head of the queue, to be published on
    /// a fresh connection.
    fn recover(&mut self) -> Result<(), TaskError> {
        if !self.lost {
            return Ok(());
        }
        tracing::info!(
            messages = self.flight.len(),
            "The MQTT connection was lost with messages in flight; publishing them again on a new connection."
        );
        while let Some(f) = self.flight.pop_back() {
            self.outbox.push_front(f.message);
        }
        self.connect()
    }

    fn pending(&self) -> usize {
        self.outbox.len() + self.flight.len()
    }

    fn why_down(&self) -> String {
        match &self.down {
            Some(why) => format!("the broker cannot be reached: {why}"),
            None => format!("not acknowledged within {} ms", FLUSH_WAIT.as_millis()),
        }
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
        let mut reporter = crate::connectors::FailOnReport { with_place: false };
        self.put_in_context(records, &mut ReporterContext::new(&mut reporter, records))
    }

    fn put_in_context(
        &mut self,
        records: &[SinkRecord],
        context: &mut dyn SinkTaskContext,
    ) -> Result<(), TaskError> {
        if self.connection.is_none() {
            self.connect()?;
        }
        let partition = context.partition().clone();
        for r in records {
            if self
                .taken
                .get(&partition)
                .is_some_and(|t| r.kafka_offset < *t)
            {
                continue; // taken by an earlier attempt at this batch
            }
            let topic = self.topic.clone().unwrap_or_else(|| r.record.topic.clone());
            self.outbox.push_back(Message {
                partition: partition.clone(),
                offset: r.kafka_offset,
                topic,
                payload: payload(r)?,
            });
            self.taken.insert(partition.clone(), r.kafka_offset + 1);
        }
        let mut last_progress = Instant::now();
        loop {
            self.recover()?;
            self.hand_over()?;
            if self.outbox.is_empty() {
                // Everything is handed over; what is still in flight is settled by the next `put` or
                // `flush`. Read what is ready without waiting.
                self.settle(Duration::ZERO, Some(&mut *context))?;
                return Ok(());
            }
            if self.settle(Duration::from_millis(20), Some(&mut *context))? {
                last_progress = Instant::now();
            } else if last_progress.elapsed() >= FLUSH_WAIT {
                return Err(TaskError::Retriable(format!(
                    "{} records were not delivered to MQTT yet ({}); they wait in the local log and are published once the broker takes them",
                    self.pending(),
                    self.why_down()
                )));
            }
        }
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        if self.connection.is_none() {
            self.connect()?;
        }
        // Only what is in flight: records still queued belong to a `put` that did not complete, which
        // the worker hands over again.
        let deadline = Instant::now() + FLUSH_WAIT;
        while !self.flight.is_empty() && !self.lost && Instant::now() < deadline {
            self.settle(Duration::from_millis(20), None)?;
        }
        if self.flight.is_empty() && !self.lost {
            return Ok(());
        }
        let pending = self.pending();
        let why = self.why_down();
        // The worker rewinds to the last committed offsets and hands these records over again: start
        // afresh, so the old connection publishes none of them a second time.
        self.reset();
        self.down = None;
        Err(TaskError::Retriable(format!(
            "{pending} records were not delivered to MQTT ({why}); they wait in the local log and are published again from the last committed offsets"
        )))
    }

    fn stop(&mut self) {
        self.connection = None;
    }
}
