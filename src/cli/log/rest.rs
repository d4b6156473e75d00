//! The blocking REST client the log commands use: one base URL, optional basic credentials, and answers
//! checked against the status a route gives on success.

use std::time::Duration;

use base64::Engine;
use reqwest::blocking::{Client, RequestBuilder};
use reqwest::Method;
use serde_json::{json, Value as Json};

use super::super::endpoint::seg;
use crate::converters::registry::local::SchemaLookup;
use crate::storage::registry::StoredSchema;

/// The media type of REST Proxy v2 records embedded as base64.
const BINARY_V2: &str = "application/vnd.kafka.binary.v2+json";

/// A record read over REST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// A worker's REST API.
#[derive(Debug)]
pub(super) struct Rest {
    http: Client,
    base: String,
    credentials: Option<(String, String)>,
}

impl Rest {
    pub(super) fn new(base: &str, credentials: Option<(String, String)>) -> Result<Rest, String> {
        let http = Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| format!("Cannot build the HTTP client: {e}"))?;
        Ok(Rest {
            http,
            base: base.trim_end_matches('/').to_string(),
            credentials,
        })
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let req = self.http.request(method, format!("{}{path}", self.base));
        match &self.credentials {
            Some((user, password)) => req.basic_auth(user, Some(password)),
            None => req,
        }
    }

    /// Sends `req`; the answer's JSON when its status is `ok`, `None` on 404 when `missing_ok`, otherwise
    /// an error naming the request and quoting the answer's message.
    fn send(
        &self,
        req: RequestBuilder,
        what: &str,
        missing_ok: bool,
    ) -> Result<Option<Json>, String> {
        let failed = |e: reqwest::Error| {
            let url = e.url().map(|u| u.to_string()).unwrap_or_default();
            format!("{what} failed: {}", crate::client::describe(&e, &url))
        };
        let resp = req.send().map_err(failed)?;
        let status = resp.status().as_u16();
        let text = resp.text().map_err(failed)?;
        let body = serde_json::from_str(&text).unwrap_or(Json::String(text));
        match status {
            200..=299 => Ok(Some(body)),
            404 if missing_ok => Ok(None),
            _ => {
                let message = body["message"]
                    .as_str()
                    .map_or_else(|| body.to_string(), str::to_string);
                let hint = if status == 401 {
                    format!(" (give credentials with --user or {})", super::USER_ENV)
                } else {
                    String::new()
                };
                Err(format!("{what} answered {status}: {message}{hint}"))
            }
        }
    }

    /// `GET path`, `None` when it answers 404.
    pub(super) fn get_optional(&self, path: &str) -> Result<Option<Json>, String> {
        let what = format!("GET {}{path}", self.base);
        self.send(self.request(Method::GET, path), &what, true)
    }

    /// `GET path`.
    pub(super) fn get(&self, path: &str) -> Result<Json, String> {
        let what = format!("GET {}{path}", self.base);
        Ok(self
            .send(self.request(Method::GET, path), &what, false)?
            .unwrap_or_default())
    }

    /// The topic names, sorted.
    pub(super) fn topics(&self) -> Result<Vec<String>, String> {
        let names = self.get("/topics")?;
        let mut names: Vec<String> = names
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect();
        names.sort();
        Ok(names)
    }

    /// The partition count of a topic, `None` when it does not exist.
    pub(super) fn partition_count(&self, topic: &str) -> Result<Option<i32>, String> {
        let json = self.get_optional(&format!("/topics/{}/partitions", seg(topic)))?;
        Ok(json.map(|p| p.as_array().map_or(0, Vec::len) as i32))
    }

    /// A partition's beginning and end offsets.
    pub(super) fn offsets(&self, topic: &str, partition: i32) -> Result<(i64, i64), String> {
        let json = self.get(&format!(
            "/topics/{}/partitions/{partition}/offsets",
            seg(topic)
        ))?;
        let field = |k: &str| json[k].as_i64().ok_or_else(|| format!("No {k} in {json}"));
        Ok((field("beginning_offset")?, field("end_offset")?))
    }

    /// The records of a partition from `from` on, waiting up to `wait` for a first one.
    pub(super) fn read(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        wait: Duration,
    ) -> Result<Vec<Record>, String> {
        let path = format!(
            "/topics/{}/partitions/{partition}/records?offset={from}&timeout={}",
            seg(topic),
            wait.as_millis()
        );
        let what = format!("GET {}{path}", self.base);
        let req = self
            .request(Method::GET, &path)
            .header(reqwest::header::ACCEPT, BINARY_V2)
            .timeout(wait + Duration::from_secs(60));
        let json = self.send(req, &what, false)?.unwrap_or_default();
        let records = json
            .as_array()
            .ok_or_else(|| format!("{what}: not a list of records: {json}"))?;
        records
            .iter()
            .map(|r| {
                Ok(Record {
                    partition: r["partition"].as_i64().unwrap_or(partition.into()) as i32,
                    offset: r["offset"]
                        .as_i64()
                        .ok_or_else(|| format!("{what}: a record has no offset"))?,
                    key: decode(&r["key"]).map_err(|e| format!("{what}: {e}"))?,
                    value: decode(&r["value"]).map_err(|e| format!("{what}: {e}"))?,
                })
            })
            .collect()
    }

    /// Produces records as REST Proxy's binary embedded format (stored as the bytes given); answers how
    /// many the worker acknowledged.
    pub(super) fn produce(
        &self,
        topic: &str,
        records: &[(Option<Vec<u8>>, Vec<u8>)],
    ) -> Result<usize, String> {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let body = json!({"records": records
            .iter()
            .map(|(k, v)| json!({"key": k.as_deref().map(b64), "value": b64(v)}))
            .collect::<Vec<_>>()});
        let path = format!("/topics/{}", seg(topic));
        let what = format!("POST {}{path}", self.base);
        let req = self
            .request(Method::POST, &path)
            .header(reqwest::header::CONTENT_TYPE, BINARY_V2)
            .body(body.to_string());
        let answer = self.send(req, &what, false)?.unwrap_or_default();
        Ok(answer["offsets"].as_array().map_or(0, Vec::len))
    }
}

