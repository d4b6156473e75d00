//! The herder: the control plane. It creates, reconfigures, pauses, resumes, stops, restarts and deletes
//! connectors; it owns target states and task configs and keeps the statuses true.
//!
//! Every change runs under one async lock, as Kafka's herder serialises changes on its own thread; the
//! stored state is written first and the running tasks follow it. Reads take no lock on the database:
//! configs, target states and task configs are mirrored in memory.
//!
//! This file holds the herder, its construction and what its parts share; its methods are spread by
//! concern: `views.rs` (read-only answers), `validation.rs` (config checks), `lifecycle.rs` (create,
//! update, delete, pause, resume, stop), `restarts.rs`, `tasks.rs` (task generation and running),
//! `offsets.rs`, `expand.rs` and `startup.rs`, and `scrape.rs` (what a metrics scrape reads).

mod expand;
mod instances;
mod lifecycle;
pub(crate) mod listeners;
mod names;
mod offsets;
mod restarts;
mod scrape;
mod startup;
mod tasks;
mod validation;
mod views;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde::Serialize;

use crate::config::connector::{invalid_config_message, ConnectorType};
use crate::config::worker::WorkerConfig;
use crate::connectors::{ConnectorPlugin, Props};
use crate::error::ConnectError;
use crate::metrics::Metrics;
use crate::model::TargetState;
use crate::plugins::{ConnectorInfoType, Plugins};
use crate::status::{ConnectorStatusView, StatusBoard};
use crate::storage::Store;
use crate::worker::Worker;

pub use expand::Expansion;
pub use startup::{check_startup_connectors, StartupConnector, StartupError};

pub use offsets::{ConnectorOffsets, OffsetEntry};

/// `{"connector": name, "task": n}`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ConnectorTaskId {
    /// Connector name.
    pub connector: String,
    /// Task number.
    pub task: u32,
}

/// Kafka's ConnectorInfo.
#[derive(Clone, Debug, Serialize)]
pub struct ConnectorInfo {
    /// Connector name.
    pub name: String,
    /// The raw config.
    pub config: Props,
    /// Its tasks.
    pub tasks: Vec<ConnectorTaskId>,
    /// `source`, `sink` or `unknown`.
    #[serde(rename = "type")]
    pub connector_type: ConnectorInfoType,
}

/// Kafka's TaskInfo.
#[derive(Clone, Debug, Serialize)]
pub struct TaskInfo {
    /// The task's id.
    pub id: ConnectorTaskId,
    /// Its config.
    pub config: Props,
}

#[derive(Clone, Debug)]
struct Entry {
    config: Props,
    target: TargetState,
    tasks: Vec<Props>,
    /// When it was created, epoch milliseconds: of two connectors claiming one listener address, the one
    /// created first keeps it.
    created_ms: i64,
}

/// The control plane of one worker.
#[derive(Debug)]
pub struct Herder {
    store: Store,
    plugins: Plugins,
    worker: Worker,
    statuses: Arc<StatusBoard>,
    config: Arc<WorkerConfig>,
    /// Serialises every change.
    ops: tokio::sync::Mutex<()>,
    connectors: RwLock<BTreeMap<String, Entry>>,
    /// Counts the changes to `connectors` (bumped under its write lock).
    connectors_version: AtomicU64,
    /// The last expanded list, kept until the mirror or the status board changes.
    list_cache: std::sync::Mutex<Option<expand::ListCache>>,
    ready: AtomicBool,
    /// The worker's own listeners (REST, admin, Kafka) as bound, each with what it is: no connector may
    /// listen on them.
    worker_listeners: RwLock<Vec<(String, SocketAddr)>>,
    /// The herder itself, for the events of running connector instances.
    me: std::sync::Weak<Herder>,
    /// The running connector instances.
    instances: instances::Instances,
    /// Counts the connector instances started.
    instance_generation: AtomicU64,
}

/// Validates a config about to be stored; 400 with Kafka's message when it has errors.
fn check_config(plugins: &Plugins, config: &Props) -> Result<(), ConnectError> {
    check_config_with(plugins, config, Vec::new())
}

/// As [`check_config`], with errors found beyond the plugin's own checks, as (key, message).
fn check_config_with(
    plugins: &Plugins,
    config: &Props,
    extra: Vec<(String, String)>,
) -> Result<(), ConnectError> {
    let as_options: BTreeMap<String, Option<String>> = config
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    let infos = plugins.validate_with(&as_options, extra)?;
    match invalid_config_message(&infos) {
        Some(message) => Err(ConnectError::BadRequest(message)),
        None => Ok(names::validate_connector_name(
            config.get("name").map(String::as_str).unwrap_or_default(),
        )?),
    }
}

fn not_found(name: &str) -> ConnectError {
    ConnectError::NotFound(format!("Connector {name} not found"))
}

