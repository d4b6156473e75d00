//! A Schema Registry client for the converters (and anything else that talks to a registry): Confluent's
//! keys for the registry's URL, credentials and subject naming, one blocking HTTP client created on first
//! use (converters run on task threads, which may block), and caches, so a steady stream of records makes
//! no registry call per record.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::converters::config_bool;
use crate::data::{DataError, SchemaAndValue, Value};

/// The Schema Registry's media type.
pub const MEDIA_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// How long one registry request may take.
const REGISTRY_TIMEOUT: Duration = Duration::from_secs(30);

/// How a record's subject is named (`key.subject.name.strategy` / `value.subject.name.strategy`).
// The variants are named after Confluent's classes (TopicNameStrategy, ...).
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubjectStrategy {
    /// `<topic>-key` / `<topic>-value` (the default).
    TopicName,
    /// The record's full name.
    RecordName,
    /// `<topic>-<record full name>`.
    TopicRecordName,
}

impl SubjectStrategy {
    fn parse(class: &str) -> Option<SubjectStrategy> {
        Some(match class.trim().rsplit('.').next().unwrap_or_default() {
            "TopicNameStrategy" => SubjectStrategy::TopicName,
            "RecordNameStrategy" => SubjectStrategy::RecordName,
            "TopicRecordNameStrategy" => SubjectStrategy::TopicRecordName,
            _ => return None,
        })
    }
}

/// The settings every registry converter shares.
#[derive(Clone, Debug)]
pub struct RegistryConfig {
    /// `schema.registry.url`: the first of its URLs is used.
    pub url: String,
    /// `auto.register.schemas` (default true): register a schema the subject lacks; else look it up.
    pub auto_register: bool,
    /// Whether this converts keys (`converter.type=key`).
    pub is_key: bool,
    /// The subject name strategy for this converter's role.
    pub strategy: SubjectStrategy,
    /// `basic.auth.user.info` with `basic.auth.credentials.source=USER_INFO`, or the URL's user and
    /// password with `URL` (the default).
    pub user_info: Option<(String, String)>,
    /// `schema.registry.ssl.*`: how the registry's certificate is checked and ours presented.
    pub tls: RegistryTls,
    /// `schemas.cache.config` (default 1000): how many IDs and schemas each cache keeps.
    pub cache_size: usize,
}

/// The `schema.registry.ssl.*` settings, PEM only (as every TLS setting of liteconnect). Files are read
/// when the first request is made, on the task's thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegistryTls {
    /// CAs to trust besides the bundled web PKI roots: (the key that named them, inline PEM or a file).
    pub truststore: Option<(String, PemSource)>,
    /// The client certificate chain and key: (the key that named them, inline PEM or a file).
    pub keystore: Option<(String, PemSource)>,
    /// `schema.registry.ssl.endpoint.identification.algorithm`: empty turns host name checks off.
    pub verify_hostname: bool,
}

/// Where PEM text comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum PemSource {
    /// The PEM text itself.
    Inline(String),
    /// A file holding it.
    File(String),
}

impl PemSource {
    fn read(&self, key: &str) -> Result<Vec<u8>, DataError> {
        match self {
            PemSource::Inline(text) => Ok(text.clone().into_bytes()),
            PemSource::File(path) => std::fs::read(path).map_err(|e| {
                DataError::new(crate::config::invalid_value(
                    key,
                    path,
                    format!("cannot read the file: {e}"),
                ))
            }),
        }
    }
}

/// The prefix of the registry's TLS keys.
const SSL: &str = "schema.registry.ssl.";

