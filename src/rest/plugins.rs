//! `/connector-plugins`: the installed plugins, their config definitions, and config validation.

use serde_json::{Map, Value as Json};
use warp::http::Method;

use super::{only, parse_body, query_flag, ApiState, Reply, Request, Result};

pub(super) async fn route(state: &ApiState, req: &Request<'_>, segs: &[&str]) -> Result {
    let h = &state.herder;
    match segs {
        [] => {
            only(req.method, &[Method::GET])?;
            let connectors_only = query_flag(&req.query, "connectorsOnly", true);
            Ok(Reply::json(200, &h.plugins().list(connectors_only)))
        }
        [plugin, "config"] => {
            only(req.method, &[Method::GET])?;
            match h.plugins().plugin_config(plugin) {
                Some(keys) => Ok(Reply::json(200, &keys)),
                None => Err(Reply::error(404, format!("Unknown plugin {plugin}."))),
            }
        }
        [plugin, "config", "validate"] => {
            only(req.method, &[Method::PUT])?;
            let body: Map<String, Json> = parse_body(&req.body)?;
            let config = super::connectors::config_map(body)?;
            if let Some(Some(class)) = config.get(crate::config::keys::CONNECTOR_CLASS) {
                same_plugin(class, plugin)?;
            }
            Ok(Reply::json(200, &h.validate_live(&config).await?))
        }
        [plugin, "config", "test"] => {
            only(req.method, &[Method::POST])?;
            let body: Map<String, Json> = parse_body(&req.body)?;
            let run = super::tryout::TestRequest::parse(body, plugin)?;
            if let Some(class) = run.config.get(crate::config::keys::CONNECTOR_CLASS) {
                same_plugin(class, plugin)?;
            }
            let worker = h.worker_config().clone();
            let answer = tokio::task::spawn_blocking(move || run.run(&worker))
                .await
                .map_err(|e| Reply::error(500, format!("The test stopped: {e}")))??;
            Ok(Reply::json(200, &answer))
        }
        _ => Err(Reply::error(404, "HTTP 404 Not Found")),
    }
}

/// Kafka compares the two names as text (a suffix match after cutting `Connector`), not through the
/// plugin aliases: `/connector-plugins/Sink/...` accepts any sink class.
fn same_plugin(class: &str, plugin: &str) -> std::result::Result<(), Reply> {
    let given = class.trim();
    let given = given.strip_suffix("Connector").unwrap_or(given);
    let wanted = plugin.strip_suffix("Connector").unwrap_or(plugin);
    if given.ends_with(wanted) {
        Ok(())
    } else {
        Err(Reply::error(
            400,
            format!("Included connector type {class} does not match request type {plugin}"),
        ))
    }
}
