//! JSON Schema documents as the registry holds them: parsed from their text, checked for the keywords'
//! shapes (drafts 4, 6, 7, 2019-09 and 2020-12), `$ref`s resolved (within the document, or to a
//! referenced schema by the reference's `name`), and the canonical text: the document as compact JSON
//! with its keys in the order written.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value as Json;

/// The meta-schemas (`$schema`) accepted, without scheme and trailing `#`.
const DRAFTS: &[&str] = &[
    "json-schema.org/draft-04/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft/2020-12/schema",
];

/// The type names JSON Schema defines.
pub const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// How deep `$ref`s may chain before the schema is refused (a loop of references).
const MAX_REF_CHAIN: usize = 32;

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is an object of schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "dependentSchemas",
];
/// Keywords whose value is a non-empty array of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is a non-negative integer.
const COUNTS: &[&str] = &[
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "maxContains",
    "minContains",
];

/// A parsed JSON Schema with the documents its references name.
#[derive(Clone, Debug)]
pub struct JsonSchema {
    /// The document.
    pub root: Arc<Json>,
    /// Referenced documents by the reference's `name` (the URL a `$ref` uses).
    pub refs: BTreeMap<String, Arc<Json>>,
    canonical: String,
}

/// A schema node with the document it belongs to (a `$ref` inside it resolves against that document).
#[derive(Clone, Copy, Debug)]
pub struct Node<'a> {
    /// The document the node is in.
    pub doc: &'a Json,
    /// The node.
    pub json: &'a Json,
}

impl<'a> Node<'a> {
    /// The value of a keyword, when the node is an object that has it.
    pub fn get(&self, key: &str) -> Option<&'a Json> {
        self.json.get(key)
    }

    /// A child node of the same document.
    pub fn child(&self, json: &'a Json) -> Node<'a> {
        Node {
            doc: self.doc,
            json,
        }
    }
}

impl JsonSchema {
    /// Parses a schema that references no other schema.
    ///
    /// # Errors
    /// Why the text is not a valid JSON Schema.
    #[cfg(test)]
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_with(text, &[])
    }

    /// Parses a schema whose `$ref`s may name the given documents by their reference names.
    ///
    /// # Errors
    /// Invalid JSON, a keyword of the wrong shape, an unknown `$schema`, or a `$ref` that resolves
    /// to nothing.
    pub fn parse_with(text: &str, refs: &[(String, Arc<Json>)]) -> Result<Self, String> {
        let root: Json = serde_json::from_str(text).map_err(|e| format!("Invalid JSON: {e}"))?;
        if let Some(meta) = root.get("$schema") {
            let meta = meta.as_str().ok_or("$schema must be a string")?;
            let bare = meta
                .trim_start_matches("https://")
                .trim_start_matches("http://")
                .trim_end_matches('#');
            if !DRAFTS.contains(&bare) {
                return Err(format!(
                    "unknown $schema {meta}: drafts 4, 6, 7, 2019-09 and 2020-12 are read"
                ));
            }
        }
        let canonical = serde_json::to_string(&root).map_err(|e| e.to_string())?;
        let schema = JsonSchema {
            root: Arc::new(root),
            refs: refs.iter().cloned().collect(),
            canonical,
        };
        check_node(&schema.root, "#")?;
        schema.check_refs(schema.node(), "#", 0)?;
        Ok(schema)
    }

    /// The canonical text: compact JSON, keys in the order written.
    pub fn canonical(&self) -> String {
        self.canonical.clone()
    }

    /// The document's root node.
    pub fn node(&self) -> Node<'_> {
        Node {
            doc: &self.root,
            json: &self.root,
        }
    }

    /// Follows `$ref`s from `node` to the schema they name (the node itself when it has none).
    ///
    /// # Errors
    /// A reference that names nothing, or references that chain in a loop.
    pub fn resolve<'a>(&'a self, mut node: Node<'a>) -> Result<Node<'a>, String> {
        for _ in 0..MAX_REF_CHAIN {
            let Some(target) = node.get("$ref").and_then(Json::as_str) else {
                return Ok(node);
            };
            node = self.lookup(node.doc, target)?;
        }
        Err("$ref chains loop".into())
    }

    /// The node a `$ref` names, from within `doc`.
    fn lookup<'a>(&'a self, doc: &'a Json, target: &str) -> Result<Node<'a>, String> {
        let (base, fragment) = target.split_once('#').unwrap_or((target, ""));
        let doc = if base.is_empty() {
            doc
        } else {
            self.refs
                .get(target)
                .or_else(|| self.refs.get(base))
                .map(Arc::as_ref)
                .ok_or_else(|| {
                    format!(
                        "$ref {target} names no reference of this schema and no local definition"
                    )
                })?
        };
        let json = if fragment.is_empty() || self.refs.contains_key(target) {
            Some(doc)
        } else {
            doc.pointer(&decode_pointer(fragment))
        };
        json.map(|json| Node { doc, json })
            .ok_or_else(|| format!("$ref {target} points at nothing"))
    }

    /// Checks that every `$ref` under `node` resolves.
    fn check_refs(&self, node: Node<'_>, path: &str, depth: usize) -> Result<(), String> {
        if depth > 256 {
            return Err(format!("the schema nests too deep at {path}"));
        }
        match node.json {
            Json::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(Json::as_str) {
                    self.lookup(node.doc, target)
                        .map_err(|e| format!("{e} (at {path})"))?;
                }
                for (k, v) in map {
                    if k != "enum" && k != "const" && k != "default" && k != "examples" {
                        self.check_refs(node.child(v), &format!("{path}/{k}"), depth + 1)?;
                    }
                }
                Ok(())
            }
            Json::Array(items) => items.iter().enumerate().try_for_each(|(i, v)| {
                self.check_refs(node.child(v), &format!("{path}/{i}"), depth + 1)
            }),
            _ => Ok(()),
        }
    }
}

