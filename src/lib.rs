//! liteconnect: a Kafka Connect worker for one machine, with all of its state in one SQLite file.
//!
//! # Layout
//! - [`config`]: Java properties, Kafka's `ConfigDef` model, connector and worker configs.
//! - [`storage`]: the SQLite file: migrations, the writer and reader threads, the topic log.
//! - [`herder`]: the control plane: create, reconfigure, pause, resume, stop, restart, delete.
//! - [`worker`]: task threads, the source and sink loops, converters on the way in and out.
//! - [`connectors`]: the connector plugin contract and the built-in connectors.
//! - [`data`] and [`converters`]: Kafka Connect's data model and its converters.
//! - [`plugins`]: the registry of plugins by Kafka class name and alias.
//! - [`migrate`]: export and migrate connectors with their offsets over the REST API.
//! - [`rest`]: the REST API with Kafka's paths, shapes and status codes.
//! - [`security`]: HTTPS listeners, basic authentication, CORS and response headers.
//! - [`status`]: live connector and task statuses.
//! - [`transforms`]: Kafka's single message transforms and predicates, and a connector's chain of them.
//!
//! The library binds no port and catches no signal: [`run`] takes a bound listener and a shutdown future,
//! so the binary and the tests drive it the same way.

pub mod client;
pub mod config;
pub mod connector_file;
pub mod connectors;
pub mod converters;
pub mod data;
pub mod error;
pub mod herder;
pub mod logging;
pub mod migrate;
pub mod model;
pub mod plugins;
pub mod record;
pub mod rest;
pub mod security;
pub mod status;
pub mod storage;
pub mod transforms;
pub mod worker;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use config::worker::WorkerConfig;
use herder::Herder;
use rest::ApiState;
use status::StatusBoard;
use storage::{Store, StoreOptions};

/// Why the worker could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The database could not be opened.
    #[error(transparent)]
    Storage(#[from] storage::StorageError),
    /// A listener could not be bound.
    #[error("Could not bind {address}: {source}")]
    Bind {
        /// The address.
        address: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A connector given at start-up could not be applied.
    #[error("{0}")]
    Startup(String),
    /// A REST security setting (TLS, authentication, CORS, headers) is wrong.
    #[error("{0}")]
    Config(String),
}

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
    pub initial_state: Option<model::TargetState>,
    /// Offsets to create it with (KIP-995).
    pub offsets: Option<Vec<herder::OffsetEntry>>,
}

/// Opens the database named by the worker config (blocking work runs off the executor).
///
/// # Errors
/// See [`Store::open`].
pub async fn open_store(config: &WorkerConfig) -> Result<Store, RunError> {
    let options = StoreOptions {
        path: config.storage_file.clone(),
        synchronous: config.storage_synchronous,
        max_bytes: config.storage_max_bytes,
        buffer: config.log_buffer,
    };
    Ok(tokio::task::spawn_blocking(move || Store::open(&options))
        .await
        .map_err(|e| RunError::Startup(format!("Opening the database panicked: {e}")))??)
}

fn worker_id(config: &WorkerConfig, bound: SocketAddr) -> String {
    let host = config
        .advertised_host
        .clone()
        .unwrap_or_else(|| bound.ip().to_string());
    let port = config.advertised_port.unwrap_or(bound.port());
    format!("{host}:{port}")
}

