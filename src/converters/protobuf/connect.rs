//! Protobuf messages as Connect data and back, as Confluent's `ProtobufData` maps them: a message is a
//! struct named by its full name with every field optional; `int32`, `sint32` and `sfixed32` are
//! `INT32` (`INT8`/`INT16` when the field's `connect.type` says so), `uint32`, `fixed32` and the 64-bit
//! integers `INT64`; enums are `STRING`s; `repeated` fields arrays; maps maps; a `oneof` is an optional
//! struct field named `<oneof>_<index>` holding its fields; `confluent.type.Decimal`, `google.type.Date`,
//! `google.type.TimeOfDay` and `google.protobuf.Timestamp` are the logical types, and the
//! `google.protobuf` wrappers their optional primitives (`wrapper.for.raw.primitives`).

use std::collections::HashMap;

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage,
    Value as PValue,
};

use super::text::{CONNECT_TYPE, PRECISION};
use crate::data::logical::{self, DECIMAL_SCALE_PARAMETER};
use crate::data::{DataError, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};

/// The Connect parameter naming the enum a `STRING` came from.
pub const ENUM_PARAMETER: &str = "io.confluent.connect.protobuf.Enum";
/// The Connect name of a `oneof`'s struct.
pub const UNION_NAME: &str = "io.confluent.connect.protobuf.Union";

/// How messages are read.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// `generate.index.for.unions` (default true): a oneof's field is `<oneof>_<index>`, else `<oneof>`.
    pub index_for_unions: bool,
    /// `wrapper.for.raw.primitives` (default true): `google.protobuf.*Value` read as optional primitives.
    pub wrapper_for_raw_primitives: bool,
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

/// The Connect schema of a message.
pub fn message_schema(message: &MessageDescriptor, opts: ReadOptions) -> SchemaRef {
    let mut b = SchemaBuilder::struct_().name(message.full_name());
    let mut oneofs_done = Vec::new();
    for f in message.fields() {
        match f.containing_oneof().filter(|o| !o.is_synthetic()) {
            Some(o) => {
                let index = message.oneofs().position(|x| x == o).unwrap_or(0);
                if oneofs_done.contains(&index) {
                    continue;
                }
                oneofs_done.push(index);
                let mut u = SchemaBuilder::struct_().name(UNION_NAME).optional();
                for member in o.fields() {
                    u = u.field(member.name(), field_schema(&member, opts));
                }
                b = b.field(union_field_name(o.name(), index, opts), u.build());
            }
            None => b = b.field(f.name(), field_schema(&f, opts)),
        }
    }
    b.optional().build()
}

fn union_field_name(name: &str, index: usize, opts: ReadOptions) -> String {
    if opts.index_for_unions {
        format!("{name}_{index}")
    } else {
        name.to_string()
    }
}

/// The Connect schema of a field (optional, as every Protobuf field reads as absent or its default).
fn field_schema(field: &FieldDescriptor, opts: ReadOptions) -> SchemaRef {
    if field.is_map() {
        if let Kind::Message(entry) = field.kind() {
            let key = kind_schema(&entry.map_entry_key_field(), opts);
            let value = kind_schema(&entry.map_entry_value_field(), opts);
            return SchemaBuilder::map(key, value).optional().build();
        }
    }
    let one = kind_schema(field, opts);
    if field.is_list() {
        return SchemaBuilder::array(one).optional().build();
    }
    one
}

