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
            // Kafka compares the two names as text (a suffix match after cutting `Connector`), not
            // through the plugin aliases: `/connector-plugins/Sink/...` accepts any sink class.
            if let Some(Some(class)) = config.get(crate::config::keys::CONNECTOR_CLASS) {
                let given = class.trim();
                let given = given.strip_suffix("Connector").unwrap_or(given);
                let wanted = plugin.strip_suffix("Connector").unwrap_or(plugin);
                if !given.ends_with(wanted) {
                    return Err(Reply::error(
                        400,
                        format!(
                            "Included connector type {class} does not match request type {plugin}"
                        ),
                    ));
                }
            }
            Ok(Reply::json(200, &h.validate(&config)?))
        }
        _ => Err(Reply::error(404, "HTTP 404 Not Found")),
    }
}
