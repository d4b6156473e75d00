//! One class of a plugin program, whatever its kind: how to run it, and the questions asked of a
//! short-lived process of it (its config definition, kept once given).

use std::sync::{Arc, OnceLock};

use serde_json::{json, Value as Json};

use super::process::{PluginProcess, ProgramSpec};
use crate::config::def::{ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance};
use crate::connectors::TaskError;

/// A class of a plugin program.
#[derive(Debug)]
pub struct ProgramClass {
    /// Its fully qualified name (lives as long as the worker).
    pub class: &'static str,
    /// Its version.
    pub version: &'static str,
    /// How to run it.
    pub spec: Arc<ProgramSpec>,
    /// The role its processes are started in for questions (`connector`, `transformation`).
    role: &'static str,
    /// The program's config definition, once it has given one.
    def: OnceLock<ConfigDef>,
}

impl ProgramClass {
    /// A class whose questions are asked in `role`.
    pub fn new(
        class: &'static str,
        version: &'static str,
        spec: ProgramSpec,
        role: &'static str,
    ) -> Self {
        ProgramClass {
            class,
            version,
            spec: Arc::new(spec),
            role,
            def: OnceLock::new(),
        }
    }

    /// Starts a process, asks one question (for the connector or task `name`) and stops it.
    ///
    /// # Errors
    /// As [`PluginProcess::request`].
    pub fn ask(&self, name: &str, question: &Json, expect: &str) -> Result<Json, TaskError> {
        blocking(|| {
            let label = if name.is_empty() {
                self.class.to_owned()
            } else {
                format!("{name} ({})", self.class)
            };
            let mut process = PluginProcess::start(&self.spec, &label, self.class, self.role)?;
            let answer = process.request(question, expect);
            process.stop(self.spec.grace);
            answer
        })
    }

    /// The program's own keys; none (and the reason logged) when it cannot say, so that the framework's
    /// keys still validate.
    pub fn config_def(&self) -> ConfigDef {
        if let Some(def) = self.def.get() {
            return def.clone();
        }
        let answer = self
            .ask("", &json!({"type": "config_def"}), "config_def")
            .map_err(|e| e.to_string())
            .and_then(|a| def_of(&a));
        match answer {
            Ok(def) => self.def.get_or_init(|| def).clone(),
            Err(e) => {
                tracing::error!(
                    class = self.class,
                    "The plugin's config definition could not be read: {e}"
                );
                ConfigDef::new()
            }
        }
    }
}

/// Runs `work`, which blocks on a plugin program, off the async executor: inside a multi-threaded tokio
/// runtime the thread is handed over to blocking work first (REST requests ask for config definitions
/// and task configs); elsewhere it runs as it is.
pub fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// A config key from the program's `config_def` answer.
fn key_of(j: &Json) -> Result<ConfigKey, String> {
    let text = |k: &str| j.get(k).and_then(Json::as_str);
    let name = text("name").ok_or("a key without a name")?;
    let config_type = match text("type") {
        None => ConfigType::String,
        Some(t) => ConfigType::from_wire(t).ok_or(format!("{name}: unknown type {t}"))?,
    };
    let importance = match text("importance") {
        None => Importance::Medium,
        Some(i) => Importance::from_wire(i).ok_or(format!("{name}: unknown importance {i}"))?,
    };
    let default = match j.get("default") {
        None => DefaultValue::Required,
        Some(Json::Null) => DefaultValue::Null,
        Some(Json::String(s)) => DefaultValue::Value(s.clone()),
        Some(Json::Array(items)) => DefaultValue::Value(
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(","),
        ),
        Some(other) => DefaultValue::Value(other.to_string()),
    };
    let mut key = ConfigKey::new(
        name,
        config_type,
        default,
        importance,
        text("documentation").unwrap_or_default(),
    );
    if let Some(group) = text("group") {
        let order = j.get("order_in_group").and_then(Json::as_i64).unwrap_or(-1);
        key = key.group(group, i32::try_from(order).unwrap_or(-1));
    }
    if let Some(display) = text("display_name") {
        key.display_name = display.to_owned();
    }
    Ok(key)
}

/// The config definition in a `config_def` answer.
pub(super) fn def_of(answer: &Json) -> Result<ConfigDef, String> {
    let keys = answer
        .get("keys")
        .and_then(Json::as_array)
        .ok_or("the config_def answer has no keys array")?;
    keys.iter()
        .try_fold(ConfigDef::new(), |def, k| Ok(def.define(key_of(k)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_def_answers_become_kafka_keys() {
        let def = def_of(&json!({"keys": [
            {"name": "device", "type": "STRING", "importance": "HIGH", "documentation": "which"},
            {"name": "interval.ms", "type": "LONG", "default": "1000"},
            {"name": "tags", "type": "list", "default": ["a", "b"]},
            {"name": "label", "default": null},
        ]}))
        .unwrap();
        let keys = def.keys();
        assert_eq!(keys.len(), 4);
        assert_eq!(keys[0].default, DefaultValue::Required);
        assert_eq!(keys[0].importance, Importance::High);
        assert_eq!(keys[1].config_type, ConfigType::Long);
        assert_eq!(keys[2].default, DefaultValue::Value("a,b".into()));
        assert_eq!(keys[3].default, DefaultValue::Null);
        assert!(def_of(&json!({"keys": [{"name": "x", "type": "NOPE"}]}))
            .unwrap_err()
            .contains("unknown type NOPE"));
    }
}
