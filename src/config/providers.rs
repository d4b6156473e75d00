//! Config providers, as Kafka's `config.providers`: `${provider:[path:]key}` placeholders in connector
//! configs are replaced by values read from files, directories or environment variables.
//!
//! Placeholders are resolved only when a task starts; stored configs and everything the REST API shows
//! keep the placeholder. The worker keys are Kafka's:
//!
//! ```properties
//! config.providers=file,env,directory
//! config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//! config.providers.file.param.allowed.paths=/etc/secrets
//! config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//! config.providers.env.param.allowlist.pattern=^CONNECT_
//! config.providers.directory.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
//! ```
//!
//! - `${file:/path/to/file.properties:key}`: `key` of a Java properties file.
//! - `${directory:/path/to/dir:name}`: the whole content of the file `name` in the directory.
//! - `${env:NAME}` (or `${env::NAME}`): the environment variable `NAME`; the env provider takes no path.
//!
//! One difference from Kafka: a placeholder naming a configured provider that cannot be resolved (missing
//! file, key, variable, or a path outside `allowed.paths`) is an error that fails the task, where Kafka
//! silently leaves the placeholder in the value. A placeholder naming a provider that is not configured is
//! left as it is, as in Kafka.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use crate::config::properties::parse_properties;
use crate::config::ConfigError;

const FILE_CLASS: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
const DIRECTORY_CLASS: &str = "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
const ENV_CLASS: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// The exception class named in traces of resolution failures.
pub const CONFIG_EXCEPTION: &str = "org.apache.kafka.common.config.ConfigException";

/// Kafka's `ConfigTransformer.DEFAULT_PATTERN`: `${provider:path:key}` or `${provider:key}`.
fn pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
            .expect("the placeholder pattern compiles")
    })
}

/// One `${provider:path:key}` reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placeholder {
    /// The provider's name (`file`, `env`, … as named in `config.providers`).
    pub provider: String,
    /// The path, when given (`${env:NAME}` has none; `${env::NAME}` has an empty one).
    pub path: Option<String>,
    /// The key.
    pub key: String,
}

/// The placeholders in a value, in order.
pub fn placeholders(value: &str) -> Vec<Placeholder> {
    pattern()
        .captures_iter(value)
        .map(|c| Placeholder {
            provider: c[1].to_string(),
            path: c.get(3).map(|m| m.as_str().to_string()),
            key: c[4].to_string(),
        })
        .collect()
}

/// Whether a value holds at least one placeholder.
pub fn has_placeholder(value: &str) -> bool {
    pattern().is_match(value)
}

/// Paths a file or directory provider may read (`allowed.paths`); None allows every path.
#[derive(Clone, Debug, Default)]
struct AllowedPaths(Option<Vec<PathBuf>>);

/// Removes `.` and resolves `..` lexically, as `java.nio.file.Path.normalize` does.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl AllowedPaths {
    fn parse(provider: &str, value: Option<&String>) -> Result<AllowedPaths, ConfigError> {
        let Some(value) = value.map(|v| v.trim()).filter(|v| !v.is_empty()) else {
            return Ok(AllowedPaths(None));
        };
        let mut paths = Vec::new();
        for p in value.split(',').map(str::trim) {
            let path = normalize(Path::new(p));
            if !path.is_absolute() {
                return Err(crate::config::invalid_value(
                    format_args!("config.providers.{provider}.param.allowed.paths"),
                    value,
                    format_args!("Path {p} is not valid. The path should be absolute"),
                )
                .into());
            }
            paths.push(path);
        }
        Ok(AllowedPaths(Some(paths)))
    }

    /// The path to read, or None when it is outside every allowed path.
    fn check(&self, path: &str) -> Option<PathBuf> {
        match &self.0 {
            None => Some(PathBuf::from(path)),
            Some(allowed) => {
                let normalized = normalize(Path::new(path));
                allowed
                    .iter()
                    .any(|a| normalized.starts_with(a))
                    .then_some(normalized)
            }
        }
    }

    /// The placeholder's path (a `what`, e.g. `file`, written like `example`) and the path to
    /// read, checked against the allowed paths.
    fn resolve<'p>(
        &self,
        path: Option<&'p str>,
        provider: &str,
        key: &str,
        what: &str,
        example: &str,
    ) -> Result<(&'p str, PathBuf), ConfigError> {
        let path = path.filter(|p| !p.is_empty()).ok_or_else(|| {
            ConfigError::Message(format!("The placeholder ${{{provider}:{key}}} names no {what}; use ${{{provider}:{example}:{key}}}"))
        })?;
        let checked = self.check(path).ok_or_else(|| {
            ConfigError::Message(format!("The path {path} is not allowed to be accessed"))
        })?;
        Ok((path, checked))
    }
}

