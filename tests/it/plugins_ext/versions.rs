//! KIP-891 versions of plugin programs, and moving plugin connectors with `migrate` and `export`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use super::*;
use crate::common::*;

/// The example device source copied into `dir/<version>` with its manifest saying `version`.
fn device_in_version(dir: &Path, version: &str) -> PathBuf {
    let plugin = dir.join(version);
    std::fs::create_dir_all(&plugin).unwrap();
    let example = examples().join("device-source");
    std::fs::copy(
        example.join("device_source.py"),
        plugin.join("device_source.py"),
    )
    .unwrap();
    let sdk =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/python/liteconnect_plugin/__init__.py");
    std::fs::create_dir_all(plugin.join("liteconnect_plugin")).unwrap();
    std::fs::copy(sdk, plugin.join("liteconnect_plugin/__init__.py")).unwrap();
    let manifest = std::fs::read_to_string(example.join("liteconnect-plugin.json"))
        .unwrap()
        .replace("1.0.0", version);
    std::fs::write(plugin.join("liteconnect-plugin.json"), manifest).unwrap();
    plugin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip_891_picks_a_version_by_range_and_the_newest_by_default() {
    let dir = tempdir();
    let versions = dir.path().join("versions");
    device_in_version(&versions, "1.0.0");
    device_in_version(&versions, "2.0.0");
    let bin = start(dir.path(), &[&versions], "");
    let api = bin.healthy_api().await;
    let all = api.get("/connector-plugins").await.unwrap().1;
    let listed: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == DEVICE)
        .map(|p| p["version"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["1.0.0", "2.0.0"]);
    let running = |name: &'static str| {
        let api = api.clone();
        async move {
            let tasks = api
                .get(&format!("/connectors/{name}/tasks"))
                .await
                .unwrap()
                .1;
            tasks[0]["config"]["connector.plugin.version"]
                .as_str()
                .map(str::to_owned)
        }
    };
    create_through(
        &api,
        device(
            "older",
            "o",
            json!({"connector.plugin.version": "[1.0,2.0)", "count": "5"}),
        ),
    )
    .await;
    create_through(&api, device("newest", "n", json!({"count": "5"}))).await;
    create_through(
        &api,
        device(
            "exact",
            "e",
            json!({"connector.plugin.version": "2.0.0", "count": "5"}),
        ),
    )
    .await;
    assert_eq!(running("older").await.as_deref(), Some("1.0.0"));
    assert_eq!(running("newest").await.as_deref(), Some("2.0.0"));
    assert_eq!(running("exact").await.as_deref(), Some("2.0.0"));
    wait_for("the older version running", DEADLINE, || async {
        offset_seq(&api, "older").await.filter(|s| *s == 5)
    })
    .await;
    // The status says which version runs, on the connector and on each task (KIP-891), also in the
    // expanded list.
    for (name, version) in [("older", "1.0.0"), ("newest", "2.0.0")] {
        let status = api
            .get(&format!("/connectors/{name}/status"))
            .await
            .unwrap()
            .1;
        assert_eq!(status["connector"]["version"], version, "{status}");
        assert_eq!(status["tasks"][0]["version"], version, "{status}");
        let task = api
            .get(&format!("/connectors/{name}/tasks/0/status"))
            .await
            .unwrap()
            .1;
        assert_eq!(task["version"], version, "{task}");
    }
    let listed = api.get("/connectors?expand=status").await.unwrap().1;
    assert_eq!(
        listed["older"]["status"]["connector"]["version"], "1.0.0",
        "{listed}"
    );
    let (status, body) = api
        .post(
            "/connectors",
            &device("none", "x", json!({"connector.plugin.version": "[3.0,)"})),
        )
        .await
        .unwrap();
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(&format!(
            "Plugin {DEVICE} not found that matches the version range [3.0,), available versions: [1.0.0, 2.0.0]"
        )),
        "{body}"
    );
    bin.terminate();
}

