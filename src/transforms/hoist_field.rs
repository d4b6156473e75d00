//! `HoistField$Key` / `HoistField$Value`: wraps the key or value in a struct (or, schemaless, a
//! map) under one field name.

use super::support::WithSchema;
use crate::connectors::Props;

use super::{parse_config, put, required_string, Input, Side, SideTransformation};
use crate::config::def::{ConfigDef, Importance};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{SchemaBuilder, SchemaRef, Struct, Value};

/// The `HoistField` transformation.
#[derive(Clone, Debug)]
pub struct HoistField {
    side: Side,
    field: String,
}

impl HoistField {
    /// Kafka's `HoistField.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(required_string(
            "field",
            Importance::Medium,
            "Field name for the single field that will be created in the resulting Struct or Map.",
        ))
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(side: Side, props: &Props) -> Result<HoistField, ConfigError> {
        let config = parse_config(&HoistField::config_def(), props)?;
        Ok(HoistField {
            side,
            field: config.get_string("field").unwrap_or_default(),
        })
    }
}

impl SideTransformation for HoistField {
    const PASSES_NULL: bool = false;

    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        Ok(Value::Map(vec![(
            Value::String(self.field.clone()),
            op.value.clone(),
        )]))
    }

    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema {
        let updated = SchemaBuilder::struct_()
            .field(self.field.clone(), schema.clone())
            .build();
        let mut s = Struct::new(updated.clone());
        put(&mut s, &self.field, op.value.clone())?;
        Ok((updated, Value::Struct(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::extract_field::ExtractField;
    use super::super::test_util::*;
    use super::*;
    use crate::data::{logical, Schema, SchemaRef};

    fn hoist(side: Side, field: &str) -> HoistField {
        HoistField::configure(side, &props(&[("field", field)])).unwrap()
    }

    #[test]
    fn documented_example() {
        let t = hoist(Side::Value, "line");
        let out = apply_ok(&t, record("t", None, Value::from("hello")));
        assert_eq!(out.value, map(&[("line", Value::from("hello"))]));
        let out = apply_ok(
            &t,
            record("t", Some(Schema::string()), Value::from("hello")),
        );
        let s = out.value_schema.unwrap();
        assert_eq!(s.fields.len(), 1);
        assert_eq!(s.field("line").unwrap().schema, Schema::string());
        let Value::Struct(v) = out.value else {
            panic!()
        };
        assert_eq!(v.get("line"), Some(&Value::from("hello")));
    }

    #[test]
    fn key_side_and_null_values() {
        let t = hoist(Side::Key, "k");
        let out = apply_ok(&t, key_record(Some(Schema::optional_int64()), Value::Null));
        let Value::Struct(v) = out.key else { panic!() };
        assert_eq!(v.get("k"), Some(&Value::Null));
        let out = apply_ok(&t, key_record(None, Value::Null));
        assert_eq!(out.key, map(&[("k", Value::Null)]));
        assert_eq!(
            t.apply(key_record(Some(Schema::int64()), Value::Null), &source())
                .unwrap_err(),
            "Invalid value: null used for required field: \"k\", schema type: INT64"
        );
        assert_eq!(
            HoistField::configure(Side::Key, &Props::new()).unwrap_err(),
            "Missing required configuration \"field\" which has no default value."
        );
    }

    /// Generated values of every kind, with and without schemas.
    fn generated() -> Vec<(Option<SchemaRef>, Value)> {
        let mut out: Vec<(Option<SchemaRef>, Value)> = Vec::new();
        for i in 0..40i64 {
            let n = i * 7919 - 150;
            out.push((None, Value::Int64(n)));
            out.push((Some(Schema::int64()), Value::Int64(n)));
            out.push((Some(Schema::int32()), Value::Int32(n as i32)));
            out.push((Some(Schema::int8()), Value::Int8(n as i8)));
            out.push((Some(Schema::float64()), Value::Float64(n as f64 / 3.0)));
            out.push((
                None,
                Value::String(format!("v{n}").repeat((i % 4) as usize)),
            ));
            out.push((
                Some(Schema::optional_string()),
                if i % 3 == 0 {
                    Value::Null
                } else {
                    Value::from(format!("s{i}"))
                },
            ));
            out.push((Some(Schema::bytes()), Value::Bytes((0..i as u8).collect())));
            out.push((None, Value::Array((0..i % 5).map(Value::Int64).collect())));
            out.push((Some(logical::timestamp().build()), Value::Int64(n * 1000)));
            let nested = SchemaBuilder::struct_()
                .field("a", Schema::int64())
                .field("b", Schema::optional_string())
                .build();
            let s = Struct::new(nested.clone()).with("a", n).unwrap();
            out.push((Some(nested), Value::Struct(s)));
            out.push((
                None,
                map(&[("x", Value::Int64(n)), ("y", Value::Boolean(i % 2 == 0))]),
            ));
        }
        out
    }

    #[test]
    fn hoist_then_extract_gives_back_the_original() {
        for side in [Side::Key, Side::Value] {
            for field in ["f", "line", "a.b", ""] {
                let h = hoist(side, field);
                let e = ExtractField::configure(side, &props(&[("field", field)])).unwrap();
                for (schema, value) in generated() {
                    let original = match side {
                        Side::Key => key_record(schema.clone(), value.clone()),
                        Side::Value => record("t", schema.clone(), value.clone()),
                    };
                    let hoisted = apply_ok(&h, original.clone());
                    assert_ne!(hoisted, original);
                    let back = apply_ok(&e, hoisted);
                    assert_eq!(back, original, "{side:?} {field} {value:?}");
                }
            }
        }
    }
}
