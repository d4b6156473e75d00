//! Text and JSON into Connect values by schema, as the original's connect-utils `Parser` does: numbers,
//! booleans, strings, `Decimal`, and `Timestamp`/`Date`/`Time` read with `parser.timestamp.date.formats`.

use serde_json::Value as Json;

use crate::data::logical::{decimal_from_str, kind_of, LogicalKind};
use crate::data::DataError;
use crate::data::{Schema, SchemaType, Struct, Value};
use crate::transforms::datefmt::DateFormat;

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Parses values for one task.
#[derive(Clone, Debug)]
pub struct Parser {
    formats: Vec<DateFormat>,
}

impl Parser {
    /// A parser trying the date formats in order.
    pub fn new(formats: Vec<DateFormat>) -> Parser {
        Parser { formats }
    }

    /// Parses a text field (`None` is a null field).
    pub fn parse_str(&self, schema: &Schema, input: Option<&str>) -> Result<Value, DataError> {
        let Some(input) = input else {
            return null_for(schema);
        };
        self.text(schema, input).map_err(|why| {
            DataError(format!(
                "Could not parse '{input}' to '{}': {why}",
                expected(schema)
            ))
        })
    }

    fn text(&self, schema: &Schema, s: &str) -> Result<Value, DataError> {
        let e = |err: &dyn std::fmt::Display| err.to_string();
        if let Some(kind) = kind_of(schema) {
            return self.logical(kind, s);
        }
        Ok(match schema.schema_type {
            SchemaType::String => Value::String(s.to_string()),
            SchemaType::Int8 => Value::Int8(s.parse().map_err(|x| e(&x))?),
            SchemaType::Int16 => Value::Int16(s.parse().map_err(|x| e(&x))?),
            SchemaType::Int32 => Value::Int32(s.parse().map_err(|x| e(&x))?),
            SchemaType::Int64 => Value::Int64(s.parse().map_err(|x| e(&x))?),
            SchemaType::Float32 => Value::Float32(s.trim().parse().map_err(|x| e(&x))?),
            SchemaType::Float64 => Value::Float64(s.trim().parse().map_err(|x| e(&x))?),
            SchemaType::Boolean => match s.trim().to_ascii_lowercase().as_str() {
                "true" => Value::Boolean(true),
                "false" => Value::Boolean(false),
                _ => return Err("not true or false".into()),
            },
            other => {
                return Err(format!("Schema {other}({:?}) is not supported", schema.name).into())
            }
        })
    }

    fn logical(&self, kind: LogicalKind, s: &str) -> Result<Value, DataError> {
        match kind {
            LogicalKind::Decimal(scale) => decimal_from_str(s.trim(), scale)
                .map(Value::Bytes)
                .map_err(|e| DataError(e.to_string())),
            LogicalKind::Timestamp => self.millis(s).map(Value::Int64),
            LogicalKind::Date => self
                .millis(s)
                .map(|ms| Value::Int32(ms.div_euclid(MILLIS_PER_DAY) as i32)),
            LogicalKind::Time => self
                .millis(s)
                .map(|ms| Value::Int32(ms.rem_euclid(MILLIS_PER_DAY) as i32)),
        }
    }

    fn millis(&self, s: &str) -> Result<i64, DataError> {
        self.formats.iter().find_map(|f| f.parse(s)).ok_or_else(|| {
            let patterns: Vec<&str> = self.formats.iter().map(DateFormat::pattern).collect();
            DataError(format!(
                "Could not parse '{s}' with any of the formats [{}]",
                patterns.join(", ")
            ))
        })
    }

