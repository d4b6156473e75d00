//! `TimestampConverter$Key` / `TimestampConverter$Value`: converts timestamps between Unix
//! epoch numbers, formatted strings and Connect's `Date`, `Time` and `Timestamp` types, for the
//! whole key or value or for one field.
//!
//! Connect's logical temporal values keep their physical form here (`Date` days and `Time`
//! milliseconds as `Int32`, `Timestamp` milliseconds as `Int64`), also in schemaless output,
//! where Kafka would put a `java.util.Date` that no converter can write.

use super::support::WithSchema;
use crate::connectors::Props;

use super::datefmt::DateFormat;
use super::{
    copy_schema_basics, field_value, key, map_get, map_put, parse_config, put,
    replace_null_with_default, replace_null_with_default_key, require_map, require_struct_or_null,
    required_string, Input, Side, SideTransformation,
};
use crate::config::def::{ConfigDef, ConfigType, Importance, Validator};
use crate::config::ConfigError;
use crate::data::logical::{self, LogicalKind};
use crate::data::DataError;
use crate::data::{Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};

const PURPOSE: &str = "converting timestamp formats";
const MILLIS_PER_DAY: i64 = 86_400_000;

/// A timestamp representation (`target.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TsType {
    String,
    Unix,
    Date,
    Time,
    Timestamp,
}

impl TsType {
    fn parse(s: &str) -> Option<TsType> {
        Some(match s {
            "string" => TsType::String,
            "unix" => TsType::Unix,
            "Date" => TsType::Date,
            "Time" => TsType::Time,
            "Timestamp" => TsType::Timestamp,
            _ => return None,
        })
    }

    fn schema(self, optional: bool) -> SchemaRef {
        let b = match self {
            TsType::String => SchemaBuilder::string(),
            TsType::Unix => SchemaBuilder::int64(),
            TsType::Date => logical::date(),
            TsType::Time => logical::time(),
            TsType::Timestamp => logical::timestamp(),
        };
        b.optional_if(optional).build()
    }
}

/// `unix.precision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Precision {
    Seconds,
    Millis,
    Micros,
    Nanos,
}

/// The `TimestampConverter` transformation.
#[derive(Clone, Debug)]
pub struct TimestampConverter {
    side: Side,
    field: String,
    target: TsType,
    format: Option<DateFormat>,
    precision: Precision,
    replace_null_with_default: bool,
}

