//! JSON Schema compatibility by Confluent's rules (its `JsonSchemaDiff`): whether every document valid
//! against the writer's schema is valid against the reader's, keyword by keyword. Each refusal names
//! Confluent's difference type (`TYPE_CHANGED`, `PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL`, …) and the
//! location. Content models: an object without `additionalProperties` (or with `true`) is open, with
//! `false` closed, with a schema partially open.

use std::collections::HashMap;

use serde_json::Value as Json;

use super::schema::{types, JsonSchema, Node};
use crate::converters::registry::Level;

/// Checks `new` against `previous` (oldest first) at `level`: the messages of every incompatibility,
/// empty when compatible.
pub fn check(level: Level, new: &JsonSchema, previous: &[JsonSchema]) -> Vec<String> {
    level.check(new, previous, can_read)
}

/// Why documents valid against `writer` may be invalid against `reader`; empty when they cannot.
pub fn can_read(reader: &JsonSchema, writer: &JsonSchema) -> Vec<String> {
    let mut diff = Diff {
        reader,
        writer,
        messages: Vec::new(),
        depth: 0,
        seen: HashMap::new(),
    };
    diff.compare(reader.node(), writer.node(), "#");
    diff.messages
}

struct Diff<'a> {
    reader: &'a JsonSchema,
    writer: &'a JsonSchema,
    messages: Vec<String>,
    depth: usize,
    /// (reader node, writer node) by address → `None` while being compared (a recursive `$ref`
    /// reaching it again is assumed to read), else whether it read: each pair is compared once.
    seen: HashMap<(usize, usize), Option<bool>>,
}

/// An object's content model.
enum Content<'a> {
    Open,
    Closed,
    Partial(Node<'a>),
}

fn content(node: Node<'_>) -> Content<'_> {
    match node.get("additionalProperties") {
        None | Some(Json::Bool(true)) => Content::Open,
        Some(Json::Bool(false)) => Content::Closed,
        Some(schema) => Content::Partial(node.child(schema)),
    }
}

/// Whether a schema accepts every document (`true`, `{}`, or only annotations).
fn accepts_all(node: &Json) -> bool {
    match node {
        Json::Bool(b) => *b,
        Json::Object(map) => map.keys().all(|k| {
            matches!(
                k.as_str(),
                "title" | "description" | "$comment" | "default" | "examples" | "$id" | "$schema"
            ) || k.starts_with("connect.")
        }),
        _ => false,
    }
}

fn number(node: Node<'_>, key: &str) -> Option<f64> {
    node.get(key).and_then(Json::as_f64)
}

/// A product type's parts (`allOf`), or the node alone.
fn parts<'a>(node: Node<'a>) -> Vec<&'a Json> {
    match node.get("allOf") {
        Some(Json::Array(items)) => items.iter().collect(),
        _ => vec![node.json],
    }
}

