//! `com.github.castorm.kafka.connect.http.HttpSourceConnector`: polls an HTTP API on a timer and turns
//! each response's items into records, skipping those already seen by their offset. Keys, defaults,
//! record shape and offsets (partition `{}`, offset `{key, timestamp, ...}`) follow the original.

pub mod parse;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{json, Value as Json};

use self::parse::{Offset, RecordParser};
use super::super::{ConnectorPlugin, Props, SourceTask, SourceTaskContext, TaskError};
use super::webhook::parse_config;
use crate::config::def::{key, KeyRow, NULL_DEFAULT};
use crate::config::def::{ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, Validator};
use crate::connectors::plugin_identity;
use crate::model::now_ms;
use crate::record::SourceRecord;

const VERSION: &str = "0.8.11";
const URL: &str = "http.request.url";
const METHOD: &str = "http.request.method";
const HEADERS: &str = "http.request.headers";
const PARAMS: &str = "http.request.params";
const BODY: &str = "http.request.body";
const OFFSET_INITIAL: &str = "http.offset.initial";
const INTERVAL: &str = "http.timer.interval.millis";
const CATCHUP_INTERVAL: &str = "http.timer.catchup.interval.millis";
const LIST_POINTER: &str = "http.response.list.pointer";
const RECORD_POINTER: &str = "http.response.record.pointer";
const KEY_POINTER: &str = "http.response.record.key.pointer";
const TIMESTAMP_POINTER: &str = "http.response.record.timestamp.pointer";
const OFFSET_POINTER: &str = "http.response.record.offset.pointer";
const ORDER: &str = "http.response.list.order.direction";
const PROCESS_CODES: &str = "http.response.policy.codes.process";
const SKIP_CODES: &str = "http.response.policy.codes.skip";
const AUTH_TYPE: &str = "http.auth.type";
const AUTH_USER: &str = "http.auth.user";
const AUTH_PASSWORD: &str = "http.auth.password";
const CONNECT_TIMEOUT: &str = "http.client.connection.timeout.millis";
const READ_TIMEOUT: &str = "http.client.read.timeout.millis";
const TOPIC: &str = "kafka.topic";

/// The keys without a validator, as the original defines them.
#[rustfmt::skip]
const PLAIN_KEYS: &[KeyRow] = {
    use ConfigType::{Password, String as Text};
    use Importance::{High, Low, Medium};
    &[
        (HEADERS, Text, Some(""), Medium, "HTTP Headers Template"),
        (PARAMS, Text, Some(""), Medium, "HTTP Query Params Template"),
        (BODY, Text, Some(""), Low, "HTTP Body Template"),
        (OFFSET_INITIAL, Text, Some(""), High, "Starting offset"),
        (LIST_POINTER, Text, Some("/"), High, "Item List JsonPointer"),
        (RECORD_POINTER, Text, Some("/"), High, "Item JsonPointer"),
        (KEY_POINTER, Text, NULL_DEFAULT, High, "Item Key JsonPointers"),
        (TIMESTAMP_POINTER, Text, NULL_DEFAULT, Medium, "Item Timestamp JsonPointer"),
        (OFFSET_POINTER, Text, Some(""), Medium, "Item Offset JsonPointers"),
        (PROCESS_CODES, Text, Some("200..299"), High, "Process Codes"),
        (SKIP_CODES, Text, Some("300..399"), High, "Skip Codes"),
        (AUTH_USER, Text, Some(""), High, "Username"),
        (AUTH_PASSWORD, Password, Some(""), High, "Password"),
    ]
};

/// Checks that the URL template, with every `${…}` placeholder filled, is an absolute http(s) URL.
fn check_url(template: &str) -> Result<(), String> {
    let mut filled = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        filled.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => {
                filled.push('0');
                rest = &rest[start + end + 1..];
            }
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    filled.push_str(rest);
    let invalid = |why: String| crate::config::invalid_value(URL, template, why);
    let url =
        reqwest::Url::parse(filled.trim()).map_err(|e| invalid(format!("not a URL ({e})")))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(()),
        "http" | "https" => Err(invalid("the URL has no host".into())),
        other => Err(invalid(format!("the scheme is {other}, not http or https"))),
    }
}

