//! Integration tests: a real worker on an ephemeral port, a real SQLite file, real files.

mod cli;
mod common;
mod concurrency;
mod edges;
mod errors;
mod faults;
mod kafka;
mod kafka_security;
mod kip980;
mod lifecycle;
mod metrics;
mod migrate;
mod offsets;
mod persistence;
mod plugins;
mod rest_api;
mod rest_polish;
mod security;
mod task_cap;
mod topics;
mod transforms;
mod verifiable;
