//! Connect schemas as `.proto` text, the way Confluent's `ProtobufData` writes them: a struct is a
//! proto3 message named by the schema's name (its dotted prefix as the package) or `ConnectDefault1`,
//! `ConnectDefault2`, …; its fields numbered by their `io.confluent.connect.protobuf.Tag` parameter or in
//! order; nested structs as nested messages; `INT8` and `INT16` as `int32` with the `connect.type`
//! parameter in `confluent.field_meta`; enums (the `io.confluent.connect.protobuf.Enum` parameters) as
//! nested enums; `io.confluent.connect.protobuf.Union` structs as `oneof`s; arrays as `repeated`; maps as
//! `map<K, V>`, or as repeated `…Entry` messages when Protobuf's maps cannot hold them; `Decimal` as
//! `confluent.type.Decimal`, `Date` as `google.type.Date`, `Time` as `google.type.TimeOfDay` and
//! `Timestamp` as `google.protobuf.Timestamp`. A value that is not a struct is a `google.protobuf`
//! wrapper message.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::names::{
    is_union, scrub_if, DEFAULT_NAME, ENUM_PARAMETER, TAG_PARAMETER, TYPE_PARAMETER, UNION_NAME,
    WRAPPER_PARAMETER,
};
use crate::data::logical::{LogicalKind, DECIMAL_SCALE_PARAMETER};
use crate::data::{DataError, Schema, SchemaType};

/// The parameter naming a field's Connect type when Protobuf has no type of its own for it.
pub const CONNECT_TYPE: &str = "connect.type";
/// The Connect parameter of a Decimal's precision.
pub const PRECISION: &str = "connect.decimal.precision";
/// The `field_meta` parameter of a `confluent.type.Decimal`'s precision.
pub const META_PRECISION: &str = "precision";

/// How Connect schemas are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// `optional.for.nullables`: optional Connect fields as proto3 `optional` fields.
    pub optional_for_nullables: bool,
    /// `wrapper.for.nullables`: optional primitive Connect fields as `google.protobuf` wrappers.
    pub wrapper_for_nullables: bool,
    /// `scrub.invalid.names`: names made valid Protobuf identifiers.
    pub scrub: bool,
}

/// Connect → `.proto` text, numbering unnamed structs.
#[derive(Default)]
pub struct ToProto {
    unnamed: usize,
    imports: BTreeSet<&'static str>,
    opts: WriteOptions,
}

fn unsupported(what: &str) -> DataError {
    DataError::new(format!("ProtobufConverter cannot write {what}"))
}

/// The wrapper message Confluent writes a value of a primitive type as.
pub fn wrapper_of(schema: &Schema) -> Option<&'static str> {
    Some(match schema.schema_type {
        SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 => "google.protobuf.Int32Value",
        SchemaType::Int64 => match schema.parameters.get(TYPE_PARAMETER).map(String::as_str) {
            Some("uint32" | "fixed32") => "google.protobuf.UInt32Value",
            Some("uint64" | "fixed64") => "google.protobuf.UInt64Value",
            _ => "google.protobuf.Int64Value",
        },
        SchemaType::Float32 => "google.protobuf.FloatValue",
        SchemaType::Float64 => "google.protobuf.DoubleValue",
        SchemaType::Boolean => "google.protobuf.BoolValue",
        SchemaType::String => "google.protobuf.StringValue",
        SchemaType::Bytes => "google.protobuf.BytesValue",
        _ => return None,
    })
}

/// A message's definitions in the making: its nested messages and enums, by name.
#[derive(Default)]
struct Body {
    nested: String,
    defined: BTreeSet<String>,
}

impl ToProto {
    /// A writer; `optional_for_nullables` as the converter's key says.
    #[cfg(test)]
    pub fn new(optional_for_nullables: bool) -> Self {
        Self::with(WriteOptions {
            optional_for_nullables,
            ..WriteOptions::default()
        })
    }

    /// A writer with all the options.
    pub fn with(opts: WriteOptions) -> Self {
        ToProto {
            opts,
            ..ToProto::default()
        }
    }

    fn scrub(&self, name: &str) -> String {
        scrub_if(self.opts.scrub, name)
    }

