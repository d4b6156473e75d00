//! `liteconnect migrate --schema-registry-to`: the subjects a migrated connector's registry converters
//! use are carried to the target's registry (every version, oldest first, the subjects their references
//! name first), and the converters' `schema.registry.url` in the migrated config name that registry.

use std::collections::HashMap;

use serde_json::{json, Value as Json};

use crate::connectors::{Props, TaskError};
use crate::converters::registry::other::{encode, OtherRegistry};
use crate::converters::registry::RegistryConfig;
use crate::storage::registry::SchemaReference;

/// How deep references may nest.
const MAX_DEPTH: usize = 16;

/// The registry a migration carries subjects to.
#[derive(Clone, Debug)]
pub struct SchemaTarget {
    /// Its URL.
    pub url: String,
    /// `user:password` for its basic authentication.
    pub user_info: Option<String>,
}

/// The converter roles whose `schema.registry.url` a config sets: (role, the converter's own keys).
fn registry_roles(config: &Json) -> Vec<(&'static str, Props)> {
    ["key", "value"]
        .into_iter()
        .filter_map(|role| {
            let prefix = format!("{role}.converter.");
            let keys: Props = config
                .as_object()?
                .iter()
                .filter_map(|(k, v)| {
                    Some((
                        k.strip_prefix(&prefix)?.to_string(),
                        v.as_str()?.to_string(),
                    ))
                })
                .collect();
            keys.contains_key("schema.registry.url")
                .then_some((role, keys))
        })
        .collect()
}

/// The config as it is created on the target: the converters' registry URLs name `target`.
pub fn rewrite(config: &Json, target: &SchemaTarget) -> Json {
    let mut out = config.clone();
    for (role, _) in registry_roles(config) {
        out[format!("{role}.converter.schema.registry.url")] = json!(target.url);
    }
    out
}

/// Carries the subjects `config`'s registry converters use to `target` (blocks): with
/// TopicNameStrategy (the default) `<topic>-key` / `<topic>-value` of the topics the config names
/// (`topics`, `topic`), with another strategy every subject of the converter's registry. Answers how
/// many versions were carried.
///
/// # Errors
/// A registry that cannot be reached or refuses a schema, with its message.
pub fn carry(config: &Json, target: &SchemaTarget) -> Result<usize, String> {
    let mut keys = Props::new();
    keys.insert("schema.registry.url".into(), target.url.clone());
    if let Some(info) = &target.user_info {
        keys.insert("basic.auth.credentials.source".into(), "USER_INFO".into());
        keys.insert("basic.auth.user.info".into(), info.clone());
    }
    let to = OtherRegistry::new(RegistryConfig::from_map(&keys).map_err(|e| e.0)?)?;
    let topics: Vec<String> = ["topics", "topic"]
        .iter()
        .filter_map(|k| config[*k].as_str())
        .flat_map(|t| t.split(','))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    let mut carried = 0;
    for (role, converter) in registry_roles(config) {
        let from = OtherRegistry::new(RegistryConfig::from_map(&converter).map_err(|e| e.0)?)?;
        let strategy = converter.get(&format!("{role}.subject.name.strategy"));
        let subjects: Vec<String> =
            if strategy.is_none_or(|s| s.trim().rsplit('.').next() == Some("TopicNameStrategy")) {
                topics.iter().map(|t| format!("{t}-{role}")).collect()
            } else {
                let all = from
                    .call(reqwest::Method::GET, "/subjects", None)
                    .map_err(|e| e.to_string())?;
                serde_json::from_value(all.unwrap_or_default()).unwrap_or_default()
            };
        let mut copy = Copy {
            from: &from,
            to: &to,
            versions: HashMap::new(),
        };
        for subject in subjects {
            carried += copy.subject(&subject, 0).map_err(|e| e.to_string())?;
        }
    }
    Ok(carried)
}

/// One carrying run between two registries: (subject, version) there → the version it got here.
struct Copy<'a> {
    from: &'a OtherRegistry,
    to: &'a OtherRegistry,
    versions: HashMap<(String, i32), i32>,
}

impl Copy<'_> {
    /// Every version of a subject, oldest first; 0 when the source registry has no such subject.
    fn subject(&mut self, subject: &str, depth: usize) -> Result<usize, TaskError> {
        let path = format!("/subjects/{}/versions", encode(subject));
        let Some(list) = self.from.call(reqwest::Method::GET, &path, None)? else {
            return Ok(0);
        };
        let versions: Vec<i32> = serde_json::from_value(list).unwrap_or_default();
        for v in &versions {
            self.version(subject, *v, depth)?;
        }
        Ok(versions.len())
    }

    /// One version, after what it references: the version it has in the target registry.
    fn version(&mut self, subject: &str, version: i32, depth: usize) -> Result<i32, TaskError> {
        if let Some(v) = self.versions.get(&(subject.to_string(), version)) {
            return Ok(*v);
        }
        if depth > MAX_DEPTH {
            return Err(TaskError::fatal("Schema references nest too deep"));
        }
        let path = format!("/subjects/{}/versions/{version}", encode(subject));
        let found = self
            .from
            .call(reqwest::Method::GET, &path, None)?
            .ok_or_else(|| {
                TaskError::fatal(format!(
                    "{} has no {subject} version {version}",
                    self.from.url
                ))
            })?;
        let schema = self
            .from
            .stored(found["id"].as_i64().unwrap_or(-1), &found)?;
        let mut refs = Vec::with_capacity(schema.references.len());
        for r in &schema.references {
            refs.push(SchemaReference {
                name: r.name.clone(),
                subject: r.subject.clone(),
                version: self.version(&r.subject, r.version, depth + 1)?,
            });
        }
        let (_, there) = self.to.register(subject, &schema, &refs)?;
        self.versions.insert((subject.to_string(), version), there);
        Ok(there)
    }
}
