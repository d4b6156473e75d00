//! Full connector validation, as Kafka's `AbstractHerder.validateConnectorConfig` performs it.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::definition::{connector_config_def, value, PREDICATES_GROUP, TRANSFORMS_GROUP};
use super::{keys, ConnectorType, NULL_VALUE_MESSAGE};
use crate::config::def::{
    java_hash_order, java_trim, key_info, key_info_prefixed, parse_list, ConfigDef, ConfigInfo,
    ConfigInfos, ConfigKey, ConfigKeyInfo, ConfigType, DefaultValue, Importance, ValidatedValue,
    Width,
};

/// What validation needs to know about the other plugins installed (transforms, predicates,
/// converters). Class names may be full names or aliases; the implementation resolves them.
pub trait PluginLookup {
    /// The config definition of a transformation class; `None` when no such transformation.
    fn transformation_def(&self, class: &str) -> Option<ConfigDef>;
    /// The config definition of a predicate class; `None` when no such predicate.
    fn predicate_def(&self, class: &str) -> Option<ConfigDef>;
    /// Full class names of every transformation (recommended values for `transforms.<a>.type`).
    fn transformation_classes(&self) -> Vec<String>;
    /// Full class names of every predicate (recommended values for `predicates.<p>.type`).
    fn predicate_classes(&self) -> Vec<String>;
    /// The config definition of a converter class; `None` when it is not a Converter.
    fn converter_def(&self, class: &str) -> Option<ConfigDef>;
    /// The config definition of a header converter class; `None` when it is not one.
    fn header_converter_def(&self, class: &str) -> Option<ConfigDef>;
    /// The full class name of a class given by name or alias. Kafka shows CLASS values by
    /// their full name (an alias in `transforms.a.type` comes back as the class it stands
    /// for); the default keeps the name as given.
    fn class_name(&self, class: &str) -> String {
        class.to_owned()
    }
    /// Kafka's message when `wanted`, the `plugin.version` (KIP-891) of the plugin `class` named by
    /// `class_key` (`transforms.a.type`, `predicates.p.type`, `key.converter`, …), picks none of its
    /// installed versions; `None` when it picks one, or the class is unknown (reported elsewhere).
    fn plugin_version_error(
        &self,
        _class_key: &str,
        _class: &str,
        _wanted: &str,
    ) -> Option<String> {
        None
    }
}

/// The errors of the `plugin.version` keys (KIP-891) of the transformations, predicates and
/// converters a config names, as (key, message).
fn plugin_version_errors(
    config: &BTreeMap<String, Option<String>>,
    transforms: &[String],
    predicates: &[String],
    plugins: &dyn PluginLookup,
) -> Vec<(String, String)> {
    let prefixes = [
        (keys::TRANSFORMS, transforms),
        (keys::PREDICATES, predicates),
    ]
    .into_iter()
    .flat_map(|(family, names)| names.iter().map(move |a| format!("{family}.{a}.")));
    let pairs = prefixes
        .map(|p| (format!("{p}type"), format!("{p}plugin.version")))
        .chain(
            [
                keys::KEY_CONVERTER,
                keys::VALUE_CONVERTER,
                keys::HEADER_CONVERTER,
            ]
            .map(|k| (k.to_owned(), format!("{k}.plugin.version"))),
        );
    pairs
        .filter_map(|(class_key, version_key)| {
            let class = java_trim(raw(config, &class_key)?);
            let wanted = raw(config, &version_key)?;
            let error = plugins.plugin_version_error(&class_key, class, wanted)?;
            Some((version_key, error))
        })
        .collect()
}

/// Which plugin kind a CLASS key must name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PluginKind {
    Transformation,
    Predicate,
    Converter,
    HeaderConverter,
}

/// The two alias lists (`transforms`, `predicates`) work alike; this is what differs
/// (Kafka's `EnrichablePlugin` subclasses).
struct AliasFamily {
    config: &'static str,
    group: &'static str,
    kind_lower: &'static str,
    kind_title: &'static str,
    plugin_kind: PluginKind,
}

const TRANSFORM_FAMILY: AliasFamily = AliasFamily {
    config: keys::TRANSFORMS,
    group: TRANSFORMS_GROUP,
    kind_lower: "transformation",
    kind_title: "Transformation",
    plugin_kind: PluginKind::Transformation,
};

const PREDICATE_FAMILY: AliasFamily = AliasFamily {
    config: keys::PREDICATES,
    group: PREDICATES_GROUP,
    kind_lower: "predicate",
    kind_title: "Predicate",
    plugin_kind: PluginKind::Predicate,
};

