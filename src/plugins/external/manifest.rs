//! Plugin directories on `plugin.path` and their manifests (`liteconnect-plugin.json`): which classes a
//! plugin provides, of which kind and version, and the command that runs them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::process::ProgramSpec;
use crate::plugins::PluginKind;

/// The manifest's file name.
pub const MANIFEST: &str = "liteconnect-plugin.json";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    #[allow(dead_code)]
    name: Option<String>,
    plugins: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    class: String,
    #[serde(rename = "type")]
    kind: String,
    version: String,
    command: Vec<String>,
}

/// The worker's limits on plugin programs.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// `plugin.request.timeout.ms`.
    pub request: std::time::Duration,
    /// `task.shutdown.graceful.timeout.ms`.
    pub grace: std::time::Duration,
}

/// One class a manifest provides.
#[derive(Clone, Debug)]
pub struct Discovered {
    /// The fully qualified class name.
    pub class: String,
    /// Source or sink.
    pub kind: PluginKind,
    /// Its version.
    pub version: String,
    /// How to run it.
    pub spec: ProgramSpec,
    /// The manifest it came from.
    pub manifest: PathBuf,
}

/// A manifest (or one class of it) left out, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The manifest file (or the directory that could not be read).
    pub file: PathBuf,
    /// Why it is left out.
    pub reason: String,
}

/// The manifests under `paths`: each directory listed is a plugin (it holds a manifest) or holds plugin
/// directories, as Kafka's `plugin.path` lists directories of plugins.
fn manifests(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Problem>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for dir in paths {
        if dir.join(MANIFEST).is_file() {
            found.push(dir.join(MANIFEST));
            continue;
        }
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                let mut inner: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path().join(MANIFEST))
                    .filter(|m| m.is_file())
                    .collect();
                inner.sort();
                found.extend(inner);
            }
            Err(e) => problems.push(Problem {
                file: dir.clone(),
                reason: format!("the plugin.path directory cannot be read: {e}"),
            }),
        }
    }
    (found, problems)
}

fn kind_of(name: &str) -> Result<PluginKind, String> {
    match name {
        "source" => Ok(PluginKind::Source),
        "sink" => Ok(PluginKind::Sink),
        "transformation" => Ok(PluginKind::Transformation),
        "predicate" => Ok(PluginKind::Predicate),
        _ => Err(format!(
            "type \"{name}\" is not one of source, sink, transformation, predicate"
        )),
    }
}

/// Where the command's program is: a path with a `/` is inside the plugin's directory, a bare name is
/// looked up on `PATH` (`python3`).
fn program(dir: &Path, name: &str) -> Result<PathBuf, String> {
    if name.contains('/') {
        let path = dir.join(name);
        let real = path
            .canonicalize()
            .map_err(|_| format!("the command {name} does not exist"))?;
        let home = dir
            .canonicalize()
            .map_err(|e| format!("the plugin directory cannot be read: {e}"))?;
        if !real.starts_with(&home) {
            return Err(format!(
                "the command {name} is outside the plugin's directory"
            ));
        }
        if !real.is_file() {
            return Err(format!("the command {name} is not a file"));
        }
        return Ok(real);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("the command {name} is not found on PATH"))
}

fn entry(
    dir: &Path,
    e: Entry,
    limits: Limits,
) -> Result<(String, PluginKind, String, ProgramSpec), String> {
    if e.class.trim().is_empty() || e.class.chars().any(char::is_whitespace) {
        return Err(format!(
            "the class name \"{}\" is empty or holds spaces",
            e.class
        ));
    }
    let kind = kind_of(&e.kind).map_err(|r| format!("{}: {r}", e.class))?;
    if e.version.trim().is_empty() {
        return Err(format!("{}: the version is empty", e.class));
    }
    let (first, args) = e
        .command
        .split_first()
        .ok_or_else(|| format!("{}: the command is empty", e.class))?;
    let program = program(dir, first).map_err(|r| format!("{}: {r}", e.class))?;
    let spec = ProgramSpec {
        program,
        args: args.to_vec(),
        dir: dir.to_path_buf(),
        timeout: limits.request,
        grace: limits.grace,
    };
    Ok((e.class, kind, e.version, spec))
}

/// Reads one manifest: its classes, or why it is left out whole (a manifest that does not parse, or
/// one of whose classes is invalid: a plugin is installed complete or not at all).
fn read(file: &Path, limits: Limits) -> Result<Vec<Discovered>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot be read: {e}"))?;
    let parsed: ManifestFile =
        serde_json::from_str(&text).map_err(|e| format!("is not a valid manifest: {e}"))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    if parsed.plugins.is_empty() {
        return Err("lists no plugins".into());
    }
    parsed
        .plugins
        .into_iter()
        .map(|e| {
            let (class, kind, version, spec) = entry(dir, e, limits)?;
            Ok(Discovered {
                class,
                kind,
                version,
                spec,
                manifest: file.to_path_buf(),
            })
        })
        .collect()
}

/// Every valid plugin class under `paths`, and every manifest left out with why: one that does not
/// parse or has an invalid class, or a class that `builtin` says is built in or that an earlier manifest
/// provides.
pub fn discover(
    paths: &[PathBuf],
    limits: Limits,
    builtin: &dyn Fn(&str) -> bool,
) -> (Vec<Discovered>, Vec<Problem>) {
    let (files, mut problems) = manifests(paths);
    let mut found: Vec<Discovered> = Vec::new();
    // Who provides each class: its kind, and each version with its manifest (KIP-891: several versions
    // of one class may be installed, each once).
    let mut owners: BTreeMap<String, (PluginKind, BTreeMap<String, PathBuf>)> = BTreeMap::new();
    for file in files {
        let classes = match read(&file, limits) {
            Ok(c) => c,
            Err(reason) => {
                problems.push(Problem { file, reason });
                continue;
            }
        };
        let clash = classes.iter().find_map(|d| {
            if builtin(&d.class) {
                return Some(format!("{} clashes with a built-in plugin", d.class));
            }
            let (kind, versions) = owners.get(&d.class)?;
            if *kind != d.kind {
                let other = versions.values().next()?;
                return Some(format!(
                    "{} is a {} here but a {} in {}",
                    d.class,
                    d.kind.as_str(),
                    kind.as_str(),
                    other.display()
                ));
            }
            let same = |(v, _): &(&String, &PathBuf)| {
                super::version::compare(v, &d.version) == std::cmp::Ordering::Equal
            };
            versions.iter().find(same).map(|(_, other)| {
                format!(
                    "{} {} is already provided by {}",
                    d.class,
                    d.version,
                    other.display()
                )
            })
        });
        if let Some(reason) = clash {
            problems.push(Problem { file, reason });
            continue;
        }
        for d in &classes {
            owners
                .entry(d.class.clone())
                .or_insert_with(|| (d.kind, BTreeMap::new()))
                .1
                .insert(d.version.clone(), file.clone());
        }
        found.extend(classes);
    }
    (found, problems)
}
