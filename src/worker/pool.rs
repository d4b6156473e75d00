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

use std::collections::{BTreeMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::control::TaskControl;
use super::convert::{StageError, TaskStage};
use super::sink::SinkLoop;
use super::source::SourceLoop;
use super::TaskRuntime;
use crate::connectors::ConnectorPlugin;
use crate::model::State;

/// How long a pool thread with nothing to run waits for work before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// How long a job waits for a busy thread to come free before a new thread is started for it.
const SPAWN_DELAY: Duration = Duration::from_millis(2);

/// What a task loop asks for when it returns to its driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing to do: run again after this long, or sooner when woken (an append, a control change).
    Park(Duration),
    /// Paused: run again when the mode changes.
    Paused,
    /// The loop has ended (the task was stopped).
    Done,
}

/// A task's loop and its state.
enum Body {
    Source(SourceLoop),
    Sink(SinkLoop),
}

/// A task: its runtime, its plugin and its loop, moved between pool threads and its control block.
pub(crate) struct Job {
    runtime: TaskRuntime,
    plugin: Arc<dyn ConnectorPlugin>,
    /// Created on the first run.
    body: Option<Body>,
    /// Declared last, dropped last: "done" is signalled only after the runtime (and its store handle),
    /// the task and the plugin are gone.
    _done: tokio::sync::oneshot::Sender<()>,
}

impl Job {
    pub(crate) fn new(
        runtime: TaskRuntime,
        plugin: Arc<dyn ConnectorPlugin>,
        done: tokio::sync::oneshot::Sender<()>,
    ) -> Box<Job> {
        Box::new(Job {
            runtime,
            plugin,
            body: None,
            _done: done,
        })
    }

    /// Runs the loop until it parks or ends; on its end, stops the task.
    fn step(&mut self) -> Result<Step, StageError> {
        let rt = &self.runtime;
        if self.body.is_none() {
            self.body = Some(if let Some(task) = self.plugin.source_task() {
                Body::Source(SourceLoop::new(task))
            } else if let Some(task) = self.plugin.sink_task() {
                Body::Sink(SinkLoop::new(task))
            } else {
                return Err(StageError::fatal(
                    TaskStage::StartTask,
                    format!("{} has no task", self.plugin.class()),
                ));
            });
        }
        let body = self.body.as_mut().expect("set above");
        let result = match body {
            Body::Source(s) => s.resume(rt),
            Body::Sink(s) => s.resume(rt),
        };
        match result {
            Ok(step @ (Step::Park(_) | Step::Paused)) => Ok(step),
            ended => {
                let ended = ended.map(|_| ());
                let ended = match self.body.take().expect("set above") {
                    Body::Source(s) => s.finish(rt, ended),
                    Body::Sink(s) => s.finish(rt, ended),
                };
                ended.map(|()| Step::Done)
            }
        }
    }
}

/// Runs a job on the current thread until it parks (it is handed to its control block) or ends (a
/// failure or a panic is reported). A job that would be woken as soon as it parks runs on at once.
fn run(mut job: Box<Job>) {
    loop {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| job.step()));
        let runtime = &job.runtime;
        let timeout = match outcome {
            Ok(Ok(Step::Park(timeout))) => Some(timeout),
            Ok(Ok(Step::Paused)) => None,
            Ok(Ok(Step::Done)) => return,
            Ok(Err(failure)) => {
                let error = &failure.error;
                tracing::error!(connector = %runtime.connector, task = runtime.task, %error, "Task failed.");
                runtime.report(State::Failed, Some(failure.trace()));
                return;
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(connector = %runtime.connector, task = runtime.task, %message, "Task panicked.");
                runtime.report(
                    State::Failed,
                    Some(format!("org.apache.kafka.connect.errors.ConnectException: the task panicked: {message}")),
                );
                return;
            }
        };
        let control = runtime.control.clone();
        match control.park(job, timeout) {
            Some(again) => job = again,
            None => return,
        }
    }
}

// ----- the pool -----------------------------------------------------------------------------------

/// Where an idle thread waits for the job handed to it.
#[derive(Default)]
struct Slot {
    job: Mutex<Option<Box<Job>>>,
    handed: Condvar,
}