/// The keys every transformation has implicitly (they mask an SMT's own keys of that name).
fn implicit_transform_keys() -> ConfigDef {
    ConfigDef::new()
        .define(ConfigKey::new(
            keys::TRANSFORM_PREDICATE,
            ConfigType::String,
            DefaultValue::Null,
            Importance::Medium,
            "The alias of a predicate used to determine whether to apply this transformation.",
        ))
        .define(ConfigKey::new(
            keys::TRANSFORM_NEGATE,
            ConfigType::Boolean,
            value("false"),
            Importance::Medium,
            "Whether the configured predicate should be negated.",
        ))
}

/// Raw value of a key, treating JSON null like absence.
fn raw<'a>(config: &'a BTreeMap<String, Option<String>>, key: &str) -> Option<&'a str> {
    config.get(key).and_then(|v| v.as_deref())
}

/// Kafka's `ConnectorConfig.enrich`: adds `<family>.<alias>.type` for every alias, and the
/// plugin's own keys under `<family>.<alias>.` when its class is known. Returns the aliases.
fn enrich(
    def: &mut ConfigDef,
    family: &AliasFamily,
    config: &BTreeMap<String, Option<String>>,
    plugins: &dyn PluginLookup,
    class_keys: &mut HashMap<String, PluginKind>,
) -> Vec<String> {
    let Some(list) = raw(config, family.config) else {
        return Vec::new();
    };
    let mut aliases: Vec<String> = Vec::new();
    for alias in parse_list(list) {
        if !aliases.contains(&alias) {
            aliases.push(alias);
        }
    }
    let recommended = match family.plugin_kind {
        PluginKind::Transformation => plugins.transformation_classes(),
        _ => plugins.predicate_classes(),
    };
    for alias in &aliases {
        let prefix = format!("{}.{alias}.", family.config);
        let group = format!("{}: {alias}", family.group);
        let type_key = format!("{prefix}type");
        def.add(
            ConfigKey::new(
                type_key.clone(),
                ConfigType::Class,
                DefaultValue::Required,
                Importance::High,
                format!("Class for the '{alias}' {}.", family.kind_lower),
            )
            .group(group.clone(), 0)
            .width(Width::Long)
            .display_name(format!("{} type for {alias}", family.kind_title))
            .recommended(recommended.clone()),
        );
        class_keys.insert(type_key.clone(), family.plugin_kind);

        let Some(class) = raw(config, &type_key).map(java_trim) else {
            continue;
        };
        let plugin_def = match family.plugin_kind {
            PluginKind::Transformation => plugins.transformation_def(class),
            _ => plugins.predicate_def(class),
        };
        let Some(plugin_def) = plugin_def else {
            continue;
        };
        let mut child = if family.plugin_kind == PluginKind::Transformation {
            implicit_transform_keys()
        } else {
            ConfigDef::new()
        };
        for key in plugin_def.keys() {
            let masked = family.plugin_kind == PluginKind::Transformation
                && (key.name == keys::TRANSFORM_PREDICATE || key.name == keys::TRANSFORM_NEGATE);
            if !masked {
                child.add(key.clone());
            }
        }
        def.embed(&prefix, &group, 1, &child);
    }
    aliases
}

/// Kafka's `SinkConnectorConfig.validate`: the rules that span `topics`, `topics.regex` and
/// the dead letter queue topic.
fn validate_sink_topics(config: &BTreeMap<String, Option<String>>, values: &mut [ValidatedValue]) {
    let topics = raw(config, keys::TOPICS);
    let topics_regex = raw(config, keys::TOPICS_REGEX);
    let dlq_topic = java_trim(raw(config, keys::DLQ_TOPIC_NAME).unwrap_or(""));
    let is_blank = |s: Option<&str>| s.is_none_or(|s| java_trim(s).is_empty());
    let has_topics = !is_blank(topics);
    let has_regex = !is_blank(topics_regex);

    let mut add_error = |name: &str, message: String| {
        if let Some(v) = values.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        }
    };
    if has_topics && has_regex {
        let message = "topics and topics.regex are mutually exclusive options, but both are set.";
        add_error(keys::TOPICS, message.to_owned());
        add_error(keys::TOPICS_REGEX, message.to_owned());
    }
    if !has_topics && !has_regex {
        let message = "Must configure one of topics or topics.regex";
        add_error(keys::TOPICS, message.to_owned());
        add_error(keys::TOPICS_REGEX, message.to_owned());
    }
    if dlq_topic.is_empty() {
        return;
    }
    if let Some(topics) = topics.filter(|_| has_topics) {
        let mut listed: Vec<String> = Vec::new();
        for topic in parse_list(topics) {
            if !topic.is_empty() && !listed.contains(&topic) {
                listed.push(topic);
            }
        }
        if listed.iter().any(|t| t == dlq_topic) {
            add_error(
                keys::TOPICS,
                format!(
                    "The DLQ topic '{dlq_topic}' may not be included in the list of topics ('topics=[{}]') consumed by the connector",
                    listed.join(", ")
                ),
            );
        }
    }
    if let Some(pattern) = topics_regex.filter(|_| has_regex) {
        // Java's `matcher(..).matches()` is a whole-string match. A pattern the regex crate
        // cannot compile was already reported by the key's validator (or is Java-only syntax).
        if let Ok(re) = regex::Regex::new(&format!("^(?:{pattern})$")) {
            if re.is_match(dlq_topic) {
                add_error(
                    keys::TOPICS_REGEX,
                    format!(
                        "The DLQ topic '{dlq_topic}' may not be matched by the regex for the topics ('topics.regex={pattern}') consumed by the connector"
                    ),
                );
            }
        }
    }
}

