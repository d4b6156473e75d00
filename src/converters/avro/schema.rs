//! Avro schemas as Avro's Java `Schema.Parser` reads them: primitive, complex and named types, names
//! resolved against namespaces, named types defined once, unions without nested unions or duplicate
//! branches, defaults checked against their types; plus the canonical text a registry stores.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

/// The primitive types.
const PRIMITIVES: &[&str] = &[
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

/// A type in a schema; named types are referred to by full name.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A primitive type, by name.
    Primitive(&'static str),
    /// An array of items.
    Array(Box<Node>),
    /// A map with string keys.
    Map(Box<Node>),
    /// A union of branches.
    Union(Vec<Node>),
    /// A record, enum or fixed, by full name.
    Named(String),
}

/// A record field.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its aliases.
    pub aliases: Vec<String>,
    /// Its type.
    pub node: Node,
    /// Its default value, if any.
    pub default: Option<Json>,
}

/// What a named type is.
#[derive(Clone, Debug, PartialEq)]
pub enum NamedKind {
    /// A record (or error) with its fields.
    Record(Vec<Field>),
    /// An enum with its symbols and default symbol.
    Enum(Vec<String>, Option<String>),
    /// A fixed type with its size.
    Fixed(usize),
}

/// A named type.
#[derive(Clone, Debug, PartialEq)]
pub struct Named {
    /// The full name.
    pub name: String,
    /// The aliases, as full names.
    pub aliases: Vec<String>,
    /// What it is.
    pub kind: NamedKind,
    /// The JSON object that defines it, with its other attributes (`doc`, `connect.*` properties);
    /// where the type is used again by name, they are read from here.
    pub definition: Map<String, Json>,
}

/// A parsed schema: its root type and every named type it defines or references.
#[derive(Clone, Debug, PartialEq)]
pub struct AvroSchema {
    /// The root type.
    pub root: Node,
    /// The named types by full name.
    pub named: BTreeMap<String, Named>,
    /// The schema as JSON, normalised (see [`AvroSchema::canonical`]).
    json: Json,
}

/// Why a schema is not valid Avro.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, SchemaError> {
    Err(SchemaError(message.into()))
}

impl AvroSchema {
    /// Parses a schema's text, with the named types of referenced schemas known beforehand.
    ///
    /// # Errors
    /// What makes the schema invalid, as Avro's parser says it.
    pub fn parse_with(text: &str, known: &[AvroSchema]) -> Result<AvroSchema, SchemaError> {
        let json: Json = serde_json::from_str(text)
            .map_err(|e| SchemaError(format!("Invalid schema JSON: {e}")))?;
        let mut parser = Parser {
            named: BTreeMap::new(),
            known: known.iter().flat_map(|s| s.named.clone()).collect(),
        };
        let root = parser.node(&json, "")?;
        let mut named = parser.known;
        named.extend(parser.named);
        Ok(AvroSchema {
            root,
            named,
            json: normalise(json),
        })
    }

    /// Parses a schema's text on its own.
    ///
    /// # Errors
    /// See [`AvroSchema::parse_with`].
    pub fn parse(text: &str) -> Result<AvroSchema, SchemaError> {
        Self::parse_with(text, &[])
    }

    /// The text a registry stores and compares: compact JSON with the attributes as given, and a
    /// primitive type written `{"type": "int"}` without other attributes written `"int"`.
    pub fn canonical(&self) -> String {
        self.json.to_string()
    }

    /// A named type by full name.
    pub fn lookup(&self, name: &str) -> Option<&Named> {
        self.named.get(name)
    }
}

/// `{"type": "<primitive>"}` alone becomes `"<primitive>"`, everywhere.
fn normalise(json: Json) -> Json {
    match json {
        Json::Object(map) => {
            if map.len() == 1 {
                if let Some(Json::String(t)) = map.get("type") {
                    if PRIMITIVES.contains(&t.as_str()) {
                        return Json::String(t.clone());
                    }
                }
            }
            Json::Object(map.into_iter().map(|(k, v)| (k, normalise(v))).collect())
        }
        Json::Array(items) => Json::Array(items.into_iter().map(normalise).collect()),
        other => other,
    }
}

struct Parser {
    /// Defined in this schema.
    named: BTreeMap<String, Named>,
    /// Defined by referenced schemas.
    known: BTreeMap<String, Named>,
}

/// Whether `name` is an Avro name: `[A-Za-z_][A-Za-z0-9_]*`.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The full name of `name` in `namespace`.
fn full_name(name: &str, namespace: &str) -> String {
    if name.contains('.') || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}.{name}")
    }
}

