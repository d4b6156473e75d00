//! `io.confluent.connect.avro.AvroConverter`: Connect data as Avro in Confluent's wire format (magic byte
//! 0, the schema's 4-byte big-endian ID in a Schema Registry, then the Avro body), with Confluent's keys.
//! Any Confluent-compatible registry serves (the embedded one or a remote one). IDs and schemas are
//! cached, so a steady stream of records makes no registry call per record. The registry is reached with
//! a blocking HTTP client, created on first use: converters run on task threads, which may block.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::binary::{encode, Reader};
use super::connect::{to_avro, to_connect};
use super::schema::{AvroSchema, Node};
use crate::converters::{config_bool, Converter};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};

/// Confluent's class name.
pub const CLASS: &str = "io.confluent.connect.avro.AvroConverter";

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

/// The converter's settings.
#[derive(Clone, Debug)]
pub struct AvroConverterConfig {
    /// `schema.registry.url`: the first of its URLs is used.
    pub url: String,
    /// `auto.register.schemas` (default true): register a schema the subject lacks; else look it up.
    pub auto_register: bool,
    /// Whether this converts keys (`converter.type=key`).
    pub is_key: bool,
    /// The subject name strategy for this converter's role.
    pub strategy: SubjectStrategy,
    /// `basic.auth.user.info` with `basic.auth.credentials.source=USER_INFO`.
    pub user_info: Option<(String, String)>,
}

fn config_error(key: &str, value: &str, why: &str) -> DataError {
    DataError::new(crate::config::invalid_value(key, value, why))
}

impl AvroConverterConfig {
    /// Reads Confluent's keys (prefix already stripped).
    ///
    /// # Errors
    /// A message naming the key: `schema.registry.url` missing, a strategy or a credentials source
    /// this converter does not have, a key it does not support yet.
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
        let source = config
            .get("basic.auth.credentials.source")
            .map(|s| s.trim().to_ascii_uppercase())
            .unwrap_or_else(|| "URL".into());
        let user_info = match (source.as_str(), config.get("basic.auth.user.info")) {
            ("USER_INFO", Some(info)) => {
                let (user, password) = info.split_once(':').ok_or_else(|| {
                    config_error("basic.auth.user.info", "[hidden]", "Expected user:password")
                })?;
                Some((user.to_string(), password.to_string()))
            }
            ("USER_INFO" | "URL", _) => None,
            (other, _) => {
                return Err(config_error(
                    "basic.auth.credentials.source",
                    other,
                    "Only URL and USER_INFO are supported",
                ))
            }
        };
        refuse_unsupported(config)?;
        Ok(AvroConverterConfig {
            url,
            auto_register: config_bool(config, "auto.register.schemas", true)?,
            is_key,
            strategy,
            user_info,
        })
    }
}

/// Refuses the settings whose behaviour this converter does not have yet, naming the key, rather than
/// behaving otherwise than the config says.
fn refuse_unsupported(config: &crate::connectors::Props) -> Result<(), DataError> {
    let unsupported = |key: &str, value: &str| {
        config_error(
            key,
            value,
            "This AvroConverter does not support this setting yet",
        )
    };
    for (key, differs) in [
        (
            "use.latest.version",
            config_bool(config, "use.latest.version", false)?,
        ),
        (
            "connect.meta.data",
            !config_bool(config, "connect.meta.data", true)?,
        ),
        (
            "enhanced.avro.schema.support",
            config_bool(config, "enhanced.avro.schema.support", false)?,
        ),
        (
            "scrub.invalid.names",
            config_bool(config, "scrub.invalid.names", false)?,
        ),
    ] {
        if differs {
            return Err(unsupported(key, config.get(key).map_or("", String::as_str)));
        }
    }
    if let Some(key) = config
        .keys()
        .find(|k| k.starts_with("schema.registry.ssl."))
    {
        return Err(unsupported(key, "[hidden]"));
    }
    Ok(())
}

/// A schema read by ID: the writer's Avro schema and the Connect schema made of it.
type ReadSchema = Arc<(AvroSchema, SchemaRef)>;

