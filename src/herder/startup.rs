//! The connector files given on the command line: checked before anything is opened, then applied once
//! the stored connectors have started.

use super::{check_config, Herder};
use crate::error::ConnectError;
use crate::model::TargetState;
use crate::plugins::Plugins;

/// A connector to apply at start-up, after the stored ones have started (the command line's files).
#[derive(Debug, Clone)]
pub struct StartupConnector {
    /// Where it came from, for messages.
    pub source: String,
    /// The connector's name.
    pub name: String,
    /// Its config.
    pub config: std::collections::BTreeMap<String, String>,
    /// KIP-980 initial state, when given.
    pub initial_state: Option<TargetState>,
    /// Offsets to create it with (KIP-995).
    pub offsets: Option<Vec<super::OffsetEntry>>,
}

/// A connector file from the command line could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// Two files define the same connector.
    #[error("Connector {name} is defined by more than one file (again in {file})")]
    Duplicate {
        /// The connector.
        name: String,
        /// The second file.
        file: String,
    },
    /// The connector in `file` was refused, as `POST /connectors` would refuse it.
    #[error("Failed to create connector for {file}: {source}")]
    Refused {
        /// The file.
        file: String,
        /// Why.
        source: ConnectError,
    },
}

/// Checks the command line's connectors before anything is opened, so a bad file changes nothing: one
/// file per connector, and each config valid as `POST /connectors` requires.
///
/// # Errors
/// [`StartupError`] naming the first file that fails.
pub fn check_startup_connectors(
    plugins: &Plugins,
    connectors: &[StartupConnector],
) -> Result<(), StartupError> {
    let mut seen = std::collections::BTreeSet::new();
    for c in connectors {
        if !seen.insert(c.name.clone()) {
            return Err(StartupError::Duplicate {
                name: c.name.clone(),
                file: c.source.clone(),
            });
        }
        check_config(plugins, &c.config).map_err(|source| StartupError::Refused {
            file: c.source.clone(),
            source,
        })?;
    }
    Ok(())
}

impl Herder {
    /// Applies a connector file from the command line, by the one rule liteconnect documents: a connector
    /// not stored yet is created in its `initial_state`; a file whose config is what it applied last time
    /// changes nothing (REST changes since then stay); a file whose config changed replaces the stored
    /// config and keeps the target state.
    ///
    /// # Errors
    /// [`StartupError::Refused`] naming the file and what was wrong.
    pub async fn apply_startup_connector(&self, c: StartupConnector) -> Result<(), StartupError> {
        let applied = serde_json::to_string(&c.config).unwrap_or_default();
        let fail = |source: ConnectError| StartupError::Refused {
            file: c.source.clone(),
            source,
        };
        if self.entry(&c.name).is_none() {
            self.create_connector(
                &c.name,
                c.config.clone(),
                c.initial_state.unwrap_or(TargetState::Started),
                c.offsets.clone(),
            )
            .await
            .map_err(fail)?;
            tracing::info!(connector = %c.name, file = %c.source, "Created connector from file.");
        } else {
            let last = self
                .store
                .applied_file_config(c.name.clone())
                .await
                .map_err(|e| fail(e.into()))?;
            if last.as_deref() == Some(applied.as_str()) {
                tracing::info!(connector = %c.name, file = %c.source, "Connector file unchanged since it was last applied; keeping the stored connector as it is.");
                return Ok(());
            }
            self.put_connector_config(&c.name, c.config.clone())
                .await
                .map_err(fail)?;
            tracing::info!(connector = %c.name, file = %c.source, "Connector file changed; replaced the stored config.");
        }
        self.store
            .set_applied_file_config(c.name.clone(), applied)
            .await
            .map_err(|e| fail(e.into()))
    }
}
