//! `io.confluent.connect.protobuf.ProtobufConverter`: Connect data as Protobuf in Confluent's wire
//! format (magic byte 0, the schema's 4-byte big-endian ID, the message indexes naming the record's
//! message in the schema's file, then the message's bytes), with Confluent's keys. Schemas written are
//! registered as `.proto` text; schemas read are fetched by ID with the schemas their references name.
//! IDs, schemas and descriptors are cached, so a steady stream of records makes no registry call per
//! record.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};

use super::connect::{from_connect, message_schema, to_connect, ReadOptions};
use super::schema::ProtoSchema;
use super::text::ToProto;
use crate::converters::registry::client::config_error;
use crate::converters::registry::client::{bounded_insert, cached, read_framed};
use crate::converters::registry::{frame, RegistryClient, RegistryConfig};
use crate::converters::{config_bool, Converter};
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};

/// Confluent's class name.
pub const CLASS: &str = "io.confluent.connect.protobuf.ProtobufConverter";

/// Refuses the settings whose behaviour this converter does not have, naming the key.
fn refuse_unsupported(config: &crate::connectors::Props) -> Result<(), DataError> {
    for (key, default) in [
        ("use.latest.version", false),
        ("enhanced.protobuf.schema.support", false),
        ("scrub.invalid.names", false),
        ("wrapper.for.nullables", false),
        ("int.for.enums", false),
        ("generate.struct.for.nulls", false),
    ] {
        if config_bool(config, key, default)? != default {
            let value = config.get(key).map_or("", String::as_str);
            return Err(config_error(
                key,
                value,
                "This ProtobufConverter does not support this setting yet",
            ));
        }
    }
    Ok(())
}

/// A Connect schema written: its `.proto` text, its message's full name, descriptor and indexes.
type Written = Arc<(String, String, MessageDescriptor, Vec<i32>)>;
/// A message read: its descriptor and the Connect schema made of it.
type Read = Arc<(MessageDescriptor, SchemaRef)>;

/// Confluent's ProtobufConverter.
#[derive(Debug)]
pub struct ProtobufConverter {
    registry: RegistryClient,
    optional_for_nullables: bool,
    read: ReadOptions,
    last: Mutex<Option<(Schema, Written)>>,
    schemas: Mutex<HashMap<u32, Arc<ProtoSchema>>>,
    messages: Mutex<HashMap<(u32, Vec<i32>), Read>>,
}

/// Confluent's message indexes: a zig-zag varint count then each index; `[0]` as the single byte 0.
pub fn write_indexes(indexes: &[i32], out: &mut Vec<u8>) {
    if indexes == [0] {
        out.push(0);
        return;
    }
    let zigzag = |n: i64, out: &mut Vec<u8>| {
        let mut v = ((n << 1) ^ (n >> 63)) as u64;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    };
    zigzag(indexes.len() as i64, out);
    for i in indexes {
        zigzag(i64::from(*i), out);
    }
}

/// Reads the message indexes at the start of a payload: the indexes and the rest.
///
/// # Errors
/// A truncated or malformed varint, a negative or implausible count.
pub fn read_indexes(data: &[u8]) -> Result<(Vec<i32>, &[u8]), String> {
    let mut at = 0;
    let mut next = || -> Result<i64, String> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *data.get(at).ok_or("the message indexes are cut short")?;
            at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        Err("a message index is not a varint".into())
    };
    let count = next()?;
    if count == 0 {
        return Ok((vec![0], &data[at.min(data.len())..]));
    }
    if !(1..=100).contains(&count) {
        return Err(format!("the message index count {count} is invalid"));
    }
    let mut indexes = Vec::new();
    for _ in 0..count {
        let i = next()?;
        indexes.push(i32::try_from(i).map_err(|_| format!("message index {i} is invalid"))?);
    }
    Ok((indexes, &data[at..]))
}

impl ProtobufConverter {
    /// A converter from its config keys (prefix already stripped).
    ///
    /// # Errors
    /// A message naming the key (see [`RegistryConfig::from_map`]), or a key whose behaviour this
    /// converter does not have.
    pub fn from_config(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let registry = RegistryConfig::from_map(config)?;
        refuse_unsupported(config)?;
        Ok(ProtobufConverter {
            registry: RegistryClient::new(registry),
            optional_for_nullables: config_bool(config, "optional.for.nullables", false)?,
            read: ReadOptions {
                index_for_unions: config_bool(config, "generate.index.for.unions", true)?,
                wrapper_for_raw_primitives: config_bool(
                    config,
                    "wrapper.for.raw.primitives",
                    true,
                )?,
            },
            last: Mutex::new(None),
            schemas: Mutex::new(HashMap::new()),
            messages: Mutex::new(HashMap::new()),
        })
    }