/// A JSON pointer's fragment with its percent escapes decoded.
fn decode_pointer(fragment: &str) -> String {
    percent_encoding::percent_decode_str(fragment)
        .decode_utf8_lossy()
        .into_owned()
}

/// Checks a schema's keywords for their shapes, recursively.
fn check_node(node: &Json, path: &str) -> Result<(), String> {
    let map = match node {
        Json::Bool(_) => return Ok(()),
        Json::Object(map) => map,
        other => {
            return Err(format!(
                "a schema must be an object or a boolean, not {other} (at {path})"
            ))
        }
    };
    let bad = |key: &str, what: &str| Err(format!("{key} must be {what} (at {path})"));
    for (key, value) in map {
        let here = format!("{path}/{key}");
        match key.as_str() {
            "type" => check_type(value, &here)?,
            "required" if !is_string_list(value) => return bad(key, "an array of strings"),
            "enum" if !value.is_array() => return bad(key, "an array"),
            "$ref" | "$id" | "title" | "description" | "pattern" | "format"
                if !value.is_string() =>
            {
                return bad(key, "a string")
            }
            "multipleOf" if value.as_f64().is_none_or(|m| m <= 0.0) => {
                return bad(key, "a number above 0")
            }
            "maximum" | "minimum" if !value.is_number() => return bad(key, "a number"),
            "exclusiveMaximum" | "exclusiveMinimum"
                if !value.is_number() && !value.is_boolean() =>
            {
                return bad(key, "a number (or a boolean in draft 4)")
            }
            "uniqueItems" if !value.is_boolean() => return bad(key, "a boolean"),
            "pattern" => {}
            k if COUNTS.contains(&k) && value.as_u64().is_none() => {
                return bad(key, "a non-negative integer")
            }
            k if ONE_SCHEMA.contains(&k) => check_node(value, &here)?,
            k if SCHEMA_MAPS.contains(&k) => {
                let children = value
                    .as_object()
                    .ok_or(format!("{key} must be an object of schemas (at {path})"))?;
                for (name, child) in children {
                    check_node(child, &format!("{here}/{name}"))?;
                }
            }
            k if SCHEMA_LISTS.contains(&k) => {
                let children = value.as_array().filter(|a| !a.is_empty()).ok_or(format!(
                    "{key} must be a non-empty array of schemas (at {path})"
                ))?;
                for (i, child) in children.iter().enumerate() {
                    check_node(child, &format!("{here}/{i}"))?;
                }
            }
            "items" => match value {
                Json::Array(children) => {
                    for (i, child) in children.iter().enumerate() {
                        check_node(child, &format!("{here}/{i}"))?;
                    }
                }
                other => check_node(other, &here)?,
            },
            _ => {}
        }
    }
    Ok(())
}

