//! A real MQTT broker for a test: the distribution's `mosquitto`, started on free ports with a config
//! generated in a temporary directory (persistence on, so persistent sessions survive a restart), plus a
//! plain rumqttc client to publish and subscribe with.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
use tempfile::TempDir;

use super::certs::Ca;
use super::{free_port, tempdir, wait_for_blocking, DEADLINE};

/// The broker binary: in PATH, or where Debian puts it.
pub fn binary() -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join("mosquitto"))
        .find(|p| p.is_file())
}

/// What the broker requires.
#[derive(Default)]
pub struct Options {
    /// A user and password; anonymous clients are refused then.
    pub user: Option<(String, String)>,
    /// A TLS listener too, with a certificate from this CA (for 127.0.0.1 and localhost), that requires
    /// client certificates from the same CA.
    pub tls: Option<Ca>,
}

/// A running (or stopped) mosquitto.
pub struct Mosquitto {
    pub dir: TempDir,
    /// The plain listener's port.
    pub port: u16,
    /// The TLS listener's port (0 without TLS).
    pub tls_port: u16,
    config: PathBuf,
    child: Option<Child>,
}

impl Mosquitto {
    /// An anonymous broker on a plain listener.
    pub fn start() -> Mosquitto {
        Self::start_with(Options::default())
    }

    pub fn start_with(options: Options) -> Mosquitto {
        let dir = tempdir();
        let port = free_port();
        let tls_port = if options.tls.is_some() {
            free_port()
        } else {
            0
        };
        let mut conf = format!(
            "user root\npersistence true\npersistence_location {}/\nmax_queued_messages 0\nmax_inflight_messages 100\nqueue_qos0_messages false\nlog_dest stderr\nlog_type all\nlistener {port} 127.0.0.1\n",
            dir.path().display()
        );
        match &options.user {
            Some((user, password)) => {
                let file = dir.path().join("passwd");
                std::fs::write(&file, "").unwrap();
                let ok = Command::new("mosquitto_passwd")
                    .args(["-b", &file.display().to_string(), user, password])
                    .status()
                    .expect("mosquitto_passwd");
                assert!(ok.success());
                conf.push_str(&format!(
                    "allow_anonymous false\npassword_file {}\n",
                    file.display()
                ));
            }
            None => conf.push_str("allow_anonymous true\n"),
        }
        if let Some(ca) = &options.tls {
            let (cert, key) = ca.leaf(&["127.0.0.1", "localhost"]);
            let write = |name: &str, text: &str| {
                let p = dir.path().join(name);
                std::fs::write(&p, text).unwrap();
                p.display().to_string()
            };
            conf.push_str(&format!(
                "listener {tls_port} 127.0.0.1\nrequire_certificate true\ncafile {}\ncertfile {}\nkeyfile {}\n",
                write("ca.pem", &ca.pem()),
                write("server.pem", &cert),
                write("server.key", &key)
            ));
        }
        let config = dir.path().join("mosquitto.conf");
        std::fs::write(&config, conf).unwrap();
        let mut broker = Mosquitto {
            dir,
            port,
            tls_port,
            config,
            child: None,
        };
        broker.launch();
        broker
    }

