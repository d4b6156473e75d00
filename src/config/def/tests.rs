use std::sync::Arc;

use super::*;
use crate::data::double_to_string;

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
        Err("Invalid value abc for configuration tasks.max: Not a number of type INT".to_owned())
    );
    assert_eq!(
        parse("n", "2147483648", ConfigType::Int),
        Err("Invalid value 2147483648 for configuration n: Not a number of type INT".to_owned())
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
    assert_eq!(double_to_string(1234567.0), "1234567.0");
    assert_eq!(double_to_string(f64::NAN), "NaN");
}

/// Java prints `Double.MIN_VALUE` as `4.9E-324`: when one digit would do, `Double.toString`
/// still considers two and keeps the closer one. The formatter config values used before
/// printed `5.0E-324`; config values and record data now share one formatter.
#[test]
fn doubles_render_with_java_two_digit_rule() {
    assert_eq!(
        ConfigValue::Double(f64::from_bits(1)).render().as_deref(),
        Some("4.9E-324")
    );
    assert_eq!(
        ConfigValue::Double(f64::from_bits(1)).java_string(),
        "4.9E-324"
    );
    assert_eq!(
        ConfigValue::Double(1e23).render().as_deref(),
        Some("1.0E23")
    );
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
        Err(
            "Invalid value Nope for configuration key.converter: Class Nope could not be found."
                .to_owned()
        )
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
        Err("Invalid value null for configuration tasks.max: Value must be non-null".to_owned())
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

    let v = Validator::OneOfCaseInsensitive(vec!["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]);
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
        Err("Invalid value null for configuration transforms: entry must be non null".to_owned())
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
        Err("Invalid value  for configuration replacement: String must be non-empty".to_owned())
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
            key("n", ConfigType::Int, Some("1"), Importance::High, "n")
                .validator(Validator::AtLeast(1.0)),
        )
        .define(key(
            "l",
            ConfigType::List,
            Some("x, y"),
            Importance::Low,
            "l",
        ))
        .define(key("opt", ConfigType::Long, None, Importance::Low, "opt"))
        .define(key("pw", ConfigType::Password, None, Importance::Low, "pw"))
        .define(key(
            "flag",
            ConfigType::Boolean,
            Some("false"),
            Importance::Low,
            "flag",
        ))
        .define(key(
            "ratio",
            ConfigType::Double,
            Some("0.5"),
            Importance::Low,
            "ratio",
        ))
        .define(key("s", ConfigType::Short, Some("3"), Importance::Low, "s"))
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
            "Invalid value maybe for configuration flag: Expected value to be either true or false"
                .to_owned(),
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
        .define(key("x", ConfigType::Int, None, Importance::Low, "first").group("G1", 1))
        .define(key("x", ConfigType::Int, None, Importance::Low, "second"));
    assert_eq!(a.keys().len(), 1);
    assert_eq!(a.get("x").unwrap().documentation, "first");
    let b = ConfigDef::new()
        .define(key("x", ConfigType::Int, None, Importance::Low, "other"))
        .define(key("y", ConfigType::Int, None, Importance::Low, "y").group("G2", 1))
        .define(key("z", ConfigType::Int, None, Importance::Low, "z").group("G1", 2));
    let merged = a.merge(&b);
    let names: Vec<&str> = merged.keys().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, vec!["x", "y", "z"]);
    assert_eq!(merged.get("x").unwrap().documentation, "first");
    assert_eq!(merged.groups(), vec!["G1".to_owned(), "G2".to_owned()]);
}

#[test]
fn sorted_keys_and_embed() {
    let child = ConfigDef::new()
        .define(key(
            "zeta",
            ConfigType::String,
            None,
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
        .define(key(
            "alpha",
            ConfigType::String,
            None,
            Importance::Medium,
            "",
        ))
        .define(key("low", ConfigType::String, None, Importance::Low, ""))
        .define(key("grouped", ConfigType::String, None, Importance::High, "").group("Inner", 1));
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
    assert!(
        infos[0].errors[0].starts_with("Invalid value ( for configuration regex: Invalid regex: ")
    );
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
