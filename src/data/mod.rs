//! Kafka Connect's data model: schemas, values, structs and logical types.
//!
//! This mirrors `org.apache.kafka.connect.data`. Connectors, transformations and converters all
//! pass records around as a [`Value`] with an optional [`Schema`]; the converters in
//! [`crate::converters`] turn them into bytes. Error texts follow Kafka's `DataException`
//! messages where users can see them.
//!
//! Differences from the Java model, all deliberate:
//! * Logical values keep their physical form (see [`logical`]): a `Decimal` is `Value::Bytes` of the
//!   unscaled integer, `Date`/`Time` are `Value::Int32`, `Timestamp` is `Value::Int64`. Validation
//!   therefore expects those variants where Java expects `BigDecimal` or `java.util.Date`.
//! * Maps are insertion-ordered lists of pairs, so equality of two maps is order-sensitive.
//! * [`SchemaBuilder::build`] never fails; [`SchemaBuilder::try_build`] reports what Kafka's
//!   builder would have thrown.

mod builder;
mod java;
pub mod logical;
pub mod project;
pub mod values;

use std::fmt;
use std::sync::Arc;

pub use builder::SchemaBuilder;

/// A schema's parameters in insertion order, as Kafka's `LinkedHashMap`: a Confluent enum's symbols
/// are parameters, in the order of the enum. Two maps with the same entries are equal whatever their
/// order, as Java's `Map.equals`.
pub type Parameters = indexmap::IndexMap<String, String>;
pub use java::{double_to_string, float_to_string};

/// Kafka's `DataException`: a value, schema or payload that cannot be handled. The text is what a
/// user sees (in task traces, REST errors and logs).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct DataError(pub String);

impl DataError {
    /// A `DataError` with the given message.
    pub fn new(msg: impl Into<String>) -> Self {
        DataError(msg.into())
    }
}

impl From<String> for DataError {
    fn from(msg: String) -> Self {
        DataError(msg)
    }
}

impl From<&str> for DataError {
    fn from(msg: &str) -> Self {
        DataError(msg.to_string())
    }
}

impl PartialEq<str> for DataError {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for DataError {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for DataError {
    fn eq(&self, other: &String) -> bool {
        self.0 == *other
    }
}

/// The physical type of a schema, Kafka's `Schema.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// 8-bit signed integer.
    Int8,
    /// 16-bit signed integer.
    Int16,
    /// 32-bit signed integer.
    Int32,
    /// 64-bit signed integer.
    Int64,
    /// IEEE 754 single precision.
    Float32,
    /// IEEE 754 double precision.
    Float64,
    /// `true` / `false`.
    Boolean,
    /// UTF-8 text.
    String,
    /// Opaque bytes.
    Bytes,
    /// Ordered list with one item schema.
    Array,
    /// Key/value pairs with one key schema and one value schema.
    Map,
    /// Named, ordered fields each with its own schema.
    Struct,
}

impl SchemaType {
    /// Every type, in Kafka's declaration order.
    pub const ALL: [SchemaType; 12] = [
        SchemaType::Int8,
        SchemaType::Int16,
        SchemaType::Int32,
        SchemaType::Int64,
        SchemaType::Float32,
        SchemaType::Float64,
        SchemaType::Boolean,
        SchemaType::String,
        SchemaType::Bytes,
        SchemaType::Array,
        SchemaType::Map,
        SchemaType::Struct,
    ];

    /// The name JsonConverter writes in a schema's `"type"` (`"float"` and `"double"` for the
    /// floating-point types, the lower-case type name otherwise).
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::Int8 => "int8",
            SchemaType::Int16 => "int16",
            SchemaType::Int32 => "int32",
            SchemaType::Int64 => "int64",
            SchemaType::Float32 => "float",
            SchemaType::Float64 => "double",
            SchemaType::Boolean => "boolean",
            SchemaType::String => "string",
            SchemaType::Bytes => "bytes",
            SchemaType::Array => "array",
            SchemaType::Map => "map",
            SchemaType::Struct => "struct",
        }
    }

    /// Kafka's `Schema.Type.getName()`: the lower-case enum name (`"float32"`), which is also the
    /// spelling `Cast` and friends accept in their configs.
    pub fn name(self) -> &'static str {
        match self {
            SchemaType::Float32 => "float32",
            SchemaType::Float64 => "float64",
            other => other.as_str(),
        }
    }

    /// The type whose JsonConverter schema name is `s` (see [`SchemaType::as_str`]).
    pub fn from_json_name(s: &str) -> Option<SchemaType> {
        SchemaType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The type whose [`SchemaType::name`] is `s`, ignoring case, as `Schema.Type.valueOf`.
    pub fn from_name(s: &str) -> Option<SchemaType> {
        SchemaType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
    }

    /// Whether the type has no child schemas.
    pub fn is_primitive(self) -> bool {
        !matches!(
            self,
            SchemaType::Array | SchemaType::Map | SchemaType::Struct
        )
    }
}

