//! liteconnect: a Kafka Connect worker for one machine, with all of its state in one SQLite file.

pub mod converters;
pub mod data;
