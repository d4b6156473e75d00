//! Schema IDs translated between this worker's Schema Registry and another one (`registry_id_map`), and
//! the blocking reads of the local registry the translating tasks make from their threads. A mapping is
//! written through the writer thread once the other registry answered it, and never changed after.

use rusqlite::{params, Connection, OptionalExtension};

use super::registry::{
    register, schema_by_id, versions_of_id, CompatibilityCheck, Registration, RegistryError,
    StoredSchema,
};
use super::{StorageError, Store};

/// Which way a mapping translates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdDirection {
    /// A local ID to another registry's (the Kafka sink's destination registry).
    Out,
    /// Another registry's ID to a local one (the mirror source's source registry).
    In,
}

impl IdDirection {
    fn column(self) -> &'static str {
        match self {
            IdDirection::Out => "out",
            IdDirection::In => "in",
        }
    }
}

/// A local schema with the (subject, version) pairs using it, soft-deleted ones included.
pub type LocalSchema = (StoredSchema, Vec<(String, i32)>);

impl Store {
    /// The ID `from` translates to in `direction` with the registry at `registry`, if known (blocks).
    pub fn id_mapping_blocking(
        &self,
        direction: IdDirection,
        registry: &str,
        from: i64,
    ) -> Result<Option<i64>, StorageError> {
        let registry = registry.to_string();
        self.reader.call_blocking(move |c: &Connection| {
            Ok(c.prepare_cached(
                "SELECT to_id FROM registry_id_map WHERE direction = ?1 AND registry = ?2 AND from_id = ?3",
            )?
            .query_row(params![direction.column(), registry, from], |r| r.get(0))
            .optional()?)
        })
    }

    /// Keeps a translation (blocks until committed). A mapping already kept is left as it is.
    pub fn put_id_mapping_blocking(
        &self,
        direction: IdDirection,
        registry: &str,
        from: i64,
        to: i64,
    ) -> Result<(), StorageError> {
        let registry = registry.to_string();
        self.writer.call_blocking(move |c: &Connection| {
            c.prepare_cached(
                "INSERT OR IGNORE INTO registry_id_map (direction, registry, from_id, to_id)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![direction.column(), registry, from, to])?;
            Ok(())
        })
    }

    /// A local schema by ID with the subject versions using it; `None` when no version (live or
    /// soft-deleted) uses that ID (blocks).
    pub fn registry_schema_with_subjects_blocking(
        &self,
        id: i64,
    ) -> Result<Option<LocalSchema>, RegistryError> {
        let read = self.reader.call_blocking(move |c: &Connection| {
            Ok((|| {
                let schema = match schema_by_id(c, id) {
                    Ok(s) => s,
                    Err(e) if e.code == 40403 => return Ok(None),
                    Err(e) => return Err(e),
                };
                Ok(Some((schema, versions_of_id(c, id, true)?)))
            })())
        });
        read.map_err(RegistryError::from)?
    }

    /// Registers a schema under a subject from a task thread (blocks until committed); see
    /// [`Store::registry_register`].
    pub fn registry_register_blocking(
        &self,
        subject: String,
        reg: Registration,
        check: CompatibilityCheck,
    ) -> Result<(i64, i32), RegistryError> {
        let done = self
            .writer
            .call_blocking(move |c: &Connection| Ok(register(c, &subject, &reg, check)));
        done.map_err(RegistryError::from)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{StoreOptions, Synchronous};

    #[test]
    fn a_mapping_is_kept_once_per_direction_and_registry() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&StoreOptions {
            path: dir.path().join("t.db"),
            synchronous: Synchronous::Normal,
            max_bytes: None,
            buffer: None,
        })
        .unwrap();
        let central = "http://central:8081";
        assert_eq!(
            store
                .id_mapping_blocking(IdDirection::Out, central, 1)
                .unwrap(),
            None
        );
        store
            .put_id_mapping_blocking(IdDirection::Out, central, 1, 7)
            .unwrap();
        // A second answer for the same ID does not replace the first.
        store
            .put_id_mapping_blocking(IdDirection::Out, central, 1, 9)
            .unwrap();
        store
            .put_id_mapping_blocking(IdDirection::In, central, 1, 3)
            .unwrap();
        assert_eq!(
            store.registry_schema_with_subjects_blocking(1).unwrap(),
            None
        );
        assert_eq!(
            store
                .id_mapping_blocking(IdDirection::Out, central, 1)
                .unwrap(),
            Some(7)
        );
        assert_eq!(
            store
                .id_mapping_blocking(IdDirection::In, central, 1)
                .unwrap(),
            Some(3)
        );
        let other = "http://other:8081";
        assert_eq!(
            store
                .id_mapping_blocking(IdDirection::Out, other, 1)
                .unwrap(),
            None
        );
    }
}
