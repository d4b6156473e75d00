//! Kafka's `ConfigException`: the one place its `Invalid value V for configuration K: reason` text
//! is written.

use std::fmt;

/// Kafka's `ConfigException`: a configuration that cannot be used. The text is what users see
/// (in REST errors, validation results and logs), byte for byte Kafka's where Kafka has one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Kafka's `ConfigException(name, value, message)`:
    /// `Invalid value {value} for configuration {key}: {reason}`.
    #[error("Invalid value {value} for configuration {key}: {reason}")]
    InvalidValue {
        /// The configuration key.
        key: String,
        /// The rejected value, as Java's `toString` prints it.
        value: String,
        /// Why the value is rejected.
        reason: String,
    },
    /// Kafka's `ConfigException(message)`: any other message, shown as it is.
    #[error("{0}")]
    Message(String),
}

impl ConfigError {
    /// The error for `value` of `key` rejected because of `reason`.
    pub fn invalid(
        key: impl fmt::Display,
        value: impl fmt::Display,
        reason: impl fmt::Display,
    ) -> Self {
        ConfigError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }

    /// An error with a message of its own.
    pub fn message(message: impl Into<String>) -> Self {
        ConfigError::Message(message.into())
    }

    /// The error with `prefix` put before its text (`Transformation 'a' (...): ` + the text).
    pub fn prefixed(&self, prefix: impl fmt::Display) -> Self {
        ConfigError::Message(format!("{prefix}{self}"))
    }
}

impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        ConfigError::Message(message)
    }
}

impl From<&str> for ConfigError {
    fn from(message: &str) -> Self {
        ConfigError::Message(message.to_string())
    }
}

impl From<ConfigError> for String {
    fn from(e: ConfigError) -> Self {
        e.to_string()
    }
}

impl PartialEq<str> for ConfigError {
    fn eq(&self, other: &str) -> bool {
        same_text(self, other)
    }
}

impl PartialEq<&str> for ConfigError {
    fn eq(&self, other: &&str) -> bool {
        same_text(self, other)
    }
}

impl PartialEq<String> for ConfigError {
    fn eq(&self, other: &String) -> bool {
        same_text(self, other)
    }
}

/// Whether `error` prints as `text` (for comparisons with expected messages).
pub(crate) fn same_text(error: &impl fmt::Display, text: &str) -> bool {
    let shown = error.to_string();
    shown == text
}

/// Kafka's `ConfigException(name, value, message)` text:
/// `Invalid value {value} for configuration {key}: {reason}`.
pub fn invalid_value(
    key: impl fmt::Display,
    value: impl fmt::Display,
    reason: impl fmt::Display,
) -> String {
    ConfigError::invalid(key, value, reason).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_value_is_kafkas_text() {
        assert_eq!(
            invalid_value("tasks.max", "abc", "Not a number of type INT"),
            "Invalid value abc for configuration tasks.max: Not a number of type INT"
        );
        assert_eq!(
            ConfigError::invalid("k", "", "String must be non-empty"),
            "Invalid value  for configuration k: String must be non-empty"
        );
        assert_eq!(
            ConfigError::from("Unterminated quote"),
            "Unterminated quote"
        );
        assert_eq!(
            ConfigError::message("x").prefixed("Transformation 'a' (C): "),
            "Transformation 'a' (C): x"
        );
    }
}
