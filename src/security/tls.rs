//! HTTPS listeners: Kafka's PEM keystore and truststore settings read into a rustls server config.
//!
//! The settings for `listeners` come from keys prefixed `listeners.https.` and those for `admin.listeners`
//! from keys prefixed `admin.listeners.https.`. As in Kafka, the prefix is all or nothing: when any key
//! carries it, only prefixed keys are read; otherwise the unprefixed `ssl.*` keys are.
//!
//! Keys read (each also with its prefix):
//! - `ssl.keystore.type`: `PEM` (the only type liteconnect reads; when absent, PEM is assumed).
//! - `ssl.keystore.certificate.chain` and `ssl.keystore.key`: the certificate chain and the private key as
//!   inline PEM; or `ssl.keystore.location`: a PEM file holding both.
//! - `ssl.client.auth`: `none` (default), `requested` or `required`.
//! - `ssl.truststore.type`: `PEM`; `ssl.truststore.certificates` (inline PEM) or `ssl.truststore.location`
//!   (a PEM file): the CAs that client certificates must chain to.
//! - `ssl.enabled.protocols`: `TLSv1.2,TLSv1.3` by default.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use regex::Regex;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

use super::SecurityError;

/// The prefix of the settings for `listeners`.
pub const LISTENERS_PREFIX: &str = "listeners.https.";
/// The prefix of the settings for `admin.listeners`.
pub const ADMIN_LISTENERS_PREFIX: &str = "admin.listeners.https.";

/// Whether and how clients present certificates (`ssl.client.auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    None,
    /// A certificate is asked for; clients without one are accepted, one that does not verify is refused.
    Requested,
    /// Clients without a certificate that verifies against the truststore are refused.
    Required,
}

/// The `ssl.*` settings that apply to listeners with `prefix`, with the prefix removed (Kafka's
/// `valuesWithPrefixAllOrNothing`). Returns the settings and the prefix to name keys with in messages.
pub fn ssl_settings(
    originals: &BTreeMap<String, String>,
    prefix: &str,
) -> (BTreeMap<String, String>, String) {
    let prefixed: BTreeMap<String, String> = originals
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_string(), v.clone())))
        .collect();
    if prefixed.is_empty() {
        let plain = originals
            .iter()
            .filter(|(k, _)| k.starts_with("ssl."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (plain, String::new())
    } else {
        (prefixed, prefix.to_string())
    }
}

/// Rewrites PEM text into the canonical line layout. Properties files often carry PEM on one line
/// (`\` continuations join lines, and Kafka's documentation shows that form), which strict PEM readers
/// refuse.
pub fn normalize_pem(text: &str) -> String {
    static BLOCK: OnceLock<Regex> = OnceLock::new();
    let block = BLOCK.get_or_init(|| {
        Regex::new(r"(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----")
            .expect("the PEM pattern compiles")
    });
    let mut out = String::new();
    for c in block.captures_iter(text) {
        let body: String = c[2].chars().filter(|ch| !ch.is_whitespace()).collect();
        out.push_str(&format!("-----BEGIN {}-----\n", &c[1]));
        for line in body.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str(&format!("-----END {}-----\n", &c[3]));
    }
    out
}

fn read_pem_file(key: &str, path: &str) -> Result<String, SecurityError> {
    std::fs::read_to_string(path.trim()).map_err(|e| {
        crate::config::ConfigError::invalid(key, path, format_args!("cannot read the file: {e}"))
            .into()
    })
}

fn certificates(key: &str, pem: &str) -> Result<Vec<CertificateDer<'static>>, SecurityError> {
    let normalized = normalize_pem(pem);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(normalized.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| {
            SecurityError::Tls(format!(
                "Invalid value for configuration {key}: the PEM certificates cannot be read: {e}"
            ))
        })?;
    if certs.is_empty() {
        return Err(SecurityError::Tls(format!("Invalid value for configuration {key}: no PEM certificate (-----BEGIN CERTIFICATE-----) found")));
    }
    Ok(certs)
}

