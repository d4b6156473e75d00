//! The herder: the control plane. It creates, reconfigures, pauses, resumes, stops, restarts and deletes
//! connectors; it owns target states and task configs and keeps the statuses true.
//!
//! Every change runs under one async lock, as Kafka's herder serialises changes on its own thread; the
//! stored state is written first and the running tasks follow it. Reads take no lock on the database:
//! configs, target states and task configs are mirrored in memory.

mod expand;
mod listeners;
mod names;
mod offsets;
mod startup;
pub mod status;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde::Serialize;

use crate::config::connector::{invalid_config_message, ConnectorConfig, ConnectorType};
use crate::config::def::ConfigInfos;
use crate::config::worker::WorkerConfig;
use crate::connectors::{ConnectorPlugin, Props};
use crate::error::ConnectError;
use crate::herder::status::{ConnectorStatusView, StatusBoard, TaskStateView};
use crate::model::{State, TargetState};
use crate::plugins::{ConnectorInfoType, Plugins};
use crate::storage::Store;
use crate::worker::{Mode, TaskSpec, Worker};

pub use expand::Expansion;
pub use startup::{check_startup_connectors, StartupError};

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
    /// A herder over a store; call [`Herder::start`] to run the stored connectors.
    pub fn new(store: Store, config: Arc<WorkerConfig>, statuses: Arc<StatusBoard>) -> Arc<Self> {
        Arc::new(Herder {
            worker: Worker::new(store.clone(), config.clone(), statuses.clone()),
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
        self.worker.shutdown().await;
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

    // ----- reads ------------------------------------------------------------------------------------

    /// Names of all connectors, sorted.
    pub fn connector_names(&self) -> Vec<String> {
        self.connectors
            .read()
            .expect("connectors lock")
            .keys()
            .cloned()
            .collect()
    }

    /// Kafka's ConnectorInfo.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub fn connector_info(&self, name: &str) -> Result<ConnectorInfo, ConnectError> {
        let e = self.entry(name).ok_or_else(|| not_found(name))?;
        Ok(self.info_of(name, &e))
    }

    fn info_of(&self, name: &str, e: &Entry) -> ConnectorInfo {
        ConnectorInfo {
            name: name.to_string(),
            config: e.config.clone(),
            tasks: (0..e.tasks.len() as u32)
                .map(|task| ConnectorTaskId {
                    connector: name.to_string(),
                    task,
                })
                .collect(),
            connector_type: self.connector_type(&e.config),
        }
    }

    /// The raw stored config.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub fn connector_config(&self, name: &str) -> Result<Props, ConnectError> {
        self.entry(name)
            .map(|e| e.config)
            .ok_or_else(|| not_found(name))
    }

    /// The task configs.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub fn tasks(&self, name: &str) -> Result<Vec<TaskInfo>, ConnectError> {
        let e = self.entry(name).ok_or_else(|| not_found(name))?;
        Ok(e.tasks
            .into_iter()
            .enumerate()
            .map(|(i, config)| TaskInfo {
                id: ConnectorTaskId {
                    connector: name.to_string(),
                    task: i as u32,
                },
                config,
            })
            .collect())
    }

    /// Kafka's ConnectorStateInfo.
    ///
    /// # Errors
    /// 404 when the connector has no status.
    pub fn connector_status(&self, name: &str) -> Result<ConnectorStatusView, ConnectError> {
        let not_found = || ConnectError::NotFound(format!("No status found for connector {name}"));
        let ty = self
            .connectors
            .read()
            .expect("connectors lock")
            .get(name)
            .map(|e| self.connector_type(&e.config))
            .ok_or_else(not_found)?;
        self.statuses.view(name, ty.as_str()).ok_or_else(not_found)
    }

    /// One task's status.
    ///
    /// # Errors
    /// 404 when the task has no status.
    pub fn task_status(&self, name: &str, task: u32) -> Result<TaskStateView, ConnectError> {
        self.connector_status(name)
            .ok()
            .and_then(|s| s.tasks.into_iter().find(|t| t.id == task))
            .ok_or_else(|| {
                ConnectError::NotFound(format!("No status found for task {name}-{task}"))
            })
    }

    // ----- validation -------------------------------------------------------------------------------

    /// Validates a connector config as `PUT /connector-plugins/{p}/config/validate` does.
    ///
    /// # Errors
    /// 400 when there is no `connector.class` or it names no installed connector.
    pub fn validate(
        &self,
        config: &BTreeMap<String, Option<String>>,
    ) -> Result<ConfigInfos, ConnectError> {
        let given: Props = config
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect();
        self.plugins
            .validate_with(config, self.listener_errors(&given))
    }

    /// Records the worker's own listeners as bound (`what` says which: "REST listener", ...), so that
    /// no connector is given their addresses.
    pub fn set_worker_listeners(&self, listeners: Vec<(String, SocketAddr)>) {
        *self
            .worker_listeners
            .write()
            .expect("worker listeners lock") = listeners;
    }

    /// The `listener` error of a config whose listening address is already held (see
    /// [`Herder::listener_holder`]), as validation reports it.
    fn listener_errors(&self, config: &Props) -> Vec<(String, String)> {
        let name = config
            .get(crate::config::keys::NAME)
            .map(String::as_str)
            .unwrap_or_default();
        self.listener_holder(name, config, false)
            .map(|(key, message)| vec![(key, message)])
            .unwrap_or_default()
    }

    /// When `config` (of connector `name`) is of a connector that listens and its address is one the
    /// worker listens on or another connector claims (with `earlier_only`, only a connector created
    /// before it): the key naming the address and a message naming the holder.
    fn listener_holder(
        &self,
        name: &str,
        config: &Props,
        earlier_only: bool,
    ) -> Option<(String, String)> {
        let plugin = self.plugins.connector(connector_class(config)).ok()?;
        let hostport = plugin.listens_on(config)?;
        let wanted = listeners::Address::parse(&hostport)?;
        let key = "listener".to_string();
        let worker = self.worker_listeners.read().expect("worker listeners lock");
        if let Some((what, _)) = worker
            .iter()
            .find(|(_, addr)| listeners::Address::bound(*addr).clashes(&wanted))
        {
            return Some((
                key,
                format!("{hostport} is already the listener of the worker's {what}"),
            ));
        }
        drop(worker);
        let connectors = self.connectors.read().expect("connectors lock");
        let mine = connectors.get(name).map(|e| (e.created_ms, name));
        connectors
            .iter()
            .filter(|(other, _)| other.as_str() != name)
            .filter(|(other, e)| match (earlier_only, mine) {
                (true, Some(mine)) => (e.created_ms, other.as_str()) < mine,
                _ => true,
            })
            .find(|(_, e)| {
                self.plugins
                    .connector(connector_class(&e.config))
                    .ok()
                    .and_then(|p| p.listens_on(&e.config))
                    .and_then(|a| listeners::Address::parse(&a))
                    .is_some_and(|held| held.clashes(&wanted))
            })
            .map(|(other, _)| {
                (
                    key,
                    format!("{hostport} is already the listener of connector '{other}'"),
                )
            })
    }

    fn resolve(&self, config: &Props) -> Result<Arc<dyn ConnectorPlugin>, ConnectError> {
        self.plugins
            .connector(connector_class(config))
            .map_err(|e| ConnectError::BadRequest(e.to_string()))
    }

    /// Validates a config about to be stored; 400 with Kafka's message when it has errors.
    fn check_config(&self, config: &Props) -> Result<(), ConnectError> {
        check_config_with(&self.plugins, config, self.listener_errors(config))?;
        self.check_task_total(config)
    }

    /// Refuses a config whose `tasks.max`, with the tasks of the other connectors, would go beyond the
    /// worker's `tasks.max.total`.
    fn check_task_total(&self, config: &Props) -> Result<(), ConnectError> {
        let typed = ConnectorConfig::lenient(config, ConnectorType::Source);
        let cap = self.config.tasks_max_total;
        let others: usize = self
            .connectors
            .read()
            .expect("connectors lock")
            .iter()
            .filter(|(name, _)| **name != typed.name)
            .map(|(_, e)| e.tasks.len())
            .sum();
        if others + typed.tasks_max <= cap {
            return Ok(());
        }
        Err(ConnectError::BadRequest(format!(
            "Connector {} has tasks.max={}, but this worker runs at most {cap} tasks in total ({}) and the other connectors have {others}",
            typed.name,
            typed.tasks_max,
            crate::config::keys::TASKS_MAX_TOTAL
        )))
    }

    // ----- changes ----------------------------------------------------------------------------------

    /// Creates a connector in its initial target state (KIP-980), with optional initial offsets (KIP-995).
    ///
    /// # Errors
    /// 400 for an invalid config or offsets, 409 when the name is taken.
    pub async fn create_connector(
        &self,
        name: &str,
        mut config: Props,
        initial: TargetState,
        offsets: Option<Vec<OffsetEntry>>,
    ) -> Result<ConnectorInfo, ConnectError> {
        let name = name.trim().to_string();
        if let Some(n) = config.get(crate::config::keys::NAME) {
            if *n != name {
                return Err(ConnectError::BadRequest(format!(
                    "Connector name configuration ({n}) doesn't match connector name in the URL ({name})"
                )));
            }
        }
        config.insert(crate::config::keys::NAME.into(), name.clone());
        let _guard = self.ops.lock().await;
        self.check_config(&config)?;
        if self.entry(&name).is_some() {
            return Err(ConnectError::Conflict(format!(
                "Connector {name} already exists"
            )));
        }
        let offsets = match offsets {
            Some(o) => {
                let plugin = self.resolve(&config)?;
                offsets::check(&plugin, &config, o)?
            }
            None => offsets::Checked::default(),
        };
        // A connector created STARTED has its first task configs stored with its config, in one
        // transaction. When they cannot be generated, it is stored without them and the start below
        // tries again and reports the failure.
        let tasks = match initial {
            TargetState::Started => self
                .plugins
                .connector(connector_class(&config))
                .ok()
                .and_then(|plugin| self.task_configs_for(&plugin, &name, &config).ok()),
            _ => None,
        };
        self.store
            .create_connector(
                name.clone(),
                config.clone(),
                initial,
                tasks.clone().unwrap_or_default(),
                offsets.source,
                offsets.sink,
            )
            .await?;
        self.connectors_mut().insert(
            name.clone(),
            Entry {
                config,
                target: initial,
                tasks: tasks.clone().unwrap_or_default(),
                created_ms: crate::model::now_ms(),
            },
        );
        tracing::debug!(connector = %name, initial_state = ?initial, keys = self.entry(&name).map_or(0, |e| e.config.len()), "Connector created; config stored.");
        self.start_connector(&name, tasks.is_none()).await;
        self.connector_info(&name)
    }

    /// Creates or replaces a connector's config (`PUT /connectors/{c}/config`). Returns whether it was created.
    ///
    /// # Errors
    /// 400 for an invalid config or a `name` that differs from the path.
    pub async fn put_connector_config(
        &self,
        name: &str,
        mut config: Props,
    ) -> Result<(bool, ConnectorInfo), ConnectError> {
        if let Some(n) = config.get(crate::config::keys::NAME) {
            if n != name {
                return Err(ConnectError::BadRequest(format!(
                    "Connector name configuration ({n}) doesn't match connector name in the URL ({name})"
                )));
            }
        }
        config.insert(crate::config::keys::NAME.into(), name.to_string());
        let _guard = self.ops.lock().await;
        self.check_config(&config)?;
        self.apply_config(name, config).await
    }

    async fn apply_config(
        &self,
        name: &str,
        config: Props,
    ) -> Result<(bool, ConnectorInfo), ConnectError> {
        let created = self
            .store
            .put_connector_config(name.to_string(), config.clone())
            .await?;
        if created {
            self.connectors_mut().insert(
                name.to_string(),
                Entry {
                    config,
                    target: TargetState::Started,
                    tasks: Vec::new(),
                    created_ms: crate::model::now_ms(),
                },
            );
        } else {
            self.worker.stop_tasks(name, None).await;
            self.update(name, |e| e.config = config);
        }
        tracing::debug!(connector = %name, created, "Connector config applied.");
        self.start_connector(name, true).await;
        Ok((created, self.connector_info(name)?))
    }

    /// Merges a patch into a connector's config (`PATCH /connectors/{c}/config`, KIP-477): a `None` value
    /// removes the key.
    ///
    /// # Errors
    /// 404 for an unknown connector, 400 for an invalid result.
    pub async fn patch_connector_config(
        &self,
        name: &str,
        patch: BTreeMap<String, Option<String>>,
    ) -> Result<ConnectorInfo, ConnectError> {
        let _guard = self.ops.lock().await;
        let mut config = self.entry(name).ok_or_else(|| not_found(name))?.config;
        for (k, v) in patch {
            match v {
                Some(v) => config.insert(k, v),
                None => config.remove(&k),
            };
        }
        self.check_config(&config)?;
        Ok(self.apply_config(name, config).await?.1)
    }

    /// Deletes a connector (its offsets stay, as in Kafka).
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub async fn delete_connector(&self, name: &str) -> Result<(), ConnectError> {
        let _guard = self.ops.lock().await;
        self.entry(name).ok_or_else(|| not_found(name))?;
        self.worker.stop_tasks(name, None).await;
        self.store.delete_connector(name.to_string()).await?;
        self.connectors_mut().remove(name);
        self.statuses.remove_connector(name);
        tracing::debug!(connector = %name, "Connector deleted; its tasks are stopped and its offsets kept.");
        Ok(())
    }

    /// Pauses a connector: its tasks stay alive but idle.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub async fn pause(&self, name: &str) -> Result<(), ConnectError> {
        let _guard = self.ops.lock().await;
        self.entry(name)
            .ok_or_else(|| ConnectError::NotFound(format!("Unknown connector {name}")))?;
        self.store
            .set_target_state(name.to_string(), TargetState::Paused)
            .await?;
        self.update(name, |e| e.target = TargetState::Paused);
        tracing::debug!(connector = %name, "Target state set to PAUSED.");
        if self.statuses.connector_state(name) != Some(State::Failed) {
            self.statuses.set_connector(name, State::Paused, None);
        }
        self.worker.set_mode(name, Mode::Pause);
        Ok(())
    }

    /// Resumes a paused or stopped connector.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub async fn resume(&self, name: &str) -> Result<(), ConnectError> {
        let _guard = self.ops.lock().await;
        let e = self
            .entry(name)
            .ok_or_else(|| ConnectError::NotFound(format!("Unknown connector {name}")))?;
        if e.target == TargetState::Started {
            return Ok(());
        }
        self.store
            .set_target_state(name.to_string(), TargetState::Started)
            .await?;
        self.update(name, |e| e.target = TargetState::Started);
        tracing::debug!(connector = %name, "Target state set to STARTED.");
        if self.statuses.connector_state(name) == Some(State::Failed) {
            return Ok(()); // as in Kafka, a failed connector needs a restart, not a resume
        }
        if self.worker.task_ids(name).is_empty() {
            self.start_connector(name, true).await;
        } else {
            self.statuses.set_connector(name, State::Running, None);
            self.worker.set_mode(name, Mode::Run);
        }
        Ok(())
    }

    /// Stops a connector (KIP-875): its tasks are shut down and its task configs emptied.
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub async fn stop(&self, name: &str) -> Result<(), ConnectError> {
        let _guard = self.ops.lock().await;
        self.entry(name)
            .ok_or_else(|| ConnectError::NotFound(format!("Unknown connector {name}")))?;
        self.worker.stop_tasks(name, None).await;
        self.store
            .set_target_state(name.to_string(), TargetState::Stopped)
            .await?;
        self.update(name, |e| {
            e.target = TargetState::Stopped;
            e.tasks.clear();
        });
        tracing::debug!(connector = %name, "Target state set to STOPPED; tasks stopped and their configs emptied.");
        self.statuses.set_connector(name, State::Stopped, None);
        self.statuses.remove_tasks_from(name, 0);
        Ok(())
    }

    /// Restarts a connector and, per KIP-745, some or all of its tasks. Returns the plan when
    /// `include_tasks` or `only_failed` was given (202), nothing otherwise (204).
    ///
    /// # Errors
    /// 404 for an unknown connector.
    pub async fn restart_connector(
        &self,
        name: &str,
        include_tasks: bool,
        only_failed: bool,
    ) -> Result<Option<ConnectorStatusView>, ConnectError> {
        let _guard = self.ops.lock().await;
        let legacy = !include_tasks && !only_failed;
        let e = self.entry(name).ok_or_else(|| {
            if legacy {
                not_found(name)
            } else {
                ConnectError::NotFound(format!("Unknown connector: {name}"))
            }
        })?;
        if legacy {
            self.restart_connector_instance(name).await;
            return Ok(None);
        }
        let mut plan = self
            .statuses
            .view(name, self.connector_type(&e.config).as_str())
            .ok_or_else(|| {
                ConnectError::NotFound(format!("Status for connector {name} not found"))
            })?;
        let restart_connector = !only_failed || plan.connector.state == State::Failed.as_str();
        if restart_connector {
            plan.connector.state = State::Restarting.as_str().to_string();
            plan.connector.trace = None;
        }
        let mut tasks = Vec::new();
        for t in plan.tasks.iter_mut() {
            if include_tasks && (!only_failed || t.state == State::Failed.as_str()) {
                t.state = State::Restarting.as_str().to_string();
                t.trace = None;
                tasks.push(t.id);
            }
        }
        if restart_connector {
            self.statuses.set_connector(name, State::Restarting, None);
        }
        for t in &tasks {
            self.statuses.force_task(name, *t, State::Restarting, None);
        }
        if restart_connector {
            self.restart_connector_instance(name).await;
        }
        for t in tasks {
            self.restart_task_locked(name, t).await?;
        }
        Ok(Some(plan))
    }

    /// Restarts the connector instance: regenerates task configs and restarts the tasks only if they changed.
    async fn restart_connector_instance(&self, name: &str) {
        let Some(e) = self.entry(name) else { return };
        let was_failed = self.statuses.connector_state(name) == Some(State::Failed);
        if e.target == TargetState::Started && !was_failed {
            let before = e.tasks.clone();
            if let Some(tasks) = self.generate_tasks(name, &e.config) {
                if tasks == before && self.worker.task_ids(name).len() == before.len() {
                    self.statuses.set_connector(name, State::Running, None);
                    return;
                }
            }
        }
        self.worker.stop_tasks(name, None).await;
        self.start_connector(name, true).await;
    }

    /// Restarts one task.
    ///
    /// # Errors
    /// 404 for an unknown connector or task.
    pub async fn restart_task(&self, name: &str, task: u32) -> Result<(), ConnectError> {
        let _guard = self.ops.lock().await;
        self.restart_task_locked(name, task).await
    }

    async fn restart_task_locked(&self, name: &str, task: u32) -> Result<(), ConnectError> {
        let e = self.entry(name).ok_or_else(|| not_found(name))?;
        let Some(task_config) = e.tasks.get(task as usize).cloned() else {
            return Err(ConnectError::NotFound(format!(
                "Task {name}-{task} not found"
            )));
        };
        let plugin = self
            .resolve(&e.config)
            .map_err(|_| ConnectError::Internal(format!("Failed to start task: {name}-{task}")))?;
        self.worker.stop_tasks(name, Some(&[task])).await;
        let mode = if e.target == TargetState::Started {
            Mode::Run
        } else {
            Mode::Pause
        };
        let spec = TaskSpec {
            plugin: &plugin,
            connector: name,
            connector_config: &e.config,
            task,
            task_count: e.tasks.len() as u32,
        };
        self.start_task_resolved(spec, &task_config, mode);
        Ok(())
    }

    // ----- KIP-558 active topics ---------------------------------------------------------------------

    /// The topics a connector has used.
    ///
    /// # Errors
    /// 403 when topic tracking is disabled.
    pub async fn active_topics(&self, name: &str) -> Result<Vec<String>, ConnectError> {
        if !self.config.topic_tracking_enable {
            return Err(ConnectError::Forbidden(
                "Topic tracking is disabled.".into(),
            ));
        }
        Ok(self.store.active_topics(name.to_string()).await?)
    }

    /// Forgets the topics a connector has used.
    ///
    /// # Errors
    /// 403 when topic tracking or its reset is disabled, 404 for an unknown connector.
    pub async fn reset_active_topics(&self, name: &str) -> Result<(), ConnectError> {
        if !self.config.topic_tracking_enable {
            return Err(ConnectError::Forbidden(
                "Topic tracking is disabled.".into(),
            ));
        }
        if !self.config.topic_tracking_allow_reset {
            return Err(ConnectError::Forbidden(
                "Topic tracking reset is disabled.".into(),
            ));
        }
        self.entry(name).ok_or_else(|| not_found(name))?;
        Ok(self.store.reset_active_topics(name.to_string()).await?)
    }

    // ----- running connectors ------------------------------------------------------------------------

    /// The plugin of a connector's class; when there is none, the connector is marked FAILED.
    fn connector_plugin_or_fail(
        &self,
        name: &str,
        config: &Props,
    ) -> Option<Arc<dyn ConnectorPlugin>> {
        match self.plugins.connector(connector_class(config)) {
            Ok(p) => Some(p),
            Err(e) => {
                self.statuses.set_connector(
                    name,
                    State::Failed,
                    Some(format!(
                        "org.apache.kafka.connect.errors.ConnectException: {e}"
                    )),
                );
                None
            }
        }
    }

    /// Runs `Connector.taskConfigs`, enforces `tasks.max` (KIP-1004) and adds what Kafka adds to each task
    /// config. On failure the connector is marked FAILED and None is returned.
    fn generate_tasks(&self, name: &str, config: &Props) -> Option<Vec<Props>> {
        let plugin = self.connector_plugin_or_fail(name, config)?;
        match self.task_configs_for(&plugin, name, config) {
            Ok(tasks) => Some(tasks),
            Err(trace) => {
                self.statuses
                    .set_connector(name, State::Failed, Some(trace));
                None
            }
        }
    }

    /// The task configs `plugin` generates for a connector, with `tasks.max` enforced and Kafka's
    /// additions; on failure, the trace to report.
    fn task_configs_for(
        &self,
        plugin: &Arc<dyn ConnectorPlugin>,
        name: &str,
        config: &Props,
    ) -> Result<Vec<Props>, String> {
        let typed = ConnectorConfig::lenient(config, plugin.connector_type());
        let max_tasks = typed.tasks_max;
        let mut tasks = plugin
            .task_configs(config, max_tasks)
            .map_err(|e| crate::worker::trace_of("Connector.taskConfigs", &e))?;
        if tasks.len() > max_tasks && typed.tasks_max_enforce {
            return Err(format!(
                "org.apache.kafka.connect.errors.ConnectException: The connector {name} has generated {} tasks, which is greater than {max_tasks}, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect.",
                tasks.len()
            ));
        }
        for t in tasks.iter_mut() {
            t.insert("task.class".into(), plugin.task_class().to_string());
            for key in [
                crate::config::keys::TOPICS,
                crate::config::keys::TOPICS_REGEX,
            ] {
                if let Some(v) = config.get(key) {
                    t.insert(key.into(), v.clone());
                }
            }
        }
        tracing::debug!(connector = %name, tasks = tasks.len(), max_tasks, "Task configs generated.");
        Ok(tasks)
    }

    /// Brings a connector's running tasks in line with its target state. With `regenerate`, a STARTED
    /// connector's task configs are regenerated and stored when they changed.
    async fn start_connector(&self, name: &str, regenerate: bool) {
        let Some(e) = self.entry(name) else { return };
        let Some(plugin) = self.connector_plugin_or_fail(name, &e.config) else {
            return;
        };
        if e.target != TargetState::Stopped {
            // Stored before validation refused such configs: two connectors on one address. The one
            // created first keeps it, whatever order they start in.
            if let Some((_, holder)) = self.listener_holder(name, &e.config, true) {
                tracing::error!(connector = %name, "{holder}; the connector fails.");
                self.statuses.set_connector(
                    name,
                    State::Failed,
                    Some(format!("org.apache.kafka.connect.errors.ConnectException: {holder} (the one created first keeps an address); give this connector another listener")),
                );
                self.statuses.remove_tasks_from(name, 0);
                return;
            }
        }
        match e.target {
            TargetState::Stopped => {
                self.statuses.set_connector(name, State::Stopped, None);
                self.statuses.remove_tasks_from(name, 0);
            }
            TargetState::Paused => {
                // A paused connector keeps the tasks it had; one created PAUSED has none until resumed.
                let mut tasks = e.tasks.clone();
                if regenerate && !tasks.is_empty() {
                    match self.generate_tasks(name, &e.config) {
                        Some(t) => tasks = t,
                        None => return,
                    }
                    if tasks != e.tasks && self.persist_tasks(name, &tasks).await.is_err() {
                        return;
                    }
                }
                self.statuses.set_connector(name, State::Paused, None);
                self.run_tasks(&plugin, name, &e.config, &tasks, Mode::Pause);
            }
            TargetState::Started => {
                let tasks = if regenerate || e.tasks.is_empty() {
                    let Some(tasks) = self.generate_tasks(name, &e.config) else {
                        return;
                    };
                    if tasks != e.tasks && self.persist_tasks(name, &tasks).await.is_err() {
                        return;
                    }
                    tasks
                } else {
                    e.tasks.clone()
                };
                self.statuses.set_connector(name, State::Running, None);
                self.run_tasks(&plugin, name, &e.config, &tasks, Mode::Run);
            }
        }
    }

    async fn persist_tasks(&self, name: &str, tasks: &[Props]) -> Result<(), ()> {
        match self
            .store
            .put_task_configs(name.to_string(), tasks.to_vec())
            .await
        {
            Ok(()) => {
                self.update(name, |e| e.tasks = tasks.to_vec());
                Ok(())
            }
            Err(error) => {
                self.statuses.set_connector(
                    name,
                    State::Failed,
                    Some(format!("org.apache.kafka.connect.errors.ConnectException: storing task configs failed: {error}")),
                );
                Err(())
            }
        }
    }

    fn run_tasks(
        &self,
        plugin: &Arc<dyn ConnectorPlugin>,
        name: &str,
        config: &Props,
        tasks: &[Props],
        mode: Mode,
    ) {
        self.statuses.remove_tasks_from(name, tasks.len() as u32);
        let running = self.worker.task_ids(name);
        for (i, t) in tasks.iter().enumerate() {
            if running.contains(&(i as u32)) {
                continue;
            }
            let spec = TaskSpec {
                plugin,
                connector: name,
                connector_config: config,
                task: i as u32,
                task_count: tasks.len() as u32,
            };
            self.start_task_resolved(spec, t, mode);
        }
    }

    /// Starts a task with `${provider:path:key}` placeholders in its config and in the connector config
    /// (read for converters) resolved by the worker's config providers. Only the running task sees the
    /// values; stored and shown configs keep the placeholders. A placeholder that cannot be resolved fails
    /// the task with a trace naming it.
    fn start_task_resolved(&self, spec: TaskSpec<'_>, task_config: &Props, mode: Mode) {
        let (name, task) = (spec.connector, spec.task);
        let providers = &self.config.config_providers;
        match providers
            .resolve(spec.connector_config)
            .and_then(|c| providers.resolve(task_config).map(|t| (c, t)))
        {
            Ok((config, task_config)) => {
                let spec = TaskSpec {
                    connector_config: &config,
                    ..spec
                };
                self.worker.start_task(spec, task_config, mode)
            }
            Err(message) => {
                tracing::error!(connector = %name, task, %message, "Task config cannot be resolved.");
                let trace = format!(
                    "{}: {message}\n\tat WorkerConfigTransformer.transform",
                    crate::config::providers::CONFIG_EXCEPTION
                );
                // Generation 0 is never a task thread's, so only a later start replaces this status.
                self.statuses.begin_task(name, task, 0, State::Failed);
                self.statuses
                    .set_task(name, task, 0, State::Failed, Some(trace));
            }
        }
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
