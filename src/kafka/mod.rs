//! The Kafka-protocol listener on the local log: Kafka clients, tools and UIs produce to and consume from
//! the same topics the connectors use, with the same offsets.
//!
//! Every request and response is decoded and encoded by the `kafka-protocol` crate; only the message types
//! the listener answers are decoded (each by its own type, never through a catch-all enum, so the binary
//! carries no code for the APIs it does not serve).

mod admin;
mod answers;
pub mod codec;
pub(crate) mod dispatch;
pub(crate) mod fetch;
pub(crate) mod groups;
mod metadata;
pub(crate) mod produce;
pub(crate) mod sasl;
pub(crate) mod server;

pub use codec::decode_frame;

/// This worker seen as a Kafka broker: its node id and the address it advertises to clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node id (always the same: a one-node cluster).
    pub id: i32,
    /// The advertised host.
    pub host: String,
    /// The advertised port.
    pub port: i32,
}

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::config::worker::kafka::{KafkaListener, KAFKA_SSL_PREFIX};
use crate::config::worker::WorkerConfig;
use crate::storage::Store;
use crate::worker::LogSignal;

/// The Kafka listeners' material checked before the worker binds: TLS acceptors and SASL users.
pub struct KafkaPrepared {
    tls: Vec<Option<TlsAcceptor>>,
    credentials: Option<Arc<sasl::Credentials>>,
}

impl KafkaPrepared {
    /// Builds the TLS config of SSL listeners (keys `kafka.listeners.ssl.*`) and loads the SASL users.
    ///
    /// # Errors
    /// A message naming the key or file that is wrong.
    pub fn new(config: &WorkerConfig) -> Result<KafkaPrepared, String> {
        let tls = config
            .kafka
            .listeners
            .iter()
            .map(|l| {
                if !l.protocol.tls() {
                    return Ok(None);
                }
                crate::security::tls::server_config(&config.originals, KAFKA_SSL_PREFIX)
                    .map(|c| Some(TlsAcceptor::from(c)))
                    .map_err(String::from)
            })
            .collect::<Result<Vec<_>, String>>()?;
        let credentials = match &config.kafka.sasl_credentials_file {
            Some(path) if config.kafka.listeners.iter().any(|l| l.protocol.sasl()) => {
                Some(Arc::new(sasl::Credentials::load(path)?))
            }
            _ => None,
        };
        Ok(KafkaPrepared { tls, credentials })
    }

    /// Serves every bound Kafka listener, logging its address; returns their tasks. Produced records go
    /// to `store`'s topic log; `signal` wakes fetches waiting for them; the listeners count into
    /// `metrics`.
    pub fn start(
        &self,
        config: &WorkerConfig,
        store: &Store,
        metrics: &Arc<crate::metrics::Metrics>,
        signal: &Arc<LogSignal>,
        sockets: Vec<TcpListener>,
        stop: &watch::Receiver<bool>,
    ) -> Vec<JoinHandle<()>> {
        let settings = &config.kafka;
        let mut bound = Vec::new();
        for (i, (socket, listener)) in sockets.into_iter().zip(&settings.listeners).enumerate() {
            let addr = match socket.local_addr() {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "Could not read the Kafka listener's address.");
                    continue;
                }
            };
            let node = advertised(settings.node_id, settings.advertised.get(i), addr);
            tracing::info!(
                "Kafka listener listening on {}://{addr} (advertised as {}:{})",
                listener.protocol.name(),
                node.host,
                node.port
            );
            bound.push((
                socket,
                listener.clone(),
                self.tls.get(i).cloned().flatten(),
                node,
            ));
        }
        if bound.is_empty() {
            return Vec::new();
        }
        let store = store.clone();
        let broker = Arc::new(dispatch::Broker {
            groups: Arc::new(groups::Groups::new(store.clone())),
            metrics: metrics.clone(),
            store,
            signal: signal.clone(),
            settings: settings.clone(),
            retention_ms: config.retention_ms,
            retention_bytes: config.retention_bytes,
            credentials: self.credentials.clone(),
            producers: produce::Producers::default(),
            warnings: Default::default(),
        });
        bound
            .into_iter()
            .map(
                |(socket, listener, tls, node): (TcpListener, KafkaListener, _, Node)| {
                    let served = server::KafkaSocket {
                        socket,
                        tls,
                        sasl: listener.protocol.sasl(),
                        node,
                    };
                    tokio::spawn(server::serve(served, broker.clone(), stop.clone()))
                },
            )
            .collect()
    }
}

/// The node a listener advertises: `kafka.advertised.listeners` when set, else the bound address
/// (`localhost` for an all-interfaces bind).
fn advertised(id: i32, given: Option<&KafkaListener>, bound: SocketAddr) -> Node {
    match given {
        Some(l) => Node {
            id,
            host: l.host.clone(),
            port: i32::from(if l.port == 0 { bound.port() } else { l.port }),
        },
        None => Node {
            id,
            host: if bound.ip().is_unspecified() {
                "localhost".into()
            } else {
                bound.ip().to_string()
            },
            port: i32::from(bound.port()),
        },
    }
}
