//! The client side of the command line: connector files given to the worker, and the `export` and
//! `migrate` commands that talk to a running worker over its REST API; the hidden `__child-host`
//! command that runs plugin programs for the worker.

pub mod child_host;
pub mod connector_file;
pub(crate) mod drain;
pub mod endpoint;
pub mod export;
pub mod log;
pub mod migrate;
pub mod schemas;
pub mod tryout;
