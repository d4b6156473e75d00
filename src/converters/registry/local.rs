//! Framed records shown decoded: a schema ID looked up in the local registry (the store, a database file
//! opened read-only, or a worker's REST API, behind [`SchemaLookup`]), parsed after the schemas its
//! references name, cached by ID (an ID never names another schema), and the payload decoded to JSON
//! by [`ParsedSchema::payload_to_json`]. Registering from inside the worker by the rules the REST API
//! applies: the parse after the referenced schemas, and the compatibility check run inside the
//! registering transaction (the REST routes use the same parts; the mirror source registers the schemas
//! of the records it brings in).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value as Json;

use super::kinds::{self, ParsedSchema, Referenced};
use super::unframe;
use super::Level;
use crate::storage::registry::{
    CompatibilityCheck, RegistryError, SchemaReference, StoredSchema, SubjectVersion,
};
use crate::storage::{LogReader, Store};

/// How deep references may nest.
pub const MAX_REFERENCE_DEPTH: usize = 32;

/// The most parsed schemas one cache keeps; past it the cache starts over.
const MAX_CACHED: usize = 1_000;

/// Where a reader of framed records finds the registry's schemas. Calls block.
pub trait SchemaLookup {
    /// The schema stored under an ID; `None` when no version uses it.
    ///
    /// # Errors
    /// The registry could not be read.
    fn schema(&self, id: i64) -> Result<Option<StoredSchema>, String>;
    /// A subject's version (soft-deleted ones too), `None` when there is none.
    ///
    /// # Errors
    /// The registry could not be read.
    fn version(&self, subject: &str, version: i32) -> Result<Option<StoredSchema>, String>;
    /// The first subject (by name) with a version using the ID.
    ///
    /// # Errors
    /// The registry could not be read.
    fn subject_of(&self, id: i64) -> Result<Option<String>, String>;
}

/// A registry answer with "not found" (a 404) as `None`.
fn found<T>(r: Result<T, RegistryError>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.status == 404 => Ok(None),
        Err(e) => Err(e.message),
    }
}

/// The worker's own store (call from a blocking thread).
impl SchemaLookup for Store {
    fn schema(&self, id: i64) -> Result<Option<StoredSchema>, String> {
        found(self.registry_schema_blocking(id))
    }
    fn version(&self, subject: &str, version: i32) -> Result<Option<StoredSchema>, String> {
        found(self.registry_version_blocking(subject.to_string(), version))
    }
    fn subject_of(&self, id: i64) -> Result<Option<String>, String> {
        self.registry_subject_of_blocking(id).map_err(|e| e.message)
    }
}

/// A database file opened read-only.
impl SchemaLookup for LogReader {
    fn schema(&self, id: i64) -> Result<Option<StoredSchema>, String> {
        found(self.registry_schema(id))
    }
    fn version(&self, subject: &str, version: i32) -> Result<Option<StoredSchema>, String> {
        found(self.registry_version(subject, version))
    }
    fn subject_of(&self, id: i64) -> Result<Option<String>, String> {
        self.registry_subject_of(id).map_err(|e| e.message)
    }
}

/// Parses a schema after the schemas it references (found through `resolve`), so the names they define
/// are known.
///
/// # Errors
/// Why the schema or one it references is invalid, or a reference that cannot be found.
pub fn parse_schema(
    schema_type: &str,
    text: &str,
    refs: &[SchemaReference],
    resolve: &dyn Fn(&str, i32) -> Option<StoredSchema>,
    depth: usize,
) -> Result<ParsedSchema, String> {
    if depth > MAX_REFERENCE_DEPTH {
        return Err("references nest too deep".into());
    }
    let mut known = Vec::with_capacity(refs.len());
    for r in refs {
        let stored = resolve(&r.subject, r.version).ok_or_else(|| {
            format!(
                "reference '{}' names subject '{}' version {}, which does not exist",
                r.name, r.subject, r.version
            )
        })?;
        let parsed = parse_schema(
            &stored.schema_type,
            &stored.schema,
            &stored.references,
            resolve,
            depth + 1,
        )?;
        known.push(Referenced {
            name: r.name.clone(),
            text: stored.schema,
            parsed,
        });
    }
    ParsedSchema::parse(schema_type, text, &known)
}

