//! Offline runs of a connector config's record path: `liteconnect test` and
//! `POST /connector-plugins/{plugin}/config/test`.
//!
//! A sink config's converters, transformation chain (with its predicates) and `errors.*` settings run
//! on sample records exactly as a sink task runs them on records read from the log; a source config's
//! task runs for a bounded number of records or seconds and its records go through the transforms and
//! converters as they would on their way into the log. Nothing is stored: the source's offsets live in
//! memory for the run, and its `commit` is never called, so nothing is acknowledged to the source.

pub mod expect;
pub mod input;
mod view;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value as Json};

use crate::config::connector::{ConnectorType, ErrorSettings, ToleranceType};
use crate::config::worker::WorkerConfig;
use crate::connectors::{ConnectorPlugin, Props, SourceTaskContext, TaskError};
use crate::storage::LogRecord;
use crate::transforms::{RecordContext, StepSeen, TransformChain};
use crate::worker::convert::{last_offsets, Converters, StageFailure};

pub use input::InputRecord;
pub use view::text;

/// Why a test could not run.
#[derive(Debug, thiserror::Error)]
pub enum TryError {
    /// The connector config is invalid: each `key: message`, as `validate` lists them.
    #[error("the connector config is invalid: {}", .0.join("; "))]
    Config(Vec<String>),
    /// The source task failed to start or to poll.
    #[error("{0}")]
    Task(String),
}

/// A connector config ready to run: its plugin, converters, chain and error settings.
#[derive(Debug)]
pub struct Prepared {
    name: String,
    config: Props,
    plugin: std::sync::Arc<dyn ConnectorPlugin>,
    kind: ConnectorType,
    converters: Converters,
    chain: TransformChain,
    errors: ErrorSettings,
}

/// Validates `config` as `PUT /connector-plugins/{p}/config/validate` would and builds what its
/// records go through, with the worker's converters where the config names none.
///
/// # Errors
/// [`TryError::Config`] with every validation error, or the converter or chain that cannot be built.
pub fn prepare(config: &Props, worker: &WorkerConfig) -> Result<Prepared, TryError> {
    let plugins = crate::plugins::Plugins::new();
    let optional = config
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    let infos = plugins
        .validate(&optional)
        .map_err(|e| TryError::Config(vec![e.to_string()]))?;
    if infos.error_count > 0 {
        let errors = crate::config::connector::distinct_errors(&infos)
            .into_iter()
            .map(|(key, message)| format!("{key}: {message}"))
            .collect();
        return Err(TryError::Config(errors));
    }
    let class = config
        .get(crate::config::keys::CONNECTOR_CLASS)
        .map(|c| c.trim())
        .unwrap_or_default();
    let plugin = plugins
        .connector(class)
        .map_err(|e| TryError::Config(vec![format!("connector.class: {e}")]))?;
    let kind = plugin.connector_type();
    let converters = Converters::for_plugin(plugin.as_ref(), config, worker)
        .map_err(|e| TryError::Config(vec![e.to_string()]))?;
    let chain = TransformChain::from_config(config, &plugins)
        .map_err(|e| TryError::Config(vec![format!("transforms: {e}")]))?;
    Ok(Prepared {
        name: config
            .get("name")
            .cloned()
            .unwrap_or_else(|| "test".to_string()),
        config: config.clone(),
        plugin,
        kind,
        converters,
        chain,
        errors: ErrorSettings::lenient(config, kind),
    })
}

impl Prepared {
    /// Whether the config is a sink's (records come from `--input`) or a source's (records come from
    /// its task).
    pub fn is_sink(&self) -> bool {
        self.kind == ConnectorType::Sink
    }

    fn tolerates(&self) -> bool {
        self.errors.tolerance == ToleranceType::All
    }

    /// The topic a record without one is read from: the first of `topics`.
    fn default_topic(&self) -> Option<String> {
        self.config
            .get(crate::config::keys::TOPICS)
            .and_then(|t| t.split(',').map(str::trim).find(|t| !t.is_empty()))
            .map(str::to_string)
    }

