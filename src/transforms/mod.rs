//! Kafka Connect's single message transforms (SMTs) and predicates: the built-in set of
//! `org.apache.kafka.connect.transforms`, with Kafka's class names, config keys, defaults,
//! validators and error messages, as pure synchronous code over [`ConnectRecord`]s.
//!
//! * [`transformation_classes`], [`transformation_def`], [`resolve_transformation`] and their
//!   predicate twins are the plugin registry the config validation and `GET /connector-plugins`
//!   use; names resolve by full class name, simple class name, or simple name without the
//!   `Transformation`/`Predicate` suffix when that is unambiguous (Kafka's alias rules), so the
//!   `$Key`/`$Value` variants need their full names.
//! * [`TransformChain`] is a connector's chain, built from its `transforms` and `predicates`
//!   keys and applied record by record.
//!
//! Each transformation works on schema'd data (a [`Struct`] with its schema) and on schemaless
//! data (a map with string keys) as Kafka's does. Differences from Kafka that users can see:
//! schemaless maps keep their insertion order where Kafka copies them into a `HashMap` (whose
//! order is arbitrary); regular expressions use the `fancy-regex` dialect, which covers Java's
//! look-around and back-references but not every Java construct; error texts that in Java come
//! from a `NullPointerException` or an object's identity (`InsertionSpec@1b6d3586`) are replaced
//! by readable ones.

pub mod cast;
pub mod datefmt;
pub mod extract_field;
pub mod flatten;
pub mod headers;
pub mod hoist_field;
pub mod insert_field;
pub mod mask_field;
pub mod predicates;
pub mod replace_field;
pub mod routers;
pub mod set_schema_metadata;
pub mod timestamp_converter;
pub mod value_to_key;

use std::collections::BTreeMap;
use std::fmt;

use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, DefaultValue, Importance, ParsedConfig,
};
use crate::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};
use crate::record::ConnectRecord;

/// The package of the built-in transformations.
pub const TRANSFORMS_PACKAGE: &str = "org.apache.kafka.connect.transforms";

/// What a transformation may need to know about a record beyond the record itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordContext {
    /// The record's offset in its partition: set for records on their way to a sink task,
    /// `None` for records coming from a source task (Kafka's `SinkRecord` vs `SourceRecord`).
    pub kafka_offset: Option<i64>,
}

impl RecordContext {
    /// The context of a record delivered to a sink task.
    pub fn sink(kafka_offset: i64) -> Self {
        RecordContext {
            kafka_offset: Some(kafka_offset),
        }
    }

    /// The context of a record produced by a source task.
    pub fn source() -> Self {
        RecordContext { kafka_offset: None }
    }
}

/// One configured single message transform.
pub trait Transformation: Send + Sync + fmt::Debug {
    /// Transforms one record: `Ok(None)` drops it, `Err` carries Kafka's message.
    ///
    /// # Errors
    /// The message of the exception Kafka's transformation would throw.
    fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, String>;
}

/// One configured predicate.
pub trait Predicate: Send + Sync + fmt::Debug {
    /// Whether the record matches.
    fn test(&self, record: &ConnectRecord) -> bool;
}

/// Which part of the record a `$Key` or `$Value` transformation works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The record key (`<Transform>$Key`).
    Key,
    /// The record value (`<Transform>$Value`).
    Value,
}

impl Side {
    /// The schema of this side of the record.
    pub fn schema(self, record: &ConnectRecord) -> Option<&SchemaRef> {
        match self {
            Side::Key => record.key_schema.as_ref(),
            Side::Value => record.value_schema.as_ref(),
        }
    }

    /// The data of this side of the record.
    pub fn value(self, record: &ConnectRecord) -> &Value {
        match self {
            Side::Key => &record.key,
            Side::Value => &record.value,
        }
    }

    /// The record with this side replaced (Kafka's `newRecord` of the variant).
    pub fn with(
        self,
        mut record: ConnectRecord,
        schema: Option<SchemaRef>,
        value: Value,
    ) -> ConnectRecord {
        match self {
            Side::Key => {
                record.key_schema = schema;
                record.key = value;
            }
            Side::Value => {
                record.value_schema = schema;
                record.value = value;
            }
        }
        record
    }

    /// The inner class suffix: `Key` or `Value`.
    pub fn suffix(self) -> &'static str {
        match self {
            Side::Key => "Key",
            Side::Value => "Value",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the transformations: Kafka's `Requirements`, `SchemaUtil`, map access.

/// Java's `getClass().getName()` of a value (`java.lang.Integer`), `null` for null.
pub(crate) fn class_name(value: &Value) -> &'static str {
    let c = value.java_class();
    c.strip_prefix("class ").unwrap_or(c)
}

/// Kafka's `Requirements.requireStruct`.
pub(crate) fn require_struct<'a>(value: &'a Value, purpose: &str) -> Result<&'a Struct, String> {
    match value {
        Value::Struct(s) => Ok(s),
        other => Err(format!(
            "Only Struct objects supported for [{purpose}], found: {}",
            class_name(other)
        )),
    }
}

/// Kafka's `Requirements.requireStructOrNull`.
pub(crate) fn require_struct_or_null<'a>(
    value: &'a Value,
    purpose: &str,
) -> Result<Option<&'a Struct>, String> {
    if value.is_null() {
        Ok(None)
    } else {
        require_struct(value, purpose).map(Some)
    }
}

/// A schemaless map, as Kafka's `Map<String, Object>`.
pub(crate) type Entries = Vec<(Value, Value)>;

/// Kafka's `Requirements.requireMap`.
pub(crate) fn require_map<'a>(value: &'a Value, purpose: &str) -> Result<&'a Entries, String> {
    match value {
        Value::Map(m) => Ok(m),
        other => Err(format!(
            "Only Map objects supported in absence of schema for [{purpose}], found: {}",
            class_name(other)
        )),
    }
}

