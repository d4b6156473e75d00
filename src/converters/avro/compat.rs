//! Avro schema compatibility by Avro's resolution rules (`SchemaCompatibility`): whether data written
//! with one schema can be read with another, and the registry's seven levels built on it.

use std::collections::BTreeSet;

use super::schema::{AvroSchema, NamedKind, Node};

pub use crate::converters::registry::Level;

/// Checks `new` against `previous` (oldest first) at `level`: the messages of every incompatibility,
/// empty when compatible. A non-transitive level checks against the latest only.
pub fn check(level: Level, new: &AvroSchema, previous: &[AvroSchema]) -> Vec<String> {
    level.check(new, previous, can_read)
}

/// Whether data written with `a` and with `b` are the same bytes: the same types in the same order
/// (names, docs, defaults and aliases aside).
pub fn same_encoding(a: &AvroSchema, b: &AvroSchema) -> bool {
    let mut seen = BTreeSet::new();
    same_node(a, &a.root, b, &b.root, &mut seen)
}

fn same_node(
    a: &AvroSchema,
    an: &Node,
    b: &AvroSchema,
    bn: &Node,
    seen: &mut BTreeSet<(String, String)>,
) -> bool {
    match (an, bn) {
        (Node::Primitive(x), Node::Primitive(y)) => x == y,
        (Node::Array(x), Node::Array(y)) | (Node::Map(x), Node::Map(y)) => {
            same_node(a, x, b, y, seen)
        }
        (Node::Union(xs), Node::Union(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_node(a, x, b, y, seen))
        }
        (Node::Named(x), Node::Named(y)) => {
            if !seen.insert((x.clone(), y.clone())) {
                return true;
            }
            match (a.lookup(x).map(|n| &n.kind), b.lookup(y).map(|n| &n.kind)) {
                (Some(NamedKind::Record(fx)), Some(NamedKind::Record(fy))) => {
                    fx.len() == fy.len()
                        && fx
                            .iter()
                            .zip(fy)
                            .all(|(f, g)| same_node(a, &f.node, b, &g.node, seen))
                }
                (Some(NamedKind::Enum(sx, _)), Some(NamedKind::Enum(sy, _))) => sx == sy,
                (Some(NamedKind::Fixed(x)), Some(NamedKind::Fixed(y))) => x == y,
                _ => false,
            }
        }
        _ => false,
    }
}

/// Why data written with `writer` cannot be read with `reader`; empty when it can.
pub fn can_read(reader: &AvroSchema, writer: &AvroSchema) -> Vec<String> {
    let mut r = Resolver {
        reader,
        writer,
        seen: BTreeSet::new(),
        messages: Vec::new(),
    };
    r.resolve(&reader.root, &writer.root, "");
    r.messages
}

struct Resolver<'a> {
    reader: &'a AvroSchema,
    writer: &'a AvroSchema,
    /// (reader name, writer name) pairs being resolved, so recursive types end.
    seen: BTreeSet<(String, String)>,
    messages: Vec<String>,
}

/// The primitive a writer's primitive may be read as (Avro's promotions).
fn promotes(writer: &str, reader: &str) -> bool {
    writer == reader
        || matches!(
            (writer, reader),
            ("int", "long" | "float" | "double")
                | ("long", "float" | "double")
                | ("float", "double")
                | ("string", "bytes")
                | ("bytes", "string")
        )
}

fn type_name(node: &Node) -> String {
    match node {
        Node::Primitive(p) => p.to_string(),
        Node::Array(_) => "array".into(),
        Node::Map(_) => "map".into(),
        Node::Union(_) => "union".into(),
        Node::Named(n) => n.clone(),
    }
}