/// Prints the Java enum constant (`INT32`), as Kafka does in its messages.
impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            SchemaType::Int8 => "INT8",
            SchemaType::Int16 => "INT16",
            SchemaType::Int32 => "INT32",
            SchemaType::Int64 => "INT64",
            SchemaType::Float32 => "FLOAT32",
            SchemaType::Float64 => "FLOAT64",
            SchemaType::Boolean => "BOOLEAN",
            SchemaType::String => "STRING",
            SchemaType::Bytes => "BYTES",
            SchemaType::Array => "ARRAY",
            SchemaType::Map => "MAP",
            SchemaType::Struct => "STRUCT",
        };
        f.write_str(s)
    }
}

/// Schemas are immutable once built and shared between records, hence the `Arc`.
pub type SchemaRef = Arc<Schema>;

/// A Connect schema (Kafka's `ConnectSchema`). Child schemas are set only for the types that have
/// them: `value_schema` for arrays (items) and maps (values), `key_schema` for maps, `fields` for
/// structs.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    /// The physical type.
    pub schema_type: SchemaType,
    /// Whether `Value::Null` is acceptable.
    pub optional: bool,
    /// The value used in place of a null (subject to `replace.null.with.default`).
    pub default_value: Option<Value>,
    /// A name; logical types are recognised by it.
    pub name: Option<String>,
    /// A version number, for schema evolution.
    pub version: Option<i32>,
    /// Human-readable documentation.
    pub doc: Option<String>,
    /// Free-form string parameters (a decimal's `scale`, for one), in insertion order.
    pub parameters: Parameters,
    /// Map key schema.
    pub key_schema: Option<SchemaRef>,
    /// Array item schema or map value schema.
    pub value_schema: Option<SchemaRef>,
    /// Struct fields, in order; each field's `index` is its position here.
    pub fields: Vec<Field>,
}

/// A struct field: its name, position and schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// Position in the struct's field list and in [`Struct::values`].
    pub index: usize,
    /// The field's schema.
    pub schema: SchemaRef,
}

macro_rules! schema_constructors {
    ($($req:ident, $opt:ident, $t:expr, $what:literal;)*) => {
        $(
            #[doc = concat!("A required ", $what, " schema (Kafka's `Schema.", stringify!($req), "_SCHEMA`).")]
            pub fn $req() -> SchemaRef {
                Arc::new(Schema::new($t))
            }
            #[doc = concat!("An optional ", $what, " schema.")]
            pub fn $opt() -> SchemaRef {
                let mut s = Schema::new($t);
                s.optional = true;
                Arc::new(s)
            }
        )*
    };
}

impl Schema {
    /// A required schema of type `t` with nothing else set.
    pub fn new(t: SchemaType) -> Self {
        Schema {
            schema_type: t,
            optional: false,
            default_value: None,
            name: None,
            version: None,
            doc: None,
            parameters: Parameters::new(),
            key_schema: None,
            value_schema: None,
            fields: Vec::new(),
        }
    }

    schema_constructors! {
        int8, optional_int8, SchemaType::Int8, "INT8";
        int16, optional_int16, SchemaType::Int16, "INT16";
        int32, optional_int32, SchemaType::Int32, "INT32";
        int64, optional_int64, SchemaType::Int64, "INT64";
        float32, optional_float32, SchemaType::Float32, "FLOAT32";
        float64, optional_float64, SchemaType::Float64, "FLOAT64";
        boolean, optional_boolean, SchemaType::Boolean, "BOOLEAN";
        string, optional_string, SchemaType::String, "STRING";
        bytes, optional_bytes, SchemaType::Bytes, "BYTES";
    }

