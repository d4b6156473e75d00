//! Connectors that speak HTTP at the edge: the webhook source that devices post to, and the polling source
//! that reads an HTTP API on a timer.

pub mod poll;
pub mod webhook;
