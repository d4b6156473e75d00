//! `MaskField$Key` / `MaskField$Value`: replaces fields with a "null value" of their type
//! (`0`, `false`, `""`, empty collections) or with a configured replacement.

use super::support::WithSchema;
use crate::connectors::Props;
use std::collections::HashSet;

use super::cast::big_decimal_long_value;
use super::{
    copy_struct, key, map_get, map_put, parse_config, replace_null_with_default,
    replace_null_with_default_key, require_map, require_struct, required_list_key, Input, Side,
    SideTransformation,
};
use crate::config::def::{ConfigDef, ConfigType, DefaultValue, Importance, Validator};
use crate::config::ConfigError;
use crate::data::logical::{self, LogicalKind, ParsedDecimal};
use crate::data::DataError;
use crate::data::{Schema, SchemaRef, Value};

const PURPOSE: &str = "mask fields";

/// The `MaskField` transformation.
#[derive(Clone, Debug)]
pub struct MaskField {
    side: Side,
    fields: HashSet<String>,
    replacement: Option<String>,
    replace_null_with_default: bool,
}

impl MaskField {
    /// Kafka's `MaskField.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                required_list_key("fields", "Names of fields to mask."),
            )
            .define(
                key(
                    "replacement",
                    ConfigType::String,
                    DefaultValue::Null,
                    Importance::Low,
                    "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only).",
                )
                .validator(Validator::NonEmptyString),
            )
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(side: Side, props: &Props) -> Result<MaskField, ConfigError> {
        let config = parse_config(&MaskField::config_def(), props)?;
        Ok(MaskField {
            side,
            fields: config.get_list("fields").into_iter().collect(),
            replacement: config.get_string("replacement"),
            replace_null_with_default: replace_null_with_default(&config),
        })
    }

    fn masked(&self, value: &Value, schema: Option<&Schema>) -> Result<Value, DataError> {
        if value.is_null() {
            return Ok(Value::Null);
        }
        match &self.replacement {
            None => mask_with_null_value(value, schema),
            Some(r) => mask_with_replacement(value, schema, r),
        }
    }
}

