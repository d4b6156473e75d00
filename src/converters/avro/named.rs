//! Avro enums and fixed types through Connect, as Confluent's `AvroData` maps them.
//!
//! An enum reads as a Connect `STRING` named by the enum's full name, whose parameters carry the enum:
//! `io.confluent.connect.avro.Enum` its full name, then one `io.confluent.connect.avro.Enum.<symbol>`
//! per symbol, in the enum's order (with the Connect metadata, its doc and default symbol first, as
//! `io.confluent.connect.avro.enum.doc.<name>` and `io.confluent.connect.avro.enum.default.<name>`).
//! Such a string is written back as that enum with `enhanced.avro.schema.support`, and as an Avro
//! `string` without it (its parameters then kept in `connect.parameters`), as Confluent's converter does.
//!
//! A fixed type reads as `BYTES` named by its full name with its size in `connect.fixed.size` (a fixed
//! decimal stays a `Decimal`, with the size), and such bytes are always written back as that fixed type.

use serde_json::{json, Map, Value as Json};

use crate::data::{Schema, SchemaType};

/// The parameter naming an enum's full name; `<this>.<symbol>` names each symbol.
pub const ENUM: &str = "io.confluent.connect.avro.Enum";
/// The prefix of the parameter holding an enum's doc (followed by the enum's simple name).
pub const ENUM_DOC_PREFIX: &str = "io.confluent.connect.avro.enum.doc.";
/// The prefix of the parameter holding an enum's default symbol (followed by its simple name).
pub const ENUM_DEFAULT_PREFIX: &str = "io.confluent.connect.avro.enum.default.";
/// The parameter holding a fixed type's size.
pub const FIXED_SIZE: &str = "connect.fixed.size";

/// The part of a full name after its last dot.
pub fn simple_name(full: &str) -> &str {
    full.rsplit_once('.').map_or(full, |(_, simple)| simple)
}

/// The Connect schema of an Avro enum: a `STRING` named `full` with the enum's parameters; `meta`
/// (`connect.meta.data`) adds its doc and default symbol.
pub fn enum_to_connect(
    full: &str,
    symbols: &[String],
    default: Option<&str>,
    definition: &Map<String, Json>,
    meta: bool,
) -> Schema {
    let mut s = Schema::new(SchemaType::String);
    let simple = simple_name(full);
    if meta {
        if let Some(doc) = definition.get("doc").and_then(Json::as_str) {
            s.parameters
                .insert(format!("{ENUM_DOC_PREFIX}{simple}"), doc.to_string());
        }
        if let Some(default) = default {
            s.parameters.insert(
                format!("{ENUM_DEFAULT_PREFIX}{simple}"),
                default.to_string(),
            );
        }
    }
    s.parameters.insert(ENUM.to_string(), full.to_string());
    for symbol in symbols {
        s.parameters
            .insert(format!("{ENUM}.{symbol}"), symbol.to_string());
    }
    s.name = Some(full.to_string());
    s
}

/// The symbols of a Connect string that carries an Avro enum, in order; `None` for any other schema.
pub fn enum_symbols(schema: &Schema) -> Option<Vec<&str>> {
    if schema.schema_type != SchemaType::String || !schema.parameters.contains_key(ENUM) {
        return None;
    }
    let prefix = format!("{ENUM}.");
    Some(
        schema
            .parameters
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .collect(),
    )
}

/// The full name of the Avro enum a Connect string carries.
pub fn enum_name(schema: &Schema) -> Option<&str> {
    enum_symbols(schema)?;
    schema.parameters.get(ENUM).map(String::as_str)
}

/// The size of the Avro fixed type a Connect `BYTES` schema stands for: a named schema with a
/// `connect.fixed.size` parameter.
pub fn fixed_size(schema: &Schema) -> Option<usize> {
    if schema.schema_type != SchemaType::Bytes || schema.name.is_none() {
        return None;
    }
    schema.parameters.get(FIXED_SIZE)?.trim().parse().ok()
}