/// One section of a validation answer before sections are merged (Kafka merges the
/// connector's section with one per converter).
struct Section {
    error_count: usize,
    groups: Vec<String>,
    configs: Vec<ConfigInfo>,
}

/// Kafka's `validateConverterConfig` + `prefixedConfigInfos`: validates a converter's own keys
/// against the `<prop>.`-prefixed entries, reporting them under prefixed names. Errors are
/// counted per key here, not per message, as Kafka does.
fn validate_converter(
    config: &BTreeMap<String, Option<String>>,
    prop: &str,
    converter_type: &str,
    class_value: Option<&ValidatedValue>,
    plugins: &dyn PluginLookup,
) -> Option<Section> {
    let class = java_trim(raw(config, prop)?);
    if class_value.is_none_or(|v| !v.errors.is_empty()) {
        return None;
    }
    let def = if prop == keys::HEADER_CONVERTER {
        plugins.header_converter_def(class)?
    } else {
        plugins.converter_def(class)?
    };
    let prefix = format!("{prop}.");
    let mut converter_config: BTreeMap<String, Option<String>> = config
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(&prefix)
                .map(|rest| (rest.to_owned(), v.clone()))
        })
        .collect();
    // Java's `putIfAbsent` also replaces a null value.
    let converter_type_entry = converter_config
        .entry("converter.type".to_owned())
        .or_insert(None);
    if converter_type_entry.is_none() {
        *converter_type_entry = Some(converter_type.to_owned());
    }

    let values = def.validate_values(&converter_config, &|_, c| Some(c.to_owned()));
    // Kafka collects these results in a HashMap; keep its iteration order.
    let ordered = java_hash_order(values.into_iter().map(|v| (v.name.clone(), v)).collect());
    let mut section = Section {
        error_count: 0,
        groups: Vec::new(),
        configs: Vec::new(),
    };
    for (name, value) in ordered {
        let key = def.get(&name);
        if let Some(group) = key.and_then(|k| k.group.as_ref()) {
            if !section.groups.contains(group) {
                section.groups.push(group.clone());
            }
        }
        if !value.errors.is_empty() {
            section.error_count += 1;
        }
        section.configs.push(ConfigInfo {
            definition: key.map(|k| key_info_prefixed(k, &prefix)),
            value: value.info_named(format!("{prefix}{name}")),
        });
    }
    Some(section)
}

