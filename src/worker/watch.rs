//! File-system events for file sources: one watcher per worker (inotify on Linux, through `notify`) on the
//! directories of the files being read, so an idle source sleeps until its file changes instead of
//! polling it. Each watched file has a wake callback; an event naming the file (or its directory, when
//! the event names no path) calls it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use notify::{RecursiveMode, Watcher};

/// Called when a watched file may have changed.
pub(crate) type Wake = Arc<dyn Fn() + Send + Sync>;

/// What is watched: per directory, the files and who to wake for each.
#[derive(Default)]
struct Watched {
    /// Directory → (file → wake callbacks by id).
    dirs: HashMap<PathBuf, HashMap<PathBuf, Vec<(u64, Wake)>>>,
    next_id: u64,
}

struct Shared {
    watched: Mutex<Watched>,
    /// Created on the first watch; `None` when the platform has no watcher (sources poll then).
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    failed: std::sync::atomic::AtomicBool,
}

/// The worker's file watcher.
#[derive(Clone)]
pub(crate) struct FileWatcher {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FileWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatcher").finish_non_exhaustive()
    }
}

/// Keeps a file watched; dropping it stops the watch.
pub struct FileWatch {
    shared: Weak<Shared>,
    dir: PathBuf,
    file: PathBuf,
    id: u64,
}

impl std::fmt::Debug for FileWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatch")
            .field("file", &self.file)
            .finish()
    }
}