impl RegistryTls {
    /// Reads `schema.registry.ssl.*`.
    ///
    /// # Errors
    /// A store type other than PEM, naming the key.
    pub fn from_map(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let get = |k: &str| config.get(&format!("{SSL}{k}")).map(|v| v.trim());
        for store in ["truststore.type", "keystore.type"] {
            if let Some(t) = get(store).filter(|t| !t.eq_ignore_ascii_case("PEM")) {
                return Err(config_error(
                    &format!("{SSL}{store}"),
                    t,
                    "liteconnect reads PEM stores only (convert JKS or PKCS12 stores to PEM)",
                ));
            }
        }
        let source = |inline: &str, file: &str| match (get(inline), get(file)) {
            (Some(pem), _) if !pem.is_empty() => {
                Some((format!("{SSL}{inline}"), PemSource::Inline(pem.to_string())))
            }
            (_, Some(path)) if !path.is_empty() => {
                Some((format!("{SSL}{file}"), PemSource::File(path.to_string())))
            }
            _ => None,
        };
        let keystore = match (get("keystore.certificate.chain"), get("keystore.key")) {
            (Some(chain), Some(key)) if !chain.is_empty() && !key.is_empty() => Some((
                format!("{SSL}keystore.certificate.chain"),
                PemSource::Inline(format!("{chain}\n{key}\n")),
            )),
            _ => source("keystore.certificate.chain", "keystore.location"),
        };
        Ok(RegistryTls {
            truststore: source("truststore.certificates", "truststore.location"),
            keystore,
            verify_hostname: get("endpoint.identification.algorithm").is_none_or(|a| !a.is_empty()),
        })
    }

    fn client(&self) -> Result<reqwest::blocking::Client, DataError> {
        let tls_error = |key: &str, e: reqwest::Error| {
            DataError::new(crate::config::invalid_value(
                key,
                "[PEM]",
                format!("the PEM cannot be read: {e}"),
            ))
        };
        let mut builder = reqwest::blocking::Client::builder().timeout(REGISTRY_TIMEOUT);
        if let Some((key, source)) = &self.truststore {
            for cert in reqwest::Certificate::from_pem_bundle(&source.read(key)?)
                .map_err(|e| tls_error(key, e))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        if let Some((key, source)) = &self.keystore {
            let identity =
                reqwest::Identity::from_pem(&source.read(key)?).map_err(|e| tls_error(key, e))?;
            builder = builder.identity(identity);
        }
        if !self.verify_hostname {
            builder = builder.danger_accept_invalid_hostnames(true);
        }
        builder
            .build()
            .map_err(|e| DataError::new(format!("The Schema Registry client cannot be built: {e}")))
    }
}

/// A config error naming the key, in Kafka's words.
pub fn config_error(key: &str, value: &str, why: &str) -> DataError {
    DataError::new(crate::config::invalid_value(key, value, why))
}

/// The basic-auth credentials by `basic.auth.credentials.source`: `USER_INFO` takes
/// `basic.auth.user.info`, `URL` (Confluent's default) the user and password of the registry's URL
/// (`http://user:password@host:8081`, percent-decoded).
fn user_info(
    config: &crate::connectors::Props,
    in_url: Option<(String, String)>,
) -> Result<Option<(String, String)>, DataError> {
    let source = config
        .get("basic.auth.credentials.source")
        .map(|s| s.trim().to_ascii_uppercase())
        .unwrap_or_else(|| "URL".into());
    match (source.as_str(), config.get("basic.auth.user.info")) {
        ("USER_INFO", Some(info)) => {
            let (user, password) = info.split_once(':').ok_or_else(|| {
                config_error("basic.auth.user.info", "[hidden]", "Expected user:password")
            })?;
            Ok(Some((user.to_string(), password.to_string())))
        }
        ("USER_INFO", None) => Ok(None),
        ("URL", _) => Ok(in_url),
        (other, _) => Err(config_error(
            "basic.auth.credentials.source",
            other,
            "Only URL and USER_INFO are supported",
        )),
    }
}

/// The registry's URL without its user and password (so that no message shows them), and those.
fn split_credentials(url: &str) -> (String, Option<(String, String)>) {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        return (url.to_string(), None);
    };
    if parsed.username().is_empty() && parsed.password().is_none() {
        return (url.to_string(), None);
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let credentials = (
        decode(parsed.username()),
        decode(parsed.password().unwrap_or("")),
    );
    // Both succeed on a URL that has a user or password (it has a host).
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    let bare = parsed.as_str().trim_end_matches('/').to_string();
    (bare, Some(credentials))
}

impl RegistryConfig {
    /// Reads Confluent's keys (prefix already stripped).
    ///
    /// # Errors
    /// A message naming the key: `schema.registry.url` missing, a strategy or a credentials source
    /// this client does not have.
    pub fn from_map(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let url = config
            .get("schema.registry.url")
            .and_then(|u| u.split(',').map(str::trim).find(|u| !u.is_empty()))
            .ok_or_else(|| {
                DataError::new(
                    "Missing required configuration \"schema.registry.url\" which has no default value.",
                )
            })?
            .trim_end_matches('/')
            .to_string();
        let (url, in_url) = split_credentials(&url);
        let is_key = config
            .get("converter.type")
            .is_some_and(|t| t.trim() == "key");
        let strategy_key = if is_key {
            "key.subject.name.strategy"
        } else {
            "value.subject.name.strategy"
        };
        let strategy = match config.get(strategy_key) {
            None => SubjectStrategy::TopicName,
            Some(class) => SubjectStrategy::parse(class).ok_or_else(|| {
                config_error(
                    strategy_key,
                    class,
                    "Not one of TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy",
                )
            })?,
        };
        let cache_size = match config.get("schemas.cache.config") {
            None => 1000,
            Some(n) => n
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    config_error("schemas.cache.config", n, "Expected a positive number")
                })?,
        };
        Ok(RegistryConfig {
            url,
            auto_register: config_bool(config, "auto.register.schemas", true)?,
            is_key,
            strategy,
            user_info: user_info(config, in_url)?,
            tls: RegistryTls::from_map(config)?,
            cache_size,
        })
    }
}

