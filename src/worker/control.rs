//! How the herder steers a task thread (run, pause, stop) and how the topic log wakes sink threads.
//! Both use one mutex and condition variable per task, so a waiting task wakes for whichever comes first:
//! a control change or new records, never by polling.

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// What a task thread should be doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Work.
    Run,
    /// Stay alive, do nothing.
    Pause,
    /// Finish and exit.
    Stop,
}

#[derive(Debug)]
struct Inner {
    mode: Mode,
    /// Set by a log append (or any wake-up) and consumed by the next wait.
    woken: bool,
}

/// The control block one task thread shares with the herder.
#[derive(Debug)]
pub struct TaskControl {
    inner: Mutex<Inner>,
    cv: Condvar,
}

impl TaskControl {
    /// A control block in the given mode.
    pub fn new(mode: Mode) -> Arc<Self> {
        Arc::new(TaskControl {
            inner: Mutex::new(Inner { mode, woken: false }),
            cv: Condvar::new(),
        })
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.inner.lock().expect("control lock").mode
    }

    /// Changes the mode and wakes the thread. STOP is final.
    pub fn set_mode(&self, mode: Mode) {
        let mut inner = self.inner.lock().expect("control lock");
        if inner.mode != Mode::Stop {
            inner.mode = mode;
        }
        self.cv.notify_all();
    }

    /// Wakes the thread if it is waiting for data.
    pub fn wake(&self) {
        self.inner.lock().expect("control lock").woken = true;
        self.cv.notify_all();
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
