//! The kinds of values a key holds (`ConfigType`), how much it matters (`Importance`), how wide
//! its input is (`Width`) and what applies when it is absent (`DefaultValue`).

use std::fmt;

/// An enum whose variants Kafka names on the wire: the enum, its `as_str` and a `Display`
/// that writes that name.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident => $wire:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The name Kafka uses on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// The variant Kafka names `name` on the wire, ignoring case.
            pub fn from_wire(name: &str) -> Option<Self> {
                [$($name::$variant,)+]
                    .into_iter()
                    .find(|v| v.as_str().eq_ignore_ascii_case(name.trim()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    /// The type of a configuration key; decides how its string form is parsed and rendered.
    pub enum ConfigType {
        /// `true`/`false`, case-insensitive.
        Boolean => "BOOLEAN",
        /// Any text, trimmed.
        String => "STRING",
        /// A 32-bit signed integer.
        Int => "INT",
        /// A 16-bit signed integer.
        Short => "SHORT",
        /// A 64-bit signed integer.
        Long => "LONG",
        /// A 64-bit float, in Java's `Double.parseDouble` syntax.
        Double => "DOUBLE",
        /// A comma-separated list; whitespace around commas is dropped.
        List => "LIST",
        /// A plugin class name (or alias).
        Class => "CLASS",
        /// Text that is never echoed back (`[hidden]`).
        Password => "PASSWORD",
    }
}

wire_enum! {
    /// How much a user should care about a key; shown by UIs, never enforced.
    pub enum Importance {
        /// `"HIGH"`.
        High => "HIGH",
        /// `"MEDIUM"`.
        Medium => "MEDIUM",
        /// `"LOW"`.
        Low => "LOW",
    }
}

wire_enum! {
    /// A hint for UIs about how wide an input field should be.
    pub enum Width {
        /// `"NONE"`.
        None => "NONE",
        /// `"SHORT"`.
        Short => "SHORT",
        /// `"MEDIUM"`.
        Medium => "MEDIUM",
        /// `"LONG"`.
        Long => "LONG",
    }
}

/// The default of a key. Kafka distinguishes "no default" (the key is required) from a
/// default of `null` (the key is optional and absent means nothing).
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    /// No default: leaving the key out is an error.
    Required,
    /// Optional; the parsed value is [`ConfigValue::Null`](super::ConfigValue::Null) when absent.
    Null,
    /// The default in its string form, as it would be written in a properties file; parsed
    /// with the key's type like any supplied value (`""` is an empty list for a LIST key).
    Value(String),
}
