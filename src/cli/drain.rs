//! Letting a sink deliver what its topics hold before it leaves the source worker.
//!
//! Over the public REST API a sink's topics' end offsets are not visible, so "caught up" is read from what
//! is: once no running source connector on that worker writes to the sink's topics (KIP-558's active
//! topics say which do), the sink is caught up when its committed offsets stay the same for [`QUIET`] while
//! every task runs. A liteconnect sink commits as soon as it has read to the end of its topics and looks
//! for new records every second, so offsets unchanged for three seconds mean nothing is left to read.

use std::time::Duration;

use regex::Regex;
use serde_json::Value as Json;
use tokio::time::Instant;

use super::endpoint::{Endpoint, RequestError};

/// How long a sink's committed offsets must stay the same for it to count as caught up.
pub const QUIET: Duration = Duration::from_secs(3);

/// A sink that did not catch up.
#[derive(Debug, thiserror::Error)]
pub enum DrainError {
    /// A request failed.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The deadline passed first.
    #[error("Sink {name} did not finish delivering what its topics hold on {from} within {} s ({detail}); raise --drain-timeout, or use --sink-offsets copy if the target's topics hold the same records", timeout.as_secs_f64())]
    Timeout {
        name: String,
        from: String,
        timeout: Duration,
        detail: String,
    },
}

/// The topics a sink reads: `topics` (a list) or `topics.regex`.
pub(crate) struct Subscription {
    topics: Vec<String>,
    regex: Option<Regex>,
}

impl Subscription {
    pub(crate) fn of(config: &Json) -> Subscription {
        let topics = config["topics"]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        let regex = config["topics.regex"]
            .as_str()
            .filter(|r| !r.trim().is_empty())
            .and_then(|r| Regex::new(&format!("^(?:{r})$")).ok());
        Subscription { topics, regex }
    }

    pub(crate) fn matches(&self, topic: &str) -> bool {
        self.topics.iter().any(|t| t == topic)
            || self.regex.as_ref().is_some_and(|r| r.is_match(topic))
    }
}

/// The running source connectors on `from` that have written to a topic the sink `name` reads.
///
/// # Errors
/// A request failed.
pub async fn feeders(from: &Endpoint, name: &str) -> Result<Vec<String>, RequestError> {
    let Some(config) = from.config(name).await? else {
        return Ok(Vec::new());
    };
    let subscription = Subscription::of(&config);
    let mut found = Vec::new();
    for other in from.connectors().await? {
        if other == name {
            continue;
        }
        let Some(status) = from.status(&other).await? else {
            continue;
        };
        if status.kind != "source" || status.state != "RUNNING" {
            continue;
        }
        let topics = from.active_topics(&other).await?.unwrap_or_default();
        if topics.iter().any(|t| subscription.matches(t)) {
            found.push(other);
        }
    }
    Ok(found)
}

/// Sorts offset entries so two answers can be compared whatever their order.
pub(super) fn normalised(offsets: &Json) -> Vec<String> {
    let mut v: Vec<String> = offsets
        .as_array()
        .map(|a| a.iter().map(crate::storage::canonical_key).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Waits, up to `timeout`, until the sink `name` on `from` is caught up (see the module's doc).
///
/// # Errors
/// A request failed, or the deadline passed first.
pub async fn drain(
    from: &Endpoint,
    name: &str,
    timeout: Duration,
    report: &mut dyn FnMut(&str),
) -> Result<(), DrainError> {
    let deadline = Instant::now() + timeout;
    let mut last: Option<Vec<String>> = None;
    let mut since = Instant::now();
    loop {
        let status = from.status(name).await?;
        let running = status.as_ref().is_some_and(|s| {
            s.state == "RUNNING" && !s.tasks.is_empty() && s.tasks.iter().all(|t| t == "RUNNING")
        });
        let offsets = normalised(&from.offsets(name).await?);
        let now = Instant::now();
        if !running || last.as_ref() != Some(&offsets) {
            last = Some(offsets);
            since = now;
        } else if now.duration_since(since) >= QUIET {
            report(&format!(
                "{name}: delivered everything its topics hold on {} ({} committed offset(s), unchanged for {} s)",
                from.url(),
                last.as_ref().map_or(0, Vec::len),
                QUIET.as_secs()
            ));
            return Ok(());
        }
        if now >= deadline {
            let detail = match status {
                Some(s) if !running => format!("it is {} with tasks {:?}", s.state, s.tasks),
                None => "it is gone".to_string(),
                Some(_) => "its committed offsets still move".to_string(),
            };
            return Err(DrainError::Timeout {
                name: name.to_string(),
                from: from.url().to_string(),
                timeout,
                detail,
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subscriptions_match_listed_topics_or_the_whole_regex() {
        let s = Subscription::of(&json!({"topics": "a, b"}));
        assert!(s.matches("a") && s.matches("b") && !s.matches("ab"));
        let r = Subscription::of(&json!({"topics.regex": "orders-.*"}));
        assert!(r.matches("orders-eu") && !r.matches("x-orders-eu"));
    }
}
