//! Schemas to and from their JSON form: Kafka's `asJsonSchema` and `asConnectSchema`.

use super::text::{is_integral_lexeme, lexeme_to_i64_wrapping, object_set, Json};
use super::JsonConverter;
use crate::data::{DataError, Schema, SchemaBuilder, SchemaRef, SchemaType};
use std::sync::Arc;

impl JsonConverter {
    pub(super) fn as_json_schema(&self, schema: &Schema) -> Result<Json, DataError> {
        let mut obj: Vec<(String, Json)> =
            vec![("type".into(), Json::Str(schema.schema_type.as_str().into()))];
        match schema.schema_type {
            SchemaType::Array => {
                let items = match &schema.value_schema {
                    Some(s) => self.as_json_schema(s)?,
                    None => Json::Null,
                };
                obj.push(("items".into(), items));
            }
            SchemaType::Map => {
                let keys = match &schema.key_schema {
                    Some(s) => self.as_json_schema(s)?,
                    None => Json::Null,
                };
                let values = match &schema.value_schema {
                    Some(s) => self.as_json_schema(s)?,
                    None => Json::Null,
                };
                obj.push(("keys".into(), keys));
                obj.push(("values".into(), values));
            }
            SchemaType::Struct => {
                let mut fields = Vec::with_capacity(schema.fields.len());
                for f in &schema.fields {
                    let mut field = self.as_json_schema(&f.schema)?;
                    if let Json::Object(entries) = &mut field {
                        object_set(entries, "field", Json::Str(f.name.clone()));
                    }
                    fields.push(field);
                }
                obj.push(("fields".into(), Json::Array(fields)));
            }
            _ => {}
        }
        obj.push(("optional".into(), Json::Bool(schema.optional)));
        if let Some(n) = &schema.name {
            obj.push(("name".into(), Json::Str(n.clone())));
        }
        if let Some(v) = schema.version {
            obj.push(("version".into(), Json::Int(v as i64)));
        }
        if let Some(d) = &schema.doc {
            obj.push(("doc".into(), Json::Str(d.clone())));
        }
        if !schema.parameters.is_empty() {
            let params = schema
                .parameters
                .iter()
                .map(|(k, v)| (k.clone(), Json::Str(v.clone())))
                .collect();
            obj.push(("parameters".into(), Json::Object(params)));
        }
        if let Some(d) = &schema.default_value {
            obj.push(("default".into(), self.to_json(Some(schema), d)?));
        }
        Ok(Json::Object(obj))
    }

    pub(super) fn as_connect_schema(&self, node: &Json) -> Result<Option<SchemaRef>, DataError> {
        if matches!(node, Json::Null) {
            return Ok(None);
        }
        let type_name = match node.get("type") {
            Some(Json::Str(t)) => t.as_str(),
            _ => return Err(DataError::new("Schema must contain 'type' field")),
        };
        let schema_type = SchemaType::from_json_name(type_name)
            .ok_or_else(|| DataError::new(format!("Unknown schema type: {type_name}")))?;
        let mut builder = match schema_type {
            SchemaType::Array => {
                let items = match node.get("items") {
                    None | Some(Json::Null) => None,
                    Some(items) => self.as_connect_schema(items)?,
                }
                .ok_or_else(|| DataError::new("Array schema did not specify the element type"))?;
                SchemaBuilder::array(items)
            }
            SchemaType::Map => {
                let keys = match node.get("keys") {
                    None | Some(Json::Null) => None,
                    Some(k) => self.as_connect_schema(k)?,
                }
                .ok_or_else(|| DataError::new("Map schema did not specify the key type"))?;
                let values = match node.get("values") {
                    None | Some(Json::Null) => None,
                    Some(v) => self.as_connect_schema(v)?,
                }
                .ok_or_else(|| DataError::new("Map schema did not specify the value type"))?;
                SchemaBuilder::map(keys, values)
            }
            SchemaType::Struct => {
                let Some(Json::Array(fields)) = node.get("fields") else {
                    return Err(DataError::new(
                        "Struct schema's \"fields\" argument is not an array.",
                    ));
                };
                let mut b = SchemaBuilder::struct_();
                for field in fields {
                    let Some(Json::Str(name)) = field.get("field") else {
                        return Err(DataError::new(
                            "Struct schema's field name not specified properly",
                        ));
                    };
                    let field_schema = self.as_connect_schema(field)?.ok_or_else(|| {
                        DataError::new("Struct schema's field name not specified properly")
                    })?;
                    b = b.field(name.clone(), field_schema);
                }
                b
            }
            primitive => SchemaBuilder::new(primitive),
        };
        if matches!(node.get("optional"), Some(Json::Bool(true))) {
            builder = builder.optional();
        }
        if let Some(Json::Str(name)) = node.get("name") {
            builder = builder.name(name.clone());
        }
        if let Some(Json::Number(n)) = node.get("version") {
            if is_integral_lexeme(n) {
                builder = builder.version(lexeme_to_i64_wrapping(n) as i32);
            }
        }
        if let Some(Json::Str(doc)) = node.get("doc") {
            builder = builder.doc(doc.clone());
        }
        if let Some(Json::Object(params)) = node.get("parameters") {
            for (k, v) in params {
                let Json::Str(v) = v else {
                    return Err(DataError::new("Schema parameters must have string values."));
                };
                builder = builder.parameter(k.clone(), v.clone());
            }
        }
        if let Some(default) = node.get("default") {
            let so_far = Arc::new(builder.schema().clone());
            let value = self.to_connect_value(Some(&so_far), default)?;
            builder = builder.default_value(value);
        }
        builder.try_build().map(Some)
    }
}
