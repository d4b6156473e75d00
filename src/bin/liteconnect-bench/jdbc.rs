//! The jdbc scenario: rows per second through the JDBC source (table → log) and the JDBC sink (log →
//! table), for SQLite and, when a PostgreSQL server is installed, PostgreSQL; each beside a bare batched
//! select or insert on the same database in the same run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::report::{measure, Row};
use crate::worker::{TempDir, Worker};
use crate::{Ctx, Res, Settings, JSON_CONVERTER};

const SCENARIO: &str = "jdbc";

fn rows_for(s: &Settings) -> usize {
    (s.lines / 5).max(1000)
}

/// A throwaway PostgreSQL cluster on a free port (run as `postgres` when this is root).
struct Postgres {
    dir: TempDir,
    bin: PathBuf,
    port: u16,
}

fn pg_run(bin: &Path, program: &str, args: &[&str]) -> Res<()> {
    let root = Command::new("id")
        .arg("-u")
        .output()?
        .stdout
        .starts_with(b"0\n");
    let mut cmd = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(program));
        c
    } else {
        Command::new(bin.join(program))
    };
    let out = cmd.args(args).output()?;
    if !out.status.success() {
        return Err(format!("{program}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

impl Postgres {
    fn start(s: &Settings) -> Res<Option<Postgres>> {
        let Some(bin) = std::fs::read_dir("/usr/lib/postgresql").ok().and_then(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .filter(|b| b.join("initdb").exists())
                .max()
        }) else {
            return Ok(None);
        };
        let dir = TempDir::new(s, "jdbc-pg")?;
        let _ = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .status();
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let data = dir.path().join("data").display().to_string();
        pg_run(
            &bin,
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"],
        )?;
        let opts = format!("-p {port} -k {} -h 127.0.0.1", dir.path().display());
        let log = dir.path().join("log").display().to_string();
        pg_run(
            &bin,
            "pg_ctl",
            &["start", "-w", "-D", &data, "-o", &opts, "-l", &log],
        )?;
        Ok(Some(Postgres { dir, bin, port }))
    }

    fn url(&self) -> String {
        format!(
            "jdbc:postgresql://127.0.0.1:{}/postgres?user=postgres&sslmode=disable",
            self.port
        )
    }

    /// Runs `f` with a client on a thread of its own (the sync client must stay out of async code).
    fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> Res<T> + Send + 'static,
    ) -> Res<T> {
        let port = self.port;
        std::thread::spawn(move || {
            let mut c = postgres::Config::new()
                .host("127.0.0.1")
                .port(port)
                .user("postgres")
                .dbname("postgres")
                .connect(postgres::NoTls)?;
            f(&mut c)
        })
        .join()
        .map_err(|_| "PostgreSQL client thread panicked")?
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.path().join("data").display().to_string();
        let _ = pg_run(
            &self.bin,
            "pg_ctl",
            &["stop", "-D", &data, "-m", "immediate"],
        );
    }
}

/// Fills a SQLite table `items` with `n` rows.
fn fill_sqlite(path: &Path, n: usize) -> Res<()> {
    let c = rusqlite::Connection::open(path)?;
    c.execute_batch("CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount REAL NOT NULL); BEGIN;")?;
    {
        let mut stmt = c.prepare("INSERT INTO items VALUES (?1, ?2, ?3)")?;
        for i in 1..=n as i64 {
            stmt.execute(rusqlite::params![
                i,
                format!("item number {i}"),
                i as f64 * 0.5
            ])?;
        }
    }
    c.execute_batch("COMMIT")?;
    Ok(())
}

/// Seconds to read every row with a bare select.
fn sqlite_select(path: &Path) -> Res<f64> {
    let c = rusqlite::Connection::open(path)?;
    let started = Instant::now();
    let mut stmt = c.prepare("SELECT id, name, amount FROM items ORDER BY id")?;
    let mut rows = stmt.query([])?;
    let mut n = 0u64;
    while let Some(r) = rows.next()? {
        n += r.get::<_, i64>(0)? as u64;
    }
    std::hint::black_box(n);
    Ok(started.elapsed().as_secs_f64())
}

/// Times the JDBC source copying `n` rows into the log, then the JDBC sink writing them to `sink_url`.
async fn pipeline(s: &Settings, source_url: &str, sink_url: &str, n: usize) -> Res<(f64, f64)> {
    let dir = TempDir::new(s, "jdbc")?;
    let w = Worker::spawn(s, dir.path(), &dir.path().join("liteconnect.db"), &[]).await?;
    w.wait_healthy().await?;
    let conv = |mut c: Json| {
        c["key.converter"] = json!(JSON_CONVERTER);
        c["value.converter"] = json!(JSON_CONVERTER);
        c
    };
    let started = Instant::now();
    let source = json!({"connector.class": "JdbcSource", "connection.url": source_url, "mode": "incrementing",
        "table.whitelist": "items", "topic.prefix": "bench-", "batch.max.rows": "2000", "poll.interval.ms": "100"});
    w.create("source", conv(source)).await?;
    w.wait_for(
        "the source to read every row",
        Duration::from_millis(20),
        || async {
            let (_, body) = w.api.get("/connectors/source/offsets").await?;
            Ok(body["offsets"][0]["offset"]["incrementing"].as_i64() == Some(n as i64))
        },
    )
    .await?;
    let source_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let sink = json!({"connector.class": "JdbcSink", "connection.url": sink_url, "topics": "bench-items",
        "auto.create": "true", "table.name.format": "copy_${topic}", "batch.size": "3000"});
    w.create("sink", conv(sink)).await?;
    w.wait_sink_committed("sink", Duration::from_millis(20), n as i64)
        .await?;
    let sink_s = started.elapsed().as_secs_f64();
    w.stop()?;
    Ok((source_s, sink_s))
}

fn push(
    rows: &mut Vec<Row>,
    db: &str,
    n: f64,
    (source, sink): (f64, f64),
    (select, insert): (f64, f64),
) {
    rows.push(
        Row::new(
            SCENARIO,
            format!("JDBC source, {db} table → log"),
            "rows/s",
            n / source,
        )
        .baseline(format!("bare {db} select"), n / select),
    );
    rows.push(
        Row::new(
            SCENARIO,
            format!("JDBC sink, log → {db} table"),
            "rows/s",
            n / sink,
        )
        .baseline(format!("bare batched {db} insert"), n / insert),
    );
}

pub(crate) async fn scenario(ctx: &mut Ctx, rows: &mut Vec<Row>) -> Res<()> {
    let s = ctx.settings.clone();
    let n = rows_for(&s);
    let data = TempDir::new(&s, "jdbc-data")?;
    let src = data.path().join("source.db");
    fill_sqlite(&src, n)?;
    let select = measure("bare SQLite select (s)", s.runs, || async {
        sqlite_select(&src)
    })
    .await?;
    let insert = measure("bare SQLite batched insert (s)", s.runs, || async {
        let path = data
            .path()
            .join(format!("bare-{}.db", Instant::now().elapsed().as_nanos()));
        let started = Instant::now();
        fill_sqlite(&path, n)?;
        let t = started.elapsed().as_secs_f64();
        std::fs::remove_file(&path)?;
        Ok(t)
    })
    .await?;
    let src_url = format!("jdbc:sqlite:{}", src.display());
    let mut sqlite = Vec::new();
    for run in 0..s.runs {
        let dst = data.path().join(format!("sink-{run}.db"));
        sqlite.push(pipeline(&s, &src_url, &format!("jdbc:sqlite:{}", dst.display()), n).await?);
    }
    push(
        rows,
        "SQLite",
        n as f64,
        median_pair(&sqlite),
        (select, insert),
    );

    let Some(pg) = Postgres::start(&s)? else {
        eprintln!("  no PostgreSQL server installed: the PostgreSQL rows are left out");
        return Ok(());
    };
    let count = n as i64;
    pg.with(move |c| {
        c.batch_execute(&format!(
            "CREATE TABLE items(id serial PRIMARY KEY, name text NOT NULL, amount float8 NOT NULL);
             INSERT INTO items(name, amount) SELECT 'item number ' || i, i * 0.5 FROM generate_series(1, {count}) i;"
        ))?;
        Ok(())
    })?;
    let select = measure("bare PostgreSQL select (s)", s.runs, || async {
        pg.with(|c| {
            let started = Instant::now();
            let rows = c.query("SELECT id, name, amount FROM items ORDER BY id", &[])?;
            std::hint::black_box(rows.len());
            Ok(started.elapsed().as_secs_f64())
        })
    })
    .await?;
    let insert = measure("bare PostgreSQL batched insert (s)", s.runs, || async {
        pg.with(move |c| {
            c.batch_execute("DROP TABLE IF EXISTS bare; CREATE TABLE bare(id int8 PRIMARY KEY, name text, amount float8)")?;
            let started = Instant::now();
            let mut tx = c.transaction()?;
            let stmt = tx.prepare("INSERT INTO bare VALUES ($1, $2, $3)")?;
            for i in 1..=count {
                tx.execute(&stmt, &[&i, &format!("item number {i}"), &(i as f64 * 0.5)])?;
            }
            tx.commit()?;
            Ok(started.elapsed().as_secs_f64())
        })
    })
    .await?;
    let mut pgs = Vec::new();
    for run in 0..s.runs {
        eprintln!("  PostgreSQL pipeline run {}/{}", run + 1, s.runs);
        pgs.push(pipeline(&s, &pg.url(), &pg.url(), n).await?);
        pg.with(|c| Ok(c.batch_execute("DROP TABLE IF EXISTS \"copy_bench-items\"")?))?;
    }
    push(
        rows,
        "PostgreSQL",
        n as f64,
        median_pair(&pgs),
        (select, insert),
    );
    Ok(())
}

fn median_pair(xs: &[(f64, f64)]) -> (f64, f64) {
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    (
        med(xs.iter().map(|x| x.0).collect()),
        med(xs.iter().map(|x| x.1).collect()),
    )
}