fn private_key(key: &str, pem: &str) -> Result<PrivateKeyDer<'static>, SecurityError> {
    let normalized = normalize_pem(pem);
    if normalized.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        return Err(SecurityError::Tls(format!(
            "Invalid value for configuration {key}: encrypted private keys are not supported; give the key unencrypted (PKCS#8 \"PRIVATE KEY\") and protect the file instead"
        )));
    }
    PrivateKeyDer::from_pem_slice(normalized.as_bytes()).map_err(|e| {
        SecurityError::Tls(format!(
            "Invalid value for configuration {key}: no PEM private key can be read: {e}"
        ))
    })
}

/// The `ssl.*` settings of one kind of listener, and how to name their keys in messages.
struct ListenerSsl {
    ssl: BTreeMap<String, String>,
    shown: String,
}

impl ListenerSsl {
    fn get(&self, k: &str) -> Option<&str> {
        self.ssl.get(k).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    fn name(&self, k: &str) -> String {
        format!("{}{k}", self.shown)
    }
}

/// Builds the rustls server config for HTTPS listeners whose settings carry `prefix`.
///
/// # Errors
/// A message naming the key that is missing or wrong.
pub fn server_config(
    originals: &BTreeMap<String, String>,
    prefix: &str,
) -> Result<Arc<ServerConfig>, SecurityError> {
    let (ssl, shown) = ssl_settings(originals, prefix);
    let s = ListenerSsl { ssl, shown };
    check_store_types(&s)?;
    let (chain, key) = keystore(&s)?;
    let client_auth = client_auth(&s)?;
    let versions = protocol_versions(&s)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| SecurityError::Tls(format!("Cannot set up TLS: {e}")))?;
    let builder = if client_auth == ClientAuth::None {
        builder.with_no_client_auth()
    } else {
        builder.with_client_cert_verifier(client_verifier(&s, client_auth, provider)?)
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        SecurityError::Tls(format!(
            "The keystore's private key does not fit its certificate chain or cannot be used: {e}"
        ))
    })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn check_store_types(s: &ListenerSsl) -> Result<(), SecurityError> {
    for store in ["ssl.keystore.type", "ssl.truststore.type"] {
        if let Some(t) = s.get(store) {
            if !t.eq_ignore_ascii_case("PEM") {
                return Err(crate::config::ConfigError::invalid(
                    s.name(store),
                    t,
                    "liteconnect reads PEM keystores and truststores only (convert JKS or PKCS12 stores to PEM)",
                ).into());
            }
        }
    }
    Ok(())
}

/// The certificate chain and private key, inline or from one PEM file.
fn keystore(
    s: &ListenerSsl,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), SecurityError> {
    let pair = match (s.get("ssl.keystore.certificate.chain"), s.get("ssl.keystore.key"), s.get("ssl.keystore.location")) {
        (Some(chain), Some(key), _) => (
            certificates(&s.name("ssl.keystore.certificate.chain"), chain)?,
            private_key(&s.name("ssl.keystore.key"), key)?,
        ),
        (Some(_), None, _) | (None, Some(_), _) => {
            return Err(SecurityError::Tls(format!(
                "Both {} and {} must be set for an inline PEM keystore",
                s.name("ssl.keystore.certificate.chain"),
                s.name("ssl.keystore.key")
            )))
        }
        (None, None, Some(location)) => {
            let text = read_pem_file(&s.name("ssl.keystore.location"), location)?;
            (certificates(&s.name("ssl.keystore.location"), &text)?, private_key(&s.name("ssl.keystore.location"), &text)?)
        }
        (None, None, None) => {
            return Err(SecurityError::Tls(format!(
                "An https listener needs a keystore: set {} (a PEM file with the private key and the certificate chain), or {} and {}",
                s.name("ssl.keystore.location"),
                s.name("ssl.keystore.certificate.chain"),
                s.name("ssl.keystore.key")
            )))
        }
    };
    Ok(pair)
}

fn client_auth(s: &ListenerSsl) -> Result<ClientAuth, SecurityError> {
    let client_auth = match s
        .get("ssl.client.auth")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("none") => ClientAuth::None,
        Some("requested") => ClientAuth::Requested,
        Some("required") => ClientAuth::Required,
        Some(other) => {
            return Err(crate::config::ConfigError::invalid(
                s.name("ssl.client.auth"),
                other,
                "String must be one of: required, requested, none",
            )
            .into())
        }
    };
    Ok(client_auth)
}

