//! Payload validation against a JSON Schema (`json.fail.invalid.schema`): the keywords the registry's
//! parser knows — `type`, `enum`, `const`, the numeric bounds (`minimum`, `maximum`, the exclusive
//! ones in their draft-4 and later forms, `multipleOf`), the string ones (`minLength`, `maxLength`,
//! `pattern`), the array ones (`items` as one schema or a tuple, `prefixItems`, `additionalItems`,
//! `minItems`, `maxItems`, `uniqueItems`), the object ones (`properties`, `patternProperties`,
//! `additionalProperties`, `required`, `minProperties`, `maxProperties`), `oneOf`, `anyOf`, `allOf`,
//! `not`, `if`/`then`/`else`, `contains` (`minContains`, `maxContains`), `propertyNames`,
//! `dependencies`, `dependentRequired`, `dependentSchemas`, boolean schemas, and `$ref` within the
//! document or to a referenced schema. `format` is not checked. Patterns are Rust `regex` expressions
//! (no look-around or back-references: a schema using them fails naming the pattern). Each error names
//! the path in the document (`#/readings/2/value`) and the keyword that failed.

use std::collections::HashMap;
use std::sync::Mutex;

use regex::Regex;
use serde_json::Value as Json;

use super::schema::{types, JsonSchema, Node};

/// How deep schemas may nest (through `$ref`s) while one document is validated.
const MAX_DEPTH: usize = 128;

/// How many compiled `pattern`s a [`Patterns`] cache keeps before it is emptied.
const MAX_PATTERNS: usize = 256;

/// Compiled `pattern` and `patternProperties` regular expressions, kept between documents.
#[derive(Debug, Default)]
pub struct Patterns(Mutex<HashMap<String, Regex>>);

impl Patterns {
    /// Whether `text` matches `pattern` (anywhere in it, as JSON Schema says).
    fn matches(&self, pattern: &str, text: &str) -> Result<bool, String> {
        let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(re) = cache.get(pattern) {
            return Ok(re.is_match(text));
        }
        let re = Regex::new(pattern).map_err(|e| {
            format!("the schema's pattern {pattern:?} is not a regular expression: {e}")
        })?;
        let found = re.is_match(text);
        if cache.len() >= MAX_PATTERNS {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re);
        Ok(found)
    }
}

/// Validates `doc` against `schema`.
///
/// # Errors
/// The first violation, naming the path in the document and the keyword (`#/qty: 12 is above the
/// maximum 10`).
pub fn validate(schema: &JsonSchema, doc: &Json, patterns: &Patterns) -> Result<(), String> {
    Validator {
        schema,
        patterns,
        depth: 0,
    }
    .check(schema.node(), doc, "#")
}

struct Validator<'a> {
    schema: &'a JsonSchema,
    patterns: &'a Patterns,
    depth: usize,
}