/// Kafka's `maskWithNullValue`, keyed on the Java class of the value.
fn mask_with_null_value(value: &Value, schema: Option<&Schema>) -> Result<Value, DataError> {
    if let (Some(LogicalKind::Decimal(_)), Value::Bytes(_)) =
        (schema.and_then(Schema::logical), value)
    {
        return Ok(Value::Bytes(vec![0]));
    }
    Ok(match value {
        Value::Boolean(_) => Value::Boolean(false),
        Value::Int8(_) => Value::Int8(0),
        Value::Int16(_) => Value::Int16(0),
        Value::Int32(_) => Value::Int32(0),
        Value::Int64(_) => Value::Int64(0),
        Value::Float32(_) => Value::Float32(0.0),
        Value::Float64(_) => Value::Float64(0.0),
        Value::String(_) => Value::String(String::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Map(_) => Value::Map(Vec::new()),
        other => return Err(format!("Cannot mask value of type: {}", other.java_class()).into()),
    })
}

/// Kafka's `maskWithCustomReplacement`: the replacement converted to the value's own type.
fn mask_with_replacement(
    value: &Value,
    schema: Option<&Schema>,
    replacement: &str,
) -> Result<Value, DataError> {
    let not_a_number = || {
        DataError(format!(
            "Unable to convert {replacement} (class java.lang.String) to a number"
        ))
    };
    // Values.convertToX parses the text as a BigDecimal and narrows it
    let long = || -> Result<i64, DataError> {
        ParsedDecimal::parse(replacement)
            .map(|d| big_decimal_long_value(&d))
            .ok_or_else(not_a_number)
    };
    let double = || -> Result<f64, DataError> {
        ParsedDecimal::parse(replacement)
            .and_then(|d| d.to_sci_string().parse().ok())
            .ok_or_else(not_a_number)
    };
    if let (Some(LogicalKind::Decimal(scale)), Value::Bytes(_)) =
        (schema.and_then(Schema::logical), value)
    {
        return logical::decimal_from_str(replacement, scale)
            .map(Value::Bytes)
            .map_err(|_| {
                DataError(format!(
                    "Unable to convert {replacement} (class java.lang.String) to number"
                ))
            });
    }
    Ok(match value {
        Value::Int8(_) => Value::Int8(long()? as i8),
        Value::Int16(_) => Value::Int16(long()? as i16),
        Value::Int32(_) => Value::Int32(long()? as i32),
        Value::Int64(_) => Value::Int64(long()?),
        Value::Float32(_) => Value::Float32(double()? as f32),
        Value::Float64(_) => Value::Float64(double()?),
        Value::String(_) => Value::String(replacement.to_string()),
        other => {
            return Err(format!(
                "Cannot mask value of type {} with custom replacement.",
                other.java_class()
            )
            .into())
        }
    })
}

impl SideTransformation for MaskField {
    const PASSES_NULL: bool = false;

    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        let map = require_map(op.value, PURPOSE)?;
        let mut updated = map.clone();
        let mut fields: Vec<&String> = self.fields.iter().collect();
        fields.sort();
        for field in fields {
            map_put(&mut updated, field, self.masked(map_get(map, field), None)?);
        }
        Ok(Value::Map(updated))
    }

    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema {
        let s = require_struct(op.value, PURPOSE)?;
        let updated = copy_struct(
            s,
            s.schema.clone(),
            self.replace_null_with_default,
            |f, v| {
                if self.fields.contains(&f.name) {
                    self.masked(&v, Some(&f.schema))
                } else {
                    Ok(v)
                }
            },
        )?;
        Ok((schema.clone(), Value::Struct(updated)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::SchemaBuilder;
    use crate::data::Struct;

    fn mask(side: Side, pairs: &[(&str, &str)]) -> MaskField {
        MaskField::configure(side, &props(pairs)).unwrap()
    }

    fn schema() -> crate::data::SchemaRef {
        struct_schema(&[
            ("int", Schema::int32()),
            ("long", Schema::int64()),
            ("str", Schema::string()),
            ("bool", Schema::boolean()),
            ("dbl", Schema::float64()),
            ("arr", SchemaBuilder::array(Schema::int32()).build()),
            ("keep", Schema::string()),
        ])
    }

    fn full() -> Struct {
        struct_of(
            &schema(),
            &[
                ("int", Value::Int32(42)),
                ("long", Value::Int64(42)),
                ("str", Value::from("secret")),
                ("bool", Value::Boolean(true)),
                ("dbl", Value::Float64(4.2)),
                ("arr", Value::Array(vec![Value::Int32(1)])),
                ("keep", Value::from("k")),
            ],
        )
    }

    #[test]
    fn with_schema_masks_to_null_values() {
        let t = mask(Side::Value, &[("fields", "int,long,str,bool,dbl,arr")]);
        let out = apply_ok(&t, record("t", Some(schema()), Value::Struct(full())));
        let Value::Struct(s) = out.value else {
            panic!()
        };
        assert_eq!(s.get("int"), Some(&Value::Int32(0)));
        assert_eq!(s.get("long"), Some(&Value::Int64(0)));
        assert_eq!(s.get("str"), Some(&Value::from("")));
        assert_eq!(s.get("bool"), Some(&Value::Boolean(false)));
        assert_eq!(s.get("dbl"), Some(&Value::Float64(0.0)));
        assert_eq!(s.get("arr"), Some(&Value::Array(vec![])));
        assert_eq!(s.get("keep"), Some(&Value::from("k")));
        assert_eq!(out.value_schema, Some(schema()));
    }

    #[test]
    fn replacement_is_converted_to_the_field_type() {
        let t = mask(
            Side::Key,
            &[("fields", "int,long,str,dbl"), ("replacement", "123")],
        );
        let out = apply_ok(&t, key_record(Some(schema()), Value::Struct(full())));
        let Value::Struct(s) = out.key else { panic!() };
        assert_eq!(s.get("int"), Some(&Value::Int32(123)));
        assert_eq!(s.get("long"), Some(&Value::Int64(123)));
        assert_eq!(s.get("str"), Some(&Value::from("123")));
        assert_eq!(s.get("dbl"), Some(&Value::Float64(123.0)));
        let star = mask(Side::Value, &[("fields", "str"), ("replacement", "****")]);
        let out = apply_map(&star, &[("str", Value::from("x")), ("n", Value::Int32(3))]);
        assert_eq!(
            out.value,
            map(&[("str", Value::from("****")), ("n", Value::Int32(3))])
        );
        let frac = mask(Side::Value, &[("fields", "n"), ("replacement", "9.99")]);
        let out = apply_map(&frac, &[("n", Value::Int32(3))]);
        assert_eq!(out.value, map(&[("n", Value::Int32(9))]));
    }

    #[test]
    fn schemaless_masks_and_adds_missing_fields_as_null() {
        let t = mask(Side::Value, &[("fields", "a,b,missing")]);
        let out = apply_map(
            &t,
            &[
                ("a", Value::Int8(5)),
                ("b", Value::from("s")),
                ("c", Value::Int8(1)),
            ],
        );
        assert_eq!(
            out.value,
            map(&[
                ("a", Value::Int8(0)),
                ("b", Value::from("")),
                ("c", Value::Int8(1)),
                ("missing", Value::Null)
            ])
        );
    }

    #[test]
    fn errors_like_kafka() {
        let t = mask(Side::Value, &[("fields", "a"), ("replacement", "x")]);
        assert_eq!(
            t.apply(record("t", None, map(&[("a", Value::Int32(1))])), &source())
                .unwrap_err(),
            "Unable to convert x (class java.lang.String) to a number"
        );
        assert_eq!(
            t.apply(
                record("t", None, map(&[("a", Value::Boolean(true))])),
                &source()
            )
            .unwrap_err(),
            "Cannot mask value of type class java.lang.Boolean with custom replacement."
        );
        let plain = mask(Side::Value, &[("fields", "a")]);
        assert_eq!(
            plain
                .apply(
                    record("t", None, map(&[("a", Value::Bytes(vec![1]))])),
                    &source()
                )
                .unwrap_err(),
            "Cannot mask value of type: class [B"
        );
        assert_eq!(
            plain
                .apply(record("t", None, Value::Null), &source())
                .unwrap_err(),
            "Only Map objects supported in absence of schema for [mask fields], found: null"
        );
        assert_eq!(
            MaskField::configure(
                Side::Value,
                &props(&[("fields", "a"), ("replacement", " ")])
            )
            .unwrap_err(),
            "Invalid value  for configuration replacement: String must be non-empty"
        );
        assert_eq!(
            MaskField::configure(Side::Value, &props(&[("fields", "")])).unwrap_err(),
            "Invalid value [] for configuration fields: Empty list"
        );
    }

    #[test]
    fn decimals_mask_to_zero() {
        let dec = logical::decimal(2).build();
        let schema = SchemaBuilder::struct_().field("d", dec).build();
        let value = Struct::new(schema.clone())
            .with(
                "d",
                Value::Bytes(logical::decimal_from_str("12.34", 2).unwrap()),
            )
            .unwrap();
        let out = apply_ok(
            &mask(Side::Value, &[("fields", "d")]),
            record("t", Some(schema.clone()), Value::Struct(value.clone())),
        );
        let Value::Struct(s) = out.value else {
            panic!()
        };
        assert_eq!(s.get("d"), Some(&Value::Bytes(vec![0])));
        let out = apply_ok(
            &mask(Side::Value, &[("fields", "d"), ("replacement", "1.5")]),
            record("t", Some(schema), Value::Struct(value)),
        );
        let Value::Struct(s) = out.value else {
            panic!()
        };
        assert_eq!(
            s.get("d"),
            Some(&Value::Bytes(logical::decimal_from_str("1.50", 2).unwrap()))
        );
    }
}