/// `com.github.castorm.kafka.connect.http.HttpSourceConnector`.
#[derive(Debug)]
pub struct HttpSource;

impl ConnectorPlugin for HttpSource {
    plugin_identity!(
        "com.github.castorm.kafka.connect.http.HttpSourceConnector",
        Source,
        VERSION,
        "com.github.castorm.kafka.connect.http.HttpSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        use ConfigType::{Long, String as Text};
        use Importance::{High, Low, Medium};
        let methods = vec!["GET", "HEAD", "POST", "PUT", "PATCH"];
        let orders = vec!["ASC", "DESC", "IMPLICIT"];
        let checked = [
            ConfigKey::new(URL, Text, DefaultValue::Required, High, "HTTP URL Template")
                .validator(Validator::NonEmptyString),
            key(METHOD, Text, Some("GET"), High, "HTTP Method Template")
                .validator(Validator::OneOf(methods)),
            key(
                ORDER,
                Text,
                Some("IMPLICIT"),
                Low,
                "Order direction of the results in the response list",
            )
            .validator(Validator::OneOfCaseInsensitive(orders)),
            key(AUTH_TYPE, Text, Some("None"), Medium, "Authentication Type")
                .validator(Validator::OneOfCaseInsensitive(vec!["NONE", "BASIC"])),
            key(TOPIC, Text, None, High, "Kafka Topic").validator(Validator::NonEmptyString),
            // Negative intervals and timeouts are refused here (the original fails later, at run time).
            key(
                INTERVAL,
                Long,
                Some("60000"),
                High,
                "Timer Tail Interval Millis",
            )
            .validator(Validator::AtLeast(0.0)),
            key(
                CATCHUP_INTERVAL,
                Long,
                Some("30000"),
                High,
                "Timer Catchup Interval Millis",
            )
            .validator(Validator::AtLeast(0.0)),
            key(
                CONNECT_TIMEOUT,
                Long,
                Some("2000"),
                High,
                "Connection Timeout Millis",
            )
            .validator(Validator::AtLeast(0.0)),
            key(
                READ_TIMEOUT,
                Long,
                Some("2000"),
                High,
                "Read Timeout Millis",
            )
            .validator(Validator::AtLeast(0.0)),
        ];
        checked
            .into_iter()
            .fold(ConfigDef::new(), ConfigDef::define)
            .define_rows(PLAIN_KEYS)
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let get = |k: &str| config.get(k).cloned().flatten().unwrap_or_default();
        let mut errors = Vec::new();
        if get(TOPIC).trim().is_empty() {
            errors.push((
                TOPIC.to_string(),
                format!("Missing required configuration \"{TOPIC}\" which has no default value."),
            ));
        }
        for k in [PROCESS_CODES, SKIP_CODES] {
            if let Err(e) = parse::codes(&get(k)) {
                errors.push((k.to_string(), e));
            }
        }
        for k in [OFFSET_POINTER, OFFSET_INITIAL] {
            if let Err(e) = parse::pairs(&get(k), ',', '=') {
                errors.push((k.to_string(), e));
            }
        }
        let url = get(URL);
        if !url.trim().is_empty() {
            if let Err(e) = check_url(&url) {
                errors.push((URL.to_string(), e));
            }
        }
        if let Err(e) = parse::headers(&get(HEADERS)) {
            errors.push((HEADERS.to_string(), e));
        }
        if let Err(e) = parse::pairs(&get(PARAMS), '&', '=') {
            errors.push((PARAMS.to_string(), e));
        }
        errors
    }
    fn task_configs(&self, config: &Props, _max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        // As the original: one task polls the one URL.
        Ok(vec![config.clone()])
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(HttpSourceTask::default()))
    }
}

/// The request side of the config.
struct Request {
    url: String,
    method: reqwest::Method,
    headers: String,
    params: String,
    body: String,
    basic: Option<(String, String)>,
}

