//! Transformations and predicates run by a plugin program (the `transformation` and `predicate` roles):
//! one process per configured transformation or predicate of a task, started when the first record comes
//! (on the task's thread), given each record in turn inside the task's pipeline, so that on the source side
//! it stays within the source's transaction. Their errors are record errors: `errors.tolerance`, the dead
//! letter queue and `errors.log.enable` apply to them as to a built-in transformation's.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use super::connector::{pick_for, Versions};
use super::data::{record_from_json, record_to_json};
use super::process::PluginProcess;
use super::program::ProgramClass;
use crate::config::ConfigError;
use crate::connectors::Props;
use crate::converters::json::JsonConverter;
use crate::data::DataError;
use crate::record::ConnectRecord;
use crate::transforms::{Predicate, RecordContext, Transformation};

/// The key of a transformation's or predicate's own config that picks its version (KIP-891:
/// `transforms.<t>.plugin.version`, `predicates.<p>.plugin.version`).
pub const PLUGIN_VERSION: &str = "plugin.version";

/// A transformation or predicate class of a plugin program: the plugin table's factory for it.
#[derive(Debug)]
pub struct RecordPluginClass {
    /// Its installed versions, oldest first (at least one).
    pub versions: Versions,
}

impl RecordPluginClass {
    /// The newest version installed.
    ///
    /// # Errors
    /// None is installed (never: a class comes from at least one manifest).
    pub fn newest(&self) -> Result<&Arc<ProgramClass>, String> {
        pick_for(&self.versions, PLUGIN_VERSION, None)
    }

    /// Whether `wanted` (a `plugin.version`) picks an installed version.
    ///
    /// # Errors
    /// Kafka's message when it matches none, or cannot be read.
    pub fn check_version(&self, wanted: &str) -> Result<(), String> {
        pick_for(&self.versions, PLUGIN_VERSION, Some(wanted)).map(|_| ())
    }

    /// Every installed version, oldest first.
    pub fn version_names(&self) -> Vec<&'static str> {
        self.versions.iter().map(|v| v.version).collect()
    }

    /// The process of the version `props` picks with `plugin.version` (KIP-891), given `props`
    /// without that key.
    fn process(&self, props: &Props, role: &'static str) -> Result<RecordProcess, ConfigError> {
        let mut config = props.clone();
        let wanted = config.remove(PLUGIN_VERSION);
        let program = pick_for(&self.versions, PLUGIN_VERSION, wanted.as_deref())?;
        Ok(RecordProcess {
            program: program.clone(),
            config,
            role,
            process: Mutex::new(None),
            converter: JsonConverter::default(),
        })
    }

    /// A configured transformation, in the version its `plugin.version` picks; its process starts
    /// with the first record.
    ///
    /// # Errors
    /// Kafka's message when `plugin.version` matches no installed version; the program checks the
    /// rest of its config when it starts.
    pub fn transformation(&self, props: &Props) -> Result<Box<dyn Transformation>, ConfigError> {
        Ok(Box::new(ProgramTransformation(
            self.process(props, "transformation")?,
        )))
    }

    /// A configured predicate, in the version its `plugin.version` picks; its process starts with the
    /// first record.
    ///
    /// # Errors
    /// As [`RecordPluginClass::transformation`].
    pub fn predicate(&self, props: &Props) -> Result<Box<dyn Predicate>, ConfigError> {
        Ok(Box::new(ProgramPredicate(
            self.process(props, "predicate")?,
        )))
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
