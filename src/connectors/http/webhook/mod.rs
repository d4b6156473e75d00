//! `liteconnect.http.WebhookSourceConnector`: a durable webhook. It listens on its own address; a request's
//! records go through `poll` into the local log, and the request is answered 200 only after `commit` says
//! they are stored, so a client that got 200 knows its data survives `kill -9`.

pub mod body;
pub mod server;

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};

use self::server::{Credentials, Endpoint, Outcome, Submission, TaskState};
use super::super::{ConnectorPlugin, Props, SourceTask, SourceTaskContext, StoredAt, TaskError};
use crate::config::def::{
    key, ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, ParsedConfig, Validator,
};
use crate::connectors::plugin_identity;
use crate::model::now_ms;
use crate::record::SourceRecord;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const LISTENER: &str = "listener";
const PATH: &str = "path";
const TOPIC: &str = "topic";
const TOPIC_HEADER: &str = "topic.header";
const KEY_HEADER: &str = "key.header";
const KEY_POINTER: &str = "key.pointer";
const BEARER_TOKEN: &str = "auth.bearer.token";
const BASIC_USER: &str = "auth.basic.user";
const BASIC_PASSWORD: &str = "auth.basic.password";
const MAX_BYTES: &str = "request.max.bytes";
const TIMEOUT_MS: &str = "request.timeout.ms";
const RETRY_AFTER: &str = "retry.after.seconds";
/// The listener's TLS settings are the connector's own `ssl.*` keys.
const TLS_PREFIX: &str = "listener.https.";
/// At most this many records go into one poll (several requests' worth).
const MAX_POLL_RECORDS: usize = 10_000;

/// Parses a task config with `def`; the error names every key that is wrong.
pub(crate) fn parse_config(def: &ConfigDef, config: &Props) -> Result<ParsedConfig, TaskError> {
    def.parse(config)
        .map_err(|errors| TaskError::fatal(errors.join("; ")))
}

/// `liteconnect.http.WebhookSourceConnector`.
#[derive(Debug)]
pub struct WebhookSource;

impl ConnectorPlugin for WebhookSource {
    plugin_identity!(
        "liteconnect.http.WebhookSourceConnector",
        Source,
        VERSION,
        "liteconnect.http.WebhookSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        use ConfigType::{Int, Long, Password, String as Text};
        use Importance::{High, Low, Medium};
        ConfigDef::new()
            .define(
                ConfigKey::new(LISTENER, Text, DefaultValue::Required, High, "The address the webhook listens on, as http://host:port or https://host:port (https reads the ssl.keystore.* keys, and ssl.client.auth=required with ssl.truststore.* asks for client certificates)")
                    .validator(Validator::NonEmptyString),
            )
            .define(key(PATH, Text, Some("/"), High, "The path records are posted to"))
            .define(key(TOPIC, Text, None, High, "The topic records go to (the default when topic.header is set and a request lacks it)"))
            .define(key(TOPIC_HEADER, Text, None, Medium, "A request header naming the topic"))
            .define(key(KEY_HEADER, Text, None, Medium, "A request header whose value is the key of the request's records"))
            .define(key(KEY_POINTER, Text, None, Medium, "A JSON pointer to the key inside each JSON object"))
            .define(key(BEARER_TOKEN, Password, None, High, "When set, requests must carry Authorization: Bearer with this token"))
            .define(key(BASIC_USER, Text, None, High, "When set, requests may authenticate with HTTP basic credentials of this user"))
            .define(key(BASIC_PASSWORD, Password, None, High, "The password of auth.basic.user"))
            .define(key(MAX_BYTES, Int, Some("1048576"), Medium, "The largest request body accepted; a larger one is answered 413 and nothing of it is stored").validator(Validator::AtLeast(1.0)))
            .define(key(TIMEOUT_MS, Long, Some("30000"), Medium, "How long a request waits for its records to be stored before it is answered 503").validator(Validator::AtLeast(1.0)))
            .define(key(RETRY_AFTER, Int, Some("1"), Low, "The Retry-After seconds sent with a 503").validator(Validator::AtLeast(0.0)))
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let get = |k: &str| {
            config
                .get(k)
                .cloned()
                .flatten()
                .filter(|v| !v.trim().is_empty())
        };
        let mut errors = Vec::new();
        if let Some(listener) = get(LISTENER) {
            if let Err(e) = split_listener(&listener) {
                errors.push((LISTENER.to_string(), e));
            }
        }
        if get(TOPIC).is_none() && get(TOPIC_HEADER).is_none() {
            errors.push((
                TOPIC.to_string(),
                "Either topic or topic.header must be set".to_string(),
            ));
        }
        if get(KEY_HEADER).is_some() && get(KEY_POINTER).is_some() {
            errors.push((
                KEY_POINTER.to_string(),
                "Set key.header or key.pointer, not both".to_string(),
            ));
        }
        if let Some(pointer) = get(KEY_POINTER) {
            if !pointer.starts_with('/') {
                errors.push((
                    KEY_POINTER.to_string(),
                    format!("{pointer} is not a JSON pointer (it must start with /)"),
                ));
            }
        }
        if get(BASIC_USER).is_some() != get(BASIC_PASSWORD).is_some() {
            errors.push((
                BASIC_PASSWORD.to_string(),
                "auth.basic.user and auth.basic.password go together".to_string(),
            ));
        }
        errors
    }
    fn listens_on(&self, config: &Props) -> Option<String> {
        let listener = config.get(LISTENER)?;
        split_listener(listener)
            .ok()
            .map(|(_, hostport)| hostport.to_string())
    }
    fn task_configs(&self, config: &Props, _max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        // One listener, one task.
        Ok(vec![config.clone()])
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::new(WebhookTask::default()))
    }
}

