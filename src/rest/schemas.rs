//! Records framed by a Schema Registry converter over REST: REST Proxy v2's schema-based embedded
//! formats (`application/vnd.kafka.{avro,protobuf,jsonschema}.v2+json`) on the topic routes, reading
//! framed records decoded and producing JSON encoded along a schema given by text (registered under
//! `<topic>-key` / `<topic>-value`) or by ID; liteconnect's own `decode=true` on a binary or JSON read,
//! which adds the decoded form of framed keys and values; and the registry's read-only routes under
//! `/registry/` on the REST listener, for the console and `liteconnect consume`, with liteconnect's own
//! `GET /registry/levels`.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value as Json};
use warp::http::Method;

use super::topics::{append, check_topic_name, ProxyError};
use super::{only, ApiState, Reply, Request};
use crate::converters::registry::frame;
use crate::converters::registry::kinds::ParsedSchema;
use crate::converters::registry::local::{KnownSchema, LocalSchemas, Shown};
use crate::storage::registry::{Registration, RegistryError, Setting, DEFAULT_COMPATIBILITY};
use crate::storage::{LogRecord, ProducedRecord, Store};

type Result<T = Reply> = std::result::Result<T, ProxyError>;

/// A schema-based embedded format of REST Proxy v2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchemaFormat {
    /// `application/vnd.kafka.avro.v2+json`.
    Avro,
    /// `application/vnd.kafka.protobuf.v2+json`.
    Protobuf,
    /// `application/vnd.kafka.jsonschema.v2+json`.
    JsonSchema,
}

impl SchemaFormat {
    const ALL: [SchemaFormat; 3] = [
        SchemaFormat::Avro,
        SchemaFormat::Protobuf,
        SchemaFormat::JsonSchema,
    ];

    fn media_type(self) -> &'static str {
        match self {
            SchemaFormat::Avro => "application/vnd.kafka.avro.v2+json",
            SchemaFormat::Protobuf => "application/vnd.kafka.protobuf.v2+json",
            SchemaFormat::JsonSchema => "application/vnd.kafka.jsonschema.v2+json",
        }
    }

    /// The registry's name of the schema type.
    fn schema_type(self) -> &'static str {
        match self {
            SchemaFormat::Avro => "AVRO",
            SchemaFormat::Protobuf => "PROTOBUF",
            SchemaFormat::JsonSchema => "JSON",
        }
    }

    fn of(media_type: &str) -> Option<SchemaFormat> {
        let essence = media_type.split(';').next().unwrap_or_default().trim();
        Self::ALL
            .into_iter()
            .find(|f| essence.eq_ignore_ascii_case(f.media_type()))
    }

    /// The format of a produce body, from its `Content-Type`, when schema-based.
    pub(crate) fn of_body(req: &Request<'_>) -> Option<SchemaFormat> {
        req.header("content-type").and_then(SchemaFormat::of)
    }

    /// The format asked for by `Accept`, when schema-based.
    pub(crate) fn of_accept(req: &Request<'_>) -> Option<SchemaFormat> {
        req.header("accept")?
            .split(',')
            .find_map(|t| SchemaFormat::of(t.trim()))
    }
}

/// The store's cache of parsed schemas.
fn cache(store: &Store) -> Arc<LocalSchemas> {
    LocalSchemas::shared(store.cluster_id())
}

/// Shows framed keys and values on a blocking thread (the registry lookups block): for each record,
/// its key's and its value's [`Shown`].
async fn show_all(store: &Store, records: Vec<LogRecord>) -> Result<Vec<[Shown; 2]>> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || {
        let schemas = cache(&store);
        let show = |b: &Option<Vec<u8>>| match b {
            Some(b) => schemas.show(&store, b),
            None => Shown::Unframed,
        };
        records
            .iter()
            .map(|r| [show(&r.key), show(&r.value)])
            .collect()
    })
    .await
    .map_err(|e| ProxyError::Schema(50002, format!("Decoding records failed: {e}")))
}

/// A read in a schema-based format: keys and values decoded to JSON, as REST Proxy answers them.
pub(crate) async fn read(state: &ApiState, kind: SchemaFormat, records: Vec<LogRecord>) -> Result {
    let shown = show_all(state.herder.store(), records.clone()).await?;
    let mut out = Vec::with_capacity(records.len());
    for (r, [key, value]) in records.iter().zip(shown) {
        out.push(json!({
            "topic": r.topic,
            "key": field_json(kind, r, "key", r.key.is_some(), key)?,
            "value": field_json(kind, r, "value", r.value.is_some(), value)?,
            "partition": r.partition,
            "offset": r.offset,
        }));
    }
    Ok(Reply::json(200, &out).with_content_type(kind.media_type()))
}

