//! The single-worker guard: OS advisory locks (`flock`) held for as long as the store is open.
//!
//! Comparing paths is not enough: a symlink, a hard link or `dir/../db` all name the same database. Two
//! locks close every such door:
//! - `<canonical path>.lock`, beside the file the path resolves to (symlinks and `..` resolved), holding the
//!   pid of the worker that owns it, so the refusal can name the holder;
//! - the database file itself, which is the same inode under every name (hard links too).
//!
//! `flock` locks are independent of the POSIX record locks SQLite takes on the same file, so SQLite's own
//! locking is unaffected. Closing a descriptor of the database file would release this process's POSIX
//! locks on it, so the guard is dropped only after both SQLite connections are closed.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::StorageError;

/// The held locks; dropping it releases them.
#[derive(Debug)]
pub(crate) struct StoreLock {
    /// `<canonical>.lock`, locked, with our pid in it.
    _lock_file: File,
    /// The database file, locked.
    _database: File,
}

/// The path `path` resolves to: symlinks and `..` resolved, also when the file does not exist yet.
pub(super) fn canonical(path: &Path) -> Result<PathBuf, StorageError> {
    let cannot = |e: std::io::Error| {
        StorageError::Incompatible(format!("Cannot resolve the path {}: {e}", path.display()))
    };
    if path.exists() {
        return std::fs::canonicalize(path).map_err(cannot);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        StorageError::Incompatible(format!("{} does not name a file", path.display()))
    })?;
    Ok(std::fs::canonicalize(parent).map_err(cannot)?.join(name))
}

/// Takes both locks for the database at `canonical` (see [`canonical`]), creating the database file (empty)
/// and the lock file when they do not exist.
///
/// # Errors
/// [`StorageError::Locked`] naming the file and the holder's pid when another process holds either lock.
pub(super) fn acquire(canonical: &Path) -> Result<StoreLock, StorageError> {
    let mut lock_path = canonical.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock_path = PathBuf::from(lock_path);
    let mut lock_file = open(&lock_path)?;
    if !try_lock(&lock_file, &lock_path)? {
        let holder = read_pid(&mut lock_file).or_else(|| flock_holder(&lock_file));
        return Err(locked(canonical, holder));
    }
    let pid = std::process::id();
    let written = lock_file
        .set_len(0)
        .and_then(|()| lock_file.rewind())
        .and_then(|()| writeln!(lock_file, "{pid}"));
    if let Err(e) = written {
        tracing::warn!(error = %e, file = %lock_path.display(), "Could not write the pid into the lock file.");
    }
    // flock needs no write access; a read-only database is refused later, with SQLite's own words.
    let database = match open(canonical) {
        Err(_) if canonical.exists() => File::open(canonical).map_err(|e| {
            StorageError::Incompatible(format!("Cannot open {}: {e}", canonical.display()))
        })?,
        other => other?,
    };
    if !try_lock(&database, canonical)? {
        // Another name for the same file (a hard link): its lock file is elsewhere, so ask the kernel.
        return Err(locked(canonical, flock_holder(&database)));
    }
    Ok(StoreLock {
        _lock_file: lock_file,
        _database: database,
    })
}

fn locked(path: &Path, holder: Option<u32>) -> StorageError {
    StorageError::Locked {
        path: path.display().to_string(),
        holder: match holder {
            Some(pid) => format!("process {pid}"),
            None => "a process whose id could not be read".into(),
        },
    }
}

fn open(path: &Path) -> Result<File, StorageError> {
    File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| StorageError::Incompatible(format!("Cannot open {}: {e}", path.display())))
}

/// Locks `file` exclusively without waiting; false when another open file description holds it.
fn try_lock(file: &File, path: &Path) -> Result<bool, StorageError> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(StorageError::Incompatible(format!(
            "Cannot lock {}: {e}",
            path.display()
        ))),
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The pid holding a `flock` on `file`, from Linux's `/proc/locks` (None elsewhere or when not found).
fn flock_holder(file: &File) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        let dev = meta.dev();
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
        let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
        // The kernel builds /proc/locks in pieces while other processes take and drop locks, so one read
        // can miss a line: read it a few times.
        (0..5).find_map(|_| {
            let locks = std::fs::read_to_string("/proc/locks").ok()?;
            holder_in(&locks, &id)
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// The pid of the `flock` on the file `id` (`major:minor:inode`, as the kernel prints it) in the text of
/// `/proc/locks`.
#[cfg(target_os = "linux")]
fn holder_in(locks: &str, id: &str) -> Option<u32> {
    // "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF": type, pid, then major:minor:inode.
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let is_flock = fields.get(1) == Some(&"FLOCK");
        (is_flock && fields.get(5) == Some(&id))
            .then(|| fields.get(4)?.parse().ok())
            .flatten()
    })
}
