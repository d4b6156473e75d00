//! Kafka's `Values.convertToString` and `Values.parseString`: the inline text syntax of header
//! values (SimpleHeaderConverter) and of `InsertHeader`'s `value.literal`.
//!
//! Text form: strings as they are at the top level and quoted (with `\` and `"` escaped) inside
//! arrays and maps; numbers as Java prints them; arrays `[1,2]`; maps `{"k":1}`; structs
//! `{"field":value,...}`; bytes as base64; `Date`/`Time`/`Timestamp` as ISO-8601 in UTC.
//!
//! Parsing infers a schema: `true`/`false` → `BOOLEAN`; whole numbers → the smallest of
//! `INT8`..`INT64` that holds them (`1.0` is `INT8`); other numbers → `FLOAT32` when finite as a
//! float, else `FLOAT64`, else a `Decimal`; `yyyy-MM-dd`, `HH:mm:ss.SSS'Z'` and
//! `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` → `Date`, `Time`, `Timestamp`; arrays and maps whose elements
//! share a type → typed `ARRAY`/`MAP` (numbers widened to a common type); `null` → no value;
//! anything else → the original `STRING`.
//!
//! Differences from Kafka: a top-level number or temporal literal followed by more tokens
//! (`12:30`, `1,2`) is kept as a string, where Kafka returns the leading number and drops the
//! rest; the ISO-8601 forms are parsed strictly rather than with `SimpleDateFormat`'s leniency; and
//! aligning merged array/map elements converts numbers (and `Date` to `Timestamp`) only.

use super::java::{self, MILLIS_PER_DAY};
use super::logical::{self, LogicalKind, ParsedDecimal};
use super::{
    append_entries, append_items, DataError, Schema, SchemaAndValue, SchemaBuilder, SchemaRef,
    SchemaType, Value,
};
use base64::Engine as _;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use std::sync::Arc;

/// `Values.convertToString(schema, value)`: the inline text form of a value, `None` for null.
/// The schema is used for logical types (a `Decimal`'s bytes print as its number) and is
/// followed into array items, map entries and struct fields.
pub fn convert_to_string(schema: Option<&Schema>, value: &Value) -> Option<String> {
    if value.is_null() {
        return None;
    }
    let mut out = String::new();
    append(&mut out, value, false, schema);
    Some(out)
}

/// A JSON value read as the schemaless JsonConverter reads it: integers `Int64`, other numbers
/// `Float64`, objects maps with string keys (without writing it out and parsing it again).
pub fn from_json(j: &serde_json::Value) -> Value {
    use serde_json::Value as Json;
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => n.as_i64().map_or_else(
            || Value::Float64(n.as_f64().unwrap_or(f64::NAN)),
            Value::Int64,
        ),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(from_json).collect()),
        Json::Object(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (Value::String(k.clone()), from_json(v)))
                .collect(),
        ),
    }
}

/// Kafka's `Values.escape`: backslashes doubled, then double quotes preceded by a backslash.
pub fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `append` for a value inside an array or map.
fn embedded_item(out: &mut String, value: &Value, schema: Option<&Schema>) {
    append(out, value, true, schema);
}

fn append(out: &mut String, value: &Value, embedded: bool, schema: Option<&Schema>) {
    if let Some(kind) = schema.and_then(Schema::logical) {
        let text = match (kind, value) {
            (LogicalKind::Decimal(scale), Value::Bytes(b)) => {
                Some(logical::decimal_to_string(b, scale))
            }
            (LogicalKind::Date, Value::Int32(d)) => {
                Some(java::iso_8601_for_millis(*d as i64 * MILLIS_PER_DAY))
            }
            (LogicalKind::Time, Value::Int32(ms)) => Some(java::iso_8601_for_millis(*ms as i64)),
            (LogicalKind::Timestamp, Value::Int64(ms)) => Some(java::iso_8601_for_millis(*ms)),
            _ => None,
        };
        if let Some(t) = text {
            out.push_str(&t);
            return;
        }
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::String(s) => {
            if embedded {
                out.push('"');
                out.push_str(&escape(s));
                out.push('"');
            } else {
                out.push_str(s);
            }
        }
        Value::Bytes(b) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(b);
            if embedded {
                out.push('"');
                out.push_str(&encoded);
                out.push('"');
            } else {
                out.push_str(&encoded);
            }
        }
        Value::Array(items) => append_items(out, items, schema, ",", embedded_item),
        Value::Map(entries) => append_entries(out, entries, schema, (",", ':'), embedded_item),
        Value::Struct(s) => {
            out.push('{');
            for (i, field) in s.schema.fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                append(out, &Value::String(field.name.clone()), true, None);
                out.push(':');
                let v = s.get(&field.name).unwrap_or(&Value::Null);
                append(out, v, true, Some(&field.schema));
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_java_string()),
    }
}

