//! The HTTP sink connectors: records out of the local log as HTTP requests.
//!
//! - [`AivenHttpSink`] (`io.aiven.kafka.connect.http.HttpSinkConnector`), with Aiven's keys;
//! - [`ConfluentHttpSink`] (`io.confluent.connect.http.HttpSinkConnector`), with Confluent's public keys.
//!
//! Both share one task ([`task::HttpSinkTask`]): records are sent from `put`, one request per record or
//! in batches, and the worker commits offsets only past records the endpoint answered with a 2xx.

pub mod client;
pub mod config;
pub mod defs;
pub mod task;

use std::collections::BTreeMap;

use self::config::Flavor;
use crate::config::def::ConfigDef;
use crate::connectors::{plugin_identity, ConnectorPlugin, Props, SinkTask, TaskError};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `io.aiven.kafka.connect.http.HttpSinkConnector`.
#[derive(Debug)]
pub struct AivenHttpSink;

/// `io.confluent.connect.http.HttpSinkConnector`.
#[derive(Debug)]
pub struct ConfluentHttpSink;

/// What both classes share: task configs are copies of the connector's; offsets are the worker's.
macro_rules! http_sink {
    ($flavor:expr, $def:path) => {
        fn config_def(&self) -> ConfigDef {
            $def()
        }
        fn validate(&self, config: &BTreeMap<String, Option<String>>) -> Vec<(String, String)> {
            config::validate($flavor, config)
        }
        fn task_configs(&self, config: &Props, max_tasks: usize) -> Result<Vec<Props>, TaskError> {
            Ok(vec![config.clone(); max_tasks.max(1)])
        }
        fn sink_task(&self) -> Option<Box<dyn SinkTask>> {
            Some(Box::new(task::HttpSinkTask::new($flavor)))
        }
        fn acknowledges_offsets(&self) -> bool {
            true
        }
    };
}

impl ConnectorPlugin for AivenHttpSink {
    plugin_identity!(
        "io.aiven.kafka.connect.http.HttpSinkConnector",
        Sink,
        VERSION,
        "io.aiven.kafka.connect.http.HttpSinkTask"
    );
    http_sink!(Flavor::Aiven, defs::aiven);
}

impl ConnectorPlugin for ConfluentHttpSink {
    plugin_identity!(
        "io.confluent.connect.http.HttpSinkConnector",
        Sink,
        VERSION,
        "io.confluent.connect.http.HttpSinkTask"
    );
    http_sink!(Flavor::Confluent, defs::confluent);
}
