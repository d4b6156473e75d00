//! HTTP basic authentication, compatible with Kafka's `BasicAuthSecurityRestExtension`.
//!
//! Enabled by `rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension`.
//! The credentials come from either
//! - `rest.basic.auth.jaas.config`: the JAAS file Kafka reads through `-Djava.security.auth.login.config`
//!   (a path; or the JAAS text itself), whose `KafkaConnect` section names
//!   `org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule` with `file="..."`; or
//! - `rest.basic.auth.credentials.file`: that properties file directly (`user: password` or
//!   `user=password` lines).
//!
//! As with Kafka's `PropertyFileLoginModule`, an empty credentials file lets every request through (with a
//! warning at start-up). `rest.basic.auth.health.exempt=true` lets `GET /health` through without
//! credentials; by default it is authenticated like every other endpoint, as in Kafka.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;

use super::SecurityError;
use crate::config::properties::parse_properties;

/// Kafka's class name for the extension.
pub const EXTENSION_CLASS: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";
/// Kafka's login module class name.
pub const LOGIN_MODULE_CLASS: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule";
/// The JAAS section Kafka Connect logs in with.
pub const JAAS_SECTION: &str = "KafkaConnect";

/// A JAAS control flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// Must succeed.
    Required,
    /// Must succeed.
    Requisite,
    /// Enough on its own when no required module fails.
    Sufficient,
    /// Enough on its own when it is the only kind present.
    Optional,
}

/// One login module entry of a JAAS section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasEntry {
    /// The login module class.
    pub class: String,
    /// Its control flag.
    pub flag: Flag,
    /// Its options (`file="..."`).
    pub options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Open,
    Close,
    Semi,
    Equals,
}

fn tokenize(text: &str) -> Result<Vec<Token>, SecurityError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '#' | '/' if c == '#' || chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                if i >= chars.len() {
                    return Err(SecurityError::Jaas(
                        "JAAS config: unterminated comment".into(),
                    ));
                }
                i += 2;
            }
            '{' | '}' | ';' | '=' => {
                tokens.push(match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ';' => Token::Semi,
                    _ => Token::Equals,
                });
                i += 1;
            }
            '"' | '\'' => {
                let quote = c;
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(SecurityError::Jaas(
                                "JAAS config: unterminated quoted value".into(),
                            ))
                        }
                        Some(&ch) if ch == quote => {
                            i += 1;
                            break;
                        }
                        Some('\\') if i + 1 < chars.len() => {
                            s.push(chars[i + 1]);
                            i += 2;
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                tokens.push(Token::Quoted(s));
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !"{};=\"'".contains(chars[i])
                {
                    i += 1;
                }
                tokens.push(Token::Word(chars[start..i].iter().collect()));
            }
        }
    }
    Ok(tokens)
}

/// Parses a JAAS login configuration and returns the entries of `section`.
///
/// # Errors
/// The text is not a JAAS configuration, or the section is missing.
pub fn parse_jaas(text: &str, section: &str) -> Result<Vec<JaasEntry>, SecurityError> {
    let tokens = tokenize(text)?;
    let mut sections: BTreeMap<String, Vec<JaasEntry>> = BTreeMap::new();
    let mut i = 0;
    while i < tokens.len() {
        let Token::Word(name) = &tokens[i] else {
            return Err(SecurityError::Jaas(unexpected(
                tokens.get(i),
                "a section name",
            )));
        };
        i += 1;
        if tokens.get(i) != Some(&Token::Open) {
            return Err(SecurityError::Jaas(unexpected(tokens.get(i), "'{'")));
        }
        i += 1;
        let mut entries = Vec::new();
        let what = "a login module class or '}'";
        words_until(&tokens, &mut i, &Token::Close, what, |class, i| {
            entries.push(parse_entry(&tokens, i, class)?);
            Ok(())
        })?;
        if tokens.get(i) == Some(&Token::Semi) {
            i += 1;
        }
        sections.insert(name.clone(), entries);
    }
    sections
        .remove(section)
        .ok_or_else(|| SecurityError::Jaas(format!("JAAS config: no '{section}' section (Kafka Connect logs in with '{section} {{ ... }};')")))
}

fn unexpected(t: Option<&Token>, what: &str) -> String {
    match t {
        Some(t) => format!("JAAS config: expected {what}, found {t:?}"),
        None => format!("JAAS config: expected {what}, found the end of the text"),
    }
}

