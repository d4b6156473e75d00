//! The settings a task works with, read from either class's keys, and the checks beyond the key
//! definitions (with the originals' wording where they have one).

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;

use super::defs;
use crate::config::def::ParsedConfig;
use crate::connectors::Props;
use crate::converters::json::DecimalFormat;

/// Which class the settings were read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `io.aiven.kafka.connect.http.HttpSinkConnector`.
    Aiven,
    /// `io.confluent.connect.http.HttpSinkConnector`.
    Confluent,
}

/// How requests are authorized.
#[derive(Clone, Debug, PartialEq)]
pub enum Auth {
    /// No `Authorization` header.
    None,
    /// A fixed `Authorization` header value (static, or BASIC credentials encoded once).
    Header(String),
    /// An access token from an OAuth2 token endpoint (client credentials grant).
    OAuth2(Box<OAuth2>),
}

/// The OAuth2 client credentials settings.
#[derive(Clone, Debug, PartialEq)]
pub struct OAuth2 {
    /// The token endpoint.
    pub token_url: String,
    /// The client id.
    pub client_id: String,
    /// The client secret.
    pub client_secret: String,
    /// The scope asked for, if any.
    pub scope: Option<String>,
    /// Credentials in a Basic `Authorization` header (true) or in the form (false).
    pub in_header: bool,
    /// The form's names: grant type, client id, client secret.
    pub form_names: [String; 3],
    /// The grant type sent.
    pub grant_type: String,
    /// The answer's property that holds the token.
    pub token_property: String,
    /// Statuses that make the sink fetch a new token and send again.
    pub renew_on: Vec<u16>,
}

/// What is done when the endpoint refuses a request for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// The records go to the worker's error handling (`errors.tolerance`, dead letter queue).
    Fail,
    /// Logged and skipped.
    Log,
    /// Skipped.
    Ignore,
}

/// What is done with a record whose value is null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnNull {
    /// Skipped.
    Ignore,
    /// Logged and skipped.
    Log,
    /// Reported as a failed record.
    Fail,
    /// A `DELETE` request to the record's URL.
    Delete,
}

/// How a record value becomes text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    /// Aiven's: strings as they are, structs and maps as JSON, anything else refused.
    Aiven,
    /// Confluent's `string`: the value's Java `toString()`.
    String,
    /// Confluent's `json`: the value as schemaless JSON.
    Json,
}

/// Everything a task needs, whichever class it came from.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Which class.
    pub flavor: Flavor,
    /// The URL, with `${topic}` and `${key}` for the Confluent class.
    pub url: String,
    /// POST, PUT or PATCH.
    pub method: reqwest::Method,
    /// Headers sent with every request (Content-Type included when set).
    pub headers: Vec<(String, String)>,
    /// Authorization.
    pub auth: Auth,
    /// Records per request (1: one request per record).
    pub batch_max: usize,
    /// Written before a batch's records.
    pub prefix: String,
    /// Written after a batch's records.
    pub suffix: String,
    /// Written between a batch's records.
    pub separator: String,
    /// How values are written.
    pub body: BodyFormat,
    /// How decimals are written as JSON.
    pub decimal_format: DecimalFormat,
    /// What a refused request leads to.
    pub on_error: OnError,
    /// What a null value leads to.
    pub on_null: OnNull,
    /// Retries inside one delivery attempt.
    pub max_retries: u32,
    /// The pause between those retries, and the least pause before the worker's next attempt.
    pub backoff: Duration,
    /// Statuses below 500 (other than 429) that are retried before the request counts as refused.
    pub retry_codes: Vec<(u16, u16)>,
    /// The connection timeout.
    pub connect_timeout: Duration,
    /// The whole request's timeout.
    pub request_timeout: Duration,
    /// An explicit proxy (`host:port`); otherwise `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` apply.
    pub proxy: Option<String>,
    /// Accept any server certificate.
    pub trust_all: bool,
}

fn parse_def(flavor: Flavor, props: &Props) -> Result<ParsedConfig, String> {
    let def = match flavor {
        Flavor::Aiven => defs::aiven(),
        Flavor::Confluent => defs::confluent(),
    };
    def.parse(props).map_err(|e| e.join("; "))
}