/// A schema of the registry, parsed.
#[derive(Debug)]
pub struct KnownSchema {
    /// Its global ID.
    pub id: i64,
    /// The first subject (by name) with a version using it.
    pub subject: Option<String>,
    /// The schema.
    pub parsed: ParsedSchema,
}

/// What framed bytes are shown as.
#[derive(Debug)]
pub enum Shown {
    /// Decoded along the schema the ID names.
    Decoded {
        /// The schema.
        schema: Arc<KnownSchema>,
        /// The payload as JSON.
        json: Json,
    },
    /// Not framed (no magic byte 0 and 4-byte ID): shown as they are.
    Unframed,
    /// Framed with an ID that cannot be decoded: why.
    Undecoded {
        /// The schema ID of the frame.
        id: i64,
        /// Why: the ID is unknown, its schema does not parse, the payload does not follow it.
        reason: String,
    },
}

/// Parsed schemas by ID.
#[derive(Debug, Default)]
pub struct LocalSchemas {
    cache: Mutex<HashMap<i64, Arc<KnownSchema>>>,
}

impl LocalSchemas {
    /// The cache of the store whose cluster ID is `key`, shared by the REST handlers of that store.
    pub fn shared(key: &str) -> Arc<LocalSchemas> {
        static ALL: OnceLock<Mutex<HashMap<String, Arc<LocalSchemas>>>> = OnceLock::new();
        let all = ALL.get_or_init(Mutex::default);
        let mut all = all
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.entry(key.to_string()).or_default().clone()
    }

    /// The schema an ID names, parsed (cached).
    ///
    /// # Errors
    /// The ID is unknown, the registry cannot be read, or the schema does not parse.
    pub fn schema(&self, lookup: &dyn SchemaLookup, id: i64) -> Result<Arc<KnownSchema>, String> {
        if let Some(known) = self.locked().get(&id) {
            return Ok(known.clone());
        }
        let stored = lookup
            .schema(id)?
            .ok_or_else(|| format!("schema ID {id} is not in the registry"))?;
        let resolve = |s: &str, v: i32| lookup.version(s, v).ok().flatten();
        let parsed = parse_schema(
            &stored.schema_type,
            &stored.schema,
            &stored.references,
            &resolve,
            0,
        )
        .map_err(|e| format!("schema ID {id} cannot be parsed: {e}"))?;
        let known = Arc::new(KnownSchema {
            id,
            subject: lookup.subject_of(id)?,
            parsed,
        });
        let mut cache = self.locked();
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(id, known.clone());
        Ok(known)
    }

