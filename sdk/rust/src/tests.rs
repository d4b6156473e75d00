//! The framing, through whole exchanges with a plugin.

use super::*;

struct Counter(i64);
impl SourceTask for Counter {
    fn start(&mut self, _: &Config, ctx: &mut SourceContext<'_>) -> Result<()> {
        self.0 = ctx
            .offset(&json!({"c": 0}))?
            .and_then(|o| o["n"].as_i64())
            .unwrap_or(0);
        Ok(())
    }
    fn poll(&mut self, ctx: &mut SourceContext<'_>) -> Result<Vec<Record>> {
        if self.0 >= 2 {
            ctx.idle(50);
            return Ok(Vec::new());
        }
        self.0 += 1;
        Ok(vec![Record::source(
            "t",
            Data::schemaless(json!(self.0)),
            json!({"c": 0}),
            json!({"n": self.0}),
        )])
    }
}

fn exchange(plugin: Plugin, input: &[Value]) -> Vec<Value> {
    let text: String = input.iter().map(|m| format!("{m}\n")).collect();
    let out = Arc::new(Mutex::new(Vec::new()));
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    plugin
        .serve(
            Box::new(std::io::Cursor::new(text.into_bytes())),
            Box::new(Shared(out.clone())),
        )
        .unwrap();
    let bytes = out.lock().unwrap().clone();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_source_task_exchange() {
    let plugin = Plugin::new().source_task(|| Box::new(Counter(0)));
    let out = exchange(
        plugin,
        &[
            json!({"type": "hello", "protocol": [1], "class": "C", "role": "source_task"}),
            json!({"type": "start", "config": {"topic": "t"}}),
            json!({"type": "offsets", "offsets": [{"partition": {"c": 0}, "offset": {"n": 1}}]}),
            json!({"type": "poll"}),
            json!({"type": "commit", "offsets": [{"partition": {"c": 0}, "offset": {"n": 2}}]}),
            json!({"type": "poll"}),
            json!({"type": "stop"}),
        ],
    );
    assert_eq!(out[0], json!({"type": "hello", "protocol": 1, "minor": 1}));
    assert_eq!(out[1]["type"], "offset_request");
    assert_eq!(out[2]["type"], "started");
    assert_eq!(out[3]["records"][0]["source_offset"], json!({"n": 2}));
    assert_eq!(
        out[3]["records"][0]["value"],
        json!({"schema": null, "payload": 2})
    );
    assert_eq!(
        out[4],
        json!({"type": "records", "records": [], "idle_ms": 50})
    );
    assert_eq!(out.len(), 5);
}

/// Asks for a reconfiguration as it starts; its task count is the `n` it was started with.
struct Devices(usize);
impl Connector for Devices {
    fn monitors(&self) -> bool {
        true
    }
    fn start(&mut self, config: &Config, ctx: ConnectorContext) -> Result<()> {
        self.0 = config.get("n").and_then(|n| n.parse().ok()).unwrap_or(0);
        let thread = std::thread::spawn(move || ctx.request_task_reconfiguration());
        thread.join().unwrap()
    }
    fn task_configs(&self, _config: &Config, max_tasks: usize) -> Result<Vec<Config>> {
        Ok((0..self.0.min(max_tasks))
            .map(|i| Config::from([("device".to_string(), i.to_string())]))
            .collect())
    }
}

#[test]
fn a_running_connector_asks_for_a_reconfiguration() {
    let out = exchange(
        Plugin::new().connector(Devices(0)),
        &[
            json!({"type": "hello", "protocol": [1], "minor": 1, "role": "connector"}),
            json!({"type": "start", "config": {"n": "3"}}),
            json!({"type": "task_configs", "config": {"n": "3"}, "max_tasks": 2}),
            json!({"type": "stop"}),
        ],
    );
    assert_eq!(out[0]["monitors"], true);
    assert_eq!(out[1], json!({"type": "request_task_reconfiguration"}));
    assert_eq!(out[2], json!({"type": "started"}));
    assert_eq!(out[3]["tasks"], json!([{"device": "0"}, {"device": "1"}]));
    assert_eq!(out.len(), 4);
}

/// Records the partitions it is told of.
struct Opened(Arc<Mutex<Vec<(String, i32)>>>);
impl SinkTask for Opened {
    fn start(&mut self, _: &Config) -> Result<()> {
        Ok(())
    }
    fn open(&mut self, partitions: &[(String, i32)]) -> Result<()> {
        self.0.lock().unwrap().extend_from_slice(partitions);
        Ok(())
    }
    fn put(&mut self, _: Vec<Record>) -> Result<Vec<TopicOffset>> {
        Ok(Vec::new())
    }
}

#[test]
fn a_sink_task_is_told_its_partitions() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let task = seen.clone();
    let out = exchange(
        Plugin::new().sink_task(move || Box::new(Opened(task.clone()))),
        &[
            json!({"type": "hello", "protocol": [1], "minor": 1, "role": "sink_task"}),
            json!({"type": "start", "config": {}, "partitions": [{"topic": "t", "partition": 0}]}),
            json!({"type": "open", "partitions": [{"topic": "u", "partition": 2}]}),
        ],
    );
    assert_eq!(out[1], json!({"type": "started"}));
    assert_eq!(out[2], json!({"type": "opened"}));
    assert_eq!(
        *seen.lock().unwrap(),
        [("t".to_string(), 0), ("u".to_string(), 2)]
    );
}

