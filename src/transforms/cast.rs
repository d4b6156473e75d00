//! `Cast$Key` / `Cast$Value`: casts fields, or the whole key or value, to another primitive type.

use super::support::WithSchema;
use base64::Engine as _;
use std::collections::BTreeMap;

use super::{
    copy_schema_basics, copy_struct, java_list, key, map_put, parse_config,
    replace_null_with_default, replace_null_with_default_key, require_map, require_struct, Input,
    Side, SideTransformation,
};
use crate::config::def::{
    parse_list, ConfigDef, ConfigType, ConfigValue, DefaultValue, Importance, Validator,
};
use crate::config::ConfigError;
use crate::data::logical::{self, LogicalKind};
use crate::data::DataError;
use crate::data::{
    double_to_string, float_to_string, Schema, SchemaBuilder, SchemaRef, SchemaType, Value,
};

const PURPOSE: &str = "cast types";

/// The types Kafka's `Cast` reads: the primitives, `INT8` to `BYTES` in declaration order.
const INPUT_TYPES: &[SchemaType] = SchemaType::ALL.split_at(9).0;

/// The types Kafka's `Cast` writes: the primitives but `BYTES`.
const OUTPUT_TYPES: &[SchemaType] = SchemaType::ALL.split_at(8).0;

fn type_list(types: &[SchemaType]) -> String {
    let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    java_list(&names)
}

/// What `spec` asks for: per-field casts, or one cast of the whole key or value.
#[derive(Clone, Debug, PartialEq)]
struct Spec {
    fields: Vec<(String, SchemaType)>,
    whole: Option<SchemaType>,
}