fn decode(field: &Json) -> Result<Option<Vec<u8>>, String> {
    match field {
        Json::Null => Ok(None),
        Json::String(s) => base64::engine::general_purpose::STANDARD
            .decode(s)
            .map(Some)
            .map_err(|e| format!("a record is not base64: {e}")),
        other => Err(format!("a record's key or value is not base64: {other}")),
    }
}

/// A schema in the registry's JSON (`schema`, `schemaType` when not AVRO, `references`).
fn stored_schema(id: i64, json: &Json) -> Result<StoredSchema, String> {
    Ok(StoredSchema {
        id,
        schema_type: json["schemaType"].as_str().unwrap_or("AVRO").to_string(),
        schema: json["schema"]
            .as_str()
            .ok_or_else(|| format!("No schema in {json}"))?
            .to_string(),
        references: serde_json::from_value(json["references"].clone()).unwrap_or_default(),
    })
}

/// The worker's registry through its read-only routes under `/registry/` on the REST listener.
impl SchemaLookup for Rest {
    fn schema(&self, id: i64) -> Result<Option<StoredSchema>, String> {
        self.get_optional(&format!("/registry/schemas/ids/{id}"))?
            .map(|json| stored_schema(id, &json))
            .transpose()
    }

    fn version(&self, subject: &str, version: i32) -> Result<Option<StoredSchema>, String> {
        let path = format!(
            "/registry/subjects/{}/versions/{version}?deleted=true",
            seg(subject)
        );
        self.get_optional(&path)?
            .map(|json| stored_schema(json["id"].as_i64().unwrap_or(-1), &json))
            .transpose()
    }

    fn subject_of(&self, id: i64) -> Result<Option<String>, String> {
        let json =
            self.get_optional(&format!("/registry/schemas/ids/{id}/versions?deleted=true"))?;
        Ok(json.and_then(|j| j[0]["subject"].as_str().map(str::to_string)))
    }
}
