//! Connect schemas as `.proto` text, the way Confluent's `ProtobufData` writes them: a struct is a
//! proto3 message named by the schema's name (its dotted prefix as the package) or `ConnectDefault1`,
//! `ConnectDefault2`, …; its fields numbered in order; nested structs as nested messages; `INT8` and
//! `INT16` as `int32` with the `connect.type` parameter in `confluent.field_meta`; arrays as `repeated`;
//! maps as `map<K, V>`; `Decimal` as `confluent.type.Decimal`, `Date` as `google.type.Date`, `Time` as
//! `google.type.TimeOfDay` and `Timestamp` as `google.protobuf.Timestamp`.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::data::logical::{LogicalKind, DECIMAL_SCALE_PARAMETER};
use crate::data::{DataError, Schema, SchemaType};

/// The parameter naming a field's Connect type when Protobuf has no type of its own for it.
pub const CONNECT_TYPE: &str = "connect.type";
/// The Decimal precision parameter Confluent writes.
pub const PRECISION: &str = "connect.decimal.precision";

/// Connect → `.proto` text, numbering unnamed structs.
#[derive(Default)]
pub struct ToProto {
    unnamed: usize,
    imports: BTreeSet<&'static str>,
    /// `optional.for.nullables`: optional Connect fields as proto3 `optional` fields.
    pub optional_for_nullables: bool,
}

fn unsupported(what: &str) -> DataError {
    DataError::new(format!("ProtobufConverter cannot write {what}"))
}

impl ToProto {
    /// A writer; `optional_for_nullables` as the converter's key says.
    pub fn new(optional_for_nullables: bool) -> Self {
        ToProto {
            optional_for_nullables,
            ..ToProto::default()
        }
    }

    /// The `.proto` text of a struct schema and its message's full name.
    ///
    /// # Errors
    /// A schema that is not a struct, or holds what Protobuf cannot hold (an array of arrays, a map
    /// with a key that is not a string, integer or boolean).
    pub fn file(mut self, schema: &Schema) -> Result<(String, String), DataError> {
        if schema.schema_type != SchemaType::Struct {
            return Err(unsupported(&format!(
                "a {} schema: only a STRUCT is a Protobuf message",
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

    /// A struct's package (its name's dotted prefix) and message name.
    fn split_name(&mut self, schema: &Schema) -> (Option<String>, String) {
        match schema
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            Some(n) => match n.rsplit_once('.') {
                Some((p, last)) => (Some(p.to_string()), last.to_string()),
                None => (None, n.to_string()),
            },
            None => {
                self.unnamed += 1;
                (None, format!("ConnectDefault{}", self.unnamed))
            }
        }
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
        let mut nested = String::new();
        for (i, field) in schema.fields.iter().enumerate() {
            let (ty, params) = self.field_type(&field.schema, depth + 1, &mut nested)?;
            let label = if field.schema.schema_type == SchemaType::Array {
                "repeated "
            } else if self.optional_for_nullables
                && field.schema.optional
                && field.schema.schema_type.is_primitive()
                && field.schema.logical().is_none()
            {
                "optional "
            } else {
                ""
            };
            let _ = write!(out, "{pad}  {label}{ty} {} = {}", field.name, i + 1);
            if !params.is_empty() {
                self.imports.insert("confluent/meta.proto");
                let list: Vec<String> = params
                    .iter()
                    .map(|(k, v)| format!("{{ key: \"{k}\", value: \"{v}\" }}"))
                    .collect();
                let _ = write!(
                    out,
                    " [(confluent.field_meta) = {{ params: [{}] }}]",
                    list.join(", ")
                );
            }
            out.push_str(";\n");
        }
        out.push_str(&nested);
        let _ = writeln!(out, "{pad}}}");
        Ok(())
    }

    /// A field's Protobuf type (nested messages written into `nested`) and its `field_meta` params.
    fn field_type(
        &mut self,
        schema: &Schema,
        depth: usize,
        nested: &mut String,
    ) -> Result<(String, Vec<(String, String)>), DataError> {
        let mut params = Vec::new();
        if let Some(logical) = schema.logical() {
            let ty = match logical {
                LogicalKind::Decimal(scale) => {
                    params.push((DECIMAL_SCALE_PARAMETER.to_string(), scale.to_string()));
                    if let Some(p) = schema.parameters.get(PRECISION) {
                        params.push((PRECISION.to_string(), p.clone()));
                    }
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
            return Ok((ty.to_string(), params));
        }
        let ty = match schema.schema_type {
            SchemaType::Int8 | SchemaType::Int16 => {
                let t = schema.schema_type.as_str().to_ascii_lowercase();
                params.push((CONNECT_TYPE.to_string(), t));
                "int32".to_string()
            }
            SchemaType::Array => {
                let items = schema
                    .value_schema
                    .as_deref()
                    .ok_or_else(|| unsupported("an array without an item schema"))?;
                if matches!(items.schema_type, SchemaType::Array | SchemaType::Map) {
                    return Err(unsupported("an array of arrays or maps"));
                }
                return self.field_type(items, depth, nested);
            }
            SchemaType::Map => self.map_type(schema, depth, nested)?,
            SchemaType::Struct => {
                let (_, name) = self.split_name(schema);
                self.message(schema, &name, depth, nested)?;
                name
            }
            other => scalar(other).to_string(),
        };
        Ok((ty, params))
    }

    fn map_type(
        &mut self,
        schema: &Schema,
        depth: usize,
        nested: &mut String,
    ) -> Result<String, DataError> {
        let (Some(key), Some(value)) =
            (schema.key_schema.as_deref(), schema.value_schema.as_deref())
        else {
            return Err(unsupported("a map without key and value schemas"));
        };
        let key_ok = matches!(
            key.schema_type,
            SchemaType::String | SchemaType::Int32 | SchemaType::Int64 | SchemaType::Boolean
        ) && key.logical().is_none();
        if !key_ok || matches!(value.schema_type, SchemaType::Array | SchemaType::Map) {
            return Err(unsupported(
                "a map whose key is not a STRING, INT32, INT64 or BOOLEAN, or whose value is an array or a map",
            ));
        }
        let (v, _) = self.field_type(value, depth, nested)?;
        Ok(format!("map<{}, {v}>", scalar(key.schema_type)))
    }
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
