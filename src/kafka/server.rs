//! The Kafka listener's sockets: the accept loop, TLS, and one task per connection reading
//! length-prefixed frames and answering them in order.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use super::codec::decode_frame;
use super::dispatch::{Broker, Connection, Reply};
use super::sasl::SaslSession;
use super::Node;
use crate::metrics::CloseReason;

/// What a frame may hold beyond `message.max.bytes` of records: headers, names, several partitions.
const FRAME_OVERHEAD: usize = 1 << 20;

/// One bound Kafka listener and how it serves.
pub struct KafkaSocket {
    /// The bound socket.
    pub socket: TcpListener,
    /// The TLS acceptor of SSL and SASL_SSL listeners.
    pub tls: Option<TlsAcceptor>,
    /// Whether clients must authenticate with SASL.
    pub sasl: bool,
    /// This worker as this listener advertises it.
    pub node: Node,
}

/// Accepts connections until `stop` turns true; each connection is served by its own task.
pub async fn serve(listener: KafkaSocket, broker: Arc<Broker>, mut stop: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            a = listener.socket.accept() => a,
            _ = stop.wait_for(|s| *s) => return,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(error = %e, "The Kafka listener could not accept a connection.");
                continue;
            }
        };
        broker.metrics.kafka.opened.inc();
        let _ = stream.set_nodelay(true);
        let conn = Connection {
            node: listener.node.clone(),
            sasl: listener.sasl.then(|| {
                SaslSession::new(
                    broker.credentials.clone().unwrap_or_default(),
                    broker.settings.sasl_mechanisms.clone(),
                )
            }),
            authenticated: !listener.sasl,
            client_host: format!("/{}", peer.ip()),
            read_ahead: Default::default(),
        };
        let (broker, stop, tls) = (broker.clone(), stop.clone(), listener.tls.clone());
        tokio::spawn(async move {
            let reason = match tls {
                None => connection(stream, &broker, conn, peer, stop).await,
                Some(tls) => match tls.accept(stream).await {
                    Ok(stream) => connection(stream, &broker, conn, peer, stop).await,
                    Err(e) => {
                        if let Some(held) = broker.warnings.note(peer.ip(), "tls") {
                            tracing::info!(%peer, error = %e, held_back = held, "A TLS handshake on the Kafka listener failed.")
                        }
                        CloseReason::Tls
                    }
                },
            };
            broker.metrics.kafka.closed(reason);
        });
    }
}

/// Logs a warning about a closed connection, at most once a minute per peer and reason with the count
/// held back in between.
fn warn_closed(broker: &Broker, peer: SocketAddr, reason: &'static str, detail: &str) {
    if let Some(held_back) = broker.warnings.note(peer.ip(), reason) {
        tracing::warn!(%peer, reason = %detail, held_back, "Closed a Kafka connection.");
    }
}

/// Serves one connection: reads a frame, answers it, and so on until the client closes, a frame is
/// malformed or too large (the connection is closed with a log line), or the worker stops. Returns why
/// it ended.
async fn connection<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    broker: &Broker,
    mut conn: Connection,
    peer: SocketAddr,
    mut stop: watch::Receiver<bool>,
) -> CloseReason {
    let max_frame =
        usize::try_from(broker.settings.message_max_bytes).unwrap_or(0) + FRAME_OVERHEAD;
    loop {
        let mut len = [0u8; 4];
        tokio::select! {
            r = stream.read_exact(&mut len) => if r.is_err() { return CloseReason::Client },
            _ = stop.wait_for(|s| *s) => return CloseReason::Shutdown,
        }
        let size = i32::from_be_bytes(len);
        let Ok(size) = usize::try_from(size) else {
            let detail = format!("it sent a negative frame size ({size})");
            warn_closed(broker, peer, "negative size", &detail);
            return CloseReason::Malformed;
        };
        if size > max_frame {
            let detail = format!(
                "it sent a frame of {size} bytes, more than message.max.bytes allows ({max_frame})"
            );
            warn_closed(broker, peer, "frame too large", &detail);
            return CloseReason::Malformed;
        }
        let mut buf = BytesMut::zeroed(size);
        if stream.read_exact(&mut buf).await.is_err() {
            return CloseReason::Client;
        }
        let frame = match decode_frame(buf.freeze()) {
            Ok(f) => f,
            Err(e) => {
                let detail = format!("it sent a malformed request: {e}");
                warn_closed(broker, peer, "malformed request", &detail);
                return CloseReason::Malformed;
            }
        };
        let bytes = match broker.handle(&mut conn, frame).await {
            Reply::Send(b) => b,
            Reply::Nothing => continue,
            Reply::SendAndClose(b) => {
                let _ = stream.write_all(&b).await;
                let _ = stream.flush().await;
                return CloseReason::Authentication;
            }
            Reply::Close(reason) => {
                warn_closed(broker, peer, "protocol", &reason);
                return CloseReason::Protocol;
            }
        };
        if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
            return CloseReason::Client;
        }
    }
}