    /// The struct field called `name`, if this is a struct schema that has one.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The logical type this schema carries, if any.
    pub fn logical(&self) -> Option<logical::LogicalKind> {
        logical::kind_of(self)
    }

    /// Kafka's `ConnectSchema.validateValue(schema, value)`: checks `v` (recursively) against this
    /// schema with Kafka's messages, e.g.
    /// `Invalid value: null used for required value, schema type: INT32`.
    pub fn validate_value(&self, v: &Value) -> Result<(), DataError> {
        validate_value_at(self, v, "value")
    }
}

/// Kafka's `ConnectSchema.toString()`: `Schema{name:TYPE}` or `Schema{TYPE}`.
impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "Schema{{{}:{}}}", n, self.schema_type),
            None => write!(f, "Schema{{{}}}", self.schema_type),
        }
    }
}

/// `ConnectSchema.validateValue(field, schema, value)` with `location` being `value` or
/// `field: "name"`, recursing into arrays, maps and structs.
pub(crate) fn validate_value_at(
    schema: &Schema,
    value: &Value,
    location: &str,
) -> Result<(), DataError> {
    if value.is_null() {
        if !schema.optional {
            return Err(DataError::new(format!(
                "Invalid value: null used for required {location}, schema type: {}",
                schema.schema_type
            )));
        }
        return Ok(());
    }
    if !value_matches_type(schema.schema_type, value) {
        let mut msg = String::from("Invalid Java object for schema");
        if let Some(name) = &schema.name {
            msg.push_str(&format!(" \"{name}\""));
        }
        msg.push_str(&format!(
            " with type {}: {} for {location}",
            schema.schema_type,
            value.java_class()
        ));
        return Err(DataError::new(msg));
    }
    match value {
        Value::Struct(s) => {
            if !(std::ptr::eq(s.schema.as_ref(), schema) || *s.schema == *schema) {
                return Err(DataError::new("Struct schemas do not match."));
            }
            s.validate()
        }
        Value::Array(items) => {
            let loc = format!("element of array {location}");
            let item_schema = schema
                .value_schema
                .as_deref()
                .ok_or_else(|| DataError::new(format!("No schema defined for {loc}")))?;
            items
                .iter()
                .try_for_each(|v| validate_value_at(item_schema, v, &loc))
        }
        Value::Map(entries) => {
            let key_loc = format!("key of map {location}");
            let value_loc = format!("value of map {location}");
            let key_schema = schema
                .key_schema
                .as_deref()
                .ok_or_else(|| DataError::new(format!("No schema defined for {key_loc}")))?;
            let value_schema = schema
                .value_schema
                .as_deref()
                .ok_or_else(|| DataError::new(format!("No schema defined for {value_loc}")))?;
            entries.iter().try_for_each(|(k, v)| {
                validate_value_at(key_schema, k, &key_loc)?;
                validate_value_at(value_schema, v, &value_loc)
            })
        }
        _ => Ok(()),
    }
}

fn value_matches_type(t: SchemaType, v: &Value) -> bool {
    matches!(
        (t, v),
        (SchemaType::Int8, Value::Int8(_))
            | (SchemaType::Int16, Value::Int16(_))
            | (SchemaType::Int32, Value::Int32(_))
            | (SchemaType::Int64, Value::Int64(_))
            | (SchemaType::Float32, Value::Float32(_))
            | (SchemaType::Float64, Value::Float64(_))
            | (SchemaType::Boolean, Value::Boolean(_))
            | (SchemaType::String, Value::String(_))
            | (SchemaType::Bytes, Value::Bytes(_))
            | (SchemaType::Array, Value::Array(_))
            | (SchemaType::Map, Value::Map(_))
            | (SchemaType::Struct, Value::Struct(_))
    )
}

/// A Connect value. Logical types keep their physical form (see [`logical`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Java's `null`: an absent value or a tombstone.
    Null,
    /// `BOOLEAN`.
    Boolean(bool),
    /// `INT8`.
    Int8(i8),
    /// `INT16`.
    Int16(i16),
    /// `INT32`, also `Date` (days) and `Time` (millis of day).
    Int32(i32),
    /// `INT64`, also `Timestamp` (epoch millis).
    Int64(i64),
    /// `FLOAT32`.
    Float32(f32),
    /// `FLOAT64`.
    Float64(f64),
    /// `STRING`.
    String(String),
    /// `BYTES`, also `Decimal` (big-endian two's-complement unscaled value).
    Bytes(Vec<u8>),
    /// `ARRAY`.
    Array(Vec<Value>),
    /// `MAP`, in insertion order.
    Map(Vec<(Value, Value)>),
    /// `STRUCT`.
    Struct(Struct),
}