/// A schema as the registry serves it by ID.
#[derive(Clone, Debug, PartialEq)]
pub struct FetchedSchema {
    /// `AVRO`, `PROTOBUF` or `JSON`.
    pub schema_type: String,
    /// The schema's text.
    pub schema: String,
    /// Its references (`{"name", "subject", "version"}`), as the registry answered them.
    pub references: Vec<Json>,
}

/// A registry client with its caches.
#[derive(Debug)]
pub struct RegistryClient {
    /// The settings.
    pub config: RegistryConfig,
    http: OnceLock<Result<reqwest::blocking::Client, DataError>>,
    /// (subject, schema type, schema text) → ID.
    ids: Mutex<HashMap<(String, String, String), u32>>,
    /// ID → the schema.
    schemas: Mutex<HashMap<u32, Arc<FetchedSchema>>>,
}

impl RegistryClient {
    /// A client for these settings; nothing is contacted until the first request.
    pub fn new(config: RegistryConfig) -> Self {
        RegistryClient {
            config,
            http: OnceLock::new(),
            ids: Mutex::new(HashMap::new()),
            schemas: Mutex::new(HashMap::new()),
        }
    }

    fn http(&self) -> Result<&reqwest::blocking::Client, DataError> {
        self.http
            .get_or_init(|| self.config.tls.client())
            .as_ref()
            .map_err(Clone::clone)
    }

    /// One registry request: the HTTP status and the body's text, whatever the status.
    ///
    /// # Errors
    /// The registry cannot be reached, or its answer cannot be read.
    pub fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<(u16, String), DataError> {
        let url = format!("{}{path}", self.config.url);
        let mut req = self
            .http()?
            .request(method, &url)
            .header("Accept", MEDIA_TYPE);
        if let Some((user, password)) = &self.config.user_info {
            req = req.basic_auth(user, Some(password));
        }
        if let Some(b) = body {
            req = req.header("Content-Type", MEDIA_TYPE).body(b.to_string());
        }
        let unreachable = |e: reqwest::Error| {
            DataError::new(format!(
                "The Schema Registry at {url} cannot be reached: {e}"
            ))
        };
        let answer = req.send().map_err(unreachable)?;
        let status = answer.status().as_u16();
        Ok((status, answer.text().map_err(unreachable)?))
    }

    /// One registry request; its JSON answer, or an error naming the registry and what it said.
    ///
    /// # Errors
    /// The registry cannot be reached, answers other than 200, or answers what is not JSON.
    pub fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<Json, DataError> {
        let (status, text) = self.call(method, path, body)?;
        let url = format!("{}{path}", self.config.url);
        if status != 200 {
            return Err(DataError::new(format!(
                "The Schema Registry at {url} answered {status}: {text}"
            )));
        }
        serde_json::from_str(&text).map_err(|e| {
            DataError::new(format!(
                "The Schema Registry at {url} answered what is not JSON: {e}"
            ))
        })
    }

