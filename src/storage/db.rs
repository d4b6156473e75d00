//! The threads that own SQLite connections, and the handles async code and task threads use to reach them.
//!
//! One writer thread owns the only read-write connection. Callers send it closures; it runs every closure
//! that is waiting in one `BEGIN IMMEDIATE` transaction (group commit), each closure inside its own
//! savepoint so that one failing closure rolls back only its own changes. Callers get their answer only
//! after the transaction has committed, so an acknowledged write is a durable write. Writes nobody waits
//! for (statuses) wait a few milliseconds for one that has a caller, and share its commit.
//!
//! A reader thread owns a read-only connection; in WAL mode it reads the last committed state without
//! waiting for the writer.

use std::sync::{mpsc, Arc};
use std::thread;

use rusqlite::Connection;

use super::lock::StoreLock;
use super::{StorageError, StoreObserver};

/// Called after the group's transaction has ended, with the commit's error if it failed.
type Reply = Box<dyn FnOnce(Option<&StorageError>) + Send>;
/// A job runs inside the group's transaction and hands back its reply, and whether it failed for want of room.
type Job = Box<dyn FnOnce(&Connection) -> (Reply, bool) + Send>;

/// At most this many queued jobs share one transaction, so one group never grows without bound.
const MAX_GROUP: usize = 256;

/// How long a group of background writes (statuses; nobody waits for them) waits for a write that has
/// a caller before it commits on its own. A connector's create is followed by the statuses it and its
/// tasks report: they ride with the next change or append instead of costing a commit of their own.
const BACKGROUND_DELAY: std::time::Duration = std::time::Duration::from_millis(5);

/// A handle to a thread that owns one SQLite connection.
#[derive(Clone, Debug)]
pub(crate) struct DbThread {
    jobs: mpsc::Sender<Msg>,
}

/// What the writer reports: how long each group commit took (to the store's observer), and whether the
/// last write failed for want of room (set on a disk-full failure, cleared by the next group that commits
/// in full).
type CommitTimes = Option<(Arc<dyn StoreObserver>, Arc<std::sync::atomic::AtomicBool>)>;

/// What a database thread receives.
enum Msg {
    /// A write with a caller waiting for it.
    Job(Job),
    /// A write nobody waits for ([`DbThread::send`]).
    Background(Job),
    /// Finish what came before, close the connection, then acknowledge.
    Close(tokio::sync::oneshot::Sender<()>),
}

impl DbThread {
    /// Starts the writer thread: every batch of waiting jobs runs in one IMMEDIATE transaction, timed to
    /// `commits`. The thread holds `lock` until its connection is closed.
    pub(crate) fn writer(
        conn: Connection,
        lock: Arc<StoreLock>,
        commits: Arc<dyn StoreObserver>,
        full: Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        Self::spawn("liteconnect-db-writer", conn, lock, Some((commits, full)))
    }

    /// Starts a reader thread: jobs run one by one, outside any explicit transaction.
    pub(crate) fn reader(conn: Connection, lock: Arc<StoreLock>) -> Self {
        Self::spawn("liteconnect-db-reader", conn, lock, None)
    }

    /// A writer (with its commit times) runs jobs in group transactions; a reader runs them one by one.
    fn spawn(name: &str, conn: Connection, lock: Arc<StoreLock>, writer: CommitTimes) -> Self {
        let (jobs, rx) = mpsc::channel::<Msg>();
        thread::Builder::new()
            .name(name.to_string())
            .spawn(move || serve(conn, lock, rx, writer))
            .expect("spawning the database thread");
        DbThread { jobs }
    }

