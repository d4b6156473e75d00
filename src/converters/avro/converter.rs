//! `io.confluent.connect.avro.AvroConverter`: Connect data as Avro in Confluent's wire format (magic byte
//! 0, the schema's 4-byte big-endian ID in a Schema Registry, then the Avro body), with Confluent's keys.
//! Any Confluent-compatible registry serves (the embedded one or a remote one). IDs and schemas are
//! cached, so a steady stream of records makes no registry call per record. The registry is reached with
//! a blocking HTTP client, created on first use: converters run on task threads, which may block.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

use super::anything::{decode_anything, encode_anything, ANYTHING_NAME, ANYTHING_SCHEMA};
use super::binary::{encode_with, Reader};
use super::compat;
use super::connect::{to_avro_with, to_connect_with, AvroOptions};
use super::schema::{AvroSchema, Node};
use crate::converters::registry::client::config_error;
use crate::converters::registry::client::read_framed;
use crate::converters::registry::client::FetchedSchema;
use crate::converters::registry::client::{bounded_insert, cached, strict_check};
use crate::converters::registry::{frame, RegistryClient, RegistryConfig};
use crate::converters::{config_bool, Converter};
use crate::data::project::project;
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};

/// Confluent's class name.
pub const CLASS: &str = "io.confluent.connect.avro.AvroConverter";

/// Confluent's `AvroDataConfig` switches whose `true` this converter does not have: refused, naming the
/// key, rather than behaving otherwise than the config says.
const REFUSED_WHEN_TRUE: [&str; 4] = [
    "discard.type.doc.default",
    "generalized.sum.type.support",
    "ignore.default.for.nullables",
    "allow.optional.map.keys",
];

fn refuse_unsupported(config: &crate::connectors::Props) -> Result<(), DataError> {
    for key in REFUSED_WHEN_TRUE {
        if config_bool(config, key, false)? {
            return Err(config_error(
                key,
                config.get(key).map_or("", String::as_str),
                "This AvroConverter does not support this setting yet",
            ));
        }
    }
    Ok(())
}

/// A schema read by ID: the writer's Avro schema and the Connect schema made of it.
/// The Connect schema is none for Confluent's schema of schemaless values (see [`super::anything`]).
type ReadSchema = Arc<(AvroSchema, Option<SchemaRef>)>;

/// Confluent's AvroConverter.
#[derive(Debug)]
pub struct AvroConverter {
    registry: RegistryClient,
    /// The last Connect schema written, with its Avro text and the subject part its record names.
    last: Mutex<Option<(Schema, String, Option<String>)>>,
    /// ID → the schema read.
    schemas: Mutex<HashMap<u32, ReadSchema>>,
    /// `use.latest.version`: records are written with their subject's latest schema.
    use_latest: bool,
    /// `latest.compatibility.strict` (default true): that schema must read the record's own.
    strict: bool,
    /// `connect.meta.data`, `scrub.invalid.names` and `enhanced.avro.schema.support`.
    options: AvroOptions,
    /// Subject → its latest version's ID and schema, read once.
    latest: Mutex<HashMap<String, Latest>>,
}

/// A subject's latest version: its ID and its schema.
type Latest = Arc<(u32, AvroSchema, SchemaRef)>;

