//! PostgreSQL for real: a SQLite table copied through the local log into PostgreSQL with upserts and
//! deletes, across a server restart and a `kill -9` of the worker, and PostgreSQL's types read by the
//! source.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::{exec, jdbc_sink, jdbc_source, topic_values, JSON_OUT};
use crate::common::postgres::Postgres;
use crate::common::*;

/// `(id, name, price)` of the source table, sorted by id.
fn source_rows(db: &Path) -> Vec<(i64, String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    let mut s = c
        .prepare("SELECT id, name, printf('%.2f', price) FROM items ORDER BY id")
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The same from the PostgreSQL copy (empty while the server is down or the table absent).
fn copy_rows(pg: &Postgres) -> Vec<(i64, String, String)> {
    pg.with_client(|c| {
        c.query(
            "SELECT id::int8, name, to_char(price, 'FM999999990.00') FROM items_copy ORDER BY id",
            &[],
        )
        .map(|rows| {
            rows.iter()
                .map(|r| (r.get(0), r.get(1), r.get(2)))
                .collect()
        })
        .unwrap_or_default()
    })
    .unwrap_or_default()
}

fn setup_source(db: &Path) {
    exec(
        db,
        "PRAGMA journal_mode=WAL;
         CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price DECIMAL(10,2) NOT NULL, updated TEXT NOT NULL, tomb TEXT);
         CREATE TABLE gone(id INTEGER PRIMARY KEY, updated TEXT NOT NULL, tomb TEXT);",
    );
}

fn insert(db: &Path, from: i64, to: i64) {
    for i in from..=to {
        exec(db, &format!("INSERT INTO items(id, name, price, updated) VALUES ({i}, 'item {i}', {i}.25, strftime('%Y-%m-%d %H:%M:%f','now'))"));
    }
}

