//! Every endpoint of the REST API, with Kafka's shapes, status codes and error bodies.

use serde_json::{json, Value as Json};

use crate::common::*;

fn assert_error(resp: &(u16, Json), code: u16, contains: &str) {
    assert_eq!(resp.0, code, "{}", resp.1);
    assert_eq!(resp.1["error_code"], code, "{}", resp.1);
    let m = resp.1["message"].as_str().unwrap_or_default();
    assert!(
        m.contains(contains),
        "message {m:?} should contain {contains:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_health_and_unknown_routes() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, root) = w.get("/").await;
    assert_eq!(s, 200);
    assert!(root["version"].is_string() && root["commit"].is_string());
    let id = root["kafka_cluster_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 22, "{id}");
    assert_eq!(
        w.get("/health").await,
        (
            200,
            json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."})
        )
    );
    assert_error(&w.get("/nope").await, 404, "HTTP 404 Not Found");
    assert_error(
        &w.delete("/connectors").await,
        405,
        "HTTP 405 Method Not Allowed",
    );
    assert_error(
        &w.post_empty("/connectors/x/pause").await,
        405,
        "Method Not Allowed",
    );
    w.stop().await;
    // The cluster id is generated once and kept.
    let w = TestWorker::start(dir.path()).await;
    assert_eq!(w.get("/").await.1["kafka_cluster_id"], json!(id));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_get_list_expand_and_delete() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let (s, body, headers) = w
        .request(
            reqwest::Method::POST,
            "/connectors",
            Some(file_source("src", &input, "t")),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(headers["location"], "/connectors/src");
    assert_eq!(body["name"], "src");
    assert_eq!(body["type"], "source");
    assert_eq!(body["config"]["name"], "src");
    assert_eq!(body["tasks"], json!([{"connector": "src", "task": 0}]));
    assert_eq!(w.get("/connectors").await, (200, json!(["src"])));
    w.wait_for_state("src", "RUNNING", 1, "RUNNING").await;

    let (s, expanded) = w.get("/connectors?expand=status").await;
    assert_eq!(s, 200);
    assert_eq!(expanded["src"]["status"]["connector"]["state"], "RUNNING");
    assert!(expanded["src"].get("info").is_none());
    let (_, both) = w.get("/connectors?expand=status&expand=info").await;
    assert_eq!(both["src"]["info"]["type"], "source");
    assert_eq!(both["src"]["status"]["tasks"][0]["state"], "RUNNING");
    let (_, unknown) = w.get("/connectors?expand=status,info").await;
    assert_eq!(unknown, json!({"src": {}}));

    let (s, info) = w.get("/connectors/src").await;
    assert_eq!(s, 200);
    assert_eq!(info["config"]["topic"], "t");
    let (s, tasks) = w.get("/connectors/src/tasks").await;
    assert_eq!(s, 200);
    assert_eq!(tasks[0]["id"], json!({"connector": "src", "task": 0}));
    assert_eq!(
        tasks[0]["config"]["task.class"],
        "org.apache.kafka.connect.file.FileStreamSourceTask"
    );
    let (s, task) = w.get("/connectors/src/tasks/0/status").await;
    assert_eq!(s, 200);
    assert_eq!(task["id"], 0);
    assert_eq!(task["state"], "RUNNING");
    assert!(task["worker_id"]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.1:"));
    assert!(task.get("trace").is_none());

    assert_error(
        &w.post("/connectors", file_source("src", &input, "t")).await,
        409,
        "Connector src already exists",
    );
    assert_eq!(w.delete("/connectors/src").await.0, 204);
    assert_error(
        &w.delete("/connectors/src").await,
        404,
        "Connector src not found",
    );
    assert_error(
        &w.get("/connectors/src").await,
        404,
        "Connector src not found",
    );
    assert_error(
        &w.get("/connectors/src/config").await,
        404,
        "Connector src not found",
    );
    assert_error(
        &w.get("/connectors/src/status").await,
        404,
        "No status found for connector src",
    );
    assert_error(
        &w.get("/connectors/src/tasks").await,
        404,
        "Connector src not found",
    );
    assert_error(
        &w.get("/connectors/src/tasks/0/status").await,
        404,
        "No status found for task src-0",
    );
    assert_error(&w.get("/connectors/src/tasks/x/status").await, 404, "");
    assert_error(
        &w.put_empty("/connectors/src/pause").await,
        404,
        "Unknown connector src",
    );
    assert_error(
        &w.put_empty("/connectors/src/resume").await,
        404,
        "Unknown connector src",
    );
    assert_error(
        &w.put_empty("/connectors/src/stop").await,
        404,
        "Unknown connector src",
    );
    assert_error(
        &w.post_empty("/connectors/src/restart").await,
        404,
        "Connector src not found",
    );
    assert_error(
        &w.post_empty("/connectors/src/restart?includeTasks=true")
            .await,
        404,
        "Unknown connector: src",
    );
    assert_error(
        &w.post_empty("/connectors/src/tasks/0/restart").await,
        404,
        "Connector src not found",
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_put_patch_and_name_rules() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    let config = json!({"connector.class": "FileStreamSource", "tasks.max": "1", "file": input.display().to_string(), "topic": "t"});
    // PUT creates (201 + Location), then replaces (200).
    let (s, body, headers) = w
        .request(
            reqwest::Method::PUT,
            "/connectors/pc/config",
            Some(config.clone()),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(headers["location"], "/connectors/pc");
    let mut changed = config.clone();
    changed["topic"] = json!("t2");
    let (s, body) = w.put("/connectors/pc/config", changed).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["config"]["topic"], "t2");
    assert_eq!(w.get("/connectors/pc/config").await.1["topic"], "t2");
    // PUT keeps the target state.
    assert_eq!(w.put_empty("/connectors/pc/pause").await.0, 202);
    assert_eq!(w.put("/connectors/pc/config", config.clone()).await.0, 200);
    w.wait_for_state("pc", "PAUSED", 1, "PAUSED").await;
    // PATCH merges, null removes.
    let (s, body) = w
        .patch(
            "/connectors/pc/config",
            json!({"batch.size": "10", "file": null}),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["config"]["batch.size"], "10");
    assert!(body["config"].get("file").is_none());
    assert_error(
        &w.patch("/connectors/nobody/config", json!({"a": "b"}))
            .await,
        404,
        "Connector nobody not found",
    );
    // A name that differs from the path or body is a 400.
    let mut other = config.clone();
    other["name"] = json!("other");
    assert_error(
        &w.put("/connectors/pc/config", other.clone()).await,
        400,
        "Connector name configuration (other) doesn't match connector name in the URL (pc)",
    );
    assert_error(
        &w.post("/connectors", json!({"name": "pc2", "config": other}))
            .await,
        400,
        "doesn't match",
    );
    // Names: trimmed, special characters round-trip through Location.
    let weird = "we ird/na?me#%+&=ü";
    let (s, body, headers) = w
        .request(
            reqwest::Method::POST,
            "/connectors",
            Some(json!({"name": format!("  {weird} "), "config": config})),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    assert_eq!(body["name"], weird);
    let location = headers["location"].to_str().unwrap().to_string();
    let (s, got) = w.get(&location).await;
    assert_eq!(s, 200, "{location}");
    assert_eq!(got["name"], weird);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_are_400_and_change_nothing() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    w.create(file_source("keep", &input, "t")).await;
    let cases = [
        reqwest::Body::from("{not json"),
        reqwest::Body::from("[]"),
        reqwest::Body::from(r#"{"name": "x", "config": {}, "unknown": 1}"#),
        reqwest::Body::from(r#"{"name": 5, "config": {}}"#),
        reqwest::Body::from(r#"{"name": "x", "config": "nope"}"#),
        reqwest::Body::from(r#"{"name": "x", "config": {"a": {"nested": 1}}}"#),
        reqwest::Body::from(vec![b'{', 0xff, 0xfe, b'}']),
        reqwest::Body::from(""),
        reqwest::Body::from(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))),
        reqwest::Body::from(format!(
            "{{\"name\": \"x\", \"config\": {}{}}}",
            "{\"a\":".repeat(5_000),
            "}".repeat(5_001)
        )),
        reqwest::Body::from(r#"{"name": 1e400, "config": {}}"#),
        reqwest::Body::from(
            r#"{"name": "x", "config": {"connector.class": "FileStreamSink", "topics": "t"}, "initial_state": 123456789012345678901234567890}"#,
        ),
    ];
    for body in cases {
        let resp = w
            .api
            .request(reqwest::Method::POST, "/connectors")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400);
        let j: Json = resp.json().await.unwrap();
        assert_eq!(j["error_code"], 400);
        assert!(j["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    assert_error(
        &w.put("/connectors/keep/config", json!(["x"])).await,
        400,
        "",
    );
    assert_error(
        &w.patch("/connectors/keep/config", json!({"topic": {"x": 1}}))
            .await,
        400,
        "",
    );
    // A body over the size limit is refused with 413.
    let big = "x".repeat(2 * 1024 * 1024);
    let resp = w
        .api
        .request(reqwest::Method::POST, "/connectors")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    assert_eq!(w.get("/connectors").await.1, json!(["keep"]));
    assert_eq!(w.get("/connectors/keep/config").await.1["topic"], "t");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_errors_are_400_with_kafkas_message() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let resp = w
        .post("/connectors", json!({"name": "v", "config": {"connector.class": "FileStreamSource", "tasks.max": "0"}}))
        .await;
    assert_error(
        &resp,
        400,
        "Connector configuration is invalid and contains the following 2 error(s):",
    );
    let m = resp.1["message"].as_str().unwrap();
    assert!(
        m.contains("Invalid value 0 for configuration tasks.max: Value must be at least 1"),
        "{m}"
    );
    assert!(
        m.contains("Missing required configuration \"topic\" which has no default value."),
        "{m}"
    );
    assert!(m.ends_with("You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"), "{m}");
    assert_error(
        &w.post(
            "/connectors",
            json!({"name": "v", "config": {"tasks.max": "1"}}),
        )
        .await,
        400,
        "contains no connector type",
    );
    assert_error(
        &w.post(
            "/connectors",
            json!({"name": "v", "config": {"connector.class": "NoSuchThing"}}),
        )
        .await,
        400,
        "Failed to find any class that implements Connector and which name matches NoSuchThing",
    );
    assert_error(
        &w.post(
            "/connectors",
            json!({"name": "", "config": {"connector.class": "FileStreamSink", "topics": "t"}}),
        )
        .await,
        400,
        "Invalid value  for configuration name: String may not be empty",
    );
    assert_error(
        &w.post(
            "/connectors",
            json!({"name": "a\nb", "config": {"connector.class": "FileStreamSink", "topics": "t"}}),
        )
        .await,
        400,
        "String may not contain control sequences but had the following ASCII chars: 10",
    );
    assert_error(&w.post("/connectors", json!({"name": "n", "config": {"connector.class": "FileStreamSink", "topics": "t", "file": null}})).await, 400, "Null value can not be supplied as the configuration value.");
    assert_eq!(w.get("/connectors").await.1, json!([]));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_list_config_and_validate() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, list) = w.get("/connector-plugins").await;
    assert_eq!(s, 200);
    let classes: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["class"].as_str().unwrap())
        .collect();
    assert!(classes.contains(&"org.apache.kafka.connect.file.FileStreamSinkConnector"));
    assert!(classes.contains(&"org.apache.kafka.connect.file.FileStreamSourceConnector"));
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["type"] == "source" || p["type"] == "sink"));
    let (_, all) = w.get("/connector-plugins?connectorsOnly=false").await;
    assert!(all.as_array().unwrap().iter().any(|p| p["class"]
        == "org.apache.kafka.connect.json.JsonConverter"
        && p["type"] == "converter"));
    assert!(all
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["type"] == "header_converter"));

    let (s, keys) = w.get("/connector-plugins/FileStreamSource/config").await;
    assert_eq!(s, 200);
    let names: Vec<&str> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        &names[..3],
        &["file", "topic", "batch.size"],
        "plugin keys first: {names:?}"
    );
    assert!(names.contains(&"connector.class") && names.contains(&"tasks.max"));
    assert_error(
        &w.get("/connector-plugins/Nope/config").await,
        404,
        "Unknown plugin Nope.",
    );

    let (s, infos) = w
        .put(
            "/connector-plugins/FileStreamSink/config/validate",
            json!({"connector.class": "FileStreamSink", "file": "/tmp/out.txt"}),
        )
        .await;
    assert_eq!(s, 200, "{infos}");
    assert_eq!(infos["name"], "FileStreamSink");
    assert_eq!(infos["error_count"], 3, "{infos}");
    let topics = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "topics")
        .unwrap();
    assert_eq!(
        topics["value"]["errors"],
        json!(["Must configure one of topics or topics.regex"])
    );
    assert_eq!(infos["groups"][0], "Common");
    assert_error(
        &w.put(
            "/connector-plugins/FileStreamSource/config/validate",
            json!({"connector.class": "FileStreamSink"}),
        )
        .await,
        400,
        "Included connector type FileStreamSink does not match request type FileStreamSource",
    );
    let (s, ok) = w
        .put(
            "/connector-plugins/FileStreamSink/config/validate",
            json!({"connector.class": "FileStreamSink", "name": "x", "topics": "t"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(ok["error_count"], 0, "{ok}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_follow_kip_745() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let out_ok = dir.path().join("ok.txt");
    let out_bad = dir.path().join("no-dir").join("bad.txt");
    w.create(file_sink("ok", &out_ok, "t")).await;
    w.create(file_sink("bad", &out_bad, "t")).await;
    w.wait_for_state("ok", "RUNNING", 1, "RUNNING").await;
    w.wait_for_failed_task("bad").await;

    assert_eq!(
        w.post_empty("/connectors/ok/restart").await,
        (204, Json::Null)
    );
    // Nothing failed: the plan restarts nothing but still answers 202.
    let (s, plan) = w
        .post_empty("/connectors/ok/restart?includeTasks=true&onlyFailed=true")
        .await;
    assert_eq!(s, 202);
    assert_eq!(plan["connector"]["state"], "RUNNING");
    assert_eq!(plan["tasks"][0]["state"], "RUNNING");
    // includeTasks: everything is RESTARTING in the plan.
    let (s, plan) = w
        .post_empty("/connectors/ok/restart?includeTasks=true")
        .await;
    assert_eq!(s, 202);
    assert_eq!(plan["connector"]["state"], "RESTARTING");
    assert_eq!(plan["tasks"][0]["state"], "RESTARTING");
    w.wait_for_state("ok", "RUNNING", 1, "RUNNING").await;
    // onlyFailed with a failed task: the task restarts, the connector does not.
    let (s, plan) = w
        .post_empty("/connectors/bad/restart?includeTasks=true&onlyFailed=true")
        .await;
    assert_eq!(s, 202);
    assert_eq!(plan["connector"]["state"], "RUNNING");
    assert_eq!(plan["tasks"][0]["state"], "RESTARTING");
    // The directory appears; a task restart now succeeds.
    std::fs::create_dir_all(out_bad.parent().unwrap()).unwrap();
    assert_eq!(w.post_empty("/connectors/bad/tasks/0/restart").await.0, 204);
    w.wait_for_state("bad", "RUNNING", 1, "RUNNING").await;
    assert_error(
        &w.post_empty("/connectors/bad/tasks/7/restart").await,
        404,
        "Task bad-7 not found",
    );
    // Restart honours the target state.
    assert_eq!(w.put_empty("/connectors/ok/stop").await.0, 204);
    assert_eq!(
        w.post_empty("/connectors/ok/restart?includeTasks=true")
            .await
            .0,
        202
    );
    w.wait_for_state("ok", "STOPPED", 0, "").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_tracking_and_reset() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let input = dir.path().join("in.txt");
    append_lines(&input, ["x".to_string()]);
    w.create(file_source("src", &input, "tracked")).await;
    wait_until("the topic to be tracked", || async {
        w.get("/connectors/src/topics").await.1 == json!({"src": {"topics": ["tracked"]}})
    })
    .await;
    assert_eq!(w.put_empty("/connectors/src/topics/reset").await.0, 202);
    assert_eq!(
        w.get("/connectors/src/topics").await.1,
        json!({"src": {"topics": []}})
    );
    assert_eq!(
        w.get("/connectors/ghost/topics").await,
        (200, json!({"ghost": {"topics": []}}))
    );
    w.stop().await;

    let dir2 = tempdir();
    let w = TestWorker::start_with(
        dir2.path(),
        &[("topic.tracking.allow.reset", "false")],
        vec![],
    )
    .await
    .unwrap();
    w.create(file_source("src", &input, "tracked")).await;
    assert_error(
        &w.put_empty("/connectors/src/topics/reset").await,
        403,
        "Topic tracking reset is disabled.",
    );
    w.stop().await;
    let dir3 = tempdir();
    let w = TestWorker::start_with(dir3.path(), &[("topic.tracking.enable", "false")], vec![])
        .await
        .unwrap();
    assert_error(
        &w.get("/connectors/src/topics").await,
        403,
        "Topic tracking is disabled.",
    );
    assert_error(
        &w.put_empty("/connectors/src/topics/reset").await,
        403,
        "Topic tracking is disabled.",
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_loggers_change_levels() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let (s, all) = w.get("/admin/loggers").await;
    assert_eq!(s, 200);
    assert!(all["root"]["level"].is_string());
    let (s, changed) = w
        .put(
            "/admin/loggers/liteconnect::worker",
            json!({"level": "debug"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(changed, json!(["liteconnect::worker"]));
    let (s, one) = w.get("/admin/loggers/liteconnect::worker").await;
    assert_eq!(s, 200);
    assert_eq!(one["level"], "DEBUG");
    assert!(one["last_modified"].is_number());
    assert_error(
        &w.put("/admin/loggers/x", json!({})).await,
        400,
        "Desired 'level' parameter was not specified in request.",
    );
    assert_error(
        &w.put("/admin/loggers/x", json!({"level": "LOUD"})).await,
        404,
        "invalid log level 'LOUD'.",
    );
    assert_error(
        &w.get("/admin/loggers/never.set.anywhere").await,
        404,
        "Logger never.set.anywhere not found.",
    );
    assert_eq!(
        w.put(
            "/admin/loggers/liteconnect::rest?scope=cluster",
            json!({"level": "INFO"})
        )
        .await
        .0,
        204
    );
    w.stop().await;

    let dir2 = tempdir();
    let w = TestWorker::start_with(dir2.path(), &[("admin.listeners", "")], vec![])
        .await
        .unwrap();
    assert_eq!(w.get("/admin/loggers").await.0, 404);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negate_without_predicate_is_an_error_on_the_negate_key() {
    let dir = tempdir();
    let w = TestWorker::start(dir.path()).await;
    let config = json!({"connector.class": "FileStreamSink", "name": "n", "topics": "t",
        "transforms": "f", "transforms.f.type": "Filter", "transforms.f.negate": "true"});
    let (s, infos) = w
        .put(
            "/connector-plugins/FileStreamSink/config/validate",
            config.clone(),
        )
        .await;
    assert_eq!(s, 200, "{infos}");
    assert_eq!(infos["error_count"], 1, "{infos}");
    let negate = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "transforms.f.negate")
        .expect("the negate key is in the answer");
    assert_eq!(
        negate["value"]["errors"],
        json!(["Config 'transforms.f.negate' was provided but there is no config 'transforms.f.predicate' defining a predicate to be negated."])
    );
    assert_error(
        &w.put("/connectors/n/config", config).await,
        400,
        "Config 'transforms.f.negate' was provided but there is no config 'transforms.f.predicate'",
    );
    assert_eq!(w.get("/connectors").await.1, json!([]));
    w.stop().await;
}
