//! The shape the `$Key`/`$Value` transformations share: Kafka's `apply` that picks one side of the
//! record and hands it to `applySchemaless` or `applyWithSchema`, and the rebuilding of a struct
//! field by field.

use std::fmt;

use super::{field_value, put, RecordContext, Side, Transformation};
use crate::data::{Field, SchemaRef, Struct, Value};
use crate::record::ConnectRecord;

/// A transformation of one side of a record, split as Kafka's `$Key`/`$Value` classes are.
pub trait SideTransformation: Send + Sync + fmt::Debug {
    /// The side of the record it works on.
    fn side(&self) -> Side;

    /// Whether a null key or value passes through untouched before either path runs.
    fn passes_null(&self) -> bool {
        true
    }

    /// Kafka's `applySchemaless`: the new data of the side, which stays without a schema.
    ///
    /// # Errors
    /// The message of the exception Kafka's transformation would throw.
    fn schemaless(
        &self,
        value: &Value,
        record: &ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Value, String>;

    /// Kafka's `applyWithSchema`: the new schema and data of the side.
    ///
    /// # Errors
    /// The message of the exception Kafka's transformation would throw.
    fn with_schema(
        &self,
        schema: &SchemaRef,
        value: &Value,
        record: &ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<(SchemaRef, Value), String>;
}

impl<T: SideTransformation> Transformation for T {
    fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, String> {
        let side = self.side();
        let value = side.value(&record);
        if self.passes_null() && value.is_null() {
            return Ok(Some(record));
        }
        let (schema, updated) = match side.schema(&record) {
            None => (None, self.schemaless(value, &record, ctx)?),
            Some(schema) => {
                let (schema, updated) = self.with_schema(schema, value, &record, ctx)?;
                (Some(schema), updated)
            }
        };
        Ok(Some(side.with(record, schema, updated)))
    }
}

/// A struct of `schema` holding the fields of `source` by name, each value (read honouring
/// `replace.null.with.default`) passed through `each` with the source field.
pub(crate) fn copy_struct(
    source: &Struct,
    schema: SchemaRef,
    replace_null_with_default: bool,
    mut each: impl FnMut(&Field, Value) -> Result<Value, String>,
) -> Result<Struct, String> {
    let mut out = Struct::new(schema);
    for f in &source.schema.fields {
        let v = each(f, field_value(source, &f.name, replace_null_with_default))?;
        put(&mut out, &f.name, v)?;
    }
    Ok(out)
}
