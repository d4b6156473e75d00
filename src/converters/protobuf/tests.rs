use std::collections::BTreeMap;

use super::compat::check;
use super::schema::ProtoSchema;
use crate::converters::registry::kinds::{ParsedSchema, Referenced};
use crate::converters::registry::Level;

fn proto(text: &str) -> ProtoSchema {
    ProtoSchema::parse(text, BTreeMap::new()).unwrap()
}

fn p3(body: &str) -> ProtoSchema {
    proto(&format!("syntax = \"proto3\";\npackage ex;\n{body}"))
}

const V1: &str = "message User { string name = 1; int32 age = 2; }";

/// (what changes, the new schema, whether a reader of the new one reads the old, and back).
fn evolutions() -> Vec<(&'static str, String, bool, bool)> {
    let user = |fields: &str| format!("message User {{ {fields} }}");
    vec![
        (
            "field added",
            user("string name = 1; int32 age = 2; string email = 3;"),
            true,
            true,
        ),
        ("field removed", user("string name = 1;"), true, true),
        (
            "field renamed",
            user("string full_name = 1; int32 age = 2;"),
            true,
            true,
        ),
        (
            "int32 to int64",
            user("string name = 1; int64 age = 2;"),
            true,
            true,
        ),
        (
            "int32 to bool",
            user("string name = 1; bool age = 2;"),
            true,
            true,
        ),
        (
            "string to bytes",
            user("bytes name = 1; int32 age = 2;"),
            true,
            true,
        ),
        (
            "int32 to sint32",
            user("string name = 1; sint32 age = 2;"),
            false,
            false,
        ),
        (
            "int32 to string",
            user("string name = 1; string age = 2;"),
            false,
            false,
        ),
        (
            "int32 to a message",
            user("string name = 1; Age age = 2; } message Age { int32 v = 1;"),
            false,
            false,
        ),
        (
            "message added",
            format!("{V1} message Other {{ int32 x = 1; }}"),
            true,
            false,
        ),
    ]
}

#[test]
fn compatibility_follows_confluents_rules_at_every_level() {
    let old = p3(V1);
    for (what, new, backward, forward) in evolutions() {
        let new = p3(&new);
        for (level, expect) in [
            (Level::None, true),
            (Level::Backward, backward),
            (Level::BackwardTransitive, backward),
            (Level::Forward, forward),
            (Level::ForwardTransitive, forward),
            (Level::Full, backward && forward),
            (Level::FullTransitive, backward && forward),
        ] {
            let messages = check(level, &new, std::slice::from_ref(&old));
            assert_eq!(
                messages.is_empty(),
                expect,
                "{what} at {level:?}: {messages:?}"
            );
        }
    }
}

#[test]
fn transitive_levels_check_every_earlier_version() {
    let v1 = p3("message M { int32 a = 1; }");
    let v2 = p3("message M { }");
    let v3 = p3("message M { string a = 1; }");
    let both = [v1, v2];
    assert!(check(Level::Backward, &v3, &both).is_empty());
    let messages = check(Level::BackwardTransitive, &v3, &both);
    assert!(
        messages[0].starts_with("FIELD_SCALAR_KIND_CHANGED #/M/1"),
        "{messages:?}"
    );
}

#[test]
fn refused_evolutions_name_confluents_difference() {
    let cases = [
        ("message A { int32 x = 1; } message B { int32 y = 1; }", "message A { int32 x = 1; }", "MESSAGE_REMOVED #/B"),
        ("message A { Inner x = 1; message Inner { int32 v = 1; } message Other { int32 v = 1; } }",
         "message A { Other x = 1; message Inner { int32 v = 1; } message Other { int32 v = 1; } }",
         "FIELD_NAMED_TYPE_CHANGED #/A/1"),
        ("message A { map<string, int32> m = 1; }", "message A { repeated int32 m = 1; }", "FIELD_KIND_CHANGED #/A/1"),
        ("message A { oneof u { int32 a = 1; string b = 2; } }", "message A { oneof u { int32 a = 1; } }", "ONEOF_FIELD_REMOVED #/A/2"),
        ("message A { int32 a = 1; string b = 2; }", "message A { oneof u { int32 a = 1; string b = 2; } }", "MULTIPLE_FIELDS_MOVED_TO_ONEOF #/A/u"),
    ];
    for (old, new, expected) in cases {
        let messages = check(Level::Backward, &p3(new), &[p3(old)]);
        assert!(
            messages.iter().any(|m| m.starts_with(expected)),
            "{expected}: {messages:?}"
        );
    }
    // A oneof with one existing field moved in is compatible backward (not forward: the old reader
    // lacks the oneof); so are a package change and enum values both ways.
    let into_oneof = p3("message A { oneof u { int32 a = 1; string b = 2; } }");
    let plain = p3("message A { int32 a = 1; }");
    assert!(check(Level::Backward, &into_oneof, std::slice::from_ref(&plain)).is_empty());
    assert!(!check(Level::Forward, &into_oneof, &[plain]).is_empty());
    let old = p3("message A { E e = 1; } enum E { X = 0; }");
    let new = p3("message A { E e = 1; } enum E { X = 0; Y = 1; }");
    assert_eq!(check(Level::Full, &new, &[old]), Vec::<String>::new());
    let other_package = proto(
        "syntax = \"proto3\";\npackage other;\nmessage User { string name = 1; int32 age = 2; }",
    );
    assert!(check(Level::Full, &other_package, &[p3(V1)]).is_empty());
}

