//! Protobuf with a Schema Registry: `.proto` schemas (proto2 and proto3, imports resolved by the
//! references' names and the built-in imports) compiled into descriptors ([`schema`], [`builtin`]),
//! compatibility by Confluent's Protobuf rules at the registry's seven levels ([`compat`]), Connect
//! schemas mapped to and from Protobuf as Confluent's `ProtobufData` maps them ([`connect`]), and
//! Confluent's `ProtobufConverter` in its wire format ([`converter`]), with `use.latest.version`
//! ([`latest`]).

pub mod builtin;
pub mod compat;
pub mod connect;
pub mod converter;
pub mod display;
mod latest;
pub mod names;
pub mod schema;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_connect;
#[cfg(test)]
mod tests_write;
pub mod text;
pub mod write;

pub use converter::{ProtobufConverter, CLASS};
pub use schema::ProtoSchema;
