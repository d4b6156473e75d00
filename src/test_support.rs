//! Helpers shared by the unit tests.

use std::collections::BTreeMap;

/// A string map (props, worker originals) from pairs.
pub(crate) fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Stores a RUNNING connector `name` with `config` and no task configs, offsets or initial status.
pub(crate) async fn create_running(
    store: &crate::storage::Store,
    name: &str,
    config: BTreeMap<String, String>,
) {
    store
        .create_connector(
            name.into(),
            config,
            crate::model::TargetState::Started,
            vec![],
            vec![],
            vec![],
        )
        .await
        .expect("create the connector");
}

/// Calls `check` every 20 ms until it returns `Some`, and returns that; panics after `deadline`.
pub(crate) fn wait_until<T>(
    deadline: std::time::Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let end = std::time::Instant::now() + deadline;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            std::time::Instant::now() < end,
            "the condition did not hold within {deadline:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
