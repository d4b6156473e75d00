//! The REST API's request bodies: any bytes get an answer (accepted, or a 400 message), never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    use liteconnect::rest::bodies;
    if let Err(message) = bodies::create_connector(data) {
        assert!(!message.is_empty());
    }
    let _ = bodies::connector_config(data);
    let _ = bodies::offsets(data);
    let _ = bodies::produce(data, false);
    let _ = bodies::produce(data, true);
});
