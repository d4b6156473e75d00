//! Compatibility between Protobuf schemas by Confluent's rules: messages matched by name (the package
//! aside: a package change alone is compatible), fields by number. What the writer's data holds must
//! be readable by the reader: a message removed, a field's kind changed (scalar, message or enum, map),
//! a scalar changed outside its wire-compatible group (`int32`/`uint32`/`int64`/`uint64`/`bool`;
//! `sint32`/`sint64`; `string`/`bytes`; `fixed32`/`sfixed32`; `fixed64`/`sfixed64`), a message or enum
//! type changed, a proto2 `required` field added or removed, a field removed from its `oneof`, or several
//! existing fields moved into one new `oneof` are incompatible; fields and messages added, fields
//! removed, renamed, numeric or string fields made `repeated` and enum values changed are not.

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor, Syntax};

use super::schema::ProtoSchema;
use crate::converters::registry::Level;

/// Checks `new` against `previous` (oldest first) at `level`: the messages of every incompatibility.
pub fn check(level: Level, new: &ProtoSchema, previous: &[ProtoSchema]) -> Vec<String> {
    level.check(new, previous, can_read)
}

/// Whether `reader` reads what `writer` wrote: the incompatibilities, Confluent's names first.
pub fn can_read(reader: &ProtoSchema, writer: &ProtoSchema) -> Vec<String> {
    let mut out = Vec::new();
    let proto2 = writer.file.syntax() == Syntax::Proto2 || reader.file.syntax() == Syntax::Proto2;
    for w in all_messages(writer) {
        let local = local_name(&w);
        let Some(r) = all_messages(reader)
            .into_iter()
            .find(|r| local_name(r) == local)
        else {
            out.push(format!(
                "MESSAGE_REMOVED #/{local}: the message in the writer schema is missing in the reader schema"
            ));
            continue;
        };
        message(&w, &r, &local, proto2, &mut out);
    }
    out
}

/// Every message of the schema's file, nested ones too, map entries aside.
fn all_messages(schema: &ProtoSchema) -> Vec<MessageDescriptor> {
    let mut out = Vec::new();
    let mut todo: Vec<MessageDescriptor> = schema.file.messages().collect();
    while let Some(m) = todo.pop() {
        todo.extend(m.child_messages());
        if !m.is_map_entry() {
            out.push(m);
        }
    }
    out
}

/// A message's or enum's name without its file's package.
fn local(full: &str, package: &str) -> String {
    match full.strip_prefix(package) {
        Some(rest) if !package.is_empty() => rest.trim_start_matches('.').to_string(),
        _ => full.to_string(),
    }
}

fn local_name(m: &MessageDescriptor) -> String {
    local(m.full_name(), m.package_name())
}

/// A field's kind as Confluent's rules class it.
#[derive(PartialEq, Eq, Debug)]
enum Class {
    Scalar,
    Named,
    Map,
}

fn class(f: &FieldDescriptor) -> Class {
    if f.is_map() {
        return Class::Map;
    }
    match f.kind() {
        Kind::Message(_) | Kind::Enum(_) => Class::Named,
        _ => Class::Scalar,
    }
}

/// The wire-compatible group of a scalar kind.
fn group(kind: &Kind) -> u8 {
    match kind {
        Kind::Int32 | Kind::Uint32 | Kind::Int64 | Kind::Uint64 | Kind::Bool => 1,
        Kind::Sint32 | Kind::Sint64 => 2,
        Kind::String | Kind::Bytes => 3,
        Kind::Fixed32 | Kind::Sfixed32 => 4,
        Kind::Fixed64 | Kind::Sfixed64 => 5,
        Kind::Float => 6,
        Kind::Double => 7,
        Kind::Message(_) | Kind::Enum(_) => 0,
    }
}

/// The local name of a message or enum field's type.
fn named_type(kind: &Kind) -> Option<String> {
    match kind {
        Kind::Message(m) => Some(local_name(m)),
        Kind::Enum(e) => Some(local(e.full_name(), e.package_name())),
        _ => None,
    }
}