struct Even;
impl Predicate for Even {
    fn test(&mut self, record: &Record) -> Result<bool> {
        Ok(record.value.payload().as_i64().is_some_and(|n| n % 2 == 0))
    }
}

#[test]
fn a_predicate_exchange() {
    let out = exchange(
        Plugin::new().predicate(|| Box::new(Even)),
        &[
            json!({"type": "hello", "protocol": [1], "class": "P", "role": "predicate"}),
            json!({"type": "start", "config": {}}),
            json!({"type": "test", "record": {"topic": "t", "value": {"schema": null, "payload": 4}}}),
            json!({"type": "test", "record": {"topic": "t", "value": {"schema": null, "payload": 5}}}),
        ],
    );
    assert_eq!(out[2], json!({"type": "tested", "matches": true}));
    assert_eq!(out[3], json!({"type": "tested", "matches": false}));
}

#[test]
fn an_unknown_role_or_version_is_an_error() {
    let out = exchange(
        Plugin::new(),
        &[json!({"type": "hello", "protocol": [2], "role": "connector"})],
    );
    assert_eq!(out[0]["type"], "error");
    let out = exchange(
        Plugin::new(),
        &[json!({"type": "hello", "protocol": [1], "role": "sink_task"})],
    );
    assert_eq!(out[1]["message"], "this plugin has no sink_task");
}

#[test]
fn records_are_written_as_the_protocol_reads_them() {
    let r = Record {
        topic: "t\"\n".into(),
        partition: Some(3),
        key: Data::Bytes(vec![0, 1]),
        value: Data::WithSchema {
            schema: json!({"type": "string", "optional": false}),
            payload: json!("é"),
        },
        headers: vec![
            ("h".into(), Data::schemaless(json!({"a": [1]}))),
            ("n".into(), Data::Null),
        ],
        timestamp: Some(5),
        source_partition: Some(json!({"p": 1})),
        source_offset: None,
        offset: None,
    };
    let bare = Record::source("u", Data::Null, json!({}), json!({"n": 1}));
    let line = message_ending_with(r#"{"type":"records","records":"#, |out| {
        write_records(out, &[r.clone(), bare])
    })
    .unwrap();
    let answer: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(
        answer,
        json!({"type": "records", "records": [
            {"topic": "t\"\n", "partition": 3, "key": {"bytes": "AAE="},
             "value": {"schema": {"type": "string", "optional": false}, "payload": "é"},
             "timestamp": 5, "source_partition": {"p": 1},
             "headers": [{"key": "h", "value": {"schema": null, "payload": {"a": [1]}}},
                         {"key": "n", "value": null}]},
            {"topic": "u", "partition": null, "key": null, "value": null, "timestamp": null,
             "source_partition": {}, "source_offset": {"n": 1}}]})
    );
    // What the worker sends back to a transformation reads as the same record.
    let read = Record::from_json(&answer["records"][0]);
    assert_eq!(
        (read.key, read.value, read.headers),
        (r.key, r.value, r.headers)
    );
}
