//! Names as Confluent's `ProtobufData` makes them: `scrub.invalid.names` turns a name that is not a valid
//! Protobuf identifier into one (its URL-encoded form, every character other than a letter, digit or
//! `_` then `_`, and an `x` in front when it would start with a digit or `_`), and the Connect parameters
//! Confluent reads and writes for enums, oneofs, field numbers and integer kinds.

/// The Connect parameter naming the Protobuf enum a `STRING` (or `INT32`) came from; each symbol's
/// number is under `<this>.<SYMBOL>`.
pub const ENUM_PARAMETER: &str = "io.confluent.connect.protobuf.Enum";
/// The Connect name of a `oneof`'s struct: `<this>.<oneof name>`.
pub const UNION_NAME: &str = "io.confluent.connect.protobuf.Union";
/// The Connect parameter holding a field's number.
pub const TAG_PARAMETER: &str = "io.confluent.connect.protobuf.Tag";
/// The Connect parameter naming an integer field's Protobuf type when not `int32`/`int64`.
pub const TYPE_PARAMETER: &str = "io.confluent.connect.protobuf.Type";
/// The Connect parameter marking a oneof member read from a wrapper type (`wrapper.for.nullables`).
pub const WRAPPER_PARAMETER: &str = "io.confluent.connect.protobuf.Wrapper";
/// The name given to a struct or map that has none: `ConnectDefault1`, `ConnectDefault2`, …
pub const DEFAULT_NAME: &str = "ConnectDefault";

fn valid_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Confluent's scrubbing of one name part: unchanged when already valid (letters, digits and `_`, not
/// starting with a digit or `_`).
pub fn scrub(name: &str) -> String {
    let Some(first) = name.chars().next() else {
        return String::new();
    };
    if name.chars().all(valid_char) && !first.is_ascii_digit() && first != '_' {
        return name.to_string();
    }
    // Java's URLEncoder (UTF-8): `.`, `-`, `*`, `_` and alphanumerics kept, space `+`, else `%XX`.
    let mut encoded = String::with_capacity(name.len() * 3);
    for b in name.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                encoded.push(char::from(b));
            }
            b' ' => encoded.push('+'),
            _ => encoded.push_str(&format!("%{b:02X}")),
        }
    }
    if encoded.starts_with(|c: char| c.is_ascii_digit() || c == '_') {
        encoded.insert(0, 'x');
    }
    encoded
        .chars()
        .map(|c| if valid_char(c) { c } else { '_' })
        .collect()
}

/// A name scrubbed when `on`, else as it is.
pub fn scrub_if(on: bool, name: &str) -> String {
    if on {
        scrub(name)
    } else {
        name.to_string()
    }
}

/// Whether a Connect struct schema name is Confluent's oneof struct.
pub fn is_union(name: Option<&str>) -> bool {
    name.is_some_and(|n| n.starts_with(UNION_NAME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_scrubbed_as_confluent_scrubs_them() {
        assert_eq!(scrub("valid_Name1"), "valid_Name1");
        assert_eq!(scrub("a-b"), "a_b");
        assert_eq!(scrub("a b"), "a_b");
        assert_eq!(scrub("1abc"), "x1abc");
        assert_eq!(scrub("_x"), "x_x");
        assert_eq!(scrub("é"), "_C3_A9");
        assert_eq!(scrub("a$b"), "a_24b");
        assert_eq!(scrub(""), "");
        assert_eq!(scrub_if(false, "a-b"), "a-b");
    }
}
