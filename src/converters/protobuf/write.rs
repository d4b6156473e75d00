//! Connect values as Protobuf messages, as Confluent's `ProtobufData` writes them: struct fields by
//! name (scrubbed names too), a `io.confluent.connect.protobuf.Union` struct as its first field set, enum
//! strings by their number parameter or name, integers as the field's kind, optional primitives in
//! `google.protobuf` wrappers where the field is one, and a value that is not a struct as the wrapper
//! message of its type.

use std::collections::HashMap;

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, Value as PValue,
};

use super::connect::{bad, entry_fields, map_entry, wrapper};
use super::names::{is_union, scrub, ENUM_PARAMETER};
use crate::data::logical;
use crate::data::{DataError, Schema, SchemaType, Value};

/// The field of `desc` a Connect field name names: as it is, else scrubbed (`scrub.invalid.names`).
fn field_named(desc: &MessageDescriptor, name: &str) -> Result<FieldDescriptor, DataError> {
    desc.get_field_by_name(name)
        .or_else(|| desc.get_field_by_name(&scrub(name)))
        .ok_or_else(|| bad(format!("message {} has no field {name}", desc.full_name())))
}

fn set(msg: &mut DynamicMessage, f: &FieldDescriptor, v: PValue) -> Result<(), DataError> {
    msg.try_set_field(f, v)
        .map_err(|e| bad(format!("field {}: {e}", f.name())))
}

/// A Connect value as a message of `desc`: a struct's fields, or a primitive in its wrapper message.
///
/// # Errors
/// A value its schema does not allow (a required field null, a number out of range), or one that does
/// not fit the message.
pub fn from_connect(
    schema: &Schema,
    value: &Value,
    desc: &MessageDescriptor,
) -> Result<DynamicMessage, DataError> {
    let mut msg = DynamicMessage::new(desc.clone());
    if schema.schema_type != SchemaType::Struct && wrapper(desc.full_name()).is_some() {
        let f = field_named(desc, "value")?;
        let v = one_from_connect(schema, value, &f.kind())?;
        set(&mut msg, &f, v)?;
        return Ok(msg);
    }
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
        if is_union(field.schema.name.as_deref()) {
            let Value::Struct(u) = v else {
                return Err(bad(format!("oneof {} is not a struct", field.name)));
            };
            let set_member = field
                .schema
                .fields
                .iter()
                .zip(&u.values)
                .find(|(_, x)| !x.is_null());
            let Some((member, x)) = set_member else {
                return Err(bad(format!(
                    "oneof {}: Cannot find non-null field",
                    field.name
                )));
            };
            let f = field_named(desc, &member.name)?;
            let pv = field_from_connect(&member.schema, x, &f)?;
            set(&mut msg, &f, pv)?;
            continue;
        }
        let f = field_named(desc, &field.name)?;
        if matches!(v, Value::Array(a) if a.is_empty()) {
            continue;
        }
        let pv = field_from_connect(&field.schema, v, &f)?;
        set(&mut msg, &f, pv)?;
    }
    Ok(msg)
}