    /// Runs `f` on the connection's thread and awaits its result (after commit, on the writer).
    pub(crate) async fn call<R, F>(&self, f: F) -> Result<R, StorageError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StorageError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.submit(f, move |r| {
            let _ = tx.send(r);
        })?;
        rx.await.map_err(|_| StorageError::Closed)?
    }

    /// Runs `f` on the connection's thread and blocks until its result is known.
    ///
    /// # Panics
    /// Panics when called from an async executor thread: only task threads and other plain threads may block.
    pub(crate) fn call_blocking<R, F>(&self, f: F) -> Result<R, StorageError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StorageError> + Send + 'static,
    {
        self.call_later(f, |_| {})?
            .recv()
            .map_err(|_| StorageError::Closed)?
    }

    /// Queues `f` and returns at once with a receiver of its result (after commit, on the writer).
    /// `then` runs on the connection's thread with the result once it is known, before it is sent.
    pub(crate) fn call_later<R, F>(
        &self,
        f: F,
        then: impl FnOnce(&Result<R, StorageError>) + Send + 'static,
    ) -> Result<mpsc::Receiver<Result<R, StorageError>>, StorageError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StorageError> + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        self.submit(f, move |r| {
            then(&r);
            let _ = tx.send(r);
        })?;
        Ok(rx)
    }

    /// Runs everything queued so far, closes the connection and stops the thread. Later calls fail with
    /// [`StorageError::Closed`].
    pub(crate) async fn close(&self) {
        let (ack, done) = tokio::sync::oneshot::channel();
        if self.jobs.send(Msg::Close(ack)).is_ok() {
            let _ = done.await;
        }
    }

    /// Queues `f` without waiting for it; its failure is logged. Used for status updates from task threads.
    pub(crate) fn send<F>(&self, what: &'static str, f: F)
    where
        F: FnOnce(&Connection) -> Result<(), StorageError> + Send + 'static,
    {
        let job = Self::job(f, move |r| {
            if let Err(error) = r {
                tracing::warn!(%error, "Background write failed: {what}.");
            }
        });
        let _ = self.jobs.send(Msg::Background(job));
    }

    fn submit<R, F, S>(&self, f: F, deliver: S) -> Result<(), StorageError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StorageError> + Send + 'static,
        S: FnOnce(Result<R, StorageError>) + Send + 'static,
    {
        self.jobs
            .send(Msg::Job(Self::job(f, deliver)))
            .map_err(|_| StorageError::Closed)
    }

    /// `f` in its own savepoint, answered through `deliver` once the group's transaction has ended.
    fn job<R, F, S>(f: F, deliver: S) -> Job
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StorageError> + Send + 'static,
        S: FnOnce(Result<R, StorageError>) + Send + 'static,
    {
        Box::new(move |conn| {
            let result = in_savepoint(conn, f);
            let disk_full = matches!(&result, Err(e) if e.is_disk_full());
            let reply: Reply = Box::new(move |commit_error| {
                // A job's own failure says more than the group's; a group that did not commit fails every job.
                deliver(match (result, commit_error) {
                    (Err(e), _) => Err(e),
                    (Ok(_), Some(e)) => Err(e.duplicate()),
                    (Ok(r), None) => Ok(r),
                })
            });
            (reply, disk_full)
        })
    }
}

fn in_savepoint<R>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<R, StorageError>,
) -> Result<R, StorageError> {
    if conn.is_autocommit() {
        return f(conn);
    }
    conn.prepare_cached("SAVEPOINT job")?.execute([])?;
    match f(conn) {
        Ok(r) => {
            conn.prepare_cached("RELEASE job")?.execute([])?;
            Ok(r)
        }
        Err(e) => {
            // SQLite may already have rolled the whole transaction back (SQLITE_FULL does); then there is no
            // savepoint left, and the original error is what the caller needs to hear.
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK TO job; RELEASE job");
            }
            Err(e)
        }
    }
}

