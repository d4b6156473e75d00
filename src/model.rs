//! The small vocabulary shared by storage, herder, worker and REST: target states and status states.

use std::fmt;

/// What the user asked a connector to be doing. Kafka calls these STARTED, PAUSED and STOPPED internally,
/// and RUNNING, PAUSED and STOPPED in KIP-980's `initial_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetState {
    /// Connector and tasks run.
    Started,
    /// Connector and tasks exist but do no work.
    Paused,
    /// The connector is shut down and has no tasks (KIP-875).
    Stopped,
}

impl TargetState {
    /// The legacy `state` column: STOPPED is written as PAUSED so older readers still see "not running".
    pub fn legacy_column(self) -> &'static str {
        match self {
            TargetState::Started => "STARTED",
            TargetState::Paused | TargetState::Stopped => "PAUSED",
        }
    }

    /// The `state.v2` column.
    pub fn v2_column(self) -> &'static str {
        match self {
            TargetState::Started => "STARTED",
            TargetState::Paused => "PAUSED",
            TargetState::Stopped => "STOPPED",
        }
    }

    /// Reads a stored pair of columns the way Kafka reads its target-state records: `state.v2` when present
    /// and known, otherwise the legacy `state`.
    pub fn from_columns(state: Option<&str>, state_v2: Option<&str>) -> Option<TargetState> {
        state_v2
            .and_then(Self::from_internal)
            .or_else(|| state.and_then(Self::from_internal))
    }

    fn from_internal(s: &str) -> Option<TargetState> {
        match s {
            "STARTED" => Some(TargetState::Started),
            "PAUSED" => Some(TargetState::Paused),
            "STOPPED" => Some(TargetState::Stopped),
            _ => None,
        }
    }

    /// Parses KIP-980's `initial_state` (case-insensitive RUNNING, PAUSED, STOPPED).
    pub fn from_initial_state(s: &str) -> Option<TargetState> {
        match s.to_ascii_uppercase().as_str() {
            "RUNNING" => Some(TargetState::Started),
            "PAUSED" => Some(TargetState::Paused),
            "STOPPED" => Some(TargetState::Stopped),
            _ => None,
        }
    }
}

/// The state a connector or task reports in its status (`AbstractStatus.State`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Not (yet) running anywhere.
    Unassigned,
    /// Running.
    Running,
    /// Paused by the user.
    Paused,
    /// Failed; the status carries a trace.
    Failed,
    /// A restart was requested and has not completed.
    Restarting,
    /// Stopped by the user (connectors only).
    Stopped,
}

impl State {
    /// Kafka's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Unassigned => "UNASSIGNED",
            State::Running => "RUNNING",
            State::Paused => "PAUSED",
            State::Failed => "FAILED",
            State::Restarting => "RESTARTING",
            State::Stopped => "STOPPED",
        }
    }

    /// Parses Kafka's wire name.
    pub fn parse(s: &str) -> Option<State> {
        Some(match s {
            "UNASSIGNED" => State::Unassigned,
            "RUNNING" => State::Running,
            "PAUSED" => State::Paused,
            "FAILED" => State::Failed,
            "RESTARTING" => State::Restarting,
            "STOPPED" => State::Stopped,
            _ => return None,
        })
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Whether a connector produces records into Kafka or consumes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectorType {
    /// A source connector.
    Source,
    /// A sink connector.
    Sink,
}

impl ConnectorType {
    /// The lower-case name used on the wire (`"source"`, `"sink"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorType::Source => "source",
            ConnectorType::Sink => "sink",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_follow_kafka() {
        let cases = [
            (TargetState::Started, "STARTED", "STARTED"),
            (TargetState::Paused, "PAUSED", "PAUSED"),
            (TargetState::Stopped, "PAUSED", "STOPPED"),
        ];
        for (t, legacy, v2) in cases {
            assert_eq!(t.legacy_column(), legacy);
            assert_eq!(t.v2_column(), v2);
            assert_eq!(TargetState::from_columns(Some(legacy), Some(v2)), Some(t));
        }
    }

    #[test]
    fn legacy_only_and_unknown_values() {
        assert_eq!(
            TargetState::from_columns(Some("PAUSED"), None),
            Some(TargetState::Paused)
        );
        assert_eq!(
            TargetState::from_columns(Some("STARTED"), None),
            Some(TargetState::Started)
        );
        assert_eq!(
            TargetState::from_columns(Some("PAUSED"), Some("BOGUS")),
            Some(TargetState::Paused)
        );
        assert_eq!(TargetState::from_columns(Some("BOGUS"), None), None);
    }

    #[test]
    fn initial_state_is_case_insensitive() {
        assert_eq!(
            TargetState::from_initial_state("running"),
            Some(TargetState::Started)
        );
        assert_eq!(
            TargetState::from_initial_state("Paused"),
            Some(TargetState::Paused)
        );
        assert_eq!(
            TargetState::from_initial_state("STOPPED"),
            Some(TargetState::Stopped)
        );
        assert_eq!(TargetState::from_initial_state("STARTED"), None);
    }
}
