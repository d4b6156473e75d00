//! Integration tests: a real worker on an ephemeral port, a real SQLite file, real files.

mod cli;
mod common;
mod kip980;
mod lifecycle;
mod migrate;
mod offsets;
mod persistence;
mod rest_api;
mod verifiable;
