//! Connect schemas to JSON Schema and back, the way Confluent's `JsonSchemaData` maps them: integers
//! and numbers with `connect.type` (`int8` … `int64`, `float32`, `float64`), bytes as strings with
//! `connect.type: bytes`, optional schemas as `oneOf` with `{"type":"null"}`, structs as objects whose
//! properties carry `connect.index` and whose `title` is the struct's name, maps with string keys as
//! objects with `connect.type: map` and `additionalProperties`, other maps as arrays of `key`/`value`
//! objects with `connect.type: map`, the logical types by their `title` (Decimal a number with
//! `connect.type: bytes`, Date and Time `int32`, Timestamp `int64`), and `description`,
//! `connect.version`, `connect.parameters` and `default`; a `oneOf`/`anyOf` of several non-null
//! schemas is a struct named `io.confluent.connect.json.OneOf` with a field per branch. [`Options`]
//! holds the two keys of Confluent's `JsonSchemaDataConfig` that change the mapping.

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use super::schema::{types, JsonSchema, Node};
use super::value;
use crate::data::logical::{
    DATE_NAME, DECIMAL_NAME, DECIMAL_SCALE_PARAMETER, TIMESTAMP_NAME, TIME_NAME,
};
use crate::data::{DataError, Field, Schema, SchemaRef, SchemaType};

/// The property naming a Connect type JSON Schema lacks.
const CONNECT_TYPE: &str = "connect.type";
/// The property giving a struct field its position.
const CONNECT_INDEX: &str = "connect.index";

/// The name Confluent gives the Connect struct of a `oneOf` or `anyOf` of several non-null schemas;
/// its fields are named by it, `.field.` and the branch's position among the non-null branches.
pub const ONE_OF: &str = "io.confluent.connect.json.OneOf";

/// The name of the field holding the `index`th non-null branch of a `oneOf` struct.
pub fn one_of_field(index: usize) -> String {
    format!("{ONE_OF}.field.{index}")
}

/// Whether a Connect schema is the struct of a `oneOf`/`anyOf` (named [`ONE_OF`]).
pub fn is_one_of(schema: &Schema) -> bool {
    schema.schema_type == SchemaType::Struct && schema.name.as_deref() == Some(ONE_OF)
}

/// How Connect schemas map to JSON Schema and back: Confluent's `JsonSchemaDataConfig` keys.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// `object.additional.properties` (default true): `false` writes struct schemas with
    /// `"additionalProperties": false`.
    pub additional_properties: bool,
    /// `use.optional.for.nonrequired` (default false): reading, a property not in its object's
    /// `required` is an optional field.
    pub optional_for_nonrequired: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            additional_properties: true,
            optional_for_nonrequired: false,
        }
    }
}

/// The JSON Schema of a Connect schema, with the default [`Options`].
///
/// # Errors
/// A default value that does not fit its schema.
#[cfg(test)]
pub fn to_json_schema(schema: &Schema) -> Result<Json, DataError> {
    to_json_schema_with(schema, Options::default())
}

/// The JSON Schema of a Connect schema.
///
/// # Errors
/// A default value that does not fit its schema.
pub fn to_json_schema_with(schema: &Schema, opts: Options) -> Result<Json, DataError> {
    if is_one_of(schema) {
        return one_of(schema, opts);
    }
    let mut body = required(schema, opts)?;
    if let Some(default) = &schema.default_value {
        let text = value::write(&value::to_json(schema, default)?);
        let parsed: Json = serde_json::from_str(&text)
            .map_err(|e| DataError::new(format!("Invalid default value: {e}")))?;
        if let Json::Object(map) = &mut body {
            map.insert("default".into(), parsed.clone());
        }
        if schema.optional {
            return Ok(json!({"oneOf": [{"type": "null"}, body], "default": parsed}));
        }
    }
    if schema.optional {
        return Ok(json!({"oneOf": [{"type": "null"}, body]}));
    }
    Ok(body)
}

/// A `oneOf` struct: `oneOf` its fields' schemas (each required, with its `connect.index`), after
/// `{"type":"null"}` when the struct is optional.
fn one_of(schema: &Schema, opts: Options) -> Result<Json, DataError> {
    let mut branches = Vec::with_capacity(schema.fields.len() + 1);
    if schema.optional {
        branches.push(json!({"type": "null"}));
    }
    for f in &schema.fields {
        let mut required = (*f.schema).clone();
        required.optional = false;
        let mut b = to_json_schema_with(&required, opts)?;
        if let Json::Object(m) = &mut b {
            m.insert(CONNECT_INDEX.into(), json!(f.index));
        }
        branches.push(b);
    }
    Ok(json!({ "oneOf": branches }))
}