/// Validates a full connector config the way Kafka's `AbstractHerder.validateConnectorConfig`
/// does, and builds the `ConfigInfos` answer.
///
/// `connector_def` is the connector plugin's own definition and `connector_errors` any extra
/// `(key, message)` pairs its own multi-key validation found. `config` values of `None` are
/// keys sent as JSON `null`, which are always an error.
///
/// What the answer holds, in Kafka's order:
/// * entries without a definition first (keys sent as `null` that nobody defines), then one
///   entry per defined key: framework keys, `transforms.<a>.*` and `predicates.<p>.*` keys,
///   then the connector's keys (a connector key redefining a framework key takes its place);
/// * then the header, key and value converters' own keys (`key.converter.schemas.enable`),
///   when those converters are set on the connector and valid;
/// * `groups`: framework groups, per-alias groups, the connector's groups, converter groups;
/// * `error_count`: every message in the connector section, plus one per converter key in
///   error.
///
/// Deliberate difference: a connector key sent as `null` keeps its `Null value …` error
/// (Kafka loses it when the connector's own result for that key replaces the framework's).
/// Client overrides (`producer.override.*` …) are not validated here: only the Kafka connectors have
/// clients, and they check their own security settings (through `connector_errors`).
pub fn validate_connector_config(
    connector_class_as_given: &str,
    kind: ConnectorType,
    connector_def: &ConfigDef,
    connector_errors: Vec<(String, String)>,
    config: &BTreeMap<String, Option<String>>,
    plugins: &dyn PluginLookup,
) -> ConfigInfos {
    // The framework definition, enriched with one group of keys per alias.
    let mut enriched = connector_config_def(kind);
    let mut class_keys: HashMap<String, PluginKind> = HashMap::from([
        (keys::KEY_CONVERTER.to_owned(), PluginKind::Converter),
        (keys::VALUE_CONVERTER.to_owned(), PluginKind::Converter),
        (
            keys::HEADER_CONVERTER.to_owned(),
            PluginKind::HeaderConverter,
        ),
    ]);
    let transform_aliases = enrich(
        &mut enriched,
        &TRANSFORM_FAMILY,
        config,
        plugins,
        &mut class_keys,
    );
    let predicate_aliases = enrich(
        &mut enriched,
        &PREDICATE_FAMILY,
        config,
        plugins,
        &mut class_keys,
    );
    let mut connector_errors = connector_errors;
    connector_errors.extend(plugin_version_errors(
        config,
        &transform_aliases,
        &predicate_aliases,
        plugins,
    ));

    let resolve = |key: &str, class: &str| -> Option<String> {
        let known = match class_keys.get(key) {
            None => return Some(class.to_owned()),
            Some(PluginKind::Transformation) => plugins.transformation_def(class).is_some(),
            Some(PluginKind::Predicate) => plugins.predicate_def(class).is_some(),
            Some(PluginKind::Converter) => plugins.converter_def(class).is_some(),
            Some(PluginKind::HeaderConverter) => plugins.header_converter_def(class).is_some(),
        };
        known.then(|| plugins.class_name(class))
    };
    let mut base_values = enriched.validate_values(config, &resolve);

    check_negate_has_predicate(config, &transform_aliases, &mut base_values);

    if kind == ConnectorType::Sink {
        validate_sink_topics(config, &mut base_values);
    }

    let mut connector_values = connector_def.validate_values(config, &|_, c| Some(c.to_owned()));
    let mut bare: Vec<ValidatedValue> = Vec::new();
    let mut attach = |name: &str, message: String, bare: &mut Vec<ValidatedValue>| {
        if let Some(v) = connector_values.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        } else if let Some(v) = base_values.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        } else if let Some(v) = bare.iter_mut().find(|v| v.name == name) {
            v.errors.push(message);
        } else {
            let mut v = ValidatedValue::bare(name);
            v.errors.push(message);
            bare.push(v);
        }
    };
    for (name, v) in config {
        if v.is_none() {
            attach(name, NULL_VALUE_MESSAGE.to_owned(), &mut bare);
        }
    }
    for (name, message) in connector_errors {
        attach(&name, message, &mut bare);
    }

    let main = connector_section(
        &enriched,
        connector_def,
        &base_values,
        &connector_values,
        &bare,
    );
    let mut sections = vec![main];
    sections.extend(converter_sections(config, &base_values, plugins));
    merge_sections(connector_class_as_given, sections)
}

/// The sections of the header, key and value converters set on the connector (with valid classes).
fn converter_sections(
    config: &BTreeMap<String, Option<String>>,
    base_values: &[ValidatedValue],
    plugins: &dyn PluginLookup,
) -> Vec<Section> {
    [
        (keys::HEADER_CONVERTER, "header"),
        (keys::KEY_CONVERTER, "key"),
        (keys::VALUE_CONVERTER, "value"),
    ]
    .into_iter()
    .filter_map(|(prop, converter_type)| {
        let class_value = base_values.iter().find(|v| v.name == prop);
        validate_converter(config, prop, converter_type, class_value, plugins)
    })
    .collect()
}

/// The check Kafka runs inside each `transforms.<a>.type` validator: `negate` needs a predicate.
fn check_negate_has_predicate(
    config: &BTreeMap<String, Option<String>>,
    transform_aliases: &[String],
    base_values: &mut [ValidatedValue],
) {
    for alias in transform_aliases {
        let prefix = format!("{}.{alias}.", keys::TRANSFORMS);
        let negate = format!("{prefix}{}", keys::TRANSFORM_NEGATE);
        let predicate = format!("{prefix}{}", keys::TRANSFORM_PREDICATE);
        if config.contains_key(&negate) && !config.contains_key(&predicate) {
            // Reported on the negate key; when the transformation's class is unknown its implicit
            // keys are not defined, and the type key carries the message instead.
            let type_key = format!("{prefix}type");
            let message = format!(
                "Config '{negate}' was provided but there is no config '{predicate}' defining a predicate to be negated."
            );
            let target = base_values
                .iter()
                .position(|v| v.name == negate)
                .or_else(|| base_values.iter().position(|v| v.name == type_key));
            if let Some(i) = target {
                base_values[i].errors.push(message);
            }
        }
    }
}