/// Kafka's `Requirements.requireMapOrNull`.
pub(crate) fn require_map_or_null<'a>(
    value: &'a Value,
    purpose: &str,
) -> Result<Option<&'a Entries>, String> {
    if value.is_null() {
        Ok(None)
    } else {
        require_map(value, purpose).map(Some)
    }
}

/// Kafka's `Requirements.requireSchema`.
pub(crate) fn require_schema<'a>(
    schema: Option<&'a SchemaRef>,
    purpose: &str,
) -> Result<&'a SchemaRef, String> {
    schema.ok_or_else(|| format!("Schema required for [{purpose}]"))
}

/// Kafka's `Requirements.requireSinkRecord`: the offset of a sink record.
pub(crate) fn require_sink_offset(ctx: &RecordContext, purpose: &str) -> Result<i64, String> {
    ctx.kafka_offset.ok_or_else(|| {
        format!("Only SinkRecord supported for [{purpose}], found: org.apache.kafka.connect.source.SourceRecord")
    })
}

/// `map.get(key)` on a schemaless map with string keys; `Null` when absent.
pub(crate) fn map_get<'a>(map: &'a Entries, key: &str) -> &'a Value {
    map.iter()
        .rev()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
        .unwrap_or(&Value::Null)
}

/// `map.put(key, value)`: replaces the value in place, or appends.
pub(crate) fn map_put(map: &mut Entries, key: &str, value: Value) {
    match map.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(entry) => entry.1 = value,
        None => map.push((Value::String(key.to_string()), value)),
    }
}

/// `map.remove(key)`.
pub(crate) fn map_remove(map: &mut Entries, key: &str) {
    map.retain(|(k, _)| k.as_str() != Some(key));
}

/// Kafka's `SchemaUtil.copySchemaBasics(source, builder)`: name, version, doc and parameters
/// (not optionality, not the default).
pub(crate) fn copy_schema_basics(source: &Schema, mut builder: SchemaBuilder) -> SchemaBuilder {
    if let Some(name) = &source.name {
        builder = builder.name(name.clone());
    }
    if let Some(version) = source.version {
        builder = builder.version(version);
    }
    if let Some(doc) = &source.doc {
        builder = builder.doc(doc.clone());
    }
    builder.parameters(&source.parameters)
}

/// Kafka's `SchemaUtil.copySchemaBasics(source)`: a builder of the same type (arrays keep their
/// item schema) with the basics copied.
pub(crate) fn copy_schema_basics_same_type(source: &Schema) -> SchemaBuilder {
    let builder = match (&source.schema_type, &source.value_schema) {
        (crate::data::SchemaType::Array, Some(items)) => SchemaBuilder::array(items.clone()),
        (t, _) => SchemaBuilder::new(*t),
    };
    copy_schema_basics(source, builder)
}

/// A struct field's value honouring `replace.null.with.default` (Kafka's `get` vs
/// `getWithoutDefault`).
pub(crate) fn field_value(s: &Struct, name: &str, replace_null_with_default: bool) -> Value {
    let v = if replace_null_with_default {
        s.get(name)
    } else {
        s.get_without_default(name)
    };
    v.cloned().unwrap_or(Value::Null)
}

/// `Struct.put(name, value)` with Kafka's validation message on failure.
pub(crate) fn put(s: &mut Struct, name: &str, value: Value) -> Result<(), String> {
    s.put(name, value).map(|_| ()).map_err(|e| e.0)
}

/// Parses a transformation's config the way Kafka's `SimpleConfig` does, reporting the first
/// problem in definition order.
pub(crate) fn parse_config(
    def: &ConfigDef,
    props: &BTreeMap<String, String>,
) -> Result<ParsedConfig, String> {
    def.parse(props)
        .map_err(|errors| errors.into_iter().next().unwrap_or_default())
}

/// A config key with no validator, group or display name.
pub(crate) fn key(
    name: &str,
    config_type: ConfigType,
    default: DefaultValue,
    importance: Importance,
    doc: &str,
) -> ConfigKey {
    ConfigKey::new(name, config_type, default, importance, doc)
}

/// `DefaultValue::Value` from text.
pub(crate) fn default(text: &str) -> DefaultValue {
    DefaultValue::Value(text.to_string())
}

/// The `replace.null.with.default` key shared by several transformations.
pub(crate) fn replace_null_with_default_key() -> ConfigKey {
    key(
        "replace.null.with.default",
        ConfigType::Boolean,
        default("true"),
        Importance::Medium,
        "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
    )
}

/// Java's `List.toString()` of a list of strings: `[a, b]`.
pub(crate) fn java_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// A compiled Java regular expression (`java.util.regex.Pattern`), with `matches()` (whole
/// input) and `replaceFirst` semantics.
#[derive(Clone, Debug)]
pub struct JavaRegex {
    pattern: String,
    find: fancy_regex::Regex,
    whole: fancy_regex::Regex,
}

