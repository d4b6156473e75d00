//! The shape the `$Key`/`$Value` transformations share: Kafka's `apply` that picks one side of the
//! record and hands it to `applySchemaless` or `applyWithSchema`, and the rebuilding of a struct
//! field by field.

use std::fmt;

use super::{field_value, put, RecordContext, Side, Transformation};
use crate::data::DataError;
use crate::data::{Field, SchemaRef, Struct, Value};
use crate::record::ConnectRecord;

/// The side of a record a [`SideTransformation`] is handed: its data, with the record and the
/// context it comes from.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The key or the value.
    pub value: &'a Value,
    /// The whole record.
    pub record: &'a ConnectRecord,
    /// What is known about the record beyond itself.
    pub ctx: &'a RecordContext,
}

/// What [`SideTransformation::with_schema`] gives: the side's new schema and data.
pub type WithSchema = Result<(SchemaRef, Value), DataError>;

/// A transformation of one side of a record, split as Kafka's `$Key`/`$Value` classes are.
pub trait SideTransformation: Send + Sync + fmt::Debug {
    /// Whether a null key or value passes through untouched before either path runs.
    const PASSES_NULL: bool = true;

    /// The side of the record it works on.
    fn side(&self) -> Side;

    /// Kafka's `applySchemaless`: the new data of the side, which stays without a schema.
    ///
    /// # Errors
    /// The message of the exception Kafka's transformation would throw.
    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError>;

    /// Kafka's `applyWithSchema`: the new schema and data of the side.
    ///
    /// # Errors
    /// The message of the exception Kafka's transformation would throw.
    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema;
}

impl<T: SideTransformation> Transformation for T {
    fn apply(
        &self,
        record: ConnectRecord,
        ctx: &RecordContext,
    ) -> Result<Option<ConnectRecord>, DataError> {
        let side = self.side();
        let input = Input {
            value: side.value(&record),
            record: &record,
            ctx,
        };
        if T::PASSES_NULL && input.value.is_null() {
            return Ok(Some(record));
        }
        let (schema, updated) = match side.schema(&record) {
            None => (None, self.schemaless(input)?),
            Some(schema) => {
                let (schema, updated) = self.with_schema(schema, input)?;
                (Some(schema), updated)
            }
        };
        Ok(Some(side.with(record, schema, updated)))
    }
}

/// A struct of `schema` holding, for each of its fields, the field of that name in `source` (read
/// honouring `replace.null.with.default`): the value rebound to a schema that keeps or drops fields.
pub(crate) fn rebind_struct(
    source: &Struct,
    schema: &SchemaRef,
    replace_null_with_default: bool,
) -> Result<Struct, DataError> {
    let mut out = Struct::new(schema.clone());
    for f in &schema.fields {
        put(
            &mut out,
            &f.name,
            field_value(source, &f.name, replace_null_with_default),
        )?;
    }
    Ok(out)
}

/// A struct of `schema` holding the fields of `source` by name, each value (read honouring
/// `replace.null.with.default`) passed through `each` with the source field.
pub(crate) fn copy_struct(
    source: &Struct,
    schema: SchemaRef,
    replace_null_with_default: bool,
    mut each: impl FnMut(&Field, Value) -> Result<Value, DataError>,
) -> Result<Struct, DataError> {
    let mut out = Struct::new(schema);
    for f in &source.schema.fields {
        let v = each(f, field_value(source, &f.name, replace_null_with_default))?;
        put(&mut out, &f.name, v)?;
    }
    Ok(out)
}
