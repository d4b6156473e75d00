//! liteconnect: a Kafka Connect worker for one machine, with all of its state in one SQLite file.
//!
//! # Layout
//! - [`config`]: Java properties, Kafka's `ConfigDef` model, connector and worker configs.
//! - [`storage`]: the SQLite file: migrations, the writer and reader threads, the topic log.
//! - [`herder`]: the control plane: create, reconfigure, pause, resume, stop, restart, delete.
//! - [`status`]: the status board: live connector and task statuses, as the worker reports them.
//! - [`worker`]: the task pool, the source and sink loops, converters on the way in and out.
//! - [`connectors`]: the connector plugin contract and the built-in connectors.
//! - [`data`] and [`converters`]: Kafka Connect's data model and its converters.
//! - [`plugins`]: the registry of plugins by Kafka class name and alias.
//! - [`cli`]: connector files, and exporting and migrating connectors with their offsets over the REST API.
//! - [`rest`]: the REST API with Kafka's paths, shapes and status codes.
//! - [`security`]: HTTPS listeners, basic authentication, CORS and response headers.
//! - [`transforms`]: Kafka's single message transforms and predicates, and a connector's chain of them.
//! - [`metrics`]: `GET /metrics` for Prometheus, with Kafka Connect's metrics under Strimzi's names.
//!
//! The library binds no port and catches no signal: [`run`] takes bound [`Listeners`] and a shutdown
//! future, so the binary and the tests drive it the same way. It runs in three steps: [`prepare`] checks
//! every setting and opens the database, [`serve`] serves the listeners and starts the connectors until the
//! shutdown future resolves, then the worker shuts down (stops accepting, stops the tasks, closes the file).
//! The binary calls [`prepare`] before it binds, so a worker that cannot start never listens.

