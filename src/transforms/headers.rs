//! The header transformations: `DropHeaders`, `InsertHeader` and `HeaderFrom$Key` /
//! `HeaderFrom$Value`.

use crate::connectors::Props;
use std::collections::HashSet;

use super::{
    copy_schema_basics, field_value, map_get, map_remove, parse_config, rebind_struct,
    replace_null_with_default, replace_null_with_default_key, require_map, require_struct,
    required_list_key, required_string, RecordContext, Side, Transformation,
};
use crate::config::def::{ConfigDef, Importance, Validator};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{values, SchemaBuilder, SchemaRef, Value};
use crate::record::{ConnectRecord, Header};

/// `DropHeaders`: removes every header with one of the configured keys.
#[derive(Clone, Debug)]
pub struct DropHeaders {
    headers: HashSet<String>,
}

impl DropHeaders {
    /// Kafka's `DropHeaders.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new().define(required_list_key(
            "headers",
            "The name of the headers to be removed.",
        ))
    }

    /// Configures the transformation.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(props: &Props) -> Result<DropHeaders, ConfigError> {
        let config = parse_config(&DropHeaders::config_def(), props)?;
        Ok(DropHeaders {
            headers: config.get_list("headers").into_iter().collect(),
        })
    }
}

impl Transformation for DropHeaders {
    fn apply(
        &self,
        mut record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        record.headers.retain(|h| !self.headers.contains(&h.key));
        Ok(Some(record))
    }
}

/// `InsertHeader`: adds a header whose value is a literal in the `Values` text syntax.
#[derive(Clone, Debug)]
pub struct InsertHeader {
    header: String,
    schema: Option<SchemaRef>,
    value: Value,
}

impl InsertHeader {
    /// Kafka's `InsertHeader.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                required_string("header", Importance::High, "The name of the header.")
                    .validator(Validator::NonNull),
            )
            .define(
                required_string(
                    "value.literal",
                    Importance::High,
                    "The literal value that is to be set as the header value on all records.",
                )
                .validator(Validator::NonNull),
            )
    }

    /// Configures the transformation.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(props: &Props) -> Result<InsertHeader, ConfigError> {
        let config = parse_config(&InsertHeader::config_def(), props)?;
        let literal = values::parse_string(&config.get_string("value.literal").unwrap_or_default());
        Ok(InsertHeader {
            header: config.get_string("header").unwrap_or_default(),
            schema: literal.schema,
            value: literal.value,
        })
    }
}

impl Transformation for InsertHeader {
    fn apply(
        &self,
        mut record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        record.headers.push(Header {
            key: self.header.clone(),
            schema: self.schema.clone(),
            value: self.value.clone(),
        });
        Ok(Some(record))
    }
}

/// `HeaderFrom`'s `operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operation {
    Move,
    Copy,
}

/// `HeaderFrom`: moves or copies fields of the key or value into headers.
#[derive(Clone, Debug)]
pub struct HeaderFrom {
    side: Side,
    fields: Vec<String>,
    headers: Vec<String>,
    operation: Operation,
    replace_null_with_default: bool,
}

impl HeaderFrom {
    /// Kafka's `HeaderFrom.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                required_list_key("fields", "Field names in the record whose values are to be copied or moved to headers."),
            )
            .define(
                required_list_key("headers", "Header names, in the same order as the field names listed in the fields configuration property."),
            )
            .define(
                required_string("operation", Importance::High, "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value).")
                .validator(Validator::OneOf(vec!["move", "copy"])),
            )
            .define(replace_null_with_default_key())
    }

    /// Configures the transformation.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages, e.g.
    /// `'fields' config must have the same number of elements as 'headers' config.`.
    pub fn configure(side: Side, props: &Props) -> Result<HeaderFrom, ConfigError> {
        let config = parse_config(&HeaderFrom::config_def(), props)?;
        let fields = config.get_list("fields");
        let headers = config.get_list("headers");
        if fields.len() != headers.len() {
            return Err(
                "'fields' config must have the same number of elements as 'headers' config."
                    .to_string()
                    .into(),
            );
        }
        let operation = match config.get_string("operation").as_deref() {
            Some("move") => Operation::Move,
            _ => Operation::Copy,
        };
        Ok(HeaderFrom {
            side,
            fields,
            headers,
            operation,
            replace_null_with_default: replace_null_with_default(&config),
        })
    }

    fn purpose(&self) -> &'static str {
        match self.operation {
            Operation::Move => "header move",
            Operation::Copy => "header copy",
        }
    }
}