impl Resolver<'_> {
    fn fail(&mut self, path: &str, what: String) {
        let path = if path.is_empty() { "/" } else { path };
        self.messages.push(format!("{what} at path '{path}'"));
    }

    /// Whether `reader` can read `writer` without recording why not (for union branches).
    fn quietly(&mut self, reader: &Node, writer: &Node) -> bool {
        let (before, seen) = (self.messages.len(), self.seen.clone());
        self.resolve(reader, writer, "");
        let ok = self.messages.len() == before;
        self.messages.truncate(before);
        self.seen = seen;
        ok
    }

    fn resolve(&mut self, reader: &Node, writer: &Node, path: &str) {
        match (reader, writer) {
            (_, Node::Union(branches)) => {
                for (i, b) in branches.iter().enumerate() {
                    self.resolve(reader, b, &format!("{path}/{i}"));
                }
            }
            (Node::Union(branches), w) => {
                if !branches.iter().any(|b| self.quietly(b, w)) {
                    self.fail(
                        path,
                        format!("MISSING_UNION_BRANCH: the reader's union has no branch for the writer's type {}", type_name(w)),
                    );
                }
            }
            (Node::Primitive(r), Node::Primitive(w)) => {
                if !promotes(w, r) {
                    self.fail(
                        path,
                        format!(
                            "TYPE_MISMATCH: reader type {r} not compatible with writer type {w}"
                        ),
                    );
                }
            }
            (Node::Array(r), Node::Array(w)) => self.resolve(r, w, &format!("{path}/items")),
            (Node::Map(r), Node::Map(w)) => self.resolve(r, w, &format!("{path}/values")),
            (Node::Named(r), Node::Named(w)) => self.named(r, w, path),
            (r, w) => self.fail(
                path,
                format!(
                    "TYPE_MISMATCH: reader type {} not compatible with writer type {}",
                    type_name(r),
                    type_name(w)
                ),
            ),
        }
    }

    fn named(&mut self, r: &str, w: &str, path: &str) {
        if !self.seen.insert((r.to_string(), w.to_string())) {
            return;
        }
        let (Some(rn), Some(wn)) = (self.reader.lookup(r), self.writer.lookup(w)) else {
            self.fail(
                path,
                format!("TYPE_MISMATCH: unknown named type {r} or {w}"),
            );
            return;
        };
        let unqualified = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
        let same_name = unqualified(&rn.name) == unqualified(&wn.name)
            || rn
                .aliases
                .iter()
                .any(|a| a == &wn.name || unqualified(a) == unqualified(&wn.name));
        if !same_name {
            self.fail(path, format!("NAME_MISMATCH: expected: {}", wn.name));
            return;
        }
        match (&rn.kind, &wn.kind) {
            (NamedKind::Fixed(a), NamedKind::Fixed(b)) if a != b => self.fail(
                &format!("{path}/size"),
                format!("FIXED_SIZE_MISMATCH: expected: {b}, found: {a}"),
            ),
            (NamedKind::Fixed(_), NamedKind::Fixed(_)) => {}
            (NamedKind::Enum(rs, default), NamedKind::Enum(ws, _)) => {
                let missing: Vec<&String> = ws.iter().filter(|s| !rs.contains(s)).collect();
                if !missing.is_empty() && default.is_none() {
                    let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
                    self.fail(
                        &format!("{path}/symbols"),
                        format!("MISSING_ENUM_SYMBOLS: [{}]", list.join(", ")),
                    );
                }
            }
            (NamedKind::Record(rf), NamedKind::Record(wf)) => {
                for (i, f) in rf.iter().enumerate() {
                    let found = wf
                        .iter()
                        .find(|x| x.name == f.name)
                        .or_else(|| wf.iter().find(|x| f.aliases.iter().any(|a| a == &x.name)));
                    let at = format!("{path}/fields/{i}");
                    match found {
                        Some(x) => self.resolve(&f.node, &x.node, &format!("{at}/type")),
                        None if f.default.is_some() => {}
                        None => self.fail(
                            &at,
                            format!("READER_FIELD_MISSING_DEFAULT_VALUE: {}", f.name),
                        ),
                    }
                }
            }
            _ => self.fail(
                path,
                format!(
                    "TYPE_MISMATCH: reader type {} not compatible with writer type {}",
                    rn.name, wn.name
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(fields: &str) -> AvroSchema {
        AvroSchema::parse(&format!(
            r#"{{"type":"record","name":"R","namespace":"ex","fields":[{fields}]}}"#
        ))
        .unwrap()
    }

    const A: &str = r#"{"name":"a","type":"int"}"#;
    const B_DEFAULT: &str = r#"{"name":"b","type":"string","default":"x"}"#;
    const B: &str = r#"{"name":"b","type":"string"}"#;

    fn ok(level: Level, new: &AvroSchema, old: &AvroSchema) -> bool {
        check(level, new, std::slice::from_ref(old)).is_empty()
    }

    fn ok_all(level: Level, new: &AvroSchema, old: &[AvroSchema]) -> bool {
        check(level, new, old).is_empty()
    }

    #[test]
    fn adding_and_removing_fields_by_level() {
        let v1 = record(A);
        let added_default = record(&format!("{A},{B_DEFAULT}"));
        let added = record(&format!("{A},{B}"));
        // BACKWARD: a new field needs a default; removing a field is fine.
        assert!(ok(Level::Backward, &added_default, &v1));
        assert!(!ok(Level::Backward, &added, &v1));
        assert!(ok(Level::Backward, &v1, &added));
        // FORWARD: adding is fine; removing a field without a default is not.
        assert!(ok(Level::Forward, &added, &v1));
        assert!(!ok(Level::Forward, &v1, &added));
        assert!(ok(Level::Forward, &v1, &added_default));
        // FULL: only fields with defaults come and go.
        assert!(ok(Level::Full, &added_default, &v1));
        assert!(!ok(Level::Full, &added, &v1));
        assert!(ok(Level::None, &added, &v1));
        let message = &check(Level::Backward, &added, &[v1])[0];
        assert!(
            message.contains("READER_FIELD_MISSING_DEFAULT_VALUE: b"),
            "{message}"
        );
        assert!(message.contains("/fields/1"), "{message}");
    }

    #[test]
    fn transitive_levels_check_every_version_the_others_the_latest() {
        let v1 = record(A);
        let v2 = record(&format!("{A},{B_DEFAULT}"));
        // v3 drops b's default: BACKWARD against v2 is fine (v2 has b), against v1 it is not.
        let v3 = record(&format!("{A},{B}"));
        assert!(ok_all(Level::Backward, &v3, &[v1.clone(), v2.clone()]));
        assert!(!ok_all(
            Level::BackwardTransitive,
            &v3,
            &[v1.clone(), v2.clone()]
        ));
        assert!(!ok_all(Level::FullTransitive, &v3, &[v1, v2]));
    }

    #[test]
    fn type_changes_promotions_unions_and_aliases() {
        let int = record(A);
        let long = record(r#"{"name":"a","type":"long"}"#);
        let string = record(r#"{"name":"a","type":"string"}"#);
        assert!(ok(Level::Backward, &long, &int), "int promotes to long");
        assert!(
            !ok(Level::Forward, &long, &int),
            "long does not narrow to int"
        );
        assert!(!ok(Level::Backward, &string, &int));
        let optional = record(r#"{"name":"a","type":["null","int"],"default":null}"#);
        assert!(ok(Level::Backward, &optional, &int));
        assert!(
            !ok(Level::Forward, &optional, &int),
            "null cannot be read as int"
        );
        let renamed = record(r#"{"name":"z","type":"int","aliases":["a"]}"#);
        assert!(ok(Level::Backward, &renamed, &int));
        let renamed_no_alias = record(r#"{"name":"z","type":"int"}"#);
        assert!(!ok(Level::Backward, &renamed_no_alias, &int));
    }

    #[test]
    fn enums_fixed_and_names() {
        let e = |symbols: &str, default: &str| {
            AvroSchema::parse(&format!(
                r#"{{"type":"enum","name":"E","symbols":[{symbols}]{default}}}"#
            ))
            .unwrap()
        };
        let ab = e(r#""A","B""#, "");
        let a = e(r#""A""#, "");
        assert!(ok(Level::Backward, &ab, &a));
        assert!(!ok(Level::Backward, &a, &ab));
        assert!(ok(Level::Backward, &e(r#""A""#, r#","default":"A""#), &ab));
        let f = |n: &str, size: u8| {
            AvroSchema::parse(&format!(r#"{{"type":"fixed","name":"{n}","size":{size}}}"#)).unwrap()
        };
        assert!(!ok(Level::Backward, &f("F", 2), &f("F", 1)));
        assert!(!ok(Level::Backward, &f("G", 1), &f("F", 1)));
        assert!(ok(Level::Backward, &f("F", 1), &f("F", 1)));
    }

    #[test]
    fn recursive_records_resolve() {
        let list = AvroSchema::parse(
            r#"{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}"#,
        )
        .unwrap();
        assert!(ok(Level::FullTransitive, &list, &list));
    }
}
