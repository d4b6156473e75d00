//! The Kafka listener's frame and request decoding (with the record batches of Produce requests): any
//! bytes decode or give an error, never a panic.
//! Element counts mutated into billions must not reserve memory either (the vendored crate's patch).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(message) = liteconnect::kafka::codec::decode_frame_and_records(data) {
        assert!(!message.is_empty());
    }
});
