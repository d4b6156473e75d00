//! The plugin registry: every connector, converter, transformation and predicate liteconnect ships,
//! in one table ([`table`]), found by Kafka's class names and aliases through one resolver
//! ([`resolve`], spec §8.3). REST, validation, the herder, the worker and the CLI all go through it.

mod desc;
pub mod external;
mod factory;
pub mod features;
mod resolve;
mod table;
mod transformations;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde::Serialize;

use crate::config::connector::{plugin_config_keys, validate_connector_config, PluginLookup};
use crate::config::def::{key_info, ConfigDef, ConfigInfos, ConfigKeyInfo};
use crate::connectors::{ConnectorPlugin, ConnectorType};
use crate::error::ConnectError;

pub use crate::converters::{Converter, HeaderConverter};
pub use desc::{
    simple_name, Factory, MakeConverter, MakeHeaderConverter, MakePredicate, MakeTransform,
    PluginDesc, PluginKind,
};
pub use factory::{new_converter, new_header_converter};
pub use resolve::ResolveError;

/// One row of `GET /connector-plugins`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PluginInfo {
    /// Fully qualified class name.
    pub class: String,
    /// The plugin's interface.
    #[serde(rename = "type")]
    pub plugin_type: PluginKind,
    /// Plugin version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The `type` of a connector in Kafka's `ConnectorInfo` and status answers: `unknown` when its class
/// names no installed connector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorInfoType {
    /// A source connector.
    Source,
    /// A sink connector.
    Sink,
    /// The class is not installed.
    Unknown,
}

impl ConnectorInfoType {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorInfoType::Source => "source",
            ConnectorInfoType::Sink => "sink",
            ConnectorInfoType::Unknown => "unknown",
        }
    }
}

impl From<ConnectorType> for ConnectorInfoType {
    fn from(t: ConnectorType) -> Self {
        match t {
            ConnectorType::Source => ConnectorInfoType::Source,
            ConnectorType::Sink => ConnectorInfoType::Sink,
        }
    }
}

/// The installed plugins and their alias table, built once.
struct Table {
    rows: Vec<PluginDesc>,
    aliases: BTreeMap<&'static str, &'static str>,
}

/// The table in use: the built-in rows, with those of the plugin programs found on `plugin.path` once
/// a worker has looked ([`install_external`]). A table is never freed: rows are handed out for the
/// process's lifetime, and a new one is made only when a worker starts.
static TABLE: RwLock<Option<&'static Table>> = RwLock::new(None);

fn table_of(rows: Vec<PluginDesc>) -> &'static Table {
    let aliases = resolve::alias_table(&rows);
    Box::leak(Box::new(Table { rows, aliases }))
}

fn installed() -> &'static Table {
    if let Some(table) = *TABLE.read().expect("plugin table lock") {
        return table;
    }
    let mut slot = TABLE.write().expect("plugin table lock");
    slot.get_or_insert_with(|| table_of(table::rows()))
}

/// Finds the plugin programs on the worker's `plugin.path` and makes the plugin table the built-in rows
/// with theirs; a manifest that is invalid or whose class clashes with a built-in plugin or another
/// manifest's is logged with its file and reason and left out. Returns what was left out.
pub fn install_external(config: &crate::config::worker::WorkerConfig) -> Vec<external::Problem> {
    let builtin = table::rows();
    let is_builtin = |class: &str| builtin.iter().any(|r| r.class == class);
    let (rows, problems) = external::discover(config, &is_builtin);
    let mut slot = TABLE.write().expect("plugin table lock");
    let had_external = slot.is_some_and(|t| t.rows.len() != builtin.len());
    if !rows.is_empty() || had_external {
        let mut all = builtin.clone();
        all.extend(rows);
        *slot = Some(table_of(all));
    }
    problems
}

/// Resolves a plugin name (full class name or alias) to the row of one of `kinds`; for a class with
/// rows of several of them, the first of `kinds` wins.
///
/// # Errors
/// Kafka's messages for a name that matches nothing, or (connectors) more than one class.
pub fn resolve(kinds: &[PluginKind], name: &str) -> Result<&'static PluginDesc, ResolveError> {
    let table = installed();
    resolve::resolve(&table.rows, &table.aliases, kinds, name)
}

/// Every installed row of `kind`, sorted by class as Kafka lists plugins.
pub fn of_kind(kind: PluginKind) -> Vec<&'static PluginDesc> {
    let mut rows: Vec<_> = installed().rows.iter().filter(|r| r.kind == kind).collect();
    rows.sort_by_key(|r| r.class);
    rows
}

/// All installed plugins.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plugins;

impl Plugins {
    /// The installed plugin set: the built-in plugins and those found on `plugin.path`.
    pub fn new() -> Self {
        Plugins
    }

