//! Finding the files to read (pattern, task partition, processing flag, minimum age, sort order) and
//! cleaning them up afterwards (NONE, DELETE, MOVE, MOVEBYDATE; `error.path` with a sidecar file).

use std::cmp::Ordering;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::config::{CleanupPolicy, SpoolConfig};

/// The sidecar written next to a file moved to `error.path`: the file name with this appended.
pub const ERROR_SIDECAR_SUFFIX: &str = ".error.txt";

/// A file found in `input.path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its name.
    pub name: String,
    /// Its directory relative to `input.path` when found in a sub-directory.
    pub relative: Option<PathBuf>,
    /// Its size in bytes when found.
    pub length: u64,
    /// Its modification time in epoch milliseconds when found.
    pub last_modified: i64,
}

impl InputFile {
    /// The file's processing flag: its name with `processing.file.extension` appended, next to it.
    pub fn processing_flag(&self, extension: &str) -> PathBuf {
        self.path
            .with_file_name(format!("{}{extension}", self.name))
    }

    /// Guava's `Files.getNameWithoutExtension`: the name up to its last dot.
    pub fn name_without_extension(&self) -> &str {
        match self.name.rfind('.') {
            Some(i) => &self.name[..i],
            None => &self.name,
        }
    }

    /// The name of the directory holding the file.
    pub fn parent_dir_name(&self) -> Option<String> {
        self.path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
    }
}

fn millis(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// Guava's `Hashing.adler32().hashUnencodedChars(name).asInt()`: Adler-32 over the UTF-16 code units,
/// each as two bytes, low byte first.
fn adler32_of_chars(name: &str) -> i32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for unit in name.encode_utf16() {
        for byte in unit.to_le_bytes() {
            a = (a + byte as u32) % MOD;
            b = (b + a) % MOD;
        }
    }
    ((b << 16) | a) as i32
}

/// The original's `ByName` partitioner: which task reads a file.
pub fn task_of(name: &str, task_count: u32) -> u32 {
    if task_count <= 1 {
        return 0;
    }
    adler32_of_chars(name).unsigned_abs() % task_count
}

/// Every regular file under `dir` (and its sub-directories when `recursive`).
fn walk(dir: &Path, recursive: bool, out: &mut Vec<(PathBuf, fs::Metadata)>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if recursive {
                // A sub-directory vanishing while walked is not an error of the input path.
                let _ = walk(&entry.path(), true, out);
            }
        } else if meta.is_file() {
            out.push((entry.path(), meta));
        }
    }
    Ok(())
}

/// This task's files in `input.path`, ready to read, in `files.sort.attributes` order. Files with a
/// processing flag, and the flags themselves, are left out; so are files younger than
/// `file.minimum.age.ms`.
///
/// # Errors
/// When `input.path` cannot be listed (absent, unreadable).
pub fn list(config: &SpoolConfig, now_ms: i64) -> io::Result<Vec<InputFile>> {
    let mut found = Vec::new();
    walk(&config.input_path, config.walk_recursively, &mut found)?;
    let ext = &config.processing_extension;
    let mut files: Vec<InputFile> = found
        .into_iter()
        .filter_map(|(path, meta)| {
            let name = path.file_name()?.to_string_lossy().into_owned();
            let relative = path
                .parent()
                .and_then(|p| p.strip_prefix(&config.input_path).ok())
                .filter(|r| !r.as_os_str().is_empty())
                .map(Path::to_path_buf);
            Some(InputFile {
                name,
                relative,
                length: meta.len(),
                last_modified: millis(&meta),
                path,
            })
        })
        .filter(|f| !f.name.ends_with(ext.as_str()) && config.pattern.is_match(&f.name))
        .filter(|f| task_of(&f.name, config.task_count) == config.task_index)
        .filter(|f| !f.processing_flag(ext).exists())
        .filter(|f| now_ms - f.last_modified >= config.minimum_age_ms)
        .collect();
    files.sort_by(|a, b| compare(&config.sort, a, b));
    Ok(files)
}

fn compare(attributes: &[String], a: &InputFile, b: &InputFile) -> Ordering {
    attributes
        .iter()
        .map(|attr| match attr.as_str() {
            "NameDesc" => b.name.cmp(&a.name),
            "LengthAsc" => a.length.cmp(&b.length),
            "LengthDesc" => b.length.cmp(&a.length),
            "LastModifiedAsc" => a.last_modified.cmp(&b.last_modified),
            "LastModifiedDesc" => b.last_modified.cmp(&a.last_modified),
            _ => a.name.cmp(&b.name),
        })
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Removes the processing flags of this task's files: a flag left by a task that was killed marks no
/// reader now (the files of a task are read by that task only).
pub fn remove_stale_flags(config: &SpoolConfig) {
    let mut found = Vec::new();
    if walk(&config.input_path, config.walk_recursively, &mut found).is_err() {
        return;
    }
    let ext = config.processing_extension.as_str();
    for (path, _) in found {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(stem) = name.as_deref().and_then(|n| n.strip_suffix(ext)) else {
            continue;
        };
        if config.pattern.is_match(stem) && task_of(stem, config.task_count) == config.task_index {
            tracing::info!(flag = %path.display(), "Removing a processing flag left by an earlier run.");
            let _ = fs::remove_file(&path);
        }
    }
}

/// Moves `from` to `to`, copying when a rename cannot cross file systems.
fn move_file(from: &Path, to: &Path) -> io::Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(e),
        Err(_) => {
            fs::copy(from, to)?;
            fs::remove_file(from)
        }
    }
}

