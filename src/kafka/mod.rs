//! The Kafka-protocol listener on the local log: Kafka clients, tools and UIs produce to and consume from
//! the same topics the connectors use, with the same offsets.
//!
//! Every request and response is decoded and encoded by the `kafka-protocol` crate; only the message types
//! the listener answers are decoded (each by its own type, never through a catch-all enum, so the binary
//! carries no code for the APIs it does not serve).

pub mod groups;
pub mod sasl;

/// This worker seen as a Kafka broker: its node id and the address it advertises to clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node id (always the same: a one-node cluster).
    pub id: i32,
    /// The advertised host.
    pub host: String,
    /// The advertised port.
    pub port: i32,
}