/// Confluent's AvroConverter.
#[derive(Debug)]
pub struct AvroConverter {
    config: AvroConverterConfig,
    http: OnceLock<reqwest::blocking::Client>,
    /// The last Connect schema written, with its Avro text and the subject part its record names.
    last: Mutex<Option<(Schema, String, Option<String>)>>,
    /// (subject, Avro text) → ID.
    ids: Mutex<HashMap<(String, String), u32>>,
    /// ID → the schema read.
    schemas: Mutex<HashMap<u32, ReadSchema>>,
}

impl AvroConverter {
    /// A converter from its config keys (prefix already stripped).
    ///
    /// # Errors
    /// See [`AvroConverterConfig::from_map`].
    pub fn from_config(config: &crate::connectors::Props) -> Result<Self, DataError> {
        Ok(AvroConverter {
            config: AvroConverterConfig::from_map(config)?,
            http: OnceLock::new(),
            last: Mutex::new(None),
            ids: Mutex::new(HashMap::new()),
            schemas: Mutex::new(HashMap::new()),
        })
    }

    fn http(&self) -> &reqwest::blocking::Client {
        self.http.get_or_init(|| {
            reqwest::blocking::Client::builder()
                .timeout(REGISTRY_TIMEOUT)
                .build()
                .unwrap_or_else(|_| reqwest::blocking::Client::new())
        })
    }

    /// One registry request; its JSON answer, or an error naming the registry and what it said.
    fn registry(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<Json, DataError> {
        let url = format!("{}{path}", self.config.url);
        let mut req = self
            .http()
            .request(method, &url)
            .header("Accept", super::MEDIA_TYPE);
        if let Some((user, password)) = &self.config.user_info {
            req = req.basic_auth(user, Some(password));
        }
        if let Some(b) = body {
            req = req
                .header("Content-Type", super::MEDIA_TYPE)
                .body(b.to_string());
        }
        let answer = req.send().map_err(|e| {
            DataError::new(format!(
                "The Schema Registry at {url} cannot be reached: {e}"
            ))
        })?;
        let status = answer.status().as_u16();
        let text = answer.text().unwrap_or_default();
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

    fn subject(&self, topic: &str, record: Option<&str>) -> Result<String, DataError> {
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

    /// The Avro text of a Connect schema and its record's full name, from the last one written when
    /// the schema is the same.
    fn avro_text(&self, schema: &Schema) -> Result<(String, Option<String>), DataError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, text, record)) = last.as_ref() {
            if s == schema {
                return Ok((text.clone(), record.clone()));
            }
        }
        let text = to_avro(schema).to_string();
        let parsed = AvroSchema::parse(&text).map_err(|e| {
            DataError::new(format!(
                "The Avro schema made of the Connect schema is invalid: {e}"
            ))
        })?;
        let record = match &parsed.root {
            Node::Named(name) => Some(name.clone()),
            _ => None,
        };
        *last = Some((schema.clone(), text.clone(), record.clone()));
        Ok((text, record))
    }

    fn id_for(&self, subject: &str, text: &str) -> Result<u32, DataError> {
        let key = (subject.to_string(), text.to_string());
        if let Some(id) = self.ids.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(*id);
        }
        let encoded =
            percent_encoding::utf8_percent_encode(subject, percent_encoding::NON_ALPHANUMERIC);
        let body = json!({ "schema": text });
        let answer = if self.config.auto_register {
            self.registry(
                reqwest::Method::POST,
                &format!("/subjects/{encoded}/versions"),
                Some(&body),
            )?
        } else {
            self.registry(
                reqwest::Method::POST,
                &format!("/subjects/{encoded}"),
                Some(&body),
            )?
        };
        let id = answer["id"]
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .ok_or_else(|| {
                DataError::new(format!("The Schema Registry answered no ID: {answer}"))
            })?;
        self.ids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, id);
        Ok(id)
    }

    fn schema_by_id(&self, id: u32) -> Result<ReadSchema, DataError> {
        if let Some(s) = self
            .schemas
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
        {
            return Ok(s.clone());
        }
        let answer = self.registry(reqwest::Method::GET, &format!("/schemas/ids/{id}"), None)?;
        let schema_type = answer["schemaType"].as_str().unwrap_or("AVRO");
        if schema_type != "AVRO" {
            return Err(DataError::new(format!(
                "The schema with ID {id} is of type {schema_type}, not AVRO"
            )));
        }
        if answer["references"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            return Err(DataError::new(format!(
                "The schema with ID {id} has references, which this AvroConverter does not read yet"
            )));
        }
        let text = answer["schema"].as_str().ok_or_else(|| {
            DataError::new(format!(
                "The Schema Registry answered no schema for ID {id}"
            ))
        })?;
        let parsed = AvroSchema::parse(text)
            .map_err(|e| DataError::new(format!("The schema with ID {id} is invalid: {e}")))?;
        let json: Json = serde_json::from_str(text).unwrap_or(Json::Null);
        let connect = to_connect(&parsed, &json)?;
        let read = Arc::new((parsed, connect));
        self.schemas
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, read.clone());
        Ok(read)
    }
}

