//! Type mapping between the two databases and Connect, both ways, as Confluent's dialects do it: a
//! column's declared type becomes a Connect schema (source), a field's schema becomes a column type and
//! a bound parameter (sink).

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::data::logical::{self, LogicalKind};
use crate::data::{Schema, SchemaBuilder, SchemaRef, SchemaType, Value};

/// The Connect type a column is read as: a primitive schema type or one of the logical types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Plain(SchemaType),
    /// `Decimal` with its scale and the column's precision (`connect.decimal.precision`).
    Decimal(i32, i32),
    Date,
    Time,
    Timestamp,
}

impl Kind {
    pub const BOOL: Kind = Kind::Plain(SchemaType::Boolean);
    pub const INT8: Kind = Kind::Plain(SchemaType::Int8);
    pub const INT16: Kind = Kind::Plain(SchemaType::Int16);
    pub const INT32: Kind = Kind::Plain(SchemaType::Int32);
    pub const INT64: Kind = Kind::Plain(SchemaType::Int64);
    pub const FLOAT32: Kind = Kind::Plain(SchemaType::Float32);
    pub const FLOAT64: Kind = Kind::Plain(SchemaType::Float64);
    pub const STRING: Kind = Kind::Plain(SchemaType::String);
    pub const BYTES: Kind = Kind::Plain(SchemaType::Bytes);
}

/// `numeric.mapping`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumericMapping {
    None,
    BestFit,
    BestFitEagerDouble,
    PrecisionOnly,
}

impl NumericMapping {
    /// The mapping named by the config value (`None` for an unknown name).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "none" => Some(NumericMapping::None),
            "best_fit" => Some(NumericMapping::BestFit),
            "best_fit_eager_double" => Some(NumericMapping::BestFitEagerDouble),
            "precision_only" => Some(NumericMapping::PrecisionOnly),
            _ => None,
        }
    }
}

/// Confluent's largest precision mapped to a primitive integer.
const MAX_INTEGER_PRECISION: i32 = 18;
/// The scale Confluent gives a NUMERIC column declared without one.
const SCALE_HIGH: i32 = 127;

fn integer_for_precision(precision: i32) -> Kind {
    match precision {
        p if p > 9 => Kind::INT64,
        p if p > 4 => Kind::INT32,
        p if p > 2 => Kind::INT16,
        _ => Kind::INT8,
    }
}

/// A `NUMERIC(precision, scale)` column under `numeric.mapping` (Confluent's rules for `Types.NUMERIC`).
/// `precision` 0 means declared without one; such a column is always a `Decimal` (see docs/connectors/jdbc.md).
pub fn numeric_kind(precision: i32, scale: Option<i32>, mapping: NumericMapping) -> Kind {
    let Some(scale) = scale.filter(|_| precision > 0) else {
        return Kind::Decimal(SCALE_HIGH, precision);
    };
    let integral = (-84..1).contains(&scale);
    match mapping {
        NumericMapping::PrecisionOnly if scale == 0 && precision <= MAX_INTEGER_PRECISION => {
            integer_for_precision(precision)
        }
        NumericMapping::BestFit if precision <= MAX_INTEGER_PRECISION && integral => {
            integer_for_precision(precision)
        }
        NumericMapping::BestFit if precision <= MAX_INTEGER_PRECISION && scale > 0 => Kind::FLOAT64,
        NumericMapping::BestFitEagerDouble if integral && precision <= MAX_INTEGER_PRECISION => {
            integer_for_precision(precision)
        }
        NumericMapping::BestFitEagerDouble if scale > 0 => Kind::FLOAT64,
        _ => Kind::Decimal(scale, precision),
    }
}

/// `(precision, scale)` from a declared type such as `DECIMAL(10,2)` or `NUMERIC(5)`.
fn declared_precision(decl: &str) -> (i32, Option<i32>) {
    let Some(args) = decl
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(args, _)| args)
    else {
        return (0, None);
    };
    let mut parts = args.split(',').map(|p| p.trim().parse::<i32>().ok());
    let precision = parts.next().flatten().unwrap_or(0);
    let scale = parts.next().flatten().unwrap_or(0);
    (precision, Some(scale))
}

