//! Items into record keys and values: CSV rows and JSON objects into `key.schema`/`value.schema`
//! structs, lines and schemaless JSON into strings; and schema generation.

use std::fs::File;
use std::io::BufReader;

use serde_json::Value as Json;

use super::config::{Format, SpoolConfig};
use super::files::InputFile;
use super::parse::Parser;
use super::readers::Item;
use crate::data::DataError;
use crate::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};

/// The key and value schemas of the CSV and JSON formats.
#[derive(Clone, Debug)]
pub struct Schemas {
    pub key: SchemaRef,
    pub value: SchemaRef,
}

/// A schema and a value.
pub type Part = (Option<SchemaRef>, Value);

/// The key and value of an item's record.
pub fn key_and_value(
    format: Format,
    parser: &Parser,
    schemas: Option<&Schemas>,
    columns: &[String],
    item: Item,
) -> Result<(Part, Part), DataError> {
    let none = (None, Value::Null);
    match (format, item) {
        (Format::Lines, Item::Line(line)) => {
            Ok((none, (Some(Schema::string()), Value::String(line))))
        }
        (Format::SchemaLessJson, Item::Json(json)) => Ok((
            none,
            (Some(Schema::string()), Value::String(json.to_string())),
        )),
        (Format::Csv, Item::Row(row)) => {
            let schemas = schemas.ok_or("no schema")?;
            csv_record(parser, schemas, columns, &row)
        }
        (Format::Json, Item::Json(json)) => {
            let schemas = schemas.ok_or("no schema")?;
            json_record(parser, schemas, &json)
        }
        _ => Err("unexpected item".into()),
    }
}

fn csv_record(
    parser: &Parser,
    schemas: &Schemas,
    columns: &[String],
    row: &[Option<String>],
) -> Result<(Part, Part), DataError> {
    let mut key = Struct::new(schemas.key.clone());
    let mut value = Struct::new(schemas.value.clone());
    for (i, name) in columns.iter().enumerate() {
        let input = row.get(i).ok_or_else(|| {
            DataError(format!(
                "the row has {} field(s); column '{name}' is missing",
                row.len()
            ))
        })?;
        let Some(field) = schemas.value.field(name) else {
            continue;
        };
        let parsed = parser
            .parse_str(&field.schema, input.as_deref())
            .map_err(|e| {
                DataError(format!(
                    "Exception thrown while parsing data for '{name}': {e}"
                ))
            })?;
        if let Some(k) = schemas.key.field(name) {
            key.values[k.index] = parsed.clone();
        }
        value.values[field.index] = parsed;
    }
    finish(schemas, key, value)
}

fn json_record(parser: &Parser, schemas: &Schemas, json: &Json) -> Result<(Part, Part), DataError> {
    let obj = json.as_object();
    let mut key = Struct::new(schemas.key.clone());
    let mut value = Struct::new(schemas.value.clone());
    for field in &schemas.value.fields {
        let parsed = parser
            .parse_json(&field.schema, obj.and_then(|o| o.get(&field.name)))
            .map_err(|e| {
                DataError(format!(
                    "Exception thrown while parsing data for '{}': {e}",
                    field.name
                ))
            })?;
        if let Some(k) = schemas.key.field(&field.name) {
            key.values[k.index] = parsed.clone();
        }
        value.values[field.index] = parsed;
    }
    finish(schemas, key, value)
}

fn finish(schemas: &Schemas, key: Struct, value: Struct) -> Result<(Part, Part), DataError> {
    key.validate().map_err(|e| e.to_string())?;
    value.validate().map_err(|e| e.to_string())?;
    Ok((
        (Some(schemas.key.clone()), Value::Struct(key)),
        (Some(schemas.value.clone()), Value::Struct(value)),
    ))
}

/// Generates the key and value schemas from a file, as the original's schema generators: every field
/// an optional string; CSV fields from the header row (or `column01`, `column02`, ... from the first
/// row), JSON fields from the first object; the key has the `schema.generation.key.fields` found.
/// None for a file with nothing to generate from (it has no records either).
pub fn generate(
    config: &SpoolConfig,
    file: &InputFile,
    header: &[String],
) -> Result<Option<Schemas>, DataError> {
    let settings = config.schemas.as_ref().ok_or("no schema settings")?;
    let given = (settings.key_schema.clone(), settings.value_schema.clone());
    if let (Some(key), Some(value)) = given {
        return Ok(Some(Schemas { key, value }));
    }
    let fields = match config.format {
        Format::Csv if !header.is_empty() => header.to_vec(),
        Format::Csv => first_csv_row_width(config, file)?
            .map(|n| (1..=n).map(|i| format!("column{i:02}")).collect())
            .unwrap_or_default(),
        _ => first_json_object_keys(file)?,
    };
    if fields.is_empty() {
        return Ok(None);
    }
    let mut value = SchemaBuilder::struct_().name(settings.value_name.clone());
    for f in &fields {
        value = value.field(f.clone(), Schema::optional_string());
    }
    let mut key = SchemaBuilder::struct_().name(settings.key_name.clone());
    for k in &settings.key_fields {
        if fields.contains(k) {
            key = key.field(k.clone(), Schema::optional_string());
        } else {
            tracing::warn!(field = %k, "Key field is not in the data.");
        }
    }
    let schemas = Schemas {
        key: settings.key_schema.clone().unwrap_or_else(|| key.build()),
        value: settings
            .value_schema
            .clone()
            .unwrap_or_else(|| value.build()),
    };
    tracing::info!(
        file = %file.path.display(),
        key_schema = %super::schema_json::to_json(&schemas.key),
        value_schema = %super::schema_json::to_json(&schemas.value),
        "Generated the schemas."
    );
    Ok(Some(schemas))
}

fn first_csv_row_width(config: &SpoolConfig, file: &InputFile) -> Result<Option<usize>, DataError> {
    use super::readers::Reader;
    let settings = config.csv.as_ref().ok_or("no CSV settings")?;
    let handle = File::open(&file.path).map_err(|e| e.to_string())?;
    let mut rows = super::readers::CsvRows::new(handle, settings, config.charset, 64 * 1024)
        .map_err(|e| e.message)?;
    match rows.next().map_err(|e| e.message)? {
        Some(super::readers::Read1 {
            item: Item::Row(r), ..
        }) => Ok(Some(r.len())),
        _ => Ok(None),
    }
}

fn first_json_object_keys(file: &InputFile) -> Result<Vec<String>, DataError> {
    let handle = File::open(&file.path).map_err(|e| e.to_string())?;
    for value in serde_json::Deserializer::from_reader(BufReader::new(handle)).into_iter::<Json>() {
        if let Json::Object(obj) = value.map_err(|e| e.to_string())? {
            return Ok(obj.keys().cloned().collect());
        }
    }
    Ok(Vec::new())
}
