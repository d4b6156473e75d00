//! The live statuses of connectors and tasks, as `GET /connectors/{c}/status` shows them.
//!
//! The board is the source of truth while the worker runs (reads never touch SQLite); every change is also
//! written to the database in the background so the last known statuses and traces survive a restart.
//! Each task run has a generation: reports from a task thread that has since been replaced are ignored.
//!
//! The board sits below the worker, which reports to it, and the metrics, which read it; the herder
//! forces states on it. It counts connector start-ups through [`StartupCounter`] (the worker metrics).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;

use crate::model::State;
use crate::storage::{Store, StoredStatus};

/// One connector's or task's status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The state.
    pub state: State,
    /// The failure trace, for FAILED.
    pub trace: Option<String>,
}

/// `{"state", "worker_id", "trace"?}` for a connector.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ConnectorStateView {
    /// The state.
    pub state: String,
    /// This worker.
    pub worker_id: String,
    /// The trace, omitted when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The plugin version running (KIP-891), where the connector chose one of several installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `{"id", "state", "worker_id", "trace"?}` for a task.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TaskStateView {
    /// Task number.
    pub id: u32,
    /// The state.
    pub state: String,
    /// This worker.
    pub worker_id: String,
    /// The trace, omitted when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The plugin version running (KIP-891), where the connector chose one of several installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Kafka's ConnectorStateInfo.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ConnectorStatusView {
    /// The connector's name.
    pub name: String,
    /// The connector's own state.
    pub connector: ConnectorStateView,
    /// Tasks, sorted by id.
    pub tasks: Vec<TaskStateView>,
    /// `source`, `sink` or `unknown`.
    #[serde(rename = "type")]
    pub connector_type: String,
}

/// A connector's name and state with its tasks' ids and states.
pub type StatusRow = (String, State, Vec<(u32, State)>);

/// What counts the connector start-ups the board sees: the worker metrics.
pub trait StartupCounter: Send + Sync + std::fmt::Debug {
    /// Counts a connector that started (`ok`) or failed to start.
    fn connector_started(&self, ok: bool);
}

/// Counts a connector start-up for the worker metrics: a connector that comes to run (or to be paused,
/// which starts it too) from any other state started; one that comes to fail failed to start.
fn count_startup(metrics: &dyn StartupCounter, before: Option<State>, after: State) {
    let started = |s: Option<State>| matches!(s, Some(State::Running | State::Paused));
    if started(Some(after)) && !started(before) {
        metrics.connector_started(true);
    } else if after == State::Failed && before != Some(State::Failed) {
        metrics.connector_started(false);
    }
}

#[derive(Debug)]
struct Entry {
    connector: Status,
    tasks: BTreeMap<u32, (Status, u64)>,
}

/// All statuses of this worker.
#[derive(Debug)]
pub struct StatusBoard {
    worker_id: String,
    store: Store,
    /// Counts connector start-ups.
    metrics: Arc<dyn StartupCounter>,
    entries: Mutex<BTreeMap<String, Entry>>,
    /// Counts the changes to `entries` (bumped under its lock), so that an answer built from the board
    /// can be kept until the board changes.
    version: AtomicU64,
}

impl StatusBoard {
    /// An empty board for a worker known as `worker_id` (advertised host:port), counting connector
    /// start-ups into `metrics`.
    pub fn new(worker_id: String, store: Store, metrics: Arc<dyn StartupCounter>) -> Arc<Self> {
        Arc::new(StatusBoard {
            worker_id,
            store,
            metrics,
            entries: Mutex::new(BTreeMap::new()),
            version: AtomicU64::new(0),
        })
    }

    /// This worker's id, as statuses show it.
    pub fn worker_id(&self) -> &str {
        &self.worker_id
    }

    /// The entries, locked for a change.
    fn entries_mut(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        let entries = self.entries.lock().expect("status lock");
        self.version.fetch_add(1, Ordering::Relaxed);
        entries
    }

    fn stored(&self, status: &Status) -> StoredStatus {
        StoredStatus {
            state: status.state,
            trace: status.trace.clone(),
            worker_id: self.worker_id.clone(),
        }
    }

    /// Sets a connector's state.
    pub fn set_connector(&self, name: &str, state: State, trace: Option<String>) {
        if tracing::enabled!(tracing::Level::DEBUG) {
            let cause = trace
                .as_deref()
                .and_then(|t| t.lines().next())
                .unwrap_or("");
            tracing::debug!(connector = %name, ?state, cause, "Connector state reported.");
        }
        let status = Status { state, trace };
        self.store
            .record_connector_status(name, self.stored(&status));
        let mut entries = self.entries_mut();
        count_startup(
            self.metrics.as_ref(),
            entries.get(name).map(|e| e.connector.state),
            state,
        );
        match entries.get_mut(name) {
            Some(e) => e.connector = status,
            None => {
                entries.insert(
                    name.to_string(),
                    Entry {
                        connector: status,
                        tasks: BTreeMap::new(),
                    },
                );
            }
        }
    }

