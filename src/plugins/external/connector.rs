//! A connector class provided by a plugin program: the [`ConnectorPlugin`] the plugin table holds for
//! it. Its config definition, validation and task configs are the program's answers (a short-lived
//! process in the `connector` role per question); its tasks are [`super::source::ExternalSourceTask`]s
//! and [`super::sink::ExternalSinkTask`]s.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde_json::{json, Value as Json};

use super::process::{PluginProcess, ProgramSpec};
use crate::config::def::{ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance};
use crate::connectors::{ConnectorPlugin, ConnectorType, Props, SinkTask, SourceTask, TaskError};

/// A connector class run by a plugin program.
#[derive(Debug)]
pub struct ExternalConnector {
    class: &'static str,
    kind: ConnectorType,
    version: &'static str,
    spec: Arc<ProgramSpec>,
    /// The program's config definition, once it has given one.
    def: OnceLock<ConfigDef>,
}

/// Runs `work`, which blocks on a plugin program, off the async executor: inside a multi-threaded tokio
/// runtime the thread is handed over to blocking work first (REST requests ask for config definitions
/// and task configs); elsewhere it runs as it is.
pub(super) fn blocking<T>(work: impl FnOnce() -> T) -> T {
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
fn def_of(answer: &Json) -> Result<ConfigDef, String> {
    let keys = answer
        .get("keys")
        .and_then(Json::as_array)
        .ok_or("the config_def answer has no keys array")?;
    keys.iter()
        .try_fold(ConfigDef::new(), |def, k| Ok(def.define(key_of(k)?)))
}

impl ExternalConnector {
    /// A connector class of a plugin program; `class` and `version` live as long as the worker.
    pub fn new(
        class: &'static str,
        kind: ConnectorType,
        version: &'static str,
        spec: ProgramSpec,
    ) -> Self {
        ExternalConnector {
            class,
            kind,
            version,
            spec: Arc::new(spec),
            def: OnceLock::new(),
        }
    }

    /// Starts the program in the `connector` role, asks one question and stops it.
    fn ask(&self, name: &str, question: &Json, expect: &str) -> Result<Json, TaskError> {
        blocking(|| {
            let label = format!("{name} ({})", self.class);
            let mut process = PluginProcess::start(&self.spec, &label, self.class, "connector")?;
            let answer = process.request(question, expect);
            process.stop(self.spec.grace);
            answer
        })
    }

    fn name_in(config: &Props) -> &str {
        config.get("name").map_or("", String::as_str)
    }
}

impl ConnectorPlugin for ExternalConnector {
    fn class(&self) -> &'static str {
        self.class
    }
    fn connector_type(&self) -> ConnectorType {
        self.kind
    }
    fn version(&self) -> &'static str {
        self.version
    }
    fn task_class(&self) -> &'static str {
        self.class
    }

    /// The program's own keys; none (and the reason logged) when it cannot say, so that the framework's
    /// keys still validate.
    fn config_def(&self) -> ConfigDef {
        if let Some(def) = self.def.get() {
            return def.clone();
        }
        let answer = self
            .ask("config", &json!({"type": "config_def"}), "config_def")
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

    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let given: serde_json::Map<String, Json> = config
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), Json::String(v.clone()?))))
            .collect();
        let name = config.get("name").cloned().flatten().unwrap_or_default();
        let answer = self.ask(
            &name,
            &json!({"type": "validate", "config": given}),
            "validate",
        );
        let errors = match answer {
            Ok(a) => a.get("errors").cloned().unwrap_or(Json::Null),
            Err(e) => {
                return vec![(
                    crate::config::keys::CONNECTOR_CLASS.to_owned(),
                    format!("The plugin could not validate the config: {e}"),
                )]
            }
        };
        let mut out = Vec::new();
        if let Json::Object(errors) = errors {
            for (key, messages) in errors {
                match messages {
                    Json::Array(ms) => out.extend(
                        ms.iter()
                            .map(|m| (key.clone(), m.as_str().unwrap_or_default().to_owned())),
                    ),
                    Json::String(m) => out.push((key, m)),
                    _ => {}
                }
            }
        }
        out
    }

    fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        let answer = self.ask(
            Self::name_in(config),
            &json!({"type": "task_configs", "config": config, "max_tasks": max_tasks}),
            "task_configs",
        )?;
        let tasks = answer
            .get("tasks")
            .and_then(Json::as_array)
            .ok_or_else(|| {
                TaskError::fatal("The plugin's task_configs answer has no tasks array")
            })?;
        tasks
            .iter()
            .map(|t| match t {
                Json::Object(m) => Ok(m
                    .iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                        (k.clone(), v)
                    })
                    .collect()),
                _ => Err(TaskError::fatal(
                    "The plugin's task_configs answer holds a task config that is not an object",
                )),
            })
            .collect()
    }

    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        (self.kind == ConnectorType::Source).then(|| {
            Box::new(super::source::ExternalSourceTask::new(
                self.class,
                self.spec.clone(),
            )) as Box<dyn SourceTask>
        })
    }

    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        (self.kind == ConnectorType::Sink).then(|| {
            Box::new(super::sink::ExternalSinkTask::new(
                self.class,
                self.spec.clone(),
            )) as Box<dyn SinkTask>
        })
    }
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
