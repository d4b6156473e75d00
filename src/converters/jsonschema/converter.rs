//! `io.confluent.connect.json.JsonSchemaConverter`: Connect data as JSON documents in Confluent's wire
//! format (magic byte 0, the schema's 4-byte big-endian ID in a Schema Registry, then the document as
//! UTF-8 JSON), with Confluent's keys. The registry is reached through the shared [`RegistryClient`]
//! (blocking, on the task's thread); IDs and schemas are cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

use super::compat;
use super::connect::{to_connect_with, to_json_schema_with, Options};
use super::schema::JsonSchema;
use super::validate::{validate, Patterns};
use super::value;
use crate::converters::registry::client::FetchedSchema;
use crate::converters::registry::client::{bounded_insert, cached, read_framed, strict_check};
use crate::converters::registry::{frame, RegistryClient, RegistryConfig};
use crate::converters::{config_bool, Converter};
use crate::data::project::project;
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};

/// Confluent's class name.
pub const CLASS: &str = "io.confluent.connect.json.JsonSchemaConverter";

/// A schema read by ID, or a subject's latest: its ID, the JSON Schema and the Connect schema made of
/// it.
type ReadSchema = Arc<(u32, JsonSchema, SchemaRef)>;

/// The last Connect schema written: the schema, its JSON Schema text, title and parsed form.
type LastWritten = (Schema, String, Option<String>, Arc<JsonSchema>);

/// Confluent's JsonSchemaConverter.
#[derive(Debug)]
pub struct JsonSchemaConverter {
    registry: RegistryClient,
    /// `json.fail.unknown.properties` (default true): a property the schema lacks is an error.
    fail_unknown: bool,
    /// `json.fail.invalid.schema` (default false): payloads are validated against their schema.
    validate: bool,
    /// `use.latest.version`: records are written with their subject's latest schema.
    use_latest: bool,
    /// `latest.compatibility.strict` (default true): that schema must read the record's own.
    strict: bool,
    /// `object.additional.properties` and `use.optional.for.nonrequired`.
    options: Options,
    /// The last Connect schema written.
    last: Mutex<Option<LastWritten>>,
    /// ID → the schema read.
    schemas: Mutex<HashMap<u32, ReadSchema>>,
    /// Subject → its latest version, read once.
    latest: Mutex<HashMap<String, ReadSchema>>,
    /// Compiled `pattern`s of the schemas validated against.
    patterns: Patterns,
}

impl JsonSchemaConverter {
    /// A converter from its config keys (prefix already stripped).
    ///
    /// # Errors
    /// A message naming the key (see [`RegistryConfig::from_map`]).
    pub fn from_config(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let registry = RegistryConfig::from_map(config)?;
        // Read for their values' sake only: Confluent's converter hands its serializer a JSON tree
        // and a schema, so neither changes what it writes (see the docs).
        config_bool(config, "json.write.dates.iso8601", false)?;
        config_bool(config, "json.oneof.for.nullables", true)?;
        Ok(JsonSchemaConverter {
            registry: RegistryClient::new(registry),
            fail_unknown: config_bool(config, "json.fail.unknown.properties", true)?,
            validate: config_bool(config, "json.fail.invalid.schema", false)?,
            use_latest: config_bool(config, "use.latest.version", false)?,
            strict: config_bool(config, "latest.compatibility.strict", true)?,
            options: Options {
                additional_properties: config_bool(config, "object.additional.properties", true)?,
                optional_for_nonrequired: config_bool(
                    config,
                    "use.optional.for.nonrequired",
                    false,
                )?,
            },
            last: Mutex::new(None),
            schemas: Mutex::new(HashMap::new()),
            latest: Mutex::new(HashMap::new()),
            patterns: Patterns::default(),
        })
    }