/// A key or value decoded, or why it cannot be read in `kind`.
fn field_json(
    kind: SchemaFormat,
    r: &LogRecord,
    field: &str,
    present: bool,
    shown: Shown,
) -> Result<Json> {
    let cannot = |why: String| {
        ProxyError::Schema(
            50002,
            format!(
                "The {field} of the record at offset {} could not be read as {}: {why}",
                r.offset,
                kind.media_type()
            ),
        )
    };
    match shown {
        Shown::Unframed if !present => Ok(Json::Null),
        Shown::Unframed => Err(cannot(
            "it is not framed by a Schema Registry converter (magic byte 0 and a schema ID)".into(),
        )),
        Shown::Undecoded { reason, .. } => Err(cannot(reason)),
        Shown::Decoded { schema, .. } if schema.parsed.schema_type() != kind.schema_type() => {
            Err(cannot(format!(
                "its schema (ID {}) is of type {}",
                schema.id,
                schema.parsed.schema_type()
            )))
        }
        Shown::Decoded { json, .. } => Ok(json),
    }
}

/// `decode=true` on a binary or JSON read: `key_decoded` / `value_decoded` beside framed keys and
/// values (`schema_id`, `subject`, `schema_type` and the JSON, or the `error` that kept it from
/// being decoded).
pub(crate) async fn decorate(
    state: &ApiState,
    records: &[LogRecord],
    out: &mut [Json],
) -> Result<()> {
    let shown = show_all(state.herder.store(), records.to_vec()).await?;
    for (o, fields) in out.iter_mut().zip(shown) {
        for (name, shown) in ["key_decoded", "value_decoded"].into_iter().zip(fields) {
            match shown {
                Shown::Unframed => {}
                Shown::Decoded { schema, json } => {
                    o[name] = json!({"schema_id": schema.id, "subject": schema.subject,
                        "schema_type": schema.parsed.schema_type(), "value": json});
                }
                Shown::Undecoded { id, reason } => {
                    o[name] = json!({"schema_id": id, "error": reason});
                }
            }
        }
    }
    Ok(())
}

/// A produce body of a schema-based format.
#[derive(Debug, Deserialize)]
struct SchemaProduce {
    #[serde(default)]
    key_schema: Option<String>,
    #[serde(default)]
    key_schema_id: Option<i64>,
    #[serde(default)]
    value_schema: Option<String>,
    #[serde(default)]
    value_schema_id: Option<i64>,
    records: Vec<SchemaRecord>,
}

#[derive(Debug, Deserialize)]
struct SchemaRecord {
    #[serde(default)]
    key: Json,
    #[serde(default)]
    value: Json,
    #[serde(default)]
    partition: Option<i32>,
}

fn invalid_schema(message: impl std::fmt::Display) -> ProxyError {
    ProxyError::Schema(42205, format!("Invalid schema: {message}"))
}