#[derive(Clone, Debug)]
enum Kind {
    File(AllowedPaths),
    Directory(AllowedPaths),
    Env(Regex),
}

/// The configured providers, by name.
#[derive(Clone, Debug, Default)]
pub struct ConfigProviders {
    providers: BTreeMap<String, Kind>,
}

/// Where environment variables are read from (the process environment, or a map in tests).
pub trait Environment {
    /// The variable's value.
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Environment for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl ConfigProviders {
    /// Reads `config.providers` and `config.providers.<name>.class` / `.param.*` from worker properties.
    ///
    /// # Errors
    /// A provider without a class, a class liteconnect does not have, or an invalid parameter.
    pub fn from_worker_props(
        props: &BTreeMap<String, String>,
    ) -> Result<ConfigProviders, ConfigError> {
        let mut providers = BTreeMap::new();
        let Some(list) = props.get("config.providers") else {
            return Ok(ConfigProviders { providers });
        };
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let class_key = format!("config.providers.{name}.class");
            let class = props
                .get(&class_key)
                .map(|c| c.trim())
                .filter(|c| !c.is_empty())
                .ok_or_else(|| ConfigError::Message(format!("Missing required configuration \"{class_key}\" for the config provider '{name}'")))?;
            let param = |p: &str| props.get(&format!("config.providers.{name}.param.{p}"));
            let simple = class.rsplit('.').next().unwrap_or(class);
            let kind = match simple {
                "FileConfigProvider" if class == FILE_CLASS || class == simple => {
                    Kind::File(AllowedPaths::parse(name, param("allowed.paths"))?)
                }
                "DirectoryConfigProvider" if class == DIRECTORY_CLASS || class == simple => {
                    Kind::Directory(AllowedPaths::parse(name, param("allowed.paths"))?)
                }
                "EnvVarConfigProvider" if class == ENV_CLASS || class == simple => {
                    let pattern = param("allowlist.pattern").map(String::as_str).unwrap_or(".*");
                    Kind::Env(Regex::new(pattern).map_err(|e| {
                        crate::config::invalid_value(
                            format_args!("config.providers.{name}.param.allowlist.pattern"),
                            pattern,
                            e,
                        )
                    })?)
                }
                _ => {
                    return Err(crate::config::invalid_value(
                        class_key,
                        class,
                        format_args!("Class {class} could not be found. liteconnect has {FILE_CLASS}, {DIRECTORY_CLASS} and {ENV_CLASS}."),
                    ).into())
                }
            };
            providers.insert(name.to_string(), kind);
        }
        Ok(ConfigProviders { providers })
    }

    /// Whether no provider is configured.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// The names of the configured providers.
    pub fn names(&self) -> Vec<String> {
        self.providers.keys().cloned().collect()
    }

    /// A copy of `config` with every placeholder of a configured provider replaced.
    ///
    /// # Errors
    /// The message of the first placeholder that cannot be resolved, naming the config key.
    pub fn resolve(
        &self,
        config: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        self.resolve_with(config, &ProcessEnv)
    }

    /// [`ConfigProviders::resolve`] reading environment variables from `env`.
    ///
    /// # Errors
    /// See [`ConfigProviders::resolve`].
    pub fn resolve_with(
        &self,
        config: &BTreeMap<String, String>,
        env: &dyn Environment,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        if self.providers.is_empty() {
            return Ok(config.clone());
        }
        let mut files: BTreeMap<PathBuf, BTreeMap<String, String>> = BTreeMap::new();
        let mut out = BTreeMap::new();
        for (key, value) in config {
            let resolved = self.resolve_value(value, env, &mut files).map_err(|e| {
                ConfigError::Message(format!("{e} (in the value of configuration {key})"))
            })?;
            out.insert(key.clone(), resolved);
        }
        Ok(out)
    }

