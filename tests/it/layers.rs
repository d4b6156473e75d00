//! The layers of `src/` (docs/architecture.md, "The layers"): a module may use only modules of its own
//! layer or below. This test reads every `crate::` path of `src/` (outside comments and test modules) and
//! fails naming the file and the line of one that reaches a layer above. The imports that still run up
//! are listed in [`KNOWN`], each with its reason as "Where the code still differs" gives it; an entry
//! that is no longer needed fails the test too, so the list only shrinks.

use std::path::{Path, PathBuf};

/// The layer of a top-level module of `src/` (named as in a `crate::` path), bottom up; `None` for the
/// modules beside the layers (`error`, `logging`, `client`, `test_support`). `connectors` is the
/// families' layer; its contract is one below.
fn layer_of_module(top: &str) -> Option<u8> {
    Some(match top {
        "data" | "record" | "model" => 1,
        "storage" => 2,
        "config" => 4,
        "converters" | "transforms" => 5,
        "connectors" => 6,
        "plugins" => 7,
        "status" => 8,
        "metrics" => 9,
        "worker" => 10,
        "tryout" => 11,
        "herder" => 12,
        "rest" | "security" | "kafka" => 13,
        "cli" => 14,
        "lib" => 15,
        "main" => 16,
        _ => return None,
    })
}

/// The connector contract's layer: `connectors/mod.rs` and the capitalised items of `connectors::`.
const CONTRACT: u8 = 3;

/// The layer of a file of `src/` (its path under `src/`).
fn layer_of_file(relative: &str) -> Option<u8> {
    if relative == "connectors/mod.rs" {
        return Some(CONTRACT);
    }
    let top = relative.split('/').next().unwrap_or_default();
    layer_of_module(top.strip_suffix(".rs").unwrap_or(top))
}

/// The layer of what a `crate::` path names: `connectors::` items with a capitalised name (the contract:
/// `ConnectorPlugin`, `Props`, `TaskError`, ...) are the contract's layer, the families under it their own.
fn layer_of_path(path: &str) -> Option<(u8, &str)> {
    let mut parts = path.split("::");
    let top = parts.next()?;
    let layer = match (top, parts.next()) {
        ("connectors", Some(next)) if next.starts_with(|c: char| c.is_ascii_lowercase()) => 6,
        ("connectors", _) => CONTRACT,
        // A path into `lib.rs` or `main.rs` is not written with `crate::`.
        ("lib" | "main", _) => return None,
        _ => layer_of_module(top)?,
    };
    Some((layer, top))
}

/// Imports that still run up a layer: (the file or directory under `src/`, the module it reaches, why).
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "connectors/mod.rs",
        "config",
        "the connector contract takes ConfigDef and ConnectorType from config",
    ),
    (
        "connectors/http/webhook/",
        "security",
        "the webhook source serves its own listener with the REST layer's TLS and auth",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // Test-only modules (`tests/` beside the code) may use anything.
            if path.file_name().is_some_and(|n| n != "tests" && n != "bin") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// Every upward `crate::` path in `src/`: (file, line number, module reached, file layer, path layer).
fn upward_imports(src: &Path) -> Vec<(String, usize, String, u8, u8)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let Some(own) = layer_of_file(&relative) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        // Unit tests sit at the end of a file, after `#[cfg(test)] mod tests`.
        let code = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        for (n, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            let line = line.split("//").next().unwrap_or_default();
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(rest.len());
                if let Some((layer, top)) = layer_of_path(&rest[..end]) {
                    if layer > own {
                        found.push((relative.clone(), n + 1, top.to_string(), own, layer));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_one_above_its_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward_imports(&src);
    assert!(
        !found.is_empty() || KNOWN.is_empty(),
        "the scan found no import at all"
    );
    let known = |file: &str, module: &str| {
        KNOWN
            .iter()
            .any(|(prefix, m, _)| *m == module && file.starts_with(prefix))
    };
    let new: Vec<String> = found
        .iter()
        .filter(|(file, _, module, _, _)| !known(file, module))
        .map(|(file, line, module, own, layer)| {
            format!("src/{file}:{line}: layer {own} imports crate::{module} (layer {layer})")
        })
        .collect();
    assert!(
        new.is_empty(),
        "imports that run up a layer (docs/architecture.md, \"The layers\"):\n{}",
        new.join("\n")
    );
    let stale: Vec<String> = KNOWN
        .iter()
        .filter(|(prefix, module, _)| {
            !found
                .iter()
                .any(|(file, _, m, _, _)| m == module && file.starts_with(prefix))
        })
        .map(|(prefix, module, _)| format!("src/{prefix} → {module}"))
        .collect();
    assert!(
        stale.is_empty(),
        "no longer needed, remove from KNOWN: {}",
        stale.join(", ")
    );
}
