//! `--expect`: the printed records against an expected file of the same shape, record by record. A field
//! left out of an expected record (at any depth of an object) is not compared, so an expected file can
//! hold only what a test cares about; lists are compared element by element and must be as long.

use serde_json::Value as Json;

/// The differences, one readable line each: `record 2: value.payload.name: expected "a", got "b"`.
pub fn differences(expected: &[Json], actual: &[Json]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        compare(&format!("record {i}"), "", e, a, &mut out);
    }
    if expected.len() != actual.len() {
        out.push(format!(
            "expected {} record(s), got {}{}",
            expected.len(),
            actual.len(),
            if actual.len() > expected.len() {
                format!("; the first not expected: {}", actual[expected.len()])
            } else {
                format!("; the first missing: {}", expected[actual.len()])
            }
        ));
    }
    out
}

fn compare(record: &str, path: &str, expected: &Json, actual: &Json, out: &mut Vec<String>) {
    let at = |path: &str| {
        if path.is_empty() {
            "(the record)".to_string()
        } else {
            path.to_string()
        }
    };
    match (expected, actual) {
        (Json::Object(e), Json::Object(a)) => {
            for (k, ev) in e {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match a.get(k) {
                    Some(av) => compare(record, &sub, ev, av, out),
                    None if ev.is_null() => {}
                    None => out.push(format!("{record}: {sub}: expected {ev}, got nothing")),
                }
            }
        }
        (Json::Array(e), Json::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                compare(record, &format!("{path}[{i}]"), ev, av, out);
            }
        }
        (Json::Number(e), Json::Number(a)) if e.as_f64() == a.as_f64() => {}
        (e, a) if e == a => {}
        (e, a) => out.push(format!("{record}: {}: expected {e}, got {a}", at(path))),
    }
}

/// Reads an expected file (JSON lines; blank lines skipped).
///
/// # Errors
/// The first line that is not JSON, with its number.
pub fn parse(text: &str) -> Result<Vec<Json>, (usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| (i + 1, e.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_what_is_expected_is_compared_and_differences_name_the_path() {
        let actual = vec![
            json!({"index": 0, "result": "delivered", "topic": "a", "value": {"schema": {"type": "string"}, "payload": "x"}}),
            json!({"index": 1, "result": "dropped", "by": "f"}),
        ];
        assert!(differences(
            &[json!({"topic": "a"}), json!({"result": "dropped"})],
            &actual
        )
        .is_empty());
        let found = differences(
            &[
                json!({"value": {"payload": "y"}}),
                json!({"result": "delivered", "by": "f"}),
            ],
            &actual,
        );
        assert_eq!(
            found,
            vec![
                "record 0: value.payload: expected \"y\", got \"x\"",
                "record 1: result: expected \"delivered\", got \"dropped\""
            ]
        );
        let short = differences(&[json!({}), json!({}), json!({"topic": "c"})], &actual);
        assert_eq!(short.len(), 1);
        assert!(
            short[0].starts_with("expected 3 record(s), got 2; the first missing"),
            "{short:?}"
        );
        let lists = differences(&[json!({"headers": [1, 2]})], &[json!({"headers": [1]})]);
        assert_eq!(lists, vec!["record 0: headers: expected [1,2], got [1]"]);
        assert_eq!(
            differences(&[json!({"n": 1.0})], &[json!({"n": 1})]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_expected_file_that_is_not_json_names_the_line() {
        assert_eq!(parse("{}\n\n{\"a\":1}\n").unwrap().len(), 2);
        assert_eq!(parse("{}\nnope").unwrap_err().0, 2);
    }
}
