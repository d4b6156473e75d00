//! What a scrape of `GET /metrics` reads of the herder ([`ScrapeSource`]): the metrics, the store, and
//! the plugin of a connector none of whose tasks has started, from its config.

use std::sync::Arc;

use super::Herder;
use crate::metrics::{ConnectorPlugin, Metrics, ScrapeSource};
use crate::storage::Store;

impl ScrapeSource for Herder {
    fn metrics(&self) -> &Arc<Metrics> {
        Herder::metrics(self)
    }

    fn store(&self) -> &Store {
        Herder::store(self)
    }

    /// The plugin the connector's config names (`unknown` for a class no plugin has); `None` for a
    /// connector that is gone.
    fn configured_plugin(&self, connector: &str) -> Option<ConnectorPlugin> {
        let config = self.connector_config(connector).ok()?;
        let class = config
            .get(crate::config::keys::CONNECTOR_CLASS)
            .cloned()
            .unwrap_or_default();
        Some(match self.plugins().connector(&class) {
            Ok(p) => ConnectorPlugin::of(p.as_ref()),
            Err(_) => ConnectorPlugin {
                class,
                kind: "unknown",
                version: String::new(),
            },
        })
    }
}