/// `Values.parseString(text)`: the value and inferred schema of an inline text (see the module
/// documentation). The empty string is an empty `STRING`; `null` gives no schema and
/// `Value::Null`.
pub fn parse_string(text: &str) -> SchemaAndValue {
    if text.is_empty() {
        return SchemaAndValue::new(Some(Schema::string()), Value::String(String::new()));
    }
    let mut parser = ValueParser {
        p: Parser::new(text),
    };
    match parser.parse(false) {
        Ok(Some(sv)) => sv,
        Ok(None) => SchemaAndValue::null(),
        // top-level failures degrade to the original text, as Kafka's parser does
        Err(_) => SchemaAndValue::new(Some(Schema::string()), Value::String(text.to_string())),
    }
}

fn is_blank(s: &str) -> bool {
    java_trim(s).is_empty()
}

/// Java's `String.trim()`: strips characters up to and including U+0020.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// Kafka's `Values.Parser`: splits on unescaped `: , { } [ ] "`, each delimiter being a token.
struct Parser {
    original: String,
    chars: Vec<char>,
    pos: usize,
    next_token: Option<String>,
    previous: Option<String>,
}

impl Parser {
    fn new(original: &str) -> Self {
        Parser {
            original: original.to_string(),
            chars: original.chars().collect(),
            pos: 0,
            next_token: None,
            previous: None,
        }
    }

    fn mark(&self) -> usize {
        self.pos - self.next_token.as_ref().map_or(0, |t| t.chars().count())
    }

    fn rewind_to(&mut self, pos: usize) {
        self.pos = pos;
        self.next_token = None;
        self.previous = None;
    }

    fn can_consume_next_token(&self) -> bool {
        self.pos < self.chars.len()
    }

    fn has_next(&self) -> bool {
        self.next_token.is_some() || self.can_consume_next_token()
    }

    fn next(&mut self) -> String {
        let t = match self.next_token.take() {
            Some(t) => t,
            None => self.consume_next_token(),
        };
        self.previous = Some(t.clone());
        t
    }

    fn next_n(&mut self, n: usize) -> Option<String> {
        let start = self.mark();
        for _ in 0..n {
            if !self.has_next() {
                self.rewind_to(start);
                return None;
            }
            self.next();
        }
        Some(self.chars[start..self.pos].iter().collect())
    }