fn serve(conn: Connection, lock: Arc<StoreLock>, rx: mpsc::Receiver<Msg>, writer: CommitTimes) {
    let mut closing = None;
    while closing.is_none() {
        let (first, mut waited_for) = match rx.recv() {
            Ok(Msg::Job(job)) => (job, true),
            Ok(Msg::Background(job)) => (job, false),
            Ok(Msg::Close(ack)) => {
                closing = Some(ack);
                break;
            }
            Err(_) => break,
        };
        let Some((commits, full)) = &writer else {
            first(&conn).0(None);
            continue;
        };
        let mut group = vec![first];
        // Background writes alone wait a little for a write with a caller to share their commit.
        let background_until = std::time::Instant::now() + BACKGROUND_DELAY;
        while group.len() < MAX_GROUP {
            let next = if waited_for {
                rx.try_recv().ok()
            } else {
                let left = background_until.saturating_duration_since(std::time::Instant::now());
                rx.recv_timeout(left).ok()
            };
            match next {
                Some(Msg::Job(job)) => {
                    waited_for = true;
                    group.push(job);
                }
                Some(Msg::Background(job)) => group.push(job),
                Some(Msg::Close(ack)) => {
                    closing = Some(ack);
                    break;
                }
                None => break,
            }
        }
        let started = std::time::Instant::now();
        let out_of_room = run_group(&conn, group);
        let was = full.load(std::sync::atomic::Ordering::Relaxed);
        // Once out of room, the store counts as full until there is room again for more than a few
        // small writes (statuses fit in what a truncated write-ahead log frees; records may not).
        let now = out_of_room || (was && !has_room(&conn));
        full.store(now, std::sync::atomic::Ordering::Relaxed);
        commits.committed(started.elapsed().as_secs_f64());
    }
    drop(conn);
    // After the connection: closing a descriptor of the database file drops this process's SQLite locks.
    drop(lock);
    if let Some(ack) = closing {
        let _ = ack.send(());
    }
}

/// Whether the file has room again under `max_page_count`: free pages inside it plus pages it may still
/// grow by, at least a sixteenth of the cap (and 16 pages). Without a cap, a write that went through
/// is taken as room.
fn has_room(conn: &Connection) -> bool {
    let pragma = |name: &str| conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
    match (
        pragma("page_count"),
        pragma("max_page_count"),
        pragma("freelist_count"),
    ) {
        (Ok(used), Ok(max), Ok(free)) => max - used + free >= (max / 16).max(16),
        _ => false,
    }
}

/// Runs a group of jobs in one IMMEDIATE transaction and answers each once it has committed (or not).
/// Returns whether a write failed for want of room; then the write-ahead log is checkpointed and
/// truncated, so that what it held in the file's budget is free for the next write.
fn run_group(conn: &Connection, group: Vec<Job>) -> bool {
    if let Err(e) = conn
        .prepare_cached("BEGIN IMMEDIATE")
        .and_then(|mut s| s.execute([]))
    {
        let e = StorageError::from(e);
        for job in group {
            // Run nothing; answer every caller with the failure to begin.
            drop(job);
            tracing::error!(error = %e, "Could not begin a transaction.");
        }
        return e.is_disk_full();
    }
    let mut replies: Vec<Reply> = Vec::with_capacity(group.len());
    let mut disk_full = false;
    for job in group {
        let (reply, full) = job(conn);
        disk_full |= full;
        replies.push(reply);
    }
    let commit_error = if conn.is_autocommit() {
        // SQLite rolled the whole group back after a statement failed; every job in it is undone.
        Some(if disk_full {
            StorageError::DiskFull("the transaction this write shared was rolled back".into())
        } else {
            StorageError::Sqlite(
                "SQLite rolled the transaction back after a statement failed; nothing in it was written".into(),
            )
        })
    } else {
        conn.prepare_cached("COMMIT")
            .and_then(|mut s| s.execute([]))
            .err()
            .map(StorageError::from)
    };
    if commit_error.is_some() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    let out_of_room = disk_full || commit_error.as_ref().is_some_and(|e| e.is_disk_full());
    if out_of_room {
        // The log's pages in the write-ahead log count against storage.max.bytes too: move them into
        // the file and truncate the log before the next write.
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
    for reply in replies {
        reply(commit_error.as_ref());
    }
    out_of_room
}
