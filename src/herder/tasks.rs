//! Task generation and running: a connector's task configs (`Connector.taskConfigs` with `tasks.max`
//! enforced), storing them when they change, and starting its tasks in its target state with their
//! config placeholders resolved.

use std::sync::Arc;

use super::{connector_class, Herder};
use crate::config::connector::ConnectorConfig;
use crate::connectors::{ConnectorPlugin, Props};
use crate::model::{State, TargetState};
use crate::worker::{Mode, TaskSpec};

impl Herder {
    /// The plugin of a connector's class; when there is none, the connector is marked FAILED.
    pub(super) fn connector_plugin_or_fail(
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
    pub(super) fn generate_tasks(&self, name: &str, config: &Props) -> Option<Vec<Props>> {
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
    pub(super) fn task_configs_for(
        &self,
        plugin: &Arc<dyn ConnectorPlugin>,
        name: &str,
        config: &Props,
    ) -> Result<Vec<Props>, String> {
        let typed = ConnectorConfig::lenient(config, plugin.connector_type());
        let max_tasks = typed.tasks_max;
        let mut tasks = match self.instance(name) {
            Some(instance) => instance.task_configs(max_tasks),
            None => plugin.task_configs(config, max_tasks),
        }
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
    pub(super) async fn start_connector(&self, name: &str, regenerate: bool) {
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
                self.stop_instance(name);
                self.statuses.set_connector(name, State::Stopped, None);
                self.statuses.remove_tasks_from(name, 0);
            }
            TargetState::Paused => {
                // A paused connector keeps the tasks it had; one created PAUSED has none until resumed.
                // Its instance is stopped, as Kafka suspends a paused connector.
                self.stop_instance(name);
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
                if !self.start_instance(&plugin, name, &e.config) {
                    return;
                }
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

    pub(super) async fn persist_tasks(&self, name: &str, tasks: &[Props]) -> Result<(), ()> {
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

    pub(super) fn run_tasks(
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
    pub(super) fn start_task_resolved(&self, spec: TaskSpec<'_>, task_config: &Props, mode: Mode) {
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
}
