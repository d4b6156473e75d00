//! One HTTP sink task: turns records into requests and sends them, synchronously, from `put`.
//!
//! `put` returns only when every record it was given is delivered (a 2xx answer), handled (a refused
//! request under `behavior.on.error`, a record reported to the worker's error handler) or when the
//! endpoint cannot take them now: a 5xx, a 429 or a connection error that outlasts the in-put retries is a
//! retriable error, so the worker keeps the records in the local log and hands the same batch over again
//! with backoff, and the task shows RUNNING with a trace until the endpoint is back. Records of that batch
//! already delivered are not sent twice. After each request that got its answer, the task tells the
//! worker how far the batch is delivered ([`SinkTaskContext::delivered`]), which commits that offset at
//! once: a crash repeats at most the request in flight. Since everything is delivered inside `put`,
//! `flush` has nothing left to do, and the worker commits offsets only past records that got their 2xx
//! (or were handled as refused).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::client::{Client, Failure};
use super::config::{BodyFormat, Flavor, OnError, OnNull, Settings};
use crate::connectors::{
    ErrantRecordReporter, Props, ReporterContext, SinkTask, SinkTaskContext, TaskError,
};
use crate::converters::json::{JsonConverter, JsonConverterConfig};
use crate::converters::Converter;
use crate::data::Value;
use crate::record::SinkRecord;

/// One request: where, how, what, and which records it carries (indices into the batch).
struct Request {
    method: reqwest::Method,
    url: String,
    body: Option<String>,
    records: Vec<usize>,
}

/// Where a batch stopped when the endpoint could not take it: records of the same batch already handled
/// are skipped when the worker hands it over again.
struct Resume {
    topic: String,
    partition: Option<i32>,
    first_offset: i64,
    handled: BTreeSet<i64>,
}

/// A started task.
struct Running {
    settings: Settings,
    client: Client,
    json: JsonConverter,
    resume: Option<Resume>,
    /// No request before this instant (retry backoff, `Retry-After`).
    not_before: Option<(Instant, String)>,
    /// The last delivery failed as retriable: one attempt per `put` until the endpoint answers again.
    outage: bool,
}

/// The task of both HTTP sink classes.
pub struct HttpSinkTask {
    flavor: Flavor,
    running: Option<Running>,
}

impl HttpSinkTask {
    /// A task reading `flavor`'s keys.
    pub fn new(flavor: Flavor) -> Self {
        HttpSinkTask {
            flavor,
            running: None,
        }
    }
}

impl SinkTask for HttpSinkTask {
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        let settings = Settings::from_props(self.flavor, config).map_err(TaskError::Fatal)?;
        let client = Client::new(&settings).map_err(TaskError::Fatal)?;
        let json = JsonConverter::new(JsonConverterConfig {
            schemas_enable: false,
            decimal_format: settings.decimal_format,
            ..JsonConverterConfig::default()
        });
        self.running = Some(Running {
            settings,
            client,
            json,
            resume: None,
            not_before: None,
            outage: false,
        });
        Ok(())
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        self.put_reporting(
            records,
            &mut crate::connectors::FailOnReport { with_place: true },
        )
    }

    fn put_reporting(
        &mut self,
        records: &[SinkRecord],
        reporter: &mut dyn ErrantRecordReporter,
    ) -> Result<(), TaskError> {
        self.put_in_context(records, &mut ReporterContext::new(reporter, records))
    }

    fn put_in_context(
        &mut self,
        records: &[SinkRecord],
        context: &mut dyn SinkTaskContext,
    ) -> Result<(), TaskError> {
        let run = self
            .running
            .as_mut()
            .ok_or_else(|| TaskError::fatal("The HTTP sink task was not started"))?;
        if let Some((at, why)) = &run.not_before {
            if Instant::now() < *at {
                return Err(TaskError::Retriable(why.clone()));
            }
        }
        run.put(records, context)
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        Ok(())
    }

    fn stop(&mut self) {
        self.running = None;
    }
}