impl Herder {
    /// A herder over a store, counting into `metrics`; call [`Herder::start`] to run the stored
    /// connectors.
    pub fn new(
        store: Store,
        metrics: Arc<Metrics>,
        config: Arc<WorkerConfig>,
        statuses: Arc<StatusBoard>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| Herder {
            worker: Worker::new(store.clone(), metrics, config.clone(), statuses.clone()),
            plugins: Plugins::new(),
            store,
            statuses,
            config,
            ops: tokio::sync::Mutex::new(()),
            connectors: RwLock::new(BTreeMap::new()),
            connectors_version: AtomicU64::new(0),
            list_cache: std::sync::Mutex::new(None),
            ready: AtomicBool::new(false),
            worker_listeners: RwLock::new(Vec::new()),
            me: me.clone(),
            instances: Default::default(),
            instance_generation: AtomicU64::new(0),
        })
    }

    /// The installed plugins.
    pub fn plugins(&self) -> &Plugins {
        &self.plugins
    }

    /// The worker config.
    pub fn worker_config(&self) -> &Arc<WorkerConfig> {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The process's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        self.worker.metrics()
    }

    /// What wakes readers of the topic log when records are appended.
    pub fn log_signal(&self) -> &Arc<crate::worker::LogSignal> {
        self.worker.log_signal()
    }

    /// True once start-up (stored connectors and command-line files) has completed.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Marks start-up as complete (`GET /health` then answers 200).
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// Answers the health probe: takes the change lock, so a blocked herder shows as unhealthy, then checks
    /// that the database can still be read and written.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn health_probe(&self) -> Result<(), crate::storage::StorageError> {
        let _guard = self.ops.lock().await;
        self.store.probe().await
    }

    /// Loads the stored connectors and starts each in its target state, oldest first.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn start(&self) -> Result<(), ConnectError> {
        let _guard = self.ops.lock().await;
        let stored = self.store.load_connectors().await?;
        {
            let mut map = self.connectors_mut();
            for c in &stored {
                map.insert(
                    c.name.clone(),
                    Entry {
                        config: c.config.clone(),
                        target: c.target,
                        tasks: c.tasks.clone(),
                        created_ms: c.created_ms,
                    },
                );
            }
        }
        for c in stored {
            self.start_connector(&c.name, false).await;
        }
        Ok(())
    }

    /// Stops every task, committing sink offsets first, then the worker's task pool (worker shutdown).
    pub async fn shutdown(&self) {
        let _guard = self.ops.lock().await;
        self.stop_instances();
        self.worker.shutdown().await;
    }

    /// Marks a status with the plugin version its tasks were made by (`connector.plugin.version` in the
    /// task configs, which a plugin program installed in several versions writes: KIP-891).
    fn with_version(mut view: ConnectorStatusView, e: &Entry) -> ConnectorStatusView {
        let version = e
            .tasks
            .first()
            .and_then(|t| t.get(crate::config::keys::CONNECTOR_PLUGIN_VERSION))
            .cloned();
        if version.is_some() {
            view.connector.version.clone_from(&version);
            for t in &mut view.tasks {
                t.version.clone_from(&version);
            }
        }
        view
    }

    fn entry(&self, name: &str) -> Option<Entry> {
        self.connectors
            .read()
            .expect("connectors lock")
            .get(name)
            .cloned()
    }

    fn update<F: FnOnce(&mut Entry)>(&self, name: &str, f: F) {
        if let Some(e) = self.connectors_mut().get_mut(name) {
            f(e);
        }
    }

    /// The mirror, locked for a change.
    fn connectors_mut(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Entry>> {
        let map = self.connectors.write().expect("connectors lock");
        self.connectors_version.fetch_add(1, Ordering::Relaxed);
        map
    }

    fn connector_type(&self, config: &Props) -> ConnectorInfoType {
        self.plugins.connector_type(
            config
                .get(crate::config::keys::CONNECTOR_CLASS)
                .map(String::as_str),
        )
    }

    fn resolve(&self, config: &Props) -> Result<Arc<dyn ConnectorPlugin>, ConnectError> {
        self.plugins
            .connector(connector_class(config))
            .map_err(|e| ConnectError::BadRequest(e.to_string()))
    }

    fn plugin_for(&self, name: &str) -> Result<(Entry, Arc<dyn ConnectorPlugin>), ConnectError> {
        let e = self.entry(name).ok_or_else(|| not_found(name))?;
        let plugin = self.resolve(&e.config)?;
        Ok((e, plugin))
    }

    fn is_stopped(&self, name: &str) -> bool {
        self.entry(name).is_some_and(|e| {
            e.target == TargetState::Stopped
                && e.tasks.is_empty()
                && self.worker.task_ids(name).is_empty()
        })
    }

    /// Source offsets and sink offsets are kept apart: sink connectors use Kafka's topic/partition shape.
    fn is_sink(plugin: &Arc<dyn ConnectorPlugin>) -> bool {
        plugin.connector_type() == ConnectorType::Sink
    }
}

/// The `connector.class` of a connector config; empty when it is not set.
fn connector_class(config: &Props) -> &str {
    config
        .get(crate::config::keys::CONNECTOR_CLASS)
        .map(String::as_str)
        .unwrap_or_default()
}