/// The original's adaptable timer: the tail interval, or the catch-up interval while the offsets'
/// timestamps move and lag behind.
#[derive(Default)]
struct Timer {
    tail: Duration,
    catchup: Duration,
    previous_latest: Option<i64>,
    current_latest: Option<i64>,
}

impl Timer {
    /// Notes the offset's timestamp before a request and returns how long to wait first.
    fn next(&mut self, latest: i64) -> Duration {
        self.previous_latest = self.current_latest;
        self.current_latest = Some(latest);
        let moved = self.previous_latest != self.current_latest;
        let behind = latest < now_ms() - self.tail.as_millis() as i64;
        if moved && behind {
            self.catchup
        } else {
            self.tail
        }
    }
}

/// The running poller.
#[derive(Default)]
pub struct HttpSourceTask {
    request: Option<Request>,
    client: Option<reqwest::blocking::Client>,
    parser: Option<RecordParser>,
    order: String,
    process: BTreeSet<u16>,
    skip: BTreeSet<u16>,
    timer: Timer,
    /// The offset of the last record stored (or the initial one).
    offset: Offset,
    /// The offset of the last record the last poll returned, the offset once `commit` is called.
    polled: Option<Offset>,
}

impl HttpSourceTask {
    fn configure(&mut self, config: &Props) -> Result<Offset, TaskError> {
        let c = parse_config(&HttpSource.config_def(), config)?;
        let text = |k: &str| c.get_string(k).unwrap_or_default();
        let invalid =
            |k: &str, e: String| TaskError::fatal(crate::config::invalid_value(k, text(k), e));
        let basic = text(AUTH_TYPE)
            .eq_ignore_ascii_case("basic")
            .then(|| (text(AUTH_USER), text(AUTH_PASSWORD)));
        self.request = Some(Request {
            url: text(URL),
            method: text(METHOD)
                .parse()
                .map_err(|_| invalid(METHOD, "not an HTTP method".into()))?,
            headers: text(HEADERS),
            params: text(PARAMS),
            body: text(BODY),
            basic,
        });
        self.parser = Some(RecordParser {
            list: text(LIST_POINTER),
            record: text(RECORD_POINTER),
            keys: text(KEY_POINTER)
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(str::to_string)
                .collect(),
            timestamp: c.get_string(TIMESTAMP_POINTER).filter(|t| !t.is_empty()),
            offsets: parse::pairs(&text(OFFSET_POINTER), ',', '=')
                .map_err(|e| invalid(OFFSET_POINTER, e))?,
            topic: text(TOPIC),
        });
        self.order = text(ORDER);
        self.process = parse::codes(&text(PROCESS_CODES)).map_err(|e| invalid(PROCESS_CODES, e))?;
        self.skip = parse::codes(&text(SKIP_CODES)).map_err(|e| invalid(SKIP_CODES, e))?;
        let millis = |k: &str| Duration::from_millis(c.get_long(k).unwrap_or(0).max(0) as u64);
        self.timer.tail = millis(INTERVAL);
        self.timer.catchup = millis(CATCHUP_INTERVAL);
        self.client = Some(
            reqwest::blocking::Client::builder()
                .connect_timeout(millis(CONNECT_TIMEOUT))
                .timeout(millis(CONNECT_TIMEOUT) + millis(READ_TIMEOUT))
                .build()
                .map_err(|e| TaskError::fatal(format!("Cannot build the HTTP client: {e}")))?,
        );
        let initial = parse::pairs(&text(OFFSET_INITIAL), ',', '=')
            .map_err(|e| invalid(OFFSET_INITIAL, e))?;
        Ok(initial
            .into_iter()
            .map(|(k, v)| (k, Json::String(v)))
            .collect())
    }

