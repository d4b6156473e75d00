//! The streams a task reads: chosen from DISCOVER's catalog, each with its sync mode, topic, schemas and
//! source partition, and the configured catalog READ is given.

use serde_json::{json, Map, Value as Json};

use super::schema;
use crate::data::SchemaRef;

/// The source partition of GLOBAL state (every stream's records commit it).
pub fn global_partition() -> Map<String, Json> {
    partition_of("airbyte_state", json!("GLOBAL"))
}

/// The source partition of LEGACY state.
pub fn legacy_partition() -> Map<String, Json> {
    partition_of("airbyte_state", json!("LEGACY"))
}

fn partition_of(key: &str, value: Json) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert(key.into(), value);
    m
}

/// A stream's source partition: `{"namespace": …, "stream": …}` (namespace null when it has none).
pub fn stream_partition(stream: &str, namespace: Option<&str>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert(
        "namespace".into(),
        namespace.map_or(Json::Null, |n| json!(n)),
    );
    m.insert("stream".into(), json!(stream));
    m
}

/// A stream as the task reads it.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: Option<String>,
    /// Whether it is read incrementally (else full refresh).
    pub incremental: bool,
    /// The topic its records go to.
    pub topic: String,
    /// The value schema (`None`: schemaless maps).
    pub schema: Option<SchemaRef>,
    /// The key schema, when it has a primary key of top-level fields.
    pub key_schema: Option<SchemaRef>,
    /// The primary key's fields.
    pub primary_key: Vec<String>,
    /// Its source partition.
    pub partition: Map<String, Json>,
    /// Its entry in the configured catalog.
    pub configured: Json,
}

/// How streams are read: a default mode and modes per stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyncModes {
    default: Option<String>,
    per_stream: Vec<(String, String)>,
}

const MODES: [&str; 3] = ["auto", "incremental", "full_refresh"];

impl SyncModes {
    /// Parses `airbyte.sync.mode`: a comma list of `mode` (the default) and `stream=mode` items, each
    /// mode `auto`, `incremental` or `full_refresh`.
    pub fn parse(text: &str) -> Result<SyncModes, String> {
        let mut modes = SyncModes::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (stream, mode) = match item.split_once('=') {
                Some((s, m)) => (Some(s.trim()), m.trim()),
                None => (None, item),
            };
            if !MODES.contains(&mode) {
                return Err(format!(
                    "{mode} is not a sync mode: use auto, incremental or full_refresh"
                ));
            }
            match stream {
                Some(s) => modes.per_stream.push((s.to_string(), mode.to_string())),
                None => modes.default = Some(mode.to_string()),
            }
        }
        Ok(modes)
    }

    fn mode(&self, stream: &str) -> &str {
        self.per_stream
            .iter()
            .find(|(s, _)| s == stream)
            .map(|(_, m)| m.as_str())
            .or(self.default.as_deref())
            .unwrap_or("auto")
    }
}

/// What chooses and names the streams.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// The streams to read (all when empty).
    pub streams: Vec<String>,
    /// Their sync modes.
    pub modes: SyncModes,
    /// `topic.prefix`.
    pub prefix: String,
    /// `airbyte.topic.template`.
    pub template: String,
}

/// A topic name Kafka accepts: characters other than letters, digits, `.`, `_` and `-` become `_`, at
/// most 249 characters.
pub fn kafka_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .take(249)
        .collect();
    match safe.as_str() {
        "" | "." | ".." => format!("_{safe}"),
        _ => safe,
    }
}

impl Selection {
    /// The topic of a stream: the template with `${prefix}`, `${namespace}` and `${stream}` filled
    /// (`${namespace}.` vanishes for a stream without a namespace), made Kafka-safe.
    pub fn topic(&self, stream: &str, namespace: Option<&str>) -> String {
        let mut t = self.template.clone();
        if namespace.is_none() {
            t = t.replace("${namespace}.", "");
        }
        let t = t
            .replace("${prefix}", &self.prefix)
            .replace("${namespace}", namespace.unwrap_or_default())
            .replace("${stream}", stream);
        kafka_safe(&t)
    }

