//! Running connector instances: the plugins whose connectors keep running while they run (plugin
//! programs speaking protocol 1.1) are started with the connector and stopped with it, answer its task
//! configs, and may ask for their tasks to be reconfigured, which follows the path of a config change:
//! new task configs, stored when they differ, the tasks replaced.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use super::Herder;
use crate::connectors::{
    ConnectorEvent, ConnectorEvents, ConnectorInstance, ConnectorPlugin, Props,
};
use crate::model::{State, TargetState};
use crate::worker::Mode;

/// A running instance with the generation that started it (events of an instance since replaced are
/// ignored).
type Running = (u64, Arc<dyn ConnectorInstance>);

/// The running instances by connector name.
#[derive(Default)]
pub(super) struct Instances(Mutex<HashMap<String, Running>>);

impl std::fmt::Debug for Instances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instances").finish_non_exhaustive()
    }
}

impl Instances {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Running>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Herder {
    /// Starts the instance of a connector, replacing the one running; on failure the connector is FAILED
    /// and false is returned.
    pub(super) fn start_instance(
        &self,
        plugin: &Arc<dyn ConnectorPlugin>,
        name: &str,
        config: &Props,
    ) -> bool {
        self.stop_instance(name);
        let generation = self.instance_generation.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(events) = self.instance_events(name, generation) else {
            return true;
        };
        match plugin.start_instance(name, config, events) {
            Ok(Some(instance)) => {
                tracing::debug!(connector = %name, "Connector instance started.");
                self.instances
                    .lock()
                    .insert(name.to_owned(), (generation, Arc::from(instance)));
                true
            }
            Ok(None) => true,
            Err(e) => {
                let trace = crate::worker::trace_of("Connector.start", &e);
                self.statuses
                    .set_connector(name, State::Failed, Some(trace));
                false
            }
        }
    }

    /// Stops the instance of a connector, if one runs.
    pub(super) fn stop_instance(&self, name: &str) {
        if self.instances.lock().remove(name).is_some() {
            tracing::debug!(connector = %name, "Connector instance stopped.");
        }
    }

    /// Stops every instance (worker shutdown).
    pub(super) fn stop_instances(&self) {
        self.instances.lock().clear();
    }

    /// The running instance of a connector.
    pub(super) fn instance(&self, name: &str) -> Option<Arc<dyn ConnectorInstance>> {
        self.instances.lock().get(name).map(|(_, i)| i.clone())
    }

    /// Where the instance of `generation` sends its events: a herder task on the current runtime
    /// (none outside one).
    fn instance_events(&self, name: &str, generation: u64) -> Option<ConnectorEvents> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let me = self.me.clone();
        let name = name.to_owned();
        Some(Arc::new(move |event: ConnectorEvent| {
            let (me, name) = (me.clone(), name.clone());
            runtime.spawn(async move {
                if let Some(herder) = me.upgrade() {
                    herder.on_instance_event(&name, generation, event).await;
                }
            });
        }))
    }

    async fn on_instance_event(&self, name: &str, generation: u64, event: ConnectorEvent) {
        let _guard = self.ops.lock().await;
        let current = self.instances.lock().get(name).map(|(g, _)| *g);
        if current != Some(generation) {
            return; // from an instance stopped since
        }
        match event {
            ConnectorEvent::Reconfigure => self.reconfigure_tasks(name).await,
            ConnectorEvent::Failed(error) => {
                let trace = crate::worker::trace_of("Connector", &error);
                tracing::error!(connector = %name, "The connector failed: {trace}");
                self.stop_instance(name);
                self.statuses
                    .set_connector(name, State::Failed, Some(trace));
            }
        }
    }

    /// Kafka's `requestTaskReconfiguration`: the task configs computed again and, when they differ from
    /// the stored ones, stored and the tasks replaced.
    async fn reconfigure_tasks(&self, name: &str) {
        let Some(e) = self.entry(name) else { return };
        if e.target != TargetState::Started
            || self.statuses.connector_state(name) == Some(State::Failed)
        {
            return;
        }
        let Some(plugin) = self.connector_plugin_or_fail(name, &e.config) else {
            return;
        };
        let Some(tasks) = self.generate_tasks(name, &e.config) else {
            return;
        };
        if tasks == e.tasks {
            tracing::debug!(connector = %name, "Reconfiguration asked; the task configs are unchanged.");
            return;
        }
        tracing::info!(connector = %name, tasks = tasks.len(), "Reconfiguration asked; the task configs changed and the tasks are replaced.");
        self.worker.stop_tasks(name, None).await;
        if self.persist_tasks(name, &tasks).await.is_err() {
            return;
        }
        self.run_tasks(&plugin, name, &e.config, &tasks, Mode::Run);
    }
}