    /// Framed `bytes` decoded along the schema their ID names.
    pub fn show(&self, lookup: &dyn SchemaLookup, bytes: &[u8]) -> Shown {
        let Ok((id, payload)) = unframe(bytes) else {
            return Shown::Unframed;
        };
        let id = i64::from(id);
        let decoded = self.schema(lookup, id).and_then(|schema| {
            let json = schema.parsed.payload_to_json(payload)?;
            Ok(Shown::Decoded { schema, json })
        });
        decoded.unwrap_or_else(|reason| Shown::Undecoded { id, reason })
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Arc<KnownSchema>>> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Parses stored versions of the new schema's type; one that no longer parses (it cannot be, it was
/// checked) is left out.
pub fn parse_versions(
    schema_type: &str,
    live: &[SubjectVersion],
    resolve: &dyn Fn(&str, i32) -> Option<StoredSchema>,
) -> Vec<ParsedSchema> {
    live.iter()
        .filter(|v| v.schema.schema_type == schema_type)
        .filter_map(|v| {
            parse_schema(
                schema_type,
                &v.schema.schema,
                &v.schema.references,
                resolve,
                0,
            )
            .ok()
        })
        .collect()
}

/// The check run inside the registering transaction: the new schema against the subject's versions at the
/// level in force.
pub fn compatibility_check(subject: String, parsed: ParsedSchema) -> CompatibilityCheck {
    Box::new(move |level, live, resolve| {
        let level = Level::parse(level).unwrap_or(Level::Backward);
        let previous = parse_versions(parsed.schema_type(), live, resolve);
        let messages = kinds::check(level, &parsed, &previous);
        if messages.is_empty() {
            return Ok(());
        }
        Err(RegistryError::new(
            409,
            409,
            format!(
                "Schema being registered is incompatible with an earlier schema for subject \"{subject}\", details: [{}]",
                messages.join(", ")
            ),
        ))
    })
}

/// Registers a schema under `subject` in the embedded registry from a task thread (blocks), with the
/// REST API's checks: parsed after what its references name (which must be there already), canonical
/// text, the subject's compatibility level and mode. Answers its ID and version.
///
/// # Errors
/// The registry's error, with Confluent's code (42201 invalid, 409 incompatible, 42205 mode).
#[cfg(feature = "kafka-client")]
pub fn register_blocking(
    store: &crate::storage::Store,
    subject: &str,
    schema_type: &str,
    text: &str,
    references: Vec<SchemaReference>,
) -> Result<(i64, i32), RegistryError> {
    let resolve = |s: &str, v: i32| store.registry_version_blocking(s.to_string(), v).ok();
    let parsed = parse_schema(schema_type, text, &references, &resolve, 0)
        .map_err(|e| RegistryError::new(422, 42201, format!("Invalid schema: {e}")))?;
    let reg = crate::storage::registry::Registration {
        schema_type: schema_type.to_string(),
        schema: parsed.canonical(),
        references,
        id: None,
        version: None,
    };
    store.registry_register_blocking(
        subject.to_string(),
        reg,
        compatibility_check(subject.to_string(), parsed),
    )
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use serde_json::json;

    use super::*;

    /// Two schemas: ID 1 (`orders-value` version 1, a record) and ID 2 (`boxes-value`, referencing it);
    /// counts the lookups by ID.
    struct Fake {
        by_id: Cell<usize>,
    }

    const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"}]}"#;

    fn stored(id: i64) -> Option<StoredSchema> {
        let (schema, references) = match id {
            1 => (ORDER.to_string(), Vec::new()),
            2 => (
                r#"{"type":"record","name":"Box","namespace":"shop","fields":[{"name":"o","type":"shop.Order"}]}"#
                    .to_string(),
                vec![SchemaReference {
                    name: "shop.Order".into(),
                    subject: "orders-value".into(),
                    version: 1,
                }],
            ),
            _ => return None,
        };
        Some(StoredSchema {
            id,
            schema_type: "AVRO".into(),
            schema,
            references,
        })
    }

    impl SchemaLookup for Fake {
        fn schema(&self, id: i64) -> Result<Option<StoredSchema>, String> {
            self.by_id.set(self.by_id.get() + 1);
            Ok(stored(id))
        }
        fn version(&self, subject: &str, version: i32) -> Result<Option<StoredSchema>, String> {
            Ok((subject == "orders-value" && version == 1)
                .then(|| stored(1))
                .flatten())
        }
        fn subject_of(&self, id: i64) -> Result<Option<String>, String> {
            Ok(Some(
                if id == 1 {
                    "orders-value"
                } else {
                    "boxes-value"
                }
                .into(),
            ))
        }
    }

    fn framed(id: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        super::super::frame(id, &mut out);
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn framed_bytes_are_decoded_with_references_and_the_schema_is_cached() {
        let lookup = Fake {
            by_id: Cell::new(0),
        };
        let schemas = LocalSchemas::default();
        // A Box holding Order{id: 3}: the long 3 is the zig-zag varint 6.
        for _ in 0..2 {
            match schemas.show(&lookup, &framed(2, &[6])) {
                Shown::Decoded { schema, json } => {
                    assert_eq!(json, json!({"o": {"id": 3}}));
                    assert_eq!(
                        (schema.id, schema.subject.as_deref()),
                        (2, Some("boxes-value"))
                    );
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(lookup.by_id.get(), 1, "the second record used the cache");
        assert!(matches!(schemas.show(&lookup, b"plain"), Shown::Unframed));
        match schemas.show(&lookup, &framed(9, &[6])) {
            Shown::Undecoded { id, reason } => {
                assert_eq!(id, 9);
                assert!(reason.contains("not in the registry"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match schemas.show(&lookup, &framed(1, &[6, 0])) {
            Shown::Undecoded { reason, .. } => assert!(reason.contains("left over"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
}
