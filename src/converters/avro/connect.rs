//! Connect schemas to Avro schemas and back, the way Confluent's `AvroData` maps them: `INT8`/`INT16` as
//! `int` with `connect.type`, optional schemas as unions with `null` (field default `null`), structs as
//! records (unnamed ones `io.confluent.connect.avro.ConnectDefault`), maps with string keys as Avro maps
//! and others as arrays of `io.confluent.connect.avro.MapEntry` records, the logical types with their
//! Avro logical types, and `connect.name`, `connect.version`, `connect.doc`, `connect.parameters`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use super::defaults::{avro_default, connect_default, connect_default_prop, FIELD_DEFAULT_FLAG};
use super::named;
use super::schema::{AvroSchema, NamedKind, Node};
use crate::data::logical::{
    LogicalKind, DATE_NAME, DECIMAL_NAME, DECIMAL_SCALE_PARAMETER, TIMESTAMP_NAME, TIME_NAME,
};
use crate::data::{DataError, Field, Schema, SchemaRef, SchemaType};

/// The namespace of the records Confluent's converter makes up.
const NAMESPACE: &str = "io.confluent.connect.avro";
/// The name of an unnamed struct.
const DEFAULT_NAME: &str = "ConnectDefault";
/// The Connect struct a general Avro union is read as.
pub const UNION_NAME: &str = "io.confluent.connect.avro.Union";
/// Decimal precision parameter Confluent writes.
const PRECISION_PARAMETER: &str = "connect.decimal.precision";
/// Avro properties whose names start with this are kept as Connect parameters, and written back.
const AVRO_PROP: &str = "avro";
/// The parameter holding a record's Avro `doc`.
const RECORD_DOC: &str = "io.confluent.connect.avro.record.doc";
/// The prefix of the parameters holding the Avro `doc` of a record's fields (then the field's name).
const FIELD_DOC_PREFIX: &str = "io.confluent.connect.avro.field.doc.";

/// Connect → Avro, numbering unnamed structs as Confluent does (`ConnectDefault`, `ConnectDefault2`, …).
#[derive(Default)]
pub struct ToAvro {
    unnamed: usize,
    /// Named types already written, so a second use refers to the first by name.
    written: BTreeSet<String>,
    /// `connect.meta.data=false`: no `connect.doc`, `connect.version`, `connect.parameters`,
    /// `connect.name`.
    no_meta: bool,
    /// `scrub.invalid.names`: names made valid Avro names.
    scrub: bool,
    /// `enhanced.avro.schema.support`: strings carrying an enum written as that enum.
    enhanced: bool,
}

/// How a Connect schema is written as Avro: Confluent's `connect.meta.data` and `scrub.invalid.names`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvroOptions {
    /// Write the Connect metadata (`connect.*` properties; default true).
    pub meta: bool,
    /// Replace what Avro does not allow in names (default false).
    pub scrub: bool,
    /// `enhanced.avro.schema.support` (default false): a Connect string carrying an Avro enum is
    /// written as that enum, and a general union's branches that are named types are read as fields
    /// named by the type's full name.
    pub enhanced: bool,
    /// `flatten.singleton.unions` (default true): a union of one branch reads as that branch.
    pub flatten: bool,
}

impl Default for AvroOptions {
    fn default() -> Self {
        AvroOptions {
            meta: true,
            scrub: false,
            enhanced: false,
            flatten: true,
        }
    }
}

/// The Avro schema JSON of a Connect schema.
#[cfg(test)]
pub fn to_avro(schema: &Schema) -> Json {
    to_avro_with(schema, AvroOptions::default())
}

/// The Avro schema JSON of a Connect schema, with Confluent's options.
pub fn to_avro_with(schema: &Schema, options: AvroOptions) -> Json {
    ToAvro {
        no_meta: !options.meta,
        scrub: options.scrub,
        enhanced: options.enhanced,
        ..ToAvro::default()
    }
    .schema(schema, true)
}

/// Confluent's `scrubName`: every character Avro does not allow in a name becomes `_`, and a name that
/// does not start with a letter or `_` gets an `x` in front.
pub fn scrub_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, 'x');
    }
    out
}

