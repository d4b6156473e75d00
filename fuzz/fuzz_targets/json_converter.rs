//! JsonConverter: reading any bytes never panics, with and without schemas, and whatever it reads it can
//! write back and read again to the same value.
#![no_main]
use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for schemas in ["true", "false"] {
        let mut config = BTreeMap::new();
        config.insert("schemas.enable".to_string(), schemas.to_string());
        let converter = liteconnect::plugins::new_converter(
            "org.apache.kafka.connect.json.JsonConverter",
            &config,
            false,
        )
        .expect("JsonConverter");
        if let Ok(read) = converter.to_connect("t", Some(data)) {
            if let Ok(written) = converter.from_connect("t", read.schema.as_deref(), &read.value) {
                let again = converter
                    .to_connect("t", written.as_deref())
                    .expect("re-reading what was written");
                if !non_finite(&read.value) {
                    assert_eq!(again.value, read.value, "round trip");
                }
            }
        }
    }
});

/// NaN and the infinities are written as the strings "NaN" / "Infinity", as Jackson writes them, so
/// they read back as strings: the one place where a round trip changes the value, as it does in Kafka.
fn non_finite(v: &liteconnect::data::Value) -> bool {
    use liteconnect::data::Value;
    match v {
        Value::Float32(f) => !f.is_finite(),
        Value::Float64(f) => !f.is_finite(),
        Value::Array(items) => items.iter().any(non_finite),
        Value::Map(entries) => entries.iter().any(|(k, v)| non_finite(k) || non_finite(v)),
        Value::Struct(s) => s.values.iter().any(non_finite),
        _ => false,
    }
}
