//! Serves a warp filter on a bound listener, over plain TCP or TLS, until a stop signal; then stops
//! accepting and lets open connections finish (idle keep-alive connections are closed).

use std::convert::Infallible;
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
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
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
        let service = TowerToHyperService::new(warp::service(filter.clone()));
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let builder = Builder::new(TokioExecutor::new());
            let outcome = match tls {
                None => {
                    watcher
                        .watch(builder.serve_connection_with_upgrades(TokioIo::new(tcp), service))
                        .await
                }
                Some(acceptor) => {
                    let stream =
                        match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
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
                        .watch(
                            builder.serve_connection_with_upgrades(TokioIo::new(stream), service),
                        )
                        .await
                }
            };
            if let Err(e) = outcome {
                tracing::debug!(%remote, error = %e, "Connection ended with an error.");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
