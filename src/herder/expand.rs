//! `GET /connectors?expand=…`: every connector's status and info, read from the in-memory mirror and
//! the status board under one lock each and serialized straight into the answer's text, with no copy of
//! a config and no intermediate JSON tree; the text is kept and served again until something changes.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde::Serialize;

use super::{Entry, Herder};
use crate::connectors::Props;
use crate::plugins::ConnectorInfoType;
use crate::status::ConnectorStatusView;

/// What `expand` asks for, in the order the answer shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// `status`: the connector's ConnectorStateInfo.
    Status,
    /// `info`: the connector's ConnectorInfo.
    Info,
}

/// `{"connector", "task"}` borrowed from the mirror.
#[derive(Serialize)]
struct TaskIdRef<'a> {
    connector: &'a str,
    task: u32,
}

/// Kafka's ConnectorInfo borrowed from the mirror; the same fields in the same order as
/// [`super::ConnectorInfo`].
#[derive(Serialize)]
struct InfoRef<'a> {
    name: &'a str,
    config: &'a Props,
    tasks: Vec<TaskIdRef<'a>>,
    #[serde(rename = "type")]
    connector_type: ConnectorInfoType,
}

/// The last expanded list and what it was built from: the versions of the mirror and of the status
/// board, and the expansions.
#[derive(Debug)]
pub(super) struct ListCache {
    key: (u64, u64, Vec<Expansion>),
    body: String,
}

impl Herder {
    /// The expanded list as JSON text: `{name: {expansion: …}}` for every connector that has a status
    /// (when the status is asked for), names sorted, each entry's expansions in the order given. The text
    /// is built once and kept until a connector or a status changes.
    pub fn expanded_list(&self, wanted: &[Expansion]) -> String {
        let connectors = self.connectors.read().expect("connectors lock");
        let mirror = self.connectors_version.load(Ordering::Relaxed);
        self.statuses.with_views(|board, view| {
            let key = (mirror, board, wanted.to_vec());
            let mut cache = self.list_cache.lock().expect("list cache lock");
            if let Some(c) = cache.as_ref().filter(|c| c.key == key) {
                return c.body.clone();
            }
            let body = self.render_list(&connectors, wanted, view);
            *cache = Some(ListCache {
                key,
                body: body.clone(),
            });
            body
        })
    }

    fn render_list(
        &self,
        connectors: &BTreeMap<String, Entry>,
        wanted: &[Expansion],
        view: &dyn Fn(&str, &str) -> Option<ConnectorStatusView>,
    ) -> String {
        // About 500 bytes per connector with both expansions: one allocation for most lists.
        let mut out = Vec::with_capacity(64 + connectors.len() * 256 * wanted.len());
        out.push(b'{');
        let mut first = true;
        for (name, e) in connectors {
            let ty = self.connector_type(&e.config);
            let status = if wanted.contains(&Expansion::Status) {
                match view(name, ty.as_str()) {
                    Some(v) => Some(Self::with_version(v, e)),
                    None => continue,
                }
            } else {
                None
            };
            if !first {
                out.push(b',');
            }
            first = false;
            write_json(&mut out, name);
            out.extend_from_slice(b":{");
            for (i, x) in wanted.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                match x {
                    Expansion::Status => {
                        out.extend_from_slice(b"\"status\":");
                        write_json(&mut out, &status);
                    }
                    Expansion::Info => {
                        out.extend_from_slice(b"\"info\":");
                        write_json(&mut out, &info_ref(name, e, ty));
                    }
                }
            }
            out.push(b'}');
        }
        out.push(b'}');
        // serde_json writes only valid UTF-8.
        String::from_utf8(out).unwrap_or_default()
    }
}

fn info_ref<'a>(name: &'a str, e: &'a Entry, ty: ConnectorInfoType) -> InfoRef<'a> {
    InfoRef {
        name,
        config: &e.config,
        tasks: (0..e.tasks.len() as u32)
            .map(|task| TaskIdRef {
                connector: name,
                task,
            })
            .collect(),
        connector_type: ty,
    }
}

fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing plain data into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}
