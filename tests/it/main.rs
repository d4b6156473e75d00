//! Integration tests: a real worker on an ephemeral port, a real SQLite file, real files.

mod cli;
mod cli_log;
mod common;
mod concurrency;
mod edges;
mod errors;
mod faults;
mod http_sink;
mod http_source;
mod kafka;
mod kafka_security;
mod kip980;
mod lifecycle;
mod migrate;
mod mqtt;
mod offsets;
mod persistence;
mod plugins;
mod rest_api;
mod rest_polish;
mod security;
mod spooldir;
mod task_cap;
mod topics;
mod transforms;
mod verifiable;