impl AvroConverter {
    /// A converter from its config keys (prefix already stripped).
    ///
    /// # Errors
    /// A message naming the key (see [`RegistryConfig::from_map`]), or a key whose behaviour this
    /// converter does not have.
    pub fn from_config(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let registry = RegistryConfig::from_map(config)?;
        refuse_unsupported(config)?;
        Ok(AvroConverter {
            registry: RegistryClient::new(registry),
            last: Mutex::new(None),
            schemas: Mutex::new(HashMap::new()),
            options: AvroOptions {
                meta: config_bool(config, "connect.meta.data", true)?,
                scrub: config_bool(config, "scrub.invalid.names", false)?,
                enhanced: config_bool(config, "enhanced.avro.schema.support", false)?,
                flatten: config_bool(config, "flatten.singleton.unions", true)?,
            },
            use_latest: config_bool(config, "use.latest.version", false)?,
            strict: config_bool(config, "latest.compatibility.strict", true)?,
            latest: Mutex::new(HashMap::new()),
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
        let text = to_avro_with(schema, self.options).to_string();
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

    /// A registry schema parsed with its references, and the Connect schema made of it (none for
    /// Confluent's schema of schemaless values).
    fn read_schema(
        &self,
        fetched: &FetchedSchema,
        what: &str,
    ) -> Result<(AvroSchema, Option<SchemaRef>), DataError> {
        let invalid = |e: &dyn std::fmt::Display| {
            DataError::new(format!("The schema with {what} is invalid: {e}"))
        };
        let mut known: Vec<AvroSchema> = Vec::new();
        for (name, r) in self.registry.referenced(&fetched.references)? {
            let parsed = AvroSchema::parse_with(&r.schema, &known)
                .map_err(|e| invalid(&format!("its reference {name}: {e}")))?;
            known.push(parsed);
        }
        let parsed = AvroSchema::parse_with(&fetched.schema, &known).map_err(|e| invalid(&e))?;
        if parsed.root == Node::Named(ANYTHING_NAME.to_string()) {
            return Ok((parsed, None));
        }
        let json: Json = serde_json::from_str(&fetched.schema).unwrap_or(Json::Null);
        let connect = to_connect_with(&parsed, &json, self.options)?;
        Ok((parsed, Some(connect)))
    }

    /// `use.latest.version`: the subject's latest schema, which must read the record's own when
    /// `latest.compatibility.strict`, and whose Connect form must write the same bytes as it (strings
    /// carrying an enum written as the enum, whatever `enhanced.avro.schema.support` says, as
    /// Confluent writes a string into a latest schema's enum).
    fn latest(&self, subject: &str, own: &str) -> Result<Latest, DataError> {
        let latest = self.registry.latest_cached(&self.latest, subject, |id, fetched, what| {
            let (avro, connect) = self.read_schema(fetched, what)?;
            let connect = connect.ok_or_else(|| {
                DataError::new(format!(
                    "The latest schema of subject {subject} (ID {id}) is the schema of values without a schema"
                ))
            })?;
            let as_enums = AvroOptions {
                enhanced: true,
                ..self.options
            };
            let written = AvroSchema::parse(&to_avro_with(&connect, as_enums).to_string())
                .map_err(|e| DataError::new(e.to_string()))?;
            if !compat::same_encoding(&written, &avro) {
                return Err(DataError::new(format!(
                    "The latest schema of subject {subject} (ID {id}) uses Avro types that Connect data cannot be written as"
                )));
            }
            Ok(Arc::new((id, avro, connect)))
        })?;
        if self.strict {
            let own = AvroSchema::parse(own).map_err(|e| DataError::new(e.to_string()))?;
            strict_check(subject, latest.0, &compat::can_read(&latest.1, &own))?;
        }
        Ok(latest)
    }

    fn schema_by_id(&self, id: u32) -> Result<ReadSchema, DataError> {
        if let Some(s) = cached(&self.schemas, &id) {
            return Ok(s);
        }
        let fetched = self.registry.schema_by_id(id)?;
        if fetched.schema_type != "AVRO" {
            return Err(DataError::new(format!(
                "The schema with ID {id} is of type {}, not AVRO",
                fetched.schema_type
            )));
        }
        let read = Arc::new(self.read_schema(&fetched, &format!("ID {id}"))?);
        bounded_insert(
            &self.schemas,
            id,
            read.clone(),
            self.registry.config.cache_size,
        );
        Ok(read)
    }
}

impl AvroConverter {
    /// A value without a schema, written under Confluent's `Anything` schema (registered under the
    /// subject of the strategy, its record name `io.confluent.connect.avro.Anything`).
    fn schemaless(&self, topic: &str, value: &Value) -> Result<Vec<u8>, DataError> {
        let subject = self.registry.subject(topic, Some(ANYTHING_NAME))?;
        let id = self
            .registry
            .id_for(&subject, "AVRO", ANYTHING_SCHEMA)
            .map_err(|e| {
                DataError::new(format!(
                    "Failed to serialize Avro data from topic {topic}: subject {subject}: {e}"
                ))
            })?;
        let mut out = Vec::with_capacity(32);
        frame(id, &mut out);
        encode_anything(value, &mut out)?;
        Ok(out)
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
        let Some(schema) = schema else {
            return self.schemaless(topic, value).map(Some);
        };
        let (text, record) = self.avro_text(schema)?;
        let subject = self.registry.subject(topic, record.as_deref())?;
        if self.use_latest && !self.registry.config.auto_register {
            let fail = |e: DataError| {
                DataError::new(format!(
                    "Failed to serialize Avro data from topic {topic}: subject {subject}: {e}"
                ))
            };
            let latest = self.latest(&subject, &text).map_err(fail)?;
            let projected = project(schema, value, &latest.2).map_err(fail)?;
            let mut out = Vec::with_capacity(64);
            frame(latest.0, &mut out);
            encode_with(&latest.2, &projected, true, &mut out)?;
            return Ok(Some(out));
        }
        let id = self.registry.id_for(&subject, "AVRO", &text).map_err(|e| {
            DataError::new(format!(
                "Failed to serialize Avro data from topic {topic}: subject {subject}: {e}"
            ))
        })?;
        let mut out = Vec::with_capacity(64);
        frame(id, &mut out);
        encode_with(schema, value, self.options.enhanced, &mut out)?;
        Ok(Some(out))
    }

    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        read_framed(topic, data, "Avro", |id, payload| {
            let read = self.schema_by_id(id)?;
            let (avro, connect) = read.as_ref();
            let mut reader = Reader::new(payload, avro);
            let value = match connect {
                Some(connect) => reader.value(&avro.root, connect)?,
                None => decode_anything(&mut reader)?,
            };
            if !reader.done() {
                return Err(DataError::new("bytes left after the value"));
            }
            Ok(SchemaAndValue::new(connect.clone(), value))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converter() -> AvroConverter {
        let mut c = crate::connectors::Props::new();
        c.insert("schema.registry.url".into(), "http://a:8081".into());
        AvroConverter::from_config(&c).unwrap()
    }

    #[test]
    fn records_without_the_magic_byte_fail_before_any_registry_call() {
        let c = converter();
        for data in [&b"{}"[..], &[0, 0, 0][..], &[1, 0, 0, 0, 1, 2][..]] {
            let e = c.to_connect("t", Some(data)).unwrap_err();
            assert!(e.0.contains("Unknown magic byte!"), "{e}");
        }
        assert_eq!(c.to_connect("t", None).unwrap().value, Value::Null);
        assert_eq!(c.from_connect("t", None, &Value::Null).unwrap(), None);
    }
}
