//! One connection to SQLite (rusqlite) or PostgreSQL (the `postgres` crate), behind the few operations
//! the source and sink need: metadata, queries returning raw values, statements with parameters, and
//! transactions. Errors say whether they are worth retrying (the database is down or locked) or lie in
//! the data (a constraint, a bad value).

#[cfg(feature = "jdbc-postgres")]
use std::collections::HashMap;
use std::time::Duration;

#[cfg(feature = "jdbc-postgres")]
use super::pg::{self, Cell, SslMode, TextParam};
use super::types::{Param, Raw};

/// Why a database operation failed.
#[derive(Clone, Debug)]
pub struct DbError {
    pub message: String,
    /// The database is unreachable, restarting or locked: try again later.
    pub transient: bool,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::*;
        let transient = matches!(
            e.sqlite_error_code(),
            Some(DatabaseBusy | DatabaseLocked | CannotOpen | SystemIoFailure | OutOfMemory)
        );
        DbError {
            message: e.to_string(),
            transient,
        }
    }
}

#[cfg(feature = "jdbc-postgres")]
impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> Self {
        let code = e.code().map(|c| c.code().to_string());
        let transient = match &code {
            None => true, // I/O, a closed connection, a timeout
            Some(c) => {
                c.starts_with("08")
                    || c.starts_with("53")
                    || c.starts_with("57P")
                    || c == "40001"
                    || c == "40P01"
            }
        };
        let message = match e.as_db_error() {
            Some(db) => format!(
                "{}: {} (SQLState: {})",
                db.severity(),
                db.message(),
                db.code().code()
            ),
            None => e.to_string(),
        };
        DbError { message, transient }
    }
}

fn fatal(message: impl Into<String>) -> DbError {
    DbError {
        message: message.into(),
        transient: false,
    }
}

/// Where and how to connect: `connection.url` with `connection.user`, `connection.password`.
#[derive(Clone, Debug)]
pub struct ConnSpec {
    /// `connection.url`.
    pub url: String,
    /// `connection.user` (PostgreSQL only).
    #[cfg_attr(not(feature = "jdbc-postgres"), allow(dead_code))]
    pub user: Option<String>,
    /// `connection.password` (PostgreSQL only).
    #[cfg_attr(not(feature = "jdbc-postgres"), allow(dead_code))]
    pub password: Option<String>,
    /// The database is only read (the source).
    pub read_only: bool,
    /// `db.timezone`, set as the PostgreSQL session's time zone.
    #[cfg_attr(not(feature = "jdbc-postgres"), allow(dead_code))]
    pub timezone: String,
}

/// A parsed `connection.url`.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Sqlite(String),
    Postgres {
        host: String,
        port: u16,
        database: String,
        params: Vec<(String, String)>,
    },
}

/// Parses `jdbc:sqlite:PATH` or `jdbc:postgresql://host[:port]/db?key=value&...`.
pub fn parse_url(url: &str) -> Result<Target, String> {
    if let Some(path) = url.strip_prefix("jdbc:sqlite:") {
        let path = path.split('?').next().unwrap_or("");
        let path = path.strip_prefix("file:").unwrap_or(path);
        if path.is_empty() {
            return Err("the SQLite URL names no file".into());
        }
        return Ok(Target::Sqlite(path.to_string()));
    }
    let Some(rest) = url.strip_prefix("jdbc:postgresql:") else {
        return Err("only jdbc:sqlite: and jdbc:postgresql: URLs are supported".into());
    };
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (hostport, database) = location.split_once('/').unwrap_or((location, ""));
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("invalid port '{p}'"))?,
        ),
        _ => (hostport, 5432),
    };
    let host = if host.is_empty() { "localhost" } else { host };
    let params = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let dec = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (dec(k), dec(v))
        })
        .collect();
    Ok(Target::Postgres {
        host: host.trim_matches(['[', ']']).to_string(),
        port,
        database: database.to_string(),
        params,
    })
}