    /// Connector plugins, sinks then sources, each sorted by class.
    pub fn connectors(&self) -> impl Iterator<Item = &'static Arc<dyn ConnectorPlugin>> {
        PluginKind::CONNECTORS
            .into_iter()
            .flat_map(of_kind)
            .filter_map(PluginDesc::connector_plugin)
    }

    /// Finds a connector by fully qualified name, simple name, or simple name without `Connector`.
    ///
    /// # Errors
    /// Kafka's `Failed to find any class ...` or `More than one connector matches alias ...`.
    pub fn connector(&self, name: &str) -> Result<Arc<dyn ConnectorPlugin>, ResolveError> {
        let row = resolve(&PluginKind::CONNECTORS, name)?;
        Ok(row
            .connector_plugin()
            .expect("connector rows hold a connector")
            .clone())
    }

    /// The `type` Kafka shows for a connector of this class.
    pub fn connector_type(&self, class: Option<&str>) -> ConnectorInfoType {
        class
            .and_then(|c| self.connector(c).ok())
            .map_or(ConnectorInfoType::Unknown, |p| p.connector_type().into())
    }

    /// `GET /connector-plugins/{p}/config`: a connector's own keys then the framework keys it does
    /// not redefine; any other plugin's own keys, in definition order. `None` for an unknown name.
    pub fn plugin_config(&self, name: &str) -> Option<Vec<ConfigKeyInfo>> {
        let row = resolve(&PluginKind::ALL, name).ok()?;
        let def = row.config_def();
        Some(match row.connector_plugin() {
            Some(p) => plugin_config_keys(p.connector_type(), &def),
            None => def.keys().iter().map(key_info).collect(),
        })
    }

    /// `GET /connector-plugins`: connectors (sink then source), then, unless `connectors_only`,
    /// transformations, predicates, converters and header converters, each kind sorted by class.
    pub fn list(&self, connectors_only: bool) -> Vec<PluginInfo> {
        let kinds: &[PluginKind] = if connectors_only {
            &PluginKind::CONNECTORS
        } else {
            &PluginKind::ALL
        };
        // A class installed in several versions (KIP-891) has a row for each, as in Kafka.
        let versions = |r: &PluginDesc| match (&r.factory, r.connector_plugin()) {
            (_, Some(p)) => p.versions(),
            (Factory::TransformationProgram(t) | Factory::PredicateProgram(t), _) => {
                t.version_names()
            }
            _ => vec![r.version],
        };
        kinds
            .iter()
            .flat_map(|k| of_kind(*k))
            .flat_map(|r| {
                versions(r).into_iter().map(|v| PluginInfo {
                    class: r.class.to_string(),
                    plugin_type: r.kind,
                    version: Some(v.to_string()),
                })
            })
            .collect()
    }
}

fn java_map(config: &BTreeMap<String, Option<String>>) -> String {
    let inner: Vec<String> = config
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("null")))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

impl Plugins {
    /// Validates a connector config as `PUT /connector-plugins/{p}/config/validate` does. Pure: no I/O,
    /// so `liteconnect validate` runs it without a worker.
    ///
    /// # Errors
    /// 400 when there is no `connector.class` or it names no installed connector (Kafka answers 500).
    pub fn validate(
        &self,
        config: &BTreeMap<String, Option<String>>,
    ) -> Result<ConfigInfos, ConnectError> {
        self.validate_with(config, Vec::new())
    }

    /// As [`Plugins::validate`], with errors found beyond the plugin's own checks (the herder's: a
    /// listener address already held), as (key, message).
    ///
    /// # Errors
    /// As [`Plugins::validate`].
    pub fn validate_with(
        &self,
        config: &BTreeMap<String, Option<String>>,
        more: Vec<(String, String)>,
    ) -> Result<ConfigInfos, ConnectError> {
        let class = match config.get(crate::config::keys::CONNECTOR_CLASS) {
            Some(Some(c)) if !c.trim().is_empty() => c.clone(),
            _ => {
                return Err(ConnectError::BadRequest(format!(
                    "Connector config {} contains no connector type",
                    java_map(config)
                )))
            }
        };
        let plugin = self
            .connector(&class)
            .map_err(|e| ConnectError::BadRequest(e.to_string()))?;
        let def = plugin.config_def();
        let mut extra = plugin.validate(config);
        extra.extend(more);
        Ok(validate_connector_config(
            &class,
            plugin.connector_type(),
            &def,
            extra,
            config,
            self,
        ))
    }
}

/// The config definition of the row of `kind` that `name` resolves to.
fn def_of(kind: PluginKind, name: &str) -> Option<ConfigDef> {
    resolve(&[kind], name).ok().map(PluginDesc::config_def)
}

