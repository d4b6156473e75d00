//! Avro's binary encoding of Connect values: written along the Connect schema (whose Avro form
//! [`super::connect::to_avro`] gives), read along the writer's Avro schema into the Connect schema
//! [`super::connect::to_connect`] made of it.

use super::named;
use super::schema::{AvroSchema, NamedKind, Node};
use crate::data::{DataError, Schema, SchemaRef, SchemaType, Struct, Value};

/// The most items one array or map block may announce before its items are read.
const MAX_BLOCK: i64 = 1 << 24;

pub(super) fn write_long(out: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

pub(super) fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

fn mismatch(schema: &Schema, value: &Value) -> DataError {
    DataError::new(format!(
        "Invalid value for the Avro schema: {} for a {} schema",
        value.java_class(),
        schema.schema_type
    ))
}

/// Writes `value` along `schema` (an optional schema as the union `["null", T]`, or `[T, "null"]` with a
/// default other than null); a string carrying an enum as a string.
#[cfg(test)]
pub fn encode(schema: &Schema, value: &Value, out: &mut Vec<u8>) -> Result<(), DataError> {
    encode_with(schema, value, false, out)
}

/// [`encode`], with `enums`: a string carrying an Avro enum (see [`super::named`]) written as the index
/// of its symbol, as the enum its schema is written as (`enhanced.avro.schema.support`, or a latest
/// schema with enums).
pub fn encode_with(
    schema: &Schema,
    value: &Value,
    enums: bool,
    out: &mut Vec<u8>,
) -> Result<(), DataError> {
    Encoder { enums }.value(schema, value, out)
}

/// Writes Connect values.
struct Encoder {
    /// Strings carrying an enum are written as the enum.
    enums: bool,
}

impl Encoder {
    fn value(&self, schema: &Schema, value: &Value, out: &mut Vec<u8>) -> Result<(), DataError> {
        let value = match (value, &schema.default_value) {
            (Value::Null, Some(d)) => d,
            _ => value,
        };
        if super::connect::is_union(schema) {
            return self.union(schema, value, out);
        }
        if schema.optional {
            // The union's branches: `["null", T]`, or `[T, "null"]` when a default other than null leads.
            let null_last = super::connect::null_last(schema);
            if value.is_null() {
                out.push(if null_last { 2 } else { 0 });
                return Ok(());
            }
            out.push(if null_last { 0 } else { 2 });
        } else if value.is_null() {
            return Err(DataError::new(format!(
                "Invalid value: null used for required value, schema type: {}",
                schema.schema_type
            )));
        }
        match (schema.schema_type, value) {
            (SchemaType::Int8, Value::Int8(n)) => write_long(out, i64::from(*n)),
            (SchemaType::Int16, Value::Int16(n)) => write_long(out, i64::from(*n)),
            (SchemaType::Int32, Value::Int32(n)) => write_long(out, i64::from(*n)),
            (SchemaType::Int64, Value::Int64(n)) => write_long(out, *n),
            (SchemaType::Float32, Value::Float32(f)) => out.extend_from_slice(&f.to_le_bytes()),
            (SchemaType::Float64, Value::Float64(f)) => out.extend_from_slice(&f.to_le_bytes()),
            (SchemaType::Boolean, Value::Boolean(b)) => out.push(u8::from(*b)),
            (SchemaType::String, Value::String(s)) => self.string(schema, s, out)?,
            (SchemaType::Bytes, Value::Bytes(b)) => match named::fixed_size(schema) {
                Some(size) => write_fixed(schema, size, b, out)?,
                None => write_bytes(out, b),
            },
            (SchemaType::Array, Value::Array(items)) => {
                let item = child(schema.value_schema.as_deref())?;
                if !items.is_empty() {
                    write_long(out, items.len() as i64);
                    for v in items {
                        self.value(item, v, out)?;
                    }
                }
                out.push(0);
            }
            (SchemaType::Map, Value::Map(entries)) => {
                let key = child(schema.key_schema.as_deref())?;
                let val = child(schema.value_schema.as_deref())?;
                if !entries.is_empty() {
                    write_long(out, entries.len() as i64);
                    for (k, v) in entries {
                        // A string key as in an Avro map, any other as a MapEntry record: key, then value.
                        self.value(key, k, out)?;
                        self.value(val, v, out)?;
                    }
                }
                out.push(0);
            }
            (SchemaType::Struct, Value::Struct(s)) => {
                for f in &schema.fields {
                    let v = s.values.get(f.index).unwrap_or(&Value::Null);
                    self.value(&f.schema, v, out)?;
                }
            }
            _ => return Err(mismatch(schema, value)),
        }
        Ok(())
    }

    /// A string, or the index of its symbol when it carries an enum written as the enum.
    fn string(&self, schema: &Schema, s: &str, out: &mut Vec<u8>) -> Result<(), DataError> {
        let symbols = if self.enums {
            named::enum_symbols(schema)
        } else {
            None
        };
        match symbols {
            None => write_bytes(out, s.as_bytes()),
            Some(symbols) => {
                let i = symbols.iter().position(|x| *x == s).ok_or_else(|| {
                    DataError::new(format!(
                        "{s} is not a symbol of the Avro enum {} ({})",
                        named::enum_name(schema).unwrap_or_default(),
                        symbols.join(", ")
                    ))
                })?;
                write_long(out, i as i64);
            }
        }
        Ok(())
    }

    /// A struct read from a general union: the branch of its first field that is set (null when none is and
    /// the union has null).
    fn union(&self, schema: &Schema, value: &Value, out: &mut Vec<u8>) -> Result<(), DataError> {
        let offset = i64::from(schema.optional);
        let set = match value {
            Value::Struct(s) => s
                .values
                .iter()
                .enumerate()
                .find(|(_, v)| !v.is_null())
                .and_then(|(i, v)| Some((i, v, schema.fields.get(i)?))),
            Value::Null => None,
            _ => return Err(mismatch(schema, value)),
        };
        match set {
            Some((i, v, field)) => {
                write_long(out, offset + i as i64);
                let mut branch = (*field.schema).clone();
                branch.optional = false;
                self.value(&branch, v, out)
            }
            None if schema.optional => {
                out.push(0);
                Ok(())
            }
            None => Err(DataError::new(format!(
                "A union value with no branch set for the required union {}",
                schema
                    .fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// A fixed type's value: exactly `size` bytes, a decimal's sign-extended to them.
fn write_fixed(schema: &Schema, size: usize, b: &[u8], out: &mut Vec<u8>) -> Result<(), DataError> {
    let what = schema.name.as_deref().unwrap_or_default();
    if b.len() == size {
        out.extend_from_slice(b);
        return Ok(());
    }
    if b.len() < size && schema.logical().is_some() {
        let sign = if b.first().is_some_and(|x| x & 0x80 != 0) {
            0xff
        } else {
            0
        };
        out.extend(std::iter::repeat_n(sign, size - b.len()));
        out.extend_from_slice(b);
        return Ok(());
    }
    Err(DataError::new(format!(
        "A value of {} bytes for the Avro fixed type {what} of {size} bytes",
        b.len()
    )))
}

fn child(s: Option<&Schema>) -> Result<&Schema, DataError> {
    s.ok_or_else(|| DataError::new("A Connect array or map schema has no child schema"))
}

fn child_ref(s: Option<&SchemaRef>) -> Result<&SchemaRef, DataError> {
    s.ok_or_else(|| DataError::new("A Connect array or map schema has no child schema"))
}

/// Reads Avro binary data.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    schema: &'a AvroSchema,
}

impl<'a> Reader<'a> {
    /// A reader of `data` written with `schema`.
    pub fn new(data: &'a [u8], schema: &'a AvroSchema) -> Self {
        Reader {
            data,
            pos: 0,
            schema,
        }
    }

    /// Whether every byte was read.
    pub fn done(&self) -> bool {
        self.pos == self.data.len()
    }

    fn short() -> DataError {
        DataError::new("The Avro data ended early")
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], DataError> {
        let end = self.pos.checked_add(n).ok_or_else(Self::short)?;
        let bytes = self.data.get(self.pos..end).ok_or_else(Self::short)?;
        self.pos = end;
        Ok(bytes)
    }

    pub(super) fn long(&mut self) -> Result<i64, DataError> {
        let mut z: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            z |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok((z >> 1) as i64 ^ -((z & 1) as i64));
            }
        }
        Err(DataError::new("An Avro varint is longer than 10 bytes"))
    }

    pub(super) fn int(&mut self) -> Result<i32, DataError> {
        i32::try_from(self.long()?).map_err(|_| DataError::new("An Avro int is out of range"))
    }

    pub(super) fn bytes(&mut self) -> Result<Vec<u8>, DataError> {
        let n =
            usize::try_from(self.long()?).map_err(|_| DataError::new("A negative Avro length"))?;
        Ok(self.take(n)?.to_vec())
    }

    /// The item count of the next block (0 at the end); a negative count is followed by the block's size.
    fn block(&mut self) -> Result<i64, DataError> {
        let n = self.long()?;
        let n = if n < 0 {
            self.long()?;
            -n
        } else {
            n
        };
        if n > MAX_BLOCK || n as usize > self.data.len() - self.pos + 1 {
            return Err(DataError::new(format!("An Avro block announces {n} items")));
        }
        Ok(n)
    }

    /// Reads the items of an array or map, block after block up to the empty one, with `item`.
    pub(super) fn items<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, DataError>,
    ) -> Result<Vec<T>, DataError> {
        let mut out = Vec::new();
        loop {
            let n = self.block()?;
            if n == 0 {
                return Ok(out);
            }
            for _ in 0..n {
                out.push(item(self)?);
            }
        }
    }

    /// Reads a value written as `node`, into the Connect schema `schema` made of it.
    pub fn value(&mut self, node: &Node, schema: &SchemaRef) -> Result<Value, DataError> {
        Ok(match node {
            Node::Union(branches) => {
                let i = usize::try_from(self.long()?)
                    .ok()
                    .filter(|i| *i < branches.len())
                    .ok_or_else(|| DataError::new("An Avro union index is out of range"))?;
                if super::connect::is_union(schema) {
                    return self.union_struct(branches, i, schema);
                }
                return self.value(&branches[i], schema);
            }
            Node::Primitive(p) => self.primitive(p, schema)?,
            Node::Array(items) => {
                if schema.schema_type == SchemaType::Map {
                    return self.entries(items, schema);
                }
                let item = child_ref(schema.value_schema.as_ref())?;
                Value::Array(self.items(|r| r.value(items, item))?)
            }
            Node::Map(values) => {
                let val = child_ref(schema.value_schema.as_ref())?;
                Value::Map(self.items(|r| {
                    let k = String::from_utf8(r.bytes()?)
                        .map_err(|_| DataError::new("An Avro map key is not UTF-8"))?;
                    Ok((Value::String(k), r.value(values, val)?))
                })?)
            }
            Node::Named(name) => self.named(name, schema)?,
        })
    }

    fn primitive(&mut self, p: &str, schema: &Schema) -> Result<Value, DataError> {
        Ok(match p {
            "null" => Value::Null,
            "boolean" => Value::Boolean(self.take(1)?[0] != 0),
            "int" => {
                let n = self.int()?;
                match schema.schema_type {
                    SchemaType::Int8 => Value::Int8(n as i8),
                    SchemaType::Int16 => Value::Int16(n as i16),
                    _ => Value::Int32(n),
                }
            }
            "long" => Value::Int64(self.long()?),
            "float" => {
                let b: [u8; 4] = self.take(4)?.try_into().map_err(|_| Self::short())?;
                Value::Float32(f32::from_le_bytes(b))
            }
            "double" => {
                let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| Self::short())?;
                Value::Float64(f64::from_le_bytes(b))
            }
            "bytes" => Value::Bytes(self.bytes()?),
            _ => Value::String(
                String::from_utf8(self.bytes()?)
                    .map_err(|_| DataError::new("An Avro string is not UTF-8"))?,
            ),
        })
    }

    /// Branch `i` of a general union, as the struct with that branch's field set.
    fn union_struct(
        &mut self,
        branches: &[Node],
        i: usize,
        schema: &SchemaRef,
    ) -> Result<Value, DataError> {
        let null = Node::Primitive("null");
        if branches[i] == null {
            return Ok(Value::Null);
        }
        let field = branches[..i].iter().filter(|b| **b != null).count();
        let f = schema
            .fields
            .get(field)
            .ok_or_else(|| DataError::new("An Avro union branch without its Connect field"))?;
        let mut s = Struct::new(schema.clone());
        s.values[field] = self.value(&branches[i], &f.schema)?;
        Ok(Value::Struct(s))
    }

    /// An array of MapEntry records read as a map.
    fn entries(&mut self, items: &Node, schema: &SchemaRef) -> Result<Value, DataError> {
        let Node::Named(name) = items else {
            return Err(DataError::new(
                "A Connect map read from an Avro array of non-records",
            ));
        };
        let Some(NamedKind::Record(fields)) = self.schema.lookup(name).map(|n| n.kind.clone())
        else {
            return Err(DataError::new(
                "A Connect map read from an Avro array of non-records",
            ));
        };
        let (Some(kf), Some(vf)) = (fields.first(), fields.get(1)) else {
            return Err(DataError::new("A MapEntry record without key and value"));
        };
        let key = child_ref(schema.key_schema.as_ref())?;
        let val = child_ref(schema.value_schema.as_ref())?;
        let entries = self.items(|r| Ok((r.value(&kf.node, key)?, r.value(&vf.node, val)?)))?;
        Ok(Value::Map(entries))
    }

    fn named(&mut self, name: &str, schema: &SchemaRef) -> Result<Value, DataError> {
        let kind = self
            .schema
            .lookup(name)
            .map(|n| n.kind.clone())
            .ok_or_else(|| DataError::new(format!("Unknown Avro type {name}")))?;
        Ok(match kind {
            NamedKind::Enum(symbols, _) => {
                let i = usize::try_from(self.long()?).ok();
                let symbol = i.and_then(|i| symbols.get(i)).ok_or_else(|| {
                    DataError::new(format!("An Avro enum index is out of range for {name}"))
                })?;
                Value::String(symbol.clone())
            }
            NamedKind::Fixed(size) => Value::Bytes(self.take(size)?.to_vec()),
            NamedKind::Record(fields) => {
                let mut s = Struct::new(schema.clone());
                for (f, cf) in fields.iter().zip(&schema.fields) {
                    s.values[cf.index] = self.value(&f.node, &cf.schema)?;
                }
                Value::Struct(s)
            }
        })
    }
}