/// The Avro `enum` of a Connect string carrying one (`name` the Connect schema's simple name, under
/// which its doc and default are kept), without the Connect metadata. The enum's name is written as the
/// parameter holds it (Confluent does not scrub it).
pub fn enum_json(schema: &Schema, name: &str) -> Option<Json> {
    let symbols = enum_symbols(schema)?;
    let full = enum_name(schema)?;
    let mut out = Map::new();
    out.insert("type".into(), json!("enum"));
    name_and_namespace(&mut out, full, str::to_string);
    if let Some(doc) = schema.parameters.get(&format!("{ENUM_DOC_PREFIX}{name}")) {
        out.insert("doc".into(), json!(doc));
    }
    out.insert("symbols".into(), json!(symbols));
    if let Some(default) = schema
        .parameters
        .get(&format!("{ENUM_DEFAULT_PREFIX}{name}"))
    {
        out.insert("default".into(), json!(default));
    }
    Some(Json::Object(out))
}

/// The Avro `fixed` of a Connect `BYTES` schema standing for one, without the Connect metadata.
pub fn fixed_json(schema: &Schema, scrub: impl Fn(&str) -> String) -> Option<Json> {
    let size = fixed_size(schema)?;
    let mut out = Map::new();
    out.insert("type".into(), json!("fixed"));
    name_and_namespace(&mut out, schema.name.as_deref()?, scrub);
    out.insert("size".into(), json!(size));
    Some(Json::Object(out))
}

/// `name` and, for a dotted full name, `namespace`, each part through `scrub`.
fn name_and_namespace(out: &mut Map<String, Json>, full: &str, scrub: impl Fn(&str) -> String) {
    match full.rsplit_once('.') {
        Some((ns, name)) => {
            out.insert("name".into(), json!(scrub(name)));
            let ns: Vec<String> = ns.split('.').map(&scrub).collect();
            out.insert("namespace".into(), json!(ns.join(".")));
        }
        None => {
            out.insert("name".into(), json!(scrub(full)));
        }
    }
}

/// The full name a Connect schema written as an enum or fixed type takes in Avro (to write a second
/// use by name): the enum's full name, or the fixed type's Connect name.
pub fn avro_full_name(schema: &Schema, enums: bool) -> Option<String> {
    if enums {
        if let Some(name) = enum_name(schema) {
            return Some(name.to_string());
        }
    }
    fixed_size(schema)?;
    schema.name.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enum_reads_as_a_string_with_its_symbols_in_order() {
        let definition = json!({"doc": "How far"}).as_object().cloned().unwrap();
        let symbols = ["ZED", "ALPHA", "MID"].map(String::from);
        let s = enum_to_connect("ex.Stage", &symbols, Some("MID"), &definition, true);
        assert_eq!(s.name.as_deref(), Some("ex.Stage"));
        let keys: Vec<&str> = s.parameters.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "io.confluent.connect.avro.enum.doc.Stage",
                "io.confluent.connect.avro.enum.default.Stage",
                "io.confluent.connect.avro.Enum",
                "io.confluent.connect.avro.Enum.ZED",
                "io.confluent.connect.avro.Enum.ALPHA",
                "io.confluent.connect.avro.Enum.MID",
            ]
        );
        assert_eq!(enum_symbols(&s), Some(vec!["ZED", "ALPHA", "MID"]));
        let avro = enum_json(&s, "Stage").unwrap();
        assert_eq!(
            avro.to_string(),
            r#"{"type":"enum","name":"Stage","namespace":"ex","doc":"How far","symbols":["ZED","ALPHA","MID"],"default":"MID"}"#
        );
        let bare = enum_to_connect("Stage", &symbols, Some("MID"), &definition, false);
        assert_eq!(bare.parameters.len(), 4, "{:?}", bare.parameters);
    }

    #[test]
    fn only_named_bytes_with_a_size_are_fixed() {
        let mut s = Schema::new(SchemaType::Bytes);
        s.parameters.insert(FIXED_SIZE.into(), "16".into());
        assert_eq!(fixed_size(&s), None, "unnamed");
        s.name = Some("ex.md5".into());
        assert_eq!(fixed_size(&s), Some(16));
        assert_eq!(
            fixed_json(&s, str::to_string).unwrap().to_string(),
            r#"{"type":"fixed","name":"md5","namespace":"ex","size":16}"#
        );
        assert_eq!(avro_full_name(&s, false).as_deref(), Some("ex.md5"));
        s.parameters.insert(FIXED_SIZE.into(), "x".into());
        assert_eq!(fixed_size(&s), None);
    }
}
