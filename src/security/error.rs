//! The errors of the security settings.

use crate::config::ConfigError;

/// A security setting that cannot be used: a bad key value (CORS and header rules among them), a JAAS
/// text or credentials file that does not parse, or TLS material that cannot be loaded. The text names
/// the key or the file, as it did when these errors were strings.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecurityError {
    /// A key's value rejected, with Kafka's `ConfigException` text.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A JAAS configuration (`rest.basic.auth.jaas.config` or the file it names) that cannot be used.
    #[error("{0}")]
    Jaas(String),
    /// A credentials file that cannot be read or parsed.
    #[error("{0}")]
    Credentials(String),
    /// TLS settings or material (stores, certificates, keys) that cannot be used.
    #[error("{0}")]
    Tls(String),
}

impl From<SecurityError> for String {
    fn from(e: SecurityError) -> Self {
        e.to_string()
    }
}

impl PartialEq<&str> for SecurityError {
    fn eq(&self, other: &&str) -> bool {
        crate::config::error::same_text(self, other)
    }
}

impl PartialEq<String> for SecurityError {
    fn eq(&self, other: &String) -> bool {
        crate::config::error::same_text(self, other)
    }
}