    /// The `.proto` text, message name and descriptor of a Connect schema; the last one's when the same.
    fn written(&self, schema: &Schema) -> Result<Written, DataError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, w)) = last.as_ref() {
            if s == schema {
                return Ok(w.clone());
            }
        }
        let (text, full) = ToProto::new(self.optional_for_nullables).file(schema)?;
        let invalid = |e: String| {
            DataError::new(format!(
                "The Protobuf schema made of the Connect schema is invalid: {e}"
            ))
        };
        let compiled = ProtoSchema::parse(&text, BTreeMap::new()).map_err(invalid)?;
        let desc = compiled
            .file
            .parent_pool()
            .get_message_by_name(&full)
            .ok_or_else(|| invalid(format!("no message {full}")))?;
        let indexes = compiled.indexes_of(&desc);
        let w = Arc::new((text, full, desc, indexes));
        *last = Some((schema.clone(), w.clone()));
        Ok(w)
    }

    /// The files a schema's references name (their own references too), by import path.
    fn schema_by_id(&self, id: u32) -> Result<Arc<ProtoSchema>, DataError> {
        if let Some(s) = cached(&self.schemas, &id) {
            return Ok(s);
        }
        let fetched = self.registry.schema_by_id(id)?;
        if fetched.schema_type != "PROTOBUF" {
            return Err(DataError::new(format!(
                "The schema with ID {id} is of type {}, not PROTOBUF",
                fetched.schema_type
            )));
        }
        let files: BTreeMap<String, String> = self
            .registry
            .referenced(&fetched.references)?
            .into_iter()
            .map(|(name, r)| (name, r.schema))
            .collect();
        let parsed = ProtoSchema::parse(&fetched.schema, files)
            .map_err(|e| DataError::new(format!("The schema with ID {id} is invalid: {e}")))?;
        let parsed = Arc::new(parsed);
        bounded_insert(
            &self.schemas,
            id,
            parsed.clone(),
            self.registry.config.cache_size,
        );
        Ok(parsed)
    }

    fn message(&self, id: u32, indexes: Vec<i32>) -> Result<Read, DataError> {
        let key = (id, indexes);
        if let Some(m) = cached(&self.messages, &key) {
            return Ok(m);
        }
        let schema = self.schema_by_id(id)?;
        let desc = schema.message_at(&key.1).map_err(DataError::new)?;
        let connect = message_schema(&desc, self.read);
        let read = Arc::new((desc, connect));
        bounded_insert(
            &self.messages,
            key,
            read.clone(),
            self.registry.config.cache_size,
        );
        Ok(read)
    }
}

impl Converter for ProtobufConverter {
    fn from_connect(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        if value.is_null() {
            return Ok(None);
        }
        let schema = schema.ok_or_else(|| {
            DataError::new("ProtobufConverter needs a schema: this record's value has none")
        })?;
        let written = self.written(schema)?;
        let (text, full, desc, indexes) = written.as_ref();
        let subject = self.registry.subject(topic, Some(full))?;
        let id = self
            .registry
            .id_for(&subject, "PROTOBUF", text)
            .map_err(|e| {
                DataError::new(format!(
                    "Failed to serialize Protobuf data from topic {topic}: subject {subject}: {e}"
                ))
            })?;
        let msg: DynamicMessage = from_connect(schema, value, desc)?;
        let mut out = Vec::with_capacity(64);
        frame(id, &mut out);
        write_indexes(indexes, &mut out);
        msg.encode(&mut out)
            .map_err(|e| DataError::new(format!("Protobuf encoding failed: {e}")))?;
        Ok(Some(out))
    }

    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        read_framed(topic, data, "Protobuf", |id, payload| {
            let (indexes, body) = read_indexes(payload).map_err(DataError::new)?;
            let read = self.message(id, indexes)?;
            let (desc, connect) = read.as_ref();
            let msg = DynamicMessage::decode(desc.clone(), body)
                .map_err(|e| DataError::new(e.to_string()))?;
            let value = to_connect(&msg, connect)?;
            Ok(SchemaAndValue::new(Some(connect.clone()), value))
        })
    }
}