impl Value {
    /// Whether this is `Value::Null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Kafka's `Schema.Type.getName()` of the value's own type (`"int32"`, `"float64"`, `"struct"`),
    /// or `"null"`.
    pub fn type_name(&self) -> &'static str {
        match self.schema_type() {
            Some(t) => t.name(),
            None => "null",
        }
    }

    /// The schema type a value of this variant has without a schema (`None` for null).
    pub fn schema_type(&self) -> Option<SchemaType> {
        Some(match self {
            Value::Null => return None,
            Value::Boolean(_) => SchemaType::Boolean,
            Value::Int8(_) => SchemaType::Int8,
            Value::Int16(_) => SchemaType::Int16,
            Value::Int32(_) => SchemaType::Int32,
            Value::Int64(_) => SchemaType::Int64,
            Value::Float32(_) => SchemaType::Float32,
            Value::Float64(_) => SchemaType::Float64,
            Value::String(_) => SchemaType::String,
            Value::Bytes(_) => SchemaType::Bytes,
            Value::Array(_) => SchemaType::Array,
            Value::Map(_) => SchemaType::Map,
            Value::Struct(_) => SchemaType::Struct,
        })
    }

    /// What Java's `value.getClass()` prints for the equivalent Java object
    /// (`class java.lang.Integer`), used in Kafka's messages.
    pub fn java_class(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Boolean(_) => "class java.lang.Boolean",
            Value::Int8(_) => "class java.lang.Byte",
            Value::Int16(_) => "class java.lang.Short",
            Value::Int32(_) => "class java.lang.Integer",
            Value::Int64(_) => "class java.lang.Long",
            Value::Float32(_) => "class java.lang.Float",
            Value::Float64(_) => "class java.lang.Double",
            Value::String(_) => "class java.lang.String",
            Value::Bytes(_) => "class [B",
            Value::Array(_) => "class java.util.ArrayList",
            Value::Map(_) => "class java.util.HashMap",
            Value::Struct(_) => "class org.apache.kafka.connect.data.Struct",
        }
    }

    /// Java's `String.valueOf(value)`, which is what Kafka's FileStreamSink and StringConverter
    /// write: strings as they are, numbers as Java prints them (`1.0`, `1.0E10`), `null`, lists as
    /// `[a, b]`, maps as `{k=v, k2=v2}` and structs as `Struct{a=1,b=x}`. Struct fields use their
    /// schemas, so logical values inside structs print like Java's `BigDecimal` and
    /// `java.util.Date` (in UTC).
    ///
    /// Bytes print as standard base64: Java would print an identity hash (`[B@1b6d3586`), which
    /// carries no information.
    pub fn to_java_string(&self) -> String {
        self.to_java_string_with_schema(None)
    }

    /// [`Value::to_java_string`] for a value whose schema is known, so a top-level logical value
    /// prints as Java prints its logical class: a `Decimal` as `BigDecimal.toString()` (`12.50`),
    /// `Date`/`Time`/`Timestamp` as `java.util.Date.toString()` in UTC
    /// (`Thu Jan 01 00:00:00 UTC 1970`).
    pub fn to_java_string_with_schema(&self, schema: Option<&Schema>) -> String {
        let mut out = String::new();
        append_java_string(&mut out, self, schema);
        out
    }

    /// The text of a `Value::String`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value of a `Value::Boolean`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// Any integer variant widened to `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int8(v) => Some(*v as i64),
            Value::Int16(v) => Some(*v as i64),
            Value::Int32(v) => Some(*v as i64),
            Value::Int64(v) => Some(*v),
            _ => None,
        }
    }

    /// Any numeric variant as `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float32(v) => Some(*v as f64),
            Value::Float64(v) => Some(*v),
            other => other.as_i64().map(|v| v as f64),
        }
    }

    /// The value stored under `key` in a `Value::Map` (the last one if a key repeats).
    pub fn map_get(&self, key: &Value) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Writes an array's items between `[` and `]`, `sep` between them, each by `item` with the
