//! The one list of every plugin liteconnect ships. Adding a plugin is one row here plus its module.

use std::sync::Arc;

use super::desc::{Factory, MakeTransform, PluginDesc, PluginKind};
use crate::config::def::ConfigDef;
use crate::config::ConfigError;
use crate::connectors::file::{FileStreamSink, FileStreamSource};
use crate::connectors::jdbc::{JdbcSink, JdbcSource};
#[cfg(feature = "kafka-client")]
use crate::connectors::kafka::{KafkaSink, MirrorSource};
#[cfg(feature = "mqtt")]
use crate::connectors::mqtt::{MqttSink, MqttSource};
use crate::connectors::spooldir::{
    SpoolDirCsvSource, SpoolDirJsonSource, SpoolDirLineDelimitedSource,
    SpoolDirSchemaLessJsonSource,
};
use crate::connectors::verifiable::{MockSink, MockSource, VerifiableSink, VerifiableSource};
use crate::connectors::Props;
use crate::converters::{
    avro, bytes, defs, header, json, jsonschema, number, string, Converter, HeaderConverter,
    KAFKA_VERSION,
};
use crate::data::DataError;
use crate::transforms::{
    cast, extract_field, flatten, headers, hoist_field, insert_field, mask_field, predicates,
    replace_field, routers, set_schema_metadata, timestamp_converter, value_to_key, Predicate,
    Side, Transformation,
};

fn boxed<T: Transformation + 'static>(
    r: Result<T, ConfigError>,
) -> Result<Box<dyn Transformation>, ConfigError> {
    r.map(|t| Box::new(t) as Box<dyn Transformation>)
}

fn boxed_predicate<T: Predicate + 'static>(
    r: Result<T, ConfigError>,
) -> Result<Box<dyn Predicate>, ConfigError> {
    r.map(|t| Box::new(t) as Box<dyn Predicate>)
}

fn transformation(class: &'static str, def: fn() -> ConfigDef, make: MakeTransform) -> PluginDesc {
    PluginDesc {
        class,
        kind: PluginKind::Transformation,
        version: KAFKA_VERSION,
        factory: Factory::Transformation { def, make },
    }
}

/// A `$Key`/`$Value` pair of transformation classes.
macro_rules! keyed {
    ($name:literal, $module:ident :: $ty:ident) => {
        [
            transformation(
                concat!("org.apache.kafka.connect.transforms.", $name, "$Key"),
                $module::$ty::config_def,
                |p| boxed($module::$ty::configure(Side::Key, p)),
            ),
            transformation(
                concat!("org.apache.kafka.connect.transforms.", $name, "$Value"),
                $module::$ty::config_def,
                |p| boxed($module::$ty::configure(Side::Value, p)),
            ),
        ]
    };
}

/// A transformation with one class.
macro_rules! single {
    ($name:literal, $module:ident :: $ty:ident) => {
        [transformation(
            concat!("org.apache.kafka.connect.transforms.", $name),
            $module::$ty::config_def,
            |p| boxed($module::$ty::configure(p)),
        )]
    };
}

/// A predicate class.
macro_rules! predicate {
    ($name:literal, $ty:ident) => {
        [PluginDesc {
            class: concat!("org.apache.kafka.connect.transforms.predicates.", $name),
            kind: PluginKind::Predicate,
            version: KAFKA_VERSION,
            factory: Factory::Predicate {
                def: predicates::$ty::config_def,
                make: |p| boxed_predicate(predicates::$ty::configure(p)),
            },
        }]
    };
}

/// A class that is both a Converter and a HeaderConverter (one row each), built by `$make` from its
/// config keys.
macro_rules! codec {
    ($class:expr, $def:path, $make:expr) => {
        [
            PluginDesc {
                class: $class,
                kind: PluginKind::Converter,
                version: KAFKA_VERSION,
                factory: Factory::Converter {
                    def: $def,
                    make: |c: &Props| -> Result<Arc<dyn Converter>, DataError> {
                        Ok(Arc::new($make(c)?))
                    },
                },
            },
            PluginDesc {
                class: $class,
                kind: PluginKind::HeaderConverter,
                version: KAFKA_VERSION,
                factory: Factory::HeaderConverter {
                    def: $def,
                    make: |c: &Props| -> Result<Arc<dyn HeaderConverter>, DataError> {
                        Ok(Arc::new($make(c)?))
                    },
                },
            },
        ]
    };
}

fn number(class: &'static str) -> Result<number::NumberConverter, DataError> {
    number::NumberConverter::for_class(class)
        .ok_or_else(|| DataError::new(format!("Class {class} could not be instantiated.")))
}

