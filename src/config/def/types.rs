//! The kinds of values a key holds (`ConfigType`), how much it matters (`Importance`), how wide
//! its input is (`Width`) and what applies when it is absent (`DefaultValue`).

use std::fmt;

/// The type of a configuration key; decides how its string form is parsed and rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigType {
    /// `true`/`false`, case-insensitive.
    Boolean,
    /// Any text, trimmed.
    String,
    /// A 32-bit signed integer.
    Int,
    /// A 16-bit signed integer.
    Short,
    /// A 64-bit signed integer.
    Long,
    /// A 64-bit float, in Java's `Double.parseDouble` syntax.
    Double,
    /// A comma-separated list; whitespace around commas is dropped.
    List,
    /// A plugin class name (or alias).
    Class,
    /// Text that is never echoed back (`[hidden]`).
    Password,
}

impl ConfigType {
    /// The name Kafka uses on the wire (`"BOOLEAN"`, `"STRING"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigType::Boolean => "BOOLEAN",
            ConfigType::String => "STRING",
            ConfigType::Int => "INT",
            ConfigType::Short => "SHORT",
            ConfigType::Long => "LONG",
            ConfigType::Double => "DOUBLE",
            ConfigType::List => "LIST",
            ConfigType::Class => "CLASS",
            ConfigType::Password => "PASSWORD",
        }
    }
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much a user should care about a key; shown by UIs, never enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Importance {
    /// `"HIGH"`.
    High,
    /// `"MEDIUM"`.
    Medium,
    /// `"LOW"`.
    Low,
}

impl Importance {
    /// The name Kafka uses on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Importance::High => "HIGH",
            Importance::Medium => "MEDIUM",
            Importance::Low => "LOW",
        }
    }
}

impl fmt::Display for Importance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hint for UIs about how wide an input field should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// `"NONE"`.
    None,
    /// `"SHORT"`.
    Short,
    /// `"MEDIUM"`.
    Medium,
    /// `"LONG"`.
    Long,
}

impl Width {
    /// The name Kafka uses on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Width::None => "NONE",
            Width::Short => "SHORT",
            Width::Medium => "MEDIUM",
            Width::Long => "LONG",
        }
    }
}

impl fmt::Display for Width {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The default of a key. Kafka distinguishes "no default" (the key is required) from a
/// default of `null` (the key is optional and absent means nothing).
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    /// No default: leaving the key out is an error.
    Required,
    /// Optional; the parsed value is [`ConfigValue::Null`](super::ConfigValue::Null) when absent.
    Null,
    /// The default in its string form, as it would be written in a properties file; parsed
    /// with the key's type like any supplied value (`""` is an empty list for a LIST key).
    Value(String),
}
