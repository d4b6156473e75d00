//! The embedded Schema Registry: Confluent's REST API v1 on the listeners of `schema.registry.listeners`,
//! over the registry's tables in the store (`storage::registry`). Paths, bodies, the media type
//! `application/vnd.schemaregistry.v1+json` (plain JSON accepted) and the error codes are Confluent's.
//! Schemas are parsed and checked by their type's rules (`converters::registry::kinds`); a type the
//! registry does not check is refused with 42201.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value as Json};
use warp::http::{HeaderMap, Method};

use super::{only, parse_body, query_flag, ApiState, Reply, Request};
use crate::converters::registry::kinds::{self, ParsedSchema, SCHEMA_TYPES};
pub(crate) use crate::converters::registry::local::compatibility_check;
use crate::converters::registry::local::{parse_schema, parse_versions, MAX_REFERENCE_DEPTH};
use crate::converters::registry::Level;
use crate::storage::registry::{
    Registration, RegistryError, SchemaReference, Setting, StoredSchema, SubjectVersion,
    DEFAULT_COMPATIBILITY, DEFAULT_MODE,
};
use crate::storage::Store;

/// The registry's media type.
pub(crate) const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// The modes.
const MODES: &[&str] = &["READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT"];

impl From<RegistryError> for Reply {
    fn from(e: RegistryError) -> Reply {
        Reply::json(
            e.status,
            &json!({"error_code": e.code, "message": e.message}),
        )
    }
}

/// Whether a request body's `Content-Type` is one the registry consumes: its own media types, JSON, or
/// none.
pub(crate) fn accepts(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(warp::http::header::CONTENT_TYPE) else {
        return true;
    };
    let essence = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    [
        CONTENT_TYPE,
        "application/vnd.schemaregistry+json",
        "application/json",
        "application/octet-stream",
        "*/*",
    ]
    .contains(&essence.as_str())
}

type Result<T = Reply> = std::result::Result<T, Reply>;

/// Answers one registry request; every answer is of the registry's media type.
pub(crate) async fn route(state: &ApiState, req: &Request<'_>) -> Reply {
    let store = state.herder.store();
    let segs: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    let outcome = match segs.as_slice() {
        [] => only(req.method, &[Method::GET]).map(|_| Reply::json(200, &json!({}))),
        ["subjects"] => list_subjects(store, req).await,
        ["subjects", subject] => subject_root(store, req, subject).await,
        ["subjects", subject, "versions"] => versions(store, req, subject).await,
        ["subjects", subject, "versions", v] => one_version(store, req, subject, v).await,
        ["subjects", subject, "versions", v, "schema"] => {
            version_schema(store, req, subject, v).await
        }
        ["subjects", subject, "versions", v, "referencedby"] => {
            referenced_by(store, req, subject, v).await
        }
        ["schemas", "types"] => {
            only(req.method, &[Method::GET]).map(|_| Reply::json(200, &SCHEMA_TYPES))
        }
        ["schemas", "ids", id, rest @ ..] => by_id(store, req, id, rest).await,
        ["config"] => config(store, req, None).await,
        ["config", subject] => config(store, req, Some(subject)).await,
        ["mode"] => mode(store, req, None).await,
        ["mode", subject] => mode(store, req, Some(subject)).await,
        ["compatibility", "subjects", subject, "versions"] => {
            compatibility(store, req, subject, None).await
        }
        ["compatibility", "subjects", subject, "versions", v] => {
            compatibility(store, req, subject, Some(v)).await
        }
        _ => Err(super::not_found()),
    };
    let reply = outcome.unwrap_or_else(|e| e);
    if reply.content_type.is_some() {
        reply
    } else {
        reply.with_content_type(CONTENT_TYPE)
    }
}

/// A version in a path: a number from 1, or `latest` / `-1` (`None`).
fn parse_version(v: &str) -> Result<Option<i32>> {
    if v.eq_ignore_ascii_case("latest") || v == "-1" {
        return Ok(None);
    }
    match v.parse::<i32>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(RegistryError::new(
            422,
            42202,
            format!("The specified version '{v}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""),
        )
        .into()),
    }
}

