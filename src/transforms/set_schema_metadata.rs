//! `SetSchemaMetadata$Key` / `SetSchemaMetadata$Value`: sets the name and/or version of the key
//! or value schema.

use crate::connectors::Props;
use std::sync::Arc;

use super::{
    key, parse_config, rebind_struct, replace_null_with_default, replace_null_with_default_key,
    require_schema, RecordContext, Side, Transformation,
};
use crate::config::def::{ConfigDef, ConfigType, DefaultValue, Importance};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{Schema, SchemaType, Value};
use crate::record::ConnectRecord;

/// The `SetSchemaMetadata` transformation.
#[derive(Clone, Debug)]
pub struct SetSchemaMetadata {
    side: Side,
    name: Option<String>,
    version: Option<i32>,
    replace_null_with_default: bool,
}

impl SetSchemaMetadata {
    /// Kafka's `SetSchemaMetadata.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(key(
                "schema.name",
                ConfigType::String,
                DefaultValue::Null,
                Importance::High,
                "Schema name to set.",
            ))
            .define(key(
                "schema.version",
                ConfigType::Int,
                DefaultValue::Null,
                Importance::High,
                "Schema version to set.",
            ))
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's messages, e.g. `Neither schema name nor version configured`.
    pub fn configure(side: Side, props: &Props) -> Result<SetSchemaMetadata, ConfigError> {
        let config = parse_config(&SetSchemaMetadata::config_def(), props)?;
        let t = SetSchemaMetadata {
            side,
            name: config.get_string("schema.name"),
            version: config.get_int("schema.version"),
            replace_null_with_default: replace_null_with_default(&config),
        };
        if t.name.is_none() && t.version.is_none() {
            return Err("Neither schema name nor version configured"
                .to_string()
                .into());
        }
        Ok(t)
    }
}

impl Transformation for SetSchemaMetadata {
    fn apply(
        &self,
        record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        let value = self.side.value(&record);
        let schema = self.side.schema(&record);
        if value.is_null() && schema.is_none() {
            return Ok(Some(record));
        }
        let schema = require_schema(schema, "updating schema metadata")?;
        let is_array = schema.schema_type == SchemaType::Array;
        let is_map = schema.schema_type == SchemaType::Map;
        let updated = Arc::new(Schema {
            name: self.name.clone().or_else(|| schema.name.clone()),
            version: self.version.or(schema.version),
            key_schema: if is_map {
                schema.key_schema.clone()
            } else {
                None
            },
            value_schema: if is_map || is_array {
                schema.value_schema.clone()
            } else {
                None
            },
            ..(**schema).clone()
        });
        // a struct must point at the renamed schema
        let updated_value = match value {
            Value::Struct(s) => {
                Value::Struct(rebind_struct(s, &updated, self.replace_null_with_default)?)
            }
            other => other.clone(),
        };
        Ok(Some(self.side.with(record, Some(updated), updated_value)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::SchemaBuilder;

    fn set(side: Side, pairs: &[(&str, &str)]) -> SetSchemaMetadata {
        SetSchemaMetadata::configure(side, &props(pairs)).unwrap()
    }

    #[test]
    fn renames_struct_schemas_and_rebinds_the_value() {
        let schema = SchemaBuilder::struct_()
            .name("old")
            .version(1)
            .doc("d")
            .field("a", Schema::int32())
            .build();
        let value = struct_of(&schema, &[("a", Value::Int32(1))]);
        let t = set(
            Side::Value,
            &[("schema.name", "foo"), ("schema.version", "42")],
        );
        let out = apply_ok(&t, record("t", Some(schema), Value::Struct(value)));
        let s = out.value_schema.unwrap();
        assert_eq!(s.name.as_deref(), Some("foo"));
        assert_eq!(s.version, Some(42));
        assert_eq!(s.doc.as_deref(), Some("d"));
        let Value::Struct(v) = out.value else {
            panic!()
        };
        assert!(Arc::ptr_eq(&v.schema, &s));
        assert_eq!(v.get("a"), Some(&Value::Int32(1)));
    }

    #[test]
    fn key_side_primitive_and_version_only() {
        let t = set(Side::Key, &[("schema.version", "3")]);
        let out = apply_ok(
            &t,
            key_record(
                Some(SchemaBuilder::int64().name("n").build()),
                Value::Int64(4),
            ),
        );
        let s = out.key_schema.unwrap();
        assert_eq!((s.name.as_deref(), s.version), (Some("n"), Some(3)));
        assert_eq!(out.key, Value::Int64(4));
        // a null schema and value pass through
        let tomb = key_record(None, Value::Null);
        assert_eq!(apply_ok(&t, tomb.clone()), tomb);
    }

    #[test]
    fn errors_like_kafka() {
        assert_eq!(
            SetSchemaMetadata::configure(Side::Value, &Props::new()).unwrap_err(),
            "Neither schema name nor version configured"
        );
        assert_eq!(
            SetSchemaMetadata::configure(Side::Value, &props(&[("schema.version", "x")]))
                .unwrap_err(),
            "Invalid value x for configuration schema.version: Not a number of type INT"
        );
        let t = set(Side::Value, &[("schema.name", "x")]);
        assert_eq!(
            t.apply(record("t", None, Value::from("v")), &source())
                .unwrap_err(),
            "Schema required for [updating schema metadata]"
        );
    }
}