impl Converter for AvroConverter {
    fn from_connect(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        if value.is_null() && schema.is_none_or(|s| s.default_value.is_none()) {
            return Ok(None);
        }
        let schema = schema.ok_or_else(|| {
            DataError::new("AvroConverter needs a schema: this record's value has none")
        })?;
        let (text, record) = self.avro_text(schema)?;
        let subject = self.subject(topic, record.as_deref())?;
        let id = self.id_for(&subject, &text).map_err(|e| {
            DataError::new(format!(
                "Failed to serialize Avro data from topic {topic}: subject {subject}: {e}"
            ))
        })?;
        let mut out = Vec::with_capacity(64);
        out.push(0);
        out.extend_from_slice(&id.to_be_bytes());
        encode(schema, value, &mut out)?;
        Ok(Some(out))
    }

    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        let Some(data) = data else {
            return Ok(SchemaAndValue::new(None, Value::Null));
        };
        let fail = |why: String| {
            DataError::new(format!(
                "Failed to deserialize data for topic {topic} to Avro: {why}"
            ))
        };
        if data.len() < 5 || data[0] != 0 {
            return Err(fail("Unknown magic byte!".into()));
        }
        let id = u32::from_be_bytes([data[1], data[2], data[3], data[4]]);
        let read = self
            .schema_by_id(id)
            .map_err(|e| fail(format!("schema ID {id}: {e}")))?;
        let (avro, connect) = read.as_ref();
        let mut reader = Reader::new(&data[5..], avro);
        let value = reader
            .value(&avro.root, connect)
            .map_err(|e| fail(format!("schema ID {id}: {e}")))?;
        if !reader.done() {
            return Err(fail(format!("schema ID {id}: bytes left after the value")));
        }
        Ok(SchemaAndValue::new(Some(connect.clone()), value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converter(role: &str, strategy: Option<&str>) -> AvroConverter {
        let mut c = crate::connectors::Props::new();
        c.insert(
            "schema.registry.url".into(),
            "http://a:8081/,http://b:8081".into(),
        );
        c.insert("converter.type".into(), role.into());
        if let Some(s) = strategy {
            c.insert(format!("{role}.subject.name.strategy"), s.into());
        }
        AvroConverter::from_config(&c).unwrap()
    }

    #[test]
    fn subjects_follow_the_role_and_the_strategy() {
        let prefix = "io.confluent.kafka.serializers.subject.";
        assert_eq!(
            converter("value", None).subject("t", None).unwrap(),
            "t-value"
        );
        assert_eq!(
            converter("key", None).subject("t", Some("ex.R")).unwrap(),
            "t-key"
        );
        let record = converter("value", Some(&format!("{prefix}RecordNameStrategy")));
        assert_eq!(record.subject("t", Some("ex.R")).unwrap(), "ex.R");
        assert!(
            record.subject("t", None).is_err(),
            "a string schema has no record name"
        );
        let topic_record = converter("key", Some(&format!("{prefix}TopicRecordNameStrategy")));
        assert_eq!(topic_record.subject("t", Some("ex.R")).unwrap(), "t-ex.R");
        assert_eq!(converter("value", None).config.url, "http://a:8081");
    }

    #[test]
    fn records_without_the_magic_byte_fail_before_any_registry_call() {
        let c = converter("value", None);
        for data in [&b"{}"[..], &[0, 0, 0][..], &[1, 0, 0, 0, 1, 2][..]] {
            let e = c.to_connect("t", Some(data)).unwrap_err();
            assert!(e.0.contains("Unknown magic byte!"), "{e}");
        }
        assert_eq!(c.to_connect("t", None).unwrap().value, Value::Null);
        assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
    }
}
