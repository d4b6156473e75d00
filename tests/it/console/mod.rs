//! The web console under `/ui`: its files over HTTP, and its pages in a real headless Chromium.

#[cfg(feature = "airbyte")]
mod airbyte;
mod browser;
mod driver;
mod http;
mod schemas;