/// A table: its schema (PostgreSQL) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableId {
    pub schema: Option<String>,
    pub name: String,
}

impl TableId {
    /// The name without quotes, `schema.table` when there is a schema (the offsets' `table`).
    pub fn fqn(&self) -> String {
        match &self.schema {
            Some(s) => format!("{s}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A column as the metadata describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnInfo {
    pub name: String,
    /// The declared type (SQLite) or type name (PostgreSQL).
    pub type_name: String,
    pub nullable: bool,
    pub auto_increment: bool,
    pub primary_key: bool,
    /// `numeric` precision and scale (PostgreSQL).
    pub precision: i32,
    pub scale: Option<i32>,
}

/// A result set: column names with their declared types, and rows of raw values.
pub struct ResultSet {
    pub columns: Vec<(String, Option<String>)>,
    pub rows: Vec<Vec<Raw>>,
}

/// An open connection.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    #[cfg(feature = "jdbc-postgres")]
    Postgres {
        client: Box<postgres::Client>,
        statements: HashMap<String, postgres::Statement>,
    },
}

#[cfg(feature = "jdbc-postgres")]
fn pg_config(
    spec: &ConnSpec,
    host: &str,
    port: u16,
    database: &str,
    params: &[(String, String)],
) -> Result<(postgres::Config, SslMode, Option<String>), String> {
    let mut config = postgres::Config::new();
    config.host(host).port(port).dbname(database);
    config.application_name("liteconnect");
    config.connect_timeout(Duration::from_secs(10));
    let mut ssl = None;
    let mut root = None;
    for (k, v) in params {
        match k.as_str() {
            "user" => {
                config.user(v);
            }
            "password" => {
                config.password(v);
            }
            "sslmode" => ssl = Some(v.clone()),
            "sslrootcert" => root = Some(v.clone()),
            "connectTimeout" => {
                if let Ok(s) = v.parse() {
                    config.connect_timeout(Duration::from_secs(s));
                }
            }
            "currentSchema" => {
                config.options(&format!("-c search_path={v}"));
            }
            _ => {}
        }
    }
    if let Some(u) = &spec.user {
        config.user(u);
    }
    if let Some(p) = &spec.password {
        config.password(p);
    }
    if config.get_user().is_none() {
        config.user(&std::env::var("USER").unwrap_or_else(|_| "postgres".into()));
    }
    let mode = SslMode::parse(ssl.as_deref())?;
    config.ssl_mode(match mode {
        SslMode::Disable => postgres::config::SslMode::Disable,
        SslMode::Prefer => postgres::config::SslMode::Prefer,
        _ => postgres::config::SslMode::Require,
    });
    Ok((config, mode, root))
}

impl Conn {
    /// Opens one connection (no retries).
    pub fn open(spec: &ConnSpec) -> Result<Conn, DbError> {
        match parse_url(&spec.url).map_err(fatal)? {
            Target::Sqlite(path) => {
                use rusqlite::OpenFlags;
                // The source opens the file read-only: a missing file is a mistake in the URL (SQLite
                // would say only "unable to open database file"), not an outage to retry.
                if spec.read_only && !std::path::Path::new(&path).exists() {
                    return Err(DbError {
                        message: format!(
                            "The SQLite database file {path} does not exist (connection.url {})",
                            spec.url
                        ),
                        transient: false,
                    });
                }
                let flags = if spec.read_only {
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
                } else {
                    OpenFlags::SQLITE_OPEN_READ_WRITE
                        | OpenFlags::SQLITE_OPEN_CREATE
                        | OpenFlags::SQLITE_OPEN_NO_MUTEX
                };
                let conn = rusqlite::Connection::open_with_flags(&path, flags)?;
                conn.busy_timeout(Duration::from_secs(5))?;
                conn.set_prepared_statement_cache_capacity(64);
                Ok(Conn::Sqlite(conn))
            }
            #[cfg(not(feature = "jdbc-postgres"))]
            Target::Postgres { .. } => Err(fatal(super::POSTGRES_MISSING)),
            #[cfg(feature = "jdbc-postgres")]
            Target::Postgres {
                host,
                port,
                database,
                params,
            } => {
                let (config, mode, root) =
                    pg_config(spec, &host, port, &database, &params).map_err(fatal)?;
                let mut client = if mode == SslMode::Disable {
                    config.connect(postgres::NoTls)?
                } else {
                    config.connect(pg::tls(mode, root.as_deref()).map_err(fatal)?)?
                };
                let tz = spec.timezone.replace('\'', "''");
                client.batch_execute(&format!("SET TIME ZONE '{tz}'"))?;
                Ok(Conn::Postgres {
                    client: Box::new(client),
                    statements: HashMap::new(),
                })
            }
        }
    }

    /// Opens a connection, trying `attempts` times `backoff` apart (`connection.attempts`,
    /// `connection.backoff.ms`) while the failure is transient; `keep_going` is asked before each wait.
    pub fn open_with_retries(
        spec: &ConnSpec,
        attempts: u32,
        backoff: Duration,
        keep_going: &dyn Fn(Duration) -> bool,
    ) -> Result<Conn, DbError> {
        let mut attempt = 1;
        loop {
            match Conn::open(spec) {
                Ok(c) => return Ok(c),
                Err(e) if e.transient && attempt < attempts.max(1) => {
                    tracing::info!(attempt, error = %e, "Unable to connect to the database; will retry.");
                    if !keep_going(backoff) {
                        return Err(e);
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether this is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        #[cfg(feature = "jdbc-postgres")]
        return matches!(self, Conn::Postgres { .. });
        #[cfg(not(feature = "jdbc-postgres"))]
        false
    }

    /// The identifier quote of the dialect (Confluent's SQLite dialect uses backquotes).
    pub fn quote_char(&self) -> char {
        if self.is_postgres() {
            '"'
        } else {
            '`'
        }
    }

    /// Runs statements without parameters or results (DDL, `BEGIN`, `COMMIT`).
    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            #[cfg(feature = "jdbc-postgres")]
            Conn::Postgres { client, statements } => {
                if !sql
                    .trim_start()
                    .to_ascii_uppercase()
                    .starts_with(['B', 'C', 'R', 'S'])
                {
                    statements.clear(); // DDL may change what prepared statements return
                }
                Ok(client.batch_execute(sql)?)
            }
        }
    }

    /// Runs one statement with parameters; the number of rows changed.
    pub fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let n =
                    stmt.execute(rusqlite::params_from_iter(params.iter().map(sqlite_param)))?;
                Ok(n as u64)
            }
            #[cfg(feature = "jdbc-postgres")]
            Conn::Postgres { client, statements } => {
                let stmt = pg_statement(client, statements, sql)?;
                let texts: Vec<TextParam> = params.iter().map(TextParam::of).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = texts
                    .iter()
                    .map(|t| t as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                Ok(client.execute(&stmt, &refs)?)
            }
        }
    }

    /// Runs a query; every value comes back raw, with each column's declared type.
    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<ResultSet, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let columns: Vec<(String, Option<String>)> = stmt
                    .columns()
                    .iter()
                    .map(|c| (c.name().to_string(), c.decl_type().map(str::to_string)))
                    .collect();
                let n = columns.len();
                let mut rows = Vec::new();
                let mut rs =
                    stmt.query(rusqlite::params_from_iter(params.iter().map(sqlite_param)))?;
                while let Some(row) = rs.next()? {
                    let mut out = Vec::with_capacity(n);
                    for i in 0..n {
                        out.push(sqlite_raw(row.get_ref(i)?));
                    }
                    rows.push(out);
                }
                Ok(ResultSet { columns, rows })
            }
            #[cfg(feature = "jdbc-postgres")]
            Conn::Postgres { client, statements } => {
                let stmt = pg_statement(client, statements, sql)?;
                let columns = stmt
                    .columns()
                    .iter()
                    .map(|c| (c.name().to_string(), Some(c.type_().name().to_string())))
                    .collect::<Vec<_>>();
                let texts: Vec<TextParam> = params.iter().map(TextParam::of).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = texts
                    .iter()
                    .map(|t| t as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let result = client.query(&stmt, &refs)?;
                let mut rows = Vec::with_capacity(result.len());
                for row in result {
                    let mut out = Vec::with_capacity(columns.len());
                    for i in 0..columns.len() {
                        out.push(row.try_get::<_, Cell>(i)?.0);
                    }
                    rows.push(out);
                }
                Ok(ResultSet { columns, rows })
            }
        }
    }

