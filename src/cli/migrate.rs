//! Moving connectors with their offsets between Kafka Connect REST endpoints (liteconnect or Apache Kafka
//! Connect), by KIP-980's recipe: stop on the source, read config and offsets, create STOPPED on the
//! target, write the offsets there, check them, resume. Only the public REST API is used.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

/// A Kafka Connect REST endpoint.
#[derive(Debug, Clone)]
pub struct Endpoint {
    base: String,
    client: reqwest::Client,
}

fn seg(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl Endpoint {
    /// An endpoint at `base` (e.g. `http://127.0.0.1:8083`).
    pub fn new(base: &str) -> Endpoint {
        Endpoint {
            base: base.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap_or_default(),
        }
    }

    /// The base URL.
    pub fn url(&self) -> &str {
        &self.base
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<(u16, Json), String> {
        let url = format!("{}{}", self.base, path);
        let mut req = self.client.request(method.clone(), &url);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("{method} {url} failed: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp
            .text()
            .await
            .map_err(|e| format!("{method} {url}: reading the answer failed: {e}"))?;
        let json = if text.trim().is_empty() {
            Json::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Json::String(text))
        };
        Ok((status, json))
    }

    async fn expect(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Json>,
        ok: &[u16],
    ) -> Result<Json, String> {
        let (status, json) = self.call(method.clone(), path, body).await?;
        if ok.contains(&status) {
            Ok(json)
        } else {
            let message = json
                .get("message")
                .and_then(Json::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| json.to_string());
            Err(format!(
                "{method} {}{path} answered {status}: {message}",
                self.base
            ))
        }
    }

    /// Connector names.
    pub async fn connectors(&self) -> Result<Vec<String>, String> {
        let names = self
            .expect(reqwest::Method::GET, "/connectors", None, &[200])
            .await?;
        serde_json::from_value(names)
            .map_err(|e| format!("GET {}/connectors: unexpected answer: {e}", self.base))
    }

    /// A connector's config, status state and offsets.
    pub async fn snapshot(&self, name: &str) -> Result<(Json, String, Json), String> {
        let c = seg(name);
        let config = self
            .expect(
                reqwest::Method::GET,
                &format!("/connectors/{c}/config"),
                None,
                &[200],
            )
            .await?;
        let status = self
            .expect(
                reqwest::Method::GET,
                &format!("/connectors/{c}/status"),
                None,
                &[200],
            )
            .await?;
        let offsets = self
            .expect(
                reqwest::Method::GET,
                &format!("/connectors/{c}/offsets"),
                None,
                &[200],
            )
            .await?;
        let state = status["connector"]["state"]
            .as_str()
            .unwrap_or("RUNNING")
            .to_string();
        Ok((config, state, offsets["offsets"].clone()))
    }
}

/// Sorts offset entries so two answers can be compared whatever their order.
fn normalised(offsets: &Json) -> Vec<String> {
    let mut v: Vec<String> = offsets
        .as_array()
        .map(|a| a.iter().map(crate::storage::canonical_key).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Writes one `POST /connectors` file per connector (with its offsets) into `dir`. Returns the files written.
///
/// # Errors
/// The first failing request or write.
pub async fn export(
    from: &Endpoint,
    names: &[String],
    dir: &Path,
) -> Result<Vec<std::path::PathBuf>, String> {
    let names = if names.is_empty() {
        from.connectors().await?
    } else {
        names.to_vec()
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("Cannot create {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for name in names {
        let (config, state, offsets) = from.snapshot(&name).await?;
        let initial_state = match state.as_str() {
            "PAUSED" | "STOPPED" => state.clone(),
            _ => "RUNNING".to_string(),
        };
        let body = json!({"name": name, "config": config, "initial_state": initial_state, "offsets": offsets});
        let path = dir.join(format!("{}.json", seg(&name)));
        let text = serde_json::to_string_pretty(&body).unwrap_or_default();
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("Cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// What `migrate` should do besides the recipe.
#[derive(Debug, Clone, Copy, Default)]
pub struct MigrateOptions {
    /// Leave the connector STOPPED on the target.
    pub leave_stopped: bool,
    /// Delete the connector from the source once it runs on the target.
    pub delete_source: bool,
}

/// Moves connectors from one endpoint to another; `report` receives one line per step.
///
/// # Errors
/// At the first failing step, a message saying what failed and how to retry; the source connector is
/// then STOPPED but intact.
pub async fn migrate(
    from: &Endpoint,
    to: &Endpoint,
    names: &[String],
    options: MigrateOptions,
    report: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let names = if names.is_empty() {
        from.connectors().await?
    } else {
        names.to_vec()
    };
    for name in &names {
        migrate_one(from, to, name, options, report).await.map_err(|e| {
            format!(
                "{e}\nConnector {name} is STOPPED on {} with its config and offsets intact. Fix the problem and run the same command again (finished steps are recognised), or resume it there with PUT /connectors/{}/resume.",
                from.url(),
                seg(name)
            )
        })?;
    }
    Ok(())
}

async fn migrate_one(
    from: &Endpoint,
    to: &Endpoint,
    name: &str,
    options: MigrateOptions,
    report: &mut dyn FnMut(&str),
) -> Result<(), String> {
    use reqwest::Method;
    let c = seg(name);
    from.expect(
        Method::PUT,
        &format!("/connectors/{c}/stop"),
        None,
        &[202, 204],
    )
    .await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = from
            .expect(
                Method::GET,
                &format!("/connectors/{c}/status"),
                None,
                &[200],
            )
            .await?;
        if status["connector"]["state"] == "STOPPED"
            && status["tasks"].as_array().is_some_and(Vec::is_empty)
        {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{name} did not reach STOPPED on {} within 60 s",
                from.url()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    report(&format!("{name}: stopped on {}", from.url()));
    let (config, _, offsets) = from.snapshot(name).await?;
    report(&format!(
        "{name}: read config and {} offset(s)",
        offsets.as_array().map_or(0, Vec::len)
    ));

    let (status, existing) = to
        .call(Method::GET, &format!("/connectors/{c}/config"), None)
        .await?;
    if status == 200 {
        if existing != config {
            return Err(format!(
                "A connector named {name} already exists on {} with a different config",
                to.url()
            ));
        }
        report(&format!(
            "{name}: already created on {} by an earlier run",
            to.url()
        ));
    } else {
        let body = json!({"name": name, "config": config, "initial_state": "STOPPED"});
        to.expect(Method::POST, "/connectors", Some(&body), &[201])
            .await?;
        report(&format!("{name}: created STOPPED on {}", to.url()));
    }
    if offsets.as_array().is_some_and(|a| !a.is_empty()) {
        to.expect(
            Method::PATCH,
            &format!("/connectors/{c}/offsets"),
            Some(&json!({"offsets": offsets})),
            &[200],
        )
        .await?;
        let written = to
            .expect(
                Method::GET,
                &format!("/connectors/{c}/offsets"),
                None,
                &[200],
            )
            .await?;
        if normalised(&written["offsets"]) != normalised(&offsets) {
            return Err(format!(
                "The offsets read back from {} differ from those written: {}",
                to.url(),
                written["offsets"]
            ));
        }
        report(&format!(
            "{name}: offsets written and verified on {}",
            to.url()
        ));
    }
    if !options.leave_stopped {
        to.expect(
            Method::PUT,
            &format!("/connectors/{c}/resume"),
            None,
            &[202, 204],
        )
        .await?;
        report(&format!("{name}: resumed on {}", to.url()));
    }
    if options.delete_source {
        from.expect(Method::DELETE, &format!("/connectors/{c}"), None, &[204])
            .await?;
        report(&format!("{name}: deleted from {}", from.url()));
    }
    Ok(())
}
