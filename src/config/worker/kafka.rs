//! The Kafka listener's worker keys: `kafka.listeners`, `kafka.advertised.listeners`, the SSL and SASL
//! settings, and the broker-like topic defaults (`auto.create.topics.enable`, `num.partitions`,
//! `message.max.bytes`).

use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, ParsedConfig, Validator,
};

/// `kafka.listeners`.
pub const KAFKA_LISTENERS: &str = "kafka.listeners";
/// `kafka.advertised.listeners`.
pub const KAFKA_ADVERTISED_LISTENERS: &str = "kafka.advertised.listeners";
/// `kafka.listeners.allow.plaintext.remote`.
pub const KAFKA_ALLOW_PLAINTEXT_REMOTE: &str = "kafka.listeners.allow.plaintext.remote";
/// The prefix of the Kafka listener's TLS keys (the REST listener's `ssl.*` keys after it).
pub const KAFKA_SSL_PREFIX: &str = "kafka.listeners.ssl.";
/// `kafka.sasl.enabled.mechanisms`.
pub const KAFKA_SASL_MECHANISMS: &str = "kafka.sasl.enabled.mechanisms";
/// `kafka.sasl.credentials.file`.
pub const KAFKA_SASL_CREDENTIALS_FILE: &str = "kafka.sasl.credentials.file";
/// `auto.create.topics.enable`.
pub const AUTO_CREATE_TOPICS_ENABLE: &str = "auto.create.topics.enable";
/// `num.partitions`.
pub const NUM_PARTITIONS: &str = "num.partitions";
/// `message.max.bytes`.
pub const MESSAGE_MAX_BYTES: &str = "message.max.bytes";
/// `kafka.node.id`.
pub const KAFKA_NODE_ID: &str = "kafka.node.id";

/// The SASL mechanisms a SASL listener accepts unless told otherwise.
const DEFAULT_MECHANISMS: &str = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512";
/// The mechanisms liteconnect knows.
const KNOWN_MECHANISMS: &[&str] = &["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

/// A Kafka listener's security protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `PLAINTEXT`.
    Plaintext,
    /// `SSL`.
    Ssl,
    /// `SASL_PLAINTEXT`.
    SaslPlaintext,
    /// `SASL_SSL`.
    SaslSsl,
}

impl Protocol {
    /// Kafka's name of the protocol.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Plaintext => "PLAINTEXT",
            Protocol::Ssl => "SSL",
            Protocol::SaslPlaintext => "SASL_PLAINTEXT",
            Protocol::SaslSsl => "SASL_SSL",
        }
    }

    /// Whether connections are TLS.
    pub fn tls(self) -> bool {
        matches!(self, Protocol::Ssl | Protocol::SaslSsl)
    }

    /// Whether clients must authenticate with SASL.
    pub fn sasl(self) -> bool {
        matches!(self, Protocol::SaslPlaintext | Protocol::SaslSsl)
    }
}

/// One Kafka listener, `PROTOCOL://host:port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaListener {
    /// The security protocol.
    pub protocol: Protocol,
    /// Host; empty means all interfaces.
    pub host: String,
    /// Port; 0 picks a free one.
    pub port: u16,
}

impl KafkaListener {
    /// Parses `PROTOCOL://host:port` for `key`.
    ///
    /// # Errors
    /// A message naming the key and the value.
    pub fn parse(key: &str, s: &str) -> Result<KafkaListener, String> {
        let bad = |why: &str| crate::config::invalid_value(key, s, why);
        let (scheme, rest) = s.trim().split_once("://").ok_or_else(|| {
            bad("Listener doesn't have the right format (protocol://hostname:port).")
        })?;
        let protocol = match scheme.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Protocol::Plaintext,
            "SSL" => Protocol::Ssl,
            "SASL_PLAINTEXT" => Protocol::SaslPlaintext,
            "SASL_SSL" => Protocol::SaslSsl,
            _ => {
                return Err(bad(
                    "the protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.",
                ))
            }
        };
        let (host, port) = rest.rsplit_once(':').ok_or_else(|| {
            bad("Listener doesn't have the right format (protocol://hostname:port).")
        })?;
        let port: u16 = port
            .parse()
            .map_err(|_| bad("the port is not a number from 0 to 65535."))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Ok(KafkaListener {
            protocol,
            host,
            port,
        })
    }

    /// The address to bind.
    pub fn bind_address(&self) -> String {
        super::bind_address(&self.host, self.port)
    }

    /// Whether the listener only accepts connections from this machine.
    pub fn is_loopback(&self) -> bool {
        let host = self.host.as_str();
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// The Kafka listener's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaSettings {
    /// `kafka.listeners` (empty: no Kafka listener).
    pub listeners: Vec<KafkaListener>,
    /// `kafka.advertised.listeners` (empty: the bound addresses).
    pub advertised: Vec<KafkaListener>,
    /// `kafka.sasl.enabled.mechanisms`.
    pub sasl_mechanisms: Vec<String>,
    /// `kafka.sasl.credentials.file`.
    pub sasl_credentials_file: Option<std::path::PathBuf>,
    /// `auto.create.topics.enable`.
    pub auto_create_topics: bool,
    /// `num.partitions`.
    pub num_partitions: i32,
    /// `message.max.bytes`.
    pub message_max_bytes: i32,
    /// `kafka.node.id`.
    pub node_id: i32,
}

