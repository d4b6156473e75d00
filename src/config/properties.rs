//! Java `.properties` text, read the way `java.util.Properties.load(Reader)` reads it.
//!
//! Worker configs and connector files given on the command line are written for Kafka Connect,
//! which loads them with `Properties.load`; reading them with any simpler rule (split on the
//! first `=`, say) would misread files that work with Kafka: `key value` and `key:value` lines,
//! `!` comments, values continued over several lines, `\uXXXX` escapes and escaped separators
//! inside keys. So this module follows the JDK's `LineReader` and `loadConvert` step by step.

use std::fmt;

/// A `.properties` text that `Properties.load` would reject: the only such case is a malformed
/// `\uXXXX` escape. Positions are 1-based and counted in characters, pointing at the backslash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertiesError {
    /// Physical line (1-based) of the escape's backslash.
    pub line: usize,
    /// Column (1-based, in characters) of the escape's backslash.
    pub column: usize,
    /// What is wrong, in the JDK's words.
    pub message: String,
}

impl fmt::Display for PropertiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for PropertiesError {}

/// One character of a logical line together with where it stood in the text, so that an
/// error in a line continued over several physical lines still points at the right place.
#[derive(Clone, Copy)]
struct Located {
    ch: char,
    line: usize,
    column: usize,
}

