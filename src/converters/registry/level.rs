//! The registry's compatibility levels, shared by every schema type.

/// A registry compatibility level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// No check.
    None,
    /// The new schema reads data written with the latest.
    Backward,
    /// ... with every earlier one.
    BackwardTransitive,
    /// The latest schema reads data written with the new one.
    Forward,
    /// ... every earlier one does.
    ForwardTransitive,
    /// Both backward and forward.
    Full,
    /// ... against every earlier one.
    FullTransitive,
}

impl Level {
    /// Every level's name, as the registry's API spells it.
    pub const NAMES: &'static [&'static str] = &[
        "NONE",
        "BACKWARD",
        "BACKWARD_TRANSITIVE",
        "FORWARD",
        "FORWARD_TRANSITIVE",
        "FULL",
        "FULL_TRANSITIVE",
    ];

    /// Reads a level's name (case-insensitive).
    pub fn parse(name: &str) -> Option<Level> {
        Some(match name.to_ascii_uppercase().as_str() {
            "NONE" => Level::None,
            "BACKWARD" => Level::Backward,
            "BACKWARD_TRANSITIVE" => Level::BackwardTransitive,
            "FORWARD" => Level::Forward,
            "FORWARD_TRANSITIVE" => Level::ForwardTransitive,
            "FULL" => Level::Full,
            "FULL_TRANSITIVE" => Level::FullTransitive,
            _ => return None,
        })
    }

    /// Whether the level checks against every earlier version, not only the latest.
    pub fn transitive(self) -> bool {
        matches!(
            self,
            Level::BackwardTransitive | Level::ForwardTransitive | Level::FullTransitive
        )
    }

    /// Whether the new schema must read data written with the earlier ones.
    pub fn backward(self) -> bool {
        matches!(
            self,
            Level::Backward | Level::BackwardTransitive | Level::Full | Level::FullTransitive
        )
    }

    /// Whether the earlier schemas must read data written with the new one.
    pub fn forward(self) -> bool {
        matches!(
            self,
            Level::Forward | Level::ForwardTransitive | Level::Full | Level::FullTransitive
        )
    }

    /// The same direction against one version alone (a check against a given version).
    pub fn single(self) -> Level {
        match self {
            Level::BackwardTransitive => Level::Backward,
            Level::ForwardTransitive => Level::Forward,
            Level::FullTransitive => Level::Full,
            level => level,
        }
    }

    /// The versions a new schema is checked against (`previous` oldest first), newest first: all of
    /// them at a transitive level, else the latest alone.
    pub fn against<T>(self, previous: &[T]) -> impl Iterator<Item = &T> {
        let from = if self.transitive() {
            0
        } else {
            previous.len().saturating_sub(1)
        };
        previous[from..].iter().rev()
    }

    /// Runs `can_read(reader, writer)` in the level's directions against the versions it reaches: the
    /// messages of every incompatibility, empty when compatible. The same for every schema type.
    pub fn check<T>(
        self,
        new: &T,
        previous: &[T],
        can_read: impl Fn(&T, &T) -> Vec<String>,
    ) -> Vec<String> {
        let mut messages = Vec::new();
        for old in self.against(previous) {
            if self.backward() {
                messages.extend(can_read(new, old).into_iter().map(|m| {
                    format!(
                        "{m} (the new schema cannot read data written with an earlier one: BACKWARD)"
                    )
                }));
            }
            if self.forward() {
                messages.extend(can_read(old, new).into_iter().map(|m| {
                    format!(
                        "{m} (an earlier schema cannot read data written with the new one: FORWARD)"
                    )
                }));
            }
        }
        messages
    }
}