/// A Connect schema's metadata as Avro properties: `connect.doc`, `connect.version`,
/// `connect.parameters` (less [`FIELD_DEFAULT_FLAG`]), `connect.default` and `connect.name`.
fn connect_props(schema: &Schema, out: &mut Map<String, Json>, with_name: bool) {
    if let Some(doc) = &schema.doc {
        out.insert("connect.doc".into(), json!(doc));
    }
    if let Some(v) = schema.version {
        out.insert("connect.version".into(), json!(v));
    }
    let params: Map<String, Json> = schema
        .parameters
        .iter()
        .filter(|(k, _)| k.as_str() != FIELD_DEFAULT_FLAG)
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    if !params.is_empty() {
        out.insert("connect.parameters".into(), Json::Object(params));
    }
    if let Some(default) = connect_default_prop(schema) {
        out.insert("connect.default".into(), default);
    }
    if with_name {
        if let Some(name) = &schema.name {
            out.insert("connect.name".into(), json!(name));
        }
    }
}

impl ToAvro {
    /// The Connect metadata (unless `connect.meta.data=false`), then the parameters whose names start
    /// with `avro` as properties of their own, as Confluent writes them.
    fn props(&self, schema: &Schema, out: &mut Map<String, Json>, with_name: bool) {
        if !self.no_meta {
            connect_props(schema, out, with_name);
        }
        for (k, v) in schema.parameters.iter() {
            if k.starts_with(AVRO_PROP) {
                out.insert(k.clone(), json!(v));
            }
        }
    }

    fn name(&self, name: &str) -> String {
        if self.scrub {
            scrub_name(name)
        } else {
            name.to_string()
        }
    }

    /// `optional` schemas become `["null", T]` unless `strip_optional` says the caller handles it.
    fn schema(&mut self, schema: &Schema, strip_optional: bool) -> Json {
        if is_union(schema) {
            return self.union(schema);
        }
        let body = self.required(schema);
        match (schema.optional && strip_optional, null_last(schema)) {
            (false, _) => body,
            (true, false) => json!(["null", body]),
            (true, true) => json!([body, "null"]),
        }
    }

    /// The next name of an unnamed struct (or enum): `ConnectDefault`, then `ConnectDefault2`, …
    fn default_name(&mut self) -> String {
        self.unnamed += 1;
        match self.unnamed {
            1 => format!("{NAMESPACE}.{DEFAULT_NAME}"),
            n => format!("{NAMESPACE}.{DEFAULT_NAME}{n}"),
        }
    }

    /// A Connect string carrying an enum, as that enum (with `enhanced.avro.schema.support`).
    fn enumeration(&mut self, schema: &Schema) -> Option<Json> {
        if !self.enhanced {
            return None;
        }
        named::enum_symbols(schema)?;
        // The doc and default are kept under the Connect schema's simple name.
        let name = match &schema.name {
            Some(n) => self.name(named::simple_name(n)),
            None => named::simple_name(&self.default_name()).to_string(),
        };
        named::enum_json(schema, &name)
    }

    /// A second use of an enum or fixed type already written: its name.
    fn written_before(&mut self, schema: &Schema) -> Option<Json> {
        let full = named::avro_full_name(schema, self.enhanced)?;
        if self.written.insert(full.clone()) {
            return None;
        }
        if self.enhanced && named::enum_name(schema).is_some() {
            return Some(json!(full));
        }
        let parts: Vec<String> = full.split('.').map(|p| self.name(p)).collect();
        Some(json!(parts.join(".")))
    }

    fn bytes(&self, schema: &Schema) -> Json {
        let scrub = |n: &str| self.name(n);
        named::fixed_json(schema, scrub).unwrap_or_else(|| json!("bytes"))
    }