/// The connectors of this build: those of a Cargo feature only when it is on (`super::features`).
fn connectors() -> Vec<PluginDesc> {
    type Plugin = Arc<dyn crate::connectors::ConnectorPlugin>;
    let mut all: Vec<Plugin> = vec![
        Arc::new(FileStreamSink),
        Arc::new(FileStreamSource),
        Arc::new(MockSink),
        Arc::new(MockSource),
        Arc::new(VerifiableSink),
        Arc::new(VerifiableSource),
    ];
    #[cfg(feature = "kafka-client")]
    all.extend([Arc::new(KafkaSink) as Plugin, Arc::new(MirrorSource)]);
    #[cfg(feature = "http")]
    all.extend([
        Arc::new(crate::connectors::http::sink::AivenHttpSink) as Plugin,
        Arc::new(crate::connectors::http::sink::ConfluentHttpSink),
    ]);
    all.extend([
        Arc::new(SpoolDirCsvSource) as Plugin,
        Arc::new(SpoolDirJsonSource),
        Arc::new(SpoolDirLineDelimitedSource),
        Arc::new(SpoolDirSchemaLessJsonSource),
    ]);
    #[cfg(feature = "http")]
    all.extend([
        Arc::new(crate::connectors::http::webhook::WebhookSource) as Plugin,
        Arc::new(crate::connectors::http::poll::HttpSource),
    ]);
    #[cfg(feature = "mqtt")]
    all.extend([Arc::new(MqttSource) as Plugin, Arc::new(MqttSink)]);
    all.extend([Arc::new(JdbcSource) as Plugin, Arc::new(JdbcSink)]);
    #[cfg(feature = "airbyte")]
    all.push(Arc::new(crate::connectors::airbyte::AirbyteSource));
    all.into_iter().map(PluginDesc::connector).collect()
}

fn transformations() -> Vec<[PluginDesc; 2]> {
    vec![
        keyed!("Cast", cast::Cast),
        keyed!("ExtractField", extract_field::ExtractField),
        keyed!("Flatten", flatten::Flatten),
        keyed!("HeaderFrom", headers::HeaderFrom),
        keyed!("HoistField", hoist_field::HoistField),
        keyed!("InsertField", insert_field::InsertField),
        keyed!("MaskField", mask_field::MaskField),
        keyed!("ReplaceField", replace_field::ReplaceField),
        keyed!("SetSchemaMetadata", set_schema_metadata::SetSchemaMetadata),
        keyed!(
            "TimestampConverter",
            timestamp_converter::TimestampConverter
        ),
    ]
}

fn one_class_plugins() -> Vec<[PluginDesc; 1]> {
    vec![
        single!("DropHeaders", headers::DropHeaders),
        single!("Filter", routers::Filter),
        single!("InsertHeader", headers::InsertHeader),
        single!("RegexRouter", routers::RegexRouter),
        single!("TimestampRouter", routers::TimestampRouter),
        single!("ValueToKey", value_to_key::ValueToKey),
        predicate!("HasHeaderKey", HasHeaderKey),
        predicate!("RecordIsTombstone", RecordIsTombstone),
        predicate!("TopicNameMatches", TopicNameMatches),
        [PluginDesc {
            class: header::CLASS,
            kind: PluginKind::HeaderConverter,
            version: KAFKA_VERSION,
            factory: Factory::HeaderConverter {
                def: defs::none,
                make: |_| Ok(Arc::new(header::SimpleHeaderConverter)),
            },
        }],
    ]
}

fn converters() -> Vec<[PluginDesc; 2]> {
    vec![
        codec!(json::CLASS, defs::json, json::JsonConverter::from_config),
        codec!(
            string::CLASS,
            defs::string,
            string::StringConverter::from_config
        ),
        codec!(bytes::CLASS, defs::converter, |_| Ok::<_, DataError>(
            bytes::ByteArrayConverter
        )),
        codec!(number::BOOLEAN_CLASS, defs::converter, |_| number(
            number::BOOLEAN_CLASS
        )),
        codec!(number::DOUBLE_CLASS, defs::converter, |_| number(
            number::DOUBLE_CLASS
        )),
        codec!(number::FLOAT_CLASS, defs::converter, |_| number(
            number::FLOAT_CLASS
        )),
        codec!(number::INTEGER_CLASS, defs::converter, |_| number(
            number::INTEGER_CLASS
        )),
        codec!(number::LONG_CLASS, defs::converter, |_| number(
            number::LONG_CLASS
        )),
        codec!(number::SHORT_CLASS, defs::converter, |_| number(
            number::SHORT_CLASS
        )),
    ]
}

/// The converters that need a Schema Registry: converters only, not header converters (as Confluent's).
fn registry_converters() -> Vec<PluginDesc> {
    vec![
        PluginDesc {
            class: avro::CLASS,
            kind: PluginKind::Converter,
            version: KAFKA_VERSION,
            factory: Factory::Converter {
                def: defs::avro_converter,
                make: |c: &Props| -> Result<Arc<dyn Converter>, DataError> {
                    Ok(Arc::new(avro::AvroConverter::from_config(c)?))
                },
            },
        },
        PluginDesc {
            class: jsonschema::CLASS,
            kind: PluginKind::Converter,
            version: KAFKA_VERSION,
            factory: Factory::Converter {
                def: defs::json_schema,
                make: |c: &Props| -> Result<Arc<dyn Converter>, DataError> {
                    Ok(Arc::new(jsonschema::JsonSchemaConverter::from_config(c)?))
                },
            },
        },
        #[cfg(feature = "protobuf")]
        PluginDesc {
            class: crate::converters::protobuf::CLASS,
            kind: PluginKind::Converter,
            version: KAFKA_VERSION,
            factory: Factory::Converter {
                def: defs::protobuf,
                make: |c: &Props| -> Result<Arc<dyn Converter>, DataError> {
                    Ok(Arc::new(
                        crate::converters::protobuf::ProtobufConverter::from_config(c)?,
                    ))
                },
            },
        },
    ]
}

/// Every plugin row, in no particular order (listings sort by kind and class).
pub(super) fn rows() -> Vec<PluginDesc> {
    let mut rows = connectors();
    rows.extend(transformations().into_iter().flatten());
    rows.extend(one_class_plugins().into_iter().flatten());
    rows.extend(converters().into_iter().flatten());
    rows.extend(registry_converters());
    rows
}