    /// The JSON Schema of a Connect schema (text, title and parsed), from the last one written when
    /// the schema is the same.
    fn schema_text(&self, schema: &Schema) -> Result<LastWritten, DataError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = last.as_ref() {
            if &l.0 == schema {
                return Ok(l.clone());
            }
        }
        let json = to_json_schema_with(schema, self.options)?;
        let text = json.to_string();
        let title = json["title"].as_str().map(String::from);
        let parsed = JsonSchema::parse_with(&text, &[]).map_err(|e| {
            DataError::new(format!(
                "The JSON Schema made of the Connect schema is invalid: {e}"
            ))
        })?;
        let made = (schema.clone(), text, title, Arc::new(parsed));
        *last = Some(made.clone());
        Ok(made)
    }

    /// A registry schema parsed with its references, and the Connect schema made of it.
    fn read_schema(
        &self,
        id: u32,
        fetched: &FetchedSchema,
        what: &str,
    ) -> Result<ReadSchema, DataError> {
        if fetched.schema_type != "JSON" {
            return Err(DataError::new(format!(
                "The schema with {what} is of type {}, not JSON",
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
            .map_err(|e| DataError::new(format!("The schema with {what} is invalid: {e}")))?;
        let connect = to_connect_with(&parsed, self.options)?;
        Ok(Arc::new((id, parsed, connect)))
    }

    fn schema_by_id(&self, id: u32) -> Result<ReadSchema, DataError> {
        if let Some(s) = cached(&self.schemas, &id) {
            return Ok(s);
        }
        let fetched = self.registry.schema_by_id(id)?;
        let read = self.read_schema(id, &fetched, &format!("ID {id}"))?;
        bounded_insert(
            &self.schemas,
            id,
            read.clone(),
            self.registry.config.cache_size,
        );
        Ok(read)
    }

    /// `use.latest.version`: the subject's latest schema, which must read the record's own when
    /// `latest.compatibility.strict`.
    fn latest(&self, subject: &str, own: &JsonSchema) -> Result<ReadSchema, DataError> {
        let latest = self
            .registry
            .latest_cached(&self.latest, subject, |id, fetched, what| {
                self.read_schema(id, fetched, what)
            })?;
        if self.strict {
            strict_check(subject, latest.0, &compat::can_read(&latest.1, own))?;
        }
        Ok(latest)
    }

    /// `json.fail.invalid.schema`: the document must validate against the schema.
    fn check(&self, schema: &JsonSchema, id: u32, doc: &Json) -> Result<(), DataError> {
        if !self.validate {
            return Ok(());
        }
        validate(schema, doc, &self.patterns).map_err(|e| {
            DataError::new(format!(
                "JSON does not match the schema with ID {id} (json.fail.invalid.schema): {e}"
            ))
        })
    }

    /// The written document as `serde_json` for [`Self::check`], only when validating.
    fn check_written(&self, schema: &JsonSchema, id: u32, body: &str) -> Result<(), DataError> {
        if !self.validate {
            return Ok(());
        }
        let doc: Json = serde_json::from_str(body)
            .map_err(|e| DataError::new(format!("The written JSON does not parse: {e}")))?;
        self.check(schema, id, &doc)
    }
}

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
        let (_, text, title, own) = self.schema_text(schema)?;
        let subject = self.registry.subject(topic, title.as_deref())?;
        let fail = |e: DataError| {
            DataError::new(format!(
                "Failed to serialize JSON data from topic {topic}: subject {subject}: {e}"
            ))
        };
        let (id, body) = if self.use_latest && !self.registry.config.auto_register {
            let latest = self.latest(&subject, &own).map_err(fail)?;
            let projected = project(schema, value, &latest.2).map_err(fail)?;
            let body = value::write(&value::to_json(&latest.2, &projected).map_err(fail)?);
            self.check_written(&latest.1, latest.0, &body)
                .map_err(fail)?;
            (latest.0, body)
        } else {
            let id = self
                .registry
                .id_for(&subject, "JSON", &text)
                .map_err(fail)?;
            let body = value::write(&value::to_json(schema, value).map_err(fail)?);
            self.check_written(&own, id, &body).map_err(fail)?;
            (id, body)
        };
        let mut out = Vec::with_capacity(5 + body.len());
        frame(id, &mut out);
        out.extend_from_slice(body.as_bytes());
        Ok(Some(out))
    }

    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        read_framed(topic, data, "JSON", |id, payload| {
            let read = self.schema_by_id(id)?;
            if self.validate {
                let doc: Json = serde_json::from_slice(payload)
                    .map_err(|e| DataError::new(format!("The payload is not JSON: {e}")))?;
                self.check(&read.1, id, &doc)?;
            }
            let connect: &SchemaRef = &read.2;
            let json = value::parse(payload)?;
            let value = value::to_value(connect, &json, !self.fail_unknown)?;
            Ok(SchemaAndValue::new(Some(connect.clone()), value))
        })
    }
}
