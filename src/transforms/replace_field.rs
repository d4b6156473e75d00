//! `ReplaceField$Key` / `ReplaceField$Value`: drops (`exclude`), keeps (`include`) and renames
//! (`renames`) fields.

use super::support::WithSchema;
use crate::connectors::Props;
use std::collections::HashSet;
use std::sync::Arc;

use super::{
    copy_schema_basics, field_value, java_list, key, map_put, parse_config, put,
    replace_null_with_default, replace_null_with_default_key, require_map, require_struct, Input,
    Side, SideTransformation,
};
use crate::config::def::{ConfigDef, ConfigType, ConfigValue, Importance, Validator};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{SchemaBuilder, SchemaRef, Struct, Value};

const PURPOSE: &str = "field replacement";

/// Kafka's `parseRenameMappings`: `old:new` pairs (Java's `split(":")`, so `a:` is invalid).
/// The error is the reason only (`Invalid rename mapping: a`).
fn parse_renames(mappings: &[String]) -> Result<Vec<(String, String)>, ConfigError> {
    let mut out: Vec<(String, String)> = Vec::new();
    for mapping in mappings {
        let mut parts: Vec<&str> = mapping.split(':').collect();
        if !mapping.is_empty() {
            while parts.last() == Some(&"") {
                parts.pop();
            }
        }
        let [from, to] = parts.as_slice() else {
            return Err(format!("Invalid rename mapping: {mapping}").into());
        };
        out.retain(|(f, _)| f != from);
        out.push((from.to_string(), to.to_string()));
    }
    Ok(out)
}

/// The `ReplaceField` transformation.
#[derive(Clone, Debug)]
pub struct ReplaceField {
    side: Side,
    exclude: HashSet<String>,
    include: HashSet<String>,
    renames: Vec<(String, String)>,
    replace_null_with_default: bool,
}

impl ReplaceField {
    /// Kafka's `ReplaceField.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(key(
                "exclude",
                ConfigType::List,
                super::default(""),
                Importance::Medium,
                "Fields to exclude. This takes precedence over the fields to include.",
            ))
            .define(key(
                "include",
                ConfigType::List,
                super::default(""),
                Importance::Medium,
                "Fields to include. If specified, only these fields will be used.",
            ))
            .define(
                key(
                    "renames",
                    ConfigType::List,
                    super::default(""),
                    Importance::Medium,
                    "Field rename mappings.",
                )
                .validator(Validator::Custom(Arc::new(|_, v| match v {
                    ConfigValue::List(items) => {
                        parse_renames(items).map(|_| ()).map_err(String::from)
                    }
                    _ => Ok(()),
                }))),
            )
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages, e.g.
    /// `Invalid value [a] for configuration renames: Invalid rename mapping: a`.
    pub fn configure(side: Side, props: &Props) -> Result<ReplaceField, ConfigError> {
        let config = parse_config(&ReplaceField::config_def(), props)?;
        Ok(ReplaceField {
            side,
            exclude: config.get_list("exclude").into_iter().collect(),
            include: config.get_list("include").into_iter().collect(),
            renames: {
                let list = config.get_list("renames");
                parse_renames(&list).map_err(|reason| {
                    crate::config::invalid_value("renames", java_list(&list), reason)
                })?
            },
            replace_null_with_default: replace_null_with_default(&config),
        })
    }

    fn keep(&self, name: &str) -> bool {
        !self.exclude.contains(name) && (self.include.is_empty() || self.include.contains(name))
    }

    fn renamed<'a>(&'a self, name: &'a str) -> &'a str {
        self.renames
            .iter()
            .find(|(from, _)| from == name)
            .map_or(name, |(_, to)| to.as_str())
    }

    fn reverse_renamed<'a>(&'a self, name: &'a str) -> &'a str {
        self.renames
            .iter()
            .rev()
            .find(|(_, to)| to == name)
            .map_or(name, |(from, _)| from.as_str())
    }
}

