//! One installed plugin: its class, kind, version, config definition and constructor (Kafka's
//! `PluginDesc`).

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::config::def::ConfigDef;
use crate::connectors::{ConnectorPlugin, ConnectorType, Props};
use crate::converters::{Converter, HeaderConverter};
use crate::data::DataError;
use crate::transforms::{Predicate, Transformation};

/// Builds a configured converter.
pub type MakeConverter = fn(&Props) -> Result<Arc<dyn Converter>, DataError>;
/// Builds a configured header converter.
pub type MakeHeaderConverter = fn(&Props) -> Result<Arc<dyn HeaderConverter>, DataError>;
/// Builds a configured transformation.
pub type MakeTransform = fn(&Props) -> Result<Box<dyn Transformation>, crate::config::ConfigError>;
/// Builds a configured predicate.
pub type MakePredicate = fn(&Props) -> Result<Box<dyn Predicate>, crate::config::ConfigError>;

/// The plugin interfaces of Kafka Connect (Kafka's `PluginType`), serialised as Kafka names them in
/// `GET /connector-plugins`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginKind {
    /// A sink connector.
    Sink,
    /// A source connector.
    Source,
    /// `org.apache.kafka.connect.transforms.Transformation`.
    Transformation,
    /// `org.apache.kafka.connect.transforms.predicates.Predicate`.
    Predicate,
    /// `org.apache.kafka.connect.storage.Converter`.
    Converter,
    /// `org.apache.kafka.connect.storage.HeaderConverter`.
    HeaderConverter,
}

impl PluginKind {
    /// Every kind, in the order `GET /connector-plugins` lists them.
    pub const ALL: [PluginKind; 6] = [
        PluginKind::Sink,
        PluginKind::Source,
        PluginKind::Transformation,
        PluginKind::Predicate,
        PluginKind::Converter,
        PluginKind::HeaderConverter,
    ];
    /// Both connector kinds: what `connector.class` may name.
    pub const CONNECTORS: [PluginKind; 2] = [PluginKind::Sink, PluginKind::Source];

    /// The name on the wire (`source`, `header_converter`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Sink => "sink",
            PluginKind::Source => "source",
            PluginKind::Transformation => "transformation",
            PluginKind::Predicate => "predicate",
            PluginKind::Converter => "converter",
            PluginKind::HeaderConverter => "header_converter",
        }
    }

    /// The suffix Kafka's `PluginUtils.prunedName` cuts from a simple class name to make an alias:
    /// `Connector` for connectors, else the interface's simple name.
    fn alias_suffix(self) -> &'static str {
        match self {
            PluginKind::Sink | PluginKind::Source => "Connector",
            PluginKind::Transformation => "Transformation",
            PluginKind::Predicate => "Predicate",
            PluginKind::Converter => "Converter",
            PluginKind::HeaderConverter => "HeaderConverter",
        }
    }

    /// Whether this is a source or sink connector.
    pub fn is_connector(self) -> bool {
        matches!(self, PluginKind::Sink | PluginKind::Source)
    }
}

impl From<ConnectorType> for PluginKind {
    fn from(t: ConnectorType) -> Self {
        match t {
            ConnectorType::Source => PluginKind::Source,
            ConnectorType::Sink => PluginKind::Sink,
        }
    }
}

/// How a plugin is built, with its config definition where the plugin object does not carry it.
#[derive(Clone)]
pub enum Factory {
    /// A connector: the plugin object is its own factory and definition.
    Connector(Arc<dyn ConnectorPlugin>),
    /// A converter.
    Converter {
        /// Its config definition.
        def: fn() -> ConfigDef,
        /// Its constructor.
        make: MakeConverter,
    },
    /// A header converter.
    HeaderConverter {
        /// Its config definition.
        def: fn() -> ConfigDef,
        /// Its constructor.
        make: MakeHeaderConverter,
    },
    /// A transformation.
    Transformation {
        /// Its config definition.
        def: fn() -> ConfigDef,
        /// Its constructor.
        make: MakeTransform,
    },
    /// A transformation run by a plugin program.
    TransformationProgram(Arc<super::external::RecordPluginClass>),
    /// A predicate run by a plugin program.
    PredicateProgram(Arc<super::external::RecordPluginClass>),
    /// A predicate.
    Predicate {
        /// Its config definition.
        def: fn() -> ConfigDef,
        /// Its constructor.
        make: MakePredicate,
    },
}

/// One row of the plugin table. A class implementing two interfaces (JsonConverter is a Converter
/// and a HeaderConverter) has one row per interface, as in Kafka.
#[derive(Clone)]
pub struct PluginDesc {
    /// Fully qualified class name, as Kafka names it.
    pub class: &'static str,
    /// The interface this row stands for.
    pub kind: PluginKind,
    /// The plugin version.
    pub version: &'static str,
    /// How to build it.
    pub factory: Factory,
}

impl fmt::Debug for PluginDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginDesc")
            .field("class", &self.class)
            .field("kind", &self.kind)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl PluginDesc {
    /// A connector row; class, kind and version come from the plugin itself.
    pub fn connector(plugin: Arc<dyn ConnectorPlugin>) -> Self {
        PluginDesc {
            class: plugin.class(),
            kind: plugin.connector_type().into(),
            version: plugin.version(),
            factory: Factory::Connector(plugin),
        }
    }

    /// The plugin's own config definition (for a connector, without the framework keys).
    pub fn config_def(&self) -> ConfigDef {
        match &self.factory {
            Factory::Connector(p) => p.config_def(),
            Factory::Converter { def, .. }
            | Factory::HeaderConverter { def, .. }
            | Factory::Transformation { def, .. }
            | Factory::Predicate { def, .. } => def(),
            Factory::TransformationProgram(t) | Factory::PredicateProgram(t) => t
                .newest()
                .map_or_else(|_| ConfigDef::new(), |p| p.config_def()),
        }
    }

    /// The connector plugin, for connector rows.
    pub fn connector_plugin(&self) -> Option<&Arc<dyn ConnectorPlugin>> {
        match &self.factory {
            Factory::Connector(p) => Some(p),
            _ => None,
        }
    }

    /// Java's `getSimpleName()`: the part after the last `.` or `$`.
    pub fn simple_name(&self) -> &'static str {
        simple_name(self.class)
    }

    /// Kafka's aliases of this row: the simple name, and the pruned name (the simple name cut at the
    /// last occurrence of the kind's suffix, when that is not at the start).
    pub fn aliases(&self) -> Vec<&'static str> {
        let simple = self.simple_name();
        let mut out = vec![simple];
        if let Some(pos) = simple.rfind(self.kind.alias_suffix()).filter(|p| *p > 0) {
            out.push(&simple[..pos]);
        }
        out
    }
}

/// Java's `getSimpleName()` of a class name.
pub fn simple_name(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}