#![warn(missing_docs)]
pub mod cli;
pub mod client;
pub mod config;
pub mod connectors;
pub(crate) mod converters;
pub mod data;
pub(crate) mod error;
pub(crate) mod herder;
#[cfg(feature = "kafka-listener")]
pub mod kafka;
pub mod logging;
pub(crate) mod metrics;
pub mod model;
pub mod plugins;
pub mod record;
pub mod rest;
pub mod security;
pub(crate) mod status;
pub(crate) mod storage;
#[cfg(test)]
mod test_support;
pub(crate) mod transforms;
pub(crate) mod tryout;
pub(crate) mod worker;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use config::worker::{Listener, WorkerConfig};
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
    #[error("Could not bind the REST listener {address}: {source}")]
    Bind {
        /// The address.
        address: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A connector given at start-up could not be applied.
    #[error(transparent)]
    Startup(#[from] herder::StartupError),
    /// The stored connectors could not be loaded.
    #[error("{0}")]
    Start(error::ConnectError),
    /// Opening the database panicked.
    #[error("Opening the database panicked: {0}")]
    OpenPanicked(String),
    /// A REST security setting (TLS, authentication, CORS, headers) is wrong.
    #[error("{0}")]
    Config(String),
}

pub use herder::StartupConnector;

/// The sockets a worker serves, bound by its caller, in the worker config's order.
#[derive(Debug, Default)]
pub struct Listeners {
    /// One per `listeners` entry; the first is the main one, whose address makes the worker id.
    pub rest: Vec<TcpListener>,
    /// One per `admin.listeners` entry.
    pub admin: Vec<TcpListener>,
    /// One per `kafka.listeners` entry.
    pub kafka: Vec<TcpListener>,
    /// One per `schema.registry.listeners` entry.
    pub registry: Vec<TcpListener>,
}

impl From<TcpListener> for Listeners {
    /// One REST listener and no admin listener.
    fn from(listener: TcpListener) -> Self {
        Listeners {
            rest: vec![listener],
            ..Listeners::default()
        }
    }
}

impl Listeners {
    /// The addresses the sockets are bound to, each with what it is ("REST listener", ...).
    fn bound_addresses(&self) -> Vec<(String, SocketAddr)> {
        let kinds = [
            ("REST listener", &self.rest),
            ("admin listener", &self.admin),
            ("Kafka listener", &self.kafka),
            ("Schema Registry listener", &self.registry),
        ];
        kinds
            .iter()
            .flat_map(|(what, sockets)| {
                sockets
                    .iter()
                    .filter_map(|s| s.local_addr().ok())
                    .map(move |a| (what.to_string(), a))
            })
            .collect()
    }

    /// Binds every listener and admin listener the worker config names, in order.
    ///
    /// # Errors
    /// [`RunError::Bind`] naming the first address that could not be bound.
    pub async fn bind(config: &WorkerConfig) -> Result<Listeners, RunError> {
        let mut rest = Vec::new();
        for l in &config.listeners {
            rest.push(bind_one(l).await?);
        }
        let mut admin = Vec::new();
        for l in config.admin_listeners.iter().flatten() {
            admin.push(bind_one(l).await?);
        }
        let mut kafka = Vec::new();
        for l in &config.kafka.listeners {
            let address = l.bind_address();
            kafka.push(TcpListener::bind(&address).await.map_err(|e| {
                RunError::Config(format!(
                    "Could not bind the Kafka listener {address} ({}): {e}",
                    config::worker::kafka::KAFKA_LISTENERS
                ))
            })?);
        }
        let mut registry = Vec::new();
        for l in &config.schema_registry_listeners {
            registry.push(bind_one(l).await?);
        }
        Ok(Listeners {
            rest,
            admin,
            kafka,
            registry,
        })
    }
}

/// Refuses a worker config whose Schema Registry listener is on the port of another of its listeners
/// (the same host, or any host when one is a wildcard), naming both: one would take the other's
/// connections, or fail to bind.
fn check_listener_clashes(config: &WorkerConfig) -> Result<(), RunError> {
    use herder::listeners::Address;
    let named = |key: &'static str, address: String| (key, Address::parse(&address), address);
    let mut others: Vec<_> = config
        .listeners
        .iter()
        .map(|l| named(config::keys::LISTENERS, l.bind_address()))
        .collect();
    others.extend(
        config
            .admin_listeners
            .iter()
            .flatten()
            .map(|l| named(config::keys::ADMIN_LISTENERS, l.bind_address())),
    );
    others.extend(
        config
            .kafka
            .listeners
            .iter()
            .map(|l| named(config::worker::kafka::KAFKA_LISTENERS, l.bind_address())),
    );
    let registry: Vec<_> = config
        .schema_registry_listeners
        .iter()
        .map(|l| named(config::keys::SCHEMA_REGISTRY_LISTENERS, l.bind_address()))
        .collect();
    for (i, (_, mine, address)) in registry.iter().enumerate() {
        let Some(mine) = mine else { continue };
        let clash = others
            .iter()
            .chain(&registry[..i])
            .find(|(_, other, _)| other.as_ref().is_some_and(|o| o.clashes(mine)));
        if let Some((key, _, other)) = clash {
            return Err(RunError::Config(format!(
                "The Schema Registry listener {address} ({}) is on the port of {other} ({key}); give it a port of its own.",
                config::keys::SCHEMA_REGISTRY_LISTENERS
            )));
        }
    }
    Ok(())
}

async fn bind_one(listener: &Listener) -> Result<TcpListener, RunError> {
    let address = listener.bind_address();
    TcpListener::bind(&address)
        .await
        .map_err(|source| RunError::Bind { address, source })
}

/// Opens the database named by the worker config (blocking work runs off the executor), reporting its
/// appends and commits to `metrics`.
///
/// # Errors
/// See [`Store::open`].
pub async fn open_store(
    config: &WorkerConfig,
    metrics: &Arc<metrics::Metrics>,
) -> Result<Store, RunError> {
    let options = StoreOptions {
        path: config.storage_file.clone(),
        synchronous: config.storage_synchronous,
        max_bytes: config.storage_max_bytes,
        buffer: config.log_buffer,
    };
    let observer: Arc<dyn storage::StoreObserver> = metrics.clone();
    Ok(
        tokio::task::spawn_blocking(move || Store::open_observed(&options, observer))
            .await
            .map_err(|e| RunError::OpenPanicked(e.to_string()))??,
    )
}

fn worker_id(config: &WorkerConfig, bound: SocketAddr) -> String {
    let host = config
        .advertised_host
        .clone()
        .unwrap_or_else(|| bound.ip().to_string());
    let port = config.advertised_port.unwrap_or(bound.port());
    format!("{host}:{port}")
}

/// A worker whose settings have been checked and whose database is open and writable; it serves nothing yet.
pub struct Prepared {
    config: Arc<WorkerConfig>,
    security: Arc<security::Security>,
    /// The TLS acceptor of each `listeners` entry (None for http), in order.
    rest_tls: Vec<Option<TlsAcceptor>>,
    /// The TLS acceptor of each `admin.listeners` entry, in order.
    admin_tls: Vec<Option<TlsAcceptor>>,
    /// The TLS acceptor of each `schema.registry.listeners` entry (the REST listener's settings), in order.
    registry_tls: Vec<Option<TlsAcceptor>>,
    /// The TLS acceptor of each `kafka.listeners` entry, and the SASL users.
    #[cfg(feature = "kafka-listener")]
    kafka: kafka::KafkaPrepared,
    store: Store,
    /// The process's metrics, created with the store.
    metrics: Arc<metrics::Metrics>,
    startup: Vec<StartupConnector>,
}

impl Prepared {
    /// The worker config.
    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }
}