/// A sum type's branches (`oneOf`/`anyOf`), or the node alone.
fn branches(node: Node<'_>) -> Vec<Node<'_>> {
    match node.get("oneOf").or_else(|| node.get("anyOf")) {
        Some(Json::Array(items)) => items.iter().map(|j| node.child(j)).collect(),
        _ => vec![node],
    }
}

fn is_sum(node: Node<'_>) -> bool {
    node.get("oneOf").is_some() || node.get("anyOf").is_some()
}

impl Diff<'_> {
    fn fail(&mut self, kind: &str, path: &str, why: String) {
        self.messages.push(format!("{kind} at '{path}': {why}"));
    }

    /// Whether `reader` reads `writer` without recording why not (to match sum branches).
    fn quietly(&mut self, reader: Node<'_>, writer: Node<'_>) -> bool {
        let before = self.messages.len();
        self.compare(reader, writer, "#");
        let ok = self.messages.len() == before;
        self.messages.truncate(before);
        ok
    }

    fn compare(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        if self.depth > 64 {
            return;
        }
        let (reader, writer) = match (self.reader.resolve(reader), self.writer.resolve(writer)) {
            (Ok(r), Ok(w)) => (r, w),
            (Err(e), _) | (_, Err(e)) => return self.fail("REFERENCE_UNRESOLVED", path, e),
        };
        if writer.json == &Json::Bool(false) || accepts_all(reader.json) {
            return;
        }
        if reader.json == &Json::Bool(false) {
            return self.fail("TYPE_NARROWED", path, "the reader accepts nothing".into());
        }
        let key = (
            std::ptr::from_ref(reader.json) as usize,
            std::ptr::from_ref(writer.json) as usize,
        );
        match self.seen.get(&key) {
            Some(None | Some(true)) => return,
            Some(Some(false)) => {
                return self.fail(
                    "SUBSCHEMA_INCOMPATIBLE",
                    path,
                    "the same schemas were found incompatible at another location".into(),
                )
            }
            None => {}
        }
        self.seen.insert(key, None);
        let before = self.messages.len();
        self.depth += 1;
        if is_sum(reader) || is_sum(writer) {
            self.sum(reader, writer, path);
        } else if reader.get("allOf").is_some() || writer.get("allOf").is_some() {
            self.product(reader, writer, path);
        } else {
            self.plain(reader, writer, path);
        }
        self.depth -= 1;
        self.seen.insert(key, Some(self.messages.len() == before));
    }

    /// Every writer branch must be read by some reader branch.
    fn sum(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        let readers = branches(reader);
        let writers = branches(writer);
        if readers.len() == 1 && writers.len() == 1 {
            return self.plain(reader, writer, path);
        }
        for (i, w) in writers.iter().enumerate() {
            if !readers.iter().any(|r| self.quietly(*r, *w)) {
                let kind = if readers.len() < writers.len() {
                    "SUM_TYPE_NARROWED"
                } else {
                    "COMBINED_TYPE_SUBSCHEMAS_CHANGED"
                };
                self.fail(
                    kind,
                    path,
                    format!("the writer's subschema {i} is read by no subschema of the reader"),
                );
            }
        }
    }

    /// Every reader `allOf` part must read the writer (some part of it).
    fn product(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        let reader_parts = parts(reader);
        let writer_parts = parts(writer);
        for (i, r) in reader_parts.iter().enumerate() {
            let r = reader.child(r);
            let ok = writer_parts
                .iter()
                .any(|w| self.quietly(r, writer.child(w)));
            if !ok {
                self.fail(
                    "PRODUCT_TYPE_EXTENDED",
                    path,
                    format!("the reader's allOf subschema {i} constrains what the writer allows"),
                );
            }
        }
    }

    fn plain(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        self.types(reader, writer, path);
        self.enums(reader, writer, path);
        self.bounds(reader, writer, path);
        if reader.get("pattern").is_some() && reader.get("pattern") != writer.get("pattern") {
            self.fail(
                "PATTERN_CHANGED",
                path,
                "the reader's pattern differs from the writer's".into(),
            );
        }
        if reader.get("uniqueItems") == Some(&Json::Bool(true))
            && writer.get("uniqueItems") != Some(&Json::Bool(true))
        {
            self.fail(
                "UNIQUE_ITEMS_ADDED",
                path,
                "the reader requires unique items".into(),
            );
        }
        if let (Some(r), Some(w)) = (reader.get("items"), writer.get("items")) {
            if !r.is_array() && !w.is_array() {
                self.compare(reader.child(r), writer.child(w), &format!("{path}/items"));
            }
        } else if let (Some(r), None) = (reader.get("items"), writer.get("items")) {
            if !accepts_all(r) {
                self.fail(
                    "ITEMS_NARROWED",
                    path,
                    "the reader constrains the items".into(),
                );
            }
        }
        if types(writer.json).is_none_or(|t| t.contains(&"object")) {
            self.object(reader, writer, path);
        }
    }

    fn types(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        let Some(read) = types(reader.json) else {
            return;
        };
        let Some(written) = types(writer.json) else {
            return self.fail(
                "TYPE_NARROWED",
                path,
                format!("the writer allows any type, the reader {read:?}"),
            );
        };
        let narrowed = read.iter().all(|t| written.contains(t));
        for t in &written {
            let ok = read.contains(t) || (*t == "integer" && read.contains(&"number"));
            if !ok {
                let kind = if narrowed {
                    "TYPE_NARROWED"
                } else {
                    "TYPE_CHANGED"
                };
                self.fail(
                    kind,
                    path,
                    format!("the writer's type {t} is not among the reader's {read:?}"),
                );
            }
        }
    }

    fn enums(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        if let Some(Json::Array(read)) = reader.get("enum") {
            match writer.get("enum") {
                Some(Json::Array(written)) => {
                    for v in written.iter().filter(|v| !read.contains(v)) {
                        self.fail(
                            "ENUM_ARRAY_NARROWED",
                            path,
                            format!("the writer's value {v} is not in the reader's enum"),
                        );
                    }
                }
                _ => self.fail(
                    "ENUM_ARRAY_CHANGED",
                    path,
                    "the reader adds an enum the writer did not have".into(),
                ),
            }
        }
        if let Some(c) = reader.get("const") {
            if writer.get("const") != Some(c) {
                self.fail(
                    "CONST_CHANGED",
                    path,
                    "the reader requires a constant".into(),
                );
            }
        }
    }

    /// Upper bounds may not fall, lower bounds may not rise, and none may appear.
    fn bounds(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        for (key, upper) in [
            ("maxLength", true),
            ("minLength", false),
            ("maxItems", true),
            ("minItems", false),
            ("maxProperties", true),
            ("minProperties", false),
            ("maximum", true),
            ("minimum", false),
            ("exclusiveMaximum", true),
            ("exclusiveMinimum", false),
        ] {
            let Some(r) = number(reader, key) else {
                continue;
            };
            let narrowed = match number(writer, key) {
                None => true,
                Some(w) if upper => r < w,
                Some(w) => r > w,
            };
            if narrowed {
                let (change, name) = match (number(writer, key), upper) {
                    (None, _) => ("ADDED", key.to_string()),
                    (Some(_), true) => ("DECREASED", key.to_string()),
                    (Some(_), false) => ("INCREASED", key.to_string()),
                };
                self.fail(
                    &format!("{}_{change}", snake(&name)),
                    path,
                    format!("the reader's {key} {r} narrows the writer's"),
                );
            }
        }
        if let Some(r) = number(reader, "multipleOf") {
            let ok = number(writer, "multipleOf").is_some_and(|w| (w / r).fract() == 0.0);
            if !ok {
                self.fail(
                    "MULTIPLE_OF_CHANGED",
                    path,
                    format!("the reader's multipleOf {r} does not divide the writer's"),
                );
            }
        }
    }

    fn object(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        let empty = serde_json::Map::new();
        let read = reader
            .get("properties")
            .and_then(Json::as_object)
            .unwrap_or(&empty);
        let written = writer
            .get("properties")
            .and_then(Json::as_object)
            .unwrap_or(&empty);
        for (name, w) in written {
            let here = format!("{path}/properties/{name}");
            match (read.get(name), content(reader)) {
                (Some(r), _) => self.compare(reader.child(r), writer.child(w), &here),
                (None, Content::Open) => {}
                (None, Content::Closed) => self.fail(
                    "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
                    &here,
                    "the writer's property is not allowed by the reader".into(),
                ),
                (None, Content::Partial(extra)) => {
                    self.compare(extra, writer.child(w), &here);
                }
            }
        }
        for (name, r) in read.iter().filter(|(n, _)| !written.contains_key(*n)) {
            let here = format!("{path}/properties/{name}");
            match content(writer) {
                Content::Closed => {}
                Content::Open if accepts_all(r) => {}
                Content::Open => self.fail(
                    "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
                    &here,
                    "the writer's open content model may have written anything under this name"
                        .into(),
                ),
                Content::Partial(extra) => {
                    let before = self.messages.len();
                    self.compare(reader.child(r), extra, &here);
                    if self.messages.len() > before {
                        self.messages.truncate(before);
                        self.fail(
                            "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                            &here,
                            "the property's schema does not read the writer's additionalProperties"
                                .into(),
                        );
                    }
                }
            }
        }
        self.additional(reader, writer, path);
        self.required(reader, writer, read, path);
    }

    fn additional(&mut self, reader: Node<'_>, writer: Node<'_>, path: &str) {
        let here = format!("{path}/additionalProperties");
        match (content(reader), content(writer)) {
            (Content::Open, _) | (_, Content::Closed) => {}
            (Content::Closed, _) => self.fail(
                "ADDITIONAL_PROPERTIES_REMOVED",
                &here,
                "the reader closes the writer's content model".into(),
            ),
            (Content::Partial(r), Content::Open) => {
                if !accepts_all(r.json) {
                    self.fail(
                        "ADDITIONAL_PROPERTIES_NARROWED",
                        &here,
                        "the reader constrains additional properties the writer left open".into(),
                    );
                }
            }
            (Content::Partial(r), Content::Partial(w)) => self.compare(r, w, &here),
        }
    }

    fn required(
        &mut self,
        reader: Node<'_>,
        writer: Node<'_>,
        read: &serde_json::Map<String, Json>,
        path: &str,
    ) {
        let list = |n: Node<'_>| -> Vec<String> {
            n.get("required")
                .and_then(Json::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let written = list(writer);
        for name in list(reader).iter().filter(|n| !written.contains(n)) {
            let has_default = read.get(name).is_some_and(|p| p.get("default").is_some());
            if !has_default {
                self.fail(
                    "REQUIRED_ATTRIBUTE_ADDED",
                    &format!("{path}/required/{name}"),
                    "the writer did not require this property".into(),
                );
            }
        }
    }
}

/// `maxLength` → `MAX_LENGTH`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
