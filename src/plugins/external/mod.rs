//! Plugins that run as separate programs, in any language, found on `plugin.path`
//! ([docs/plugins](../../../docs/plugins/protocol.md)): their manifests ([`manifest`]), the process and
//! protocol framing ([`process`]), records on the protocol ([`data`]), and the connector and task
//! objects the worker runs them through ([`connector`], [`source`]). Discovered classes become rows of
//! the one plugin table, so REST, validation, the herder and the worker find them like built-in ones.

mod connector;
mod data;
mod instance;
pub mod manifest;
pub mod process;
mod program;
mod sink;
mod source;
mod transform;
mod version;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use crate::config::worker::WorkerConfig;
use crate::connectors::ConnectorType;
use crate::plugins::{Factory, PluginDesc, PluginKind};

pub use connector::ExternalConnector;
pub use manifest::{Discovered, Problem, MANIFEST};
pub use transform::{RecordPluginClass, PLUGIN_VERSION};
pub use version::pick_index;

/// A string that lives as long as the worker: the plugin table's rows borrow their names forever, and
/// discovery runs once per worker start.
fn forever(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The table row of a discovered class, from its installed versions (one or more, same kind).
fn row(mut versions: Vec<Discovered>) -> Option<PluginDesc> {
    versions.sort_by(|a, b| version::compare(&a.version, &b.version));
    let first = versions.first()?;
    let class = forever(first.class.clone());
    let kind = match first.kind {
        PluginKind::Sink => ConnectorType::Sink,
        PluginKind::Source => ConnectorType::Source,
        kind => {
            // Transformations and predicates: every version installed, the row shows the newest.
            let (role, factory): (_, fn(_) -> Factory) = match kind {
                PluginKind::Predicate => ("predicate", Factory::PredicateProgram),
                _ => ("transformation", Factory::TransformationProgram),
            };
            let programs: Vec<_> = versions
                .into_iter()
                .map(|d| {
                    Arc::new(program::ProgramClass::new(
                        class,
                        forever(d.version),
                        d.spec,
                        role,
                    ))
                })
                .collect();
            let version = programs.last()?.version;
            let factory = factory(Arc::new(RecordPluginClass {
                versions: Arc::new(programs),
            }));
            return Some(PluginDesc {
                class,
                kind,
                version,
                factory,
            });
        }
    };
    let versions = versions
        .into_iter()
        .map(|d| (class, forever(d.version), d.spec))
        .collect();
    Some(PluginDesc::connector(Arc::new(ExternalConnector::new(
        kind, versions,
    ))))
}

/// Finds the plugins on the worker's `plugin.path`, logs every manifest left out with its file and
/// reason, and returns the rows to add to the plugin table with the problems found.
pub fn discover(
    config: &WorkerConfig,
    builtin: &dyn Fn(&str) -> bool,
) -> (Vec<PluginDesc>, Vec<Problem>) {
    let limits = manifest::Limits {
        request: Duration::from_millis(config.plugin_request_timeout_ms),
        grace: Duration::from_millis(config.task_shutdown_graceful_timeout_ms),
    };
    let (found, problems) = manifest::discover(&config.plugin_path, limits, builtin);
    for p in &problems {
        tracing::error!(file = %p.file.display(), "The plugin manifest {} is left out: {}", p.file.display(), p.reason);
    }
    for d in &found {
        tracing::info!(class = %d.class, version = %d.version, "Found the plugin {} {} in {}", d.class, d.version, d.manifest.display());
    }
    let mut by_class: std::collections::BTreeMap<String, Vec<Discovered>> = Default::default();
    for d in found {
        by_class.entry(d.class.clone()).or_default().push(d);
    }
    (by_class.into_values().filter_map(row).collect(), problems)
}