/// Checks everything that can be checked before serving: the security settings and TLS material, the
/// start-up connectors' configs; then opens the database (checking that it can be written). Nothing is
/// created on disk when a setting or a connector is wrong.
///
/// # Errors
/// [`RunError::Config`] for a wrong security setting, [`RunError::Startup`] for an invalid start-up
/// connector, [`RunError::Storage`] when the database cannot be used.
pub async fn prepare(
    config: WorkerConfig,
    startup: Vec<StartupConnector>,
) -> Result<Prepared, RunError> {
    let config = Arc::new(config);
    for key in &config.unused {
        tracing::info!(key = %key, "The configuration '{key}' was supplied but is not used by liteconnect.");
    }
    plugins::install_external(&config);
    config
        .validate(&plugins::Plugins::new())
        .map_err(|e| RunError::Config(e.to_string()))?;
    let security =
        Arc::new(security::Security::from_worker(&config).map_err(|e| RunError::Config(e.into()))?);
    let acceptors = |listeners: &[Listener], admin: bool| {
        listeners
            .iter()
            .map(|l| security::acceptor(&config, l, admin).map_err(|e| RunError::Config(e.into())))
            .collect::<Result<Vec<_>, _>>()
    };
    let rest_tls = acceptors(&config.listeners, false)?;
    let admin_tls = acceptors(config.admin_listeners.as_deref().unwrap_or_default(), true)?;
    check_listener_clashes(&config)?;
    let registry_tls = acceptors(&config.schema_registry_listeners, false)?;
    #[cfg(feature = "kafka-listener")]
    let kafka = kafka::KafkaPrepared::new(&config).map_err(RunError::Config)?;
    herder::check_startup_connectors(&plugins::Plugins::new(), &startup)?;
    let metrics = Arc::new(metrics::Metrics::default());
    let store = open_store(&config, &metrics).await?;
    Ok(Prepared {
        config,
        security,
        rest_tls,
        admin_tls,
        registry_tls,
        #[cfg(feature = "kafka-listener")]
        kafka,
        store,
        metrics,
        startup,
    })
}

/// Runs a worker until `shutdown` resolves: [`prepare`], then [`serve`].
///
/// # Errors
/// See [`prepare`] and [`serve`].
pub async fn run(
    listeners: Listeners,
    config: WorkerConfig,
    startup: Vec<StartupConnector>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    serve(prepare(config, startup).await?, listeners, shutdown).await
}

/// Serves the REST API on `listeners`, starts the stored connectors, applies the start-up connectors, then
/// waits for `shutdown`. On shutdown it stops accepting requests, stops every task (committing sink
/// offsets) within the graceful timeout, and closes the database.
///
/// # Errors
/// [`RunError::Config`] when no REST listener is given; [`RunError::Startup`] when a start-up connector
/// fails (the worker then stops without having changed any stored connector for that file).
pub async fn serve(
    worker: Prepared,
    mut listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let bound = listeners
        .rest
        .first()
        .ok_or_else(|| RunError::Config("No REST listener to serve.".into()))?
        .local_addr()
        .map_err(|source| RunError::Bind {
            address: "listener".into(),
            source,
        })?;
    let statuses = StatusBoard::new(
        worker_id(&worker.config, bound),
        worker.store.clone(),
        worker.metrics.clone(),
    );
    worker.metrics.attach_statuses(&statuses);
    let herder = Herder::new(
        worker.store.clone(),
        worker.metrics.clone(),
        worker.config.clone(),
        statuses,
    );
    herder.set_worker_listeners(listeners.bound_addresses());
    let (stop, stop_rx) = watch::channel(false);
    let kafka_sockets = std::mem::take(&mut listeners.kafka);
    // The REST listeners log their addresses first, the Kafka listeners after them.
    #[cfg_attr(not(feature = "kafka-listener"), allow(unused_mut))]
    let mut servers = start_servers(&worker, &herder, listeners, &stop_rx);
    #[cfg(feature = "kafka-listener")]
    servers.extend(worker.kafka.start(
        &worker.config,
        &worker.store,
        &worker.metrics,
        herder.log_signal(),
        kafka_sockets,
        &stop_rx,
    ));
    // Without the Kafka listener the worker config has no `kafka.listeners` (WorkerConfig::from_props).
    #[cfg(not(feature = "kafka-listener"))]
    drop(kafka_sockets);
    let mut running = Running {
        servers,
        retention: None,
        log_stats: tokio::spawn(metrics::refresh_loop(
            worker.store.clone(),
            worker.metrics.clone(),
            stop_rx.clone(),
        )),
        stop,
        herder,
        store: worker.store.clone(),
    };
    let outcome = start_connectors(&running.herder, worker.startup).await;
    if outcome.is_ok() {
        running.retention = Some(tokio::spawn(retention_loop(
            worker.store,
            worker.config,
            stop_rx,
        )));
        shutdown.await;
        tracing::info!("Shutting down.");
    }
    running.shut_down().await;
    outcome
}

