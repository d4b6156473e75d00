//! Appends to the topic log: handed to the writer thread, and waited for by the caller, who lists where
//! the records went (so the writer thread does not).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rusqlite::Connection;

use super::{log, AppendBatch, BufferCap, BufferPolicy, StorageError, Store};

impl Store {
    /// Appends records and, in the same transaction, the source offsets that produced them and the
    /// topics the connector used. Returns the (topic, partition, offset) each record got. With a
    /// `log.buffer.max.bytes` cap and the `pause` policy, a batch that does not fit is refused with
    /// [`StorageError::BufferFull`] (see [`Store::try_append_blocking`] to get the batch back).
    pub fn append_blocking(
        &self,
        batch: AppendBatch,
    ) -> Result<Vec<(String, i32, i64)>, StorageError> {
        match self.try_append_blocking(batch)? {
            Ok(assigned) => Ok(assigned),
            Err((_, message)) => Err(StorageError::BufferFull(message)),
        }
    }

    /// Like [`Store::append_blocking`], but a batch refused because the log is full (policy `pause`)
    /// comes back with the reason, for the caller to try again later.
    pub fn try_append_blocking(&self, batch: AppendBatch) -> Result<Appended, StorageError> {
        self.start_append(batch, |_| {})?.wait()
    }

    /// Hands a batch to the writer and returns at once; [`PendingAppend::wait`] gives what
    /// [`Store::try_append_blocking`] would have. As soon as the outcome is known, on the writer thread,
    /// the store's [`StoreObserver`](super::StoreObserver) hears of each run of records stored, and
    /// `committed` is called with whether the batch was stored (to count it and wake readers of the log
    /// without waiting for the caller).
    pub fn start_append(
        &self,
        batch: AppendBatch,
        committed: impl FnOnce(bool) + Send + 'static,
    ) -> Result<PendingAppend, StorageError> {
        let sizes: Vec<u64> = batch.records.iter().map(log::record_bytes).collect();
        let observer = self.inner.observer.clone();
        let committed = move |result: &Result<Placement, StorageError>| match result {
            Ok(Ok((placed, batch))) => {
                for run in placed {
                    let bytes = sizes[run.first..run.first + run.len].iter().sum();
                    observer.appended_run(
                        &batch.records[run.first].topic,
                        run.partition,
                        run.offset + run.len as i64,
                        run.len as u64,
                        bytes,
                    );
                }
                committed(true)
            }
            _ => committed(false),
        };
        let result = match self.inner.buffer {
            None => self.writer.call_later(
                move |c| {
                    let placed = log::append(c, &batch)?;
                    Ok(Ok((placed, batch)))
                },
                committed,
            )?,
            Some(cap) => {
                let cache = self.inner.log_bytes.clone();
                let dropped = self.inner.dropped.clone();
                self.writer.call_later(
                    move |c| append_capped(c, batch, cap, &cache, &dropped),
                    committed,
                )?
            }
        };
        Ok(PendingAppend {
            result,
            store: self.clone(),
        })
    }
}

/// What an append gives: where each record went as (topic, partition, offset), or the batch back with
/// the reason it was refused (the log is full and the policy is `pause`).
pub type Appended = Result<Vec<(String, i32, i64)>, (AppendBatch, String)>;

/// What the writer answers an append with: where the runs of records went and the batch, or the batch
/// refused.
type Placement = Result<(Vec<log::Placed>, AppendBatch), (AppendBatch, String)>;

/// An append handed to the writer; [`PendingAppend::wait`] blocks until it has committed (or failed).
#[derive(Debug)]
pub struct PendingAppend {
    result: std::sync::mpsc::Receiver<Result<Placement, StorageError>>,
    store: Store,
}

impl PendingAppend {
    /// Waits for the append's outcome. The batch comes back from the writer with where its runs of
    /// records went: this thread, not the writer's, lists them and frees the records.
    pub fn wait(self) -> Result<Appended, StorageError> {
        let inner = &self.store.inner;
        let result = self.result.recv().map_err(|_| StorageError::Closed)?;
        if result.is_err() && inner.buffer.is_some() {
            *inner.log_bytes.lock().expect("log bytes lock") = None;
        }
        let (placed, batch) = match result? {
            Ok(done) => done,
            Err(refused) => return Ok(Err(refused)),
        };
        Ok(Ok(log::assigned(batch.records, &placed)))
    }
}

/// Above this share of `log.buffer.max.bytes` (in quarters), each append also deletes some of the
/// records the sinks have delivered, a few at a time, so the log seldom reaches its cap and no single
/// append pays for deleting a whole cap's worth of records.
const RECLAIM_FROM_QUARTERS: u64 = 3;

/// An append under `log.buffer.max.bytes`. Above three quarters of the cap it deletes delivered records,
/// at most twice as many as it appends per partition; when the batch still does not fit, it reclaims
/// every delivered record, then refuses the batch (`pause`) or drops the oldest records
/// (`drop_oldest`).
fn append_capped(
    c: &Connection,
    batch: AppendBatch,
    cap: BufferCap,
    cache: &Mutex<Option<u64>>,
    dropped: &AtomicU64,
) -> Result<Placement, StorageError> {
    let need: u64 = batch.records.iter().map(log::record_bytes).sum();
    let known = *cache.lock().expect("log bytes lock");
    let mut current = match known {
        Some(b) => b,
        None => log::log_bytes(c)?,
    };
    if current + need > cap.max_bytes / 4 * RECLAIM_FROM_QUARTERS {
        let step = 2 * batch.records.len().max(1) as i64;
        let (_, freed) = log::reclaim_delivered_step(c, step)?;
        current = current.saturating_sub(freed);
    }
    if current > 0 && current + need > cap.max_bytes {
        if log::reclaim_delivered(c)? > 0 {
            current = log::log_bytes(c)?;
        }
        if current > 0 && current + need > cap.max_bytes {
            match cap.policy {
                BufferPolicy::Pause => {
                    *cache.lock().expect("log bytes lock") = Some(current);
                    let message = format!(
                        "The topic log holds {current} bytes of undelivered records and this batch needs {need} more: log.buffer.max.bytes={} is reached (log.buffer.full.policy=pause); waiting for sinks to deliver",
                        cap.max_bytes
                    );
                    return Ok(Err((batch, message)));
                }
                BufferPolicy::DropOldest => {
                    let to_free = current + need - cap.max_bytes;
                    let (records, bytes) = log::drop_oldest(c, to_free)?;
                    current = current.saturating_sub(bytes);
                    let total = dropped.fetch_add(records, Ordering::Relaxed) + records;
                    tracing::warn!(
                        records,
                        bytes,
                        total,
                        max_bytes = cap.max_bytes,
                        "Dropped the oldest undelivered records of the topic log to stay under log.buffer.max.bytes (log.buffer.full.policy=drop_oldest)."
                    );
                }
            }
        }
    }
    let placed = log::append(c, &batch)?;
    *cache.lock().expect("log bytes lock") = Some(current + need);
    Ok(Ok((placed, batch)))
}
