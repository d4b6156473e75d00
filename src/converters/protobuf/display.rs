//! A Protobuf payload (message indexes, then the message) shown as JSON and made from JSON, for the REST
//! Proxy's `protobuf` format, `liteconnect consume` and the console: through the message's Connect form,
//! as JsonConverter without schemas writes it (fields by name, bytes in base64).

use prost::Message;
use prost_reflect::DynamicMessage;
use serde_json::{json, Value as Json};

use super::connect::{from_connect, message_schema, to_connect, ReadOptions};
use super::converter::{read_indexes, write_indexes};
use super::schema::ProtoSchema;
use crate::converters::json::{JsonConverter, JsonConverterConfig};
use crate::converters::Converter;

/// How messages are read for display: Confluent's defaults.
const READ: ReadOptions = ReadOptions::CONFLUENT;

impl ProtoSchema {
    /// A payload (message indexes, then the message) as JSON.
    ///
    /// # Errors
    /// Indexes naming no message, bytes that are not that message.
    pub fn payload_to_json(&self, payload: &[u8]) -> Result<Json, String> {
        let (indexes, body) = read_indexes(payload)?;
        let message = self.message_at(&indexes)?;
        let schema = message_schema(&message, READ);
        let msg = DynamicMessage::decode(message, body).map_err(|e| e.to_string())?;
        let value = to_connect(&msg, &schema).map_err(|e| e.0)?;
        let bytes = JsonConverter::schemaless()
            .from_connect("", Some(&schema), &value)
            .map_err(|e| e.0)?
            .unwrap_or_else(|| b"null".to_vec());
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }

    /// JSON (as [`ProtoSchema::payload_to_json`] shows it) as a payload of the schema's first message.
    ///
    /// # Errors
    /// JSON that does not fit the message.
    pub fn json_to_payload(&self, json: &Json) -> Result<Vec<u8>, String> {
        let message = self.message_at(&[0])?;
        let schema = message_schema(&message, READ);
        let converter = JsonConverter::new(JsonConverterConfig::default());
        let schema_json: Json = converter
            .schema_to_json(&schema)
            .ok()
            .and_then(|s| serde_json::from_str::<Json>(&s).ok())
            .ok_or("the message has no JSON form")?;
        let envelope = json!({"schema": schema_json, "payload": json}).to_string();
        let value = converter
            .to_connect("", Some(envelope.as_bytes()))
            .map_err(|e| e.0)?
            .value;
        let msg = from_connect(&schema, &value, &message).map_err(|e| e.0)?;
        let mut out = Vec::new();
        write_indexes(&[0], &mut out);
        msg.encode(&mut out).map_err(|e| e.to_string())?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_shows_as_json_and_is_made_from_it() {
        let schema = ProtoSchema::parse(
            "syntax = \"proto3\";\nmessage Reading { string sensor = 1; int64 n = 2; bytes raw = 3; }",
            Default::default(),
        )
        .unwrap();
        let json = json!({"sensor": "s1", "n": 7, "raw": "AAE="});
        let payload = schema.json_to_payload(&json).unwrap();
        assert_eq!(payload[0], 0, "the first message's index shortcut");
        assert_eq!(schema.payload_to_json(&payload).unwrap(), json);
        assert!(schema.json_to_payload(&json!({"n": "seven"})).is_err());
        assert!(
            schema.payload_to_json(&[2, 8]).is_err(),
            "index 4 names no message"
        );
    }
}