fn field_from_connect(
    schema: &Schema,
    v: &Value,
    f: &FieldDescriptor,
) -> Result<PValue, DataError> {
    match v {
        Value::Array(items) if f.is_list() && schema.schema_type == SchemaType::Array => {
            let item = schema.value_schema.as_deref().ok_or_else(|| bad("array"))?;
            let kind = f.kind();
            Ok(PValue::List(
                items
                    .iter()
                    .map(|x| one_from_connect(item, x, &kind))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Value::Map(entries) => {
            let entry =
                map_entry(f).ok_or_else(|| bad(format!("field {} is not a map", f.name())))?;
            let (Some(ks), Some(vs)) =
                (schema.key_schema.as_deref(), schema.value_schema.as_deref())
            else {
                return Err(bad("map"));
            };
            let (kf, vf) = entry_fields(&entry).ok_or_else(|| bad("map entry"))?;
            if f.is_map() {
                let mut out = HashMap::with_capacity(entries.len());
                for (k, x) in entries {
                    let key = match one_from_connect(ks, k, &kf.kind())? {
                        PValue::Bool(b) => MapKey::Bool(b),
                        PValue::I32(i) => MapKey::I32(i),
                        PValue::I64(i) => MapKey::I64(i),
                        PValue::U32(i) => MapKey::U32(i),
                        PValue::U64(i) => MapKey::U64(i),
                        PValue::String(s) => MapKey::String(s),
                        other => return Err(bad(format!("map key {other:?}"))),
                    };
                    out.insert(key, one_from_connect(vs, x, &vf.kind())?);
                }
                return Ok(PValue::Map(out));
            }
            // Confluent's repeated entry messages.
            let mut out = Vec::with_capacity(entries.len());
            for (k, x) in entries {
                let mut m = DynamicMessage::new(entry.clone());
                if !k.is_null() {
                    let key = field_from_connect(ks, k, &kf)?;
                    set(&mut m, &kf, key)?;
                }
                if !x.is_null() {
                    let value = field_from_connect(vs, x, &vf)?;
                    set(&mut m, &vf, value)?;
                }
                out.push(PValue::Message(m));
            }
            Ok(PValue::List(out))
        }
        _ => one_from_connect(schema, v, &f.kind()),
    }
}

/// An integer as a value of Protobuf kind `kind`.
fn int_from_connect(n: i64, kind: &Kind) -> Result<PValue, DataError> {
    let i32_of = |n: i64| i32::try_from(n).map_err(|_| bad(format!("{n} out of range for int32")));
    Ok(match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => PValue::I32(i32_of(n)?),
        // As Java's casts do: the bits kept.
        Kind::Uint32 | Kind::Fixed32 => PValue::U32(n as u32),
        Kind::Uint64 | Kind::Fixed64 => PValue::U64(n as u64),
        Kind::Enum(_) => PValue::EnumNumber(i32_of(n)?),
        Kind::Float => PValue::F32(n as f32),
        Kind::Double => PValue::F64(n as f64),
        _ => PValue::I64(n),
    })
}

/// One Connect value as a value of Protobuf kind `kind`.
fn one_from_connect(schema: &Schema, v: &Value, kind: &Kind) -> Result<PValue, DataError> {
    if let Kind::Message(m) = kind {
        if wrapper(m.full_name()).is_some() && !matches!(v, Value::Struct(_)) {
            // An optional primitive in its wrapper (`wrapper.for.nullables`).
            let mut d = DynamicMessage::new(m.clone());
            let f = field_named(m, "value")?;
            let x = one_from_connect(schema, v, &f.kind())?;
            set(&mut d, &f, x)?;
            return Ok(PValue::Message(d));
        }
    }
    Ok(match (v, kind) {
        (Value::Int8(i), Kind::Message(m)) => logical_message(schema, i64::from(*i), m)?,
        (Value::Int16(i), Kind::Message(m)) => logical_message(schema, i64::from(*i), m)?,
        (Value::Int32(i), Kind::Message(m)) => logical_message(schema, i64::from(*i), m)?,
        (Value::Int64(i), Kind::Message(m)) => logical_message(schema, *i, m)?,
        (Value::Int8(i), _) => int_from_connect(i64::from(*i), kind)?,
        (Value::Int16(i), _) => int_from_connect(i64::from(*i), kind)?,
        (Value::Int32(i), _) => int_from_connect(i64::from(*i), kind)?,
        (Value::Int64(i), _) => int_from_connect(*i, kind)?,
        (Value::Float32(x), Kind::Double) => PValue::F64(f64::from(*x)),
        (Value::Float32(x), _) => PValue::F32(*x),
        (Value::Float64(x), Kind::Float) => PValue::F32(*x as f32),
        (Value::Float64(x), _) => PValue::F64(*x),
        (Value::Boolean(b), _) => PValue::Bool(*b),
        (Value::String(s), Kind::Enum(e)) => {
            let tag = schema.parameters.get(&format!("{ENUM_PARAMETER}.{s}"));
            let number = match tag.and_then(|t| t.parse::<i32>().ok()) {
                Some(n) => Some(n),
                None => e.get_value_by_name(s).map(|x| x.number()),
            };
            PValue::EnumNumber(
                number.ok_or_else(|| bad(format!("enum {} has no {s}", e.full_name())))?,
            )
        }
        (Value::String(s), _) => PValue::String(s.clone()),
        (Value::Bytes(b), Kind::Message(m)) if m.full_name() == "confluent.type.Decimal" => {
            let mut d = DynamicMessage::new(m.clone());
            let scale = logical::decimal_scale(schema)?;
            d.try_set_field_by_name("value", PValue::Bytes(b.clone().into()))
                .and_then(|()| d.try_set_field_by_name("scale", PValue::I32(scale)))
                .map_err(|e| bad(e.to_string()))?;
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
    let mut put = |name: &str, v: PValue| {
        d.try_set_field_by_name(name, v)
            .map_err(|e| bad(e.to_string()))
    };
    match (m.full_name(), schema.logical()) {
        ("google.protobuf.Timestamp", _) => {
            put("seconds", PValue::I64(n.div_euclid(1000)))?;
            put(
                "nanos",
                PValue::I32(i32_of(n.rem_euclid(1000) * 1_000_000)?),
            )?;
        }
        ("google.type.Date", _) => {
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).ok_or_else(|| bad("epoch"))?;
            let date = epoch
                .checked_add_signed(chrono::TimeDelta::days(n))
                .ok_or_else(|| bad(format!("{n} days out of range")))?;
            use chrono::Datelike;
            put("year", PValue::I32(date.year()))?;
            put("month", PValue::I32(i32_of(i64::from(date.month()))?))?;
            put("day", PValue::I32(i32_of(i64::from(date.day()))?))?;
        }
        ("google.type.TimeOfDay", _) => {
            put("hours", PValue::I32(i32_of(n / 3_600_000)?))?;
            put("minutes", PValue::I32(i32_of(n / 60_000 % 60)?))?;
            put("seconds", PValue::I32(i32_of(n / 1000 % 60)?))?;
            put("nanos", PValue::I32(i32_of(n % 1000 * 1_000_000)?))?;
        }
        (name, _) => return Err(bad(format!("an integer for a field of message {name}"))),
    }
    Ok(PValue::Message(d))
}
