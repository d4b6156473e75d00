//! KIP-891's plugin versions: Maven's version ordering (as Kafka compares plugin versions) and version
//! ranges (`connector.plugin.version`): `[1.0,2.0)`, `(,1.0]`, `[1.2]`, several separated by commas, or a
//! plain version, which Kafka makes a hard requirement (`1.2` is `[1.2]`); `latest` or nothing means the
//! newest installed.

use std::cmp::Ordering;

/// One part of a version: numbers compare as numbers, and before words.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Number(u64),
    Word(String),
}

fn parts(version: &str) -> Vec<Part> {
    let mut out: Vec<Part> = version
        .split(['.', '-', '_'])
        .map(|p| match p.parse::<u64>() {
            Ok(n) => Part::Number(n),
            Err(_) => Part::Word(p.to_ascii_lowercase()),
        })
        .collect();
    // Trailing zeros do not count: 1.0 is 1.0.0.
    while matches!(out.last(), Some(Part::Number(0))) && out.len() > 1 {
        out.pop();
    }
    out
}

/// Compares two versions: numerically part by part (`1.10` after `1.9`), `1.0` equal to `1.0.0`.
pub fn compare(a: &str, b: &str) -> Ordering {
    parts(a.trim()).cmp(&parts(b.trim()))
}

