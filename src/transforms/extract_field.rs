//! `ExtractField$Key` / `ExtractField$Value`: replaces the key or value with one of its fields,
//! with KIP-821's `field.syntax.version=V2` dotted paths into nested structs and maps.

use super::support::WithSchema;
use crate::connectors::Props;

use super::{
    key, map_get, parse_config, replace_null_with_default, replace_null_with_default_key,
    require_map_or_null, require_struct_or_null, required_string, Entries, Input, Side,
    SideTransformation,
};
use crate::config::def::{ConfigDef, ConfigType, Importance, Validator};
use crate::config::ConfigError;
use crate::data::DataError;
use crate::data::{Field, Schema, SchemaRef, Struct, Value};

const PURPOSE: &str = "field extraction";

/// Kafka's `FieldSyntaxVersion.FIELD_SYNTAX_VERSION_DOC`.
const FIELD_SYNTAX_VERSION_DOC: &str = "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\".";

/// Kafka's `FieldSyntaxVersion.appendConfigTo`: the `field.syntax.version` key.
pub(crate) fn field_syntax_version_key() -> crate::config::def::ConfigKey {
    key(
        "field.syntax.version",
        ConfigType::String,
        super::default("V1"),
        Importance::High,
        FIELD_SYNTAX_VERSION_DOC,
    )
    .validator(Validator::OneOfCaseInsensitive(vec!["V1", "V2"]))
}

/// Kafka's `SingleFieldPath`: one field, or with `V2` a dotted path into nested data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SingleFieldPath {
    steps: Vec<String>,
}

impl SingleFieldPath {
    /// Parses a path. `v2` selects the dotted syntax with backtick quoting.
    ///
    /// # Errors
    /// `Incomplete backtick pair in path: [...]` for an unclosed backtick.
    pub fn new(path: &str, v2: bool) -> Result<SingleFieldPath, ConfigError> {
        if !v2 {
            return Ok(SingleFieldPath {
                steps: vec![path.to_string()],
            });
        }
        let chars: Vec<char> = path.chars().collect();
        let fail = |at: usize| {
            format!(
                "Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at position {at} to escape it"
            )
        };
        let find = |from: usize, c: char| (from..chars.len()).find(|&i| chars[i] == c);
        let text = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
        let mut steps = Vec::new();
        let mut idx = 0usize;
        while idx < chars.len() {
            if chars[idx] != '`' {
                let start = idx;
                match find(idx, '.') {
                    Some(dot) => {
                        steps.push(text(start, dot));
                        idx = dot + 1;
                    }
                    None => {
                        steps.push(text(start, chars.len()));
                        idx = chars.len();
                    }
                }
            } else {
                let backtick_at = idx;
                idx += 1;
                let mut field = String::new();
                let mut start = idx;
                loop {
                    let Some(close) = find(idx, '`') else {
                        return Err(fail(backtick_at).into());
                    };
                    idx = close;
                    let escaped = idx > 0 && chars[idx - 1] == '\\';
                    if idx >= chars.len() - 1 {
                        if escaped {
                            return Err(fail(backtick_at).into());
                        }
                        field.push_str(&text(start, idx));
                        steps.push(field);
                        idx += 1;
                        break;
                    }
                    if chars[idx + 1] != '.' {
                        idx += 1;
                        continue;
                    }
                    if escaped {
                        field.push_str(&text(start, idx - 1));
                        field.push('`');
                        idx += 1;
                        start = idx;
                        continue;
                    }
                    field.push_str(&text(start, idx));
                    steps.push(field);
                    idx += 2;
                    break;
                }
            }
        }
        if path.ends_with('.') {
            steps.push(String::new());
        }
        Ok(SingleFieldPath { steps })
    }

    #[cfg(test)]
    /// The path's steps.
    pub fn steps(&self) -> &[String] {
        &self.steps
    }

    fn split(&self) -> (&[String], &str) {
        match self.steps.split_last() {
            Some((last, init)) => (init, last),
            None => (&[], ""),
        }
    }

