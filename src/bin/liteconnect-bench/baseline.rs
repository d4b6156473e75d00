//! Physical-limit baselines: rows of the log's shape into and out of a bare SQLite table, and a buffered
//! line copy.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use rusqlite::{params, Connection};

use crate::worker::TempDir;
use crate::{Res, Settings};

/// Inserts rows shaped like the log's into a bare SQLite table, 1,000 per transaction; returns seconds.
pub(crate) fn sqlite_insert_baseline(
    settings: &Settings,
    values: &[Vec<u8>],
    key: Option<&[u8]>,
    full_sync: bool,
) -> Res<f64> {
    let dir = TempDir::new(settings, "sqlite")?;
    let conn = Connection::open(dir.path().join("bare.db"))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(
        None,
        "synchronous",
        if full_sync { "FULL" } else { "NORMAL" },
    )?;
    conn.execute_batch(
        "CREATE TABLE records (topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
             timestamp_ms INTEGER, key BLOB, value BLOB, headers BLOB,
             PRIMARY KEY (topic_id, partition, offset)) WITHOUT ROWID;",
    )?;
    let started = Instant::now();
    let mut offset = 0i64;
    for chunk in values.chunks(1000) {
        let tx = conn.unchecked_transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO records (topic_id, partition, offset, timestamp_ms, key, value, headers) VALUES (1, 0, ?1, ?2, ?3, ?4, NULL)",
            )?;
            let now = 1_700_000_000_000i64;
            for v in chunk {
                insert.execute(params![offset, now, key, v])?;
                offset += 1;
            }
        }
        tx.commit()?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Reads every row of a bare table back in offset order; returns seconds.
pub(crate) fn sqlite_read_baseline(settings: &Settings, rows: usize) -> Res<f64> {
    let dir = TempDir::new(settings, "sqlite-read")?;
    let conn = Connection::open(dir.path().join("bare.db"))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.execute_batch(
        "CREATE TABLE records (topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
             timestamp_ms INTEGER, key BLOB, value BLOB, headers BLOB,
             PRIMARY KEY (topic_id, partition, offset)) WITHOUT ROWID;",
    )?;
    {
        let tx = conn.unchecked_transaction()?;
        {
            let mut insert =
                tx.prepare("INSERT INTO records VALUES (1, 0, ?1, 0, ?2, ?3, NULL)")?;
            for i in 0..rows as i64 {
                insert.execute(params![i, b"0".as_slice(), i.to_string().as_bytes()])?;
            }
        }
        tx.commit()?;
    }
    let started = Instant::now();
    let mut from = 0i64;
    let mut bytes = 0usize;
    let mut stmt = conn.prepare(
        "SELECT offset, timestamp_ms, key, value, headers FROM records WHERE topic_id = 1 AND partition = 0 AND offset >= ?1 ORDER BY offset LIMIT 2000",
    )?;
    loop {
        let mut n = 0;
        let mut rows_iter = stmt.query([from])?;
        while let Some(r) = rows_iter.next()? {
            let offset: i64 = r.get(0)?;
            let key: Option<Vec<u8>> = r.get(2)?;
            let value: Option<Vec<u8>> = r.get(3)?;
            bytes += key.map_or(0, |k| k.len()) + value.map_or(0, |v| v.len());
            from = offset + 1;
            n += 1;
        }
        if n == 0 {
            break;
        }
    }
    std::hint::black_box(bytes);
    Ok(started.elapsed().as_secs_f64())
}

/// Copies the file line by line through buffered I/O; returns seconds.
pub(crate) fn line_copy_baseline(settings: &Settings, input: &Path) -> Res<f64> {
    let dir = TempDir::new(settings, "copy")?;
    let started = Instant::now();
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(input)?);
    let mut writer =
        BufWriter::with_capacity(64 * 1024, File::create(dir.path().join("copy.txt"))?);
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        writer.write_all(&line)?;
    }
    writer.flush()?;
    Ok(started.elapsed().as_secs_f64())
}

pub(crate) fn read_lines(input: &Path) -> Res<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for line in BufReader::new(File::open(input)?).split(b'\n') {
        out.push(line?);
    }
    Ok(out)
}
