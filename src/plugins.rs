//! The plugin registry: every connector, converter, transformation and predicate liteconnect ships,
//! found by Kafka's class names and aliases (spec §8.3).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::config::connector::{validate_connector_config, ConnectorType, PluginLookup};
use crate::config::def::{ConfigDef, ConfigInfos};
use crate::connectors::file::{FileStreamSink, FileStreamSource};
use crate::connectors::verifiable::{MockSink, MockSource, VerifiableSink, VerifiableSource};
use crate::connectors::ConnectorPlugin;
use crate::converters::{self, ConverterKind};
use crate::error::ConnectError;
use crate::transforms;

/// One row of `GET /connector-plugins`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PluginInfo {
    /// Fully qualified class name.
    pub class: String,
    /// `source`, `sink`, `converter`, `header_converter`, `transformation` or `predicate`.
    #[serde(rename = "type")]
    pub plugin_type: String,
    /// Plugin version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// All installed plugins.
#[derive(Debug, Clone)]
pub struct Plugins {
    connectors: Vec<Arc<dyn ConnectorPlugin>>,
}

impl Default for Plugins {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a connector class could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// No class matches.
    NotFound(String),
    /// More than one class matches the alias.
    Ambiguous(String),
}

fn simple_name(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}

impl Plugins {
    /// The built-in plugin set.
    pub fn new() -> Self {
        Plugins {
            connectors: vec![
                Arc::new(FileStreamSink),
                Arc::new(FileStreamSource),
                Arc::new(MockSink),
                Arc::new(MockSource),
                Arc::new(VerifiableSink),
                Arc::new(VerifiableSource),
                Arc::new(crate::connectors::kafka::KafkaSink),
                Arc::new(crate::connectors::kafka::MirrorSource),
            ],
        }
    }

    /// Connector plugins, sorted by class.
    pub fn connectors(&self) -> impl Iterator<Item = &Arc<dyn ConnectorPlugin>> {
        self.connectors.iter()
    }

