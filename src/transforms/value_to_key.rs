//! `ValueToKey`: replaces the key with a struct (or map) of fields taken from the value.

use crate::connectors::Props;

use super::{
    field_value, map_get, parse_config, put, replace_null_with_default,
    replace_null_with_default_key, require_map, require_struct, required_list_key, RecordContext,
    Transformation,
};
use crate::config::def::ConfigDef;
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{SchemaBuilder, Struct, Value};
use crate::record::ConnectRecord;

const PURPOSE: &str = "copying fields from value to key";

/// The `ValueToKey` transformation.
#[derive(Clone, Debug)]
pub struct ValueToKey {
    fields: Vec<String>,
    replace_null_with_default: bool,
}

impl ValueToKey {
    /// Kafka's `ValueToKey.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(required_list_key(
                "fields",
                "Field names on the record value to extract as the record key.",
            ))
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(props: &Props) -> Result<ValueToKey, ConfigError> {
        let config = parse_config(&ValueToKey::config_def(), props)?;
        Ok(ValueToKey {
            fields: config.get_list("fields"),
            replace_null_with_default: replace_null_with_default(&config),
        })
    }
}

impl Transformation for ValueToKey {
    fn apply(
        &self,
        mut record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        match &record.value_schema {
            None => {
                let map = require_map(&record.value, PURPOSE)?;
                let mut key = Vec::with_capacity(self.fields.len());
                for f in &self.fields {
                    super::map_put(&mut key, f, map_get(map, f).clone());
                }
                record.key_schema = None;
                record.key = Value::Map(key);
            }
            Some(_) => {
                let value = require_struct(&record.value, PURPOSE)?;
                let mut b = SchemaBuilder::struct_();
                for f in &self.fields {
                    let field = value
                        .schema
                        .field(f)
                        .ok_or_else(|| format!("Field does not exist: {f}"))?;
                    b = b.field(f.clone(), field.schema.clone());
                }
                let key_schema = b.try_build()?;
                let mut key = Struct::new(key_schema.clone());
                for f in &self.fields {
                    put(
                        &mut key,
                        f,
                        field_value(value, f, self.replace_null_with_default),
                    )?;
                }
                // Kafka also resets the value schema to the struct's own schema
                let value_schema = value.schema.clone();
                record.key_schema = Some(key_schema);
                record.key = Value::Struct(key);
                record.value_schema = Some(value_schema);
            }
        }
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::Schema;

    fn v2k(fields: &str) -> ValueToKey {
        ValueToKey::configure(&props(&[("fields", fields)])).unwrap()
    }

    #[test]
    fn with_schema() {
        let int = Schema::int32;
        let schema = struct_schema(&[("a", int()), ("b", int()), ("c", int())]);
        let value = struct_of(
            &schema,
            &[
                ("a", Value::Int32(1)),
                ("b", Value::Int32(2)),
                ("c", Value::Int32(3)),
            ],
        );
        let out = apply_ok(
            &v2k("a,b"),
            record("t", Some(schema.clone()), Value::Struct(value.clone())),
        );
        let ks = out.key_schema.unwrap();
        assert_eq!(field_names(&ks), vec!["a", "b"]);
        let Value::Struct(k) = out.key else { panic!() };
        assert_eq!(
            (k.get("a"), k.get("b")),
            (Some(&Value::Int32(1)), Some(&Value::Int32(2)))
        );
        assert_eq!(out.value, Value::Struct(value.clone()));
        assert_eq!(
            v2k("a,x")
                .apply(record("t", Some(schema), Value::Struct(value)), &source())
                .unwrap_err(),
            "Field does not exist: x"
        );
    }

    #[test]
    fn schemaless_and_errors() {
        let out = apply_ok(
            &v2k("a,missing"),
            record(
                "t",
                None,
                map(&[("a", Value::Int8(1)), ("b", Value::Int8(2))]),
            ),
        );
        assert_eq!(
            out.key,
            map(&[("a", Value::Int8(1)), ("missing", Value::Null)])
        );
        assert_eq!(out.key_schema, None);
        assert_eq!(
            v2k("a").apply(record("t", None, Value::Null), &source()).unwrap_err(),
            "Only Map objects supported in absence of schema for [copying fields from value to key], found: null"
        );
        assert_eq!(
            ValueToKey::configure(&props(&[("fields", "")])).unwrap_err(),
            "Invalid value [] for configuration fields: Empty list"
        );
    }
}