/// The directory under `base` a file goes to, keeping its sub-directory.
fn target_dir(base: &Path, file: &InputFile) -> PathBuf {
    match &file.relative {
        Some(r) => base.join(r),
        None => base.to_path_buf(),
    }
}

/// Cleans up a file all of whose records are committed, as `cleanup.policy` says.
///
/// # Errors
/// When the file could not be moved or deleted.
pub fn finish(config: &SpoolConfig, file: &InputFile) -> io::Result<()> {
    let result = match config.cleanup {
        CleanupPolicy::None => Ok(()),
        CleanupPolicy::Delete => match fs::remove_file(&file.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        CleanupPolicy::Move | CleanupPolicy::MoveByDate => {
            let mut base = config.finished_path.clone().unwrap_or_default();
            if config.cleanup == CleanupPolicy::MoveByDate {
                base = base.join(date_of(file.last_modified));
            }
            let to = target_dir(&base, file).join(&file.name);
            tracing::info!(from = %file.path.display(), to = %to.display(), "Moving a finished file.");
            move_present(&file.path, &to)
        }
    };
    remove_flag_and_dirs(config, file);
    result
}

/// Moves a file that could not be read to `error.path`, with a sidecar naming the line and the error.
///
/// # Errors
/// When the file or its sidecar could not be written.
pub fn fail(config: &SpoolConfig, file: &InputFile, message: &str) -> io::Result<()> {
    let dir = target_dir(&config.error_path, file);
    let to = dir.join(&file.name);
    tracing::error!(from = %file.path.display(), to = %to.display(), %message, "Error during processing; moving the file to the error path.");
    fs::create_dir_all(&dir)?;
    fs::write(
        dir.join(format!("{}{ERROR_SIDECAR_SUFFIX}", file.name)),
        format!("{message}\n"),
    )?;
    let result = move_present(&file.path, &to);
    remove_flag_and_dirs(config, file);
    result
}

/// Moves `from` unless it is gone already (a cleanup repeated after a restart).
fn move_present(from: &Path, to: &Path) -> io::Result<()> {
    match move_file(from, to) {
        Err(e) if e.kind() == io::ErrorKind::NotFound && !from.exists() => Ok(()),
        other => other,
    }
}

fn remove_flag_and_dirs(config: &SpoolConfig, file: &InputFile) {
    let _ = fs::remove_file(file.processing_flag(&config.processing_extension));
    if config.maintain_relative_path || config.cleanup == CleanupPolicy::None {
        return;
    }
    // Empty sub-directories the file was found in go too, deepest first.
    let mut dir = file.path.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        if d == config.input_path || !d.starts_with(&config.input_path) {
            break;
        }
        if fs::remove_dir(&d).is_err() {
            break;
        }
        dir = d.parent().map(Path::to_path_buf);
    }
}

/// `yyyy-MM-dd` of an epoch-milliseconds time, in UTC.
fn date_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "1970-01-01".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_matches_guavas_hash_of_chars() {
        // Adler-32 of the bytes 'a',0,'b',0: a = 1+97+0+98+0 = 196, b = 98+98+196+196 = 588.
        assert_eq!(adler32_of_chars("ab"), (588 << 16) | 196);
        assert_eq!(task_of("anything", 1), 0);
        let spread: std::collections::BTreeSet<u32> =
            (0..50).map(|i| task_of(&format!("f{i}.csv"), 3)).collect();
        assert_eq!(spread.len(), 3, "files spread over every task");
    }

    #[test]
    fn names_and_dates() {
        let f = InputFile {
            path: PathBuf::from("/in/sub/data.2024.csv"),
            name: "data.2024.csv".into(),
            relative: Some(PathBuf::from("sub")),
            length: 1,
            last_modified: 0,
        };
        assert_eq!(f.name_without_extension(), "data.2024");
        assert_eq!(f.parent_dir_name().as_deref(), Some("sub"));
        assert_eq!(
            f.processing_flag(".PROCESSING"),
            PathBuf::from("/in/sub/data.2024.csv.PROCESSING")
        );
        assert_eq!(date_of(86_400_000 * 365), "1971-01-01");
    }
}
