//! The worker: runs tasks, owns their converters, and stops them within the graceful timeout.
//!
//! Task loops ([`job`]) run on OS threads of the worker's own pool ([`pool`]), never on the async
//! executor, so a connector's blocking I/O never touches it. Each worker creates its pool and closes it
//! when it shuts down ([`Worker::shutdown`]), so two workers in one process share nothing. A task with something to do keeps its thread; an idle one
//! (caught up, paused, or a source that asked to be polled later) is parked and holds none. A task that
//! returns an error or panics is marked FAILED with a trace; the worker and the other tasks go on.

mod control;
pub(crate) mod convert;
pub(crate) mod errors;
mod job;
mod pool;
mod sink;
mod source;
mod watch;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use control::{LogSignal, Mode, TaskControl};
pub use convert::Converters;
use convert::StageError;

use crate::config::worker::WorkerConfig;
use crate::connectors::{ConnectorPlugin, Props, TaskError};
use crate::metrics::Metrics;
use crate::model::State;
use crate::status::StatusBoard;
use crate::storage::Store;

/// What a task is started from: its connector (plugin, name, config) and its place among the
/// connector's tasks.
#[derive(Clone, Copy)]
pub struct TaskSpec<'a> {
    /// The connector's plugin.
    pub plugin: &'a Arc<dyn ConnectorPlugin>,
    /// The connector's name.
    pub connector: &'a str,
    /// The connector's config (read for converters, transforms and error handling).
    pub connector_config: &'a Props,
    /// The task's index.
    pub task: u32,
    /// How many tasks the connector has.
    pub task_count: u32,
}

/// Everything a task needs.
pub(crate) struct TaskRuntime {
    pub(crate) connector: String,
    pub(crate) task: u32,
    /// How many tasks the connector has (sinks share partitions among them).
    pub(crate) task_count: u32,
    pub(crate) generation: u64,
    pub(crate) config: Props,
    pub(crate) control: Arc<TaskControl>,
    pub(crate) store: Store,
    pub(crate) statuses: Arc<StatusBoard>,
    pub(crate) log_signal: Arc<LogSignal>,
    pub(crate) converters: Converters,
    pub(crate) transforms: crate::transforms::TransformChain,
    pub(crate) errors: errors::ErrorHandler,
    pub(crate) worker: Arc<WorkerConfig>,
    pub(crate) metrics: Arc<crate::metrics::TaskMetrics>,
    /// A problem the task reported that does not stop it ([`SourceTaskContext::warn`]): shown as the
    /// trace of its RUNNING status until cleared.
    ///
    /// [`SourceTaskContext::warn`]: crate::connectors::SourceTaskContext::warn
    pub(crate) problem: std::sync::Mutex<Option<String>>,
    /// The worker's file watcher.
    pub(crate) files: watch::FileWatcher,
}

impl TaskRuntime {
    /// Runs the connector's transform chain on one record; `Ok(None)` means a transform dropped it.
    pub(crate) fn transform(
        &self,
        record: crate::record::ConnectRecord,
        kafka_offset: Option<i64>,
    ) -> Result<Option<crate::record::ConnectRecord>, convert::StageFailure> {
        if self.transforms.is_empty() {
            return Ok(Some(record));
        }
        let ctx = crate::transforms::RecordContext { kafka_offset };
        self.transforms
            .apply(record, &ctx)
            .map_err(|e| convert::StageFailure {
                stage: "TRANSFORMATION",
                class: e.class,
                message: e.message,
            })
    }

    pub(crate) fn report(&self, state: State, trace: Option<String>) {
        // A RUNNING status without a trace of its own shows the task's standing problem, if any.
        let trace = match (state, trace) {
            (State::Running, None) => {
                // RUNNING without a trace of its own: whatever was retried went through.
                self.metrics
                    .retrying
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                self.problem.lock().ok().and_then(|p| p.clone())
            }
            (_, trace) => trace,
        };
        self.metrics.set_phase(match state {
            State::Running => crate::metrics::Phase::Running,
            State::Paused => crate::metrics::Phase::Paused,
            _ => crate::metrics::Phase::Other,
        });
        self.statuses
            .set_task(&self.connector, self.task, self.generation, state, trace);
    }

