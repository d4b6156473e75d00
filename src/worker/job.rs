//! What the task pool ([`super::pool`]) runs for a task: its runtime, its plugin and its source or sink
//! loop, and what a loop asks for when it returns ([`Step`]).
//!
//! A job runs on a pool thread until its loop has nothing to do; it then parks in its task's control
//! block ([`super::control`]) and the thread goes back to the pool. The pool knows jobs only as
//! [`Runnable`] trait objects.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use super::convert::{StageError, TaskStage};
use super::pool::{Pool, Runnable};
use super::sink::SinkLoop;
use super::source::SourceLoop;
use super::TaskRuntime;
use crate::connectors::ConnectorPlugin;
use crate::model::State;

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
        let body = match &mut self.body {
            Some(body) => body,
            empty => empty.insert(if let Some(mut task) = self.plugin.source_task() {
                task.identify(&format!("{}-{}", rt.connector, rt.task));
                Body::Source(SourceLoop::new(task))
            } else if let Some(mut task) = self.plugin.sink_task() {
                task.identify(&format!("{}-{}", rt.connector, rt.task));
                Body::Sink(SinkLoop::new(task))
            } else {
                return Err(StageError::fatal(
                    TaskStage::StartTask,
                    format!("{} has no task", self.plugin.class()),
                ));
            }),
        };
        let result = match body {
            Body::Source(s) => s.resume(rt),
            Body::Sink(s) => s.resume(rt),
        };
        match result {
            Ok(step @ (Step::Park(_) | Step::Paused)) => Ok(step),
            ended => {
                let ended = ended.map(|_| ());
                let ended = match self.body.take() {
                    Some(Body::Source(s)) => s.finish(rt, ended),
                    Some(Body::Sink(s)) => s.finish(rt, ended),
                    None => ended,
                };
                ended.map(|()| Step::Done)
            }
        }
    }
}

impl Runnable for Job {
    /// Runs the job on the current thread until it parks (it is handed to its control block) or ends (a
    /// failure or a panic is reported). A job that would be woken as soon as it parks runs on at once.
    fn run(self: Box<Self>, pool: &Arc<Pool>) {
        let mut job = self;
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
            match control.park(job, timeout, pool) {
                Some(again) => job = again,
                None => return,
            }
        }
    }
}