    /// The database's current time in nanoseconds since the epoch.
    pub fn now_nanos(&mut self) -> Result<i64, DbError> {
        let sql = if self.is_postgres() {
            "SELECT CURRENT_TIMESTAMP"
        } else {
            "SELECT CAST(round(unixepoch('now','subsec')*1000) AS INTEGER)"
        };
        let rs = self.query(sql, &[])?;
        let raw = rs
            .rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next());
        raw.as_ref()
            .and_then(super::types::raw_timestamp_nanos)
            .ok_or_else(|| fatal("the database returned no current time"))
    }

    /// The tables visible to the connection (`schema_pattern` a SQL `LIKE` pattern for PostgreSQL
    /// schemas; system schemas and SQLite's own tables are left out).
    pub fn tables(&mut self, schema_pattern: Option<&str>) -> Result<Vec<TableId>, DbError> {
        if self.is_postgres() {
            let rs = self.query(
                "SELECT table_schema::text, table_name::text FROM information_schema.tables \
                 WHERE table_type IN ('BASE TABLE') AND table_schema NOT IN ('pg_catalog', 'information_schema') \
                 AND table_schema LIKE $1 ORDER BY 1, 2",
                &[Param::Text(schema_pattern.unwrap_or("%").to_string())],
            )?;
            Ok(rs
                .rows
                .into_iter()
                .filter_map(|r| match (&r[0], &r[1]) {
                    (Raw::Text(s), Raw::Text(n)) => Some(TableId {
                        schema: Some(s.clone()),
                        name: n.clone(),
                    }),
                    _ => None,
                })
                .collect())
        } else {
            let rs = self.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                &[],
            )?;
            Ok(rs
                .rows
                .into_iter()
                .filter_map(|r| match &r[0] {
                    Raw::Text(n) => Some(TableId {
                        schema: None,
                        name: n.clone(),
                    }),
                    _ => None,
                })
                .collect())
        }
    }

    /// The columns of a table, in order; empty when it does not exist.
    pub fn columns(&mut self, table: &TableId) -> Result<Vec<ColumnInfo>, DbError> {
        if self.is_postgres() {
            let schema = table.schema.clone().unwrap_or_else(|| "public".into());
            let rs = self.query(
                PG_COLUMNS,
                &[Param::Text(schema), Param::Text(table.name.clone())],
            )?;
            Ok(rs.rows.into_iter().map(pg_column).collect())
        } else {
            let q = table.name.replace('"', "\"\"");
            let rs = self.query(
                &format!("SELECT name, type, \"notnull\", pk FROM pragma_table_info(\"{q}\")"),
                &[],
            )?;
            let pk_count = rs
                .rows
                .iter()
                .filter(|r| !matches!(r[3], Raw::Int(0)))
                .count();
            Ok(rs
                .rows
                .into_iter()
                .map(|r| {
                    let text = |v: &Raw| match v {
                        Raw::Text(s) => s.clone(),
                        _ => String::new(),
                    };
                    let primary_key = !matches!(r[3], Raw::Int(0));
                    let type_name = text(&r[1]);
                    ColumnInfo {
                        name: text(&r[0]),
                        auto_increment: primary_key
                            && pk_count == 1
                            && type_name.eq_ignore_ascii_case("INTEGER"),
                        nullable: matches!(r[2], Raw::Int(0)),
                        primary_key,
                        type_name,
                        precision: 0,
                        scale: None,
                    }
                })
                .collect())
        }
    }
}

