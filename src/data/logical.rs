//! Connect's logical types: `Decimal`, `Date`, `Time` and `Timestamp`.
//!
//! A logical type is a named primitive schema. liteconnect keeps values in their physical form —
//! exactly what Kafka puts on the wire — so a `Decimal` value is `Value::Bytes` holding the
//! big-endian two's-complement unscaled integer, a `Date` is `Value::Int32` days since the epoch,
//! a `Time` is `Value::Int32` milliseconds since midnight and a `Timestamp` is `Value::Int64`
//! milliseconds since the epoch. The helpers here convert between those forms and text.

use super::{DataError, Schema, SchemaBuilder, SchemaType};

/// Schema name of Connect's arbitrary-precision decimal (`org.apache.kafka.connect.data.Decimal`).
pub const DECIMAL_NAME: &str = "org.apache.kafka.connect.data.Decimal";
/// Schema name of Connect's date (`INT32` days since the epoch).
pub const DATE_NAME: &str = "org.apache.kafka.connect.data.Date";
/// Schema name of Connect's time of day (`INT32` milliseconds since midnight).
pub const TIME_NAME: &str = "org.apache.kafka.connect.data.Time";
/// Schema name of Connect's timestamp (`INT64` milliseconds since the epoch).
pub const TIMESTAMP_NAME: &str = "org.apache.kafka.connect.data.Timestamp";
/// The schema parameter holding a decimal's scale, as a decimal string.
pub const DECIMAL_SCALE_PARAMETER: &str = "scale";

/// Kafka's `Decimal.builder(scale)`: `BYTES`, named, version 1, with the `scale` parameter.
pub fn decimal(scale: i32) -> SchemaBuilder {
    SchemaBuilder::bytes()
        .name(DECIMAL_NAME)
        .parameter(DECIMAL_SCALE_PARAMETER, scale.to_string())
        .version(1)
}

/// Kafka's `Date.builder()`: `INT32`, named, version 1.
pub fn date() -> SchemaBuilder {
    SchemaBuilder::int32().name(DATE_NAME).version(1)
}

/// Kafka's `Time.builder()`: `INT32`, named, version 1.
pub fn time() -> SchemaBuilder {
    SchemaBuilder::int32().name(TIME_NAME).version(1)
}

/// Kafka's `Timestamp.builder()`: `INT64`, named, version 1.
pub fn timestamp() -> SchemaBuilder {
    SchemaBuilder::int64().name(TIMESTAMP_NAME).version(1)
}

/// Which logical type a schema carries, judged by name and physical type together (a schema
/// named `...Decimal` but typed `INT32` is treated as a plain `INT32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogicalKind {
    /// `Decimal` with its scale.
    Decimal(i32),
    /// `Date`.
    Date,
    /// `Time`.
    Time,
    /// `Timestamp`.
    Timestamp,
}

/// The logical type of `schema`, if any.
pub fn kind_of(schema: &Schema) -> Option<LogicalKind> {
    match (schema.name.as_deref()?, schema.schema_type) {
        (DECIMAL_NAME, SchemaType::Bytes) => {
            Some(LogicalKind::Decimal(decimal_scale(schema).unwrap_or(0)))
        }
        (DATE_NAME, SchemaType::Int32) => Some(LogicalKind::Date),
        (TIME_NAME, SchemaType::Int32) => Some(LogicalKind::Time),
        (TIMESTAMP_NAME, SchemaType::Int64) => Some(LogicalKind::Timestamp),
        _ => None,
    }
}

/// The scale of a `Decimal` schema. Kafka's message when the parameter is absent or unparsable is
/// `Invalid Decimal schema: scale parameter not found.`
pub fn decimal_scale(schema: &Schema) -> Result<i32, DataError> {
    schema
        .parameters
        .get(DECIMAL_SCALE_PARAMETER)
        .and_then(|s| s.trim().parse::<i32>().ok())
        .ok_or_else(|| DataError::new("Invalid Decimal schema: scale parameter not found."))
}