/// The JSON type of a value, `integer` for numbers without a fraction.
fn type_of(doc: &Json) -> &'static str {
    match doc {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if is_integer(n) => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Whether the value is of the named type (`number` includes integers).
fn has_type(doc: &Json, name: &str) -> bool {
    let actual = type_of(doc);
    actual == name || (name == "number" && actual == "integer")
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

fn at(path: &str, key: &str) -> String {
    let escaped = key.replace('~', "~0").replace('/', "~1");
    format!("{path}/{escaped}")
}

impl<'a> Validator<'a> {
    fn check(&mut self, node: Node<'a>, doc: &Json, path: &str) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "{path}: the schema nests too deep (a recursive $ref?)"
            ));
        }
        let out = self.keywords(node, doc, path);
        self.depth -= 1;
        out
    }

    fn keywords(&mut self, node: Node<'a>, doc: &Json, path: &str) -> Result<(), String> {
        let map = match node.json {
            Json::Bool(true) => return Ok(()),
            Json::Bool(false) => return Err(format!("{path}: the schema allows no value here")),
            Json::Object(map) => map,
            _ => return Ok(()),
        };
        if map.contains_key("$ref") {
            let target = self
                .schema
                .resolve(node)
                .map_err(|e| format!("{path}: {e}"))?;
            self.check(target, doc, path)?;
        }
        self.generic(node, doc, path)?;
        self.combined(node, doc, path)?;
        match doc {
            Json::Number(n) => self.number(node, n, path),
            Json::String(s) => self.string(node, s, path),
            Json::Array(items) => self.array(node, items, path),
            Json::Object(props) => self.object(node, props, path),
            _ => Ok(()),
        }
    }

    /// `type`, `enum` and `const`.
    fn generic(&self, node: Node<'a>, doc: &Json, path: &str) -> Result<(), String> {
        if let Some(names) = types(node.json) {
            if !names.iter().any(|t| has_type(doc, t)) {
                return Err(format!(
                    "{path}: expected type {}, found {}",
                    names.join(" or "),
                    type_of(doc)
                ));
            }
        }
        if let Some(Json::Array(allowed)) = node.get("enum") {
            if !allowed.iter().any(|a| equal(a, doc)) {
                return Err(format!("{path}: {doc} is not one of the enum's values"));
            }
        }
        if let Some(constant) = node.get("const") {
            if !equal(constant, doc) {
                return Err(format!("{path}: {doc} is not the const {constant}"));
            }
        }
        Ok(())
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`.
    fn combined(&mut self, node: Node<'a>, doc: &Json, path: &str) -> Result<(), String> {
        let branches = |key: &str| -> Vec<Node<'a>> {
            node.get(key)
                .and_then(Json::as_array)
                .map(|a| a.iter().map(|b| node.child(b)).collect())
                .unwrap_or_default()
        };
        for (i, part) in branches("allOf").into_iter().enumerate() {
            self.check(part, doc, path)
                .map_err(|e| format!("{e} (allOf subschema {i})"))?;
        }
        let any = branches("anyOf");
        if !any.is_empty() {
            let mut reasons = Vec::new();
            for part in any {
                match self.check(part, doc, path) {
                    Ok(()) => {
                        reasons.clear();
                        break;
                    }
                    Err(e) => reasons.push(e),
                }
            }
            if !reasons.is_empty() {
                return Err(format!(
                    "{path}: no anyOf subschema matches ({})",
                    reasons.join("; ")
                ));
            }
        }
        let one = branches("oneOf");
        if !one.is_empty() {
            let mut matched = Vec::new();
            let mut reasons = Vec::new();
            for (i, part) in one.into_iter().enumerate() {
                match self.check(part, doc, path) {
                    Ok(()) => matched.push(i),
                    Err(e) => reasons.push(e),
                }
            }
            match matched.len() {
                1 => {}
                0 => {
                    return Err(format!(
                        "{path}: no oneOf subschema matches ({})",
                        reasons.join("; ")
                    ))
                }
                _ => {
                    return Err(format!(
                        "{path}: several oneOf subschemas match ({matched:?}), exactly one must"
                    ))
                }
            }
        }
        if let Some(not) = node.get("not") {
            if self.check(node.child(not), doc, path).is_ok() {
                return Err(format!("{path}: the value matches the schema under `not`"));
            }
        }
        self.conditional(node, doc, path)
    }

    /// `if`, `then` and `else`.
    fn conditional(&mut self, node: Node<'a>, doc: &Json, path: &str) -> Result<(), String> {
        let Some(condition) = node.get("if") else {
            return Ok(());
        };
        let (branch, name) = if self.check(node.child(condition), doc, path).is_ok() {
            (node.get("then"), "then")
        } else {
            (node.get("else"), "else")
        };
        match branch {
            Some(b) => self
                .check(node.child(b), doc, path)
                .map_err(|e| format!("{e} (under `{name}`)")),
            None => Ok(()),
        }
    }

    fn number(&self, node: Node<'a>, n: &serde_json::Number, path: &str) -> Result<(), String> {
        let Some(x) = n.as_f64() else { return Ok(()) };
        let bound = |key: &str| node.get(key).and_then(Json::as_f64);
        let flag = |key: &str| node.get(key).and_then(Json::as_bool).unwrap_or(false);
        if let Some(max) = bound("maximum") {
            if x > max || (flag("exclusiveMaximum") && x >= max) {
                return Err(format!("{path}: {n} is above the maximum {max}"));
            }
        }
        if let Some(min) = bound("minimum") {
            if x < min || (flag("exclusiveMinimum") && x <= min) {
                return Err(format!("{path}: {n} is below the minimum {min}"));
            }
        }
        if let Some(max) = bound("exclusiveMaximum") {
            if x >= max {
                return Err(format!(
                    "{path}: {n} is not below the exclusiveMaximum {max}"
                ));
            }
        }
        if let Some(min) = bound("exclusiveMinimum") {
            if x <= min {
                return Err(format!(
                    "{path}: {n} is not above the exclusiveMinimum {min}"
                ));
            }
        }
        if let Some(step) = bound("multipleOf") {
            let q = x / step;
            if !q.is_finite() || (q - q.round()).abs() > 1e-9 * q.abs().max(1.0) {
                return Err(format!("{path}: {n} is not a multiple of {step}"));
            }
        }
        Ok(())
    }

    fn string(&self, node: Node<'a>, s: &str, path: &str) -> Result<(), String> {
        let count = |key: &str| node.get(key).and_then(Json::as_u64);
        let len = s.chars().count() as u64;
        if let Some(max) = count("maxLength") {
            if len > max {
                return Err(format!(
                    "{path}: the string's length {len} is above maxLength {max}"
                ));
            }
        }
        if let Some(min) = count("minLength") {
            if len < min {
                return Err(format!(
                    "{path}: the string's length {len} is below minLength {min}"
                ));
            }
        }
        if let Some(pattern) = node.get("pattern").and_then(Json::as_str) {
            if !self
                .patterns
                .matches(pattern, s)
                .map_err(|e| format!("{path}: {e}"))?
            {
                return Err(format!(
                    "{path}: {s:?} does not match the pattern {pattern:?}"
                ));
            }
        }
        Ok(())
    }

    fn array(&mut self, node: Node<'a>, items: &[Json], path: &str) -> Result<(), String> {
        let count = |key: &str| node.get(key).and_then(Json::as_u64);
        let len = items.len() as u64;
        if let Some(max) = count("maxItems") {
            if len > max {
                return Err(format!("{path}: {len} items are above maxItems {max}"));
            }
        }
        if let Some(min) = count("minItems") {
            if len < min {
                return Err(format!("{path}: {len} items are below minItems {min}"));
            }
        }
        if node.get("uniqueItems").and_then(Json::as_bool) == Some(true) {
            for (i, a) in items.iter().enumerate() {
                if let Some(j) = items[..i].iter().position(|b| equal(a, b)) {
                    return Err(format!("{path}: items {j} and {i} are equal (uniqueItems)"));
                }
            }
        }
        // A tuple: `prefixItems` (2020-12) or `items` as an array, then `items` / `additionalItems`.
        let (tuple, rest) = match (node.get("prefixItems"), node.get("items")) {
            (Some(Json::Array(t)), rest) => (t.as_slice(), rest),
            (_, Some(Json::Array(t))) => (t.as_slice(), node.get("additionalItems")),
            (_, rest) => (&[][..], rest),
        };
        for (i, item) in items.iter().enumerate() {
            let schema = match tuple.get(i) {
                Some(s) => s,
                None => match rest {
                    Some(s) => s,
                    None => continue,
                },
            };
            self.check(node.child(schema), item, &at(path, &i.to_string()))?;
        }
        if let Some(contains) = node.get("contains") {
            let found = items
                .iter()
                .filter(|item| self.check(node.child(contains), item, path).is_ok())
                .count() as u64;
            let min = count("minContains").unwrap_or(1);
            if found < min {
                return Err(format!(
                    "{path}: {found} items match `contains`, at least {min} must"
                ));
            }
            if let Some(max) = count("maxContains") {
                if found > max {
                    return Err(format!(
                        "{path}: {found} items match `contains`, at most {max} may"
                    ));
                }
            }
        }
        Ok(())
    }

    fn object(
        &mut self,
        node: Node<'a>,
        props: &serde_json::Map<String, Json>,
        path: &str,
    ) -> Result<(), String> {
        let count = |key: &str| node.get(key).and_then(Json::as_u64);
        let len = props.len() as u64;
        if let Some(max) = count("maxProperties") {
            if len > max {
                return Err(format!(
                    "{path}: {len} properties are above maxProperties {max}"
                ));
            }
        }
        if let Some(min) = count("minProperties") {
            if len < min {
                return Err(format!(
                    "{path}: {len} properties are below minProperties {min}"
                ));
            }
        }
        if let Some(Json::Array(required)) = node.get("required") {
            if let Some(missing) = required
                .iter()
                .filter_map(Json::as_str)
                .find(|r| !props.contains_key(*r))
            {
                return Err(format!(
                    "{path}: the required property {missing} is missing"
                ));
            }
        }
        self.dependencies(node, props, path)?;
        let declared = node.get("properties").and_then(Json::as_object);
        let patterned = node.get("patternProperties").and_then(Json::as_object);
        let additional = node.get("additionalProperties");
        for (name, value) in props {
            let here = at(path, name);
            if let Some(names) = node.get("propertyNames") {
                self.check(node.child(names), &Json::String(name.clone()), &here)
                    .map_err(|e| format!("{e} (propertyNames)"))?;
            }
            let mut covered = false;
            if let Some(schema) = declared.and_then(|d| d.get(name)) {
                covered = true;
                self.check(node.child(schema), value, &here)?;
            }
            for (pattern, schema) in patterned.into_iter().flatten() {
                if self
                    .patterns
                    .matches(pattern, name)
                    .map_err(|e| format!("{path}: {e}"))?
                {
                    covered = true;
                    self.check(node.child(schema), value, &here)?;
                }
            }
            match additional {
                Some(Json::Bool(false)) if !covered => {
                    return Err(format!(
                        "{path}: the property {name} is not allowed (additionalProperties is false)"
                    ))
                }
                Some(schema) if !covered => self.check(node.child(schema), value, &here)?,
                _ => {}
            }
        }
        Ok(())
    }
}

impl<'a> Validator<'a> {
    /// `dependencies` (draft 4 to 7), `dependentRequired` and `dependentSchemas`: what a present
    /// property requires of its object.
    fn dependencies(
        &mut self,
        node: Node<'a>,
        props: &serde_json::Map<String, Json>,
        path: &str,
    ) -> Result<(), String> {
        let object = Json::Object(props.clone());
        for key in ["dependencies", "dependentRequired", "dependentSchemas"] {
            let Some(map) = node.get(key).and_then(Json::as_object) else {
                continue;
            };
            for (name, needs) in map.iter().filter(|(n, _)| props.contains_key(*n)) {
                match needs {
                    Json::Array(names) => {
                        if let Some(missing) = names
                            .iter()
                            .filter_map(Json::as_str)
                            .find(|n| !props.contains_key(*n))
                        {
                            return Err(format!(
                                "{path}: the property {name} requires {missing}, which is missing ({key})"
                            ));
                        }
                    }
                    schema => self
                        .check(node.child(schema), &object, path)
                        .map_err(|e| format!("{e} ({key} of {name})"))?,
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn check(schema: &str, doc: Json) -> Result<(), String> {
        let s = JsonSchema::parse(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        validate(&s, &doc, &Patterns::default())
    }

    #[test]
    fn valid_documents_pass() {
        let order = r##"{"type":"object","required":["id"],"additionalProperties":false,
            "properties":{"id":{"type":"integer","minimum":1},
              "tags":{"type":"array","items":{"type":"string","maxLength":3},"uniqueItems":true},
              "kind":{"enum":["a","b"]},"v":{"const":2},
              "code":{"type":"string","pattern":"^[A-Z]{2}$"},
              "who":{"$ref":"#/definitions/who"},
              "n":{"oneOf":[{"type":"null"},{"type":"number","multipleOf":0.5}]}},
            "definitions":{"who":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}"##;
        for doc in [
            json!({"id": 1}),
            json!({"id": 2.0, "tags": ["a", "bc"], "kind": "b", "v": 2.0, "code": "GB",
                   "who": 7, "n": 1.5}),
            json!({"id": 3, "who": "x", "n": null}),
        ] {
            check(order, doc.clone()).unwrap_or_else(|e| panic!("{doc}: {e}"));
        }
        check("true", json!([1, {"a": null}])).unwrap();
        check(r#"{"type":["string","null"]}"#, json!(null)).unwrap();
        check(r#"{"exclusiveMaximum":3}"#, json!(2.5)).unwrap();
        check(
            r#"{"items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}"#,
            json!(["a", 1]),
        )
        .unwrap();
        check(
            r#"{"patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false}"#,
            json!({"x-a": 1}),
        )
        .unwrap();
    }

    #[test]
    fn invalid_documents_fail_naming_the_path_and_keyword() {
        let order = r##"{"type":"object","required":["id"],"additionalProperties":false,
            "properties":{"id":{"type":"integer","minimum":1,"maximum":10},
              "lines":{"type":"array","maxItems":2,"items":{"$ref":"#/definitions/line"}},
              "kind":{"enum":["a","b"]},"v":{"const":2},"name":{"type":"string","minLength":2},
              "code":{"type":"string","pattern":"^[A-Z]{2}$"},
              "u":{"type":"array","uniqueItems":true},
              "one":{"oneOf":[{"type":"integer"},{"type":"number"}]},
              "any":{"anyOf":[{"type":"string"},{"type":"boolean"}]},
              "all":{"allOf":[{"minimum":0},{"maximum":1}]},
              "not":{"not":{"type":"string"}}},
            "definitions":{"line":{"type":"object","properties":{"qty":{"type":"integer"}}}}}"##;
        for (doc, why) in [
            (json!([]), "#: expected type object, found array"),
            (json!({}), "#: the required property id is missing"),
            (
                json!({"id": 1.5}),
                "#/id: expected type integer, found number",
            ),
            (json!({"id": 11}), "#/id: 11 is above the maximum 10"),
            (json!({"id": 0}), "#/id: 0 is below the minimum 1"),
            (
                json!({"id": 1, "extra": 1}),
                "the property extra is not allowed",
            ),
            (
                json!({"id": 1, "lines": [{"qty": 1}, {"qty": "x"}]}),
                "#/lines/1/qty: expected type integer, found string",
            ),
            (
                json!({"id": 1, "lines": [{}, {}, {}]}),
                "#/lines: 3 items are above maxItems 2",
            ),
            (
                json!({"id": 1, "kind": "c"}),
                "#/kind: \"c\" is not one of the enum's values",
            ),
            (json!({"id": 1, "v": 3}), "#/v: 3 is not the const 2"),
            (
                json!({"id": 1, "name": "é"}),
                "#/name: the string's length 1 is below minLength 2",
            ),
            (json!({"id": 1, "code": "gb"}), "does not match the pattern"),
            (
                json!({"id": 1, "u": [1, 1.0]}),
                "#/u: items 0 and 1 are equal",
            ),
            (
                json!({"id": 1, "one": 3}),
                "#/one: several oneOf subschemas match",
            ),
            (
                json!({"id": 1, "one": "x"}),
                "#/one: no oneOf subschema matches",
            ),
            (
                json!({"id": 1, "any": 1}),
                "#/any: no anyOf subschema matches",
            ),
            (
                json!({"id": 1, "all": 2}),
                "above the maximum 1 (allOf subschema 1)",
            ),
            (
                json!({"id": 1, "not": "s"}),
                "#/not: the value matches the schema under `not`",
            ),
        ] {
            let e = check(order, doc.clone()).unwrap_err();
            assert!(e.contains(why), "{doc}: {e}");
        }
        assert!(check("false", json!(1))
            .unwrap_err()
            .contains("allows no value"));
        let e = check(r#"{"exclusiveMinimum":1}"#, json!(1)).unwrap_err();
        assert!(e.contains("not above the exclusiveMinimum"), "{e}");
        let e = check(
            r#"{"minimum":1,"exclusiveMinimum":true,"$schema":"http://json-schema.org/draft-04/schema#"}"#,
            json!(1),
        )
        .unwrap_err();
        assert!(e.contains("below the minimum"), "{e}");
        let e = check(r#"{"multipleOf":0.5}"#, json!(1.2)).unwrap_err();
        assert!(e.contains("not a multiple of 0.5"), "{e}");
        let e = check(
            r#"{"prefixItems":[{"type":"string"}],"items":false}"#,
            json!(["a", 2]),
        )
        .unwrap_err();
        assert!(e.contains("#/1: the schema allows no value"), "{e}");
        let e = check(
            r#"{"if":{"minimum":5},"then":{"multipleOf":5},"else":{"maximum":0}}"#,
            json!(7),
        )
        .unwrap_err();
        assert!(e.contains("not a multiple of 5 (under `then`)"), "{e}");
        check(
            r#"{"if":{"minimum":5},"then":{"multipleOf":5},"else":{"maximum":0}}"#,
            json!(-1),
        )
        .unwrap();
        let e = check(r#"{"contains":{"type":"string"}}"#, json!([1, 2])).unwrap_err();
        assert!(e.contains("0 items match `contains`"), "{e}");
        let e = check(r#"{"propertyNames":{"maxLength":2}}"#, json!({"abc": 1})).unwrap_err();
        assert!(
            e.contains("#/abc: the string's length 3 is above maxLength 2"),
            "{e}"
        );
        let e = check(r#"{"dependencies":{"a":["b"]}}"#, json!({"a": 1})).unwrap_err();
        assert!(e.contains("the property a requires b"), "{e}");
        let e = check(
            r#"{"dependentSchemas":{"a":{"required":["c"]}}}"#,
            json!({"a": 1}),
        )
        .unwrap_err();
        assert!(e.contains("the required property c is missing"), "{e}");
        let e = check(r#"{"pattern":"("}"#, json!("a")).unwrap_err();
        assert!(e.contains("not a regular expression"), "{e}");
    }

    #[test]
    fn refs_to_referenced_schemas_are_followed() {
        let other: Arc<Json> = Arc::new(json!({
            "type": "object", "properties": {"city": {"type": "string"}},
            "additionalProperties": false
        }));
        let s = JsonSchema::parse_with(
            r#"{"type":"object","properties":{"home":{"$ref":"address.json"}}}"#,
            &[("address.json".into(), other)],
        )
        .unwrap();
        let p = Patterns::default();
        validate(&s, &json!({"home": {"city": "Oslo"}}), &p).unwrap();
        let e = validate(&s, &json!({"home": {"city": 5}}), &p).unwrap_err();
        assert!(e.contains("#/home/city: expected type string"), "{e}");
    }
}
