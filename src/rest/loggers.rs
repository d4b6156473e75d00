//! `/admin/loggers`: runtime log levels (KIP-495, KIP-976).

use serde::Deserialize;
use serde_json::{json, Map, Value as Json};
use warp::http::Method;

use super::{only, parse_body, Reply, Request, Result};
use crate::logging::{self, LoggerLevel};

fn level_json(l: &LoggerLevel) -> Json {
    json!({"level": l.level, "last_modified": l.last_modified})
}

#[derive(Deserialize)]
struct LevelBody {
    level: Option<String>,
}

pub(super) async fn route(req: &Request<'_>, segs: &[&str]) -> Result {
    match segs {
        ["loggers"] => {
            only(req.method, &[Method::GET])?;
            let all: Map<String, Json> = logging::all()
                .iter()
                .map(|(k, v)| (k.clone(), level_json(v)))
                .collect();
            Ok(Reply::json(200, &all))
        }
        ["loggers", name] => {
            only(req.method, &[Method::GET, Method::PUT])?;
            if *req.method == Method::GET {
                return match logging::get(name) {
                    Some(l) => Ok(Reply::json(200, &level_json(&l))),
                    None => Err(Reply::error(404, format!("Logger {name} not found."))),
                };
            }
            let body: LevelBody = parse_body(&req.body)?;
            let Some(level) = body.level else {
                return Err(Reply::error(
                    400,
                    "Desired 'level' parameter was not specified in request.",
                ));
            };
            let scope = req
                .query
                .iter()
                .find(|(k, _)| k == "scope")
                .map(|(_, v)| v.to_ascii_lowercase());
            let Some(changed) = logging::set(name, &level, crate::model::now_ms()) else {
                return Err(Reply::error(404, format!("invalid log level '{level}'.")));
            };
            if scope.as_deref() == Some("cluster") {
                Ok(Reply::empty(204))
            } else {
                Ok(Reply::json(200, &changed))
            }
        }
        _ => Err(Reply::error(404, "HTTP 404 Not Found")),
    }
}