    /// The `.proto` text of a struct schema and its message's full name; for a primitive schema,
    /// `google/protobuf/wrappers.proto` and the wrapper message of its type.
    ///
    /// # Errors
    /// An array or map schema (Confluent writes only structs and primitives), or one that holds what
    /// Protobuf cannot hold (an array of arrays or maps).
    pub fn file(mut self, schema: &Schema) -> Result<(String, String), DataError> {
        if let Some(wrapper) = wrapper_of(schema) {
            return Ok((super::builtin::WRAPPERS.to_string(), wrapper.to_string()));
        }
        if schema.schema_type != SchemaType::Struct {
            return Err(unsupported(&format!(
                "a {} schema as a record's key or value: only a STRUCT or a primitive",
                schema.schema_type.as_str()
            )));
        }
        let (package, name) = self.split_name(schema);
        let mut body = String::new();
        self.message(schema, &name, 0, &mut body)?;
        let mut out = String::from("syntax = \"proto3\";\n");
        if let Some(p) = &package {
            let _ = writeln!(out, "package {p};");
        }
        out.push('\n');
        for i in &self.imports {
            let _ = writeln!(out, "import \"{i}\";");
        }
        if !self.imports.is_empty() {
            out.push('\n');
        }
        out.push_str(&body);
        let full = match package {
            Some(p) => format!("{p}.{name}"),
            None => name,
        };
        Ok((out, full))
    }

