//! Protobuf messages as Connect data, as Confluent's `ProtobufData` maps them: a message is a struct
//! named by its name (its full name with `enhanced.protobuf.schema.support`); every field carries its
//! number in `io.confluent.connect.protobuf.Tag`; `int32`, `sint32` and `sfixed32` are `INT32`
//! (`INT8`/`INT16` when the field's `connect.type` says so), `uint32`, `fixed32` and the 64-bit integers
//! `INT64`, the kind other than `int32`/`int64` in `io.confluent.connect.protobuf.Type`; enums are
//! `STRING`s (`INT32`s with `int.for.enums`) with the enum's symbols and numbers as parameters;
//! `repeated` fields arrays; maps (and repeated `…Entry` messages of a `key` and a `value`) maps; a
//! `oneof` is an optional struct `io.confluent.connect.protobuf.Union.<oneof>` in a field named
//! `<oneof>_<index>`; `confluent.type.Decimal`, `google.type.Date`, `google.type.TimeOfDay` and
//! `google.protobuf.Timestamp` are the logical types; a `google.protobuf` wrapper is its optional
//! primitive as a field with `wrapper.for.nullables`, and as the record's message with
//! `wrapper.for.raw.primitives`. The values written back are in [`super::write`].

use std::collections::HashMap;

use prost_reflect::{
    Cardinality, DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, OneofDescriptor,
    ReflectMessage, Syntax, Value as PValue,
};

use super::names::{is_union, TAG_PARAMETER, TYPE_PARAMETER, WRAPPER_PARAMETER};
pub use super::names::{ENUM_PARAMETER, UNION_NAME};
use super::text::{CONNECT_TYPE, META_PRECISION, PRECISION};
pub use super::write::from_connect;
use crate::data::logical::{self, DECIMAL_SCALE_PARAMETER};
use crate::data::{DataError, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};

/// How messages are read (Confluent's keys).
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// `generate.index.for.unions` (default true): a oneof's field is `<oneof>_<index>`, else `<oneof>`.
    pub index_for_unions: bool,
    /// `wrapper.for.raw.primitives` (default true): a record whose message is a `google.protobuf`
    /// wrapper reads as its primitive.
    pub wrapper_for_raw_primitives: bool,
    /// `wrapper.for.nullables`: wrapper fields read as optional primitives, other scalars required.
    pub wrapper_for_nullables: bool,
    /// `optional.for.nullables`: only fields declared `optional` read as optional scalars.
    pub optional_for_nullables: bool,
    /// `int.for.enums`: enums read as `INT32` (their numbers).
    pub int_for_enums: bool,
    /// `enhanced.protobuf.schema.support`: messages, enums and oneofs named by their full names.
    pub enhanced: bool,
    /// `generate.struct.for.nulls`: a field not set reads as its default (a message's default struct),
    /// not null.
    pub struct_for_nulls: bool,
}

impl ReadOptions {
    /// Confluent's defaults.
    pub const CONFLUENT: ReadOptions = ReadOptions {
        index_for_unions: true,
        wrapper_for_raw_primitives: true,
        wrapper_for_nullables: false,
        optional_for_nullables: false,
        int_for_enums: false,
        enhanced: false,
        struct_for_nulls: false,
    };
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self::CONFLUENT
    }
}

