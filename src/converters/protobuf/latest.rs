//! `use.latest.version` (with `auto.register.schemas=false`, as Confluent's): a record is written with
//! its subject's latest schema, read from the registry once per subject and kept. The message written is
//! the latest schema's message of the record's message's name (its full name, else its simple name,
//! else the file's first message); the record's value is projected onto that message's Connect form.
//! With `latest.compatibility.strict` (the default) the latest schema must read what the record's own
//! schema writes, by the registry's Protobuf rules.

use std::sync::Arc;

use prost_reflect::MessageDescriptor;

use super::compat;
use super::connect::message_schema;
use super::converter::{ProtobufConverter, Written};
use super::schema::ProtoSchema;
use crate::converters::registry::client::strict_check;
use crate::data::{DataError, SchemaRef};

/// A subject's latest version as records are written with it.
#[derive(Debug)]
pub(super) struct Latest {
    /// Its schema ID.
    pub(super) id: u32,
    /// The schema, compiled.
    pub(super) schema: ProtoSchema,
    /// The message records are written as.
    pub(super) desc: MessageDescriptor,
    /// That message's indexes.
    pub(super) indexes: Vec<i32>,
    /// That message's Connect schema, which records are projected onto.
    pub(super) connect: SchemaRef,
}

/// The latest schema's message for a record whose own message is `full`.
fn message_for(schema: &ProtoSchema, full: &str) -> Option<MessageDescriptor> {
    let pool = schema.file.parent_pool();
    if let Some(m) = pool
        .get_message_by_name(full)
        .filter(|m| m.parent_file() == schema.file)
    {
        return Some(m);
    }
    let simple = full.rsplit('.').next().unwrap_or(full);
    let mut todo: Vec<MessageDescriptor> = schema.file.messages().collect();
    while let Some(m) = todo.pop() {
        if m.name() == simple {
            return Some(m);
        }
        todo.extend(m.child_messages());
    }
    schema.file.messages().next()
}

impl ProtobufConverter {
    /// `use.latest.version`: the subject's latest schema, which must read the record's own when
    /// `latest.compatibility.strict`.
    pub(super) fn latest(&self, subject: &str, own: &Written) -> Result<Arc<Latest>, DataError> {
        let latest = self
            .registry
            .latest_cached(&self.latest, subject, |id, fetched, what| {
                let schema = self.parse_fetched(fetched, what)?;
                let desc = message_for(&schema, &own.full).ok_or_else(|| {
                    DataError::new(format!("The schema with {what} has no message"))
                })?;
                Ok(Arc::new(Latest {
                    id,
                    indexes: schema.indexes_of(&desc),
                    connect: message_schema(&desc, self.read),
                    schema,
                    desc,
                }))
            })?;
        if self.strict {
            strict_check(
                subject,
                latest.id,
                &compat::can_read(&latest.schema, &own.compiled),
            )?;
        }
        Ok(latest)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn the_latest_message_is_found_by_full_then_simple_name_then_first() {
        let text = "syntax = \"proto3\";\npackage ex;\nmessage A { int32 x = 1; }\nmessage B { message C { int32 y = 1; } }\n";
        let schema = ProtoSchema::parse(text, BTreeMap::new()).unwrap();
        let found = |full: &str| message_for(&schema, full).unwrap().full_name().to_string();
        assert_eq!(found("ex.B"), "ex.B");
        assert_eq!(found("other.C"), "ex.B.C");
        assert_eq!(found("ConnectDefault1"), "ex.A");
        assert_eq!(
            schema.indexes_of(&message_for(&schema, "C").unwrap()),
            [1, 0]
        );
    }
}
