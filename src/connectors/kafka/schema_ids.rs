//! Schema IDs translated between this worker's Schema Registry and a Kafka cluster's own registry.
//!
//! Records written by a registry converter (`AvroConverter`) carry Confluent's wire format: magic byte 0,
//! the schema's 4-byte big-endian ID, then the payload. The ID is the writing registry's. The Kafka sink
//! (`destination.schema.registry.url`) registers the schema of each local ID it meets in the destination
//! registry, under the same subject, its references first, once; the mapping is kept in the store, and
//! the header is rewritten before the record is produced. A key or value is taken as framed only when it
//! starts with byte 0 and the 4 bytes after it name an ID the local registry has: other bytes pass as
//! they are.
//!
//! The mirror source (`source.schema.registry.url`) does the reverse: a framed key or value whose ID the
//! source cluster's registry has gets its schema registered in the local registry, with the checks of
//! its REST API, and its ID rewritten before the record is stored.
//!
//! While the other registry cannot be reached (or answers 5xx, 408 or 429) the translation fails with a
//! retriable error: the sink does not produce the record nor commit its offset, the mirror keeps the
//! batch it consumed, and both try again (store-and-forward). No record leaves with an ID that was not
//! translated.

use std::collections::HashMap;

use crate::connectors::TaskError;
use crate::converters::registry::local;
pub(crate) use crate::converters::registry::other::other_registry;
use crate::converters::registry::other::{encode, version_of, OtherRegistry};
use crate::converters::registry::{frame, unframe};
use crate::storage::id_map::{IdDirection, LocalSchema};
use crate::storage::registry::{SchemaReference, StoredSchema};
use crate::storage::Store;

/// The prefix of the Kafka sink's keys of the destination registry (`url`, `basic.auth.*`).
pub const DESTINATION_PREFIX: &str = "destination.schema.registry.";
/// The prefix of the mirror source's keys of the source cluster's registry.
pub const SOURCE_PREFIX: &str = "source.schema.registry.";
/// How deep references may nest.
const MAX_DEPTH: usize = 16;

/// Which part of a record a framed payload is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Role {
    /// The key: TopicNameStrategy's subject `<topic>-key`.
    Key,
    /// The value: `<topic>-value`.
    Value,
}

/// Translates the IDs of framed keys and values for one task, with the mappings kept in the store.
#[derive(Debug)]
pub(crate) struct SchemaIds {
    store: Store,
    other: OtherRegistry,
    direction: IdDirection,
    /// ID → translated ID (`None`: the side translated from has no such ID, so not framed).
    ids: HashMap<i64, Option<i64>>,
    /// (subject, version) on the side translated from → the version on the other side.
    versions: HashMap<(String, i32), i32>,
}

impl SchemaIds {
    /// Translation from the local registry to `other` (the Kafka sink) or, `inbound`, from `other` to
    /// the local registry (the mirror source).
    pub(crate) fn new(store: Store, other: OtherRegistry, inbound: bool) -> SchemaIds {
        SchemaIds {
            store,
            other,
            direction: if inbound {
                IdDirection::In
            } else {
                IdDirection::Out
            },
            ids: HashMap::new(),
            versions: HashMap::new(),
        }
    }