fn coordinates(record: &SinkRecord) -> String {
    format!(
        "{}-{}@{}",
        record.record.topic,
        record.record.kafka_partition.unwrap_or(-1),
        record.kafka_offset
    )
}

impl Running {
    fn put(
        &mut self,
        records: &[SinkRecord],
        context: &mut dyn SinkTaskContext,
    ) -> Result<(), TaskError> {
        let mut handled = match (self.resume.take(), records.first()) {
            (Some(r), Some(first))
                if r.topic == first.record.topic
                    && r.partition == first.record.kafka_partition
                    && r.first_offset == first.kafka_offset =>
            {
                r.handled
            }
            _ => BTreeSet::new(),
        };
        let mut pending: Option<Request> = None;
        for (i, record) in records.iter().enumerate() {
            if handled.contains(&record.kafka_offset) {
                continue;
            }
            let next = match self.request_for(record, i) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    handled.insert(record.kafka_offset);
                    continue;
                }
                Err(message) => {
                    context.reporter().report(record, &message)?;
                    handled.insert(record.kafka_offset);
                    continue;
                }
            };
            pending = match pending.take() {
                Some(mut open) if self.joins(&open, &next) => {
                    self.append(&mut open, next);
                    Some(open)
                }
                Some(full) => {
                    self.send(full, records, context, &mut handled)?;
                    Some(next)
                }
                None => Some(next),
            };
            if pending
                .as_ref()
                .is_some_and(|p| p.records.len() >= self.settings.batch_max)
            {
                let full = pending.take().expect("checked");
                self.send(full, records, context, &mut handled)?;
            }
        }
        if let Some(last) = pending {
            self.send(last, records, context, &mut handled)?;
        }
        Ok(())
    }

    /// The request one record makes on its own (`None`: the record is skipped), or why it cannot be sent.
    fn request_for(&self, record: &SinkRecord, index: usize) -> Result<Option<Request>, String> {
        let s = &self.settings;
        let url = self.url_for(record);
        let value = &record.record.value;
        if value.is_null() {
            let method = match s.on_null {
                OnNull::Ignore => return Ok(None),
                OnNull::Log => {
                    tracing::warn!(record = %coordinates(record), key = %record.record.key, "Skipping a record with a null value (behavior.on.null.values=log).");
                    return Ok(None);
                }
                OnNull::Fail => return Err("Record value must not be null".into()),
                OnNull::Delete => reqwest::Method::DELETE,
            };
            return Ok(Some(Request {
                method,
                url,
                body: None,
                records: vec![index],
            }));
        }
        Ok(Some(Request {
            method: s.method.clone(),
            url,
            body: Some(self.value_text(record)?),
            records: vec![index],
        }))
    }

    fn url_for(&self, record: &SinkRecord) -> String {
        let url = &self.settings.url;
        if self.settings.flavor == Flavor::Aiven || !url.contains("${") {
            return url.clone();
        }
        url.replace("${topic}", &record.record.topic)
            .replace("${key}", &record.record.key.to_string())
    }

    fn value_text(&self, record: &SinkRecord) -> Result<String, String> {
        let r = &record.record;
        let json = || -> Result<String, String> {
            let bytes = self
                .json
                .from_connect(&r.topic, r.value_schema.as_deref(), &r.value)
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            String::from_utf8(bytes).map_err(|e| e.to_string())
        };
        match (self.settings.body, &r.value) {
            (BodyFormat::Aiven | BodyFormat::String, Value::String(s)) => Ok(s.clone()),
            (BodyFormat::Aiven, Value::Struct(_) | Value::Map(_)) | (BodyFormat::Json, _) => json(),
            (BodyFormat::Aiven, other) => Err(format!(
                "Record value must be a String, a Schema Struct or implement `java.util.Map`, but {} is given",
                other.java_class()
            )),
            (BodyFormat::String, Value::Bytes(b)) => Ok(String::from_utf8_lossy(b).into_owned()),
            (BodyFormat::String, other) => Ok(other.to_string()),
        }
    }

    /// Whether `next` (one record's request) can join the open batch.
    fn joins(&self, open: &Request, next: &Request) -> bool {
        open.body.is_some()
            && next.body.is_some()
            && open.url == next.url
            && open.records.len() < self.settings.batch_max
    }

    fn append(&self, open: &mut Request, next: Request) {
        if let (Some(body), Some(more)) = (open.body.as_mut(), next.body) {
            body.push_str(&self.settings.separator);
            body.push_str(&more);
        }
        open.records.extend(next.records);
    }

    /// Sends one request (retrying as configured) and settles its records.
    fn send(
        &mut self,
        mut request: Request,
        records: &[SinkRecord],
        context: &mut dyn SinkTaskContext,
        handled: &mut BTreeSet<i64>,
    ) -> Result<(), TaskError> {
        if let Some(body) = request.body.as_mut() {
            *body = format!("{}{body}{}", self.settings.prefix, self.settings.suffix);
        }
        let retries = if self.outage {
            0
        } else {
            self.settings.max_retries
        };
        let mut retried = false;
        let outcome = self.client.deliver(
            &request.method,
            &request.url,
            request.body.as_deref(),
            retries,
            &mut |why| {
                retried = true;
                let message = format!(
                    "{} records not delivered to {} yet, retrying: {why}",
                    request.records.len(),
                    request.url
                );
                context.retrying(Some(&message));
            },
        );
        match outcome {
            Ok(()) => {
                if retried || self.outage {
                    context.retrying(None);
                }
                self.outage = false;
                self.not_before = None;
            }
            Err(Failure::Retriable {
                message,
                retry_after,
            }) => {
                let first = &records[0];
                self.resume = Some(Resume {
                    topic: first.record.topic.clone(),
                    partition: first.record.kafka_partition,
                    first_offset: first.kafka_offset,
                    handled: std::mem::take(handled),
                });
                let message = format!(
                    "{} records not delivered to {} yet: {message}",
                    records.len() - self.resume.as_ref().map_or(0, |r| r.handled.len()),
                    request.url
                );
                let wait = retry_after.unwrap_or_default().max(self.settings.backoff);
                self.not_before = Some((Instant::now() + wait, message.clone()));
                self.outage = true;
                return Err(TaskError::Retriable(message));
            }
            Err(Failure::Refused { message, .. }) => {
                self.refused(&request, records, context.reporter(), &message)?;
            }
            Err(Failure::Fatal(message)) => return Err(TaskError::Fatal(message)),
        }
        handled.extend(request.records.iter().map(|&i| records[i].kafka_offset));
        // Records are settled in order: every record up to the request's last one is handled now.
        if let Some(&last) = request.records.iter().max() {
            let partition = context.partition().clone();
            context.delivered(&partition, records[last].kafka_offset + 1)?;
        }
        Ok(())
    }

    fn refused(
        &self,
        request: &Request,
        records: &[SinkRecord],
        reporter: &mut dyn ErrantRecordReporter,
        message: &str,
    ) -> Result<(), TaskError> {
        match self.settings.on_error {
            OnError::Fail => {
                for &i in &request.records {
                    reporter.report(&records[i], message)?;
                }
            }
            OnError::Log => {
                let first = &records[request.records[0]];
                tracing::warn!(records = request.records.len(), first = %coordinates(first), %message, "The endpoint refused a request (behavior.on.error=log); its records are skipped.");
            }
            OnError::Ignore => {}
        }
        Ok(())
    }
}

