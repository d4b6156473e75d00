//! jcustenborder's SpoolDir source connectors (`com.github.jcustenborder.kafka.connect.spooldir`): CSV,
//! JSON, line-delimited and schemaless JSON files dropped in a directory become records. Keys, defaults,
//! record shape, headers and offsets follow the original; a file is moved or deleted only once all its
//! records are committed to the local log.

pub mod config;
mod convert;
pub mod files;
mod keys;
mod parse;
mod readers;
pub mod schema_json;
mod task;

use std::collections::BTreeMap;

use serde_json::Value as Json;

use self::config::Format;
use super::{ConnectorPlugin, ConnectorType, Props, SourceTask, TaskError};
use crate::config::def::ConfigDef;

/// The version the plugins report.
const VERSION: &str = "2.0.66";

/// Defines one SpoolDir connector plugin.
macro_rules! spooldir_plugin {
    ($(#[$doc:meta])* $name:ident, $format:expr, $class:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl ConnectorPlugin for $name {
            fn class(&self) -> &'static str {
                concat!("com.github.jcustenborder.kafka.connect.spooldir.", $class, "Connector")
            }
            fn connector_type(&self) -> ConnectorType {
                ConnectorType::Source
            }
            fn version(&self) -> &'static str {
                VERSION
            }
            fn task_class(&self) -> &'static str {
                concat!("com.github.jcustenborder.kafka.connect.spooldir.", $class, "Task")
            }
            fn config_def(&self) -> ConfigDef {
                config::config_def($format)
            }
            fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
                config::cross_key_errors($format, config)
            }
            fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
                Ok(task_configs(config, max_tasks))
            }
            fn source_task(&self) -> Option<Box<dyn SourceTask>> {
                Some(Box::new(task::SpoolTask::new($format)))
            }
            fn alter_offsets(
                &self,
                _config: &Props,
                offsets: &[(Json, Option<Json>)],
            ) -> Result<bool, String> {
                check_offsets(offsets)
            }
        }
    };
}

spooldir_plugin!(
    /// `SpoolDirCsvSourceConnector`: CSV rows into structs of `value.schema`.
    SpoolDirCsvSource,
    Format::Csv,
    "SpoolDirCsvSource"
);
spooldir_plugin!(
    /// `SpoolDirJsonSourceConnector`: JSON objects into structs of `value.schema`.
    SpoolDirJsonSource,
    Format::Json,
    "SpoolDirJsonSource"
);
spooldir_plugin!(
    /// `SpoolDirLineDelimitedSourceConnector`: each line a string value.
    SpoolDirLineDelimitedSource,
    Format::Lines,
    "SpoolDirLineDelimitedSource"
);
spooldir_plugin!(
    /// `SpoolDirSchemaLessJsonSourceConnector`: each JSON value as its JSON text in a string value.
    SpoolDirSchemaLessJsonSource,
    Format::SchemaLessJson,
    "SpoolDirSchemaLessJsonSource"
);

/// Accepts offsets of the original's shape: `{"fileName": name}` to `{"offset": n}` (or null).
fn check_offsets(offsets: &[(Json, Option<Json>)]) -> Result<bool, String> {
    for (partition, offset) in offsets {
        if !partition.get("fileName").is_some_and(Json::is_string) {
            return Err(format!(
                "Partition objects should contain the string key 'fileName': {partition}"
            ));
        }
        if let Some(offset) = offset {
            if !offset.get("offset").is_some_and(Json::is_i64) {
                return Err(format!(
                    "Offset objects should either be null or contain the integer key 'offset': {offset}"
                ));
            }
        }
    }
    Ok(true)
}

/// One config per task, each with its `task.index` and the `task.count`, as the original's connector.
fn task_configs(config: &Props, max_tasks: usize) -> Vec<Props> {
    let count = max_tasks.max(1);
    (0..count)
        .map(|i| {
            let mut c = config.clone();
            c.insert(config::TASK_INDEX.into(), i.to_string());
            c.insert(config::TASK_COUNT.into(), count.to_string());
            c
        })
        .collect()
}

#[cfg(test)]
mod tests;
