//! A connector class provided by a plugin program: the [`ConnectorPlugin`] the plugin table holds for
//! it. Its config definition, validation and task configs are the program's answers (a short-lived
//! process in the `connector` role per question, [`ProgramClass::ask`]); its tasks are [`super::source::ExternalSourceTask`]s
//! and [`super::sink::ExternalSinkTask`]s.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::instance::ExternalInstance;
use super::process::{PluginProcess, ProgramSpec};
use super::program::ProgramClass;
use super::version;
use crate::config::def::ConfigDef;
use crate::config::keys::CONNECTOR_PLUGIN_VERSION;
use crate::connectors::{
    ConnectorEvents, ConnectorInstance, ConnectorPlugin, ConnectorType, Props, SinkTask,
    SourceTask, TaskError,
};

/// The installed versions of one class, oldest first.
pub type Versions = Arc<Vec<Arc<ProgramClass>>>;

/// The version of `versions` that `wanted` (a `connector.plugin.version`) picks: the newest in its range,
/// the newest of all without one.
///
/// # Errors
/// Kafka's message for a range that matches none, or for one it cannot read.
pub fn pick<'a>(
    versions: &'a Versions,
    wanted: Option<&str>,
) -> Result<&'a Arc<ProgramClass>, String> {
    pick_for(versions, CONNECTOR_PLUGIN_VERSION, wanted)
}

/// The version of `versions` that `wanted`, the value of `key`, picks (see [`version::pick_index`]).
///
/// # Errors
/// Kafka's message for a range that matches none, or for one it cannot read.
pub fn pick_for<'a>(
    versions: &'a Versions,
    key: &str,
    wanted: Option<&str>,
) -> Result<&'a Arc<ProgramClass>, String> {
    let available: Vec<&str> = versions.iter().map(|v| v.version).collect();
    let class = versions.last().map_or("", |v| v.class);
    let i = version::pick_index(class, key, &available, wanted)?;
    versions
        .get(i)
        .ok_or_else(|| "no version is installed".to_owned())
}

/// Starts the process of a task in `role`, of the version its config names (the one the connector's
/// task configs were made by); returns it with how long it gets to stop. Its stderr lines are logged
/// under `id` (the task id, `connector-3`), else the connector's name.
///
/// # Errors
/// As [`PluginProcess::start`], or the version is no longer installed.
pub(super) fn task_process(
    versions: &Versions,
    config: &Props,
    role: &str,
    id: Option<&str>,
) -> Result<(PluginProcess, std::time::Duration), TaskError> {
    let wanted = config.get(CONNECTOR_PLUGIN_VERSION).map(String::as_str);
    let program = pick(versions, wanted).map_err(TaskError::Fatal)?;
    let name = id.unwrap_or_else(|| config.get("name").map_or(program.class, String::as_str));
    let process = PluginProcess::start(&program.spec, name, program.class, role)?;
    Ok((process, program.spec.grace))
}

/// A connector class run by a plugin program, in each of its installed versions.
#[derive(Debug)]
pub struct ExternalConnector {
    versions: Versions,
    kind: ConnectorType,
}

impl ExternalConnector {
    /// A connector class of a plugin program, in `versions` (at least one, any order); names live as
    /// long as the worker.
    pub fn new(
        kind: ConnectorType,
        mut versions: Vec<(&'static str, &'static str, ProgramSpec)>,
    ) -> Self {
        versions.sort_by(|a, b| version::compare(a.1, b.1));
        let versions = versions
            .into_iter()
            .map(|(class, v, spec)| Arc::new(ProgramClass::new(class, v, spec, "connector")))
            .collect();
        ExternalConnector {
            versions: Arc::new(versions),
            kind,
        }
    }

    /// The newest version.
    fn newest(&self) -> &ProgramClass {
        self.versions
            .last()
            .map(AsRef::as_ref)
            .expect("a plugin class has a version")
    }

    fn name_in(config: &Props) -> &str {
        config.get("name").map_or("", String::as_str)
    }
}

impl ConnectorPlugin for ExternalConnector {
    fn class(&self) -> &'static str {
        self.newest().class
    }
    fn connector_type(&self) -> ConnectorType {
        self.kind
    }
    fn version(&self) -> &'static str {
        self.newest().version
    }
    fn versions(&self) -> Vec<&'static str> {
        self.versions.iter().map(|v| v.version).collect()
    }
    fn task_class(&self) -> &'static str {
        self.newest().class
    }

    fn config_def(&self) -> ConfigDef {
        self.newest().config_def()
    }

    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let given: serde_json::Map<String, Json> = config
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), Json::String(v.clone()?))))
            .collect();
        let name = config.get("name").cloned().flatten().unwrap_or_default();
        let wanted = config.get(CONNECTOR_PLUGIN_VERSION).cloned().flatten();
        let program = match pick(&self.versions, wanted.as_deref()) {
            Ok(p) => p,
            Err(e) => return vec![(CONNECTOR_PLUGIN_VERSION.to_owned(), e)],
        };
        let answer = program.ask(
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
        let wanted = config.get(CONNECTOR_PLUGIN_VERSION).map(String::as_str);
        let program = pick(&self.versions, wanted).map_err(TaskError::Fatal)?;
        let answer = program.ask(
            Self::name_in(config),
            &json!({"type": "task_configs", "config": config, "max_tasks": max_tasks}),
            "task_configs",
        )?;
        tasks_of(&answer, program.version)
    }

    fn start_instance(
        &self,
        name: &str,
        config: &Props,
        events: ConnectorEvents,
    ) -> Result<Option<Box<dyn ConnectorInstance>>, TaskError> {
        let wanted = config.get(CONNECTOR_PLUGIN_VERSION).map(String::as_str);
        let program = pick(&self.versions, wanted).map_err(TaskError::Fatal)?;
        let instance = ExternalInstance::start(program.clone(), name, config, events)?;
        Ok(instance.map(|i| Box::new(i) as Box<dyn ConnectorInstance>))
    }

    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        (self.kind == ConnectorType::Source).then(|| {
            Box::new(super::source::ExternalSourceTask::new(
                self.versions.clone(),
            )) as Box<dyn SourceTask>
        })
    }

    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        (self.kind == ConnectorType::Sink).then(|| {
            Box::new(super::sink::ExternalSinkTask::new(self.versions.clone())) as Box<dyn SinkTask>
        })
    }
}

/// The task configs of a `task_configs` answer, each with the version of the program that made it
/// (which its task runs too).
///
/// # Errors
/// Fatal when the answer is not an array of objects.
pub(super) fn tasks_of(answer: &Json, version: &str) -> Result<Vec<Props>, TaskError> {
    let tasks = answer
        .get("tasks")
        .and_then(Json::as_array)
        .ok_or_else(|| TaskError::fatal("The plugin's task_configs answer has no tasks array"))?;
    tasks
        .iter()
        .map(|t| match t {
            Json::Object(m) => {
                let mut task: Props = m
                    .iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                        (k.clone(), v)
                    })
                    .collect();
                task.insert(CONNECTOR_PLUGIN_VERSION.to_owned(), version.to_owned());
                Ok(task)
            }
            _ => Err(TaskError::fatal(
                "The plugin's task_configs answer holds a task config that is not an object",
            )),
        })
        .collect()
}