/// Reads items that each start with a word until the `end` token (consumed), handing each
/// word to `item` with the position after it.
fn words_until(
    tokens: &[Token],
    i: &mut usize,
    end: &Token,
    what: &str,
    mut item: impl FnMut(&String, &mut usize) -> Result<(), SecurityError>,
) -> Result<(), SecurityError> {
    loop {
        match tokens.get(*i) {
            Some(t) if t == end => {
                *i += 1;
                return Ok(());
            }
            Some(Token::Word(word)) => {
                *i += 1;
                item(word, i)?;
            }
            t => return Err(SecurityError::Jaas(unexpected(t, what))),
        }
    }
}

/// One login module entry after its class name: the control flag, then the options up to `;`.
fn parse_entry(tokens: &[Token], i: &mut usize, class: &str) -> Result<JaasEntry, SecurityError> {
    let flag = match tokens.get(*i) {
        Some(Token::Word(f)) => match f.to_ascii_lowercase().as_str() {
            "required" => Flag::Required,
            "requisite" => Flag::Requisite,
            "sufficient" => Flag::Sufficient,
            "optional" => Flag::Optional,
            other => {
                return Err(SecurityError::Jaas(format!(
                    "JAAS config: unknown control flag '{other}' for {class}"
                )))
            }
        },
        t => {
            return Err(SecurityError::Jaas(unexpected(
                t,
                "a control flag (required, requisite, sufficient, optional)",
            )))
        }
    };
    *i += 1;
    let mut options = BTreeMap::new();
    words_until(tokens, i, &Token::Semi, "an option or ';'", |key, i| {
        if tokens.get(*i) != Some(&Token::Equals) {
            return Err(SecurityError::Jaas(unexpected(
                tokens.get(*i),
                "'=' after an option name",
            )));
        }
        let value = match tokens.get(*i + 1) {
            Some(Token::Quoted(v)) | Some(Token::Word(v)) => v.clone(),
            t => return Err(SecurityError::Jaas(unexpected(t, "an option value"))),
        };
        options.insert(key.clone(), value);
        *i += 2;
        Ok(())
    })?;
    Ok(JaasEntry {
        class: class.to_owned(),
        flag,
        options,
    })
}

/// Reads a credentials properties file (`user=password` / `user: password`).
///
/// # Errors
/// The file cannot be read or parsed.
pub fn read_credentials(path: &Path) -> Result<BTreeMap<String, String>, SecurityError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SecurityError::Credentials(format!(
            "Error loading Property Credentials file {}: {e}",
            path.display()
        ))
    })?;
    parse_credentials(&text).map_err(|e| {
        SecurityError::Credentials(format!(
            "Error loading Property Credentials file {}: {e}",
            path.display()
        ))
    })
}

/// Parses credentials in Java properties syntax.
///
/// # Errors
/// The text is not valid properties syntax.
pub fn parse_credentials(text: &str) -> Result<BTreeMap<String, String>, SecurityError> {
    Ok(parse_properties(text)
        .map_err(|e| SecurityError::Credentials(e.to_string()))?
        .into_iter()
        .collect())
}

