//! `InsertField$Key` / `InsertField$Value`: adds fields from the record's metadata (topic,
//! partition, offset, timestamp) or a static value.

use super::support::WithSchema;
use crate::connectors::Props;

use super::{
    copy_schema_basics, copy_struct, key, map_put, parse_config, put, replace_null_with_default,
    replace_null_with_default_key, require_map, require_sink_offset, require_struct, Input,
    RecordContext, Side, SideTransformation,
};
use crate::config::def::{ConfigDef, ConfigType, DefaultValue, Importance};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{logical, Schema, SchemaBuilder, SchemaRef, Value};
use crate::record::ConnectRecord;

const PURPOSE: &str = "field insertion";

const OPTIONALITY_DOC: &str =
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default).";

/// A field name with its optionality (`name!` required, `name?` or `name` optional).
#[derive(Clone, Debug, PartialEq, Eq)]
struct InsertionSpec {
    name: String,
    optional: bool,
}

impl InsertionSpec {
    fn parse(spec: Option<String>) -> Option<InsertionSpec> {
        let spec = spec?;
        if let Some(name) = spec.strip_suffix('?') {
            return Some(InsertionSpec {
                name: name.to_string(),
                optional: true,
            });
        }
        if let Some(name) = spec.strip_suffix('!') {
            return Some(InsertionSpec {
                name: name.to_string(),
                optional: false,
            });
        }
        Some(InsertionSpec {
            name: spec,
            optional: true,
        })
    }
}

/// The `InsertField` transformation.
#[derive(Clone, Debug)]
pub struct InsertField {
    side: Side,
    topic: Option<InsertionSpec>,
    partition: Option<InsertionSpec>,
    offset: Option<InsertionSpec>,
    timestamp: Option<InsertionSpec>,
    static_field: Option<InsertionSpec>,
    static_value: Option<String>,
    replace_null_with_default: bool,
}