/// `http://host:port` or `https://host:port` into (is https, address).
/// `http://host:port` or `https://host:port` into (is https, `host:port`), without resolving the host.
fn split_listener(listener: &str) -> Result<(bool, &str), String> {
    let (scheme, rest) = listener
        .split_once("://")
        .ok_or_else(|| format!("{listener} is not an address of the form http://host:port"))?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        other => return Err(format!("Unsupported scheme {other}: use http or https")),
    };
    let hostport = rest.trim_end_matches('/');
    match hostport.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok((https, hostport))
        }
        _ => Err(format!("{hostport} is not of the form host:port")),
    }
}

/// `http://host:port` or `https://host:port` into (is https, address).
fn parse_listener(listener: &str) -> Result<(bool, SocketAddr), String> {
    let (https, hostport) = split_listener(listener)?;
    let addr = hostport
        .to_socket_addrs()
        .map_err(|e| format!("Cannot resolve {hostport}: {e}"))?
        .next()
        .ok_or_else(|| format!("{hostport} resolves to no address"))?;
    Ok((https, addr))
}

/// The running webhook: its server on a runtime of its own, and the requests whose records the last poll
/// returned.
#[derive(Default)]
pub struct WebhookTask {
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<watch::Sender<bool>>,
    /// What the request handlers share.
    endpoint: Option<Arc<Endpoint>>,
    /// Says when the server has stopped, having answered the requests it was handling.
    served: Option<mpsc::Receiver<()>>,
    queue: Option<mpsc::Receiver<Submission>>,
    /// Requests whose records the last poll returned, with how many records each, answered by
    /// `commit_stored`.
    pending: Vec<(oneshot::Sender<Outcome>, usize)>,
    state: Arc<TaskState>,
}

impl WebhookTask {
    fn endpoint(
        parsed: &ParsedConfig,
        queue: mpsc::Sender<Submission>,
        task: Arc<TaskState>,
    ) -> Endpoint {
        let text = |k: &str| parsed.get_string(k).filter(|v| !v.is_empty());
        let basic = text(BASIC_USER).map(|u| (u, text(BASIC_PASSWORD).unwrap_or_default()));
        Endpoint {
            path: text(PATH).unwrap_or_else(|| "/".into()),
            topic: text(TOPIC),
            topic_header: text(TOPIC_HEADER),
            key_header: text(KEY_HEADER),
            key_pointer: text(KEY_POINTER),
            credentials: Credentials {
                bearer: text(BEARER_TOKEN),
                basic,
            },
            max_bytes: parsed.get_int(MAX_BYTES).unwrap_or(1 << 20).max(1) as u64,
            timeout: Duration::from_millis(
                parsed.get_long(TIMEOUT_MS).unwrap_or(30_000).max(1) as u64
            ),
            retry_after: parsed.get_int(RETRY_AFTER).unwrap_or(1).max(0) as u32,
            task,
            queue,
            waiting: Default::default(),
        }
    }

    /// Answers every request waiting on this task with `outcome`.
    fn answer_all(&mut self, outcome: Outcome) {
        for (reply, _) in self.pending.drain(..) {
            let _ = reply.send(outcome.clone());
        }
        self.state.in_hand.store(false, Ordering::SeqCst);
    }
}

