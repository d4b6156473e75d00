//! The imports every Protobuf schema may name without a reference: Confluent's `confluent/meta.proto`
//! and `confluent/type/decimal.proto`, and Google's `google/type/date.proto` and
//! `google/type/timeofday.proto` (the `google/protobuf/*.proto` well-known types come with the compiler).

/// `confluent/meta.proto`: the options Confluent's converter writes (`connect.type`, enum names, docs).
pub const META: &str = r#"syntax = "proto3";
package confluent;

import "google/protobuf/descriptor.proto";

option java_package = "io.confluent.protobuf";
option java_outer_classname = "MetaProto";

message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}

extend google.protobuf.FileOptions {
  Meta file_meta = 1088;
}
extend google.protobuf.MessageOptions {
  Meta message_meta = 1088;
}
extend google.protobuf.FieldOptions {
  Meta field_meta = 1088;
}
extend google.protobuf.EnumOptions {
  Meta enum_meta = 1088;
}
extend google.protobuf.EnumValueOptions {
  Meta enum_value_meta = 1088;
}
"#;

/// `confluent/type/decimal.proto`: a decimal as its unscaled two's-complement bytes and its scale.
pub const DECIMAL: &str = r#"syntax = "proto3";
package confluent.type;

option java_package = "io.confluent.protobuf.type";
option java_outer_classname = "DecimalProto";

message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
"#;

/// `google/type/date.proto`.
pub const DATE: &str = r#"syntax = "proto3";
package google.type;

option java_package = "com.google.type";
option java_outer_classname = "DateProto";

message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
"#;

/// `google/type/timeofday.proto`.
pub const TIME_OF_DAY: &str = r#"syntax = "proto3";
package google.type;

option java_package = "com.google.type";
option java_outer_classname = "TimeOfDayProto";

message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
"#;

/// `google/protobuf/wrappers.proto` as the schema of a record whose value is not a struct: Confluent
/// writes such a value as the wrapper message of its type, registering the wrappers' file.
pub const WRAPPERS: &str = r#"syntax = "proto3";
package google.protobuf;

option java_package = "com.google.protobuf";
option java_outer_classname = "WrappersProto";

message DoubleValue {
  double value = 1;
}
message FloatValue {
  float value = 1;
}
message Int64Value {
  int64 value = 1;
}
message UInt64Value {
  uint64 value = 1;
}
message Int32Value {
  int32 value = 1;
}
message UInt32Value {
  uint32 value = 1;
}
message BoolValue {
  bool value = 1;
}
message StringValue {
  string value = 1;
}
message BytesValue {
  bytes value = 1;
}
"#;

/// The built-in imports, by import path.
pub const FILES: &[(&str, &str)] = &[
    ("confluent/meta.proto", META),
    ("confluent/type/decimal.proto", DECIMAL),
    ("google/type/date.proto", DATE),
    ("google/type/timeofday.proto", TIME_OF_DAY),
];