fn required(schema: &Schema, opts: Options) -> Result<Json, DataError> {
    let mut out = Map::new();
    let (base, connect_type) = match schema.schema_type {
        SchemaType::Int8 => ("integer", Some("int8")),
        SchemaType::Int16 => ("integer", Some("int16")),
        SchemaType::Int32 => ("integer", Some("int32")),
        SchemaType::Int64 => ("integer", Some("int64")),
        SchemaType::Float32 => ("number", Some("float32")),
        SchemaType::Float64 => ("number", Some("float64")),
        SchemaType::Boolean => ("boolean", None),
        SchemaType::String => ("string", None),
        SchemaType::Bytes if schema.logical().is_some() => ("number", Some("bytes")),
        SchemaType::Bytes => ("string", Some("bytes")),
        SchemaType::Array => {
            let items = child(schema.value_schema.as_ref(), opts)?;
            out.insert("items".into(), items);
            ("array", None)
        }
        SchemaType::Map => map(schema, &mut out, opts)?,
        SchemaType::Struct => {
            let mut props = Map::new();
            for f in &schema.fields {
                let mut p = to_json_schema_with(&f.schema, opts)?;
                if let Json::Object(m) = &mut p {
                    m.insert(CONNECT_INDEX.into(), json!(f.index));
                }
                props.insert(f.name.clone(), p);
            }
            out.insert("properties".into(), Json::Object(props));
            if !opts.additional_properties {
                out.insert("additionalProperties".into(), Json::Bool(false));
            }
            ("object", None)
        }
    };
    let mut body = Map::new();
    body.insert("type".into(), json!(base));
    body.extend(out);
    if let Some(name) = &schema.name {
        body.insert("title".into(), json!(name));
    }
    if let Some(doc) = &schema.doc {
        body.insert("description".into(), json!(doc));
    }
    if let Some(v) = schema.version {
        body.insert("connect.version".into(), json!(v));
    }
    if !schema.parameters.is_empty() {
        body.insert("connect.parameters".into(), json!(schema.parameters));
    }
    if let Some(t) = connect_type {
        body.insert(CONNECT_TYPE.into(), json!(t));
    }
    Ok(Json::Object(body))
}

fn child(schema: Option<&SchemaRef>, opts: Options) -> Result<Json, DataError> {
    match schema {
        Some(s) => to_json_schema_with(s, opts),
        None => Ok(json!({})),
    }
}

/// A map: an object when its keys are strings, else an array of `key`/`value` objects.
fn map(
    schema: &Schema,
    out: &mut Map<String, Json>,
    opts: Options,
) -> Result<(&'static str, Option<&'static str>), DataError> {
    let string_keys = schema
        .key_schema
        .as_ref()
        .is_some_and(|k| k.schema_type == SchemaType::String && !k.optional && k.name.is_none());
    if string_keys {
        out.insert(
            "additionalProperties".into(),
            child(schema.value_schema.as_ref(), opts)?,
        );
        return Ok(("object", Some("map")));
    }
    let mut key = child(schema.key_schema.as_ref(), opts)?;
    let mut value = child(schema.value_schema.as_ref(), opts)?;
    for (i, s) in [&mut key, &mut value].into_iter().enumerate() {
        if let Json::Object(m) = s {
            m.insert(CONNECT_INDEX.into(), json!(i));
        }
    }
    out.insert(
        "items".into(),
        json!({"type": "object", "properties": {"key": key, "value": value}}),
    );
    Ok(("array", Some("map")))
}

/// The Connect schema of a JSON Schema (the writer's, when reading), with the default [`Options`].
///
/// # Errors
/// A construct Connect cannot hold (an untyped node, an array without one `items` schema).
#[cfg(test)]
pub fn to_connect(schema: &JsonSchema) -> Result<SchemaRef, DataError> {
    to_connect_with(schema, Options::default())
}

/// The Connect schema of a JSON Schema (the writer's, when reading).
///
/// # Errors
/// A construct Connect cannot hold (an untyped node, an array without one `items` schema).
pub fn to_connect_with(schema: &JsonSchema, opts: Options) -> Result<SchemaRef, DataError> {
    FromJson {
        schema,
        depth: 0,
        opts,
    }
    .node(schema.node(), false)
}

struct FromJson<'a> {
    schema: &'a JsonSchema,
    depth: usize,
    opts: Options,
}

