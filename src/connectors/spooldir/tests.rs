//! The task against real files with a fake runtime: offsets, skipping what is committed, cleanup only
//! after commit, error files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::config::Format;
use super::task::SpoolTask;
use crate::connectors::{Props, SourceTask, SourceTaskContext, TaskError};
use crate::data::Value;
use crate::record::SourceRecord;

#[derive(Default)]
struct Ctx {
    offsets: Mutex<HashMap<String, Json>>,
}

impl SourceTaskContext for Ctx {
    fn offset(&self, partition: &Json) -> Result<Option<Json>, TaskError> {
        Ok(self
            .offsets
            .lock()
            .unwrap()
            .get(&partition.to_string())
            .cloned())
    }
    fn wait(&self, _timeout: Duration) -> bool {
        true
    }
}

impl Ctx {
    /// Stores the offsets of polled records, as the runtime does before `commit`.
    fn store(&self, records: &[SourceRecord]) {
        let mut offsets = self.offsets.lock().unwrap();
        for r in records {
            let p = Json::Object(r.source_partition.clone().unwrap()).to_string();
            offsets.insert(p, Json::Object(r.source_offset.clone().unwrap()));
        }
    }
}

struct Dirs {
    _tmp: tempfile::TempDir,
    input: PathBuf,
    finished: PathBuf,
    error: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let d = |n: &str| {
        let p = tmp.path().join(n);
        std::fs::create_dir(&p).unwrap();
        p
    };
    Dirs {
        input: d("in"),
        finished: d("finished"),
        error: d("error"),
        _tmp: tmp,
    }
}

