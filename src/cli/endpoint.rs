//! A Kafka Connect REST endpoint as `export` and `migrate` use it: the few public routes they need, each
//! answer checked, each failure a [`RequestError`] naming the request.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value as Json};

/// A request to a Kafka Connect REST endpoint that failed.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The endpoint could not be reached, or did not answer in time.
    #[error("{method} {url} failed: {source}")]
    Send {
        /// The request's method.
        method: Method,
        /// The URL asked.
        url: String,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The answer could not be read.
    #[error("{method} {url}: reading the answer failed: {source}")]
    Read {
        /// The request's method.
        method: Method,
        /// The URL asked.
        url: String,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The endpoint answered with a status the request does not expect.
    #[error("{method} {url} answered {status}: {message}")]
    Status {
        /// The request's method.
        method: Method,
        /// The URL asked.
        url: String,
        /// The HTTP status of the answer.
        status: u16,
        /// The message of the answer's body.
        message: String,
    },
    /// The answer does not have the shape Kafka Connect gives it.
    #[error("{method} {url}: unexpected answer: {detail}")]
    Shape {
        /// The request's method.
        method: Method,
        /// The URL asked.
        url: String,
        /// What was wrong with the answer.
        detail: String,
    },
}

/// A path segment: a connector or plugin name, percent-encoded.
pub(crate) fn seg(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A Kafka Connect REST endpoint.
#[derive(Debug, Clone)]
pub struct Endpoint {
    base: String,
    client: reqwest::Client,
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

    /// Sends a request; any answer is returned with its status.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<(u16, Json), RequestError> {
        let url = format!("{}{}", self.base, path);
        let mut req = self.client.request(method.clone(), &url);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(|source| RequestError::Send {
            method: method.clone(),
            url: url.clone(),
            source,
        })?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|source| RequestError::Read {
            method,
            url,
            source,
        })?;
        let json = if text.trim().is_empty() {
            Json::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Json::String(text))
        };
        Ok((status, json))
    }

    /// Sends a request and accepts only the statuses in `ok`.
    async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
        ok: &[u16],
    ) -> Result<Json, RequestError> {
        let (status, json) = self.call(method.clone(), path, body).await?;
        if ok.contains(&status) {
            return Ok(json);
        }
        let message = json
            .get("message")
            .and_then(Json::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| json.to_string());
        Err(RequestError::Status {
            method,
            url: format!("{}{path}", self.base),
            status,
            message,
        })
    }

    /// A GET whose 404 means "there is none".
    async fn get_optional(&self, path: &str) -> Result<Option<Json>, RequestError> {
        match self.call(Method::GET, path, None).await? {
            (404, _) => Ok(None),
            (200, json) => Ok(Some(json)),
            _ => self.expect(Method::GET, path, None, &[200]).await.map(Some),
        }
    }

    fn shape(&self, path: &str, detail: impl ToString) -> RequestError {
        RequestError::Shape {
            method: Method::GET,
            url: format!("{}{path}", self.base),
            detail: detail.to_string(),
        }
    }

    /// Connector names.
    ///
    /// # Errors
    /// The request failed or the answer is not a list of names.
    pub async fn connectors(&self) -> Result<Vec<String>, RequestError> {
        let names = self
            .expect(Method::GET, "/connectors", None, &[200])
            .await?;
        serde_json::from_value(names).map_err(|e| self.shape("/connectors", e))
    }

    /// A connector's config, or `None` when the endpoint has no such connector.
    ///
    /// # Errors
    /// The request failed.
    pub async fn config(&self, name: &str) -> Result<Option<Json>, RequestError> {
        self.get_optional(&format!("/connectors/{}/config", seg(name)))
            .await
    }

    /// A connector's status, or `None` when the endpoint has no such connector.
    ///
    /// # Errors
    /// The request failed.
    pub async fn status(&self, name: &str) -> Result<Option<Status>, RequestError> {
        let json = self
            .get_optional(&format!("/connectors/{}/status", seg(name)))
            .await?;
        Ok(json.map(|s| Status::from_json(&s)))
    }

    /// A connector's offsets: the `offsets` array of `GET /connectors/{c}/offsets`.
    ///
    /// # Errors
    /// The request failed.
    pub async fn offsets(&self, name: &str) -> Result<Json, RequestError> {
        let json = self
            .on_connector(Method::GET, name, "/offsets", None, &[200])
            .await?;
        Ok(json["offsets"].clone())
    }

    /// The topics a connector has used (KIP-558), or `None` when the endpoint does not track them.
    ///
    /// # Errors
    /// The request failed other than by being refused.
    pub async fn active_topics(&self, name: &str) -> Result<Option<Vec<String>>, RequestError> {
        let path = format!("/connectors/{}/topics", seg(name));
        match self.call(Method::GET, &path, None).await? {
            (200, json) => Ok(Some(
                json[name]["topics"]
                    .as_array()
                    .map(|t| {
                        t.iter()
                            .filter_map(Json::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            )),
            _ => Ok(None),
        }
    }

    /// The connector plugins' class names (`GET /connector-plugins`).
    ///
    /// # Errors
    /// The request failed.
    pub async fn plugin_classes(&self) -> Result<Vec<String>, RequestError> {
        let json = self
            .expect(Method::GET, "/connector-plugins", None, &[200])
            .await?;
        let list = json
            .as_array()
            .ok_or_else(|| self.shape("/connector-plugins", "not a list"))?;
        Ok(list
            .iter()
            .filter_map(|p| p["class"].as_str().map(str::to_string))
            .collect())
    }

    /// The errors `PUT /connector-plugins/{class}/config/validate` finds in `config`, as `key: message`.
    ///
    /// # Errors
    /// The request failed.
    pub async fn validation_errors(
        &self,
        class: &str,
        config: &Json,
    ) -> Result<Vec<String>, RequestError> {
        let infos = self
            .expect(
                Method::PUT,
                &format!("/connector-plugins/{}/config/validate", seg(class)),
                Some(config),
                &[200],
            )
            .await?;
        let mut errors = Vec::new();
        for c in infos["configs"].as_array().into_iter().flatten() {
            for e in c["value"]["errors"].as_array().into_iter().flatten() {
                let key = c["value"]["name"].as_str().unwrap_or("?");
                errors.push(format!("{key}: {}", e.as_str().unwrap_or_default()));
            }
        }
        if errors.is_empty() && infos["error_count"].as_u64().is_some_and(|n| n > 0) {
            errors.push(format!("{} error(s)", infos["error_count"]));
        }
        Ok(errors)
    }

    /// `POST /connectors` with `initial_state: STOPPED`.
    ///
    /// # Errors
    /// The request failed or was refused.
    pub async fn create_stopped(&self, name: &str, config: &Json) -> Result<(), RequestError> {
        let body = json!({"name": name, "config": config, "initial_state": "STOPPED"});
        self.expect(Method::POST, "/connectors", Some(&body), &[201])
            .await
            .map(drop)
    }

    /// `PATCH /connectors/{c}/offsets`.
    ///
    /// # Errors
    /// The request failed or was refused.
    pub async fn alter_offsets(&self, name: &str, offsets: &Json) -> Result<(), RequestError> {
        let body = json!({ "offsets": offsets });
        self.on_connector(Method::PATCH, name, "/offsets", Some(&body), &[200])
            .await
            .map(drop)
    }

    /// `PUT /connectors/{c}/stop`.
    ///
    /// # Errors
    /// The request failed or was refused.
    pub async fn stop(&self, name: &str) -> Result<(), RequestError> {
        self.on_connector(Method::PUT, name, "/stop", None, &[202, 204])
            .await
            .map(drop)
    }

    /// `PUT /connectors/{c}/resume`.
    ///
    /// # Errors
    /// The request failed or was refused.
    pub async fn resume(&self, name: &str) -> Result<(), RequestError> {
        self.on_connector(Method::PUT, name, "/resume", None, &[202, 204])
            .await
            .map(drop)
    }

    /// `DELETE /connectors/{c}`.
    ///
    /// # Errors
    /// The request failed or was refused.
    pub async fn delete(&self, name: &str) -> Result<(), RequestError> {
        self.on_connector(Method::DELETE, name, "", None, &[204])
            .await
            .map(drop)
    }

    /// [`Endpoint::expect`] on `/connectors/{name}{tail}`.
    async fn on_connector(
        &self,
        method: Method,
        name: &str,
        tail: &str,
        body: Option<&Json>,
        ok: &[u16],
    ) -> Result<Json, RequestError> {
        let path = format!("/connectors/{}{tail}", seg(name));
        self.expect(method, &path, body, ok).await
    }
}

/// The parts of `GET /connectors/{c}/status` that `migrate` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The connector's state: RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED.
    pub state: String,
    /// `source`, `sink` or `unknown`.
    pub kind: String,
    /// Each task's state.
    pub tasks: Vec<String>,
}

impl Status {
    fn from_json(json: &Json) -> Status {
        Status {
            state: json["connector"]["state"]
                .as_str()
                .unwrap_or("UNASSIGNED")
                .to_string(),
            kind: json["type"].as_str().unwrap_or("unknown").to_string(),
            tasks: json["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| t["state"].as_str().unwrap_or("UNASSIGNED").to_string())
                .collect(),
        }
    }

    /// Stopped with no task left.
    pub fn is_stopped(&self) -> bool {
        self.state == "STOPPED" && self.tasks.is_empty()
    }
}
