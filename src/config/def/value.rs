//! Parsed values (`ConfigValue`) and Kafka's `ConfigDef.parseType`.

use super::java_text::java_trim;
use super::types::ConfigType;
use crate::config::invalid_value;
use crate::data::double_to_string;

/// A parsed configuration value.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigValue {
    /// No value: an optional key left out, a JSON `null`, or a value that failed to parse.
    Null,
    /// A BOOLEAN value.
    Boolean(bool),
    /// A STRING value (trimmed).
    String(String),
    /// An INT value.
    Int(i32),
    /// A SHORT value.
    Short(i16),
    /// A LONG value.
    Long(i64),
    /// A DOUBLE value.
    Double(f64),
    /// A LIST value.
    List(Vec<String>),
    /// A CLASS value: the class name (an alias is resolved to the full name where the caller
    /// knows the plugins).
    Class(String),
    /// A PASSWORD value; never rendered back.
    Password(String),
}

impl ConfigValue {
    /// The value as Kafka's `ConfigDef.convertToString` renders it in REST answers: `None` for
    /// null, lists joined by `,`, passwords as `[hidden]`, doubles in Java's notation.
    pub fn render(&self) -> Option<String> {
        match self {
            ConfigValue::Null => None,
            ConfigValue::Password(_) => Some("[hidden]".to_owned()),
            ConfigValue::List(items) => Some(items.join(",")),
            ConfigValue::Class(c) => Some(c.clone()),
            other => Some(other.java_string()),
        }
    }

    /// The value as Java's `toString` prints it inside `Invalid value … for configuration …`:
    /// `null`, `[a, b]` for lists, `[hidden]` for passwords, `class X` for classes.
    pub fn java_string(&self) -> String {
        match self {
            ConfigValue::Null => "null".to_owned(),
            ConfigValue::Boolean(b) => b.to_string(),
            ConfigValue::String(s) => s.clone(),
            ConfigValue::Int(n) => n.to_string(),
            ConfigValue::Short(n) => n.to_string(),
            ConfigValue::Long(n) => n.to_string(),
            ConfigValue::Double(d) => double_to_string(*d),
            ConfigValue::List(items) => format!("[{}]", items.join(", ")),
            ConfigValue::Class(c) => format!("class {c}"),
            ConfigValue::Password(_) => "[hidden]".to_owned(),
        }
    }

    /// Numeric values as a double (how Kafka's `Range` compares them).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ConfigValue::Int(n) => Some(f64::from(*n)),
            ConfigValue::Short(n) => Some(f64::from(*n)),
            ConfigValue::Long(n) => Some(*n as f64),
            ConfigValue::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// True for [`ConfigValue::Null`].
    pub fn is_null(&self) -> bool {
        *self == ConfigValue::Null
    }
}

/// Looks a class name up for a CLASS key: given the key and the trimmed class name, returns
/// the full class name, or `None` when no such class exists.
pub(crate) type ClassResolver<'a> = &'a dyn Fn(&str, &str) -> Option<String>;

/// Every class exists and is its own name: what a plain [`ConfigDef`] knows about classes.
pub(super) fn any_class(_key: &str, class: &str) -> Option<String> {
    Some(class.to_owned())
}

/// Java's `Double.parseDouble` on an already trimmed string: accepts what Rust accepts minus
/// Rust's lower-case `inf`/`nan` spellings, plus Java's `Infinity`/`NaN` and the `d`/`f`
/// type suffixes.
fn parse_java_double(s: &str) -> Option<f64> {
    let body = s.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(s);
    let unsigned = body.strip_prefix(['+', '-']).unwrap_or(body);
    match unsigned {
        "Infinity" | "NaN" => {
            // Java has no suffixed forms of these.
            if body.len() != s.len() {
                return None;
            }
            let negative = body.starts_with('-');
            Some(match (unsigned, negative) {
                ("NaN", _) => f64::NAN,
                (_, true) => f64::NEG_INFINITY,
                _ => f64::INFINITY,
            })
        }
        _ if unsigned
            .chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
        {
            None
        }
        _ => body.parse::<f64>().ok(),
    }
}

/// Kafka's `ConfigDef.parseType` for a string (or `null`) value.
///
/// # Errors
/// Kafka's full message, e.g. `Invalid value x for configuration tasks.max: Not a number of type INT`.
pub(crate) fn parse_type(
    name: &str,
    raw: Option<&str>,
    config_type: ConfigType,
    resolve_class: ClassResolver<'_>,
) -> Result<ConfigValue, String> {
    let Some(raw) = raw else {
        return Ok(ConfigValue::Null);
    };
    let trimmed = java_trim(raw);
    let not_a_number = || {
        invalid_value(
            name,
            raw,
            format_args!("Not a number of type {config_type}"),
        )
    };
    match config_type {
        ConfigType::Boolean => {
            if trimmed.eq_ignore_ascii_case("true") {
                Ok(ConfigValue::Boolean(true))
            } else if trimmed.eq_ignore_ascii_case("false") {
                Ok(ConfigValue::Boolean(false))
            } else {
                Err(invalid_value(
                    name,
                    raw,
                    "Expected value to be either true or false",
                ))
            }
        }
        ConfigType::Password => Ok(ConfigValue::Password(trimmed.to_owned())),
        ConfigType::String => Ok(ConfigValue::String(trimmed.to_owned())),
        ConfigType::Int => trimmed
            .parse()
            .map(ConfigValue::Int)
            .map_err(|_| not_a_number()),
        ConfigType::Short => trimmed
            .parse()
            .map(ConfigValue::Short)
            .map_err(|_| not_a_number()),
        ConfigType::Long => trimmed
            .parse()
            .map(ConfigValue::Long)
            .map_err(|_| not_a_number()),
        ConfigType::Double => parse_java_double(trimmed)
            .map(ConfigValue::Double)
            .ok_or_else(not_a_number),
        ConfigType::List => Ok(ConfigValue::List(parse_list(trimmed))),
        ConfigType::Class => resolve_class(name, trimmed)
            .map(ConfigValue::Class)
            .ok_or_else(|| {
                invalid_value(name, raw, format_args!("Class {raw} could not be found."))
            }),
    }
}

/// Kafka's list parsing: split the trimmed text on `\s*,\s*`, keeping empty items (Java's
/// `split(…, -1)`), with the empty string being the empty list.
pub fn parse_list(text: &str) -> Vec<String> {
    let trimmed = java_trim(text);
    if trimmed.is_empty() {
        return Vec::new();
    }
    trimmed
        .split(',')
        .map(|item| {
            item.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r'))
                .to_owned()
        })
        .collect()
}