fn props(d: &Dirs, pattern: &str, extra: &[(&str, &str)]) -> Props {
    let mut p: Props = [
        ("topic", "t"),
        ("input.file.pattern", pattern),
        ("batch.size", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in [
        ("input.path", &d.input),
        ("finished.path", &d.finished),
        ("error.path", &d.error),
    ] {
        p.insert(k.into(), v.display().to_string());
    }
    for (k, v) in extra {
        p.insert(k.to_string(), v.to_string());
    }
    p
}

/// Directories with `files` dropped in the input one, an empty runtime, and the task config.
fn set_up(files: &[(&str, &str)], pattern: &str, extra: &[(&str, &str)]) -> (Dirs, Ctx, Props) {
    let d = dirs();
    for (name, content) in files {
        std::fs::write(d.input.join(name), content).unwrap();
    }
    let p = props(&d, pattern, extra);
    (d, Ctx::default(), p)
}

fn started(format: Format, props: &Props, ctx: &Ctx) -> SpoolTask {
    let mut task = SpoolTask::new(format);
    task.start(props, ctx).unwrap();
    task
}

/// Starts a task and polls once, checking the offsets of what comes.
fn first_poll(
    format: Format,
    props: &Props,
    ctx: &Ctx,
    expected: &[i64],
) -> (SpoolTask, Vec<SourceRecord>) {
    let mut task = started(format, props, ctx);
    let records = task.poll(ctx).unwrap();
    assert_eq!(offsets(&records), expected);
    (task, records)
}

/// Polls, stores and commits until a poll returns nothing; returns every record.
fn drain(task: &mut SpoolTask, ctx: &Ctx) -> Vec<SourceRecord> {
    let mut all = Vec::new();
    loop {
        let batch = task.poll(ctx).unwrap();
        if batch.is_empty() {
            return all;
        }
        ctx.store(&batch);
        task.commit().unwrap();
        all.extend(batch);
    }
}

fn offsets(records: &[SourceRecord]) -> Vec<i64> {
    records
        .iter()
        .map(|r| {
            r.source_offset.as_ref().unwrap()["offset"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

fn exists(p: &Path) -> bool {
    p.exists()
}

#[test]
fn csv_rows_count_lines_and_the_file_moves_only_after_commit() {
    let (d, ctx, p) = set_up(
        &[("a.csv", "id,name\n1,x\n2,y\n3,z\n")],
        ".*\\.csv",
        &[
            ("csv.first.row.as.header", "true"),
            ("schema.generation.enabled", "true"),
            ("schema.generation.key.fields", "id"),
        ],
    );
    let (mut task, first) = first_poll(Format::Csv, &p, &ctx, &[1, 2]);
    let flag = d.input.join("a.csv.PROCESSING");
    assert!(exists(&flag), "flagged while read");
    let second = task.poll(&ctx).unwrap();
    assert_eq!(offsets(&second), [3]);
    assert!(
        exists(&d.input.join("a.csv")),
        "read to the end but not committed: still in place"
    );
    ctx.store(&first);
    ctx.store(&second);
    task.commit().unwrap();
    assert!(!exists(&d.input.join("a.csv")));
    assert!(!exists(&d.input.join("a.csv.PROCESSING")));
    assert!(exists(&d.finished.join("a.csv")));
    let Value::Struct(key) = &first[0].record.key else {
        panic!("a struct key")
    };
    assert_eq!(key.get("id"), Some(&Value::String("1".into())));
    let Value::Struct(value) = &second[0].record.value else {
        panic!("a struct value")
    };
    assert_eq!(value.get("name"), Some(&Value::String("z".into())));
    let partition = Json::Object(first[0].source_partition.clone().unwrap());
    assert_eq!(partition, json!({"fileName": "a.csv"}));
    let header = |k: &str| {
        first[1]
            .record
            .headers
            .iter()
            .find(|h| h.key == k)
            .map(|h| h.value.clone())
    };
    assert_eq!(header("file.offset"), Some(Value::Int64(2)));
    assert_eq!(
        header("file.name.without.extension"),
        Some(Value::String("a".into()))
    );
    assert_eq!(
        header("file.parent.dir.name"),
        Some(Value::String("in".into()))
    );
}

#[test]
fn a_restart_skips_committed_rows_and_cleans_up_a_finished_file_without_reading_it() {
    let (d, ctx, p) = set_up(
        &[("a.txt", "l1\nl2\nl3\n"), ("b.txt", "m1\nm2\n")],
        ".*\\.txt",
        &[("cleanup.policy", "DELETE")],
    );
    let mut task = started(Format::Lines, &p, &ctx);
    let first = task.poll(&ctx).unwrap();
    ctx.store(&first);
    // Killed before commit: the file is still there with its processing flag.
    drop(task);
    assert!(exists(&d.input.join("a.txt.PROCESSING")));
    let mut task = started(Format::Lines, &p, &ctx);
    let rest = drain(&mut task, &ctx);
    let lines: Vec<String> = rest.iter().map(|r| r.record.value.to_string()).collect();
    assert_eq!(lines, ["l3", "m1", "m2"]);
    assert_eq!(offsets(&rest), [3, 1, 2]);
    assert!(!exists(&d.input.join("a.txt")) && !exists(&d.input.join("b.txt")));
    // Every record stored, the file not yet cleaned up: a restart only cleans up.
    std::fs::write(d.input.join("c.txt"), "n1\n").unwrap();
    let mut task = started(Format::Lines, &p, &ctx);
    let got = task.poll(&ctx).unwrap();
    ctx.store(&got);
    drop(task);
    let mut task = started(Format::Lines, &p, &ctx);
    assert!(drain(&mut task, &ctx).is_empty());
    assert!(!exists(&d.input.join("c.txt")));
}

#[test]
fn json_offsets_count_from_zero_and_schemaless_from_one() {
    let kept = [
        ("cleanup.policy", "NONE"),
        ("schema.generation.enabled", "true"),
    ];
    let records = "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n";
    let (d, ctx, p) = set_up(&[("a.json", records)], ".*\\.json", &kept);
    let mut task = started(Format::Json, &p, &ctx);
    let got = drain(&mut task, &ctx);
    assert_eq!(offsets(&got), [0, 1, 2]);
    assert!(exists(&d.input.join("a.json")), "NONE leaves it in place");
    assert!(
        drain(&mut task, &ctx).is_empty(),
        "and does not read it again"
    );
    let ctx = Ctx::default();
    let mut task = started(Format::SchemaLessJson, &p, &ctx);
    let got = drain(&mut task, &ctx);
    assert_eq!(offsets(&got), [1, 2, 3]);
    assert_eq!(got[2].record.value, Value::String("{\"a\":3}".into()));
}

#[test]
fn a_bad_row_sends_the_file_to_the_error_path_after_the_good_rows_are_committed() {
    let d = dirs();
    std::fs::write(d.input.join("a.csv"), "1\n2\nx\n4\n").unwrap();
    std::fs::write(d.input.join("b.csv"), "5\n").unwrap();
    let schema = r#"{"type":"STRUCT","isOptional":false,"fieldSchemas":{"n":{"type":"INT32","isOptional":false}}}"#;
    let key = r#"{"type":"STRUCT","isOptional":false,"fieldSchemas":{}}"#;
    let ctx = Ctx::default();
    let mut p = props(
        &d,
        ".*\\.csv",
        &[
            ("value.schema", schema),
            ("key.schema", key),
            ("halt.on.error", "false"),
            ("batch.size", "10"),
        ],
    );
    let (mut task, good) = first_poll(Format::Csv, &p, &ctx, &[1, 2]);
    let input = d.input.join("a.csv");
    assert!(exists(&input), "not moved before the commit");
    ctx.store(&good);
    task.commit().unwrap();
    assert!(exists(&d.error.join("a.csv")));
    let sidecar = std::fs::read_to_string(d.error.join("a.csv.error.txt")).unwrap();
    assert!(
        sidecar.contains("line 3") && sidecar.contains("'x'"),
        "{sidecar}"
    );
    let next = drain(&mut task, &ctx);
    assert_eq!(offsets(&next), [1], "the task goes on with the next file");

    std::fs::write(d.input.join("c.csv"), "y\n").unwrap();
    p.insert("halt.on.error".into(), "true".into());
    let mut task = started(Format::Csv, &p, &ctx);
    let err = task.poll(&ctx).unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
    assert!(exists(&d.error.join("c.csv")));
}

#[test]
fn cross_key_checks_name_their_keys() {
    use std::collections::BTreeMap;
    let d = dirs();
    let p = props(&d, ".*", &[("cleanup.policy", "MOVE")]);
    let mut config: BTreeMap<String, Option<String>> =
        p.into_iter().map(|(k, v)| (k, Some(v))).collect();
    config.remove("finished.path");
    let errors = super::config::cross_key_errors(Format::Csv, &config);
    let keys: Vec<&str> = errors.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["finished.path", "key.schema", "value.schema"],
        "{errors:?}"
    );
    assert_eq!(
        errors[1].1,
        "'key.schema' must be set if 'schema.generation.enabled' = false."
    );
    config.insert("schema.generation.enabled".into(), Some("true".into()));
    config.insert("timestamp.mode".into(), Some("FIELD".into()));
    config.insert("finished.path".into(), Some("/x".into()));
    let errors = super::config::cross_key_errors(Format::Csv, &config);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "timestamp.field");
    assert!(super::config::cross_key_errors(Format::Lines, &config).is_empty());
}

#[test]
fn offsets_changed_over_rest_must_have_the_originals_shape() {
    use crate::connectors::ConnectorPlugin;
    let plugin = super::SpoolDirLineDelimitedSource;
    let config = Props::new();
    let good = [(json!({"fileName": "a.txt"}), Some(json!({"offset": 3})))];
    assert_eq!(plugin.alter_offsets(&config, &good), Ok(true));
    assert_eq!(
        plugin.alter_offsets(&config, &[(json!({"fileName": "a.txt"}), None)]),
        Ok(true)
    );
    let err = plugin
        .alter_offsets(&config, &[(json!({"file": "a"}), None)])
        .unwrap_err();
    assert!(err.contains("'fileName'"), "{err}");
    let err = plugin
        .alter_offsets(
            &config,
            &[(json!({"fileName": "a"}), Some(json!({"offset": "3"})))],
        )
        .unwrap_err();
    assert!(err.contains("'offset'"), "{err}");
}

#[test]
fn sub_directories_are_walked_and_kept_under_the_finished_path() {
    let (d, ctx, p) = set_up(&[], ".*\\.txt", &[("input.path.walk.recursively", "true")]);
    std::fs::create_dir_all(d.input.join("x/y")).unwrap();
    std::fs::write(d.input.join("x/y/deep.txt"), "d1\n").unwrap();
    std::fs::write(d.input.join("top.txt"), "t1\n").unwrap();
    let mut task = started(Format::Lines, &p, &ctx);
    let got = drain(&mut task, &ctx);
    let relative: Vec<Option<Value>> = got
        .iter()
        .map(|r| {
            r.record
                .headers
                .iter()
                .find(|h| h.key == "file.relative.path")
                .map(|h| h.value.clone())
        })
        .collect();
    assert_eq!(relative, [Some(Value::String("x/y".into())), None]);
    assert!(exists(&d.finished.join("x/y/deep.txt")));
    assert!(exists(&d.finished.join("top.txt")));
    assert!(!exists(&d.input.join("x")), "emptied sub-directories go");
}

#[test]
fn each_file_is_read_by_one_task_only() {
    let names: Vec<String> = (0..12).map(|i| format!("f{i}.txt")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x\n")).collect();
    let (_d, ctx, p) = set_up(&files, ".*\\.txt", &[("cleanup.policy", "NONE")]);
    let mut seen = Vec::new();
    for index in 0..3 {
        let mut config = p.clone();
        config.insert("task.index".into(), index.to_string());
        config.insert("task.count".into(), "3".into());
        let mut task = started(Format::Lines, &config, &ctx);
        for r in drain(&mut task, &ctx) {
            seen.push(r.source_partition.unwrap()["fileName"].clone());
        }
    }
    seen.sort_by_key(|n| n.to_string());
    let mut expected: Vec<Json> = names.iter().map(|n| json!(n)).collect();
    expected.sort_by_key(|n| n.to_string());
    assert_eq!(seen, expected);
}

#[test]
fn a_new_file_under_a_name_already_cleaned_up_is_read_from_its_start() {
    let (d, ctx, p) = set_up(
        &[("daily.txt", "a\nb\n")],
        ".*\\.txt",
        &[("cleanup.policy", "DELETE")],
    );
    let mut task = started(Format::Lines, &p, &ctx);
    assert_eq!(offsets(&drain(&mut task, &ctx)), [1, 2]);
    assert!(!exists(&d.input.join("daily.txt")));
    std::fs::write(d.input.join("daily.txt"), "c\nd\ne\n").unwrap();
    let again = drain(&mut task, &ctx);
    let lines: Vec<String> = again.iter().map(|r| r.record.value.to_string()).collect();
    assert_eq!(lines, ["c", "d", "e"]);
}

#[test]
fn an_empty_file_does_not_fix_the_generated_schema() {
    let gen = [("schema.generation.enabled", "true"), ("batch.size", "10")];
    let (d, ctx, p) = set_up(
        &[("a.json", ""), ("b.json", "{\"x\": 1}\n")],
        ".*\\.json",
        &gen,
    );
    let mut task = started(Format::Json, &p, &ctx);
    let got = drain(&mut task, &ctx);
    assert_eq!(got.len(), 1);
    let Value::Struct(value) = &got[0].record.value else {
        panic!("a struct value")
    };
    assert_eq!(value.get("x"), Some(&Value::String("1".into())));
    assert!(exists(&d.finished.join("a.json")) && exists(&d.finished.join("b.json")));
}
