//! The JDBC sink task: each `put` is written in one transaction (insert, upsert, update or delete per
//! record), tables created and evolved from record schemas; records that fail for a reason of their own
//! go to the errant record reporter, an unreachable or locked database is retried.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::db::{Conn, DbError, TableId};
use super::quote;
use super::types::{self, Param};
use crate::config::def::{ConfigDef, ConfigType, Importance, Validator};
use crate::connectors::{ErrantRecordReporter, Props, SinkTask, TaskError};
use crate::data::{Schema, SchemaRef, SchemaType, Value};
use crate::record::SinkRecord;

const INSERT_MODE: &str = "insert.mode";
const PK_MODE: &str = "pk.mode";
const PK_FIELDS: &str = "pk.fields";
const AUTO_CREATE: &str = "auto.create";
const AUTO_EVOLVE: &str = "auto.evolve";
const TABLE_NAME_FORMAT: &str = "table.name.format";
const DELETE_ENABLED: &str = "delete.enabled";
const BATCH_SIZE: &str = "batch.size";
const MAX_RETRIES: &str = "max.retries";
const RETRY_BACKOFF: &str = "retry.backoff.ms";
const FIELDS_WHITELIST: &str = "fields.whitelist";
const KAFKA_PK: [&str; 3] = ["__connect_topic", "__connect_partition", "__connect_offset"];

/// The sink's own keys on top of the connection keys.
pub(crate) fn config_def(def: ConfigDef) -> ConfigDef {
    use crate::config::def::key;
    use ConfigType::*;
    use Importance::*;
    def.define(key(INSERT_MODE, String, Some("insert"), High, "The insertion mode to use: insert, upsert or update.")
        .validator(Validator::OneOfCaseInsensitive(vec!["insert", "upsert", "update"])))
        .define(key(BATCH_SIZE, Int, Some("3000"), Medium, "Specifies how many records to attempt to batch together for insertion into the destination table, when possible.").validator(Validator::AtLeast(0.0)))
        .define(key(DELETE_ENABLED, Boolean, Some("false"), Medium, "Whether to treat null record values as deletes. Requires pk.mode to be record_key."))
        .define(key(TABLE_NAME_FORMAT, String, Some("${topic}"), Medium, "A format string for the destination table name, which may contain '${topic}' as a placeholder for the originating topic name."))
        .define(key(PK_MODE, String, Some("none"), High, "The primary key mode: none, kafka, record_key or record_value.")
            .validator(Validator::OneOfCaseInsensitive(vec!["none", "kafka", "record_key", "record_value"])))
        .define(key(PK_FIELDS, List, Some(""), Medium, "List of comma-separated primary key field names. The runtime interpretation of this config depends on the pk.mode."))
        .define(key(FIELDS_WHITELIST, List, Some(""), Medium, "List of comma-separated record value field names. If empty, all fields from the record value are utilized."))
        .define(key(AUTO_CREATE, Boolean, Some("false"), Medium, "Whether to automatically create the destination table based on record schema if it is found to be missing by issuing CREATE."))
        .define(key(AUTO_EVOLVE, Boolean, Some("false"), Medium, "Whether to automatically add columns in the table schema when found to be missing relative to the record schema by issuing ALTER."))
        .define(key(MAX_RETRIES, Int, Some("10"), Medium, "The maximum number of times to retry on errors before failing the task.").validator(Validator::AtLeast(0.0)))
        .define(key(RETRY_BACKOFF, Int, Some("3000"), Medium, "The time in milliseconds to wait following an error before a retry attempt is made.").validator(Validator::AtLeast(0.0)))
        .define(key("table.types", List, Some("TABLE"), Low, "The comma-separated types of database tables to which the sink connector can write."))
}

