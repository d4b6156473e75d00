//! The schema types a registry holds, behind one face: a schema parsed by its type (with the schemas its
//! references name), its canonical text, and compatibility between two schemas of one type. The
//! registry's REST API and the converters dispatch here, so a new schema type is one arm in each match.

use super::Level;
use crate::converters::avro::{compat as avro_compat, json as avro_json, AvroSchema};
use crate::converters::jsonschema::{compat as json_compat, JsonSchema};
#[cfg(feature = "protobuf")]
use crate::converters::protobuf::{compat as protobuf_compat, ProtoSchema};

/// The schema types this registry parses and checks, as `GET /schemas/types` lists them.
pub const SCHEMA_TYPES: &[&str] = &[
    "AVRO",
    "JSON",
    #[cfg(feature = "protobuf")]
    "PROTOBUF",
];

/// Why a schema type is refused: not one this registry checks, or one whose Cargo feature this build
/// was made without.
pub fn unsupported_type(schema_type: &str) -> String {
    let feature = match schema_type {
        "PROTOBUF" if !cfg!(feature = "protobuf") => Some("protobuf"),
        _ => None,
    };
    match feature {
        Some(f) => format!(
            "schema type {schema_type} is not in this build: it was built without the Cargo feature '{f}'"
        ),
        None => format!(
            "schema type {schema_type} is not supported by this registry (it checks {})",
            SCHEMA_TYPES.join(", ")
        ),
    }
}

/// A schema parsed by its type.
#[derive(Clone, Debug)]
pub enum ParsedSchema {
    /// An Avro schema.
    Avro(AvroSchema),
    /// A JSON Schema.
    Json(JsonSchema),
    /// A Protobuf schema.
    #[cfg(feature = "protobuf")]
    Protobuf(ProtoSchema),
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
            "JSON" => {
                let known: Vec<_> = refs
                    .iter()
                    .filter_map(|r| r.parsed.as_json().map(|j| (r.name.clone(), j.root.clone())))
                    .collect();
                JsonSchema::parse_with(text, &known).map(ParsedSchema::Json)
            }
            #[cfg(feature = "protobuf")]
            "PROTOBUF" => {
                let mut files = std::collections::BTreeMap::new();
                for r in refs {
                    if let ParsedSchema::Protobuf(p) = &r.parsed {
                        files.extend(p.sources.clone());
                    }
                    files.insert(r.name.clone(), r.text.clone());
                }
                ProtoSchema::parse(text, files).map(ParsedSchema::Protobuf)
            }
            other => Err(unsupported_type(other)),
        }
    }

    /// The Avro schema, when this is one.
    pub fn as_avro(&self) -> Option<&AvroSchema> {
        match self {
            ParsedSchema::Avro(a) => Some(a),
            _ => None,
        }
    }

    /// The JSON Schema, when this is one.
    pub fn as_json(&self) -> Option<&JsonSchema> {
        match self {
            ParsedSchema::Json(j) => Some(j),
            _ => None,
        }
    }

    /// The Protobuf schema, when this is one.
    #[cfg(feature = "protobuf")]
    pub fn as_protobuf(&self) -> Option<&ProtoSchema> {
        match self {
            ParsedSchema::Protobuf(p) => Some(p),
            _ => None,
        }
    }

    /// The schema's type, as the registry names it.
    pub fn schema_type(&self) -> &'static str {
        match self {
            ParsedSchema::Avro(_) => "AVRO",
            ParsedSchema::Json(_) => "JSON",
            #[cfg(feature = "protobuf")]
            ParsedSchema::Protobuf(_) => "PROTOBUF",
        }
    }

    /// A framed record's payload (the bytes after the 5-byte header) decoded to JSON for display: Avro
    /// in Avro's JSON encoding (a union's value wrapped as `{"<branch>": value}`), as Confluent's REST
    /// Proxy shows it; JSON Schema payloads as the JSON they are.
    ///
    /// # Errors
    /// The payload does not follow the schema.
    pub fn payload_to_json(&self, payload: &[u8]) -> Result<serde_json::Value, String> {
        match self {
            ParsedSchema::Avro(a) => avro_json::to_json(a, payload).map_err(|e| e.to_string()),
            ParsedSchema::Json(_) => {
                serde_json::from_slice(payload).map_err(|e| format!("The payload is not JSON: {e}"))
            }
            #[cfg(feature = "protobuf")]
            ParsedSchema::Protobuf(p) => p.payload_to_json(payload),
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
            ParsedSchema::Json(_) => serde_json::to_vec(json).map_err(|e| e.to_string()),
            #[cfg(feature = "protobuf")]
            ParsedSchema::Protobuf(p) => p.json_to_payload(json),
        }
    }

    /// The schema's text in a registry `format` (`GET …?format=`), when its type has that format:
    /// `serialized` gives a Protobuf schema's `FileDescriptorProto` in base64.
    pub fn formatted(&self, format: &str) -> Option<String> {
        match (self, format) {
            #[cfg(feature = "protobuf")]
            (ParsedSchema::Protobuf(p), "serialized") => Some(p.serialized()),
            _ => None,
        }
    }

    /// The canonical text stored and compared (two registrations with the same canonical text are one
    /// schema).
    pub fn canonical(&self) -> String {
        match self {
            ParsedSchema::Avro(a) => a.canonical(),
            ParsedSchema::Json(j) => j.canonical(),
            #[cfg(feature = "protobuf")]
            ParsedSchema::Protobuf(p) => p.canonical(),
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
        ParsedSchema::Json(new) => {
            let same: Vec<JsonSchema> = previous
                .iter()
                .filter_map(|p| p.as_json().cloned())
                .collect();
            json_compat::check(level, new, &same)
        }
        #[cfg(feature = "protobuf")]
        ParsedSchema::Protobuf(new) => {
            let same: Vec<ProtoSchema> = previous
                .iter()
                .filter_map(|p| p.as_protobuf().cloned())
                .collect();
            protobuf_compat::check(level, new, &same)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_is_listed_or_refused_naming_the_missing_feature() {
        let text = "syntax = \"proto3\";\nmessage A { int32 x = 1; }";
        let parsed = ParsedSchema::parse("PROTOBUF", text, &[]);
        if cfg!(feature = "protobuf") {
            assert!(SCHEMA_TYPES.contains(&"PROTOBUF"));
            assert_eq!(parsed.map(|p| p.schema_type()).ok(), Some("PROTOBUF"));
        } else {
            assert!(!SCHEMA_TYPES.contains(&"PROTOBUF"));
            let e = parsed.err().unwrap_or_default();
            assert!(e.contains("Cargo feature 'protobuf'"), "{e}");
        }
        let e = ParsedSchema::parse("XML", text, &[])
            .err()
            .unwrap_or_default();
        assert!(e.contains("not supported by this registry"), "{e}");
    }
}