/// Decimal digits (with a leading `-` when negative) of a big-endian two's-complement integer of
/// any length; an empty slice is zero.
pub fn unscaled_to_string(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "0".to_string();
    }
    let negative = bytes[0] & 0x80 != 0;
    let mut magnitude: Vec<u8> = bytes.to_vec();
    if negative {
        // two's complement negation: invert, add one
        for b in magnitude.iter_mut() {
            *b = !*b;
        }
        for b in magnitude.iter_mut().rev() {
            let (sum, carry) = b.overflowing_add(1);
            *b = sum;
            if !carry {
                break;
            }
        }
    }
    // repeated division by 10^9 over base-256 digits
    let mut chunks: Vec<u32> = Vec::new();
    let mut start = 0;
    while start < magnitude.len() && magnitude[start] == 0 {
        start += 1;
    }
    let mut digits = magnitude[start..].to_vec();
    while !digits.is_empty() {
        let mut rem: u64 = 0;
        let mut next = Vec::with_capacity(digits.len());
        for &d in &digits {
            let cur = (rem << 8) | d as u64;
            let q = cur / 1_000_000_000;
            rem = cur % 1_000_000_000;
            if !(next.is_empty() && q == 0) {
                next.push(q as u8);
            }
        }
        chunks.push(rem as u32);
        digits = next;
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    match chunks.split_last() {
        None => out.push('0'),
        Some((most, rest)) => {
            out.push_str(&most.to_string());
            for c in rest.iter().rev() {
                out.push_str(&format!("{c:09}"));
            }
        }
    }
    out
}

/// The value of a big-endian two's-complement integer, when it fits an `i128`.
pub fn unscaled_to_i128(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() {
        return Some(0);
    }
    let negative = bytes[0] & 0x80 != 0;
    let fill = if negative { 0xFF } else { 0x00 };
    // drop redundant sign bytes, keeping one when the first significant byte's top bit disagrees
    let start = match bytes.iter().position(|b| *b != fill) {
        None => bytes.len() - 1,
        Some(i) if (bytes[i] & 0x80 != 0) == negative => i,
        Some(i) => i - 1,
    };
    let trimmed = &bytes[start..];
    if trimmed.len() > 16 {
        return None;
    }
    let mut buf = [fill; 16];
    buf[16 - trimmed.len()..].copy_from_slice(trimmed);
    Some(i128::from_be_bytes(buf))
}

/// Java's `BigInteger.toByteArray()`: the shortest big-endian two's-complement form, at least one
/// byte. This is the unscaled value Kafka's `Decimal.fromLogical` writes.
pub fn i128_to_unscaled(v: i128) -> Vec<u8> {
    minimal_unscaled(&v.to_be_bytes())
}

/// The same integer as `bytes` in `BigInteger.toByteArray()` form: redundant leading sign bytes
/// removed, an empty slice becoming `[0]`. Writing decimals in this form keeps the base64 text
/// identical to Kafka's whatever padding a producer used.
pub fn minimal_unscaled(bytes: &[u8]) -> Vec<u8> {
    if bytes.is_empty() {
        return vec![0];
    }
    let mut start = 0;
    while start + 1 < bytes.len() {
        let next_sign = bytes[start + 1] & 0x80;
        match bytes[start] {
            0x00 if next_sign == 0 => start += 1,
            0xFF if next_sign != 0 => start += 1,
            _ => break,
        }
    }
    bytes[start..].to_vec()
}

/// `BigDecimal.toString()` of the decimal whose unscaled value is `bytes` and scale `scale`
/// (`123.45`, `-0.005`, `1E+3`, `1.23E-8`). Works for unscaled values of any length.
pub fn decimal_to_string(bytes: &[u8], scale: i32) -> String {
    super::java::big_decimal_to_string(&unscaled_to_string(bytes), scale)
}

/// A decimal literal split into its unscaled integer digits and scale, as `new BigDecimal(s)` would
/// read it (optional sign, digits with an optional point, optional exponent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedDecimal {
    /// Whether the literal had a leading `-`.
    pub negative: bool,
    /// The unscaled digits without leading zeros (`"0"` for zero).
    pub digits: String,
    /// The scale: digits after the point minus the exponent.
    pub scale: i64,
}

