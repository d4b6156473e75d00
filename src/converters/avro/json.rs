//! Avro's JSON encoding of binary Avro data, as Confluent's REST Proxy shows and accepts Avro records:
//! records as objects, enums as their symbol, `bytes` and `fixed` as strings whose characters are the
//! bytes (U+0000 to U+00FF), and a union's value other than `null` wrapped in an object naming its
//! branch (`{"string": "x"}`, `{"com.example.Point": {...}}`).

use serde_json::{Map, Number, Value as Json};

use super::binary::{write_bytes, write_long, Reader};
use super::schema::{AvroSchema, NamedKind, Node};
use crate::data::DataError;

/// Reads `payload` (Avro binary written with `schema`) into Avro's JSON encoding.
///
/// # Errors
/// The data does not follow the schema, or bytes are left over.
pub fn to_json(schema: &AvroSchema, payload: &[u8]) -> Result<Json, DataError> {
    let mut reader = Reader::new(payload, schema);
    let json = read(&mut reader, schema, &schema.root)?;
    if !reader.done() {
        return Err(DataError::new(
            "The Avro data has bytes left over after the value",
        ));
    }
    Ok(json)
}

/// Writes `json` (Avro's JSON encoding of a value of `schema`) as Avro binary.
///
/// # Errors
/// The JSON does not follow the schema.
pub fn from_json(schema: &AvroSchema, json: &Json) -> Result<Vec<u8>, DataError> {
    let mut out = Vec::new();
    write(schema, &schema.root, json, &mut out, "$")?;
    Ok(out)
}

/// The name a union's branch is known by in the JSON encoding.
fn branch_name(node: &Node) -> String {
    match node {
        Node::Primitive(p) => (*p).to_string(),
        Node::Array(_) => "array".into(),
        Node::Map(_) => "map".into(),
        Node::Union(_) => "union".into(),
        Node::Named(name) => name.clone(),
    }
}

fn named_kind<'s>(schema: &'s AvroSchema, name: &str) -> Result<&'s NamedKind, DataError> {
    schema
        .lookup(name)
        .map(|n| &n.kind)
        .ok_or_else(|| DataError::new(format!("Unknown Avro type {name}")))
}

fn latin1(bytes: &[u8]) -> Json {
    Json::String(bytes.iter().map(|b| char::from(*b)).collect())
}

fn float(f: f64) -> Json {
    Number::from_f64(f).map_or_else(|| Json::String(f.to_string()), Json::Number)
}

fn read(r: &mut Reader<'_>, schema: &AvroSchema, node: &Node) -> Result<Json, DataError> {
    Ok(match node {
        Node::Primitive(p) => match *p {
            "null" => Json::Null,
            "boolean" => Json::Bool(r.take(1)?[0] != 0),
            "int" => Json::from(r.int()?),
            "long" => Json::from(r.long()?),
            "float" => {
                let b: [u8; 4] = r.take(4)?.try_into().map_err(|_| short())?;
                float(f64::from(f32::from_le_bytes(b)))
            }
            "double" => {
                let b: [u8; 8] = r.take(8)?.try_into().map_err(|_| short())?;
                float(f64::from_le_bytes(b))
            }
            "bytes" => latin1(&r.bytes()?),
            _ => Json::String(
                String::from_utf8(r.bytes()?)
                    .map_err(|_| DataError::new("An Avro string is not UTF-8"))?,
            ),
        },
        Node::Array(items) => Json::Array(r.items(|r| read(r, schema, items))?),
        Node::Map(values) => {
            let entries = r.items(|r| {
                let k = String::from_utf8(r.bytes()?)
                    .map_err(|_| DataError::new("An Avro map key is not UTF-8"))?;
                Ok((k, read(r, schema, values)?))
            })?;
            Json::Object(entries.into_iter().collect())
        }
        Node::Union(branches) => {
            let branch = usize::try_from(r.long()?)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or_else(|| DataError::new("An Avro union index is out of range"))?;
            let value = read(r, schema, branch)?;
            if value.is_null() {
                return Ok(Json::Null);
            }
            let mut wrapped = Map::new();
            wrapped.insert(branch_name(branch), value);
            Json::Object(wrapped)
        }
        Node::Named(name) => match named_kind(schema, name)? {
            NamedKind::Enum(symbols, _) => {
                let i = usize::try_from(r.long()?).ok();
                let symbol = i.and_then(|i| symbols.get(i)).ok_or_else(|| {
                    DataError::new(format!("An Avro enum index is out of range for {name}"))
                })?;
                Json::String(symbol.clone())
            }
            NamedKind::Fixed(size) => latin1(r.take(*size)?),
            NamedKind::Record(fields) => {
                let mut o = Map::new();
                for f in fields {
                    o.insert(f.name.clone(), read(r, schema, &f.node)?);
                }
                Json::Object(o)
            }
        },
    })
}

