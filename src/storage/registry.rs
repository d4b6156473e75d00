//! The embedded Schema Registry's state: schemas under global IDs, the versions of each subject with soft
//! and permanent deletes, references between schemas, and the compatibility level and mode (global and
//! per subject). Writes go through the writer thread, so a registered schema is on disk before its ID is
//! answered; a registration runs its compatibility check inside the same transaction, so concurrent
//! registrations of one schema get one ID. Schema rows are never deleted: an ID never names another
//! schema, even after a permanent delete.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{StorageError, Store};

/// A reference from a schema to another subject's version, under the name the schema uses for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaReference {
    /// The name the referencing schema uses (an Avro full name, a .proto file name, a JSON `$ref`).
    pub name: String,
    /// The subject referenced.
    pub subject: String,
    /// The version referenced.
    pub version: i32,
}

/// A schema as stored under its global ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSchema {
    /// The global ID.
    pub id: i64,
    /// `AVRO`, `PROTOBUF` or `JSON`.
    pub schema_type: String,
    /// The schema's text as registered (canonical for Avro).
    pub schema: String,
    /// What it references.
    pub references: Vec<SchemaReference>,
}

/// One version of a subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectVersion {
    /// The subject.
    pub subject: String,
    /// The version, from 1.
    pub version: i32,
    /// Whether it is soft-deleted.
    pub deleted: bool,
    /// Its schema.
    pub schema: StoredSchema,
}

/// A failure as the Schema Registry reports it: an HTTP status and Confluent's error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RegistryError {
    /// The HTTP status.
    pub status: u16,
    /// Confluent's `error_code`.
    pub code: u32,
    /// The message.
    pub message: String,
}