    /// Sends the request for the current offset and returns the status and body.
    fn fetch(&self) -> Result<(u16, Vec<u8>), TaskError> {
        let (Some(request), Some(client)) = (&self.request, &self.client) else {
            return Err(TaskError::fatal("The task is not started"));
        };
        let o = &self.offset;
        let mut url = parse::render(&request.url, o);
        let params =
            parse::pairs(&parse::render(&request.params, o), '&', '=').map_err(TaskError::fatal)?;
        for (i, (k, v)) in params.iter().enumerate() {
            let sep = if i == 0 && !url.contains('?') {
                '?'
            } else {
                '&'
            };
            url.push_str(&format!("{sep}{k}={v}"));
        }
        let mut builder = client.request(request.method.clone(), &url);
        for (name, value) in
            parse::headers(&parse::render(&request.headers, o)).map_err(TaskError::fatal)?
        {
            builder = builder.header(name, value);
        }
        if let Some((user, password)) = &request.basic {
            builder = builder.basic_auth(user, Some(password));
        }
        if request.method != reqwest::Method::GET && request.method != reqwest::Method::HEAD {
            builder = builder.body(parse::render(&request.body, o));
        }
        let response = builder.send().map_err(|e| {
            TaskError::Retriable(format!(
                "The request to {url} failed: {}",
                crate::client::cause(&e)
            ))
        })?;
        let status = response.status().as_u16();
        let body = response.bytes().map_err(|e| {
            TaskError::Retriable(format!(
                "Reading the response from {url} failed: {}",
                crate::client::cause(&e)
            ))
        })?;
        Ok((status, body.to_vec()))
    }
}

impl SourceTask for HttpSourceTask {
    fn start(&mut self, config: &Props, context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let initial = self.configure(config)?;
        self.offset = match context.offset(&json!({}))? {
            Some(Json::Object(stored)) if !stored.is_empty() => stored,
            _ => initial,
        };
        Ok(())
    }

    fn poll(&mut self, context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        let latest = self
            .offset
            .get("timestamp")
            .and_then(Json::as_str)
            .and_then(|t| parse::parse_timestamp(t).ok())
            .unwrap_or_else(now_ms);
        let wait = self.timer.next(latest);
        if !wait.is_zero() && !context.wait(wait) {
            return Ok(Vec::new());
        }
        let (status, body) = self.fetch()?;
        if !self.process.contains(&status) {
            if self.skip.contains(&status) {
                tracing::warn!(
                    status,
                    "Unexpected HttpResponse status code: {status}, continuing with no records"
                );
                return Ok(Vec::new());
            }
            let text = String::from_utf8_lossy(&body);
            return Err(TaskError::fatal(format!(
                "Policy failed for response code: {status}, body: {text}"
            )));
        }
        let parser = self
            .parser
            .as_ref()
            .ok_or_else(|| TaskError::fatal("The task is not started"))?;
        let mut records = parser.parse(&body).map_err(|e| TaskError::fatal(e.0))?;
        let total = records.len();
        parse::sort(&mut records, &self.order);
        let records = parse::unseen(records, &self.offset);
        tracing::debug!(offset = %Json::Object(self.offset.clone()), "Request for offset yields {}/{} new records", records.len(), total);
        self.polled = records.last().and_then(|r| r.source_offset.clone());
        Ok(records)
    }

    fn commit(&mut self) -> Result<(), TaskError> {
        if let Some(offset) = self.polled.take() {
            self.offset = offset;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_catches_up_while_old_offsets_move() {
        let mut timer = Timer {
            tail: Duration::from_millis(60_000),
            catchup: Duration::from_millis(30_000),
            ..Timer::default()
        };
        let hour_ago = now_ms() - 3_600_000;
        assert_eq!(
            timer.next(hour_ago),
            timer.catchup,
            "the offset moved and lags behind"
        );
        assert_eq!(timer.next(hour_ago), timer.tail, "the offset did not move");
        assert_eq!(timer.next(now_ms()), timer.tail, "the offset is recent");
    }

    #[test]
    fn validation_names_the_wrong_key() {
        let config: BTreeMap<String, Option<String>> = [
            (URL, "http://api"),
            (SKIP_CODES, "3xx"),
            (OFFSET_POINTER, "key"),
            (HEADERS, "no colon"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), Some(v.to_string())))
        .collect();
        let keys: Vec<String> = HttpSource
            .validate(&config)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for k in [TOPIC, SKIP_CODES, OFFSET_POINTER, HEADERS] {
            assert!(keys.contains(&k.to_string()), "{k} in {keys:?}");
        }
    }
}