async fn cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let dir = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_binary(&dir, &args)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_connector_migrates_only_to_a_worker_that_has_its_class_and_exports_like_any() {
    let (a, b, c) = (tempdir(), tempdir(), tempdir());
    let from = start(a.path(), &[&examples()], "");
    let without = start(b.path(), &[], "");
    let with = start(c.path(), &[&examples()], "");
    let api = from.healthy_api().await;
    create_through(&api, device("dev", "readings", json!({"count": "50"}))).await;
    wait_for("50 readings", DEADLINE, || async {
        offset_seq(&api, "dev").await.filter(|s| *s == 50)
    })
    .await;
    let (code, _, err) = cli(
        a.path(),
        &["migrate", "--from", &from.url, "--to", &without.url],
    )
    .await;
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("has no connector plugin {DEVICE}")),
        "{err}"
    );
    let (code, _, err) = cli(
        a.path(),
        &[
            "export",
            "--from",
            &from.url,
            "--out",
            &a.path().display().to_string(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let exported: Json =
        serde_json::from_str(&std::fs::read_to_string(a.path().join("dev.json")).unwrap()).unwrap();
    assert_eq!(exported["config"]["connector.class"], DEVICE);
    assert_eq!(exported["offsets"][0]["offset"]["seq"], 50, "{exported}");
    let (code, out, err) = cli(
        a.path(),
        &["migrate", "--from", &from.url, "--to", &with.url],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let target = with.api();
    assert_eq!(offset_seq(&target, "dev").await, Some(50));
    from.terminate();
    without.terminate();
    with.terminate();
}

/// A transformation plugin in `dir/<version>` (class `test.Tag`) that sends each record to
/// `<topic>-<version>`, so the topic says which version ran.
fn tag_in_version(dir: &Path, version: &str) {
    let plugin = dir.join(version);
    std::fs::create_dir_all(&plugin).unwrap();
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/python");
    let script = format!(
        "import sys\nsys.path.insert(0, {sdk:?})\nfrom liteconnect_plugin import Transformation, run\n\n\
         class Tag(Transformation):\n    def apply(self, record):\n        record.topic = record.topic + \"-{version}\"\n        return record\n\n\
         run(transformation=Tag)\n",
        sdk = sdk.display().to_string()
    );
    std::fs::write(plugin.join("tag.py"), script).unwrap();
    let manifest = json!({"plugins": [{"class": "test.Tag", "type": "transformation",
        "version": version, "command": ["python3", "tag.py"]}]});
    std::fs::write(plugin.join("liteconnect-plugin.json"), manifest.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip_891_transforms_predicates_and_converters_plugin_version() {
    let dir = tempdir();
    let tags = dir.path().join("tags");
    tag_in_version(&tags, "1.0.0");
    tag_in_version(&tags, "2.0.0");
    let bin = start(dir.path(), &[&examples(), &tags], "");
    let api = bin.healthy_api().await;
    let all = api
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap()
        .1;
    let listed: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["class"] == "test.Tag")
        .map(|p| p["version"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["1.0.0", "2.0.0"], "{all}");
    let tagged = |name: &str, topic: &str, version: Option<&str>| {
        let mut extra = json!({"count": "3", "transforms": "t", "transforms.t.type": "Tag"});
        if let Some(v) = version {
            extra["transforms.t.plugin.version"] = json!(v);
        }
        device(name, topic, extra)
    };
    create_through(&api, tagged("older", "o", Some("[1.0,2.0)"))).await;
    create_through(&api, tagged("newest", "n", None)).await;
    wait_for("both tagged topics", DEADLINE, || async {
        let topics = api.get("/topics").await.unwrap().1;
        let has = |t: &str| topics.as_array().is_some_and(|a| a.contains(&json!(t)));
        (has("o-1.0.0") && has("n-2.0.0")).then_some(topics)
    })
    .await;
    let topics = api.get("/topics").await.unwrap().1;
    for absent in ["o-2.0.0", "n-1.0.0", "o", "n"] {
        assert!(
            !topics.as_array().unwrap().contains(&json!(absent)),
            "{topics}"
        );
    }
    // A range that matches no installed version, of a plugin program or of a built-in (whose one
    // version is the worker's), is refused on create with Kafka's message.
    let refused = [
        (
            tagged("none", "x", Some("[3.0,)")),
            "Plugin test.Tag not found that matches the version range [3.0,), available versions: [1.0.0, 2.0.0]",
        ),
        (
            device("builtin", "x", json!({"transforms": "f", "transforms.f.type": "Filter",
                "transforms.f.plugin.version": "[1.0,2.0)"})),
            "Plugin org.apache.kafka.connect.transforms.Filter not found that matches the version range [1.0,2.0), available versions: [4.0.0]",
        ),
        (
            device("pred", "x", json!({"predicates": "p", "predicates.p.type": "TopicNameMatches",
                "predicates.p.pattern": "x", "predicates.p.plugin.version": "5.0"})),
            "Plugin org.apache.kafka.connect.transforms.predicates.TopicNameMatches not found that matches the version range [5.0], available versions: [4.0.0]",
        ),
        (
            device("conv", "x", json!({"value.converter.plugin.version": "(,3.9]"})),
            "Plugin org.apache.kafka.connect.json.JsonConverter not found that matches the version range (,3.9], available versions: [4.0.0]",
        ),
    ];
    for (body, message) in refused {
        let (status, answer) = api.post("/connectors", &body).await.unwrap();
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(message),
            "{answer}"
        );
    }
    // A range the built-in's version is in is accepted.
    create_through(
        &api,
        device(
            "fits",
            "f",
            json!({"transforms": "f", "transforms.f.type": "Filter",
            "transforms.f.plugin.version": "[4.0,)", "value.converter.plugin.version": "4.0.0"}),
        ),
    )
    .await;
    bin.terminate();
}