    /// The name of a schema, or the next `ConnectDefault<n>`.
    fn name_or_default(&mut self, schema: &Schema) -> String {
        match schema
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            Some(n) => n.to_string(),
            None => {
                self.unnamed += 1;
                format!("{DEFAULT_NAME}{}", self.unnamed)
            }
        }
    }

    /// A struct's package (its name's dotted prefix) and message name, each part scrubbed when asked.
    fn split_name(&mut self, schema: &Schema) -> (Option<String>, String) {
        let full = self.name_or_default(schema);
        let parts: Vec<String> = full.split('.').map(|p| self.scrub(p)).collect();
        match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() => (Some(rest.join(".")), last.clone()),
            _ => (None, parts.concat()),
        }
    }

    /// The last part of a schema's name (or the next default name), scrubbed when asked.
    fn unqualified(&mut self, schema: &Schema) -> String {
        let full = self.name_or_default(schema);
        let last = full.rsplit('.').next().unwrap_or_default();
        self.scrub(last)
    }

    fn message(
        &mut self,
        schema: &Schema,
        name: &str,
        depth: usize,
        out: &mut String,
    ) -> Result<(), DataError> {
        let pad = "  ".repeat(depth);
        let _ = writeln!(out, "{pad}message {name} {{");
        let mut body = Body::default();
        let mut index = 1;
        let mut next_tag = |s: &Schema| match tag_of(s) {
            Some(t) => t,
            None => {
                index += 1;
                index - 1
            }
        };
        for field in &schema.fields {
            let fname = self.scrub(&field.name);
            if is_union(field.schema.name.as_deref()) {
                let oneof = match field.schema.name.as_deref() {
                    Some(n) if n.len() > UNION_NAME.len() + 1 => {
                        let rest = &n[UNION_NAME.len() + 1..];
                        self.scrub(rest.rsplit('.').next().unwrap_or(rest))
                    }
                    _ => fname.clone(),
                };
                let _ = writeln!(out, "{pad}  oneof {oneof} {{");
                for member in &field.schema.fields {
                    if matches!(
                        member.schema.schema_type,
                        SchemaType::Array | SchemaType::Map
                    ) {
                        return Err(unsupported(&format!(
                            "oneof {oneof}'s member {}: an array or a map cannot be a oneof member",
                            member.name
                        )));
                    }
                    let mname = self.scrub(&member.name);
                    let tag = next_tag(&member.schema);
                    let (ty, params) =
                        self.field_type(&member.schema, &mname, depth + 1, &mut body, true)?;
                    let line = self.field_line("", &ty, &mname, tag, &params);
                    let _ = writeln!(out, "{pad}    {line}");
                }
                let _ = writeln!(out, "{pad}  }}");
                continue;
            }
            let tag = next_tag(&field.schema);
            let (ty, params) =
                self.field_type(&field.schema, &fname, depth + 1, &mut body, false)?;
            let label = self.label(&field.schema, &ty);
            let line = self.field_line(label, &ty, &fname, tag, &params);
            let _ = writeln!(out, "{pad}  {line}");
        }
        out.push_str(&body.nested);
        let _ = writeln!(out, "{pad}}}");
        Ok(())
    }

    fn label(&self, schema: &Schema, ty: &str) -> &'static str {
        match schema.schema_type {
            SchemaType::Array => "repeated ",
            SchemaType::Map if !ty.starts_with("map<") => "repeated ",
            SchemaType::Map => "",
            _ if self.opts.optional_for_nullables && schema.optional => "optional ",
            _ => "",
        }
    }

    fn field_line(
        &mut self,
        label: &str,
        ty: &str,
        name: &str,
        tag: u32,
        params: &[(String, String)],
    ) -> String {
        let mut line = format!("{label}{ty} {name} = {tag}");
        if !params.is_empty() {
            self.imports.insert("confluent/meta.proto");
            let list: Vec<String> = params
                .iter()
                .map(|(k, v)| format!("{{ key: \"{}\", value: \"{}\" }}", escape(k), escape(v)))
                .collect();
            let _ = write!(
                line,
                " [(confluent.field_meta) = {{ params: [{}] }}]",
                list.join(", ")
            );
        }
        line.push(';');
        line
    }

    /// A field's Protobuf type (nested definitions written into `body`) and its `field_meta` params.
    fn field_type(
        &mut self,
        schema: &Schema,
        field_name: &str,
        depth: usize,
        body: &mut Body,
        oneof_member: bool,
    ) -> Result<(String, Vec<(String, String)>), DataError> {
        if let Some(found) = self.logical_type(schema) {
            return Ok(found);
        }
        if let Some(e) = self.enum_type(schema, depth, body)? {
            return Ok((e, Vec::new()));
        }
        let mut params = Vec::new();
        let wrap = self.opts.wrapper_for_nullables
            && schema.optional
            && (!oneof_member
                || schema
                    .parameters
                    .get(WRAPPER_PARAMETER)
                    .is_some_and(|v| v == "true"));
        if wrap {
            if let Some(w) = wrapper_of(schema) {
                if matches!(schema.schema_type, SchemaType::Int8 | SchemaType::Int16) {
                    let t = schema.schema_type.as_str().to_ascii_lowercase();
                    params.push((CONNECT_TYPE.to_string(), t));
                }
                self.imports.insert("google/protobuf/wrappers.proto");
                return Ok((w.to_string(), params));
            }
        }
        let ty = match schema.schema_type {
            SchemaType::Int8 | SchemaType::Int16 => {
                let t = schema.schema_type.as_str().to_ascii_lowercase();
                params.push((CONNECT_TYPE.to_string(), t));
                "int32".to_string()
            }
            SchemaType::Int32 | SchemaType::Int64 => int_type(schema)?,
            SchemaType::Array => {
                let items = schema
                    .value_schema
                    .as_deref()
                    .ok_or_else(|| unsupported("an array without an item schema"))?;
                if matches!(items.schema_type, SchemaType::Array | SchemaType::Map) {
                    return Err(unsupported(
                        "an array of arrays or of maps: a repeated field cannot repeat (Confluent: Array cannot be nested)",
                    ));
                }
                return self.field_type(items, field_name, depth, body, false);
            }
            SchemaType::Map => self.map_type(schema, depth, body)?,
            SchemaType::Struct => {
                let mut name = self.unqualified(schema);
                if name == field_name {
                    // A message type may not share its field's name.
                    name.push_str("Message");
                }
                if body.defined.insert(name.clone()) {
                    let mut nested = String::new();
                    self.message(schema, &name, depth, &mut nested)?;
                    body.nested.push_str(&nested);
                }
                name
            }
            other => scalar(other).to_string(),
        };
        Ok((ty, params))
    }

    /// A logical type's message and `field_meta` params.
    fn logical_type(&mut self, schema: &Schema) -> Option<(String, Vec<(String, String)>)> {
        let mut params = Vec::new();
        let ty = match schema.logical()? {
            LogicalKind::Decimal(scale) => {
                if let Some(p) = schema.parameters.get(PRECISION) {
                    params.push((META_PRECISION.to_string(), p.clone()));
                }
                params.push((DECIMAL_SCALE_PARAMETER.to_string(), scale.to_string()));
                self.imports.insert("confluent/type/decimal.proto");
                "confluent.type.Decimal"
            }
            LogicalKind::Date => {
                self.imports.insert("google/type/date.proto");
                "google.type.Date"
            }
            LogicalKind::Time => {
                self.imports.insert("google/type/timeofday.proto");
                "google.type.TimeOfDay"
            }
            LogicalKind::Timestamp => {
                self.imports.insert("google/protobuf/timestamp.proto");
                "google.protobuf.Timestamp"
            }
        };
        Some((ty.to_string(), params))
    }

    /// A `STRING` or `INT32` with Confluent's enum parameters: an enum defined in the message (once),
    /// its values from the `<Enum>.<SYMBOL>` parameters, by number.
    fn enum_type(
        &mut self,
        schema: &Schema,
        depth: usize,
        body: &mut Body,
    ) -> Result<Option<String>, DataError> {
        if !matches!(schema.schema_type, SchemaType::String | SchemaType::Int32) {
            return Ok(None);
        }
        let Some(enum_name) = schema.parameters.get(ENUM_PARAMETER) else {
            return Ok(None);
        };
        let name = self.scrub(enum_name.rsplit('.').next().unwrap_or(enum_name));
        if !body.defined.insert(name.clone()) {
            return Ok(Some(name));
        }
        let prefix = format!("{ENUM_PARAMETER}.");
        let mut values: Vec<(i32, &str)> = Vec::new();
        for (k, v) in schema.parameters.iter() {
            if let Some(symbol) = k.strip_prefix(&prefix) {
                let n = v.parse::<i32>().map_err(|_| {
                    unsupported(&format!("enum {enum_name}: {symbol}'s number {v:?}"))
                })?;
                values.push((n, symbol));
            }
        }
        if values.is_empty() {
            return Err(unsupported(&format!(
                "enum {enum_name}: it has no {prefix}<SYMBOL> parameters"
            )));
        }
        values.sort();
        let pad = "  ".repeat(depth);
        let _ = writeln!(body.nested, "{pad}enum {name} {{");
        for (n, symbol) in values {
            let _ = writeln!(body.nested, "{pad}  {symbol} = {n};");
        }
        let _ = writeln!(body.nested, "{pad}}}");
        Ok(Some(name))
    }

    fn map_type(
        &mut self,
        schema: &Schema,
        depth: usize,
        body: &mut Body,
    ) -> Result<String, DataError> {
        let (Some(key), Some(value)) =
            (schema.key_schema.as_deref(), schema.value_schema.as_deref())
        else {
            return Err(unsupported("a map without key and value schemas"));
        };
        // Confluent names every map's entry message, unnamed ones ConnectDefault<n>.
        let entry = format!("{}Entry", self.unqualified(schema));
        let plain_key = matches!(
            key.schema_type,
            SchemaType::String | SchemaType::Int32 | SchemaType::Int64 | SchemaType::Boolean
        ) && key.logical().is_none()
            && !key.parameters.contains_key(ENUM_PARAMETER);
        if value.schema_type == SchemaType::Array {
            return Err(unsupported(
                "a map whose values are arrays: a map entry's value cannot repeat",
            ));
        }
        if plain_key && value.schema_type != SchemaType::Map {
            let (v, _) = self.field_type(value, "value", depth, body, false)?;
            return Ok(format!("map<{}, {v}>", int_or_scalar(key)?));
        }
        // Keys Protobuf's maps do not take, or map values: a repeated entry message, as Confluent's.
        if body.defined.insert(entry.clone()) {
            let pad = "  ".repeat(depth);
            let mut inner = Body::default();
            let (k, kp) = self.field_type(key, "key", depth + 1, &mut inner, false)?;
            let (v, vp) = self.field_type(value, "value", depth + 1, &mut inner, false)?;
            let kl = self.label(key, &k);
            let vl = self.label(value, &v);
            let _ = writeln!(body.nested, "{pad}message {entry} {{");
            let line = self.field_line(kl, &k, "key", 1, &kp);
            let _ = writeln!(body.nested, "{pad}  {line}");
            let line = self.field_line(vl, &v, "value", 2, &vp);
            let _ = writeln!(body.nested, "{pad}  {line}");
            body.nested.push_str(&inner.nested);
            let _ = writeln!(body.nested, "{pad}}}");
        }
        Ok(entry)
    }
}

