//! Kafka Connect's single message transforms (SMTs) and predicates: the built-in set of
//! `org.apache.kafka.connect.transforms`, with Kafka's class names, config keys, defaults,
//! validators and error messages, as pure synchronous code over [`ConnectRecord`]s.
//!
//! * [`TransformChain`] is a connector's chain, built from its `transforms` and `predicates`
//!   keys and applied record by record. It finds the classes through a [`TransformLookup`], which
//!   the plugin table implements (`plugins/transformations.rs`): names resolve by full class name,
//!   simple class name, or simple name without the `Transformation`/`Predicate` suffix when that
//!   is unambiguous (Kafka's alias rules), so the `$Key`/`$Value` variants need their full names.
//!
//! Each transformation works on schema'd data (a [`Struct`] with its schema) and on schemaless
//! data (a map with string keys) as Kafka's does. Differences from Kafka that users can see:
//! schemaless maps keep their insertion order where Kafka copies them into a `HashMap` (whose
//! order is arbitrary); regular expressions use the `fancy-regex` dialect, which covers Java's
//! look-around and back-references but not every Java construct; error texts that in Java come
//! from a `NullPointerException` or an object's identity (`InsertionSpec@1b6d3586`) are replaced
//! by readable ones.

pub mod cast;
pub mod datefmt;
pub mod extract_field;
pub mod flatten;
pub mod headers;
pub mod hoist_field;
pub mod insert_field;
pub mod mask_field;
pub mod predicates;
pub mod replace_field;
pub mod routers;
pub mod set_schema_metadata;
pub mod timestamp_converter;
pub mod value_to_key;

mod chain;
mod java_regex;
mod require;
mod support;

use std::fmt;

use crate::data::DataError;
use crate::data::{SchemaRef, Value};
use crate::record::ConnectRecord;

pub use chain::{StepSeen, TransformChain, TransformLookup};
pub use java_regex::JavaRegex;
pub(crate) use require::*;
pub(crate) use support::{copy_struct, rebind_struct, Input, SideTransformation};

/// What a transformation may need to know about a record beyond the record itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordContext {
    /// The record's offset in its partition: set for records on their way to a sink task,
    /// `None` for records coming from a source task (Kafka's `SinkRecord` vs `SourceRecord`).
    pub kafka_offset: Option<i64>,
}

impl RecordContext {
    /// The context of a record delivered to a sink task.
    pub fn sink(kafka_offset: i64) -> Self {
        RecordContext {
            kafka_offset: Some(kafka_offset),
        }
    }

    /// The context of a record produced by a source task.
    pub fn source() -> Self {
        RecordContext { kafka_offset: None }
    }
}

/// One configured single message transform.
pub trait Transformation: Send + Sync + fmt::Debug {
    /// Transforms one record: `Ok(None)` drops it, `Err` carries Kafka's message.
    ///
    /// # Errors
    /// The message of the exception Kafka's transformation would throw.
    fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError>;
}

/// One configured predicate.
pub trait Predicate: Send + Sync + fmt::Debug {
    /// Whether the record matches.
    fn test(&self, record: &ConnectRecord) -> bool;
    /// [`Predicate::test`] for predicates that can fail (a plugin program's): the chain calls this one,
    /// and a failure is the stage's error, as an exception from Kafka's predicate is. The default never
    /// fails.
    ///
    /// # Errors
    /// Why the record could not be tested.
    fn try_test(&self, record: &ConnectRecord) -> Result<bool, DataError> {
        Ok(self.test(record))
    }
}

/// Which part of the record a `$Key` or `$Value` transformation works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The record key (`<Transform>$Key`).
    Key,
    /// The record value (`<Transform>$Value`).
    Value,
}

impl Side {
    /// The schema of this side of the record.
    pub fn schema(self, record: &ConnectRecord) -> Option<&SchemaRef> {
        match self {
            Side::Key => record.key_schema.as_ref(),
            Side::Value => record.value_schema.as_ref(),
        }
    }

    /// The data of this side of the record.
    pub fn value(self, record: &ConnectRecord) -> &Value {
        match self {
            Side::Key => &record.key,
            Side::Value => &record.value,
        }
    }

    /// The record with this side replaced (Kafka's `newRecord` of the variant).
    pub fn with(
        self,
        mut record: ConnectRecord,
        schema: Option<SchemaRef>,
        value: Value,
    ) -> ConnectRecord {
        match self {
            Side::Key => {
                record.key_schema = schema;
                record.key = value;
            }
            Side::Value => {
                record.value_schema = schema;
                record.value = value;
            }
        }
        record
    }

    /// The inner class suffix: `Key` or `Value`.
    pub fn suffix(self) -> &'static str {
        match self {
            Side::Key => "Key",
            Side::Value => "Value",
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Record builders shared by the transformation tests.
    use super::*;
    use std::collections::BTreeMap;

    pub use super::Transformation;
    pub(crate) use crate::data::test_util::*;

    /// A value-only record on `topic`.
    pub fn record(topic: &str, schema: Option<SchemaRef>, value: Value) -> ConnectRecord {
        ConnectRecord::new(topic, schema, value)
    }

    /// A key-only record.
    pub fn key_record(schema: Option<SchemaRef>, key: Value) -> ConnectRecord {
        let mut r = ConnectRecord::new("test", None, Value::Null);
        r.key_schema = schema;
        r.key = key;
        r
    }

    /// A schemaless map from string keys.
    pub fn map(entries: &[(&str, Value)]) -> Value {
        Value::Map(
            entries
                .iter()
                .map(|(k, v)| (Value::String(k.to_string()), v.clone()))
                .collect(),
        )
    }

    /// Props from pairs.
    pub fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A source-side context.
    pub fn source() -> RecordContext {
        RecordContext::source()
    }

    /// A value-only record on topic `t` holding a struct of `schema` with these fields set.
    pub fn struct_record(schema: SchemaRef, fields: &[(&str, Value)]) -> ConnectRecord {
        let s = struct_of(&schema, fields);
        record("t", Some(schema), Value::Struct(s))
    }

    /// Applies to a value-only schemaless record whose value is a map of these entries.
    pub fn apply_map(t: &dyn Transformation, entries: &[(&str, Value)]) -> ConnectRecord {
        apply_ok(t, record("t", None, map(entries)))
    }

    /// Applies and returns the error.
    pub fn apply_err(t: &dyn Transformation, r: ConnectRecord) -> String {
        t.apply(r, &source()).expect_err("apply fails").to_string()
    }

    /// Applies and unwraps a kept record.
    pub fn apply_ok(t: &dyn Transformation, r: ConnectRecord) -> ConnectRecord {
        t.apply(r, &source()).expect("apply").expect("kept")
    }
}
