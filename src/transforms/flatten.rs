//! `Flatten$Key` / `Flatten$Value`: flattens nested structs or maps into one level, joining
//! field names with a delimiter.

use super::support::WithSchema;
use std::collections::BTreeMap;

use super::{
    copy_schema_basics, copy_schema_basics_same_type, key, map_put, parse_config, put, require_map,
    require_struct_or_null, Entries, Input, Side, SideTransformation,
};
use crate::config::def::{ConfigDef, ConfigType, Importance};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};

const PURPOSE: &str = "flattening";

/// The `Flatten` transformation.
#[derive(Clone, Debug)]
pub struct Flatten {
    side: Side,
    delimiter: String,
}

impl Flatten {
    /// Kafka's `Flatten.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(key(
            "delimiter",
            ConfigType::String,
            super::default("."),
            Importance::Medium,
            "Delimiter to insert between field names from the input record when generating field names for the output record",
        ))
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(side: Side, props: &BTreeMap<String, String>) -> Result<Flatten, ConfigError> {
        let config = parse_config(&Flatten::config_def(), props)?;
        Ok(Flatten {
            side,
            delimiter: config.get_string("delimiter").unwrap_or_default(),
        })
    }

    fn field_name(&self, prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}{}{name}", self.delimiter)
        }
    }

    fn flatten_map(
        &self,
        original: &Entries,
        prefix: &str,
        out: &mut Entries,
    ) -> Result<(), DataError> {
        for (k, v) in original {
            // Kafka's maps are Map<String, Object>; other keys print as Java would
            let key_text = k
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| k.to_java_string());
            let name = self.field_name(prefix, &key_text);
            match v {
                Value::Null
                | Value::Int8(_)
                | Value::Int16(_)
                | Value::Int32(_)
                | Value::Int64(_)
                | Value::Float32(_)
                | Value::Float64(_)
                | Value::Boolean(_)
                | Value::String(_)
                | Value::Bytes(_)
                | Value::Array(_) => map_put(out, &name, v.clone()),
                Value::Map(_) => {
                    let inner = require_map(v, PURPOSE)?;
                    self.flatten_map(inner, &name, out)?;
                }
                Value::Struct(_) => {
                    return Err(format!(
                        "Flatten transformation does not support {} for record without schemas (for field {name}).",
                        v.java_class()
                    ).into())
                }
            }
        }
        Ok(())
    }

    fn build_schema(
        &self,
        schema: &Schema,
        prefix: &str,
        mut builder: SchemaBuilder,
        optional: bool,
        default_from_parent: Option<&Struct>,
    ) -> Result<SchemaBuilder, DataError> {
        for field in &schema.fields {
            let name = self.field_name(prefix, &field.name);
            let field_optional = optional || field.schema.optional;
            let field_default = match (&field.schema.default_value, default_from_parent) {
                (Some(d), _) => Some(d.clone()),
                (None, Some(parent)) => parent.get(&field.name).cloned().filter(|v| !v.is_null()),
                (None, None) => None,
            };
            match field.schema.schema_type {
                SchemaType::Map => return Err(map_unsupported(&name).into()),
                SchemaType::Struct => {
                    let parent = struct_of(field_default.as_ref());
                    builder =
                        self.build_schema(&field.schema, &name, builder, field_optional, parent)?;
                }
                _ => {
                    let mut fb = copy_schema_basics_same_type(&field.schema);
                    if field_optional {
                        fb = fb.optional();
                    }
                    if let Some(d) = field_default {
                        fb = fb.default_value(d);
                    }
                    builder = builder.field(name, fb.build());
                }
            }
        }
        Ok(builder)
    }

    fn flatten_struct(
        &self,
        s: Option<&Struct>,
        prefix: &str,
        out: &mut Struct,
    ) -> Result<(), DataError> {
        let Some(s) = s else {
            return Ok(());
        };
        for field in &s.schema.fields {
            let name = self.field_name(prefix, &field.name);
            let v = s.get(&field.name).cloned().unwrap_or(Value::Null);
            match field.schema.schema_type {
                SchemaType::Map => return Err(map_unsupported(&name).into()),
                SchemaType::Struct => {
                    self.flatten_struct(struct_of(Some(&v)), &name, out)?;
                }
                _ => put(out, &name, v)?,
            }
        }
        Ok(())
    }

    fn flat_schema(&self, schema: &Schema) -> Result<SchemaRef, DataError> {
        let builder = copy_schema_basics(schema, SchemaBuilder::struct_());
        let default = struct_of(schema.default_value.as_ref());
        self.build_schema(schema, "", builder, schema.optional, default)?
            .try_build()
    }
}

/// The struct a value holds, if it is one.
fn struct_of(value: Option<&Value>) -> Option<&Struct> {
    match value {
        Some(Value::Struct(s)) => Some(s),
        _ => None,
    }
}

/// Kafka's message for a map field in a record with a schema.
fn map_unsupported(name: &str) -> String {
    format!(
        "Flatten transformation does not support MAP for record with schemas (for field {name})."
    )
}