fn is_string_list(value: &Json) -> bool {
    value
        .as_array()
        .is_some_and(|a| a.iter().all(Json::is_string))
}

fn check_type(value: &Json, path: &str) -> Result<(), String> {
    let names: Vec<&Json> = match value {
        Json::Array(items) if !items.is_empty() => items.iter().collect(),
        Json::String(_) => vec![value],
        _ => {
            return Err(format!(
                "type must be a type name or an array of them (at {path})"
            ))
        }
    };
    for name in names {
        match name.as_str() {
            Some(n) if TYPES.contains(&n) => {}
            _ => return Err(format!("{name} is not a JSON Schema type (at {path})")),
        }
    }
    Ok(())
}

/// The type names a schema node declares (`type` as a string or an array); `None` when it declares
/// none (any type).
pub fn types(node: &Json) -> Option<Vec<&str>> {
    match node.get("type")? {
        Json::String(s) => Some(vec![s.as_str()]),
        Json::Array(items) => Some(items.iter().filter_map(Json::as_str).collect()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_parse_and_the_canonical_text_is_compact_in_written_order() {
        let s = JsonSchema::parse(
            r##"{ "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                 "properties": { "z": {"type": "string"}, "a": {"$ref": "#/definitions/n"} },
                 "definitions": { "n": {"type": ["integer", "null"]} } }"##,
        )
        .unwrap();
        assert_eq!(
            s.canonical(),
            r##"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"z":{"type":"string"},"a":{"$ref":"#/definitions/n"}},"definitions":{"n":{"type":["integer","null"]}}}"##
        );
        let a = s.node().child(&s.root["properties"]["a"]);
        assert_eq!(s.resolve(a).unwrap().json["type"][0], "integer");
        for draft in [
            "https://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft-04/schema#",
            "https://json-schema.org/draft/2019-09/schema",
        ] {
            JsonSchema::parse(&format!(r#"{{"$schema":"{draft}"}}"#)).unwrap();
        }
        JsonSchema::parse("true").unwrap();
    }

    #[test]
    fn invalid_documents_are_refused_with_the_reason() {
        for (text, why) in [
            ("{", "Invalid JSON"),
            ("42", "must be an object or a boolean"),
            (r#"{"type":"strin"}"#, "is not a JSON Schema type"),
            (
                r#"{"properties":{"a":7}}"#,
                "must be an object or a boolean",
            ),
            (r#"{"required":"a"}"#, "required must be"),
            (r#"{"maxLength":-1}"#, "maxLength must be"),
            (r#"{"oneOf":[]}"#, "oneOf must be"),
            (r#"{"$schema":"http://example.com/x"}"#, "unknown $schema"),
            (r##"{"$ref":"#/definitions/missing"}"##, "points at nothing"),
            (r#"{"$ref":"other.json"}"#, "names no reference"),
        ] {
            let e = JsonSchema::parse(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn refs_resolve_to_referenced_documents_by_name() {
        let other: Arc<Json> = Arc::new(serde_json::json!({
            "type": "object", "definitions": {"id": {"type": "integer"}}
        }));
        let s = JsonSchema::parse_with(
            r#"{"properties":{"o":{"$ref":"other.json"},"i":{"$ref":"other.json#/definitions/id"}}}"#,
            &[("other.json".into(), other)],
        )
        .unwrap();
        let o = s.node().child(&s.root["properties"]["o"]);
        assert_eq!(s.resolve(o).unwrap().json["type"], "object");
        let i = s.node().child(&s.root["properties"]["i"]);
        assert_eq!(s.resolve(i).unwrap().json["type"], "integer");
    }
}
