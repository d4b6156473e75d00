//! `liteconnect export`: one `POST /connectors` file (config, state and offsets) per connector, named after
//! the connector so that a person finds it.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::endpoint::{Endpoint, RequestError};

/// File stems longer than this (in bytes) are shortened and given a hash suffix: most file systems take
/// 255 bytes per name.
const MAX_STEM: usize = 200;

/// Why a connector, or the whole export, could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The connectors could not be listed.
    #[error("Cannot list the connectors: {0}")]
    List(#[source] RequestError),
    /// The output directory could not be created.
    #[error("Cannot create {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A connector named on the command line does not exist.
    #[error("Connector {name} was not found on {from}")]
    NotFound {
        /// The connector's name.
        name: String,
        /// The worker read from (its REST URL).
        from: String,
    },
    /// A connector's config, status or offsets could not be read.
    #[error("Connector {name}: {source}")]
    Read {
        /// The connector's name.
        name: String,
        /// The underlying error.
        #[source]
        source: RequestError,
    },
    /// A connector's file could not be written.
    #[error("Connector {name}: cannot write {}: {source}", path.display())]
    Write {
        /// The connector's name.
        name: String,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// What an export did: the files written, and the connectors that could not be exported.
#[derive(Debug, Default)]
pub struct ExportReport {
    /// The files written, one per connector.
    pub written: Vec<PathBuf>,
    /// One error per connector that was not exported.
    pub failed: Vec<ExportError>,
}

/// The file name `export` gives a connector: the name itself, with only what a file name cannot hold
/// escaped as `%XX` (`/`, NUL, a leading `.`, and `%` itself, so that two names never share a file), and
/// names longer than 200 bytes cut with a hash of the whole name appended.
pub fn file_name(name: &str) -> String {
    let mut stem = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        match c {
            '/' | '\0' | '%' => stem.push_str(&format!("%{:02X}", c as u32)),
            '.' if i == 0 => stem.push_str("%2E"),
            _ => stem.push(c),
        }
    }
    if stem.len() > MAX_STEM {
        let mut cut = MAX_STEM - 17;
        while !stem.is_char_boundary(cut) {
            cut -= 1;
        }
        // Not in the middle of a `%XX` escape.
        if let Some(p) = stem[..cut].rfind('%').filter(|p| cut - p < 3) {
            cut = p;
        }
        stem = format!("{}-{:016x}", &stem[..cut], fnv1a64(name.as_bytes()));
    }
    stem + ".json"
}

/// FNV-1a: a stable hash, the same in every build and on every machine.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Writes one `POST /connectors` file per connector (with its offsets) into `dir`; a connector that fails
/// is reported in [`ExportReport::failed`] and the others are still written.
///
/// # Errors
/// The connectors could not be listed, or `dir` could not be created.
pub async fn export(
    from: &Endpoint,
    names: &[String],
    dir: &Path,
) -> Result<ExportReport, ExportError> {
    let names = if names.is_empty() {
        from.connectors().await.map_err(ExportError::List)?
    } else {
        names.to_vec()
    };
    std::fs::create_dir_all(dir).map_err(|source| ExportError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut report = ExportReport::default();
    for name in names {
        match export_one(from, &name, dir).await {
            Ok(path) => report.written.push(path),
            Err(e) => report.failed.push(e),
        }
    }
    Ok(report)
}

async fn export_one(from: &Endpoint, name: &str, dir: &Path) -> Result<PathBuf, ExportError> {
    let read = |source| ExportError::Read {
        name: name.to_string(),
        source,
    };
    let not_found = || ExportError::NotFound {
        name: name.to_string(),
        from: from.url().to_string(),
    };
    let config = from
        .config(name)
        .await
        .map_err(read)?
        .ok_or_else(not_found)?;
    let status = from
        .status(name)
        .await
        .map_err(read)?
        .ok_or_else(not_found)?;
    let offsets = from.offsets(name).await.map_err(read)?;
    let initial_state = match status.state.as_str() {
        "PAUSED" | "STOPPED" => status.state.as_str(),
        _ => "RUNNING",
    };
    let body =
        json!({"name": name, "config": config, "initial_state": initial_state, "offsets": offsets});
    let path = dir.join(file_name(name));
    let text = serde_json::to_string_pretty(&body).unwrap_or_default();
    std::fs::write(&path, text + "\n").map_err(|source| ExportError::Write {
        name: name.to_string(),
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_readable() {
        assert_eq!(file_name("src-p"), "src-p.json");
        assert_eq!(file_name("orders.v2 (eu)"), "orders.v2 (eu).json");
        assert_eq!(file_name("exp/one"), "exp%2Fone.json");
        assert_eq!(file_name(".hidden"), "%2Ehidden.json");
        assert_eq!(file_name(".."), "%2E..json");
        assert_eq!(file_name("50%"), "50%25.json");
        assert_eq!(file_name("a\0b"), "a%00b.json");
        assert_eq!(file_name("données"), "données.json");
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let long = "x".repeat(10_000);
        let a = file_name(&long);
        assert!(a.len() <= MAX_STEM + 5, "{}", a.len());
        assert!(a.starts_with("xxxx"));
        let mut other = long.clone();
        other.push('y');
        assert_ne!(a, file_name(&other));
        assert_eq!(a, file_name(&long), "stable");
        // Multi-byte characters and escapes are never cut in half.
        let wide = "é/".repeat(200);
        let w = file_name(&wide);
        assert!(w.len() <= MAX_STEM + 5);
        let stem = w.trim_end_matches(".json");
        let prefix = &stem[..stem.len() - 17];
        assert!(prefix.ends_with('é') || prefix.ends_with("%2F"), "{prefix}");
        // A name just at the limit is kept whole.
        assert_eq!(
            file_name(&"z".repeat(MAX_STEM)),
            format!("{}.json", "z".repeat(MAX_STEM))
        );
    }
}
