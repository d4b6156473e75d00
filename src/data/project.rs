//! Kafka's `SchemaProjector`: a value of one schema made a value of another, compatible one: struct
//! fields by name (a field the target lacks is dropped, one the source lacks takes the target's default
//! or null when optional), numbers widened (`INT8` → … → `FLOAT64`), arrays and maps element by element.

use super::{DataError, Schema, SchemaType, Struct, Value};

fn rank(t: SchemaType) -> Option<u8> {
    Some(match t {
        SchemaType::Int8 => 0,
        SchemaType::Int16 => 1,
        SchemaType::Int32 => 2,
        SchemaType::Int64 => 3,
        SchemaType::Float32 => 4,
        SchemaType::Float64 => 5,
        _ => return None,
    })
}

fn widen(value: &Value, to: SchemaType) -> Option<Value> {
    let (i, f) = match value {
        Value::Int8(v) => (i64::from(*v), f64::from(*v)),
        Value::Int16(v) => (i64::from(*v), f64::from(*v)),
        Value::Int32(v) => (i64::from(*v), f64::from(*v)),
        // Kafka widens these as Java does, with the precision a float carries.
        #[allow(clippy::cast_precision_loss)]
        Value::Int64(v) => (*v, *v as f64),
        Value::Float32(v) => (0, f64::from(*v)),
        _ => return None,
    };
    Some(match to {
        SchemaType::Int16 => Value::Int16(i16::try_from(i).ok()?),
        SchemaType::Int32 => Value::Int32(i32::try_from(i).ok()?),
        SchemaType::Int64 => Value::Int64(i),
        #[allow(clippy::cast_possible_truncation)]
        SchemaType::Float32 => Value::Float32(f as f32),
        SchemaType::Float64 => Value::Float64(f),
        _ => return None,
    })
}

fn mismatch(source: &Schema, target: &Schema) -> DataError {
    DataError::new(format!(
        "Schema type mismatch. source type: {} and target type: {}",
        source.schema_type, target.schema_type
    ))
}

/// Projects `value` of `source` onto `target`.
///
/// # Errors
/// Kafka's messages: a type mismatch, a required target field the source lacks and without a default,
/// a null for a required target.
pub fn project(source: &Schema, value: &Value, target: &Schema) -> Result<Value, DataError> {
    if value.is_null() {
        return match &target.default_value {
            _ if target.optional => Ok(Value::Null),
            Some(d) => Ok(d.clone()),
            None => Err(DataError::new(
                "Writer schema is optional, however, target schema does not provide a default value.",
            )),
        };
    }
    if source.schema_type == target.schema_type {
        return match (value, target.schema_type) {
            (Value::Struct(s), SchemaType::Struct) => project_struct(s, target),
            (Value::Array(items), SchemaType::Array) => {
                let (Some(from), Some(to)) = (&source.value_schema, &target.value_schema) else {
                    return Ok(value.clone());
                };
                let out = items.iter().map(|v| project(from, v, to));
                Ok(Value::Array(out.collect::<Result<_, _>>()?))
            }
            (Value::Map(entries), SchemaType::Map) => project_map(source, entries, target),
            _ => Ok(value.clone()),
        };
    }
    match (rank(source.schema_type), rank(target.schema_type)) {
        (Some(a), Some(b)) if a < b => {
            widen(value, target.schema_type).ok_or_else(|| mismatch(source, target))
        }
        _ => Err(mismatch(source, target)),
    }
}

fn project_struct(source: &Struct, target: &Schema) -> Result<Value, DataError> {
    let mut out = Struct::try_new(std::sync::Arc::new(target.clone()))?;
    for (i, field) in target.fields.iter().enumerate() {
        let projected = match source.schema.field(&field.name) {
            Some(from) => {
                let v = source
                    .get_without_default(&field.name)
                    .unwrap_or(&Value::Null);
                project(&from.schema, v, &field.schema)?
            }
            None => match &field.schema.default_value {
                Some(d) => d.clone(),
                None if field.schema.optional => Value::Null,
                None => {
                    return Err(DataError::new(format!(
                        "Required field `{}` is missing from source schema: {}",
                        field.name, source.schema
                    )))
                }
            },
        };
        out.values[i] = projected;
    }
    Ok(Value::Struct(out))
}

fn project_map(
    source: &Schema,
    entries: &[(Value, Value)],
    target: &Schema,
) -> Result<Value, DataError> {
    let (Some(sk), Some(sv), Some(tk), Some(tv)) = (
        &source.key_schema,
        &source.value_schema,
        &target.key_schema,
        &target.value_schema,
    ) else {
        return Ok(Value::Map(entries.to_vec()));
    };
    let out = entries
        .iter()
        .map(|(k, v)| Ok((project(sk, k, tk)?, project(sv, v, tv)?)));
    Ok(Value::Map(out.collect::<Result<_, DataError>>()?))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::data::builder::SchemaBuilder;

    fn schema(fields: &[(&str, Schema)]) -> Arc<Schema> {
        let mut b = SchemaBuilder::struct_().name("ex.R");
        for (n, s) in fields {
            b = b.field(*n, Arc::new(s.clone()));
        }
        b.build()
    }

    #[test]
    fn fields_by_name_with_defaults_widening_and_drops() {
        let from = schema(&[
            ("a", Schema::new(SchemaType::Int32)),
            ("gone", Schema::new(SchemaType::String)),
        ]);
        let mut with_default = Schema::new(SchemaType::String);
        with_default.default_value = Some(Value::String("d".into()));
        let mut optional = Schema::new(SchemaType::Boolean);
        optional.optional = true;
        let to = schema(&[
            ("a", Schema::new(SchemaType::Int64)),
            ("b", with_default),
            ("c", optional),
        ]);
        let mut s = Struct::new(from.clone());
        s.put("a", Value::Int32(7)).unwrap();
        s.put("gone", Value::String("x".into())).unwrap();
        let Value::Struct(out) = project(&from, &Value::Struct(s.clone()), &to).unwrap() else {
            panic!("a struct")
        };
        assert_eq!(
            out.values,
            vec![Value::Int64(7), Value::String("d".into()), Value::Null]
        );
        let required = schema(&[("z", Schema::new(SchemaType::Int8))]);
        let e = project(&from, &Value::Struct(s), &required).unwrap_err();
        assert!(e.0.contains("Required field `z`"), "{e}");
        let e = project(
            &Schema::new(SchemaType::Int64),
            &Value::Int64(1),
            &Schema::new(SchemaType::Int32),
        )
        .unwrap_err();
        assert!(
            e.0.contains("source type: INT64 and target type: INT32"),
            "{e}"
        );
    }
}