/// `POST /topics/{t}[/partitions/{p}]` in a schema-based format.
pub(crate) async fn produce(
    state: &ApiState,
    req: &Request<'_>,
    kind: SchemaFormat,
    topic: &str,
    partition: Option<i32>,
) -> Result {
    check_topic_name(topic)?;
    let body: SchemaProduce = serde_json::from_slice(&req.body.bytes)
        .map_err(|e| ProxyError::Invalid(format!("Invalid request body: {e}")))?;
    if body.records.is_empty() {
        return Err(ProxyError::Invalid("The request has no records.".into()));
    }
    if let Some(r) = body
        .records
        .iter()
        .find(|r| r.partition.is_some_and(|p| p < 0))
    {
        return Err(ProxyError::Invalid(format!(
            "Invalid partition {:?}.",
            r.partition
        )));
    }
    let has = |f: fn(&SchemaRecord) -> &Json| body.records.iter().any(|r| !f(r).is_null());
    let key = if has(|r| &r.key) {
        let (text, id) = (body.key_schema.as_deref(), body.key_schema_id);
        if text.is_none() && id.is_none() {
            return Err(ProxyError::Schema(
                42201,
                "Request includes keys but does not include key schema".into(),
            ));
        }
        Some(schema_for(state, kind, &format!("{topic}-key"), text, id).await?)
    } else {
        None
    };
    let value = if has(|r| &r.value) {
        let (text, id) = (body.value_schema.as_deref(), body.value_schema_id);
        if text.is_none() && id.is_none() {
            return Err(ProxyError::Schema(
                42202,
                "Request includes values but does not include value schema".into(),
            ));
        }
        Some(schema_for(state, kind, &format!("{topic}-value"), text, id).await?)
    } else {
        None
    };
    let timestamp = Some(crate::model::now_ms());
    let records = body
        .records
        .iter()
        .map(|r| {
            Ok(ProducedRecord {
                topic: topic.to_string(),
                partition: partition.or(r.partition),
                timestamp,
                key: encode(key.as_deref(), &r.key)?,
                value: encode(value.as_deref(), &r.value)?,
                headers: Vec::new(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let ids = [key.map(|k| k.id), value.map(|v| v.id)];
    append(state, topic, records, ids).await
}

/// `json` framed with the schema's ID after its encoding (null stays null).
fn encode(schema: Option<&KnownSchema>, json: &Json) -> Result<Option<Vec<u8>>> {
    let (Some(schema), false) = (schema, json.is_null()) else {
        return Ok(None);
    };
    let payload = schema.parsed.json_to_payload(json).map_err(|e| {
        ProxyError::Schema(42203, format!("Conversion of JSON to Object failed: {e}"))
    })?;
    let id =
        u32::try_from(schema.id).map_err(|_| invalid_schema("the schema ID is out of range"))?;
    let mut out = Vec::with_capacity(payload.len() + 5);
    frame(id, &mut out);
    out.extend_from_slice(&payload);
    Ok(Some(out))
}

/// The schema a produce names: by ID, or by text registered under `subject` (its ID when already
/// there), of the format's type.
async fn schema_for(
    state: &ApiState,
    kind: SchemaFormat,
    subject: &str,
    text: Option<&str>,
    id: Option<i64>,
) -> Result<Arc<KnownSchema>> {
    let store = state.herder.store();
    let id = match (id, text) {
        (Some(id), _) => id,
        (None, Some(text)) => register(store, kind, subject, text).await?,
        (None, None) => return Err(invalid_schema("no schema given")),
    };
    let owned = store.clone();
    let known = tokio::task::spawn_blocking(move || cache(&owned).schema(&owned, id))
        .await
        .map_err(|e| invalid_schema(e.to_string()))?
        .map_err(invalid_schema)?;
    if known.parsed.schema_type() != kind.schema_type() {
        return Err(invalid_schema(format!(
            "schema ID {id} is of type {}, not {}",
            known.parsed.schema_type(),
            kind.schema_type()
        )));
    }
    Ok(known)
}

/// Registers a schema's text under `subject` as the registry's API does (compatibility checked);
/// answers its ID.
async fn register(store: &Store, kind: SchemaFormat, subject: &str, text: &str) -> Result<i64> {
    let parsed = ParsedSchema::parse(kind.schema_type(), text, &[]).map_err(invalid_schema)?;
    let reg = Registration {
        schema_type: kind.schema_type().to_string(),
        schema: parsed.canonical(),
        references: Vec::new(),
        id: None,
        version: None,
    };
    let check = super::registry::compatibility_check(subject.to_string(), parsed);
    store
        .registry_register(subject.to_string(), reg, check)
        .await
        .map(|(id, _)| id)
        .map_err(|e| invalid_schema(e.message))
}

/// `GET /registry/...` on the REST listener: the registry's read-only routes (subjects, versions,
/// schemas by ID, types, config and mode), for the console and `liteconnect consume`, under the
/// REST listener's authentication and TLS.
pub(crate) async fn registry_read(state: &ApiState, req: &Request<'_>) -> super::Result {
    only(req.method, &[Method::GET])?;
    if req.segments.len() == 2 && req.segments[1] == "levels" {
        return levels(state.herder.store()).await;
    }
    let inner = Request {
        method: req.method,
        segments: req.segments.iter().skip(1).cloned().collect(),
        query: req.query.clone(),
        body: req.body.clone(),
        headers: req.headers,
    };
    Ok(super::registry::route(state, &inner).await)
}

/// liteconnect's own `GET /registry/levels`: the global compatibility level and the subjects that set
/// their own, in one answer (Confluent's `GET /config/{s}` answers 404 for a subject without one).
async fn levels(store: &Store) -> super::Result {
    let failed = |e: RegistryError| Reply::from(e);
    let global = store
        .registry_setting(None, Setting::Compatibility)
        .await
        .map_err(failed)?
        .unwrap_or_else(|| DEFAULT_COMPATIBILITY.to_string());
    let mut subjects = serde_json::Map::new();
    for subject in store.registry_subjects(true).await.map_err(failed)? {
        let own = store
            .registry_setting(Some(subject.clone()), Setting::Compatibility)
            .await
            .map_err(failed)?;
        if let Some(level) = own {
            subjects.insert(subject, json!(level));
        }
    }
    Ok(Reply::json(
        200,
        &json!({"compatibilityLevel": global, "subjects": subjects}),
    ))
}