impl JavaRegex {
    /// Compiles a Java pattern. `\Q...\E` quoting is translated; the rest is passed on.
    ///
    /// # Errors
    /// The compiler's description of the syntax error.
    pub fn new(pattern: &str) -> Result<JavaRegex, String> {
        let translated = translate_java_quotes(pattern);
        let find = fancy_regex::Regex::new(&translated).map_err(|e| e.to_string())?;
        let whole =
            fancy_regex::Regex::new(&format!("^(?:{translated})\\z")).map_err(|e| e.to_string())?;
        Ok(JavaRegex {
            pattern: pattern.to_string(),
            find,
            whole,
        })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Java's `matcher(text).matches()`: the whole text matches. A match that exceeds the
    /// engine's backtracking limit counts as no match.
    pub fn matches(&self, text: &str) -> bool {
        self.whole.is_match(text).unwrap_or(false)
    }

    /// Java's `matcher(text).replaceFirst(replacement)` with Java's replacement syntax (`$1`,
    /// `${name}`, `\` escapes).
    ///
    /// # Errors
    /// Java's messages for a bad replacement (`Illegal group reference`, `No group 3`, ...).
    pub fn replace_first(&self, text: &str, replacement: &str) -> Result<String, String> {
        let caps = match self.find.captures(text) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(text.to_string()),
            Err(e) => return Err(e.to_string()),
        };
        let Some(whole) = caps.get(0) else {
            return Ok(text.to_string());
        };
        let mut out = String::with_capacity(text.len() + replacement.len());
        out.push_str(&text[..whole.start()]);
        expand_java_replacement(&mut out, replacement, &caps, &self.find)?;
        out.push_str(&text[whole.end()..]);
        Ok(out)
    }
}

/// Turns Java's `\Q...\E` literal sections into escaped text, which the engine does not know.
fn translate_java_quotes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(start) = rest.find("\\Q") {
        // a `\\Q` is an escaped backslash followed by Q, not a quote start
        let backslashes = rest[..start]
            .chars()
            .rev()
            .take_while(|c| *c == '\\')
            .count();
        if backslashes % 2 == 1 {
            out.push_str(&rest[..start + 2]);
            rest = &rest[start + 2..];
            continue;
        }
        out.push_str(&rest[..start]);
        let quoted = &rest[start + 2..];
        let (literal, after) = match quoted.find("\\E") {
            Some(end) => (&quoted[..end], &quoted[end + 2..]),
            None => (quoted, ""),
        };
        out.push_str(&fancy_regex::escape(literal));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Java's `Matcher.appendReplacement` expansion.
fn expand_java_replacement(
    out: &mut String,
    replacement: &str,
    caps: &fancy_regex::Captures<'_, str>,
    re: &fancy_regex::Regex,
) -> Result<(), String> {
    let chars: Vec<char> = replacement.chars().collect();
    let group_count = caps.len() - 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            i += 1;
            let Some(next) = chars.get(i) else {
                return Err("character to be escaped is missing".to_string());
            };
            out.push(*next);
            i += 1;
        } else if c == '$' {
            i += 1;
            let Some(next) = chars.get(i) else {
                return Err("Illegal group reference: group index is missing".to_string());
            };
            if *next == '{' {
                i += 1;
                let start = i;
                while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if name.is_empty() {
                    return Err("named capturing group has 0 length name".to_string());
                }
                if chars.get(i) != Some(&'}') {
                    return Err("named capturing group is missing trailing '}'".to_string());
                }
                i += 1;
                if !re.capture_names().any(|n| n == Some(name.as_str())) {
                    return Err(format!("No group with name {{{name}}}"));
                }
                if let Some(m) = caps.name(&name) {
                    out.push_str(m.as_str());
                }
            } else {
                let Some(first) = next.to_digit(10) else {
                    return Err("Illegal group reference".to_string());
                };
                let mut group = first as usize;
                i += 1;
                // Java takes more digits only while the number stays a valid group
                while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
                    let bigger = group * 10 + d as usize;
                    if bigger > group_count {
                        break;
                    }
                    group = bigger;
                    i += 1;
                }
                if group > group_count {
                    return Err(format!("No group {group}"));
                }
                if let Some(m) = caps.get(group) {
                    out.push_str(m.as_str());
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The registry.

type MakeTransform = fn(&BTreeMap<String, String>) -> Result<Box<dyn Transformation>, String>;
type MakePredicate = fn(&BTreeMap<String, String>) -> Result<Box<dyn Predicate>, String>;

/// One transformation class.
struct TransformSpec {
    class: &'static str,
    def: fn() -> ConfigDef,
    make: MakeTransform,
}

/// One predicate class.
struct PredicateSpec {
    class: &'static str,
    def: fn() -> ConfigDef,
    make: MakePredicate,
}

fn boxed<T: Transformation + 'static>(
    r: Result<T, String>,
) -> Result<Box<dyn Transformation>, String> {
    r.map(|t| Box::new(t) as Box<dyn Transformation>)
}

fn boxed_predicate<T: Predicate + 'static>(
    r: Result<T, String>,
) -> Result<Box<dyn Predicate>, String> {
    r.map(|t| Box::new(t) as Box<dyn Predicate>)
}

macro_rules! keyed {
    ($name:literal, $module:ident :: $ty:ident) => {
        [
            TransformSpec {
                class: concat!("org.apache.kafka.connect.transforms.", $name, "$Key"),
                def: $module::$ty::config_def,
                make: |p| boxed($module::$ty::configure(Side::Key, p)),
            },
            TransformSpec {
                class: concat!("org.apache.kafka.connect.transforms.", $name, "$Value"),
                def: $module::$ty::config_def,
                make: |p| boxed($module::$ty::configure(Side::Value, p)),
            },
        ]
    };
}

macro_rules! single {
    ($name:literal, $module:ident :: $ty:ident) => {
        [TransformSpec {
            class: concat!("org.apache.kafka.connect.transforms.", $name),
            def: $module::$ty::config_def,
            make: |p| boxed($module::$ty::configure(p)),
        }]
    };
}

fn transform_specs() -> Vec<TransformSpec> {
    let groups: Vec<Vec<TransformSpec>> = vec![
        keyed!("Cast", cast::Cast).into(),
        single!("DropHeaders", headers::DropHeaders).into(),
        keyed!("ExtractField", extract_field::ExtractField).into(),
        single!("Filter", routers::Filter).into(),
        keyed!("Flatten", flatten::Flatten).into(),
        keyed!("HeaderFrom", headers::HeaderFrom).into(),
        keyed!("HoistField", hoist_field::HoistField).into(),
        keyed!("InsertField", insert_field::InsertField).into(),
        single!("InsertHeader", headers::InsertHeader).into(),
        keyed!("MaskField", mask_field::MaskField).into(),
        single!("RegexRouter", routers::RegexRouter).into(),
        keyed!("ReplaceField", replace_field::ReplaceField).into(),
        keyed!("SetSchemaMetadata", set_schema_metadata::SetSchemaMetadata).into(),
        keyed!(
            "TimestampConverter",
            timestamp_converter::TimestampConverter
        )
        .into(),
        single!("TimestampRouter", routers::TimestampRouter).into(),
        single!("ValueToKey", value_to_key::ValueToKey).into(),
    ];
    let mut specs: Vec<TransformSpec> = groups.into_iter().flatten().collect();
    specs.sort_by(|a, b| a.class.cmp(b.class));
    specs
}

fn predicate_specs() -> Vec<PredicateSpec> {
    vec![
        PredicateSpec {
            class: "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            def: predicates::HasHeaderKey::config_def,
            make: |p| boxed_predicate(predicates::HasHeaderKey::configure(p)),
        },
        PredicateSpec {
            class: "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
            def: predicates::RecordIsTombstone::config_def,
            make: |p| boxed_predicate(predicates::RecordIsTombstone::configure(p)),
        },
        PredicateSpec {
            class: "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            def: predicates::TopicNameMatches::config_def,
            make: |p| boxed_predicate(predicates::TopicNameMatches::configure(p)),
        },
    ]
}

/// Java's `getSimpleName()`: the part after the last `.` or `$`.
fn simple_name(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}

/// Kafka's alias resolution over one plugin kind: the full name, else an unambiguous simple
/// name or simple name without `suffix`.
fn resolve<'a>(classes: &[&'a str], name: &str, suffix: &str) -> Option<&'a str> {
    let name = crate::config::def::java_trim(name);
    if let Some(c) = classes.iter().find(|c| **c == name) {
        return Some(c);
    }
    // Kafka builds one alias table over every plugin and drops aliases claimed twice.
    let mut aliases: BTreeMap<&str, Vec<&'a str>> = BTreeMap::new();
    for class in classes {
        let simple = simple_name(class);
        let mut names = vec![simple];
        if let Some(pruned) = simple.strip_suffix(suffix).filter(|p| !p.is_empty()) {
            names.push(pruned);
        }
        for alias in names {
            let entry = aliases.entry(alias).or_default();
            if !entry.contains(class) {
                entry.push(class);
            }
        }
    }
    match aliases.get(name).map(Vec::as_slice) {
        Some([one]) => Some(one),
        _ => None,
    }
}

