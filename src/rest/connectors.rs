//! `/connectors` and everything below it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value as Json};
use warp::http::Method;

use super::{connector_location, only, parse_body, query_flag, ApiState, Reply, Request, Result};
use crate::config::connector::invalid_config_message;
use crate::herder::{ConnectorOffsets, Expansion, OffsetEntry};
use crate::model::TargetState;

/// The body of `POST /connectors`. Unknown fields are refused (400), unlike Kafka's 500.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateConnectorRequest {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    config: Option<Map<String, Json>>,
    #[serde(default)]
    initial_state: Option<String>,
    /// KIP-995: offsets written before the connector first starts (a liteconnect extension).
    #[serde(default)]
    offsets: Option<Vec<OffsetEntry>>,
}

/// Turns a JSON config object into strings as Kafka's `Map<String, String>` binding does: numbers and
/// booleans become their text, null stays null (and fails validation), objects and arrays are refused.
pub(super) fn config_map(map: Map<String, Json>) -> Result<BTreeMap<String, Option<String>>> {
    map.into_iter()
        .map(|(k, v)| {
            let v = match v {
                Json::String(s) => Some(s),
                Json::Null => None,
                Json::Bool(b) => Some(b.to_string()),
                Json::Number(n) => Some(n.to_string()),
                Json::Array(_) | Json::Object(_) => {
                    return Err(Reply::error(
                        400,
                        format!("Invalid config value for '{k}': expected a string, not a JSON array or object."),
                    ))
                }
            };
            Ok((k, v))
        })
        .collect()
}

/// Null values cannot be stored: answer with the validation message they produce.
fn require_values(
    state: &ApiState,
    config: BTreeMap<String, Option<String>>,
) -> Result<BTreeMap<String, String>> {
    if config.values().any(Option::is_none) {
        let infos = state.herder.validate(&config)?;
        let message = invalid_config_message(&infos)
            .unwrap_or_else(|| "Null value can not be supplied as the configuration value.".into());
        return Err(Reply::error(400, message));
    }
    Ok(config
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect())
}

fn parse_task(s: &str) -> Result<u32> {
    s.parse()
        .map_err(|_| Reply::error(404, "HTTP 404 Not Found"))
}

pub(super) async fn route(state: &ApiState, req: &Request<'_>, segs: &[&str]) -> Result {
    let h = &state.herder;
    let m = req.method;
    match segs {
        [] => {
            only(m, &[Method::GET, Method::POST])?;
            if *m == Method::GET {
                list(state, req)
            } else {
                create(state, req).await
            }
        }
        [name] => {
            only(m, &[Method::GET, Method::DELETE])?;
            if *m == Method::GET {
                Ok(Reply::json_text(200, &h.connector_info(name)?))
            } else {
                h.delete_connector(name).await?;
                tracing::info!(connector = %name, "Connector deleted.");
                Ok(Reply::empty(204))
            }
        }
        [name, "config"] => config(state, req, name).await,
        [name, "status"] => {
            only(m, &[Method::GET])?;
            Ok(Reply::json_text(200, &h.connector_status(name)?))
        }
        [name, "restart"] => {
            only(m, &[Method::POST])?;
            let include_tasks = query_flag(&req.query, "includeTasks", false);
            let only_failed = query_flag(&req.query, "onlyFailed", false);
            let plan = h
                .restart_connector(name, include_tasks, only_failed)
                .await?;
            tracing::info!(connector = %name, include_tasks, only_failed, "Connector restarted.");
            Ok(match plan {
                Some(plan) => Reply::json(202, &plan),
                None => Reply::empty(204),
            })
        }
        [name, action @ ("pause" | "resume" | "stop")] => {
            only(m, &[Method::PUT])?;
            let (status, done) = match *action {
                "pause" => (h.pause(name).await.map(|()| 202)?, "paused"),
                "resume" => (h.resume(name).await.map(|()| 202)?, "resumed"),
                _ => (h.stop(name).await.map(|()| 204)?, "stopped"),
            };
            tracing::info!(connector = %name, "Connector {done}.");
            Ok(Reply::empty(status))
        }
        [name, "tasks"] => {
            only(m, &[Method::GET])?;
            Ok(Reply::json(200, &h.tasks(name)?))
        }
        [name, "tasks", task, "status"] => {
            only(m, &[Method::GET])?;
            Ok(Reply::json_text(
                200,
                &h.task_status(name, parse_task(task)?)?,
            ))
        }
        [name, "tasks", task, "restart"] => {
            only(m, &[Method::POST])?;
            let task = parse_task(task)?;
            h.restart_task(name, task).await?;
            tracing::info!(connector = %name, task, "Task restarted.");
            Ok(Reply::empty(204))
        }
        [name, "topics"] => {
            only(m, &[Method::GET])?;
            let topics = h.active_topics(name).await?;
            Ok(Reply::json(200, &json!({ *name: {"topics": topics} })))
        }
        [name, "topics", "reset"] => {
            only(m, &[Method::PUT])?;
            h.reset_active_topics(name).await?;
            Ok(Reply::empty(202))
        }
        [name, "offsets"] => offsets(state, req, name).await,
        _ => Err(Reply::error(404, "HTTP 404 Not Found")),
    }
}