    /// The field at the path in a schema, if every step exists.
    pub fn field_from<'a>(&self, schema: &'a Schema) -> Option<&'a Field> {
        let (init, last) = self.split();
        let mut current = schema;
        for step in init {
            current = &current.field(step)?.schema;
        }
        current.field(last)
    }

    /// The value at the path in a struct (`Null` when a step is missing or null).
    ///
    /// # Errors
    /// `Only Struct objects supported for [nested field access], ...` when a step is no struct.
    pub fn value_from_struct(&self, s: &Struct, with_default: bool) -> Result<Value, DataError> {
        let (init, last) = self.split();
        let mut current = s.clone();
        for step in init {
            if current.schema.field(step).is_none() {
                return Ok(Value::Null);
            }
            let sub = current.get(step).cloned().unwrap_or(Value::Null);
            match require_struct_or_null(&sub, "nested field access")? {
                Some(next) => current = next.clone(),
                None => return Ok(Value::Null),
            }
        }
        if current.schema.field(last).is_none() {
            return Ok(Value::Null);
        }
        Ok(super::field_value(&current, last, with_default))
    }

    /// The value at the path in a schemaless map.
    ///
    /// # Errors
    /// `Only Map objects supported in absence of schema for [nested field access], ...`.
    pub fn value_from_map(&self, map: &Entries) -> Result<Value, DataError> {
        let (init, last) = self.split();
        let mut current = map;
        for step in init {
            match require_map_or_null(map_get(current, step), "nested field access")? {
                Some(next) => current = next,
                None => return Ok(Value::Null),
            }
        }
        Ok(map_get(current, last).clone())
    }
}

/// The `ExtractField` transformation.
#[derive(Clone, Debug)]
pub struct ExtractField {
    side: Side,
    original_path: String,
    path: SingleFieldPath,
    replace_null_with_default: bool,
}

impl ExtractField {
    /// Kafka's `ExtractField.CONFIG_DEF`.
    pub fn config_def() -> ConfigDef {
        ConfigDef::new()
            .define(required_string(
                "field",
                Importance::Medium,
                "Field name to extract.",
            ))
            .define(replace_null_with_default_key())
            .define(field_syntax_version_key())
    }

    /// Configures the transformation from its own keys.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages.
    pub fn configure(side: Side, props: &Props) -> Result<ExtractField, ConfigError> {
        let config = parse_config(&ExtractField::config_def(), props)?;
        let original_path = config.get_string("field").unwrap_or_default();
        let v2 = config
            .get_string("field.syntax.version")
            .is_some_and(|v| v.eq_ignore_ascii_case("V2"));
        Ok(ExtractField {
            side,
            path: SingleFieldPath::new(&original_path, v2)?,
            original_path,
            replace_null_with_default: replace_null_with_default(&config),
        })
    }
}

impl SideTransformation for ExtractField {
    const PASSES_NULL: bool = false;

    fn side(&self) -> Side {
        self.side
    }

    fn schemaless(&self, op: Input<'_>) -> Result<Value, DataError> {
        match require_map_or_null(op.value, PURPOSE)? {
            None => Ok(Value::Null),
            Some(map) => self.path.value_from_map(map),
        }
    }

