//! Integration tests: a real worker on an ephemeral port, a real SQLite file, real files.

#[cfg(feature = "airbyte")]
mod airbyte;
mod child;
mod cli;
mod cli_log;
mod common;
mod concurrency;
#[cfg(feature = "console")]
mod console;
mod control_plane;
mod edges;
mod errors;
mod faults;
#[cfg(feature = "http")]
mod http_sink;
#[cfg(all(feature = "http", feature = "kafka-client"))]
mod http_source;
mod jdbc;
#[cfg(feature = "kafka-client")]
mod kafka;
#[cfg(all(feature = "kafka-client", feature = "kafka-listener"))]
mod kafka_groups;
#[cfg(all(feature = "kafka-client", feature = "kafka-listener"))]
mod kafka_listener;
#[cfg(feature = "kafka-client")]
mod kafka_security;
mod kip980;
mod layers;
mod lifecycle;
mod metrics;
mod migrate;
#[cfg(feature = "mqtt")]
mod mqtt;
mod offsets;
mod persistence;
mod plugins;
mod plugins_ext;
mod rest_api;
mod rest_polish;
mod rest_proxy_schemas;
#[cfg(feature = "kafka-client")]
mod schema_ids;
mod schema_registry;
mod schema_registry_avro;
mod schema_registry_json;
#[cfg(feature = "protobuf")]
mod schema_registry_protobuf;
mod security;
mod spooldir;
mod task_cap;
mod topics;
mod transforms;
mod tryout;
mod verifiable;
