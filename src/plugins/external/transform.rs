//! A transformation run by a plugin program (the `transformation` role): one process per configured
//! transformation of a task, started when the first record comes (on the task's thread), given each
//! record in turn inside the task's pipeline, so that on the source side it stays within the source's
//! transaction. Its errors are record errors: `errors.tolerance`, the dead letter queue and
//! `errors.log.enable` apply to them as to a built-in transformation's.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use super::data::{record_from_json, record_to_json};
use super::process::PluginProcess;
use super::program::ProgramClass;
use crate::config::ConfigError;
use crate::connectors::Props;
use crate::converters::json::JsonConverter;
use crate::data::DataError;
use crate::record::ConnectRecord;
use crate::transforms::{RecordContext, Transformation};

/// A transformation class of a plugin program: the plugin table's factory for it.
#[derive(Debug)]
pub struct TransformationClass {
    /// The class and how to run it.
    pub program: Arc<ProgramClass>,
}

impl TransformationClass {
    /// A configured transformation; its process starts with the first record.
    pub fn configure(&self, props: &Props) -> Result<Box<dyn Transformation>, ConfigError> {
        Ok(Box::new(ProgramTransformation {
            program: self.program.clone(),
            config: props.clone(),
            process: Mutex::new(None),
            converter: JsonConverter::default(),
        }))
    }
}

/// One configured transformation of a plugin program.
struct ProgramTransformation {
    program: Arc<ProgramClass>,
    config: Props,
    process: Mutex<Option<PluginProcess>>,
    converter: JsonConverter,
}

impl std::fmt::Debug for ProgramTransformation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramTransformation")
            .field("class", &self.program.class)
            .finish_non_exhaustive()
    }
}

impl ProgramTransformation {
    fn started(&self) -> Result<PluginProcess, String> {
        let class = self.program.class;
        let mut process = PluginProcess::start(&self.program.spec, class, class, "transformation")
            .map_err(|e| e.to_string())?;
        process
            .request(&json!({"type": "start", "config": self.config}), "started")
            .map_err(|e| e.to_string())?;
        Ok(process)
    }

    fn exchange(&self, record: Json) -> Result<Json, String> {
        let mut slot = self
            .process
            .lock()
            .map_err(|_| "The transformation's process lock is poisoned".to_string())?;
        if slot.is_none() {
            *slot = Some(self.started()?);
        }
        let process = slot
            .as_mut()
            .ok_or("The transformation's process is not running")?;
        let answer = process.request(
            &json!({"type": "transform", "record": record}),
            "transformed",
        );
        if process.is_broken() {
            // Started again for the next record: one record's failure does not end the transformation.
            *slot = None;
        }
        answer.map_err(|e| e.to_string())
    }
}

impl Transformation for ProgramTransformation {
    fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        let mut given = record_to_json(&record, &self.converter).map_err(DataError::new)?;
        if let Some(offset) = ctx.kafka_offset {
            given["offset"] = json!(offset);
        }
        let answer = self.exchange(given).map_err(DataError::new)?;
        match answer.get("record") {
            None | Some(Json::Null) => Ok(None),
            Some(out) => record_from_json(out, &self.converter)
                .map(Some)
                .map_err(|e| {
                    DataError::new(format!("The transformation's record is invalid: {e}"))
                }),
        }
    }
}

impl Drop for ProgramTransformation {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.process.lock() {
            if let Some(mut process) = slot.take() {
                process.stop(self.program.spec.grace);
            }
        }
    }
}