/// The wrapper types' primitives.
fn wrapper(full_name: &str) -> Option<SchemaType> {
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

/// The Connect schema of one value of a field (its item when repeated).
fn kind_schema(field: &FieldDescriptor, opts: ReadOptions) -> SchemaRef {
    let params = field_params(field);
    let b = match field.kind() {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            match params.get(CONNECT_TYPE).map(String::as_str) {
                Some("int8") => SchemaBuilder::new(SchemaType::Int8),
                Some("int16") => SchemaBuilder::new(SchemaType::Int16),
                _ => SchemaBuilder::new(SchemaType::Int32),
            }
        }
        Kind::Uint32 | Kind::Fixed32 | Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            SchemaBuilder::new(SchemaType::Int64)
        }
        Kind::Uint64 | Kind::Fixed64 => SchemaBuilder::new(SchemaType::Int64),
        Kind::Float => SchemaBuilder::new(SchemaType::Float32),
        Kind::Double => SchemaBuilder::new(SchemaType::Float64),
        Kind::Bool => SchemaBuilder::new(SchemaType::Boolean),
        Kind::String => SchemaBuilder::new(SchemaType::String),
        Kind::Bytes => SchemaBuilder::new(SchemaType::Bytes),
        Kind::Enum(e) => {
            SchemaBuilder::new(SchemaType::String).parameter(ENUM_PARAMETER, e.full_name())
        }
        Kind::Message(m) => match m.full_name() {
            "confluent.type.Decimal" => {
                let scale = params
                    .get(DECIMAL_SCALE_PARAMETER)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let mut d = logical::decimal(scale);
                if let Some(p) = params.get(PRECISION) {
                    d = d.parameter(PRECISION, p.clone());
                }
                d
            }
            "google.type.Date" => logical::date(),
            "google.type.TimeOfDay" => logical::time(),
            "google.protobuf.Timestamp" => logical::timestamp(),
            name => match wrapper(name).filter(|_| opts.wrapper_for_raw_primitives) {
                Some(t) => SchemaBuilder::new(t),
                None => return message_schema(&m, opts),
            },
        },
    };
    b.optional().build()
}

fn bad(what: impl std::fmt::Display) -> DataError {
    DataError::new(format!("Protobuf value mismatch: {what}"))
}

