//! `liteconnect.airbyte.AirbyteSourceConnector`: any Airbyte source (a program speaking the Airbyte
//! protocol, such as the `source-<name>` commands of the `airbyte-source-*` Python packages) as a source
//! connector. Its STATE messages are the source offsets, committed with the records they cover
//! ([page](../../../docs/connectors/airbyte.md)).

pub mod catalog;
pub mod protocol;
pub mod schema;
pub mod spec;
pub mod stats;
pub mod task;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value as Json;

use self::catalog::{Selection, SyncModes};
use self::protocol::{Scratch, Source};
use super::{ConnectorPlugin, Props, SourceTask, TaskError};
use crate::config::def::{key, ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance};
use crate::config::def::{KeyRow, Validator};
use crate::connectors::plugin_identity;

const VERSION: &str = "1.0.0";
/// The executable of the source.
pub const COMMAND: &str = "airbyte.command";
/// The source's JSON config.
pub const CONFIG: &str = "airbyte.config";
const STREAMS: &str = "airbyte.streams";
const SYNC_MODE: &str = "airbyte.sync.mode";
const PREFIX: &str = "topic.prefix";
const TEMPLATE: &str = "airbyte.topic.template";
const INTERVAL: &str = "airbyte.sync.interval.ms";
const READ_TIMEOUT: &str = "airbyte.read.timeout.ms";
const COMMAND_TIMEOUT: &str = "airbyte.command.timeout.ms";

#[rustfmt::skip]
const PLAIN_KEYS: &[KeyRow] = {
    use ConfigType::{List, Password, String as Text};
    use Importance::{High, Low, Medium};
    &[
        (CONFIG, Password, Some("{}"), High, "The source's config, as JSON (what its SPEC describes). Config providers such as ${file:...} work in it."),
        (STREAMS, List, Some(""), Medium, "The streams to read (default: every stream DISCOVER lists)."),
        (SYNC_MODE, Text, Some("auto"), Medium, "auto (incremental where the stream supports it, else full_refresh), incremental or full_refresh; stream=mode items set one stream's mode."),
        (PREFIX, Text, Some(""), Medium, "The prefix of the topic names."),
        (TEMPLATE, Text, Some("${prefix}${namespace}.${stream}"), Low, "The topic of a stream; ${namespace}. is left out for a stream without a namespace."),
    ]
};

/// A task's settings, read from its config.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The source program.
    pub source: Source,
    /// `airbyte.config`, parsed.
    pub config: Json,
    /// Which streams, in which mode, to which topics.
    pub selection: Selection,
    /// The wait between the end of a READ and the start of the next.
    pub interval: Duration,
    /// How long a READ may run (zero: no limit).
    pub read_timeout: Duration,
}

fn millis(props: &Props, key: &str, default: u64) -> Result<Duration, String> {
    match props.get(key).map(|s| s.trim()).filter(|s| !s.is_empty()) {
        None => Ok(Duration::from_millis(default)),
        Some(t) => t
            .parse()
            .map(Duration::from_millis)
            .map_err(|_| format!("{key}: {t} is not a number of milliseconds")),
    }
}

impl Settings {
    /// Reads the settings; an error names the key.
    pub fn from_props(props: &Props) -> Result<Settings, String> {
        let get = |k: &str| props.get(k).cloned().unwrap_or_default();
        let command = get(COMMAND).trim().to_string();
        if command.is_empty() {
            return Err(format!("{COMMAND} is required"));
        }
        let config = parse_config(props.get(CONFIG).map_or("{}", String::as_str))?;
        let template = match get(TEMPLATE) {
            t if t.trim().is_empty() => "${prefix}${namespace}.${stream}".to_string(),
            t => t,
        };
        let selection = Selection {
            streams: crate::config::def::parse_list(&get(STREAMS)),
            modes: SyncModes::parse(&get(SYNC_MODE)).map_err(|e| format!("{SYNC_MODE}: {e}"))?,
            prefix: get(PREFIX),
            template,
        };
        let name = props
            .get(crate::config::keys::NAME)
            .cloned()
            .unwrap_or_else(|| command.clone());
        Ok(Settings {
            source: Source {
                command,
                name,
                timeout: millis(props, COMMAND_TIMEOUT, 120_000)?,
            },
            config,
            selection,
            interval: millis(props, INTERVAL, 300_000)?,
            read_timeout: millis(props, READ_TIMEOUT, 3_600_000)?,
        })
    }
}

