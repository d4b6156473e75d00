//! What the Airbyte tasks have done, per connector and stream, for the metrics scrape
//! (`liteconnect_airbyte_*`): records read, the last state commit, the sync in progress, and the last
//! sync's duration and outcome.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// One stream's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamFigures {
    /// RECORDs read since the task started.
    pub records: u64,
    /// When a STATE of the stream was last committed (epoch ms; 0 before the first).
    pub last_state_ms: i64,
}

/// One connector's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyncFigures {
    /// Whether a READ runs.
    pub running: bool,
    /// READs finished (well or not) since the task started.
    pub syncs: u64,
    /// How long the last finished READ took.
    pub last_duration_ms: u64,
    /// Whether the last finished READ ended well (`None` before the first).
    pub last_ok: Option<bool>,
    /// Per stream (`namespace.stream`, or the stream's name without a namespace).
    pub streams: BTreeMap<String, StreamFigures>,
}

fn board() -> &'static Mutex<BTreeMap<String, SyncFigures>> {
    static BOARD: OnceLock<Mutex<BTreeMap<String, SyncFigures>>> = OnceLock::new();
    BOARD.get_or_init(Mutex::default)
}

/// Changes the figures of `connector`.
pub fn update(connector: &str, change: impl FnOnce(&mut SyncFigures)) {
    if let Ok(mut b) = board().lock() {
        change(b.entry(connector.to_string()).or_default());
    }
}

/// Forgets `connector` (its task stopped).
pub fn forget(connector: &str) {
    if let Ok(mut b) = board().lock() {
        b.remove(connector);
    }
}

/// Every connector's figures.
pub fn snapshot() -> Vec<(String, SyncFigures)> {
    board()
        .lock()
        .map(|b| b.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// The name a stream's figures are kept under.
pub fn stream_key(stream: &str, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("{ns}.{stream}"),
        None => stream.to_string(),
    }
}