impl Transformation for HeaderFrom {
    fn apply(
        &self,
        mut record: ConnectRecord,
        _ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        let value = self.side.value(&record).clone();
        let mut new_headers = Vec::with_capacity(self.fields.len());
        match self.side.schema(&record).cloned() {
            None => {
                let map = require_map(&value, self.purpose())?;
                let mut updated = map.clone();
                for (field, header) in self.fields.iter().zip(&self.headers) {
                    if self.operation == Operation::Move {
                        map_remove(&mut updated, field);
                    }
                    new_headers.push(Header {
                        key: header.clone(),
                        schema: None,
                        value: map_get(map, field).clone(),
                    });
                }
                record.headers.extend(new_headers);
                Ok(Some(self.side.with(record, None, Value::Map(updated))))
            }
            Some(schema) => {
                let s = require_struct(&value, self.purpose())?;
                let (updated_schema, updated_value) = match self.operation {
                    Operation::Move => {
                        let mut b = copy_schema_basics(&schema, SchemaBuilder::struct_());
                        for f in &schema.fields {
                            if !self.fields.contains(&f.name) {
                                b = b.field(f.name.clone(), f.schema.clone());
                            }
                        }
                        let moved = b.build();
                        let out = rebind_struct(s, &moved, self.replace_null_with_default)?;
                        (moved, Value::Struct(out))
                    }
                    Operation::Copy => (schema.clone(), value.clone()),
                };
                for (field, header) in self.fields.iter().zip(&self.headers) {
                    // Kafka dereferences the missing field here and fails with a NullPointerException
                    let field_schema = schema.field(field).map(|f| f.schema.clone()).ok_or_else(|| {
                        format!("Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of \"org.apache.kafka.connect.data.Schema.field(String)\" is null (no field {field})")
                    })?;
                    new_headers.push(Header {
                        key: header.clone(),
                        schema: Some(field_schema),
                        value: field_value(s, field, self.replace_null_with_default),
                    });
                }
                record.headers.extend(new_headers);
                Ok(Some(self.side.with(
                    record,
                    Some(updated_schema),
                    updated_value,
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::Schema;

    fn header(key: &str, value: Value) -> Header {
        Header {
            key: key.into(),
            schema: None,
            value,
        }
    }

    #[test]
    fn drop_headers_removes_every_named_header() {
        let t = DropHeaders::configure(&props(&[("headers", "a, c")])).unwrap();
        let mut r = record("t", None, Value::Null);
        r.headers = vec![
            header("a", Value::Int8(1)),
            header("b", Value::Int8(2)),
            header("a", Value::Int8(3)),
            header("c", Value::Null),
        ];
        let out = apply_ok(&t, r);
        assert_eq!(out.headers, vec![header("b", Value::Int8(2))]);
        assert_eq!(
            DropHeaders::configure(&props(&[("headers", "")])).unwrap_err(),
            "Invalid value [] for configuration headers: Empty list"
        );
        assert_eq!(
            DropHeaders::configure(&Props::new()).unwrap_err(),
            "Missing required configuration \"headers\" which has no default value."
        );
    }

    #[test]
    fn insert_header_parses_the_literal() {
        let t =
            InsertHeader::configure(&props(&[("header", "h"), ("value.literal", "hello world")]))
                .unwrap();
        let out = apply_ok(&t, record("t", None, Value::Null));
        assert_eq!(out.headers.len(), 1);
        assert_eq!(out.headers[0].key, "h");
        assert_eq!(out.headers[0].value, Value::from("hello world"));
        assert_eq!(out.headers[0].schema, Some(Schema::string()));
        let n =
            InsertHeader::configure(&props(&[("header", "n"), ("value.literal", "42")])).unwrap();
        let out = apply_ok(&n, record("t", None, Value::Null));
        assert_eq!(out.headers[0].value, Value::Int8(42));
        assert_eq!(
            InsertHeader::configure(&props(&[("header", "h")])).unwrap_err(),
            "Missing required configuration \"value.literal\" which has no default value."
        );
    }

    #[test]
    fn header_from_move_and_copy_with_schema() {
        let schema = SchemaBuilder::struct_()
            .name("v")
            .field("id", Schema::int32())
            .field("name", Schema::string())
            .build();
        let value = struct_of(
            &schema,
            &[("id", Value::Int32(7)), ("name", Value::from("n"))],
        );
        let mv = HeaderFrom::configure(
            Side::Value,
            &props(&[("fields", "id"), ("headers", "ID"), ("operation", "move")]),
        )
        .unwrap();
        let out = apply_ok(
            &mv,
            record("t", Some(schema.clone()), Value::Struct(value.clone())),
        );
        let s = out.value_schema.unwrap();
        assert_eq!(s.fields.len(), 1);
        assert_eq!(s.name.as_deref(), Some("v"));
        assert_eq!(out.headers.len(), 1);
        assert_eq!(out.headers[0].key, "ID");
        assert_eq!(out.headers[0].value, Value::Int32(7));
        assert_eq!(out.headers[0].schema, Some(Schema::int32()));

        let cp = HeaderFrom::configure(
            Side::Key,
            &props(&[
                ("fields", "id,name"),
                ("headers", "a,b"),
                ("operation", "copy"),
            ]),
        )
        .unwrap();
        let out = apply_ok(
            &cp,
            key_record(Some(schema.clone()), Value::Struct(value.clone())),
        );
        assert_eq!(out.key, Value::Struct(value));
        assert_eq!(out.key_schema, Some(schema));
        assert_eq!(
            out.headers
                .iter()
                .map(|h| h.key.as_str())
                .collect::<Vec<_>>(),
            vec!["a", "b"]
        );
    }

    #[test]
    fn header_from_schemaless() {
        let mv = HeaderFrom::configure(
            Side::Value,
            &props(&[
                ("fields", "a,missing"),
                ("headers", "x,y"),
                ("operation", "move"),
            ]),
        )
        .unwrap();
        let out = apply_map(&mv, &[("a", Value::Int8(1)), ("b", Value::Int8(2))]);
        assert_eq!(out.value, map(&[("b", Value::Int8(2))]));
        assert_eq!(
            out.headers,
            vec![header("x", Value::Int8(1)), header("y", Value::Null)]
        );
        assert_eq!(
            mv.apply(record("t", None, Value::Null), &source())
                .unwrap_err(),
            "Only Map objects supported in absence of schema for [header move], found: null"
        );
    }

    #[test]
    fn header_from_config_errors() {
        assert_eq!(
            HeaderFrom::configure(
                Side::Value,
                &props(&[("fields", "a,b"), ("headers", "x"), ("operation", "move")])
            )
            .unwrap_err(),
            "'fields' config must have the same number of elements as 'headers' config."
        );
        assert_eq!(
            HeaderFrom::configure(
                Side::Value,
                &props(&[("fields", "a"), ("headers", "x"), ("operation", "swap")])
            )
            .unwrap_err(),
            "Invalid value swap for configuration operation: String must be one of: move, copy"
        );
    }
}
