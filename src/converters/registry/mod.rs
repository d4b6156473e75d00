//! What every Schema Registry converter shares: the client with its keys and caches and Confluent's
//! wire format ([`client`]), the compatibility levels ([`level`]), and the schema types behind one face
//! ([`kinds`]) for the registry's API and the converters; framed records decoded with the local
//! registry's schemas for display ([`local`]).

pub mod client;
pub mod kinds;
pub mod level;
pub mod local;
pub mod other;

pub use client::{frame, unframe, RegistryClient, RegistryConfig};
pub use level::Level;