/// Parses `.properties` text into `(key, value)` pairs in the order they appear.
///
/// The rules are those of `java.util.Properties.load(Reader)`:
/// * a line whose first non-blank character is `#` or `!` is a comment; blank lines are skipped;
/// * leading spaces, tabs and form feeds of every line are dropped;
/// * a line ending in an odd number of backslashes continues on the next line, whose leading
///   whitespace is dropped (a comment line is never continued);
/// * the key ends at the first unescaped `=`, `:` or whitespace; whitespace around the
///   separator is skipped, and so is one `=` or `:` after whitespace (`key = value`);
/// * in keys and values `\t`, `\n`, `\r`, `\f` and `\uXXXX` are escapes, and a backslash before
///   any other character yields that character (`\=`, `\:`, `\ `, `\\`, `\#`).
///
/// Duplicate keys are all returned, in order; a caller that collects the pairs into a map gets
/// `Properties` semantics (the later value wins) for free.
///
/// # Errors
/// A `\u` not followed by four hexadecimal digits yields a [`PropertiesError`] pointing at the
/// backslash, with the JDK's message `Malformed \uxxxx encoding.`.
pub fn parse_properties(text: &str) -> Result<Vec<(String, String)>, PropertiesError> {
    let mut reader = LineReader::new(text);
    let mut pairs = Vec::new();
    while let Some(line) = reader.next_line() {
        let (key_end, value_start) = split_key_value(&line);
        let key = unescape(&line[..key_end])?;
        let value = unescape(&line[value_start..])?;
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// Splits a logical line into natural lines the way the JDK's `LineReader` does: comments and
/// blank lines vanish, continuations are joined, and escapes are left for [`unescape`].
struct LineReader {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    column: usize,
}

impl LineReader {
    fn new(text: &str) -> Self {
        LineReader {
            chars: text.chars().collect(),
            pos: 0,
            line: 1,
            column: 1,
        }
    }

    /// Takes the next character with its position, keeping line and column counts; `\r\n`
    /// counts as one line break.
    fn bump(&mut self) -> Option<Located> {
        let ch = *self.chars.get(self.pos)?;
        let here = Located {
            ch,
            line: self.line,
            column: self.column,
        };
        self.pos += 1;
        let crlf = ch == '\r' && self.chars.get(self.pos) == Some(&'\n');
        if ch == '\n' || (ch == '\r' && !crlf) {
            self.line += 1;
            self.column = 1;
        } else if !crlf {
            self.column += 1;
        }
        Some(here)
    }

    fn next_line(&mut self) -> Option<Vec<Located>> {
        let mut buf: Vec<Located> = Vec::new();
        let mut skip_white_space = true;
        let mut appended_line_begin = false;
        let mut is_new_line = true;
        let mut is_comment_line = false;
        let mut preceding_backslash = false;
        let mut skip_lf = false;
        loop {
            let Some(c) = self.bump() else {
                // End of input: a pending comment or an empty buffer is no line at all, and a
                // dangling continuation backslash is dropped, as the JDK does.
                if buf.is_empty() || is_comment_line {
                    return None;
                }
                if preceding_backslash {
                    buf.pop();
                }
                return Some(buf);
            };
            if skip_lf {
                skip_lf = false;
                if c.ch == '\n' {
                    continue;
                }
            }
            if skip_white_space {
                if matches!(c.ch, ' ' | '\t' | '\u{c}') {
                    continue;
                }
                if !appended_line_begin && matches!(c.ch, '\r' | '\n') {
                    continue;
                }
                skip_white_space = false;
                appended_line_begin = false;
            }
            if is_new_line {
                is_new_line = false;
                if c.ch == '#' || c.ch == '!' {
                    is_comment_line = true;
                    continue;
                }
            }
            if c.ch != '\n' && c.ch != '\r' {
                if is_comment_line {
                    continue;
                }
                buf.push(c);
                preceding_backslash = c.ch == '\\' && !preceding_backslash;
                continue;
            }
            // A line break.
            if is_comment_line || buf.is_empty() {
                is_comment_line = false;
                is_new_line = true;
                skip_white_space = true;
                preceding_backslash = false;
                buf.clear();
                continue;
            }
            if preceding_backslash {
                // Continuation: drop the backslash and the next line's leading whitespace.
                buf.pop();
                skip_white_space = true;
                appended_line_begin = true;
                preceding_backslash = false;
                if c.ch == '\r' {
                    skip_lf = true;
                }
            } else {
                return Some(buf);
            }
        }
    }
}

/// Finds where the key ends and where the value starts in a logical line (the JDK's `load0`).
fn split_key_value(line: &[Located]) -> (usize, usize) {
    let limit = line.len();
    let mut key_len = 0;
    let mut value_start = limit;
    let mut has_sep = false;
    let mut preceding_backslash = false;
    while key_len < limit {
        let c = line[key_len].ch;
        if (c == '=' || c == ':') && !preceding_backslash {
            value_start = key_len + 1;
            has_sep = true;
            break;
        } else if matches!(c, ' ' | '\t' | '\u{c}') && !preceding_backslash {
            value_start = key_len + 1;
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
        key_len += 1;
    }
    while value_start < limit {
        let c = line[value_start].ch;
        if !matches!(c, ' ' | '\t' | '\u{c}') {
            if !has_sep && (c == '=' || c == ':') {
                has_sep = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (key_len, value_start)
}

/// Resolves escapes (the JDK's `loadConvert`). `\uXXXX` yields a UTF-16 code unit, so a
/// surrogate pair written as two escapes becomes one character; a lone surrogate becomes
/// U+FFFD, the nearest a Rust string can hold.
fn unescape(chars: &[Located]) -> Result<String, PropertiesError> {
    let mut units: Vec<u16> = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c.ch != '\\' {
            let mut buf = [0u16; 2];
            units.extend_from_slice(c.ch.encode_utf16(&mut buf));
            continue;
        }
        let Some(next) = chars.get(i) else {
            // Cannot happen for text that went through LineReader (an odd trailing backslash
            // is a continuation); a lone backslash stands for nothing.
            break;
        };
        i += 1;
        let translated = match next.ch {
            'u' => {
                let malformed = || PropertiesError {
                    line: c.line,
                    column: c.column,
                    message: "Malformed \\uxxxx encoding.".to_owned(),
                };
                if chars.len() < i + 4 {
                    return Err(malformed());
                }
                let mut value: u32 = 0;
                for d in &chars[i..i + 4] {
                    let digit = d.ch.to_digit(16).ok_or_else(malformed)?;
                    value = (value << 4) | digit;
                }
                i += 4;
                units.push(value as u16);
                continue;
            }
            't' => '\t',
            'r' => '\r',
            'n' => '\n',
            'f' => '\u{c}',
            other => other,
        };
        let mut buf = [0u16; 2];
        units.extend_from_slice(translated.encode_utf16(&mut buf));
    }
    Ok(String::from_utf16_lossy(&units))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, String)> {
        parse_properties(text).expect("valid properties")
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn separators_equals_colon_and_whitespace() {
        let text = "a=1\nb:2\nc 3\nd\t4\ne = 5\nf : 6\ng   =   7\nh  : :8\ni==9\n";
        assert_eq!(
            parse(text),
            pairs(&[
                ("a", "1"),
                ("b", "2"),
                ("c", "3"),
                ("d", "4"),
                ("e", "5"),
                ("f", "6"),
                ("g", "7"),
                ("h", ":8"),
                ("i", "=9"),
            ])
        );
    }

    #[test]
    fn key_without_value() {
        assert_eq!(
            parse("alone\nempty=\nspaced   \n"),
            pairs(&[("alone", ""), ("empty", ""), ("spaced", "")])
        );
    }

    #[test]
    fn comments_blank_lines_and_leading_whitespace() {
        let text = "# comment\n! also comment\n\n   \n   key = value\n\t\u{c}other=x\n  # indented comment\n";
        assert_eq!(parse(text), pairs(&[("key", "value"), ("other", "x")]));
    }

    #[test]
    fn hash_inside_value_is_kept_and_trailing_whitespace_kept() {
        assert_eq!(
            parse("k=v # not a comment  \n"),
            pairs(&[("k", "v # not a comment  ")])
        );
    }

    #[test]
    fn line_continuation_drops_leading_whitespace_of_next_line() {
        let text = "fruits = apple, banana, \\\n         pear, \\\n    cantaloupe\nnext=1";
        assert_eq!(
            parse(text),
            pairs(&[("fruits", "apple, banana, pear, cantaloupe"), ("next", "1")])
        );
    }

    #[test]
    fn even_backslashes_do_not_continue() {
        assert_eq!(parse("a=x\\\\\nb=y"), pairs(&[("a", "x\\"), ("b", "y")]));
        assert_eq!(parse("a=x\\\\\\\n  y"), pairs(&[("a", "x\\y")]));
    }

    #[test]
    fn continuation_with_crlf_and_cr() {
        assert_eq!(
            parse("a=1\\\r\n  2\r\nb=3\rc=4"),
            pairs(&[("a", "12"), ("b", "3"), ("c", "4")])
        );
    }

    #[test]
    fn continued_line_starting_with_hash_is_not_a_comment() {
        assert_eq!(parse("a=1\\\n  #2"), pairs(&[("a", "1#2")]));
    }

    #[test]
    fn comment_line_is_never_continued() {
        assert_eq!(parse("# comment \\\nk=v"), pairs(&[("k", "v")]));
    }

    #[test]
    fn continuation_at_end_of_input_drops_backslash() {
        assert_eq!(parse("k=v\\"), pairs(&[("k", "v")]));
    }

    #[test]
    fn continuation_followed_by_empty_line_ends_value() {
        assert_eq!(parse("k=v\\\n\nz=1"), pairs(&[("k", "v"), ("z", "1")]));
    }

    #[test]
    fn escapes_in_values() {
        assert_eq!(
            parse("k=a\\tb\\nc\\rd\\fe\\\\f\\qg\\u0041\\u00e9"),
            pairs(&[("k", "a\tb\nc\rd\u{c}e\\fqgAé")])
        );
    }

    #[test]
    fn surrogate_pair_escapes_make_one_character() {
        assert_eq!(parse("k=\\uD83D\\uDE00"), pairs(&[("k", "😀")]));
    }

    #[test]
    fn escaped_separators_in_keys() {
        assert_eq!(
            parse("a\\=b=c\nx\\:y:z\nsp\\ ace value\n\\#notcomment=1\n"),
            pairs(&[
                ("a=b", "c"),
                ("x:y", "z"),
                ("sp ace", "value"),
                ("#notcomment", "1")
            ])
        );
    }

    #[test]
    fn duplicates_are_kept_in_order() {
        assert_eq!(parse("k=1\nk=2"), pairs(&[("k", "1"), ("k", "2")]));
    }

    #[test]
    fn unicode_text_passes_through() {
        assert_eq!(parse("clé=välue ✓"), pairs(&[("clé", "välue ✓")]));
    }

    #[test]
    fn malformed_unicode_escape_reports_position() {
        let err = parse_properties("ok=1\n  key=ab\\u12G4").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.column, 9);
        assert_eq!(err.message, "Malformed \\uxxxx encoding.");
        assert_eq!(
            err.to_string(),
            "line 2, column 9: Malformed \\uxxxx encoding."
        );
    }

    #[test]
    fn short_unicode_escape_is_an_error() {
        let err = parse_properties("k=\\u12").unwrap_err();
        assert_eq!((err.line, err.column), (1, 3));
        let err = parse_properties("\\uZZZZ=1").unwrap_err();
        assert_eq!((err.line, err.column), (1, 1));
    }

    #[test]
    fn error_position_on_continued_line() {
        let err = parse_properties("k=abc\\\n   \\u00").unwrap_err();
        assert_eq!((err.line, err.column), (2, 4));
    }

    #[test]
    fn empty_text() {
        assert!(parse("").is_empty());
        assert!(parse("\n\n# only comments\n").is_empty());
    }
}