impl Default for FileWatcher {
    fn default() -> Self {
        FileWatcher {
            shared: Arc::new(Shared {
                watched: Mutex::new(Watched::default()),
                watcher: Mutex::new(None),
                failed: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }
}

fn deliver(shared: &Weak<Shared>, event: notify::Result<notify::Event>) {
    let (Some(shared), Ok(event)) = (shared.upgrade(), event) else {
        return;
    };
    let watched = shared.watched.lock().unwrap_or_else(|p| p.into_inner());
    let mut woken: Vec<Wake> = Vec::new();
    for path in &event.paths {
        let dir = path.parent().unwrap_or(Path::new(""));
        if let Some(files) = watched.dirs.get(dir) {
            if let Some(wakes) = files.get(path) {
                woken.extend(wakes.iter().map(|(_, w)| w.clone()));
            }
        }
        // An event on a watched directory itself (e.g. it was moved) wakes all its files.
        if let Some(files) = watched.dirs.get(path.as_path()) {
            woken.extend(files.values().flatten().map(|(_, w)| w.clone()));
        }
    }
    drop(watched);
    for wake in woken {
        wake();
    }
}

impl FileWatcher {
    /// Watches `file` (through its directory, so that a file created, replaced or deleted later is seen
    /// too) and calls `wake` when it may have changed. `None` when no watch could be set up: the caller
    /// polls then.
    pub(crate) fn watch(&self, file: &Path, wake: Wake) -> Option<FileWatch> {
        if self
            .shared
            .failed
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        let file = std::path::absolute(file).ok()?;
        let dir = file.parent()?.to_path_buf();
        let register = |watched: &mut Watched| {
            watched.next_id += 1;
            let id = watched.next_id;
            watched
                .dirs
                .entry(dir.clone())
                .or_default()
                .entry(file.clone())
                .or_default()
                .push((id, wake.clone()));
            FileWatch {
                shared: Arc::downgrade(&self.shared),
                dir: dir.clone(),
                file: file.clone(),
                id,
            }
        };
        {
            let mut watched = self
                .shared
                .watched
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if watched.dirs.contains_key(&dir) {
                return Some(register(&mut watched));
            }
        }
        // A new directory. `watched` is not held while notify adds the watch: adding it waits for
        // notify's event thread, which may be delivering an event and waiting for `watched` meanwhile.
        let mut watcher = self
            .shared
            .watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if watcher.is_none() {
            let weak = Arc::downgrade(&self.shared);
            match notify::recommended_watcher(move |e| deliver(&weak, e)) {
                Ok(w) => *watcher = Some(w),
                Err(error) => {
                    tracing::info!(%error, "No file-system events here; file sources poll their files.");
                    self.shared
                        .failed
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    return None;
                }
            }
        }
        let w = watcher.as_mut()?;
        if let Err(error) = w.watch(&dir, RecursiveMode::NonRecursive) {
            tracing::debug!(dir = %dir.display(), %error, "Cannot watch the directory; the file source polls.");
            return None;
        }
        // Registered while `watcher` is still held, so a watch dropped meanwhile cannot unwatch the
        // directory between the two. (Lock order: `watcher`, then `watched`; nothing takes them the
        // other way round.)
        let mut watched = self
            .shared
            .watched
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        Some(register(&mut watched))
    }
}

impl Drop for FileWatch {
    fn drop(&mut self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let mut watched = shared.watched.lock().unwrap_or_else(|p| p.into_inner());
        let Some(files) = watched.dirs.get_mut(&self.dir) else {
            return;
        };
        if let Some(wakes) = files.get_mut(&self.file) {
            wakes.retain(|(id, _)| *id != self.id);
            if wakes.is_empty() {
                files.remove(&self.file);
            }
        }
        if files.is_empty() {
            watched.dirs.remove(&self.dir);
            drop(watched);
            let mut watcher = shared.watcher.lock().unwrap_or_else(|p| p.into_inner());
            // Not when a watch of the same directory came meanwhile (it holds `watcher` while it adds
            // the directory and registers).
            let again = shared
                .watched
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .dirs
                .contains_key(&self.dir);
            if let (false, Some(w)) = (again, watcher.as_mut()) {
                let _ = w.unwatch(&self.dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    fn wait_for(what: &str, check: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !check() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_write_wakes_the_watcher_of_that_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&a, "").unwrap();
        let watcher = FileWatcher::default();
        let (woken_a, woken_b) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let wa = woken_a.clone();
        let wb = woken_b.clone();
        let watch_a = watcher
            .watch(
                &a,
                Arc::new(move || {
                    wa.fetch_add(1, Ordering::SeqCst);
                }),
            )
            .expect("inotify on Linux");
        let _watch_b = watcher
            .watch(
                &b,
                Arc::new(move || {
                    wb.fetch_add(1, Ordering::SeqCst);
                }),
            )
            .expect("inotify on Linux");
        std::fs::write(&a, "line\n").unwrap();
        wait_for("a's wake", || woken_a.load(Ordering::SeqCst) > 0);
        // b does not exist yet: its creation wakes it.
        std::fs::write(&b, "x\n").unwrap();
        wait_for("b's wake", || woken_b.load(Ordering::SeqCst) > 0);
        // Once a's watch is dropped, writes to a wake nobody.
        drop(watch_a);
        let before = woken_a.load(Ordering::SeqCst);
        let seen_b = woken_b.load(Ordering::SeqCst);
        std::fs::write(&a, "more\n").unwrap();
        std::fs::write(&b, "y\n").unwrap();
        wait_for("b's second wake", || {
            woken_b.load(Ordering::SeqCst) > seen_b
        });
        assert_eq!(woken_a.load(Ordering::SeqCst), before);
    }

    /// Watching new directories while events of a watched one are being delivered: adding a watch must
    /// not wait for the event thread while holding what delivering takes (it did, and a file source
    /// created just after a write beside another's file could hang in its first poll).
    #[test]
    fn new_watches_while_events_are_delivered_do_not_deadlock() {
        let root = tempfile::tempdir().unwrap();
        let busy = root.path().join("busy.txt");
        std::fs::write(&busy, "").unwrap();
        let watcher = FileWatcher::default();
        let woken = Arc::new(AtomicU64::new(0));
        let w = woken.clone();
        let busy_watch = watcher
            .watch(
                &busy,
                Arc::new(move || {
                    w.fetch_add(1, Ordering::SeqCst);
                }),
            )
            .expect("inotify on Linux");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (stop, busy) = (stop.clone(), busy.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    std::fs::write(&busy, n.to_string()).unwrap();
                }
            })
        };
        let (done, finished) = std::sync::mpsc::channel();
        let watcher2 = watcher.clone();
        let base = root.path().to_path_buf();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            for i in 0..300 {
                let dir = base.join(format!("d{i}"));
                std::fs::create_dir(&dir).unwrap();
                kept.push(watcher2.watch(&dir.join("f.txt"), Arc::new(|| {})));
                if i % 3 == 0 {
                    kept.pop();
                }
            }
            let _ = done.send(kept.len());
        });
        let outcome = finished.recv_timeout(Duration::from_secs(60));
        stop.store(true, Ordering::SeqCst);
        writer.join().unwrap();
        if outcome.is_err() {
            // Deadlocked: dropping the watches would wait for the lock the stuck thread holds.
            std::mem::forget(busy_watch);
            std::mem::forget(watcher);
        }
        assert_eq!(
            outcome,
            Ok(200),
            "300 watches added beside a busy directory in 60 s"
        );
        assert!(woken.load(Ordering::SeqCst) > 0);
    }
}