/// What a serving worker has to stop.
struct Running {
    /// Turned true to stop the servers and the retention loop.
    stop: watch::Sender<bool>,
    servers: Vec<JoinHandle<()>>,
    retention: Option<JoinHandle<()>>,
    /// Refreshes the log statistics of the metrics.
    log_stats: JoinHandle<()>,
    herder: Arc<Herder>,
    store: Store,
}

impl Running {
    /// Stops accepting requests (letting those being handled finish), stops every task (committing sink
    /// offsets), then closes the database.
    async fn shut_down(self) {
        let _ = self.stop.send(true);
        // Long-polling reads of the topic log answer now rather than hold the servers' shutdown.
        self.herder.log_signal().close();
        if let Some(r) = self.retention {
            let _ = r.await;
        }
        let _ = self.log_stats.await;
        for s in self.servers {
            let _ = s.await;
        }
        self.herder.shutdown().await;
        // Last: every write is on disk and the lock is released, so the file can be opened again at once.
        self.store.close().await;
        tracing::info!("Worker stopped.");
    }
}

/// Starts one server per listener, logging each address.
fn start_servers(
    worker: &Prepared,
    herder: &Arc<Herder>,
    listeners: Listeners,
    stop: &watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    let public = ApiState {
        herder: herder.clone(),
        admin: worker.config.admin_listeners.is_none(),
        public: true,
        registry: false,
    };
    let admin = ApiState {
        herder: herder.clone(),
        admin: true,
        public: false,
        registry: false,
    };
    let registry = ApiState {
        herder: herder.clone(),
        admin: false,
        public: true,
        registry: true,
    };
    let rest = listeners
        .rest
        .into_iter()
        .zip(worker.config.listeners.iter().zip(&worker.rest_tls))
        .map(|(socket, (l, tls))| (socket, l, tls, &public, "REST server"));
    let admin_listeners = worker.config.admin_listeners.as_deref().unwrap_or_default();
    let admins = listeners
        .admin
        .into_iter()
        .zip(admin_listeners.iter().zip(&worker.admin_tls))
        .map(|(socket, (l, tls))| (socket, l, tls, &admin, "Admin REST server"));
    let registries = listeners
        .registry
        .into_iter()
        .zip(
            worker
                .config
                .schema_registry_listeners
                .iter()
                .zip(&worker.registry_tls),
        )
        .map(|(socket, (l, tls))| (socket, l, tls, &registry, "Schema Registry"));
    rest.chain(admins)
        .chain(registries)
        .map(|(socket, l, tls, state, what)| {
            match socket.local_addr() {
                Ok(a) => tracing::info!("{what} listening on {}://{a}", l.scheme),
                Err(e) => tracing::warn!(error = %e, "Could not read the bound address."),
            }
            let routes = rest::routes_with(state.clone(), worker.security.clone());
            tokio::spawn(security::server::serve(
                socket,
                tls.clone(),
                routes,
                stop.clone(),
            ))
        })
        .collect()
}

/// Starts the stored connectors, then applies the start-up connectors, then marks the worker ready.
async fn start_connectors(
    herder: &Arc<Herder>,
    startup: Vec<StartupConnector>,
) -> Result<(), RunError> {
    herder.start().await.map_err(RunError::Start)?;
    for c in startup {
        herder.apply_startup_connector(c).await?;
    }
    herder.set_ready();
    tracing::info!("Worker started.");
    Ok(())
}

/// Deletes records past `retention.ms` / `retention.bytes` once a minute, so the file does not grow without bound.
async fn retention_loop(store: Store, config: Arc<WorkerConfig>, mut stop: watch::Receiver<bool>) {
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
