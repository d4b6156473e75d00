//! The JSON text: a tree that keeps what Kafka's output depends on, and its reader and writer.

use crate::data::DataError;
use crate::data::{double_to_string, float_to_string};
use std::collections::HashMap;

/// A JSON tree that keeps what Kafka's output depends on: 32- vs 64-bit floats when writing and
/// each number's exact text when reading.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    /// No content at all (empty input, absent field): Jackson's `MissingNode`.
    Missing,
    Null,
    Bool(bool),
    Int(i64),
    /// Written with `Float.toString` digits.
    Float(f32),
    /// Written with `Double.toString` digits.
    Double(f64),
    /// A number kept as its exact text (as read, or a `NUMERIC` decimal to write).
    Number(String),
    Str(String),
    Array(Vec<Json>),
    /// Insertion-ordered; a repeated key replaces the earlier value in place.
    Object(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Jackson's `getNodeType()` name, as used in Kafka's messages.
    pub(crate) fn node_type(&self) -> &'static str {
        match self {
            Json::Missing => "MISSING",
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) | Json::Float(_) | Json::Double(_) | Json::Number(_) => "NUMBER",
            Json::Str(_) => "STRING",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// Jackson's `asText()`, used for map keys.
    pub(crate) fn as_text(&self) -> String {
        match self {
            Json::Str(s) => s.clone(),
            Json::Null => "null".into(),
            Json::Missing | Json::Array(_) | Json::Object(_) => String::new(),
            other => {
                let mut out = String::new();
                write_json(&mut out, other);
                out
            }
        }
    }

    /// Java's `longValue()` of a number node: integers wrap, fractions truncate.
    pub(crate) fn as_i64_wrapping(&self) -> Option<i64> {
        match self {
            Json::Int(i) => Some(*i),
            Json::Float(f) => Some(*f as i64),
            Json::Double(d) => Some(*d as i64),
            Json::Number(n) => Some(lexeme_to_i64_wrapping(n)),
            _ => None,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Int(i) => Some(*i as f64),
            Json::Float(f) => Some(*f as f64),
            Json::Double(d) => Some(*d),
            Json::Number(n) => n.parse().ok(),
            Json::Str(s) => non_finite(s),
            _ => None,
        }
    }

    pub(crate) fn as_f32(&self) -> Option<f32> {
        match self {
            Json::Int(i) => Some(*i as f32),
            Json::Float(f) => Some(*f),
            Json::Double(d) => Some(*d as f32),
            Json::Number(n) => n.parse().ok(),
            Json::Str(s) => non_finite(s).map(|d| d as f32),
            _ => None,
        }
    }
}

