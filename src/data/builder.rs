//! [`SchemaBuilder`], Kafka's fluent `SchemaBuilder`.

use std::sync::Arc;

use super::{DataError, Field, Parameters, Schema, SchemaRef, SchemaType, Value};

/// Builds a [`Schema`] fluently, like Kafka's `SchemaBuilder`:
/// `SchemaBuilder::struct_().name("x").field("a", Schema::int32()).optional().build()`.
///
/// Calls Kafka would reject (a field on a non-struct, a duplicate field name, a default value
/// that does not fit) are remembered: [`SchemaBuilder::try_build`] reports the first of them,
/// [`SchemaBuilder::build`] skips the field calls and keeps the default as given.
#[derive(Clone, Debug)]
pub struct SchemaBuilder {
    schema: Schema,
    errors: Vec<String>,
}

/// One constructor per primitive schema type: `name => SchemaType variant`.
macro_rules! primitive_builders {
    ($($(#[$doc:meta])* $name:ident => $ty:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name() -> Self {
                Self::new(SchemaType::$ty)
            }
        )*
    };
}

impl SchemaBuilder {
    /// A builder for a required schema of type `t`.
    pub fn new(t: SchemaType) -> Self {
        SchemaBuilder {
            schema: Schema::new(t),
            errors: Vec::new(),
        }
    }

    /// A builder starting from a copy of `schema`, to derive a changed schema from it.
    pub fn from_schema(schema: &Schema) -> Self {
        SchemaBuilder {
            schema: schema.clone(),
            errors: Vec::new(),
        }
    }

    primitive_builders! {
        /// `INT8` builder.
        int8 => Int8;
        /// `INT16` builder.
        int16 => Int16;
        /// `INT32` builder.
        int32 => Int32;
        /// `INT64` builder.
        int64 => Int64;
        /// `FLOAT32` builder.
        float32 => Float32;
        /// `FLOAT64` builder.
        float64 => Float64;
        /// `BOOLEAN` builder.
        boolean => Boolean;
        /// `STRING` builder.
        string => String;
        /// `BYTES` builder.
        bytes => Bytes;
    }
    /// `STRUCT` builder; add fields with [`SchemaBuilder::field`].
    pub fn struct_() -> Self {
        Self::new(SchemaType::Struct)
    }
    /// `ARRAY` builder with the given item schema.
    pub fn array(items: SchemaRef) -> Self {
        let mut b = Self::new(SchemaType::Array);
        b.schema.value_schema = Some(items);
        b
    }
    /// `MAP` builder with the given key and value schemas.
    pub fn map(key: SchemaRef, value: SchemaRef) -> Self {
        let mut b = Self::new(SchemaType::Map);
        b.schema.key_schema = Some(key);
        b.schema.value_schema = Some(value);
        b
    }

    /// Marks the schema optional.
    pub fn optional(mut self) -> Self {
        self.schema.optional = true;
        self
    }
    /// Marks the schema optional when `optional`, required otherwise.
    pub fn optional_if(mut self, optional: bool) -> Self {
        self.schema.optional = optional;
        self
    }
    /// Marks the schema required (the default).
    pub fn required(mut self) -> Self {
        self.schema.optional = false;
        self
    }
    /// Sets the default value; checked against the finished schema by [`SchemaBuilder::try_build`].
    pub fn default_value(mut self, v: Value) -> Self {
        self.schema.default_value = if v.is_null() { None } else { Some(v) };
        self
    }
    /// Sets the name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.schema.name = Some(name.into());
        self
    }
    /// Sets the version.
    pub fn version(mut self, version: i32) -> Self {
        self.schema.version = Some(version);
        self
    }
    /// Sets the documentation.
    pub fn doc(mut self, doc: impl Into<String>) -> Self {
        self.schema.doc = Some(doc.into());
        self
    }
    /// Adds one parameter.
    pub fn parameter(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.schema.parameters.insert(key.into(), value.into());
        self
    }
    /// Adds several parameters.
    pub fn parameters(mut self, params: &Parameters) -> Self {
        self.schema
            .parameters
            .extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        self
    }
    /// Appends a struct field. Kafka refuses fields on other types and duplicate names; those
    /// calls are skipped here and reported by [`SchemaBuilder::try_build`].
    pub fn field(mut self, name: impl Into<String>, schema: SchemaRef) -> Self {
        let name = name.into();
        if self.schema.schema_type != SchemaType::Struct {
            self.errors.push(format!(
                "Cannot create fields on type {}",
                self.schema.schema_type
            ));
        } else if self.schema.field(&name).is_some() {
            self.errors.push(format!(
                "Cannot create field because of field name duplication {name}"
            ));
        } else {
            let index = self.schema.fields.len();
            self.schema.fields.push(Field {
                name,
                index,
                schema,
            });
        }
        self
    }

    /// The schema as built so far, without validation.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Finishes the schema without validation (see the type's documentation).
    pub fn build(self) -> SchemaRef {
        Arc::new(self.schema)
    }

    /// Finishes the schema, failing as Kafka's builder would: on a rejected field call, or when the
    /// default value does not validate (`Invalid default value: ...`).
    pub fn try_build(self) -> Result<SchemaRef, DataError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(DataError::new(e));
        }
        if let Some(d) = &self.schema.default_value {
            self.schema
                .validate_value(d)
                .map_err(|e| DataError::new(format!("Invalid default value: {e}")))?;
        }
        Ok(Arc::new(self.schema))
    }
}
