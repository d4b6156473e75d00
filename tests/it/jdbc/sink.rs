//! The JDBC sink on SQLite: insert modes, auto-create and auto-evolve, deletes, schemaless values, errant
//! records (dead letter queue, tolerance none) and a locked database.

use std::path::Path;
use std::time::Duration;

use liteconnect::connectors::jdbc::JdbcSink;
use liteconnect::connectors::{ConnectorPlugin, ErrantRecordReporter, Props, SinkTask, TaskError};
use liteconnect::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};
use liteconnect::record::{ConnectRecord, SinkRecord};

use super::{count, exec, jdbc_sink, jdbc_source, topic_values, JSON_OUT};
use crate::common::*;

fn task(db: &Path, extra: &[(&str, &str)]) -> Box<dyn SinkTask> {
    let mut config: Props = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    config.insert(
        "connection.url".into(),
        format!("jdbc:sqlite:{}", db.display()),
    );
    let mut t = JdbcSink.sink_task().unwrap();
    t.start(&config).unwrap();
    t
}

fn schema(with_note: bool) -> SchemaRef {
    let mut b = SchemaBuilder::struct_()
        .name("person")
        .field("id", Schema::int64())
        .field("name", Schema::string());
    if with_note {
        b = b.field("note", Schema::optional_string());
    }
    b.build()
}

fn record(offset: i64, id: i64, name: &str, note: Option<&str>) -> SinkRecord {
    let s = schema(note.is_some());
    let mut v = Struct::new(s.clone());
    v.put("id", id).unwrap();
    v.put("name", name).unwrap();
    if let Some(n) = note {
        v.put("note", n).unwrap();
    }
    let key_schema = SchemaBuilder::struct_()
        .field("id", Schema::int64())
        .build();
    let key = Struct::new(key_schema.clone()).with("id", id).unwrap();
    let mut r = ConnectRecord::new("people", Some(s), Value::Struct(v));
    r.kafka_partition = Some(0);
    r.key_schema = Some(key_schema);
    r.key = Value::Struct(key);
    SinkRecord {
        record: r,
        kafka_offset: offset,
    }
}

fn tombstone(offset: i64, id: i64) -> SinkRecord {
    let mut r = record(offset, id, "", None);
    r.record.value = Value::Null;
    r.record.value_schema = None;
    r
}

fn rows(db: &Path, sql: &str) -> Vec<(i64, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c.prepare(sql).unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Collects what a task reports.
#[derive(Default)]
struct Collect(Vec<(i64, String)>);

impl ErrantRecordReporter for Collect {
    fn report(&mut self, record: &SinkRecord, message: &str) -> Result<(), TaskError> {
        self.0.push((record.kafka_offset, message.to_string()));
        Ok(())
    }
}

#[test]
fn jdbc_sink_inserts_into_a_created_table_and_reports_refused_rows() {
    let dir = tempdir();
    let db = dir.path().join("target.db");
    // insert, with auto.create: Confluent's SQLite DDL.
    let mut t = task(
        &db,
        &[
            ("auto.create", "true"),
            ("auto.evolve", "true"),
            ("pk.mode", "record_key"),
            ("pk.fields", "id"),
        ],
    );
    t.put(&[record(0, 1, "ann", None), record(1, 2, "bob", None)])
        .unwrap();
    t.flush().unwrap();
    assert_eq!(
        rows(&db, "SELECT id, name FROM people ORDER BY id"),
        [(1, "ann".into()), (2, "bob".into())]
    );
    let ddl: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'people'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ddl, "CREATE TABLE `people` (\n`id` INTEGER NOT NULL,\n`name` TEXT NOT NULL,\nPRIMARY KEY(`id`))");
    // A duplicate key in insert mode is the record's own fault: reported, the rest written.
    let mut reported = Collect::default();
    t.put_reporting(
        &[record(2, 2, "bob again", None), record(3, 3, "cy", None)],
        &mut reported,
    )
    .unwrap();
    assert_eq!(reported.0.len(), 1);
    assert_eq!(reported.0[0].0, 2);
    assert!(reported.0[0].1.contains("UNIQUE"), "{:?}", reported.0);
    assert_eq!(count(&db, "SELECT count(*) FROM people"), 3);
    // A plain put (no reporter) fails on it.
    assert!(matches!(
        t.put(&[record(4, 1, "x", None)]),
        Err(TaskError::Fatal(_))
    ));
    t.stop();
}