/// `airbyte.config` as a JSON object.
fn parse_config(text: &str) -> Result<Json, String> {
    let text = if text.trim().is_empty() { "{}" } else { text };
    match serde_json::from_str::<Json>(text) {
        Ok(v @ Json::Object(_)) => Ok(v),
        Ok(_) => Err(format!("{CONFIG} must be a JSON object")),
        Err(e) => Err(format!("{CONFIG} is not valid JSON: {e}")),
    }
}

/// The source's SPEC (its `connectionSpecification` and the rest of the answer) for the command of
/// `props`, run with `airbyte.command.timeout.ms`; blocks while the source runs.
pub fn spec(props: &Props) -> Result<Json, String> {
    let mut props = props.clone();
    // Only the command and its timeout matter here.
    props.remove(CONFIG);
    Settings::from_props(&props)?
        .source
        .ask(&[], "spec", "SPEC")
}

/// `liteconnect.airbyte.AirbyteSourceConnector`.
#[derive(Debug)]
pub struct AirbyteSource;

impl AirbyteSource {
    /// The SPEC's errors on `airbyte.config`, then CHECK's answer, as validation errors.
    fn run_checks(settings: &Settings) -> Vec<(String, String)> {
        let on = |key: &str, m: String| vec![(key.to_string(), m)];
        let spec = match settings.source.ask(&[], "spec", "SPEC") {
            Ok(s) => s,
            Err(e) => return on(COMMAND, e),
        };
        let errors = spec::check(&spec["connectionSpecification"], &settings.config);
        if !errors.is_empty() {
            return errors
                .into_iter()
                .map(|e| {
                    (
                        CONFIG.to_string(),
                        format!("The source's SPEC refuses it: {e}"),
                    )
                })
                .collect();
        }
        let answer = Scratch::new()
            .and_then(|s| Ok((s.write("config.json", &settings.config)?, s)))
            .map_err(|e| e.to_string())
            .and_then(|(path, _keep)| settings.source.ask(&[&path], "check", "CONNECTION_STATUS"));
        match answer {
            Ok(status) if status["status"] == "SUCCEEDED" => Vec::new(),
            Ok(status) => on(
                CONFIG,
                format!(
                    "The source's CHECK failed: {}",
                    status["message"].as_str().unwrap_or("no message")
                ),
            ),
            Err(e) => on(CONFIG, format!("The source's CHECK failed: {e}")),
        }
    }
}

impl ConnectorPlugin for AirbyteSource {
    plugin_identity!(
        "liteconnect.airbyte.AirbyteSourceConnector",
        Source,
        VERSION,
        "liteconnect.airbyte.AirbyteSourceTask"
    );
    fn config_def(&self) -> ConfigDef {
        use ConfigType::Long;
        use Importance::{High, Low, Medium};
        let checked = [
            ConfigKey::new(
                COMMAND,
                ConfigType::String,
                DefaultValue::Required,
                High,
                "The source's executable (source-faker, source-file, or a path), run without a shell.",
            )
            .validator(Validator::NonEmptyString),
            key(INTERVAL, Long, Some("300000"), Medium, "The wait between the end of a READ and the start of the next.")
                .validator(Validator::AtLeast(0.0)),
            key(READ_TIMEOUT, Long, Some("3600000"), Medium, "How long a READ may run before it is stopped (0: no limit).")
                .validator(Validator::AtLeast(0.0)),
            key(COMMAND_TIMEOUT, Long, Some("120000"), Low, "How long SPEC, CHECK and DISCOVER may take.")
                .validator(Validator::AtLeast(1.0)),
        ];
        checked
            .into_iter()
            .fold(ConfigDef::new(), ConfigDef::define)
            .define_rows(PLAIN_KEYS)
    }
    fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
        let get = |k: &str| config.get(k).cloned().flatten().unwrap_or_default();
        let mut errors = Vec::new();
        // A config with `${provider:path:key}` placeholders is checked once they are resolved: by the
        // live checks of validation, and when a task starts.
        let source_config = get(CONFIG);
        if !source_config.contains("${") {
            if let Err(e) = parse_config(&source_config) {
                errors.push((CONFIG.to_string(), e));
            }
        }
        if let Err(e) = SyncModes::parse(&get(SYNC_MODE)) {
            errors.push((SYNC_MODE.to_string(), e));
        }
        errors
    }
    fn check_live(&self, config: &Props) -> Vec<(String, String)> {
        match Settings::from_props(config) {
            Ok(settings) => Self::run_checks(&settings),
            // The definition and `validate` report these.
            Err(_) => Vec::new(),
        }
    }
    fn task_configs(&self, config: &Props, _max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        // One READ at a time: one task.
        Ok(vec![config.clone()])
    }
    fn source_task(&self) -> Option<Box<dyn SourceTask>> {
        Some(Box::<task::AirbyteTask>::default())
    }
}