fn flag(req: &Request<'_>, key: &str) -> bool {
    query_flag(&req.query, key, false)
}

fn query<'a>(req: &'a Request<'_>, key: &str) -> Option<&'a str> {
    req.query
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// `offset` and `limit` (negative: no limit) applied to a listing.
fn page<T>(items: Vec<T>, req: &Request<'_>) -> Vec<T> {
    let number = |key: &str| query(req, key).and_then(|v| v.parse::<i64>().ok());
    let offset = number("offset").unwrap_or(0).max(0) as usize;
    let limit = number("limit").filter(|n| *n >= 0).map(|n| n as usize);
    items
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect()
}

async fn list_subjects(store: &Store, req: &Request<'_>) -> Result {
    only(req.method, &[Method::GET])?;
    let prefix = query(req, "subjectPrefix").unwrap_or_default();
    let deleted_only = flag(req, "deleted_only");
    let mut subjects = store
        .registry_subjects(deleted_only || flag(req, "deleted"))
        .await?;
    if deleted_only {
        let live = store.registry_subjects(false).await?;
        subjects.retain(|s| !live.contains(s));
    }
    subjects.retain(|s| s.starts_with(prefix));
    Ok(Reply::json(200, &page(subjects, req)))
}

/// `POST /subjects/{s}` looks a schema up; `DELETE` deletes the subject.
async fn subject_root(store: &Store, req: &Request<'_>, subject: &str) -> Result {
    only(req.method, &[Method::POST, Method::DELETE])?;
    if *req.method == Method::DELETE {
        let deleted = store
            .registry_delete_subject(subject.to_string(), flag(req, "permanent"))
            .await?;
        return Ok(Reply::json(200, &deleted));
    }
    let (reg, _) = prepare(store, req).await?;
    let found = store
        .registry_lookup(subject.to_string(), reg, flag(req, "deleted"))
        .await?;
    Ok(Reply::json(200, &version_json(&found)))
}

async fn versions(store: &Store, req: &Request<'_>, subject: &str) -> Result {
    only(req.method, &[Method::GET, Method::POST])?;
    if *req.method == Method::GET {
        let deleted_only = flag(req, "deleted_only");
        let all = store
            .registry_versions(subject.to_string(), deleted_only || flag(req, "deleted"))
            .await?;
        let numbers: Vec<i32> = all
            .iter()
            .filter(|v| v.deleted || !deleted_only)
            .map(|v| v.version)
            .collect();
        return Ok(Reply::json(200, &page(numbers, req)));
    }
    let (reg, parsed) = prepare(store, req).await?;
    let check = compatibility_check(subject.to_string(), parsed);
    let (id, _) = store
        .registry_register(subject.to_string(), reg, check)
        .await?;
    Ok(Reply::json(200, &json!({ "id": id })))
}

async fn one_version(store: &Store, req: &Request<'_>, subject: &str, v: &str) -> Result {
    only(req.method, &[Method::GET, Method::DELETE])?;
    let wanted = parse_version(v)?;
    if *req.method == Method::DELETE {
        let deleted = store
            .registry_delete_version(subject.to_string(), wanted, flag(req, "permanent"))
            .await?;
        return Ok(Reply::json(200, &deleted));
    }
    let mut found = store
        .registry_version(subject.to_string(), wanted, flag(req, "deleted"))
        .await?;
    in_format(store, req, &mut found.schema).await?;
    Ok(Reply::json(200, &version_json(&found)))
}

/// The schema's text in the `format` the request asks for, when its type has that format (Protobuf's
/// `serialized`: its `FileDescriptorProto` in base64); as stored otherwise.
async fn in_format(store: &Store, req: &Request<'_>, schema: &mut StoredSchema) -> Result<()> {
    let Some(format) = query(req, "format").filter(|f| !f.is_empty()) else {
        return Ok(());
    };
    let fetched = fetch_references(store, &schema.references).await?;
    let resolve = |s: &str, v: i32| fetched.get(&(s.to_string(), v)).cloned();
    let parsed = parse_schema(
        &schema.schema_type,
        &schema.schema,
        &schema.references,
        &resolve,
        0,
    )
    .map_err(invalid_schema)?;
    if let Some(text) = parsed.formatted(format) {
        schema.schema = text;
    }
    Ok(())
}

async fn version_schema(store: &Store, req: &Request<'_>, subject: &str, v: &str) -> Result {
    only(req.method, &[Method::GET])?;
    let found = store
        .registry_version(subject.to_string(), parse_version(v)?, flag(req, "deleted"))
        .await?;
    Ok(Reply::text(200, CONTENT_TYPE, found.schema.schema))
}

async fn referenced_by(store: &Store, req: &Request<'_>, subject: &str, v: &str) -> Result {
    only(req.method, &[Method::GET])?;
    let ids = store
        .registry_referenced_by(subject.to_string(), parse_version(v)?)
        .await?;
    Ok(Reply::json(200, &ids))
}

/// `/schemas/ids/{id}` and its `schema`, `versions` and `subjects`.
async fn by_id(store: &Store, req: &Request<'_>, id: &str, rest: &[&str]) -> Result {
    only(req.method, &[Method::GET])?;
    let id: i64 = id
        .parse()
        .map_err(|_| Reply::from(RegistryError::schema_not_found(id)))?;
    match rest {
        [] | ["schema"] => {
            let mut schema = store.registry_schema(id).await?;
            in_format(store, req, &mut schema).await?;
            if let Some(subject) = query(req, "subject").filter(|s| !s.is_empty()) {
                let uses = store.registry_id_versions(id, true).await?;
                if !uses.iter().any(|(s, _)| s == subject) {
                    return Err(RegistryError::schema_not_found(id).into());
                }
            }
            if rest.is_empty() {
                Ok(Reply::json(200, &schema_json(&schema)))
            } else {
                Ok(Reply::text(200, CONTENT_TYPE, schema.schema))
            }
        }
        ["versions"] => {
            let uses = store.registry_id_versions(id, flag(req, "deleted")).await?;
            let body: Vec<Json> = uses
                .iter()
                .map(|(s, v)| json!({"subject": s, "version": v}))
                .collect();
            Ok(Reply::json(200, &body))
        }
        ["subjects"] => {
            let uses = store.registry_id_versions(id, flag(req, "deleted")).await?;
            let mut subjects: Vec<&String> = uses.iter().map(|(s, _)| s).collect();
            subjects.dedup();
            Ok(Reply::json(200, &subjects))
        }
        _ => Err(super::not_found()),
    }
}

/// `{"schema", "schemaType" (when not AVRO), "references" (when any)}`.
fn schema_json(s: &StoredSchema) -> Json {
    let mut body = json!({ "schema": s.schema });
    decorate(&mut body, s);
    body
}

fn decorate(body: &mut Json, s: &StoredSchema) {
    if s.schema_type != "AVRO" {
        body["schemaType"] = json!(s.schema_type);
    }
    if !s.references.is_empty() {
        body["references"] = json!(s.references);
    }
}

/// `{"subject", "version", "id", "schema", ...}`.
fn version_json(v: &SubjectVersion) -> Json {
    let mut body = json!({
        "subject": v.subject,
        "version": v.version,
        "id": v.schema.id,
        "schema": v.schema.schema,
    });
    decorate(&mut body, &v.schema);
    body
}

/// The body of a registration, a lookup or a compatibility test.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SchemaBody {
    schema: Option<String>,
    schema_type: Option<String>,
    #[serde(default)]
    references: Vec<SchemaReference>,
    id: Option<i64>,
    version: Option<i32>,
}

