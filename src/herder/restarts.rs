//! Restarting connectors and tasks, with KIP-745's `includeTasks` and `onlyFailed`.

use super::{not_found, Herder};
use crate::error::ConnectError;
use crate::model::{State, TargetState};
use crate::status::ConnectorStatusView;
use crate::worker::{Mode, TaskSpec};

impl Herder {
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
            let Some(plugin) = self.connector_plugin_or_fail(name, &e.config) else {
                return;
            };
            if !self.start_instance(&plugin, name, &e.config) {
                return;
            }
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
}