    /// Sets or clears the task's standing problem (see [`TaskRuntime::problem`]) and shows it at once
    /// while the task runs.
    pub(crate) fn set_problem(&self, problem: Option<String>) {
        let changed = match self.problem.lock() {
            Ok(mut p) if *p != problem => {
                *p = problem;
                true
            }
            _ => false,
        };
        if changed && self.statuses.task_state(&self.connector, self.task) == Some(State::Running) {
            self.report(State::Running, None);
        }
    }

    /// Reports RUNNING with the trace of a retriable error raised at `at` (a task call or a stage):
    /// the task goes on, and its status says why nothing moves meanwhile.
    pub(crate) fn report_retrying(&self, at: &str, message: String) {
        let error = TaskError::Retriable(message);
        self.metrics
            .retrying
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.report(State::Running, Some(trace_of(at, &error)));
    }

    /// The stop/pause checkpoint at the top of a task loop: as [`TaskRuntime::checkpoint`], except that
    /// a paused task is not waited for here: [`Checkpoint::Paused`] tells the loop to park until its mode
    /// changes, so it holds no thread while paused.
    ///
    /// # Errors
    /// `settle`'s failure.
    pub(crate) fn checkpoint_parking(
        &self,
        settle: impl FnOnce() -> Result<(), StageError>,
    ) -> Result<Checkpoint, StageError> {
        match self.control.mode() {
            Mode::Run => Ok(Checkpoint::Run),
            Mode::Stop => {
                settle()?;
                Ok(Checkpoint::Stop)
            }
            Mode::Pause => {
                settle()?;
                self.report(State::Paused, None);
                Ok(Checkpoint::Paused)
            }
        }
    }

    /// The stop/pause checkpoint of a task loop. When the task is to stop or pause, `settle` runs first (a
    /// sink flushes and commits its offsets); a paused task then reports PAUSED and waits until it is
    /// resumed or stopped.
    ///
    /// # Errors
    /// `settle`'s failure.
    pub(crate) fn checkpoint(
        &self,
        settle: impl FnOnce() -> Result<(), StageError>,
    ) -> Result<Checkpoint, StageError> {
        Ok(match self.checkpoint_parking(settle)? {
            Checkpoint::Paused => match self.control.wait_while_paused() {
                Mode::Stop => Checkpoint::Stop,
                _ => Checkpoint::Resumed,
            },
            other => other,
        })
    }

    /// Logs how many records `errors.tolerance=all` skipped while the task ran (when it ends).
    pub(crate) fn warn_skipped(&self) {
        let skipped = self.errors.skipped();
        if skipped > 0 {
            tracing::warn!(connector = %self.connector, task = self.task, skipped, "Records skipped by errors.tolerance=all while this task ran.");
        }
    }
}

/// Where a task loop stands after [`TaskRuntime::checkpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checkpoint {
    /// Running: go on.
    Run,
    /// It was paused and has been resumed.
    Resumed,
    /// It is to stop: return.
    Stop,
    /// It is paused and has reported PAUSED: park until the mode changes
    /// ([`TaskRuntime::checkpoint_parking`] only).
    Paused,
}

struct RunningTask {
    control: Arc<TaskControl>,
    /// Resolves when the task's loop has ended and its job is dropped (its sender with it).
    done: tokio::sync::oneshot::Receiver<()>,
}

/// Runs and stops tasks.
#[derive(Debug)]
pub struct Worker {
    store: Store,
    /// The process's metrics: task start-ups and each task's own.
    metrics: Arc<Metrics>,
    config: Arc<WorkerConfig>,
    statuses: Arc<StatusBoard>,
    log_signal: Arc<LogSignal>,
    tasks: Mutex<HashMap<(String, u32), RunningTask>>,
    generations: AtomicU64,
    /// File-system events for file sources.
    files: watch::FileWatcher,
    /// Where the tasks run.
    pool: Arc<pool::Pool>,
}

impl std::fmt::Debug for RunningTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningTask")
            .field("mode", &self.control.mode())
            .finish()
    }
}

/// Formats an error the way status traces show it.
pub fn trace_of(stage: &str, error: &TaskError) -> String {
    let class = match error {
        TaskError::Retriable(_) => "org.apache.kafka.connect.errors.RetriableException",
        TaskError::Fatal(_) => "org.apache.kafka.connect.errors.ConnectException",
    };
    format!("{class}: {error}\n\tat {stage}")
}