    /// The streams to read from DISCOVER's `catalog`. A listed stream the catalog lacks, or
    /// `incremental` asked of a stream that cannot, is an error.
    pub fn streams(&self, catalog: &Json) -> Result<Vec<Stream>, String> {
        let discovered = catalog["streams"].as_array().cloned().unwrap_or_default();
        for wanted in &self.streams {
            if !discovered.iter().any(|s| s["name"] == wanted.as_str()) {
                let names: Vec<String> = discovered
                    .iter()
                    .filter_map(|s| s["name"].as_str().map(str::to_string))
                    .collect();
                return Err(format!(
                    "The source has no stream {wanted}; its streams: {}",
                    names.join(", ")
                ));
            }
        }
        discovered
            .into_iter()
            .filter(|s| {
                self.streams.is_empty() || self.streams.iter().any(|w| s["name"] == w.as_str())
            })
            .map(|s| self.stream(s))
            .collect()
    }

    fn stream(&self, discovered: Json) -> Result<Stream, String> {
        let name = discovered["name"].as_str().unwrap_or_default().to_string();
        let namespace = discovered["namespace"].as_str().map(str::to_string);
        let supports = |m: &str| {
            discovered["supported_sync_modes"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == m))
        };
        let incremental = match self.modes.mode(&name) {
            "incremental" if !supports("incremental") => {
                return Err(format!("The stream {name} cannot be read incrementally"))
            }
            "incremental" => true,
            "full_refresh" => false,
            _ => supports("incremental"),
        };
        let primary_key: Vec<String> = discovered["source_defined_primary_key"]
            .as_array()
            .map(|paths| {
                paths
                    .iter()
                    .filter_map(|p| match p.as_array().map(Vec::as_slice) {
                        Some([one]) => one.as_str().map(str::to_string),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let value_schema = schema::stream_schema(&discovered["json_schema"]);
        let key_schema = value_schema
            .as_ref()
            .and_then(|v| schema::key_schema(v, &primary_key));
        let mut configured = json!({
            "stream": discovered,
            "sync_mode": if incremental { "incremental" } else { "full_refresh" },
            "destination_sync_mode": "append",
        });
        if incremental {
            configured["cursor_field"] = configured["stream"]["default_cursor_field"].clone();
        }
        if let Some(pk) = configured["stream"]
            .get("source_defined_primary_key")
            .cloned()
        {
            configured["primary_key"] = pk;
        }
        Ok(Stream {
            topic: self.topic(&name, namespace.as_deref()),
            partition: stream_partition(&name, namespace.as_deref()),
            name,
            namespace,
            incremental,
            schema: value_schema,
            key_schema: key_schema.filter(|_| !primary_key.is_empty()),
            primary_key,
            configured,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Json {
        json!({"streams": [
            {"name": "users", "namespace": "crm", "json_schema": {"type": "object", "properties": {"id": {"type": "integer"}}},
             "supported_sync_modes": ["full_refresh", "incremental"], "default_cursor_field": ["updated_at"],
             "source_defined_primary_key": [["id"]]},
            {"name": "files", "json_schema": {"type": "object"}, "supported_sync_modes": ["full_refresh"]}
        ]})
    }

    fn selection(modes: &str) -> Selection {
        Selection {
            streams: vec![],
            modes: SyncModes::parse(modes).unwrap(),
            prefix: "ab-".into(),
            template: "${prefix}${namespace}.${stream}".into(),
        }
    }

    #[test]
    fn streams_get_their_modes_topics_and_keys() {
        let streams = selection("").streams(&catalog()).unwrap();
        assert_eq!(streams.len(), 2);
        let (users, files) = (&streams[0], &streams[1]);
        assert!(users.incremental && !files.incremental);
        assert_eq!(users.topic, "ab-crm.users");
        assert_eq!(files.topic, "ab-files");
        assert_eq!(users.primary_key, ["id"]);
        assert!(users.key_schema.is_some() && files.schema.is_none());
        assert_eq!(users.configured["cursor_field"], json!(["updated_at"]));
        assert_eq!(users.configured["sync_mode"], "incremental");
        assert_eq!(
            Json::Object(users.partition.clone()),
            json!({"namespace": "crm", "stream": "users"})
        );
        let streams = selection("users=full_refresh").streams(&catalog()).unwrap();
        assert!(!streams[0].incremental);
    }

    #[test]
    fn wrong_choices_are_refused() {
        let e = selection("files=incremental")
            .streams(&catalog())
            .unwrap_err();
        assert!(e.contains("files cannot be read incrementally"), "{e}");
        let mut s = selection("");
        s.streams = vec!["nope".into()];
        let e = s.streams(&catalog()).unwrap_err();
        assert!(
            e.contains("no stream nope; its streams: users, files"),
            "{e}"
        );
        assert!(SyncModes::parse("sometimes").is_err());
        assert_eq!(kafka_safe("a b/c"), "a_b_c");
    }
}