    fn consume_next_token(&mut self) -> String {
        let mut escaped = false;
        let start = self.pos;
        while self.pos < self.chars.len() {
            match self.chars[self.pos] {
                '\\' => escaped = !escaped,
                ':' | ',' | '{' | '}' | '[' | ']' | '"' => {
                    if !escaped {
                        if start < self.pos {
                            return self.chars[start..self.pos].iter().collect();
                        }
                        self.pos += 1;
                        return self.chars[start..start + 1].iter().collect();
                    }
                    escaped = false;
                }
                _ => escaped = false,
            }
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn can_consume(&mut self, expected: &str) -> bool {
        if self.is_next(expected) {
            self.next_token = None;
            return true;
        }
        false
    }

    fn is_next(&mut self, expected: &str) -> bool {
        if self.next_token.is_none() {
            if !self.has_next() {
                return false;
            }
            self.next_token = Some(self.consume_next_token());
        }
        while self.next_token.as_deref().is_some_and(is_blank) && self.can_consume_next_token() {
            self.next_token = Some(self.consume_next_token());
        }
        self.next_token
            .as_deref()
            .is_some_and(|t| java_trim(t) == expected)
    }
}

struct ValueParser {
    p: Parser,
}

type Parsed = Result<Option<SchemaAndValue>, DataError>;

impl ValueParser {
    fn can_parse_single_token_literal(&mut self, embedded: bool, literal: &str) -> bool {
        let start = self.p.mark();
        if self.p.can_consume(literal) && (embedded || !self.p.has_next()) {
            return true;
        }
        self.p.rewind_to(start);
        false
    }

    fn parse(&mut self, embedded: bool) -> Parsed {
        if !self.p.has_next() {
            return Ok(None);
        }
        if embedded && self.p.can_consume("\"") {
            return self.parse_quoted_string().map(Some);
        }
        if self.can_parse_single_token_literal(embedded, "null") {
            return Ok(None);
        }
        if self.can_parse_single_token_literal(embedded, "true") {
            return Ok(Some(SchemaAndValue::new(
                Some(Schema::boolean()),
                Value::Boolean(true),
            )));
        }
        if self.can_parse_single_token_literal(embedded, "false") {
            return Ok(Some(SchemaAndValue::new(
                Some(Schema::boolean()),
                Value::Boolean(false),
            )));
        }
        let start = self.p.mark();
        if self.p.can_consume("[") {
            match self.parse_array() {
                Ok(v) => return Ok(Some(v)),
                Err(_) => self.p.rewind_to(start),
            }
        } else if self.p.can_consume("{") {
            match self.parse_map() {
                Ok(v) => return Ok(Some(v)),
                Err(_) => self.p.rewind_to(start),
            }
        }
        let token = self.p.next();
        if is_blank(&token) {
            return Ok(Some(SchemaAndValue::new(
                Some(Schema::string()),
                Value::String(token),
            )));
        }
        self.parse_next_token(embedded, java_trim(&token).to_string())
            .map(Some)
    }

    fn parse_next_token(
        &mut self,
        embedded: bool,
        token: String,
    ) -> Result<SchemaAndValue, DataError> {
        let first = token.chars().next().unwrap_or(' ');
        let first_is_digit = first.is_ascii_digit();
        let mut parsed = None;
        if first_is_digit {
            parsed = self.parse_multiple_tokens_as_temporal(&token);
        }
        if parsed.is_none() && (first_is_digit || first == '+' || first == '-') {
            parsed = parse_as_number(&token);
        }
        match parsed {
            Some(sv) if embedded || !self.p.has_next() => Ok(sv),
            _ if embedded => Err(DataError::new("Failed to parse embedded value")),
            _ => Ok(SchemaAndValue::new(
                Some(Schema::string()),
                Value::String(self.p.original.clone()),
            )),
        }
    }

    fn parse_quoted_string(&mut self) -> Result<SchemaAndValue, DataError> {
        let mut content = String::new();
        while self.p.has_next() {
            if self.p.can_consume("\"") {
                break;
            }
            content.push_str(&self.p.next());
        }
        if let Some(t) = parse_as_temporal(&content) {
            return Ok(t);
        }
        Ok(SchemaAndValue::new(
            Some(Schema::string()),
            Value::String(content),
        ))
    }

    /// The error for an array or map that ends before its closing bracket: after a trailing ',' or not.
    fn unterminated(&self, what: &str, close: char) -> DataError {
        let original = &self.p.original;
        if self.p.previous.as_deref() == Some(",") {
            DataError::new(format!("{what} is missing element after ',': {original}"))
        } else {
            DataError::new(format!(
                "{what} is missing terminating '{close}': {original}"
            ))
        }
    }

    fn parse_array(&mut self) -> Result<SchemaAndValue, DataError> {
        let mut items: Vec<Option<SchemaAndValue>> = Vec::new();
        let mut merger = SchemaMerger::default();
        while self.p.has_next() {
            if self.p.can_consume("]") {
                let (schema, values) = match merger.common() {
                    Some(common) => {
                        let values = items.into_iter().map(|i| align(i, &common)).collect();
                        (SchemaBuilder::array(common).build(), values)
                    }
                    None => (
                        SchemaBuilder::new(SchemaType::Array).build(),
                        items
                            .into_iter()
                            .map(|i| i.map_or(Value::Null, |sv| sv.value))
                            .collect(),
                    ),
                };
                return Ok(SchemaAndValue::new(Some(schema), Value::Array(values)));
            }
            if self.p.can_consume(",") {
                return Err(DataError::new(format!(
                    "Unable to parse an empty array element: {}",
                    self.p.original
                )));
            }
            let element = self.parse(true)?;
            merger.merge(element.as_ref());
            items.push(element);
            let current = self.p.mark();
            if self.p.can_consume("]") {
                self.p.rewind_to(current);
            } else if !self.p.can_consume(",") {
                return Err(DataError::new("Array elements missing ',' delimiter"));
            }
        }
        Err(self.unterminated("Array", ']'))
    }

    fn parse_map(&mut self) -> Result<SchemaAndValue, DataError> {
        let mut entries: Vec<(SchemaAndValue, Option<SchemaAndValue>)> = Vec::new();
        let mut keys = SchemaMerger::default();
        let mut values = SchemaMerger::default();
        while self.p.has_next() {
            if self.p.can_consume("}") {
                let key_common = keys.common();
                let value_common = values.common();
                let mut schema = Schema::new(SchemaType::Map);
                let mut out: Vec<(Value, Value)> = Vec::new();
                for (k, v) in entries {
                    let key = match &key_common {
                        Some(ks) => align(Some(k), ks),
                        None => k.value,
                    };
                    let value = match (&key_common, &value_common) {
                        (Some(_), Some(vs)) => align(v, vs),
                        _ => v.map_or(Value::Null, |sv| sv.value),
                    };
                    match out.iter_mut().find(|(existing, _)| *existing == key) {
                        Some(slot) => slot.1 = value,
                        None => out.push((key, value)),
                    }
                }
                if let Some(ks) = key_common {
                    schema.key_schema = Some(ks);
                    schema.value_schema = value_common;
                }
                return Ok(SchemaAndValue::new(Some(Arc::new(schema)), Value::Map(out)));
            }
            if self.p.can_consume(",") {
                return Err(DataError::new(format!(
                    "Unable to parse a map entry with no key or value: {}",
                    self.p.original
                )));
            }
            let key = match self.parse(true)? {
                Some(k) if !k.value.is_null() => k,
                _ => {
                    return Err(DataError::new(format!(
                        "Map entry may not have a null key: {}",
                        self.p.original
                    )))
                }
            };
            if !self.p.can_consume(":") {
                return Err(DataError::new(format!(
                    "Map entry is missing ':' at {} in {}",
                    self.p.pos, self.p.original
                )));
            }
            let value = self.parse(true)?;
            self.p.can_consume(",");
            keys.merge(Some(&key));
            values.merge(value.as_ref());
            entries.push((key, value));
        }
        Err(self.unterminated("Map", '}'))
    }

    fn parse_multiple_tokens_as_temporal(&mut self, token: &str) -> Option<SchemaAndValue> {
        let position = self.p.mark();
        if let Some(rest) = self.p.next_n(4) {
            if let Some(t) = parse_as_temporal(&format!("{token}{rest}")) {
                return Some(t);
            }
        }
        self.p.rewind_to(position);
        parse_as_temporal(token)
    }
}

/// Kafka's `parseAsNumber`: exact integers as the smallest integer type, other finite numbers as
/// `FLOAT32`/`FLOAT64`, the rest as a `Decimal` with the literal's own scale.
fn parse_as_number(token: &str) -> Option<SchemaAndValue> {
    let parsed = ParsedDecimal::parse(token)?;
    if parsed.is_integral() {
        if let Some(v) = parsed.unscaled_at(0).and_then(|v| i64::try_from(v).ok()) {
            let (schema, value) = if let Ok(b) = i8::try_from(v) {
                (Schema::int8(), Value::Int8(b))
            } else if let Ok(s) = i16::try_from(v) {
                (Schema::int16(), Value::Int16(s))
            } else if let Ok(i) = i32::try_from(v) {
                (Schema::int32(), Value::Int32(i))
            } else {
                (Schema::int64(), Value::Int64(v))
            };
            return Some(SchemaAndValue::new(Some(schema), value));
        }
    }
    let sci = parsed.to_sci_string();
    let f: f32 = sci.parse().ok()?;
    let d: f64 = sci.parse().ok()?;
    if f.is_finite() && parsed.scale != 0 {
        return Some(SchemaAndValue::new(
            Some(Schema::float32()),
            Value::Float32(f),
        ));
    }
    if d.is_finite() && parsed.scale != 0 {
        return Some(SchemaAndValue::new(
            Some(Schema::float64()),
            Value::Float64(d),
        ));
    }
    let scale = i32::try_from(parsed.scale).ok()?;
    let unscaled = parsed.unscaled_at(parsed.scale)?;
    Some(SchemaAndValue::new(
        Some(logical::decimal(scale).build()),
        Value::Bytes(logical::i128_to_unscaled(unscaled)),
    ))
}

/// Kafka's `parseAsTemporal`: by length, a time (13 chars), a timestamp (24) or a date (10), in
/// UTC; escaped colons (`\:`) are accepted.
fn parse_as_temporal(token: &str) -> Option<SchemaAndValue> {
    let token = token.replace("\\:", ":");
    match token.chars().count() {
        13 => {
            let t = NaiveTime::parse_from_str(&token, "%H:%M:%S%.3fZ").ok()?;
            let ms = t.signed_duration_since(NaiveTime::MIN).num_milliseconds();
            Some(SchemaAndValue::new(
                Some(logical::time().build()),
                Value::Int32(ms as i32),
            ))
        }
        24 => {
            let t = NaiveDateTime::parse_from_str(&token, "%Y-%m-%dT%H:%M:%S%.3fZ").ok()?;
            let ms = t.and_utc().timestamp_millis();
            Some(SchemaAndValue::new(
                Some(logical::timestamp().build()),
                Value::Int64(ms),
            ))
        }
        10 => {
            let d = NaiveDate::parse_from_str(&token, "%Y-%m-%d").ok()?;
            let days = d
                .signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1)?)
                .num_days();
            Some(SchemaAndValue::new(
                Some(logical::date().build()),
                Value::Int32(i32::try_from(days).ok()?),
            ))
        }
        _ => None,
    }
}

