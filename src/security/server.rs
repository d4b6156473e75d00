//! Serves a warp filter on a bound listener, over plain TCP or TLS, until a stop signal; then stops
//! accepting, lets the requests being handled finish and answer, and closes every other connection: an
//! idle keep-alive connection, or one whose client has not finished sending a request, does not hold the
//! worker's exit.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use warp::reply::Response;
use warp::Filter;

/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// At shutdown, how long requests being handled may take to finish.
const HANDLER_GRACE: Duration = Duration::from_secs(10);
/// At shutdown, how long answered requests' responses get to be written once no handler runs.
const WRITE_GRACE: Duration = Duration::from_millis(50);

/// Counts the requests being handled, so shutdown knows when only idle connections are left.
#[derive(Clone, Default)]
struct InFlight {
    count: Arc<AtomicUsize>,
    idle: Arc<tokio::sync::Notify>,
}

/// Held while a request is handled.
struct Handling(InFlight);

impl InFlight {
    fn enter(&self) -> Handling {
        self.count.fetch_add(1, Ordering::SeqCst);
        Handling(self.clone())
    }

    async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Serves `filter` on `listener` (TLS when `tls` is given) until `stop` turns true.
pub async fn serve<F>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    filter: F,
    mut stop: tokio::sync::watch::Receiver<bool>,
) where
    F: Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static,
{
    let graceful = GracefulShutdown::new();
    let in_flight = InFlight::default();
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        while connections.try_join_next().is_some() {}
        let (tcp, remote) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                ) {
                    tracing::error!(error = %e, "Accepting a connection failed.");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                continue;
            }
        };
        let counter = in_flight.clone();
        let counted = warp::any()
            .map(move || counter.enter())
            .and(filter.clone())
            .map(|handling: Handling, response: Response| {
                drop(handling);
                response
            });
        let watcher = graceful.watcher();
        connections.spawn(connection(tcp, remote, tls.clone(), counted, watcher));
    }
    drop(listener);
    // Every connection is told to finish its request and close; those with nothing being handled (idle, or
    // a request still arriving) are then dropped, with the JoinSet.
    let drained = graceful.shutdown();
    let handled = async {
        let _ = tokio::time::timeout(HANDLER_GRACE, in_flight.wait_idle()).await;
        tokio::time::sleep(WRITE_GRACE).await;
    };
    tokio::select! {
        _ = drained => {}
        _ = handled => {}
    }
}

/// Serves one accepted connection (after the TLS handshake, when there is one) until it ends or shutdown.
async fn connection<F>(
    tcp: tokio::net::TcpStream,
    remote: std::net::SocketAddr,
    tls: Option<TlsAcceptor>,
    filter: F,
    watcher: hyper_util::server::graceful::Watcher,
) where
    F: Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static,
{
    let service = TowerToHyperService::new(warp::service(filter));
    let builder = Builder::new(TokioExecutor::new());
    let outcome = match tls {
        None => {
            watcher
                .watch(builder.serve_connection_with_upgrades(TokioIo::new(tcp), service))
                .await
        }
        Some(acceptor) => {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(%remote, error = %e, "TLS handshake failed.");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%remote, "TLS handshake timed out.");
                    return;
                }
            };
            watcher
                .watch(builder.serve_connection_with_upgrades(TokioIo::new(stream), service))
                .await
        }
    };
    if let Err(e) = outcome {
        tracing::debug!(%remote, error = %e, "Connection ended with an error.");
    }
}