impl SideTransformation for Flatten {
    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        let map = require_map(op.value, PURPOSE)?;
        let mut out = Vec::new();
        self.flatten_map(map, "", &mut out)?;
        Ok(Value::Map(out))
    }

    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema {
        let s = require_struct_or_null(op.value, PURPOSE)?;
        let updated = self.flat_schema(schema)?;
        let mut out = Struct::new(updated.clone());
        self.flatten_struct(s, "", &mut out)?;
        Ok((updated, Value::Struct(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    fn flatten(side: Side, pairs: &[(&str, &str)]) -> Flatten {
        Flatten::configure(side, &props(pairs)).unwrap()
    }

    fn nested() -> (SchemaRef, Struct) {
        let inner = SchemaBuilder::struct_()
            .field("c", Schema::int32())
            .field("d", SchemaBuilder::array(Schema::string()).build())
            .build();
        let middle = SchemaBuilder::struct_()
            .field("b", inner.clone())
            .field("e", Schema::optional_string())
            .build();
        let outer = SchemaBuilder::struct_()
            .name("outer")
            .field("a", middle.clone())
            .field("top", Schema::boolean())
            .build();
        let value = Struct::new(outer.clone())
            .with(
                "a",
                Struct::new(middle)
                    .with(
                        "b",
                        Struct::new(inner)
                            .with("c", 1)
                            .unwrap()
                            .with("d", Value::Array(vec![Value::from("x")]))
                            .unwrap(),
                    )
                    .unwrap(),
            )
            .unwrap()
            .with("top", true)
            .unwrap();
        (outer, value)
    }

    #[test]
    fn nested_struct_with_default_delimiter() {
        let (schema, value) = nested();
        let out = apply_ok(
            &flatten(Side::Value, &[]),
            record("t", Some(schema), Value::Struct(value)),
        );
        let s = out.value_schema.unwrap();
        assert_eq!(field_names(&s), vec!["a.b.c", "a.b.d", "a.e", "top"]);
        assert_eq!(s.name.as_deref(), Some("outer"));
        assert!(!s.field("a.b.c").unwrap().schema.optional);
        assert!(s.field("a.e").unwrap().schema.optional);
        let Value::Struct(v) = out.value else {
            panic!()
        };
        assert_eq!(v.get("a.b.c"), Some(&Value::Int32(1)));
        assert_eq!(v.get("a.b.d"), Some(&Value::Array(vec![Value::from("x")])));
        assert_eq!(v.get("a.e"), Some(&Value::Null));
        assert_eq!(v.get("top"), Some(&Value::Boolean(true)));
    }

    #[test]
    fn optional_parents_make_children_optional_and_pass_defaults() {
        let inner = SchemaBuilder::struct_()
            .field("x", Schema::int32())
            .optional()
            .build();
        let default_inner = Struct::new(inner.clone()).with("x", 5).unwrap();
        let inner_with_default = SchemaBuilder::from_schema(&inner)
            .default_value(Value::Struct(default_inner))
            .build();
        let outer = SchemaBuilder::struct_()
            .field("p", inner_with_default)
            .build();
        let out = apply_ok(
            &flatten(Side::Key, &[("delimiter", "_")]),
            key_record(Some(outer.clone()), Value::Struct(Struct::new(outer))),
        );
        let s = out.key_schema.unwrap();
        let x = &s.field("p_x").unwrap().schema;
        assert!(x.optional);
        assert_eq!(x.default_value, Some(Value::Int32(5)));
        let Value::Struct(v) = out.key else { panic!() };
        // the null parent reads as its default struct, whose field is copied
        assert_eq!(v.get_without_default("p_x"), Some(&Value::Int32(5)));
    }

    #[test]
    fn schemaless_maps() {
        let value = map(&[
            (
                "a",
                map(&[
                    ("b", Value::Int32(1)),
                    ("c", map(&[("d", Value::from("x"))])),
                ]),
            ),
            ("n", Value::Null),
            ("arr", Value::Array(vec![map(&[("k", Value::Int8(1))])])),
        ]);
        let out = apply_ok(
            &flatten(Side::Value, &[("delimiter", "#")]),
            record("t", None, value),
        );
        assert_eq!(
            out.value,
            map(&[
                ("a#b", Value::Int32(1)),
                ("a#c#d", Value::from("x")),
                ("n", Value::Null),
                ("arr", Value::Array(vec![map(&[("k", Value::Int8(1))])])),
            ])
        );
    }

    #[test]
    fn errors_like_kafka() {
        let t = flatten(Side::Value, &[]);
        assert_eq!(
            t.apply(record("t", None, Value::from("x")), &source()).unwrap_err(),
            "Only Map objects supported in absence of schema for [flattening], found: java.lang.String"
        );
        let schema = SchemaBuilder::struct_()
            .field(
                "m",
                SchemaBuilder::map(Schema::string(), Schema::string()).build(),
            )
            .build();
        assert_eq!(
            apply_err(&t, struct_record(schema, &[])),
            "Flatten transformation does not support MAP for record with schemas (for field m)."
        );
        let s = SchemaBuilder::struct_().field("a", Schema::int32()).build();
        let bad = map(&[("s", Value::Struct(Struct::new(s)))]);
        assert_eq!(
            t.apply(record("t", None, bad), &source()).unwrap_err(),
            "Flatten transformation does not support class org.apache.kafka.connect.data.Struct for record without schemas (for field s)."
        );
        let tomb = record("t", None, Value::Null);
        assert_eq!(apply_ok(&t, tomb.clone()), tomb);
    }

    #[test]
    fn a_flattened_name_clash_fails_like_kafkas_builder() {
        let inner = SchemaBuilder::struct_().field("b", Schema::int32()).build();
        let schema = SchemaBuilder::struct_()
            .field("a", inner)
            .field("a.b", Schema::int32())
            .build();
        let t = flatten(Side::Value, &[]);
        let value = Value::Struct(Struct::new(schema.clone()));
        assert_eq!(
            t.apply(record("t", Some(schema), value), &source())
                .unwrap_err(),
            "Cannot create field because of field name duplication a.b"
        );
    }
}