    fn required(&mut self, schema: &Schema) -> Json {
        if let Some(name) = self.written_before(schema) {
            return name;
        }
        let mut props = Map::new();
        let base = match schema.logical() {
            Some(LogicalKind::Decimal(scale)) => {
                let precision = schema
                    .parameters
                    .get(PRECISION_PARAMETER)
                    .and_then(|p| p.parse::<i64>().ok())
                    .unwrap_or(64);
                props.insert("scale".into(), json!(scale));
                props.insert("precision".into(), json!(precision));
                props.insert("logicalType".into(), json!("decimal"));
                self.bytes(schema)
            }
            Some(LogicalKind::Date) => {
                props.insert("logicalType".into(), json!("date"));
                json!("int")
            }
            Some(LogicalKind::Time) => {
                props.insert("logicalType".into(), json!("time-millis"));
                json!("int")
            }
            Some(LogicalKind::Timestamp) => {
                props.insert("logicalType".into(), json!("timestamp-millis"));
                json!("long")
            }
            None => match schema.schema_type {
                SchemaType::Int8 => {
                    props.insert("connect.type".into(), json!("int8"));
                    json!("int")
                }
                SchemaType::Int16 => {
                    props.insert("connect.type".into(), json!("int16"));
                    json!("int")
                }
                SchemaType::Int32 => json!("int"),
                SchemaType::Int64 => json!("long"),
                SchemaType::Float32 => json!("float"),
                SchemaType::Float64 => json!("double"),
                SchemaType::Boolean => json!("boolean"),
                SchemaType::String => self.enumeration(schema).unwrap_or(json!("string")),
                SchemaType::Bytes => self.bytes(schema),
                SchemaType::Array => return self.array(schema),
                SchemaType::Map => return self.map(schema),
                SchemaType::Struct => return self.record(schema),
            },
        };
        self.props(schema, &mut props, true);
        match base {
            Json::Object(mut named) => {
                named.extend(props);
                Json::Object(named)
            }
            base if props.is_empty() => base,
            base => {
                let mut out = Map::new();
                out.insert("type".into(), base);
                out.extend(props);
                Json::Object(out)
            }
        }
    }

    /// A struct read from a general union, written back as that union.
    fn union(&mut self, schema: &Schema) -> Json {
        let mut branches = Vec::with_capacity(schema.fields.len() + 1);
        if schema.optional {
            branches.push(json!("null"));
        }
        branches.extend(schema.fields.iter().map(|f| self.required(&f.schema)));
        Json::Array(branches)
    }

    fn child(&mut self, schema: Option<&SchemaRef>) -> Json {
        match schema {
            Some(s) => self.schema(s, true),
            None => json!("null"),
        }
    }

    fn array(&mut self, schema: &Schema) -> Json {
        let mut out = Map::new();
        out.insert("type".into(), json!("array"));
        out.insert("items".into(), self.child(schema.value_schema.as_ref()));
        self.props(schema, &mut out, true);
        Json::Object(out)
    }

    fn map(&mut self, schema: &Schema) -> Json {
        let string_keys = schema
            .key_schema
            .as_ref()
            .is_some_and(|k| k.schema_type == SchemaType::String && !k.optional);
        let mut out = Map::new();
        if string_keys {
            out.insert("type".into(), json!("map"));
            out.insert("values".into(), self.child(schema.value_schema.as_ref()));
        } else {
            let entry = json!({
                "type": "record",
                "name": "MapEntry",
                "namespace": NAMESPACE,
                "fields": [
                    {"name": "key", "type": self.child(schema.key_schema.as_ref())},
                    {"name": "value", "type": self.child(schema.value_schema.as_ref())},
                ],
            });
            out.insert("type".into(), json!("array"));
            out.insert("items".into(), entry);
        }
        self.props(schema, &mut out, true);
        Json::Object(out)
    }

    fn record(&mut self, schema: &Schema) -> Json {
        let full = match &schema.name {
            Some(n) => n.clone(),
            None => self.default_name(),
        };
        if self.written.contains(&full) {
            let parts: Vec<String> = full.split('.').map(|p| self.name(p)).collect();
            return json!(parts.join("."));
        }
        self.written.insert(full.clone());
        let (namespace, name) = match full.rsplit_once('.') {
            Some((ns, n)) => (
                Some(
                    ns.split('.')
                        .map(|p| self.name(p))
                        .collect::<Vec<_>>()
                        .join("."),
                ),
                self.name(n),
            ),
            None => (None, self.name(&full)),
        };
        let fields: Vec<Json> = schema
            .fields
            .iter()
            .map(|f| {
                let mut field = Map::new();
                field.insert("name".into(), json!(self.name(&f.name)));
                field.insert("type".into(), self.schema(&f.schema, true));
                if let Some(doc) = schema
                    .parameters
                    .get(&format!("{FIELD_DOC_PREFIX}{}", f.name))
                {
                    field.insert("doc".into(), json!(doc));
                }
                match &f.schema.default_value {
                    Some(d) if !d.is_null() => {
                        field.insert("default".into(), avro_default(&f.schema, d));
                    }
                    _ if f.schema.optional => {
                        field.insert("default".into(), Json::Null);
                    }
                    _ => {}
                }
                Json::Object(field)
            })
            .collect();
        let mut out = Map::new();
        out.insert("type".into(), json!("record"));
        out.insert("name".into(), json!(name));
        if let Some(ns) = namespace {
            out.insert("namespace".into(), json!(ns));
        }
        if let Some(doc) = schema.parameters.get(RECORD_DOC) {
            out.insert("doc".into(), json!(doc));
        }
        out.insert("fields".into(), Json::Array(fields));
        self.props(schema, &mut out, schema.name.is_some());
        Json::Object(out)
    }
}