/// Checks across keys.
pub(crate) fn validate(
    config: &BTreeMap<String, Option<String>>,
    errors: &mut Vec<(String, String)>,
) {
    let get = |k: &str| {
        config
            .get(k)
            .and_then(|v| v.as_deref())
            .map(|v| v.trim().to_ascii_lowercase())
    };
    let pk_mode = get(PK_MODE).unwrap_or_else(|| "none".into());
    if get(DELETE_ENABLED).as_deref() == Some("true") && pk_mode != "record_key" {
        errors.push((
            DELETE_ENABLED.into(),
            "Deletes are only supported for pk.mode record_key".into(),
        ));
    }
    let mode = get(INSERT_MODE).unwrap_or_else(|| "insert".into());
    if (mode == "upsert" || mode == "update") && pk_mode == "none" {
        errors.push((PK_MODE.into(), format!("insert.mode {mode} requires key field names to be known: set pk.mode to kafka, record_key or record_value")));
    }
    if pk_mode == "kafka" {
        if let Some(fields) = get(PK_FIELDS).filter(|f| !f.is_empty()) {
            if fields.split(',').count() != 3 {
                errors.push((PK_FIELDS.into(), "PK mode for table is kafka, so pk.fields must be exactly three column names for topic, partition and offset".into()));
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InsertMode {
    Insert,
    Upsert,
    Update,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PkMode {
    None,
    Kafka,
    RecordKey,
    RecordValue,
}

#[derive(Clone, Debug)]
struct Settings {
    insert: InsertMode,
    pk: PkMode,
    pk_fields: Vec<String>,
    fields_whitelist: HashSet<String>,
    auto_create: bool,
    auto_evolve: bool,
    table_format: String,
    delete_enabled: bool,
    batch_size: usize,
    quote: bool,
}

fn settings(config: &Props) -> Result<Settings, TaskError> {
    let def = config_def(super::connection_keys(ConfigDef::new()));
    let p = def
        .parse(config)
        .map_err(|e| TaskError::fatal(e.join("; ")))?;
    let s = |k: &str| p.get_string(k).unwrap_or_default().to_ascii_lowercase();
    Ok(Settings {
        insert: match s(INSERT_MODE).as_str() {
            "upsert" => InsertMode::Upsert,
            "update" => InsertMode::Update,
            _ => InsertMode::Insert,
        },
        pk: match s(PK_MODE).as_str() {
            "kafka" => PkMode::Kafka,
            "record_key" => PkMode::RecordKey,
            "record_value" => PkMode::RecordValue,
            _ => PkMode::None,
        },
        pk_fields: p.get_list(PK_FIELDS),
        fields_whitelist: p.get_list(FIELDS_WHITELIST).into_iter().collect(),
        auto_create: p.get_bool(AUTO_CREATE).unwrap_or(false),
        auto_evolve: p.get_bool(AUTO_EVOLVE).unwrap_or(false),
        table_format: p
            .get_string(TABLE_NAME_FORMAT)
            .unwrap_or_else(|| "${topic}".into()),
        delete_enabled: p.get_bool(DELETE_ENABLED).unwrap_or(false),
        batch_size: p.get_int(BATCH_SIZE).unwrap_or(3000).max(1) as usize,
        quote: !s(super::QUOTE_IDENTIFIERS).eq("never"),
    })
}

/// One column of a row to write: its name, the schema it came with (none for schemaless values) and
/// the bound value.
#[derive(Clone, Debug)]
struct Col {
    name: String,
    schema: Option<SchemaRef>,
    param: Param,
}

/// What one record becomes.
#[derive(Clone, Debug)]
struct Row {
    table: TableId,
    keys: Vec<Col>,
    values: Vec<Col>,
    delete: bool,
    /// Built from a schemaless value: columns are matched to the existing table.
    schemaless: bool,
}

/// `io.confluent.connect.jdbc.sink.JdbcSinkTask`.
#[derive(Default)]
pub struct JdbcSinkTask {
    settings: Option<Settings>,
    config: Props,
    conn: Option<Conn>,
    /// Known columns of each table (absent: not looked up yet).
    tables: HashMap<TableId, Vec<String>>,
}

impl SinkTask for JdbcSinkTask {
    fn start(&mut self, config: &Props) -> Result<(), TaskError> {
        self.settings = Some(settings(config)?);
        self.config = config.clone();
        Ok(())
    }

    fn put(&mut self, records: &[SinkRecord]) -> Result<(), TaskError> {
        self.put_reporting(
            records,
            &mut crate::connectors::FailOnReport { with_place: false },
        )
    }

    fn put_reporting(
        &mut self,
        records: &[SinkRecord],
        reporter: &mut dyn ErrantRecordReporter,
    ) -> Result<(), TaskError> {
        if records.is_empty() {
            return Ok(());
        }
        let result = self.write(records, reporter);
        if let Err(TaskError::Retriable(_)) = &result {
            self.conn = None;
            self.tables.clear();
        }
        result
    }

    fn flush(&mut self) -> Result<(), TaskError> {
        // Every put commits its transaction before returning.
        Ok(())
    }

    fn stop(&mut self) {
        self.conn = None;
    }
}

fn db_error(e: DbError) -> TaskError {
    if e.transient {
        TaskError::Retriable(format!(
            "The database is unavailable; the records will be written again: {e}"
        ))
    } else {
        TaskError::fatal(e.message)
    }
}

impl JdbcSinkTask {
    fn write(
        &mut self,
        records: &[SinkRecord],
        reporter: &mut dyn ErrantRecordReporter,
    ) -> Result<(), TaskError> {
        let s = self
            .settings
            .clone()
            .ok_or_else(|| TaskError::fatal("not started"))?;
        if self.conn.is_none() {
            let (spec, _, _) = super::conn_spec(&self.config, false);
            self.conn = Some(Conn::open(&spec).map_err(db_error)?);
        }
        let postgres = self.conn.as_ref().is_some_and(Conn::is_postgres);
        let mut rows: Vec<(usize, Row)> = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            match to_row(&s, r, postgres) {
                Ok(row) => rows.push((i, row)),
                Err(message) => reporter.report(r, &message)?,
            }
        }
        for (_, row) in &rows {
            self.ensure_table(&s, row)?;
        }
        let q = if postgres { '"' } else { '`' };
        let q = Some(q).filter(|_| s.quote);
        let statements: Vec<(String, Vec<Param>)> = rows
            .iter()
            .map(|(_, row)| statement(&s, row, postgres, q, self.tables.get(&row.table)))
            .collect();
        let conn = self.conn.as_mut().expect("connected");
        conn.batch("BEGIN").map_err(db_error)?;
        let mut failed = None;
        for chunk in statements.chunks(s.batch_size) {
            for (sql, params) in chunk {
                if let Err(e) = conn.execute(sql, params) {
                    failed = Some(e);
                    break;
                }
            }
            if failed.is_some() {
                break;
            }
        }
        let Some(e) = failed else {
            return conn.batch("COMMIT").map_err(db_error);
        };
        let _ = conn.batch("ROLLBACK");
        if e.transient {
            return Err(db_error(e));
        }
        // A record refused by the database: write again one by one to find which.
        conn.batch("BEGIN").map_err(db_error)?;
        for ((i, _), (sql, params)) in rows.iter().zip(&statements) {
            conn.batch("SAVEPOINT lc_row").map_err(db_error)?;
            match conn.execute(sql, params) {
                Ok(_) => conn.batch("RELEASE SAVEPOINT lc_row").map_err(db_error)?,
                Err(e) if e.transient => {
                    let _ = conn.batch("ROLLBACK");
                    return Err(db_error(e));
                }
                Err(e) => {
                    conn.batch("ROLLBACK TO SAVEPOINT lc_row")
                        .map_err(db_error)?;
                    conn.batch("RELEASE SAVEPOINT lc_row").map_err(db_error)?;
                    if let Err(stop) = reporter.report(&records[*i], &e.message) {
                        let _ = conn.batch("ROLLBACK");
                        return Err(stop);
                    }
                }
            }
        }
        conn.batch("COMMIT").map_err(db_error)
    }

    /// Creates or evolves the row's table when allowed (Confluent's `DbStructure`).
    fn ensure_table(&mut self, s: &Settings, row: &Row) -> Result<(), TaskError> {
        let conn = self.conn.as_mut().expect("connected");
        let postgres = conn.is_postgres();
        let q = Some(conn.quote_char()).filter(|_| s.quote);
        let wanted: Vec<&Col> = row.keys.iter().chain(&row.values).collect();
        let known = match self.tables.get(&row.table) {
            Some(cols) if wanted.iter().all(|c| cols.contains(&c.name)) || row.schemaless => {
                return Ok(())
            }
            _ => conn
                .columns(&row.table)
                .map_err(db_error)?
                .into_iter()
                .map(|c| c.name)
                .collect::<Vec<_>>(),
        };
        let name = table_sql(&row.table, q);
        if known.is_empty() {
            if row.schemaless {
                return Err(TaskError::fatal(format!(
                    "Table {} is missing and a schemaless record cannot create it",
                    row.table.fqn()
                )));
            }
            if !s.auto_create {
                return Err(TaskError::fatal(format!(
                    "Table {} is missing and auto-creation is disabled",
                    row.table.fqn()
                )));
            }
            let mut specs = Vec::new();
            for c in &wanted {
                specs.push(column_spec(c, postgres, q)?);
            }
            let mut sql = format!("CREATE TABLE {name} (\n{}", specs.join(",\n"));
            if !row.keys.is_empty() {
                let pk: Vec<String> = row.keys.iter().map(|c| quote(&c.name, q)).collect();
                sql.push_str(&format!(",\nPRIMARY KEY({})", pk.join(",")));
            }
            sql.push(')');
            tracing::info!(table = %row.table.fqn(), %sql, "Creating table");
            conn.batch(&sql).map_err(db_error)?;
        } else {
            let missing: Vec<&&Col> = wanted.iter().filter(|c| !known.contains(&c.name)).collect();
            if !missing.is_empty() && !row.schemaless {
                let names: Vec<&str> = missing.iter().map(|c| c.name.as_str()).collect();
                if !s.auto_evolve {
                    return Err(TaskError::fatal(format!(
                        "Table {} is missing fields ({}) and auto-evolution is disabled",
                        row.table.fqn(),
                        names.join(", ")
                    )));
                }
                let mut adds = Vec::new();
                for c in &missing {
                    let schema = c.schema.as_deref();
                    if !schema.is_some_and(|s| s.optional || s.default_value.is_some()) {
                        return Err(TaskError::fatal(format!(
                            "Cannot ALTER TABLE {} to add missing field {}, as the field is not optional and does not have a default value",
                            row.table.fqn(),
                            c.name
                        )));
                    }
                    adds.push(format!("ADD {}", column_spec(c, postgres, q)?));
                }
                let statements: Vec<String> = if postgres {
                    vec![format!("ALTER TABLE {name} {}", adds.join(",\n"))]
                } else {
                    adds.iter()
                        .map(|a| format!("ALTER TABLE {name} {a}"))
                        .collect()
                };
                for sql in statements {
                    tracing::info!(table = %row.table.fqn(), %sql, "Amending table");
                    conn.batch(&sql).map_err(db_error)?;
                }
            }
        }
        let cols = conn
            .columns(&row.table)
            .map_err(db_error)?
            .into_iter()
            .map(|c| c.name)
            .collect();
        self.tables.insert(row.table.clone(), cols);
        Ok(())
    }
}

fn table_sql(t: &TableId, q: Option<char>) -> String {
    match &t.schema {
        Some(s) => format!("{}.{}", quote(s, q), quote(&t.name, q)),
        None => quote(&t.name, q),
    }
}

fn column_spec(c: &Col, postgres: bool, q: Option<char>) -> Result<String, TaskError> {
    let schema = c
        .schema
        .as_deref()
        .ok_or_else(|| TaskError::fatal(format!("No schema for field {}", c.name)))?;
    let ty = types::ddl_type(postgres, schema).ok_or_else(|| {
        TaskError::fatal(format!(
            "{} ({}) type doesn't have a mapping to the SQL database column type",
            schema.schema_type, c.name
        ))
    })?;
    let null = if schema.optional { "NULL" } else { "NOT NULL" };
    Ok(format!("{} {ty} {null}", quote(&c.name, q)))
}

/// The SQL and parameters for one row (Confluent's statements per dialect).
fn statement(
    s: &Settings,
    row: &Row,
    postgres: bool,
    q: Option<char>,
    table_cols: Option<&Vec<String>>,
) -> (String, Vec<Param>) {
    let table = table_sql(&row.table, q);
    let keep = |c: &&Col| !row.schemaless || table_cols.is_none_or(|t| t.contains(&c.name));
    let keys: Vec<&Col> = row.keys.iter().filter(keep).collect();
    let values: Vec<&Col> = row.values.iter().filter(keep).collect();
    let ph = |n: usize| {
        if postgres {
            format!("${n}")
        } else {
            "?".to_string()
        }
    };
    let name = |c: &Col| quote(&c.name, q);
    // `name = ?` for each column, numbered from `first`.
    let assign = |cols: &[&Col], first: usize| -> Vec<String> {
        cols.iter()
            .enumerate()
            .map(|(i, c)| format!("{} = {}", name(c), ph(first + i)))
            .collect()
    };
    let params = |cols: &[&Col]| cols.iter().map(|c| c.param.clone()).collect::<Vec<_>>();
    if row.delete {
        let cond = assign(&keys, 1).join(" AND ");
        return (format!("DELETE FROM {table} WHERE {cond}"), params(&keys));
    }
    let all: Vec<&Col> = keys.iter().chain(&values).copied().collect();
    let names = all.iter().map(|c| name(c)).collect::<Vec<_>>().join(",");
    let vals = (1..=all.len()).map(ph).collect::<Vec<_>>().join(",");
    let sql = match s.insert {
        InsertMode::Update => {
            let set = assign(&values, 1).join(", ");
            let cond = assign(&keys, values.len() + 1).join(" AND ");
            let mut p = params(&values);
            p.extend(params(&keys));
            return (format!("UPDATE {table} SET {set} WHERE {cond}"), p);
        }
        InsertMode::Upsert if postgres => {
            let conflict = keys.iter().map(|c| name(c)).collect::<Vec<_>>().join(",");
            let action = if values.is_empty() {
                "DO NOTHING".to_string()
            } else {
                let set: Vec<String> = values
                    .iter()
                    .map(|c| format!("{}=EXCLUDED.{}", name(c), name(c)))
                    .collect();
                format!("DO UPDATE SET {}", set.join(","))
            };
            format!(
                "INSERT INTO {table} ({names}) VALUES ({vals}) ON CONFLICT ({conflict}) {action}"
            )
        }
        InsertMode::Upsert => format!("INSERT OR REPLACE INTO {table}({names}) VALUES({vals})"),
        InsertMode::Insert if postgres => format!("INSERT INTO {table} ({names}) VALUES ({vals})"),
        InsertMode::Insert => format!("INSERT INTO {table}({names}) VALUES({vals})"),
    };
    (sql, params(&all))
}

/// The table a topic is written to: `table.name.format` with `${topic}`; `schema.table` on PostgreSQL.
fn table_for(s: &Settings, topic: &str, postgres: bool) -> TableId {
    let name = s.table_format.replace("${topic}", topic);
    match name.split_once('.') {
        Some((schema, table)) if postgres => TableId {
            schema: Some(schema.to_string()),
            name: table.to_string(),
        },
        _ => TableId { schema: None, name },
    }
}

fn col(name: &str, schema: Option<&SchemaRef>, value: &Value) -> Result<Col, String> {
    let param = types::param_for(schema.map(|s| s.as_ref()), value)
        .map_err(|e| format!("{e} (field {name})"))?;
    Ok(Col {
        name: name.to_string(),
        schema: schema.cloned(),
        param,
    })
}

/// The named fields of a struct or a string-keyed map (schemaless), in order.
fn fields_of(
    schema: Option<&SchemaRef>,
    value: &Value,
) -> Result<Vec<(String, Option<SchemaRef>, Value)>, String> {
    match (schema, value) {
        (Some(s), Value::Struct(st)) if s.schema_type == SchemaType::Struct => Ok(s
            .fields
            .iter()
            .map(|f| {
                (
                    f.name.clone(),
                    Some(f.schema.clone()),
                    st.values.get(f.index).cloned().unwrap_or(Value::Null),
                )
            })
            .collect()),
        (None, Value::Map(entries)) => entries
            .iter()
            .map(|(k, v)| match k {
                Value::String(k) => Ok((k.clone(), None, v.clone())),
                other => Err(format!(
                    "Schemaless map keys must be strings, found {}",
                    other.type_name()
                )),
            })
            .collect(),
        (_, v) => Err(format!(
            "Value must be a Struct or a map (schemaless), found {}",
            v.type_name()
        )),
    }
}

/// Builds the row of a record per `pk.mode`, `pk.fields` and `fields.whitelist`; errors are the
/// record's own (reported, not fatal).
/// The key columns of a record per `pk.mode` and `pk.fields`.
fn key_cols(
    s: &Settings,
    r: &SinkRecord,
    value_fields: &[(String, Option<SchemaRef>, Value)],
    tombstone: bool,
) -> Result<Vec<Col>, String> {
    let rec = &r.record;
    let mut keys = Vec::new();
    match s.pk {
        PkMode::None => {}
        PkMode::Kafka => {
            let names: Vec<String> = if s.pk_fields.is_empty() {
                KAFKA_PK.iter().map(|s| s.to_string()).collect()
            } else {
                s.pk_fields.clone()
            };
            let vals = [
                (Schema::string(), Value::String(rec.topic.clone())),
                (
                    Schema::int32(),
                    Value::Int32(rec.kafka_partition.unwrap_or(0)),
                ),
                (Schema::int64(), Value::Int64(r.kafka_offset)),
            ];
            for (n, (schema, v)) in names.iter().zip(vals) {
                keys.push(col(n, Some(&schema), &v)?);
            }
        }
        PkMode::RecordKey => {
            if rec.key.is_null() {
                return Err("Record key is null: pk.mode=record_key needs a key".into());
            }
            match (&rec.key_schema, &rec.key) {
                (Some(ks), _) if ks.schema_type.is_primitive() => {
                    if s.pk_fields.len() != 1 {
                        return Err(format!("Need exactly one PK column defined since the key schema for records is a primitive type, defined columns are: {:?}", s.pk_fields));
                    }
                    keys.push(col(&s.pk_fields[0], Some(ks), &rec.key)?);
                }
                (None, k) if !matches!(k, Value::Map(_) | Value::Struct(_)) => {
                    let name = s.pk_fields.first().ok_or(
                        "Need exactly one PK column defined since the key is a primitive value",
                    )?;
                    keys.push(col(name, None, k)?);
                }
                (ks, k) => {
                    for (n, schema, v) in fields_of(ks.as_ref(), k)? {
                        if s.pk_fields.is_empty() || s.pk_fields.contains(&n) {
                            keys.push(col(&n, schema.as_ref(), &v)?);
                        }
                    }
                }
            }
        }
        PkMode::RecordValue => {
            if tombstone {
                return Err("pk.mode=record_value needs a record value".into());
            }
            for (n, schema, v) in value_fields {
                if s.pk_fields.is_empty() || s.pk_fields.contains(n) {
                    keys.push(col(n, schema.as_ref(), v)?);
                }
            }
        }
    }
    Ok(keys)
}

fn to_row(s: &Settings, r: &SinkRecord, postgres: bool) -> Result<Row, String> {
    let rec = &r.record;
    let table = table_for(s, &rec.topic, postgres);
    let tombstone = rec.value.is_null();
    if tombstone && !s.delete_enabled {
        return Err(format!(
            "Sink connector is configured with 'delete.enabled=false' and 'pk.mode={}' and therefore requires records with a non-null Struct value and non-null Struct schema, but found record at (topic='{}',partition={},offset={}) with a null value and null value schema.",
            pk_mode_name(s.pk),
            rec.topic,
            rec.kafka_partition.unwrap_or(0),
            r.kafka_offset
        ));
    }
    let value_fields = if tombstone {
        Vec::new()
    } else {
        fields_of(rec.value_schema.as_ref(), &rec.value)?
    };
    let schemaless = !tombstone && rec.value_schema.is_none();
    let keys = key_cols(s, r, &value_fields, tombstone)?;
    let key_names: HashSet<String> = keys.iter().map(|c| c.name.clone()).collect();
    let mut values = Vec::new();
    for (n, schema, v) in &value_fields {
        if key_names.contains(n)
            || (!s.fields_whitelist.is_empty() && !s.fields_whitelist.contains(n))
        {
            continue;
        }
        values.push(col(n, schema.as_ref(), v)?);
    }
    if s.pk != PkMode::None && keys.is_empty() {
        return Err(format!(
            "No primary key fields found in the record for pk.mode={}",
            pk_mode_name(s.pk)
        ));
    }
    Ok(Row {
        table,
        keys,
        values,
        delete: tombstone,
        schemaless,
    })
}

fn pk_mode_name(m: PkMode) -> &'static str {
    match m {
        PkMode::None => "none",
        PkMode::Kafka => "kafka",
        PkMode::RecordKey => "record_key",
        PkMode::RecordValue => "record_value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings_with(pairs: &[(&str, &str)]) -> Settings {
        let mut p: Props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        p.insert("connection.url".into(), "jdbc:sqlite:x.db".into());
        settings(&p).unwrap()
    }

    fn row(keys: &[&str], values: &[&str]) -> Row {
        let c = |n: &&str| Col {
            name: n.to_string(),
            schema: Some(Schema::int32()),
            param: Param::Int(1),
        };
        Row {
            table: TableId {
                schema: None,
                name: "t".into(),
            },
            keys: keys.iter().map(c).collect(),
            values: values.iter().map(c).collect(),
            delete: false,
            schemaless: false,
        }
    }

    #[test]
    fn statements_per_dialect() {
        let up = settings_with(&[("insert.mode", "upsert"), ("pk.mode", "record_value")]);
        let r = row(&["id"], &["a", "b"]);
        assert_eq!(
            statement(&up, &r, false, Some('`'), None).0,
            "INSERT OR REPLACE INTO `t`(`id`,`a`,`b`) VALUES(?,?,?)"
        );
        assert_eq!(
            statement(&up, &r, true, Some('"'), None).0,
            "INSERT INTO \"t\" (\"id\",\"a\",\"b\") VALUES ($1,$2,$3) ON CONFLICT (\"id\") DO UPDATE SET \"a\"=EXCLUDED.\"a\",\"b\"=EXCLUDED.\"b\""
        );
        let upd = settings_with(&[("insert.mode", "update"), ("pk.mode", "record_value")]);
        assert_eq!(
            statement(&upd, &r, true, Some('"'), None).0,
            "UPDATE \"t\" SET \"a\" = $1, \"b\" = $2 WHERE \"id\" = $3"
        );
        let ins = settings_with(&[]);
        assert_eq!(
            statement(&ins, &row(&[], &["a"]), false, None, None).0,
            "INSERT INTO t(a) VALUES(?)"
        );
        let mut del = row(&["id"], &[]);
        del.delete = true;
        assert_eq!(
            statement(&ins, &del, true, Some('"'), None).0,
            "DELETE FROM \"t\" WHERE \"id\" = $1"
        );
    }

    #[test]
    fn delete_needs_record_key() {
        let cfg: BTreeMap<String, Option<String>> =
            [("delete.enabled", "true"), ("pk.mode", "record_value")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), Some(v.to_string())))
                .collect();
        let mut errors = Vec::new();
        validate(&cfg, &mut errors);
        assert_eq!(errors[0].0, "delete.enabled");
    }
}