    fn launch(&mut self) {
        let bin = binary().expect("mosquitto is installed (scripts/install-test-deps)");
        let log = std::fs::File::create(self.dir.path().join("mosquitto.log")).unwrap();
        let child = Command::new(bin)
            .arg("-c")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn mosquitto");
        self.child = Some(child);
        let port = self.port;
        wait_for_blocking("mosquitto to listen", DEADLINE, || {
            TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ())
        });
    }

    /// `tcp://127.0.0.1:port`.
    pub fn uri(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// `ssl://127.0.0.1:tls_port`.
    pub fn tls_uri(&self) -> String {
        format!("ssl://127.0.0.1:{}", self.tls_port)
    }

    /// Stops the broker gracefully (it saves its persistent sessions).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            wait_for_blocking("mosquitto to exit", DEADLINE, || {
                child.try_wait().ok().flatten().map(|_| ())
            });
        }
    }

    /// Starts it again on the same ports, with what it saved.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }

    /// The broker's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("mosquitto.log")).unwrap_or_default()
    }

    /// A client of the plain listener (not yet connected: drive it through its connection).
    pub fn client(&self, id: &str) -> (Client, rumqttc::Connection) {
        let mut o = MqttOptions::new(id, "127.0.0.1", self.port);
        o.set_keep_alive(Duration::from_secs(30));
        o.set_max_packet_size(1 << 20, 1 << 20);
        if let Some(c) = self.credentials() {
            o.set_credentials(c.0, c.1);
        }
        Client::new(o, 1000)
    }

    fn credentials(&self) -> Option<(String, String)> {
        let text = std::fs::read_to_string(self.dir.path().join("credentials")).ok()?;
        let (u, p) = text.split_once('\n')?;
        Some((u.to_string(), p.to_string()))
    }

    /// Lets [`Mosquitto::client`] log in as this user.
    pub fn use_credentials(&self, user: &str, password: &str) {
        std::fs::write(
            self.dir.path().join("credentials"),
            format!("{user}\n{password}"),
        )
        .unwrap();
    }

    /// Publishes `payloads` to `topic` at `qos` and waits until the broker acknowledged them all.
    pub fn publish(&self, topic: &str, qos: QoS, payloads: impl IntoIterator<Item = String>) {
        let (client, mut connection) = self.client(&format!("pub-{}", uuid::Uuid::new_v4()));
        let mut count = 0usize;
        let payloads: Vec<String> = payloads.into_iter().collect();
        let sender = std::thread::spawn({
            let client = client.clone();
            let topic = topic.to_string();
            let payloads = payloads.clone();
            move || {
                for p in payloads {
                    client.publish(topic.clone(), qos, false, p).unwrap();
                }
            }
        });
        let end = std::time::Instant::now() + DEADLINE;
        for event in connection.iter() {
            assert!(std::time::Instant::now() < end, "publishing timed out");
            match event.expect("publisher connection") {
                Event::Outgoing(rumqttc::Outgoing::Publish(_)) if qos == QoS::AtMostOnce => {
                    count += 1
                }
                Event::Incoming(Packet::PubAck(_) | Packet::PubComp(_)) => count += 1,
                _ => {}
            }
            if count == payloads.len() {
                break;
            }
        }
        sender.join().unwrap();
        let _ = client.disconnect();
        // One more turn sends the DISCONNECT.
        let _ = connection.recv_timeout(Duration::from_millis(200));
    }

    /// Subscribes to `filter` and collects what arrives, as (topic, payload), on a thread.
    pub fn subscribe(&self, filter: &str, qos: QoS) -> Subscriber {
        self.subscribe_as(None, filter, qos)
    }

    /// [`Mosquitto::subscribe`] with a persistent session under `id` when given: it reconnects after a
    /// broker restart and gets what was queued for it meanwhile.
    pub fn subscribe_as(&self, id: Option<&str>, filter: &str, qos: QoS) -> Subscriber {
        let (client, mut connection) = match id {
            Some(id) => {
                let mut o = MqttOptions::new(id, "127.0.0.1", self.port);
                o.set_clean_session(false);
                Client::new(o, 1000)
            }
            None => self.client(&format!("sub-{}", uuid::Uuid::new_v4())),
        };
        let persistent = id.is_some();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        client.subscribe(filter, qos).unwrap();
        let thread = std::thread::spawn(move || {
            for event in connection.iter() {
                match event {
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        let _ = ready_tx.send(());
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let payload = String::from_utf8_lossy(&p.payload).into_owned();
                        if tx.send((p.topic, payload)).is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    // Reconnected by the next turn; a pause keeps a stopped broker from being hammered.
                    Err(_) if persistent && !stopped.load(std::sync::atomic::Ordering::SeqCst) => {
                        std::thread::sleep(Duration::from_millis(100))
                    }
                    Err(_) => return,
                }
            }
        });
        ready_rx
            .recv_timeout(DEADLINE)
            .expect("the subscription is acknowledged");
        Subscriber {
            client,
            stop,
            rx,
            got: Vec::new(),
            thread: Some(thread),
        }
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A subscription of the test.
pub struct Subscriber {
    client: Client,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    rx: std::sync::mpsc::Receiver<(String, String)>,
    /// Everything received so far.
    pub got: Vec<(String, String)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Subscriber {
    /// Waits until at least `n` messages arrived and returns them all.
    pub fn wait_for(&mut self, n: usize) -> &[(String, String)] {
        let end = std::time::Instant::now() + DEADLINE * 2;
        while self.got.len() < n {
            let left = end.saturating_duration_since(std::time::Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) => self.got.push(m),
                Err(_) => panic!(
                    "timed out with {} of {n} messages: {:?}",
                    self.got.len(),
                    self.got.iter().take(5).collect::<Vec<_>>()
                ),
            }
        }
        &self.got
    }

    /// Waits until every payload of `expected` arrived (repeats allowed; nothing else may come).
    pub fn wait_for_all(&mut self, expected: &[String]) {
        let want: std::collections::BTreeSet<&String> = expected.iter().collect();
        // The messages are taken in once each as they come (a set rebuilt per message was quadratic).
        let mut got: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let mut read = 0;
        loop {
            for (_, p) in &self.got[read..] {
                assert!(want.contains(p), "unexpected message: {p:?}");
                got.insert(p.clone());
            }
            read = self.got.len();
            if got.len() == want.len() {
                return;
            }
            self.wait_for(self.got.len() + 1);
        }
    }

    /// The payloads received so far, in order.
    pub fn payloads(&self) -> Vec<String> {
        self.got.iter().map(|(_, p)| p.clone()).collect()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.client.disconnect();
        drop(self.thread.take());
    }
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}