/// The Connect schema of a parsed Avro schema (the writer's, when reading), with the default options.
///
/// # Errors
/// See [`to_connect_with`].
#[cfg(test)]
pub fn to_connect(schema: &AvroSchema, json: &Json) -> Result<SchemaRef, DataError> {
    to_connect_with(schema, json, AvroOptions::default())
}

/// The Connect schema of a parsed Avro schema (the writer's, when reading): `connect.meta.data` reads
/// the Connect metadata, `enhanced.avro.schema.support` names a general union's named branches by full
/// name.
///
/// # Errors
/// A named type the schema does not define, or a type Connect has no type for.
pub fn to_connect_with(
    schema: &AvroSchema,
    json: &Json,
    options: AvroOptions,
) -> Result<SchemaRef, DataError> {
    FromAvro {
        schema,
        meta: options.meta,
        enhanced: options.enhanced,
        flatten: options.flatten,
    }
    .node(&schema.root, json, false)
}

struct FromAvro<'a> {
    schema: &'a AvroSchema,
    /// `connect.meta.data`: read docs and parameters.
    meta: bool,
    /// `enhanced.avro.schema.support`.
    enhanced: bool,
    /// `flatten.singleton.unions`.
    flatten: bool,
}

/// The JSON object that describes a node, if the schema wrote one (for its properties).
fn props(json: &Json) -> Option<&Map<String, Json>> {
    json.as_object()
}

/// The `connect.*` properties of a node: the name and version always, the doc and parameters with
/// `connect.meta.data` (`meta`), as Confluent reads them; then every property whose name starts with
/// `avro` (`avro.java.string`) as a parameter of that name, its value as text.
fn apply_connect_props(out: &mut Schema, json: &Json, meta: bool) {
    let Some(p) = props(json) else { return };
    if let Some(name) = p.get("connect.name").and_then(Json::as_str) {
        out.name = Some(name.to_string());
    }
    if let Some(v) = p.get("connect.version").and_then(Json::as_i64) {
        out.version = i32::try_from(v).ok();
    }
    if meta {
        if let Some(doc) = p.get("connect.doc").and_then(Json::as_str) {
            out.doc = Some(doc.to_string());
        }
        if let Some(Json::Object(params)) = p.get("connect.parameters") {
            for (k, v) in params {
                if let Some(v) = v.as_str() {
                    out.parameters.insert(k.clone(), v.to_string());
                }
            }
        }
    }
    for (k, v) in p.iter().filter(|(k, _)| k.starts_with(AVRO_PROP)) {
        let text = v.as_str().map_or_else(|| v.to_string(), String::from);
        out.parameters.insert(k.clone(), text);
    }
}

