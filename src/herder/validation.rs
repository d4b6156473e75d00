//! Checking connector configs: `PUT /connector-plugins/{p}/config/validate`, and the checks a config
//! passes before it is stored (the plugin's own, listener addresses, the worker's task total).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use super::{check_config_with, connector_class, listeners, Herder};
use crate::config::connector::{ConnectorConfig, ConnectorType};
use crate::config::def::ConfigInfos;
use crate::connectors::Props;
use crate::error::ConnectError;

impl Herder {
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

    /// [`Herder::validate`], then, when that finds no error, the plugin's checks that reach outside
    /// ([`crate::connectors::ConnectorPlugin::check_live`]: an Airbyte source's SPEC and CHECK), on a
    /// blocking thread, with the config's `${provider:path:key}` placeholders resolved.
    ///
    /// # Errors
    /// As [`Herder::validate`].
    pub async fn validate_live(
        &self,
        config: &BTreeMap<String, Option<String>>,
    ) -> Result<ConfigInfos, ConnectError> {
        let infos = self.validate(config)?;
        if infos.error_count > 0 {
            return Ok(infos);
        }
        let given: Props = config
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect();
        let Ok(plugin) = self.plugins.connector(connector_class(&given)) else {
            return Ok(infos);
        };
        let resolved = match self.config.config_providers.resolve(&given) {
            Ok(r) => r,
            Err(_) => return Ok(infos),
        };
        let live = tokio::task::spawn_blocking(move || plugin.check_live(&resolved))
            .await
            .unwrap_or_else(|e| {
                vec![(
                    crate::config::keys::CONNECTOR_CLASS.to_string(),
                    format!("The connector's checks stopped: {e}"),
                )]
            });
        if live.is_empty() {
            return Ok(infos);
        }
        let mut extra = self.listener_errors(&given);
        extra.extend(live);
        self.plugins.validate_with(config, extra)
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
    pub(super) fn listener_holder(
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

    /// Validates a config about to be stored; 400 with Kafka's message when it has errors.
    pub(super) fn check_config(&self, config: &Props) -> Result<(), ConnectError> {
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
}
