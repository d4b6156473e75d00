//! The embedded Schema Registry over HTTP on its own listener: Confluent's paths, bodies, media type and
//! error codes; compatibility levels with Avro's rules; soft and permanent deletes with IDs never reused;
//! modes and IMPORT; references; concurrent registration; basic auth; listener clashes; `kill -9`.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value as Json};
use tokio::sync::oneshot;

use crate::common::{self, Client, DEADLINE};
use liteconnect::RunError;

/// The schema types this build's registry lists.
const SCHEMA_TYPES: &[&str] = &[
    "AVRO",
    "JSON",
    #[cfg(feature = "protobuf")]
    "PROTOBUF",
];

/// The registry's media type.
const MEDIA: &str = "application/vnd.schemaregistry.v1+json";

/// A worker in this process with a REST listener and a Schema Registry listener on ephemeral ports.
pub(crate) struct RegistryWorker {
    /// The registry's base URL.
    pub(crate) registry: String,
    /// The Kafka listener's `host:port`, when started with one.
    #[cfg_attr(not(feature = "kafka-listener"), allow(dead_code))]
    pub(crate) bootstrap: Option<String>,
    /// The worker's REST API.
    pub(crate) api: Client,
    http: reqwest::Client,
    auth: Option<(String, String)>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<Result<(), RunError>>>,
}

impl RegistryWorker {
    pub(crate) async fn start(dir: &Path, extra: &[(&str, &str)]) -> RegistryWorker {
        Self::launch(dir, extra, false).await
    }

    /// Starts the worker with its registry listener on HTTPS, serving `cert` and `key` (PEM).
    pub(crate) async fn launch_tls(dir: &Path, cert: &str, key: &str) -> RegistryWorker {
        let settings = [
            ("schema.registry.listeners", "https://127.0.0.1:0"),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.certificate.chain", cert),
            ("ssl.keystore.key", key),
        ];
        let mut w = Self::launch(dir, &settings, false).await;
        w.registry = w.registry.replacen("http://", "https://", 1);
        w
    }

    /// Starts the worker; with `kafka`, a Kafka listener too (its address in `bootstrap`).
    pub(crate) async fn launch(dir: &Path, extra: &[(&str, &str)], kafka: bool) -> RegistryWorker {
        let registry = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::launch_on(dir, extra, kafka, registry).await
    }

    /// Starts the worker with its Schema Registry on `registry` (`host:port`), as after a restart.
    #[cfg_attr(not(feature = "kafka-client"), allow(dead_code))]
    pub(crate) async fn start_at(dir: &Path, registry: &str) -> RegistryWorker {
        let registry = tokio::net::TcpListener::bind(registry).await.unwrap();
        Self::launch_on(dir, &[], false, registry).await
    }

    async fn launch_on(
        dir: &Path,
        extra: &[(&str, &str)],
        kafka: bool,
        registry: tokio::net::TcpListener,
    ) -> RegistryWorker {
        let mut settings = vec![("schema.registry.listeners", "http://127.0.0.1:0")];
        if kafka {
            settings.push(("kafka.listeners", "PLAINTEXT://127.0.0.1:0"));
        }
        settings.extend_from_slice(extra);
        let config = common::worker_config(dir, &settings);
        let rest = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let api = Client::new(format!("http://{}", rest.local_addr().unwrap()));
        let registry_url = format!("http://{}", registry.local_addr().unwrap());
        let mut listeners = liteconnect::Listeners {
            rest: vec![rest],
            registry: vec![registry],
            ..Default::default()
        };
        let mut bootstrap = None;
        if kafka {
            let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            bootstrap = Some(socket.local_addr().unwrap().to_string());
            listeners.kafka.push(socket);
        }
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(liteconnect::run(listeners, config, Vec::new(), async {
            let _ = rx.await;
        }));
        let w = RegistryWorker {
            registry: registry_url,
            bootstrap,
            api: api.clone(),
            http: reqwest::Client::new(),
            auth: None,
            shutdown: Some(tx),
            handle: Some(handle),
        };
        if extra.iter().all(|(k, _)| !k.contains("basic.auth")) {
            common::healthy(&api).await;
        }
        w
    }