impl FromAvro<'_> {
    fn node(&self, node: &Node, json: &Json, optional: bool) -> Result<SchemaRef, DataError> {
        let mut out = match node {
            Node::Union(branches) => return self.union(branches, json),
            Node::Primitive(p) => self.primitive(p, json)?,
            Node::Array(items) => self.array(items, json)?,
            Node::Map(values) => {
                let mut s = Schema::new(SchemaType::Map);
                s.key_schema = Some(Schema::string());
                s.value_schema = Some(self.node(values, child(json, "values"), false)?);
                s
            }
            Node::Named(name) => {
                // A type used again by name takes its attributes from where it is defined.
                let definition;
                let json = match (json, self.schema.lookup(name)) {
                    (Json::Object(o), _) if o.contains_key("name") => json,
                    (_, None) => json,
                    (_, Some(def)) => {
                        definition = Json::Object(def.definition.clone());
                        &definition
                    }
                };
                let mut out = self.named(name, json)?;
                out.optional = optional;
                apply_connect_props(&mut out, json, self.meta);
                if out
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with(&format!("{NAMESPACE}.{DEFAULT_NAME}")))
                {
                    out.name = None;
                }
                return Ok(with_connect_default(out, json));
            }
        };
        out.optional = optional;
        apply_connect_props(&mut out, json, self.meta);
        Ok(with_connect_default(out, json))
    }

    fn union(&self, branches: &[Node], json: &Json) -> Result<SchemaRef, DataError> {
        let jsons: Vec<Json> = json.as_array().cloned().unwrap_or_default();
        let non_null: Vec<(usize, &Node)> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| **b != Node::Primitive("null"))
            .collect();
        match non_null.as_slice() {
            [(i, only)] if branches.len() == 2 => {
                self.node(only, jsons.get(*i).unwrap_or(&Json::Null), true)
            }
            [(i, only)] if branches.len() == 1 && self.flatten => {
                self.node(only, jsons.get(*i).unwrap_or(&Json::Null), false)
            }
            _ => self.general_union(branches, &jsons),
        }
    }

    /// A union other than `[null, T]`: a struct `io.confluent.connect.avro.Union` with one optional field
    /// per branch other than null, named by the branch's type (a named type by its simple name), as
    /// Confluent's `AvroData` reads it; optional when null is a branch.
    fn general_union(&self, branches: &[Node], jsons: &[Json]) -> Result<SchemaRef, DataError> {
        let mut s = Schema::new(SchemaType::Struct);
        s.name = Some(UNION_NAME.to_string());
        for (i, branch) in branches.iter().enumerate() {
            if *branch == Node::Primitive("null") {
                s.optional = true;
                continue;
            }
            s.fields.push(Field {
                name: branch_name(branch, self.enhanced),
                index: s.fields.len(),
                schema: self.node(branch, jsons.get(i).unwrap_or(&Json::Null), true)?,
            });
        }
        Ok(Arc::new(s))
    }

    fn primitive(&self, p: &str, json: &Json) -> Result<Schema, DataError> {
        let prop = |k: &str| props(json).and_then(|m| m.get(k));
        let logical = prop("logicalType").and_then(Json::as_str);
        Ok(match (p, logical) {
            ("int", Some("date")) => named(SchemaType::Int32, DATE_NAME),
            ("int", Some("time-millis")) => named(SchemaType::Int32, TIME_NAME),
            ("long", Some("timestamp-millis")) => named(SchemaType::Int64, TIMESTAMP_NAME),
            ("bytes", Some("decimal")) => {
                let mut s = named(SchemaType::Bytes, DECIMAL_NAME);
                let scale = prop("scale").and_then(Json::as_i64).unwrap_or(0);
                s.parameters
                    .insert(DECIMAL_SCALE_PARAMETER.into(), scale.to_string());
                if let Some(precision) = prop("precision").and_then(Json::as_i64) {
                    s.parameters
                        .insert(PRECISION_PARAMETER.into(), precision.to_string());
                }
                s
            }
            ("int", _) => match prop("connect.type").and_then(Json::as_str) {
                Some("int8") => Schema::new(SchemaType::Int8),
                Some("int16") => Schema::new(SchemaType::Int16),
                _ => Schema::new(SchemaType::Int32),
            },
            ("long", _) => Schema::new(SchemaType::Int64),
            ("float", _) => Schema::new(SchemaType::Float32),
            ("double", _) => Schema::new(SchemaType::Float64),
            ("boolean", _) => Schema::new(SchemaType::Boolean),
            ("string", _) => Schema::new(SchemaType::String),
            ("bytes", _) => Schema::new(SchemaType::Bytes),
            (other, _) => {
                return Err(DataError::new(format!(
                    "The Avro type {other} has no Connect type"
                )))
            }
        })
    }

    fn array(&self, items: &Node, json: &Json) -> Result<Schema, DataError> {
        let items_json = child(json, "items");
        // An array of MapEntry records is a map with keys of any type.
        if let Node::Named(name) = items {
            if name == &format!("{NAMESPACE}.MapEntry") {
                if let Some(NamedKind::Record(fields)) = self.schema.lookup(name).map(|n| &n.kind) {
                    let field_json = |i: usize| &items_json["fields"][i]["type"];
                    if let [key, value] = fields.as_slice() {
                        let mut s = Schema::new(SchemaType::Map);
                        s.key_schema = Some(self.node(&key.node, field_json(0), false)?);
                        s.value_schema = Some(self.node(&value.node, field_json(1), false)?);
                        return Ok(s);
                    }
                }
            }
        }
        let mut s = Schema::new(SchemaType::Array);
        s.value_schema = Some(self.node(items, items_json, false)?);
        Ok(s)
    }

    fn named(&self, name: &str, json: &Json) -> Result<Schema, DataError> {
        let def = self
            .schema
            .lookup(name)
            .ok_or_else(|| DataError::new(format!("Unknown Avro type {name}")))?;
        Ok(match &def.kind {
            NamedKind::Enum(symbols, default) => named::enum_to_connect(
                &def.name,
                symbols,
                default.as_deref(),
                &def.definition,
                self.meta,
            ),
            NamedKind::Fixed(size) => {
                let mut s = match json.get("logicalType").and_then(Json::as_str) {
                    Some("decimal") => self.primitive("bytes", json)?,
                    _ => {
                        let mut s = Schema::new(SchemaType::Bytes);
                        s.name = Some(def.name.clone());
                        s
                    }
                };
                s.parameters
                    .insert(named::FIXED_SIZE.into(), size.to_string());
                s
            }
            NamedKind::Record(fields) => {
                let mut s = Schema::new(SchemaType::Struct);
                s.name = Some(def.name.clone());
                let doc = |j: &Json| j.get("doc").and_then(Json::as_str).map(String::from);
                if let Some(doc) = doc(json).filter(|_| self.meta) {
                    s.parameters.insert(RECORD_DOC.into(), doc);
                }
                let field_jsons = json.get("fields").and_then(Json::as_array);
                for (index, f) in fields.iter().enumerate() {
                    let field_json = field_jsons.and_then(|a| a.get(index));
                    if let Some(doc) = field_json.and_then(doc).filter(|_| self.meta) {
                        s.parameters
                            .insert(format!("{FIELD_DOC_PREFIX}{}", f.name), doc);
                    }
                    let fj = field_json.map(|x| &x["type"]).unwrap_or(&Json::Null);
                    let mut schema = self.node(&f.node, fj, false)?;
                    if let Some(d) = f.default.as_ref().and_then(|d| connect_default(&schema, d)) {
                        let flag = self.meta
                            && !matches!(f.node, Node::Union(_))
                            && fj.get("connect.default").is_none();
                        let schema = Arc::make_mut(&mut schema);
                        schema.default_value = Some(d);
                        if flag {
                            schema
                                .parameters
                                .insert(FIELD_DEFAULT_FLAG.into(), "true".into());
                        }
                    }
                    s.fields.push(Field {
                        name: f.name.clone(),
                        index,
                        schema,
                    });
                }
                s
            }
        })
    }
}