/// Decodes an `Authorization: Basic …` header into user and password, as Kafka's callback handler does:
/// the scheme is case-insensitive and the user is what comes before the first colon (it must not be empty).
pub fn decode_basic(header: &str) -> Option<(String, String)> {
    let (scheme, rest) = header.split_once(' ')?;
    if scheme.is_empty() || !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (user, password) = text.split_once(':')?;
    if user.is_empty() {
        return None;
    }
    Some((user.to_string(), password.to_string()))
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// One credentials file with its JAAS flag.
#[derive(Debug, Clone)]
struct Module {
    flag: Flag,
    file: PathBuf,
    credentials: BTreeMap<String, String>,
}

impl Module {
    fn login(&self, user: Option<&(String, String)>) -> bool {
        if self.credentials.is_empty() {
            return true;
        }
        match user {
            Some((u, p)) => self
                .credentials
                .get(u)
                .is_some_and(|expected| same(expected, p)),
            None => false,
        }
    }
}

/// The login modules of `rest.basic.auth.jaas.config` (inline JAAS text or a JAAS file), each with
/// its credentials read.
fn jaas_modules(jaas: &str) -> Result<Vec<Module>, SecurityError> {
    let mut modules = Vec::new();
    let text = if jaas.contains('{') {
        jaas.to_string()
    } else {
        std::fs::read_to_string(jaas).map_err(|e| {
            crate::config::ConfigError::invalid(
                "rest.basic.auth.jaas.config",
                jaas,
                format_args!("cannot read the JAAS file: {e}"),
            )
        })?
    };
    let entries = parse_jaas(&text, JAAS_SECTION)
        .map_err(|e| SecurityError::Jaas(format!("rest.basic.auth.jaas.config: {e}")))?;
    if entries.is_empty() {
        return Err(SecurityError::Jaas(format!(
            "rest.basic.auth.jaas.config: the {JAAS_SECTION} section names no login module"
        )));
    }
    for e in entries {
        if e.class != LOGIN_MODULE_CLASS {
            return Err(SecurityError::Jaas(format!(
                "rest.basic.auth.jaas.config: login module {} is not available; liteconnect has {LOGIN_MODULE_CLASS}",
                e.class
            )));
        }
        let path = e
            .options
            .get("file")
            .map(|f| f.trim())
            .filter(|f| !f.is_empty())
            .ok_or_else(|| SecurityError::Jaas("rest.basic.auth.jaas.config: Property Credentials file must be specified (file=\"...\")".into()))?;
        let path = PathBuf::from(path);
        modules.push(Module {
            flag: e.flag,
            credentials: read_credentials(&path)?,
            file: path,
        });
    }
    Ok(modules)
}

/// Basic authentication as configured.
#[derive(Debug, Clone)]
pub struct BasicAuth {
    modules: Vec<Module>,
    /// `rest.basic.auth.health.exempt`.
    pub health_exempt: bool,
}

impl BasicAuth {
    /// Reads the worker keys; None when the extension is not enabled.
    ///
    /// # Errors
    /// An unknown extension class, credentials without the extension, or files that cannot be read.
    pub fn from_worker(
        originals: &BTreeMap<String, String>,
    ) -> Result<Option<BasicAuth>, SecurityError> {
        let get = |k: &str| originals.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let mut enabled = false;
        for class in get(crate::config::keys::REST_EXTENSION_CLASSES)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            if class == EXTENSION_CLASS || class == "BasicAuthSecurityRestExtension" {
                enabled = true;
            } else {
                return Err(crate::config::ConfigError::invalid(
                    "rest.extension.classes",
                    class,
                    format_args!(
                        "Class {class} could not be found. liteconnect has {EXTENSION_CLASS}."
                    ),
                )
                .into());
            }
        }
        let jaas = get(crate::config::keys::REST_BASIC_AUTH_JAAS_CONFIG);
        let file = get(crate::config::keys::REST_BASIC_AUTH_CREDENTIALS_FILE);
        let health_exempt = match get(crate::config::keys::REST_BASIC_AUTH_HEALTH_EXEMPT)
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => {
                return Err(crate::config::ConfigError::invalid(
                    "rest.basic.auth.health.exempt",
                    v,
                    "Expected value to be either true or false",
                )
                .into())
            }
        };
        if !enabled {
            if let Some(key) = [
                (crate::config::keys::REST_BASIC_AUTH_JAAS_CONFIG, jaas),
                (crate::config::keys::REST_BASIC_AUTH_CREDENTIALS_FILE, file),
            ]
            .iter()
            .find_map(|(k, v)| v.map(|_| *k))
            {
                return Err(SecurityError::Jaas(format!(
                    "{key} is set but rest.extension.classes does not list {EXTENSION_CLASS}; basic authentication would be off"
                )));
            }
            return Ok(None);
        }
        let mut modules = match jaas {
            Some(jaas) => jaas_modules(jaas)?,
            None => Vec::new(),
        };
        if let Some(file) = file {
            let path = PathBuf::from(file);
            modules.push(Module {
                flag: Flag::Required,
                credentials: read_credentials(&path)?,
                file: path,
            });
        }
        if modules.is_empty() {
            return Err(SecurityError::Jaas(format!(
                "{EXTENSION_CLASS} is enabled but no credentials are configured: set rest.basic.auth.credentials.file or rest.basic.auth.jaas.config"
            )));
        }
        for m in &modules {
            if m.credentials.is_empty() {
                tracing::warn!(
                    file = %m.file.display(),
                    "Credential properties file '{}' is empty; all requests will be permitted",
                    m.file.display()
                );
            }
        }
        Ok(Some(BasicAuth {
            modules,
            health_exempt,
        }))
    }

    /// A check against fixed credentials (tests, embedding).
    pub fn with_credentials(
        credentials: BTreeMap<String, String>,
        health_exempt: bool,
    ) -> BasicAuth {
        BasicAuth {
            modules: vec![Module {
                flag: Flag::Required,
                file: PathBuf::new(),
                credentials,
            }],
            health_exempt,
        }
    }

    /// Whether a request with this `Authorization` header may proceed (JAAS semantics: every required
    /// and requisite module must succeed; with none of those, at least one other must).
    pub fn authenticate(&self, authorization: Option<&str>) -> bool {
        let user = authorization.and_then(decode_basic);
        let mut mandatory = false;
        let mut any_other = false;
        for m in &self.modules {
            let ok = m.login(user.as_ref());
            match m.flag {
                Flag::Required | Flag::Requisite => {
                    mandatory = true;
                    if !ok {
                        return false;
                    }
                }
                Flag::Sufficient | Flag::Optional => any_other |= ok,
            }
        }
        mandatory || any_other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(user: &str, password: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        )
    }

    #[test]
    fn jaas_sections_and_options_parse() {
        let text = r#"
            // Kafka's documented form
            KafkaServer { org.example.Other required; };
            KafkaConnect {
              org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
              file="/etc/connect/creds.properties" debug=true;
            };
            /* trailing */
        "#;
        let entries = parse_jaas(text, "KafkaConnect").unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].class, LOGIN_MODULE_CLASS);
        assert_eq!(entries[0].flag, Flag::Required);
        assert_eq!(entries[0].options["file"], "/etc/connect/creds.properties");
        assert_eq!(entries[0].options["debug"], "true");
        assert!(parse_jaas(text, "Missing")
            .unwrap_err()
            .to_string()
            .contains("no 'Missing' section"));
        assert!(parse_jaas("KafkaConnect { x bogus; };", "KafkaConnect")
            .unwrap_err()
            .to_string()
            .contains("control flag"));
        assert!(parse_jaas("KafkaConnect { x required file=\"a; };", "KafkaConnect").is_err());
        assert!(parse_jaas("KafkaConnect  x required; };", "KafkaConnect").is_err());
    }

    #[test]
    fn credentials_files_use_properties_syntax() {
        let c =
            parse_credentials("# users\nalice: wonder land\nbob=builder\ncarol secret\n").unwrap();
        assert_eq!(c["alice"], "wonder land");
        assert_eq!(c["bob"], "builder");
        assert_eq!(c["carol"], "secret");
    }

    #[test]
    fn basic_headers_decode_as_kafka_does() {
        assert_eq!(
            decode_basic(&basic("u", "p:w")),
            Some(("u".into(), "p:w".into()))
        );
        assert_eq!(
            decode_basic(&basic("u", "")),
            Some(("u".into(), String::new()))
        );
        assert_eq!(
            decode_basic(&basic("u", "p").replace("Basic", "bAsIc")),
            Some(("u".into(), "p".into()))
        );
        assert_eq!(decode_basic(&basic("", "p")), None);
        assert_eq!(decode_basic("Bearer abc"), None);
        assert_eq!(decode_basic("Basic !!!"), None);
        assert_eq!(decode_basic("Basic"), None);
    }

    #[test]
    fn authentication_follows_the_credentials() {
        let auth = BasicAuth::with_credentials(
            [("alice".to_string(), "secret".to_string())].into(),
            false,
        );
        assert!(auth.authenticate(Some(&basic("alice", "secret"))));
        assert!(!auth.authenticate(Some(&basic("alice", "wrong"))));
        assert!(!auth.authenticate(Some(&basic("bob", "secret"))));
        assert!(!auth.authenticate(None));
        let open = BasicAuth::with_credentials(BTreeMap::new(), false);
        assert!(
            open.authenticate(None),
            "an empty credentials file permits every request, as in Kafka"
        );
    }

    #[test]
    fn worker_keys_enable_it() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("creds.properties");
        std::fs::write(&creds, "alice: secret\n").unwrap();
        let jaas = dir.path().join("connect.jaas");
        std::fs::write(
            &jaas,
            format!(
                "KafkaConnect {{\n {LOGIN_MODULE_CLASS} required\n file=\"{}\";\n}};\n",
                creds.display()
            ),
        )
        .unwrap();
        let props = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(BasicAuth::from_worker(&BTreeMap::new()).unwrap().is_none());
        let auth = BasicAuth::from_worker(&props(&[
            ("rest.extension.classes", EXTENSION_CLASS),
            ("rest.basic.auth.jaas.config", &jaas.display().to_string()),
        ]))
        .unwrap()
        .unwrap();
        assert!(auth.authenticate(Some(&basic("alice", "secret"))));
        assert!(!auth.health_exempt);
        let auth = BasicAuth::from_worker(&props(&[
            ("rest.extension.classes", EXTENSION_CLASS),
            (
                "rest.basic.auth.credentials.file",
                &creds.display().to_string(),
            ),
            ("rest.basic.auth.health.exempt", "true"),
        ]))
        .unwrap()
        .unwrap();
        assert!(auth.health_exempt);
        let e = BasicAuth::from_worker(&props(&[("rest.basic.auth.credentials.file", "/x")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rest.extension.classes"), "{e}");
        let e = BasicAuth::from_worker(&props(&[("rest.extension.classes", EXTENSION_CLASS)]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no credentials"), "{e}");
        let e = BasicAuth::from_worker(&props(&[("rest.extension.classes", "com.example.Ext")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("could not be found"), "{e}");
    }
}
