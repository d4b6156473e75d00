//! The Kafka listener's frame and request decoding (with the record batches of Produce requests): any
//! bytes decode or give an error, never a panic.
//!
//! kafka-protocol 0.18 reserves the declared length of an array before reading its elements, so an
//! element count mutated into billions ends in an allocation failure (an abort, not a panic); run with
//! `-rss_limit_mb` and `-malloc_limit_mb` to see other findings past it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(message) = liteconnect::kafka::codec::decode_frame_and_records(data) {
        assert!(!message.is_empty());
    }
});