/// The source (timestamp+incrementing on both tables) and the sink: keys from the `id` field, a row of
/// `gone` turned into a tombstone for `items_copy`.
fn connectors(src_url: &str, pg_url: &str) -> (Json, Json) {
    let mut extra = vec![
        ("mode", "timestamp+incrementing"),
        ("timestamp.column.name", "updated"),
        ("incrementing.column.name", "id"),
        ("topic.prefix", "rt-"),
        ("batch.max.rows", "20"),
    ];
    extra.extend(JSON_OUT);
    let source = jdbc_source("rt-src", src_url, &extra);
    let sink = jdbc_sink(
        "rt-sink",
        pg_url,
        "rt-items,rt-gone",
        &[
            ("insert.mode", "upsert"),
            ("pk.mode", "record_key"),
            ("pk.fields", "id"),
            ("delete.enabled", "true"),
            ("auto.create", "true"),
            ("table.name.format", "items_copy"),
            ("transforms", "key,tomb,route"),
            (
                "transforms.key.type",
                "org.apache.kafka.connect.transforms.ValueToKey",
            ),
            ("transforms.key.fields", "id"),
            (
                "transforms.tomb.type",
                "org.apache.kafka.connect.transforms.ExtractField$Value",
            ),
            ("transforms.tomb.field", "tomb"),
            ("transforms.tomb.predicate", "isGone"),
            (
                "transforms.route.type",
                "org.apache.kafka.connect.transforms.RegexRouter",
            ),
            ("transforms.route.regex", "rt-gone"),
            ("transforms.route.replacement", "rt-items"),
            ("predicates", "isGone"),
            (
                "predicates.isGone.type",
                "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            ),
            ("predicates.isGone.pattern", "rt-gone"),
            ("connection.backoff.ms", "200"),
        ],
    );
    (source, sink)
}

async fn wait_copy_matches(pg: &Postgres, db: &Path, what: &str) {
    wait_for(what, Duration::from_secs(60), || async {
        let (want, got) = (source_rows(db), copy_rows(pg));
        (want == got).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_round_trip_sqlite_to_postgres_survives_a_server_restart() {
    let mut pg = Postgres::start();
    let f = Fixture::start().await;
    let db = f.dir.path().join("src.db");
    setup_source(&db);
    insert(&db, 1, 40);
    let (source, sink) = connectors(&format!("jdbc:sqlite:{}", db.display()), &pg.url());
    f.w.create(source).await;
    f.w.create(sink).await;
    wait_copy_matches(&pg, &db, "the first 40 rows in PostgreSQL").await;

    // The server goes away while rows are inserted and updated: the sink waits, RUNNING with a trace.
    pg.stop();
    insert(&db, 41, 70);
    exec(&db, "UPDATE items SET name = name || ' (v2)', price = price + 1, updated = strftime('%Y-%m-%d %H:%M:%f','now') WHERE id % 4 = 0");
    wait_for(
        "a retriable trace while PostgreSQL is down",
        Duration::from_secs(60),
        || async {
            let s = f.w.status("rt-sink").await;
            (s["tasks"][0]["state"] == "RUNNING" && s["tasks"][0]["trace"].as_str().is_some())
                .then_some(())
        },
    )
    .await;
    pg.restart();
    wait_copy_matches(&pg, &db, "every row and update after the restart").await;

    // Deletes: a row of `gone` becomes a tombstone for its id.
    for id in [3, 8, 41] {
        exec(&db, &format!("INSERT INTO gone(id, updated) VALUES ({id}, strftime('%Y-%m-%d %H:%M:%f','now')); DELETE FROM items WHERE id = {id};"));
    }
    wait_copy_matches(&pg, &db, "the deletes in PostgreSQL").await;
    assert_eq!(source_rows(&db).len(), 67);
    f.w.wait_for_state("rt-sink", "RUNNING", 1, "RUNNING").await;
    // Upserts were written in PostgreSQL's form, with the key from the record key.
    let pk: i64 = pg
        .with_client(|c| {
            c.query_one("SELECT count(*) FROM information_schema.table_constraints WHERE table_name = 'items_copy' AND constraint_type = 'PRIMARY KEY'", &[])
                .unwrap()
                .get(0)
        })
        .unwrap();
    assert_eq!(pk, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_kill_9_of_the_worker_loses_nothing() {
    let pg = Postgres::start();
    let dir = tempdir();
    let db = dir.path().join("src.db");
    setup_source(&db);
    insert(&db, 1, 20);
    let (source, sink) = connectors(&format!("jdbc:sqlite:{}", db.display()), &pg.url());
    let bin = start_binary(dir.path(), &[]);
    let api = bin.healthy_api().await;
    create_through(&api, source).await;
    create_through(&api, sink).await;
    let writer_db = db.clone();
    let writer = std::thread::spawn(move || {
        for i in 21..=120 {
            insert(&writer_db, i, i);
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    wait_for("some rows copied", Duration::from_secs(60), || async {
        (copy_rows(&pg).len() > 20).then_some(())
    })
    .await;
    bin.kill();
    writer.join().unwrap();
    let bin = start_binary(dir.path(), &[]);
    bin.healthy_api().await;
    wait_copy_matches(&pg, &db, "all 120 rows after kill -9").await;
    let n: i64 = pg
        .with_client(|c| {
            c.query_one("SELECT count(*) FROM items_copy", &[])
                .unwrap()
                .get(0)
        })
        .unwrap();
    assert_eq!(n, 120);
    bin.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_postgres_source_reads_postgres_types() {
    let pg = Postgres::start();
    pg.with_client(|c| c.batch_execute(
        "CREATE TABLE orders(id serial PRIMARY KEY, amount numeric(10,2) NOT NULL, qty int2, big int8, f4 float4,
           placed timestamptz NOT NULL DEFAULT now() - interval '1 second', day date, doc jsonb, ref uuid, raw bytea, flag bool, pt point);
         INSERT INTO orders(amount, qty, big, f4, placed, day, doc, ref, raw, flag, pt)
           VALUES (12.50, 3, 9000000000, 1.5, '2024-05-01 10:00:00.123456+00', '2024-05-01', '{\"a\": 1}',
                   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x0102', true, '(1,2)');",
    ))
    .unwrap()
    .unwrap();
    let f = Fixture::start().await;
    let mut body = jdbc_source(
        "pgsrc",
        &pg.url(),
        &[
            ("mode", "timestamp+incrementing"),
            ("timestamp.column.name", "placed"),
            ("topic.prefix", "pg-"),
            ("numeric.mapping", "none"),
        ],
    );
    body["config"]["value.converter"] = json!("org.apache.kafka.connect.json.JsonConverter");
    f.w.create(body).await;
    let wdb = f.w.db.clone();
    wait_until("the row", || async {
        topic_values(&wdb, "pg-orders").len() == 1
    })
    .await;
    let v: Json = serde_json::from_str(&topic_values(&wdb, "pg-orders")[0]).unwrap();
    let fields: Vec<(String, String)> = v["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["field"].as_str().unwrap().to_string(),
                f["name"]
                    .as_str()
                    .unwrap_or(f["type"].as_str().unwrap())
                    .to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("id", "int32"),
        ("amount", "org.apache.kafka.connect.data.Decimal"),
        ("qty", "int16"),
        ("big", "int64"),
        ("f4", "float"),
        ("placed", "org.apache.kafka.connect.data.Timestamp"),
        ("day", "org.apache.kafka.connect.data.Date"),
        ("doc", "string"),
        ("ref", "string"),
        ("raw", "bytes"),
        ("flag", "boolean"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(fields, expected, "point is dropped");
    let p = &v["payload"];
    assert_eq!(p["placed"], 1714557600123i64);
    assert_eq!(p["day"], 19844);
    assert_eq!(p["doc"], "{\"a\": 1}");
    assert_eq!(p["ref"], "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    assert_eq!(p["amount"], "BOI="); // 1250 unscaled
    let (_, offsets) = f.w.get("/connectors/pgsrc/offsets").await;
    assert_eq!(
        offsets["offsets"][0],
        json!({"partition": {"protocol": "1", "table": "public.orders"},
               "offset": {"incrementing": 1, "timestamp": 1714557600123i64, "timestamp_nanos": 123456000}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_postgres_source_survives_a_server_restart() {
    let mut pg = Postgres::start();
    let insert = |pg: &Postgres, from: i64, to: i64| {
        pg.with_client(move |c| {
            c.batch_execute(&format!(
                "INSERT INTO feed(id, body) SELECT i, 'row ' || i FROM generate_series({from}, {to}) i"
            ))
        })
        .unwrap()
        .unwrap();
    };
    pg.with_client(|c| {
        c.batch_execute("CREATE TABLE feed(id int8 PRIMARY KEY, body text NOT NULL)")
    })
    .unwrap()
    .unwrap();
    insert(&pg, 1, 20);
    let f = Fixture::start().await;
    let extra = [
        ("mode", "incrementing"),
        ("incrementing.column.name", "id"),
        ("topic.prefix", "pgo-"),
        ("connection.backoff.ms", "200"),
    ];
    f.w.create(jdbc_source("pgo", &pg.url(), &extra)).await;
    let wdb = f.w.db.clone();
    wait_until("the first rows", || async {
        topic_values(&wdb, "pgo-feed").len() == 20
    })
    .await;
    pg.stop();
    wait_for(
        "a retriable trace while PostgreSQL is down",
        Duration::from_secs(60),
        || async {
            let s = f.w.status("pgo").await;
            let task = &s["tasks"][0];
            (task["state"] == "RUNNING" && task["trace"].as_str().is_some()).then_some(())
        },
    )
    .await;
    pg.restart();
    insert(&pg, 21, 50);
    wait_for(
        "every row after the restart",
        Duration::from_secs(60),
        || async { (topic_values(&wdb, "pgo-feed").len() >= 50).then_some(()) },
    )
    .await;
    let ids: Vec<i64> = topic_values(&wdb, "pgo-feed")
        .iter()
        .map(|v| super::field(v, "id").unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids, (1..=50).collect::<Vec<_>>(), "each row once, in order");
    f.w.wait_for_state("pgo", "RUNNING", 1, "RUNNING").await;
}

/// TLS through rustls: `verify-full` against the test CA reads the table; without TLS the server's
/// `hostssl`-only rules refuse the connection and the task fails naming them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_postgres_over_tls() {
    let mut pg = Postgres::start();
    pg.with_client(|c| {
        c.batch_execute("CREATE TABLE secret(id int4 PRIMARY KEY); INSERT INTO secret VALUES (1)")
    })
    .unwrap()
    .unwrap();
    let ca = crate::common::certs::Ca::new("liteconnect test CA");
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    pg.require_tls(&cert, &key);
    let f = Fixture::start().await;
    let ca_file = f.dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let base = format!(
        "jdbc:postgresql://127.0.0.1:{}/postgres?user=postgres",
        pg.port
    );
    let verified = format!(
        "{base}&sslmode=verify-full&sslrootcert={}",
        ca_file.display()
    );
    let extra = [
        ("mode", "bulk"),
        ("topic.prefix", "tls-"),
        ("poll.interval.ms", "60000"),
    ];
    f.w.create(jdbc_source("tls", &verified, &extra)).await;
    let wdb = f.w.db.clone();
    wait_until("the row read over TLS", || async {
        topic_values(&wdb, "tls-secret").len() == 1
    })
    .await;
    f.w.create(jdbc_source(
        "plain",
        &format!("{base}&sslmode=disable"),
        &extra,
    ))
    .await;
    let trace = f.w.wait_for_failed_task("plain").await;
    assert!(trace.contains("pg_hba.conf"), "{trace}");
}