    /// The connector's current state, if it has one.
    pub fn connector_state(&self, name: &str) -> Option<State> {
        self.entries
            .lock()
            .expect("status lock")
            .get(name)
            .map(|e| e.connector.state)
    }

    /// The current state of a task, if it has one.
    pub fn task_state(&self, name: &str, task: u32) -> Option<State> {
        self.entries
            .lock()
            .expect("status lock")
            .get(name)
            .and_then(|e| e.tasks.get(&task))
            .map(|(s, _)| s.state)
    }

    /// Starts a new generation for a task and sets its state; returns the generation its thread must report with.
    pub fn begin_task(&self, name: &str, task: u32, generation: u64, state: State) {
        let status = Status { state, trace: None };
        self.store
            .record_task_status(name, task, self.stored(&status));
        let mut entries = self.entries_mut();
        let entry = entries.entry(name.to_string()).or_insert_with(|| Entry {
            connector: Status {
                state: State::Unassigned,
                trace: None,
            },
            tasks: BTreeMap::new(),
        });
        entry.tasks.insert(task, (status, generation));
    }

    /// A task thread reports its state; ignored when the task has been replaced or removed since.
    pub fn set_task(
        &self,
        name: &str,
        task: u32,
        generation: u64,
        state: State,
        trace: Option<String>,
    ) {
        let mut entries = self.entries_mut();
        let Some((status, current)) = entries.get_mut(name).and_then(|e| e.tasks.get_mut(&task))
        else {
            return;
        };
        if *current != generation {
            return;
        }
        if status.state != state && tracing::enabled!(tracing::Level::DEBUG) {
            let cause = trace
                .as_deref()
                .and_then(|t| t.lines().next())
                .unwrap_or("");
            tracing::debug!(connector = %name, task, from = ?status.state, to = ?state, cause, "Task state changed.");
        }
        *status = Status { state, trace };
        let stored = self.stored(status);
        drop(entries);
        self.store.record_task_status(name, task, stored);
    }

    /// Sets a task's state whatever its generation (used by the herder, e.g. for RESTARTING).
    pub fn force_task(&self, name: &str, task: u32, state: State, trace: Option<String>) {
        let mut entries = self.entries_mut();
        if let Some((status, _)) = entries.get_mut(name).and_then(|e| e.tasks.get_mut(&task)) {
            *status = Status { state, trace };
            let stored = self.stored(status);
            drop(entries);
            self.store.record_task_status(name, task, stored);
        }
    }

    /// Forgets tasks numbered `from` and above.
    pub fn remove_tasks_from(&self, name: &str, from: u32) {
        if let Some(e) = self.entries_mut().get_mut(name) {
            e.tasks.retain(|t, _| *t < from);
        }
        self.store.forget_task_statuses(name, from);
    }

    /// Forgets a connector entirely (it was deleted).
    pub fn remove_connector(&self, name: &str) {
        self.entries_mut().remove(name);
    }

    /// Every connector's state with its tasks' states, by name and task id, read under one lock.
    pub fn snapshot(&self) -> Vec<StatusRow> {
        self.entries
            .lock()
            .expect("status lock")
            .iter()
            .map(|(name, e)| {
                let tasks = e.tasks.iter().map(|(t, (s, _))| (*t, s.state)).collect();
                (name.clone(), e.connector.state, tasks)
            })
            .collect()
    }

    /// The status view of one connector.
    pub fn view(&self, name: &str, connector_type: &str) -> Option<ConnectorStatusView> {
        let entries = self.entries.lock().expect("status lock");
        self.view_in(&entries, name, connector_type)
    }

    /// Runs `f` with the board's version and a function that gives any connector's status view, all
    /// read under one lock.
    pub fn with_views<R>(
        &self,
        f: impl FnOnce(u64, &dyn Fn(&str, &str) -> Option<ConnectorStatusView>) -> R,
    ) -> R {
        let entries = self.entries.lock().expect("status lock");
        let version = self.version.load(Ordering::Relaxed);
        f(version, &|name, connector_type| {
            self.view_in(&entries, name, connector_type)
        })
    }

    fn view_in(
        &self,
        entries: &BTreeMap<String, Entry>,
        name: &str,
        connector_type: &str,
    ) -> Option<ConnectorStatusView> {
        let e = entries.get(name)?;
        Some(ConnectorStatusView {
            name: name.to_string(),
            connector: ConnectorStateView {
                state: e.connector.state.as_str().to_string(),
                worker_id: self.worker_id.clone(),
                trace: e.connector.trace.clone(),
                version: None,
            },
            tasks: e
                .tasks
                .iter()
                .map(|(id, (s, _))| TaskStateView {
                    id: *id,
                    state: s.state.as_str().to_string(),
                    worker_id: self.worker_id.clone(),
                    trace: s.trace.clone(),
                    version: None,
                })
                .collect(),
            connector_type: connector_type.to_string(),
        })
    }
}