/// A field's number from its `io.confluent.connect.protobuf.Tag` parameter.
fn tag_of(schema: &Schema) -> Option<u32> {
    schema.parameters.get(TAG_PARAMETER)?.parse().ok()
}

/// An integer's Protobuf type: `int32`/`int64`, or the one its `io.confluent.connect.protobuf.Type`
/// parameter names (`sint32`, `uint64`, …).
fn int_type(schema: &Schema) -> Result<String, DataError> {
    let default = scalar(schema.schema_type);
    let Some(t) = schema.parameters.get(TYPE_PARAMETER) else {
        return Ok(default.to_string());
    };
    let allowed: &[&str] = if schema.schema_type == SchemaType::Int32 {
        &["int32", "sint32", "sfixed32"]
    } else {
        &[
            "int64", "uint32", "fixed32", "uint64", "sint64", "fixed64", "sfixed64",
        ]
    };
    if allowed.contains(&t.as_str()) {
        Ok(t.clone())
    } else {
        Err(unsupported(&format!(
            "an {} with {TYPE_PARAMETER} {t}",
            schema.schema_type.as_str()
        )))
    }
}

fn int_or_scalar(schema: &Schema) -> Result<String, DataError> {
    match schema.schema_type {
        SchemaType::Int32 | SchemaType::Int64 => int_type(schema),
        other => Ok(scalar(other).to_string()),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Protobuf scalar of a primitive Connect type.
fn scalar(t: SchemaType) -> &'static str {
    match t {
        SchemaType::Int64 => "int64",
        SchemaType::Float32 => "float",
        SchemaType::Float64 => "double",
        SchemaType::Boolean => "bool",
        SchemaType::String => "string",
        SchemaType::Bytes => "bytes",
        _ => "int32",
    }
}