/// The `confluent.field_meta` params of a field.
fn field_params(field: &FieldDescriptor) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let pool = field.parent_pool();
    let Some(ext) = pool.get_extension_by_name("confluent.field_meta") else {
        return out;
    };
    let options = field.options();
    if !options.has_extension(&ext) {
        return out;
    }
    if let PValue::Message(meta) = options.get_extension(&ext).as_ref() {
        if let Some(params) = meta.get_field_by_name("params") {
            if let PValue::Map(map) = params.as_ref() {
                for (k, v) in map {
                    if let (MapKey::String(k), PValue::String(v)) = (k, v) {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    out
}

/// The Connect schema of a record's message: a struct, or a wrapper's primitive with
/// `wrapper.for.raw.primitives`.
pub fn message_schema(message: &MessageDescriptor, opts: ReadOptions) -> SchemaRef {
    if opts.wrapper_for_raw_primitives {
        if let Some(t) = wrapper(message.full_name()) {
            return SchemaBuilder::new(t).optional().build();
        }
    }
    struct_schema(message, opts)
}

/// The Connect struct of a message.
fn struct_schema(message: &MessageDescriptor, opts: ReadOptions) -> SchemaRef {
    let name = if opts.enhanced {
        message.full_name()
    } else {
        message.name()
    };
    let mut b = SchemaBuilder::struct_().name(name);
    for (index, o) in message.oneofs().filter(|o| !o.is_synthetic()).enumerate() {
        b = b.field(
            union_field_name(o.name(), index, opts),
            union_schema(&o, opts),
        );
    }
    for f in declared_fields(message) {
        if f.containing_oneof().is_some_and(|o| !o.is_synthetic()) {
            continue;
        }
        b = b.field(f.name(), field_schema(&f, opts, false));
    }
    b.optional().build()
}

/// A message's fields in the order the schema declares them (as Confluent's `getFields`).
fn declared_fields(message: &MessageDescriptor) -> Vec<FieldDescriptor> {
    message
        .descriptor_proto()
        .field
        .iter()
        .filter_map(|f| message.get_field(u32::try_from(f.number()).ok()?))
        .collect()
}

/// A map entry's `key` and `value` fields (of a real map entry, or of Confluent's `…Entry` message).
pub fn entry_fields(entry: &MessageDescriptor) -> Option<(FieldDescriptor, FieldDescriptor)> {
    Some((
        entry.get_field_by_name("key")?,
        entry.get_field_by_name("value")?,
    ))
}

fn union_schema(o: &OneofDescriptor, opts: ReadOptions) -> SchemaRef {
    let name = if opts.enhanced {
        o.full_name()
    } else {
        o.name()
    };
    let mut u = SchemaBuilder::struct_()
        .name(format!("{UNION_NAME}.{name}"))
        .optional();
    for member in o.fields() {
        u = u.field(member.name(), field_schema(&member, opts, true));
    }
    u.build()
}

fn union_field_name(name: &str, index: usize, opts: ReadOptions) -> String {
    if opts.index_for_unions {
        format!("{name}_{index}")
    } else {
        name.to_string()
    }
}

/// Whether a field is declared `optional` (proto3 `optional`, or proto2 `optional` outside a oneof).
fn has_optional_keyword(f: &FieldDescriptor) -> bool {
    f.field_descriptor_proto().proto3_optional()
        || (f.parent_file().syntax() == Syntax::Proto2
            && f.cardinality() == Cardinality::Optional
            && f.containing_oneof().is_none())
}

/// Whether a repeated message field is a map: a real one, or Confluent's repeated `…Entry` message of
/// a `key` then a `value`, neither repeated.
pub fn map_entry(field: &FieldDescriptor) -> Option<MessageDescriptor> {
    let Kind::Message(entry) = field.kind() else {
        return None;
    };
    if field.is_map() {
        return Some(entry);
    }
    let fields: Vec<FieldDescriptor> = entry.fields().collect();
    let is_entry = field.is_list()
        && entry.name().ends_with("Entry")
        && fields.len() == 2
        && fields[0].name() == "key"
        && fields[1].name() == "value"
        && fields.iter().all(|f| !f.is_list());
    is_entry.then_some(entry)
}

/// The Connect schema of a field, with Confluent's optionality and its number.
fn field_schema(field: &FieldDescriptor, opts: ReadOptions, oneof_member: bool) -> SchemaRef {
    let mut b = if let Some(entry) = map_entry(field) {
        match entry_fields(&entry) {
            Some((k, v)) => {
                let key = field_schema(&k, opts, false);
                let value = field_schema(&v, opts, false);
                SchemaBuilder::map(key, value).optional()
            }
            None => SchemaBuilder::from_schema(&struct_schema(&entry, opts)),
        }
    } else {
        let (one, always_optional) = kind_schema(field, opts);
        if field.is_list() {
            let item = one.optional().build();
            SchemaBuilder::array(item).optional()
        } else if oneof_member {
            let mut one = one.optional();
            if opts.wrapper_for_nullables && is_wrapper_field(field) {
                one = one.parameter(WRAPPER_PARAMETER, "true");
            }
            one
        } else if opts.optional_for_nullables {
            one.optional_if(always_optional || has_optional_keyword(field))
        } else if opts.wrapper_for_nullables {
            one.optional_if(always_optional)
        } else {
            one.optional()
        }
    };
    b = b.parameter(TAG_PARAMETER, field.number().to_string());
    b.build()
}

fn is_wrapper_field(field: &FieldDescriptor) -> bool {
    matches!(field.kind(), Kind::Message(m) if wrapper(m.full_name()).is_some())
}

/// The wrapper types' primitives.
pub fn wrapper(full_name: &str) -> Option<SchemaType> {
    Some(match full_name {
        "google.protobuf.StringValue" => SchemaType::String,
        "google.protobuf.BytesValue" => SchemaType::Bytes,
        "google.protobuf.BoolValue" => SchemaType::Boolean,
        "google.protobuf.Int32Value" => SchemaType::Int32,
        "google.protobuf.Int64Value"
        | "google.protobuf.UInt32Value"
        | "google.protobuf.UInt64Value" => SchemaType::Int64,
        "google.protobuf.FloatValue" => SchemaType::Float32,
        "google.protobuf.DoubleValue" => SchemaType::Float64,
        _ => return None,
    })
}

/// The Connect schema of one value of a field (its item when repeated), not yet optional or not, and
/// whether Confluent makes it optional whatever the nullables keys (enums and messages).
fn kind_schema(field: &FieldDescriptor, opts: ReadOptions) -> (SchemaBuilder, bool) {
    let params = field_params(field);
    let int_kind = |b: SchemaBuilder, kind: &str| match kind {
        "int32" | "int64" => b,
        other => b.parameter(TYPE_PARAMETER, other),
    };
    let b = match field.kind() {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            match params.get(CONNECT_TYPE).map(String::as_str) {
                Some("int8") => SchemaBuilder::new(SchemaType::Int8),
                Some("int16") => SchemaBuilder::new(SchemaType::Int16),
                _ => int_kind(SchemaBuilder::new(SchemaType::Int32), kind_name(field)),
            }
        }
        Kind::Uint32
        | Kind::Fixed32
        | Kind::Int64
        | Kind::Sint64
        | Kind::Sfixed64
        | Kind::Uint64
        | Kind::Fixed64 => int_kind(SchemaBuilder::new(SchemaType::Int64), kind_name(field)),
        Kind::Float => SchemaBuilder::new(SchemaType::Float32),
        Kind::Double => SchemaBuilder::new(SchemaType::Float64),
        Kind::Bool => SchemaBuilder::new(SchemaType::Boolean),
        Kind::String => SchemaBuilder::new(SchemaType::String),
        Kind::Bytes => SchemaBuilder::new(SchemaType::Bytes),
        Kind::Enum(e) => {
            let t = if opts.int_for_enums {
                SchemaType::Int32
            } else {
                SchemaType::String
            };
            let name = if opts.enhanced {
                e.full_name()
            } else {
                e.name()
            };
            let mut b = SchemaBuilder::new(t)
                .name(name)
                .parameter(ENUM_PARAMETER, e.name());
            for v in e.values() {
                b = b.parameter(
                    format!("{ENUM_PARAMETER}.{}", v.name()),
                    v.number().to_string(),
                );
            }
            return (b, true);
        }
        Kind::Message(m) => return (message_field_schema(&m, &params, opts), true),
    };
    (b, false)
}

/// The `.proto` name of a scalar field's type.
fn kind_name(field: &FieldDescriptor) -> &'static str {
    match field.kind() {
        Kind::Sint32 => "sint32",
        Kind::Sfixed32 => "sfixed32",
        Kind::Uint32 => "uint32",
        Kind::Fixed32 => "fixed32",
        Kind::Sint64 => "sint64",
        Kind::Sfixed64 => "sfixed64",
        Kind::Uint64 => "uint64",
        Kind::Fixed64 => "fixed64",
        Kind::Int64 => "int64",
        _ => "int32",
    }
}

fn message_field_schema(
    m: &MessageDescriptor,
    params: &HashMap<String, String>,
    opts: ReadOptions,
) -> SchemaBuilder {
    match m.full_name() {
        "confluent.type.Decimal" => {
            let scale = params
                .get(DECIMAL_SCALE_PARAMETER)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let mut d = logical::decimal(scale);
            if let Some(p) = params.get(META_PRECISION).or_else(|| params.get(PRECISION)) {
                d = d.parameter(PRECISION, p.clone());
            }
            d
        }
        "google.type.Date" => logical::date(),
        "google.type.TimeOfDay" => logical::time(),
        "google.protobuf.Timestamp" => logical::timestamp(),
        name => match wrapper(name).filter(|_| opts.wrapper_for_nullables) {
            Some(t) => SchemaBuilder::new(t),
            None => SchemaBuilder::from_schema(&struct_schema(m, opts)),
        },
    }
}

pub(super) fn bad(what: impl std::fmt::Display) -> DataError {
    DataError::new(format!("Protobuf value mismatch: {what}"))
}

/// A message's value as Connect data of `schema` (made by [`message_schema`]).
///
/// # Errors
/// A value that does not fit its schema (it cannot, when the schema was made of the message).
pub fn to_connect(msg: &DynamicMessage, schema: &SchemaRef) -> Result<Value, DataError> {
    to_connect_with(msg, schema, false)
}

/// [`to_connect`], with `generate.struct.for.nulls`.
///
/// # Errors
/// As [`to_connect`].
pub fn to_connect_with(
    msg: &DynamicMessage,
    schema: &SchemaRef,
    struct_for_nulls: bool,
) -> Result<Value, DataError> {
    if schema.schema_type != SchemaType::Struct {
        return message_to_connect(msg, schema, struct_for_nulls);
    }
    let desc = msg.descriptor();
    let mut out = Struct::new(schema.clone());
    for (i, field) in schema.fields.iter().enumerate() {
        let value = if is_union(field.schema.name.as_deref()) {
            // A oneof's struct: the member that is set.
            let mut u = Struct::new(field.schema.clone());
            let mut any = false;
            for (j, member) in field.schema.fields.iter().enumerate() {
                if let Some(f) = desc.get_field_by_name(&member.name) {
                    if msg.has_field(&f) {
                        any = true;
                        let v = msg.get_field(&f);
                        u.values[j] = value_to_connect(&v, &member.schema, &f, struct_for_nulls)?;
                    }
                }
            }
            if any {
                Value::Struct(u)
            } else {
                Value::Null
            }
        } else {
            match desc.get_field_by_name(&field.name) {
                Some(f) => field_to_connect(msg, &f, &field.schema, struct_for_nulls)?,
                None => Value::Null,
            }
        };
        out.values[i] = value;
    }
    Ok(Value::Struct(out))
}

fn field_to_connect(
    msg: &DynamicMessage,
    f: &FieldDescriptor,
    schema: &SchemaRef,
    struct_for_nulls: bool,
) -> Result<Value, DataError> {
    // Unset, it is null; with `generate.struct.for.nulls`, its default (a message's default struct).
    let absent = f.supports_presence() && !msg.has_field(f);
    if absent && schema.optional && !struct_for_nulls {
        return Ok(Value::Null);
    }
    value_to_connect(msg.get_field(f).as_ref(), schema, f, struct_for_nulls)
}

/// A field's value (`f` tells its kind: an enum's names, a map's entry).
fn value_to_connect(
    v: &PValue,
    schema: &SchemaRef,
    f: &FieldDescriptor,
    nulls: bool,
) -> Result<Value, DataError> {
    Ok(match (v, schema.schema_type) {
        (PValue::List(items), SchemaType::Map) => {
            let entry = map_entry(f).ok_or_else(|| bad("map"))?;
            let (ks, vs) = map_schemas(schema)?;
            let (kf, vf) = entry_fields(&entry).ok_or_else(|| bad("map entry"))?;
            let mut entries = Vec::with_capacity(items.len());
            for item in items {
                let PValue::Message(m) = item else {
                    return Err(bad("a map entry"));
                };
                let key = field_to_connect(m, &kf, &ks, nulls)?;
                entries.push((key, field_to_connect(m, &vf, &vs, nulls)?));
            }
            Value::Map(entries)
        }
        (PValue::List(items), SchemaType::Array) => {
            let item = schema.value_schema.clone().ok_or_else(|| bad("array"))?;
            Value::Array(
                items
                    .iter()
                    .map(|x| value_to_connect(x, &item, f, nulls))
                    .collect::<Result<_, _>>()?,
            )
        }
        (PValue::Map(map), SchemaType::Map) => {
            let (ks, vs) = map_schemas(schema)?;
            let entry = map_entry(f).ok_or_else(|| bad("map"))?;
            let (kf, vf) = entry_fields(&entry).ok_or_else(|| bad("map entry"))?;
            let mut entries = Vec::with_capacity(map.len());
            for (k, x) in map {
                let key = value_to_connect(&map_key_value(k), &ks, &kf, nulls)?;
                entries.push((key, value_to_connect(x, &vs, &vf, nulls)?));
            }
            entries.sort_by(|a, b| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)));
            Value::Map(entries)
        }
        (PValue::Message(m), _) => message_to_connect(m, schema, nulls)?,
        (PValue::EnumNumber(n), SchemaType::Int32) => Value::Int32(*n),
        (PValue::EnumNumber(n), _) => {
            let name = match f.kind() {
                Kind::Enum(e) => e.get_value(*n).map(|v| v.name().to_string()),
                _ => None,
            };
            Value::String(name.unwrap_or_else(|| n.to_string()))
        }
        (scalar, t) => scalar_to_connect(scalar, t)?,
    })
}

