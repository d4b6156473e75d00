//! Avro for the embedded Schema Registry: schemas parsed and checked as Avro's Java parser does
//! ([`schema`]), and compatibility between schemas by Avro's resolution rules at the registry's seven
//! levels ([`compat`]).

pub mod compat;
pub mod schema;

pub use compat::Level;
pub use schema::{AvroSchema, SchemaError};
