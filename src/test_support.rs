//! Helpers shared by the unit tests.

use std::collections::BTreeMap;

/// A string map (props, worker originals) from pairs.
pub(crate) fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