/// The strings Jackson writes for non-finite floats, read back.
fn non_finite(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Builds an object in insertion order where a repeated key replaces the earlier value in place,
/// as Jackson's `ObjectNode.set` does, without a quadratic scan on large objects.
#[derive(Default)]
pub(crate) struct ObjectBuilder {
    entries: Vec<(String, Json)>,
    index: HashMap<String, usize>,
}

impl ObjectBuilder {
    pub(crate) fn set(&mut self, key: String, value: Json) {
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    pub(crate) fn finish(self) -> Json {
        Json::Object(self.entries)
    }
}

pub(crate) fn object_set(entries: &mut Vec<(String, Json)>, key: &str, value: Json) {
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => entries.push((key.to_string(), value)),
    }
}

pub(crate) fn is_integral_lexeme(n: &str) -> bool {
    !n.contains(['.', 'e', 'E'])
}

pub(crate) fn lexeme_to_i64_wrapping(n: &str) -> i64 {
    if is_integral_lexeme(n) {
        if let Ok(v) = n.parse::<i64>() {
            return v;
        }
        if let Ok(v) = n.parse::<i128>() {
            return v as i64;
        }
    }
    n.parse::<f64>().map(|d| d as i64).unwrap_or(0)
}

/// Writes compact JSON as Jackson does: no spaces, `"` `\` and control characters escaped
/// (`\n`-style where JSON has a short form, `\u00XX` upper-case otherwise), other text raw.
pub(crate) fn write_json(out: &mut String, node: &Json) {
    match node {
        Json::Missing => {}
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::Float(f) if f.is_finite() => out.push_str(&float_to_string(*f)),
        Json::Double(d) if d.is_finite() => out.push_str(&double_to_string(*d)),
        Json::Float(f) => write_string(out, &float_to_string(*f)),
        Json::Double(d) => write_string(out, &double_to_string(*d)),
        Json::Number(n) => out.push_str(n),
        Json::Str(s) => write_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Json::Object(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_json(out, v);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    // Runs of characters that need no escape are copied whole. Only ASCII bytes are escaped, so every
    // cut falls on a character boundary.
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        let escaped = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0C => "\\f",
            b if b < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[run..i]);
        if escaped.is_empty() {
            out.push_str(&format!("\\u{:04X}", b));
        } else {
            out.push_str(escaped);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Jackson's nesting limit; deeper input is rejected rather than overflowing the stack.
const MAX_DEPTH: usize = 1000;

/// Parses one JSON value (RFC 8259, plus leading zeros in numbers as Kafka's deserializer allows).
/// Empty or blank input is `Json::Missing`, as Jackson's `readTree` returns.
pub(crate) fn parse_json(bytes: &[u8]) -> Result<Json, DataError> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| format!("Invalid UTF-8 in JSON input: {e}"))?;
    let mut r = Reader {
        s: text.as_bytes(),
        pos: 0,
        text,
    };
    r.skip_ws();
    if r.pos == r.s.len() {
        return Ok(Json::Missing);
    }
    let v = r.value(0)?;
    r.skip_ws();
    if r.pos != r.s.len() {
        return Err(r.error("unexpected content after the JSON value").into());
    }
    Ok(v)
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
    text: &'a str,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("{what} at offset {}", self.pos)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn expect_literal(&mut self, lit: &str, v: Json) -> Result<Json, DataError> {
        if self.s[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            Ok(v)
        } else {
            Err(self.error("unrecognized token").into())
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, DataError> {
        if depth > MAX_DEPTH {
            return Err(self.error("JSON nesting too deep").into());
        }
        self.skip_ws();
        match self.peek() {
            None => Err(self.error("unexpected end of input").into()),
            Some(b'{') => {
                let mut entries = ObjectBuilder::default();
                self.sequence(b'}', |r| {
                    r.skip_ws();
                    if r.peek() != Some(b'"') {
                        return Err(r.error("expected a field name").into());
                    }
                    let key = r.string()?;
                    r.skip_ws();
                    if r.peek() != Some(b':') {
                        return Err(r.error("expected ':'").into());
                    }
                    r.pos += 1;
                    let v = r.value(depth + 1)?;
                    entries.set(key, v);
                    Ok(())
                })?;
                Ok(entries.finish())
            }
            Some(b'[') => {
                let mut items = Vec::new();
                self.sequence(b']', |r| {
                    items.push(r.value(depth + 1)?);
                    Ok(())
                })?;
                Ok(Json::Array(items))
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.expect_literal("true", Json::Bool(true)),
            Some(b'f') => self.expect_literal("false", Json::Bool(false)),
            Some(b'n') => self.expect_literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character").into()),
        }
    }

    /// The items of an object or array whose opening bracket is next, separated by commas up to
    /// `close`; `item` reads one.
    fn sequence(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), DataError>,
    ) -> Result<(), DataError> {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    return Err(self
                        .error(&format!("expected ',' or '{}'", char::from(close)))
                        .into())
                }
            }
        }
    }

    fn number(&mut self) -> Result<Json, DataError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |r: &mut Self| {
            let s = r.pos;
            while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                r.pos += 1;
            }
            r.pos - s
        };
        if digits(self) == 0 {
            return Err(self.error("invalid number").into());
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error("invalid number").into());
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("invalid number").into());
            }
        }
        Ok(Json::Number(self.text[start..self.pos].to_string()))
    }

    fn hex4(&mut self) -> Result<u32, DataError> {
        let h = self
            .s
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("bad \\u escape"))?;
        let h = std::str::from_utf8(h).map_err(|_| self.error("bad \\u escape"))?;
        let v = u32::from_str_radix(h, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, DataError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c != b'"' && c != b'\\' && c >= 0x20)
            {
                self.pos += 1;
            }
            out.push_str(&self.text[start..self.pos]);
            match self.peek() {
                None => return Err(self.error("unterminated string").into()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated string"))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{08}'),
                        b'f' => out.push('\u{0C}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi)
                                && self.s[self.pos..].starts_with(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                } else {
                                    self.pos = save;
                                    None
                                }
                            } else {
                                char::from_u32(hi)
                            };
                            out.push(c.unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(self.error("unrecognized character escape").into()),
                    }
                }
                Some(_) => {
                    return Err(self
                        .error("illegal unquoted control character in string")
                        .into())
                }
            }
        }
    }
}