/// Java's `String.split(":")`: trailing empty strings removed.
fn java_split_colon(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(':').collect();
    if s.is_empty() {
        return parts;
    }
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// `Schema.Type.valueOf(name.toUpperCase())`.
fn schema_type_named(name: &str) -> Option<SchemaType> {
    let upper = name.to_uppercase();
    SchemaType::ALL.into_iter().find(|t| t.to_string() == upper)
}

/// Why a spec is refused: Kafka's message, and whether it is a keyed `ConfigException` (whose
/// text Kafka prefixes with `Invalid value <list> for configuration renames: `).
struct SpecError {
    keyed: bool,
    reason: String,
}

impl From<String> for SpecError {
    fn from(reason: String) -> Self {
        SpecError {
            keyed: false,
            reason,
        }
    }
}

impl SpecError {
    /// The full message `configure` reports.
    fn message(self, mappings: &[String]) -> String {
        if self.keyed {
            crate::config::invalid_value("renames", java_list(mappings), self.reason)
        } else {
            self.reason
        }
    }
}

/// Kafka's `parseFieldTypes`.
fn parse_spec(mappings: &[String]) -> Result<Spec, SpecError> {
    let mut spec = Spec {
        fields: Vec::new(),
        whole: None,
    };
    let output = |t: SchemaType| -> Result<SchemaType, SpecError> {
        if OUTPUT_TYPES.contains(&t) {
            Ok(t)
        } else {
            Err(format!(
                "Cast transformation does not support casting to {t}; supported types are {}",
                type_list(OUTPUT_TYPES)
            )
            .into())
        }
    };
    for mapping in mappings {
        let parts = java_split_colon(mapping);
        match parts.as_slice() {
            [one] => {
                let t = schema_type_named(one.trim())
                    .ok_or_else(|| format!("Invalid type found in casting spec: {}", one.trim()))?;
                spec.whole = Some(output(t)?);
            }
            [field, t] => {
                let t = schema_type_named(t.trim())
                    .ok_or_else(|| format!("Invalid type found in casting spec: {}", t.trim()))?;
                let t = output(t)?;
                let field = field.trim().to_string();
                spec.fields.retain(|(f, _)| *f != field);
                spec.fields.push((field, t));
            }
            _ => {
                // Kafka reuses ReplaceField's key name and message here
                return Err(SpecError {
                    keyed: true,
                    reason: format!("Invalid rename mapping: {mapping}"),
                });
            }
        }
    }
    if spec.whole.is_some() && mappings.len() > 1 {
        return Err(
            "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"
                .to_string()
                .into(),
        );
    }
    Ok(spec)
}

/// The `spec` check, run by validation and by `configure`.
fn check_spec(list: &[String]) -> Result<Spec, SpecError> {
    if list.is_empty() {
        return Err("Must specify at least one field to cast."
            .to_string()
            .into());
    }
    parse_spec(list)
}

/// The `Cast` transformation.
#[derive(Clone, Debug)]
pub struct Cast {
    side: Side,
    spec: Spec,
    replace_null_with_default: bool,
}

impl Cast {
    /// Kafka's `Cast.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                key(
                    "spec",
                    ConfigType::List,
                    DefaultValue::Required,
                    Importance::High,
                    "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.",
                )
                .validator(Validator::Custom(std::sync::Arc::new(|_, v| {
                    let items = match v {
                        ConfigValue::List(items) => items.as_slice(),
                        _ => &[],
                    };
                    check_spec(items).map(|_| ()).map_err(|e| e.reason)
                }))),
            )
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages, e.g. `Must specify at least one field to cast.`.
    pub fn configure(side: Side, props: &BTreeMap<String, String>) -> Result<Cast, ConfigError> {
        // the spec check runs first and unwrapped, as Kafka's lambda validator reports it
        let mut def = ConfigDef::new();
        for mut k in Cast::config_def().keys().to_vec() {
            k.validator = None;
            def.add(k);
        }
        let spec = match props.get("spec") {
            Some(raw) => {
                let list = parse_list(raw);
                Some(check_spec(&list).map_err(|e| e.message(&list))?)
            }
            None => None,
        };
        let config = parse_config(&def, props)?;
        let spec = spec.unwrap_or(Spec {
            fields: Vec::new(),
            whole: None,
        });
        Ok(Cast {
            side,
            spec,
            replace_null_with_default: replace_null_with_default(&config),
        })
    }

    fn cast_for(&self, field: &str) -> Option<SchemaType> {
        self.spec
            .fields
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, t)| *t)
    }

    fn build_schema(&self, schema: &Schema) -> Result<SchemaRef, DataError> {
        let mut builder = match self.spec.whole {
            Some(t) => copy_schema_basics(schema, SchemaBuilder::new(t)),
            None => {
                let mut b = copy_schema_basics(schema, SchemaBuilder::struct_());
                for field in &schema.fields {
                    match self.cast_for(&field.name) {
                        Some(t) => {
                            let mut fb = SchemaBuilder::new(t);
                            if field.schema.optional {
                                fb = fb.optional();
                            }
                            if let Some(d) = &field.schema.default_value {
                                fb = fb.default_value(cast_value(Some(&field.schema), d, t)?);
                            }
                            b = b.field(field.name.clone(), fb.build());
                        }
                        None => b = b.field(field.name.clone(), field.schema.clone()),
                    }
                }
                b
            }
        };
        if schema.optional {
            builder = builder.optional();
        }
        if let Some(d) = &schema.default_value {
            let t = builder.schema().schema_type;
            builder = builder.default_value(cast_value(Some(schema), d, t)?);
        }
        builder.try_build()
    }
}

impl SideTransformation for Cast {
    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        if let Some(t) = self.spec.whole {
            return cast_value(None, op.value, t);
        }
        let map = require_map(op.value, PURPOSE)?;
        let mut updated = map.clone();
        for (field, t) in &self.spec.fields {
            let v = super::map_get(map, field);
            map_put(&mut updated, field, cast_value(None, v, *t)?);
        }
        Ok(Value::Map(updated))
    }

    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema {
        let updated_schema = self.build_schema(schema)?;
        if let Some(t) = self.spec.whole {
            let v = cast_value(Some(schema), op.value, t)?;
            return Ok((updated_schema, v));
        }
        let s = require_struct(op.value, PURPOSE)?;
        let updated = copy_struct(
            s,
            updated_schema.clone(),
            self.replace_null_with_default,
            |field, orig| match self.cast_for(&field.name) {
                Some(t) => cast_value(Some(&field.schema), &orig, t),
                None => Ok(orig),
            },
        )?;
        Ok((updated_schema, Value::Struct(updated)))
    }
}