impl PluginLookup for Plugins {
    fn transformation_def(&self, class: &str) -> Option<ConfigDef> {
        transformations::transformation_def(class)
    }
    fn predicate_def(&self, class: &str) -> Option<ConfigDef> {
        transformations::predicate_def(class)
    }
    fn transformation_classes(&self) -> Vec<String> {
        transformations::transformation_classes()
    }
    fn predicate_classes(&self) -> Vec<String> {
        transformations::predicate_classes()
    }
    /// Transformation and predicate aliases show as the class they stand for, as in Kafka;
    /// other names stay as given.
    fn class_name(&self, class: &str) -> String {
        resolve(&[PluginKind::Transformation, PluginKind::Predicate], class)
            .map_or_else(|_| class.to_owned(), |r| r.class.to_owned())
    }
    fn converter_def(&self, class: &str) -> Option<ConfigDef> {
        def_of(PluginKind::Converter, class)
    }
    fn header_converter_def(&self, class: &str) -> Option<ConfigDef> {
        def_of(PluginKind::HeaderConverter, class)
    }
    fn plugin_version_error(&self, class_key: &str, class: &str, wanted: &str) -> Option<String> {
        let kind = if class_key.starts_with("transforms.") {
            PluginKind::Transformation
        } else if class_key.starts_with("predicates.") {
            PluginKind::Predicate
        } else if class_key == crate::config::keys::HEADER_CONVERTER {
            PluginKind::HeaderConverter
        } else {
            PluginKind::Converter
        };
        let r = resolve(&[kind], class).ok()?;
        match &r.factory {
            Factory::TransformationProgram(t) | Factory::PredicateProgram(t) => {
                t.check_version(wanted).err()
            }
            _ => transformations::builtin_version(r, Some(wanted)).err(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve() {
        let plugins = Plugins::new();
        for name in [
            "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "FileStreamSourceConnector",
            "FileStreamSource",
        ] {
            assert_eq!(
                plugins.connector(name).unwrap().class(),
                "org.apache.kafka.connect.file.FileStreamSourceConnector"
            );
        }
        assert!(
            matches!(plugins.connector("Nope"), Err(e @ ResolveError::NotFound { .. }) if e.to_string().starts_with("Failed to find any class that implements Connector and which name matches Nope"))
        );
    }

    #[test]
    fn one_row_per_class_and_kind_and_every_row_resolves_by_class() {
        let rows = &installed().rows;
        let mut keys: Vec<_> = rows.iter().map(|r| (r.class, r.kind)).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), rows.len());
        for r in rows {
            let found = resolve(&[r.kind], r.class).unwrap();
            assert_eq!((found.class, found.kind), (r.class, r.kind));
            let factory_kind = match r.factory {
                Factory::Connector(ref p) => p.connector_type().into(),
                Factory::Converter { .. } => PluginKind::Converter,
                Factory::HeaderConverter { .. } => PluginKind::HeaderConverter,
                Factory::Transformation { .. } | Factory::TransformationProgram(_) => {
                    PluginKind::Transformation
                }
                Factory::Predicate { .. } | Factory::PredicateProgram(_) => PluginKind::Predicate,
            };
            assert_eq!(factory_kind, r.kind, "{}", r.class);
        }
    }

    #[test]
    fn listing_groups_kinds_in_kafka_order_and_serialises_kafka_type_names() {
        let plugins = Plugins::new();
        let all = plugins.list(false);
        assert_eq!(all.len(), installed().rows.len());
        let kinds: Vec<PluginKind> = all.iter().map(|p| p.plugin_type).collect();
        let mut sorted = kinds.clone();
        sorted.sort_by_key(|k| PluginKind::ALL.iter().position(|x| x == k));
        assert_eq!(kinds, sorted);
        let json = serde_json::to_value(&all).unwrap();
        let mut names: Vec<&str> = json
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["type"].as_str().unwrap())
            .collect();
        names.dedup();
        assert_eq!(
            names,
            [
                "sink",
                "source",
                "transformation",
                "predicate",
                "converter",
                "header_converter"
            ]
        );
        assert_eq!(plugins.list(true).len(), plugins.connectors().count());
    }

    #[test]
    fn connector_type_is_unknown_only_for_classes_not_installed() {
        let plugins = Plugins::new();
        assert_eq!(
            plugins.connector_type(Some("FileStreamSink")),
            ConnectorInfoType::Sink
        );
        assert_eq!(
            plugins.connector_type(Some("JsonConverter")),
            ConnectorInfoType::Unknown
        );
        assert_eq!(plugins.connector_type(None), ConnectorInfoType::Unknown);
        assert_eq!(
            serde_json::to_value(ConnectorInfoType::Unknown).unwrap(),
            "unknown"
        );
    }
}
