//! The MQTT scenario: how fast the MQTT source drains messages queued for its persistent session into the
//! log, at QoS 0 and 1, against a bare rumqttc subscriber draining the same queue (auto-acknowledging,
//! storing nothing) — both against one mosquitto started here.
//!
//! Each measurement: subscribe with a persistent session, go offline, publish the messages (the broker
//! queues them), come back, and time until the last one is received (bare client) or stored (liteconnect).

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Outgoing, Packet, QoS};
use serde_json::json;

use crate::report::{fmt_num, median, Row};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings};

const TOPIC: &str = "bench/data";
const PAYLOAD_BYTES: usize = 100;

/// A mosquitto with unbounded queues, on a free port.
struct Broker {
    child: Child,
    port: u16,
    _dir: TempDir,
}

impl Broker {
    fn start(settings: &Settings) -> Res<Broker> {
        let bin = ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"]
            .iter()
            .map(PathBuf::from)
            .chain(std::env::var_os("PATH").into_iter().flat_map(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join("mosquitto"))
                    .collect::<Vec<_>>()
            }))
            .find(|p| p.is_file())
            .ok_or("mosquitto is not installed (scripts/install-test-deps installs it)")?;
        let dir = TempDir::new(settings, "mosquitto")?;
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let conf = dir.path().join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!("user root\nlistener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\nmax_queued_bytes 0\nqueue_qos0_messages true\nmax_inflight_messages 1000\n"),
        )?;
        let child = Command::new(bin)
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err("mosquitto did not start listening".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Broker {
            child,
            port,
            _dir: dir,
        })
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client(port: u16, id: &str, clean: bool) -> (Client, rumqttc::Connection) {
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_clean_session(clean)
        .set_keep_alive(Duration::from_secs(60));
    Client::new(o, 10_000)
}

/// Publishes `n` messages at `qos`, then one QoS 1 message and waits for the PUBACKs: the broker has
/// queued them all by then.
fn publish(port: u16, n: usize, qos: QoS) -> Res<()> {
    let (client, mut conn) = client(port, &format!("bench-pub-{}", uuid::Uuid::new_v4()), true);
    let sender = std::thread::spawn(move || {
        let payload = vec![b'x'; PAYLOAD_BYTES];
        for _ in 0..n {
            client.publish(TOPIC, qos, false, payload.clone())?;
        }
        client.publish(TOPIC, QoS::AtLeastOnce, false, payload)?;
        Ok::<Client, rumqttc::ClientError>(client)
    });
    let wanted = if qos == QoS::AtMostOnce { 1 } else { n + 1 };
    let mut acks = 0;
    for event in conn.iter() {
        if let Event::Incoming(Packet::PubAck(_)) = event? {
            acks += 1;
            if acks == wanted {
                break;
            }
        }
    }
    let client = sender.join().map_err(|_| "the publisher panicked")??;
    client.disconnect()?;
    let _ = conn.recv_timeout(Duration::from_millis(100));
    Ok(())
}

/// Turns `conn` until `done` says so.
fn drive(conn: &mut rumqttc::Connection, mut done: impl FnMut(&Event) -> bool) -> Res<()> {
    for event in conn.iter() {
        if done(&event?) {
            return Ok(());
        }
    }
    Err("the MQTT connection ended".into())
}

/// The bare client: subscribes persistently, goes offline, has `n` messages (and the barrier) queued,
/// comes back and returns the messages a second it receives them at.
fn baseline(port: u16, n: usize, qos: QoS) -> Res<f64> {
    let id = format!("bench-bare-{}", uuid::Uuid::new_v4());
    let (c, mut conn) = client(port, &id, false);
    c.subscribe(TOPIC, qos)?;
    drive(&mut conn, |e| {
        matches!(e, Event::Incoming(Packet::SubAck(_)))
    })?;
    c.disconnect()?;
    let _ = drive(&mut conn, |e| {
        matches!(e, Event::Outgoing(Outgoing::Disconnect))
    });
    publish(port, n, qos)?;
    let (c, mut conn) = client(port, &id, false);
    let started = Instant::now();
    let mut got = 0;
    drive(&mut conn, |e| {
        if let Event::Incoming(Packet::Publish(_)) = e {
            got += 1;
        }
        got == n + 1
    })?;
    let rate = got as f64 / started.elapsed().as_secs_f64();
    c.disconnect()?;
    Ok(rate)
}