/// Runs a worker until `shutdown` resolves: opens the database, serves the REST API on `listener` (the
/// first of `listeners`, bound by the caller) and on the other configured listeners and admin listeners,
/// starts the stored connectors, applies `startup` connectors, then waits. On shutdown it stops accepting
/// requests, stops every task (committing sink offsets) within the graceful timeout, and returns.
///
/// # Errors
/// A security setting is wrong, the database cannot be opened, a listener cannot be bound, or a start-up
/// connector fails (the worker then stops without having changed any stored connector for that file).
pub async fn run(
    listener: TcpListener,
    config: WorkerConfig,
    startup: Vec<StartupConnector>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let config = Arc::new(config);
    for key in &config.unused {
        tracing::info!(key = %key, "The configuration '{key}' was supplied but is not used by liteconnect.");
    }
    let security = Arc::new(security::Security::from_worker(&config).map_err(RunError::Config)?);
    let first = config
        .listeners
        .first()
        .cloned()
        .unwrap_or_else(|| config::worker::Listener {
            scheme: "http".into(),
            host: String::new(),
            port: 0,
        });
    let main_tls = security::acceptor(&config, &first, false).map_err(RunError::Config)?;
    let mut others = Vec::new();
    let extra = config.listeners.iter().skip(1).map(|l| (l, false));
    let admin = config.admin_listeners.iter().flatten().map(|l| (l, true));
    for (l, is_admin) in extra.chain(admin) {
        others.push((
            l.clone(),
            is_admin,
            security::acceptor(&config, l, is_admin).map_err(RunError::Config)?,
        ));
    }
    let store = open_store(&config).await?;
    let bound = listener.local_addr().map_err(|source| RunError::Bind {
        address: "listener".into(),
        source,
    })?;
    let statuses = StatusBoard::new(worker_id(&config, bound), store.clone());
    let herder = Herder::new(store.clone(), config.clone(), statuses);

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let admin_on_main = config.admin_listeners.is_none();
    let mut servers = Vec::new();
    let main_state = ApiState {
        herder: herder.clone(),
        admin: admin_on_main,
        public: true,
    };
    servers.push(serve(
        listener,
        main_tls,
        main_state.clone(),
        security.clone(),
        stop_rx.clone(),
    ));
    for (l, is_admin, tls) in others {
        let address = l.bind_address();
        let bound = match TcpListener::bind(&address).await {
            Ok(b) => b,
            Err(source) => {
                let _ = stop_tx.send(true);
                return Err(RunError::Bind { address, source });
            }
        };
        let url = format!(
            "{}://{}",
            l.scheme,
            bound.local_addr().map(|a| a.to_string()).unwrap_or(address)
        );
        let state = if is_admin {
            tracing::info!("Admin REST server listening on {url}");
            ApiState {
                herder: herder.clone(),
                admin: true,
                public: false,
            }
        } else {
            tracing::info!("REST server listening on {url}");
            main_state.clone()
        };
        servers.push(serve(bound, tls, state, security.clone(), stop_rx.clone()));
    }

    let started = async {
        herder
            .check_startup_connectors(&startup)
            .map_err(RunError::Startup)?;
        herder
            .start()
            .await
            .map_err(|e| RunError::Startup(e.to_string()))?;
        for c in startup {
            herder
                .apply_startup_connector(c)
                .await
                .map_err(RunError::Startup)?;
        }
        herder.set_ready();
        tracing::info!("Worker started.");
        Ok::<(), RunError>(())
    };
    let outcome = started.await;
    if outcome.is_ok() {
        let retention = tokio::spawn(retention_loop(
            store.clone(),
            config.clone(),
            stop_rx.clone(),
        ));
        shutdown.await;
        tracing::info!("Shutting down.");
        let _ = stop_tx.send(true);
        let _ = retention.await;
    } else {
        let _ = stop_tx.send(true);
    }
    for s in servers {
        let _ = s.await;
    }
    herder.shutdown().await;
    // Last: every write is on disk and the lock is released, so the file can be opened again at once.
    store.close().await;
    tracing::info!("Worker stopped.");
    outcome
}

fn serve(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: ApiState,
    security: Arc<security::Security>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let routes = rest::routes_with(state, security);
    tokio::spawn(security::server::serve(listener, tls, routes, stop))
}

/// Deletes records past `retention.ms` / `retention.bytes` once a minute, so the file does not grow without bound.
async fn retention_loop(
    store: Store,
    config: Arc<WorkerConfig>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    if config.retention_ms.is_none() && config.retention_bytes.is_none() {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                match store.apply_retention(config.retention_ms, config.retention_bytes).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(records = n, "Retention deleted old records."),
                    Err(error) => tracing::warn!(%error, "Retention failed."),
                }
            }
            _ = async { let _ = stop.wait_for(|s| *s).await; } => return,
        }
    }
}