/// The kind of a SQLite column from its declared type, as the SQLite JDBC driver reports it and
/// Confluent's generic dialect maps it; `None` for a column Confluent drops.
pub fn sqlite_kind(decl: Option<&str>, mapping: NumericMapping) -> Option<Kind> {
    let decl = decl.unwrap_or("").trim().to_ascii_uppercase();
    let base = decl.split('(').next().unwrap_or("").trim().to_string();
    Some(match base.as_str() {
        "BOOLEAN" => Kind::BOOL,
        "TINYINT" => Kind::INT8,
        "SMALLINT" | "INT2" => Kind::INT16,
        "BIGINT" | "INT8" | "UNSIGNED BIG INT" => Kind::INT64,
        "INT" | "INTEGER" | "MEDIUMINT" => Kind::INT32,
        "DATE" | "DATETIME" => Kind::Date,
        "TIMESTAMP" => Kind::Timestamp,
        "TIME" => Kind::Time,
        "DECIMAL" => {
            let (p, s) = declared_precision(&decl);
            Kind::Decimal(s.unwrap_or(0), p)
        }
        "NUMERIC" => {
            let (p, s) = declared_precision(&decl);
            numeric_kind(p, s.or(Some(0)).filter(|_| p > 0), mapping)
        }
        "REAL" => Kind::FLOAT32,
        "FLOAT" | "DOUBLE" | "DOUBLE PRECISION" => Kind::FLOAT64,
        "BLOB" | "BINARY" | "VARBINARY" => Kind::BYTES,
        "" => Kind::STRING,
        b if b.contains("CHAR") || b.contains("CLOB") || b.contains("TEXT") => Kind::STRING,
        _ => return None,
    })
}

/// The kind of a PostgreSQL column from its type name, as Confluent's PostgreSQL dialect maps it;
/// `precision`/`scale` matter for `numeric` only.
pub fn pg_kind(
    type_name: &str,
    precision: i32,
    scale: Option<i32>,
    mapping: NumericMapping,
) -> Option<Kind> {
    Some(match type_name {
        "bool" | "bit" => Kind::BOOL,
        "int2" => Kind::INT16,
        "int4" | "oid" => Kind::INT32,
        "int8" => Kind::INT64,
        "float4" => Kind::FLOAT32,
        "float8" | "money" => Kind::FLOAT64,
        "numeric" => numeric_kind(precision, scale, mapping),
        "text" | "varchar" | "bpchar" | "char" | "name" | "json" | "jsonb" | "uuid" | "xml" => {
            Kind::STRING
        }
        "bytea" => Kind::BYTES,
        "date" => Kind::Date,
        "time" | "timetz" => Kind::Time,
        "timestamp" | "timestamptz" => Kind::Timestamp,
        _ => return None,
    })
}

/// The Connect schema of a column of `kind`.
pub fn schema_for(kind: Kind, optional: bool) -> SchemaRef {
    let b = match kind {
        Kind::Plain(t) => SchemaBuilder::new(t),
        Kind::Decimal(scale, precision) => {
            logical::decimal(scale).parameter("connect.decimal.precision", precision.to_string())
        }
        Kind::Date => logical::date(),
        Kind::Time => logical::time(),
        Kind::Timestamp => logical::timestamp(),
    };
    b.optional_if(optional).build()
}

/// A value as a database returned it, before it becomes a Connect value.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
    Bytes(Vec<u8>),
    /// Days since the epoch.
    Date(i32),
    /// Microseconds since midnight.
    Time(i64),
    /// Nanoseconds since the epoch.
    Timestamp(i64),
    /// A decimal's text.
    Decimal(String),
}

const NANOS_PER_MS: i64 = 1_000_000;
const MS_PER_DAY: i64 = 86_400_000;