impl RegistryError {
    /// An error with its status and code.
    pub fn new(status: u16, code: u32, message: impl Into<String>) -> RegistryError {
        RegistryError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 40401.
    pub fn subject_not_found(subject: &str) -> RegistryError {
        RegistryError::new(404, 40401, format!("Subject '{subject}' not found."))
    }

    /// 40402.
    pub fn version_not_found(version: i32) -> RegistryError {
        RegistryError::new(404, 40402, format!("Version {version} not found."))
    }

    /// 40403.
    pub fn schema_not_found(what: impl std::fmt::Display) -> RegistryError {
        RegistryError::new(404, 40403, format!("Schema {what} not found"))
    }

    /// 42205: the mode does not allow the operation.
    pub fn not_permitted(message: impl Into<String>) -> RegistryError {
        RegistryError::new(422, 42205, message)
    }
}

impl From<StorageError> for RegistryError {
    fn from(e: StorageError) -> Self {
        RegistryError::new(500, 50001, format!("Error in the backend data store: {e}"))
    }
}

impl From<rusqlite::Error> for RegistryError {
    fn from(e: rusqlite::Error) -> Self {
        StorageError::from(e).into()
    }
}

/// A schema to register under a subject.
#[derive(Clone, Debug)]
pub struct Registration {
    /// `AVRO`, `PROTOBUF` or `JSON`.
    pub schema_type: String,
    /// The schema's text as it is to be stored.
    pub schema: String,
    /// What it references.
    pub references: Vec<SchemaReference>,
    /// The ID the caller gives (IMPORT mode only).
    pub id: Option<i64>,
    /// The version the caller gives (IMPORT mode only).
    pub version: Option<i32>,
}

impl Registration {
    fn fingerprint(&self) -> String {
        fingerprint(&self.schema_type, &self.schema, &self.references)
    }
}

fn fingerprint(schema_type: &str, schema: &str, references: &[SchemaReference]) -> String {
    let refs = serde_json::to_string(references).unwrap_or_default();
    format!("{schema_type}\n{refs}\n{schema}")
}

/// Finds the schema of a subject's version (soft-deleted ones too): what a check needs to read schemas
/// with references.
pub type Resolve<'a> = &'a dyn Fn(&str, i32) -> Option<StoredSchema>;

/// Decides whether a new schema may follow a subject's versions: given the compatibility level in force,
/// the subject's live versions, oldest first, and a way to find the schemas they reference.
pub type CompatibilityCheck =
    Box<dyn FnOnce(&str, &[SubjectVersion], Resolve<'_>) -> Result<(), RegistryError> + Send>;

/// The default compatibility level.
pub const DEFAULT_COMPATIBILITY: &str = "BACKWARD";
/// The default mode.
pub const DEFAULT_MODE: &str = "READWRITE";

/// Where a setting applies: the global row is the subject ''.
fn config_key(subject: Option<&str>) -> &str {
    subject.unwrap_or("")
}

fn get_setting(
    conn: &Connection,
    subject: Option<&str>,
    column: &str,
) -> Result<Option<String>, RegistryError> {
    let sql = format!("SELECT {column} FROM registry_config WHERE subject = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([config_key(subject)], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
}

fn set_setting(
    conn: &Connection,
    subject: Option<&str>,
    column: &str,
    value: Option<&str>,
) -> Result<Option<String>, RegistryError> {
    let before = get_setting(conn, subject, column)?;
    let sql = format!(
        "INSERT INTO registry_config (subject, {column}) VALUES (?1, ?2)
         ON CONFLICT (subject) DO UPDATE SET {column} = excluded.{column}"
    );
    conn.prepare_cached(&sql)?
        .execute(params![config_key(subject), value])?;
    conn.prepare_cached(
        "DELETE FROM registry_config WHERE compatibility IS NULL AND mode IS NULL",
    )?
    .execute([])?;
    Ok(before)
}

/// The setting in force for a subject: its own, else the global one, else `default`.
fn effective(
    conn: &Connection,
    subject: &str,
    column: &str,
    default: &str,
) -> Result<String, RegistryError> {
    Ok(match get_setting(conn, Some(subject), column)? {
        Some(v) => v,
        None => get_setting(conn, None, column)?.unwrap_or_else(|| default.to_string()),
    })
}

fn read_schema(conn: &Connection, id: i64) -> Result<Option<StoredSchema>, RegistryError> {
    let row = conn
        .prepare_cached("SELECT schema_type, schema, refs FROM registry_schemas WHERE id = ?1")?
        .query_row([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .optional()?;
    let Some((schema_type, schema, refs)) = row else {
        return Ok(None);
    };
    let references = serde_json::from_str(&refs).map_err(StorageError::from)?;
    Ok(Some(StoredSchema {
        id,
        schema_type,
        schema,
        references,
    }))
}

/// A subject's versions, oldest first; soft-deleted ones only when `deleted`.
fn versions(
    conn: &Connection,
    subject: &str,
    deleted: bool,
) -> Result<Vec<SubjectVersion>, RegistryError> {
    let rows = conn
        .prepare_cached(
            "SELECT version, schema_id, deleted FROM registry_versions
             WHERE subject = ?1 AND (?2 OR deleted = 0) ORDER BY version",
        )?
        .query_map(params![subject, deleted], |r| {
            Ok((
                r.get::<_, i32>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, bool>(2)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(version, id, deleted)| {
            let schema =
                read_schema(conn, id)?.ok_or_else(|| RegistryError::schema_not_found(id))?;
            Ok(SubjectVersion {
                subject: subject.to_string(),
                version,
                deleted,
                schema,
            })
        })
        .collect()
}

fn subjects(conn: &Connection, deleted: bool) -> Result<Vec<String>, RegistryError> {
    Ok(conn
        .prepare_cached(
            "SELECT DISTINCT subject FROM registry_versions WHERE ?1 OR deleted = 0 ORDER BY subject",
        )?
        .query_map([deleted], |r| r.get(0))?
        .collect::<Result<Vec<_>, _>>()?)
}

/// A version of a subject: `None` is the latest live one. Soft-deleted versions only when `deleted`.
pub(super) fn version(
    conn: &Connection,
    subject: &str,
    wanted: Option<i32>,
    deleted: bool,
) -> Result<SubjectVersion, RegistryError> {
    let all = versions(conn, subject, true)?;
    if all.is_empty() || (!deleted && all.iter().all(|v| v.deleted)) {
        return Err(RegistryError::subject_not_found(subject));
    }
    let found = match wanted {
        None => all.into_iter().rev().find(|v| deleted || !v.deleted),
        Some(n) => all
            .into_iter()
            .find(|v| v.version == n && (deleted || !v.deleted)),
    };
    found.ok_or_else(|| RegistryError::version_not_found(wanted.unwrap_or(-1)))
}

fn check_mode_allows_writes(conn: &Connection, subject: &str) -> Result<String, RegistryError> {
    let mode = effective(conn, subject, "mode", DEFAULT_MODE)?;
    if mode.starts_with("READONLY") {
        return Err(RegistryError::not_permitted(format!(
            "Subject {subject} is in read-only mode"
        )));
    }
    Ok(mode)
}

/// Checks that every reference names a live version, so a schema never references nothing.
fn check_references(conn: &Connection, refs: &[SchemaReference]) -> Result<(), RegistryError> {
    for r in refs {
        version(conn, &r.subject, Some(r.version), false).map_err(|_| {
            RegistryError::new(
                422,
                42201,
                format!(
                    "Invalid schema: reference '{}' names subject '{}' version {}, which does not exist",
                    r.name, r.subject, r.version
                ),
            )
        })?;
    }
    Ok(())
}

/// The ID a new schema gets: the caller's in IMPORT mode (refused when it names another schema), else
/// that of the same schema registered before, else one above every ID ever given.
fn assign_id(conn: &Connection, reg: &Registration) -> Result<i64, RegistryError> {
    let print = reg.fingerprint();
    if let Some(id) = reg.id {
        return match read_schema(conn, id)? {
            Some(s) if fingerprint(&s.schema_type, &s.schema, &s.references) != print => {
                Err(RegistryError::not_permitted(format!(
                    "Overwrite new schema with id {id} is not permitted."
                )))
            }
            Some(_) => Ok(id),
            None => insert_schema(conn, Some(id), reg, &print),
        };
    }
    let known: Option<i64> = conn
        .prepare_cached("SELECT min(id) FROM registry_schemas WHERE fingerprint = ?1")?
        .query_row([&print], |r| r.get(0))?;
    match known {
        Some(id) => Ok(id),
        None => insert_schema(conn, None, reg, &print),
    }
}

fn insert_schema(
    conn: &Connection,
    id: Option<i64>,
    reg: &Registration,
    print: &str,
) -> Result<i64, RegistryError> {
    let id = match id {
        Some(id) => id,
        None => conn
            .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM registry_schemas")?
            .query_row([], |r| r.get(0))?,
    };
    let refs = serde_json::to_string(&reg.references).map_err(StorageError::from)?;
    conn.prepare_cached(
        "INSERT INTO registry_schemas (id, schema_type, schema, refs, fingerprint) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![id, reg.schema_type, reg.schema, refs, print])?;
    let mut stmt = conn.prepare_cached(
        "INSERT OR IGNORE INTO registry_references (schema_id, name, ref_subject, ref_version) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for r in &reg.references {
        stmt.execute(params![id, r.name, r.subject, r.version])?;
    }
    Ok(id)
}

/// Registers `reg` under `subject`: the ID and version it has when the subject already holds it live,
/// else a new version after `check` (skipped in IMPORT mode).
pub(super) fn register(
    conn: &Connection,
    subject: &str,
    reg: &Registration,
    check: CompatibilityCheck,
) -> Result<(i64, i32), RegistryError> {
    let mode = check_mode_allows_writes(conn, subject)?;
    let import = mode == "IMPORT";
    if reg.id.is_some() && !import {
        return Err(RegistryError::not_permitted(format!(
            "Subject {subject} is not in import mode; a schema ID may be given only in IMPORT mode"
        )));
    }
    check_references(conn, &reg.references)?;
    let live = versions(conn, subject, false)?;
    let print = reg.fingerprint();
    if let Some(v) = live.iter().find(|v| {
        fingerprint(
            &v.schema.schema_type,
            &v.schema.schema,
            &v.schema.references,
        ) == print
            && reg.id.is_none_or(|id| id == v.schema.id)
    }) {
        return Ok((v.schema.id, v.version));
    }
    if !import {
        let level = effective(conn, subject, "compatibility", DEFAULT_COMPATIBILITY)?;
        let resolve = |s: &str, v: i32| version(conn, s, Some(v), true).ok().map(|v| v.schema);
        check(&level, &live, &resolve)?;
    }
    let id = assign_id(conn, reg)?;
    let next: i32 = conn
        .prepare_cached(
            "SELECT coalesce(max(version), 0) + 1 FROM registry_versions WHERE subject = ?1",
        )?
        .query_row([subject], |r| r.get(0))?;
    let version = match reg.version {
        Some(v) if v < next => {
            return Err(RegistryError::new(
                422,
                42202,
                format!(
                    "Version {v} of subject {subject} already exists; the next version is {next}"
                ),
            ))
        }
        Some(v) => v,
        None => next,
    };
    conn.prepare_cached(
        "INSERT INTO registry_versions (subject, version, schema_id, deleted, created_ms) VALUES (?1, ?2, ?3, 0, ?4)",
    )?
    .execute(params![subject, version, id, crate::model::now_ms()])?;
    Ok((id, version))
}

/// The live schemas that reference a subject's version (their IDs).
fn referenced_by(
    conn: &Connection,
    subject: &str,
    version: i32,
) -> Result<Vec<i64>, RegistryError> {
    Ok(conn
        .prepare_cached(
            "SELECT DISTINCT r.schema_id FROM registry_references r
             JOIN registry_versions v ON v.schema_id = r.schema_id
             WHERE r.ref_subject = ?1 AND r.ref_version = ?2 ORDER BY r.schema_id",
        )?
        .query_map(params![subject, version], |r| r.get(0))?
        .collect::<Result<Vec<_>, _>>()?)
}

fn refuse_if_referenced(
    conn: &Connection,
    subject: &str,
    version: i32,
) -> Result<(), RegistryError> {
    if referenced_by(conn, subject, version)?.is_empty() {
        Ok(())
    } else {
        Err(RegistryError::new(
            422,
            42206,
            format!("One or more references exist to the schema {{subject={subject},version={version}}}."),
        ))
    }
}

/// Deletes a subject: soft (its live versions marked deleted) or permanent (its soft-deleted versions
/// removed). Returns the versions deleted.
fn delete_subject(
    conn: &Connection,
    subject: &str,
    permanent: bool,
) -> Result<Vec<i32>, RegistryError> {
    check_mode_allows_writes(conn, subject)?;
    let all = versions(conn, subject, true)?;
    if all.is_empty() {
        return Err(RegistryError::subject_not_found(subject));
    }
    let live: Vec<i32> = all
        .iter()
        .filter(|v| !v.deleted)
        .map(|v| v.version)
        .collect();
    for v in &all {
        refuse_if_referenced(conn, subject, v.version)?;
    }
    if permanent {
        if !live.is_empty() {
            return Err(RegistryError::new(
                404,
                40405,
                format!(
                    "Subject '{subject}' was not deleted first before being permanently deleted"
                ),
            ));
        }
        conn.prepare_cached("DELETE FROM registry_versions WHERE subject = ?1")?
            .execute([subject])?;
        conn.prepare_cached("DELETE FROM registry_config WHERE subject = ?1")?
            .execute([subject])?;
        return Ok(all.iter().map(|v| v.version).collect());
    }
    if live.is_empty() {
        return Err(RegistryError::new(
            404,
            40404,
            format!(
                "Subject '{subject}' was soft deleted.Set permanent=true to delete permanently"
            ),
        ));
    }
    conn.prepare_cached("UPDATE registry_versions SET deleted = 1 WHERE subject = ?1")?
        .execute([subject])?;
    Ok(live)
}

/// Deletes one version (`None`: the latest live one), soft or permanent. Returns its number.
fn delete_version(
    conn: &Connection,
    subject: &str,
    wanted: Option<i32>,
    permanent: bool,
) -> Result<i32, RegistryError> {
    check_mode_allows_writes(conn, subject)?;
    let v = version(conn, subject, wanted, permanent)?;
    refuse_if_referenced(conn, subject, v.version)?;
    if permanent {
        if !v.deleted {
            return Err(RegistryError::new(
                404,
                40407,
                format!(
                    "Subject '{subject}' Version {} was not deleted first before being permanently deleted",
                    v.version
                ),
            ));
        }
        conn.prepare_cached("DELETE FROM registry_versions WHERE subject = ?1 AND version = ?2")?
            .execute(params![subject, v.version])?;
    } else {
        conn.prepare_cached(
            "UPDATE registry_versions SET deleted = 1 WHERE subject = ?1 AND version = ?2",
        )?
        .execute(params![subject, v.version])?;
    }
    Ok(v.version)
}

/// The (subject, version, deleted) pairs that use a schema ID.
pub(super) fn versions_of_id(
    conn: &Connection,
    id: i64,
    deleted: bool,
) -> Result<Vec<(String, i32)>, RegistryError> {
    Ok(conn
        .prepare_cached(
            "SELECT subject, version FROM registry_versions WHERE schema_id = ?1 AND (?2 OR deleted = 0)
             ORDER BY subject, version",
        )?
        .query_map(params![id, deleted], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<Vec<_>, _>>()?)
}

/// A schema by ID while some version (live or soft-deleted) uses it.
pub(super) fn schema_by_id(conn: &Connection, id: i64) -> Result<StoredSchema, RegistryError> {
    if versions_of_id(conn, id, true)?.is_empty() {
        return Err(RegistryError::schema_not_found(id));
    }
    read_schema(conn, id)?.ok_or_else(|| RegistryError::schema_not_found(id))
}

/// Finds `reg` among a subject's versions (soft-deleted ones too when `deleted`).
fn lookup(
    conn: &Connection,
    subject: &str,
    reg: &Registration,
    deleted: bool,
) -> Result<SubjectVersion, RegistryError> {
    let all = versions(conn, subject, deleted)?;
    if all.is_empty() {
        return Err(RegistryError::subject_not_found(subject));
    }
    let print = reg.fingerprint();
    all.into_iter()
        .rev()
        .find(|v| {
            fingerprint(
                &v.schema.schema_type,
                &v.schema.schema,
                &v.schema.references,
            ) == print
        })
        .ok_or_else(|| RegistryError::schema_not_found("not"))
}

type Outcome<T> = Result<T, RegistryError>;

/// Runs a registry read or write on one of the store's threads; the registry's own error rides inside.
macro_rules! registry_call {
    ($thread:expr, $f:expr) => {{
        let f = $f;
        match $thread.call(move |c| Ok(f(c))).await {
            Ok(r) => r,
            Err(e) => Err(RegistryError::from(e)),
        }
    }};
}

impl Store {
    /// Registers a schema under a subject (see [`Registration`]); answers its ID and version once committed.
    pub async fn registry_register(
        &self,
        subject: String,
        reg: Registration,
        check: CompatibilityCheck,
    ) -> Outcome<(i64, i32)> {
        registry_call!(self.writer, move |c: &Connection| register(
            c, &subject, &reg, check
        ))
    }

    /// Finds a schema among a subject's versions.
    pub async fn registry_lookup(
        &self,
        subject: String,
        reg: Registration,
        deleted: bool,
    ) -> Outcome<SubjectVersion> {
        registry_call!(self.reader, move |c: &Connection| lookup(
            c, &subject, &reg, deleted
        ))
    }

    /// The subjects, with soft-deleted ones when `deleted`.
    pub async fn registry_subjects(&self, deleted: bool) -> Outcome<Vec<String>> {
        registry_call!(self.reader, move |c: &Connection| subjects(c, deleted))
    }

    /// A subject's versions, oldest first (soft-deleted ones when `deleted`); 40401 when it has none.
    pub async fn registry_versions(
        &self,
        subject: String,
        deleted: bool,
    ) -> Outcome<Vec<SubjectVersion>> {
        registry_call!(self.reader, move |c: &Connection| {
            let all = versions(c, &subject, deleted)?;
            if all.is_empty() {
                return Err(RegistryError::subject_not_found(&subject));
            }
            Ok(all)
        })
    }

    /// One version of a subject (`None`: the latest live one).
    pub async fn registry_version(
        &self,
        subject: String,
        wanted: Option<i32>,
        deleted: bool,
    ) -> Outcome<SubjectVersion> {
        registry_call!(self.reader, move |c: &Connection| version(
            c, &subject, wanted, deleted
        ))
    }

    /// The IDs of the live schemas that reference a subject's version.
    pub async fn registry_referenced_by(
        &self,
        subject: String,
        wanted: Option<i32>,
    ) -> Outcome<Vec<i64>> {
        registry_call!(self.reader, move |c: &Connection| {
            let v = version(c, &subject, wanted, false)?;
            referenced_by(c, &subject, v.version)
        })
    }

    /// Deletes a subject, soft or permanent; answers the versions deleted.
    pub async fn registry_delete_subject(
        &self,
        subject: String,
        permanent: bool,
    ) -> Outcome<Vec<i32>> {
        registry_call!(self.writer, move |c: &Connection| delete_subject(
            c, &subject, permanent
        ))
    }

    /// Deletes a version of a subject, soft or permanent; answers its number.
    pub async fn registry_delete_version(
        &self,
        subject: String,
        wanted: Option<i32>,
        permanent: bool,
    ) -> Outcome<i32> {
        registry_call!(self.writer, move |c: &Connection| delete_version(
            c, &subject, wanted, permanent
        ))
    }

    /// A schema by its global ID, while a version uses it.
    pub async fn registry_schema(&self, id: i64) -> Outcome<StoredSchema> {
        registry_call!(self.reader, move |c: &Connection| schema_by_id(c, id))
    }

    /// A schema by its global ID, from a task thread (blocks).
    pub fn registry_schema_blocking(&self, id: i64) -> Outcome<StoredSchema> {
        match self.reader.call_blocking(move |c| Ok(schema_by_id(c, id))) {
            Ok(r) => r,
            Err(e) => Err(e.into()),
        }
    }

    /// A subject's version (soft-deleted ones too), from a blocking thread: what a reader of framed
    /// records resolves references with.
    pub fn registry_version_blocking(&self, subject: String, wanted: i32) -> Outcome<StoredSchema> {
        let found = self
            .reader
            .call_blocking(move |c| Ok(version(c, &subject, Some(wanted), true)));
        match found {
            Ok(r) => r.map(|v| v.schema),
            Err(e) => Err(e.into()),
        }
    }

    /// The first subject (by name) with a version using a schema ID, from a blocking thread.
    pub fn registry_subject_of_blocking(&self, id: i64) -> Outcome<Option<String>> {
        match self.reader.call_blocking(move |c| Ok(subject_of(c, id))) {
            Ok(r) => r,
            Err(e) => Err(e.into()),
        }
    }

    /// The (subject, version) pairs using a schema ID; 40403 when none does.
    pub async fn registry_id_versions(
        &self,
        id: i64,
        deleted: bool,
    ) -> Outcome<Vec<(String, i32)>> {
        registry_call!(self.reader, move |c: &Connection| {
            let found = versions_of_id(c, id, deleted)?;
            if found.is_empty() {
                return Err(RegistryError::schema_not_found(id));
            }
            Ok(found)
        })
    }

    /// The compatibility level or mode set for a subject (`None`: globally), if any. `setting` is
    /// [`Setting::Compatibility`] or [`Setting::Mode`].
    pub async fn registry_setting(
        &self,
        subject: Option<String>,
        setting: Setting,
    ) -> Outcome<Option<String>> {
        registry_call!(self.reader, move |c: &Connection| get_setting(
            c,
            subject.as_deref(),
            setting.column()
        ))
    }

    /// Sets (or with `None` clears) a subject's or the global compatibility level or mode; answers the
    /// value it had.
    pub async fn registry_set_setting(
        &self,
        subject: Option<String>,
        setting: Setting,
        value: Option<String>,
    ) -> Outcome<Option<String>> {
        registry_call!(self.writer, move |c: &Connection| set_setting(
            c,
            subject.as_deref(),
            setting.column(),
            value.as_deref()
        ))
    }
}

/// The registry read from a database file opened read-only (`liteconnect consume --db`).
impl super::LogReader {
    /// A schema by its global ID, while a version uses it.
    ///
    /// # Errors
    /// 40403 when no version uses it; the file cannot be read.
    pub fn registry_schema(&self, id: i64) -> Outcome<StoredSchema> {
        schema_by_id(&self.conn, id)
    }

    /// A subject's version, soft-deleted ones too.
    ///
    /// # Errors
    /// 40401/40402 when there is no such version; the file cannot be read.
    pub fn registry_version(&self, subject: &str, wanted: i32) -> Outcome<StoredSchema> {
        version(&self.conn, subject, Some(wanted), true).map(|v| v.schema)
    }

    /// The first subject (by name) with a version using a schema ID.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn registry_subject_of(&self, id: i64) -> Outcome<Option<String>> {
        subject_of(&self.conn, id)
    }
}

fn subject_of(conn: &Connection, id: i64) -> Result<Option<String>, RegistryError> {
    Ok(versions_of_id(conn, id, true)?
        .into_iter()
        .next()
        .map(|(s, _)| s))
}

/// A registry setting kept globally and per subject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// The compatibility level.
    Compatibility,
    /// The mode (READWRITE, READONLY, IMPORT).
    Mode,
}

impl Setting {
    fn column(self) -> &'static str {
        match self {
            Setting::Compatibility => "compatibility",
            Setting::Mode => "mode",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::embedded::migrations::runner()
            .run(&mut conn)
            .unwrap();
        conn
    }

    fn avro(text: &str) -> Registration {
        Registration {
            schema_type: "AVRO".into(),
            schema: text.into(),
            references: Vec::new(),
            id: None,
            version: None,
        }
    }

    fn accept() -> CompatibilityCheck {
        Box::new(|_, _, _| Ok(()))
    }

    #[test]
    fn one_schema_gets_one_id_across_subjects_and_versions_count_per_subject() {
        let c = conn();
        assert_eq!(
            register(&c, "a", &avro("\"int\""), accept()).unwrap(),
            (1, 1)
        );
        assert_eq!(
            register(&c, "a", &avro("\"int\""), accept()).unwrap(),
            (1, 1)
        );
        assert_eq!(
            register(&c, "a", &avro("\"long\""), accept()).unwrap(),
            (2, 2)
        );
        assert_eq!(
            register(&c, "b", &avro("\"int\""), accept()).unwrap(),
            (1, 1)
        );
        assert_eq!(subjects(&c, false).unwrap(), vec!["a", "b"]);
        assert_eq!(
            version(&c, "a", None, false).unwrap().schema.schema,
            "\"long\""
        );
    }

    #[test]
    fn the_check_sees_the_level_and_the_live_versions_and_can_refuse() {
        let c = conn();
        register(&c, "a", &avro("\"int\""), accept()).unwrap();
        set_setting(&c, Some("a"), "compatibility", Some("FULL")).unwrap();
        let refused = register(
            &c,
            "a",
            &avro("\"string\""),
            Box::new(|level, live, _| {
                assert_eq!(level, "FULL");
                assert_eq!(live.len(), 1);
                Err(RegistryError::new(409, 409, "no"))
            }),
        )
        .unwrap_err();
        assert_eq!(refused.code, 409);
        assert_eq!(versions(&c, "a", true).unwrap().len(), 1);
    }

    #[test]
    fn deletes_go_soft_then_permanent_and_ids_are_never_reused() {
        let c = conn();
        register(&c, "a", &avro("\"int\""), accept()).unwrap();
        assert_eq!(
            delete_subject(&c, "a", true).unwrap_err().code,
            40405,
            "permanent before soft"
        );
        assert_eq!(delete_subject(&c, "a", false).unwrap(), vec![1]);
        assert_eq!(delete_subject(&c, "a", false).unwrap_err().code, 40404);
        assert_eq!(version(&c, "a", Some(1), false).unwrap_err().code, 40401);
        assert!(version(&c, "a", Some(1), true).unwrap().deleted);
        assert_eq!(schema_by_id(&c, 1).unwrap().schema, "\"int\"");
        assert_eq!(delete_subject(&c, "a", true).unwrap(), vec![1]);
        assert_eq!(schema_by_id(&c, 1).unwrap_err().code, 40403);
        // A new schema never takes the freed ID; the same schema again gets its old one.
        assert_eq!(
            register(&c, "a", &avro("\"long\""), accept()).unwrap(),
            (2, 1)
        );
        assert_eq!(
            register(&c, "b", &avro("\"int\""), accept()).unwrap(),
            (1, 1)
        );
    }

    #[test]
    fn versions_delete_one_by_one_and_referenced_versions_stay() {
        let c = conn();
        register(&c, "a", &avro("\"int\""), accept()).unwrap();
        register(&c, "a", &avro("\"long\""), accept()).unwrap();
        assert_eq!(
            delete_version(&c, "a", Some(2), true).unwrap_err().code,
            40407
        );
        assert_eq!(delete_version(&c, "a", None, false).unwrap(), 2);
        assert_eq!(version(&c, "a", None, false).unwrap().version, 1);
        assert_eq!(delete_version(&c, "a", Some(2), true).unwrap(), 2);
        let mut with_ref = avro("{\"type\":\"record\",\"name\":\"R\",\"fields\":[]}");
        with_ref.references = vec![SchemaReference {
            name: "x".into(),
            subject: "a".into(),
            version: 1,
        }];
        register(&c, "r", &with_ref, accept()).unwrap();
        assert_eq!(
            delete_version(&c, "a", Some(1), false).unwrap_err().code,
            42206
        );
        with_ref.references[0].version = 7;
        assert_eq!(
            register(&c, "r2", &with_ref, accept()).unwrap_err().code,
            42201
        );
    }

    #[test]
    fn modes_guard_writes_and_import_takes_the_callers_id() {
        let c = conn();
        set_setting(&c, None, "mode", Some("READONLY")).unwrap();
        assert_eq!(
            register(&c, "a", &avro("\"int\""), accept())
                .unwrap_err()
                .code,
            42205
        );
        set_setting(&c, None, "mode", Some("IMPORT")).unwrap();
        let mut imported = avro("\"int\"");
        imported.id = Some(100);
        imported.version = Some(3);
        let refuse: CompatibilityCheck =
            Box::new(|_, _, _| Err(RegistryError::new(409, 409, "no")));
        assert_eq!(register(&c, "a", &imported, refuse).unwrap(), (100, 3));
        imported.schema = "\"long\"".into();
        assert_eq!(
            register(&c, "b", &imported, accept()).unwrap_err().code,
            42205
        );
        set_setting(&c, None, "mode", None).unwrap();
        imported.id = None;
        imported.version = None;
        assert_eq!(register(&c, "a", &imported, accept()).unwrap(), (101, 4));
    }
}