/// `/connectors/{name}/config`: read, replace (or create), patch.
async fn config(state: &ApiState, req: &Request<'_>, name: &str) -> Result {
    let h = &state.herder;
    only(req.method, &[Method::GET, Method::PUT, Method::PATCH])?;
    match *req.method {
        Method::GET => Ok(Reply::json(200, &h.connector_config(name)?)),
        Method::PUT => {
            let body: Map<String, Json> = parse_body(&req.body)?;
            let config = require_values(state, config_map(body)?)?;
            let (created, info) = h.put_connector_config(name, config).await?;
            if created {
                tracing::info!(connector = %name, "Connector created.");
            } else {
                tracing::info!(connector = %name, "Connector config changed.");
            }
            Ok(if created {
                Reply::json(201, &info).with_location(connector_location(name))
            } else {
                Reply::json(200, &info)
            })
        }
        _ => {
            let body: Map<String, Json> = parse_body(&req.body)?;
            let info = h.patch_connector_config(name, config_map(body)?).await?;
            tracing::info!(connector = %name, "Connector config changed.");
            Ok(Reply::json(200, &info))
        }
    }
}

/// `/connectors/{name}/offsets`: read, alter, reset (KIP-875).
async fn offsets(state: &ApiState, req: &Request<'_>, name: &str) -> Result {
    let h = &state.herder;
    only(req.method, &[Method::GET, Method::PATCH, Method::DELETE])?;
    match *req.method {
        Method::GET => Ok(Reply::json(200, &h.offsets(name).await?)),
        Method::PATCH => {
            let body: ConnectorOffsets = parse_body(&req.body)?;
            let message = h.alter_offsets(name, body).await?;
            tracing::info!(connector = %name, "Connector offsets altered.");
            Ok(Reply::json(200, &json!({ "message": message })))
        }
        _ => {
            let message = h.reset_offsets(name).await?;
            tracing::info!(connector = %name, "Connector offsets reset.");
            Ok(Reply::json(200, &json!({ "message": message })))
        }
    }
}

fn list(state: &ApiState, req: &Request<'_>) -> Result {
    let h = &state.herder;
    let mut expand = req.query.iter().filter(|(k, _)| k == "expand").peekable();
    if expand.peek().is_none() {
        return Ok(Reply::json_text(200, &h.connector_names()));
    }
    let mut wanted = Vec::new();
    for (_, e) in expand {
        let x = match e.as_str() {
            "status" => Expansion::Status,
            "info" => Expansion::Info,
            other => {
                tracing::info!(expand = other, "Ignoring unknown expansion type.");
                continue;
            }
        };
        if !wanted.contains(&x) {
            wanted.push(x);
        }
    }
    Ok(Reply::text(
        200,
        "application/json",
        h.expanded_list(&wanted),
    ))
}

/// A parsed `POST /connectors` body: name, config (nulls kept, to fail validation), initial state, offsets.
pub(super) type CreateRequest = (
    String,
    BTreeMap<String, Option<String>>,
    TargetState,
    Option<Vec<OffsetEntry>>,
);

/// Parses a `POST /connectors` body; every refusal is a 400 naming what is wrong.
pub(super) fn parse_create(body: &super::Body) -> Result<CreateRequest> {
    let body: CreateConnectorRequest = parse_body(body)?;
    let initial = match body.initial_state.as_deref() {
        None => TargetState::Started,
        Some(s) => TargetState::from_initial_state(s).ok_or_else(|| {
            Reply::error(
                400,
                format!("Invalid initial_state '{s}': it must be one of RUNNING, PAUSED, STOPPED (case-insensitive)."),
            )
        })?,
    };
    let Some(config) = body.config else {
        return Err(Reply::error(
            400,
            "The request has no 'config' object; a connector config is required.",
        ));
    };
    let name = body.name.unwrap_or_default().trim().to_string();
    let mut config = config_map(config)?;
    if !config.contains_key(crate::config::keys::NAME) {
        config.insert(crate::config::keys::NAME.into(), Some(name.clone()));
    }
    Ok((name, config, initial, body.offsets))
}

async fn create(state: &ApiState, req: &Request<'_>) -> Result {
    let (name, config, initial, offsets) = parse_create(&req.body)?;
    let config = require_values(state, config)?;
    let info = state
        .herder
        .create_connector(&name, config, initial, offsets)
        .await?;
    tracing::info!(connector = %info.name, initial_state = ?initial, "Connector created.");
    Ok(Reply::json_text(201, &info).with_location(connector_location(&info.name)))
}