    /// The subject of a record on `topic` by the configured strategy; `record` is the full name of its
    /// record (message) type, when it has one.
    ///
    /// # Errors
    /// A record-name strategy for a schema that names no record.
    pub fn subject(&self, topic: &str, record: Option<&str>) -> Result<String, DataError> {
        let role = if self.config.is_key { "key" } else { "value" };
        let record = || {
            record.ok_or_else(|| {
                DataError::new(
                    "RecordNameStrategy and TopicRecordNameStrategy need a record (struct) schema",
                )
            })
        };
        Ok(match self.config.strategy {
            SubjectStrategy::TopicName => format!("{topic}-{role}"),
            SubjectStrategy::RecordName => record()?.to_string(),
            SubjectStrategy::TopicRecordName => format!("{topic}-{}", record()?),
        })
    }

    /// The ID of a schema under `subject`: registered when `auto.register.schemas` (the default), else
    /// looked up. Cached.
    ///
    /// # Errors
    /// The registry's refusal or absence.
    pub fn id_for(&self, subject: &str, schema_type: &str, text: &str) -> Result<u32, DataError> {
        let key = (
            subject.to_string(),
            schema_type.to_string(),
            text.to_string(),
        );
        if let Some(id) = cached(&self.ids, &key) {
            return Ok(id);
        }
        let encoded =
            percent_encoding::utf8_percent_encode(subject, percent_encoding::NON_ALPHANUMERIC);
        let mut body = json!({ "schema": text });
        if schema_type != "AVRO" {
            body["schemaType"] = json!(schema_type);
        }
        let path = if self.config.auto_register {
            format!("/subjects/{encoded}/versions")
        } else {
            format!("/subjects/{encoded}")
        };
        let answer = self.request(reqwest::Method::POST, &path, Some(&body))?;
        let id = id_of(&answer)?;
        bounded_insert(&self.ids, key, id, self.config.cache_size);
        Ok(id)
    }

    /// The schema with this ID. Cached.
    ///
    /// # Errors
    /// The registry's refusal or absence, or an answer without a schema.
    pub fn schema_by_id(&self, id: u32) -> Result<Arc<FetchedSchema>, DataError> {
        if let Some(s) = cached(&self.schemas, &id) {
            return Ok(s);
        }
        let answer = self.request(reqwest::Method::GET, &format!("/schemas/ids/{id}"), None)?;
        let schema = answer["schema"].as_str().ok_or_else(|| {
            DataError::new(format!(
                "The Schema Registry answered no schema for ID {id}"
            ))
        })?;
        let fetched = Arc::new(FetchedSchema {
            schema_type: answer["schemaType"].as_str().unwrap_or("AVRO").to_string(),
            schema: schema.to_string(),
            references: answer["references"].as_array().cloned().unwrap_or_default(),
        });
        bounded_insert(&self.schemas, id, fetched.clone(), self.config.cache_size);
        Ok(fetched)
    }
}

impl RegistryClient {
    /// The latest version of `subject`: its ID and schema (not cached: the caller keeps what it needs).
    ///
    /// # Errors
    /// The registry's refusal (no such subject) or absence.
    pub fn latest_version(&self, subject: &str) -> Result<(u32, FetchedSchema), DataError> {
        let answer = self.subject_version(subject, "latest")?;
        Ok((id_of(&answer)?, fetched_of(&answer)))
    }

    /// `use.latest.version`: the subject's latest version as a converter keeps it, from `cache`, else
    /// fetched, made by `make` (from its ID, its schema and a name for it in messages) and cached.
    ///
    /// # Errors
    /// The registry's refusal or absence, or `make`'s.
    pub fn latest_cached<V: Clone>(
        &self,
        cache: &Mutex<HashMap<String, V>>,
        subject: &str,
        make: impl FnOnce(u32, &FetchedSchema, &str) -> Result<V, DataError>,
    ) -> Result<V, DataError> {
        if let Some(v) = cached(cache, &subject.to_string()) {
            return Ok(v);
        }
        let (id, fetched) = self.latest_version(subject)?;
        let v = make(
            id,
            &fetched,
            &format!("ID {id} (subject {subject}'s latest)"),
        )?;
        bounded_insert(
            cache,
            subject.to_string(),
            v.clone(),
            self.config.cache_size,
        );
        Ok(v)
    }