fn map_schemas(schema: &Schema) -> Result<(SchemaRef, SchemaRef), DataError> {
    match (schema.key_schema.clone(), schema.value_schema.clone()) {
        (Some(k), Some(v)) => Ok((k, v)),
        _ => Err(bad("map")),
    }
}

fn map_key_value(k: &MapKey) -> PValue {
    match k {
        MapKey::Bool(b) => PValue::Bool(*b),
        MapKey::I32(i) => PValue::I32(*i),
        MapKey::I64(i) => PValue::I64(*i),
        MapKey::U32(i) => PValue::U32(*i),
        MapKey::U64(i) => PValue::U64(*i),
        MapKey::String(s) => PValue::String(s.clone()),
    }
}

fn scalar_to_connect(v: &PValue, t: SchemaType) -> Result<Value, DataError> {
    let narrow = |what: &str| bad(format!("{what} out of range for {}", t.as_str()));
    Ok(match (v, t) {
        (PValue::I32(i), SchemaType::Int8) => {
            Value::Int8(i8::try_from(*i).map_err(|_| narrow("int32"))?)
        }
        (PValue::I32(i), SchemaType::Int16) => {
            Value::Int16(i16::try_from(*i).map_err(|_| narrow("int32"))?)
        }
        (PValue::I32(i), SchemaType::Int64) => Value::Int64(i64::from(*i)),
        (PValue::I32(i), _) => Value::Int32(*i),
        (PValue::U32(i), _) => Value::Int64(i64::from(*i)),
        (PValue::I64(i), _) => Value::Int64(*i),
        // uint64 and fixed64 past i64::MAX wrap, as Java's long does.
        (PValue::U64(i), _) => Value::Int64(*i as i64),
        (PValue::F32(f), _) => Value::Float32(*f),
        (PValue::F64(f), _) => Value::Float64(*f),
        (PValue::Bool(b), _) => Value::Boolean(*b),
        (PValue::String(s), _) => Value::String(s.clone()),
        (PValue::Bytes(b), _) => Value::Bytes(b.to_vec()),
        (other, _) => return Err(bad(format!("{other:?} for {}", t.as_str()))),
    })
}