/// Kafka's `SchemaMerger`: the common schema of the elements seen so far, if they have one.
#[derive(Default)]
struct SchemaMerger {
    common: Option<SchemaRef>,
    incompatible: bool,
}

impl SchemaMerger {
    fn merge(&mut self, latest: Option<&SchemaAndValue>) {
        let Some(schema) = latest.and_then(|sv| sv.schema.clone()) else {
            return;
        };
        if self.incompatible {
            return;
        }
        self.common = match self.common.take() {
            None => Some(schema),
            Some(prev) => merge_schemas(prev, schema),
        };
        self.incompatible = self.common.is_none();
    }

    fn common(&self) -> Option<SchemaRef> {
        self.common.clone()
    }
}

fn numeric_rank(t: SchemaType) -> Option<u8> {
    match t {
        SchemaType::Int8 => Some(0),
        SchemaType::Int16 => Some(1),
        SchemaType::Int32 => Some(2),
        SchemaType::Int64 => Some(3),
        SchemaType::Float32 => Some(4),
        SchemaType::Float64 => Some(5),
        _ => None,
    }
}

/// Kafka's `mergeSchemas`: numbers widen to the wider type; equal types merge when their
/// optionality agrees; anything else has no common schema.
fn merge_schemas(previous: SchemaRef, new: SchemaRef) -> Option<SchemaRef> {
    if previous.schema_type != new.schema_type {
        let (p, n) = (
            numeric_rank(previous.schema_type)?,
            numeric_rank(new.schema_type)?,
        );
        return Some(if n > p { new } else { previous });
    }
    if previous.optional == new.optional {
        return Some(if previous.optional { previous } else { new });
    }
    None
}