/// A numeric view of a value, as Java's `Number` sees it.
enum Num {
    Int(i64),
    F32(f32),
    F64(f64),
    /// A `Decimal` (`BigDecimal`): its text, for exact integer truncation and rounding.
    Decimal(logical::ParsedDecimal),
}

impl Num {
    fn long_value(&self) -> i64 {
        match self {
            Num::Int(v) => *v,
            Num::F32(v) => *v as i64,
            Num::F64(v) => *v as i64,
            Num::Decimal(d) => big_decimal_long_value(d),
        }
    }
    fn int_value(&self) -> i32 {
        match self {
            Num::Int(v) => *v as i32,
            Num::F32(v) => *v as i32,
            Num::F64(v) => *v as i32,
            Num::Decimal(d) => big_decimal_long_value(d) as i32,
        }
    }
    fn double_value(&self) -> f64 {
        match self {
            Num::Int(v) => *v as f64,
            Num::F32(v) => f64::from(*v),
            Num::F64(v) => *v,
            Num::Decimal(d) => d.to_sci_string().parse().unwrap_or(f64::NAN),
        }
    }
    fn float_value(&self) -> f32 {
        match self {
            Num::Int(v) => *v as f32,
            Num::F32(v) => *v,
            Num::F64(v) => *v as f32,
            Num::Decimal(d) => d.to_sci_string().parse().unwrap_or(f32::NAN),
        }
    }
}

/// `BigDecimal.longValue()`: the integer part, truncated, keeping the low 64 bits.
pub(crate) fn big_decimal_long_value(d: &logical::ParsedDecimal) -> i64 {
    let digits = d.digits.as_bytes();
    let (keep, zeros) = if d.scale >= 0 {
        let drop = usize::try_from(d.scale).unwrap_or(usize::MAX);
        (&digits[..digits.len().saturating_sub(drop)], 0)
    } else {
        (digits, d.scale.unsigned_abs().min(64))
    };
    let mut acc: u64 = 0;
    for b in keep {
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
    }
    for _ in 0..zeros {
        acc = acc.wrapping_mul(10);
    }
    let v = acc as i64;
    if d.negative {
        v.wrapping_neg()
    } else {
        v
    }
}

/// Java's `Double.parseDouble` / `Float.parseFloat` text rules on top of Rust's parser.
pub(crate) fn java_parse_float<T: std::str::FromStr + From<f32>>(text: &str) -> Option<T> {
    let s = crate::config::def::java_trim(text);
    let body = s.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(s);
    let unsigned = body.strip_prefix(['+', '-']).unwrap_or(body);
    match unsigned {
        "Infinity" | "NaN" if body.len() == s.len() => {
            let v = match (unsigned, body.starts_with('-')) {
                ("NaN", _) => f32::NAN,
                (_, true) => f32::NEG_INFINITY,
                _ => f32::INFINITY,
            };
            Some(T::from(v))
        }
        _ if unsigned.is_empty()
            || unsigned
                .chars()
                .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
        {
            None
        }
        _ => body.parse::<T>().ok(),
    }
}