fn named(t: SchemaType, name: &str) -> Schema {
    let mut s = Schema::new(t);
    s.name = Some(name.to_string());
    s.version = Some(1);
    s
}

impl<'a> FromJson<'a> {
    fn node(&mut self, node: Node<'a>, optional: bool) -> Result<SchemaRef, DataError> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(DataError::new(
                "The JSON schema nests too deep (a recursive $ref?)",
            ));
        }
        let out = self.resolved(node, optional);
        self.depth -= 1;
        out
    }

    fn resolved(&mut self, node: Node<'a>, optional: bool) -> Result<SchemaRef, DataError> {
        let node = self.schema.resolve(node).map_err(DataError::new)?;
        if let Some(Json::Array(branches)) = node.get("oneOf").or_else(|| node.get("anyOf")) {
            let non_null: Vec<&Json> = branches
                .iter()
                .filter(|b| types(b).as_deref() != Some(&["null"][..]))
                .collect();
            let nullable = non_null.len() < branches.len();
            let inner = match non_null.as_slice() {
                [only] => self.node(node.child(only), optional || nullable)?,
                _ => self.union(node, &non_null, optional || nullable)?,
            };
            return self.with_default(inner, node);
        }
        let mut kinds = types(node.json).unwrap_or_default();
        let nullable = kinds.contains(&"null");
        kinds.retain(|t| *t != "null");
        let kind = match kinds.as_slice() {
            [one] => *one,
            [] if node.get("properties").is_some() => "object",
            [] if node.get("items").is_some() => "array",
            [] => {
                return Err(DataError::new(
                    "A JSON schema without a type has no Connect type",
                ))
            }
            several => {
                let union = self.types_union(node, several, optional || nullable)?;
                return self.with_default(union, node);
            }
        };
        let mut out = self.typed(node, kind)?;
        out.optional = optional || nullable;
        if let Some(doc) = node.get("description").and_then(Json::as_str) {
            out.doc = Some(doc.to_string());
        }
        if let Some(v) = node.get("connect.version").and_then(Json::as_i64) {
            out.version = i32::try_from(v).ok();
        }
        if let Some(Json::Object(params)) = node.get("connect.parameters") {
            for (k, v) in params {
                if let Some(v) = v.as_str() {
                    out.parameters.insert(k.clone(), v.to_string());
                }
            }
        }
        self.with_default(Arc::new(out), node)
    }

    /// A `oneOf`/`anyOf` of several non-null branches: a struct named [`ONE_OF`] with an optional
    /// field per branch, as Confluent's `JsonSchemaData` reads it.
    fn union(
        &mut self,
        node: Node<'a>,
        branches: &[&'a Json],
        optional: bool,
    ) -> Result<SchemaRef, DataError> {
        if branches.is_empty() {
            return Err(DataError::new(
                "A JSON schema whose oneOf/anyOf allows only null has no Connect type",
            ));
        }
        let mut s = Schema::new(SchemaType::Struct);
        s.name = Some(ONE_OF.to_string());
        s.optional = optional;
        for (index, branch) in branches.iter().enumerate() {
            s.fields.push(Field {
                name: one_of_field(index),
                index,
                schema: self.node(node.child(branch), true)?,
            });
        }
        Ok(Arc::new(s))
    }

    /// `type` listing several non-null types: a [`ONE_OF`] struct with a field per type, each read from
    /// the node's keywords for that type (as Confluent's parser splits such a schema into an `anyOf`).
    fn types_union(
        &mut self,
        node: Node<'a>,
        kinds: &[&str],
        optional: bool,
    ) -> Result<SchemaRef, DataError> {
        let mut s = Schema::new(SchemaType::Struct);
        s.name = Some(ONE_OF.to_string());
        s.optional = optional;
        for (index, kind) in kinds.iter().enumerate() {
            let mut branch = self.typed(node, kind)?;
            branch.optional = true;
            s.fields.push(Field {
                name: one_of_field(index),
                index,
                schema: Arc::new(branch),
            });
        }
        Ok(Arc::new(s))
    }

    /// The node's `default`, read with the schema, on the schema.
    fn with_default(&self, schema: SchemaRef, node: Node<'_>) -> Result<SchemaRef, DataError> {
        let Some(default) = node.get("default") else {
            return Ok(schema);
        };
        let parsed = value::parse(default.to_string().as_bytes())?;
        let v = value::to_value(&schema, &parsed, true)?;
        let mut out = (*schema).clone();
        out.default_value = Some(v);
        Ok(Arc::new(out))
    }

    fn typed(&mut self, node: Node<'a>, kind: &str) -> Result<Schema, DataError> {
        let title = node.get("title").and_then(Json::as_str);
        let connect_type = node.get(CONNECT_TYPE).and_then(Json::as_str);
        Ok(match (kind, connect_type, title) {
            ("integer", _, Some(DATE_NAME)) => named(SchemaType::Int32, DATE_NAME),
            ("integer", _, Some(TIME_NAME)) => named(SchemaType::Int32, TIME_NAME),
            ("integer", _, Some(TIMESTAMP_NAME)) => named(SchemaType::Int64, TIMESTAMP_NAME),
            ("number", _, Some(DECIMAL_NAME)) => {
                let mut s = named(SchemaType::Bytes, DECIMAL_NAME);
                s.parameters
                    .insert(DECIMAL_SCALE_PARAMETER.into(), "0".into());
                s
            }
            ("integer", Some("int8"), _) => Schema::new(SchemaType::Int8),
            ("integer", Some("int16"), _) => Schema::new(SchemaType::Int16),
            ("integer", Some("int32"), _) => Schema::new(SchemaType::Int32),
            ("integer", _, _) => Schema::new(SchemaType::Int64),
            ("number", Some("float32"), _) => Schema::new(SchemaType::Float32),
            ("number", _, _) => Schema::new(SchemaType::Float64),
            ("boolean", _, _) => Schema::new(SchemaType::Boolean),
            ("string", Some("bytes"), _) => Schema::new(SchemaType::Bytes),
            ("string", _, _) => Schema::new(SchemaType::String),
            ("array", Some("map"), _) => self.entries(node)?,
            ("array", _, _) => {
                let mut s = Schema::new(SchemaType::Array);
                let items = node.get("items").filter(|i| !i.is_array()).ok_or_else(|| {
                    DataError::new("A JSON array schema needs one `items` schema for Connect")
                })?;
                s.value_schema = Some(self.node(node.child(items), false)?);
                s
            }
            ("object", Some("map"), _) => {
                let mut s = Schema::new(SchemaType::Map);
                s.key_schema = Some(Schema::string());
                let values = node
                    .get("additionalProperties")
                    .unwrap_or(&Json::Bool(true));
                s.value_schema = Some(self.node(node.child(values), false)?);
                s
            }
            ("object", _, _) => self.record(node, title)?,
            (other, _, _) => {
                return Err(DataError::new(format!(
                    "The JSON schema type {other} has no Connect type"
                )))
            }
        })
    }

    /// An array of `key`/`value` objects: a map with keys of any type.
    fn entries(&mut self, node: Node<'a>) -> Result<Schema, DataError> {
        let items = node
            .get("items")
            .map(|i| self.schema.resolve(node.child(i)))
            .transpose()
            .map_err(DataError::new)?
            .ok_or_else(|| DataError::new("A JSON map schema as an array needs `items`"))?;
        let part = |k: &str| {
            items
                .get("properties")
                .and_then(|p| p.get(k))
                .map(|j| items.child(j))
                .ok_or_else(|| DataError::new(format!("A JSON map entry schema needs `{k}`")))
        };
        let (key, value) = (part("key")?, part("value")?);
        let mut s = Schema::new(SchemaType::Map);
        s.key_schema = Some(self.node(key, false)?);
        s.value_schema = Some(self.node(value, false)?);
        Ok(s)
    }

    fn record(&mut self, node: Node<'a>, title: Option<&str>) -> Result<Schema, DataError> {
        let mut s = Schema::new(SchemaType::Struct);
        s.name = title.map(String::from);
        let mut props: Vec<(&String, &Json)> = node
            .get("properties")
            .and_then(Json::as_object)
            .map(|m| m.iter().collect())
            .unwrap_or_default();
        if props.iter().all(|(_, p)| p.get(CONNECT_INDEX).is_some()) {
            props.sort_by_key(|(_, p)| p.get(CONNECT_INDEX).and_then(Json::as_u64));
        }
        let required: Vec<&str> = node
            .get("required")
            .and_then(Json::as_array)
            .map(|r| r.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        for (index, (name, p)) in props.into_iter().enumerate() {
            let optional = self.opts.optional_for_nonrequired && !required.contains(&name.as_str());
            s.fields.push(Field {
                name: name.clone(),
                index,
                schema: self.node(node.child(p), optional)?,
            });
        }
        Ok(s)
    }
}
