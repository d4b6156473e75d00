//! Connectors that speak HTTP at the edge: the HTTP sinks that send records to an endpoint, the webhook
//! source that devices post to, and the polling source that reads an HTTP API on a timer.

pub mod poll;
pub mod sink;
pub mod webhook;
