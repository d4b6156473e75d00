//! Kafka's validators, each with its exact message.

use crate::config::invalid_value;
use std::fmt;
use std::sync::Arc;

use super::java_text::{java_hash_order, java_trim};
use super::value::ConfigValue;
use crate::data::double_to_string;

/// A check run by a [`Validator::Custom`]: gets the key name and parsed value, returns the
/// reason when the value is unacceptable.
pub type CustomCheck = Arc<dyn Fn(&str, &ConfigValue) -> Result<(), String> + Send + Sync>;

/// A check on a parsed value, each with Kafka's message. Validators run after parsing and also
/// on defaults and on `null` (a missing or unparsable value), exactly as Kafka's do, which is
/// why e.g. an unparsable `tasks.max` reports both `Not a number of type INT` and
/// `Value must be non-null`.
#[derive(Clone)]
pub enum Validator {
    /// Kafka's `NonEmptyString`: `String must be non-empty`. Values are trimmed when parsed,
    /// so an all-blank string is rejected too; `null` passes.
    NonEmptyString,
    /// Kafka's `NonEmptyStringWithoutControlChars`, used for connector names:
    /// `String may not be empty`, or `String may not contain control sequences but had the
    /// following ASCII chars: 10, 13`; `null` passes (a missing name is reported elsewhere).
    NonEmptyStringWithoutControlChars,
    /// Kafka's `Range.atLeast`: `Value must be at least N`; `null` gives `Value must be non-null`.
    AtLeast(f64),
    /// Kafka's `Range.between`: `Value must be at least N` / `Value must be no more than N`.
    Between(f64, f64),
    /// Kafka's `ValidString.in`: `String must be one of: a, b`.
    OneOf(Vec<&'static str>),
    /// Kafka's `CaseInsensitiveValidString.in`:
    /// `String must be one of (case insensitive): A, B`, listing the upper-cased options in the
    /// order Java's `HashSet` iterates them.
    OneOfCaseInsensitive(Vec<&'static str>),
    /// Kafka Connect's alias validator (`transforms`, `predicates`, `topic.creation.groups`):
    /// non-null (`entry must be non null`) and no duplicates (`Duplicate alias provided.`).
    UniqueList,
    /// Kafka's `NonEmptyListValidator` (used by SMTs): `Empty list`, also for `null`.
    NonEmptyList,
    /// Kafka Connect's `RegexValidator`: the value must compile (`Invalid regex: <why>`).
    /// Java's regex dialect is approximated with the `regex` crate; look-around and
    /// back-references, which Java has and the crate lacks, are accepted unchecked.
    Regex,
    /// Kafka's `NonNullValidator`: `entry must be non null`.
    NonNull,
    /// Lets `null` through and applies the inner validator to anything else (Kafka writes
    /// these as lambdas, e.g. for `transaction.boundary.interval.ms`).
    NullOr(Box<Validator>),
    /// Kafka's `CompositeValidator`: runs the validators in order and reports the first failure.
    All(Vec<Validator>),
    /// A validator of a key embedded under a prefix (`transforms.a.` + the SMT's key). Kafka's
    /// `ConfigDef.embed` hands its validators the key name with the prefix cut off, so their
    /// messages name `regex`, not `transforms.a.regex`; this reproduces that.
    Embedded {
        /// The prefix cut from the key name before the inner validator sees it.
        prefix: String,
        /// The key's own validator.
        inner: Box<Validator>,
    },
    /// Any other check. Its `Err(reason)` becomes
    /// `Invalid value <value> for configuration <key>: <reason>`.
    Custom(CustomCheck),
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Validator::NonEmptyString => f.write_str("NonEmptyString"),
            Validator::NonEmptyStringWithoutControlChars => {
                f.write_str("NonEmptyStringWithoutControlChars")
            }
            Validator::AtLeast(min) => f.debug_tuple("AtLeast").field(min).finish(),
            Validator::Between(min, max) => f.debug_tuple("Between").field(min).field(max).finish(),
            Validator::OneOf(options) => f.debug_tuple("OneOf").field(options).finish(),
            Validator::OneOfCaseInsensitive(options) => f
                .debug_tuple("OneOfCaseInsensitive")
                .field(options)
                .finish(),
            Validator::UniqueList => f.write_str("UniqueList"),
            Validator::NonEmptyList => f.write_str("NonEmptyList"),
            Validator::Regex => f.write_str("Regex"),
            Validator::NonNull => f.write_str("NonNull"),
            Validator::NullOr(inner) => f.debug_tuple("NullOr").field(inner).finish(),
            Validator::All(all) => f.debug_tuple("All").field(all).finish(),
            Validator::Embedded { prefix, inner } => f
                .debug_struct("Embedded")
                .field("prefix", prefix)
                .field("inner", inner)
                .finish(),
            Validator::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

impl Validator {
    /// Checks a parsed value of key `name`, returning Kafka's full error message on failure.
    ///
    /// # Errors
    /// The message (`Invalid value V for configuration K: reason`) when the value is rejected.
    pub fn ensure_valid(&self, name: &str, value: &ConfigValue) -> Result<(), String> {
        let shown = || value.java_string();
        match self {
            Validator::NonEmptyString => match value {
                ConfigValue::String(s) | ConfigValue::Password(s) if java_trim(s).is_empty() => {
                    Err(invalid_value(name, shown(), "String must be non-empty"))
                }
                _ => Ok(()),
            },
            Validator::NonEmptyStringWithoutControlChars => check_no_control_chars(name, value),
            Validator::AtLeast(min) => check_range(name, value, Some(*min), None),
            Validator::Between(min, max) => check_range(name, value, Some(*min), Some(*max)),
            Validator::OneOf(options) => {
                let ok = matches!(value, ConfigValue::String(s) if options.contains(&s.as_str()));
                if ok {
                    Ok(())
                } else {
                    Err(invalid_value(
                        name,
                        shown(),
                        format_args!("String must be one of: {}", options.join(", ")),
                    ))
                }
            }
            Validator::OneOfCaseInsensitive(options) => {
                check_one_of_case_insensitive(name, value, options)
            }
            Validator::UniqueList => match value {
                ConfigValue::Null => Err(invalid_value(name, "null", "entry must be non null")),
                ConfigValue::List(items) => {
                    let mut seen = std::collections::HashSet::new();
                    if items.iter().all(|i| seen.insert(i)) {
                        Ok(())
                    } else {
                        Err(invalid_value(name, shown(), "Duplicate alias provided."))
                    }
                }
                _ => Ok(()),
            },
            Validator::NonEmptyList => match value {
                ConfigValue::Null => Err(invalid_value(name, "null", "Empty list")),
                ConfigValue::List(items) if items.is_empty() => {
                    Err(invalid_value(name, shown(), "Empty list"))
                }
                _ => Ok(()),
            },
            Validator::Regex => {
                let pattern = match value {
                    ConfigValue::String(s) | ConfigValue::Password(s) | ConfigValue::Class(s) => {
                        s.as_str()
                    }
                    ConfigValue::Null => {
                        return Err(invalid_value(name, "null", "Invalid regex: null"));
                    }
                    _ => return Ok(()),
                };
                match check_regex(pattern) {
                    Ok(()) => Ok(()),
                    Err(why) => Err(invalid_value(
                        name,
                        shown(),
                        format_args!("Invalid regex: {why}"),
                    )),
                }
            }
            Validator::NonNull => match value {
                ConfigValue::Null => Err(invalid_value(name, "null", "entry must be non null")),
                _ => Ok(()),
            },
            Validator::NullOr(inner) => match value {
                ConfigValue::Null => Ok(()),
                _ => inner.ensure_valid(name, value),
            },
            Validator::All(all) => all.iter().try_for_each(|v| v.ensure_valid(name, value)),
            Validator::Embedded { prefix, inner } => {
                inner.ensure_valid(name.strip_prefix(prefix.as_str()).unwrap_or(name), value)
            }
            Validator::Custom(check) => {
                check(name, value).map_err(|reason| invalid_value(name, shown(), reason))
            }
        }
    }
}

/// `NonEmptyStringWithoutControlChars`: no empty string, no ISO control characters.
fn check_no_control_chars(name: &str, value: &ConfigValue) -> Result<(), String> {
    let ConfigValue::String(s) = value else {
        return Ok(());
    };
    if s.is_empty() {
        return Err(invalid_value(name, s, "String may not be empty"));
    }
    let found: Vec<String> = s
        .chars()
        .filter(|c| is_iso_control(*c))
        .map(|c| u32::from(c).to_string())
        .collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(invalid_value(
            name,
            s,
            format_args!(
                "String may not contain control sequences but had the following ASCII chars: {}",
                found.join(", ")
            ),
        ))
    }
}

/// `CaseInsensitiveValidString`: one of `options`, ignoring case; the message lists them upper-cased
/// in Java's hash-set order.
fn check_one_of_case_insensitive(
    name: &str,
    value: &ConfigValue,
    options: &[&str],
) -> Result<(), String> {
    let shown = || value.java_string();
    let upper: Vec<String> = options.iter().map(|o| o.to_uppercase()).collect();
    let ok = matches!(value, ConfigValue::String(s) if upper.contains(&s.to_uppercase()));
    if ok {
        Ok(())
    } else {
        let mut unique: Vec<String> = Vec::new();
        for u in upper {
            if !unique.contains(&u) {
                unique.push(u);
            }
        }
        let ordered: Vec<String> = java_hash_order(unique.into_iter().map(|u| (u, ())).collect())
            .into_iter()
            .map(|(u, ())| u)
            .collect();
        Err(invalid_value(
            name,
            shown(),
            format_args!(
                "String must be one of (case insensitive): {}",
                ordered.join(", ")
            ),
        ))
    }
}

/// Kafka's `Range` check, comparing as doubles like Kafka does.
fn check_range(
    name: &str,
    value: &ConfigValue,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<(), String> {
    if *value == ConfigValue::Null {
        return Err(invalid_value(name, "null", "Value must be non-null"));
    }
    let Some(n) = value.as_f64() else {
        return Ok(());
    };
    if let Some(min) = min {
        if n < min {
            return Err(invalid_value(
                name,
                value.java_string(),
                format_args!("Value must be at least {}", format_bound(min)),
            ));
        }
    }
    if let Some(max) = max {
        if n > max {
            return Err(invalid_value(
                name,
                value.java_string(),
                format_args!("Value must be no more than {}", format_bound(max)),
            ));
        }
    }
    Ok(())
}

/// Renders a range bound the way Java prints the `Number` Kafka was given: bounds are nearly
/// always integers (`atLeast(1)`), printed without a fraction.
fn format_bound(bound: f64) -> String {
    if bound.fract() == 0.0 && bound.abs() < 1e18 {
        format!("{}", bound as i64)
    } else {
        double_to_string(bound)
    }
}

/// Java's `Character.isISOControl`.
fn is_iso_control(c: char) -> bool {
    let c = u32::from(c);
    c <= 0x1f || (0x7f..=0x9f).contains(&c)
}

/// Checks that a pattern compiles. Java's dialect has look-around and back-references, which
/// the `regex` crate refuses; a pattern refused only for those is accepted, since Kafka would
/// accept it.
pub(crate) fn check_regex(pattern: &str) -> Result<(), String> {
    match regex::Regex::new(pattern) {
        Ok(_) => Ok(()),
        Err(regex::Error::Syntax(text)) => {
            let reason = text
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(text.as_str())
                .trim()
                .to_owned();
            if reason.contains("look-around") || reason.contains("backreferences") {
                Ok(())
            } else {
                Err(reason)
            }
        }
        // Too big for the crate's limits is not a syntax error in Java.
        Err(_) => Ok(()),
    }
}