fn invalid_schema(message: impl std::fmt::Display) -> Reply {
    RegistryError::new(422, 42201, format!("Invalid schema: {message}")).into()
}

/// Reads a schema body and parses its schema with its references: the registration to store (with the
/// canonical text) and the parsed schema.
async fn prepare(store: &Store, req: &Request<'_>) -> Result<(Registration, ParsedSchema)> {
    let body: SchemaBody = parse_body(&req.body)?;
    let Some(text) = body.schema.filter(|s| !s.trim().is_empty()) else {
        return Err(RegistryError::new(422, 42201, "Empty schema").into());
    };
    let schema_type = body
        .schema_type
        .unwrap_or_else(|| "AVRO".into())
        .to_ascii_uppercase();
    if !SCHEMA_TYPES.contains(&schema_type.as_str()) {
        return Err(invalid_schema(kinds::unsupported_type(&schema_type)));
    }
    let fetched = fetch_references(store, &body.references).await?;
    let resolve = |s: &str, v: i32| fetched.get(&(s.to_string(), v)).cloned();
    let parsed =
        parse_schema(&schema_type, &text, &body.references, &resolve, 0).map_err(invalid_schema)?;
    let reg = Registration {
        schema_type,
        schema: parsed.canonical(),
        references: body.references,
        id: body.id.filter(|id| *id >= 0),
        version: body.version.filter(|v| *v >= 1),
    };
    Ok((reg, parsed))
}

