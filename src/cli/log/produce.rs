//! `liteconnect produce`: appends the lines of stdin to a topic, through a running worker's REST API or,
//! with `--db`, straight into a stopped worker's database (under the lock the worker takes, so never beside
//! a running worker). Either way a record is stored as REST produce stores a binary record: the line's
//! bytes as they are (without the line end), the time of the append, no headers, the partition chosen by
//! key hash.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use clap::Args;

use super::rest::Rest;
use super::Remote;
use crate::storage::{AppendBatch, ProducedRecord, StorageError, Store, StoreOptions, Synchronous};

/// The most lines sent in one request or one transaction.
const MAX_BATCH: usize = 500;

/// `liteconnect produce`.
#[derive(Debug, Args)]
pub struct ProduceArgs {
    /// The topic to append to (created with one partition when it does not exist).
    pub topic: String,
    /// Split each line at the first SEP into key and value (default: the line is the value, the key null).
    #[arg(long, value_name = "SEP")]
    pub key_separator: Option<String>,
    /// Append to the database file of a stopped worker instead of going through its REST API.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "config", "user"])]
    pub db: Option<PathBuf>,
    /// The worker to ask (`--url`, `--config`, `--user`).
    #[command(flatten)]
    pub remote: Remote,
}

/// A record's key and value.
type KeyValue = (Option<Vec<u8>>, Vec<u8>);

/// Where the records go.
enum Target {
    Rest(Rest),
    Db(Store),
}

impl Target {
    fn send(&self, topic: &str, records: Vec<KeyValue>) -> Result<usize, String> {
        match self {
            Target::Rest(rest) => rest.produce(topic, &records),
            Target::Db(store) => {
                let timestamp = Some(crate::model::now_ms());
                let records = records
                    .into_iter()
                    .map(|(key, value)| ProducedRecord {
                        topic: topic.to_string(),
                        partition: None,
                        timestamp,
                        key,
                        value: Some(value),
                        headers: Vec::new(),
                    })
                    .collect();
                let batch = AppendBatch {
                    records,
                    ..AppendBatch::default()
                };
                store
                    .append_blocking(batch)
                    .map(|assigned| assigned.len())
                    .map_err(|e| e.to_string())
            }
        }
    }
}

/// Opens a stopped worker's database for appending, refused while another process holds it.
fn open_db(path: &Path) -> Result<Store, String> {
    if !path.is_file() {
        return Err(format!("There is no database at {}.", path.display()));
    }
    let options = StoreOptions {
        path: path.to_path_buf(),
        synchronous: Synchronous::Full,
        max_bytes: None,
        buffer: None,
    };
    Store::open(&options).map_err(|e| match e {
        StorageError::Locked { .. } => format!(
            "{e} Produce through the running worker's REST API instead (without --db), or stop it first."
        ),
        e => e.to_string(),
    })
}

pub(super) fn run(args: &ProduceArgs) -> Result<(), String> {
    crate::rest::topics::check_topic_name(&args.topic).map_err(|e| e.to_string())?;
    if args.key_separator.as_deref() == Some("") {
        return Err("--key-separator must not be empty".into());
    }
    let target = match &args.db {
        Some(path) => Target::Db(open_db(path)?),
        None => Target::Rest(args.remote.client()?),
    };
    let mut produced = 0usize;
    let result = send_all(&target, args, &mut produced);
    if let Target::Db(store) = target {
        futures::executor::block_on(store.close());
    }
    eprintln!("{produced} record(s) produced to topic {}", args.topic);
    result
}

/// Sends stdin's lines in batches, counting what was acknowledged in `produced`.
fn send_all(target: &Target, args: &ProduceArgs, produced: &mut usize) -> Result<(), String> {
    let lines = stdin_lines();
    let mut number = 0usize;
    while let Some(batch) = next_batch(&lines) {
        let mut records = Vec::with_capacity(batch.len());
        let mut failed = None;
        for line in batch {
            number += 1;
            let record = line
                .map_err(|e| format!("Reading stdin failed: {e}"))
                .and_then(|line| split(line, args.key_separator.as_deref(), number));
            match record {
                Ok(r) => records.push(r),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        // The lines before a bad one are produced.
        if !records.is_empty() {
            *produced += target.send(&args.topic, records)?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// Reads stdin on its own thread, one line (its bytes, without the line end) at a time.
fn stdin_lines() -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    let (tx, rx) = mpsc::sync_channel(MAX_BATCH * 2);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            let mut line = Vec::new();
            match stdin.read_until(b'\n', &mut line) {
                Ok(0) => return,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                        if line.last() == Some(&b'\r') {
                            line.pop();
                        }
                    }
                    if tx.send(Ok(line)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    });
    rx
}

/// The next line, waiting for it, and the lines already waiting after it (so a line typed by hand goes
/// out at once and piped lines go out in batches); `None` at the end of stdin.
fn next_batch<T>(lines: &mpsc::Receiver<T>) -> Option<Vec<T>> {
    let first = lines.recv().ok()?;
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match lines.try_recv() {
            Ok(line) => batch.push(line),
            Err(_) => break,
        }
    }
    Some(batch)
}

/// A line as key and value: split at the first `separator` when one is given.
fn split(line: Vec<u8>, separator: Option<&str>, number: usize) -> Result<KeyValue, String> {
    let Some(sep) = separator.map(str::as_bytes) else {
        return Ok((None, line));
    };
    let at = line
        .windows(sep.len())
        .position(|w| w == sep)
        .ok_or_else(|| {
            format!(
                "Line {number} has no key separator {:?}; nothing from it on was produced.",
                String::from_utf8_lossy(sep)
            )
        })?;
    Ok((Some(line[..at].to_vec()), line[at + sep.len()..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_the_first_separator() {
        assert_eq!(
            split(b"a=b=c".to_vec(), None, 1).unwrap(),
            (None, b"a=b=c".to_vec())
        );
        assert_eq!(
            split(b"k::v::w".to_vec(), Some("::"), 1).unwrap(),
            (Some(b"k".to_vec()), b"v::w".to_vec())
        );
        assert_eq!(
            split(b"=v".to_vec(), Some("="), 1).unwrap(),
            (Some(Vec::new()), b"v".to_vec())
        );
        let e = split(b"no key".to_vec(), Some("="), 7).unwrap_err();
        assert!(e.starts_with("Line 7 has no key separator"), "{e}");
    }

    #[test]
    fn batches_take_what_is_waiting() {
        let (tx, rx) = mpsc::channel();
        for i in 0..(MAX_BATCH + 3) {
            tx.send(i).unwrap();
        }
        drop(tx);
        assert_eq!(next_batch(&rx).map(|b| b.len()), Some(MAX_BATCH));
        assert_eq!(
            next_batch(&rx),
            Some(vec![MAX_BATCH, MAX_BATCH + 1, MAX_BATCH + 2])
        );
        assert_eq!(next_batch(&rx), None);
    }
}