/// The pause before the next attempt: `Retry-After` when the endpoint sent one (seconds or an HTTP
/// date), else the configured backoff.
pub fn retry_after(value: Option<&str>) -> Option<Duration> {
    let v = value?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let ms = (at.timestamp_millis() - chrono::Utc::now().timestamp_millis()).max(0);
    Some(Duration::from_millis(ms as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ConnectRecord;

    fn task(flavor: Flavor, pairs: &[(&str, &str)]) -> HttpSinkTask {
        let mut t = HttpSinkTask::new(flavor);
        let props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        t.start(&props).expect("starts");
        t
    }

    fn record(key: Value, value: Value) -> SinkRecord {
        let mut r = ConnectRecord::new("t", None, value);
        r.key = key;
        r.kafka_partition = Some(0);
        SinkRecord {
            record: r,
            kafka_offset: 7,
        }
    }

    fn request(t: &HttpSinkTask, r: &SinkRecord) -> Result<Option<Request>, String> {
        t.running.as_ref().expect("started").request_for(r, 0)
    }

    fn map() -> Value {
        Value::Map(vec![(Value::String("a".into()), Value::Int32(1))])
    }

    #[test]
    fn aiven_values_and_nulls() {
        let t = task(
            Flavor::Aiven,
            &[
                ("http.url", "http://h/${topic}"),
                ("http.authorization.type", "none"),
            ],
        );
        let r = request(&t, &record(Value::Null, Value::String("as is".into())))
            .unwrap()
            .unwrap();
        // Aiven's URL is used as written.
        assert_eq!(
            (r.url.as_str(), r.body.as_deref()),
            ("http://h/${topic}", Some("as is"))
        );
        let r = request(&t, &record(Value::Null, map())).unwrap().unwrap();
        assert_eq!(r.body.as_deref(), Some(r#"{"a":1}"#));
        let e = request(&t, &record(Value::Null, Value::Int32(3)))
            .err()
            .unwrap();
        assert!(
            e.starts_with("Record value must be a String, a Schema Struct"),
            "{e}"
        );
        let e = request(&t, &record(Value::Null, Value::Null))
            .err()
            .unwrap();
        assert_eq!(e, "Record value must not be null");
    }

    #[test]
    fn confluent_templates_formats_and_nulls() {
        let base = [("http.api.url", "http://h/${topic}/${key}")];
        let t = task(Flavor::Confluent, &base);
        let r = request(&t, &record(Value::String("k1".into()), Value::Int32(42)))
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.url.as_str(), r.body.as_deref()),
            ("http://h/t/k1", Some("42"))
        );
        assert_eq!(r.method, reqwest::Method::POST);
        assert!(request(&t, &record(Value::Null, Value::Null))
            .unwrap()
            .is_none());
        let json = task(
            Flavor::Confluent,
            &[
                base[0],
                ("request.body.format", "json"),
                ("behavior.on.null.values", "delete"),
            ],
        );
        let r = request(&json, &record(Value::Null, Value::String("s".into())))
            .unwrap()
            .unwrap();
        assert_eq!(r.body.as_deref(), Some("\"s\""));
        let d = request(&json, &record(Value::Int64(9), Value::Null))
            .unwrap()
            .unwrap();
        assert_eq!(
            (d.method, d.url.as_str(), d.body),
            (reqwest::Method::DELETE, "http://h/t/9", None)
        );
        // A DELETE never joins a batch; records for different URLs neither.
        let run = json.running.as_ref().unwrap();
        let put = request(&json, &record(Value::Int64(1), Value::String("x".into())))
            .unwrap()
            .unwrap();
        let other = request(&json, &record(Value::Int64(2), Value::String("y".into())))
            .unwrap()
            .unwrap();
        let d = request(&json, &record(Value::Int64(1), Value::Null))
            .unwrap()
            .unwrap();
        assert!(!run.joins(&put, &d) && !run.joins(&put, &other));
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        assert_eq!(retry_after(Some("3")), Some(Duration::from_secs(3)));
        let later = (chrono::Utc::now() + chrono::Duration::seconds(60)).to_rfc2822();
        let d = retry_after(Some(&later)).unwrap();
        assert!(
            d > Duration::from_secs(55) && d <= Duration::from_secs(60),
            "{d:?}"
        );
        assert_eq!(retry_after(Some("soon")), None);
        assert_eq!(retry_after(None), None);
    }
}