/// Kafka's `castValueToType`.
fn cast_value(
    schema: Option<&Schema>,
    value: &Value,
    target: SchemaType,
) -> Result<Value, DataError> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let inferred = match schema {
        Some(s) => s.schema_type,
        None => value.schema_type().ok_or_else(|| {
            format!(
                "Cast transformation was passed a value of type {} which is not supported by Connect's data API",
                value.java_class()
            )
        })?,
    };
    if !INPUT_TYPES.contains(&inferred) {
        return Err(format!(
            "Cast transformation does not support casting from {inferred}; supported types are {}",
            type_list(INPUT_TYPES)
        )
        .into());
    }
    let logical = schema.and_then(Schema::logical);
    let unexpected = || {
        format!(
            "Unexpected type in Cast transformation: {}",
            value.java_class()
        )
    };

    if target == SchemaType::String {
        return Ok(Value::String(cast_to_string(logical, value)));
    }

    // Everything else goes through Java's Number / Boolean / String handling.
    let num = match (logical, value) {
        (Some(LogicalKind::Decimal(scale)), Value::Bytes(b)) => {
            let text = logical::decimal_to_string(b, scale);
            Some(Num::Decimal(
                logical::ParsedDecimal::parse(&text).ok_or_else(unexpected)?,
            ))
        }
        (_, Value::Int8(v)) => Some(Num::Int(i64::from(*v))),
        (_, Value::Int16(v)) => Some(Num::Int(i64::from(*v))),
        (_, Value::Int32(v)) => Some(Num::Int(i64::from(*v))),
        (_, Value::Int64(v)) => Some(Num::Int(*v)),
        (_, Value::Float32(v)) => Some(Num::F32(*v)),
        (_, Value::Float64(v)) => Some(Num::F64(*v)),
        _ => None,
    };
    if let Some(n) = num {
        return Ok(match target {
            SchemaType::Int8 => Value::Int8(n.int_value() as i8),
            SchemaType::Int16 => Value::Int16(n.int_value() as i16),
            SchemaType::Int32 => Value::Int32(n.int_value()),
            SchemaType::Int64 => Value::Int64(n.long_value()),
            SchemaType::Float32 => Value::Float32(n.float_value()),
            SchemaType::Float64 => Value::Float64(n.double_value()),
            SchemaType::Boolean => Value::Boolean(n.long_value() != 0),
            other => return Err(unsupported_target(other).into()),
        });
    }
    match value {
        Value::Boolean(b) => cast_boolean(*b, target),
        Value::String(s) => cast_string(s, target),
        _ => Err(unexpected().into()),
    }
}

/// A value's text when cast to `STRING`: ISO-8601 for the time types, base64 for bytes.
fn cast_to_string(logical: Option<LogicalKind>, value: &Value) -> String {
    match (logical, value) {
        (Some(LogicalKind::Decimal(scale)), Value::Bytes(b)) => {
            logical::decimal_to_string(b, scale)
        }
        (Some(LogicalKind::Date), Value::Int32(days)) => {
            super::datefmt::iso_8601(i64::from(*days) * 86_400_000)
        }
        (Some(LogicalKind::Time), Value::Int32(ms)) => super::datefmt::iso_8601(i64::from(*ms)),
        (Some(LogicalKind::Timestamp), Value::Int64(ms)) => super::datefmt::iso_8601(*ms),
        (_, Value::Bytes(b)) => base64::engine::general_purpose::STANDARD.encode(b),
        (_, Value::Float32(f)) => float_to_string(*f),
        (_, Value::Float64(d)) => double_to_string(*d),
        (_, other) => other.to_java_string(),
    }
}

/// Kafka's message for a target type the cast has no conversion to.
fn unsupported_target(target: SchemaType) -> String {
    format!("{target} is not supported in the Cast transformation.")
}

/// A `Boolean` cast to a number or a boolean (`true` is 1).
fn cast_boolean(b: bool, target: SchemaType) -> Result<Value, DataError> {
    Ok(match target {
        SchemaType::Int8 => Value::Int8(i8::from(b)),
        SchemaType::Int16 => Value::Int16(i16::from(b)),
        SchemaType::Int32 => Value::Int32(i32::from(b)),
        SchemaType::Int64 => Value::Int64(i64::from(b)),
        SchemaType::Float32 => Value::Float32(if b { 1.0 } else { 0.0 }),
        SchemaType::Float64 => Value::Float64(if b { 1.0 } else { 0.0 }),
        SchemaType::Boolean => Value::Boolean(b),
        other => return Err(unsupported_target(other).into()),
    })
}

