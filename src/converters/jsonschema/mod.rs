//! JSON Schema with a Schema Registry: schema documents parsed and checked ([`schema`]), compatibility
//! between them by Confluent's rules at the registry's seven levels ([`compat`]), Connect schemas mapped
//! to and from JSON Schema as Confluent's `JsonSchemaData` maps them ([`connect`]), Connect values as
//! JSON documents ([`value`]), documents validated against their schema ([`validate`]), and Confluent's
//! `JsonSchemaConverter` in its wire format ([`converter`]).

pub mod compat;
pub mod connect;
pub mod converter;
pub mod schema;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_keys;
pub mod validate;
pub mod value;

pub use converter::{JsonSchemaConverter, CLASS};
pub use schema::JsonSchema;