impl TimestampConverter {
    /// Kafka's `TimestampConverter.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(key(
                "field",
                ConfigType::String,
                super::default(""),
                Importance::High,
                "The field containing the timestamp, or empty if the entire value is a timestamp",
            ))
            .define(
                required_string("target.type", Importance::High, "The desired timestamp representation: string, unix, Date, Time, or Timestamp")
                .validator(Validator::OneOf(vec!["string", "unix", "Date", "Time", "Timestamp"])),
            )
            .define(key(
                "format",
                ConfigType::String,
                super::default(""),
                Importance::Medium,
                "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string.",
            ))
            .define(
                key(
                    "unix.precision",
                    ConfigType::String,
                    super::default("milliseconds"),
                    Importance::Low,
                    "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components.",
                )
                .validator(Validator::OneOf(vec!["nanoseconds", "microseconds", "milliseconds", "seconds"])),
            )
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's messages, e.g. `TimestampConverter requires format option to be specified when
    /// using string timestamps`.
    pub fn configure(side: Side, props: &Props) -> Result<TimestampConverter, ConfigError> {
        let config = parse_config(&TimestampConverter::config_def(), props)?;
        let target = config
            .get_string("target.type")
            .as_deref()
            .and_then(TsType::parse)
            .unwrap_or(TsType::Timestamp);
        let pattern = config.get_string("format").unwrap_or_default();
        let blank = crate::config::def::java_trim(&pattern).is_empty();
        if target == TsType::String && blank {
            return Err(
                "TimestampConverter requires format option to be specified when using string timestamps".to_string().into(),
            );
        }
        let format = if blank {
            None
        } else {
            Some(DateFormat::new(&pattern).map_err(|_| {
                format!("TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: {pattern}")
            })?)
        };
        let precision = match config.get_string("unix.precision").as_deref() {
            Some("seconds") => Precision::Seconds,
            Some("microseconds") => Precision::Micros,
            Some("nanoseconds") => Precision::Nanos,
            _ => Precision::Millis,
        };
        Ok(TimestampConverter {
            side,
            field: config.get_string("field").unwrap_or_default(),
            target,
            format,
            precision,
            replace_null_with_default: replace_null_with_default(&config),
        })
    }

    /// A value of `from` type as epoch milliseconds (Kafka's `toRaw`, a `java.util.Date`).
    fn to_raw(&self, from: TsType, value: &Value) -> Result<i64, DataError> {
        match (from, value) {
            (TsType::String, Value::String(s)) => {
                let format = self.format.as_ref().ok_or_else(|| {
                    "TimestampConverter requires format option to be specified when using string timestamps".to_string()
                })?;
                format.parse(s).ok_or_else(|| {
                    DataError(format!(
                        "Could not parse timestamp: value ({s}) does not match pattern ({})",
                        format.pattern()
                    ))
                })
            }
            (TsType::String, other) => Err(format!(
                "Expected string timestamp to be a String, but found {}",
                other.java_class()
            )
            .into()),
            (TsType::Unix, Value::Int64(v)) => Ok(match self.precision {
                Precision::Seconds => v.saturating_mul(1000),
                Precision::Millis => *v,
                Precision::Micros => v / 1000,
                Precision::Nanos => v / 1_000_000,
            }),
            (TsType::Unix, other) => Err(format!(
                "Expected Unix timestamp to be a Long, but found {}",
                other.java_class()
            )
            .into()),
            (TsType::Date, Value::Int32(days)) => Ok(i64::from(*days) * MILLIS_PER_DAY),
            (TsType::Time, Value::Int32(ms)) => Ok(i64::from(*ms)),
            (TsType::Timestamp, Value::Int64(ms)) => Ok(*ms),
            (kind, other) => Err(format!(
                "Expected {kind:?} to be a java.util.Date, but found {}",
                other.java_class()
            )
            .into()),
        }
    }

    /// Epoch milliseconds as the target type (Kafka's `toType`).
    fn to_type(&self, raw: i64) -> Value {
        match self.target {
            TsType::String => Value::String(
                self.format
                    .as_ref()
                    .map_or_else(|| raw.to_string(), |f| f.format(raw)),
            ),
            TsType::Unix => Value::Int64(match self.precision {
                Precision::Seconds => raw / 1000,
                Precision::Millis => raw,
                Precision::Micros => raw.saturating_mul(1000),
                Precision::Nanos => raw.saturating_mul(1_000_000),
            }),
            TsType::Date => Value::Int32(raw.div_euclid(MILLIS_PER_DAY) as i32),
            TsType::Time => Value::Int32(raw.rem_euclid(MILLIS_PER_DAY) as i32),
            TsType::Timestamp => Value::Int64(raw),
        }
    }

    /// Kafka's `convertTimestamp`: `from` is `None` when the type is to be inferred.
    fn convert(&self, value: &Value, from: Option<TsType>) -> Result<Value, DataError> {
        if value.is_null() {
            return Ok(Value::Null);
        }
        let from = match from {
            Some(t) => t,
            None => match value {
                Value::Int64(_) => TsType::Unix,
                Value::String(_) => TsType::String,
                other => {
                    return Err(format!(
                        "TimestampConverter does not support {} objects as timestamps",
                        other.java_class()
                    )
                    .into())
                }
            },
        };
        Ok(self.to_type(self.to_raw(from, value)?))
    }

    fn updated_struct(
        &self,
        value: Option<&Struct>,
        schema: &SchemaRef,
    ) -> Result<Option<Struct>, DataError> {
        let Some(value) = value else {
            return Ok(None);
        };
        let mut out = Struct::new(schema.clone());
        for f in &value.schema.fields {
            let v = field_value(value, &f.name, self.replace_null_with_default);
            let v = if f.name == self.field {
                self.convert(&v, Some(type_from_schema(&f.schema)?))?
            } else {
                v
            };
            put(&mut out, &f.name, v)?;
        }
        Ok(Some(out))
    }
}

/// Kafka's `timestampTypeFromSchema`.
fn type_from_schema(schema: &Schema) -> Result<TsType, DataError> {
    Ok(match (schema.logical(), schema.schema_type) {
        (Some(LogicalKind::Timestamp), _) => TsType::Timestamp,
        (Some(LogicalKind::Date), _) => TsType::Date,
        (Some(LogicalKind::Time), _) => TsType::Time,
        (_, SchemaType::String) => TsType::String,
        (_, SchemaType::Int64) => TsType::Unix,
        _ => {
            return Err(format!(
                "Schema {schema} does not correspond to a known timestamp type format"
            )
            .into())
        }
    })
}