/// array's value schema.
pub(crate) fn append_items(
    out: &mut String,
    items: &[Value],
    schema: Option<&Schema>,
    sep: &str,
    mut item: impl FnMut(&mut String, &Value, Option<&Schema>),
) {
    let item_schema = schema.and_then(|s| s.value_schema.as_deref());
    out.push('[');
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        item(out, v, item_schema);
    }
    out.push(']');
}

/// Writes a map's entries between `{` and `}`: `separators` is what stands between entries and
/// between a key and its value; each key and value is written by `item` with its schema.
pub(crate) fn append_entries(
    out: &mut String,
    entries: &[(Value, Value)],
    schema: Option<&Schema>,
    separators: (&str, char),
    mut item: impl FnMut(&mut String, &Value, Option<&Schema>),
) {
    let (sep, key_sep) = separators;
    let key_schema = schema.and_then(|s| s.key_schema.as_deref());
    let value_schema = schema.and_then(|s| s.value_schema.as_deref());
    out.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        item(out, k, key_schema);
        out.push(key_sep);
        item(out, v, value_schema);
    }
    out.push('}');
}

fn append_java_string(out: &mut String, value: &Value, schema: Option<&Schema>) {
    use logical::LogicalKind;
    if let Some(kind) = schema.and_then(Schema::logical) {
        match (kind, value) {
            (LogicalKind::Decimal(scale), Value::Bytes(b)) => {
                out.push_str(&logical::decimal_to_string(b, scale));
                return;
            }
            (LogicalKind::Date, Value::Int32(days)) => {
                out.push_str(&java::java_date_to_string(
                    *days as i64 * java::MILLIS_PER_DAY,
                ));
                return;
            }
            (LogicalKind::Time, Value::Int32(ms)) => {
                out.push_str(&java::java_date_to_string(*ms as i64));
                return;
            }
            (LogicalKind::Timestamp, Value::Int64(ms)) => {
                out.push_str(&java::java_date_to_string(*ms));
                return;
            }
            _ => {}
        }
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int8(v) => out.push_str(&v.to_string()),
        Value::Int16(v) => out.push_str(&v.to_string()),
        Value::Int32(v) => out.push_str(&v.to_string()),
        Value::Int64(v) => out.push_str(&v.to_string()),
        Value::Float32(v) => out.push_str(&java::float_to_string(*v)),
        Value::Float64(v) => out.push_str(&java::double_to_string(*v)),
        Value::String(s) => out.push_str(s),
        Value::Bytes(b) => {
            use base64::Engine as _;
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(b))
        }
        Value::Array(items) => append_items(out, items, schema, ", ", append_java_string),
        Value::Map(entries) => {
            append_entries(out, entries, schema, (", ", '='), append_java_string)
        }
        Value::Struct(s) => {
            out.push_str("Struct{");
            let mut first = true;
            for (field, v) in s.schema.fields.iter().zip(&s.values) {
                if v.is_null() {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&field.name);
                out.push('=');
                append_java_string(out, v, Some(&field.schema));
            }
            out.push('}');
        }
    }
}

/// [`Value::to_java_string`].
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_java_string())
    }
}

macro_rules! value_from {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$variant(v.into())
            }
        })*
    };
}

value_from! {
    bool => Boolean, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, f32 => Float32,
    f64 => Float64, String => String, &str => String, Vec<u8> => Bytes, Vec<Value> => Array,
    Struct => Struct,
}

/// A struct value: a schema and one value per field (Kafka's `Struct`). Unset fields hold
/// `Value::Null`.
#[derive(Clone, Debug, PartialEq)]
pub struct Struct {
    /// The struct's schema (of type `STRUCT`).
    pub schema: SchemaRef,
    /// Field values, by field index.
    pub values: Vec<Value>,
}

impl Struct {
    /// An empty struct (every field null) for `schema`. A non-struct schema yields a struct with no
    /// fields that [`Struct::validate`] rejects; [`Struct::try_new`] refuses it up front.
    pub fn new(schema: SchemaRef) -> Self {
        let values = vec![Value::Null; schema.fields.len()];
        Struct { schema, values }
    }

