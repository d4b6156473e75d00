//! Checks made when the database is opened (is it ours, can it be written) and by the health probe, and
//! the connection settings.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::{embedded, StorageError, StoreOptions, Synchronous};

/// Refuses a database this process cannot write (a read-only file or directory): SQLite opens such a file
/// read-only without a word, and every later write would fail. The probe rewrites one row in a transaction.
pub(super) fn check_writable(conn: &Connection, path: &Path) -> Result<(), StorageError> {
    let unwritable = |cause: String| StorageError::Unwritable {
        path: path.display().to_string(),
        cause,
    };
    if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
        return Err(unwritable(
            "SQLite opened it read-only (the file or its directory is not writable by this process)"
                .into(),
        ));
    }
    conn.execute_batch(
        "BEGIN IMMEDIATE; UPDATE worker_identity SET created_ms = created_ms WHERE id = 1; COMMIT",
    )
    .map_err(|e| {
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        unwritable(e.to_string())
    })
}

/// Reads the schema and the identity row on a new read-only connection (no cached pages), so a file
/// broken on disk is noticed.
pub(super) fn probe_read(canonical: &Path) -> Result<(), StorageError> {
    let conn = Connection::open_with_flags(
        canonical,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    conn.query_row("SELECT kafka_cluster_id FROM worker_identity", [], |r| {
        r.get::<_, String>(0)
    })?;
    Ok(())
}

/// Refuses, without modifying it, a file that is not a liteconnect database or that a newer version wrote.
pub(super) fn check_compatible(path: &Path) -> Result<(), StorageError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.len() == 0 {
        return Ok(());
    }
    let conn =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|e| {
            StorageError::Incompatible(format!(
                "{} cannot be opened as a database: {e}",
                path.display()
            ))
        })?;
    let not_ours = || {
        StorageError::Incompatible(format!(
            "{} is not a liteconnect database; it was left unchanged. Point storage.file at a new or liteconnect file.",
            path.display()
        ))
    };
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|_| not_ours())?;
    if tables.is_empty() {
        return Ok(());
    }
    if !tables.iter().any(|t| t == "refinery_schema_history")
        || !tables.iter().any(|t| t == "connector_configs")
    {
        return Err(not_ours());
    }
    let newest: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM refinery_schema_history",
            [],
            |r| r.get(0),
        )
        .map_err(|_| not_ours())?;
    let known = embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0);
    if newest > known {
        return Err(StorageError::Incompatible(format!(
            "{} was written by a newer liteconnect (schema version {newest}; this one knows up to {known}); it was left unchanged.",
            path.display()
        )));
    }
    Ok(())
}

pub(super) fn configure(conn: &Connection, options: &StoreOptions) -> Result<(), StorageError> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let sync = match options.synchronous {
        Synchronous::Normal => "NORMAL",
        Synchronous::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", sync)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Room for every statement the writer runs (the log's and the control plane's), so none is parsed
    // again after another pushed it out of rusqlite's default 16.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    apply_max_bytes(conn, options.max_bytes)
}

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 64;

pub(super) fn apply_max_bytes(
    conn: &Connection,
    max_bytes: Option<u64>,
) -> Result<(), StorageError> {
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    let pages = match max_bytes {
        Some(b) => {
            // The write-ahead log counts against the cap too: a quarter of it (at most 4 MiB) is kept for
            // the log, which is checkpointed when half of that is used and truncated back to it after.
            let b = b as i64;
            let reserve = (b / 4).min(4 << 20).max(page_size * 8);
            let checkpoint_pages = (reserve / 2 / page_size).max(4);
            conn.query_row(
                &format!("PRAGMA wal_autocheckpoint = {checkpoint_pages}"),
                [],
                |_| Ok(()),
            )?;
            conn.query_row(
                &format!("PRAGMA journal_size_limit = {reserve}"),
                [],
                |_| Ok(()),
            )?;
            ((b - reserve) / page_size).max(1)
        }
        None => 4_294_967_294, // SQLite's own upper bound
    };
    conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
    Ok(())
}