impl InsertField {
    /// Kafka's `InsertField.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        let field = |name: &str, doc: String| {
            key(
                name,
                ConfigType::String,
                DefaultValue::Null,
                Importance::Medium,
                &doc,
            )
        };
        ConfigDef::new()
            .define(field("topic.field", format!("Field name for Kafka topic. {OPTIONALITY_DOC}")))
            .define(field("partition.field", format!("Field name for Kafka partition. {OPTIONALITY_DOC}")))
            .define(field(
                "offset.field",
                format!("Field name for Kafka offset - only applicable to sink connectors.<br/>{OPTIONALITY_DOC}"),
            ))
            .define(field("timestamp.field", format!("Field name for record timestamp. {OPTIONALITY_DOC}")))
            .define(field("static.field", format!("Field name for static data field. {OPTIONALITY_DOC}")))
            .define(field("static.value", "Static field value, if field name configured.".to_string()))
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's messages: `No field insertion configured`, and for a static field without a value
    /// `Invalid value null for configuration static.value: No value specified for static field: <name>`.
    pub fn configure(side: Side, props: &Props) -> Result<InsertField, ConfigError> {
        let config = parse_config(&InsertField::config_def(), props)?;
        let t = InsertField {
            side,
            topic: InsertionSpec::parse(config.get_string("topic.field")),
            partition: InsertionSpec::parse(config.get_string("partition.field")),
            offset: InsertionSpec::parse(config.get_string("offset.field")),
            timestamp: InsertionSpec::parse(config.get_string("timestamp.field")),
            static_field: InsertionSpec::parse(config.get_string("static.field")),
            static_value: config.get_string("static.value"),
            replace_null_with_default: replace_null_with_default(&config),
        };
        if t.topic.is_none()
            && t.partition.is_none()
            && t.offset.is_none()
            && t.timestamp.is_none()
            && t.static_field.is_none()
        {
            return Err("No field insertion configured".to_string().into());
        }
        if let (Some(f), None) = (&t.static_field, &t.static_value) {
            // Kafka prints the spec object's identity here; the field name says more
            return Err(crate::config::invalid_value(
                "static.value",
                "null",
                format_args!("No value specified for static field: {}", f.name),
            )
            .into());
        }
        Ok(t)
    }

    fn updated_schema(&self, schema: &Schema) -> Result<SchemaRef, DataError> {
        let mut b = copy_schema_basics(schema, SchemaBuilder::struct_());
        for f in &schema.fields {
            b = b.field(f.name.clone(), f.schema.clone());
        }
        // the optional and the required schema of each metadata field, in Kafka's order
        let inserted = [
            (&self.topic, Schema::optional_string(), Schema::string()),
            (&self.partition, Schema::optional_int32(), Schema::int32()),
            (&self.offset, Schema::optional_int64(), Schema::int64()),
            (
                &self.timestamp,
                logical::timestamp().optional().build(),
                logical::timestamp().build(),
            ),
            (
                &self.static_field,
                Schema::optional_string(),
                Schema::string(),
            ),
        ];
        for (spec, optional, required) in inserted {
            if let Some(s) = spec {
                let field_schema = if s.optional { optional } else { required };
                b = b.field(s.name.clone(), field_schema);
            }
        }
        // a name that clashes fails as Kafka's builder does
        b.try_build()
    }

    /// The inserted values, in Kafka's order; `None` entries are skipped.
    fn insertions(
        &self,
        record: &ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Vec<(String, Value)>, DataError> {
        let mut out = Vec::new();
        if let Some(s) = &self.topic {
            out.push((s.name.clone(), Value::String(record.topic.clone())));
        }
        if let (Some(s), Some(p)) = (&self.partition, record.kafka_partition) {
            out.push((s.name.clone(), Value::Int32(p)));
        }
        if let Some(s) = &self.offset {
            out.push((
                s.name.clone(),
                Value::Int64(require_sink_offset(ctx, PURPOSE)?),
            ));
        }
        if let (Some(s), Some(ts)) = (&self.timestamp, record.timestamp) {
            out.push((s.name.clone(), Value::Int64(ts)));
        }
        if let (Some(s), Some(v)) = (&self.static_field, &self.static_value) {
            out.push((s.name.clone(), Value::String(v.clone())));
        }
        Ok(out)
    }
}

