//! CORS (`access.control.allow.origin`, `access.control.allow.methods`) and `response.http.headers.config`,
//! with the rules of the Jetty filters Kafka Connect's REST server uses for them.

use std::time::{Duration, SystemTime};

use regex::Regex;
use warp::http::header::{HeaderMap, HeaderName, HeaderValue};

use super::SecurityError;

/// Request headers a cross-origin request may send. Jetty's default list, plus `Authorization` so that
/// browsers can send basic credentials.
const ALLOWED_HEADERS: &[&str] = &[
    "X-Requested-With",
    "Content-Type",
    "Accept",
    "Origin",
    "Authorization",
];

/// How long a browser may cache a preflight answer, in seconds (Jetty's default).
const PREFLIGHT_MAX_AGE: &str = "1800";

/// Cross-origin resource sharing as configured.
#[derive(Debug, Clone)]
pub struct Cors {
    any_origin: bool,
    origins: Vec<Regex>,
    methods: Vec<String>,
}

impl Cors {
    /// From `access.control.allow.origin` (`*`, or a comma-separated list where `*` matches any text) and
    /// `access.control.allow.methods` (Jetty's default `GET,POST,HEAD` when empty).
    ///
    /// # Errors
    /// An origin pattern that does not compile.
    pub fn new(origins: &str, methods: Option<&str>) -> Result<Cors, SecurityError> {
        let mut any_origin = false;
        let mut patterns = Vec::new();
        for o in origins.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            if o == "*" {
                any_origin = true;
                continue;
            }
            let re = format!("^{}$", regex::escape(o).replace(r"\*", ".*"));
            patterns.push(Regex::new(&re).map_err(|e| {
                crate::config::ConfigError::invalid("access.control.allow.origin", o, e)
            })?);
        }
        let methods = methods
            .map(|m| {
                m.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| vec!["GET".into(), "POST".into(), "HEAD".into()]);
        Ok(Cors {
            any_origin,
            origins: patterns,
            methods,
        })
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        // The Origin header may list several origins separated by spaces.
        origin
            .split(' ')
            .filter(|o| !o.is_empty())
            .any(|o| self.any_origin || self.origins.iter().any(|p| p.is_match(o)))
    }

    /// Whether the request is a CORS preflight this config answers (OPTIONS with an allowed `Origin` and an
    /// `Access-Control-Request-Method`).
    pub fn is_preflight(&self, method: &str, headers: &HeaderMap) -> bool {
        method == "OPTIONS"
            && headers.contains_key("access-control-request-method")
            && header_str(headers, "origin").is_some()
    }

    /// The headers of a preflight answer: none when the origin, method or a requested header is not allowed.
    pub fn preflight_headers(&self, headers: &HeaderMap) -> Vec<(&'static str, String)> {
        let Some(origin) = header_str(headers, "origin").filter(|o| self.origin_allowed(o)) else {
            return Vec::new();
        };
        let method = header_str(headers, "access-control-request-method").unwrap_or_default();
        if !self
            .methods
            .iter()
            .any(|m| m.eq_ignore_ascii_case(method.trim()))
        {
            return Vec::new();
        }
        let requested = header_str(headers, "access-control-request-headers").unwrap_or_default();
        let all_allowed = requested
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .all(|h| ALLOWED_HEADERS.iter().any(|a| a.eq_ignore_ascii_case(h)));
        if !all_allowed {
            return Vec::new();
        }
        let mut out = self.origin_headers(origin);
        out.push(("Access-Control-Max-Age", PREFLIGHT_MAX_AGE.to_string()));
        out.push(("Access-Control-Allow-Methods", self.methods.join(",")));
        out.push(("Access-Control-Allow-Headers", ALLOWED_HEADERS.join(",")));
        out
    }

    /// The headers added to an actual (non-preflight) response: none without an allowed `Origin`.
    pub fn response_headers(&self, headers: &HeaderMap) -> Vec<(&'static str, String)> {
        match header_str(headers, "origin").filter(|o| self.origin_allowed(o)) {
            Some(origin) => self.origin_headers(origin),
            None => Vec::new(),
        }
    }