    fn resolve_value(
        &self,
        value: &str,
        env: &dyn Environment,
        files: &mut BTreeMap<PathBuf, BTreeMap<String, String>>,
    ) -> Result<String, ConfigError> {
        if !has_placeholder(value) {
            return Ok(value.to_string());
        }
        let mut out = String::with_capacity(value.len());
        let mut last = 0;
        for c in pattern().captures_iter(value) {
            let whole = c.get(0).expect("group 0");
            out.push_str(&value[last..whole.start()]);
            last = whole.end();
            let provider = &c[1];
            let path = c.get(3).map(|m| m.as_str());
            let key = &c[4];
            let Some(kind) = self.providers.get(provider) else {
                // Kafka leaves references to providers it does not have untouched.
                out.push_str(whole.as_str());
                continue;
            };
            out.push_str(&lookup(provider, kind, path, key, env, files)?);
        }
        out.push_str(&value[last..]);
        Ok(out)
    }
}

fn lookup(
    provider: &str,
    kind: &Kind,
    path: Option<&str>,
    key: &str,
    env: &dyn Environment,
    files: &mut BTreeMap<PathBuf, BTreeMap<String, String>>,
) -> Result<String, ConfigError> {
    match kind {
        Kind::Env(allow) => {
            if let Some(p) = path.filter(|p| !p.is_empty()) {
                return Err(format!(
                    "Path is not supported for EnvVarConfigProvider, invalid value '{p}'"
                )
                .into());
            }
            if !allow.is_match(key) {
                return Err(format!(
                    "The environment variable {key} is not allowed by config.providers.{provider}.param.allowlist.pattern"
                ).into());
            }
            env.var(key).ok_or_else(|| {
                ConfigError::Message(format!("The environment variable {key} is not set"))
            })
        }
        Kind::File(allowed) => {
            let (path, file) =
                allowed.resolve(path, provider, key, "file", "/path/to/file.properties")?;
            if !files.contains_key(&file) {
                let text = std::fs::read_to_string(&file).map_err(|e| {
                    ConfigError::Message(format!("Could not read properties from file {path}: {e}"))
                })?;
                let props = parse_properties(&text).map_err(|e| {
                    ConfigError::Message(format!("Could not read properties from file {path}: {e}"))
                })?;
                files.insert(file.clone(), props.into_iter().collect());
            }
            files[&file].get(key).cloned().ok_or_else(|| {
                ConfigError::Message(format!(
                    "The key {key} was not found in the properties file {path}"
                ))
            })
        }
        Kind::Directory(allowed) => {
            let (dir, dir_path) =
                allowed.resolve(path, provider, key, "directory", "/path/to/dir")?;
            if !dir_path.is_dir() {
                return Err(format!("The path {dir} is not a directory").into());
            }
            if key.contains('/') || key == ".." || key == "." {
                return Err(format!(
                    "Could not read file {key} in directory {dir}: not a file name"
                )
                .into());
            }
            let file = dir_path.join(key);
            if !file.is_file() {
                return Err(format!(
                    "Could not read file {} for property {key}: no such regular file",
                    file.display()
                )
                .into());
            }
            std::fs::read_to_string(&file).map_err(|e| {
                ConfigError::Message(format!(
                    "Could not read file {} for property {key}: {e}",
                    file.display()
                ))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::props;

    #[test]
    fn placeholder_syntax_is_kafkas() {
        assert_eq!(
            placeholders("${file:/etc/secrets/db.properties:password}"),
            vec![Placeholder {
                provider: "file".into(),
                path: Some("/etc/secrets/db.properties".into()),
                key: "password".into()
            }]
        );
        assert_eq!(
            placeholders("${env:HOME}"),
            vec![Placeholder {
                provider: "env".into(),
                path: None,
                key: "HOME".into()
            }]
        );
        assert_eq!(
            placeholders("${env::HOME}"),
            vec![Placeholder {
                provider: "env".into(),
                path: Some(String::new()),
                key: "HOME".into()
            }]
        );
        // The path ends at the first colon after the provider that leaves a key; the key takes the rest.
        assert_eq!(
            placeholders("${file:/a/b:c:d}")[0].path.as_deref(),
            Some("/a/b")
        );
        assert_eq!(placeholders("${file:/a/b:c:d}")[0].key, "c:d");
        assert_eq!(placeholders("x=${a:b}, y=${c:d:e}").len(), 2);
        assert!(!has_placeholder("${nocolon}"));
        assert!(!has_placeholder("$ {file:x}"));
        assert!(!has_placeholder("plain"));
    }

    #[test]
    fn providers_are_read_from_worker_keys() {
        let p = ConfigProviders::from_worker_props(&props(&[
            ("config.providers", "file, env,dir"),
            ("config.providers.file.class", FILE_CLASS),
            ("config.providers.env.class", "EnvVarConfigProvider"),
            ("config.providers.dir.class", DIRECTORY_CLASS),
        ]))
        .unwrap();
        assert_eq!(p.names(), vec!["dir", "env", "file"]);
        let e = ConfigProviders::from_worker_props(&props(&[("config.providers", "vault")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("config.providers.vault.class"), "{e}");
        let e = ConfigProviders::from_worker_props(&props(&[
            ("config.providers", "vault"),
            (
                "config.providers.vault.class",
                "com.example.VaultConfigProvider",
            ),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("could not be found"), "{e}");
        let e = ConfigProviders::from_worker_props(&props(&[
            ("config.providers", "file"),
            ("config.providers.file.class", FILE_CLASS),
            ("config.providers.file.param.allowed.paths", "relative/dir"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("absolute"), "{e}");
        assert!(ConfigProviders::from_worker_props(&BTreeMap::new())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn resolves_file_directory_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = dir.path().join("db.properties");
        std::fs::write(&secrets, "user=alice\npassword: s3cr=t\n").unwrap();
        std::fs::create_dir(dir.path().join("keys")).unwrap();
        std::fs::write(dir.path().join("keys").join("token"), "tok\n").unwrap();
        let p = ConfigProviders::from_worker_props(&props(&[
            ("config.providers", "file,env,directory"),
            ("config.providers.file.class", FILE_CLASS),
            ("config.providers.env.class", ENV_CLASS),
            ("config.providers.env.param.allowlist.pattern", "^APP_"),
            ("config.providers.directory.class", DIRECTORY_CLASS),
        ]))
        .unwrap();
        let env = props(&[("APP_NAME", "demo"), ("SECRET", "nope")]);
        let f = secrets.display().to_string();
        let d = dir.path().join("keys").display().to_string();
        let config = props(&[
            (
                "url",
                &format!("db://${{file:{f}:user}}:${{file:{f}:password}}@host"),
            ),
            ("name", "${env:APP_NAME}"),
            ("name2", "${env::APP_NAME}"),
            ("token", &format!("${{directory:{d}:token}}")),
            ("other", "${vault:secret/x:y}"),
            ("plain", "value"),
        ]);
        let r = p.resolve_with(&config, &env).unwrap();
        assert_eq!(r["url"], "db://alice:s3cr=t@host");
        assert_eq!(r["name"], "demo");
        assert_eq!(r["name2"], "demo");
        assert_eq!(r["token"], "tok\n");
        assert_eq!(r["other"], "${vault:secret/x:y}");
        assert_eq!(r["plain"], "value");

        for (value, expected) in [
            (
                "${env:SECRET}".to_string(),
                "not allowed by config.providers.env.param.allowlist.pattern",
            ),
            ("${env:APP_MISSING}".to_string(), "APP_MISSING is not set"),
            ("${env:/x:APP_NAME}".to_string(), "Path is not supported"),
            (format!("${{file:{f}:nope}}"), "The key nope was not found"),
            (
                "${file:/does/not/exist.properties:k}".to_string(),
                "Could not read properties from file /does/not/exist.properties",
            ),
            (
                format!("${{directory:{d}:missing}}"),
                "no such regular file",
            ),
            (
                format!("${{directory:{d}:../db.properties}}"),
                "not a file name",
            ),
        ] {
            let e = p
                .resolve_with(&props(&[("k", &value)]), &env)
                .unwrap_err()
                .to_string();
            assert!(e.contains(expected), "{value}: {e}");
            assert!(e.contains("configuration k"), "{e}");
        }
    }

    #[test]
    fn allowed_paths_confine_file_reads() {
        let dir = tempfile::tempdir().unwrap();
        let allowed = dir.path().join("allowed");
        std::fs::create_dir(&allowed).unwrap();
        std::fs::write(allowed.join("a.properties"), "k=v\n").unwrap();
        std::fs::write(dir.path().join("b.properties"), "k=w\n").unwrap();
        let p = ConfigProviders::from_worker_props(&props(&[
            ("config.providers", "file"),
            ("config.providers.file.class", FILE_CLASS),
            (
                "config.providers.file.param.allowed.paths",
                &allowed.display().to_string(),
            ),
        ]))
        .unwrap();
        let ok = format!("${{file:{}:k}}", allowed.join("a.properties").display());
        assert_eq!(p.resolve(&props(&[("x", &ok)])).unwrap()["x"], "v");
        let escape = format!("${{file:{}/../b.properties:k}}", allowed.display());
        let e = p
            .resolve(&props(&[("x", &escape)]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not allowed to be accessed"), "{e}");
    }
}