impl SideTransformation for TimestampConverter {
    const PASSES_NULL: bool = false;

    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        if op.value.is_null() || self.field.is_empty() {
            return self.convert(op.value, None);
        }
        let map = require_map(op.value, PURPOSE)?;
        let mut updated = map.clone();
        map_put(
            &mut updated,
            &self.field,
            self.convert(map_get(map, &self.field), None)?,
        );
        Ok(Value::Map(updated))
    }

    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema {
        if self.field.is_empty() {
            let from = type_from_schema(schema)?;
            let updated = self.convert(op.value, Some(from))?;
            return Ok((self.target.schema(schema.optional), updated));
        }
        let s = require_struct_or_null(op.value, PURPOSE)?;
        let mut b = copy_schema_basics(schema, SchemaBuilder::struct_());
        for f in &schema.fields {
            let field_schema = if f.name == self.field {
                self.target.schema(f.schema.optional)
            } else {
                f.schema.clone()
            };
            b = b.field(f.name.clone(), field_schema);
        }
        if schema.optional {
            b = b.optional();
        }
        if let Some(Value::Struct(d)) = &schema.default_value {
            let without_default = b.clone().build();
            if let Some(converted) = self.updated_struct(Some(d), &without_default)? {
                b = b.default_value(Value::Struct(converted));
            }
        }
        let updated_schema = b.build();
        let updated = self.updated_struct(s, &updated_schema)?;
        Ok((updated_schema, updated.map_or(Value::Null, Value::Struct)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    /// 2017-01-02T15:04:05.007Z
    const TS: i64 = 1_483_369_445_007;

    fn conv(side: Side, pairs: &[(&str, &str)]) -> TimestampConverter {
        TimestampConverter::configure(side, &props(pairs)).unwrap()
    }

    #[test]
    fn unix_to_string_and_back_schemaless() {
        let to_string = conv(
            Side::Value,
            &[
                ("target.type", "string"),
                ("format", "yyyy-MM-dd'T'HH:mm:ss.SSS"),
            ],
        );
        let out = apply_ok(&to_string, record("t", None, Value::Int64(TS)));
        assert_eq!(out.value, Value::from("2017-01-02T15:04:05.007"));
        let to_unix = conv(
            Side::Value,
            &[
                ("target.type", "unix"),
                ("format", "yyyy-MM-dd'T'HH:mm:ss.SSS"),
            ],
        );
        let back = apply_ok(&to_unix, out);
        assert_eq!(back.value, Value::Int64(TS));
    }

    #[test]
    fn string_to_timestamp_with_schema_and_to_date_and_time() {
        let to_ts = conv(
            Side::Value,
            &[
                ("target.type", "Timestamp"),
                ("format", "yyyy-MM-dd HH:mm:ss"),
            ],
        );
        let out = apply_ok(
            &to_ts,
            record(
                "t",
                Some(Schema::string()),
                Value::from("2017-01-02 15:04:05"),
            ),
        );
        assert_eq!(out.value, Value::Int64(TS - 7));
        let s = out.value_schema.clone().unwrap();
        assert_eq!(s.name.as_deref(), Some(logical::TIMESTAMP_NAME));
        assert!(!s.optional);

        let to_date = conv(Side::Value, &[("target.type", "Date")]);
        let d = apply_ok(&to_date, out.clone());
        assert_eq!(d.value, Value::Int32(17168));
        assert_eq!(
            d.value_schema.as_ref().unwrap().name.as_deref(),
            Some(logical::DATE_NAME)
        );
        let to_time = conv(Side::Value, &[("target.type", "Time")]);
        let t = apply_ok(&to_time, out);
        assert_eq!(t.value, Value::Int32(((15 * 60 + 4) * 60 + 5) * 1000));
        // Date back to a Timestamp is midnight
        let to_ts_again = conv(Side::Value, &[("target.type", "Timestamp")]);
        assert_eq!(
            apply_ok(&to_ts_again, d).value,
            Value::Int64(17168 * MILLIS_PER_DAY)
        );
    }

    #[test]
    fn field_in_a_struct_on_the_key() {
        let schema = struct_schema(&[("ts", Schema::int64()), ("other", Schema::string())]);
        let value = struct_of(
            &schema,
            &[("ts", Value::Int64(TS)), ("other", Value::from("o"))],
        );
        let t = conv(
            Side::Key,
            &[
                ("field", "ts"),
                ("target.type", "string"),
                ("format", "yyyyMMdd"),
            ],
        );
        let out = apply_ok(&t, key_record(Some(schema), Value::Struct(value)));
        let Value::Struct(k) = out.key else { panic!() };
        assert_eq!(k.get("ts"), Some(&Value::from("20170102")));
        assert_eq!(k.get("other"), Some(&Value::from("o")));
        assert_eq!(k.schema.field("ts").unwrap().schema, Schema::string());
    }

    #[test]
    fn schemaless_field_and_precisions() {
        let t = conv(
            Side::Value,
            &[
                ("field", "ts"),
                ("target.type", "unix"),
                ("unix.precision", "seconds"),
            ],
        );
        let out = apply_map(
            &t,
            &[("ts", Value::Int64(1_700_000_000)), ("x", Value::Int8(1))],
        );
        // input longs are read with the same precision
        assert_eq!(
            out.value,
            map(&[("ts", Value::Int64(1_700_000_000)), ("x", Value::Int8(1))])
        );
        let micros = conv(
            Side::Value,
            &[
                ("target.type", "Timestamp"),
                ("unix.precision", "microseconds"),
            ],
        );
        assert_eq!(
            apply_ok(&micros, record("t", None, Value::Int64(TS * 1000 + 999))).value,
            Value::Int64(TS)
        );
        let nanos = conv(
            Side::Value,
            &[("target.type", "unix"), ("unix.precision", "nanoseconds")],
        );
        let ts_schema = logical::timestamp().build();
        assert_eq!(
            apply_ok(&nanos, record("t", Some(ts_schema), Value::Int64(TS))).value,
            Value::Int64(TS * 1_000_000)
        );
        let missing = apply_map(&t, &[]);
        assert_eq!(missing.value, map(&[("ts", Value::Null)]));
    }

    #[test]
    fn errors_like_kafka() {
        assert_eq!(
            TimestampConverter::configure(Side::Value, &props(&[("target.type", "string")])).unwrap_err(),
            "TimestampConverter requires format option to be specified when using string timestamps"
        );
        assert_eq!(
            TimestampConverter::configure(Side::Value, &props(&[("target.type", "string"), ("format", "bad")]))
                .unwrap_err(),
            "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: bad"
        );
        assert_eq!(
            TimestampConverter::configure(Side::Value, &props(&[("target.type", "date")])).unwrap_err(),
            "Invalid value date for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"
        );
        let t = conv(
            Side::Value,
            &[("target.type", "Timestamp"), ("format", "yyyy-MM-dd")],
        );
        assert_eq!(
            t.apply(record("t", None, Value::from("nope")), &source())
                .unwrap_err(),
            "Could not parse timestamp: value (nope) does not match pattern (yyyy-MM-dd)"
        );
        assert_eq!(
            t.apply(record("t", None, Value::Int32(1)), &source())
                .unwrap_err(),
            "TimestampConverter does not support class java.lang.Integer objects as timestamps"
        );
        assert_eq!(
            t.apply(
                record("t", Some(Schema::int32()), Value::Int32(1)),
                &source()
            )
            .unwrap_err(),
            "Schema Schema{INT32} does not correspond to a known timestamp type format"
        );
        let f = conv(Side::Value, &[("target.type", "unix"), ("field", "a")]);
        assert_eq!(
            f.apply(record("t", Some(Schema::int64()), Value::Int64(1)), &source()).unwrap_err(),
            "Only Struct objects supported for [converting timestamp formats], found: java.lang.Long"
        );
        let tomb = apply_ok(
            &t,
            record("t", Some(Schema::optional_string()), Value::Null),
        );
        assert_eq!(tomb.value, Value::Null);
        assert!(tomb.value_schema.unwrap().optional);
    }

    #[test]
    fn unix_string_round_trips_over_generated_instants() {
        let pattern = "yyyy-MM-dd'T'HH:mm:ss.SSSZ";
        let to_string = conv(Side::Key, &[("target.type", "string"), ("format", pattern)]);
        let to_unix = conv(Side::Key, &[("target.type", "unix"), ("format", pattern)]);
        let to_ts = conv(
            Side::Key,
            &[("target.type", "Timestamp"), ("format", pattern)],
        );
        let mut t: i64 = -62_135_596_800_000; // 0001-01-01
        while t < 253_402_300_799_999 {
            let original = key_record(Some(Schema::int64()), Value::Int64(t));
            let text = apply_ok(&to_string, original.clone());
            assert_eq!(text.key_schema, Some(Schema::string()));
            let back = apply_ok(&to_unix, text.clone());
            assert_eq!(back, original, "{t}");
            let ts = apply_ok(&to_ts, text);
            assert_eq!(ts.key, Value::Int64(t));
            t += 7_777_777_777_777 / 13 + 1_234;
        }
    }
}