    fn origin_headers(&self, origin: &str) -> Vec<(&'static str, String)> {
        let mut out = vec![("Access-Control-Allow-Origin", origin.to_string())];
        if !self.any_origin {
            out.push(("Vary", "Origin".to_string()));
        }
        out.push(("Access-Control-Allow-Credentials", "true".to_string()));
        out
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// What a `response.http.headers.config` rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderAction {
    /// Replaces the header.
    Set,
    /// Adds a value to the header.
    Add,
    /// Replaces the header with the date that many milliseconds from now.
    SetDate,
    /// Adds the date that many milliseconds from now.
    AddDate,
}

/// One `response.http.headers.config` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderRule {
    /// The action.
    pub action: HeaderAction,
    /// The header name.
    pub name: HeaderName,
    /// The value (milliseconds from now for the date actions).
    pub value: String,
    /// For the date actions, the offset in milliseconds.
    pub offset_ms: i64,
}

/// Splits a comma-separated list the way Jetty's `StringUtil.csvSplit` does: items are trimmed, and an
/// item in double quotes may hold commas (`\` escapes the next character inside quotes).
pub fn csv_split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut item = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => {
                        if let Some(n) = chars.next() {
                            item.push(n);
                        }
                    }
                    c => item.push(c),
                }
            }
            // Skip to the next comma.
            for c in chars.by_ref() {
                if c == ',' {
                    break;
                }
            }
        } else {
            for c in chars.by_ref() {
                if c == ',' {
                    break;
                }
                item.push(c);
            }
            item = item.trim_end().to_string();
        }
        if !item.is_empty() {
            out.push(item);
        }
    }
    out
}

