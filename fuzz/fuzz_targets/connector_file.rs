//! Connector files of any shape (JSON flat, JSON request, properties) never panic the reader or validation.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(c) = liteconnect::cli::connector_file::parse("fuzz.json", &text) {
        let plugins = liteconnect::plugins::Plugins::new();
        let config = c.config.into_iter().map(|(k, v)| (k, Some(v))).collect();
        let _ = plugins.validate(&config);
    }
});