/// A field's real `oneof` (not proto3 `optional`'s synthetic one).
fn oneof_of(f: &FieldDescriptor) -> Option<String> {
    f.containing_oneof()
        .filter(|o| !o.is_synthetic())
        .map(|o| o.name().to_string())
}

/// The incompatibilities between two fields of one number.
fn field(
    w: &FieldDescriptor,
    r: &FieldDescriptor,
    path: &str,
    proto2: bool,
    out: &mut Vec<String>,
) {
    let (wc, rc) = (class(w), class(r));
    if wc != rc {
        out.push(format!(
            "FIELD_KIND_CHANGED #/{path}: the field's kind changed from {wc:?} to {rc:?}"
        ));
    } else if wc == Class::Map {
        if let (Kind::Message(wm), Kind::Message(rm)) = (w.kind(), r.kind()) {
            let key = (wm.map_entry_key_field(), rm.map_entry_key_field());
            let value = (wm.map_entry_value_field(), rm.map_entry_value_field());
            field(&key.0, &key.1, &format!("{path}/key"), proto2, out);
            field(&value.0, &value.1, &format!("{path}/value"), proto2, out);
        }
    } else if wc == Class::Scalar {
        if group(&w.kind()) != group(&r.kind()) {
            out.push(format!(
                "FIELD_SCALAR_KIND_CHANGED #/{path}: the field's type changed from {:?} to {:?}",
                w.kind(),
                r.kind()
            ));
        }
    } else if named_type(&w.kind()) != named_type(&r.kind()) {
        out.push(format!(
            "FIELD_NAMED_TYPE_CHANGED #/{path}: the field's type changed from {} to {}",
            named_type(&w.kind()).unwrap_or_default(),
            named_type(&r.kind()).unwrap_or_default()
        ));
    }
    if proto2 && r.is_required() && !w.is_required() {
        out.push(format!(
            "REQUIRED_FIELD_ADDED #/{path}: the field became required"
        ));
    }
    if let Some(o) = oneof_of(w) {
        if oneof_of(r).as_deref() != Some(o.as_str()) {
            out.push(format!(
                "ONEOF_FIELD_REMOVED #/{path}: the field left oneof {o}"
            ));
        }
    }
}

/// The incompatibilities between two messages of one name.
fn message(
    w: &MessageDescriptor,
    r: &MessageDescriptor,
    path: &str,
    proto2: bool,
    out: &mut Vec<String>,
) {
    for wf in w.fields() {
        let at = format!("{path}/{}", wf.number());
        match r.get_field(wf.number()) {
            Some(rf) => field(&wf, &rf, &at, proto2, out),
            None if proto2 && wf.is_required() => out.push(format!(
                "REQUIRED_FIELD_REMOVED #/{at}: the required field {} was removed",
                wf.name()
            )),
            None => {
                if let Some(o) = oneof_of(&wf) {
                    out.push(format!(
                        "ONEOF_FIELD_REMOVED #/{at}: the field {} of oneof {o} was removed",
                        wf.name()
                    ));
                }
            }
        }
    }
    for rf in r.fields() {
        if proto2 && rf.is_required() && w.get_field(rf.number()).is_none() {
            out.push(format!(
                "REQUIRED_FIELD_ADDED #/{path}/{}: the required field {} was added",
                rf.number(),
                rf.name()
            ));
        }
    }
    for oneof in r.oneofs().filter(|o| !o.is_synthetic()) {
        let moved = oneof
            .fields()
            .filter(|rf| {
                w.get_field(rf.number())
                    .is_some_and(|wf| oneof_of(&wf).is_none())
            })
            .count();
        if moved > 1 {
            out.push(format!(
                "MULTIPLE_FIELDS_MOVED_TO_ONEOF #/{path}/{}: {moved} existing fields moved into it",
                oneof.name()
            ));
        }
    }
}