    /// Parses a JSON node (`None` is a missing field).
    pub fn parse_json(&self, schema: &Schema, input: Option<&Json>) -> Result<Value, DataError> {
        let input = match input {
            None | Some(Json::Null) => return null_for(schema),
            Some(j) => j,
        };
        match schema.schema_type {
            SchemaType::Struct => {
                let obj = input.as_object().ok_or(
                    "struct schemas require a ObjectNode to be supplied for input.".to_string(),
                )?;
                self.structure(schema, |name| obj.get(name))
            }
            SchemaType::Array => {
                let items = input.as_array().ok_or(
                    "array schemas require a ArrayNode to be supplied for input.".to_string(),
                )?;
                let item_schema = schema.value_schema.as_ref().ok_or("no valueSchema")?;
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        self.parse_json(item_schema, Some(item)).map_err(|e| {
                            DataError(format!("Exception thrown while processing index {i}: {e}"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array)
            }
            SchemaType::Map => {
                let obj = input.as_object().ok_or(
                    "map schemas require a ObjectNode to be supplied for input.".to_string(),
                )?;
                let (ks, vs) = match (&schema.key_schema, &schema.value_schema) {
                    (Some(k), Some(v)) => (k, v),
                    _ => return Err("a map schema needs keySchema and valueSchema".into()),
                };
                obj.iter()
                    .map(|(k, v)| Ok((self.parse_str(ks, Some(k))?, self.parse_json(vs, Some(v))?)))
                    .collect::<Result<Vec<_>, DataError>>()
                    .map(Value::Map)
            }
            _ => self.json_primitive(schema, input),
        }
    }

    fn json_primitive(&self, schema: &Schema, input: &Json) -> Result<Value, DataError> {
        let fail = || format!("Could not parse '{input}' to {}", expected(schema));
        if let Json::String(s) = input {
            return self
                .text(schema, s)
                .map_err(|e| DataError(format!("{}: {e}", fail())));
        }
        let kind = kind_of(schema);
        Ok(match (schema.schema_type, input) {
            (SchemaType::String, other) => Value::String(other.to_string()),
            (SchemaType::Boolean, Json::Bool(b)) => Value::Boolean(*b),
            (_, Json::Number(_)) if matches!(kind, Some(LogicalKind::Decimal(_))) => {
                self.text(schema, &input.to_string())?
            }
            (SchemaType::Int64, Json::Number(n))
                if kind.is_none() || kind == Some(LogicalKind::Timestamp) =>
            {
                Value::Int64(n.as_i64().ok_or_else(fail)?)
            }
            (SchemaType::Int32, Json::Number(n)) => Value::Int32(
                n.as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(fail)?,
            ),
            (SchemaType::Int16, Json::Number(n)) => Value::Int16(
                n.as_i64()
                    .and_then(|v| i16::try_from(v).ok())
                    .ok_or_else(fail)?,
            ),
            (SchemaType::Int8, Json::Number(n)) => Value::Int8(
                n.as_i64()
                    .and_then(|v| i8::try_from(v).ok())
                    .ok_or_else(fail)?,
            ),
            (SchemaType::Float64, Json::Number(n)) => Value::Float64(n.as_f64().ok_or_else(fail)?),
            (SchemaType::Float32, Json::Number(n)) => {
                Value::Float32(n.as_f64().ok_or_else(fail)? as f32)
            }
            _ => return Err(fail().into()),
        })
    }

    /// Builds a struct of `schema` from the inputs `get` finds by field name.
    pub fn structure<'a>(
        &self,
        schema: &Schema,
        get: impl Fn(&str) -> Option<&'a Json>,
    ) -> Result<Value, DataError> {
        let mut out = Struct::new(std::sync::Arc::new(schema.clone()));
        for (i, field) in schema.fields.iter().enumerate() {
            let v = self
                .parse_json(&field.schema, get(&field.name))
                .map_err(|e| {
                    DataError(format!(
                        "Exception thrown while processing {}:{}: {e}",
                        schema.name.as_deref().unwrap_or("null"),
                        field.name
                    ))
                })?;
            out.values[i] = v;
        }
        Ok(Value::Struct(out))
    }
}

fn null_for(schema: &Schema) -> Result<Value, DataError> {
    if schema.optional {
        Ok(Value::Null)
    } else {
        Err("schema is not optional so input cannot be null.".into())
    }
}

/// The Java class a schema's values have, for messages.
fn expected(schema: &Schema) -> &'static str {
    match kind_of(schema) {
        Some(LogicalKind::Decimal(_)) => "BigDecimal",
        Some(_) => "Date",
        None => match schema.schema_type {
            SchemaType::Int8 => "Byte",
            SchemaType::Int16 => "Short",
            SchemaType::Int32 => "Integer",
            SchemaType::Int64 => "Long",
            SchemaType::Float32 => "Float",
            SchemaType::Float64 => "Double",
            SchemaType::Boolean => "Boolean",
            SchemaType::String => "String",
            _ => "Object",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::logical::{decimal, timestamp};

    fn parser() -> Parser {
        Parser::new(vec![
            DateFormat::new("yyyy-MM-dd'T'HH:mm:ss").unwrap(),
            DateFormat::new("yyyy-MM-dd' 'HH:mm:ss").unwrap(),
        ])
    }

    #[test]
    fn text_fields_by_type() {
        let p = parser();
        assert_eq!(
            p.parse_str(&Schema::int32(), Some("42")).unwrap(),
            Value::Int32(42)
        );
        assert_eq!(
            p.parse_str(&Schema::boolean(), Some("TRUE")).unwrap(),
            Value::Boolean(true)
        );
        assert_eq!(
            p.parse_str(&timestamp().build(), Some("1970-01-02 00:00:01"))
                .unwrap(),
            Value::Int64(MILLIS_PER_DAY + 1000)
        );
        let dec = p.parse_str(&decimal(2).build(), Some("12.5")).unwrap();
        assert_eq!(dec, Value::Bytes(vec![0x04, 0xE2]));
        assert_eq!(
            p.parse_str(&Schema::optional_int32(), None).unwrap(),
            Value::Null
        );
        let err = p.parse_str(&Schema::int32(), None).unwrap_err().to_string();
        assert!(err.contains("cannot be null"), "{err}");
        let err = p
            .parse_str(&Schema::int64(), Some("x1"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("Could not parse 'x1' to 'Long'"), "{err}");
    }

    #[test]
    fn json_nodes_by_type() {
        let p = parser();
        let j: Json = serde_json::json!(7);
        assert_eq!(
            p.parse_json(&Schema::int64(), Some(&j)).unwrap(),
            Value::Int64(7)
        );
        let j: Json = serde_json::json!("7");
        assert_eq!(
            p.parse_json(&Schema::int16(), Some(&j)).unwrap(),
            Value::Int16(7)
        );
        let j: Json = serde_json::json!(300);
        assert!(p.parse_json(&Schema::int8(), Some(&j)).is_err());
        assert_eq!(
            p.parse_json(&Schema::optional_string(), None).unwrap(),
            Value::Null
        );
    }
}