fn short() -> DataError {
    DataError::new("The Avro data ended early")
}

fn expected(path: &str, what: &str, json: &Json) -> DataError {
    DataError::new(format!("Expected {what} at {path}, found {json}"))
}

/// A string's characters as bytes, each at most U+00FF.
fn unlatin1(path: &str, json: &Json) -> Result<Vec<u8>, DataError> {
    let s = json
        .as_str()
        .ok_or_else(|| expected(path, "a string of bytes", json))?;
    s.chars()
        .map(|c| {
            u8::try_from(u32::from(c)).map_err(|_| expected(path, "bytes (U+0000..U+00FF)", json))
        })
        .collect()
}

fn write(
    schema: &AvroSchema,
    node: &Node,
    json: &Json,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), DataError> {
    match node {
        Node::Primitive(p) => write_primitive(p, json, out, path),
        Node::Array(items) => {
            let list = json
                .as_array()
                .ok_or_else(|| expected(path, "an array", json))?;
            if !list.is_empty() {
                write_long(out, list.len() as i64);
                for (i, v) in list.iter().enumerate() {
                    write(schema, items, v, out, &format!("{path}[{i}]"))?;
                }
            }
            out.push(0);
            Ok(())
        }
        Node::Map(values) => {
            let map = json
                .as_object()
                .ok_or_else(|| expected(path, "an object (a map)", json))?;
            if !map.is_empty() {
                write_long(out, map.len() as i64);
                for (k, v) in map {
                    write_bytes(out, k.as_bytes());
                    write(schema, values, v, out, &format!("{path}.{k}"))?;
                }
            }
            out.push(0);
            Ok(())
        }
        Node::Union(branches) => write_union(schema, branches, json, out, path),
        Node::Named(name) => write_named(schema, name, json, out, path),
    }
}

fn write_primitive(p: &str, json: &Json, out: &mut Vec<u8>, path: &str) -> Result<(), DataError> {
    match p {
        "null" if json.is_null() => {}
        "boolean" => out.push(u8::from(
            json.as_bool()
                .ok_or_else(|| expected(path, "a boolean", json))?,
        )),
        "int" => {
            let n = json
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| expected(path, "an int", json))?;
            write_long(out, i64::from(n));
        }
        "long" => write_long(
            out,
            json.as_i64()
                .ok_or_else(|| expected(path, "a long", json))?,
        ),
        "float" => {
            let f = json
                .as_f64()
                .ok_or_else(|| expected(path, "a float", json))?;
            out.extend_from_slice(&(f as f32).to_le_bytes());
        }
        "double" => {
            let f = json
                .as_f64()
                .ok_or_else(|| expected(path, "a double", json))?;
            out.extend_from_slice(&f.to_le_bytes());
        }
        "bytes" => write_bytes(out, &unlatin1(path, json)?),
        "string" => write_bytes(
            out,
            json.as_str()
                .ok_or_else(|| expected(path, "a string", json))?
                .as_bytes(),
        ),
        _ => return Err(expected(path, p, json)),
    }
    Ok(())
}