#[test]
fn jdbc_sink_upsert_evolve_delete_and_update() {
    let dir = tempdir();
    let db = dir.path().join("target.db");
    let mut t = task(&db, &[("auto.create", "true"), ("pk.mode", "record_key")]);
    t.put(&[
        record(0, 1, "ann", None),
        record(1, 2, "bob", None),
        record(3, 3, "cy", None),
    ])
    .unwrap();
    // upsert, with auto.evolve adding an optional column.
    let mut t = task(
        &db,
        &[
            ("insert.mode", "upsert"),
            ("auto.evolve", "true"),
            ("pk.mode", "record_key"),
        ],
    );
    t.put(&[
        record(5, 1, "ann2", Some("hi")),
        record(6, 4, "dee", Some("new")),
    ])
    .unwrap();
    assert_eq!(
        rows(
            &db,
            "SELECT id, name || '/' || coalesce(note, '') FROM people ORDER BY id"
        ),
        [
            (1, "ann2/hi".into()),
            (2, "bob/".into()),
            (3, "cy/".into()),
            (4, "dee/new".into())
        ]
    );
    // A tombstone deletes (delete.enabled needs pk.mode=record_key).
    let mut t = task(
        &db,
        &[
            ("insert.mode", "upsert"),
            ("pk.mode", "record_key"),
            ("delete.enabled", "true"),
        ],
    );
    t.put(&[tombstone(7, 2)]).unwrap();
    assert_eq!(count(&db, "SELECT count(*) FROM people WHERE id = 2"), 0);
    // update: only existing rows change.
    let mut t = task(
        &db,
        &[
            ("insert.mode", "update"),
            ("pk.mode", "record_value"),
            ("pk.fields", "id"),
        ],
    );
    t.put(&[record(8, 3, "cy2", None), record(9, 99, "ghost", None)])
        .unwrap();
    assert_eq!(
        rows(&db, "SELECT id, name FROM people WHERE id IN (3, 99)"),
        [(3, "cy2".into())]
    );
    // Without auto.evolve a new field is an error naming it.
    let mut t = task(&db, &[("pk.mode", "kafka")]);
    let err = t.put(&[record(10, 5, "e", None)]).unwrap_err().to_string();
    assert!(
        err.contains("missing fields") && err.contains("__connect_topic"),
        "{err}"
    );
}

#[test]
fn jdbc_sink_writes_schemaless_maps_to_an_existing_table() {
    let dir = tempdir();
    let db = dir.path().join("target.db");
    exec(
        &db,
        "CREATE TABLE events(id INTEGER PRIMARY KEY, kind TEXT, amount REAL)",
    );
    let mut t = task(
        &db,
        &[
            ("insert.mode", "upsert"),
            ("pk.mode", "record_value"),
            ("pk.fields", "id"),
        ],
    );
    let map = |id: i64, kind: &str| {
        Value::Map(vec![
            (Value::String("id".into()), Value::Int64(id)),
            (Value::String("kind".into()), Value::String(kind.into())),
            (Value::String("amount".into()), Value::Float64(1.5)),
            (
                Value::String("extra".into()),
                Value::String("ignored".into()),
            ),
        ])
    };
    let mut recs = Vec::new();
    for (i, (id, kind)) in [(1, "a"), (2, "b"), (1, "c")].into_iter().enumerate() {
        let mut r = ConnectRecord::new("events", None, map(id, kind));
        r.kafka_partition = Some(0);
        recs.push(SinkRecord {
            record: r,
            kafka_offset: i as i64,
        });
    }
    t.put(&recs).unwrap();
    assert_eq!(
        rows(&db, "SELECT id, kind FROM events ORDER BY id"),
        [(1, "c".into()), (2, "b".into())]
    );
    // A table that does not exist cannot be created from a schemaless value.
    let mut t = task(
        &db,
        &[
            ("auto.create", "true"),
            ("table.name.format", "missing_${topic}"),
        ],
    );
    let err = t.put(&recs[..1]).unwrap_err().to_string();
    assert!(err.contains("missing_events"), "{err}");
}