/// Nanoseconds since the epoch of a date-time text (`2024-05-01 10:00:00.123`, `T` or space, optional
/// fraction and zone), read as UTC when it carries no zone.
pub fn parse_timestamp_text(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return t.timestamp_nanos_opt();
    }
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return t.and_utc().timestamp_nanos_opt();
        }
    }
    for fmt in ["%Y-%m-%d %H:%M:%S%.f%#z", "%Y-%m-%dT%H:%M:%S%.f%#z"] {
        if let Ok(t) = DateTime::parse_from_str(s, fmt) {
            return t.timestamp_nanos_opt();
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .and_then(|t| t.and_utc().timestamp_nanos_opt())
}

/// `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) of nanoseconds since the epoch.
pub fn format_timestamp(nanos: i64) -> String {
    DateTime::from_timestamp_nanos(nanos)
        .naive_utc()
        .format("%Y-%m-%d %H:%M:%S%.6f")
        .to_string()
}

fn days_of(nanos: i64) -> i32 {
    nanos.div_euclid(NANOS_PER_MS * MS_PER_DAY) as i32
}

fn parse_time_text(s: &str) -> Option<i64> {
    let t = NaiveTime::parse_from_str(s.trim(), "%H:%M:%S%.f")
        .or_else(|_| NaiveTime::parse_from_str(s.trim(), "%H:%M"))
        .ok()?;
    Some(t.num_seconds_from_midnight() as i64 * 1_000_000 + (t.nanosecond() / 1000) as i64)
}

/// Digits of a decimal text (`-12.5`, `1E+3`) as the unscaled big-endian two's-complement bytes of a
/// `Decimal` at `scale`, of any size; extra fraction digits are cut (Java's `setScale` with `FLOOR`
/// toward zero is not needed: the scale always holds the column's digits).
pub fn decimal_text_to_unscaled(text: &str, scale: i32) -> Option<Vec<u8>> {
    let parsed = logical::ParsedDecimal::parse(text.trim())?;
    if let Some(v) = parsed.unscaled_at(scale as i64) {
        return Some(logical::i128_to_unscaled(v));
    }
    // Beyond i128: shift the digits by hand.
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if t.contains(['e', 'E']) {
        return None;
    }
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let mut digits: Vec<u8> = int.bytes().map(|b| b - b'0').collect();
    let wanted = scale.max(0) as usize;
    let frac: Vec<u8> = frac.bytes().map(|b| b - b'0').collect();
    digits.extend((0..wanted).map(|i| frac.get(i).copied().unwrap_or(0)));
    if digits.iter().any(|d| *d > 9) {
        return None;
    }
    Some(digits_to_twos_complement(&digits, negative))
}

/// Base-10 digits (most significant first) to big-endian two's complement.
fn digits_to_twos_complement(digits: &[u8], negative: bool) -> Vec<u8> {
    let mut bytes: Vec<u8> = Vec::new(); // little-endian magnitude
    for &d in digits {
        let mut carry = d as u32;
        for b in bytes.iter_mut() {
            let v = *b as u32 * 10 + carry;
            *b = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            bytes.push(carry as u8);
            carry >>= 8;
        }
    }
    bytes.push(0); // room for the sign bit
    if negative {
        for b in bytes.iter_mut() {
            *b = !*b;
        }
        for b in bytes.iter_mut() {
            let (v, overflow) = b.overflowing_add(1);
            *b = v;
            if !overflow {
                break;
            }
        }
    }
    bytes.reverse();
    logical::minimal_unscaled(&bytes)
}

fn type_error(kind: Kind, raw: &Raw) -> String {
    format!("Cannot read {raw:?} as a {kind:?} column value")
}

/// The Connect value of `raw` in a column of `kind`.
pub fn to_value(raw: Raw, kind: Kind) -> Result<Value, String> {
    let err = |raw: &Raw| type_error(kind, raw);
    Ok(match (kind, raw) {
        (_, Raw::Null) => Value::Null,
        (Kind::BOOL, Raw::Bool(b)) => Value::Boolean(b),
        (Kind::BOOL, Raw::Int(i)) => Value::Boolean(i != 0),
        (Kind::BOOL, Raw::Text(t)) => {
            Value::Boolean(matches!(t.as_str(), "1" | "t" | "true" | "TRUE"))
        }
        (Kind::INT8, Raw::Int(i)) => Value::Int8(i as i8),
        (Kind::INT16, Raw::Int(i)) => Value::Int16(i as i16),
        (Kind::INT32, Raw::Int(i)) => Value::Int32(i as i32),
        (Kind::INT64, Raw::Int(i)) => Value::Int64(i),
        (Kind::INT8 | Kind::INT16 | Kind::INT32 | Kind::INT64, Raw::Float(f)) => {
            return to_value(Raw::Int(f as i64), kind)
        }
        (Kind::INT8 | Kind::INT16 | Kind::INT32 | Kind::INT64, Raw::Text(ref t)) => {
            let i = t
                .trim()
                .parse::<i64>()
                .map_err(|_| err(&Raw::Text(t.clone())))?;
            return to_value(Raw::Int(i), kind);
        }
        (Kind::FLOAT32, Raw::Float(f)) => Value::Float32(f as f32),
        (Kind::FLOAT32, Raw::Int(i)) => Value::Float32(i as f32),
        (Kind::FLOAT64, Raw::Float(f)) => Value::Float64(f),
        (Kind::FLOAT64, Raw::Int(i)) => Value::Float64(i as f64),
        (Kind::FLOAT32 | Kind::FLOAT64, Raw::Text(ref t)) => {
            let f = t
                .trim()
                .parse::<f64>()
                .map_err(|_| err(&Raw::Text(t.clone())))?;
            return to_value(Raw::Float(f), kind);
        }
        (Kind::Decimal(..), Raw::Int(i)) => return to_value(Raw::Text(i.to_string()), kind),
        (Kind::Decimal(..), Raw::Float(f)) => return to_value(Raw::Text(f.to_string()), kind),
        (Kind::Decimal(scale, _), Raw::Text(t) | Raw::Decimal(t)) => Value::Bytes(
            decimal_text_to_unscaled(&t, scale).ok_or_else(|| err(&Raw::Text(t.clone())))?,
        ),
        (Kind::STRING, Raw::Text(t)) => Value::String(t),
        (Kind::STRING, Raw::Int(i)) => Value::String(i.to_string()),
        (Kind::STRING, Raw::Float(f)) => Value::String(f.to_string()),
        (Kind::STRING, Raw::Bool(b)) => Value::String(b.to_string()),
        (Kind::STRING, Raw::Bytes(b)) => Value::String(String::from_utf8_lossy(&b).into_owned()),
        (Kind::BYTES, Raw::Bytes(b)) => Value::Bytes(b),
        (Kind::BYTES, Raw::Text(t)) => Value::Bytes(t.into_bytes()),
        (Kind::Date, Raw::Date(d)) => Value::Int32(d),
        (Kind::Date, Raw::Timestamp(n)) => Value::Int32(days_of(n)),
        (Kind::Date, Raw::Int(ms)) => Value::Int32(days_of(ms.saturating_mul(NANOS_PER_MS))),
        (Kind::Date, Raw::Text(t)) => Value::Int32(days_of(
            parse_timestamp_text(&t).ok_or_else(|| err(&Raw::Text(t.clone())))?,
        )),
        (Kind::Time, Raw::Time(us)) => Value::Int32((us / 1000) as i32),
        (Kind::Time, Raw::Int(ms)) => Value::Int32(ms.rem_euclid(MS_PER_DAY) as i32),
        (Kind::Time, Raw::Text(t)) => Value::Int32(
            (parse_time_text(&t).ok_or_else(|| err(&Raw::Text(t.clone())))? / 1000) as i32,
        ),
        (Kind::Timestamp, Raw::Timestamp(n)) => Value::Int64(n.div_euclid(NANOS_PER_MS)),
        (Kind::Timestamp, Raw::Int(ms)) => Value::Int64(ms),
        (Kind::Timestamp, Raw::Float(ms)) => Value::Int64(ms as i64),
        (Kind::Timestamp, Raw::Text(t)) => Value::Int64(
            parse_timestamp_text(&t)
                .ok_or_else(|| err(&Raw::Text(t.clone())))?
                .div_euclid(NANOS_PER_MS),
        ),
        (_, raw) => return Err(err(&raw)),
    })
}

/// Nanoseconds since the epoch of a raw timestamp-column value (the source's offsets keep nanoseconds).
pub fn raw_timestamp_nanos(raw: &Raw) -> Option<i64> {
    match raw {
        Raw::Timestamp(n) => Some(*n),
        Raw::Int(ms) => ms.checked_mul(NANOS_PER_MS),
        Raw::Float(ms) => Some((*ms * NANOS_PER_MS as f64) as i64),
        Raw::Date(d) => Some(*d as i64 * MS_PER_DAY * NANOS_PER_MS),
        Raw::Text(t) => parse_timestamp_text(t),
        _ => None,
    }
}

/// A value bound to a statement parameter on the sink side: the same forms as values read.
pub type Param = Raw;

/// The parameter for a field value of `schema`; `Err` for a value the schema does not allow.
pub fn param_for(schema: Option<&Schema>, value: &Value) -> Result<Param, String> {
    if value.is_null() {
        return Ok(Param::Null);
    }
    if let Some(kind) = schema.and_then(|s| s.logical()) {
        return Ok(match (kind, value) {
            (LogicalKind::Decimal(scale), Value::Bytes(b)) => {
                Param::Decimal(logical::decimal_to_string(b, scale))
            }
            (LogicalKind::Date, Value::Int32(d)) => Param::Date(*d),
            (LogicalKind::Time, Value::Int32(t)) => Param::Time(*t as i64 * 1000),
            (LogicalKind::Timestamp, Value::Int64(t)) => {
                Param::Timestamp(t.saturating_mul(NANOS_PER_MS))
            }
            (k, v) => {
                return Err(format!(
                    "Invalid value {} for logical type {k:?}",
                    v.type_name()
                ))
            }
        });
    }
    Ok(match value {
        Value::Boolean(b) => Param::Bool(*b),
        Value::Int8(i) => Param::Int(*i as i64),
        Value::Int16(i) => Param::Int(*i as i64),
        Value::Int32(i) => Param::Int(*i as i64),
        Value::Int64(i) => Param::Int(*i),
        Value::Float32(f) => Param::Float(*f as f64),
        Value::Float64(f) => Param::Float(*f),
        Value::String(s) => Param::Text(s.clone()),
        Value::Bytes(b) => Param::Bytes(b.clone()),
        other => {
            return Err(format!(
                "Unsupported source data type: {}",
                other
                    .schema_type()
                    .map(|t| t.to_string())
                    .unwrap_or_default()
            ))
        }
    })
}

impl Param {
    /// The text PostgreSQL parses for a parameter of any column type (the sink binds every parameter
    /// in text format, so the column's own input function converts it).
    #[cfg(any(test, feature = "jdbc-postgres"))]
    pub fn pg_text(&self) -> Option<String> {
        Some(match self {
            Param::Null => return None,
            Param::Int(i) => i.to_string(),
            Param::Float(f) if f.is_nan() => "NaN".into(),
            Param::Float(f) if f.is_infinite() => {
                if *f > 0.0 {
                    "Infinity".into()
                } else {
                    "-Infinity".into()
                }
            }
            Param::Float(f) => format!("{f:?}"),
            Param::Bool(b) => {
                if *b {
                    "t".into()
                } else {
                    "f".into()
                }
            }
            Param::Text(s) | Param::Decimal(s) => s.clone(),
            Param::Bytes(b) => {
                let mut s = String::with_capacity(2 + b.len() * 2);
                s.push_str("\\x");
                for byte in b {
                    s.push_str(&format!("{byte:02x}"));
                }
                s
            }
            Param::Date(d) => (NaiveDate::from_ymd_opt(1970, 1, 1)? + chrono::Days::new(0))
                .checked_add_signed(chrono::Duration::days(*d as i64))?
                .format("%Y-%m-%d")
                .to_string(),
            Param::Time(us) => NaiveTime::from_num_seconds_from_midnight_opt(
                (us / 1_000_000) as u32,
                (us % 1_000_000) as u32 * 1000,
            )?
            .format("%H:%M:%S%.6f")
            .to_string(),
            Param::Timestamp(nanos) => format_timestamp(*nanos),
        })
    }
}

/// The column type Confluent's dialect creates for a field of `schema` (`None` for a type it cannot
/// create a column for).
pub fn ddl_type(postgres: bool, schema: &Schema) -> Option<&'static str> {
    if let Some(kind) = schema.logical() {
        return Some(match (postgres, kind) {
            (false, _) => "NUMERIC",
            (true, LogicalKind::Decimal(_)) => "DECIMAL",
            (true, LogicalKind::Date) => "DATE",
            (true, LogicalKind::Time) => "TIME",
            (true, LogicalKind::Timestamp) => "TIMESTAMP",
        });
    }
    Some(match (postgres, schema.schema_type) {
        (false, SchemaType::Boolean | SchemaType::Int8 | SchemaType::Int16) => "INTEGER",
        (false, SchemaType::Int32 | SchemaType::Int64) => "INTEGER",
        (false, SchemaType::Float32 | SchemaType::Float64) => "REAL",
        (false, SchemaType::String) => "TEXT",
        (false, SchemaType::Bytes) => "BLOB",
        (true, SchemaType::Int8 | SchemaType::Int16) => "SMALLINT",
        (true, SchemaType::Int32) => "INT",
        (true, SchemaType::Int64) => "BIGINT",
        (true, SchemaType::Float32) => "REAL",
        (true, SchemaType::Float64) => "DOUBLE PRECISION",
        (true, SchemaType::Boolean) => "BOOLEAN",
        (true, SchemaType::String) => "TEXT",
        (true, SchemaType::Bytes) => "BYTEA",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_mapping_follows_confluent() {
        use NumericMapping::*;
        assert_eq!(numeric_kind(5, Some(0), BestFit), Kind::INT32);
        assert_eq!(numeric_kind(19, Some(0), BestFit), Kind::Decimal(0, 19));
        assert_eq!(numeric_kind(10, Some(2), BestFit), Kind::FLOAT64);
        assert_eq!(numeric_kind(30, Some(2), BestFitEagerDouble), Kind::FLOAT64);
        assert_eq!(
            numeric_kind(10, Some(2), PrecisionOnly),
            Kind::Decimal(2, 10)
        );
        assert_eq!(numeric_kind(2, Some(0), PrecisionOnly), Kind::INT8);
        assert_eq!(numeric_kind(10, Some(2), None), Kind::Decimal(2, 10));
        assert_eq!(numeric_kind(0, Some(0), BestFit), Kind::Decimal(127, 0));
    }

    #[test]
    fn sqlite_declared_types() {
        let m = NumericMapping::None;
        assert_eq!(sqlite_kind(Some("INTEGER"), m), Some(Kind::INT32));
        assert_eq!(sqlite_kind(Some("bigint"), m), Some(Kind::INT64));
        assert_eq!(sqlite_kind(Some("VARCHAR(20)"), m), Some(Kind::STRING));
        assert_eq!(
            sqlite_kind(Some("DECIMAL(10,2)"), m),
            Some(Kind::Decimal(2, 10))
        );
        assert_eq!(sqlite_kind(Some("REAL"), m), Some(Kind::FLOAT32));
        assert_eq!(sqlite_kind(Some("GEOMETRY"), m), None);
    }

    #[test]
    fn big_decimals_round_trip() {
        let b = decimal_text_to_unscaled("-12.12", 127).unwrap();
        assert_eq!(
            logical::decimal_to_string(&b, 127).trim_end_matches('0'),
            "-12.12"
        );
        let b = decimal_text_to_unscaled("12.50", 2).unwrap();
        assert_eq!(logical::decimal_to_string(&b, 2), "12.50");
    }

    #[test]
    fn timestamps_parse_and_format() {
        let n = parse_timestamp_text("2024-05-01 10:00:00.123456").unwrap();
        assert_eq!(format_timestamp(n), "2024-05-01 10:00:00.123456");
        assert_eq!(
            parse_timestamp_text("2024-05-01T10:00:00Z"),
            parse_timestamp_text("2024-05-01 10:00:00")
        );
        assert_eq!(
            to_value(Raw::Text("1970-01-02".into()), Kind::Date).unwrap(),
            Value::Int32(1)
        );
        assert_eq!(Param::Date(1).pg_text().unwrap(), "1970-01-02");
        assert_eq!(Param::Bytes(vec![1, 255]).pg_text().unwrap(), "\\x01ff");
    }
}