/// A message's value as a Connect struct of `schema` (made by [`message_schema`]).
///
/// # Errors
/// A value that does not fit its schema (it cannot, when the schema was made of the message).
pub fn to_connect(msg: &DynamicMessage, schema: &SchemaRef) -> Result<Value, DataError> {
    let desc = msg.descriptor();
    let mut out = Struct::new(schema.clone());
    for (i, field) in schema.fields.iter().enumerate() {
        let value = match desc.get_field_by_name(&field.name) {
            Some(f) => field_to_connect(msg, &f, &field.schema)?,
            None => {
                // A oneof's struct: the member that is set.
                let mut u = Struct::new(field.schema.clone());
                let mut any = false;
                for (j, member) in field.schema.fields.iter().enumerate() {
                    if let Some(f) = desc.get_field_by_name(&member.name) {
                        if msg.has_field(&f) {
                            any = true;
                            u.values[j] = field_to_connect(msg, &f, &member.schema)?;
                        }
                    }
                }
                if any {
                    Value::Struct(u)
                } else {
                    Value::Null
                }
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
) -> Result<Value, DataError> {
    if f.supports_presence() && !msg.has_field(f) {
        return Ok(Value::Null);
    }
    value_to_connect(msg.get_field(f).as_ref(), schema, f)
}

/// A field's value (`f` tells its kind: an enum's names, a map's entry).
fn value_to_connect(
    v: &PValue,
    schema: &SchemaRef,
    f: &FieldDescriptor,
) -> Result<Value, DataError> {
    Ok(match (v, schema.schema_type) {
        (PValue::List(items), SchemaType::Array) => {
            let item = schema.value_schema.clone().ok_or_else(|| bad("array"))?;
            Value::Array(
                items
                    .iter()
                    .map(|x| value_to_connect(x, &item, f))
                    .collect::<Result<_, _>>()?,
            )
        }
        (PValue::Map(map), SchemaType::Map) => {
            let (Some(ks), Some(vs)) = (schema.key_schema.clone(), schema.value_schema.clone())
            else {
                return Err(bad("map"));
            };
            let Kind::Message(entry) = f.kind() else {
                return Err(bad("map"));
            };
            let (kf, vf) = (entry.map_entry_key_field(), entry.map_entry_value_field());
            let mut entries = Vec::with_capacity(map.len());
            for (k, x) in map {
                let key = value_to_connect(&map_key_value(k), &ks, &kf)?;
                entries.push((key, value_to_connect(x, &vs, &vf)?));
            }
            entries.sort_by(|a, b| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)));
            Value::Map(entries)
        }
        (PValue::Message(m), _) => message_to_connect(m, schema)?,
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
fn message_to_connect(m: &DynamicMessage, schema: &SchemaRef) -> Result<Value, DataError> {
    let int = |name: &str| match m.get_field_by_name(name).as_deref() {
        Some(PValue::I32(i)) => i64::from(*i),
        Some(PValue::I64(i)) => *i,
        Some(PValue::U32(i)) => i64::from(*i),
        _ => 0,
    };
    match (m.descriptor().full_name(), schema.logical()) {
        ("google.protobuf.Timestamp", _) => Ok(Value::Int64(
            int("seconds") * 1000 + int("nanos") / 1_000_000,
        )),
        ("google.type.Date", _) => {
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
        ("google.type.TimeOfDay", _) => {
            let ms = ((int("hours") * 60 + int("minutes")) * 60 + int("seconds")) * 1000
                + int("nanos") / 1_000_000;
            Ok(Value::Int32(
                i32::try_from(ms).map_err(|_| bad("time out of range"))?,
            ))
        }
        ("confluent.type.Decimal", _) => match m.get_field_by_name("value").as_deref() {
            Some(PValue::Bytes(b)) => Ok(Value::Bytes(b.to_vec())),
            _ => Ok(Value::Bytes(vec![0])),
        },
        (name, _) if wrapper(name).is_some() && schema.schema_type != SchemaType::Struct => {
            match m.get_field_by_name("value") {
                Some(v) => scalar_to_connect(v.as_ref(), schema.schema_type),
                None => Ok(Value::Null),
            }
        }
        _ => to_connect(m, schema),
    }
}

/// A Connect value as the value of a message of `desc`.
///
/// # Errors
/// A value its schema does not allow (a required field null, a number out of range).
pub fn from_connect(
    schema: &Schema,
    value: &Value,
    desc: &MessageDescriptor,
) -> Result<DynamicMessage, DataError> {
    let mut msg = DynamicMessage::new(desc.clone());
    let Value::Struct(s) = value else {
        return Err(bad(format!("a struct is expected, not {value:?}")));
    };
    for (i, field) in schema.fields.iter().enumerate() {
        let v = s.values.get(i).unwrap_or(&Value::Null);
        if v.is_null() {
            if !field.schema.optional && field.schema.default_value.is_none() {
                return Err(bad(format!("field {} is required, and null", field.name)));
            }
            continue;
        }
        let f = desc.get_field_by_name(&field.name).ok_or_else(|| {
            bad(format!(
                "message {} has no field {}",
                desc.full_name(),
                field.name
            ))
        })?;
        msg.set_field(&f, field_from_connect(&field.schema, v, &f)?);
    }
    Ok(msg)
}

fn field_from_connect(
    schema: &Schema,
    v: &Value,
    f: &FieldDescriptor,
) -> Result<PValue, DataError> {
    match (v, f.kind()) {
        (Value::Array(items), kind) if f.is_list() => {
            let item = schema.value_schema.as_deref().ok_or_else(|| bad("array"))?;
            Ok(PValue::List(
                items
                    .iter()
                    .map(|x| one_from_connect(item, x, &kind))
                    .collect::<Result<_, _>>()?,
            ))
        }
        (Value::Map(entries), Kind::Message(entry)) if f.is_map() => {
            let (Some(ks), Some(vs)) =
                (schema.key_schema.as_deref(), schema.value_schema.as_deref())
            else {
                return Err(bad("map"));
            };
            let (kf, vf) = (entry.map_entry_key_field(), entry.map_entry_value_field());
            let mut out = HashMap::with_capacity(entries.len());
            for (k, x) in entries {
                let key = match one_from_connect(ks, k, &kf.kind())? {
                    PValue::Bool(b) => MapKey::Bool(b),
                    PValue::I32(i) => MapKey::I32(i),
                    PValue::I64(i) => MapKey::I64(i),
                    PValue::String(s) => MapKey::String(s),
                    other => return Err(bad(format!("map key {other:?}"))),
                };
                out.insert(key, one_from_connect(vs, x, &vf.kind())?);
            }
            Ok(PValue::Map(out))
        }
        (_, kind) => one_from_connect(schema, v, &kind),
    }
}

/// One Connect value as a value of Protobuf kind `kind`.
fn one_from_connect(schema: &Schema, v: &Value, kind: &Kind) -> Result<PValue, DataError> {
    Ok(match (v, kind) {
        (Value::Int8(i), _) => PValue::I32(i32::from(*i)),
        (Value::Int16(i), _) => PValue::I32(i32::from(*i)),
        (Value::Int32(i), Kind::Message(m)) => logical_message(schema, i64::from(*i), m)?,
        (Value::Int64(i), Kind::Message(m)) => logical_message(schema, *i, m)?,
        (Value::Int32(i), _) => PValue::I32(*i),
        (Value::Int64(i), _) => PValue::I64(*i),
        (Value::Float32(x), _) => PValue::F32(*x),
        (Value::Float64(x), _) => PValue::F64(*x),
        (Value::Boolean(b), _) => PValue::Bool(*b),
        (Value::String(s), Kind::Enum(e)) => PValue::EnumNumber(
            e.get_value_by_name(s)
                .map(|x| x.number())
                .ok_or_else(|| bad(format!("enum {} has no {s}", e.full_name())))?,
        ),
        (Value::String(s), _) => PValue::String(s.clone()),
        (Value::Bytes(b), Kind::Message(m)) => {
            let mut d = DynamicMessage::new(m.clone());
            d.set_field_by_name("value", PValue::Bytes(b.clone().into()));
            let scale = logical::decimal_scale(schema)?;
            d.set_field_by_name("scale", PValue::I32(scale));
            PValue::Message(d)
        }
        (Value::Bytes(b), _) => PValue::Bytes(b.clone().into()),
        (Value::Struct(_), Kind::Message(m)) => PValue::Message(from_connect(schema, v, m)?),
        (other, kind) => return Err(bad(format!("{other:?} for a field of kind {kind:?}"))),
    })
}

/// A Date, Time or Timestamp as its Google message.
fn logical_message(schema: &Schema, n: i64, m: &MessageDescriptor) -> Result<PValue, DataError> {
    let mut d = DynamicMessage::new(m.clone());
    let i32_of = |x: i64| i32::try_from(x).map_err(|_| bad(format!("{x} out of range")));
    match (m.full_name(), schema.logical()) {
        ("google.protobuf.Timestamp", _) => {
            d.set_field_by_name("seconds", PValue::I64(n.div_euclid(1000)));
            d.set_field_by_name(
                "nanos",
                PValue::I32(i32_of(n.rem_euclid(1000) * 1_000_000)?),
            );
        }
        ("google.type.Date", _) => {
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).ok_or_else(|| bad("epoch"))?;
            let date = epoch
                .checked_add_signed(chrono::TimeDelta::days(n))
                .ok_or_else(|| bad(format!("{n} days out of range")))?;
            use chrono::Datelike;
            d.set_field_by_name("year", PValue::I32(date.year()));
            d.set_field_by_name("month", PValue::I32(i32_of(i64::from(date.month()))?));
            d.set_field_by_name("day", PValue::I32(i32_of(i64::from(date.day()))?));
        }
        ("google.type.TimeOfDay", _) => {
            d.set_field_by_name("hours", PValue::I32(i32_of(n / 3_600_000)?));
            d.set_field_by_name("minutes", PValue::I32(i32_of(n / 60_000 % 60)?));
            d.set_field_by_name("seconds", PValue::I32(i32_of(n / 1000 % 60)?));
            d.set_field_by_name("nanos", PValue::I32(i32_of(n % 1000 * 1_000_000)?));
        }
        (name, _) => return Err(bad(format!("an integer for a field of message {name}"))),
    }
    Ok(PValue::Message(d))
}