#[test]
fn proto2_required_fields_may_be_neither_added_nor_removed() {
    let p2 = |body: &str| proto(&format!("syntax = \"proto2\";\n{body}"));
    let old = p2("message A { required int32 a = 1; optional string b = 2; }");
    let removed = p2("message A { optional string b = 2; }");
    let m = check(Level::Backward, &removed, std::slice::from_ref(&old));
    assert!(m[0].starts_with("REQUIRED_FIELD_REMOVED #/A/1"), "{m:?}");
    let added =
        p2("message A { required int32 a = 1; optional string b = 2; required int64 c = 3; }");
    let m = check(Level::Backward, &added, std::slice::from_ref(&old));
    assert!(m[0].starts_with("REQUIRED_FIELD_ADDED #/A/3"), "{m:?}");
    let optional_added =
        p2("message A { required int32 a = 1; optional string b = 2; optional int64 c = 3; }");
    assert!(check(Level::Full, &optional_added, &[old]).is_empty());
}

#[test]
fn schemas_parse_with_references_well_known_types_and_confluents_imports() {
    let other = "syntax = \"proto3\";\npackage ex;\nmessage Address { string city = 1; }";
    let other_parsed = ParsedSchema::parse("PROTOBUF", other, &[]).unwrap();
    let refs = [Referenced {
        name: "other.proto".into(),
        text: other.into(),
        parsed: other_parsed,
    }];
    let text = "syntax = \"proto3\";\npackage ex;\nimport \"other.proto\";\nimport \"google/protobuf/timestamp.proto\";\nimport \"confluent/type/decimal.proto\";\nimport \"google/type/date.proto\";\nmessage User { Address home = 1; google.protobuf.Timestamp at = 2; confluent.type.Decimal d = 3; google.type.Date day = 4; }\n";
    let parsed = ParsedSchema::parse("PROTOBUF", text, &refs).unwrap();
    assert_eq!(parsed.schema_type(), "PROTOBUF");
    assert_eq!(parsed.canonical(), text.trim());
    // A second level: a schema importing a schema that imports other.proto.
    let user = Referenced {
        name: "user.proto".into(),
        text: text.into(),
        parsed,
    };
    let all = [user, refs[0].clone()];
    let top = "syntax = \"proto3\";\nimport \"user.proto\";\nmessage Top { ex.User u = 1; }";
    assert!(ParsedSchema::parse("PROTOBUF", top, &all[..1]).is_ok());
    // Without the reference, the import is not found.
    let e = ParsedSchema::parse("PROTOBUF", text, &[]).unwrap_err();
    assert!(e.contains("other.proto"), "{e}");
    let e = ParsedSchema::parse("PROTOBUF", "syntax = \"proto3\"; message {", &[]).unwrap_err();
    assert!(!e.is_empty());
    let e = ParsedSchema::parse(
        "PROTOBUF",
        "syntax = \"proto3\"; message A { Nope n = 1; }",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("Nope"), "{e}");
}

#[test]
fn a_base64_file_descriptor_is_a_schema_too() {
    let text = proto(
        "syntax = \"proto3\";\npackage ex;\nmessage A { int32 x = 1; message B { string s = 1; } }",
    );
    let b64 = text.serialized();
    let again = proto(&b64);
    assert_eq!(again.serialized(), b64);
    assert_eq!(again.message_at(&[0, 0]).unwrap().full_name(), "ex.A.B");
    assert_eq!(
        again.indexes_of(&again.message_at(&[0, 0]).unwrap()),
        vec![0, 0]
    );
    assert!(again.message_at(&[1]).is_err());
}
