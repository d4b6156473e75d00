//! Kafka's `ConfigDef`: typed, documented, validated configuration keys, and the JSON shapes
//! (`ConfigInfos` and friends) in which Kafka Connect reports them over REST.
//!
//! One definition serves three purposes, as it does in Kafka: parsing a flat string map into
//! typed values ([`ConfigDef::parse`]), answering `PUT /connector-plugins/{p}/config/validate`
//! with one result per key and every error found ([`ConfigDef::validate`]), and describing the
//! keys for `GET /connector-plugins/{p}/config` ([`key_info`]). Clients of Kafka Connect show
//! these messages to people and sometimes match on them, so the wording, the value rendering
//! (`[a, b]` for lists, `[hidden]` for passwords, `1.0` for doubles) and the order in which
//! errors accumulate all follow Kafka's `ConfigDef`, `ConfigException` and validators.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

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
    /// Optional; the parsed value is [`ConfigValue::Null`] when absent.
    Null,
    /// The default in its string form, as it would be written in a properties file; parsed
    /// with the key's type like any supplied value (`""` is an empty list for a LIST key).
    Value(String),
}

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

/// Kafka's `ConfigException(name, value, message)` text.
fn invalid(name: &str, value: &str, reason: &str) -> String {
    format!("Invalid value {value} for configuration {name}: {reason}")
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
                    Err(invalid(name, &shown(), "String must be non-empty"))
                }
                _ => Ok(()),
            },
            Validator::NonEmptyStringWithoutControlChars => {
                let ConfigValue::String(s) = value else {
                    return Ok(());
                };
                if s.is_empty() {
                    return Err(invalid(name, s, "String may not be empty"));
                }
                let found: Vec<String> = s
                    .chars()
                    .filter(|c| is_iso_control(*c))
                    .map(|c| u32::from(c).to_string())
                    .collect();
                if found.is_empty() {
                    Ok(())
                } else {
                    Err(invalid(
                        name,
                        s,
                        &format!(
                            "String may not contain control sequences but had the following ASCII chars: {}",
                            found.join(", ")
                        ),
                    ))
                }
            }
            Validator::AtLeast(min) => check_range(name, value, Some(*min), None),
            Validator::Between(min, max) => check_range(name, value, Some(*min), Some(*max)),
            Validator::OneOf(options) => {
                let ok = matches!(value, ConfigValue::String(s) if options.contains(&s.as_str()));
                if ok {
                    Ok(())
                } else {
                    Err(invalid(
                        name,
                        &shown(),
                        &format!("String must be one of: {}", options.join(", ")),
                    ))
                }
            }
            Validator::OneOfCaseInsensitive(options) => {
                let upper: Vec<String> = options.iter().map(|o| o.to_uppercase()).collect();
                let ok =
                    matches!(value, ConfigValue::String(s) if upper.contains(&s.to_uppercase()));
                if ok {
                    Ok(())
                } else {
                    let mut unique: Vec<String> = Vec::new();
                    for u in upper {
                        if !unique.contains(&u) {
                            unique.push(u);
                        }
                    }
                    let ordered: Vec<String> =
                        java_hash_order(unique.into_iter().map(|u| (u, ())).collect())
                            .into_iter()
                            .map(|(u, ())| u)
                            .collect();
                    Err(invalid(
                        name,
                        &shown(),
                        &format!(
                            "String must be one of (case insensitive): {}",
                            ordered.join(", ")
                        ),
                    ))
                }
            }
            Validator::UniqueList => match value {
                ConfigValue::Null => Err(invalid(name, "null", "entry must be non null")),
                ConfigValue::List(items) => {
                    let mut seen = std::collections::HashSet::new();
                    if items.iter().all(|i| seen.insert(i)) {
                        Ok(())
                    } else {
                        Err(invalid(name, &shown(), "Duplicate alias provided."))
                    }
                }
                _ => Ok(()),
            },
            Validator::NonEmptyList => match value {
                ConfigValue::Null => Err(invalid(name, "null", "Empty list")),
                ConfigValue::List(items) if items.is_empty() => {
                    Err(invalid(name, &shown(), "Empty list"))
                }
                _ => Ok(()),
            },
            Validator::Regex => {
                let pattern = match value {
                    ConfigValue::String(s) | ConfigValue::Password(s) | ConfigValue::Class(s) => {
                        s.as_str()
                    }
                    ConfigValue::Null => {
                        return Err(invalid(name, "null", "Invalid regex: null"));
                    }
                    _ => return Ok(()),
                };
                match check_regex(pattern) {
                    Ok(()) => Ok(()),
                    Err(why) => Err(invalid(name, &shown(), &format!("Invalid regex: {why}"))),
                }
            }
            Validator::NonNull => match value {
                ConfigValue::Null => Err(invalid(name, "null", "entry must be non null")),
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
                check(name, value).map_err(|reason| invalid(name, &shown(), &reason))
            }
        }
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
        return Err(invalid(name, "null", "Value must be non-null"));
    }
    let Some(n) = value.as_f64() else {
        return Ok(());
    };
    if let Some(min) = min {
        if n < min {
            return Err(invalid(
                name,
                &value.java_string(),
                &format!("Value must be at least {}", format_bound(min)),
            ));
        }
    }
    if let Some(max) = max {
        if n > max {
            return Err(invalid(
                name,
                &value.java_string(),
                &format!("Value must be no more than {}", format_bound(max)),
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
        java_double_string(bound)
    }
}

/// Java's `Character.isISOControl`.
fn is_iso_control(c: char) -> bool {
    let c = u32::from(c);
    c <= 0x1f || (0x7f..=0x9f).contains(&c)
}

/// Java's `String.trim()`: strips every character up to and including U+0020 from both ends,
/// which is not the same set as Rust's Unicode whitespace.
pub fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
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

/// Java's `Double.toString`: shortest round-trip digits, with a `.0` on integral values and
/// scientific notation (`1.0E10`) outside `[1e-3, 1e7)`.
pub fn java_double_string(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let magnitude = d.abs();
    if (1e-3..1e7).contains(&magnitude) {
        let s = format!("{d}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{d:e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((s.as_str(), "0"));
        if mantissa.contains('.') {
            format!("{mantissa}E{exponent}")
        } else {
            format!("{mantissa}.0E{exponent}")
        }
    }
}

/// Java's `String.hashCode` (over UTF-16 code units).
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// Orders distinct string keys the way a Java `HashMap`/`HashSet` with default capacity,
/// filled in the given order, iterates them. Some Kafka output (the case-insensitive option
/// list, converter validation results) comes straight out of such a map, so reproducing its
/// order keeps answers byte-identical.
pub(crate) fn java_hash_order<T>(items: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut capacity: usize = 16;
    while items.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let mask = (capacity - 1) as u32;
    let mut keyed: Vec<(u32, (String, T))> = items
        .into_iter()
        .map(|item| {
            let h = java_string_hash(&item.0) as u32;
            ((h ^ (h >> 16)) & mask, item)
        })
        .collect();
    // Stable: entries of one bucket keep their insertion order, as Java's resize split does.
    keyed.sort_by_key(|(bucket, _)| *bucket);
    keyed.into_iter().map(|(_, item)| item).collect()
}

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
            ConfigValue::Double(d) => java_double_string(*d),
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
fn any_class(_key: &str, class: &str) -> Option<String> {
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
    let not_a_number = || invalid(name, raw, &format!("Not a number of type {config_type}"));
    match config_type {
        ConfigType::Boolean => {
            if trimmed.eq_ignore_ascii_case("true") {
                Ok(ConfigValue::Boolean(true))
            } else if trimmed.eq_ignore_ascii_case("false") {
                Ok(ConfigValue::Boolean(false))
            } else {
                Err(invalid(
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
            .ok_or_else(|| invalid(name, raw, &format!("Class {raw} could not be found."))),
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

/// One configuration key: its type, default, validator and the documentation shown by
/// `GET /connector-plugins/{p}/config`.
#[derive(Clone, Debug)]
pub struct ConfigKey {
    /// The key, e.g. `tasks.max`.
    pub name: String,
    /// How the value is parsed.
    pub config_type: ConfigType,
    /// What applies when the key is absent.
    pub default: DefaultValue,
    /// Checked on every parsed value, including defaults and `null`.
    pub validator: Option<Validator>,
    /// Shown to users.
    pub importance: Importance,
    /// Shown to users.
    pub documentation: String,
    /// UI grouping; `None` for ungrouped keys.
    pub group: Option<String>,
    /// Position inside the group; `-1` when not given.
    pub order_in_group: i32,
    /// UI hint.
    pub width: Width,
    /// Label for UIs; the key name unless set.
    pub display_name: String,
    /// Keys whose validity depends on this one (Kafka's `dependents`; reported, not acted on).
    pub dependents: Vec<String>,
    /// Values suggested to users (`recommended_values` in validation answers).
    pub recommended_values: Vec<String>,
}

impl ConfigKey {
    /// A key with Kafka's defaults for the optional parts: no group, order `-1`, width
    /// `NONE`, display name = key name, no validator.
    pub fn new(
        name: impl Into<String>,
        config_type: ConfigType,
        default: DefaultValue,
        importance: Importance,
        documentation: impl Into<String>,
    ) -> Self {
        let name = name.into();
        ConfigKey {
            display_name: name.clone(),
            name,
            config_type,
            default,
            validator: None,
            importance,
            documentation: documentation.into(),
            group: None,
            order_in_group: -1,
            width: Width::None,
            dependents: Vec::new(),
            recommended_values: Vec::new(),
        }
    }

    /// Sets the validator.
    pub fn validator(mut self, validator: Validator) -> Self {
        self.validator = Some(validator);
        self
    }

    /// Sets the group and the position inside it.
    pub fn group(mut self, group: impl Into<String>, order_in_group: i32) -> Self {
        self.group = Some(group.into());
        self.order_in_group = order_in_group;
        self
    }

    /// Sets the width hint.
    pub fn width(mut self, width: Width) -> Self {
        self.width = width;
        self
    }

    /// Sets the display name.
    pub fn display_name(mut self, display_name: impl Into<String>) -> Self {
        self.display_name = display_name.into();
        self
    }

    /// Sets the recommended values.
    pub fn recommended(mut self, values: Vec<String>) -> Self {
        self.recommended_values = values;
        self
    }

    /// Sets the dependents.
    pub fn dependents(mut self, dependents: Vec<String>) -> Self {
        self.dependents = dependents;
        self
    }

    /// True when the key has no default.
    pub fn is_required(&self) -> bool {
        self.default == DefaultValue::Required
    }

    /// The parsed default: `None` for a required key. A default that does not parse (a
    /// mistake in a definition) counts as `null` rather than failing every validation.
    pub fn default_value(&self) -> Option<ConfigValue> {
        match &self.default {
            DefaultValue::Required => None,
            DefaultValue::Null => Some(ConfigValue::Null),
            DefaultValue::Value(text) => Some(
                parse_type(&self.name, Some(text), self.config_type, &any_class)
                    .unwrap_or(ConfigValue::Null),
            ),
        }
    }
}

/// The outcome of validating one key (Kafka's `ConfigValue` class): the parsed value and
/// everything wrong with it. Kept separate from [`ConfigValueInfo`] because callers that
/// combine validations (connector validation) still need the typed value.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedValue {
    /// The key.
    pub name: String,
    /// The parsed value, default applied; `Null` when missing or unparsable.
    pub value: ConfigValue,
    /// Every error found, in the order Kafka finds them.
    pub errors: Vec<String>,
    /// Suggested values.
    pub recommended_values: Vec<String>,
    /// Whether UIs should show the key.
    pub visible: bool,
}

impl ValidatedValue {
    /// A value with no definition behind it (e.g. an unknown key supplied as JSON null).
    pub fn bare(name: impl Into<String>) -> Self {
        ValidatedValue {
            name: name.into(),
            value: ConfigValue::Null,
            errors: Vec::new(),
            recommended_values: Vec::new(),
            visible: true,
        }
    }

    /// The REST shape of this result, under `name`.
    pub fn info_named(&self, name: String) -> ConfigValueInfo {
        ConfigValueInfo {
            name,
            value: self.value.render(),
            recommended_values: self.recommended_values.clone(),
            errors: self.errors.clone(),
            visible: self.visible,
        }
    }

    /// The REST shape of this result.
    pub fn info(&self) -> ConfigValueInfo {
        self.info_named(self.name.clone())
    }
}

/// An ordered set of [`ConfigKey`]s. Order matters: validation answers list keys in
/// definition order, and groups in order of first appearance.
#[derive(Clone, Debug, Default)]
pub struct ConfigDef {
    keys: Vec<ConfigKey>,
}

impl ConfigDef {
    /// An empty definition.
    pub fn new() -> Self {
        ConfigDef::default()
    }

    /// Adds a key, builder style. A key whose name is already defined is ignored: the first
    /// definition wins (Kafka throws instead; a definition is fixed code, so ignoring keeps
    /// a slip from taking validation down).
    pub fn define(mut self, key: ConfigKey) -> Self {
        self.add(key);
        self
    }

    /// Adds a key in place; see [`ConfigDef::define`] for duplicates.
    pub fn add(&mut self, key: ConfigKey) {
        if self.get(&key.name).is_none() {
            self.keys.push(key);
        }
    }

    /// Adds a key, replacing an existing definition of the same name where it stands (Kafka's
    /// `LinkedHashMap.put` semantics, used when a connector redefines a framework key).
    pub fn define_or_replace(&mut self, key: ConfigKey) {
        match self.keys.iter_mut().find(|k| k.name == key.name) {
            Some(existing) => *existing = key,
            None => self.keys.push(key),
        }
    }

    /// The keys in definition order.
    pub fn keys(&self) -> &[ConfigKey] {
        &self.keys
    }

    /// The key of that name.
    pub fn get(&self, name: &str) -> Option<&ConfigKey> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// Appends the keys of `other` that this definition does not have (first definition wins).
    pub fn merge(mut self, other: &ConfigDef) -> Self {
        for key in &other.keys {
            self.add(key.clone());
        }
        self
    }

    /// The groups of the keys, de-duplicated, in order of first appearance (Kafka's
    /// `ConfigDef.groups()`).
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = Vec::new();
        for group in self.keys.iter().filter_map(|k| k.group.as_ref()) {
            if !groups.contains(group) {
                groups.push(group.clone());
            }
        }
        groups
    }

    /// The keys in Kafka's documentation order (`ConfigDef.sortedConfigs`): ungrouped keys
    /// first, then by group order, order in group, required before optional, importance, name.
    /// `embed` uses this order, so it decides the order of SMT keys in validation answers.
    pub fn sorted_keys(&self) -> Vec<&ConfigKey> {
        let groups = self.groups();
        let group_rank = |k: &ConfigKey| -> Option<usize> {
            k.group
                .as_ref()
                .and_then(|g| groups.iter().position(|x| x == g))
        };
        let importance_rank = |i: Importance| match i {
            Importance::High => 0,
            Importance::Medium => 1,
            Importance::Low => 2,
        };
        let mut keys: Vec<&ConfigKey> = self.keys.iter().collect();
        keys.sort_by(|a, b| {
            group_rank(a)
                .cmp(&group_rank(b))
                .then(a.order_in_group.cmp(&b.order_in_group))
                .then(b.is_required().cmp(&a.is_required()))
                .then(importance_rank(a.importance).cmp(&importance_rank(b.importance)))
                .then_with(|| java_compare(&a.name, &b.name))
        });
        keys
    }

    /// Kafka's `ConfigDef.embed`: adds every key of `child` (in [`ConfigDef::sorted_keys`]
    /// order) under `key_prefix`, in group `group_prefix` (or `group_prefix: <child group>`),
    /// numbering orders from `starting_order`. Validators keep reporting the unprefixed name.
    pub fn embed(
        &mut self,
        key_prefix: &str,
        group_prefix: &str,
        starting_order: i32,
        child: &ConfigDef,
    ) {
        for (order, key) in (starting_order..).zip(child.sorted_keys()) {
            let mut embedded = key.clone();
            embedded.name = format!("{key_prefix}{}", key.name);
            embedded.validator = key.validator.clone().map(|inner| Validator::Embedded {
                prefix: key_prefix.to_owned(),
                inner: Box::new(inner),
            });
            embedded.group = Some(match &key.group {
                Some(group) => format!("{group_prefix}: {group}"),
                None => group_prefix.to_owned(),
            });
            embedded.order_in_group = order;
            embedded.dependents = key
                .dependents
                .iter()
                .map(|d| format!("{key_prefix}{d}"))
                .collect();
            self.add(embedded);
        }
    }

    /// Parses a flat string map into typed values, applying defaults.
    ///
    /// # Errors
    /// Every problem found, in definition order, in Kafka's words (`Missing required
    /// configuration "k" which has no default value.`, `Invalid value v for configuration k:
    /// reason`). Unlike Kafka, which stops at the first, all are collected.
    pub fn parse(&self, props: &BTreeMap<String, String>) -> Result<ParsedConfig, Vec<String>> {
        let mut values = BTreeMap::new();
        let mut errors = Vec::new();
        for key in &self.keys {
            let value = match props.get(&key.name) {
                Some(raw) => match parse_type(&key.name, Some(raw), key.config_type, &any_class) {
                    Ok(value) => value,
                    Err(e) => {
                        errors.push(e);
                        continue;
                    }
                },
                None => match key.default_value() {
                    Some(value) => value,
                    None => {
                        errors.push(missing_required(&key.name));
                        continue;
                    }
                },
            };
            if let Some(validator) = &key.validator {
                if let Err(e) = validator.ensure_valid(&key.name, &value) {
                    errors.push(e);
                    continue;
                }
            }
            values.insert(key.name.clone(), value);
        }
        if errors.is_empty() {
            Ok(ParsedConfig {
                values,
                originals: props.clone(),
            })
        } else {
            Err(errors)
        }
    }

    /// Validates a config the way Kafka's `ConfigDef.validate` does: one result per defined
    /// key, in definition order, each with its rendered value and every error. A `None` value
    /// is a key supplied as JSON `null`: it counts as set (so no "missing" error) and parses
    /// to null. Keys not defined here are ignored.
    pub fn validate(&self, props: &BTreeMap<String, Option<String>>) -> Vec<ConfigValueInfo> {
        self.validate_values(props, &any_class)
            .iter()
            .map(ValidatedValue::info)
            .collect()
    }

    /// [`ConfigDef::validate`] keeping typed values, with CLASS names looked up through
    /// `resolve_class`.
    pub(crate) fn validate_values(
        &self,
        props: &BTreeMap<String, Option<String>>,
        resolve_class: ClassResolver<'_>,
    ) -> Vec<ValidatedValue> {
        self.keys
            .iter()
            .map(|key| {
                let mut result = ValidatedValue::bare(key.name.clone());
                result.value = match props.get(&key.name) {
                    Some(raw) => {
                        match parse_type(&key.name, raw.as_deref(), key.config_type, resolve_class)
                        {
                            Ok(value) => value,
                            Err(e) => {
                                result.errors.push(e);
                                ConfigValue::Null
                            }
                        }
                    }
                    None => key.default_value().unwrap_or_else(|| {
                        result.errors.push(missing_required(&key.name));
                        ConfigValue::Null
                    }),
                };
                if let Some(validator) = &key.validator {
                    if let Err(e) = validator.ensure_valid(&key.name, &result.value) {
                        result.errors.push(e);
                    }
                }
                result.recommended_values = key.recommended_values.clone();
                result
            })
            .collect()
    }
}

/// Java's `String.compareTo` (UTF-16 code unit order), for Kafka's name tie-break.
fn java_compare(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Kafka's message for a required key that is absent.
pub(crate) fn missing_required(name: &str) -> String {
    format!("Missing required configuration \"{name}\" which has no default value.")
}

/// A config parsed by [`ConfigDef::parse`]: typed values of every defined key (defaults
/// applied) plus the original strings, which connectors receive unchanged.
#[derive(Clone, Debug)]
pub struct ParsedConfig {
    values: BTreeMap<String, ConfigValue>,
    originals: BTreeMap<String, String>,
}

impl ParsedConfig {
    /// The typed value of a defined key.
    pub fn get(&self, name: &str) -> Option<&ConfigValue> {
        self.values.get(name)
    }

    /// A STRING, PASSWORD or CLASS value as text; `None` when null or not defined.
    pub fn get_string(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            ConfigValue::String(s) | ConfigValue::Password(s) | ConfigValue::Class(s) => {
                Some(s.clone())
            }
            _ => None,
        }
    }

    /// An INT value.
    pub fn get_int(&self, name: &str) -> Option<i32> {
        match self.get(name)? {
            ConfigValue::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A SHORT value.
    pub fn get_short(&self, name: &str) -> Option<i16> {
        match self.get(name)? {
            ConfigValue::Short(n) => Some(*n),
            _ => None,
        }
    }

    /// A LONG value (INT and SHORT values widen).
    pub fn get_long(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            ConfigValue::Long(n) => Some(*n),
            ConfigValue::Int(n) => Some(i64::from(*n)),
            ConfigValue::Short(n) => Some(i64::from(*n)),
            _ => None,
        }
    }

    /// A BOOLEAN value.
    pub fn get_bool(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            ConfigValue::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// A DOUBLE value.
    pub fn get_double(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            ConfigValue::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// A LIST value; empty when null or not defined.
    pub fn get_list(&self, name: &str) -> Vec<String> {
        match self.get(name) {
            Some(ConfigValue::List(items)) => items.clone(),
            _ => Vec::new(),
        }
    }

    /// The strings the config was parsed from, including keys the definition does not know.
    pub fn originals(&self) -> &BTreeMap<String, String> {
        &self.originals
    }

    /// The original entries under `prefix`, with the prefix removed (Kafka's
    /// `originalsWithPrefix`), e.g. a transform's own settings.
    pub fn originals_with_prefix(&self, prefix: &str) -> BTreeMap<String, String> {
        self.originals
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(prefix)
                    .map(|rest| (rest.to_owned(), v.clone()))
            })
            .collect()
    }
}

/// The answer of `PUT /connector-plugins/{p}/config/validate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfos {
    /// The `connector.class` as given.
    pub name: String,
    /// How many errors were found (see the connector validation for how they are counted).
    pub error_count: usize,
    /// Groups in display order.
    pub groups: Vec<String>,
    /// One entry per validated key.
    pub configs: Vec<ConfigInfo>,
}

/// One key of a validation answer: its definition (absent for keys nobody defines) and value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    /// The key's definition, `null` when there is none.
    pub definition: Option<ConfigKeyInfo>,
    /// The validated value.
    pub value: ConfigValueInfo,
}

/// A key's definition as REST shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigKeyInfo {
    /// The key.
    pub name: String,
    /// `BOOLEAN`, `STRING`, `INT`, `SHORT`, `LONG`, `DOUBLE`, `LIST`, `CLASS` or `PASSWORD`.
    #[serde(rename = "type")]
    pub config_type: String,
    /// True when the key has no default.
    pub required: bool,
    /// The default's string form; `null` when required or defaulting to null.
    pub default_value: Option<String>,
    /// `HIGH`, `MEDIUM` or `LOW`.
    pub importance: String,
    /// The documentation.
    pub documentation: String,
    /// The group, `null` when none.
    pub group: Option<String>,
    /// `NONE`, `SHORT`, `MEDIUM` or `LONG`.
    pub width: String,
    /// The label.
    pub display_name: String,
    /// Dependent keys.
    pub dependents: Vec<String>,
    /// Order in group, `-1` when none. Kafka writes `order` and reads `order_in_group`; both
    /// are read here.
    #[serde(rename = "order", alias = "order_in_group")]
    pub order: i32,
}

/// A key's validated value as REST shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigValueInfo {
    /// The key.
    pub name: String,
    /// The rendered value; `null` when there is none.
    pub value: Option<String>,
    /// Suggested values.
    pub recommended_values: Vec<String>,
    /// Errors found.
    pub errors: Vec<String>,
    /// Whether UIs should show the key.
    pub visible: bool,
}

/// A key's definition in REST form (`GET /connector-plugins/{p}/config`, validation answers).
pub fn key_info(key: &ConfigKey) -> ConfigKeyInfo {
    key_info_prefixed(key, "")
}

/// [`key_info`] with the name prefixed (converter keys reported as `key.converter.<k>`).
pub(crate) fn key_info_prefixed(key: &ConfigKey, prefix: &str) -> ConfigKeyInfo {
    let default_value = key.default_value().and_then(|v| v.render());
    ConfigKeyInfo {
        name: format!("{prefix}{}", key.name),
        config_type: key.config_type.as_str().to_owned(),
        required: key.is_required(),
        default_value,
        importance: key.importance.as_str().to_owned(),
        documentation: key.documentation.clone(),
        group: key.group.clone(),
        width: key.width.as_str().to_owned(),
        display_name: key.display_name.clone(),
        dependents: key.dependents.clone(),
        order: key.order_in_group,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, raw: &str, t: ConfigType) -> Result<ConfigValue, String> {
        parse_type(name, Some(raw), t, &any_class)
    }

    fn props(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn opt_props(list: &[(&str, Option<&str>)]) -> BTreeMap<String, Option<String>> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect()
    }

    fn check(v: Validator, name: &str, value: ConfigValue) -> Result<(), String> {
        v.ensure_valid(name, &value)
    }

    #[test]
    fn type_names() {
        let all = [
            (ConfigType::Boolean, "BOOLEAN"),
            (ConfigType::String, "STRING"),
            (ConfigType::Int, "INT"),
            (ConfigType::Short, "SHORT"),
            (ConfigType::Long, "LONG"),
            (ConfigType::Double, "DOUBLE"),
            (ConfigType::List, "LIST"),
            (ConfigType::Class, "CLASS"),
            (ConfigType::Password, "PASSWORD"),
        ];
        for (t, name) in all {
            assert_eq!(t.to_string(), name);
        }
        assert_eq!(Importance::Medium.as_str(), "MEDIUM");
        assert_eq!(Width::None.as_str(), "NONE");
    }

    #[test]
    fn boolean_parsing() {
        assert_eq!(
            parse("b", " TRUE ", ConfigType::Boolean),
            Ok(ConfigValue::Boolean(true))
        );
        assert_eq!(
            parse("b", "False", ConfigType::Boolean),
            Ok(ConfigValue::Boolean(false))
        );
        assert_eq!(
            parse("b", "yes", ConfigType::Boolean),
            Err(
                "Invalid value yes for configuration b: Expected value to be either true or false"
                    .to_owned()
            )
        );
    }

    #[test]
    fn integer_parsing_and_errors() {
        assert_eq!(
            parse("n", " 42 ", ConfigType::Int),
            Ok(ConfigValue::Int(42))
        );
        assert_eq!(parse("n", "+7", ConfigType::Int), Ok(ConfigValue::Int(7)));
        assert_eq!(
            parse("n", "-3", ConfigType::Short),
            Ok(ConfigValue::Short(-3))
        );
        assert_eq!(
            parse("n", "9999999999", ConfigType::Long),
            Ok(ConfigValue::Long(9_999_999_999))
        );
        assert_eq!(
            parse("tasks.max", "abc", ConfigType::Int),
            Err(
                "Invalid value abc for configuration tasks.max: Not a number of type INT"
                    .to_owned()
            )
        );
        assert_eq!(
            parse("n", "2147483648", ConfigType::Int),
            Err(
                "Invalid value 2147483648 for configuration n: Not a number of type INT".to_owned()
            )
        );
        assert_eq!(
            parse("n", "40000", ConfigType::Short),
            Err("Invalid value 40000 for configuration n: Not a number of type SHORT".to_owned())
        );
        assert_eq!(
            parse("n", "1.5", ConfigType::Long),
            Err("Invalid value 1.5 for configuration n: Not a number of type LONG".to_owned())
        );
        // The raw, untrimmed value is what the message shows.
        assert_eq!(
            parse("n", " x ", ConfigType::Int),
            Err("Invalid value  x  for configuration n: Not a number of type INT".to_owned())
        );
    }

    #[test]
    fn double_parsing_and_rendering() {
        assert_eq!(
            parse("d", "1", ConfigType::Double),
            Ok(ConfigValue::Double(1.0))
        );
        assert_eq!(
            parse("d", "2.5e3", ConfigType::Double),
            Ok(ConfigValue::Double(2500.0))
        );
        assert_eq!(
            parse("d", "1.5f", ConfigType::Double),
            Ok(ConfigValue::Double(1.5))
        );
        assert_eq!(
            parse("d", "-Infinity", ConfigType::Double),
            Ok(ConfigValue::Double(f64::NEG_INFINITY))
        );
        assert_eq!(
            parse("d", "inf", ConfigType::Double),
            Err("Invalid value inf for configuration d: Not a number of type DOUBLE".to_owned())
        );
        assert_eq!(
            parse("d", "abc", ConfigType::Double),
            Err("Invalid value abc for configuration d: Not a number of type DOUBLE".to_owned())
        );
        assert_eq!(ConfigValue::Double(1.0).render().as_deref(), Some("1.0"));
        assert_eq!(ConfigValue::Double(0.25).render().as_deref(), Some("0.25"));
        assert_eq!(
            ConfigValue::Double(1e10).render().as_deref(),
            Some("1.0E10")
        );
        assert_eq!(
            ConfigValue::Double(1.5e-5).render().as_deref(),
            Some("1.5E-5")
        );
        assert_eq!(java_double_string(1234567.0), "1234567.0");
        assert_eq!(java_double_string(f64::NAN), "NaN");
    }

    #[test]
    fn string_list_class_password_parsing() {
        assert_eq!(
            parse("s", "  text  ", ConfigType::String),
            Ok(ConfigValue::String("text".into()))
        );
        assert_eq!(
            parse("l", "", ConfigType::List),
            Ok(ConfigValue::List(vec![]))
        );
        assert_eq!(
            parse("l", "   ", ConfigType::List),
            Ok(ConfigValue::List(vec![]))
        );
        assert_eq!(
            parse("l", " a , b,c ", ConfigType::List),
            Ok(ConfigValue::List(vec!["a".into(), "b".into(), "c".into()]))
        );
        assert_eq!(
            parse("l", "a,,b,", ConfigType::List),
            Ok(ConfigValue::List(vec![
                "a".into(),
                "".into(),
                "b".into(),
                "".into()
            ]))
        );
        assert_eq!(
            parse("c", " com.example.Foo ", ConfigType::Class),
            Ok(ConfigValue::Class("com.example.Foo".into()))
        );
        assert_eq!(
            parse("p", " secret ", ConfigType::Password),
            Ok(ConfigValue::Password("secret".into()))
        );
        assert_eq!(
            ConfigValue::Password("secret".into()).render().as_deref(),
            Some("[hidden]")
        );
        assert_eq!(
            ConfigValue::List(vec!["a".into(), "b".into()])
                .render()
                .as_deref(),
            Some("a,b")
        );
        assert_eq!(ConfigValue::Null.render(), None);
        assert_eq!(
            ConfigValue::Class("a.B".into()).render().as_deref(),
            Some("a.B")
        );
        assert_eq!(ConfigValue::Class("a.B".into()).java_string(), "class a.B");
    }

    #[test]
    fn unknown_class_message() {
        let none: ClassResolver<'_> = &|_, _| None;
        assert_eq!(
            parse_type("key.converter", Some("Nope"), ConfigType::Class, none),
            Err("Invalid value Nope for configuration key.converter: Class Nope could not be found.".to_owned())
        );
    }

    #[test]
    fn null_parses_to_null() {
        assert_eq!(
            parse_type("n", None, ConfigType::Int, &any_class),
            Ok(ConfigValue::Null)
        );
    }

    #[test]
    fn non_empty_string() {
        let v = Validator::NonEmptyString;
        assert_eq!(
            check(v.clone(), "topic", ConfigValue::String(String::new())),
            Err("Invalid value  for configuration topic: String must be non-empty".to_owned())
        );
        assert_eq!(
            check(v.clone(), "topic", ConfigValue::String("   ".into())),
            Err("Invalid value     for configuration topic: String must be non-empty".to_owned())
        );
        assert!(check(v.clone(), "topic", ConfigValue::String("t".into())).is_ok());
        assert!(check(v, "topic", ConfigValue::Null).is_ok());
    }

    #[test]
    fn name_validator() {
        let v = Validator::NonEmptyStringWithoutControlChars;
        assert_eq!(
            check(v.clone(), "name", ConfigValue::String(String::new())),
            Err("Invalid value  for configuration name: String may not be empty".to_owned())
        );
        assert_eq!(
            check(v.clone(), "name", ConfigValue::String("a\nb\rc".into())),
            Err("Invalid value a\nb\rc for configuration name: String may not contain control sequences but had the following ASCII chars: 10, 13".to_owned())
        );
        assert_eq!(
            check(v.clone(), "name", ConfigValue::String("x\u{85}".into())),
            Err("Invalid value x\u{85} for configuration name: String may not contain control sequences but had the following ASCII chars: 133".to_owned())
        );
        assert!(check(
            v.clone(),
            "name",
            ConfigValue::String("a/b\\?#%+&= ünï".into())
        )
        .is_ok());
        assert!(check(v, "name", ConfigValue::Null).is_ok());
    }

    #[test]
    fn range_validators() {
        assert_eq!(
            check(Validator::AtLeast(1.0), "tasks.max", ConfigValue::Int(0)),
            Err("Invalid value 0 for configuration tasks.max: Value must be at least 1".to_owned())
        );
        assert_eq!(
            check(Validator::AtLeast(0.5), "d", ConfigValue::Double(0.25)),
            Err("Invalid value 0.25 for configuration d: Value must be at least 0.5".to_owned())
        );
        assert_eq!(
            check(Validator::AtLeast(1.0), "tasks.max", ConfigValue::Null),
            Err(
                "Invalid value null for configuration tasks.max: Value must be non-null".to_owned()
            )
        );
        assert_eq!(
            check(Validator::Between(1.0, 10.0), "n", ConfigValue::Long(11)),
            Err("Invalid value 11 for configuration n: Value must be no more than 10".to_owned())
        );
        assert_eq!(
            check(Validator::Between(1.0, 10.0), "n", ConfigValue::Short(0)),
            Err("Invalid value 0 for configuration n: Value must be at least 1".to_owned())
        );
        assert!(check(Validator::Between(1.0, 10.0), "n", ConfigValue::Int(10)).is_ok());
    }

    #[test]
    fn one_of_validators() {
        let v = Validator::OneOf(vec!["none", "restart"]);
        assert_eq!(
            check(v.clone(), "config.action.reload", ConfigValue::String("RESTART".into())),
            Err("Invalid value RESTART for configuration config.action.reload: String must be one of: none, restart".to_owned())
        );
        assert_eq!(
            check(v.clone(), "k", ConfigValue::Null),
            Err(
                "Invalid value null for configuration k: String must be one of: none, restart"
                    .to_owned()
            )
        );
        assert!(check(v, "k", ConfigValue::String("none".into())).is_ok());

        let v =
            Validator::OneOfCaseInsensitive(vec!["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]);
        assert!(check(v.clone(), "k", ConfigValue::String("ssl".into())).is_ok());
        // Kafka's own documentation shows this HashSet order for security.protocol.
        assert_eq!(
            check(v, "security.protocol", ConfigValue::String("x".into())),
            Err("Invalid value x for configuration security.protocol: String must be one of (case insensitive): SASL_SSL, PLAINTEXT, SSL, SASL_PLAINTEXT".to_owned())
        );
    }

    #[test]
    fn java_hash_order_matches_java() {
        let order = |names: &[&str]| -> Vec<String> {
            java_hash_order(names.iter().map(|n| ((*n).to_owned(), ())).collect())
                .into_iter()
                .map(|(n, ())| n)
                .collect()
        };
        // Both orders appear in Kafka's generated documentation.
        assert_eq!(
            order(&["DISABLED", "UPGRADE", "DOWNGRADE", "BIDIRECTIONAL"]),
            vec!["DISABLED", "DOWNGRADE", "UPGRADE", "BIDIRECTIONAL"]
        );
        assert_eq!(
            order(&["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]),
            vec!["SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"]
        );
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
    }

    #[test]
    fn list_validators() {
        assert_eq!(
            check(
                Validator::UniqueList,
                "transforms",
                ConfigValue::List(vec!["a".into(), "b".into(), "a".into()])
            ),
            Err(
                "Invalid value [a, b, a] for configuration transforms: Duplicate alias provided."
                    .to_owned()
            )
        );
        assert_eq!(
            check(Validator::UniqueList, "transforms", ConfigValue::Null),
            Err(
                "Invalid value null for configuration transforms: entry must be non null"
                    .to_owned()
            )
        );
        assert!(check(
            Validator::UniqueList,
            "t",
            ConfigValue::List(vec!["a".into()])
        )
        .is_ok());
        assert_eq!(
            check(Validator::NonEmptyList, "fields", ConfigValue::List(vec![])),
            Err("Invalid value [] for configuration fields: Empty list".to_owned())
        );
        assert_eq!(
            check(Validator::NonEmptyList, "fields", ConfigValue::Null),
            Err("Invalid value null for configuration fields: Empty list".to_owned())
        );
    }

    #[test]
    fn regex_validator() {
        assert!(check(
            Validator::Regex,
            "topics.regex",
            ConfigValue::String("topic-.*".into())
        )
        .is_ok());
        assert!(check(
            Validator::Regex,
            "r",
            ConfigValue::String("(?!foo).*".into())
        )
        .is_ok());
        let err = check(
            Validator::Regex,
            "topics.regex",
            ConfigValue::String("(".into()),
        )
        .unwrap_err();
        assert!(
            err.starts_with("Invalid value ( for configuration topics.regex: Invalid regex: "),
            "{err}"
        );
    }

    #[test]
    fn composite_null_or_non_null_embedded_custom() {
        let v = Validator::NullOr(Box::new(Validator::AtLeast(0.0)));
        assert!(check(v.clone(), "i", ConfigValue::Null).is_ok());
        assert_eq!(
            check(v, "i", ConfigValue::Long(-1)),
            Err("Invalid value -1 for configuration i: Value must be at least 0".to_owned())
        );
        assert_eq!(
            check(Validator::NonNull, "h", ConfigValue::Null),
            Err("Invalid value null for configuration h: entry must be non null".to_owned())
        );
        let all = Validator::All(vec![Validator::NonNull, Validator::NonEmptyString]);
        assert_eq!(
            check(all, "h", ConfigValue::String(String::new())),
            Err("Invalid value  for configuration h: String must be non-empty".to_owned())
        );
        let embedded = Validator::Embedded {
            prefix: "transforms.r.".into(),
            inner: Box::new(Validator::NonEmptyString),
        };
        assert_eq!(
            check(
                embedded,
                "transforms.r.replacement",
                ConfigValue::String(String::new())
            ),
            Err(
                "Invalid value  for configuration replacement: String must be non-empty".to_owned()
            )
        );
        let custom = Validator::Custom(Arc::new(|_, v| match v {
            ConfigValue::List(items) if items.len() > 1 => Err("too many".to_owned()),
            _ => Ok(()),
        }));
        assert_eq!(
            check(custom, "l", ConfigValue::List(vec!["a".into(), "b".into()])),
            Err("Invalid value [a, b] for configuration l: too many".to_owned())
        );
    }

    fn sample_def() -> ConfigDef {
        ConfigDef::new()
            .define(ConfigKey::new(
                "req",
                ConfigType::String,
                DefaultValue::Required,
                Importance::High,
                "required",
            ))
            .define(
                ConfigKey::new(
                    "n",
                    ConfigType::Int,
                    DefaultValue::Value("1".into()),
                    Importance::High,
                    "n",
                )
                .validator(Validator::AtLeast(1.0)),
            )
            .define(ConfigKey::new(
                "l",
                ConfigType::List,
                DefaultValue::Value("x, y".into()),
                Importance::Low,
                "l",
            ))
            .define(ConfigKey::new(
                "opt",
                ConfigType::Long,
                DefaultValue::Null,
                Importance::Low,
                "opt",
            ))
            .define(ConfigKey::new(
                "pw",
                ConfigType::Password,
                DefaultValue::Null,
                Importance::Low,
                "pw",
            ))
            .define(ConfigKey::new(
                "flag",
                ConfigType::Boolean,
                DefaultValue::Value("false".into()),
                Importance::Low,
                "flag",
            ))
            .define(ConfigKey::new(
                "ratio",
                ConfigType::Double,
                DefaultValue::Value("0.5".into()),
                Importance::Low,
                "ratio",
            ))
            .define(ConfigKey::new(
                "s",
                ConfigType::Short,
                DefaultValue::Value("3".into()),
                Importance::Low,
                "s",
            ))
    }

    #[test]
    fn parse_applies_defaults_and_getters() {
        let parsed = sample_def()
            .parse(&props(&[
                ("req", " r "),
                ("pw", "secret"),
                ("extra.key", "kept"),
            ]))
            .expect("valid");
        assert_eq!(parsed.get_string("req").as_deref(), Some("r"));
        assert_eq!(parsed.get_int("n"), Some(1));
        assert_eq!(parsed.get_list("l"), vec!["x".to_owned(), "y".to_owned()]);
        assert_eq!(parsed.get_long("opt"), None);
        assert_eq!(parsed.get("opt"), Some(&ConfigValue::Null));
        assert_eq!(parsed.get_string("pw").as_deref(), Some("secret"));
        assert_eq!(parsed.get_bool("flag"), Some(false));
        assert_eq!(parsed.get_double("ratio"), Some(0.5));
        assert_eq!(parsed.get_short("s"), Some(3));
        assert_eq!(parsed.get_long("n"), Some(1));
        assert!(parsed.get_list("opt").is_empty());
        assert_eq!(
            parsed.originals().get("extra.key").map(String::as_str),
            Some("kept")
        );
        assert_eq!(
            parsed.originals_with_prefix("extra."),
            props(&[("key", "kept")])
        );
    }

    #[test]
    fn parse_collects_every_error() {
        let errors = sample_def()
            .parse(&props(&[("n", "0"), ("flag", "maybe")]))
            .unwrap_err();
        assert_eq!(
            errors,
            vec![
                "Missing required configuration \"req\" which has no default value.".to_owned(),
                "Invalid value 0 for configuration n: Value must be at least 1".to_owned(),
                "Invalid value maybe for configuration flag: Expected value to be either true or false".to_owned(),
            ]
        );
    }

    #[test]
    fn validate_reports_every_key_in_order() {
        let infos = sample_def().validate(&opt_props(&[
            ("n", Some("abc")),
            ("pw", Some("secret")),
            ("opt", None),
        ]));
        let names: Vec<&str> = infos.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            vec!["req", "n", "l", "opt", "pw", "flag", "ratio", "s"]
        );
        assert_eq!(infos[0].value, None);
        assert_eq!(
            infos[0].errors,
            vec!["Missing required configuration \"req\" which has no default value.".to_owned()]
        );
        // An unparsable value is reported, and the validator then sees null, as in Kafka.
        assert_eq!(
            infos[1].errors,
            vec![
                "Invalid value abc for configuration n: Not a number of type INT".to_owned(),
                "Invalid value null for configuration n: Value must be non-null".to_owned(),
            ]
        );
        assert_eq!(infos[1].value, None);
        assert_eq!(infos[2].value.as_deref(), Some("x,y"));
        assert_eq!(infos[3].value, None);
        assert!(infos[3].errors.is_empty());
        assert_eq!(infos[4].value.as_deref(), Some("[hidden]"));
        assert_eq!(infos[6].value.as_deref(), Some("0.5"));
        assert!(infos.iter().all(|i| i.visible));
    }

    #[test]
    fn key_info_renders_defaults() {
        let def = sample_def();
        let req = key_info(def.get("req").unwrap());
        assert!(req.required);
        assert_eq!(req.default_value, None);
        assert_eq!(req.order, -1);
        assert_eq!(req.group, None);
        assert_eq!(req.width, "NONE");
        assert_eq!(req.display_name, "req");
        assert_eq!(req.config_type, "STRING");
        let list = key_info(def.get("l").unwrap());
        assert!(!list.required);
        assert_eq!(list.default_value.as_deref(), Some("x,y"));
        assert_eq!(key_info(def.get("opt").unwrap()).default_value, None);
        assert_eq!(
            key_info(def.get("ratio").unwrap()).default_value.as_deref(),
            Some("0.5")
        );
        assert_eq!(
            key_info(def.get("flag").unwrap()).default_value.as_deref(),
            Some("false")
        );
    }

    #[test]
    fn key_info_json_shape() {
        let key = ConfigKey::new(
            "topics",
            ConfigType::List,
            DefaultValue::Value(String::new()),
            Importance::High,
            "doc",
        )
        .group("Common", 4)
        .width(Width::Long)
        .display_name("Topics");
        let json = serde_json::to_string(&key_info(&key)).unwrap();
        assert_eq!(
            json,
            r#"{"name":"topics","type":"LIST","required":false,"default_value":"","importance":"HIGH","documentation":"doc","group":"Common","width":"LONG","display_name":"Topics","dependents":[],"order":4}"#
        );
        let back: ConfigKeyInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, key_info(&key));
        let legacy = json.replace("\"order\"", "\"order_in_group\"");
        assert_eq!(
            serde_json::from_str::<ConfigKeyInfo>(&legacy)
                .unwrap()
                .order,
            4
        );
    }

    #[test]
    fn define_merge_and_groups() {
        let a = ConfigDef::new()
            .define(
                ConfigKey::new(
                    "x",
                    ConfigType::Int,
                    DefaultValue::Null,
                    Importance::Low,
                    "first",
                )
                .group("G1", 1),
            )
            .define(ConfigKey::new(
                "x",
                ConfigType::Int,
                DefaultValue::Null,
                Importance::Low,
                "second",
            ));
        assert_eq!(a.keys().len(), 1);
        assert_eq!(a.get("x").unwrap().documentation, "first");
        let b = ConfigDef::new()
            .define(ConfigKey::new(
                "x",
                ConfigType::Int,
                DefaultValue::Null,
                Importance::Low,
                "other",
            ))
            .define(
                ConfigKey::new(
                    "y",
                    ConfigType::Int,
                    DefaultValue::Null,
                    Importance::Low,
                    "y",
                )
                .group("G2", 1),
            )
            .define(
                ConfigKey::new(
                    "z",
                    ConfigType::Int,
                    DefaultValue::Null,
                    Importance::Low,
                    "z",
                )
                .group("G1", 2),
            );
        let merged = a.merge(&b);
        let names: Vec<&str> = merged.keys().iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, vec!["x", "y", "z"]);
        assert_eq!(merged.get("x").unwrap().documentation, "first");
        assert_eq!(merged.groups(), vec!["G1".to_owned(), "G2".to_owned()]);
    }

    #[test]
    fn sorted_keys_and_embed() {
        let child = ConfigDef::new()
            .define(ConfigKey::new(
                "zeta",
                ConfigType::String,
                DefaultValue::Null,
                Importance::Medium,
                "",
            ))
            .define(
                ConfigKey::new(
                    "regex",
                    ConfigType::String,
                    DefaultValue::Required,
                    Importance::High,
                    "",
                )
                .validator(Validator::Regex),
            )
            .define(ConfigKey::new(
                "alpha",
                ConfigType::String,
                DefaultValue::Null,
                Importance::Medium,
                "",
            ))
            .define(ConfigKey::new(
                "low",
                ConfigType::String,
                DefaultValue::Null,
                Importance::Low,
                "",
            ))
            .define(
                ConfigKey::new(
                    "grouped",
                    ConfigType::String,
                    DefaultValue::Null,
                    Importance::High,
                    "",
                )
                .group("Inner", 1),
            );
        let sorted: Vec<&str> = child
            .sorted_keys()
            .iter()
            .map(|k| k.name.as_str())
            .collect();
        assert_eq!(sorted, vec!["regex", "alpha", "zeta", "low", "grouped"]);

        let mut parent = ConfigDef::new();
        parent.embed("transforms.r.", "Transforms: r", 1, &child);
        let names: Vec<&str> = parent.keys().iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "transforms.r.regex",
                "transforms.r.alpha",
                "transforms.r.zeta",
                "transforms.r.low",
                "transforms.r.grouped"
            ]
        );
        let orders: Vec<i32> = parent.keys().iter().map(|k| k.order_in_group).collect();
        assert_eq!(orders, vec![1, 2, 3, 4, 5]);
        assert_eq!(
            parent.get("transforms.r.grouped").unwrap().group.as_deref(),
            Some("Transforms: r: Inner")
        );
        assert_eq!(
            parent.get("transforms.r.alpha").unwrap().group.as_deref(),
            Some("Transforms: r")
        );
        // Validators of embedded keys name the key without its prefix, as Kafka's do; parse
        // errors and missing-key errors use the full name.
        let infos = parent.validate(&opt_props(&[("transforms.r.regex", Some("("))]));
        assert!(infos[0].errors[0]
            .starts_with("Invalid value ( for configuration regex: Invalid regex: "));
        // A missing value is then checked as null by the validator too.
        let infos = parent.validate(&BTreeMap::new());
        assert_eq!(
            infos[0].errors,
            vec![
                "Missing required configuration \"transforms.r.regex\" which has no default value."
                    .to_owned(),
                "Invalid value null for configuration regex: Invalid regex: null".to_owned(),
            ]
        );
    }
}