/// The connector section: definitions (connector keys replace framework keys in place), values
/// (the connector's result for a key wins), groups; entries without a definition come first.
fn connector_section(
    enriched: &ConfigDef,
    connector_def: &ConfigDef,
    base_values: &[ValidatedValue],
    connector_values: &[ValidatedValue],
    bare: &[ValidatedValue],
) -> Section {
    let mut groups = enriched.groups();
    for group in connector_def.groups() {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    let mut all_keys = enriched.clone();
    for key in connector_def.keys() {
        all_keys.define_or_replace(key.clone());
    }
    let mut by_name: HashMap<&str, &ValidatedValue> = HashMap::new();
    for v in base_values.iter().chain(connector_values.iter()) {
        by_name.insert(v.name.as_str(), v);
    }
    let mut main = Section {
        error_count: 0,
        groups,
        configs: Vec::new(),
    };
    for v in bare {
        main.error_count += v.errors.len();
        main.configs.push(ConfigInfo {
            definition: None,
            value: v.info(),
        });
    }
    for key in all_keys.keys() {
        let v = by_name
            .get(key.name.as_str())
            .map(|v| (*v).clone())
            .unwrap_or_else(|| ValidatedValue::bare(key.name.clone()));
        main.error_count += v.errors.len();
        main.configs.push(ConfigInfo {
            definition: Some(key_info(key)),
            value: v.info(),
        });
    }
    main
}

/// One answer from its sections, in order: error counts summed, groups without repeats.
fn merge_sections(connector_class_as_given: &str, sections: Vec<Section>) -> ConfigInfos {
    let mut infos = ConfigInfos {
        name: connector_class_as_given.to_owned(),
        error_count: 0,
        groups: Vec::new(),
        configs: Vec::new(),
    };
    for section in sections {
        infos.error_count += section.error_count;
        for group in section.groups {
            if !infos.groups.contains(&group) {
                infos.groups.push(group);
            }
        }
        infos.configs.extend(section.configs);
    }
    infos
}

/// The message of the 400 answer to a create/update/patch whose config has errors (Kafka's
/// wording, one error per line, the endpoint hint with its literal backticks and braces);
/// `None` when there are no errors.
pub fn invalid_config_message(infos: &ConfigInfos) -> Option<String> {
    if infos.error_count == 0 {
        return None;
    }
    let mut message = format!(
        "Connector configuration is invalid and contains the following {} error(s):",
        infos.error_count
    );
    for info in &infos.configs {
        for error in &info.value.errors {
            message.push('\n');
            message.push_str(error);
        }
    }
    message.push_str(
        "\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
    );
    Some(message)
}

/// The answer of `GET /connector-plugins/{p}/config` for a connector: the plugin's keys first,
/// then the framework keys it does not redefine.
pub fn plugin_config_keys(kind: ConnectorType, connector_def: &ConfigDef) -> Vec<ConfigKeyInfo> {
    let own: HashSet<&str> = connector_def
        .keys()
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    connector_def
        .keys()
        .iter()
        .map(key_info)
        .chain(
            connector_config_def(kind)
                .keys()
                .iter()
                .filter(|k| !own.contains(k.name.as_str()))
                .map(key_info),
        )
        .collect()
}

/// The errors of a validation answer for people to read: each message once (Kafka reports
/// `Must configure one of topics or topics.regex` on both keys), and without the `Invalid value null`
/// follow-up a validator adds after a value failed to parse (`tasks.max=abc` is also "non-null").
pub fn distinct_errors(infos: &ConfigInfos) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for info in &infos.configs {
        let name = info.value.name.as_str();
        // Kafka's text for a null value, up to its reason
        let null_message = crate::config::invalid_value(name, "null", "");
        let null_follow_up = null_message.trim_end();
        let has_other = |errors: &[String]| errors.iter().any(|e| !e.starts_with(null_follow_up));
        for error in &info.value.errors {
            if error.starts_with(null_follow_up) && has_other(&info.value.errors) {
                continue;
            }
            if out.iter().any(|(_, e)| *e == error.as_str()) {
                continue;
            }
            out.push((name, error.as_str()));
        }
    }
    out
}
