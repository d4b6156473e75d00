//! A connector class provided by a plugin program: the [`ConnectorPlugin`] the plugin table holds for
//! it. Its config definition, validation and task configs are the program's answers (a short-lived
//! process in the `connector` role per question, [`ProgramClass::ask`]); its tasks are [`super::source::ExternalSourceTask`]s
//! and [`super::sink::ExternalSinkTask`]s.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::process::ProgramSpec;
use super::program::ProgramClass;
use crate::config::def::ConfigDef;
use crate::connectors::{ConnectorPlugin, ConnectorType, Props, SinkTask, SourceTask, TaskError};

/// A connector class run by a plugin program.
#[derive(Debug)]
pub struct ExternalConnector {
    program: ProgramClass,
    kind: ConnectorType,
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
            program: ProgramClass::new(class, version, spec, "connector"),
            kind,
        }
    }

    fn ask(&self, name: &str, question: &Json, expect: &str) -> Result<Json, TaskError> {
        self.program.ask(name, question, expect)
    }

    fn name_in(config: &Props) -> &str {
        config.get("name").map_or("", String::as_str)
    }
}

impl ConnectorPlugin for ExternalConnector {
    fn class(&self) -> &'static str {
        self.program.class
    }
    fn connector_type(&self) -> ConnectorType {
        self.kind
    }
    fn version(&self) -> &'static str {
        self.program.version
    }
    fn task_class(&self) -> &'static str {
        self.program.class
    }

    fn config_def(&self) -> ConfigDef {
        self.program.config_def()
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
                self.program.class,
                self.program.spec.clone(),
            )) as Box<dyn SourceTask>
        })
    }

    fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
        (self.kind == ConnectorType::Sink).then(|| {
            Box::new(super::sink::ExternalSinkTask::new(
                self.program.class,
                self.program.spec.clone(),
            )) as Box<dyn SinkTask>
        })
    }
}
