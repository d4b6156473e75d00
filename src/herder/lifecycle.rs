//! Changing connectors: create, update (put, patch), delete, pause, resume, stop, and forgetting their
//! active topics. Each change takes the change lock, writes the store first and then brings the
//! running tasks in line.

use std::collections::BTreeMap;

use super::{connector_class, not_found, offsets, ConnectorInfo, Entry, Herder, OffsetEntry};
use crate::connectors::Props;
use crate::error::ConnectError;
use crate::model::{State, TargetState};
use crate::worker::Mode;

impl Herder {
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
        self.stop_instance(name);
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
        self.stop_instance(name);
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
            let Some(plugin) = self.connector_plugin_or_fail(name, &e.config) else {
                return Ok(());
            };
            if !self.start_instance(&plugin, name, &e.config) {
                return Ok(());
            }
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
        self.stop_instance(name);
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
}
