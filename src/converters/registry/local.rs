//! Registering in the embedded Schema Registry from inside the worker, by the rules its REST API
//! applies: a schema parsed by its type after the schemas its references name, and the compatibility
//! check run inside the registering transaction. The REST routes use the same parts; the mirror source
//! registers the schemas of the records it brings in (see `connectors::kafka::schema_ids`).

use super::kinds::{self, ParsedSchema, Referenced};
use super::Level;
use crate::storage::registry::{
    CompatibilityCheck, RegistryError, SchemaReference, StoredSchema, SubjectVersion,
};

/// How deep references may nest.
pub const MAX_REFERENCE_DEPTH: usize = 32;

/// Parses a schema after the schemas it references (found through `resolve`), so the names they define
/// are known.
pub fn parse_schema(
    schema_type: &str,
    text: &str,
    refs: &[SchemaReference],
    resolve: &dyn Fn(&str, i32) -> Option<StoredSchema>,
    depth: usize,
) -> std::result::Result<ParsedSchema, String> {
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
    let resolve = |s: &str, v: i32| store.registry_version_blocking(s, v).ok();
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
