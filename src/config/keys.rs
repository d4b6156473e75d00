//! Config key names, for code that reads them: the framework's connector keys and the worker's keys.

/// `name`.
pub const NAME: &str = "name";
/// `connector.class`.
pub const CONNECTOR_CLASS: &str = "connector.class";
/// `tasks.max`.
pub const TASKS_MAX: &str = "tasks.max";
/// `tasks.max.enforce`.
pub const TASKS_MAX_ENFORCE: &str = "tasks.max.enforce";
/// `key.converter`.
pub const KEY_CONVERTER: &str = "key.converter";
/// `value.converter`.
pub const VALUE_CONVERTER: &str = "value.converter";
/// `header.converter`.
pub const HEADER_CONVERTER: &str = "header.converter";
/// `transforms`.
pub const TRANSFORMS: &str = "transforms";
/// `predicates`.
pub const PREDICATES: &str = "predicates";
/// `config.action.reload`.
pub const CONFIG_ACTION_RELOAD: &str = "config.action.reload";
/// `errors.retry.timeout`.
pub const ERRORS_RETRY_TIMEOUT: &str = "errors.retry.timeout";
/// `errors.retry.delay.max.ms`.
pub const ERRORS_RETRY_DELAY_MAX_MS: &str = "errors.retry.delay.max.ms";
/// `errors.tolerance`.
pub const ERRORS_TOLERANCE: &str = "errors.tolerance";
/// `errors.log.enable`.
pub const ERRORS_LOG_ENABLE: &str = "errors.log.enable";
/// `errors.log.include.messages`.
pub const ERRORS_LOG_INCLUDE_MESSAGES: &str = "errors.log.include.messages";
/// `topics` (sink).
pub const TOPICS: &str = "topics";
/// `topics.regex` (sink).
pub const TOPICS_REGEX: &str = "topics.regex";
/// `errors.deadletterqueue.topic.name` (sink).
pub const DLQ_TOPIC_NAME: &str = "errors.deadletterqueue.topic.name";
/// `errors.deadletterqueue.topic.replication.factor` (sink).
pub const DLQ_TOPIC_REPLICATION_FACTOR: &str = "errors.deadletterqueue.topic.replication.factor";
/// `errors.deadletterqueue.context.headers.enable` (sink).
pub const DLQ_CONTEXT_HEADERS_ENABLE: &str = "errors.deadletterqueue.context.headers.enable";
/// `topic.creation.groups` (source).
pub const TOPIC_CREATION_GROUPS: &str = "topic.creation.groups";
/// `exactly.once.support` (source).
pub const EXACTLY_ONCE_SUPPORT: &str = "exactly.once.support";
/// `transaction.boundary` (source).
pub const TRANSACTION_BOUNDARY: &str = "transaction.boundary";
/// `transaction.boundary.interval.ms` (source).
pub const TRANSACTION_BOUNDARY_INTERVAL_MS: &str = "transaction.boundary.interval.ms";
/// `offsets.storage.topic` (source).
pub const OFFSETS_STORAGE_TOPIC: &str = "offsets.storage.topic";
/// The implicit per-transform key naming its predicate.
pub const TRANSFORM_PREDICATE: &str = "predicate";
/// The implicit per-transform key negating its predicate.
pub const TRANSFORM_NEGATE: &str = "negate";

// ----- worker keys (the connector converter keys above are also worker keys) ------------------

