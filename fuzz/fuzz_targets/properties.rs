//! Java properties parsing never panics, and what it accepts round-trips through the worker config reader.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(pairs) = liteconnect::config::properties::parse_properties(&text) {
        let _ = liteconnect::config::worker::WorkerConfig::from_props(pairs.into_iter().collect());
    }
});
