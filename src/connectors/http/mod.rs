//! Connectors that talk HTTP.

pub mod sink;