fn protocol_versions(
    s: &ListenerSsl,
) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, SecurityError> {
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    let protocols = s.get("ssl.enabled.protocols").unwrap_or("TLSv1.2,TLSv1.3");
    for p in protocols
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match p {
            "TLSv1.2" => versions.push(&rustls::version::TLS12),
            "TLSv1.3" => versions.push(&rustls::version::TLS13),
            other => tracing::warn!(
                protocol = other,
                "TLS protocol not supported by liteconnect; ignoring it."
            ),
        }
    }
    if versions.is_empty() {
        return Err(crate::config::ConfigError::invalid(
            s.name("ssl.enabled.protocols"),
            protocols,
            "liteconnect serves TLSv1.2 and TLSv1.3 only",
        )
        .into());
    }
    Ok(versions)
}

/// The verifier of client certificates against the truststore (inline or a PEM file).
fn client_verifier(
    s: &ListenerSsl,
    client_auth: ClientAuth,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, SecurityError> {
    let (source, text) = match (
        s.get("ssl.truststore.certificates"),
        s.get("ssl.truststore.location"),
    ) {
        (Some(inline), _) => (s.name("ssl.truststore.certificates"), inline.to_string()),
        (None, Some(location)) => (
            s.name("ssl.truststore.location"),
            read_pem_file(&s.name("ssl.truststore.location"), location)?,
        ),
        (None, None) => {
            return Err(SecurityError::Tls(format!(
                "{}={} needs a truststore: set {} or {}",
                s.name("ssl.client.auth"),
                if client_auth == ClientAuth::Required {
                    "required"
                } else {
                    "requested"
                },
                s.name("ssl.truststore.location"),
                s.name("ssl.truststore.certificates")
            )))
        }
    };
    let mut roots = RootCertStore::empty();
    for cert in certificates(&source, &text)? {
        roots.add(cert).map_err(|e| {
            SecurityError::Tls(format!(
                "Invalid value for configuration {source}: a certificate cannot be trusted: {e}"
            ))
        })?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
    let verifier = if client_auth == ClientAuth::Requested {
        verifier.allow_unauthenticated()
    } else {
        verifier
    };
    verifier
        .build()
        .map_err(|e| SecurityError::Tls(format!("Invalid truststore {source}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::props;

    #[test]
    fn prefixed_settings_are_all_or_nothing() {
        let both = props(&[
            ("ssl.keystore.location", "/plain"),
            ("ssl.client.auth", "required"),
            ("listeners.https.ssl.keystore.location", "/prefixed"),
        ]);
        let (s, shown) = ssl_settings(&both, LISTENERS_PREFIX);
        assert_eq!(shown, "listeners.https.");
        assert_eq!(s, props(&[("ssl.keystore.location", "/prefixed")]));
        let (s, shown) = ssl_settings(&both, ADMIN_LISTENERS_PREFIX);
        assert_eq!(shown, "");
        assert_eq!(s.len(), 2);
        assert_eq!(s["ssl.keystore.location"], "/plain");
    }

    #[test]
    fn pem_on_one_line_is_rewritten() {
        let body = "A".repeat(100);
        let one_line = format!(
            "-----BEGIN CERTIFICATE----- {} {} -----END CERTIFICATE-----",
            &body[..50],
            &body[50..]
        );
        let n = normalize_pem(&one_line);
        let lines: Vec<&str> = n.lines().collect();
        assert_eq!(lines[0], "-----BEGIN CERTIFICATE-----");
        assert_eq!(lines[1].len(), 64);
        assert_eq!(lines[2].len(), 36);
        assert_eq!(lines[3], "-----END CERTIFICATE-----");
    }

    #[test]
    fn missing_or_foreign_keystores_name_the_key() {
        let e = server_config(&BTreeMap::new(), LISTENERS_PREFIX)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ssl.keystore.location"), "{e}");
        let e = server_config(
            &props(&[("listeners.https.ssl.keystore.type", "JKS")]),
            LISTENERS_PREFIX,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("listeners.https.ssl.keystore.type") && e.contains("PEM"),
            "{e}"
        );
        let e = server_config(&props(&[("ssl.keystore.key", "x")]), LISTENERS_PREFIX)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ssl.keystore.certificate.chain"), "{e}");
        let e = server_config(
            &props(&[("ssl.keystore.location", "/nonexistent/keystore.pem")]),
            LISTENERS_PREFIX,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cannot read the file"), "{e}");
    }
}