fn check_full_name(full: &str) -> Result<(), SchemaError> {
    match full.split('.').find(|part| !valid_name(part)) {
        Some(bad) => err(format!("Illegal character in: {bad}")),
        None => Ok(()),
    }
}

impl Parser {
    fn defined(&self, full: &str) -> bool {
        self.named.contains_key(full) || self.known.contains_key(full)
    }

    /// A type name used as a reference: a primitive, or a named type defined before.
    fn reference(&self, name: &str, namespace: &str) -> Result<Node, SchemaError> {
        if let Some(p) = PRIMITIVES.iter().find(|p| **p == name) {
            return Ok(Node::Primitive(p));
        }
        let full = full_name(name, namespace);
        if self.defined(&full) {
            return Ok(Node::Named(full));
        }
        if self.defined(name) {
            return Ok(Node::Named(name.to_string()));
        }
        err(format!(
            "\"{name}\" is not a defined name. The type of the \"{name}\" field must be a defined name or a {{\"type\": ...}} expression."
        ))
    }

    fn node(&mut self, json: &Json, namespace: &str) -> Result<Node, SchemaError> {
        match json {
            Json::String(name) => self.reference(name, namespace),
            Json::Array(branches) => self.union(branches, namespace),
            Json::Object(map) => self.complex(map, namespace),
            other => err(format!("Schema not yet supported: {other}")),
        }
    }

    fn union(&mut self, branches: &[Json], namespace: &str) -> Result<Node, SchemaError> {
        let mut nodes: Vec<Node> = Vec::with_capacity(branches.len());
        for b in branches {
            let node = self.node(b, namespace)?;
            if matches!(node, Node::Union(_)) {
                return err(format!("Nested union: {}", Json::Array(branches.to_vec())));
            }
            let key = branch_key(&node);
            if nodes.iter().any(|n| branch_key(n) == key) {
                return err(format!("Duplicate in union:{key}"));
            }
            nodes.push(node);
        }
        Ok(Node::Union(nodes))
    }

    fn complex(&mut self, map: &Map<String, Json>, namespace: &str) -> Result<Node, SchemaError> {
        let Some(kind) = map.get("type") else {
            return err(format!("No type: {}", Json::Object(map.clone())));
        };
        let kind = match kind {
            Json::String(k) => k.as_str(),
            // {"type": {...}} and {"type": [...]} are the inner type.
            other => return self.node(other, namespace),
        };
        match kind {
            "record" | "error" | "enum" | "fixed" => self.named_type(kind, map, namespace),
            "array" => {
                let items = map.get("items").ok_or_else(|| {
                    SchemaError(format!(
                        "Array has no items type: {}",
                        Json::Object(map.clone())
                    ))
                })?;
                Ok(Node::Array(Box::new(self.node(items, namespace)?)))
            }
            "map" => {
                let values = map.get("values").ok_or_else(|| {
                    SchemaError(format!(
                        "Map has no values type: {}",
                        Json::Object(map.clone())
                    ))
                })?;
                Ok(Node::Map(Box::new(self.node(values, namespace)?)))
            }
            other => self.reference(other, namespace),
        }
    }

