//! How the herder steers a task (run, pause, stop) and how the topic log wakes sinks. Both use one
//! control block per task, so a waiting task wakes for whichever comes first: a control change or new
//! records, never by polling. A task waiting on a thread waits on the block's condition variable; a
//! parked one (see [`super::pool`]) lies in the block and is handed back to the pool.

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::job::Job;
use super::pool::Pool;

/// What a task should be doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Work.
    Run,
    /// Stay alive, do nothing.
    Pause,
    /// Finish and exit.
    Stop,
}

struct Inner {
    mode: Mode,
    /// Set by a log append (or any wake-up) and consumed by the next wait.
    woken: bool,
    /// The task's loop while it is parked (see [`super::pool`]): handed back to the pool by the next
    /// wake-up, control change or its deadline.
    parked: Option<Parked>,
}

struct Parked {
    job: Box<Job>,
    /// The pool it runs on again.
    pool: Arc<Pool>,
    /// None while paused: only a mode change ends the park.
    deadline: Option<Instant>,
    park: u64,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("mode", &self.mode)
            .field("woken", &self.woken)
            .field("parked", &self.parked.is_some())
            .finish()
    }
}

/// The control block one task shares with the herder.
#[derive(Debug)]
pub struct TaskControl {
    inner: Mutex<Inner>,
    cv: Condvar,
}

impl TaskControl {
    /// A control block in the given mode.
    pub fn new(mode: Mode) -> Arc<Self> {
        Arc::new(TaskControl {
            inner: Mutex::new(Inner {
                mode,
                woken: false,
                parked: None,
            }),
            cv: Condvar::new(),
        })
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.inner.lock().expect("control lock").mode
    }

    /// Changes the mode and wakes the task. STOP is final.
    pub fn set_mode(&self, mode: Mode) {
        let mut inner = self.inner.lock().expect("control lock");
        if inner.mode != Mode::Stop {
            inner.mode = mode;
        }
        self.cv.notify_all();
        let parked = inner.parked.take();
        drop(inner);
        Self::unpark(parked);
    }

    /// Wakes the task if it is waiting for data (a paused task waits for a mode change only).
    pub fn wake(&self) {
        let mut inner = self.inner.lock().expect("control lock");
        let parked = match &inner.parked {
            Some(p) if p.deadline.is_some() => inner.parked.take(),
            _ => None,
        };
        if parked.is_none() {
            inner.woken = true;
            self.cv.notify_all();
        }
        drop(inner);
        Self::unpark(parked);
    }

    fn unpark(parked: Option<Parked>) {
        if let Some(p) = parked {
            if let Some(deadline) = p.deadline {
                p.pool.cancel(deadline, p.park);
            }
            p.pool.submit(p.job);
        }
    }

    /// Puts a task's loop aside until it is woken, its mode changes or `timeout` passes, as
    /// [`TaskControl::wait`] would wait; then it runs again on a pool thread. With no timeout the task
    /// is paused: it is put aside until its mode is no longer PAUSE, as
    /// [`TaskControl::wait_while_paused`]. Returns the job instead when it is to run on at once (a
    /// wake-up came before, or the mode already changed). `pool` is the one it runs on.
    pub(super) fn park(
        self: &Arc<Self>,
        job: Box<Job>,
        timeout: Option<Duration>,
        pool: &Arc<Pool>,
    ) -> Option<Box<Job>> {
        let mut inner = self.inner.lock().expect("control lock");
        let now = match timeout {
            Some(_) => inner.woken || inner.mode != Mode::Run,
            None => inner.mode != Mode::Pause,
        };
        if now {
            if timeout.is_some() {
                inner.woken = false;
            }
            return Some(job);
        }
        let park = pool.next_park();
        let deadline = timeout.map(|t| Instant::now() + t);
        if let Some(deadline) = deadline {
            // Scheduled under this block's lock, so a wake-up that takes the job cancels an entry that
            // exists.
            pool.schedule(deadline, park, Arc::downgrade(self));
        }
        inner.parked = Some(Parked {
            job,
            pool: pool.clone(),
            deadline,
            park,
        });
        None
    }

