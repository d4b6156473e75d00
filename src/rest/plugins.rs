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
        #[cfg(feature = "airbyte")]
        [plugin, "config", "spec"] => {
            only(req.method, &[Method::PUT])?;
            airbyte_spec(state, plugin, parse_body(&req.body)?).await
        }
        _ => Err(Reply::error(404, "HTTP 404 Not Found")),
    }
}

/// `PUT /connector-plugins/{AirbyteSource}/config/spec`: the SPEC of the source that `airbyte.command`
/// (with `airbyte.command.timeout.ms`) names, run on a blocking thread; the console builds its fields
/// for `airbyte.config` from it.
#[cfg(feature = "airbyte")]
async fn airbyte_spec(state: &ApiState, plugin: &str, body: Map<String, Json>) -> Result {
    use crate::connectors::{airbyte, ConnectorPlugin};
    let class = state
        .herder
        .plugins()
        .connector(plugin)
        .map(|p| p.class())
        .map_err(|_| Reply::error(404, format!("Unknown plugin {plugin}.")))?;
    if class != airbyte::AirbyteSource.class() {
        return Err(Reply::error(
            400,
            format!("{class} has no SPEC: only Airbyte sources describe their config."),
        ));
    }
    let props: crate::connectors::Props = super::connectors::config_map(body)?
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
    let answer = tokio::task::spawn_blocking(move || airbyte::spec(&props))
        .await
        .map_err(|e| Reply::error(500, format!("The SPEC stopped: {e}")))?;
    match answer {
        Ok(spec) => Ok(Reply::json(200, &spec)),
        Err(e) => Err(Reply::error(400, format!("The source's SPEC failed: {e}"))),
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