impl SideTransformation for InsertField {
    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        let mut updated = require_map(op.value, PURPOSE)?.clone();
        for (name, v) in self.insertions(op.record, op.ctx)? {
            map_put(&mut updated, &name, v);
        }
        Ok(Value::Map(updated))
    }

    fn with_schema(&self, _: &SchemaRef, op: Input<'_>) -> WithSchema {
        let s = require_struct(op.value, PURPOSE)?;
        let schema = self.updated_schema(&s.schema)?;
        let mut updated =
            copy_struct(s, schema.clone(), self.replace_null_with_default, |_, v| {
                Ok(v)
            })?;
        for (name, v) in self.insertions(op.record, op.ctx)? {
            put(&mut updated, &name, v)?;
        }
        Ok((schema, Value::Struct(updated)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::SchemaType;
    use crate::data::Struct;

    fn insert(side: Side, pairs: &[(&str, &str)]) -> InsertField {
        InsertField::configure(side, &props(pairs)).unwrap()
    }

    fn sink_record(value_schema: Option<SchemaRef>, value: Value) -> ConnectRecord {
        let mut r = record("orders", value_schema, value);
        r.kafka_partition = Some(3);
        r.timestamp = Some(1_483_369_445_007);
        r
    }

    #[test]
    fn schemaless_topic_offset_static_on_a_sink_record() {
        let t = insert(
            Side::Value,
            &[
                ("topic.field", "topic"),
                ("partition.field", "part"),
                ("offset.field", "offset!"),
                ("timestamp.field", "ts"),
                ("static.field", "instance_id"),
                ("static.value", "my-instance-id"),
            ],
        );
        let out = t
            .apply(
                sink_record(None, map(&[("a", Value::Int8(1))])),
                &RecordContext::sink(42),
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            out.value,
            map(&[
                ("a", Value::Int8(1)),
                ("topic", Value::from("orders")),
                ("part", Value::Int32(3)),
                ("offset", Value::Int64(42)),
                ("ts", Value::Int64(1_483_369_445_007)),
                ("instance_id", Value::from("my-instance-id")),
            ])
        );
    }

    #[test]
    fn with_schema_and_optionality() {
        let schema = SchemaBuilder::struct_()
            .name("v")
            .field("a", Schema::int32())
            .build();
        let value = struct_of(&schema, &[("a", Value::Int32(1))]);
        let t = insert(
            Side::Key,
            &[
                ("topic.field", "topic!"),
                ("offset.field", "offset"),
                ("timestamp.field", "ts?"),
            ],
        );
        let mut r = key_record(Some(schema), Value::Struct(value));
        r.timestamp = Some(5);
        let out = t.apply(r, &RecordContext::sink(7)).unwrap().unwrap();
        let s = out.key_schema.unwrap();
        assert_eq!(s.name.as_deref(), Some("v"));
        assert!(!s.field("topic").unwrap().schema.optional);
        assert!(s.field("offset").unwrap().schema.optional);
        let ts = &s.field("ts").unwrap().schema;
        assert_eq!(ts.name.as_deref(), Some(logical::TIMESTAMP_NAME));
        assert_eq!(ts.schema_type, SchemaType::Int64);
        let Value::Struct(k) = out.key else { panic!() };
        assert_eq!(k.get("a"), Some(&Value::Int32(1)));
        assert_eq!(k.get("topic"), Some(&Value::from("test")));
        assert_eq!(k.get("offset"), Some(&Value::Int64(7)));
        assert_eq!(k.get("ts"), Some(&Value::Int64(5)));
    }

    #[test]
    fn errors_like_kafka() {
        assert_eq!(
            InsertField::configure(Side::Value, &Props::new()).unwrap_err(),
            "No field insertion configured"
        );
        assert_eq!(
            InsertField::configure(Side::Value, &props(&[("static.field", "s")])).unwrap_err(),
            "Invalid value null for configuration static.value: No value specified for static field: s"
        );
        let t = insert(Side::Value, &[("offset.field", "o")]);
        assert_eq!(
            t.apply(record("t", None, map(&[])), &source()).unwrap_err(),
            "Only SinkRecord supported for [field insertion], found: org.apache.kafka.connect.source.SourceRecord"
        );
        assert_eq!(
            t.apply(record("t", None, Value::from("x")), &source()).unwrap_err(),
            "Only Map objects supported in absence of schema for [field insertion], found: java.lang.String"
        );
        assert_eq!(
            t.apply(
                record("t", Some(Schema::string()), Value::from("x")),
                &source()
            )
            .unwrap_err(),
            "Only Struct objects supported for [field insertion], found: java.lang.String"
        );
        let tomb = record("t", None, Value::Null);
        assert_eq!(apply_ok(&t, tomb.clone()), tomb);
    }

    #[test]
    fn source_record_without_partition_or_timestamp() {
        let t = insert(
            Side::Value,
            &[
                ("partition.field", "p"),
                ("timestamp.field", "ts"),
                ("topic.field", "t"),
            ],
        );
        let out = apply_ok(&t, record("x", None, map(&[])));
        assert_eq!(out.value, map(&[("t", Value::from("x"))]));
    }

    #[test]
    fn a_clashing_field_name_fails_like_kafkas_builder() {
        let schema = SchemaBuilder::struct_()
            .field("topic", Schema::int32())
            .build();
        let value = Struct::new(schema.clone()).with("topic", 1).unwrap();
        let t = insert(Side::Value, &[("topic.field", "topic")]);
        assert_eq!(
            t.apply(record("t", Some(schema), Value::Struct(value)), &source())
                .unwrap_err(),
            "Cannot create field because of field name duplication topic"
        );
    }
}
