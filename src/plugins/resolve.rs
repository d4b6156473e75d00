//! Kafka's plugin name rules, once for every kind (spec §8.3): the fully qualified class name; else an
//! alias from the table Kafka builds over all installed plugins (simple name and pruned name, dropped
//! when two classes claim it); else, as Kafka's connector lookup does, a scan of the wanted kinds that
//! reports an ambiguous name.

use std::collections::BTreeMap;

use super::desc::{PluginDesc, PluginKind};
use crate::config::def::java_trim;

/// Why a plugin name could not be resolved. The texts are Kafka's: its connector lookup's
/// `ConnectException` messages for connectors, `Class X could not be found.` for the other kinds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No class of the wanted kinds matches.
    #[error("{}", message(.name, .kinds, .available, false))]
    NotFound {
        /// The name as given (trimmed).
        name: String,
        /// The kinds asked for.
        kinds: Vec<PluginKind>,
        /// The classes of those kinds, sorted.
        available: Vec<&'static str>,
    },
    /// More than one class of the wanted kinds matches the alias.
    #[error("{}", message(.name, .kinds, .classes, true))]
    Ambiguous {
        /// The name as given (trimmed).
        name: String,
        /// The kinds asked for.
        kinds: Vec<PluginKind>,
        /// The matching classes.
        classes: Vec<&'static str>,
    },
}

fn wants_connector(kinds: &[PluginKind]) -> bool {
    kinds.iter().any(|k| k.is_connector())
}

fn message(name: &str, kinds: &[PluginKind], classes: &[&str], ambiguous: bool) -> String {
    if !wants_connector(kinds) {
        // Kafka drops an alias two classes claim, so an ambiguous name is simply not found.
        return format!("Class {name} could not be found.");
    }
    let classes = classes.join(", ");
    if ambiguous {
        format!("More than one connector matches alias {name}. Please use full package and class name instead. Classes found: {classes}")
    } else {
        // Kafka follows its first sentence with every `PluginDesc{klass=class ...}` (kilobytes);
        // the class names say the same.
        let message = format!("Failed to find any class that implements Connector and which name matches {name}, available connectors are: {classes}");
        match super::features::missing_feature_sentence(name) {
            Some(sentence) => format!("{message}. {sentence}"),
            None => message,
        }
    }
}

/// Kafka's alias table over every row: alias → the one class that claims it (aliases claimed by
/// two classes are left out).
pub(super) fn alias_table(rows: &[PluginDesc]) -> BTreeMap<&'static str, &'static str> {
    let mut claims: BTreeMap<&'static str, Vec<&'static str>> = BTreeMap::new();
    for row in rows {
        for alias in row.aliases() {
            let classes = claims.entry(alias).or_default();
            if !classes.contains(&row.class) {
                classes.push(row.class);
            }
        }
    }
    claims
        .into_iter()
        .filter_map(|(alias, classes)| match classes.as_slice() {
            [one] => Some((alias, *one)),
            _ => None,
        })
        .collect()
}

/// Resolves `name` to a row of one of `kinds` (the first of `kinds` wins for a class that has rows
/// of several).
///
/// # Errors
/// [`ResolveError::NotFound`] when nothing matches, [`ResolveError::Ambiguous`] when the name is an
/// alias of more than one class of the wanted kinds.
pub(super) fn resolve<'a>(
    rows: &'a [PluginDesc],
    aliases: &BTreeMap<&'static str, &'static str>,
    kinds: &[PluginKind],
    name: &str,
) -> Result<&'a PluginDesc, ResolveError> {
    let name = java_trim(name);
    let row_of = |class: &str| {
        kinds
            .iter()
            .find_map(|kind| rows.iter().find(|r| r.kind == *kind && r.class == class))
    };
    if let Some(row) = row_of(name) {
        return Ok(row);
    }
    if let Some(row) = aliases.get(name).and_then(|class| row_of(class)) {
        return Ok(row);
    }
    let mut classes: Vec<&'static str> = rows
        .iter()
        .filter(|r| kinds.contains(&r.kind) && r.aliases().contains(&name))
        .map(|r| r.class)
        .collect();
    classes.sort_unstable();
    classes.dedup();
    match classes.as_slice() {
        // Kafka's connector lookup falls back to this scan; other kinds stop at the alias table
        [one] if wants_connector(kinds) => row_of(one).ok_or_else(|| not_found(rows, kinds, name)),
        [_] => Err(not_found(rows, kinds, name)),
        [] => Err(not_found(rows, kinds, name)),
        _ => Err(ResolveError::Ambiguous {
            name: name.to_owned(),
            kinds: kinds.to_vec(),
            classes,
        }),
    }
}