    /// Like [`Struct::new`], with Kafka's `Not a struct schema: ...` for non-struct schemas.
    pub fn try_new(schema: SchemaRef) -> Result<Self, DataError> {
        if schema.schema_type != SchemaType::Struct {
            return Err(DataError::new(format!("Not a struct schema: {schema}")));
        }
        Ok(Struct::new(schema))
    }

    /// Sets a field after validating the value against the field's schema, as Kafka's
    /// `Struct.put` does (`<name> is not a valid field name` for unknown fields).
    pub fn put(&mut self, name: &str, value: impl Into<Value>) -> Result<&mut Self, DataError> {
        let value = value.into();
        let field = self.lookup_field(name)?;
        validate_value_at(&field.schema, &value, &format!("field: \"{}\"", field.name))?;
        let index = field.index;
        self.values[index] = value;
        Ok(self)
    }

    /// Builder-style [`Struct::put`], for constructing structs in one expression.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Result<Self, DataError> {
        self.put(name, value)?;
        Ok(self)
    }

    /// The field's value, or the field schema's default when the value is null (Kafka's
    /// `Struct.get`). `None` for an unknown field.
    pub fn get(&self, name: &str) -> Option<&Value> {
        let field = self.schema.field(name)?;
        let v = self.values.get(field.index)?;
        match (v, &field.schema.default_value) {
            (Value::Null, Some(d)) => Some(d),
            _ => Some(v),
        }
    }

    /// The field's stored value, ignoring defaults (Kafka's `getWithoutDefault`).
    pub fn get_without_default(&self, name: &str) -> Option<&Value> {
        let field = self.schema.field(name)?;
        self.values.get(field.index)
    }

    /// Kafka's `Struct.validate()`: every field's value must fit its schema; nulls are fine for
    /// optional fields and fields with a default.
    pub fn validate(&self) -> Result<(), DataError> {
        if self.schema.schema_type != SchemaType::Struct {
            return Err(DataError::new(format!(
                "Not a struct schema: {}",
                self.schema
            )));
        }
        if self.values.len() != self.schema.fields.len() {
            return Err(DataError::new(
                "Struct values do not match the number of schema fields.",
            ));
        }
        for (field, v) in self.schema.fields.iter().zip(&self.values) {
            if v.is_null() && (field.schema.optional || field.schema.default_value.is_some()) {
                continue;
            }
            validate_value_at(&field.schema, v, &format!("field: \"{}\"", field.name))?;
        }
        Ok(())
    }

    fn lookup_field(&self, name: &str) -> Result<&Field, DataError> {
        self.schema
            .field(name)
            .ok_or_else(|| DataError::new(format!("{name} is not a valid field name")))
    }
}

/// Kafka's `Struct.toString()`: `Struct{a=1,b=x}`, null fields left out.
impl fmt::Display for Struct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        append_java_string(&mut out, &Value::Struct(self.clone()), None);
        f.write_str(&out)
    }
}

/// A value with its (optional) schema, as converters produce them.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaAndValue {
    /// The schema, or `None` for schemaless data.
    pub schema: Option<SchemaRef>,
    /// The value.
    pub value: Value,
}

impl SchemaAndValue {
    /// Pairs a schema and a value.
    pub fn new(schema: Option<SchemaRef>, value: Value) -> Self {
        SchemaAndValue { schema, value }
    }

    /// Kafka's `SchemaAndValue.NULL`: no schema, null value.
    pub fn null() -> Self {
        SchemaAndValue {
            schema: None,
            value: Value::Null,
        }
    }
}

/// Builders the tests of several modules share.
#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// A required, unnamed struct schema with these fields, in order.
    pub(crate) fn struct_schema(fields: &[(&str, SchemaRef)]) -> SchemaRef {
        fields
            .iter()
            .fold(SchemaBuilder::struct_(), |b, (name, schema)| {
                b.field(*name, schema.clone())
            })
            .build()
    }

    /// The names of the schema's fields, in order.
    pub(crate) fn field_names(schema: &Schema) -> Vec<&str> {
        schema.fields.iter().map(|f| f.name.as_str()).collect()
    }

    /// A struct of `schema` with these fields set.
    pub(crate) fn struct_of(schema: &SchemaRef, fields: &[(&str, Value)]) -> Struct {
        let mut s = Struct::new(schema.clone());
        for (name, value) in fields {
            s.put(name, value.clone()).expect("field fits the schema");
        }
        s
    }
}

#[cfg(test)]
mod tests;