/// Parses `response.http.headers.config`: comma-separated `[action] [header name]:[header value]` rules,
/// the action one of `set`, `add`, `setDate`, `addDate`.
///
/// # Errors
/// Kafka's messages for a rule without an action, an unknown action, or a bad name/value pair.
pub fn parse_header_rules(config: &str) -> Result<Vec<HeaderRule>, SecurityError> {
    let key = crate::config::keys::RESPONSE_HTTP_HEADERS_CONFIG;
    let mut rules = Vec::new();
    for rule in csv_split(config) {
        let invalid = |why: String| crate::config::ConfigError::invalid(key, config, why);
        let Some((action, header)) = rule.trim().split_once(char::is_whitespace) else {
            return Err(invalid(format!(
                "Invalid format of header config '{rule}'. Expected: '[action] [header name]:[header value]'"
            )).into());
        };
        let action = match action.trim() {
            "set" => HeaderAction::Set,
            "add" => HeaderAction::Add,
            "setDate" => HeaderAction::SetDate,
            "addDate" => HeaderAction::AddDate,
            other => {
                return Err(invalid(format!(
                    "Invalid header config action: '{other}'. Expected one of [set, add, setDate, addDate]"
                )).into())
            }
        };
        let Some((name, value)) = header.trim().split_once(':') else {
            return Err(invalid(format!(
                "Invalid format of header name and header value pair '{header}'. Expected: '[header name]:[header value]'"
            )).into());
        };
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(invalid(format!(
                "Invalid header name '{name}'. The '[header name]' cannot contain whitespace"
            ))
            .into());
        }
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(format!("Invalid header name '{name}'")))?;
        let value = value.trim().to_string();
        let offset_ms = match action {
            HeaderAction::SetDate | HeaderAction::AddDate => value.parse::<i64>().map_err(|_| {
                invalid(format!("Invalid value '{value}' for header {name}: {action:?} takes milliseconds from now"))
            })?,
            _ => {
                HeaderValue::from_str(&value).map_err(|_| invalid(format!("Invalid value '{value}' for header {name}")))?;
                0
            }
        };
        rules.push(HeaderRule {
            action,
            name: header_name,
            value,
            offset_ms,
        });
    }
    Ok(rules)
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) `offset_ms` from `now`.
pub fn http_date(now: SystemTime, offset_ms: i64) -> String {
    let t = if offset_ms >= 0 {
        now + Duration::from_millis(offset_ms as u64)
    } else {
        now.checked_sub(Duration::from_millis(offset_ms.unsigned_abs()))
            .unwrap_or(SystemTime::UNIX_EPOCH)
    };
    let dt: chrono::DateTime<chrono::Utc> = t.into();
    dt.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Applies the rules to a response's headers.
pub fn apply_rules(rules: &[HeaderRule], headers: &mut HeaderMap) {
    let now = SystemTime::now();
    for r in rules {
        let value = match r.action {
            HeaderAction::Set | HeaderAction::Add => r.value.clone(),
            HeaderAction::SetDate | HeaderAction::AddDate => http_date(now, r.offset_ms),
        };
        let Ok(value) = HeaderValue::from_str(&value) else {
            continue;
        };
        match r.action {
            HeaderAction::Set | HeaderAction::SetDate => {
                headers.insert(r.name.clone(), value);
            }
            HeaderAction::Add | HeaderAction::AddDate => {
                headers.append(r.name.clone(), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_split_handles_quotes() {
        assert_eq!(csv_split(" a , b,,c "), vec!["a", "b", "c"]);
        assert_eq!(
            csv_split(r#"set X-A: 1, "add Cache-Control: no-cache, no-store", setDate Expires: 0"#),
            vec![
                "set X-A: 1",
                "add Cache-Control: no-cache, no-store",
                "setDate Expires: 0"
            ]
        );
        assert_eq!(csv_split(r#""a \"q\" b""#), vec![r#"a "q" b"#]);
        assert!(csv_split("").is_empty());
    }

    #[test]
    fn header_rules_parse_and_apply() {
        let rules = parse_header_rules(
            r#"set X-Frame-Options: DENY, add X-Multi: one, add X-Multi: two, "set Cache-Control: no-cache, no-store", setDate Expires: 31540000000, addDate X-Date: 0"#,
        )
        .unwrap();
        assert_eq!(rules.len(), 6);
        assert_eq!(rules[0].action, HeaderAction::Set);
        assert_eq!(rules[4].offset_ms, 31_540_000_000);
        let mut headers = HeaderMap::new();
        headers.insert("x-frame-options", HeaderValue::from_static("SAMEORIGIN"));
        apply_rules(&rules, &mut headers);
        assert_eq!(headers["x-frame-options"], "DENY");
        assert_eq!(
            headers.get_all("x-multi").iter().collect::<Vec<_>>(),
            vec!["one", "two"]
        );
        assert_eq!(headers["cache-control"], "no-cache, no-store");
        assert!(headers["expires"].to_str().unwrap().ends_with(" GMT"));
        assert!(headers.contains_key("x-date"));
    }

    #[test]
    fn header_rules_reject_what_kafka_rejects() {
        for (bad, msg) in [
            ("set", "Invalid format of header config"),
            ("put X-A: 1", "Invalid header config action"),
            (
                "set X-A",
                "Invalid format of header name and header value pair",
            ),
            ("set X A: 1", "cannot contain whitespace"),
            ("setDate Expires: soon", "milliseconds"),
        ] {
            let e = parse_header_rules(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
            assert!(e.contains("response.http.headers.config"), "{e}");
        }
        assert!(parse_header_rules("").unwrap().is_empty());
    }

    #[test]
    fn http_dates_are_rfc_1123() {
        assert_eq!(
            http_date(SystemTime::UNIX_EPOCH, 784_111_777_000),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(10), -5_000),
            "Thu, 01 Jan 1970 00:00:05 GMT"
        );
    }

    #[test]
    fn cors_follows_jettys_filter() {
        let cors = Cors::new(
            "http://ui.example.com, https://*.example.org",
            Some("GET,PUT"),
        )
        .unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            "origin",
            HeaderValue::from_static("https://app.example.org"),
        );
        h.insert(
            "access-control-request-method",
            HeaderValue::from_static("PUT"),
        );
        h.insert(
            "access-control-request-headers",
            HeaderValue::from_static("content-type, authorization"),
        );
        assert!(cors.is_preflight("OPTIONS", &h));
        let pre = cors.preflight_headers(&h);
        assert!(pre.contains(&(
            "Access-Control-Allow-Origin",
            "https://app.example.org".into()
        )));
        assert!(pre.contains(&("Access-Control-Allow-Methods", "GET,PUT".into())));
        h.insert(
            "access-control-request-method",
            HeaderValue::from_static("DELETE"),
        );
        assert!(cors.preflight_headers(&h).is_empty());
        h.insert(
            "origin",
            HeaderValue::from_static("http://evil.example.net"),
        );
        assert!(cors.response_headers(&h).is_empty());
        h.insert("origin", HeaderValue::from_static("http://ui.example.com"));
        assert_eq!(
            cors.response_headers(&h)[0],
            (
                "Access-Control-Allow-Origin",
                "http://ui.example.com".into()
            )
        );
        assert!(cors.response_headers(&HeaderMap::new()).is_empty());
        let any = Cors::new("*", None).unwrap();
        assert!(!any.response_headers(&h).iter().any(|(k, _)| *k == "Vary"));
    }
}