    fn with_schema(&self, schema: &SchemaRef, op: Input<'_>) -> WithSchema {
        let s = require_struct_or_null(op.value, PURPOSE)?;
        let field = self
            .path
            .field_from(schema)
            .ok_or_else(|| format!("Unknown field: {}", self.original_path))?;
        let extracted = match s {
            None => Value::Null,
            Some(s) => self
                .path
                .value_from_struct(s, self.replace_null_with_default)?,
        };
        Ok((field.schema.clone(), extracted))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use crate::data::SchemaBuilder;

    fn extract(side: Side, pairs: &[(&str, &str)]) -> ExtractField {
        ExtractField::configure(side, &props(pairs)).unwrap()
    }

    #[test]
    fn documented_example_schemaless() {
        let t = extract(Side::Value, &[("field", "id")]);
        let out = apply_map(&t, &[("id", Value::Int64(42)), ("x", Value::from("y"))]);
        assert_eq!(out.value, Value::Int64(42));
        assert_eq!(out.value_schema, None);
        let missing = apply_map(&t, &[("x", Value::Int8(1))]);
        assert_eq!(missing.value, Value::Null);
        let tomb = apply_ok(&t, record("t", None, Value::Null));
        assert_eq!(tomb.value, Value::Null);
    }

    #[test]
    fn with_schema_key_and_value() {
        let schema = struct_schema(&[("id", Schema::int32()), ("name", Schema::optional_string())]);
        let s = struct_of(&schema, &[("id", Value::Int32(42))]);
        let t = extract(Side::Key, &[("field", "id")]);
        let out = apply_ok(
            &t,
            key_record(Some(schema.clone()), Value::Struct(s.clone())),
        );
        assert_eq!(out.key, Value::Int32(42));
        assert_eq!(out.key_schema, Some(Schema::int32()));
        let v = extract(Side::Value, &[("field", "name")]);
        let out = apply_ok(&v, record("t", Some(schema.clone()), Value::Struct(s)));
        assert_eq!(out.value, Value::Null);
        assert_eq!(out.value_schema, Some(Schema::optional_string()));
        let out = apply_ok(&v, record("t", Some(schema), Value::Null));
        assert_eq!(out.value, Value::Null);
        assert_eq!(out.value_schema, Some(Schema::optional_string()));
    }

    #[test]
    fn errors_like_kafka() {
        let schema = SchemaBuilder::struct_()
            .field("id", Schema::int32())
            .build();
        let t = extract(Side::Value, &[("field", "x")]);
        assert_eq!(
            apply_err(&t, struct_record(schema, &[])),
            "Unknown field: x"
        );
        assert_eq!(
            t.apply(
                record("t", Some(Schema::string()), Value::from("s")),
                &source()
            )
            .unwrap_err(),
            "Only Struct objects supported for [field extraction], found: java.lang.String"
        );
        assert_eq!(
            ExtractField::configure(Side::Value, &Props::new()).unwrap_err(),
            "Missing required configuration \"field\" which has no default value."
        );
        assert_eq!(
            ExtractField::configure(Side::Value, &props(&[("field", "a"), ("field.syntax.version", "v3")]))
                .unwrap_err(),
            "Invalid value v3 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2"
        );
    }

    #[test]
    fn nested_paths_with_v2() {
        let inner = SchemaBuilder::struct_().field("c", Schema::int64()).build();
        let outer = SchemaBuilder::struct_().field("a.b", inner.clone()).build();
        let value = Struct::new(outer.clone())
            .with("a.b", Struct::new(inner).with("c", 7i64).unwrap())
            .unwrap();
        let t = extract(
            Side::Value,
            &[("field", "`a.b`.c"), ("field.syntax.version", "v2")],
        );
        let out = apply_ok(&t, record("t", Some(outer), Value::Struct(value)));
        assert_eq!(out.value, Value::Int64(7));
        let m = extract(
            Side::Value,
            &[("field", "a.b"), ("field.syntax.version", "V2")],
        );
        let out = apply_map(&m, &[("a", map(&[("b", Value::from("deep"))]))]);
        assert_eq!(out.value, Value::from("deep"));
        let err = m
            .apply(record("t", None, map(&[("a", Value::Int8(1))])), &source())
            .unwrap_err();
        assert_eq!(
            err,
            "Only Map objects supported in absence of schema for [nested field access], found: java.lang.Byte"
        );
        // V1 takes the dotted name literally
        let v1 = extract(Side::Value, &[("field", "a.b")]);
        let out = apply_map(&v1, &[("a.b", Value::Int8(3))]);
        assert_eq!(out.value, Value::Int8(3));
    }

    #[test]
    fn path_parsing_matches_kafka() {
        let p = |s: &str| SingleFieldPath::new(s, true).unwrap().steps().to_vec();
        assert_eq!(p("foo.bar"), vec!["foo", "bar"]);
        assert_eq!(p("`foo.bar`.baz"), vec!["foo.bar", "baz"]);
        assert_eq!(p("foo."), vec!["foo", ""]);
        assert_eq!(p("`a`b`"), vec!["a`b"]);
        assert_eq!(p("`a\\`.b`.c"), vec!["a`.b", "c"]);
        assert_eq!(
            SingleFieldPath::new("`foo.bar", true).unwrap_err(),
            "Incomplete backtick pair in path: [`foo.bar], consider adding a backslash before backtick at position 0 to escape it"
        );
        assert_eq!(SingleFieldPath::new("a.b", false).unwrap().steps(), ["a.b"]);
    }
}
