//! Java's `java.util.regex.Pattern` semantics over `fancy-regex`: whole-input matching, `\\Q...\\E`
//! quoting and Java's replacement syntax.
use crate::config::ConfigError;
use crate::data::DataError;

/// A compiled Java regular expression (`java.util.regex.Pattern`), with `matches()` (whole
/// input) and `replaceFirst` semantics.
#[derive(Clone, Debug)]
pub struct JavaRegex {
    find: fancy_regex::Regex,
    whole: fancy_regex::Regex,
}

impl JavaRegex {
    /// Compiles a Java pattern. `\Q...\E` quoting is translated; the rest is passed on.
    ///
    /// # Errors
    /// The compiler's description of the syntax error.
    pub fn new(pattern: &str) -> Result<JavaRegex, ConfigError> {
        let translated = translate_java_quotes(pattern);
        let find = fancy_regex::Regex::new(&translated).map_err(|e| e.to_string())?;
        let whole =
            fancy_regex::Regex::new(&format!("^(?:{translated})\\z")).map_err(|e| e.to_string())?;
        Ok(JavaRegex { find, whole })
    }

    /// Java's `matcher(text).matches()`: the whole text matches. A match that exceeds the
    /// engine's backtracking limit counts as no match.
    pub fn matches(&self, text: &str) -> bool {
        self.whole.is_match(text).unwrap_or(false)
    }

    /// Java's `matcher(text).replaceFirst(replacement)` with Java's replacement syntax (`$1`,
    /// `${name}`, `\` escapes).
    ///
    /// # Errors
    /// Java's messages for a bad replacement (`Illegal group reference`, `No group 3`, ...).
    pub fn replace_first(&self, text: &str, replacement: &str) -> Result<String, DataError> {
        let caps = match self.find.captures(text) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(text.to_string()),
            Err(e) => return Err(e.to_string().into()),
        };
        let Some(whole) = caps.get(0) else {
            return Ok(text.to_string());
        };
        let mut out = String::with_capacity(text.len() + replacement.len());
        out.push_str(&text[..whole.start()]);
        expand_java_replacement(&mut out, replacement, &caps, &self.find)?;
        out.push_str(&text[whole.end()..]);
        Ok(out)
    }
}

/// Turns Java's `\Q...\E` literal sections into escaped text, which the engine does not know.
fn translate_java_quotes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(start) = rest.find("\\Q") {
        // a `\\Q` is an escaped backslash followed by Q, not a quote start
        let backslashes = rest[..start]
            .chars()
            .rev()
            .take_while(|c| *c == '\\')
            .count();
        if backslashes % 2 == 1 {
            out.push_str(&rest[..start + 2]);
            rest = &rest[start + 2..];
            continue;
        }
        out.push_str(&rest[..start]);
        let quoted = &rest[start + 2..];
        let (literal, after) = match quoted.find("\\E") {
            Some(end) => (&quoted[..end], &quoted[end + 2..]),
            None => (quoted, ""),
        };
        out.push_str(&fancy_regex::escape(literal));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Java's `Matcher.appendReplacement` expansion.
fn expand_java_replacement(
    out: &mut String,
    replacement: &str,
    caps: &fancy_regex::Captures<'_, str>,
    re: &fancy_regex::Regex,
) -> Result<(), DataError> {
    let chars: Vec<char> = replacement.chars().collect();
    let group_count = caps.len() - 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            i += 1;
            let Some(next) = chars.get(i) else {
                return Err("character to be escaped is missing".to_string().into());
            };
            out.push(*next);
            i += 1;
        } else if c == '$' {
            i += 1;
            let Some(next) = chars.get(i) else {
                return Err("Illegal group reference: group index is missing"
                    .to_string()
                    .into());
            };
            if *next == '{' {
                i += 1;
                let start = i;
                while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if name.is_empty() {
                    return Err("named capturing group has 0 length name".to_string().into());
                }
                if chars.get(i) != Some(&'}') {
                    return Err("named capturing group is missing trailing '}'"
                        .to_string()
                        .into());
                }
                i += 1;
                if !re.capture_names().any(|n| n == Some(name.as_str())) {
                    return Err(format!("No group with name {{{name}}}").into());
                }
                if let Some(m) = caps.name(&name) {
                    out.push_str(m.as_str());
                }
            } else {
                let Some(first) = next.to_digit(10) else {
                    return Err("Illegal group reference".to_string().into());
                };
                let mut group = first as usize;
                i += 1;
                // Java takes more digits only while the number stays a valid group
                while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
                    let bigger = group * 10 + d as usize;
                    if bigger > group_count {
                        break;
                    }
                    group = bigger;
                    i += 1;
                }
                if group > group_count {
                    return Err(format!("No group {group}").into());
                }
                if let Some(m) = caps.get(group) {
                    out.push_str(m.as_str());
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_regex_matches_whole_and_replaces_first() {
        let re = JavaRegex::new("(.*)-(.*)").unwrap();
        assert!(re.matches("a-b"));
        assert!(!JavaRegex::new("a").unwrap().matches("ab"));
        assert_eq!(re.replace_first("foo-bar", "$2").unwrap(), "bar");
        assert_eq!(re.replace_first("foo-bar", "\\$2$1").unwrap(), "$2foo");
        assert_eq!(re.replace_first("foo-bar", "$3").unwrap_err(), "No group 3");
        assert_eq!(re.replace_first("foo-bar", "$21").unwrap(), "bar1");
        assert_eq!(
            re.replace_first("foo-bar", "x$").unwrap_err(),
            "Illegal group reference: group index is missing"
        );
        let named = JavaRegex::new("(?<t>[a-z]+)_\\d+").unwrap();
        assert_eq!(named.replace_first("orders_12", "${t}").unwrap(), "orders");
        let look = JavaRegex::new("^(?!__).*").unwrap();
        assert!(look.matches("topic") && !look.matches("__internal"));
        let quoted = JavaRegex::new("\\Qa.b\\E.*").unwrap();
        assert!(quoted.matches("a.bc") && !quoted.matches("axbc"));
    }
}
