//! `io.confluent.connect.json.JsonSchemaConverter`: Connect data as JSON documents in Confluent's wire
//! format (magic byte 0, the schema's 4-byte big-endian ID in a Schema Registry, then the document as
//! UTF-8 JSON), with Confluent's keys. The registry is reached through the shared [`RegistryClient`]
//! (blocking, on the task's thread); IDs and schemas are cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

use super::connect::{to_connect, to_json_schema};
use super::schema::JsonSchema;
use super::value;
use crate::converters::registry::client::config_error;
use crate::converters::registry::client::{bounded_insert, cached, read_framed};
use crate::converters::registry::{frame, RegistryClient, RegistryConfig};
use crate::converters::{config_bool, Converter};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};

/// Confluent's class name.
pub const CLASS: &str = "io.confluent.connect.json.JsonSchemaConverter";

/// Refuses the settings whose behaviour this converter does not have, naming the key, rather than
/// behaving otherwise than the config says.
fn refuse_unsupported(config: &crate::connectors::Props) -> Result<(), DataError> {
    let unsupported = |key: &str, value: &str| {
        config_error(
            key,
            value,
            "This JsonSchemaConverter does not support this setting yet",
        )
    };
    for (key, default, supported) in [
        ("use.latest.version", false, false),
        ("latest.compatibility.strict", true, true),
        ("json.fail.invalid.schema", false, false),
        ("json.write.dates.iso8601", false, false),
        ("json.oneof.for.nullables", true, true),
        ("use.optional.for.nonrequired", false, false),
        ("object.additional.properties", true, true),
    ] {
        if config_bool(config, key, default)? != supported {
            return Err(unsupported(key, config.get(key).map_or("", String::as_str)));
        }
    }
    Ok(())
}

/// A schema read by ID: the writer's JSON Schema and the Connect schema made of it.
type ReadSchema = Arc<SchemaRef>;

/// Confluent's JsonSchemaConverter.
#[derive(Debug)]
pub struct JsonSchemaConverter {
    registry: RegistryClient,
    /// `json.fail.unknown.properties` (default true): a property the schema lacks is an error.
    fail_unknown: bool,
    /// The last Connect schema written, with its JSON Schema text and its title.
    last: Mutex<Option<(Schema, String, Option<String>)>>,
    /// ID → the schema read.
    schemas: Mutex<HashMap<u32, ReadSchema>>,
}

impl JsonSchemaConverter {
    /// A converter from its config keys (prefix already stripped).
    ///
    /// # Errors
    /// A message naming the key (see [`RegistryConfig::from_map`]), or a key whose behaviour this
    /// converter does not have.
    pub fn from_config(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let registry = RegistryConfig::from_map(config)?;
        refuse_unsupported(config)?;
        Ok(JsonSchemaConverter {
            registry: RegistryClient::new(registry),
            fail_unknown: config_bool(config, "json.fail.unknown.properties", true)?,
            last: Mutex::new(None),
            schemas: Mutex::new(HashMap::new()),
        })
    }

    /// The JSON Schema text of a Connect schema and its title, from the last one written when the
    /// schema is the same.
    fn schema_text(&self, schema: &Schema) -> Result<(String, Option<String>), DataError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, text, title)) = last.as_ref() {
            if s == schema {
                return Ok((text.clone(), title.clone()));
            }
        }
        let json = to_json_schema(schema)?;
        let text = json.to_string();
        let title = json["title"].as_str().map(String::from);
        *last = Some((schema.clone(), text.clone(), title.clone()));
        Ok((text, title))
    }

    fn schema_by_id(&self, id: u32) -> Result<ReadSchema, DataError> {
        if let Some(s) = cached(&self.schemas, &id) {
            return Ok(s);
        }
        let fetched = self.registry.schema_by_id(id)?;
        if fetched.schema_type != "JSON" {
            return Err(DataError::new(format!(
                "The schema with ID {id} is of type {}, not JSON",
                fetched.schema_type
            )));
        }
        let mut refs = Vec::new();
        for (name, r) in self.registry.referenced(&fetched.references)? {
            let doc: Json = serde_json::from_str(&r.schema).map_err(|_| {
                DataError::new(format!("The reference {name} is not a JSON document"))
            })?;
            refs.push((name, Arc::new(doc)));
        }
        let parsed = JsonSchema::parse_with(&fetched.schema, &refs)
            .map_err(|e| DataError::new(format!("The schema with ID {id} is invalid: {e}")))?;
        let read = Arc::new(to_connect(&parsed)?);
        bounded_insert(
            &self.schemas,
            id,
            read.clone(),
            self.registry.config.cache_size,
        );
        Ok(read)
    }
}

impl JsonSchemaConverter {}

impl Converter for JsonSchemaConverter {
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
            DataError::new("JsonSchemaConverter needs a schema: this record's value has none")
        })?;
        let fail = |why: String| {
            DataError::new(format!(
                "Failed to serialize JSON data from topic {topic}: {why}"
            ))
        };
        let (text, title) = self.schema_text(schema)?;
        let subject = self.registry.subject(topic, title.as_deref())?;
        let id = self
            .registry
            .id_for(&subject, "JSON", &text)
            .map_err(|e| fail(format!("subject {subject}: {e}")))?;
        let body = value::write(&value::to_json(schema, value).map_err(|e| fail(e.0))?);
        let mut out = Vec::with_capacity(5 + body.len());
        frame(id, &mut out);
        out.extend_from_slice(body.as_bytes());
        Ok(Some(out))
    }

    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        read_framed(topic, data, "JSON", |id, payload| {
            let read = self.schema_by_id(id)?;
            let connect: &SchemaRef = &read;
            let json = value::parse(payload)?;
            let value = value::to_value(connect, &json, !self.fail_unknown)?;
            Ok(SchemaAndValue::new(Some(connect.clone()), value))
        })
    }
}
