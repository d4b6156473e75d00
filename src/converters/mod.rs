//! Converters: Kafka Connect's `Converter` and `HeaderConverter` plugins, which turn Connect
//! data ([`crate::data`]) into the bytes stored in a topic and back.
//!
//! Every converter Kafka ships is here under its Kafka class name: JsonConverter, StringConverter,
//! ByteArrayConverter, the number converters, BooleanConverter and SimpleHeaderConverter. Workers
//! pick them by the class (or alias) in `key.converter`, `value.converter` and
//! `header.converter`; the plugin table's factory (`plugins::new_converter` and
//! `plugins::new_header_converter`) builds them from the prefix-stripped config keys. This module
//! holds the traits, the implementations and their own config parsing.

pub mod avro;
pub mod bytes;
pub mod defs;
pub mod header;
pub mod json;
pub mod jsonschema;
pub mod number;
#[cfg(feature = "protobuf")]
pub mod protobuf;
pub mod registry;
pub mod string;

use crate::connectors::Props;
use crate::data::{DataError, Schema, SchemaAndValue, Value};
use std::collections::BTreeMap;

/// Kafka's `Converter`: serialises record keys and values.
///
/// The method names follow Kafka's `fromConnectData`/`toConnectData`, hence the `from_` methods
/// that take `self`.
#[allow(clippy::wrong_self_convention)]
pub trait Converter: Send + Sync + std::fmt::Debug {
    /// Serialises a Connect value. `Ok(None)` is a null (tombstone) payload.
    fn from_connect(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises a payload; `None` is a null (tombstone) payload.
    fn to_connect(&self, topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError>;
}

/// Kafka's `HeaderConverter`: serialises record header values (names as in Kafka).
#[allow(clippy::wrong_self_convention)]
pub trait HeaderConverter: Send + Sync + std::fmt::Debug {
    /// Serialises one header value; `Ok(None)` is a null header value.
    fn from_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises one header value.
    fn to_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        data: Option<&[u8]>,
    ) -> Result<SchemaAndValue, DataError>;
}

/// A converter whose bytes depend on neither the topic nor the header key: one implementation serves
/// as a header converter and, for a [`RecordCodec`], as a record converter too.
pub(crate) trait Codec: Send + Sync + std::fmt::Debug {
    /// Serialises a value; `Ok(None)` is a null payload.
    fn encode(&self, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>, DataError>;
    /// Deserialises bytes.
    fn decode(&self, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError>;
}

/// A [`Codec`] that is a record converter as well as a header converter, as Kafka's JsonConverter,
/// StringConverter, ByteArrayConverter and number converters are (SimpleHeaderConverter is not).
pub(crate) trait RecordCodec: Codec {}

impl<T: RecordCodec> Converter for T {
    fn from_connect(
        &self,
        _topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        self.encode(schema, value)
    }

    fn to_connect(&self, _topic: &str, data: Option<&[u8]>) -> Result<SchemaAndValue, DataError> {
        self.decode(data)
    }
}

impl<T: Codec> HeaderConverter for T {
    fn from_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>, DataError> {
        self.encode(schema, value)
    }

    fn to_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        data: Option<&[u8]>,
    ) -> Result<SchemaAndValue, DataError> {
        self.decode(data)
    }
}

/// The Kafka version whose converters these reproduce.
pub const KAFKA_VERSION: &str = "4.0.0";

/// A `BOOLEAN` config key, parsed as Kafka's `ConfigDef` does (trimmed, case-insensitive).
pub(crate) fn config_bool(config: &Props, key: &str, default: bool) -> Result<bool, DataError> {
    match config.get(key) {
        None => Ok(default),
        Some(raw) => match raw.trim() {
            t if t.eq_ignore_ascii_case("true") => Ok(true),
            t if t.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(DataError::new(crate::config::invalid_value(
                key,
                raw,
                "Expected value to be either true or false",
            ))),
        },
    }
}

/// An `INT` config key, parsed as Kafka's `ConfigDef` does.
pub(crate) fn config_int(config: &Props, key: &str, default: i32) -> Result<i32, DataError> {
    match config.get(key) {
        None => Ok(default),
        Some(raw) => raw.trim().parse::<i32>().map_err(|_| {
            DataError::new(crate::config::invalid_value(
                key,
                raw,
                "Not a number of type INT",
            ))
        }),
    }
}

/// `converter.type`, which the worker sets itself; Kafka accepts `key`, `value` and `header`.
pub(crate) fn check_converter_type(config: &BTreeMap<String, String>) -> Result<(), DataError> {
    match config.get("converter.type") {
        None => Ok(()),
        Some(v) if ["key", "value", "header"].contains(&v.trim()) => Ok(()),
        Some(v) => Err(DataError::new(crate::config::invalid_value(
            "converter.type",
            v,
            "String must be one of: key, value, header",
        ))),
    }
}
