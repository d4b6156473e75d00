//! Avro with a Schema Registry: schemas parsed and checked as Avro's Java parser does ([`schema`]),
//! compatibility between schemas by Avro's resolution rules at the registry's seven levels
//! ([`compat`]), Connect schemas mapped to and from Avro as Confluent's `AvroData` maps them
//! ([`connect`]), Avro's binary encoding of Connect values ([`binary`]), and Confluent's
//! `AvroConverter` in its wire format ([`converter`]), and Avro's JSON encoding for display and the REST
//! Proxy ([`json`]).

pub mod anything;
pub mod binary;
pub mod compat;
pub mod connect;
pub mod converter;
pub mod defaults;
pub mod json;
pub mod named;
#[cfg(test)]
mod named_tests;
pub mod schema;
#[cfg(test)]
mod tests;

pub use converter::{AvroConverter, CLASS};
pub use schema::AvroSchema;