/// Every schema the references reach, by (subject, version).
async fn fetch_references(
    store: &Store,
    refs: &[SchemaReference],
) -> Result<BTreeMap<(String, i32), StoredSchema>> {
    let mut fetched = BTreeMap::new();
    let mut queue: Vec<SchemaReference> = refs.to_vec();
    while let Some(r) = queue.pop() {
        let key = (r.subject.clone(), r.version);
        if fetched.contains_key(&key) {
            continue;
        }
        if fetched.len() > MAX_REFERENCE_DEPTH * 8 {
            return Err(invalid_schema("too many references"));
        }
        let found = store
            .registry_version(r.subject.clone(), Some(r.version), true)
            .await
            .map_err(|_| {
                invalid_schema(format!(
                    "reference '{}' names subject '{}' version {}, which does not exist",
                    r.name, r.subject, r.version
                ))
            })?;
        queue.extend(found.schema.references.iter().cloned());
        fetched.insert(key, found.schema);
    }
    Ok(fetched)
}

/// `POST /compatibility/subjects/{s}/versions[/{v}]`: `{"is_compatible"}`, with `messages` when
/// `verbose=true`. Against one version the level's direction applies to it alone.
async fn compatibility(store: &Store, req: &Request<'_>, subject: &str, v: Option<&str>) -> Result {
    only(req.method, &[Method::POST])?;
    let wanted = v.map(parse_version).transpose()?;
    let (_, parsed) = prepare(store, req).await?;
    let level = effective_level(store, subject).await?;
    let live = match store.registry_versions(subject.to_string(), false).await {
        Ok(all) => all,
        Err(e) if e.code == 40401 && wanted.flatten().is_none() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let against: Vec<SubjectVersion> = match wanted {
        Some(Some(n)) => {
            let one: Vec<SubjectVersion> = live.into_iter().filter(|x| x.version == n).collect();
            if one.is_empty() {
                return Err(RegistryError::version_not_found(n).into());
            }
            one
        }
        _ => live,
    };
    let fetched = fetch_references(
        store,
        &against
            .iter()
            .flat_map(|x| x.schema.references.clone())
            .collect::<Vec<_>>(),
    )
    .await?;
    let resolve = |s: &str, v: i32| fetched.get(&(s.to_string(), v)).cloned();
    let previous = parse_versions(parsed.schema_type(), &against, &resolve);
    // One version given: that one alone, whatever the level's reach.
    let level = if wanted.is_some() {
        level.single()
    } else {
        level
    };
    let messages = kinds::check(level, &parsed, &previous);
    let mut body = json!({ "is_compatible": messages.is_empty() });
    if flag(req, "verbose") {
        body["messages"] = json!(messages);
    }
    Ok(Reply::json(200, &body))
}

async fn effective_level(store: &Store, subject: &str) -> Result<Level> {
    let own = store
        .registry_setting(Some(subject.to_string()), Setting::Compatibility)
        .await?;
    let level = match own {
        Some(l) => l,
        None => store
            .registry_setting(None, Setting::Compatibility)
            .await?
            .unwrap_or_else(|| DEFAULT_COMPATIBILITY.into()),
    };
    Ok(Level::parse(&level).unwrap_or(Level::Backward))
}

/// A setting's value in a `PUT` body (`compatibility` or `mode`), checked against its names.
fn setting_value(req: &Request<'_>, setting: Setting) -> Result<String> {
    let body: serde_json::Map<String, Json> = parse_body(&req.body)?;
    let (key, names, code, message): (&str, &[&str], u32, &str) = match setting {
        Setting::Compatibility => ("compatibility", Level::NAMES, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"),
        Setting::Mode => ("mode", MODES, 42204, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT."),
    };
    let value = body
        .get(key)
        .and_then(Json::as_str)
        .map(str::to_ascii_uppercase)
        .filter(|v| names.contains(&v.as_str()));
    value.ok_or_else(|| RegistryError::new(422, code, message).into())
}

/// `GET|PUT|DELETE /config[/{s}]`.
async fn config(store: &Store, req: &Request<'_>, subject: Option<&str>) -> Result {
    settings(store, req, subject, Setting::Compatibility).await
}

/// `GET|PUT|DELETE /mode[/{s}]`.
async fn mode(store: &Store, req: &Request<'_>, subject: Option<&str>) -> Result {
    settings(store, req, subject, Setting::Mode).await
}

/// The compatibility level and the mode are read, set and cleared alike; their bodies differ in names.
async fn settings(
    store: &Store,
    req: &Request<'_>,
    subject: Option<&str>,
    setting: Setting,
) -> Result {
    only(req.method, &[Method::GET, Method::PUT, Method::DELETE])?;
    let (get_key, put_key, default, missing_code, missing_what) = match setting {
        Setting::Compatibility => (
            "compatibilityLevel",
            "compatibility",
            DEFAULT_COMPATIBILITY,
            40408,
            "compatibility",
        ),
        Setting::Mode => ("mode", "mode", DEFAULT_MODE, 40409, "mode"),
    };
    let owned = subject.map(str::to_string);
    let global = || async {
        Ok::<_, Reply>(
            store
                .registry_setting(None, setting)
                .await?
                .unwrap_or_else(|| default.to_string()),
        )
    };
    let missing = |s: &str| {
        Reply::from(RegistryError::new(
            404,
            missing_code,
            format!("Subject '{s}' does not have subject-level {missing_what} configured"),
        ))
    };
    match *req.method {
        Method::PUT => {
            let value = setting_value(req, setting)?;
            if setting == Setting::Mode && value == "IMPORT" && !flag(req, "force") {
                refuse_import_over_subjects(store, subject).await?;
            }
            store
                .registry_set_setting(owned, setting, Some(value.clone()))
                .await?;
            Ok(Reply::json(200, &json!({ put_key: value })))
        }
        Method::DELETE => {
            let before = store.registry_set_setting(owned, setting, None).await?;
            let value = match (before, subject) {
                (Some(v), _) => v,
                (None, Some(s)) => return Err(missing(s)),
                (None, None) => default.to_string(),
            };
            Ok(Reply::json(200, &json!({ get_key: value })))
        }
        _ => {
            let own = store.registry_setting(owned, setting).await?;
            let value = match (own, subject) {
                (Some(v), _) => v,
                (None, Some(_)) if flag(req, "defaultToGlobal") => global().await?,
                (None, Some(s)) => return Err(missing(s)),
                (None, None) => global().await?,
            };
            Ok(Reply::json(200, &json!({ get_key: value })))
        }
    }
}

/// IMPORT mode is for an empty registry (or subject), unless forced: imported IDs must not meet
/// assigned ones.
async fn refuse_import_over_subjects(store: &Store, subject: Option<&str>) -> Result<()> {
    let subjects = store.registry_subjects(true).await?;
    let taken = match subject {
        Some(s) => subjects.iter().any(|x| x == s),
        None => !subjects.is_empty(),
    };
    if taken {
        return Err(
            RegistryError::not_permitted("Cannot import since found existing subjects").into(),
        );
    }
    Ok(())
}