impl Worker {
    /// A worker with no tasks.
    pub fn new(
        store: Store,
        metrics: Arc<Metrics>,
        config: Arc<WorkerConfig>,
        statuses: Arc<StatusBoard>,
    ) -> Self {
        Worker {
            store,
            metrics,
            config,
            statuses,
            log_signal: Arc::new(LogSignal::default()),
            tasks: Mutex::new(HashMap::new()),
            generations: AtomicU64::new(1),
            files: watch::FileWatcher::default(),
            pool: pool::Pool::new(),
        }
    }

    /// What wakes readers of the topic log when records are appended.
    pub fn log_signal(&self) -> &Arc<LogSignal> {
        &self.log_signal
    }

    /// The process's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Starts one task in the given mode (RUN or PAUSE) on the task pool. A task with the same id must not be running.
    pub fn start_task(&self, spec: TaskSpec<'_>, task_config: Props, mode: Mode) {
        let TaskSpec {
            plugin,
            connector,
            connector_config,
            task,
            task_count,
        } = spec;
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(%connector, task, task_count, ?mode, "Starting task.");
        self.statuses
            .begin_task(connector, task, generation, State::Unassigned);
        let control = TaskControl::new(mode);
        let (done_tx, done) = tokio::sync::oneshot::channel::<()>();
        self.tasks.lock().expect("tasks lock").insert(
            (connector.to_string(), task),
            RunningTask {
                control: control.clone(),
                done,
            },
        );
        let (converters, transforms) = match self.pipeline(plugin, connector_config) {
            Ok(p) => p,
            Err(e) => {
                self.tasks
                    .lock()
                    .expect("tasks lock")
                    .remove(&(connector.to_string(), task));
                let error = TaskError::Fatal(e);
                self.statuses.set_task(
                    connector,
                    task,
                    generation,
                    State::Failed,
                    Some(trace_of("Worker.startTask", &error)),
                );
                self.metrics.task_started(false);
                return;
            }
        };
        let is_sink = plugin.connector_type() == crate::config::connector::ConnectorType::Sink;
        let metrics = self.metrics.start_task(connector, task, plugin.as_ref());
        let runtime = TaskRuntime {
            connector: connector.to_string(),
            task,
            task_count,
            generation,
            config: task_config,
            control,
            store: self.store.clone(),
            statuses: self.statuses.clone(),
            log_signal: self.log_signal.clone(),
            converters,
            transforms,
            errors: errors::ErrorHandler::new(
                connector,
                task,
                connector_config,
                (is_sink, metrics.clone()),
            )
            .wakes(self.log_signal.clone()),
            worker: self.config.clone(),
            metrics,
            problem: std::sync::Mutex::new(None),
            files: self.files.clone(),
        };
        self.metrics.task_started(true);
        self.pool
            .submit(job::Job::new(runtime, plugin.clone(), done_tx));
    }

    /// A task's converters and transformation chain. A connector's own converter defaults come
    /// between its config and the worker's.
    fn pipeline(
        &self,
        plugin: &Arc<dyn ConnectorPlugin>,
        connector_config: &Props,
    ) -> Result<(Converters, crate::transforms::TransformChain), String> {
        Converters::for_plugin(plugin.as_ref(), connector_config, &self.config)
            .map_err(|e| e.to_string())
            .and_then(|c| {
                crate::transforms::TransformChain::from_config(
                    connector_config,
                    &crate::plugins::Plugins,
                )
                .map(|t| (c, t))
                .map_err(String::from)
            })
    }

