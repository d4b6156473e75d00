//! Transformations and predicates run by a plugin program (the `transformation` and `predicate` roles):
//! one process per configured transformation or predicate of a task, started when the first record comes
//! (on the task's thread), given each record in turn inside the task's pipeline, so that on the source side
//! it stays within the source's transaction. Their errors are record errors: `errors.tolerance`, the dead
//! letter queue and `errors.log.enable` apply to them as to a built-in transformation's.

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
use crate::transforms::{Predicate, RecordContext, Transformation};

/// A transformation or predicate class of a plugin program: the plugin table's factory for it.
#[derive(Debug)]
pub struct RecordPluginClass {
    /// The class and how to run it.
    pub program: Arc<ProgramClass>,
}

impl RecordPluginClass {
    fn process(&self, props: &Props, role: &'static str) -> RecordProcess {
        RecordProcess {
            program: self.program.clone(),
            config: props.clone(),
            role,
            process: Mutex::new(None),
            converter: JsonConverter::default(),
        }
    }

    /// A configured transformation; its process starts with the first record.
    ///
    /// # Errors
    /// None yet: the program checks its config when it starts.
    pub fn transformation(&self, props: &Props) -> Result<Box<dyn Transformation>, ConfigError> {
        Ok(Box::new(ProgramTransformation(
            self.process(props, "transformation"),
        )))
    }

    /// A configured predicate; its process starts with the first record.
    ///
    /// # Errors
    /// None yet: the program checks its config when it starts.
    pub fn predicate(&self, props: &Props) -> Result<Box<dyn Predicate>, ConfigError> {
        Ok(Box::new(ProgramPredicate(self.process(props, "predicate"))))
    }
}

/// The process behind one configured transformation or predicate.
struct RecordProcess {
    program: Arc<ProgramClass>,
    config: Props,
    role: &'static str,
    process: Mutex<Option<PluginProcess>>,
    converter: JsonConverter,
}

impl std::fmt::Debug for RecordProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordProcess")
            .field("class", &self.program.class)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl RecordProcess {
    fn started(&self) -> Result<PluginProcess, String> {
        let class = self.program.class;
        let mut process = PluginProcess::start(&self.program.spec, class, class, self.role)
            .map_err(|e| e.to_string())?;
        process
            .request(&json!({"type": "start", "config": self.config}), "started")
            .map_err(|e| e.to_string())?;
        Ok(process)
    }

    /// Sends `record` in a `kind` request and returns the `expect` answer.
    fn exchange(
        &self,
        record: &ConnectRecord,
        ctx: Option<&RecordContext>,
        kind: &str,
        expect: &str,
    ) -> Result<Json, DataError> {
        let mut given = record_to_json(record, &self.converter).map_err(DataError::new)?;
        if let Some(offset) = ctx.and_then(|c| c.kafka_offset) {
            given["offset"] = json!(offset);
        }
        let mut slot = self
            .process
            .lock()
            .map_err(|_| DataError::new("The plugin's process lock is poisoned"))?;
        if slot.is_none() {
            *slot = Some(self.started().map_err(DataError::new)?);
        }
        let process = slot
            .as_mut()
            .ok_or_else(|| DataError::new("The plugin's process is not running"))?;
        let answer = process.request(&json!({"type": kind, "record": given}), expect);
        if process.is_broken() {
            // Started again for the next record: one record's failure does not end it.
            *slot = None;
        }
        answer.map_err(|e| DataError::new(e.to_string()))
    }
}

impl Drop for RecordProcess {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.process.lock() {
            if let Some(mut process) = slot.take() {
                process.stop(self.program.spec.grace);
            }
        }
    }
}

#[derive(Debug)]
struct ProgramTransformation(RecordProcess);

impl Transformation for ProgramTransformation {
    fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        let answer = self
            .0
            .exchange(&record, Some(ctx), "transform", "transformed")?;
        match answer.get("record") {
            None | Some(Json::Null) => Ok(None),
            Some(out) => record_from_json(out, &self.0.converter)
                .map(Some)
                .map_err(|e| {
                    DataError::new(format!("The transformation's record is invalid: {e}"))
                }),
        }
    }
}

#[derive(Debug)]
struct ProgramPredicate(RecordProcess);

impl Predicate for ProgramPredicate {
    /// Only through [`Predicate::try_test`]: a record that cannot be tested does not match.
    fn test(&self, record: &ConnectRecord) -> bool {
        self.try_test(record).unwrap_or(false)
    }

    fn try_test(&self, record: &ConnectRecord) -> Result<bool, DataError> {
        let answer = self.0.exchange(record, None, "test", "tested")?;
        answer
            .get("matches")
            .and_then(Json::as_bool)
            .ok_or_else(|| DataError::new("The predicate's answer has no matches boolean"))
    }
}
