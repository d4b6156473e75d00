//! Where task loops run: a pool of OS threads that grows when every thread is busy (a spawner thread
//! starts them) and shrinks when threads stay idle for [`KEEP_ALIVE`], plus one timer thread.
//!
//! A task loop runs on a pool thread until it has nothing to do: a sink caught up on its partitions, a
//! source whose `poll` returned nothing after asking to be polled again later
//! ([`crate::connectors::SourceTaskContext::idle`]). It then *parks*: its state is put aside in its control
//! block and the thread goes back to the pool. An append, a control change (pause, stop, restart) or
//! the end of the wait hands it to a pool thread again. A task that blocks inside its own calls (a
//! `poll` that waits in `context.wait`, a `put` that takes a while) keeps its thread meanwhile, as it
//! did when every task had its own: the plugin contract stays synchronous.
//!
//! So a worker with a thousand idle connectors has a handful of threads instead of a thousand, and
//! the memory their stacks and thread-local storage took.
//!
//! Each worker owns its pool ([`Pool::new`]) and closes it when it shuts down ([`Pool::close`]): its
//! threads then exit as soon as they have nothing left to run. The pool runs [`Runnable`] trait objects
//! and knows nothing of what they are (a task's job is [`super::job::Job`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::control::TaskControl;

/// How long a pool thread with nothing to run waits for work before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// How long a job waits for a busy thread to come free before a new thread is started for it.
const SPAWN_DELAY: Duration = Duration::from_millis(2);

/// Work the pool runs on one of its threads.
pub(crate) trait Runnable: Send {
    /// Runs on the current pool thread until the work is done or put aside (handed back to `pool`
    /// later with [`Pool::submit`]).
    fn run(self: Box<Self>, pool: &Arc<Pool>);
}

/// A job as the pool holds it.
type Work = Box<dyn Runnable>;

/// Where an idle thread waits for the job handed to it.
#[derive(Default)]
struct Slot {
    job: Mutex<Option<Work>>,
    handed: Condvar,
}

#[derive(Default)]
struct PoolState {
    /// Jobs no thread was free for.
    queue: VecDeque<Work>,
    /// Idle threads, the most recently idle last: jobs go to it first, so the threads a burst
    /// started and the pool no longer needs stay idle long enough to exit.
    idle: Vec<Arc<Slot>>,
    /// Threads started that have not looked at the queue yet.
    starting: usize,
    /// Threads alive.
    threads: usize,
}

impl PoolState {
    /// Whether every queued job has a thread that will take it.
    fn covered(&self) -> bool {
        self.queue.len() <= self.starting
    }
}

/// Parked jobs' deadlines: `(deadline, park number)` → the control block holding the job.
#[derive(Default)]
struct Timer {
    due: Mutex<BTreeMap<(Instant, u64), Weak<TaskControl>>>,
    changed: Condvar,
}