impl SourceTask for WebhookTask {
    fn start(&mut self, config: &Props, _context: &dyn SourceTaskContext) -> Result<(), TaskError> {
        let parsed = parse_config(&WebhookSource.config_def(), config)?;
        let listener = parsed.get_string(LISTENER).unwrap_or_default();
        let (https, addr) = parse_listener(&listener)
            .map_err(|e| TaskError::fatal(crate::config::invalid_value(LISTENER, &listener, e)))?;
        let tls = if https {
            let server = crate::security::tls::server_config(config, TLS_PREFIX).map_err(|e| {
                TaskError::fatal(format!("The webhook's TLS settings are wrong: {e}"))
            })?;
            Some(tokio_rustls::TlsAcceptor::from(server))
        } else {
            None
        };
        let socket = std::net::TcpListener::bind(addr)
            .and_then(|s| s.set_nonblocking(true).map(|_| s))
            .map_err(|e| {
                TaskError::Retriable(format!("The webhook cannot listen on {addr}: {e}"))
            })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("liteconnect-webhook")
            .enable_all()
            .build()
            .map_err(|e| TaskError::fatal(format!("Cannot start the webhook's runtime: {e}")))?;
        let (sender, receiver) = mpsc::channel();
        self.state.last_poll_ms.store(now_ms(), Ordering::SeqCst);
        let endpoint = Arc::new(Self::endpoint(&parsed, sender, self.state.clone()));
        let (stop, stopped) = watch::channel(false);
        let listener = {
            let _guard = runtime.enter();
            tokio::net::TcpListener::from_std(socket).map_err(|e| {
                TaskError::fatal(format!("The webhook cannot listen on {addr}: {e}"))
            })?
        };
        let bound = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        tracing::info!(scheme = if https { "https" } else { "http" }, address = %bound, path = %endpoint.path, "Webhook source listening.");
        self.endpoint = Some(endpoint.clone());
        let (served, finished) = mpsc::channel();
        runtime.spawn(async move {
            crate::security::server::serve(listener, tls, server::routes(endpoint), stopped).await;
            let _ = served.send(());
        });
        self.served = Some(finished);
        self.runtime = Some(runtime);
        self.stop = Some(stop);
        self.queue = Some(receiver);
        Ok(())
    }

    fn poll(&mut self, _context: &dyn SourceTaskContext) -> Result<Vec<SourceRecord>, TaskError> {
        let Some(queue) = &self.queue else {
            return Err(TaskError::fatal("The webhook is not started"));
        };
        self.state.last_poll_ms.store(now_ms(), Ordering::SeqCst);
        let mut records = Vec::new();
        let mut next = queue.recv_timeout(Duration::from_millis(200)).ok();
        while let Some(submission) = next {
            // A request that gave up waiting was answered 503: its records are not stored.
            if !submission.reply.is_closed() {
                self.pending
                    .push((submission.reply, submission.records.len()));
                records.extend(submission.records);
            }
            if records.len() >= MAX_POLL_RECORDS {
                break;
            }
            next = queue.try_recv().ok();
        }
        self.state
            .in_hand
            .store(!records.is_empty(), Ordering::SeqCst);
        self.state.last_poll_ms.store(now_ms(), Ordering::SeqCst);
        Ok(records)
    }

    fn commit_stored(&mut self, stored: &[Option<StoredAt>]) -> Result<(), TaskError> {
        let mut rest = stored;
        for (reply, count) in self.pending.drain(..) {
            let (mine, others) = rest.split_at(count.min(rest.len()));
            rest = others;
            let _ = reply.send(Outcome::Stored(mine.to_vec()));
        }
        self.state.in_hand.store(false, Ordering::SeqCst);
        Ok(())
    }

    fn log_full(&mut self, full: bool) {
        if full {
            // The requests whose records the runtime now holds are answered at once rather than after
            // request.timeout.ms; their records are stored once there is room.
            for (reply, _) in self.pending.drain(..) {
                let _ = reply.send(Outcome::Held);
            }
        }
        self.state.log_full.store(full, Ordering::SeqCst);
    }

    fn stop(&mut self) {
        self.answer_all(Outcome::Stopped);
        if let Some(queue) = self.queue.take() {
            while let Ok(submission) = queue.try_recv() {
                let _ = submission.reply.send(Outcome::Stopped);
            }
        }
        // Requests arriving from here on find the queue closed and are answered 503 at once. The server's
        // shutdown may close a connection whose request is still being answered, so the answers go out
        // first.
        if let Some(endpoint) = self.endpoint.take() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while endpoint.waiting.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(served) = self.served.take() {
            let _ = served.recv_timeout(Duration::from_secs(5));
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let config = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect();
        WebhookSource.validate(&config)
    }

    #[test]
    fn validation_names_the_wrong_key() {
        let errors = validate(&[
            (LISTENER, "ftp://x:1"),
            (KEY_HEADER, "k"),
            (KEY_POINTER, "id"),
        ]);
        let keys: Vec<&str> = errors.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&LISTENER), "{errors:?}");
        assert!(keys.contains(&TOPIC), "{errors:?}");
        assert!(keys.contains(&KEY_POINTER), "{errors:?}");
        assert!(validate(&[(LISTENER, "http://127.0.0.1:0"), (TOPIC, "t")]).is_empty());
        assert!(validate(&[(LISTENER, "https://[::1]:8090/"), (TOPIC, "t")]).is_empty());
        let errors = validate(&[(LISTENER, "http://host-without-port"), (TOPIC, "t")]);
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}