    /// A schema of the side IDs are translated from, with the (subject, version) pairs using it; `None`
    /// when that registry has no such ID.
    fn source_schema(&self, id: i64) -> Result<Option<LocalSchema>, TaskError> {
        if self.direction == IdDirection::Out {
            return self
                .store
                .registry_schema_with_subjects_blocking(id)
                .map_err(Self::storage_error);
        }
        let get = |path: &str| self.other.call(reqwest::Method::GET, path, None);
        let Some(found) = get(&format!("/schemas/ids/{id}"))? else {
            return Ok(None);
        };
        let used_by = get(&format!("/schemas/ids/{id}/versions"))?.unwrap_or_default();
        let used_by = used_by
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| Some((v["subject"].as_str()?.to_string(), version_of(v)?)))
            .collect();
        Ok(Some((self.other.stored(id, &found)?, used_by)))
    }

    /// One version of a subject of the side IDs are translated from.
    fn source_version(&self, r: &SchemaReference) -> Result<StoredSchema, TaskError> {
        let unknown = |e: String| {
            TaskError::fatal(format!(
                "Reference '{}' ({} version {}): {e}",
                r.name, r.subject, r.version
            ))
        };
        if self.direction == IdDirection::Out {
            return self
                .store
                .registry_version_blocking(r.subject.clone(), r.version)
                .map_err(|e| unknown(e.to_string()));
        }
        let encoded = encode(&r.subject);
        let path = format!("/subjects/{encoded}/versions/{}", r.version);
        let found = self
            .other
            .call(reqwest::Method::GET, &path, None)?
            .ok_or_else(|| unknown(format!("not found in {}", self.other.url)))?;
        self.other
            .stored(found["id"].as_i64().unwrap_or(-1), &found)
    }

    /// Registers a schema on the side IDs are translated to: its ID and version there.
    fn register_target(
        &self,
        subject: &str,
        schema: &StoredSchema,
        refs: Vec<SchemaReference>,
    ) -> Result<(i64, i32), TaskError> {
        if self.direction == IdDirection::Out {
            return self.other.register(subject, schema, &refs);
        }
        local::register_blocking(&self.store, subject, &schema.schema_type, &schema.schema, refs)
            .map_err(|e| match e.status {
                500..=599 => Self::storage_error(e),
                _ => TaskError::Fatal(format!(
                    "Schema {} of {} cannot be registered under subject {subject} in this worker's registry: {e}",
                    schema.id, self.other.url
                )),
            })
    }

    /// The payload with its schema ID translated; `None` when it is not framed (left as it is).
    pub(crate) fn rewrite(
        &mut self,
        topic: &str,
        role: Role,
        data: &[u8],
    ) -> Result<Option<Vec<u8>>, TaskError> {
        let Ok((id, payload)) = unframe(data) else {
            return Ok(None);
        };
        let id = i64::from(id);
        let preferred = match role {
            Role::Key => format!("{topic}-key"),
            Role::Value => format!("{topic}-value"),
        };
        let Some(to) = self.translate(id, &preferred)? else {
            return Ok(None);
        };
        let to = u32::try_from(to).map_err(|_| {
            TaskError::fatal(format!(
                "The Schema Registry at {} gave ID {to}, which does not fit 4 bytes",
                self.other.url
            ))
        })?;
        let mut out = Vec::with_capacity(data.len());
        frame(to, &mut out);
        out.extend_from_slice(payload);
        Ok(Some(out))
    }

    fn storage_error(e: impl std::fmt::Display) -> TaskError {
        TaskError::Retriable(format!(
            "The schema ID mappings cannot be read or written: {e}"
        ))
    }

    /// The translation of a local ID (`None`: the local registry has no such ID).
    fn translate(&mut self, id: i64, preferred: &str) -> Result<Option<i64>, TaskError> {
        if let Some(known) = self.ids.get(&id) {
            return Ok(*known);
        }
        let kept = self
            .store
            .id_mapping_blocking(self.direction, &self.other.url, id)
            .map_err(Self::storage_error)?;
        if let Some(to) = kept {
            self.ids.insert(id, Some(to));
            return Ok(Some(to));
        }
        let Some((schema, used_by)) = self.source_schema(id)? else {
            self.ids.insert(id, None);
            return Ok(None);
        };
        let subject = used_by
            .iter()
            .map(|(s, _)| s)
            .find(|s| s.as_str() == preferred)
            .or_else(|| used_by.first().map(|(s, _)| s))
            .cloned()
            .ok_or_else(|| TaskError::fatal(format!("Schema ID {id} is under no subject")))?;
        let refs = self.references(&schema.references, 0)?;
        let (to, _) = self.register_target(&subject, &schema, refs)?;
        self.store
            .put_id_mapping_blocking(self.direction, &self.other.url, id, to)
            .map_err(Self::storage_error)?;
        tracing::info!(registry = %self.other.url, direction = ?self.direction, %subject, from = id, to, "Schema ID translated.");
        self.ids.insert(id, Some(to));
        Ok(Some(to))
    }

    /// The references as the other registry numbers their versions, each registered there first.
    fn references(
        &mut self,
        refs: &[SchemaReference],
        depth: usize,
    ) -> Result<Vec<SchemaReference>, TaskError> {
        if depth > MAX_DEPTH {
            return Err(TaskError::fatal("Schema references nest too deep"));
        }
        let mut out = Vec::with_capacity(refs.len());
        for r in refs {
            let key = (r.subject.clone(), r.version);
            let version = match self.versions.get(&key) {
                Some(v) => *v,
                None => {
                    let found = self.source_version(r)?;
                    let nested = self.references(&found.references, depth + 1)?;
                    let (_, version) = self.register_target(&r.subject, &found, nested)?;
                    self.versions.insert(key, version);
                    version
                }
            };
            out.push(SchemaReference {
                name: r.name.clone(),
                subject: r.subject.clone(),
                version,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::Props;
    use crate::converters::registry::other::failure;

    fn keys(pairs: &[(&str, &str)]) -> Props {
        crate::test_support::props(pairs)
    }

    #[test]
    fn the_other_registry_is_read_from_its_prefixed_keys() {
        assert!(other_registry(&keys(&[]), DESTINATION_PREFIX)
            .unwrap()
            .is_none());
        let empty = keys(&[("destination.schema.registry.url", " ")]);
        assert!(other_registry(&empty, DESTINATION_PREFIX)
            .unwrap()
            .is_none());
        let with_user = keys(&[(
            "source.schema.registry.url",
            "http://edge:secret@central:8081/,http://b:8081",
        )]);
        let other = other_registry(&with_user, SOURCE_PREFIX).unwrap().unwrap();
        assert_eq!(other.url, "http://central:8081", "kept without credentials");
        let user_info = keys(&[
            ("destination.schema.registry.url", "http://central:8081"),
            (
                "destination.schema.registry.basic.auth.credentials.source",
                "USER_INFO",
            ),
            (
                "destination.schema.registry.basic.auth.user.info",
                "edge:secret",
            ),
        ]);
        let other = other_registry(&user_info, DESTINATION_PREFIX)
            .unwrap()
            .unwrap();
        assert_eq!(
            other.client.config.user_info,
            Some(("edge".to_string(), "secret".to_string()))
        );
        let bad = keys(&[
            ("destination.schema.registry.url", "http://central:8081"),
            (
                "destination.schema.registry.basic.auth.credentials.source",
                "SASL_INHERIT",
            ),
        ]);
        let error = other_registry(&bad, DESTINATION_PREFIX).unwrap_err();
        assert!(
            error.contains("SASL_INHERIT") && error.contains(DESTINATION_PREFIX),
            "{error}"
        );
    }

    #[test]
    fn outages_are_retriable_and_refusals_are_not() {
        for status in [408, 429, 500, 503] {
            assert!(
                matches!(failure("u", status, "x"), TaskError::Retriable(_)),
                "{status}"
            );
        }
        for status in [401, 409, 422] {
            assert!(
                matches!(failure("u", status, "x"), TaskError::Fatal(_)),
                "{status}"
            );
        }
    }
}