fn not_found(rows: &[PluginDesc], kinds: &[PluginKind], name: &str) -> ResolveError {
    let mut available: Vec<&'static str> = rows
        .iter()
        .filter(|r| kinds.contains(&r.kind))
        .map(|r| r.class)
        .collect();
    available.sort_unstable();
    available.dedup();
    ResolveError::NotFound {
        name: name.to_owned(),
        kinds: kinds.to_vec(),
        available,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::def::ConfigDef;
    use crate::plugins::desc::Factory;

    /// A row that only has a name and a kind (the resolver looks at nothing else).
    fn row(class: &'static str, kind: PluginKind) -> PluginDesc {
        PluginDesc {
            class,
            kind,
            version: "1",
            factory: Factory::Transformation {
                def: ConfigDef::new,
                make: |_| Err("not built in tests".to_owned().into()),
            },
        }
    }

    /// A connector, a class that is both converter and header converter, and a transformation.
    fn one_of_each() -> Vec<PluginDesc> {
        vec![
            row("a.FooConnector", PluginKind::Sink),
            row("a.BarConverter", PluginKind::Converter),
            row("a.BarConverter", PluginKind::HeaderConverter),
            row("a.BazTransformation$Key", PluginKind::Transformation),
        ]
    }

    #[test]
    fn full_name_simple_name_and_pruned_name() {
        let rows = one_of_each();
        let aliases = alias_table(&rows);
        let found = |kinds: &[PluginKind], name: &str| {
            resolve(&rows, &aliases, kinds, name).map(|r| (r.class, r.kind))
        };
        for name in ["a.FooConnector", " FooConnector ", "Foo"] {
            assert_eq!(
                found(&PluginKind::CONNECTORS, name),
                Ok(("a.FooConnector", PluginKind::Sink)),
                "{name}"
            );
        }
        // the pruned name of the Converter row serves the HeaderConverter row of the same class
        assert_eq!(
            found(&[PluginKind::HeaderConverter], "Bar"),
            Ok(("a.BarConverter", PluginKind::HeaderConverter))
        );
        assert_eq!(
            found(&PluginKind::ALL, "BarConverter"),
            Ok(("a.BarConverter", PluginKind::Converter))
        );
        assert_eq!(
            found(&[PluginKind::Transformation], "Key").map(|r| r.0),
            Ok("a.BazTransformation$Key")
        );
        // a name of another kind is not found, and says so in that kind's words
        let err = found(&[PluginKind::Transformation], "Foo").unwrap_err();
        assert_eq!(err.to_string(), "Class Foo could not be found.");
        let err = found(&PluginKind::CONNECTORS, "Bar").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Failed to find any class that implements Connector and which name matches Bar, available connectors are: a.FooConnector"
        );
    }

    #[test]
    fn an_alias_of_two_classes_is_ambiguous() {
        let mut rows = one_of_each();
        rows.push(row("b.FooConnector", PluginKind::Source));
        rows.push(row("a.Cast$Value", PluginKind::Transformation));
        rows.push(row("a.Flatten$Value", PluginKind::Transformation));
        let aliases = alias_table(&rows);
        let err = resolve(&rows, &aliases, &PluginKind::CONNECTORS, "Foo").unwrap_err();
        assert_eq!(
            err.to_string(),
            "More than one connector matches alias Foo. Please use full package and class name instead. Classes found: a.FooConnector, b.FooConnector"
        );
        assert!(matches!(err, ResolveError::Ambiguous { .. }));
        let err = resolve(&rows, &aliases, &[PluginKind::Transformation], "Value").unwrap_err();
        assert_eq!(err.to_string(), "Class Value could not be found.");
        assert_eq!(
            resolve(&rows, &aliases, &PluginKind::CONNECTORS, "b.FooConnector").map(|r| r.kind),
            Ok(PluginKind::Source)
        );
    }
}
