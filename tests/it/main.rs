//! Integration tests: a real worker on an ephemeral port, a real SQLite file, real files.

mod common;
mod lifecycle;