    /// Runs the sample records through the sink path and returns one outcome per record, in order.
    /// After a record fails beyond the error tolerance the task would fail: that record is the last.
    pub fn run_sink(&self, records: &[InputRecord], steps: bool) -> Vec<Json> {
        let default_topic = self.default_topic();
        let mut out = Vec::with_capacity(records.len());
        for (index, input) in records.iter().enumerate() {
            let topic = input
                .topic
                .clone()
                .or_else(|| default_topic.clone())
                .unwrap_or_default();
            let stored = LogRecord {
                topic,
                partition: input.partition,
                offset: input.offset.unwrap_or(index as i64),
                timestamp: input.timestamp,
                key: input.key.clone(),
                value: input.value.clone(),
                headers: input.headers.clone(),
            };
            let mut outcome = Map::new();
            outcome.insert("index".into(), json!(index));
            if !crate::config::connector::subscribes(&self.config, &stored.topic) {
                outcome.insert("result".into(), json!("not subscribed"));
                outcome.insert("topic".into(), json!(stored.topic));
                out.push(Json::Object(outcome));
                continue;
            }
            let fatal = self.sink_record(&stored, steps, &mut outcome);
            out.push(Json::Object(outcome));
            if fatal {
                break;
            }
        }
        out
    }

    /// One record of [`Prepared::run_sink`]; true when it fails the task.
    fn sink_record(
        &self,
        stored: &LogRecord,
        steps: bool,
        outcome: &mut Map<String, Json>,
    ) -> bool {
        let mut trail = Vec::new();
        let decoded = match self.converters.decode(stored) {
            Ok(d) => d,
            Err(failure) => return self.failed(failure, Some(stored), trail, outcome),
        };
        let offset = decoded.kafka_offset;
        if steps {
            trail.push(json!({"step": "converters", "record": view::connect_record(&decoded.record, Some(offset))}));
        }
        let ctx = RecordContext::sink(offset);
        match self.chain_steps(decoded.record, &ctx, steps, &mut trail) {
            Ok(Some(record)) => {
                outcome.insert("result".into(), json!("delivered"));
                outcome.extend(view::connect_record(&record, Some(offset)));
            }
            Ok(None) => self.dropped(&trail, outcome),
            Err(failure) => return self.failed(failure, Some(stored), trail, outcome),
        }
        if steps {
            outcome.insert("steps".into(), Json::Array(trail));
        }
        false
    }

    /// Runs the chain, adding a step per stage to `trail` when `steps`.
    fn chain_steps(
        &self,
        record: crate::record::ConnectRecord,
        ctx: &RecordContext,
        steps: bool,
        trail: &mut Vec<Json>,
    ) -> Result<Option<crate::record::ConnectRecord>, StageFailure> {
        let offset = ctx.kafka_offset;
        let mut last_drop = None;
        let result = self.chain.apply_observed(record, ctx, |step| {
            let mut s = Map::new();
            s.insert("step".into(), json!("transform"));
            s.insert("alias".into(), json!(step.alias));
            s.insert("class".into(), json!(step.class));
            if let Some(p) = step.predicate {
                s.insert("predicate".into(), json!(p));
                s.insert("negate".into(), json!(step.negate));
            }
            match step.seen {
                StepSeen::Skipped => {
                    s.insert("result".into(), json!("skipped by its predicate"));
                }
                StepSeen::Applied(r) => {
                    s.insert("result".into(), json!("applied"));
                    if steps {
                        s.insert(
                            "record".into(),
                            Json::Object(view::connect_record(r, offset)),
                        );
                    }
                }
                StepSeen::Dropped => {
                    s.insert("result".into(), json!("dropped"));
                    last_drop = Some((step.alias.to_string(), step.class));
                }
            }
            if steps || last_drop.is_some() {
                trail.push(Json::Object(s));
            }
        });
        result.map_err(|e| {
            if steps {
                trail.push(json!({"step": "transform", "alias": e.alias, "class": e.class, "result": "failed", "error": e.message}));
            }
            StageFailure {
                stage: "TRANSFORMATION",
                class: e.class,
                message: e.message,
            }
        })
    }