/// Full class names of every transformation, sorted.
pub fn transformation_classes() -> Vec<String> {
    transform_specs()
        .iter()
        .map(|s| s.class.to_string())
        .collect()
}

/// Full class names of every predicate, sorted.
pub fn predicate_classes() -> Vec<String> {
    predicate_specs()
        .iter()
        .map(|s| s.class.to_string())
        .collect()
}

/// The full class name of a transformation given by full name or alias.
pub fn resolve_transformation(class_or_alias: &str) -> Option<&'static str> {
    let specs = transform_specs();
    let classes: Vec<&'static str> = specs.iter().map(|s| s.class).collect();
    resolve(&classes, class_or_alias, "Transformation")
}

/// The full class name of a predicate given by full name or alias.
pub fn resolve_predicate(class_or_alias: &str) -> Option<&'static str> {
    let specs = predicate_specs();
    let classes: Vec<&'static str> = specs.iter().map(|s| s.class).collect();
    resolve(&classes, class_or_alias, "Predicate")
}

/// The config definition of a transformation (its own keys only).
pub fn transformation_def(class_or_alias: &str) -> Option<ConfigDef> {
    let class = resolve_transformation(class_or_alias)?;
    transform_specs()
        .into_iter()
        .find(|s| s.class == class)
        .map(|s| (s.def)())
}

/// The config definition of a predicate.
pub fn predicate_def(class_or_alias: &str) -> Option<ConfigDef> {
    let class = resolve_predicate(class_or_alias)?;
    predicate_specs()
        .into_iter()
        .find(|s| s.class == class)
        .map(|s| (s.def)())
}

/// Configures a transformation from its own keys (no `transforms.<alias>.` prefix).
///
/// # Errors
/// `Class <c> could not be found.` for an unknown class, else the transformation's message.
pub fn configure_transformation(
    class_or_alias: &str,
    props: &BTreeMap<String, String>,
) -> Result<Box<dyn Transformation>, String> {
    let class = resolve_transformation(class_or_alias)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    let spec = transform_specs()
        .into_iter()
        .find(|s| s.class == class)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    (spec.make)(props)
}

/// Configures a predicate from its own keys.
///
/// # Errors
/// `Class <c> could not be found.` for an unknown class, else the predicate's message.
pub fn configure_predicate(
    class_or_alias: &str,
    props: &BTreeMap<String, String>,
) -> Result<Box<dyn Predicate>, String> {
    let class = resolve_predicate(class_or_alias)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    let spec = predicate_specs()
        .into_iter()
        .find(|s| s.class == class)
        .ok_or_else(|| format!("Class {class_or_alias} could not be found."))?;
    (spec.make)(props)
}

// ---------------------------------------------------------------------------------------------
// The chain.

