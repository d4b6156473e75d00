//! Kafka's Java client security settings, made into librdkafka's.
//!
//! Connector configs written for Kafka Connect name TLS and SASL with the Java client's keys. librdkafka
//! shares many of them (`security.protocol`, `sasl.mechanism`, `sasl.kerberos.service.name`,
//! `ssl.key.password`, `ssl.endpoint.identification.algorithm`, `ssl.keystore.location` for PKCS#12) and
//! names the others differently. Those are translated here, so that such a config works unchanged:
//!
//! | Java client | librdkafka |
//! |---|---|
//! | `sasl.jaas.config` with `PlainLoginModule` or `ScramLoginModule` | `sasl.username`, `sasl.password` |
//! | `ssl.truststore.location` (a PEM file) | `ssl.ca.location` |
//! | `ssl.truststore.certificates` | `ssl.ca.pem` |
//! | `ssl.keystore.location` (a PEM file with key and chain) | `ssl.certificate.location`, `ssl.key.location` |
//! | `ssl.keystore.location` (PKCS#12) | kept, with `ssl.keystore.password` |
//! | `ssl.keystore.certificate.chain`, `ssl.keystore.key` | `ssl.certificate.pem`, `ssl.key.pem` |
//! | `ssl.endpoint.identification.algorithm=` (empty: off) | `none` |
//!
//! librdkafka's own keys win over translated ones. What librdkafka cannot do is refused with a message
//! naming the key: JKS stores, PKCS#12 trust stores, Java classes, and login modules with no librdkafka
//! counterpart. No message repeats a value, since values here are secrets.
//!
//! With TLS on and no CA given, `ssl.ca.location` becomes `probe`. OpenSSL is compiled into the binary, so
//! its built-in CA directory is not the system's; `probe` makes librdkafka look in the usual system places.

use std::collections::BTreeMap;
use std::path::Path;

/// Java-only TLS settings with no librdkafka counterpart: dropped, and logged (the JVM's choices).
const JAVA_ONLY_TLS: &[&str] = &[
    "ssl.enabled.protocols",
    "ssl.keymanager.algorithm",
    "ssl.protocol",
    "ssl.provider",
    "ssl.secure.random.implementation",
    "ssl.trustmanager.algorithm",
    "ssl.truststore.password",
];

/// Java class settings: a class cannot be loaded here, and a config that needs one would not authenticate.
const JAVA_CLASSES: &[&str] = &[
    "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "ssl.engine.factory.class",
];

const PLAIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";
const SCRAM_MODULE: &str = "org.apache.kafka.common.security.scram.ScramLoginModule";
const OAUTH_MODULE: &str = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";
const KERBEROS_MODULE: &str = "com.sun.security.auth.module.Krb5LoginModule";

/// A client setting that cannot be made into librdkafka's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SecurityError {
    /// The client key at fault (without any connector prefix such as `producer.override.`).
    pub key: String,
    /// What is wrong, naming the key.
    pub message: String,
}

fn refuse(key: &str, message: impl Into<String>) -> SecurityError {
    SecurityError {
        key: key.to_string(),
        message: message.into(),
    }
}

/// How the settings are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Files {
    /// Key and trust store files are opened to tell PEM, PKCS#12 and JKS apart (when a task starts).
    Read,
    /// Nothing is opened (validation, which may run on another machine than the worker's).
    Skip,
}

