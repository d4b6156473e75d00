//! The schema types a registry holds, behind one face: a schema parsed by its type (with the schemas its
//! references name), its canonical text, and compatibility between two schemas of one type. The
//! registry's REST API and the converters dispatch here, so a new schema type is one arm in each match.

use super::Level;
use crate::converters::avro::{compat as avro_compat, json as avro_json, AvroSchema};

/// The schema types this registry parses and checks, as `GET /schemas/types` lists them.
pub const SCHEMA_TYPES: &[&str] = &["AVRO"];

/// A schema parsed by its type.
#[derive(Clone, Debug)]
pub enum ParsedSchema {
    /// An Avro schema.
    Avro(AvroSchema),
}

/// A schema a reference names: the reference's name (an Avro type name's schema, a Protobuf import
/// path, a JSON Schema `$ref` URL), the schema's text and the schema parsed.
#[derive(Clone, Debug)]
// `name` and `text` are what Protobuf imports and JSON Schema `$ref`s resolve by; Avro needs the parsed
// schema alone.
#[allow(dead_code)]
pub struct Referenced {
    /// The reference's `name`.
    pub name: String,
    /// The referenced schema's text.
    pub text: String,
    /// The referenced schema, parsed.
    pub parsed: ParsedSchema,
}

impl ParsedSchema {
    /// Parses `text` as a schema of `schema_type` (upper case: `AVRO`, `PROTOBUF`, `JSON`), after the
    /// schemas its references name.
    ///
    /// # Errors
    /// Why the schema is invalid, or that the type is not one this registry checks.
    pub fn parse(schema_type: &str, text: &str, refs: &[Referenced]) -> Result<Self, String> {
        match schema_type {
            "AVRO" => {
                let known: Vec<AvroSchema> = refs
                    .iter()
                    .filter_map(|r| r.parsed.as_avro().cloned())
                    .collect();
                AvroSchema::parse_with(text, &known)
                    .map(ParsedSchema::Avro)
                    .map_err(|e| e.to_string())
            }
            other => Err(format!(
                "schema type {other} is not supported by this registry (it checks {})",
                SCHEMA_TYPES.join(", ")
            )),
        }
    }

    /// The Avro schema, when this is one.
    pub fn as_avro(&self) -> Option<&AvroSchema> {
        match self {
            ParsedSchema::Avro(a) => Some(a),
        }
    }

    /// The schema's type, as the registry names it.
    pub fn schema_type(&self) -> &'static str {
        match self {
            ParsedSchema::Avro(_) => "AVRO",
        }
    }

    /// A framed record's payload (the bytes after the 5-byte header) decoded to JSON for display: Avro
    /// in Avro's JSON encoding (a union's value wrapped as `{"<branch>": value}`), as Confluent's REST
    /// Proxy shows it.
    ///
    /// # Errors
    /// The payload does not follow the schema.
    pub fn payload_to_json(&self, payload: &[u8]) -> Result<serde_json::Value, String> {
        match self {
            ParsedSchema::Avro(a) => avro_json::to_json(a, payload).map_err(|e| e.to_string()),
        }
    }

    /// JSON (as [`ParsedSchema::payload_to_json`] answers it) encoded as a payload of this schema,
    /// without the 5-byte header.
    ///
    /// # Errors
    /// The JSON does not follow the schema.
    pub fn json_to_payload(&self, json: &serde_json::Value) -> Result<Vec<u8>, String> {
        match self {
            ParsedSchema::Avro(a) => avro_json::from_json(a, json).map_err(|e| e.to_string()),
        }
    }

    /// The canonical text stored and compared (two registrations with the same canonical text are one
    /// schema).
    pub fn canonical(&self) -> String {
        match self {
            ParsedSchema::Avro(a) => a.canonical(),
        }
    }
}

/// Checks `new` against `previous` (oldest first) at `level` by the rules of its type: the messages of
/// every incompatibility, empty when compatible (`previous` holds versions of the same type).
pub fn check(level: Level, new: &ParsedSchema, previous: &[ParsedSchema]) -> Vec<String> {
    match new {
        ParsedSchema::Avro(new) => {
            let same: Vec<AvroSchema> = previous
                .iter()
                .filter_map(|p| p.as_avro().cloned())
                .collect();
            avro_compat::check(level, new, &same)
        }
    }
}
