//! The JSON shapes in which Kafka Connect reports keys and validation results over REST.

use serde::{Deserialize, Serialize};

use super::ConfigKey;

/// The answer of `PUT /connector-plugins/{p}/config/validate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfos {
    /// The `connector.class` as given.
    pub name: String,
    /// How many errors were found (see the connector validation for how they are counted).
    pub error_count: usize,
    /// Groups in display order.
    pub groups: Vec<String>,
    /// One entry per validated key.
    pub configs: Vec<ConfigInfo>,
}

impl ConfigInfos {
    /// The entry of the key `name`.
    pub fn entry(&self, name: &str) -> Option<&ConfigInfo> {
        self.configs.iter().find(|c| c.value.name == name)
    }
}

/// One key of a validation answer: its definition (absent for keys nobody defines) and value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    /// The key's definition, `null` when there is none.
    pub definition: Option<ConfigKeyInfo>,
    /// The validated value.
    pub value: ConfigValueInfo,
}

/// A key's definition as REST shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigKeyInfo {
    /// The key.
    pub name: String,
    /// `BOOLEAN`, `STRING`, `INT`, `SHORT`, `LONG`, `DOUBLE`, `LIST`, `CLASS` or `PASSWORD`.
    #[serde(rename = "type")]
    pub config_type: String,
    /// True when the key has no default.
    pub required: bool,
    /// The default's string form; `null` when required or defaulting to null.
    pub default_value: Option<String>,
    /// `HIGH`, `MEDIUM` or `LOW`.
    pub importance: String,
    /// The documentation.
    pub documentation: String,
    /// The group, `null` when none.
    pub group: Option<String>,
    /// `NONE`, `SHORT`, `MEDIUM` or `LONG`.
    pub width: String,
    /// The label.
    pub display_name: String,
    /// Dependent keys.
    pub dependents: Vec<String>,
    /// Order in group, `-1` when none. Kafka writes `order` and reads `order_in_group`; both
    /// are read here.
    #[serde(rename = "order", alias = "order_in_group")]
    pub order: i32,
}

/// A key's validated value as REST shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigValueInfo {
    /// The key.
    pub name: String,
    /// The rendered value; `null` when there is none.
    pub value: Option<String>,
    /// Suggested values.
    pub recommended_values: Vec<String>,
    /// Errors found.
    pub errors: Vec<String>,
    /// Whether UIs should show the key.
    pub visible: bool,
}

/// A key's definition in REST form (`GET /connector-plugins/{p}/config`, validation answers).
pub fn key_info(key: &ConfigKey) -> ConfigKeyInfo {
    key_info_prefixed(key, "")
}

/// [`key_info`] with the name prefixed (converter keys reported as `key.converter.<k>`).
pub(crate) fn key_info_prefixed(key: &ConfigKey, prefix: &str) -> ConfigKeyInfo {
    let default_value = key.default_value().and_then(|v| v.render());
    ConfigKeyInfo {
        name: format!("{prefix}{}", key.name),
        config_type: key.config_type.as_str().to_owned(),
        required: key.is_required(),
        default_value,
        importance: key.importance.as_str().to_owned(),
        documentation: key.documentation.clone(),
        group: key.group.clone(),
        width: key.width.as_str().to_owned(),
        display_name: key.display_name.clone(),
        dependents: key.dependents.clone(),
        order: key.order_in_group,
    }
}
