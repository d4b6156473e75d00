//! A Schema Registry at the other end of a connection (a central cluster's, or the target of a
//! migration), for copying schemas between registries: reading a subject's versions and schemas by ID,
//! registering with references whose versions are that registry's, and telling an outage (retriable)
//! from a refusal. Blocking, through the shared [`RegistryClient`]: callers run on task threads.

use serde_json::{json, Value as Json};

use super::{RegistryClient, RegistryConfig};
use crate::connectors::TaskError;
use crate::storage::registry::{SchemaReference, StoredSchema};

/// The registry at the other end, through the shared registry client (blocking: task threads may
/// block; the HTTP client is made on first use, on the task's thread).
#[derive(Debug)]
pub struct OtherRegistry {
    /// The base URL without credentials: the name its mappings are kept under.
    pub url: String,
    /// The client.
    pub client: RegistryClient,
}

/// Reads `<prefix>url`, `<prefix>basic.auth.credentials.source` and `<prefix>basic.auth.user.info`
/// (Confluent's client keys under a prefix); `None` when the URL is not set.
#[cfg(feature = "kafka-client")]
pub fn other_registry(
    config: &crate::connectors::Props,
    prefix: &str,
) -> Result<Option<OtherRegistry>, String> {
    let mut keys: crate::connectors::Props = config
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_string(), v.clone())))
        .filter(|(k, _)| k.starts_with("basic.auth."))
        .collect();
    let Some(url) = config
        .get(&format!("{prefix}url"))
        .filter(|u| u.split(',').any(|u| !u.trim().is_empty()))
    else {
        return Ok(None);
    };
    keys.insert("schema.registry.url".into(), url.clone());
    let registry =
        RegistryConfig::from_map(&keys).map_err(|e| format!("{e} (the key under {prefix})"))?;
    OtherRegistry::new(registry)
        .map(Some)
        .map_err(|e| format!("{prefix}url: {e}"))
}

/// A request's failure: retriable (cannot reach, 5xx, 408, 429) or not.
pub fn failure(url: &str, status: u16, why: &str) -> TaskError {
    let message = format!("The Schema Registry at {url} answered {status}: {why}");
    match status {
        408 | 429 | 500..=599 => TaskError::Retriable(message),
        _ => TaskError::Fatal(message),
    }
}

impl OtherRegistry {
    /// A registry from its client settings.
    ///
    /// # Errors
    /// The URL is not one.
    pub fn new(registry: RegistryConfig) -> Result<OtherRegistry, String> {
        let mut named = reqwest::Url::parse(&registry.url)
            .map_err(|e| format!("'{}' is not a URL: {e}", registry.url))?;
        // Credentials in the URL are sent (as the URL credentials source says), never kept as its name.
        let _ = named.set_username("");
        let _ = named.set_password(None);
        Ok(OtherRegistry {
            url: named.as_str().trim_end_matches('/').to_string(),
            client: RegistryClient::new(registry),
        })
    }

    /// One request: its JSON answer; `Ok(None)` for a 404.
    pub fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<Option<Json>, TaskError> {
        let (status, text) = self
            .client
            .call(method, path, body)
            .map_err(|e| TaskError::Retriable(e.0))?;
        match status {
            200 => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| failure(&self.url, status, &format!("not JSON: {e}"))),
            404 => Ok(None),
            _ => Err(failure(&self.url, status, &text)),
        }
    }

    /// A schema as this registry answered it (`GET /schemas/ids/{id}`, `GET /subjects/{s}/versions/{v}`).
    pub fn stored(&self, id: i64, answer: &Json) -> Result<StoredSchema, TaskError> {
        let schema = answer["schema"]
            .as_str()
            .ok_or_else(|| failure(&self.url, 200, &format!("no schema in {answer}")))?;
        let references = serde_json::from_value(answer["references"].clone()).unwrap_or_default();
        Ok(StoredSchema {
            id,
            schema_type: answer["schemaType"].as_str().unwrap_or("AVRO").to_string(),
            schema: schema.to_string(),
            references,
        })
    }

    /// Registers a schema under a subject (its references already there): its ID and version there.
    pub fn register(
        &self,
        subject: &str,
        schema: &StoredSchema,
        refs: &[SchemaReference],
    ) -> Result<(i64, i32), TaskError> {
        let encoded = encode(subject);
        let mut body = json!({ "schema": schema.schema, "references": refs });
        if schema.schema_type != "AVRO" {
            body["schemaType"] = json!(schema.schema_type);
        }
        let missing = || {
            failure(
                &self.url,
                404,
                &format!("no subject {subject} after registering"),
            )
        };
        let path = format!("/subjects/{encoded}/versions");
        let answer = self
            .call(reqwest::Method::POST, &path, Some(&body))?
            .ok_or_else(missing)?;
        // A registration answers the ID alone; the lookup answers the version too.
        let found = self
            .call(
                reqwest::Method::POST,
                &format!("/subjects/{encoded}"),
                Some(&body),
            )?
            .ok_or_else(missing)?;
        let version = version_of(&found);
        match (answer["id"].as_i64(), version) {
            (Some(id), Some(version)) => Ok((id, version)),
            _ => Err(TaskError::Fatal(format!(
                "The Schema Registry at {} answered no ID or version for subject {subject}: {answer} {found}",
                self.url
            ))),
        }
    }
}

/// A subject as a path segment.
pub fn encode(subject: &str) -> percent_encoding::PercentEncode<'_> {
    percent_encoding::utf8_percent_encode(subject, percent_encoding::NON_ALPHANUMERIC)
}

/// The `version` of a registry answer.
pub fn version_of(answer: &Json) -> Option<i32> {
    answer["version"]
        .as_i64()
        .and_then(|v| i32::try_from(v).ok())
}