fn key(name: &str, t: ConfigType, default: DefaultValue, doc: &str) -> ConfigKey {
    ConfigKey::new(name, t, default, Importance::Medium, doc)
}

fn value(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_owned())
}

/// Defines the Kafka listener's keys.
pub(super) fn kafka_keys(def: ConfigDef) -> ConfigDef {
    use ConfigType::{Boolean, Int, List, String};
    def.define(key(KAFKA_LISTENERS, List, value(""), "Kafka-protocol listeners, `PROTOCOL://host:port` with PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; empty serves none."))
        .define(key(KAFKA_ADVERTISED_LISTENERS, List, value(""), "The addresses given to Kafka clients in Metadata answers, one per listener; the bound ones when empty."))
        .define(key(KAFKA_ALLOW_PLAINTEXT_REMOTE, Boolean, value("false"), "Allows a PLAINTEXT Kafka listener on an address other than loopback."))
        .define(key(KAFKA_SASL_MECHANISMS, List, value(DEFAULT_MECHANISMS), "The SASL mechanisms of SASL_PLAINTEXT and SASL_SSL listeners."))
        .define(key(KAFKA_SASL_CREDENTIALS_FILE, String, DefaultValue::Null, "The users SASL listeners accept."))
        .define(key(AUTO_CREATE_TOPICS_ENABLE, Boolean, value("true"), "Whether Metadata and Produce requests create the topics they name."))
        .define(key(NUM_PARTITIONS, Int, value("1"), "The partitions of a topic created automatically.").validator(Validator::AtLeast(1.0)))
        .define(key(MESSAGE_MAX_BYTES, Int, value("1048588"), "The largest record batch a Kafka client may produce, in bytes.").validator(Validator::AtLeast(0.0)))
        .define(key(KAFKA_NODE_ID, Int, value("1"), "The node id the Kafka listener gives itself.").validator(Validator::AtLeast(0.0)))
}