/// A configured string that is not blank.
fn present(parsed: &ParsedConfig, key: &str) -> Option<String> {
    parsed.get_string(key).filter(|s| !s.trim().is_empty())
}

fn invalid(key: &str, value: &str, why: &str) -> (String, String) {
    (
        key.to_string(),
        crate::config::invalid_value(key, value, why),
    )
}

fn check_url(key: &str, value: Option<String>, errors: &mut Vec<(String, String)>) {
    if let Some(v) = value {
        // `${topic}` and `${key}` stand for path segments.
        let probe = v.replace("${topic}", "topic").replace("${key}", "key");
        match reqwest::Url::parse(&probe) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {}
            _ => errors.push(invalid(key, &v, "malformed URL")),
        }
    }
}

/// Aiven's `http.headers.additional` entries, checked as its validator does.
fn additional_headers(list: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for entry in list {
        let parts: Vec<&str> = entry.split(':').collect();
        if parts.len() != 2 {
            return Err("Header field should use format header:value".into());
        }
        if !seen.insert(parts[0].to_lowercase()) {
            return Err("Duplicate keys are not allowed (case-insensitive)".into());
        }
        out.push((parts[0].to_string(), parts[1].to_string()));
    }
    Ok(out)
}

/// Confluent's `headers`: `name:value` entries split by `header.separator`.
fn separated_headers(raw: &str, separator: &str) -> Result<Vec<(String, String)>, String> {
    if raw.trim().is_empty() {
        return Ok(Vec::new());
    }
    let separator = if separator.is_empty() { "|" } else { separator };
    raw.split(separator)
        .filter(|h| !h.trim().is_empty())
        .map(|h| match h.split_once(':') {
            Some((n, v)) if !n.trim().is_empty() => {
                Ok((n.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(format!("Header '{h}' should use the format name:value")),
        })
        .collect()
}

/// `retry.on.status.codes`: codes and ranges (`400-`, `500-599`, `-404`).
fn status_ranges(raw: &str) -> Result<Vec<(u16, u16)>, String> {
    let code = |s: &str, empty: u16| -> Result<u16, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(empty);
        }
        s.parse::<u16>()
            .ok()
            .filter(|c| (100..=599).contains(c))
            .ok_or_else(|| format!("'{s}' is not an HTTP status code"))
    };
    raw.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('-') {
            Some((lo, hi)) => Ok((code(lo, 100)?, code(hi, 599)?)),
            None => code(p, 0).map(|c| (c, c)),
        })
        .collect()
}

/// Checks beyond the key definitions, as (key, message). `flavor` picks the class's keys.
pub fn validate(
    flavor: Flavor,
    config: &BTreeMap<String, Option<String>>,
) -> Vec<(String, String)> {
    let props: Props = config
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect();
    // Type and range errors are the definition's to report; the URL is still checked.
    let Ok(parsed) = parse_def(flavor, &props) else {
        let mut errors = Vec::new();
        let key = match flavor {
            Flavor::Aiven => "http.url",
            Flavor::Confluent => "http.api.url",
        };
        check_url(key, props.get(key).cloned(), &mut errors);
        return errors;
    };
    match Settings::read(flavor, &props, &parsed) {
        Ok(_) => Vec::new(),
        Err(errors) => errors,
    }
}