    /// Finds a connector by fully qualified name, simple name, or simple name without `Connector`.
    pub fn connector(&self, name: &str) -> Result<Arc<dyn ConnectorPlugin>, ResolveError> {
        let name = name.trim();
        if let Some(p) = self.connectors.iter().find(|p| p.class() == name) {
            return Ok(p.clone());
        }
        let matches: Vec<_> = self
            .connectors
            .iter()
            .filter(|p| {
                let simple = simple_name(p.class());
                simple == name || simple.strip_suffix("Connector") == Some(name)
            })
            .collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(ResolveError::NotFound(format!(
                "Failed to find any class that implements Connector and which name matches {name}, available connectors are: {}",
                self.connectors
                    .iter()
                    .map(|p| format!(
                        "PluginDesc{{klass=class {}, name='{}', version='{}', encodedVersion={}, type={}, typeName='{}', location='classpath'}}",
                        p.class(),
                        p.class(),
                        p.version(),
                        p.version(),
                        p.connector_type().as_str(),
                        p.connector_type().as_str()
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            many => Err(ResolveError::Ambiguous(format!(
                "More than one connector matches alias {name}. Please use full package and class name instead. Classes found: {}",
                many.iter().map(|p| p.class()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// `GET /connector-plugins/{p}/config` for a plugin that is not a connector: converters,
    /// transformations and predicates (their own keys only, in definition order).
    pub fn plugin_config(&self, name: &str) -> Option<Vec<crate::config::def::ConfigKeyInfo>> {
        let smt = transforms::transformation_def(name).or_else(|| transforms::predicate_def(name));
        if let Some(def) = smt {
            return Some(
                def.keys()
                    .iter()
                    .map(crate::config::def::key_info)
                    .collect(),
            );
        }
        let c = converters::resolve_converter_class(name)?;
        let def = if c.kinds.contains(&ConverterKind::Converter) {
            self.converter_def(c.class)
        } else {
            self.header_converter_def(c.class)
        }?;
        Some(
            def.keys()
                .iter()
                .map(crate::config::def::key_info)
                .collect(),
        )
    }

    /// `GET /connector-plugins`: connectors (sink then source), then, unless `connectors_only`, the rest.
    pub fn list(&self, connectors_only: bool) -> Vec<PluginInfo> {
        let mut out = Vec::new();
        for kind in [ConnectorType::Sink, ConnectorType::Source] {
            let mut group: Vec<_> = self
                .connectors
                .iter()
                .filter(|p| p.connector_type() == kind)
                .map(|p| PluginInfo {
                    class: p.class().to_string(),
                    plugin_type: kind.as_str().to_string(),
                    version: Some(p.version().to_string()),
                })
                .collect();
            group.sort_by(|a, b| a.class.cmp(&b.class));
            out.extend(group);
        }
        if connectors_only {
            return out;
        }
        // the registry lists each kind sorted by class already
        for (classes, type_name) in [
            (transforms::transformation_classes(), "transformation"),
            (transforms::predicate_classes(), "predicate"),
        ] {
            out.extend(classes.into_iter().map(|class| PluginInfo {
                class,
                plugin_type: type_name.to_string(),
                version: Some(converters::KAFKA_VERSION.to_string()),
            }));
        }
        for (kind, type_name) in [
            (ConverterKind::Converter, "converter"),
            (ConverterKind::HeaderConverter, "header_converter"),
        ] {
            let mut group: Vec<_> = converters::converter_plugins()
                .iter()
                .filter(|c| c.kinds.contains(&kind))
                .map(|c| PluginInfo {
                    class: c.class.to_string(),
                    plugin_type: type_name.to_string(),
                    version: Some(c.version.to_string()),
                })
                .collect();
            group.sort_by(|a, b| a.class.cmp(&b.class));
            out.extend(group);
        }
        out
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
        let class = match config.get(crate::config::keys::CONNECTOR_CLASS) {
            Some(Some(c)) if !c.trim().is_empty() => c.clone(),
            _ => {
                return Err(ConnectError::BadRequest(format!(
                    "Connector config {} contains no connector type",
                    java_map(config)
                )))
            }
        };
        let plugin = self.connector(&class).map_err(|e| match e {
            ResolveError::NotFound(m) | ResolveError::Ambiguous(m) => ConnectError::BadRequest(m),
        })?;
        let def = plugin.config_def();
        let extra = plugin.validate(config);
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

impl PluginLookup for Plugins {
    fn transformation_def(&self, class: &str) -> Option<ConfigDef> {
        transforms::transformation_def(class)
    }
    fn predicate_def(&self, class: &str) -> Option<ConfigDef> {
        transforms::predicate_def(class)
    }
    fn transformation_classes(&self) -> Vec<String> {
        transforms::transformation_classes()
    }
    fn predicate_classes(&self) -> Vec<String> {
        transforms::predicate_classes()
    }
    /// Transformation and predicate aliases show as the class they stand for, as in Kafka;
    /// other names stay as given.
    fn class_name(&self, class: &str) -> String {
        transforms::resolve_transformation(class)
            .or_else(|| transforms::resolve_predicate(class))
            .map_or_else(|| class.to_owned(), str::to_owned)
    }
    fn converter_def(&self, class: &str) -> Option<ConfigDef> {
        converters::resolve_converter_class(class)
            .filter(|c| c.kinds.contains(&ConverterKind::Converter))
            .map(|_| ConfigDef::new())
    }
    fn header_converter_def(&self, class: &str) -> Option<ConfigDef> {
        converters::resolve_converter_class(class)
            .filter(|c| c.kinds.contains(&ConverterKind::HeaderConverter))
            .map(|_| ConfigDef::new())
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
            matches!(plugins.connector("Nope"), Err(ResolveError::NotFound(m)) if m.starts_with("Failed to find any class that implements Connector and which name matches Nope"))
        );
    }
}
