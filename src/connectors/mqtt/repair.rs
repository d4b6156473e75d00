//! Completes the QoS 2 exchanges a broker resumes with PUBREL when a persistent session reconnects.
//!
//! When a connection drops after this client sent PUBREC but before the broker's PUBREL arrived, the
//! broker sends that PUBREL again on the next connection. rumqttc no longer knows the packet id (its
//! state does not outlive a connection, nor the process) and drops the connection as an "unsolicited
//! pubrel", again on every reconnect. This opens one short connection of its own with the same client id
//! and session, answers every PUBREL with PUBCOMP, leaves everything else for the next connection (the
//! broker sends unacknowledged messages again), and disconnects.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use super::client::{Server, Settings};

/// How long to wait for more PUBRELs after the last packet.
const QUIET: Duration = Duration::from_millis(500);
/// The longest a repair takes.
const LIMIT: Duration = Duration::from_secs(10);
const MAX_PACKET: usize = 256 * 1024 * 1024;

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

fn open(
    settings: &Settings,
    server: &Server,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<Box<dyn Stream>, String> {
    let addr = (server.host.as_str(), server.port)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| format!("{} has no address", server.host))?;
    let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(settings.connect_timeout))
        .map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(QUIET))
        .map_err(|e| e.to_string())?;
    match tls {
        Some(config) if server.tls => {
            let name = rustls_pki_types::ServerName::try_from(server.host.clone())
                .map_err(|e| e.to_string())?;
            let conn =
                rustls::ClientConnection::new(config.clone(), name).map_err(|e| e.to_string())?;
            Ok(Box::new(rustls::StreamOwned::new(conn, tcp)))
        }
        _ => Ok(Box::new(tcp)),
    }
}

/// What the repair connection reads.
enum Incoming {
    ConnAck { accepted: bool },
    PubRel(u16),
    Other,
}

fn connect_packet(settings: &Settings, buf: &mut BytesMut) -> Result<(), String> {
    let keep_alive = settings.keep_alive.as_secs().min(u64::from(u16::MAX)) as u16;
    if settings.v5 {
        use rumqttc::v5::mqttbytes::v5::{Connect, ConnectProperties, Login, Packet};
        let mut properties = ConnectProperties::new();
        // Without an expiry interval an MQTT 5 session would end with this connection.
        properties.session_expiry_interval = Some(u32::MAX);
        let connect = Connect {
            keep_alive,
            client_id: settings.client_id.clone(),
            clean_start: false,
            properties: Some(properties),
        };
        let login = settings
            .credentials
            .as_ref()
            .map(|(u, p)| Login::new(u.clone(), p.clone()));
        Packet::Connect(connect, None, login)
            .write(buf, None)
            .map_err(|e| e.to_string())?;
    } else {
        use rumqttc::mqttbytes::v4::{Connect, Login, Packet};
        let mut connect = Connect::new(settings.client_id.clone());
        connect.keep_alive = keep_alive;
        connect.clean_session = false;
        connect.login = settings
            .credentials
            .as_ref()
            .map(|(u, p)| Login::new(u.clone(), p.clone()));
        Packet::Connect(connect)
            .write(buf, MAX_PACKET)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn read_packet(settings: &Settings, buf: &mut BytesMut) -> Option<Result<Incoming, String>> {
    if settings.v5 {
        use rumqttc::v5::mqttbytes::v5::{ConnectReturnCode, Packet};
        match Packet::read(buf, None) {
            Ok(Packet::ConnAck(c)) => Some(Ok(Incoming::ConnAck {
                accepted: c.code == ConnectReturnCode::Success,
            })),
            Ok(Packet::PubRel(r)) => Some(Ok(Incoming::PubRel(r.pkid))),
            Ok(_) => Some(Ok(Incoming::Other)),
            Err(rumqttc::v5::mqttbytes::Error::InsufficientBytes(_)) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    } else {
        use rumqttc::mqttbytes::v4::Packet;
        match Packet::read(buf, MAX_PACKET) {
            Ok(Packet::ConnAck(c)) => Some(Ok(Incoming::ConnAck {
                accepted: c.code == rumqttc::ConnectReturnCode::Success,
            })),
            Ok(Packet::PubRel(r)) => Some(Ok(Incoming::PubRel(r.pkid))),
            Ok(_) => Some(Ok(Incoming::Other)),
            Err(rumqttc::mqttbytes::Error::InsufficientBytes(_)) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }
}

fn pubcomp_packet(settings: &Settings, pkid: u16, buf: &mut BytesMut) -> Result<(), String> {
    if settings.v5 {
        use rumqttc::v5::mqttbytes::v5::{Packet, PubComp};
        Packet::PubComp(PubComp::new(pkid, None))
            .write(buf, None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    } else {
        use rumqttc::mqttbytes::v4::{Packet, PubComp};
        Packet::PubComp(PubComp::new(pkid))
            .write(buf, MAX_PACKET)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

fn disconnect_packet(settings: &Settings, buf: &mut BytesMut) {
    if settings.v5 {
        use rumqttc::v5::mqttbytes::v5::{Disconnect, DisconnectReasonCode, Packet};
        let _ = Packet::Disconnect(Disconnect::new(DisconnectReasonCode::NormalDisconnection))
            .write(buf, None);
    } else {
        use rumqttc::mqttbytes::v4::Packet;
        let _ = Packet::Disconnect.write(buf, MAX_PACKET);
    }
}

/// Connects to `server` as the task's client, answers the PUBRELs the broker resends with PUBCOMP and
/// disconnects. Returns the packet ids released.
pub fn complete_releases(
    settings: &Settings,
    server: &Server,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<Vec<u16>, String> {
    let mut stream = open(settings, server, tls)?;
    let mut out = BytesMut::new();
    connect_packet(settings, &mut out)?;
    stream.write_all(&out).map_err(|e| e.to_string())?;
    stream.flush().map_err(|e| e.to_string())?;
    let mut input = BytesMut::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut released = Vec::new();
    let start = Instant::now();
    while start.elapsed() < LIMIT {
        match read_packet(settings, &mut input) {
            Some(Ok(Incoming::ConnAck { accepted: false })) => {
                return Err("the broker refused the connection".into())
            }
            Some(Ok(Incoming::PubRel(pkid))) => {
                out.clear();
                pubcomp_packet(settings, pkid, &mut out)?;
                stream.write_all(&out).map_err(|e| e.to_string())?;
                stream.flush().map_err(|e| e.to_string())?;
                released.push(pkid);
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => input.extend_from_slice(&chunk[..n]),
                // Quiet for a while: every PUBREL the broker had is answered.
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    break
                }
                Err(e) => return Err(e.to_string()),
            },
        }
    }
    out.clear();
    disconnect_packet(settings, &mut out);
    let _ = stream.write_all(&out);
    let _ = stream.flush();
    Ok(released)
}