    fn dropped(&self, trail: &[Json], outcome: &mut Map<String, Json>) {
        let last = trail.last().cloned().unwrap_or(Json::Null);
        outcome.insert("result".into(), json!("dropped"));
        outcome.insert(
            "by".into(),
            last.get("alias").cloned().unwrap_or(Json::Null),
        );
        outcome.insert(
            "class".into(),
            last.get("class").cloned().unwrap_or(Json::Null),
        );
        // A transform that ran because of its predicate (a Filter on `HasHeaderKey`) names it too.
        if let Some(predicate) = last.get("predicate") {
            outcome.insert("predicate".into(), predicate.clone());
            outcome.insert(
                "negate".into(),
                last.get("negate").cloned().unwrap_or(json!(false)),
            );
        }
    }

    /// Fills a failed record's outcome; true when the failure fails the task.
    fn failed(
        &self,
        failure: StageFailure,
        stored: Option<&LogRecord>,
        trail: Vec<Json>,
        outcome: &mut Map<String, Json>,
    ) -> bool {
        outcome.insert("result".into(), json!("failed"));
        outcome.insert("stage".into(), json!(failure.stage));
        outcome.insert("class".into(), json!(failure.class));
        outcome.insert("error".into(), json!(failure.message));
        let tolerated = self.tolerates();
        outcome.insert("skipped".into(), json!(tolerated));
        if tolerated {
            if let (Some(topic), Some(stored)) = (&self.errors.dlq_topic, stored) {
                let headers = if self.errors.dlq_context_headers {
                    crate::worker::errors::with_context_headers(stored, &self.name, 0, &failure)
                } else {
                    stored.headers.clone()
                };
                let mut dlq = Map::new();
                dlq.insert("topic".into(), json!(topic));
                view::put_bytes(&mut dlq, "key", stored.key.as_deref());
                view::put_bytes(&mut dlq, "value", stored.value.as_deref());
                dlq.insert("headers".into(), view::stored_headers(&headers));
                outcome.insert("dlq".into(), Json::Object(dlq));
            }
        }
        if !trail.is_empty() {
            outcome.insert("steps".into(), Json::Array(trail));
        }
        !tolerated
    }

    /// Runs the source task until it has given `max_records` records or `timeout` has passed, and
    /// returns one outcome per record: as stored in the topic (`result` `stored`), dropped by a
    /// transformation, or failed. Offsets are kept in memory for the run only.
    ///
    /// # Errors
    /// [`TryError::Task`] when the task cannot be made, started, or fails in `poll`.
    pub fn run_source(
        &self,
        max_records: usize,
        timeout: Duration,
        steps: bool,
    ) -> Result<Vec<Json>, TryError> {
        let task_fail = |what: &str, e: TaskError| TryError::Task(format!("{what}: {e}"));
        let tasks = self
            .plugin
            .task_configs(&self.config, 1)
            .map_err(|e| task_fail("the connector gave no task config", e))?;
        let task_config = tasks
            .into_iter()
            .next()
            .unwrap_or_else(|| self.config.clone());
        let mut task = self
            .plugin
            .source_task()
            .ok_or_else(|| TryError::Task("the plugin has no source task".into()))?;
        let ctx = Context {
            deadline: Instant::now() + timeout,
            offsets: Mutex::new(BTreeMap::new()),
        };
        task.start(&task_config, &ctx)
            .map_err(|e| task_fail("SourceTask.start failed", e))?;
        let mut out = Vec::new();
        let result = self.poll_until(task.as_mut(), &ctx, max_records, steps, &mut out);
        task.stop();
        result.map(|()| out)
    }