    /// `GET /subjects/{subject}/versions/{version}`.
    fn subject_version(&self, subject: &str, version: &str) -> Result<Json, DataError> {
        let encoded =
            percent_encoding::utf8_percent_encode(subject, percent_encoding::NON_ALPHANUMERIC);
        self.request(
            reqwest::Method::GET,
            &format!("/subjects/{encoded}/versions/{version}"),
            None,
        )
    }
}

/// The `id` of a registry's answer.
fn id_of(answer: &Json) -> Result<u32, DataError> {
    answer["id"]
        .as_u64()
        .and_then(|id| u32::try_from(id).ok())
        .ok_or_else(|| DataError::new(format!("The Schema Registry answered no ID: {answer}")))
}

fn fetched_of(answer: &Json) -> FetchedSchema {
    FetchedSchema {
        schema_type: answer["schemaType"].as_str().unwrap_or("AVRO").to_string(),
        schema: answer["schema"].as_str().unwrap_or_default().to_string(),
        references: answer["references"].as_array().cloned().unwrap_or_default(),
    }
}

/// How deep references may nest when read.
const MAX_REFERENCE_DEPTH: usize = 32;

impl RegistryClient {
    /// The schemas `references` name (`{"name", "subject", "version"}`), with theirs, each after the ones
    /// it references (the order to parse them in), each once.
    ///
    /// # Errors
    /// A reference the registry does not serve, or references nested deeper than 32.
    pub fn referenced(
        &self,
        references: &[Json],
    ) -> Result<Vec<(String, FetchedSchema)>, DataError> {
        let mut out = Vec::new();
        self.collect_references(references, 0, &mut out)?;
        Ok(out)
    }

    fn collect_references(
        &self,
        references: &[Json],
        depth: usize,
        out: &mut Vec<(String, FetchedSchema)>,
    ) -> Result<(), DataError> {
        if depth > MAX_REFERENCE_DEPTH {
            return Err(DataError::new("Schema references nest too deep"));
        }
        for r in references {
            let (Some(name), Some(subject), Some(version)) = (
                r["name"].as_str(),
                r["subject"].as_str(),
                r["version"].as_i64(),
            ) else {
                return Err(DataError::new(format!(
                    "A schema reference is incomplete: {r}"
                )));
            };
            if out.iter().any(|(n, _)| n == name) {
                continue;
            }
            let answer = self.subject_version(subject, &version.to_string())?;
            let fetched = fetched_of(&answer);
            self.collect_references(&fetched.references, depth + 1, out)?;
            out.push((name.to_string(), fetched));
        }
        Ok(())
    }
}

/// A cached value, cloned out of the cache.
pub fn cached<K: std::hash::Hash + Eq, V: Clone>(
    cache: &Mutex<HashMap<K, V>>,
    key: &K,
) -> Option<V> {
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
        .cloned()
}

/// Inserts into a cache of at most `bound` entries: a full cache is emptied first (it refills with what is
/// in use).
pub fn bounded_insert<K: std::hash::Hash + Eq, V>(
    cache: &Mutex<HashMap<K, V>>,
    key: K,
    value: V,
    bound: usize,
) {
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= bound && !map.contains_key(&key) {
        map.clear();
    }
    map.insert(key, value);
}

/// `latest.compatibility.strict`: the refusal when the subject's latest schema (ID `id`) cannot read
/// the record's own, `why` naming the differences (none: it can).
///
/// # Errors
/// The refusal, naming the subject, the ID and the differences.
pub fn strict_check(subject: &str, id: u32, why: &[String]) -> Result<(), DataError> {
    if why.is_empty() {
        return Ok(());
    }
    Err(DataError::new(format!(
        "The latest schema of subject {subject} (ID {id}) cannot read the record's schema (latest.compatibility.strict): {}",
        why.join(", ")
    )))
}

/// Confluent's wire format: magic byte 0, then the schema's ID as 4 big-endian bytes; the payload follows.
pub fn frame(id: u32, out: &mut Vec<u8>) {
    out.push(0);
    out.extend_from_slice(&id.to_be_bytes());
}