    fn named_type(
        &mut self,
        kind: &str,
        map: &Map<String, Json>,
        enclosing: &str,
    ) -> Result<Node, SchemaError> {
        let name = match map.get("name") {
            Some(Json::String(n)) if !n.is_empty() => n.as_str(),
            _ => return err(format!("No name in schema: {}", Json::Object(map.clone()))),
        };
        let namespace = match map.get("namespace") {
            Some(Json::String(ns)) if !name.contains('.') => ns.clone(),
            Some(Json::String(_)) | None => enclosing.to_string(),
            Some(other) => return err(format!("Namespace must be a string: {other}")),
        };
        let full = full_name(name, &namespace);
        check_full_name(&full)?;
        if self.defined(&full) {
            return err(format!("Can't redefine: {full}"));
        }
        // The namespace of what a named type encloses is that of its full name.
        let inner = full
            .rsplit_once('.')
            .map(|(ns, _)| ns)
            .unwrap_or("")
            .to_string();
        let aliases = match map.get("aliases") {
            None => Vec::new(),
            Some(Json::Array(a)) => a
                .iter()
                .map(|x| match x {
                    Json::String(s) => Ok(full_name(s, &inner)),
                    other => err(format!("alias not a string: {other}")),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return err(format!("aliases not an array: {other}")),
        };
        let kind = match kind {
            "enum" => enum_kind(map, &full)?,
            "fixed" => match map.get("size").and_then(Json::as_u64) {
                Some(size) => NamedKind::Fixed(size as usize),
                None => return err(format!("Invalid or no size: {}", Json::Object(map.clone()))),
            },
            _ => {
                // Defined before its fields, so that a field may refer to the record itself.
                self.named.insert(
                    full.clone(),
                    Named {
                        name: full.clone(),
                        aliases: aliases.clone(),
                        kind: NamedKind::Record(Vec::new()),
                        definition: map.clone(),
                    },
                );
                NamedKind::Record(self.fields(map, &full, &inner)?)
            }
        };
        self.named.insert(
            full.clone(),
            Named {
                name: full.clone(),
                aliases,
                kind,
                definition: map.clone(),
            },
        );
        Ok(Node::Named(full))
    }

    fn fields(
        &mut self,
        map: &Map<String, Json>,
        record: &str,
        namespace: &str,
    ) -> Result<Vec<Field>, SchemaError> {
        let Some(Json::Array(list)) = map.get("fields") else {
            return err(format!(
                "Record has no fields: {}",
                Json::Object(map.clone())
            ));
        };
        let mut fields: Vec<Field> = Vec::with_capacity(list.len());
        for f in list {
            let Some(Json::String(name)) = f.get("name") else {
                return err(format!("No field name: {f}"));
            };
            if !valid_name(name) {
                return err(format!("Illegal character in: {name}"));
            }
            if fields.iter().any(|x| &x.name == name) {
                return err(format!("Duplicate field {name} in record {record}"));
            }
            let Some(t) = f.get("type") else {
                return err(format!("No field type: {f}"));
            };
            let node = self.node(t, namespace)?;
            let default = f.get("default").cloned();
            if let Some(d) = &default {
                if !self.valid_default(&node, d) {
                    return err(format!(
                        "Invalid default for field {name}: {d} not a {}",
                        self.describe(&node)
                    ));
                }
            }
            let aliases = match f.get("aliases") {
                Some(Json::Array(a)) => a
                    .iter()
                    .filter_map(Json::as_str)
                    .map(String::from)
                    .collect(),
                _ => Vec::new(),
            };
            fields.push(Field {
                name: name.clone(),
                aliases,
                node,
                default,
            });
        }
        Ok(fields)
    }

    fn named_def(&self, name: &str) -> Option<&Named> {
        self.named.get(name).or_else(|| self.known.get(name))
    }

    fn describe(&self, node: &Node) -> String {
        match node {
            Node::Primitive(p) => format!("\"{p}\""),
            Node::Array(_) => "array".into(),
            Node::Map(_) => "map".into(),
            Node::Union(_) => "union".into(),
            Node::Named(n) => format!("\"{n}\""),
        }
    }

    /// Whether `value` is a valid default for `node` (a union's default is one of its first branch).
    fn valid_default(&self, node: &Node, value: &Json) -> bool {
        match (node, value) {
            (Node::Primitive("null"), Json::Null) => true,
            (Node::Primitive("boolean"), Json::Bool(_)) => true,
            (Node::Primitive("int"), Json::Number(n)) => {
                n.as_i64().is_some_and(|n| i32::try_from(n).is_ok())
            }
            (Node::Primitive("long"), Json::Number(n)) => n.is_i64(),
            (Node::Primitive("float" | "double"), Json::Number(_)) => true,
            (Node::Primitive("bytes" | "string"), Json::String(_)) => true,
            (Node::Array(items), Json::Array(a)) => a.iter().all(|x| self.valid_default(items, x)),
            (Node::Map(values), Json::Object(m)) => {
                m.values().all(|x| self.valid_default(values, x))
            }
            (Node::Union(branches), v) => {
                branches.first().is_some_and(|b| self.valid_default(b, v))
            }
            (Node::Named(name), v) => match self.named_def(name).map(|n| &n.kind) {
                Some(NamedKind::Enum(symbols, _)) => {
                    v.as_str().is_some_and(|s| symbols.iter().any(|x| x == s))
                }
                Some(NamedKind::Fixed(_)) => v.is_string(),
                Some(NamedKind::Record(fields)) => v.as_object().is_some_and(|m| {
                    fields.iter().all(|f| match m.get(&f.name) {
                        Some(x) => self.valid_default(&f.node, x),
                        None => f.default.is_some(),
                    })
                }),
                None => false,
            },
            _ => false,
        }
    }
}

fn enum_kind(map: &Map<String, Json>, full: &str) -> Result<NamedKind, SchemaError> {
    let Some(Json::Array(list)) = map.get("symbols") else {
        return err(format!(
            "Enum has no symbols: {}",
            Json::Object(map.clone())
        ));
    };
    let mut symbols: Vec<String> = Vec::with_capacity(list.len());
    for s in list {
        let Some(s) = s.as_str() else {
            return err(format!("Enum symbol not a string: {s}"));
        };
        if !valid_name(s) {
            return err(format!("Illegal character in: {s}"));
        }
        if symbols.iter().any(|x| x == s) {
            return err(format!("Duplicate enum symbol: {s}"));
        }
        symbols.push(s.to_string());
    }
    let default = match map.get("default") {
        None => None,
        Some(Json::String(d)) if symbols.contains(d) => Some(d.clone()),
        Some(d) => {
            return err(format!(
                "The Enum Default: {d} is not in the enum symbol set: {full}"
            ))
        }
    };
    Ok(NamedKind::Enum(symbols, default))
}

/// What makes two union branches the same: the type's name (a named type's full name).
fn branch_key(node: &Node) -> String {
    match node {
        Node::Primitive(p) => (*p).to_string(),
        Node::Array(_) => "array".into(),
        Node::Map(_) => "map".into(),
        Node::Union(_) => "union".into(),
        Node::Named(n) => n.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_enums_fixed_and_recursion_parse_with_namespaces() {
        let s = AvroSchema::parse(
            r#"{"type":"record","name":"Node","namespace":"ex.a","fields":[
                {"name":"value","type":{"type":"long"}},
                {"name":"next","type":["null","Node"],"default":null},
                {"name":"colour","type":{"type":"enum","name":"Colour","symbols":["RED","GREEN"],"default":"RED"}},
                {"name":"hash","type":{"type":"fixed","name":"other.Hash","size":16}},
                {"name":"c2","type":"Colour"},
                {"name":"tags","type":{"type":"map","values":{"type":"array","items":"string"}},"default":{}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(s.root, Node::Named("ex.a.Node".into()));
        assert!(s.lookup("ex.a.Colour").is_some());
        assert!(s.lookup("other.Hash").is_some());
        assert!(
            s.canonical().contains(r#"{"name":"value","type":"long"}"#),
            "{}",
            s.canonical()
        );
        assert_eq!(
            AvroSchema::parse(r#"{"type":"string"}"#)
                .unwrap()
                .canonical(),
            r#""string""#
        );
    }

    #[test]
    fn invalid_schemas_say_why() {
        for (text, says) in [
            ("{", "Invalid schema JSON"),
            (r#""nope""#, "\"nope\" is not a defined name"),
            (r#"{"type":"record","fields":[]}"#, "No name"),
            (r#"{"type":"record","name":"R"}"#, "Record has no fields"),
            (
                r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}"#,
                "Duplicate field a",
            ),
            (
                r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}"#,
                "Invalid default for field a",
            ),
            (
                r#"{"type":"record","name":"R","fields":[{"name":"a","type":["null","int"],"default":1}]}"#,
                "Invalid default for field a",
            ),
            (r#"["int","int"]"#, "Duplicate in union"),
            (r#"["int",["null"]]"#, "Nested union"),
            (
                r#"{"type":"enum","name":"E","symbols":["A","A"]}"#,
                "Duplicate enum symbol",
            ),
            (
                r#"{"type":"enum","name":"E","symbols":["A"],"default":"B"}"#,
                "not in the enum symbol set",
            ),
            (r#"{"type":"fixed","name":"F"}"#, "Invalid or no size"),
            (
                r#"{"type":"record","name":"1R","fields":[]}"#,
                "Illegal character",
            ),
            (
                r#"[{"type":"fixed","name":"F","size":1},{"type":"fixed","name":"F","size":2}]"#,
                "Can't redefine: F",
            ),
        ] {
            let e = AvroSchema::parse(text).unwrap_err();
            assert!(e.0.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn referenced_schemas_lend_their_named_types() {
        let address = AvroSchema::parse(
            r#"{"type":"record","name":"Address","namespace":"ex","fields":[{"name":"city","type":"string"}]}"#,
        )
        .unwrap();
        let person = r#"{"type":"record","name":"Person","namespace":"ex","fields":[{"name":"home","type":"Address"}]}"#;
        assert!(AvroSchema::parse(person).is_err());
        let parsed = AvroSchema::parse_with(person, &[address]).unwrap();
        assert!(parsed.lookup("ex.Address").is_some());
    }
}
