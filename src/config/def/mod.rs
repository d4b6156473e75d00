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

mod infos;
mod java_text;
mod types;
mod validator;
mod value;

pub use infos::*;
pub use java_text::*;
pub use types::*;
pub use validator::*;
pub use value::*;

/// One key written as a row of a table: name, type, default as text (`None`: required;
/// [`NULL_DEFAULT`]: null), importance, documentation.
pub type KeyRow = (
    &'static str,
    ConfigType,
    Option<&'static str>,
    Importance,
    &'static str,
);

/// The marker for a default of `null` in a [`KeyRow`].
pub const NULL_DEFAULT: Option<&str> = Some("\0");

/// A config key with a default given as text (`None`: no default, the key is optional and null).
pub fn key(
    name: &str,
    config_type: ConfigType,
    default: Option<&str>,
    importance: Importance,
    doc: &str,
) -> ConfigKey {
    let default = match default {
        Some(v) => DefaultValue::Value(v.into()),
        None => DefaultValue::Null,
    };
    ConfigKey::new(name, config_type, default, importance, doc)
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

    /// The key a [`KeyRow`] describes.
    pub fn from_row(row: &KeyRow) -> Self {
        let (name, config_type, default, importance, doc) = *row;
        let default = match default {
            None => DefaultValue::Required,
            Some("\0") => DefaultValue::Null,
            Some(v) => DefaultValue::Value(v.to_string()),
        };
        ConfigKey::new(name, config_type, default, importance, doc)
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

    /// Adds the keys of a table in order, builder style.
    pub fn define_rows(mut self, rows: &[KeyRow]) -> Self {
        for row in rows {
            self.add(ConfigKey::from_row(row));
        }
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

/// `ParsedConfig` getters of one Rust type: the value when it is one of the listed
/// [`ConfigValue`] variants (converted losslessly), else `None`.
macro_rules! typed_getters {
    ($($(#[$doc:meta])* $getter:ident -> $ty:ty { $($variant:ident),+ })+) => {
        $(
            $(#[$doc])*
            pub fn $getter(&self, name: &str) -> Option<$ty> {
                match self.get(name)? {
                    $(ConfigValue::$variant(v) => Some(<$ty>::from(*v)),)+
                    _ => None,
                }
            }
        )+
    };
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

    typed_getters! {
        /// An INT value.
        get_int -> i32 { Int }
        /// A SHORT value.
        get_short -> i16 { Short }
        /// A LONG value (INT and SHORT values widen).
        get_long -> i64 { Long, Int, Short }
        /// A BOOLEAN value.
        get_bool -> bool { Boolean }
        /// A DOUBLE value.
        get_double -> f64 { Double }
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

#[cfg(test)]
mod tests;