/// A row the target refuses (a UNIQUE constraint) goes to the dead letter queue with tolerance `all`,
/// and fails the task with tolerance `none`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_sink_refused_rows_follow_error_tolerance() {
    let f = Fixture::start().await;
    let src = f.dir.path().join("src.db");
    let dst = f.dir.path().join("dst.db");
    exec(&src, "CREATE TABLE people(id INTEGER PRIMARY KEY, email TEXT NOT NULL); INSERT INTO people(email) VALUES ('a@x'), ('b@x'), ('a@x'), ('c@x');");
    exec(&dst, "CREATE TABLE `dl-people`(id INTEGER, email TEXT UNIQUE); CREATE TABLE `none-people`(id INTEGER, email TEXT UNIQUE);");
    let src_url = format!("jdbc:sqlite:{}", src.display());
    let dst_url = format!("jdbc:sqlite:{}", dst.display());
    for prefix in ["dl-", "none-"] {
        let mut extra = vec![("mode", "incrementing"), ("topic.prefix", prefix)];
        extra.extend(JSON_OUT);
        f.w.create(jdbc_source(&format!("{prefix}src"), &src_url, &extra))
            .await;
    }
    f.w.create(jdbc_sink(
        "dl-sink",
        &dst_url,
        "dl-people",
        &[
            ("errors.tolerance", "all"),
            ("errors.deadletterqueue.topic.name", "dlq"),
        ],
    ))
    .await;
    f.w.create(jdbc_sink("none-sink", &dst_url, "none-people", &[]))
        .await;
    wait_until("three rows written", || async {
        count(&dst, "SELECT count(*) FROM `dl-people`") == 3
    })
    .await;
    let wdb = f.w.db.clone();
    wait_until("one record in the DLQ", || async {
        topic_values(&wdb, "dlq").len() == 1
    })
    .await;
    assert!(
        topic_values(&wdb, "dlq")[0].contains("\"id\":3"),
        "{:?}",
        topic_values(&wdb, "dlq")
    );
    f.w.wait_for_state("dl-sink", "RUNNING", 1, "RUNNING").await;
    let trace = f.w.wait_for_failed_task("none-sink").await;
    assert!(trace.contains("UNIQUE constraint failed"), "{trace}");
    assert_eq!(
        count(&dst, "SELECT count(*) FROM `none-people`"),
        0,
        "the failed put's transaction rolled back"
    );
}

/// A target database locked by another writer: the task stays RUNNING with a trace, and writes
/// everything once the lock is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_sink_waits_out_a_locked_database() {
    let f = Fixture::start().await;
    let src = f.dir.path().join("src.db");
    let dst = f.dir.path().join("dst.db");
    exec(&src, "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO items(name) VALUES ('a'), ('b');");
    let src_url = format!("jdbc:sqlite:{}", src.display());
    let dst_url = format!("jdbc:sqlite:{}", dst.display());
    let mut extra = vec![("mode", "incrementing"), ("topic.prefix", "lk-")];
    extra.extend(JSON_OUT);
    f.w.create(jdbc_source("lk-src", &src_url, &extra)).await;
    f.w.create(jdbc_sink(
        "lk-sink",
        &dst_url,
        "lk-items",
        &[
            ("auto.create", "true"),
            ("insert.mode", "upsert"),
            ("pk.mode", "record_value"),
            ("pk.fields", "id"),
        ],
    ))
    .await;
    wait_until("first rows", || async {
        count(&dst, "SELECT count(*) FROM `lk-items`") == 2
    })
    .await;
    let locker = rusqlite::Connection::open(&dst).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    for i in 0..20 {
        exec(&src, &format!("INSERT INTO items(name) VALUES ('l{i}')"));
    }
    wait_for(
        "a retriable trace while locked",
        Duration::from_secs(40),
        || async {
            let s = f.w.status("lk-sink").await;
            (s["tasks"][0]["state"] == "RUNNING"
                && s["tasks"][0]["trace"]
                    .as_str()
                    .is_some_and(|t| t.contains("locked")))
            .then_some(())
        },
    )
    .await;
    locker.execute_batch("COMMIT").unwrap();
    drop(locker);
    wait_for(
        "every row after the lock",
        Duration::from_secs(40),
        || async { (count(&dst, "SELECT count(*) FROM `lk-items`") == 22).then_some(()) },
    )
    .await;
    f.w.wait_for_state("lk-sink", "RUNNING", 1, "RUNNING").await;
}