/// Translates the Java client's security settings in `settings` into librdkafka's, in place. Returns the
/// keys that were dropped because they mean nothing to librdkafka.
pub fn translate(
    settings: &mut BTreeMap<String, String>,
    files: Files,
) -> Result<Vec<String>, SecurityError> {
    for key in JAVA_CLASSES {
        if settings.contains_key(*key) {
            return Err(refuse(
                key,
                format!("The setting '{key}' names a Java class, which liteconnect cannot load. librdkafka's built-in SASL mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER) and TLS are configured with sasl.* and ssl.* keys instead."),
            ));
        }
    }
    let mut dropped = Vec::new();
    for key in JAVA_ONLY_TLS {
        if settings.remove(*key).is_some() {
            dropped.push(key.to_string());
        }
    }
    translate_jaas(settings)?;
    translate_truststore(settings, files)?;
    translate_keystore(settings, files)?;
    if settings
        .get("ssl.endpoint.identification.algorithm")
        .is_some_and(|v| v.trim().is_empty())
    {
        settings.insert(
            "ssl.endpoint.identification.algorithm".into(),
            "none".into(),
        );
    }
    let tls = settings
        .get("security.protocol")
        .is_some_and(|p| matches!(p.trim().to_ascii_uppercase().as_str(), "SSL" | "SASL_SSL"));
    let has_ca = ["ssl.ca.location", "ssl.ca.pem", "ssl.ca.certificate.stores"]
        .iter()
        .any(|k| settings.contains_key(*k));
    if tls && !has_ca {
        settings.insert("ssl.ca.location".into(), "probe".into());
    }
    Ok(dropped)
}

/// Inserts `key = value` unless librdkafka's own key is already set.
fn put_default(settings: &mut BTreeMap<String, String>, key: &str, value: String) {
    settings.entry(key.to_string()).or_insert(value);
}

fn translate_jaas(settings: &mut BTreeMap<String, String>) -> Result<(), SecurityError> {
    const KEY: &str = "sasl.jaas.config";
    let Some(text) = settings.remove(KEY) else {
        return Ok(());
    };
    let (module, options) = parse_jaas(&text).map_err(|m| refuse(KEY, format!("{KEY}: {m}")))?;
    match module.as_str() {
        PLAIN_MODULE | SCRAM_MODULE => {
            for (option, target) in [("username", "sasl.username"), ("password", "sasl.password")] {
                let Some(value) = options.get(option) else {
                    return Err(refuse(
                        KEY,
                        format!("{KEY}: {module} needs the option '{option}'"),
                    ));
                };
                put_default(settings, target, value.clone());
            }
            Ok(())
        }
        OAUTH_MODULE => Err(refuse(
            KEY,
            format!("{KEY}: {module} is not translated. For OAUTHBEARER use librdkafka's keys: sasl.oauthbearer.config with enable.sasl.oauthbearer.unsecure.jwt=true for unsecured tokens (OIDC token endpoints need libcurl, which liteconnect is built without)."),
        )),
        KERBEROS_MODULE => Err(refuse(
            KEY,
            format!("{KEY}: {module} (GSSAPI/Kerberos) is not available: liteconnect's librdkafka is built without Cyrus SASL. Use SASL PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or mutual TLS."),
        )),
        other => Err(refuse(
            KEY,
            format!("{KEY}: the login module {other} is not known. liteconnect translates {PLAIN_MODULE} and {SCRAM_MODULE} into sasl.username and sasl.password."),
        )),
    }
}

/// What a key or trust store file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreFormat {
    Pem,
    Pkcs12,
    /// JKS or JCEKS: Java's own formats.
    Java,
}

fn store_format(path: &str) -> std::io::Result<StoreFormat> {
    let bytes = std::fs::read(Path::new(path))?;
    Ok(format_of(&bytes))
}

fn format_of(bytes: &[u8]) -> StoreFormat {
    const JKS: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];
    const JCEKS: [u8; 4] = [0xCE, 0xCE, 0xCE, 0xCE];
    if bytes.starts_with(&JKS) || bytes.starts_with(&JCEKS) {
        StoreFormat::Java
    } else if bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        StoreFormat::Pem
    } else {
        StoreFormat::Pkcs12
    }
}

/// The declared `*.type` (Java's default is JKS), upper-cased; `None` when not given.
fn declared_type(settings: &mut BTreeMap<String, String>, key: &str) -> Option<String> {
    settings
        .remove(key)
        .map(|t| t.trim().to_ascii_uppercase())
        .filter(|t| !t.is_empty())
}

