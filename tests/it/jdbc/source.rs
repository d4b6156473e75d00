//! The JDBC source over SQLite tables written to while it runs: no row missed or duplicated across polls,
//! query mode, new tables, and the offsets API.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::json;

use super::{count, exec, field, jdbc_source, topic_values};
use crate::common::*;

fn ids(values: &[String]) -> Vec<i64> {
    values
        .iter()
        .filter_map(|v| field(v, "id")?.parse().ok())
        .collect()
}

fn now_text() -> String {
    chrono::Utc::now()
        .naive_utc()
        .format("%Y-%m-%d %H:%M:%S%.3f")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_incrementing_source_copies_every_row_once_while_inserting() {
    let f = Fixture::start().await;
    let db = f.dir.path().join("src.db");
    exec(
        &db,
        "PRAGMA journal_mode=WAL; CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
    );
    for i in 1..=30 {
        exec(&db, &format!("INSERT INTO items(name) VALUES ('n{i}')"));
    }
    let url = format!("jdbc:sqlite:{}", db.display());
    f.w.create(jdbc_source(
        "inc",
        &url,
        &[
            ("mode", "incrementing"),
            ("topic.prefix", "inc-"),
            ("batch.max.rows", "7"),
        ],
    ))
    .await;
    let writer_db = db.clone();
    let writer = tokio::task::spawn_blocking(move || {
        for i in 31..=90 {
            exec(
                &writer_db,
                &format!("INSERT INTO items(name) VALUES ('n{i}')"),
            );
            std::thread::sleep(Duration::from_millis(3));
        }
    });
    writer.await.unwrap();
    let wdb = f.w.db.clone();
    wait_until("90 rows in the topic", || async {
        topic_values(&wdb, "inc-items").len() >= 90
    })
    .await;
    assert_holds_for("no duplicate", Duration::from_millis(500), || async {
        topic_values(&wdb, "inc-items").len() == 90
    })
    .await;
    let got = ids(&topic_values(&wdb, "inc-items"));
    assert_eq!(got, (1..=90).collect::<Vec<_>>(), "every id once, in order");
    // The value is a Struct named after the table, with Confluent's types (INTEGER -> int32).
    let (_, offsets) = f.w.get("/connectors/inc/offsets").await;
    assert_eq!(
        offsets,
        json!({"offsets": [{"partition": {"protocol": "1", "table": "items"}, "offset": {"incrementing": 90}}]})
    );
}

/// Ten rounds of four rows sharing a timestamp, each followed by an update of two rows.
fn insert_and_update(writer_db: &std::path::Path) {
    for round in 0..10 {
        let ts = now_text();
        let rows: Vec<String> = (0..4).map(|_| format!("('{ts}', {round})")).collect();
        exec(
            writer_db,
            &format!("INSERT INTO ev(ts, v) VALUES {}", rows.join(",")),
        );
        let ts = now_text();
        exec(
            writer_db,
            &format!(
                "UPDATE ev SET v = v + 100, ts = '{ts}' WHERE id IN ({}, {})",
                round + 1,
                round * 3 + 2
            ),
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Rows inserted in groups sharing a timestamp, and updated, while two sources (timestamp and
/// timestamp+incrementing) poll with a batch smaller than a group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_timestamp_sources_miss_and_repeat_nothing_across_shared_timestamps() {
    let f = Fixture::start().await;
    let db = f.dir.path().join("src.db");
    exec(&db, "PRAGMA journal_mode=WAL; CREATE TABLE ev(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v INTEGER NOT NULL);");
    for g in 0..5 {
        for _ in 0..4 {
            exec(
                &db,
                &format!("INSERT INTO ev(ts, v) VALUES ('2024-01-01 00:00:0{g}', 0)"),
            );
        }
    }
    let url = format!("jdbc:sqlite:{}", db.display());
    for (name, mode) in [("ts", "timestamp"), ("tsi", "timestamp+incrementing")] {
        f.w.create(jdbc_source(
            name,
            &url,
            &[
                ("mode", mode),
                ("topic.prefix", &format!("{name}-")),
                ("timestamp.column.name", "ts"),
                ("batch.max.rows", "3"),
            ],
        ))
        .await;
    }
    let writer_db = db.clone();
    tokio::task::spawn_blocking(move || insert_and_update(&writer_db))
        .await
        .unwrap();
    let final_rows: BTreeMap<i64, i64> = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let mut s = c.prepare("SELECT id, v FROM ev").unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let wdb = f.w.db.clone();
    for topic in ["ts-ev", "tsi-ev"] {
        let versions = || {
            topic_values(&wdb, topic)
                .iter()
                .map(|v| {
                    (
                        field(v, "id").unwrap().parse::<i64>().unwrap(),
                        field(v, "v").unwrap().parse::<i64>().unwrap(),
                    )
                })
                .collect::<Vec<_>>()
        };
        wait_until(
            &format!("{topic} to hold the last version of every row"),
            || async {
                let got: BTreeSet<(i64, i64)> = versions().into_iter().collect();
                final_rows.iter().all(|(id, v)| got.contains(&(*id, *v)))
            },
        )
        .await;
        let got = versions();
        let unique: BTreeSet<(i64, i64)> = got.iter().copied().collect();
        assert_eq!(
            got.len(),
            unique.len(),
            "{topic}: no version twice: {got:?}"
        );
        let seen_ids: BTreeSet<i64> = got.iter().map(|(id, _)| *id).collect();
        assert_eq!(seen_ids.len(), final_rows.len(), "{topic}: every row");
    }
    let (_, offsets) = f.w.get("/connectors/tsi/offsets").await;
    let offset = &offsets["offsets"][0]["offset"];
    assert!(
        offset["incrementing"].is_i64()
            && offset["timestamp"].is_i64()
            && offset["timestamp_nanos"].is_i64(),
        "{offsets}"
    );
    assert_eq!(
        offsets["offsets"][0]["partition"],
        json!({"protocol": "1", "table": "ev"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_query_mode_offsets_can_be_read_altered_and_given_on_create() {
    let f = Fixture::start().await;
    let db = f.dir.path().join("src.db");
    exec(
        &db,
        "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
    );
    for i in 1..=10 {
        exec(&db, &format!("INSERT INTO items(name) VALUES ('n{i}')"));
    }
    let url = format!("jdbc:sqlite:{}", db.display());
    f.w.create(jdbc_source(
        "q",
        &url,
        &[
            ("mode", "incrementing"),
            ("query", "SELECT id, name FROM items"),
            ("incrementing.column.name", "id"),
            ("topic.prefix", "q-out"),
        ],
    ))
    .await;
    let wdb = f.w.db.clone();
    wait_until("10 rows", || async {
        topic_values(&wdb, "q-out").len() == 10
    })
    .await;
    let partition = json!({"query": "query"});
    wait_until("the offset", || async {
        f.w.get("/connectors/q/offsets").await.1
            == json!({"offsets": [{"partition": partition, "offset": {"incrementing": 10}}]})
    })
    .await;
    // KIP-875: stop, rewind to 4, resume: rows 5..10 again.
    assert_eq!(f.w.put_empty("/connectors/q/stop").await.0, 204);
    f.w.wait_for_state("q", "STOPPED", 0, "RUNNING").await;
    let (status, body) =
        f.w.patch(
            "/connectors/q/offsets",
            json!({"offsets": [{"partition": partition, "offset": {"incrementing": 4}}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(f.w.put_empty("/connectors/q/resume").await.0, 202);
    wait_until("rows 5..10 again", || async {
        topic_values(&wdb, "q-out").len() == 16
    })
    .await;
    assert_eq!(ids(&topic_values(&wdb, "q-out"))[10..], [5, 6, 7, 8, 9, 10]);
    // A bad offset is refused, naming the key.
    assert_eq!(f.w.put_empty("/connectors/q/stop").await.0, 204);
    f.w.wait_for_state("q", "STOPPED", 0, "RUNNING").await;
    let (status, body) =
        f.w.patch(
            "/connectors/q/offsets",
            json!({"offsets": [{"partition": partition, "offset": {"incrementing": "x"}}]}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("incrementing"),
        "{body}"
    );

    // KIP-995: a table source created with its offset starts after it.
    let mut body = jdbc_source(
        "t",
        &url,
        &[
            ("mode", "incrementing"),
            ("topic.prefix", "t-"),
            ("table.whitelist", "items"),
        ],
    );
    body["offsets"] =
        json!([{"partition": {"protocol": "1", "table": "items"}, "offset": {"incrementing": 7}}]);
    f.w.create(body).await;
    wait_until("rows after 7", || async {
        topic_values(&wdb, "t-items").len() == 3
    })
    .await;
    assert_eq!(ids(&topic_values(&wdb, "t-items")), [8, 9, 10]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_source_finds_new_tables_and_maps_types() {
    let f = Fixture::start().await;
    let db = f.dir.path().join("src.db");
    exec(&db, "CREATE TABLE first(id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO first(name) VALUES ('a');");
    let url = format!("jdbc:sqlite:{}", db.display());
    let mut body = jdbc_source(
        "nt",
        &url,
        &[
            ("mode", "bulk"),
            ("topic.prefix", "nt-"),
            ("poll.interval.ms", "60000"),
        ],
    );
    body["config"]["value.converter"] = json!("org.apache.kafka.connect.json.JsonConverter");
    f.w.create(body).await;
    let wdb = f.w.db.clone();
    wait_until("the first table", || async {
        topic_values(&wdb, "nt-first").len() == 1
    })
    .await;
    exec(
        &db,
        "CREATE TABLE later(id BIGINT NOT NULL, price DECIMAL(10,2), r REAL, d DOUBLE, b BLOB, ts TIMESTAMP, g GEOMETRY);
         INSERT INTO later VALUES (7, '12.50', 1.5, 2.25, x'0102', '2024-05-01 10:00:00.123', 'x');",
    );
    wait_until("the new table", || async {
        topic_values(&wdb, "nt-later").len() == 1
    })
    .await;
    let v: serde_json::Value = serde_json::from_str(&topic_values(&wdb, "nt-later")[0]).unwrap();
    let types: Vec<(&str, &str, Option<&str>)> = v["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["field"].as_str().unwrap(),
                f["type"].as_str().unwrap(),
                f["name"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            ("id", "int64", None),
            (
                "price",
                "bytes",
                Some("org.apache.kafka.connect.data.Decimal")
            ),
            ("r", "float", None),
            ("d", "double", None),
            ("b", "bytes", None),
            (
                "ts",
                "int64",
                Some("org.apache.kafka.connect.data.Timestamp")
            ),
        ],
        "GEOMETRY is dropped"
    );
    assert_eq!(v["schema"]["name"], "later");
    assert_eq!(v["payload"]["id"], 7);
    assert_eq!(v["payload"]["ts"], 1714557600123i64);
    assert_eq!(count(&db, "SELECT count(*) FROM later"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_source_config_errors_name_the_key() {
    let f = Fixture::start().await;
    let (status, body) = f
        .w
        .put(
            "/connector-plugins/JdbcSourceConnector/config/validate",
            json!({"connector.class": "JdbcSource", "connection.url": "jdbc:mysql://x/y", "mode": "timestamp", "topic.prefix": "p"}),
        )
        .await;
    assert_eq!(status, 200);
    let errors = validation_errors(&body);
    assert!(errors.contains_key("connection.url"), "{errors:?}");
    assert!(errors.contains_key("timestamp.column.name"), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdbc_source_names_missing_tables_and_a_missing_sqlite_file_in_its_trace() {
    let f = Fixture::start().await;
    let db = f.dir.path().join("src.db");
    exec(
        &db,
        "CREATE TABLE orders(id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO orders(name) VALUES ('a');",
    );
    let url = format!("jdbc:sqlite:{}", db.display());
    // A typo in the whitelist: the listed table that exists is copied, the other is named in the trace
    // of a task that keeps running.
    f.w.create(jdbc_source(
        "typo",
        &url,
        &[
            ("mode", "incrementing"),
            ("topic.prefix", "typo-"),
            ("table.whitelist", "orders,orderz"),
        ],
    ))
    .await;
    let status = wait_for("the missing table in the trace", DEADLINE, || async {
        let status = f.w.status("typo").await;
        status["tasks"][0]["trace"]
            .as_str()
            .is_some_and(|t| t.contains("orderz"))
            .then_some(status)
    })
    .await;
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    let trace = status["tasks"][0]["trace"].as_str().unwrap();
    assert!(
        trace.contains("table.whitelist") && !trace.contains("orders,"),
        "{trace}"
    );
    let wdb = f.w.db.clone();
    wait_until("the existing table copied", || async {
        topic_values(&wdb, "typo-orders").len() == 1
    })
    .await;
    // The table appears: the trace clears.
    exec(
        &db,
        "CREATE TABLE orderz(id INTEGER PRIMARY KEY, name TEXT);",
    );
    wait_until("the trace to clear", || async {
        f.w.status("typo").await["tasks"][0]["trace"].is_null()
    })
    .await;

    // A SQLite file that does not exist: the task fails at once, saying so, instead of waiting
    // UNASSIGNED through the connection retries.
    let nowhere = f.dir.path().join("no-such.db");
    f.w.create(jdbc_source(
        "nofile",
        &format!("jdbc:sqlite:{}", nowhere.display()),
        &[("mode", "bulk"), ("topic.prefix", "nofile-")],
    ))
    .await;
    let trace = f.w.wait_for_failed_task("nofile").await;
    assert!(
        trace.contains("does not exist") && trace.contains(&nowhere.display().to_string()),
        "{trace}"
    );
    assert!(!nowhere.exists(), "the source creates no database");
    f.w.stop().await;
}