/// Kafka's `convertTo` for aligning an element with the merged schema, limited to numbers and
/// `Date` values widened to `Timestamp`.
fn align(item: Option<SchemaAndValue>, target: &Schema) -> Value {
    let Some(sv) = item else {
        return Value::Null;
    };
    let source_kind = sv.schema.as_deref().and_then(Schema::logical);
    if let (Some(LogicalKind::Date), Some(LogicalKind::Timestamp), Value::Int32(days)) =
        (source_kind, target.logical(), &sv.value)
    {
        return Value::Int64(*days as i64 * MILLIS_PER_DAY);
    }
    let v = sv.value;
    if v.schema_type() == Some(target.schema_type) {
        return v;
    }
    match (target.schema_type, &v) {
        (SchemaType::Int16, _) => v.as_i64().map_or(v, |n| Value::Int16(n as i16)),
        (SchemaType::Int32, _) => v.as_i64().map_or(v, |n| Value::Int32(n as i32)),
        (SchemaType::Int64, _) => v.as_i64().map_or(v, Value::Int64),
        (SchemaType::Float32, Value::Float64(d)) => Value::Float32(*d as f32),
        (SchemaType::Float32, _) => v.as_i64().map_or(v, |n| Value::Float32(n as f32)),
        (SchemaType::Float64, _) => v.as_f64().map_or(v, Value::Float64),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Struct;

    fn parsed(text: &str) -> (Option<SchemaType>, Value) {
        let sv = parse_string(text);
        (sv.schema.map(|s| s.schema_type), sv.value)
    }

    fn string(text: &str) -> (Option<SchemaType>, Value) {
        (Some(SchemaType::String), Value::String(text.to_string()))
    }

    #[test]
    fn parses_scalars() {
        let typed = [
            ("true", SchemaType::Boolean, Value::Boolean(true)),
            ("  false  ", SchemaType::Boolean, Value::Boolean(false)),
            ("1", SchemaType::Int8, Value::Int8(1)),
            ("1.0", SchemaType::Int8, Value::Int8(1)),
            ("300.0", SchemaType::Int16, Value::Int16(300)),
            ("66000.0", SchemaType::Int32, Value::Int32(66000)),
            (
                "-5000000000",
                SchemaType::Int64,
                Value::Int64(-5_000_000_000),
            ),
            ("1.1", SchemaType::Float32, Value::Float32(1.1)),
            ("300.01", SchemaType::Float32, Value::Float32(300.01)),
            ("1e39", SchemaType::Float64, Value::Float64(1e39)),
            ("+5", SchemaType::Int8, Value::Int8(5)),
        ];
        for (text, schema_type, value) in typed {
            assert_eq!(parsed(text), (Some(schema_type), value), "{text:?}");
        }
        assert_eq!(parse_string("null"), SchemaAndValue::null());
        let strings = [
            "",
            "hello world",
            "true}",
            "false]",
            "null=",
            "123abc",
            "12:30",
            "   ",
            "\u{FFFF}",
        ];
        for text in strings {
            assert_eq!(parsed(text), string(text));
        }
    }

    #[test]
    fn parses_big_integers_as_decimal() {
        let sv = parse_string("123456789012345678901234567890");
        let schema = sv.schema.unwrap();
        assert_eq!(schema.logical(), Some(LogicalKind::Decimal(0)));
        match sv.value {
            Value::Bytes(b) => assert_eq!(
                logical::decimal_to_string(&b, 0),
                "123456789012345678901234567890"
            ),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn parses_temporals() {
        let sv = parse_string("2024-01-02");
        assert_eq!(sv.schema.unwrap().logical(), Some(LogicalKind::Date));
        assert_eq!(sv.value, Value::Int32(19724));
        let sv = parse_string("10:15:30.250Z");
        assert_eq!(sv.schema.unwrap().logical(), Some(LogicalKind::Time));
        assert_eq!(sv.value, Value::Int32(36_930_250));
        let sv = parse_string("2024-01-02T10:15:30.250Z");
        assert_eq!(sv.schema.unwrap().logical(), Some(LogicalKind::Timestamp));
        assert_eq!(sv.value, Value::Int64(1_704_190_530_250));
    }

    #[test]
    fn parses_arrays_and_maps() {
        let sv = parse_string("[true, false]");
        let schema = sv.schema.unwrap();
        assert_eq!(schema.schema_type, SchemaType::Array);
        assert_eq!(
            schema.value_schema.as_ref().unwrap().schema_type,
            SchemaType::Boolean
        );
        assert_eq!(
            sv.value,
            Value::Array(vec![Value::Boolean(true), Value::Boolean(false)])
        );

        let sv = parse_string("[1, 2.5, 300]");
        assert_eq!(
            sv.schema
                .unwrap()
                .value_schema
                .as_ref()
                .unwrap()
                .schema_type,
            SchemaType::Float32
        );
        assert_eq!(
            sv.value,
            Value::Array(vec![
                Value::Float32(1.0),
                Value::Float32(2.5),
                Value::Float32(300.0)
            ])
        );

        let sv = parse_string("{\"a\": 1, \"b\": 1000}");
        let schema = sv.schema.unwrap();
        assert_eq!(
            schema.key_schema.as_ref().unwrap().schema_type,
            SchemaType::String
        );
        assert_eq!(
            schema.value_schema.as_ref().unwrap().schema_type,
            SchemaType::Int16
        );
        assert_eq!(
            sv.value,
            Value::Map(vec![
                (Value::from("a"), Value::Int16(1)),
                (Value::from("b"), Value::Int16(1000))
            ])
        );

        let sv = parse_string("{3: null}");
        let schema = sv.schema.unwrap();
        assert_eq!(
            schema.key_schema.as_ref().unwrap().schema_type,
            SchemaType::Int8
        );
        assert!(schema.value_schema.is_none());
        assert_eq!(sv.value, Value::Map(vec![(Value::Int8(3), Value::Null)]));

        assert_eq!(
            parsed("[null]"),
            (Some(SchemaType::Array), Value::Array(vec![Value::Null]))
        );
        assert_eq!(
            parsed("[]"),
            (Some(SchemaType::Array), Value::Array(vec![]))
        );
        assert_eq!(parsed("{}"), (Some(SchemaType::Map), Value::Map(vec![])));
        assert_eq!(
            parsed("[[]]"),
            (
                Some(SchemaType::Array),
                Value::Array(vec![Value::Array(vec![])])
            )
        );
    }

    #[test]
    fn malformed_collections_stay_strings() {
        for text in [
            "{foo: 3}",
            "{3: foo}",
            "[foo]",
            "{6:9 4:20}",
            "[0 1 2]",
            "{null: 3}",
            "[1,",
            "[1,,2]",
        ] {
            assert_eq!(parsed(text), string(text), "{text}");
        }
    }

    #[test]
    fn converts_to_string() {
        assert_eq!(convert_to_string(None, &Value::Null), None);
        assert_eq!(
            convert_to_string(None, &Value::from("plain")).unwrap(),
            "plain"
        );
        assert_eq!(
            convert_to_string(None, &Value::Float64(1e10)).unwrap(),
            "1.0E10"
        );
        assert_eq!(
            convert_to_string(
                None,
                &Value::Array(vec![Value::from("a\"b"), Value::Int32(1), Value::Null])
            )
            .unwrap(),
            "[\"a\\\"b\",1,null]"
        );
        assert_eq!(
            convert_to_string(
                None,
                &Value::Map(vec![(Value::from("k"), Value::Boolean(true))])
            )
            .unwrap(),
            "{\"k\":true}"
        );
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::int32())
            .field("b", Schema::optional_string())
            .build();
        let s = Struct::new(schema.clone()).with("a", 5).unwrap();
        assert_eq!(
            convert_to_string(Some(&schema), &Value::Struct(s)).unwrap(),
            "{\"a\":5,\"b\":null}"
        );
        let dec = logical::decimal(2).build();
        let v = Value::Bytes(logical::decimal_from_str("1.25", 2).unwrap());
        assert_eq!(convert_to_string(Some(&dec), &v).unwrap(), "1.25");
        let ts = logical::timestamp().build();
        assert_eq!(
            convert_to_string(Some(&ts), &Value::Int64(1_704_190_530_250)).unwrap(),
            "2024-01-02T10:15:30.250Z"
        );
        assert_eq!(escape("three\"blind\\\"mice"), "three\\\"blind\\\\\\\"mice");
    }

    #[test]
    fn round_trips_through_text() {
        let schema = SchemaBuilder::map(Schema::string(), Schema::int32()).build();
        let v = Value::Map(vec![(Value::from("x"), Value::Int32(70000))]);
        let text = convert_to_string(Some(&schema), &v).unwrap();
        let back = parse_string(&text);
        assert_eq!(back.value, v);
    }
}