const PG_COLUMNS: &str = "SELECT c.column_name::text, c.udt_name::text, c.is_nullable::text, \
     COALESCE(c.column_default, '')::text, c.is_identity::text, \
     COALESCE(c.numeric_precision, 0)::int8, c.numeric_scale::int8, \
     EXISTS (SELECT 1 FROM information_schema.table_constraints tc \
       JOIN information_schema.key_column_usage k ON k.constraint_name = tc.constraint_name \
         AND k.table_schema = tc.table_schema AND k.table_name = tc.table_name \
       WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema \
         AND tc.table_name = c.table_name AND k.column_name = c.column_name) \
     FROM information_schema.columns c WHERE c.table_schema = $1 AND c.table_name = $2 \
     ORDER BY c.ordinal_position";

fn pg_column(r: Vec<Raw>) -> ColumnInfo {
    let text = |v: &Raw| match v {
        Raw::Text(s) => s.clone(),
        _ => String::new(),
    };
    let default = text(&r[3]);
    let type_name = text(&r[1]);
    let (precision, scale) = match (&r[5], &r[6]) {
        (Raw::Int(p), Raw::Int(s)) if type_name == "numeric" => (*p as i32, Some(*s as i32)),
        _ => (0, None),
    };
    ColumnInfo {
        name: text(&r[0]),
        nullable: text(&r[2]) == "YES",
        auto_increment: default.starts_with("nextval(") || text(&r[4]) == "YES",
        primary_key: matches!(r[7], Raw::Bool(true)),
        type_name,
        precision,
        scale,
    }
}