impl ParsedDecimal {
    /// Parses Java's `BigDecimal` grammar; `None` when `s` is not such a literal.
    pub fn parse(s: &str) -> Option<ParsedDecimal> {
        let (negative, rest) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let (int_part, frac_part) = match mantissa.split_once('.') {
            Some((i, f)) => (i, f),
            None => (mantissa, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        if !int_part.bytes().all(|b| b.is_ascii_digit())
            || !frac_part.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let exp: i64 = match exponent {
            None => 0,
            Some(e) => {
                let body = e.strip_prefix(['+', '-']).unwrap_or(e);
                if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) || body.len() > 10 {
                    return None;
                }
                e.parse().ok()?
            }
        };
        let all: String = format!("{int_part}{frac_part}");
        let trimmed = all.trim_start_matches('0');
        let digits = if trimmed.is_empty() {
            "0".to_string()
        } else {
            trimmed.to_string()
        };
        Some(ParsedDecimal {
            negative: negative && digits != "0",
            digits,
            scale: frac_part.len() as i64 - exp,
        })
    }

    /// Whether the value is a whole number.
    pub fn is_integral(&self) -> bool {
        if self.scale <= 0 || self.digits == "0" {
            return true;
        }
        match usize::try_from(self.scale) {
            Ok(s) if s < self.digits.len() => self.digits[self.digits.len() - s..]
                .bytes()
                .all(|b| b == b'0'),
            _ => false,
        }
    }

    /// The unscaled value at `scale`, exact: `None` when digits would be dropped or the result
    /// leaves the `i128` range.
    pub fn unscaled_at(&self, scale: i64) -> Option<i128> {
        let mut digits = self.digits.clone();
        if scale >= self.scale {
            let extra = usize::try_from(scale - self.scale).ok()?;
            if digits != "0" {
                if extra > 40 {
                    return None;
                }
                digits.extend(std::iter::repeat_n('0', extra));
            }
        } else {
            let drop = usize::try_from(self.scale - scale).ok()?;
            if drop >= digits.len() {
                if digits.bytes().any(|b| b != b'0') {
                    return None;
                }
                digits = "0".to_string();
            } else {
                let (keep, dropped) = digits.split_at(digits.len() - drop);
                if dropped.bytes().any(|b| b != b'0') {
                    return None;
                }
                digits = keep.to_string();
            }
        }
        let magnitude: i128 = digits.parse().ok()?;
        Some(if self.negative { -magnitude } else { magnitude })
    }

    /// The literal's text with its sign, for `f32`/`f64` parsing.
    pub fn to_sci_string(&self) -> String {
        format!(
            "{}{}e{}",
            if self.negative { "-" } else { "" },
            self.digits,
            -self.scale
        )
    }
}

/// Parses a decimal literal (`"12.5"`, `"-3"`, `"1.2E+3"`) into the unscaled bytes of a `Decimal`
/// with the given scale. Fails, rather than rounding, when the literal has more fractional digits
/// than `scale` allows, and when the unscaled value leaves the `i128` range.
pub fn decimal_from_str(s: &str, scale: i32) -> Result<Vec<u8>, DataError> {
    let parsed = ParsedDecimal::parse(s.trim())
        .ok_or_else(|| DataError::new(format!("Invalid decimal value: {s}")))?;
    let unscaled = parsed.unscaled_at(scale as i64).ok_or_else(|| {
        DataError::new(format!(
            "Decimal value {s} cannot be represented with scale {scale} without rounding or overflow"
        ))
    })?;
    Ok(i128_to_unscaled(unscaled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unscaled_bytes_match_big_integer() {
        assert_eq!(i128_to_unscaled(0), vec![0]);
        assert_eq!(i128_to_unscaled(127), vec![0x7F]);
        assert_eq!(i128_to_unscaled(128), vec![0x00, 0x80]);
        assert_eq!(i128_to_unscaled(-1), vec![0xFF]);
        assert_eq!(i128_to_unscaled(-128), vec![0x80]);
        assert_eq!(i128_to_unscaled(-129), vec![0xFF, 0x7F]);
        assert_eq!(i128_to_unscaled(12345), vec![0x30, 0x39]);
        for v in [
            0i128,
            1,
            -1,
            255,
            -256,
            i64::MAX as i128,
            i128::MAX,
            i128::MIN,
        ] {
            assert_eq!(unscaled_to_i128(&i128_to_unscaled(v)), Some(v));
            assert_eq!(unscaled_to_string(&i128_to_unscaled(v)), v.to_string());
        }
        assert_eq!(unscaled_to_i128(&[0xFF, 0xFF, 0x80]), Some(-128));
        assert_eq!(unscaled_to_i128(&[0x00, 0x00, 0x80]), Some(128));
        assert_eq!(minimal_unscaled(&[0x00, 0x00, 0x80]), vec![0x00, 0x80]);
        assert_eq!(minimal_unscaled(&[0xFF, 0xFF, 0x7F]), vec![0xFF, 0x7F]);
        assert_eq!(minimal_unscaled(&[]), vec![0]);
        let mut padded = vec![0x00];
        padded.extend(i128::MAX.to_be_bytes());
        assert_eq!(unscaled_to_i128(&padded), Some(i128::MAX));
    }

    #[test]
    fn unscaled_strings_beyond_i128() {
        let mut big = vec![0x01];
        big.extend([0u8; 16]);
        assert_eq!(
            unscaled_to_string(&big),
            "340282366920938463463374607431768211456"
        );
        assert_eq!(unscaled_to_i128(&big), None);
    }

    #[test]
    fn decimal_text_round_trips() {
        assert_eq!(
            decimal_to_string(&decimal_from_str("123.45", 2).unwrap(), 2),
            "123.45"
        );
        assert_eq!(
            decimal_to_string(&decimal_from_str("-1.5", 3).unwrap(), 3),
            "-1.500"
        );
        assert_eq!(
            decimal_to_string(&decimal_from_str("1.2E+3", 0).unwrap(), 0),
            "1200"
        );
        assert_eq!(decimal_from_str("12345", 0).unwrap(), vec![0x30, 0x39]);
        assert_eq!(decimal_from_str("1.50", 1).unwrap(), vec![15]);
        assert!(decimal_from_str("1.234", 2).is_err());
        assert!(decimal_from_str("abc", 2).is_err());
        assert!(decimal_from_str("1e", 2).is_err());
    }

    #[test]
    fn parsed_decimal_integrality() {
        assert!(ParsedDecimal::parse("1.0").unwrap().is_integral());
        assert!(ParsedDecimal::parse("300.00").unwrap().is_integral());
        assert!(!ParsedDecimal::parse("1.1").unwrap().is_integral());
        assert!(ParsedDecimal::parse("1e5").unwrap().is_integral());
        assert!(!ParsedDecimal::parse("1e-5").unwrap().is_integral());
        assert!(ParsedDecimal::parse(".").is_none());
        assert!(ParsedDecimal::parse("-").is_none());
        assert_eq!(ParsedDecimal::parse(".5").unwrap().unscaled_at(1), Some(5));
    }

    #[test]
    fn logical_schemas_match_kafka() {
        let d = decimal(2).build();
        assert_eq!(d.schema_type, SchemaType::Bytes);
        assert_eq!(d.name.as_deref(), Some(DECIMAL_NAME));
        assert_eq!(d.version, Some(1));
        assert_eq!(d.parameters.get("scale").map(String::as_str), Some("2"));
        assert_eq!(kind_of(&d), Some(LogicalKind::Decimal(2)));
        assert_eq!(kind_of(&date().build()), Some(LogicalKind::Date));
        assert_eq!(kind_of(&time().build()), Some(LogicalKind::Time));
        assert_eq!(kind_of(&timestamp().build()), Some(LogicalKind::Timestamp));
        assert_eq!(kind_of(&Schema::new(SchemaType::Int32)), None);
    }
}