/// One worker's task pool and its timer.
pub(crate) struct Pool {
    state: Mutex<PoolState>,
    /// The spawner waits here for jobs no thread is free for.
    short: Condvar,
    timer: Timer,
    /// Numbers the parks, so a timer entry left from an earlier park never wakes a later one.
    parks: AtomicU64,
    /// Set (under the state lock) by [`Pool::close`].
    closed: AtomicBool,
    /// Every thread the pool started, to tell which are still running.
    handles: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let threads = self.state.lock().map(|s| s.threads).unwrap_or_default();
        f.debug_struct("Pool")
            .field("threads", &threads)
            .field("closed", &self.closed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Pool {
    /// A pool with no task thread yet, and its spawner and timer threads started.
    pub(crate) fn new() -> Arc<Pool> {
        let pool = Arc::new(Pool {
            state: Mutex::default(),
            short: Condvar::new(),
            timer: Timer::default(),
            parks: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            handles: Mutex::default(),
        });
        let spawner = pool.clone();
        pool.keep_thread("task-spawner", move || spawner.spawner());
        let timer = pool.clone();
        pool.keep_thread("task-timer", move || timer.timer_thread());
        pool
    }

    /// Remembers a thread the pool started (forgetting those that have ended).
    /// Starts one of the pool's own threads and keeps its handle.
    fn keep_thread(&self, name: &str, run: impl FnOnce() + Send + 'static) {
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(run)
            .unwrap_or_else(|e| panic!("cannot start the thread {name}: {e}"));
        self.keep(handle);
    }

    fn keep(&self, handle: JoinHandle<()>) {
        let mut handles = self.handles.lock().expect("handles lock");
        handles.retain(|h| !h.is_finished());
        handles.push(handle);
    }

    /// The names of the pool's threads still running (the spawner, the timer and the task threads).
    #[cfg(test)]
    pub(crate) fn running_threads(&self) -> Vec<String> {
        let handles = self.handles.lock().expect("handles lock");
        handles
            .iter()
            .filter(|h| !h.is_finished())
            .map(|h| h.thread().name().unwrap_or_default().to_string())
            .collect()
    }

    /// Stops the pool (the worker is shutting down): the spawner and the timer exit, and each task
    /// thread exits once nothing is queued. A job submitted afterwards (a task abandoned at shutdown that
    /// finally returns) still runs, on a thread started for it.
    pub(crate) fn close(self: &Arc<Self>) {
        let state = self.state.lock().expect("pool lock");
        self.closed.store(true, Ordering::SeqCst);
        self.short.notify_all();
        let idle = state.idle.clone();
        drop(self.start_threads(state));
        // Each lock is taken before its notification, so a thread between its check and its wait
        // cannot miss it.
        drop(self.timer.due.lock().expect("timer lock"));
        self.timer.changed.notify_all();
        for slot in idle {
            drop(slot.job.lock().expect("slot lock"));
            slot.handed.notify_all();
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Runs a job on a pool thread: the most recently idle one, or one the spawner starts for it.
    /// Threads are started by the spawner, not here, so the writer thread (which wakes sinks after each
    /// commit) never waits for a thread to start.
    pub(crate) fn submit(self: &Arc<Self>, job: Work) {
        let mut state = self.state.lock().expect("pool lock");
        if let Some(slot) = state.idle.pop() {
            drop(state);
            *slot.job.lock().expect("slot lock") = Some(job);
            slot.handed.notify_one();
            return;
        }
        state.queue.push_back(job);
        if state.covered() {
            return;
        }
        if self.is_closed() {
            // No spawner any more.
            drop(self.start_threads(state));
        } else {
            self.short.notify_one();
        }
    }

    /// Starts a thread for every queued job no thread is free for, once [`SPAWN_DELAY`] has passed
    /// without one coming free.
    fn spawner(self: Arc<Self>) {
        let mut state = self.state.lock().expect("pool lock");
        loop {
            while state.covered() && !self.is_closed() {
                state = self.short.wait(state).expect("pool lock");
            }
            if self.is_closed() {
                return;
            }
            // Most jobs are short (a parked task that looks, finds nothing and parks again): the busy
            // threads take a burst of them in turn. A job that waits longer gets a thread of its own.
            let deadline = Instant::now() + SPAWN_DELAY;
            loop {
                let now = Instant::now();
                if now >= deadline || state.covered() {
                    break;
                }
                state = self
                    .short
                    .wait_timeout(state, deadline - now)
                    .expect("pool lock")
                    .0;
            }
            let started;
            (state, started) = self.start_threads(state);
            if !started {
                // The queued jobs wait for a thread that finishes its job, or for a later try.
                state = self
                    .short
                    .wait_timeout(state, Duration::from_secs(1))
                    .expect("pool lock")
                    .0;
            }
        }
    }

    /// Starts a thread for every queued job no thread is free for; stops at the first thread that
    /// cannot be started (then false).
    fn start_threads<'a>(
        self: &'a Arc<Self>,
        mut state: MutexGuard<'a, PoolState>,
    ) -> (MutexGuard<'a, PoolState>, bool) {
        while !state.covered() {
            state.starting += 1;
            state.threads += 1;
            drop(state);
            let pool = self.clone();
            let spawned = std::thread::Builder::new()
                .name("task-pool".into())
                .spawn(move || pool.pool_thread());
            let spawned = spawned.map(|handle| self.keep(handle));
            state = self.state.lock().expect("pool lock");
            if let Err(e) = spawned {
                state.starting -= 1;
                state.threads -= 1;
                tracing::error!(error = %e, threads = state.threads, "Could not start a task thread.");
                return (state, false);
            }
        }
        (state, true)
    }

    fn pool_thread(self: Arc<Self>) {
        let slot = Arc::new(Slot::default());
        let mut state = self.state.lock().expect("pool lock");
        state.starting -= 1;
        loop {
            if let Some(job) = state.queue.pop_front() {
                drop(state);
                job.run(&self);
                state = self.state.lock().expect("pool lock");
                continue;
            }
            if self.is_closed() {
                state.threads -= 1;
                return;
            }
            state.idle.push(slot.clone());
            drop(state);
            let Some(job) = self.wait_for_job(&slot) else {
                return;
            };
            job.run(&self);
            state = self.state.lock().expect("pool lock");
        }
    }

    /// Waits in `slot` for a job; None when none came for [`KEEP_ALIVE`] (or the pool was closed) and the
    /// thread has left the idle list (it is to exit).
    fn wait_for_job(&self, slot: &Arc<Slot>) -> Option<Work> {
        let mut job = slot.job.lock().expect("slot lock");
        let mut timed_out = false;
        loop {
            if let Some(j) = job.take() {
                return Some(j);
            }
            if timed_out || self.is_closed() {
                let mut state = self.state.lock().expect("pool lock");
                if let Some(at) = state.idle.iter().position(|s| Arc::ptr_eq(s, slot)) {
                    state.idle.remove(at);
                    state.threads -= 1;
                    return None;
                }
                // A submitter took this thread off the list: its job is on the way.
            }
            let (next, waited) = slot
                .handed
                .wait_timeout(job, KEEP_ALIVE)
                .expect("slot lock");
            job = next;
            timed_out = waited.timed_out();
        }
    }

    // ----- the timer ------------------------------------------------------------------------------

    /// A number for a new park, so a timer entry left from an earlier park never wakes a later one.
    pub(crate) fn next_park(&self) -> u64 {
        self.parks.fetch_add(1, Ordering::Relaxed)
    }

    /// Wakes `control`'s parked job `park` at `deadline` unless it is woken or cancelled first.
    pub(crate) fn schedule(&self, deadline: Instant, park: u64, control: Weak<TaskControl>) {
        let mut due = self.timer.due.lock().expect("timer lock");
        let first = due.keys().next().is_none_or(|k| (deadline, park) < *k);
        due.insert((deadline, park), control);
        if first {
            self.timer.changed.notify_one();
        }
    }

    /// Forgets a deadline (its job was woken before it).
    pub(crate) fn cancel(&self, deadline: Instant, park: u64) {
        self.timer
            .due
            .lock()
            .expect("timer lock")
            .remove(&(deadline, park));
    }

    fn timer_thread(self: Arc<Self>) {
        let t = &self.timer;
        let mut due = t.due.lock().expect("timer lock");
        loop {
            if self.is_closed() {
                return;
            }
            let now = Instant::now();
            let mut fired = Vec::new();
            while let Some(entry) = due.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let ((_, park), control) = entry.remove_entry();
                fired.push((park, control));
            }
            if !fired.is_empty() {
                // Control blocks are locked without the timer's lock held: a control block registering a
                // deadline holds its own lock and then takes the timer's.
                drop(due);
                for (park, control) in fired {
                    if let Some(control) = control.upgrade() {
                        control.deadline_passed(park);
                    }
                }
                due = t.due.lock().expect("timer lock");
                continue;
            }
            due = match due.keys().next().map(|(d, _)| *d) {
                Some(d) => {
                    t.changed
                        .wait_timeout(due, d.saturating_duration_since(now))
                        .expect("timer lock")
                        .0
                }
                None => t.changed.wait(due).expect("timer lock"),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_fire_in_order_and_cancelled_ones_do_not() {
        let pool = Pool::new();
        // Entries for controls that are gone are dropped without effect.
        let gone = Arc::downgrade(&TaskControl::new(super::super::Mode::Run));
        let now = Instant::now();
        let (a, b) = (pool.next_park(), pool.next_park());
        pool.schedule(now + Duration::from_millis(5), a, gone.clone());
        pool.schedule(now + Duration::from_secs(3600), b, gone);
        pool.cancel(now + Duration::from_secs(3600), b);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left: Vec<u64> = pool
                .timer
                .due
                .lock()
                .unwrap()
                .keys()
                .map(|(_, p)| *p)
                .filter(|p| *p == a || *p == b)
                .collect();
            if left.is_empty() {
                break;
            }
            assert!(Instant::now() < deadline, "still due: {left:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
        pool.close();
    }
}