#[derive(Default)]
struct PoolState {
    /// Jobs no thread was free for.
    queue: VecDeque<Box<Job>>,
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

#[derive(Default)]
struct Pool {
    state: Mutex<PoolState>,
    /// The spawner waits here for jobs no thread is free for.
    short: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    static SPAWNER: OnceLock<()> = OnceLock::new();
    let p = POOL.get_or_init(Pool::default);
    SPAWNER.get_or_init(|| {
        std::thread::Builder::new()
            .name("task-spawner".into())
            .spawn(spawner)
            .expect("the task pool's spawner thread");
    });
    p
}

/// Runs a job on a pool thread: the most recently idle one, or one the spawner starts for it.
/// Threads are started by the spawner, not here, so the writer thread (which wakes sinks after each
/// commit) never waits for a thread to start.
pub(crate) fn submit(job: Box<Job>) {
    let pool = pool();
    let mut state = pool.state.lock().expect("pool lock");
    if let Some(slot) = state.idle.pop() {
        drop(state);
        *slot.job.lock().expect("slot lock") = Some(job);
        slot.handed.notify_one();
        return;
    }
    state.queue.push_back(job);
    if !state.covered() {
        pool.short.notify_one();
    }
}

/// Starts a thread for every queued job no thread is free for, once [`SPAWN_DELAY`] has passed
/// without one coming free.
fn spawner() {
    let pool = pool();
    let mut state = pool.state.lock().expect("pool lock");
    loop {
        while state.covered() {
            state = pool.short.wait(state).expect("pool lock");
        }
        // Most jobs are short (a parked task that looks, finds nothing and parks again): the busy
        // threads take a burst of them in turn. A job that waits longer gets a thread of its own.
        let deadline = Instant::now() + SPAWN_DELAY;
        loop {
            let now = Instant::now();
            if now >= deadline || state.covered() {
                break;
            }
            state = pool
                .short
                .wait_timeout(state, deadline - now)
                .expect("pool lock")
                .0;
        }
        while !state.covered() {
            state.starting += 1;
            state.threads += 1;
            drop(state);
            let spawned = std::thread::Builder::new()
                .name("task-pool".into())
                .spawn(pool_thread);
            state = pool.state.lock().expect("pool lock");
            if let Err(e) = spawned {
                state.starting -= 1;
                state.threads -= 1;
                // The queued jobs wait for a thread that finishes its job, or for a later try.
                tracing::error!(error = %e, threads = state.threads, "Could not start a task thread.");
                state = pool
                    .short
                    .wait_timeout(state, Duration::from_secs(1))
                    .expect("pool lock")
                    .0;
                break;
            }
        }
    }
}

fn pool_thread() {
    let pool = pool();
    let slot = Arc::new(Slot::default());
    let mut state = pool.state.lock().expect("pool lock");
    state.starting -= 1;
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            run(job);
            state = pool.state.lock().expect("pool lock");
            continue;
        }
        state.idle.push(slot.clone());
        drop(state);
        let Some(job) = wait_for_job(pool, &slot) else {
            return;
        };
        run(job);
        state = pool.state.lock().expect("pool lock");
    }
}

/// Waits in `slot` for a job; None when none came for [`KEEP_ALIVE`] and the thread has left the idle
/// list (it is to exit).
fn wait_for_job(pool: &Pool, slot: &Arc<Slot>) -> Option<Box<Job>> {
    let mut job = slot.job.lock().expect("slot lock");
    loop {
        if let Some(j) = job.take() {
            return Some(j);
        }
        let (next, waited) = slot
            .handed
            .wait_timeout(job, KEEP_ALIVE)
            .expect("slot lock");
        job = next;
        if waited.timed_out() && job.is_none() {
            let mut state = pool.state.lock().expect("pool lock");
            if let Some(at) = state.idle.iter().position(|s| Arc::ptr_eq(s, slot)) {
                state.idle.remove(at);
                state.threads -= 1;
                return None;
            }
            // A submitter took this thread off the list: its job is on the way.
        }
    }
}

// ----- the timer ----------------------------------------------------------------------------------

/// Parked jobs' deadlines: `(deadline, park number)` → the control block holding the job.
#[derive(Default)]
struct Timer {
    due: Mutex<BTreeMap<(Instant, u64), Weak<TaskControl>>>,
    changed: Condvar,
}

static PARKS: AtomicU64 = AtomicU64::new(1);

/// A number for a new park, so a timer entry left from an earlier park never wakes a later one.
pub(crate) fn next_park() -> u64 {
    PARKS.fetch_add(1, Ordering::Relaxed)
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<Timer> = OnceLock::new();
    static STARTED: OnceLock<()> = OnceLock::new();
    let t = TIMER.get_or_init(Timer::default);
    STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("task-timer".into())
            .spawn(timer_thread)
            .expect("the task timer thread");
    });
    t
}

/// Wakes `control`'s parked job `park` at `deadline` unless it is woken or cancelled first.
pub(crate) fn schedule(deadline: Instant, park: u64, control: Weak<TaskControl>) {
    let t = timer();
    let mut due = t.due.lock().expect("timer lock");
    let first = due.keys().next().is_none_or(|k| (deadline, park) < *k);
    due.insert((deadline, park), control);
    if first {
        t.changed.notify_one();
    }
}

/// Forgets a deadline (its job was woken before it).
pub(crate) fn cancel(deadline: Instant, park: u64) {
    timer()
        .due
        .lock()
        .expect("timer lock")
        .remove(&(deadline, park));
}

fn timer_thread() {
    let t = timer();
    let mut due = t.due.lock().expect("timer lock");
    loop {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_fire_in_order_and_cancelled_ones_do_not() {
        // Entries for controls that are gone are dropped without effect.
        let gone = Arc::downgrade(&TaskControl::new(super::super::Mode::Run));
        let now = Instant::now();
        let (a, b) = (next_park(), next_park());
        schedule(now + Duration::from_millis(5), a, gone.clone());
        schedule(now + Duration::from_secs(3600), b, gone);
        cancel(now + Duration::from_secs(3600), b);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left: Vec<u64> = timer()
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
    }
}