/// A failure inside the chain: which transformation failed and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransformError {
    /// The alias in `transforms`.
    pub alias: String,
    /// The transformation's full class name.
    pub class: String,
    /// Kafka's message.
    pub message: String,
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransformError {}

/// One step of the chain (Kafka's `TransformationStage`).
#[derive(Debug)]
struct Stage {
    alias: String,
    class: &'static str,
    transformation: Box<dyn Transformation>,
    predicate: Option<(String, usize)>,
    negate: bool,
}

/// A connector's transformation chain, built from its config (`transforms`,
/// `transforms.<a>.type`, `transforms.<a>.predicate`, `transforms.<a>.negate`, `predicates`,
/// `predicates.<p>.type` and each plugin's own keys).
#[derive(Debug, Default)]
pub struct TransformChain {
    stages: Vec<Stage>,
    predicates: Vec<(String, Box<dyn Predicate>)>,
}

/// Kafka's `originalsWithPrefix`.
fn with_prefix(config: &BTreeMap<String, String>, prefix: &str) -> BTreeMap<String, String> {
    config
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(prefix)
                .map(|rest| (rest.to_string(), v.clone()))
        })
        .collect()
}

/// An alias list (`transforms`, `predicates`), with Kafka's duplicate check.
fn alias_list(config: &BTreeMap<String, String>, key: &str) -> Result<Vec<String>, String> {
    let aliases = config
        .get(key)
        .map(|v| crate::config::def::parse_list(v))
        .unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    if !aliases.iter().all(|a| seen.insert(a)) {
        return Err(format!(
            "Invalid value {} for configuration {key}: Duplicate alias provided.",
            java_list(&aliases)
        ));
    }
    Ok(aliases)
}

/// The value of `<family>.<alias>.type`, with Kafka's messages when it is missing.
fn type_of<'a>(
    config: &'a BTreeMap<String, String>,
    family: &str,
    alias: &str,
) -> Result<&'a str, String> {
    let key = format!("{family}.{alias}.type");
    config
        .get(&key)
        .map(|v| crate::config::def::java_trim(v))
        .ok_or_else(|| {
            format!("Missing required configuration \"{key}\" which has no default value.")
        })
}

impl TransformChain {
    /// Builds the chain a connector config describes, configuring every transformation and
    /// every listed predicate.
    ///
    /// # Errors
    /// The first problem found, naming the key (`transforms.a.type`) or the alias and class
    /// (`Transformation 'a' (org.apache...RegexRouter): Missing required configuration "regex"
    /// which has no default value.`).
    pub fn from_config(config: &BTreeMap<String, String>) -> Result<TransformChain, String> {
        let transform_aliases = alias_list(config, crate::config::keys::TRANSFORMS)?;
        let predicate_aliases = alias_list(config, crate::config::keys::PREDICATES)?;

        let mut predicates: Vec<(String, Box<dyn Predicate>)> = Vec::new();
        for alias in &predicate_aliases {
            let given = type_of(config, crate::config::keys::PREDICATES, alias)?;
            let class = resolve_predicate(given).ok_or_else(|| {
                format!("Invalid value {given} for configuration predicates.{alias}.type: Class {given} could not be found.")
            })?;
            let props = with_prefix(config, &format!("predicates.{alias}."));
            let predicate = configure_predicate(class, &props)
                .map_err(|e| format!("Predicate '{alias}' ({class}): {e}"))?;
            predicates.push((alias.clone(), predicate));
        }

        let mut stages = Vec::new();
        for alias in &transform_aliases {
            let given = type_of(config, crate::config::keys::TRANSFORMS, alias)?;
            let class = resolve_transformation(given).ok_or_else(|| {
                format!("Invalid value {given} for configuration transforms.{alias}.type: Class {given} could not be found.")
            })?;
            let prefix = format!("transforms.{alias}.");
            let mut props = with_prefix(config, &prefix);
            let predicate_alias = props
                .remove("predicate")
                .map(|p| crate::config::def::java_trim(&p).to_string());
            let negate_raw = props.remove("negate");
            if negate_raw.is_some() && predicate_alias.is_none() {
                return Err(format!(
                    "Config '{prefix}negate' was provided but there is no config '{prefix}predicate' defining a predicate to be negated."
                ));
            }
            let negate = match negate_raw.as_deref().map(crate::config::def::java_trim) {
                None => false,
                Some(v) if v.eq_ignore_ascii_case("true") => true,
                Some(v) if v.eq_ignore_ascii_case("false") => false,
                Some(v) => {
                    return Err(format!(
                        "Invalid value {v} for configuration {prefix}negate: Expected value to be either true or false"
                    ))
                }
            };
            let transformation = configure_transformation(class, &props)
                .map_err(|e| format!("Transformation '{alias}' ({class}): {e}"))?;
            let predicate = match predicate_alias {
                None => None,
                Some(p) => {
                    let index = predicates.iter().position(|(a, _)| *a == p).ok_or_else(|| {
                        format!(
                            "Transformation '{alias}' ({class}): the predicate '{p}' named by '{prefix}predicate' is not listed in 'predicates'"
                        )
                    })?;
                    Some((p, index))
                }
            };
            stages.push(Stage {
                alias: alias.clone(),
                class,
                transformation,
                predicate,
                negate,
            });
        }
        Ok(TransformChain { stages, predicates })
    }

    /// True when the connector has no transformations.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// The aliases of the transformations, in order.
    pub fn aliases(&self) -> Vec<&str> {
        self.stages.iter().map(|s| s.alias.as_str()).collect()
    }