impl SideTransformation for ReplaceField {
    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        let map = require_map(op.value, PURPOSE)?;
        let mut updated = Vec::with_capacity(map.len());
        for (k, v) in map {
            let Some(name) = k.as_str() else {
                continue;
            };
            if self.keep(name) {
                map_put(&mut updated, self.renamed(name), v.clone());
            }
        }
        Ok(Value::Map(updated))
    }

    fn with_schema(&self, _: &SchemaRef, op: Input<'_>) -> WithSchema {
        let s = require_struct(op.value, PURPOSE)?;
        let mut b = copy_schema_basics(&s.schema, SchemaBuilder::struct_());
        for f in &s.schema.fields {
            if self.keep(&f.name) {
                b = b.field(self.renamed(&f.name).to_string(), f.schema.clone());
            }
        }
        let schema = b.try_build()?;
        let mut updated = Struct::new(schema.clone());
        for f in &schema.fields {
            let v = field_value(
                s,
                self.reverse_renamed(&f.name),
                self.replace_null_with_default,
            );
            put(&mut updated, &f.name, v)?;
        }
        Ok((schema, Value::Struct(updated)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::{Schema, SchemaRef};

    fn replace(side: Side, pairs: &[(&str, &str)]) -> ReplaceField {
        ReplaceField::configure(side, &props(pairs)).unwrap()
    }

    fn schema() -> SchemaRef {
        SchemaBuilder::struct_()
            .name("s")
            .field("dont", Schema::string())
            .field("abc", Schema::int32())
            .field("foo", Schema::boolean())
            .field("etc", Schema::string())
            .build()
    }

    fn value() -> Struct {
        Struct::new(schema())
            .with("dont", "whatever")
            .unwrap()
            .with("abc", 42)
            .unwrap()
            .with("foo", true)
            .unwrap()
            .with("etc", "etc")
            .unwrap()
    }

    #[test]
    fn documented_example_with_schema() {
        let t = replace(
            Side::Value,
            &[("exclude", "dont"), ("renames", "abc:xyz,foo:bar")],
        );
        let out = apply_ok(&t, record("t", Some(schema()), Value::Struct(value())));
        let s = out.value_schema.unwrap();
        assert_eq!(field_names(&s), vec!["xyz", "bar", "etc"]);
        assert_eq!(s.name.as_deref(), Some("s"));
        let Value::Struct(v) = out.value else {
            panic!()
        };
        assert_eq!(v.get("xyz"), Some(&Value::Int32(42)));
        assert_eq!(v.get("bar"), Some(&Value::Boolean(true)));
        assert_eq!(v.get("etc"), Some(&Value::from("etc")));
    }

    #[test]
    fn include_on_the_key_and_schemaless() {
        let t = replace(Side::Key, &[("include", "abc,foo"), ("exclude", "foo")]);
        let out = apply_ok(&t, key_record(Some(schema()), Value::Struct(value())));
        let Value::Struct(k) = out.key else { panic!() };
        assert_eq!(k.schema.fields.len(), 1);
        assert_eq!(k.get("abc"), Some(&Value::Int32(42)));

        let sl = replace(Side::Value, &[("exclude", "dont"), ("renames", "abc:xyz")]);
        let out = apply_map(
            &sl,
            &[
                ("dont", Value::from("x")),
                ("abc", Value::Int8(1)),
                ("etc", Value::Null),
            ],
        );
        assert_eq!(
            out.value,
            map(&[("xyz", Value::Int8(1)), ("etc", Value::Null)])
        );
        let tomb = record("t", None, Value::Null);
        assert_eq!(apply_ok(&sl, tomb.clone()), tomb);
    }

    #[test]
    fn errors_like_kafka() {
        assert_eq!(
            ReplaceField::configure(Side::Value, &props(&[("renames", "a:b,c")])).unwrap_err(),
            "Invalid value [a:b, c] for configuration renames: Invalid rename mapping: c"
        );
        assert_eq!(
            ReplaceField::configure(Side::Value, &props(&[("renames", "a:")])).unwrap_err(),
            "Invalid value [a:] for configuration renames: Invalid rename mapping: a:"
        );
        let t = replace(Side::Value, &[("exclude", "x")]);
        assert_eq!(
            t.apply(record("t", None, Value::Int8(1)), &source()).unwrap_err(),
            "Only Map objects supported in absence of schema for [field replacement], found: java.lang.Byte"
        );
        let v = ReplaceField::config_def().validate(
            &[("renames".to_string(), Some("x".to_string()))]
                .into_iter()
                .collect(),
        );
        assert_eq!(
            v.iter().find(|v| v.name == "renames").unwrap().errors,
            vec!["Invalid value [x] for configuration renames: Invalid rename mapping: x"]
        );
    }

    #[test]
    fn renaming_there_and_back_restores_the_record() {
        let there = replace(Side::Value, &[("renames", "abc:xyz,foo:bar")]);
        let back = replace(Side::Value, &[("renames", "xyz:abc,bar:foo")]);
        for i in 0..50 {
            let v = Struct::new(schema())
                .with("dont", format!("d{i}"))
                .unwrap()
                .with("abc", i)
                .unwrap()
                .with("foo", i % 2 == 0)
                .unwrap()
                .with("etc", "e".repeat(i as usize))
                .unwrap();
            let original = record("t", Some(schema()), Value::Struct(v));
            let round = apply_ok(&back, apply_ok(&there, original.clone()));
            assert_eq!(round, original);
            let schemaless = record(
                "t",
                None,
                map(&[("abc", Value::Int32(i)), ("foo", Value::Boolean(true))]),
            );
            assert_eq!(
                apply_ok(&back, apply_ok(&there, schemaless.clone())),
                schemaless
            );
        }
    }
}