/// `listeners`.
pub const LISTENERS: &str = "listeners";
/// `rest.advertised.host.name`.
pub const REST_ADVERTISED_HOST_NAME: &str = "rest.advertised.host.name";
/// `rest.advertised.port`.
pub const REST_ADVERTISED_PORT: &str = "rest.advertised.port";
/// `rest.advertised.listener`.
pub const REST_ADVERTISED_LISTENER: &str = "rest.advertised.listener";
/// `offset.flush.interval.ms`.
pub const OFFSET_FLUSH_INTERVAL_MS: &str = "offset.flush.interval.ms";
/// `offset.flush.timeout.ms`.
pub const OFFSET_FLUSH_TIMEOUT_MS: &str = "offset.flush.timeout.ms";
/// `task.shutdown.graceful.timeout.ms`.
pub const TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS: &str = "task.shutdown.graceful.timeout.ms";
/// `connector.plugin.version` (KIP-891): which installed version of the connector's class runs.
pub const CONNECTOR_PLUGIN_VERSION: &str = "connector.plugin.version";
/// `plugin.path`: directories holding plugins that run as separate programs.
pub const PLUGIN_PATH: &str = "plugin.path";
/// `plugin.request.timeout.ms`: how long a plugin program gets to answer one request.
pub const PLUGIN_REQUEST_TIMEOUT_MS: &str = "plugin.request.timeout.ms";
/// `topic.tracking.enable`.
pub const TOPIC_TRACKING_ENABLE: &str = "topic.tracking.enable";
/// `topic.tracking.allow.reset`.
pub const TOPIC_TRACKING_ALLOW_RESET: &str = "topic.tracking.allow.reset";
/// `admin.listeners`.
pub const ADMIN_LISTENERS: &str = "admin.listeners";
/// `schema.registry.listeners`: where the embedded Schema Registry listens (empty: nowhere).
pub const SCHEMA_REGISTRY_LISTENERS: &str = "schema.registry.listeners";
/// `access.control.allow.origin`.
pub const ACCESS_CONTROL_ALLOW_ORIGIN: &str = "access.control.allow.origin";
/// `access.control.allow.methods`.
pub const ACCESS_CONTROL_ALLOW_METHODS: &str = "access.control.allow.methods";
/// `storage.file`.
pub const STORAGE_FILE: &str = "storage.file";
/// `storage.synchronous`.
pub const STORAGE_SYNCHRONOUS: &str = "storage.synchronous";
/// `storage.max.bytes`.
pub const STORAGE_MAX_BYTES: &str = "storage.max.bytes";
/// `retention.ms`.
pub const RETENTION_MS: &str = "retention.ms";
/// `retention.bytes`.
pub const RETENTION_BYTES: &str = "retention.bytes";
/// `log.buffer.max.bytes`.
pub const LOG_BUFFER_MAX_BYTES: &str = "log.buffer.max.bytes";
/// `log.buffer.full.policy`.
pub const LOG_BUFFER_FULL_POLICY: &str = "log.buffer.full.policy";
/// `rest.request.max.bytes`.
pub const REST_REQUEST_MAX_BYTES: &str = "rest.request.max.bytes";
/// `rest.extension.classes`.
pub const REST_EXTENSION_CLASSES: &str = "rest.extension.classes";
/// `response.http.headers.config`.
pub const RESPONSE_HTTP_HEADERS_CONFIG: &str = "response.http.headers.config";
/// `rest.basic.auth.credentials.file`.
pub const REST_BASIC_AUTH_CREDENTIALS_FILE: &str = "rest.basic.auth.credentials.file";
/// `rest.basic.auth.jaas.config`.
pub const REST_BASIC_AUTH_JAAS_CONFIG: &str = "rest.basic.auth.jaas.config";
/// `rest.basic.auth.health.exempt`.
pub const REST_BASIC_AUTH_HEALTH_EXEMPT: &str = "rest.basic.auth.health.exempt";
/// `rest.basic.auth.metrics.exempt`: liteconnect's; `GET /metrics` without credentials.
pub const REST_BASIC_AUTH_METRICS_EXEMPT: &str = "rest.basic.auth.metrics.exempt";
/// `config.providers`.
pub const CONFIG_PROVIDERS: &str = "config.providers";
/// `tasks.max.total`: liteconnect's cap on the tasks of all connectors together.
pub const TASKS_MAX_TOTAL: &str = "tasks.max.total";
