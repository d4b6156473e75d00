//! `airbyte.config` checked against the `connectionSpecification` a source's SPEC gives: the JSON
//! Schema keywords Airbyte specs use (`type`, `required`, `properties`, `enum`, `const`, `minimum`,
//! `maximum`, `items`, `oneOf`/`anyOf`, `pattern`). Other keywords are not checked; the source's CHECK
//! has the last word.

use serde_json::Value as Json;

/// Every way `config` breaks `schema`, each naming its place (`$.count`).
pub fn check(schema: &Json, config: &Json) -> Vec<String> {
    let mut errors = Vec::new();
    walk(schema, config, "$", &mut errors);
    errors
}

fn type_matches(t: &str, v: &Json) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.as_i64().is_some() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn walk(schema: &Json, v: &Json, at: &str, errors: &mut Vec<String>) {
    let types: Vec<&str> = match &schema["type"] {
        Json::String(t) => vec![t.as_str()],
        Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.iter().any(|t| type_matches(t, v)) {
        errors.push(format!("{at}: {v} is not of type {}", types.join(" or ")));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(v) {
            errors.push(format!(
                "{at}: {v} is not one of {}",
                Json::Array(allowed.clone())
            ));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != v {
            errors.push(format!("{at}: {v} is not {c}"));
        }
    }
    if let (Some(n), Some(min)) = (v.as_f64(), schema["minimum"].as_f64()) {
        if n < min {
            errors.push(format!("{at}: {v} is less than the minimum of {min}"));
        }
    }
    if let (Some(n), Some(max)) = (v.as_f64(), schema["maximum"].as_f64()) {
        if n > max {
            errors.push(format!("{at}: {v} is greater than the maximum of {max}"));
        }
    }
    if let (Some(s), Some(p)) = (v.as_str(), schema["pattern"].as_str()) {
        if regex::Regex::new(p).is_ok_and(|re| !re.is_match(s)) {
            errors.push(format!("{at}: {v} does not match {p}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for name in schema["required"].as_array().into_iter().flatten() {
            if let Some(name) = name.as_str() {
                if !obj.contains_key(name) {
                    errors.push(format!("{at}: the required property {name} is missing"));
                }
            }
        }
        if let Some(props) = schema["properties"].as_object() {
            for (name, sub) in props {
                if let Some(value) = obj.get(name) {
                    walk(sub, value, &format!("{at}.{name}"), errors);
                }
            }
        }
    }
    if let (Some(items), Some(list)) = (schema.get("items"), v.as_array()) {
        for (i, item) in list.iter().enumerate() {
            walk(items, item, &format!("{at}[{i}]"), errors);
        }
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(options) = schema[keyword].as_array() {
            let fits = options.iter().any(|o| {
                let mut e = Vec::new();
                walk(o, v, at, &mut e);
                e.is_empty()
            });
            if !fits {
                errors.push(format!("{at}: {v} matches none of the {keyword} options"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_each_broken_rule_with_its_place() {
        let schema = json!({"type": "object", "required": ["url", "format"], "properties": {
            "url": {"type": "string"},
            "count": {"type": "integer", "minimum": 1},
            "format": {"type": "string", "enum": ["csv", "jsonl"]},
            "provider": {"type": "object", "oneOf": [
                {"properties": {"storage": {"const": "local"}}, "required": ["storage"]},
                {"properties": {"storage": {"const": "HTTPS"}}, "required": ["storage"]}
            ]}
        }});
        assert!(check(&schema, &json!({"url": "/x", "format": "csv"})).is_empty());
        let errors = check(
            &schema,
            &json!({"format": "xml", "count": 0, "provider": {"storage": "ftp"}}),
        );
        assert_eq!(
            errors,
            [
                "$: the required property url is missing",
                "$.count: 0 is less than the minimum of 1",
                "$.format: \"xml\" is not one of [\"csv\",\"jsonl\"]",
                "$.provider: {\"storage\":\"ftp\"} matches none of the oneOf options"
            ]
        );
        assert_eq!(
            check(&schema, &json!([1])),
            ["$: [1] is not of type object"]
        );
    }
}