    /// `method path` with a JSON body (sent as the registry's media type): status, body, media type.
    async fn call_typed(
        &self,
        method: Method,
        path: &str,
        body: Option<Json>,
    ) -> (u16, Json, String) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.registry))
            .timeout(DEADLINE);
        if let Some((user, password)) = &self.auth {
            req = req.basic_auth(user, Some(password));
        }
        if let Some(b) = body {
            req = req.header("content-type", MEDIA).body(b.to_string());
        }
        let r = req.send().await.expect("the registry answers");
        let status = r.status().as_u16();
        let media = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Json::String(text));
        (status, body, media)
    }

    pub(crate) async fn call(&self, method: Method, path: &str, body: Option<Json>) -> (u16, Json) {
        let (status, body, _) = self.call_typed(method, path, body).await;
        (status, body)
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Json) {
        self.call(Method::GET, path, None).await
    }

    pub(crate) async fn post(&self, path: &str, body: Json) -> (u16, Json) {
        self.call(Method::POST, path, Some(body)).await
    }

    pub(crate) async fn put(&self, path: &str, body: Json) -> (u16, Json) {
        self.call(Method::PUT, path, Some(body)).await
    }

    async fn delete(&self, path: &str) -> (u16, Json) {
        self.call(Method::DELETE, path, None).await
    }

    /// Registers an Avro schema; fails the test unless it gets an ID.
    pub(crate) async fn register(&self, subject: &str, schema: &str) -> i64 {
        let (status, body) = self
            .post(
                &format!("/subjects/{subject}/versions"),
                json!({ "schema": schema }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body["id"].as_i64().unwrap()
    }

    /// Produces `values` to `topic` through the REST Proxy's binary format; fails the test unless
    /// they are taken.
    pub(crate) async fn produce_binary(&self, topic: &str, values: &[&[u8]]) {
        use base64::Engine as _;
        let records: Vec<Json> = values
            .iter()
            .map(|v| json!({ "value": base64::engine::general_purpose::STANDARD.encode(v) }))
            .collect();
        let answer = self
            .api
            .request(Method::POST, &format!("/topics/{topic}"))
            .header("content-type", "application/vnd.kafka.binary.v2+json")
            .body(json!({ "records": records }).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
    }

    /// Waits for exactly `count` records in partition 0 of the dead letter queue `topic`, and returns
    /// the message each carries in its `__connect.errors.exception.message` header.
    pub(crate) async fn dead_letter_messages(&self, topic: &str, count: usize) -> Vec<String> {
        use base64::Engine as _;
        let path = format!("/topics/{topic}/partitions/0/records?offset=0&metadata=true");
        let what = format!("{count} records in the dead letter queue");
        let dlq = common::wait_for(&what, DEADLINE, || async {
            let (status, body) = self.api.get(&path).await.ok()?;
            (status == 200 && body.as_array().is_some_and(|a| a.len() == count)).then_some(body)
        })
        .await;
        let message = |record: &Json| {
            let header = record["headers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|h| h["key"] == "__connect.errors.exception.message")
                .unwrap_or_else(|| panic!("no exception message in {record}"));
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(header["value"].as_str().unwrap())
                .unwrap();
            String::from_utf8(bytes).unwrap()
        };
        dlq.as_array().unwrap().iter().map(message).collect()
    }

    pub(crate) async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            h.await.unwrap().expect("the worker ran without error");
        }
    }
}

/// A record `ex.User` with `fields` (a JSON list's inside).
fn user(fields: &str) -> String {
    format!(r#"{{"type":"record","name":"User","namespace":"ex","fields":[{fields}]}}"#)
}

const NAME: &str = r#"{"name":"name","type":"string"}"#;
const AGE_DEFAULT: &str = r#"{"name":"age","type":"int","default":0}"#;
const AGE: &str = r#"{"name":"age","type":"int"}"#;

fn error_code(body: &Json) -> i64 {
    body["error_code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error_code in {body}"))
}

#[tokio::test]
async fn schema_registry_registers_looks_up_and_serves_versions_and_ids() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let (status, body, media) = r.call_typed(Method::GET, "/subjects", None).await;
    assert_eq!((status, body), (200, json!([])));
    assert_eq!(media, MEDIA);
    let v1 = user(NAME);
    let id = r.register("users-value", &v1).await;
    assert_eq!(id, 1);
    // The same schema again, even spaced differently: the same ID and no new version.
    let spaced = v1.replace(',', " , ");
    assert_eq!(r.register("users-value", &spaced).await, id);
    assert_eq!(
        r.get("/subjects/users-value/versions").await,
        (200, json!([1]))
    );
    // Another subject: a version of its own, the same global ID.
    assert_eq!(r.register("other-value", &v1).await, id);
    let id2 = r
        .register("users-value", &user(&format!("{NAME},{AGE_DEFAULT}")))
        .await;
    assert_eq!(id2, 2);
    assert_eq!(
        r.get("/subjects").await,
        (200, json!(["other-value", "users-value"]))
    );
    assert_eq!(
        r.get("/subjects?subjectPrefix=users").await,
        (200, json!(["users-value"]))
    );
    let (status, latest) = r.get("/subjects/users-value/versions/latest").await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(
        (&latest["subject"], &latest["version"], &latest["id"]),
        (&json!("users-value"), &json!(2), &json!(2))
    );
    assert!(
        latest.get("schemaType").is_none(),
        "AVRO is not named: {latest}"
    );
    let (_, first) = r.get("/subjects/users-value/versions/1").await;
    assert_eq!(first["schema"], json!(v1));
    let (status, raw) = r.get("/subjects/users-value/versions/1/schema").await;
    assert_eq!((status, raw["name"].clone()), (200, json!("User")));
    // Lookup.
    let (status, found) = r
        .post("/subjects/users-value", json!({ "schema": v1 }))
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!((&found["id"], &found["version"]), (&json!(1), &json!(1)));
    let (status, missing) = r
        .post("/subjects/users-value", json!({ "schema": "\"string\"" }))
        .await;
    assert_eq!((status, error_code(&missing)), (404, 40403));
    // By ID.
    assert_eq!(
        r.get("/schemas/ids/1").await,
        (200, json!({ "schema": v1 }))
    );
    assert_eq!(
        r.get("/schemas/ids/1/schema").await.1["type"],
        json!("record")
    );
    assert_eq!(
        r.get("/schemas/ids/1/versions").await,
        (
            200,
            json!([{"subject": "other-value", "version": 1}, {"subject": "users-value", "version": 1}])
        )
    );
    assert_eq!(
        r.get("/schemas/ids/1/subjects").await,
        (200, json!(["other-value", "users-value"]))
    );
    assert_eq!(r.get("/schemas/ids/2?subject=other-value").await.0, 404);
    assert_eq!(r.get("/schemas/types").await, (200, json!(SCHEMA_TYPES)));
    // Plain JSON is accepted as well as the registry's media type; anything else is 415.
    let plain = r
        .http
        .post(format!("{}/subjects/plain/versions", r.registry))
        .header("content-type", "application/json")
        .body(json!({ "schema": "\"int\"" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 200);
    let text = r
        .http
        .post(format!("{}/subjects/plain/versions", r.registry))
        .header("content-type", "text/plain")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), 415);
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_errors_carry_confluents_codes() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let (status, body) = r.get("/subjects/nope/versions").await;
    assert_eq!((status, error_code(&body)), (404, 40401), "{body}");
    r.register("s", "\"int\"").await;
    let (status, body) = r.get("/subjects/s/versions/7").await;
    assert_eq!((status, error_code(&body)), (404, 40402), "{body}");
    let (status, body) = r.get("/subjects/s/versions/0").await;
    assert_eq!((status, error_code(&body)), (422, 42202), "{body}");
    let (status, body) = r.get("/schemas/ids/99").await;
    assert_eq!((status, error_code(&body)), (404, 40403), "{body}");
    for bad in [
        "{\"type\":",
        "\"nothing\"",
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}"#,
    ] {
        let (status, body) = r
            .post("/subjects/s/versions", json!({ "schema": bad }))
            .await;
        assert_eq!((status, error_code(&body)), (422, 42201), "{bad}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .starts_with("Invalid schema"),
            "{body}"
        );
    }
    let (status, body) = r
        .post(
            "/subjects/s/versions",
            json!({ "schema": "{}", "schemaType": "PROTOBUF" }),
        )
        .await;
    assert_eq!((status, error_code(&body)), (422, 42201), "{body}");
    let (status, body) = r
        .put("/config", json!({ "compatibility": "SIDEWAYS" }))
        .await;
    assert_eq!((status, error_code(&body)), (422, 42203), "{body}");
    let (status, body) = r.put("/mode", json!({ "mode": "WRITEONLY" })).await;
    assert_eq!((status, error_code(&body)), (422, 42204), "{body}");
    // A 10 MB schema is over the request limit (rest.request.max.bytes, 1 MiB by default).
    let huge = format!("\"{}\"", "x".repeat(10 << 20));
    let (status, body) = r
        .post("/subjects/s/versions", json!({ "schema": huge }))
        .await;
    assert_eq!(status, 413, "{body}");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("rest.request.max.bytes"));
    assert_eq!(r.get("/subjects/s/versions").await, (200, json!([1])));
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_compatibility_levels_accept_and_refuse_evolutions() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    assert_eq!(
        r.get("/config").await,
        (200, json!({"compatibilityLevel": "BACKWARD"}))
    );
    r.register("u", &user(NAME)).await;
    // BACKWARD (the default): a new field needs a default.
    let no_default = user(&format!("{NAME},{AGE}"));
    let (status, body) = r
        .post("/subjects/u/versions", json!({ "schema": no_default }))
        .await;
    assert_eq!((status, error_code(&body)), (409, 409), "{body}");
    assert!(body["message"].as_str().unwrap().contains("age"), "{body}");
    let (status, body) = r
        .post(
            "/compatibility/subjects/u/versions/latest?verbose=true",
            json!({ "schema": no_default }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["is_compatible"], json!(false));
    assert!(body["messages"][0]
        .as_str()
        .unwrap()
        .contains("READER_FIELD_MISSING_DEFAULT_VALUE"));
    let (_, body) = r
        .post(
            "/compatibility/subjects/u/versions/1",
            json!({ "schema": user(&format!("{NAME},{AGE_DEFAULT}")) }),
        )
        .await;
    assert_eq!(body, json!({"is_compatible": true}));
    // FORWARD on the subject: adding without a default is fine, changing a type is not.
    assert_eq!(
        r.put("/config/u", json!({"compatibility": "FORWARD"}))
            .await,
        (200, json!({"compatibility": "FORWARD"}))
    );
    assert_eq!(
        r.get("/config/u").await,
        (200, json!({"compatibilityLevel": "FORWARD"}))
    );
    assert_eq!(r.register("u", &no_default).await, 2);
    let (status, _) = r
        .post(
            "/subjects/u/versions",
            json!({ "schema": user(r#"{"name":"name","type":"long"},{"name":"age","type":"int"}"#) }),
        )
        .await;
    assert_eq!(status, 409);
    // FULL_TRANSITIVE: only fields with defaults come and go, against every version.
    r.put("/config/u", json!({"compatibility": "FULL_TRANSITIVE"}))
        .await;
    let without_age = user(&format!(
        r#"{NAME},{{"name":"email","type":"string","default":""}}"#
    ));
    let (status, _) = r
        .post("/subjects/u/versions", json!({ "schema": without_age }))
        .await;
    assert_eq!(
        status, 409,
        "removing age (no default) breaks FORWARD against version 2"
    );
    // NONE: anything goes; the subject's own level is cleared with DELETE, back to the global one.
    r.put("/config/u", json!({"compatibility": "NONE"})).await;
    assert_eq!(r.register("u", "\"string\"").await, 3);
    assert_eq!(
        r.delete("/config/u").await,
        (200, json!({"compatibilityLevel": "NONE"}))
    );
    let (status, body) = r.get("/config/u").await;
    assert_eq!((status, error_code(&body)), (404, 40408));
    assert_eq!(
        r.get("/config/u?defaultToGlobal=true").await,
        (200, json!({"compatibilityLevel": "BACKWARD"}))
    );
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_deletes_soft_then_permanent_and_never_reuses_an_id() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    r.register("a", "\"int\"").await;
    r.put("/config/a", json!({"compatibility": "NONE"})).await;
    assert_eq!(r.register("a", "\"long\"").await, 2);
    let (status, body) = r.delete("/subjects/a/versions/2?permanent=true").await;
    assert_eq!((status, error_code(&body)), (404, 40407), "{body}");
    assert_eq!(r.delete("/subjects/a/versions/2").await, (200, json!(2)));
    assert_eq!(r.get("/subjects/a/versions").await, (200, json!([1])));
    assert_eq!(
        r.get("/subjects/a/versions?deleted=true").await,
        (200, json!([1, 2]))
    );
    // A soft-deleted version's schema stays readable by ID.
    assert_eq!(r.get("/schemas/ids/2").await.0, 200);
    let (status, body) = r.delete("/subjects/a?permanent=true").await;
    assert_eq!((status, error_code(&body)), (404, 40405), "{body}");
    assert_eq!(r.delete("/subjects/a").await, (200, json!([1])));
    assert_eq!(r.get("/subjects").await, (200, json!([])));
    assert_eq!(r.get("/subjects?deleted=true").await, (200, json!(["a"])));
    let (status, body) = r.delete("/subjects/a").await;
    assert_eq!((status, error_code(&body)), (404, 40404), "{body}");
    assert_eq!(
        r.delete("/subjects/a?permanent=true").await,
        (200, json!([1, 2]))
    );
    let (status, body) = r.get("/schemas/ids/1").await;
    assert_eq!((status, error_code(&body)), (404, 40403), "{body}");
    // A new schema gets a new ID, never a freed one; versions start again.
    assert_eq!(r.register("a", "\"string\"").await, 3);
    assert_eq!(r.get("/subjects/a/versions").await, (200, json!([1])));
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_references_resolve_and_hold_what_they_reference() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let address = r#"{"type":"record","name":"Address","namespace":"ex","fields":[{"name":"city","type":"string"}]}"#;
    let address_id = r.register("address", address).await;
    let person = r#"{"type":"record","name":"Person","namespace":"ex","fields":[{"name":"home","type":"Address"}]}"#;
    let (status, body) = r
        .post("/subjects/person/versions", json!({ "schema": person }))
        .await;
    assert_eq!(
        (status, error_code(&body)),
        (422, 42201),
        "unknown without its reference"
    );
    let refs = json!([{"name": "ex.Address", "subject": "address", "version": 1}]);
    let (status, body) = r
        .post(
            "/subjects/person/versions",
            json!({ "schema": person, "references": refs }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let person_id = body["id"].as_i64().unwrap();
    assert_ne!(person_id, address_id);
    let (_, got) = r.get(&format!("/schemas/ids/{person_id}")).await;
    assert_eq!(got["references"], refs);
    assert_eq!(
        r.get("/subjects/address/versions/1/referencedby").await,
        (200, json!([person_id]))
    );
    let (status, body) = r.delete("/subjects/address/versions/1").await;
    assert_eq!((status, error_code(&body)), (422, 42206), "{body}");
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_modes_guard_writes_and_import_keeps_given_ids() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    assert_eq!(r.get("/mode").await, (200, json!({"mode": "READWRITE"})));
    r.register("a", "\"int\"").await;
    // IMPORT over existing subjects needs force=true.
    let (status, body) = r.put("/mode", json!({"mode": "IMPORT"})).await;
    assert_eq!((status, error_code(&body)), (422, 42205), "{body}");
    assert_eq!(
        r.put("/mode/b", json!({"mode": "IMPORT"})).await,
        (200, json!({"mode": "IMPORT"}))
    );
    let (status, body) = r
        .post(
            "/subjects/b/versions",
            json!({"schema": "\"string\"", "id": 500, "version": 4}),
        )
        .await;
    assert_eq!((status, body), (200, json!({"id": 500})));
    assert_eq!(r.get("/subjects/b/versions").await, (200, json!([4])));
    // The ID belongs to that schema: importing another under it is refused.
    let (status, body) = r
        .post(
            "/subjects/b/versions",
            json!({"schema": "\"long\"", "id": 500}),
        )
        .await;
    assert_eq!((status, error_code(&body)), (422, 42205), "{body}");
    // An ID outside IMPORT mode is refused.
    let (status, body) = r
        .post(
            "/subjects/a/versions",
            json!({"schema": "\"long\"", "id": 7}),
        )
        .await;
    assert_eq!((status, error_code(&body)), (422, 42205), "{body}");
    // READONLY refuses registrations and deletes; the next ID assigned is above the imported one.
    r.put("/mode", json!({"mode": "READONLY"})).await;
    let (status, body) = r
        .post("/subjects/a/versions", json!({"schema": "\"long\""}))
        .await;
    assert_eq!((status, error_code(&body)), (422, 42205), "{body}");
    assert_eq!(r.delete("/subjects/a").await.0, 422);
    r.put("/mode", json!({"mode": "READWRITE"})).await;
    r.put("/config/a", json!({"compatibility": "NONE"})).await;
    assert_eq!(r.register("a", "\"long\"").await, 501);
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_gives_one_id_to_one_schema_registered_by_8_clients_at_once() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let schema = user(&format!("{NAME},{AGE_DEFAULT}"));
    let clients = (0..8).map(|i| {
        let (url, schema) = (r.registry.clone(), schema.clone());
        tokio::spawn(async move {
            let subject = if i % 2 == 0 { "even" } else { "odd" };
            let answer = reqwest::Client::new()
                .post(format!("{url}/subjects/{subject}/versions"))
                .json(&json!({ "schema": schema }))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            answer.json::<Json>().await.unwrap()["id"].as_i64().unwrap()
        })
    });
    let ids: Vec<i64> = futures::future::join_all(clients)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    assert_eq!(r.get("/subjects/even/versions").await, (200, json!([1])));
    assert_eq!(r.get("/subjects/odd/versions").await, (200, json!([1])));
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_listener_takes_the_rest_listeners_basic_auth() {
    let dir = common::tempdir();
    let creds = dir.path().join("creds.properties");
    std::fs::write(&creds, "alice: secret\n").unwrap();
    let creds = creds.display().to_string();
    let mut r = RegistryWorker::start(
        dir.path(),
        &[
            (
                "rest.extension.classes",
                "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
            ),
            ("rest.basic.auth.credentials.file", &creds),
        ],
    )
    .await;
    let anonymous = common::wait_for("the registry to answer", DEADLINE, || async {
        r.http
            .get(format!("{}/subjects", r.registry))
            .send()
            .await
            .ok()
            .map(|a| a.status().as_u16())
    })
    .await;
    assert_eq!(anonymous, 401);
    r.auth = Some(("alice".into(), "secret".into()));
    assert_eq!(r.get("/subjects").await, (200, json!([])));
    r.stop().await;
}

#[tokio::test]
async fn schema_registry_listener_on_another_listeners_port_is_refused() {
    let dir = common::tempdir();
    // The REST listener's configured address (the harness binds its socket, the config still names it).
    let port = common::free_port().to_string();
    let rest = format!("http://127.0.0.1:{port}");
    let registry = format!("http://0.0.0.0:{port}");
    let e = common::TestWorker::start_with(
        dir.path(),
        &[
            ("listeners", rest.as_str()),
            ("schema.registry.listeners", registry.as_str()),
        ],
        Vec::new(),
    )
    .await
    .err()
    .expect("the worker refuses the config");
    let message = e.to_string();
    assert!(
        message.contains(&format!("0.0.0.0:{port} (schema.registry.listeners) is on the port of 127.0.0.1:{port} (listeners)")),
        "{message}"
    );
}

#[test]
fn schema_registry_keeps_its_schemas_through_kill_9() {
    let dir = common::tempdir();
    let props = format!(
        "{}schema.registry.listeners=http://127.0.0.1:0\n",
        common::binary_props(dir.path())
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let register = |url: &str, subject: &str, schema: &str| {
        let url = format!("{url}/subjects/{subject}/versions");
        let schema = schema.to_string();
        runtime.block_on(async move {
            let answer = reqwest::Client::new()
                .post(url)
                .json(&json!({ "schema": schema }))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            answer.json::<Json>().await.unwrap()["id"].as_i64().unwrap()
        })
    };
    let get = |url: String| {
        runtime.block_on(async move {
            reqwest::get(url)
                .await
                .unwrap()
                .json::<Json>()
                .await
                .unwrap()
        })
    };
    let first = common::start_binary_with(dir.path(), &props, &[], 2);
    let registry = first.urls[1].clone();
    assert_eq!(register(&registry, "a", "\"int\""), 1);
    assert_eq!(register(&registry, "b", "\"long\""), 2);
    first.kill();
    let second = common::start_binary_with(dir.path(), &props, &[], 2);
    let registry = second.urls[1].clone();
    assert_eq!(get(format!("{registry}/subjects")), json!(["a", "b"]));
    assert_eq!(
        get(format!("{registry}/schemas/ids/2")),
        json!({"schema": "\"long\""})
    );
    assert_eq!(register(&registry, "c", "\"string\""), 3);
    second.kill();
}

/// Confluent's Python client (`confluent-kafka` with its `schemaregistry` and `avro` extras, pinned by
/// `scripts/install-test-deps` in the venv under `target/test-deps`): `SchemaRegistryClient` against the
/// embedded registry, then its `AvroSerializer` producing through the Kafka listener and its
/// `AvroDeserializer` reading the records back by the registry's IDs.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn schema_registry_serves_confluents_python_client_and_its_avro_serdes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("target/test-deps/venv/bin/python");
    assert!(
        python.exists(),
        "Confluent's Python client is not installed at {}: run scripts/install-test-deps",
        python.display()
    );
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let mut command = std::process::Command::new(python);
    command
        .arg(root.join("tests/clients/schema_registry_client.py"))
        .arg(&r.registry)
        .arg(r.bootstrap.as_deref().unwrap())
        .arg("readings")
        .stdin(std::process::Stdio::null());
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Json = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("the client printed {stdout:?}: {e}"));
    assert_eq!(seen["id1"], 1, "{seen}");
    assert_eq!(seen["id1_again"], 1, "{seen}");
    assert_eq!(seen["types"], json!(SCHEMA_TYPES), "{seen}");
    assert_eq!(seen["incompatible_allowed"], false, "{seen}");
    assert_eq!(seen["compatible_allowed"], true, "{seen}");
    assert_eq!(seen["incompatible_code"], 409, "{seen}");
    assert_eq!(seen["id2"], 2, "{seen}");
    assert_eq!(seen["versions"], json!([1, 2]), "{seen}");
    assert_eq!(seen["latest"], json!([2, 2, "sr-test-value"]), "{seen}");
    assert_eq!(seen["version1_id"], 1, "{seen}");
    assert_eq!(seen["lookup"], 1, "{seen}");
    assert_eq!(seen["schema_by_id_is_v1"], true, "{seen}");
    assert_eq!(seen["subjects"], json!(["sr-test-value"]), "{seen}");
    assert_eq!(seen["subjects_of_id"], json!(["sr-test-value"]), "{seen}");
    assert_eq!(seen["compat_default"], "BACKWARD", "{seen}");
    assert_eq!(
        seen["compat_set"],
        json!({"compatibility": "FULL"}),
        "{seen}"
    );
    assert_eq!(seen["compat_subject"], "FULL", "{seen}");
    assert_eq!(seen["unknown_subject_code"], 40401, "{seen}");
    assert_eq!(seen["invalid_schema_code"], 42201, "{seen}");
    assert_eq!(
        (&seen["mode_set"], &seen["mode_get"]),
        (&json!("READONLY"), &json!("READONLY"))
    );
    assert_eq!(seen["readonly_code"], 42205, "{seen}");
    assert_eq!(seen["scratch_id"], 3, "{seen}");
    assert_eq!(seen["soft_deleted"], json!([1]), "{seen}");
    assert_eq!(seen["deleted_only"], json!(["scratch"]), "{seen}");
    assert_eq!(seen["permanently_deleted"], json!([1]), "{seen}");
    // Magic byte 0, then ID 2 as four big-endian bytes.
    assert_eq!(seen["header_of_first"], "0000000002", "{seen}");
    assert_eq!(seen["read_matches"], true, "{seen}");
    r.stop().await;
}

/// Runs one of the Python client scripts with `args` and parses the JSON line it prints last.
#[cfg(any(feature = "kafka-listener", feature = "kafka-client"))]
pub(crate) async fn python(script: &str, args: &[&str]) -> Json {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("target/test-deps/venv/bin/python");
    assert!(
        python.exists(),
        "Confluent's Python client is not installed at {}: run scripts/install-test-deps",
        python.display()
    );
    let mut command = std::process::Command::new(python);
    command
        .arg(root.join("tests/clients").join(script))
        .args(args)
        .stdin(std::process::Stdio::null());
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{script} printed {stdout:?}: {e}"))
}

/// AvroConverter under Confluent's class name and keys, both ways: what Confluent's AvroSerializer
/// produced through the Kafka listener a FileStreamSink decodes by the registry's IDs, and what a
/// FileStreamSource wrote with AvroConverter Confluent's AvroDeserializer reads.
#[cfg(feature = "kafka-listener")]
#[tokio::test(flavor = "multi_thread")]
async fn avro_converter_reads_confluents_serializer_and_writes_for_its_deserializer() {
    let dir = common::tempdir();
    let r = RegistryWorker::launch(dir.path(), &[], true).await;
    let bootstrap = r.bootstrap.clone().unwrap();
    // Confluent's serializer produces 5 records of edge.Reading to `readings` (the script above).
    let seen = python(
        "schema_registry_client.py",
        &[&r.registry, &bootstrap, "readings"],
    )
    .await;
    assert_eq!(seen["read_matches"], true, "{seen}");
    let sink_file = dir.path().join("readings.txt");
    let avro = |c: &mut Json| {
        c["value.converter"] = json!("io.confluent.connect.avro.AvroConverter");
        c["value.converter.schema.registry.url"] = json!(r.registry);
    };
    let mut sink = common::file_sink("avro-sink", &sink_file, "readings");
    avro(&mut sink["config"]);
    common::create_through(&r.api, sink).await;
    let lines = common::wait_for("the sink to write 5 lines", DEADLINE, || async {
        let lines = std::fs::read_to_string(&sink_file).unwrap_or_default();
        (lines.lines().count() >= 5).then_some(lines)
    })
    .await;
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines[0], "Struct{sensor=s0,value=0.0,unit=C}", "{lines:?}");
    assert_eq!(lines[4], "Struct{sensor=s4,value=6.0,unit=C}", "{lines:?}");
    // The other way: a FileStreamSource with AvroConverter registers `lines-value` and frames each record.
    let source_file = dir.path().join("in.txt");
    common::append_lines(&source_file, ["first".to_string(), "second".to_string()]);
    let mut source = common::file_source("avro-source", &source_file, "lines");
    avro(&mut source["config"]);
    common::create_through(&r.api, source).await;
    let read = python(
        "schema_registry_consume.py",
        &[&r.registry, &bootstrap, "lines", "2"],
    )
    .await;
    assert_eq!(read["values"], json!(["first", "second"]), "{read}");
    let (_, subject) = r.get("/subjects/lines-value/versions/latest").await;
    assert_eq!(subject["schema"], json!("\"string\""), "{subject}");
    assert_eq!(read["ids"], json!([subject["id"], subject["id"]]), "{read}");
    r.stop().await;
}

/// A record that is not in Confluent's wire format, or names an ID the registry does not have, fails
/// the sink's conversion with the ID named; `errors.tolerance=all` with a dead letter queue keeps the
/// task running and routes the record there.
#[tokio::test]
async fn avro_converter_sends_records_it_cannot_read_to_the_dead_letter_queue() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    r.produce_binary("raw", &[b"plain text", &[0, 0, 0, 0, 99, b'x']])
        .await;
    let sink_file = dir.path().join("out.txt");
    let mut sink = common::file_sink("avro-dlq", &sink_file, "raw");
    sink["config"]["value.converter"] = json!("io.confluent.connect.avro.AvroConverter");
    sink["config"]["value.converter.schema.registry.url"] = json!(r.registry);
    sink["config"]["errors.tolerance"] = json!("all");
    sink["config"]["errors.deadletterqueue.topic.name"] = json!("raw-dlq");
    sink["config"]["errors.deadletterqueue.context.headers.enable"] = json!(true);
    common::create_through(&r.api, sink).await;
    let dlq = r.dead_letter_messages("raw-dlq", 2).await;
    assert!(dlq[0].contains("Unknown magic byte!"), "{dlq:?}");
    assert!(dlq[1].contains("schema ID 99"), "{dlq:?}");
    let status = r.api.get("/connectors/avro-dlq/status").await.unwrap().1;
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    r.stop().await;
}

/// A steady pipeline makes no registry call per record: a FileStreamSource and a FileStreamSink with
/// AvroConverter against another worker's registry keep converting once that registry is gone, from the
/// IDs and schemas they cached with the first records.
#[tokio::test(flavor = "multi_thread")]
async fn avro_converter_keeps_converting_from_its_cache_when_the_registry_is_gone() {
    let central_dir = common::tempdir();
    let central = RegistryWorker::start(central_dir.path(), &[]).await;
    let edge = common::Fixture::start().await;
    let avro = |mut c: Json| {
        c["config"]["key.converter"] = json!("io.confluent.connect.avro.AvroConverter");
        c["config"]["key.converter.schema.registry.url"] = json!(central.registry);
        c["config"]["value.converter"] = json!("io.confluent.connect.avro.AvroConverter");
        c["config"]["value.converter.schema.registry.url"] = json!(central.registry);
        c
    };
    let first: Vec<String> = (0..3).map(|i| format!("line {i}")).collect();
    common::append_lines(&edge.input, first.clone());
    edge.w
        .create(avro(common::file_source("src", &edge.input, "lines")))
        .await;
    edge.w
        .create(avro(common::file_sink("sink", &edge.output, "lines")))
        .await;
    common::wait_until("the first lines through", || async {
        common::lines(&edge.output) == first
    })
    .await;
    assert_eq!(
        central.get("/subjects").await,
        (200, json!(["lines-value"]))
    );
    central.stop().await;
    let more: Vec<String> = (3..6).map(|i| format!("line {i}")).collect();
    common::append_lines(&edge.input, more.clone());
    common::wait_until("the later lines through without the registry", || async {
        common::lines(&edge.output).len() == 6
    })
    .await;
    assert_eq!(common::lines(&edge.output)[3..], more[..]);
    edge.w.stop().await;
}

/// A webhook source may not take the Schema Registry's port: the worker's listeners are held.
#[cfg(feature = "http")]
#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_source_on_the_registry_port_is_refused() {
    let dir = common::tempdir();
    let r = RegistryWorker::start(dir.path(), &[]).await;
    let port: u16 = r.registry.rsplit(':').next().unwrap().parse().unwrap();
    let hook = json!({"name": "hooks", "config": {
        "connector.class": "WebhookSource", "tasks.max": "1",
        "listener": format!("http://127.0.0.1:{port}"), "path": "/hooks", "topic": "hooks"}});
    let (status, answer) = r.api.post("/connectors", &hook).await.unwrap();
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains(&format!(
            "127.0.0.1:{port} is already the listener of the worker's Schema Registry listener"
        )),
        "{answer}"
    );
    r.stop().await;
}