    /// The ids of a connector's running tasks.
    pub fn task_ids(&self, connector: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .tasks
            .lock()
            .expect("tasks lock")
            .keys()
            .filter(|(c, _)| c == connector)
            .map(|(_, t)| *t)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Sets the mode of every task of a connector.
    pub fn set_mode(&self, connector: &str, mode: Mode) {
        for ((c, _), t) in self.tasks.lock().expect("tasks lock").iter() {
            if c == connector {
                t.control.set_mode(mode);
            }
        }
    }

    /// Stops the given tasks of a connector (all when `only` is None) and waits for their loops to end, at most
    /// `task.shutdown.graceful.timeout.ms`. Tasks that do not finish in time are abandoned with a warning.
    pub async fn stop_tasks(&self, connector: &str, only: Option<&[u32]>) {
        let stopping: Vec<((String, u32), RunningTask)> = {
            let mut tasks = self.tasks.lock().expect("tasks lock");
            let keys: Vec<(String, u32)> = tasks
                .keys()
                .filter(|(c, t)| c == connector && only.is_none_or(|o| o.contains(t)))
                .cloned()
                .collect();
            keys.into_iter()
                .filter_map(|k| tasks.remove(&k).map(|t| (k, t)))
                .collect()
        };
        let ids: Vec<u32> = stopping.iter().map(|((_, t), _)| *t).collect();
        if !ids.is_empty() {
            tracing::debug!(%connector, tasks = ?ids, "Stopping tasks.");
        }
        self.await_stopped(stopping).await;
        if !ids.is_empty() {
            tracing::debug!(%connector, tasks = ?ids, "Tasks stopped.");
        }
    }

    /// Stops every task of every connector (worker shutdown).
    pub async fn stop_all(&self) {
        let stopping: Vec<_> = self.tasks.lock().expect("tasks lock").drain().collect();
        self.await_stopped(stopping).await;
    }

    /// Stops every task (as [`Worker::stop_all`]), then the task pool: its threads exit once they have
    /// nothing left to run (a task abandoned for not stopping in time keeps its thread until it returns).
    pub async fn shutdown(&self) {
        self.stop_all().await;
        self.pool.close();
    }

    async fn await_stopped(&self, stopping: Vec<((String, u32), RunningTask)>) {
        for (_, t) in &stopping {
            t.control.set_mode(Mode::Stop);
        }
        let timeout = Duration::from_millis(self.config.task_shutdown_graceful_timeout_ms);
        let deadline = tokio::time::Instant::now() + timeout;
        for ((connector, task), t) in stopping {
            if tokio::time::timeout_at(deadline, t.done).await.is_err() {
                tracing::warn!(%connector, task, timeout_ms = timeout.as_millis() as u64, "Task did not stop in time; abandoning it.");
            }
            self.metrics.remove_task(&connector, task);
        }
    }
}

impl Drop for Worker {
    /// A worker dropped without [`Worker::shutdown`] still lets its pool's threads go.
    fn drop(&mut self) {
        self.pool.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::connector::ConnectorType;
    use crate::config::def::ConfigDef;
    use crate::connectors::{SourceTask, SourceTaskContext};
    use crate::record::SourceRecord;
    use crate::storage::{StoreOptions, Synchronous};

    /// What the tasks of a [`TestSource`] do when polled.
    #[derive(Debug, Clone, Copy)]
    enum Behaviour {
        Panic,
        Fail,
        Idle,
    }

    /// A source plugin for these tests.
    #[derive(Debug)]
    struct TestSource {
        class: &'static str,
        behaviour: Behaviour,
    }

    struct TestTask(Behaviour);

    impl SourceTask for TestTask {
        fn start(
            &mut self,
            _config: &Props,
            _context: &dyn SourceTaskContext,
        ) -> Result<(), TaskError> {
            Ok(())
        }
        fn poll(
            &mut self,
            context: &dyn SourceTaskContext,
        ) -> Result<Vec<SourceRecord>, TaskError> {
            match self.0 {
                Behaviour::Panic => panic!("boom in poll"),
                Behaviour::Fail => Err(TaskError::fatal("the source is broken")),
                Behaviour::Idle => {
                    context.idle(Duration::from_millis(20));
                    Ok(Vec::new())
                }
            }
        }
    }

    impl ConnectorPlugin for TestSource {
        fn class(&self) -> &'static str {
            self.class
        }
        fn connector_type(&self) -> ConnectorType {
            ConnectorType::Source
        }
        fn version(&self) -> &'static str {
            "0"
        }
        fn config_def(&self) -> ConfigDef {
            ConfigDef::new()
        }
        fn task_class(&self) -> &'static str {
            "test.Task"
        }
        fn task_configs(&self, config: &Props, _max_tasks: usize) -> Result<Vec<Props>, TaskError> {
            Ok(vec![config.clone()])
        }
        fn source_task(&self) -> Option<Box<dyn SourceTask>> {
            Some(Box::new(TestTask(self.behaviour)))
        }
    }

    /// A source whose task panics or fails on its first poll, to prove the worker survives it.
    fn faulty(panic: bool) -> TestSource {
        TestSource {
            class: "test.Faulty",
            behaviour: if panic {
                Behaviour::Panic
            } else {
                Behaviour::Fail
            },
        }
    }

    /// A worker on a database in `dir`, with string converters.
    fn test_worker(dir: &tempfile::TempDir) -> (Worker, Arc<StatusBoard>) {
        let store = Store::open(&StoreOptions {
            path: dir.path().join("w.db"),
            synchronous: Synchronous::Normal,
            max_bytes: None,
            buffer: None,
        })
        .unwrap();
        let mut props = std::collections::BTreeMap::new();
        props.insert(
            "key.converter".to_string(),
            "org.apache.kafka.connect.storage.StringConverter".to_string(),
        );
        props.insert(
            "value.converter".to_string(),
            "org.apache.kafka.connect.storage.StringConverter".to_string(),
        );
        let config = Arc::new(WorkerConfig::from_props(props).unwrap());
        let metrics = Arc::new(Metrics::default());
        let statuses = StatusBoard::new("w:1".into(), store.clone(), metrics.clone());
        (
            Worker::new(store, metrics, config, statuses.clone()),
            statuses,
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_or_failing_task_is_failed_with_a_trace_and_the_worker_lives_on() {
        let dir = tempfile::tempdir().unwrap();
        let (worker, statuses) = test_worker(&dir);
        let panicking: Arc<dyn ConnectorPlugin> = Arc::new(faulty(true));
        let failing: Arc<dyn ConnectorPlugin> = Arc::new(faulty(false));
        let none = Props::new();
        let spec = |plugin, connector| TaskSpec {
            plugin,
            connector,
            connector_config: &none,
            task: 0,
            task_count: 1,
        };
        worker.start_task(spec(&panicking, "p"), Props::new(), Mode::Run);
        worker.start_task(spec(&failing, "f"), Props::new(), Mode::Run);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while statuses.task_state("p", 0) != Some(State::Failed)
            || statuses.task_state("f", 0) != Some(State::Failed)
        {
            assert!(std::time::Instant::now() < deadline, "tasks did not fail");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let trace = |name: &str| {
            let view = statuses.view(name, "source").unwrap();
            let trace = view.tasks[0].trace.clone();
            trace.unwrap_or_else(|| panic!("no trace: {view:?}"))
        };
        let p = trace("p");
        assert!(p.contains("panicked: boom in poll"), "{p}");
        let f = trace("f");
        assert!(f.contains("the source is broken"), "{f}");
        assert!(f.contains("TASK_POLL"), "{f}");
        // The worker still starts and stops tasks.
        worker.start_task(spec(&failing, "f"), Props::new(), Mode::Pause);
        worker.stop_all().await;
    }

    /// A source that never has records: its task parks between polls.
    fn idle_source() -> TestSource {
        TestSource {
            class: "test.Idle",
            behaviour: Behaviour::Idle,
        }
    }

    /// Waits (at most 5 s, well under the pool threads' keep-alive) until `pool` has no thread running.
    async fn until_no_thread(pool: &pool::Pool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let running = pool.running_threads();
            if running.is_empty() {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "pool threads still running: {running:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_worker_has_its_own_pool_whose_threads_end_at_its_shutdown() {
        let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, a_statuses) = test_worker(&dir_a);
        let (b, b_statuses) = test_worker(&dir_b);
        assert!(!Arc::ptr_eq(&a.pool, &b.pool));
        let idle: Arc<dyn ConnectorPlugin> = Arc::new(idle_source());
        let none = Props::new();
        let spec = TaskSpec {
            plugin: &idle,
            connector: "idle",
            connector_config: &none,
            task: 0,
            task_count: 1,
        };
        a.start_task(spec, Props::new(), Mode::Run);
        b.start_task(spec, Props::new(), Mode::Run);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while a_statuses.task_state("idle", 0) != Some(State::Running)
            || b_statuses.task_state("idle", 0) != Some(State::Running)
        {
            assert!(std::time::Instant::now() < deadline, "tasks did not run");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for worker in [&a, &b] {
            let mut names = worker.pool.running_threads();
            names.sort();
            names.dedup();
            assert_eq!(names, ["task-pool", "task-spawner", "task-timer"]);
        }
        a.shutdown().await;
        until_no_thread(&a.pool).await;
        // The other worker's pool still runs its task.
        let mut names = b.pool.running_threads();
        names.sort();
        names.dedup();
        assert!(names.contains(&"task-timer".to_string()), "{names:?}");
        assert!(names.contains(&"task-spawner".to_string()), "{names:?}");
        assert_eq!(b_statuses.task_state("idle", 0), Some(State::Running));
        b.shutdown().await;
        until_no_thread(&b.pool).await;
    }
}
