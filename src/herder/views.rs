//! The herder's read-only answers: connector lists, infos, configs, task configs, statuses and active
//! topics. None takes the change lock: they read the in-memory mirror and the status board.

use super::{not_found, ConnectorInfo, ConnectorTaskId, Entry, Herder, TaskInfo};
use crate::connectors::Props;
use crate::error::ConnectError;
use crate::status::{ConnectorStatusView, TaskStateView};

impl Herder {
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
        let e = self.entry(name).ok_or_else(not_found)?;
        let ty = self.connector_type(&e.config);
        let view = self
            .statuses
            .view(name, ty.as_str())
            .ok_or_else(not_found)?;
        Ok(Self::with_version(view, &e))
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
}