/// The schema with the default its `connect.default` property gives, when it has one.
fn with_connect_default(schema: Schema, json: &Json) -> SchemaRef {
    let mut schema = Arc::new(schema);
    let default = json
        .get("connect.default")
        .and_then(|d| connect_default(&schema, d));
    if let Some(d) = default {
        Arc::make_mut(&mut schema).default_value = Some(d);
    }
    schema
}

fn named(t: SchemaType, name: &str) -> Schema {
    let mut s = Schema::new(t);
    s.name = Some(name.to_string());
    s.version = Some(1);
    s
}

/// A child's JSON (`items`, `values`), or null when the node was written by name.
fn child<'a>(json: &'a Json, key: &str) -> &'a Json {
    json.get(key).unwrap_or(&Json::Null)
}

/// Whether an optional schema is written as `[T, "null"]`: Avro takes a field's default from the union's
/// first branch, so a default other than null puts its type first (as Confluent's `AvroData` does).
pub fn null_last(schema: &Schema) -> bool {
    schema.optional && schema.default_value.as_ref().is_some_and(|d| !d.is_null())
}

/// Whether a Connect schema is a general Avro union read as a struct.
pub fn is_union(schema: &Schema) -> bool {
    schema.schema_type == SchemaType::Struct && schema.name.as_deref() == Some(UNION_NAME)
}

/// The field name of a union branch: its type's name, a named type's simple name (its full name with
/// `enhanced.avro.schema.support`).
fn branch_name(node: &Node, enhanced: bool) -> String {
    let name = super::json::branch_name(node);
    if enhanced {
        return name;
    }
    match name.rsplit_once('.') {
        Some((_, simple)) => simple.to_string(),
        None => name,
    }
}