/// Reads and checks the Kafka listener's settings.
///
/// # Errors
/// A message naming the key that is wrong.
pub(super) fn parse(parsed: &ParsedConfig) -> Result<KafkaSettings, String> {
    let list = |k: &str| -> Result<Vec<KafkaListener>, String> {
        parsed
            .get_list(k)
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| KafkaListener::parse(k, s))
            .collect()
    };
    let listeners = list(KAFKA_LISTENERS)?;
    let advertised = list(KAFKA_ADVERTISED_LISTENERS)?;
    if !advertised.is_empty() && advertised.len() != listeners.len() {
        return Err(format!("Invalid value for configuration {KAFKA_ADVERTISED_LISTENERS}: it must name one address per entry of {KAFKA_LISTENERS}."));
    }
    let allow_remote = parsed
        .get_bool(KAFKA_ALLOW_PLAINTEXT_REMOTE)
        .unwrap_or(false);
    if let Some(l) = listeners
        .iter()
        .find(|l| l.protocol == Protocol::Plaintext && !l.is_loopback())
    {
        if !allow_remote {
            return Err(crate::config::invalid_value(
                KAFKA_LISTENERS,
                format_args!("{}://{}", l.protocol.name(), l.bind_address()),
                format_args!("a PLAINTEXT listener beyond loopback lets anyone on the network read and write every topic; use SSL or SASL_SSL, or set {KAFKA_ALLOW_PLAINTEXT_REMOTE}=true."),
            ));
        }
    }
    let sasl_mechanisms: Vec<String> = parsed
        .get_list(KAFKA_SASL_MECHANISMS)
        .iter()
        .map(|m| m.trim().to_ascii_uppercase())
        .filter(|m| !m.is_empty())
        .collect();
    if let Some(m) = sasl_mechanisms
        .iter()
        .find(|m| !KNOWN_MECHANISMS.contains(&m.as_str()))
    {
        return Err(crate::config::invalid_value(
            KAFKA_SASL_MECHANISMS,
            m,
            "the mechanisms are PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.",
        ));
    }
    let sasl_credentials_file = parsed
        .get_string(KAFKA_SASL_CREDENTIALS_FILE)
        .filter(|s| !s.trim().is_empty())
        .map(std::path::PathBuf::from);
    if listeners.iter().any(|l| l.protocol.sasl()) {
        if sasl_credentials_file.is_none() {
            return Err(format!("Missing required configuration {KAFKA_SASL_CREDENTIALS_FILE}: a SASL listener in {KAFKA_LISTENERS} needs a credentials file."));
        }
        if sasl_mechanisms.is_empty() {
            return Err(format!("Invalid value for configuration {KAFKA_SASL_MECHANISMS}: a SASL listener needs at least one mechanism."));
        }
    }
    Ok(KafkaSettings {
        listeners,
        advertised,
        sasl_mechanisms,
        sasl_credentials_file,
        auto_create_topics: parsed.get_bool(AUTO_CREATE_TOPICS_ENABLE).unwrap_or(true),
        num_partitions: parsed.get_int(NUM_PARTITIONS).unwrap_or(1).max(1),
        message_max_bytes: parsed
            .get_int(MESSAGE_MAX_BYTES)
            .unwrap_or(1_048_588)
            .max(0),
        node_id: parsed.get_int(KAFKA_NODE_ID).unwrap_or(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::worker::WorkerConfig;
    use crate::test_support::props;

    fn error(pairs: &[(&str, &str)]) -> String {
        WorkerConfig::from_props(props(pairs))
            .unwrap_err()
            .to_string()
    }

    #[cfg(not(feature = "kafka-listener"))]
    #[test]
    fn without_the_listener_its_default_is_left_out_and_the_key_refused() {
        assert!(WorkerConfig::defaults().kafka.listeners.is_empty());
        assert_eq!(
            error(&[(KAFKA_LISTENERS, "PLAINTEXT://127.0.0.1:9092")]),
            "The configuration kafka.listeners needs the Kafka-protocol listener, but this build of liteconnect was made without the `kafka-listener` feature: remove kafka.listeners or build with `--features kafka-listener`."
        );
        assert!(WorkerConfig::from_props(props(&[(KAFKA_LISTENERS, "")])).is_ok());
    }

    #[cfg(feature = "kafka-listener")]
    #[test]
    fn kafka_listener_defaults_and_checks() {
        let c = WorkerConfig::defaults();
        assert_eq!(
            c.kafka.listeners,
            vec![KafkaListener {
                protocol: Protocol::Plaintext,
                host: "127.0.0.1".into(),
                port: 9092
            }]
        );
        assert!(c.kafka.auto_create_topics);
        assert_eq!(c.kafka.num_partitions, 1);
        assert_eq!(c.kafka.message_max_bytes, 1_048_588);
        let none = WorkerConfig::from_props(props(&[])).unwrap();
        assert!(none.kafka.listeners.is_empty());
        let e = error(&[(KAFKA_LISTENERS, "PLAINTEXT://0.0.0.0:9092")]);
        assert!(
            e.contains(KAFKA_ALLOW_PLAINTEXT_REMOTE) && e.contains(KAFKA_LISTENERS),
            "{e}"
        );
        let ok = WorkerConfig::from_props(props(&[
            (KAFKA_LISTENERS, "PLAINTEXT://0.0.0.0:9092"),
            (KAFKA_ALLOW_PLAINTEXT_REMOTE, "true"),
        ]))
        .unwrap();
        assert_eq!(ok.kafka.listeners[0].bind_address(), "0.0.0.0:9092");
        let e = error(&[(KAFKA_LISTENERS, "HTTP://127.0.0.1:9092")]);
        assert!(e.contains(KAFKA_LISTENERS), "{e}");
        let e = error(&[(KAFKA_LISTENERS, "SASL_SSL://127.0.0.1:9093")]);
        assert!(e.contains(KAFKA_SASL_CREDENTIALS_FILE), "{e}");
        let e = error(&[(KAFKA_SASL_MECHANISMS, "GSSAPI")]);
        assert!(e.contains(KAFKA_SASL_MECHANISMS), "{e}");
        let e = error(&[(NUM_PARTITIONS, "0")]);
        assert!(e.contains(NUM_PARTITIONS), "{e}");
        let e = error(&[(MESSAGE_MAX_BYTES, "big")]);
        assert!(e.contains(MESSAGE_MAX_BYTES), "{e}");
        let e = error(&[
            (KAFKA_LISTENERS, "PLAINTEXT://127.0.0.1:9092"),
            (
                KAFKA_ADVERTISED_LISTENERS,
                "PLAINTEXT://a:1,PLAINTEXT://b:2",
            ),
        ]);
        assert!(e.contains(KAFKA_ADVERTISED_LISTENERS), "{e}");
    }
}
