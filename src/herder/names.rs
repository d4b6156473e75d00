//! Which connector names can be created: every name a REST path, `export` and `migrate` can address
//! again afterwards.

use crate::error::ConnectError;

/// Why a connector name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidName {
    /// `.` or `..`: a path segment that HTTP clients and servers resolve away, so no
    /// `/connectors/{name}` path reaches the connector.
    #[error("Invalid value {0} for configuration name: a connector may not be named '.' or '..', which no REST path can address")]
    DotSegment(String),
    /// ISO control characters (U+0000–U+001F, U+007F–U+009F), as Kafka's
    /// `NonEmptyStringWithoutControlChars` refuses them, here also at either end of the name.
    #[error("Invalid value {name} for configuration name: String may not contain control sequences but had the following ASCII chars: {codes}")]
    ControlChars {
        /// The refused name.
        name: String,
        /// The code points found, comma-separated.
        codes: String,
    },
}

impl From<InvalidName> for ConnectError {
    fn from(e: InvalidName) -> Self {
        ConnectError::BadRequest(e.to_string())
    }
}

/// Checks a connector name about to be stored.
///
/// # Errors
/// [`InvalidName`] for `.`, `..`, or a name with an ISO control character anywhere in it.
pub fn validate_connector_name(name: &str) -> Result<(), InvalidName> {
    if name == "." || name == ".." {
        return Err(InvalidName::DotSegment(name.to_string()));
    }
    let codes: Vec<String> = name
        .chars()
        .filter(|c| c.is_control())
        .map(|c| u32::from(c).to_string())
        .collect();
    if codes.is_empty() {
        Ok(())
    } else {
        Err(InvalidName::ControlChars {
            name: name.to_string(),
            codes: codes.join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_and_control_characters_are_refused() {
        for ok in ["a", "...", ".a", "a.", "a/b", "ünï côde", "a b", "%2E"] {
            assert_eq!(validate_connector_name(ok), Ok(()), "{ok:?}");
        }
        assert_eq!(
            validate_connector_name(".."),
            Err(InvalidName::DotSegment("..".into()))
        );
        assert!(matches!(
            validate_connector_name("."),
            Err(InvalidName::DotSegment(_))
        ));
        let e = validate_connector_name("bell\u{7}").unwrap_err();
        assert!(e.to_string().ends_with("following ASCII chars: 7"), "{e}");
        let e = validate_connector_name("\ta\u{85}").unwrap_err();
        assert!(e.to_string().ends_with("chars: 9, 133"), "{e}");
        assert_eq!(
            ConnectError::from(e).status(),
            400,
            "a refused name is a bad request"
        );
    }
}