    /// The timer's call: the park `park` has reached its deadline.
    pub(super) fn deadline_passed(&self, park: u64) {
        let mut inner = self.inner.lock().expect("control lock");
        if inner.parked.as_ref().is_some_and(|p| p.park == park) {
            let parked = inner.parked.take().expect("checked");
            drop(inner);
            parked.pool.submit(parked.job);
        }
    }

    /// Waits until woken, until the mode is no longer RUN, or until `timeout` passes. Returns true while the
    /// mode is still RUN.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut inner = self.inner.lock().expect("control lock");
        loop {
            if inner.woken {
                inner.woken = false;
                return inner.mode == Mode::Run;
            }
            if inner.mode != Mode::Run {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            inner = self
                .cv
                .wait_timeout(inner, deadline - now)
                .expect("control lock")
                .0;
        }
    }

    /// Blocks while the mode is PAUSE; returns the mode that ended the pause.
    pub fn wait_while_paused(&self) -> Mode {
        let mut inner = self.inner.lock().expect("control lock");
        while inner.mode == Mode::Pause {
            inner = self.cv.wait(inner).expect("control lock");
        }
        inner.mode
    }
}

/// Wakes every registered sink task, and every async subscriber, when records are appended to the log.
#[derive(Debug)]
pub struct LogSignal {
    waiters: Mutex<Vec<Weak<TaskControl>>>,
    /// Counts the appends, for async readers (REST long-polls) to wait on.
    appends: tokio::sync::watch::Sender<u64>,
    /// Set at shutdown: async readers stop waiting.
    closed: std::sync::atomic::AtomicBool,
}

impl Default for LogSignal {
    fn default() -> Self {
        LogSignal {
            waiters: Mutex::new(Vec::new()),
            appends: tokio::sync::watch::Sender::new(0),
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl LogSignal {
    /// Registers a task to be woken on appends (until its control block is dropped).
    pub fn register(&self, control: &Arc<TaskControl>) {
        let mut waiters = self.waiters.lock().expect("signal lock");
        waiters.retain(|w| w.strong_count() > 0);
        waiters.push(Arc::downgrade(control));
    }

    /// A receiver that sees a change at every later append: subscribe, read, then await `changed()`,
    /// and no append in between is missed.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.appends.subscribe()
    }

    /// How many appends have been signalled so far: a task that reads it before looking at the log and
    /// finds it unchanged afterwards knows that nothing arrived meanwhile.
    pub fn appends(&self) -> u64 {
        *self.appends.borrow()
    }

    /// Ends the waits of async subscribers, now and later (the worker is shutting down).
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.appends.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// True once [`LogSignal::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Wakes every registered task and async subscriber.
    pub fn notify(&self) {
        self.appends.send_modify(|n| *n = n.wrapping_add(1));
        let waiters = self.waiters.lock().expect("signal lock");
        for w in waiters.iter() {
            if let Some(c) = w.upgrade() {
                c.wake();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_before_wait_is_not_lost() {
        let c = TaskControl::new(Mode::Run);
        c.wake();
        let start = Instant::now();
        assert!(c.wait(Duration::from_secs(30)));
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn stop_ends_a_wait_and_is_final() {
        let c = TaskControl::new(Mode::Run);
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.wait(Duration::from_secs(60)));
        c.set_mode(Mode::Stop);
        assert!(!t.join().unwrap());
        c.set_mode(Mode::Run);
        assert_eq!(c.mode(), Mode::Stop);
    }

    #[test]
    fn log_signal_wakes_registered_tasks() {
        let signal = LogSignal::default();
        let c = TaskControl::new(Mode::Run);
        signal.register(&c);
        let c2 = c.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            (c2.wait(Duration::from_secs(60)), start.elapsed())
        });
        signal.notify();
        let (running, waited) = t.join().unwrap();
        assert!(running);
        assert!(
            waited < Duration::from_secs(30),
            "the append did not wake the task"
        );
    }

    #[test]
    fn log_signal_changes_subscribers_and_closes() {
        let signal = LogSignal::default();
        let mut rx = signal.subscribe();
        assert!(!rx.has_changed().unwrap());
        assert_eq!(signal.appends(), 0);
        signal.notify();
        assert_eq!(signal.appends(), 1);
        assert!(rx.has_changed().unwrap());
        rx.mark_unchanged();
        assert!(!signal.is_closed());
        signal.close();
        assert!(rx.has_changed().unwrap());
        assert!(signal.is_closed());
    }
}
