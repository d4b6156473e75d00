//! Connector files given on the command line, read the way `connect-standalone` reads them (KIP-980):
//! a JSON object of strings (the flat config), a JSON `POST /connectors` body (`name`, `config`,
//! `initial_state`, and liteconnect's `offsets`), or a Java properties file.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value as Json};

use crate::config::properties::parse_properties;
use crate::herder::OffsetEntry;
use crate::herder::StartupConnector;
use crate::model::TargetState;

fn missing_name(path: &str) -> String {
    format!("Connector configuration at '{path}' is missing the mandatory 'name' configuration")
}

/// Reads and parses one connector file.
///
/// # Errors
/// A message naming the file and what is wrong with it.
pub fn read(path: &Path) -> Result<StartupConnector, String> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Cannot read connector file '{shown}': {e}"))?;
    parse(&shown, &text)
}

/// Parses a connector file's text; `path` is only used in messages.
///
/// # Errors
/// A message naming the file and what is wrong with it.
pub fn parse(path: &str, text: &str) -> Result<StartupConnector, String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let value: Json = serde_json::from_str(text).map_err(|e| {
            format!(
                "Connector file '{path}' is not valid JSON: {e} (line {}, column {})",
                e.line(),
                e.column()
            )
        })?;
        let Json::Object(object) = value else {
            return Err(format!("Connector file '{path}' must hold a JSON object"));
        };
        return if object.values().all(Json::is_string) {
            from_flat(
                path,
                object
                    .into_iter()
                    .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
                    .collect(),
            )
        } else {
            from_request(path, object)
        };
    }
    let props = parse_properties(text).map_err(|e| format!("Connector file '{path}': {e}"))?;
    from_flat(path, props.into_iter().collect())
}

fn from_flat(path: &str, config: BTreeMap<String, String>) -> Result<StartupConnector, String> {
    let name = config
        .get(crate::config::keys::NAME)
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| missing_name(path))?;
    Ok(StartupConnector {
        source: path.to_string(),
        name,
        config,
        initial_state: None,
        offsets: None,
    })
}

fn from_request(path: &str, mut object: Map<String, Json>) -> Result<StartupConnector, String> {
    let name = match object.remove("name") {
        Some(Json::String(n)) if !n.trim().is_empty() => n.trim().to_string(),
        Some(Json::String(_)) | Some(Json::Null) | None => return Err(missing_name(path)),
        Some(other) => {
            return Err(format!(
                "Connector file '{path}': 'name' must be a string, not {other}"
            ))
        }
    };
    let config = match object.remove("config") {
        Some(Json::Object(c)) => c,
        Some(_) => return Err(format!("Connector file '{path}': 'config' must be a JSON object of strings")),
        None => return Err(format!("Connector file '{path}': a JSON file with non-string values must have a 'config' object (the body of POST /connectors)")),
    };
    let mut flat = BTreeMap::new();
    for (k, v) in config {
        let v = match v {
            Json::String(s) => s,
            Json::Number(n) => n.to_string(),
            Json::Bool(b) => b.to_string(),
            other => {
                return Err(format!(
                    "Connector file '{path}': config key '{k}' must be a string, not {other}"
                ))
            }
        };
        flat.insert(k, v);
    }
    match flat.get(crate::config::keys::NAME) {
        Some(n) if *n != name => {
            return Err(format!(
                "Connector name configuration in 'config' doesn't match the one specified in 'name' at '{path}'"
            ))
        }
        Some(_) => {}
        None => {
            flat.insert(crate::config::keys::NAME.into(), name.clone());
        }
    }
    let initial_state = match object.remove("initial_state") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(TargetState::from_initial_state(&s).ok_or_else(|| {
            format!("Connector file '{path}': invalid initial_state '{s}'; valid values are RUNNING, PAUSED and STOPPED (case-insensitive)")
        })?),
        Some(other) => {
            return Err(format!(
                "Connector file '{path}': invalid initial_state {other}; valid values are RUNNING, PAUSED and STOPPED"
            ))
        }
    };
    let offsets = match object.remove("offsets") {
        None | Some(Json::Null) => None,
        Some(v) => Some(
            serde_json::from_value::<Vec<OffsetEntry>>(v)
                .map_err(|e| format!("Connector file '{path}': invalid 'offsets': {e}"))?,
        ),
    };
    // Other top-level fields are ignored, as Kafka ignores them.
    Ok(StartupConnector {
        source: path.to_string(),
        name,
        config: flat,
        initial_state,
        offsets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_json() {
        let c = parse(
            "a.json",
            r#"{"name":"x","connector.class":"FileStreamSource","topic":"t"}"#,
        )
        .unwrap();
        assert_eq!(c.name, "x");
        assert_eq!(c.config.get("topic").map(String::as_str), Some("t"));
        assert_eq!(c.initial_state, None);
    }

    #[test]
    fn request_json_with_state_and_unknown_fields() {
        let c = parse(
            "b.json",
            r#"{"name":"y","config":{"connector.class":"FileStreamSource","tasks.max":1},"initial_state":"paused","extra":[1]}"#,
        )
        .unwrap();
        assert_eq!(c.initial_state, Some(TargetState::Paused));
        assert_eq!(c.config.get("name").map(String::as_str), Some("y"));
        assert_eq!(c.config.get("tasks.max").map(String::as_str), Some("1"));
    }

    #[test]
    fn errors_name_the_file() {
        assert_eq!(
            parse("c.json", r#"{"connector.class":"X"}"#).unwrap_err(),
            "Connector configuration at 'c.json' is missing the mandatory 'name' configuration"
        );
        let e = parse("d.json", r#"{"name":"a","config":{"name":"b"}}"#).unwrap_err();
        assert!(e.contains("doesn't match") && e.contains("d.json"), "{e}");
        let e = parse(
            "e.json",
            r#"{"name":"a","config":{},"initial_state":"FOO"}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("RUNNING, PAUSED and STOPPED") && e.contains("e.json"),
            "{e}"
        );
        let e = parse("f.json", "{\"name\": \n ").unwrap_err();
        assert!(e.contains("line") && e.contains("f.json"), "{e}");
        assert!(parse("g.properties", "connector.class=X\n")
            .unwrap_err()
            .contains("'g.properties'"));
    }

    #[test]
    fn properties() {
        let c = parse(
            "h.properties",
            "# comment\nname = local-file-source\nconnector.class: FileStreamSource\n",
        )
        .unwrap();
        assert_eq!(c.name, "local-file-source");
        assert_eq!(
            c.config.get("connector.class").map(String::as_str),
            Some("FileStreamSource")
        );
    }
}