#[cfg(feature = "jdbc-postgres")]
fn pg_statement(
    client: &mut postgres::Client,
    statements: &mut HashMap<String, postgres::Statement>,
    sql: &str,
) -> Result<postgres::Statement, DbError> {
    if let Some(s) = statements.get(sql) {
        return Ok(s.clone());
    }
    let stmt = client.prepare(sql)?;
    if statements.len() > 256 {
        statements.clear();
    }
    statements.insert(sql.to_string(), stmt.clone());
    Ok(stmt)
}

fn sqlite_raw(v: rusqlite::types::ValueRef<'_>) -> Raw {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Raw::Null,
        ValueRef::Integer(i) => Raw::Int(i),
        ValueRef::Real(f) => Raw::Float(f),
        ValueRef::Text(t) => Raw::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Raw::Bytes(b.to_vec()),
    }
}

/// How a parameter is stored in SQLite: numbers and text as they are, booleans as 0/1, dates, times
/// and timestamps as epoch milliseconds (what the SQLite JDBC driver writes), decimals as text (the
/// column's affinity decides).
fn sqlite_param(p: &Param) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match p {
        Param::Null => V::Null,
        Param::Int(i) => V::Integer(*i),
        Param::Float(f) => V::Real(*f),
        Param::Bool(b) => V::Integer(*b as i64),
        Param::Text(s) | Param::Decimal(s) => V::Text(s.clone()),
        Param::Bytes(b) => V::Blob(b.clone()),
        Param::Date(d) => V::Integer(*d as i64 * 86_400_000),
        Param::Time(us) => V::Integer(us.div_euclid(1000)),
        Param::Timestamp(nanos) => V::Integer(nanos.div_euclid(1_000_000)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse() {
        assert_eq!(
            parse_url("jdbc:sqlite:/tmp/a.db").unwrap(),
            Target::Sqlite("/tmp/a.db".into())
        );
        let url = "jdbc:postgresql://db.example:6543/shop?user=u&password=p%40ss&sslmode=require";
        let expected = Target::Postgres {
            host: "db.example".into(),
            port: 6543,
            database: "shop".into(),
            params: [("user", "u"), ("password", "p@ss"), ("sslmode", "require")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        assert_eq!(parse_url(url).unwrap(), expected);
        assert!(parse_url("jdbc:mysql://x/y").is_err());
    }
}