/// A union's value: `null`, or an object with one key naming the branch.
fn write_union(
    schema: &AvroSchema,
    branches: &[Node],
    json: &Json,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), DataError> {
    let (index, branch, value) = match json {
        Json::Null => {
            let i = branches
                .iter()
                .position(|b| *b == Node::Primitive("null"))
                .ok_or_else(|| expected(path, "a value (the union has no null)", json))?;
            (i, &branches[i], json)
        }
        Json::Object(o) if o.len() == 1 => {
            let (name, value) = o
                .iter()
                .next()
                .ok_or_else(|| expected(path, "a branch", json))?;
            let i = branches
                .iter()
                .position(|b| branch_name(b) == *name || short_name(b) == Some(name))
                .ok_or_else(|| expected(path, "a branch of the union", json))?;
            (i, &branches[i], value)
        }
        _ => {
            let names: Vec<String> = branches.iter().map(branch_name).collect();
            return Err(expected(
                path,
                &format!(
                    "a union value wrapped as {{\"<branch>\": value}} (branches: {})",
                    names.join(", ")
                ),
                json,
            ));
        }
    };
    write_long(out, index as i64);
    write(schema, branch, value, out, path)
}

/// A named branch's name without its namespace.
fn short_name(node: &Node) -> Option<&str> {
    match node {
        Node::Named(n) => n.rsplit('.').next(),
        _ => None,
    }
}

fn write_named(
    schema: &AvroSchema,
    name: &str,
    json: &Json,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), DataError> {
    match named_kind(schema, name)? {
        NamedKind::Enum(symbols, _) => {
            let i = json
                .as_str()
                .and_then(|s| symbols.iter().position(|x| x == s))
                .ok_or_else(|| expected(path, &format!("a symbol of {name}"), json))?;
            write_long(out, i as i64);
        }
        NamedKind::Fixed(size) => {
            let bytes = unlatin1(path, json)?;
            if bytes.len() != *size {
                return Err(expected(path, &format!("{size} bytes"), json));
            }
            out.extend_from_slice(&bytes);
        }
        NamedKind::Record(fields) => {
            let o = json
                .as_object()
                .ok_or_else(|| expected(path, &format!("an object ({name})"), json))?;
            for f in fields {
                let at = format!("{path}.{}", f.name);
                match (o.get(&f.name), &f.default) {
                    (Some(v), _) => write(schema, &f.node, v, out, &at)?,
                    // A default is written in the JSON encoding of the union's first branch, unwrapped.
                    (None, Some(d)) => match &f.node {
                        Node::Union(b) if !b.is_empty() => {
                            write_long(out, 0);
                            write(schema, &b[0], d, out, &at)?;
                        }
                        node => write(schema, node, d, out, &at)?,
                    },
                    (None, None) => {
                        return Err(DataError::new(format!(
                            "The field {at} is missing and has no default"
                        )))
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn avro_json_round_trips_through_binary() {
        let schema = AvroSchema::parse(
            r#"{"type":"record","name":"P","namespace":"ex","fields":[
                {"name":"id","type":"long"},
                {"name":"name","type":["null","string"],"default":null},
                {"name":"tags","type":{"type":"array","items":"string"}},
                {"name":"kind","type":{"type":"enum","name":"K","symbols":["A","B"]}},
                {"name":"raw","type":"bytes"},
                {"name":"score","type":"double","default":1.5}]}"#,
        )
        .expect("schema");
        let value = json!({"id": 7, "name": {"string": "x"}, "tags": ["a", "b"], "kind": "B",
            "raw": "\u{0}\u{ff}", "score": 2.5});
        let bytes = from_json(&schema, &value).expect("encodes");
        assert_eq!(to_json(&schema, &bytes).expect("decodes"), value);
        let defaults = from_json(
            &schema,
            &json!({"id": 1, "tags": [], "kind": "A", "raw": ""}),
        )
        .expect("defaults");
        assert_eq!(
            to_json(&schema, &defaults).expect("decodes"),
            json!({"id": 1, "name": null, "tags": [], "kind": "A", "raw": "", "score": 1.5})
        );
    }

    #[test]
    fn json_that_does_not_follow_the_schema_is_refused() {
        let schema = AvroSchema::parse(
            r#"{"type":"record","name":"P","fields":[{"name":"n","type":["null","int"]}]}"#,
        )
        .expect("schema");
        for bad in [
            json!({"n": 1}),
            json!({"n": {"string": "x"}}),
            json!({}),
            json!(3),
        ] {
            assert!(from_json(&schema, &bad).is_err(), "{bad}");
        }
        assert!(to_json(&schema, &[2, 4, 9]).is_err(), "bytes left over");
    }
}