    /// Applies each transformation in order; a stage with a predicate runs only when the
    /// predicate matches (or, negated, does not). `Ok(None)` means a transformation dropped the
    /// record, and the later ones did not see it.
    ///
    /// # Errors
    /// The failing transformation's alias, class and message.
    pub fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, TransformError> {
        let mut current = record;
        for stage in &self.stages {
            let run = match &stage.predicate {
                None => true,
                Some((_, index)) => stage.negate ^ self.predicates[*index].1.test(&current),
            };
            if !run {
                continue;
            }
            match stage.transformation.apply(current, ctx) {
                Ok(Some(next)) => current = next,
                Ok(None) => return Ok(None),
                Err(message) => {
                    return Err(TransformError {
                        alias: stage.alias.clone(),
                        class: stage.class.to_string(),
                        message,
                    })
                }
            }
        }
        Ok(Some(current))
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Record builders shared by the transformation tests.
    use super::*;

    /// A value-only record on `topic`.
    pub fn record(topic: &str, schema: Option<SchemaRef>, value: Value) -> ConnectRecord {
        ConnectRecord::new(topic, schema, value)
    }

    /// A key-only record.
    pub fn key_record(schema: Option<SchemaRef>, key: Value) -> ConnectRecord {
        let mut r = ConnectRecord::new("test", None, Value::Null);
        r.key_schema = schema;
        r.key = key;
        r
    }

    /// A schemaless map from string keys.
    pub fn map(entries: &[(&str, Value)]) -> Value {
        Value::Map(
            entries
                .iter()
                .map(|(k, v)| (Value::String(k.to_string()), v.clone()))
                .collect(),
        )
    }

    /// Props from pairs.
    pub fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A source-side context.
    pub fn source() -> RecordContext {
        RecordContext::source()
    }

    /// Applies and unwraps a kept record.
    pub fn apply_ok(t: &dyn Transformation, r: ConnectRecord) -> ConnectRecord {
        t.apply(r, &source()).expect("apply").expect("kept")
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;
    use crate::record::Header;

    #[test]
    fn registry_lists_every_class_sorted() {
        let classes = transformation_classes();
        assert_eq!(classes.len(), 26);
        let mut sorted = classes.clone();
        sorted.sort();
        assert_eq!(classes, sorted);
        assert_eq!(classes[0], "org.apache.kafka.connect.transforms.Cast$Key");
        assert!(classes
            .contains(&"org.apache.kafka.connect.transforms.TimestampConverter$Value".to_string()));
        assert_eq!(
            predicate_classes(),
            vec![
                "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
                "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
                "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            ]
        );
    }

    #[test]
    fn aliases_follow_kafka_rules() {
        assert_eq!(
            resolve_transformation("RegexRouter"),
            Some("org.apache.kafka.connect.transforms.RegexRouter")
        );
        assert_eq!(
            resolve_transformation("Filter"),
            Some("org.apache.kafka.connect.transforms.Filter")
        );
        for unique in [
            "TimestampRouter",
            "DropHeaders",
            "InsertHeader",
            "ValueToKey",
        ] {
            assert_eq!(
                resolve_transformation(unique).map(simple_name),
                Some(unique),
                "{unique}"
            );
        }
        assert_eq!(
            resolve_transformation("org.apache.kafka.connect.transforms.Cast$Value"),
            Some("org.apache.kafka.connect.transforms.Cast$Value")
        );
        // inner classes are all called Key or Value: ambiguous
        assert_eq!(resolve_transformation("Value"), None);
        assert_eq!(resolve_transformation("Key"), None);
        assert_eq!(resolve_transformation("Cast"), None);
        assert_eq!(resolve_transformation("TopicNameMatches"), None);
        assert_eq!(
            resolve_predicate(" TopicNameMatches "),
            Some("org.apache.kafka.connect.transforms.predicates.TopicNameMatches")
        );
        assert_eq!(resolve_predicate("RegexRouter"), None);
        assert!(transformation_def("Filter").unwrap().keys().is_empty());
        assert!(predicate_def("HasHeaderKey").unwrap().get("name").is_some());
        assert!(transformation_def("Nope").is_none());
    }

    #[test]
    fn java_regex_matches_whole_and_replaces_first() {
        let re = JavaRegex::new("(.*)-(.*)").unwrap();
        assert!(re.matches("a-b"));
        assert!(!JavaRegex::new("a").unwrap().matches("ab"));
        assert_eq!(re.replace_first("foo-bar", "$2").unwrap(), "bar");
        assert_eq!(re.replace_first("foo-bar", "\\$2$1").unwrap(), "$2foo");
        assert_eq!(re.replace_first("foo-bar", "$3").unwrap_err(), "No group 3");
        assert_eq!(re.replace_first("foo-bar", "$21").unwrap(), "bar1");
        assert_eq!(
            re.replace_first("foo-bar", "x$").unwrap_err(),
            "Illegal group reference: group index is missing"
        );
        let named = JavaRegex::new("(?<t>[a-z]+)_\\d+").unwrap();
        assert_eq!(named.replace_first("orders_12", "${t}").unwrap(), "orders");
        let look = JavaRegex::new("^(?!__).*").unwrap();
        assert!(look.matches("topic") && !look.matches("__internal"));
        let quoted = JavaRegex::new("\\Qa.b\\E.*").unwrap();
        assert!(quoted.matches("a.bc") && !quoted.matches("axbc"));
    }

    fn chain(pairs: &[(&str, &str)]) -> Result<TransformChain, String> {
        TransformChain::from_config(&props(pairs))
    }

    #[test]
    fn negated_predicate_drops_exactly_the_non_matching_records() {
        let c = chain(&[
            ("transforms", "keepFoo"),
            ("transforms.keepFoo.type", "Filter"),
            ("transforms.keepFoo.predicate", "isFoo"),
            ("transforms.keepFoo.negate", "true"),
            ("predicates", "isFoo"),
            ("predicates.isFoo.type", "TopicNameMatches"),
            ("predicates.isFoo.pattern", "foo.*"),
        ])
        .unwrap();
        let topics = ["foo", "foobar", "bar", "xfoo", "foo-1", "baz"];
        let kept: Vec<String> = topics
            .iter()
            .filter_map(|t| c.apply(record(t, None, Value::Null), &source()).unwrap())
            .map(|r| r.topic)
            .collect();
        assert_eq!(kept, vec!["foo", "foobar", "foo-1"]);

        let plain = chain(&[
            ("transforms", "dropFoo"),
            (
                "transforms.dropFoo.type",
                "org.apache.kafka.connect.transforms.Filter",
            ),
            ("transforms.dropFoo.predicate", "isFoo"),
            ("predicates", "isFoo"),
            ("predicates.isFoo.type", "TopicNameMatches"),
            ("predicates.isFoo.pattern", "foo.*"),
        ])
        .unwrap();
        let kept: Vec<String> = topics
            .iter()
            .filter_map(|t| {
                plain
                    .apply(record(t, None, Value::Null), &source())
                    .unwrap()
            })
            .map(|r| r.topic)
            .collect();
        assert_eq!(kept, vec!["bar", "xfoo", "baz"]);
    }

    #[test]
    fn chain_applies_in_order_and_stops_after_a_drop() {
        let c = chain(&[
            ("transforms", "hoist,route,tomb,insert"),
            (
                "transforms.hoist.type",
                "org.apache.kafka.connect.transforms.HoistField$Value",
            ),
            ("transforms.hoist.field", "line"),
            ("transforms.route.type", "RegexRouter"),
            ("transforms.route.regex", "(.*)-(.*)"),
            ("transforms.route.replacement", "$2"),
            ("transforms.tomb.type", "Filter"),
            ("transforms.tomb.predicate", "hasH"),
            ("transforms.insert.type", "InsertHeader"),
            ("transforms.insert.header", "h"),
            ("transforms.insert.value.literal", "1"),
            ("predicates", "hasH"),
            ("predicates.hasH.type", "HasHeaderKey"),
            ("predicates.hasH.name", "drop-me"),
        ])
        .unwrap();
        assert!(!c.is_empty());
        assert_eq!(c.aliases(), vec!["hoist", "route", "tomb", "insert"]);
        let out = c
            .apply(record("a-b", None, Value::from("hello")), &source())
            .unwrap()
            .unwrap();
        assert_eq!(out.topic, "b");
        assert_eq!(out.value, map(&[("line", Value::from("hello"))]));
        assert_eq!(out.headers.len(), 1);
        assert_eq!(out.headers[0].value, Value::Int8(1));

        let mut marked = record("a-b", None, Value::from("x"));
        marked.headers.push(Header {
            key: "drop-me".into(),
            schema: None,
            value: Value::Null,
        });
        assert_eq!(c.apply(marked, &source()).unwrap(), None);
    }

    #[test]
    fn chain_errors_carry_alias_and_class() {
        let c = chain(&[
            ("transforms", "x"),
            (
                "transforms.x.type",
                "org.apache.kafka.connect.transforms.ExtractField$Value",
            ),
            ("transforms.x.field", "id"),
        ])
        .unwrap();
        let err = c
            .apply(record("t", None, Value::from(5)), &source())
            .unwrap_err();
        assert_eq!(err.alias, "x");
        assert_eq!(
            err.class,
            "org.apache.kafka.connect.transforms.ExtractField$Value"
        );
        assert_eq!(
            err.to_string(),
            "Only Map objects supported in absence of schema for [field extraction], found: java.lang.Integer"
        );
        assert!(TransformChain::from_config(&BTreeMap::new())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn chain_config_errors_name_alias_and_key() {
        assert_eq!(
            chain(&[("transforms", "a,a")]).unwrap_err(),
            "Invalid value [a, a] for configuration transforms: Duplicate alias provided."
        );
        assert_eq!(
            chain(&[("transforms", "a")]).unwrap_err(),
            "Missing required configuration \"transforms.a.type\" which has no default value."
        );
        assert_eq!(
            chain(&[("transforms", "a"), ("transforms.a.type", "Nope")]).unwrap_err(),
            "Invalid value Nope for configuration transforms.a.type: Class Nope could not be found."
        );
        assert_eq!(
            chain(&[("transforms", "a"), ("transforms.a.type", "RegexRouter"), ("transforms.a.regex", "x")])
                .unwrap_err(),
            "Transformation 'a' (org.apache.kafka.connect.transforms.RegexRouter): Missing required configuration \"replacement\" which has no default value."
        );
        assert_eq!(
            chain(&[("transforms", "a"), ("transforms.a.type", "Filter"), ("transforms.a.negate", "true")])
                .unwrap_err(),
            "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."
        );
        assert!(chain(&[
            ("transforms", "a"),
            ("transforms.a.type", "Filter"),
            ("transforms.a.predicate", "p")
        ])
        .unwrap_err()
        .contains(
            "the predicate 'p' named by 'transforms.a.predicate' is not listed in 'predicates'"
        ));
        assert_eq!(
            chain(&[("predicates", "p"), ("predicates.p.type", "TopicNameMatches")]).unwrap_err(),
            "Predicate 'p' (org.apache.kafka.connect.transforms.predicates.TopicNameMatches): Missing required configuration \"pattern\" which has no default value."
        );
    }

    /// Connector validation with the real plugin registry.
    mod validation {
        use crate::config::def::{ConfigInfo, ConfigInfos};
        use crate::plugins::Plugins;
        use std::collections::BTreeMap;

        fn validate(pairs: &[(&str, &str)]) -> ConfigInfos {
            let mut config: BTreeMap<String, Option<String>> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Some(v.to_string())))
                .collect();
            config.insert("name".into(), Some("sink".into()));
            config.insert("connector.class".into(), Some("FileStreamSink".into()));
            config.insert("topics".into(), Some("t".into()));
            Plugins::new().validate(&config).unwrap()
        }

        fn entry<'a>(infos: &'a ConfigInfos, name: &str) -> &'a ConfigInfo {
            infos
                .configs
                .iter()
                .find(|c| c.value.name == name)
                .unwrap_or_else(|| panic!("no entry {name}"))
        }

        #[test]
        fn per_alias_groups_keys_and_full_class_names() {
            let infos = validate(&[
                ("transforms", "a,b"),
                ("transforms.a.type", "RegexRouter"),
                ("transforms.a.regex", "(.*)"),
                ("transforms.a.replacement", "x-$1"),
                (
                    "transforms.b.type",
                    "org.apache.kafka.connect.transforms.Cast$Value",
                ),
                ("transforms.b.spec", "a:int32"),
                ("transforms.b.predicate", "p"),
                ("predicates", "p"),
                ("predicates.p.type", "RecordIsTombstone"),
            ]);
            assert_eq!(infos.error_count, 0, "{infos:#?}");
            for group in ["Transforms: a", "Transforms: b", "Predicates: p"] {
                assert!(infos.groups.contains(&group.to_string()), "{group}");
            }
            let regex = entry(&infos, "transforms.a.regex");
            assert_eq!(
                regex.definition.as_ref().unwrap().group.as_deref(),
                Some("Transforms: a")
            );
            assert_eq!(
                entry(&infos, "transforms.a.type").value.value.as_deref(),
                Some("org.apache.kafka.connect.transforms.RegexRouter")
            );
            assert_eq!(
                entry(&infos, "predicates.p.type").value.value.as_deref(),
                Some("org.apache.kafka.connect.transforms.predicates.RecordIsTombstone")
            );
            let spec = entry(&infos, "transforms.b.spec");
            assert_eq!(spec.definition.as_ref().unwrap().config_type, "LIST");
            assert!(entry(&infos, "transforms.b.replace.null.with.default")
                .value
                .errors
                .is_empty());
            let recommended = &entry(&infos, "transforms.a.type").value.recommended_values;
            assert_eq!(recommended.len(), 26);
        }

        #[test]
        fn unknown_type_and_smt_errors_with_kafka_messages() {
            let infos = validate(&[
                ("transforms", "bad,cast,mask,conv"),
                ("transforms.bad.type", "com.example.Nope"),
                (
                    "transforms.cast.type",
                    "org.apache.kafka.connect.transforms.Cast$Key",
                ),
                ("transforms.cast.spec", "a:bytes"),
                (
                    "transforms.mask.type",
                    "org.apache.kafka.connect.transforms.MaskField$Value",
                ),
                ("transforms.mask.fields", ""),
                (
                    "transforms.conv.type",
                    "org.apache.kafka.connect.transforms.TimestampConverter$Value",
                ),
                ("transforms.conv.target.type", "epoch"),
            ]);
            assert_eq!(
                entry(&infos, "transforms.bad.type").value.errors,
                vec!["Invalid value com.example.Nope for configuration transforms.bad.type: Class com.example.Nope could not be found."]
            );
            assert_eq!(
                entry(&infos, "transforms.cast.spec").value.errors,
                vec!["Invalid value [a:bytes] for configuration spec: Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"]
            );
            assert_eq!(
                entry(&infos, "transforms.mask.fields").value.errors,
                vec!["Invalid value [] for configuration fields: Empty list"]
            );
            assert_eq!(
                entry(&infos, "transforms.conv.target.type").value.errors,
                vec!["Invalid value epoch for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"]
            );
            assert_eq!(infos.error_count, 4);
            // the short name of an inner class is ambiguous, as in Kafka
            let ambiguous = validate(&[("transforms", "v"), ("transforms.v.type", "Value")]);
            assert_eq!(
                entry(&ambiguous, "transforms.v.type").value.errors,
                vec!["Invalid value Value for configuration transforms.v.type: Class Value could not be found."]
            );
        }

        #[test]
        fn plugin_listing_and_config_endpoints() {
            let plugins = Plugins::new();
            let all = plugins.list(false);
            let kinds: Vec<&str> = all.iter().map(|p| p.plugin_type.as_str()).collect();
            let first = |k: &str| kinds.iter().position(|x| *x == k).unwrap();
            let last = |k: &str| kinds.iter().rposition(|x| *x == k).unwrap();
            assert!(last("source") < first("transformation"));
            assert!(last("transformation") < first("predicate"));
            assert!(last("predicate") < first("converter"));
            assert_eq!(kinds.iter().filter(|k| **k == "transformation").count(), 26);
            assert_eq!(kinds.iter().filter(|k| **k == "predicate").count(), 3);
            assert!(!plugins
                .list(true)
                .iter()
                .any(|p| p.plugin_type == "transformation"));
            let keys = plugins.plugin_config("TimestampRouter").unwrap();
            let names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
            assert_eq!(names, vec!["topic.format", "timestamp.format"]);
            assert_eq!(
                keys[0].default_value.as_deref(),
                Some("${topic}-${timestamp}")
            );
            let cast = plugins
                .plugin_config("org.apache.kafka.connect.transforms.Cast$Value")
                .unwrap();
            assert!(cast[0].required);
            assert_eq!(
                plugins.plugin_config("TopicNameMatches").unwrap()[0].name,
                "pattern"
            );
            assert!(plugins.plugin_config("Filter").unwrap().is_empty());
        }
    }
}
