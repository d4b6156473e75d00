//! `POST /connector-plugins/{plugin}/config/test`: `liteconnect test` over REST. The body is
//! `{"config": {...}, "records": [...]}` (records as `liteconnect test --input` reads them), with
//! optional `steps` (default true); `connector.class` defaults to the plugin of the path and `name`
//! to `test`; and for a source config `max.records` (default 10, at most 1,000)
//! and `timeout.ms` (default 5,000, at most 60,000). The answer is
//! `{"name", "type", "records": [...]}`, one outcome per record as `liteconnect test --format json`
//! prints them.

use std::time::Duration;

use serde_json::{json, Map, Value as Json};

use super::Reply;
use crate::config::worker::WorkerConfig;
use crate::connectors::Props;
use crate::tryout::{self, TryError};

/// A parsed test request.
#[derive(Debug)]
pub(super) struct TestRequest {
    pub(super) config: Props,
    records: Vec<tryout::InputRecord>,
    steps: bool,
    max_records: usize,
    timeout: Duration,
}

const MAX_RECORDS: (u64, u64) = (10, 1_000);
const TIMEOUT_MS: (u64, u64) = (5_000, 60_000);

impl TestRequest {
    /// Reads the body; `connector.class` defaults to the plugin of the path.
    pub(super) fn parse(mut body: Map<String, Json>, plugin: &str) -> Result<Self, Reply> {
        let bad = |m: String| Reply::error(400, m);
        if let Some(unknown) = body.keys().find(|k| {
            !["config", "records", "steps", "max.records", "timeout.ms"].contains(&k.as_str())
        }) {
            return Err(bad(format!(
                "Unknown field \"{unknown}\": a test body has config, records, steps, max.records and timeout.ms"
            )));
        }
        let config = match body.remove("config") {
            Some(Json::Object(map)) => map
                .into_iter()
                .map(|(k, v)| match v {
                    Json::String(s) => Ok((k, s)),
                    Json::Number(n) => Ok((k, n.to_string())),
                    Json::Bool(b) => Ok((k, b.to_string())),
                    other => Err(bad(format!(
                        "The value of config key {k} must be a string, not {other}"
                    ))),
                })
                .collect::<Result<Props, Reply>>()?,
            None => return Err(bad("The body needs a \"config\" object".into())),
            Some(other) => return Err(bad(format!("\"config\" must be an object, not {other}"))),
        };
        let mut config = config;
        config
            .entry(crate::config::keys::CONNECTOR_CLASS.to_string())
            .or_insert_with(|| plugin.to_string());
        // Nothing is created, so a name is only for the dead letter queue's context headers.
        config
            .entry("name".to_string())
            .or_insert_with(|| "test".to_string());
        let records = match body.remove("records") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(list)) => tryout::input::parse_array(&list).map_err(|e| {
                bad(format!(
                    "Invalid record at index {}: {}",
                    e.line - 1,
                    e.message
                ))
            })?,
            Some(other) => return Err(bad(format!("\"records\" must be a list, not {other}"))),
        };
        let steps = match body.remove("steps") {
            None => true,
            Some(Json::Bool(b)) => b,
            Some(other) => {
                return Err(bad(format!("\"steps\" must be true or false, not {other}")))
            }
        };
        let bounded = |field: &str, (default, most): (u64, u64)| -> Result<u64, Reply> {
            match body.get(field) {
                None => Ok(default),
                Some(v) => v
                    .as_u64()
                    .filter(|n| (1..=most).contains(n))
                    .ok_or_else(|| {
                        bad(format!(
                            "\"{field}\" must be a number from 1 to {most}, not {v}"
                        ))
                    }),
            }
        };
        Ok(TestRequest {
            max_records: usize::try_from(bounded("max.records", MAX_RECORDS)?).unwrap_or(1_000),
            timeout: Duration::from_millis(bounded("timeout.ms", TIMEOUT_MS)?),
            config,
            records,
            steps,
        })
    }

    /// Runs the test (blocking: a source test runs its task for up to the timeout).
    pub(super) fn run(self, worker: &WorkerConfig) -> Result<Json, Reply> {
        let prepared = tryout::prepare(&self.config, worker).map_err(|e| match e {
            TryError::Config(errors) => Reply::error(
                400,
                format!(
                    "Connector configuration is invalid and contains the following {} error(s):\n{}",
                    errors.len(),
                    errors.join("\n")
                ),
            ),
            other => Reply::error(400, other.to_string()),
        })?;
        let name = self.config.get("name").cloned();
        let (kind, records) = if prepared.is_sink() {
            ("sink", prepared.run_sink(&self.records, self.steps))
        } else {
            if !self.records.is_empty() {
                return Err(Reply::error(
                    400,
                    "A source connector reads its own records: leave \"records\" out".to_string(),
                ));
            }
            let records = prepared
                .run_source(self.max_records, self.timeout, self.steps)
                .map_err(|e| Reply::error(400, e.to_string()))?;
            ("source", records)
        };
        Ok(json!({"name": name, "type": kind, "records": records}))
    }
}