/// A registry converter's `to_connect`: null for no data, else the schema ID and payload of a framed
/// record given to `decode`, its failure (and a record that is not framed) told in Confluent's words,
/// naming the topic, the format and the ID.
///
/// # Errors
/// `Failed to deserialize data for topic T to FORMAT: …`.
pub fn read_framed(
    topic: &str,
    data: Option<&[u8]>,
    format: &str,
    decode: impl FnOnce(u32, &[u8]) -> Result<SchemaAndValue, DataError>,
) -> Result<SchemaAndValue, DataError> {
    let Some(data) = data else {
        return Ok(SchemaAndValue::new(None, Value::Null));
    };
    let fail = |why: String| {
        DataError::new(format!(
            "Failed to deserialize data for topic {topic} to {format}: {why}"
        ))
    };
    let (id, payload) = unframe(data).map_err(|e| fail(e.0))?;
    decode(id, payload).map_err(|e| fail(format!("schema ID {id}: {e}")))
}

/// Splits a framed record into its schema ID and payload.
///
/// # Errors
/// Confluent's `Unknown magic byte!` for bytes that are not framed.
pub fn unframe(data: &[u8]) -> Result<(u32, &[u8]), DataError> {
    match data {
        [0, a, b, c, d, rest @ ..] => Ok((u32::from_be_bytes([*a, *b, *c, *d]), rest)),
        _ => Err(DataError::new("Unknown magic byte!")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(role: &str, strategy: Option<&str>) -> RegistryClient {
        let mut c = crate::connectors::Props::new();
        c.insert(
            "schema.registry.url".into(),
            "http://a:8081/,http://b:8081".into(),
        );
        c.insert("converter.type".into(), role.into());
        if let Some(s) = strategy {
            c.insert(format!("{role}.subject.name.strategy"), s.into());
        }
        RegistryClient::new(RegistryConfig::from_map(&c).unwrap())
    }

    #[test]
    fn subjects_follow_the_role_and_the_strategy() {
        let prefix = "io.confluent.kafka.serializers.subject.";
        assert_eq!(client("value", None).subject("t", None).unwrap(), "t-value");
        assert_eq!(
            client("key", None).subject("t", Some("ex.R")).unwrap(),
            "t-key"
        );
        let record = client("value", Some(&format!("{prefix}RecordNameStrategy")));
        assert_eq!(record.subject("t", Some("ex.R")).unwrap(), "ex.R");
        assert!(
            record.subject("t", None).is_err(),
            "a string schema has no record name"
        );
        let topic_record = client("key", Some(&format!("{prefix}TopicRecordNameStrategy")));
        assert_eq!(topic_record.subject("t", Some("ex.R")).unwrap(), "t-ex.R");
        assert_eq!(client("value", None).config.url, "http://a:8081");
    }

    #[test]
    fn credentials_come_from_the_url_by_default_or_from_user_info_and_leave_the_url() {
        let config = |pairs: &[(&str, &str)]| {
            let mut c = crate::connectors::Props::new();
            for (k, v) in pairs {
                c.insert((*k).into(), (*v).into());
            }
            RegistryConfig::from_map(&c).unwrap()
        };
        let url = "http://alice:p%40ss@reg:8081/";
        let by_url = config(&[("schema.registry.url", url)]);
        assert_eq!(by_url.url, "http://reg:8081");
        assert_eq!(by_url.user_info, Some(("alice".into(), "p@ss".into())));
        let by_user_info = config(&[
            ("schema.registry.url", url),
            ("basic.auth.credentials.source", "USER_INFO"),
            ("basic.auth.user.info", "bob:x:y"),
        ]);
        assert_eq!(by_user_info.url, "http://reg:8081");
        assert_eq!(by_user_info.user_info, Some(("bob".into(), "x:y".into())));
        let none = config(&[("schema.registry.url", "https://reg/prefix")]);
        assert_eq!(
            (none.url.as_str(), none.user_info),
            ("https://reg/prefix", None)
        );
    }

    #[test]
    fn framing_round_trips_and_refuses_unframed_bytes() {
        let mut out = Vec::new();
        frame(0x0102_0304, &mut out);
        out.extend_from_slice(b"body");
        assert_eq!(unframe(&out).unwrap(), (0x0102_0304, &b"body"[..]));
        for data in [&b"{}"[..], &[0, 0, 0][..], &[1, 0, 0, 0, 1, 2][..]] {
            assert_eq!(unframe(data).unwrap_err().0, "Unknown magic byte!");
        }
    }
}