impl Settings {
    /// Reads and checks a task config.
    pub fn from_props(flavor: Flavor, props: &Props) -> Result<Settings, String> {
        let parsed = parse_def(flavor, props)?;
        Settings::read(flavor, props, &parsed).map_err(|errors| {
            errors
                .into_iter()
                .map(|(_, m)| m)
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    fn read(
        flavor: Flavor,
        props: &Props,
        parsed: &ParsedConfig,
    ) -> Result<Settings, Vec<(String, String)>> {
        match flavor {
            Flavor::Aiven => aiven(props, parsed),
            Flavor::Confluent => confluent(props, parsed),
        }
    }
}

fn int(parsed: &ParsedConfig, key: &str) -> i64 {
    parsed.get_long(key).unwrap_or_default()
}

fn millis(parsed: &ParsedConfig, key: &str) -> Duration {
    Duration::from_millis(int(parsed, key).max(0) as u64)
}

fn aiven_auth(parsed: &ParsedConfig, errors: &mut Vec<(String, String)>) -> Auth {
    const TYPE: &str = "http.authorization.type";
    const HEADER: &str = "http.headers.authorization";
    let kind = parsed.get_string(TYPE).unwrap_or_default();
    let header = present(parsed, HEADER);
    let must = |key: &str, what: &str| {
        (
            key.to_string(),
            crate::config::invalid_value(key, "null", format_args!("Must be present when {what}")),
        )
    };
    match kind.as_str() {
        "none" => {
            if header.is_some() {
                errors.push((
                    HEADER.into(),
                    crate::config::invalid_value(
                        HEADER,
                        "[hidden]",
                        format_args!("Must not be present when {TYPE} != STATIC"),
                    ),
                ));
            }
            Auth::None
        }
        "static" => match header {
            Some(h) => Auth::Header(h),
            None => {
                errors.push(must(HEADER, &format!("{TYPE} = STATIC")));
                Auth::None
            }
        },
        "oauth2" => {
            let mut need = |key: &str| {
                present(parsed, key).unwrap_or_else(|| {
                    errors.push(must(key, &format!("{HEADER} = OAUTH2")));
                    String::new()
                })
            };
            let oauth = OAuth2 {
                token_url: need("oauth2.access.token.url"),
                client_id: need("oauth2.client.id"),
                client_secret: need("oauth2.client.secret"),
                form_names: [
                    need("oauth2.request.grant.type.property"),
                    need("oauth2.request.client.id.property"),
                    need("oauth2.request.client.secret.property"),
                ],
                grant_type: need("oauth2.grant.type"),
                token_property: need("oauth2.response.token.property"),
                scope: present(parsed, "oauth2.client.scope"),
                in_header: parsed
                    .get_string("oauth2.client.authorization.mode")
                    .is_none_or(|m| m.eq_ignore_ascii_case("header")),
                renew_on: renew_codes(parsed, errors),
            };
            check_url(
                "oauth2.access.token.url",
                Some(oauth.token_url.clone()).filter(|u| !u.is_empty()),
                errors,
            );
            Auth::OAuth2(Box::new(oauth))
        }
        other => {
            errors.push(invalid(
                TYPE,
                other,
                "supported values are: [none, oauth2, static]",
            ));
            Auth::None
        }
    }
}

fn renew_codes(parsed: &ParsedConfig, errors: &mut Vec<(String, String)>) -> Vec<u16> {
    const KEY: &str = "oauth2.token.renew.on.status.codes";
    let list = parsed.get_list(KEY);
    let codes: Option<Vec<u16>> = list.iter().map(|c| c.trim().parse().ok()).collect();
    codes.unwrap_or_else(|| {
        errors.push(invalid(KEY, &list.join(","), "must be a list of numbers"));
        Vec::new()
    })
}

fn aiven(props: &Props, parsed: &ParsedConfig) -> Result<Settings, Vec<(String, String)>> {
    let mut errors = Vec::new();
    let url = parsed.get_string("http.url").unwrap_or_default();
    check_url("http.url", Some(url.clone()), &mut errors);
    let auth = aiven_auth(parsed, &mut errors);
    let mut headers = additional_headers(&parsed.get_list("http.headers.additional"))
        .unwrap_or_else(|e| {
            errors.push(("http.headers.additional".into(), e));
            Vec::new()
        });
    match parsed.get_string("http.headers.content.type") {
        Some(ct) if ct.trim().is_empty() => errors.push(invalid(
            "http.headers.content.type",
            &ct,
            "String must be non-blank",
        )),
        Some(ct) => headers.push(("Content-Type".into(), ct)),
        None => {}
    }
    let batching = parsed.get_bool("batching.enabled").unwrap_or(false);
    let tolerance = props.get(crate::config::keys::ERRORS_TOLERANCE);
    if batching && tolerance.is_some_and(|t| t.trim().eq_ignore_ascii_case("all")) {
        errors.push((
            "batching.enabled".into(),
            "Cannot use errors.tolerance when batching is enabled".into(),
        ));
    }
    let proxy_host = present(parsed, "http.proxy.host");
    let proxy_port = int(parsed, "http.proxy.port");
    if proxy_host.is_some() != (proxy_port > -1) {
        errors.push((
            "http.proxy.host".into(),
            "Proxy host and port must be defined together".into(),
        ));
    }
    if present(parsed, "http.ssl.truststore.location").is_some() {
        errors.push(("http.ssl.truststore.location".into(), "Java trust stores are not supported: the bundled web PKI roots are trusted (or use http.ssl.trust.all.certs)".into()));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let raw = |key: &str, default: &str| {
        props
            .get(key)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    };
    let timeout = Duration::from_secs(int(parsed, "http.timeout").max(1) as u64);
    Ok(Settings {
        flavor: Flavor::Aiven,
        url,
        method: reqwest::Method::POST,
        headers,
        auth,
        batch_max: if batching {
            int(parsed, "batch.max.size").max(1) as usize
        } else {
            1
        },
        prefix: if batching {
            raw("batch.prefix", "")
        } else {
            String::new()
        },
        suffix: if batching {
            raw("batch.suffix", "\n")
        } else {
            String::new()
        },
        separator: raw("batch.separator", "\n"),
        body: BodyFormat::Aiven,
        decimal_format: decimal_format(parsed),
        on_error: OnError::Fail,
        on_null: OnNull::Fail,
        max_retries: int(parsed, "max.retries").max(0) as u32,
        backoff: millis(parsed, "retry.backoff.ms"),
        retry_codes: vec![(400, 599)],
        connect_timeout: timeout,
        request_timeout: timeout,
        proxy: proxy_host.map(|h| format!("{h}:{proxy_port}")),
        trust_all: parsed.get_bool("http.ssl.trust.all.certs").unwrap_or(false),
    })
}

fn decimal_format(parsed: &ParsedConfig) -> DecimalFormat {
    match parsed.get_string("decimal.format") {
        Some(f) if f.eq_ignore_ascii_case("NUMERIC") => DecimalFormat::Numeric,
        _ => DecimalFormat::Base64,
    }
}

fn upper(parsed: &ParsedConfig, key: &str) -> String {
    parsed
        .get_string(key)
        .unwrap_or_default()
        .to_ascii_uppercase()
}

fn confluent_auth(parsed: &ParsedConfig, errors: &mut Vec<(String, String)>) -> Auth {
    let mut need = |key: &str, kind: &str| {
        present(parsed, key).unwrap_or_else(|| {
            errors.push((
                key.to_string(),
                format!("Missing required configuration \"{key}\" when auth.type={kind}."),
            ));
            String::new()
        })
    };
    match upper(parsed, "auth.type").as_str() {
        "BASIC" => {
            let user = need("connection.user", "BASIC");
            let password = parsed.get_string("connection.password").unwrap_or_default();
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            Auth::Header(format!("Basic {token}"))
        }
        "OAUTH2" => {
            let oauth = OAuth2 {
                token_url: need("oauth2.token.url", "OAUTH2"),
                client_id: need("oauth2.client.id", "OAUTH2"),
                client_secret: need("oauth2.client.secret", "OAUTH2"),
                scope: present(parsed, "oauth2.client.scope"),
                in_header: upper(parsed, "oauth2.client.auth.mode") != "URL",
                form_names: [
                    "grant_type".into(),
                    "client_id".into(),
                    "client_secret".into(),
                ],
                grant_type: "client_credentials".into(),
                token_property: parsed
                    .get_string("oauth2.token.property")
                    .unwrap_or_default(),
                renew_on: vec![401],
            };
            check_url(
                "oauth2.token.url",
                Some(oauth.token_url.clone()).filter(|u| !u.is_empty()),
                errors,
            );
            Auth::OAuth2(Box::new(oauth))
        }
        _ => Auth::None,
    }
}

/// Confluent's `headers`, with a `Content-Type` for `request.body.format` unless they name one.
fn confluent_headers(
    props: &Props,
    parsed: &ParsedConfig,
    json: bool,
    errors: &mut Vec<(String, String)>,
) -> Vec<(String, String)> {
    let separator = props.get("header.separator").map_or("|", String::as_str);
    let raw = parsed.get_string("headers").unwrap_or_default();
    let mut headers = separated_headers(&raw, separator).unwrap_or_else(|e| {
        errors.push(("headers".into(), e));
        Vec::new()
    });
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        let ct = if json {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        headers.push(("Content-Type".into(), ct.into()));
    }
    headers
}

/// `behavior.on.error` and `behavior.on.null.values`.
fn confluent_behaviors(parsed: &ParsedConfig) -> (OnError, OnNull) {
    let on_error = match upper(parsed, "behavior.on.error").as_str() {
        "LOG" => OnError::Log,
        "IGNORE" => OnError::Ignore,
        _ => OnError::Fail,
    };
    let on_null = match upper(parsed, "behavior.on.null.values").as_str() {
        "LOG" => OnNull::Log,
        "FAIL" => OnNull::Fail,
        "DELETE" => OnNull::Delete,
        _ => OnNull::Ignore,
    };
    (on_error, on_null)
}

fn confluent(props: &Props, parsed: &ParsedConfig) -> Result<Settings, Vec<(String, String)>> {
    let mut errors = Vec::new();
    let url = parsed.get_string("http.api.url").unwrap_or_default();
    check_url("http.api.url", Some(url.clone()), &mut errors);
    let auth = confluent_auth(parsed, &mut errors);
    let json = upper(parsed, "request.body.format") == "JSON";
    let headers = confluent_headers(props, parsed, json, &mut errors);
    let codes = parsed
        .get_string("retry.on.status.codes")
        .unwrap_or_default();
    let retry_codes = status_ranges(&codes).unwrap_or_else(|e| {
        errors.push(invalid("retry.on.status.codes", &codes, &e));
        Vec::new()
    });
    if !errors.is_empty() {
        return Err(errors);
    }
    // `batch.json.as.array` frames a batch as a JSON array, whatever the framing keys say.
    let array = json && parsed.get_bool("batch.json.as.array").unwrap_or(false);
    let framing = |key: &str, default: &str, in_array: &str| {
        if array {
            in_array.to_string()
        } else {
            props
                .get(key)
                .cloned()
                .unwrap_or_else(|| default.to_string())
        }
    };
    let (on_error, on_null) = confluent_behaviors(parsed);
    Ok(Settings {
        flavor: Flavor::Confluent,
        url,
        method: reqwest::Method::from_bytes(upper(parsed, "request.method").as_bytes())
            .unwrap_or(reqwest::Method::POST),
        headers,
        auth,
        batch_max: int(parsed, "batch.max.size").max(1) as usize,
        prefix: framing("batch.prefix", "", "["),
        suffix: framing("batch.suffix", "", "]"),
        separator: framing("batch.separator", ",", ","),
        body: if json {
            BodyFormat::Json
        } else {
            BodyFormat::String
        },
        decimal_format: DecimalFormat::Base64,
        on_error,
        on_null,
        max_retries: int(parsed, "max.retries").max(0) as u32,
        backoff: millis(parsed, "retry.backoff.ms"),
        retry_codes,
        connect_timeout: millis(parsed, "http.connect.timeout.ms"),
        request_timeout: millis(parsed, "http.request.timeout.ms"),
        proxy: present(parsed, "http.proxy.host")
            .map(|h| format!("{h}:{}", int(parsed, "http.proxy.port"))),
        trust_all: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn errors(flavor: Flavor, pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let config = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect();
        validate(flavor, &config)
    }

    #[test]
    fn aiven_defaults_and_batching() {
        let s = Settings::from_props(
            Flavor::Aiven,
            &props(&[
                ("http.url", "http://h/x"),
                ("http.authorization.type", "none"),
                ("batching.enabled", "true"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (
                s.batch_max,
                s.prefix.as_str(),
                s.suffix.as_str(),
                s.separator.as_str()
            ),
            (500, "", "\n", "\n")
        );
        assert_eq!((s.max_retries, s.backoff), (1, Duration::from_secs(3)));
        assert_eq!(s.request_timeout, Duration::from_secs(30));
        let single = Settings::from_props(
            Flavor::Aiven,
            &props(&[
                ("http.url", "http://h/x"),
                ("http.authorization.type", "none"),
            ]),
        )
        .unwrap();
        assert_eq!(single.batch_max, 1);
    }

    #[test]
    fn aiven_refusals_name_the_key() {
        let base = [
            ("http.url", "http://h/x"),
            ("http.authorization.type", "static"),
        ];
        let e = errors(Flavor::Aiven, &base);
        assert_eq!(e[0].0, "http.headers.authorization");
        assert!(
            e[0].1
                .contains("Must be present when http.authorization.type = STATIC"),
            "{e:?}"
        );
        let e = errors(
            Flavor::Aiven,
            &[("http.url", "nope"), ("http.authorization.type", "bearer")],
        );
        let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["http.url", "http.authorization.type"], "{e:?}");
        assert!(e[1]
            .1
            .contains("supported values are: [none, oauth2, static]"));
        let e = errors(
            Flavor::Aiven,
            &[
                ("http.url", "http://h/"),
                ("http.authorization.type", "none"),
                ("batching.enabled", "true"),
                ("errors.tolerance", "all"),
            ],
        );
        assert_eq!(
            e,
            vec![(
                "batching.enabled".to_string(),
                "Cannot use errors.tolerance when batching is enabled".to_string()
            )]
        );
        let e = errors(
            Flavor::Aiven,
            &[
                ("http.url", "http://h/"),
                ("http.authorization.type", "none"),
                ("http.headers.additional", "a:1,A:2"),
            ],
        );
        assert_eq!(e[0].1, "Duplicate keys are not allowed (case-insensitive)");
        let e = errors(
            Flavor::Aiven,
            &[
                ("http.url", "http://h/"),
                ("http.authorization.type", "oauth2"),
            ],
        );
        assert_eq!(e[0].0, "oauth2.access.token.url");
    }

    #[test]
    fn confluent_keys() {
        let s = Settings::from_props(
            Flavor::Confluent,
            &props(&[
                ("http.api.url", "http://h/${topic}/${key}"),
                ("request.method", "put"),
                ("headers", "X-A:1|X-B:two:parts"),
                ("auth.type", "BASIC"),
                ("connection.user", "u"),
                ("connection.password", "p"),
                ("request.body.format", "json"),
                ("batch.json.as.array", "true"),
            ]),
        )
        .unwrap();
        assert_eq!(s.method, reqwest::Method::PUT);
        assert_eq!(
            s.headers[..2],
            [
                ("X-A".to_string(), "1".to_string()),
                ("X-B".to_string(), "two:parts".to_string())
            ]
        );
        assert_eq!(s.auth, Auth::Header("Basic dTpw".into()));
        assert_eq!(
            (s.prefix.as_str(), s.separator.as_str(), s.suffix.as_str()),
            ("[", ",", "]")
        );
        assert_eq!(s.retry_codes, vec![(400, 599)]);
        assert_eq!(
            (s.batch_max, s.max_retries, s.on_error, s.on_null),
            (1, 10, OnError::Fail, OnNull::Ignore)
        );
        let e = errors(
            Flavor::Confluent,
            &[("http.api.url", "http://h/"), ("auth.type", "OAUTH2")],
        );
        assert_eq!(e[0].0, "oauth2.token.url", "{e:?}");
        let e = errors(
            Flavor::Confluent,
            &[
                ("http.api.url", "http://h/"),
                ("retry.on.status.codes", "500-,abc"),
            ],
        );
        assert_eq!(e[0].0, "retry.on.status.codes", "{e:?}");
        assert_eq!(
            status_ranges("429, 500-599,-404").unwrap(),
            vec![(429, 429), (500, 599), (100, 404)]
        );
    }
}
