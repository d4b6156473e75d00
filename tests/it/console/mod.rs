//! The web console under `/ui`: its files over HTTP, and its pages in a real headless Chromium.

mod browser;
mod driver;
mod http;
