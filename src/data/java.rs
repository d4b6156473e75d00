//! Java's textual forms of numbers and dates.
//!
//! Kafka Connect writes values through `String.valueOf`, Jackson and `BigDecimal.toString`, so a
//! `1.0E10` or a `1E+3` is what users of a Kafka Connect worker see in files, headers and JSON.
//! These helpers reproduce those forms so liteconnect's output is byte-for-byte the same.

use chrono::{DateTime, Utc};

/// Milliseconds in one day, the unit step between Connect's `Date` and `Timestamp` values.
pub const MILLIS_PER_DAY: i64 = 24 * 60 * 60 * 1000;

/// `Double.toString(d)`: the shortest digits that read back as `d`, plain between 10^-3 and 10^7,
/// computerised scientific notation (`1.0E10`, `1.0E-5`) outside, always with a fractional part.
pub fn double_to_string(d: f64) -> String {
    match special_to_string(d) {
        Some(text) => text.to_string(),
        None => format_java_float(&shortest_scientific(d), d.abs() >= 1e-3 && d.abs() < 1e7),
    }
}

/// `Float.toString(f)`: like [`double_to_string`] but with the shortest digits for a 32-bit float.
pub fn float_to_string(f: f32) -> String {
    match special_to_string(f64::from(f)) {
        Some(text) => text.to_string(),
        None => format_java_float(&shortest_scientific(f), f.abs() >= 1e-3 && f.abs() < 1e7),
    }
}

/// Java's text for NaN, the infinities and the zeros, which it writes without digits to choose.
fn special_to_string(d: f64) -> Option<&'static str> {
    if d.is_nan() {
        Some("NaN")
    } else if d.is_infinite() {
        Some(if d > 0.0 { "Infinity" } else { "-Infinity" })
    } else if d == 0.0 {
        Some(if d.is_sign_negative() { "-0.0" } else { "0.0" })
    } else {
        None
    }
}

/// Rust's shortest scientific form of `x`; where that has one digit, Java considers two-digit
/// candidates too and takes the closest, so the two-digit form when it reads back as `x`.
fn shortest_scientific<T>(x: T) -> String
where
    T: std::fmt::LowerExp + std::str::FromStr + PartialEq,
{
    let sci = format!("{x:e}");
    if !sci.contains('.') {
        let two = format!("{x:.1e}");
        if two.parse::<T>().ok() == Some(x) {
            return two;
        }
    }
    sci
}

/// Turns Rust's shortest scientific form (`-1.5e-7`) into Java's layout.
fn format_java_float(sci: &str, plain: bool) -> String {
    let (negative, sci) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci),
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    if plain {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        if digits.len() > 1 {
            out.push_str(&digits[1..]);
        } else {
            out.push('0');
        }
        out.push('E');
        out.push_str(&exp.to_string());
    }
    out
}

/// `BigDecimal.toString()` for an unscaled integer given as decimal digits (with an optional
/// leading `-`) and a scale: plain when the scale is non-negative and the adjusted exponent is at
/// least -6, otherwise scientific with an explicitly signed exponent (`1E+3`, `1.23E-10`).
pub fn big_decimal_to_string(unscaled: &str, scale: i32) -> String {
    let (negative, digits) = match unscaled.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, unscaled),
    };
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    let len = digits.len() as i64;
    let adjusted = -(scale as i64) + (len - 1);
    if scale >= 0 && adjusted >= -6 {
        let scale = scale as i64;
        if scale == 0 {
            out.push_str(digits);
        } else if len > scale {
            let point = (len - scale) as usize;
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (scale - len) as usize));
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if len > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('E');
        if adjusted >= 0 {
            out.push('+');
        }
        out.push_str(&adjusted.to_string());
    }
    out
}

/// The instant `millis` after the epoch, or `None` outside chrono's range.
pub fn instant(millis: i64) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp_millis(millis)
}

/// `java.util.Date.toString()` in a JVM whose default time zone is UTC
/// (`Thu Jan 01 00:00:00 UTC 1970`), which is what `String.valueOf` prints for Connect's
/// `Date`, `Time` and `Timestamp` values.
pub fn java_date_to_string(millis: i64) -> String {
    match instant(millis) {
        Some(t) => t.format("%a %b %d %H:%M:%S UTC %Y").to_string(),
        None => millis.to_string(),
    }
}

/// Kafka's `Values.dateFormatFor(date).format(date)`: a time of day (`HH:mm:ss.SSS'Z'`) for
/// instants before the first day ends, a date (`yyyy-MM-dd`) for whole days, otherwise a
/// timestamp (`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`), all in UTC.
pub fn iso_8601_for_millis(millis: i64) -> String {
    let Some(t) = instant(millis) else {
        return millis.to_string();
    };
    if millis < MILLIS_PER_DAY {
        t.format("%H:%M:%S%.3fZ").to_string()
    } else if millis % MILLIS_PER_DAY == 0 {
        t.format("%Y-%m-%d").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_java() {
        let cases: [(f64, &str); 18] = [
            (1.0, "1.0"),
            (1e10, "1.0E10"),
            (1e7, "1.0E7"),
            (9_999_999.0, "9999999.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (-1.5e-7, "-1.5E-7"),
            (123.456, "123.456"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (1.2345678e20, "1.2345678E20"),
            (f64::MIN_POSITIVE * f64::EPSILON, "4.9E-324"),
            (f64::MAX, "1.7976931348623157E308"),
            (0.002, "0.002"),
            (2e22, "2.0E22"),
        ];
        for (x, java) in cases {
            assert_eq!(double_to_string(x), java, "{x:?}");
        }
    }

    #[test]
    fn floats_print_like_java() {
        let cases: [(f32, &str); 7] = [
            (0.1, "0.1"),
            (1.1, "1.1"),
            (3.0e10, "3.0E10"),
            (66000.0008, "66000.0"),
            (300.01, "300.01"),
            (f32::from_bits(1), "1.4E-45"),
            (f32::MAX, "3.4028235E38"),
        ];
        for (x, java) in cases {
            assert_eq!(float_to_string(x), java, "{x:?}");
        }
    }

    #[test]
    fn big_decimals_print_like_java() {
        assert_eq!(big_decimal_to_string("12345", 2), "123.45");
        assert_eq!(big_decimal_to_string("-5", 3), "-0.005");
        assert_eq!(big_decimal_to_string("1", 0), "1");
        assert_eq!(big_decimal_to_string("1", -3), "1E+3");
        assert_eq!(big_decimal_to_string("123", 10), "1.23E-8");
        assert_eq!(big_decimal_to_string("1", 6), "0.000001");
        assert_eq!(big_decimal_to_string("1", 7), "1E-7");
        assert_eq!(big_decimal_to_string("0", 2), "0.00");
    }

    #[test]
    fn dates_print_like_java() {
        assert_eq!(java_date_to_string(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(iso_8601_for_millis(1000), "00:00:01.000Z");
        assert_eq!(iso_8601_for_millis(MILLIS_PER_DAY * 3), "1970-01-04");
        assert_eq!(
            iso_8601_for_millis(MILLIS_PER_DAY * 3 + 5),
            "1970-01-04T00:00:00.005Z"
        );
    }
}