/// Which of `available` (oldest first) the range `wanted`, given as the value of `key`, picks: the newest
/// in the range; the newest of all without one (or with `latest`). `class` names the plugin in Kafka's
/// messages.
///
/// # Errors
/// Kafka's message for a range that matches none, or for one it cannot read.
pub fn pick_index(
    class: &str,
    key: &str,
    available: &[&str],
    wanted: Option<&str>,
) -> Result<usize, String> {
    let newest = available
        .len()
        .checked_sub(1)
        .ok_or("no version is installed")?;
    let given = wanted.unwrap_or_default();
    let Some(range) = VersionRange::parse(given)
        .map_err(|e| format!("Invalid value {given} for configuration {key}: {e}"))?
    else {
        return Ok(newest);
    };
    (0..available.len())
        .rev()
        .find(|i| range.contains(available[*i]))
        .ok_or_else(|| {
            format!(
                "Plugin {class} not found that matches the version range {range}, available versions: [{}]",
                available.join(", ")
            )
        })
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Bound {
    version: String,
    inclusive: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Restriction {
    lower: Option<Bound>,
    upper: Option<Bound>,
}

impl Restriction {
    fn contains(&self, v: &str) -> bool {
        let above = self
            .lower
            .as_ref()
            .is_none_or(|b| match compare(v, &b.version) {
                Ordering::Greater => true,
                Ordering::Equal => b.inclusive,
                Ordering::Less => false,
            });
        let below = self
            .upper
            .as_ref()
            .is_none_or(|b| match compare(v, &b.version) {
                Ordering::Less => true,
                Ordering::Equal => b.inclusive,
                Ordering::Greater => false,
            });
        above && below
    }
}

/// A version range, as written (Kafka shows it so in its messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    text: String,
    restrictions: Vec<Restriction>,
}

impl std::fmt::Display for VersionRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn restriction(inner: &str, open: char, close: char) -> Result<Restriction, String> {
    let bound = |v: &str, inclusive: bool| {
        let v = v.trim();
        (!v.is_empty()).then(|| Bound {
            version: v.to_owned(),
            inclusive,
        })
    };
    match inner.split_once(',') {
        None if open == '[' && close == ']' && !inner.trim().is_empty() => Ok(Restriction {
            lower: bound(inner, true),
            upper: bound(inner, true),
        }),
        None => Err(format!(
            "Single version must be surrounded by []: {open}{inner}{close}"
        )),
        Some((lo, hi)) => {
            let r = Restriction {
                lower: bound(lo, open == '['),
                upper: bound(hi, close == ']'),
            };
            if let (Some(l), Some(u)) = (&r.lower, &r.upper) {
                if compare(&l.version, &u.version) == Ordering::Greater {
                    return Err(format!(
                        "Range defies version ordering: {open}{inner}{close}"
                    ));
                }
            }
            Ok(r)
        }
    }
}

impl VersionRange {
    /// Kafka's `connectorVersionRequirement`: `None` for no requirement (`latest` or blank).
    ///
    /// # Errors
    /// Maven's message for a range it cannot read.
    pub fn parse(spec: &str) -> Result<Option<VersionRange>, String> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "latest" {
            return Ok(None);
        }
        if !spec.starts_with(['[', '(']) {
            if spec.contains([',', '[', ']', '(', ')']) {
                return Err(format!("Invalid version specification: {spec}"));
            }
            return Self::parse(&format!("[{spec}]"));
        }
        let mut restrictions = Vec::new();
        let mut rest = spec;
        while !rest.is_empty() {
            let open = rest.chars().next().unwrap_or('[');
            if !matches!(open, '[' | '(') {
                return Err(format!("Invalid version specification: {spec}"));
            }
            let end = rest
                .find([']', ')'])
                .ok_or_else(|| format!("Unbounded range: {spec}"))?;
            let close = rest[end..].chars().next().unwrap_or(']');
            restrictions.push(restriction(&rest[1..end], open, close)?);
            rest = rest[end + 1..].trim_start_matches(',').trim();
        }
        Ok(Some(VersionRange {
            text: spec.to_owned(),
            restrictions,
        }))
    }

    /// Whether `version` is in the range.
    pub fn contains(&self, version: &str) -> bool {
        self.restrictions.iter().any(|r| r.contains(version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_picks_the_newest_it_holds_and_names_the_key_and_the_versions_when_it_cannot() {
        let available = ["1.0.0", "1.5.0", "2.0.0"];
        let pick = |w| pick_index("C", "plugin.version", &available, w);
        assert_eq!(pick(None), Ok(2));
        assert_eq!(pick(Some("latest")), Ok(2));
        assert_eq!(pick(Some("[1.0,2.0)")), Ok(1));
        assert_eq!(pick(Some("1.0.0")), Ok(0));
        assert_eq!(
            pick(Some("[3.0,)")).unwrap_err(),
            "Plugin C not found that matches the version range [3.0,), available versions: [1.0.0, 1.5.0, 2.0.0]"
        );
        assert!(pick(Some("[1.0"))
            .unwrap_err()
            .starts_with("Invalid value [1.0 for configuration plugin.version: "));
        assert!(pick_index("C", "k", &[], None).is_err());
    }

    #[test]
    fn versions_order_as_maven_orders_them() {
        assert_eq!(compare("1.10.0", "1.9.3"), Ordering::Greater);
        assert_eq!(compare("1.0", "1.0.0"), Ordering::Equal);
        assert_eq!(compare("2.0.0", "10.0"), Ordering::Less);
    }

    #[test]
    fn ranges_plain_versions_and_latest() {
        let r = VersionRange::parse("[1.0,2.0)").unwrap().unwrap();
        assert!(r.contains("1.0.0") && r.contains("1.9") && !r.contains("2.0.0"));
        let r = VersionRange::parse("(,1.0],[1.2,)").unwrap().unwrap();
        assert!(r.contains("0.5") && r.contains("1.0") && !r.contains("1.1") && r.contains("3"));
        let plain = VersionRange::parse("1.0.0").unwrap().unwrap();
        assert!(plain.contains("1.0") && !plain.contains("1.0.1"));
        assert_eq!(plain.to_string(), "[1.0.0]");
        assert_eq!(VersionRange::parse("latest").unwrap(), None);
        assert!(VersionRange::parse("[2.0,1.0]").is_err());
        assert!(VersionRange::parse("[1.0").is_err());
        assert!(VersionRange::parse("(1.0)").is_err());
    }
}