/// A `String` parsed as a number or a boolean, as Java's `parseX` methods do.
fn cast_string(s: &str, target: SchemaType) -> Result<Value, DataError> {
    let out_of_range = || format!("Value ({s}) was out of range for requested data type");
    Ok(match target {
        SchemaType::Int8 => Value::Int8(s.parse().map_err(|_| out_of_range())?),
        SchemaType::Int16 => Value::Int16(s.parse().map_err(|_| out_of_range())?),
        SchemaType::Int32 => Value::Int32(s.parse().map_err(|_| out_of_range())?),
        SchemaType::Int64 => Value::Int64(s.parse().map_err(|_| out_of_range())?),
        SchemaType::Float32 => Value::Float32(java_parse_float(s).ok_or_else(out_of_range)?),
        SchemaType::Float64 => Value::Float64(java_parse_float(s).ok_or_else(out_of_range)?),
        SchemaType::Boolean => Value::Boolean(s.eq_ignore_ascii_case("true")),
        other => return Err(unsupported_target(other).into()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::Struct;

    fn cast(side: Side, spec: &str) -> Cast {
        Cast::configure(side, &props(&[("spec", spec)])).unwrap()
    }

    #[test]
    fn documented_example_with_schema() {
        let schema = struct_schema(&[
            ("age", Schema::string()),
            ("score", Schema::float32()),
            ("name", Schema::string()),
        ]);
        let value = struct_of(
            &schema,
            &[
                ("age", Value::from("42")),
                ("score", Value::Float32(1.5)),
                ("name", Value::from("x")),
            ],
        );
        let t = cast(Side::Value, "age:int32,score:float64");
        let out = apply_ok(&t, record("t", Some(schema), Value::Struct(value)));
        let s = out.value_schema.unwrap();
        assert_eq!(
            s.field("age").unwrap().schema.schema_type,
            SchemaType::Int32
        );
        assert_eq!(
            s.field("score").unwrap().schema.schema_type,
            SchemaType::Float64
        );
        assert_eq!(
            s.field("name").unwrap().schema.schema_type,
            SchemaType::String
        );
        let Value::Struct(v) = out.value else {
            panic!()
        };
        assert_eq!(v.get("age"), Some(&Value::Int32(42)));
        assert_eq!(v.get("score"), Some(&Value::Float64(1.5)));
        assert_eq!(v.get("name"), Some(&Value::from("x")));
    }

    #[test]
    fn schemaless_fields_and_whole_values() {
        let t = cast(Side::Value, "age:int32,score:float64,missing:string");
        let out = apply_map(
            &t,
            &[
                ("age", Value::from("42")),
                ("score", Value::Int64(3)),
                ("other", Value::Boolean(true)),
            ],
        );
        assert_eq!(
            out.value,
            map(&[
                ("age", Value::Int32(42)),
                ("score", Value::Float64(3.0)),
                ("other", Value::Boolean(true)),
                ("missing", Value::Null),
            ])
        );
        let key = cast(Side::Key, "int8");
        let out = apply_ok(&key, key_record(None, Value::Int64(300)));
        assert_eq!(out.key, Value::Int8(44));
        let out = apply_ok(&key, key_record(Some(Schema::int64()), Value::Int64(-1)));
        assert_eq!(out.key, Value::Int8(-1));
        assert_eq!(out.key_schema.unwrap().schema_type, SchemaType::Int8);
    }

    #[test]
    fn conversions_follow_java() {
        let c = |v: Value, t: SchemaType| cast_value(None, &v, t).unwrap();
        assert_eq!(c(Value::Float64(1.9), SchemaType::Int32), Value::Int32(1));
        assert_eq!(c(Value::Float64(-1.9), SchemaType::Int64), Value::Int64(-1));
        assert_eq!(
            c(Value::Float64(f64::NAN), SchemaType::Int32),
            Value::Int32(0)
        );
        assert_eq!(
            c(Value::Float64(1e20), SchemaType::Int32),
            Value::Int32(i32::MAX)
        );
        assert_eq!(
            c(Value::Float64(0.5), SchemaType::Boolean),
            Value::Boolean(false)
        );
        assert_eq!(
            c(Value::Int32(2), SchemaType::Boolean),
            Value::Boolean(true)
        );
        assert_eq!(
            c(Value::Boolean(true), SchemaType::Float32),
            Value::Float32(1.0)
        );
        assert_eq!(
            c(Value::from("TRUE"), SchemaType::Boolean),
            Value::Boolean(true)
        );
        assert_eq!(
            c(Value::from("yes"), SchemaType::Boolean),
            Value::Boolean(false)
        );
        assert_eq!(
            c(Value::from(" 1.5f "), SchemaType::Float64),
            Value::Float64(1.5)
        );
        assert_eq!(
            c(Value::from("-Infinity"), SchemaType::Float32),
            Value::Float32(f32::NEG_INFINITY)
        );
        assert_eq!(
            c(Value::Float64(1.0), SchemaType::String),
            Value::from("1.0")
        );
        assert_eq!(
            c(Value::Float32(1e10), SchemaType::String),
            Value::from("1.0E10")
        );
        assert_eq!(
            c(Value::Bytes(vec![1, 2, 3]), SchemaType::String),
            Value::from("AQID")
        );
        assert_eq!(
            cast_value(None, &Value::from("300"), SchemaType::Int8).unwrap_err(),
            "Value (300) was out of range for requested data type"
        );
        assert_eq!(
            cast_value(None, &Value::Bytes(vec![1]), SchemaType::Int32).unwrap_err(),
            "Unexpected type in Cast transformation: class [B"
        );
        assert_eq!(
            cast_value(None, &Value::Array(vec![]), SchemaType::Int32).unwrap_err(),
            "Cast transformation does not support casting from ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
        );
    }

    #[test]
    fn logical_types() {
        let ts = logical::timestamp().build();
        assert_eq!(
            cast_value(
                Some(&ts),
                &Value::Int64(1_483_369_445_007),
                SchemaType::String
            )
            .unwrap(),
            Value::from("2017-01-02T15:04:05.007Z")
        );
        assert_eq!(
            cast_value(
                Some(&ts),
                &Value::Int64(1_483_369_445_007),
                SchemaType::Int64
            )
            .unwrap(),
            Value::Int64(1_483_369_445_007)
        );
        let date = logical::date().build();
        assert_eq!(
            cast_value(Some(&date), &Value::Int32(365), SchemaType::String).unwrap(),
            Value::from("1971-01-01")
        );
        let dec = logical::decimal(2).build();
        let bytes = logical::decimal_from_str("-12.75", 2).unwrap();
        assert_eq!(
            cast_value(Some(&dec), &Value::Bytes(bytes.clone()), SchemaType::Int32).unwrap(),
            Value::Int32(-12)
        );
        assert_eq!(
            cast_value(
                Some(&dec),
                &Value::Bytes(bytes.clone()),
                SchemaType::Float64
            )
            .unwrap(),
            Value::Float64(-12.75)
        );
        assert_eq!(
            cast_value(Some(&dec), &Value::Bytes(bytes), SchemaType::String).unwrap(),
            Value::from("-12.75")
        );
    }

    #[test]
    fn whole_value_cast_keeps_schema_basics_and_casts_defaults() {
        let schema = SchemaBuilder::int64()
            .name("n")
            .version(3)
            .optional()
            .default_value(Value::Int64(7))
            .build();
        let t = cast(Side::Value, "string");
        let out = apply_ok(&t, record("t", Some(schema), Value::Int64(5)));
        let s = out.value_schema.unwrap();
        assert_eq!(s.schema_type, SchemaType::String);
        assert_eq!(s.name.as_deref(), Some("n"));
        assert_eq!(s.version, Some(3));
        assert!(s.optional);
        assert_eq!(s.default_value, Some(Value::from("7")));
        assert_eq!(out.value, Value::from("5"));
    }

    #[test]
    fn null_defaults_and_tombstones() {
        let field_schema = SchemaBuilder::int32()
            .optional()
            .default_value(Value::Int32(9))
            .build();
        let schema = SchemaBuilder::struct_().field("a", field_schema).build();
        let value = Value::Struct(Struct::new(schema.clone()));
        let out = apply_ok(
            &cast(Side::Value, "a:string"),
            record("t", Some(schema.clone()), value.clone()),
        );
        let Value::Struct(s) = out.value else {
            panic!()
        };
        assert_eq!(s.get_without_default("a"), Some(&Value::from("9")));
        let keep_null = Cast::configure(
            Side::Value,
            &props(&[("spec", "a:string"), ("replace.null.with.default", "false")]),
        )
        .unwrap();
        let out = apply_ok(&keep_null, record("t", Some(schema.clone()), value));
        let Value::Struct(s) = out.value else {
            panic!()
        };
        assert_eq!(s.get_without_default("a"), Some(&Value::Null));
        let tomb = record("t", Some(schema), Value::Null);
        assert_eq!(apply_ok(&cast(Side::Value, "a:string"), tomb.clone()), tomb);
    }

    #[test]
    fn errors_like_kafka() {
        let err = |spec: &str| Cast::configure(Side::Value, &props(&[("spec", spec)])).unwrap_err();
        assert_eq!(err(""), "Must specify at least one field to cast.");
        assert_eq!(err("a:foo"), "Invalid type found in casting spec: foo");
        assert_eq!(
            err("a:bytes"),
            "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"
        );
        assert_eq!(
            err("int8,a:int32"),
            "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"
        );
        assert_eq!(
            err("a:b:c"),
            "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"
        );
        assert_eq!(
            Cast::configure(Side::Value, &BTreeMap::new()).unwrap_err(),
            "Missing required configuration \"spec\" which has no default value."
        );
        let t = cast(Side::Value, "a:int32");
        assert_eq!(
            t.apply(record("t", None, Value::Int32(1)), &source()).unwrap_err(),
            "Only Map objects supported in absence of schema for [cast types], found: java.lang.Integer"
        );
        assert_eq!(
            t.apply(
                record("t", Some(Schema::int32()), Value::Int32(1)),
                &source()
            )
            .unwrap_err(),
            "Only Struct objects supported for [cast types], found: java.lang.Integer"
        );
        // validation wraps the same reasons
        let def = Cast::config_def();
        let v = def.validate(
            &[("spec".to_string(), Some("a:foo".to_string()))]
                .into_iter()
                .collect(),
        );
        assert_eq!(v[0].errors, vec!["Invalid value [a:foo] for configuration spec: Invalid type found in casting spec: foo"]);
    }

    #[test]
    fn integer_string_round_trips() {
        let to_string = cast(Side::Value, "n:string");
        let to_int = cast(Side::Value, "n:int64");
        let schema = SchemaBuilder::struct_().field("n", Schema::int64()).build();
        let mut n: i64 = i64::MIN;
        for step in 0..200 {
            let original = record(
                "t",
                Some(schema.clone()),
                Value::Struct(Struct::new(schema.clone()).with("n", n).unwrap()),
            );
            let text = apply_ok(&to_string, original.clone());
            let back = apply_ok(&to_int, text);
            assert_eq!(back, original, "{n}");
            let schemaless = record("t", None, map(&[("n", Value::Int64(n))]));
            let back = apply_ok(&to_int, apply_ok(&to_string, schemaless.clone()));
            assert_eq!(back, schemaless);
            n = n.wrapping_add(92_233_720_368_547_758 + step * 7919);
        }
    }
}