    fn poll_until(
        &self,
        task: &mut dyn crate::connectors::SourceTask,
        ctx: &Context,
        max_records: usize,
        steps: bool,
        out: &mut Vec<Json>,
    ) -> Result<(), TryError> {
        while out.len() < max_records && !ctx.past() {
            let records = match task.poll(ctx) {
                Ok(r) => r,
                Err(TaskError::Retriable(_)) => {
                    ctx.wait(Duration::from_millis(100));
                    continue;
                }
                Err(e) => return Err(TryError::Task(format!("the task failed at TASK_POLL: {e}"))),
            };
            for (partition, offset) in last_offsets(&records) {
                if let Ok(mut offsets) = ctx.offsets.lock() {
                    offsets.insert(crate::storage::canonical_key(&partition), offset);
                }
            }
            for r in records {
                if out.len() >= max_records {
                    break;
                }
                let mut outcome = Map::new();
                outcome.insert("index".into(), json!(out.len()));
                let fatal = self.source_record(r, steps, &mut outcome);
                out.push(Json::Object(outcome));
                if fatal {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// One polled record through the chain and the converters; true when it fails the task.
    fn source_record(
        &self,
        polled: crate::record::SourceRecord,
        steps: bool,
        outcome: &mut Map<String, Json>,
    ) -> bool {
        let mut trail = Vec::new();
        if steps {
            trail.push(
                json!({"step": "polled", "record": view::connect_record(&polled.record, None)}),
            );
        }
        let place = |outcome: &mut Map<String, Json>| {
            outcome.insert("source_partition".into(), json!(polled.source_partition));
            outcome.insert("source_offset".into(), json!(polled.source_offset));
        };
        let transformed = match self.chain_steps(
            polled.record.clone(),
            &RecordContext::source(),
            steps,
            &mut trail,
        ) {
            Ok(Some(r)) => r,
            Ok(None) => {
                self.dropped(&trail, outcome);
                place(outcome);
                if steps {
                    outcome.insert("steps".into(), Json::Array(trail));
                }
                return false;
            }
            Err(failure) => {
                let fatal = self.failed(failure, None, trail, outcome);
                place(outcome);
                return fatal;
            }
        };
        match self.converters.encode(&transformed) {
            Ok(stored) => {
                outcome.insert("result".into(), json!("stored"));
                outcome.insert("topic".into(), json!(stored.topic));
                outcome.insert("partition".into(), json!(stored.partition.unwrap_or(0)));
                outcome.insert("timestamp".into(), json!(stored.timestamp));
                view::put_bytes(outcome, "key", stored.key.as_deref());
                view::put_bytes(outcome, "value", stored.value.as_deref());
                outcome.insert("headers".into(), view::stored_headers(&stored.headers));
                place(outcome);
                if steps {
                    outcome.insert("steps".into(), Json::Array(trail));
                }
                false
            }
            Err(failure) => {
                let fatal = self.failed(failure, None, trail, outcome);
                place(outcome);
                fatal
            }
        }
    }
}

/// The source task's context for a test run: offsets in memory, waits bounded by the run's deadline.
struct Context {
    deadline: Instant,
    offsets: Mutex<BTreeMap<String, Option<Json>>>,
}

impl Context {
    fn past(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

impl SourceTaskContext for Context {
    fn offset(&self, partition: &Json) -> Result<Option<Json>, TaskError> {
        let key = crate::storage::canonical_key(partition);
        Ok(self
            .offsets
            .lock()
            .ok()
            .and_then(|o| o.get(&key).cloned().flatten()))
    }

    fn wait(&self, timeout: Duration) -> bool {
        let left = self.deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(timeout.min(left));
        !self.past()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Props {
        let mut c: Props = [
            ("name", "t"),
            ("connector.class", "FileStreamSink"),
            ("file", "unused.txt"),
            (
                "value.converter",
                "org.apache.kafka.connect.storage.StringConverter",
            ),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        c.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        c
    }

    #[test]
    fn records_of_other_topics_are_not_delivered_and_a_regex_subscribes() {
        let records = input::parse_lines(
            "{\"topic\":\"a-1\",\"value\":\"x\"}\n{\"topic\":\"b\",\"value\":\"y\"}\n",
        )
        .unwrap();
        let p = prepare(
            &config(&[("topics.regex", "a-.*")]),
            &WorkerConfig::defaults(),
        )
        .unwrap();
        let out = p.run_sink(&records, false);
        assert_eq!(out[0]["result"], "delivered");
        assert_eq!(out[1]["result"], "not subscribed");
        assert_eq!(out[1]["topic"], "b");
    }

    #[test]
    fn an_invalid_config_lists_every_error_by_key() {
        let Err(TryError::Config(errors)) = prepare(
            &config(&[("transforms", "x"), ("tasks.max", "many")]),
            &WorkerConfig::defaults(),
        ) else {
            panic!("an invalid config was prepared");
        };
        let keys: Vec<&str> = errors.iter().filter_map(|e| e.split(':').next()).collect();
        assert!(keys.contains(&"tasks.max"), "{errors:?}");
        assert!(keys.contains(&"transforms.x.type"), "{errors:?}");
        assert!(keys.contains(&"topics"), "{errors:?}");
    }
}
