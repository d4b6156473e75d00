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

use super::connect::{from_connect, message_schema, to_connect_with, ReadOptions};
use super::latest::Latest;
use super::schema::ProtoSchema;
use super::text::{ToProto, WriteOptions};
use crate::converters::registry::client::FetchedSchema;
use crate::converters::registry::client::{bounded_insert, cached, read_framed};
use crate::converters::registry::{frame, RegistryClient, RegistryConfig};
use crate::converters::{config_bool, Converter};
use crate::data::project::project;
use crate::data::{DataError, Schema, SchemaAndValue, SchemaRef, Value};

/// Confluent's class name.
pub const CLASS: &str = "io.confluent.connect.protobuf.ProtobufConverter";

/// A Connect schema written: its `.proto` text, its message's full name, descriptor and indexes, and the
/// compiled schema.
#[derive(Debug)]
pub(super) struct Written {
    pub(super) text: String,
    pub(super) full: String,
    pub(super) desc: MessageDescriptor,
    pub(super) indexes: Vec<i32>,
    pub(super) compiled: ProtoSchema,
}

/// A message read: its descriptor and the Connect schema made of it.
type Read = Arc<(MessageDescriptor, SchemaRef)>;

/// Confluent's ProtobufConverter.
#[derive(Debug)]
pub struct ProtobufConverter {
    pub(super) registry: RegistryClient,
    write: WriteOptions,
    pub(super) read: ReadOptions,
    last: Mutex<Option<(Schema, Arc<Written>)>>,
    schemas: Mutex<HashMap<u32, Arc<ProtoSchema>>>,
    messages: Mutex<HashMap<(u32, Vec<i32>), Read>>,
    /// `use.latest.version`: records are written with their subject's latest schema.
    use_latest: bool,
    /// `latest.compatibility.strict` (default true): that schema must read the record's own.
    pub(super) strict: bool,
    /// Subject → its latest version, read once.
    pub(super) latest: Mutex<HashMap<String, Arc<Latest>>>,
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
    /// A message naming the key (see [`RegistryConfig::from_map`]).
    pub fn from_config(config: &crate::connectors::Props) -> Result<Self, DataError> {
        let registry = RegistryConfig::from_map(config)?;
        let key = |k: &str, default: bool| config_bool(config, k, default);
        let optional_for_nullables = key("optional.for.nullables", false)?;
        let wrapper_for_nullables = key("wrapper.for.nullables", false)?;
        Ok(ProtobufConverter {
            registry: RegistryClient::new(registry),
            write: WriteOptions {
                optional_for_nullables,
                wrapper_for_nullables,
                scrub: key("scrub.invalid.names", false)?,
            },
            read: ReadOptions {
                index_for_unions: key("generate.index.for.unions", true)?,
                wrapper_for_raw_primitives: key("wrapper.for.raw.primitives", true)?,
                wrapper_for_nullables,
                optional_for_nullables,
                int_for_enums: key("int.for.enums", false)?,
                enhanced: key("enhanced.protobuf.schema.support", false)?,
                struct_for_nulls: key("generate.struct.for.nulls", false)?,
            },
            last: Mutex::new(None),
            schemas: Mutex::new(HashMap::new()),
            messages: Mutex::new(HashMap::new()),
            use_latest: key("use.latest.version", false)?,
            strict: key("latest.compatibility.strict", true)?,
            latest: Mutex::new(HashMap::new()),
        })
    }

    /// The `.proto` text, message name and descriptor of a Connect schema; the last one's when the same.
    fn written(&self, schema: &Schema) -> Result<Arc<Written>, DataError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, w)) = last.as_ref() {
            if s == schema {
                return Ok(w.clone());
            }
        }
        let (text, full) = ToProto::with(self.write).file(schema)?;
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
        let w = Arc::new(Written {
            text,
            full,
            desc,
            indexes,
            compiled,
        });
        *last = Some((schema.clone(), w.clone()));
        Ok(w)
    }

    /// The files a schema's references name (their own references too), by import path.
    fn schema_by_id(&self, id: u32) -> Result<Arc<ProtoSchema>, DataError> {
        if let Some(s) = cached(&self.schemas, &id) {
            return Ok(s);
        }
        let fetched = self.registry.schema_by_id(id)?;
        let parsed = Arc::new(self.parse_fetched(&fetched, &format!("ID {id}"))?);
        bounded_insert(
            &self.schemas,
            id,
            parsed.clone(),
            self.registry.config.cache_size,
        );
        Ok(parsed)
    }

    /// A fetched schema compiled with the files its references name (their own references too).
    pub(super) fn parse_fetched(
        &self,
        fetched: &FetchedSchema,
        what: &str,
    ) -> Result<ProtoSchema, DataError> {
        if fetched.schema_type != "PROTOBUF" {
            return Err(DataError::new(format!(
                "The schema with {what} is of type {}, not PROTOBUF",
                fetched.schema_type
            )));
        }
        let files: BTreeMap<String, String> = self
            .registry
            .referenced(&fetched.references)?
            .into_iter()
            .map(|(name, r)| (name, r.schema))
            .collect();
        ProtoSchema::parse(&fetched.schema, files)
            .map_err(|e| DataError::new(format!("The schema with {what} is invalid: {e}")))
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
        let subject = self.registry.subject(topic, Some(written.full.as_str()))?;
        let fail = |e: DataError| {
            DataError::new(format!(
                "Failed to serialize Protobuf data from topic {topic}: subject {subject}: {e}"
            ))
        };
        let mut out = Vec::with_capacity(64);
        if self.use_latest && !self.registry.config.auto_register {
            let latest = self.latest(&subject, &written).map_err(fail)?;
            let projected = project(schema, value, &latest.connect).map_err(|e| {
                fail(DataError::new(format!(
                    "the record does not fit the latest schema (ID {}): {e}",
                    latest.id
                )))
            })?;
            let msg = from_connect(&latest.connect, &projected, &latest.desc).map_err(fail)?;
            frame(latest.id, &mut out);
            write_indexes(&latest.indexes, &mut out);
            msg.encode(&mut out)
                .map_err(|e| DataError::new(format!("Protobuf encoding failed: {e}")))?;
            return Ok(Some(out));
        }
        let id = self
            .registry
            .id_for(&subject, "PROTOBUF", &written.text)
            .map_err(fail)?;
        let msg: DynamicMessage = from_connect(schema, value, &written.desc)?;
        frame(id, &mut out);
        write_indexes(&written.indexes, &mut out);
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
            let value = to_connect_with(&msg, connect, self.read.struct_for_nulls)?;
            Ok(SchemaAndValue::new(Some(connect.clone()), value))
        })
    }
}