/// Publishes one QoS 1 message and waits for its PUBACK.
fn probe(port: u16) -> Res<()> {
    let (c, mut conn) = client(port, &format!("bench-probe-{}", uuid::Uuid::new_v4()), true);
    c.publish(TOPIC, QoS::AtLeastOnce, false, b"probe".to_vec())?;
    drive(&mut conn, |e| {
        matches!(e, Event::Incoming(Packet::PubAck(_)))
    })?;
    c.disconnect()?;
    let _ = conn.recv_timeout(Duration::from_millis(50));
    Ok(())
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Res<T> + Send + 'static) -> Res<T> {
    tokio::task::spawn_blocking(f).await?
}

/// The records in the local topic (partition 0).
pub(crate) async fn stored(w: &Worker, topic: &str) -> Res<i64> {
    let (s, body) = w
        .api
        .get(&format!("/topics/{topic}/partitions/0/offsets"))
        .await?;
    Ok(if s == 200 {
        body["end_offset"].as_i64().unwrap_or(0)
    } else {
        0
    })
}

async fn wait_state(w: &Worker, name: &str, state: &'static str) -> Res<()> {
    w.wait_for(
        &format!("{name} to be {state}"),
        Duration::from_millis(20),
        || async {
            let (_, st) = w.api.get(&format!("/connectors/{name}/status")).await?;
            Ok(st["connector"]["state"] == state)
        },
    )
    .await
}

/// liteconnect: the MQTT source subscribes persistently, is stopped, has `n` messages queued, is resumed;
/// returns the records a second it stores them at.
async fn source_rate(s: &Settings, port: u16, n: usize, qos: QoS) -> Res<f64> {
    let dir = TempDir::new(s, "mqtt")?;
    let db = dir.path().join("liteconnect.db");
    let w = Worker::spawn(s, dir.path(), &db, &[]).await?;
    w.wait_healthy().await?;
    let name = format!("mqtt{}", qos as u8);
    w.create(
        &name,
        json!({"connector.class": "MqttSource", "tasks.max": "1", "kafka.topic": name,
               "mqtt.server.uri": format!("tcp://127.0.0.1:{port}"), "mqtt.topics": TOPIC,
               "mqtt.qos": (qos as u8).to_string(), "mqtt.clean.session.enabled": "false",
               "mqtt.client.id": format!("bench-{}", uuid::Uuid::new_v4())}),
    )
    .await?;
    // Subscribed once a probe is stored.
    w.wait_for(
        "the source to subscribe",
        Duration::from_millis(200),
        || async {
            blocking(move || probe(port)).await?;
            Ok(stored(&w, &name).await? > 0)
        },
    )
    .await?;
    w.expect(
        reqwest::Method::PUT,
        &format!("/connectors/{name}/stop"),
        204,
    )
    .await?;
    wait_state(&w, &name, "STOPPED").await?;
    let before = stored(&w, &name).await?;
    blocking(move || publish(port, n, qos)).await?;
    let started = Instant::now();
    w.expect(
        reqwest::Method::PUT,
        &format!("/connectors/{name}/resume"),
        202,
    )
    .await?;
    let want = before + n as i64 + 1;
    w.wait_for(
        "the source to store the queue",
        Duration::from_millis(5),
        || async { Ok(stored(&w, &name).await? >= want) },
    )
    .await?;
    let rate = (n + 1) as f64 / started.elapsed().as_secs_f64();
    w.stop()?;
    Ok(rate)
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let broker = Broker::start(&s)?;
    let n = if s.lines >= 1_000_000 {
        200_000
    } else {
        20_000
    };
    for qos in [QoS::AtMostOnce, QoS::AtLeastOnce] {
        let (mut ours, mut bare) = (Vec::new(), Vec::new());
        for i in 0..s.runs {
            let port = broker.port;
            bare.push(blocking(move || baseline(port, n, qos)).await?);
            ours.push(source_rate(&s, port, n, qos).await?);
            eprintln!(
                "  mqtt QoS {} run {}/{}: source {} records/s, bare subscriber {} messages/s",
                qos as u8,
                i + 1,
                s.runs,
                fmt_num(ours[i]),
                fmt_num(bare[i])
            );
        }
        rows.push(
            Row::new(
                "mqtt",
                format!(
                    "MQTT source → log, QoS {}, {n} queued messages of {PAYLOAD_BYTES} B",
                    qos as u8
                ),
                "records/s",
                median(ours),
            )
            .baseline("bare rumqttc subscriber", median(bare)),
        );
    }
    Ok(())
}