/// A message field's value: a logical type, a wrapper's primitive, or a struct.
fn message_to_connect(
    m: &DynamicMessage,
    schema: &SchemaRef,
    nulls: bool,
) -> Result<Value, DataError> {
    let int = |name: &str| match m.get_field_by_name(name).as_deref() {
        Some(PValue::I32(i)) => i64::from(*i),
        Some(PValue::I64(i)) => *i,
        Some(PValue::U32(i)) => i64::from(*i),
        _ => 0,
    };
    match m.descriptor().full_name() {
        "google.protobuf.Timestamp" => Ok(Value::Int64(
            int("seconds") * 1000 + int("nanos") / 1_000_000,
        )),
        "google.type.Date" => {
            let date = chrono::NaiveDate::from_ymd_opt(
                i32::try_from(int("year")).unwrap_or(1970),
                u32::try_from(int("month")).unwrap_or(1),
                u32::try_from(int("day")).unwrap_or(1),
            )
            .ok_or_else(|| bad("an invalid google.type.Date"))?;
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).ok_or_else(|| bad("epoch"))?;
            let days = (date - epoch).num_days();
            Ok(Value::Int32(
                i32::try_from(days).map_err(|_| bad("date out of range"))?,
            ))
        }
        "google.type.TimeOfDay" => {
            let ms = ((int("hours") * 60 + int("minutes")) * 60 + int("seconds")) * 1000
                + int("nanos") / 1_000_000;
            Ok(Value::Int32(
                i32::try_from(ms).map_err(|_| bad("time out of range"))?,
            ))
        }
        "confluent.type.Decimal" => match m.get_field_by_name("value").as_deref() {
            Some(PValue::Bytes(b)) => Ok(Value::Bytes(b.to_vec())),
            _ => Ok(Value::Bytes(vec![0])),
        },
        name if wrapper(name).is_some() && schema.schema_type != SchemaType::Struct => {
            match m.get_field_by_name("value") {
                Some(v) => scalar_to_connect(v.as_ref(), schema.schema_type),
                None => Ok(Value::Null),
            }
        }
        _ => to_connect_with(m, schema, nulls),
    }
}
