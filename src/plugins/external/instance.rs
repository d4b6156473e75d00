//! The long-lived process of a running connector (protocol 1.1, for programs whose handshake says
//! `"monitors": true`): started with the connector's config,
//! it answers the connector's task configs while the connector runs and may ask, at any time, for its
//! tasks to be reconfigured (`request_task_reconfiguration`). A thread owns the process; the worker's
//! requests reach it through a queue and a wake-up on the process's own input.

use std::sync::mpsc;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::connector::tasks_of;
use super::process::{Incoming, PluginProcess};
use super::program::{blocking, ProgramClass};
use crate::connectors::{ConnectorEvent, ConnectorEvents, ConnectorInstance, Props, TaskError};

/// A request from the worker to the connector's thread.
enum Command {
    /// Ask for task configs; the answer goes back on the sender.
    TaskConfigs(Json, mpsc::Sender<Result<Json, TaskError>>),
    /// Stop the process and end the thread.
    Stop,
}

/// A running connector's process.
pub struct ExternalInstance {
    program: Arc<ProgramClass>,
    commands: mpsc::Sender<Command>,
    waker: mpsc::Sender<Incoming>,
    config: Props,
}

impl ExternalInstance {
    /// Starts the connector `name`'s process and sends it `start`; `None` when the program does not
    /// say `"monitors": true` in its handshake (protocol 1.0, or a connector with nothing to watch): it
    /// answers questions only, each in a process of its own.
    ///
    /// # Errors
    /// The program could not be started, or failed its `start`.
    pub fn start(
        program: Arc<ProgramClass>,
        name: &str,
        config: &Props,
        events: ConnectorEvents,
    ) -> Result<Option<Self>, TaskError> {
        blocking(|| {
            let label = format!("{name} ({})", program.class);
            let mut process =
                PluginProcess::start(&program.spec, &label, program.class, "connector")?;
            if process.minor() < 1 || !process.says("monitors") {
                process.stop(program.spec.grace);
                return Ok(None);
            }
            if let Err(e) = process.request(&json!({"type": "start", "config": config}), "started")
            {
                process.stop(program.spec.grace);
                return Err(e);
            }
            let (commands, queue) = mpsc::channel();
            let waker = process.waker();
            let grace = program.spec.grace;
            let thread_name = format!("plugin-connector-{name}");
            std::thread::Builder::new()
                .name(thread_name)
                .spawn(move || serve(process, &queue, &events, grace))
                .map_err(|e| TaskError::Fatal(format!("Could not start a thread: {e}")))?;
            Ok(Some(ExternalInstance {
                program,
                commands,
                waker,
                config: config.clone(),
            }))
        })
    }
}

/// The thread of a running connector's process: hands over the program's notices as events, and
/// answers the worker's requests until told to stop (then stops the process).
fn serve(
    mut process: PluginProcess,
    queue: &mpsc::Receiver<Command>,
    events: &ConnectorEvents,
    grace: std::time::Duration,
) {
    loop {
        match process.next_message() {
            Ok(Some(message)) => match message.get("type").and_then(Json::as_str) {
                Some("request_task_reconfiguration") => events(ConnectorEvent::Reconfigure),
                other => tracing::warn!(
                    "The connector's plugin program sent {} unasked; it is ignored",
                    other.unwrap_or("a message without a type")
                ),
            },
            Ok(None) => {}
            Err(e) => {
                events(ConnectorEvent::Failed(e.clone()));
                // Answer what is asked with the failure until told to stop.
                while let Ok(Command::TaskConfigs(_, reply)) = queue.recv() {
                    let _ = reply.send(Err(e.clone()));
                }
                return;
            }
        }
        loop {
            match queue.try_recv() {
                Ok(Command::TaskConfigs(question, reply)) => {
                    let _ = reply.send(process.request(&question, "task_configs"));
                }
                Ok(Command::Stop) | Err(mpsc::TryRecvError::Disconnected) => {
                    process.stop(grace);
                    return;
                }
                Err(mpsc::TryRecvError::Empty) => break,
            }
        }
    }
}

impl ConnectorInstance for ExternalInstance {
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
        let (reply, answer) = mpsc::channel();
        let question =
            json!({"type": "task_configs", "config": self.config, "max_tasks": max_tasks});
        let stopped = || TaskError::fatal("The connector's plugin program has stopped");
        self.commands
            .send(Command::TaskConfigs(question, reply))
            .map_err(|_| stopped())?;
        let _ = self.waker.send(Incoming::Wake);
        let answer = blocking(|| answer.recv()).map_err(|_| stopped())??;
        tasks_of(&answer, self.program.version)
    }
}

impl Drop for ExternalInstance {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Stop);
        let _ = self.waker.send(Incoming::Wake);
    }
}