/// The format of the store file at `path` (named by `key`, a `what` store): as declared when that says
/// PEM, else as its bytes say when files are read, else as declared. `None`: cannot be told (nothing is
/// read, or the path still holds a config provider placeholder, which only validation sees).
fn store_format_of(
    key: &str,
    what: &str,
    declared: Option<&str>,
    path: &str,
    files: Files,
) -> Result<Option<StoreFormat>, SecurityError> {
    Ok(match (declared, files) {
        (Some("PEM"), _) => Some(StoreFormat::Pem),
        _ if path.contains("${") => None,
        (_, Files::Read) => Some(store_format(path).map_err(|e| {
            refuse(
                key,
                format!("The {what} store named by {key} cannot be read: {e}"),
            )
        })?),
        (Some("JKS" | "JCEKS"), Files::Skip) => Some(StoreFormat::Java),
        (Some("PKCS12"), Files::Skip) => Some(StoreFormat::Pkcs12),
        (_, Files::Skip) => None,
    })
}

fn translate_truststore(
    settings: &mut BTreeMap<String, String>,
    files: Files,
) -> Result<(), SecurityError> {
    const LOCATION: &str = "ssl.truststore.location";
    const CERTIFICATES: &str = "ssl.truststore.certificates";
    let declared = declared_type(settings, "ssl.truststore.type");
    if let Some(pem) = settings.remove(CERTIFICATES) {
        put_default(settings, "ssl.ca.pem", pem);
    }
    let Some(path) = settings.remove(LOCATION) else {
        return Ok(());
    };
    let format = store_format_of(LOCATION, "trust", declared.as_deref(), &path, files)?
        .unwrap_or(StoreFormat::Pem);
    match format {
        StoreFormat::Pem => {
            put_default(settings, "ssl.ca.location", path);
            Ok(())
        }
        StoreFormat::Java | StoreFormat::Pkcs12 => Err(refuse(
            LOCATION,
            format!("The trust store named by {LOCATION} is a {} store; librdkafka reads CA certificates from PEM only. Export them with `keytool -exportcert -rfc` (or `openssl pkcs12 -nokeys`) and set ssl.truststore.type=PEM, or give the PEM file as ssl.ca.location.",
                if format == StoreFormat::Java { "JKS" } else { "PKCS12" }),
        )),
    }
}

fn translate_keystore(
    settings: &mut BTreeMap<String, String>,
    files: Files,
) -> Result<(), SecurityError> {
    const LOCATION: &str = "ssl.keystore.location";
    let declared = declared_type(settings, "ssl.keystore.type");
    if let Some(chain) = settings.remove("ssl.keystore.certificate.chain") {
        put_default(settings, "ssl.certificate.pem", chain);
    }
    if let Some(key) = settings.remove("ssl.keystore.key") {
        put_default(settings, "ssl.key.pem", key);
    }
    let Some(path) = settings.get(LOCATION).cloned() else {
        return Ok(());
    };
    let format = store_format_of(LOCATION, "key", declared.as_deref(), &path, files)?
        .unwrap_or(StoreFormat::Pkcs12);
    match format {
        // librdkafka's own key, with the same meaning.
        StoreFormat::Pkcs12 => Ok(()),
        StoreFormat::Pem => {
            // One file with the private key and the certificate chain: OpenSSL reads each from it.
            settings.remove(LOCATION);
            settings.remove("ssl.keystore.password");
            put_default(settings, "ssl.certificate.location", path.clone());
            put_default(settings, "ssl.key.location", path);
            Ok(())
        }
        StoreFormat::Java => Err(refuse(
            LOCATION,
            format!("The key store named by {LOCATION} is a JKS store; librdkafka reads PKCS12 and PEM key stores. Convert it with `keytool -importkeystore -deststoretype PKCS12`."),
        )),
    }
}

// ----- JAAS ----------------------------------------------------------------------------------------------

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

/// Splits a JAAS entry as Kafka's `JaasConfig` does: words, quoted strings (`"` or `'`, with backslash
/// escapes), `=`, `;`, and `//` or `/* */` comments.
fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '=' => out.push(Token::Equals),
            ';' => out.push(Token::Semicolon),
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                loop {
                    match chars.next() {
                        Some('/') if last == '*' => break,
                        Some(c) => last = c,
                        None => return Err("a comment is not closed".into()),
                    }
                }
            }
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some('\\') => match chars.next() {
                            Some(e) => s.push(e),
                            None => return Err("a quoted value is not closed".into()),
                        },
                        Some(q) if q == c => break,
                        Some(other) => s.push(other),
                        None => return Err("a quoted value is not closed".into()),
                    }
                }
                out.push(Token::Quoted(s));
            }
            c if is_word_char(c) => {
                let mut s = String::from(c);
                while let Some(&n) = chars.peek() {
                    if !is_word_char(n) {
                        break;
                    }
                    s.push(n);
                    chars.next();
                }
                out.push(Token::Word(s));
            }
            other => return Err(format!("unexpected character '{other}'")),
        }
    }
    Ok(out)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '$')
}

/// Parses the one login module of a `sasl.jaas.config` value: its class and its options.
fn parse_jaas(text: &str) -> Result<(String, BTreeMap<String, String>), String> {
    let tokens = tokens(text)?;
    let modules = tokens.iter().filter(|t| **t == Token::Semicolon).count();
    if modules != 1 || tokens.last() != Some(&Token::Semicolon) {
        return Err(
            if modules == 0 || tokens.last() != Some(&Token::Semicolon) {
                "JAAS config entry not terminated by semi-colon".to_string()
            } else {
                format!("JAAS config property contains {modules} login modules, should be 1 module")
            },
        );
    }
    let mut it = tokens.into_iter();
    let Some(Token::Word(module)) = it.next() else {
        return Err("JAAS config entry does not start with a login module class".into());
    };
    match it.next() {
        Some(Token::Word(flag))
            if matches!(
                flag.to_ascii_lowercase().as_str(),
                "required" | "requisite" | "sufficient" | "optional"
            ) => {}
        _ => return Err(format!("Invalid control flag after {module}")),
    }
    let mut options = BTreeMap::new();
    loop {
        match it.next() {
            Some(Token::Semicolon) => break,
            Some(Token::Word(name)) => {
                if it.next() != Some(Token::Equals) {
                    return Err(format!(
                        "Value not specified for key '{name}' in JAAS config"
                    ));
                }
                match it.next() {
                    Some(Token::Word(v)) | Some(Token::Quoted(v)) => {
                        options.insert(name, v);
                    }
                    _ => {
                        return Err(format!(
                            "Value not specified for key '{name}' in JAAS config"
                        ))
                    }
                }
            }
            _ => return Err("JAAS config options must be key=value pairs".into()),
        }
    }
    Ok((module, options))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::props as map;

    /// The settings `pairs` become once translated (reading files).
    fn translated(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
        let mut s = map(pairs);
        translate(&mut s, Files::Read).unwrap();
        s
    }

    #[test]
    fn plain_and_scram_jaas_become_username_and_password() {
        for module in [PLAIN_MODULE, SCRAM_MODULE] {
            let s = translated(&[(
                "sasl.jaas.config",
                &format!(r#"{module} required username="alice" password="s3cr\"et;=";"#),
            )]);
            assert_eq!(s.get("sasl.username").map(String::as_str), Some("alice"));
            assert_eq!(
                s.get("sasl.password").map(String::as_str),
                Some("s3cr\"et;=")
            );
            assert!(!s.contains_key("sasl.jaas.config"));
        }
    }

    #[test]
    fn librdkafka_keys_win_over_the_jaas_config() {
        let s = translated(&[
            (
                "sasl.jaas.config",
                &format!("{PLAIN_MODULE} required username=u password='p';"),
            ),
            ("sasl.password", "explicit"),
        ]);
        assert_eq!(s["sasl.username"], "u");
        assert_eq!(s["sasl.password"], "explicit");
    }

    #[test]
    fn jaas_errors_follow_kafka_and_never_echo_the_value() {
        let cases = [
            (
                format!("{PLAIN_MODULE} required username=\"u\" password=\"hunter2\""),
                "not terminated by semi-colon",
            ),
            (
                format!("{PLAIN_MODULE} required username=\"u\"; {PLAIN_MODULE} required;"),
                "contains 2 login modules, should be 1 module",
            ),
            (
                format!("{PLAIN_MODULE} always username=\"hunter2\";"),
                "Invalid control flag",
            ),
            (
                format!("{PLAIN_MODULE} required password;"),
                "Value not specified for key 'password'",
            ),
            (
                format!("{PLAIN_MODULE} required username=\"hunter2\";"),
                "needs the option 'password'",
            ),
            (
                format!("{KERBEROS_MODULE} required useKeyTab=true;"),
                "built without Cyrus SASL",
            ),
            (
                format!("{OAUTH_MODULE} required;"),
                "sasl.oauthbearer.config",
            ),
            (
                "com.example.Custom required password=\"hunter2\";".to_string(),
                "the login module com.example.Custom is not known",
            ),
        ];
        for (jaas, expected) in cases {
            let mut s = map(&[("sasl.jaas.config", &jaas)]);
            let e = translate(&mut s, Files::Skip).unwrap_err();
            assert_eq!(e.key, "sasl.jaas.config");
            assert!(e.message.contains(expected), "{jaas}: {}", e.message);
            assert!(!e.message.contains("hunter2"), "{}", e.message);
        }
    }

    #[test]
    fn jaas_comments_and_single_quotes_are_read() {
        let (module, options) = parse_jaas(&format!(
            "/* login */ {PLAIN_MODULE} required // the user\n username='a b' password=\"c\";"
        ))
        .unwrap();
        assert_eq!(module, PLAIN_MODULE);
        assert_eq!(options["username"], "a b");
        assert_eq!(options["password"], "c");
    }

    #[test]
    fn java_classes_are_refused_and_java_only_tls_keys_dropped() {
        let mut s = map(&[(
            "sasl.login.callback.handler.class",
            "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
        )]);
        let e = translate(&mut s, Files::Skip).unwrap_err();
        assert_eq!(e.key, "sasl.login.callback.handler.class");
        assert!(e.message.contains("Java class"), "{}", e.message);

        let mut s = map(&[
            ("ssl.protocol", "TLSv1.3"),
            ("ssl.enabled.protocols", "TLSv1.2,TLSv1.3"),
            ("ssl.truststore.password", "changeit"),
        ]);
        let mut dropped = translate(&mut s, Files::Skip).unwrap();
        dropped.sort();
        assert_eq!(
            dropped,
            [
                "ssl.enabled.protocols",
                "ssl.protocol",
                "ssl.truststore.password"
            ]
        );
        assert!(s.is_empty(), "{s:?}");
    }

    #[test]
    fn tls_without_a_ca_probes_the_system_locations() {
        for protocol in ["SSL", "sasl_ssl"] {
            let s = translated(&[("security.protocol", protocol)]);
            assert_eq!(s["ssl.ca.location"], "probe");
        }
        let s = translated(&[("security.protocol", "SASL_PLAINTEXT")]);
        assert!(!s.contains_key("ssl.ca.location"));
        let s = translated(&[("security.protocol", "SSL"), ("ssl.ca.pem", "x")]);
        assert!(!s.contains_key("ssl.ca.location"));
    }

    #[test]
    fn an_empty_endpoint_identification_algorithm_turns_it_off() {
        let s = translated(&[("ssl.endpoint.identification.algorithm", "")]);
        assert_eq!(s["ssl.endpoint.identification.algorithm"], "none");
        let s = translated(&[("ssl.endpoint.identification.algorithm", "https")]);
        assert_eq!(s["ssl.endpoint.identification.algorithm"], "https");
    }

    #[test]
    fn stores_are_told_apart_by_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p.to_str().unwrap().to_string()
        };
        let pem = write(
            "ca.pem",
            b"Bag Attributes\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        );
        let jks = write("trust.jks", &[0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]);
        let p12 = write("trust.p12", &[0x30, 0x82, 0x04, 0x10]);

        // A PEM trust store, with Java's default type left unset, becomes ssl.ca.location.
        let s = translated(&[("ssl.truststore.location", &pem)]);
        assert_eq!(s["ssl.ca.location"], pem);
        assert!(!s.contains_key("ssl.truststore.location"));

        for (path, kind) in [(&jks, "JKS"), (&p12, "PKCS12")] {
            let mut s = map(&[
                ("ssl.truststore.location", path),
                ("ssl.truststore.type", "JKS"),
            ]);
            let e = translate(&mut s, Files::Read).unwrap_err();
            assert_eq!(e.key, "ssl.truststore.location");
            assert!(
                e.message.contains(&format!("is a {kind} store")),
                "{}",
                e.message
            );
        }

        // A PEM key store is both the certificate and the key file; PKCS#12 stays librdkafka's own key.
        let s = translated(&[
            ("ssl.keystore.location", &pem),
            ("ssl.keystore.password", "x"),
            ("ssl.key.password", "k"),
        ]);
        assert_eq!(s["ssl.certificate.location"], pem);
        assert_eq!(s["ssl.key.location"], pem);
        assert_eq!(s["ssl.key.password"], "k");
        assert!(!s.contains_key("ssl.keystore.location"));
        assert!(!s.contains_key("ssl.keystore.password"));

        let s = translated(&[
            ("ssl.keystore.location", &p12),
            ("ssl.keystore.type", "PKCS12"),
            ("ssl.keystore.password", "x"),
        ]);
        assert_eq!(s["ssl.keystore.location"], p12);
        assert_eq!(s["ssl.keystore.password"], "x");
        assert!(!s.contains_key("ssl.keystore.type"));

        let mut s = map(&[("ssl.keystore.location", &jks)]);
        let e = translate(&mut s, Files::Read).unwrap_err();
        assert!(e.message.contains("is a JKS store"), "{}", e.message);

        let missing = dir.path().join("nope.pem");
        let mut s = map(&[("ssl.truststore.location", missing.to_str().unwrap())]);
        let e = translate(&mut s, Files::Read).unwrap_err();
        assert!(e.message.contains("cannot be read"), "{}", e.message);
        // Validation opens nothing: only a declared type can be judged.
        let mut s = map(&[("ssl.truststore.location", missing.to_str().unwrap())]);
        translate(&mut s, Files::Skip).unwrap();
        let mut s = map(&[
            ("ssl.truststore.location", "/x.jks"),
            ("ssl.truststore.type", "jks"),
        ]);
        assert!(translate(&mut s, Files::Skip).is_err());
    }

    #[test]
    fn inline_pem_stores_become_librdkafkas_pem_keys() {
        let s = translated(&[
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.certificates", "CA"),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.certificate.chain", "CHAIN"),
            ("ssl.keystore.key", "KEY"),
        ]);
        assert_eq!(s["ssl.ca.pem"], "CA");
        assert_eq!(s["ssl.certificate.pem"], "CHAIN");
        assert_eq!(s["ssl.key.pem"], "KEY");
        assert_eq!(s.len(), 3, "{s:?}");
    }
}
