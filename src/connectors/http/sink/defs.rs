//! The config keys of both HTTP sink classes, with their original names, types and defaults.

use crate::config::def::{
    ConfigDef, ConfigKey, ConfigType, Importance, KeyRow, Validator, NULL_DEFAULT,
};

use ConfigType::{Boolean, Int, List, Long, Password, String as Str};

/// One key of a table: name, type, default (`None`: required; [`NULL`]: null), importance, doc.
type Row = KeyRow;

/// The marker for a default of `null` in a [`Row`].
const NULL: Option<&str> = NULL_DEFAULT;

fn define(group: &str, rows: &[Row], mut validators: Vec<(&str, Validator)>) -> ConfigDef {
    let mut def = ConfigDef::new();
    for (order, row) in rows.iter().enumerate() {
        let mut key = ConfigKey::from_row(row).group(group, order as i32);
        if let Some(pos) = validators.iter().position(|(k, _)| *k == row.0) {
            key = key.validator(validators.swap_remove(pos).1);
        }
        def.add(key);
    }
    def
}

/// `io.aiven.kafka.connect.http.HttpSinkConnector`'s keys.
pub fn aiven() -> ConfigDef {
    use Importance::{High, Low, Medium};
    let connection: &[Row] = &[
        ("http.url", Str, None, High, "The URL to send data to."),
        ("http.proxy.host", Str, NULL, Low, "Proxy hostname"),
        ("http.proxy.port", Int, Some("-1"), Low, "Proxy port"),
        ("http.ssl.trust.all.certs", Boolean, Some("false"), Low, "Disable hostname verification. Not recommended for production environments."),
        ("http.ssl.truststore.location", Str, NULL, Low, "Path to the SSL truststore file (not supported here: the system's and the bundled web PKI roots are trusted)."),
        ("http.ssl.truststore.password", Password, NULL, Low, "Password for the SSL truststore."),
        ("http.authorization.type", Str, None, High, "The HTTP authorization type."),
        ("http.headers.authorization", Password, NULL, Medium, "The static content of Authorization header. Must be set along with 'static' authorization type."),
        ("http.headers.content.type", Str, NULL, Low, "The value of Content-Type that will be send with each request. Must be non-blank."),
        ("http.headers.additional", List, Some(""), Low, "Additional headers to forward in the http request in the format header:value separated by a comma, headers are case-insensitive and no duplicate headers are allowed."),
        ("oauth2.access.token.url", Str, NULL, High, "The URL to be used for fetching an access token. Client Credentials is the only supported grant type."),
        ("oauth2.request.grant.type.property", Str, Some("grant_type"), High, "The grant type Key used for fetching an access token."),
        ("oauth2.grant.type", Str, Some("client_credentials"), High, "The grant type used for fetching an access token."),
        ("oauth2.request.client.id.property", Str, Some("client_id"), High, "The client id Key used for fetching an access token."),
        ("oauth2.client.id", Str, NULL, High, "The client id used for fetching an access token."),
        ("oauth2.request.client.secret.property", Str, Some("client_secret"), High, "The secret Key used for fetching an access token."),
        ("oauth2.client.secret", Password, NULL, High, "The secret used for fetching an access token."),
        ("oauth2.client.authorization.mode", Str, Some("HEADER"), Medium, "Specifies how to encode client_id and client_secret in the OAuth2 authorization request: HEADER (a Basic Authorization header) or URL (form parameters)."),
        ("oauth2.client.scope", Str, NULL, Low, "The scope used for fetching an access token."),
        ("oauth2.response.token.property", Str, Some("access_token"), Low, "The name of the JSON property containing the access token returned by the OAuth2 provider. Default value is access_token."),
        ("oauth2.token.renew.on.status.codes", List, Some("401"), Low, "Comma separated list of HTTP response status codes which should trigger an access token renewal"),
    ];
    let batching: &[Row] = &[
        ("batching.enabled", Boolean, Some("false"), High, "Whether to enable batching multiple records in a single HTTP request."),
        ("batch.max.size", Int, Some("500"), Medium, "The maximum size of a record batch to be sent in a single HTTP request."),
        ("batch.prefix", Str, Some(""), High, "Prefix added to record batches. Written once before the first record of a batch. Defaults to \"\"."),
        ("batch.suffix", Str, NULL, High, "Suffix added to record batches. Written once after the last record of a batch. Defaults to \"\\n\"."),
        ("batch.separator", Str, NULL, High, "Separator for records in a batch. Defaults to \"\\n\"."),
    ];
    let delivery: &[Row] = &[
        ("kafka.retry.backoff.ms", Long, NULL, Medium, "The retry backoff in milliseconds before records are delivered again after a transient failure."),
        ("max.retries", Int, Some("1"), Medium, "The maximum number of times to retry on errors when sending a batch before handing the failure to the worker."),
        ("retry.backoff.ms", Int, Some("3000"), Medium, "The time in milliseconds to wait following an error before a retry attempt is made."),
        ("http.timeout", Int, Some("30"), Low, "HTTP Response timeout (seconds). Default is 30 seconds."),
        ("decimal.format", Str, Some("BASE64"), Low, "Controls which format this converter will serialize decimals in: BASE64 (default) or NUMERIC."),
    ];
    let mut def = define(
        "Connection",
        connection,
        vec![
            ("http.proxy.port", Validator::Between(-1.0, 65535.0)),
            (
                "oauth2.client.authorization.mode",
                Validator::OneOfCaseInsensitive(vec!["HEADER", "URL"]),
            ),
        ],
    );
    def = def.merge(&define(
        "Batching",
        batching,
        vec![("batch.max.size", Validator::Between(1.0, 1_000_000.0))],
    ));
    def.merge(&define(
        "Delivery",
        delivery,
        vec![
            (
                "kafka.retry.backoff.ms",
                Validator::NullOr(Box::new(Validator::Between(0.0, 86_400_000.0))),
            ),
            ("max.retries", Validator::AtLeast(0.0)),
            ("retry.backoff.ms", Validator::AtLeast(0.0)),
            ("http.timeout", Validator::AtLeast(1.0)),
            (
                "decimal.format",
                Validator::OneOfCaseInsensitive(vec!["BASE64", "NUMERIC"]),
            ),
        ],
    ))
}

/// `io.confluent.connect.http.HttpSinkConnector`'s public keys.
pub fn confluent() -> ConfigDef {
    use Importance::{High, Low, Medium};
    let connection: &[Row] = &[
        ("http.api.url", Str, None, High, "The HTTP API URL; ${topic} and ${key} are replaced with the record's topic and key."),
        ("request.method", Str, Some("POST"), High, "The HTTP request method: POST, PUT or PATCH."),
        ("behavior.on.null.values", Str, Some("ignore"), Low, "How to handle records with a null value (tombstones): ignore, delete, log or fail."),
        ("behavior.on.error", Str, Some("fail"), Low, "What to do when the API refuses a request: fail (the record goes to the worker's error handling: errors.tolerance and the dead letter queue), log, or ignore."),
        ("headers", Str, Some(""), High, "HTTP headers, name:value, separated by header.separator."),
        ("header.separator", Str, Some("|"), High, "The separator of the headers property."),
        ("http.proxy.host", Str, Some(""), High, "The host or IP of the HTTP proxy."),
        ("http.proxy.port", Int, Some("0"), High, "The port of the HTTP proxy."),
        ("http.connect.timeout.ms", Int, Some("30000"), Low, "How long to wait for a connection, in milliseconds."),
        ("http.request.timeout.ms", Int, Some("30000"), Low, "How long to wait for an answer, in milliseconds."),
        ("request.body.format", Str, Some("string"), Medium, "How a record value is written in the request body: string or json."),
    ];
    let auth: &[Row] = &[
        ("auth.type", Str, Some("NONE"), High, "Authentication type of the endpoint: NONE, BASIC or OAUTH2."),
        ("connection.user", Str, NULL, High, "The username for BASIC authentication."),
        ("connection.password", Password, NULL, High, "The password for BASIC authentication."),
        ("oauth2.token.url", Str, NULL, High, "The URL to fetch an OAuth2 access token from (client credentials grant)."),
        ("oauth2.client.id", Str, NULL, High, "The OAuth2 client id."),
        ("oauth2.client.secret", Password, NULL, High, "The OAuth2 client secret."),
        ("oauth2.token.property", Str, Some("access_token"), Low, "The property of the token endpoint's JSON answer that holds the access token."),
        ("oauth2.client.scope", Str, Some("any"), Low, "The scope asked for with the access token."),
        ("oauth2.client.auth.mode", Str, Some("header"), Low, "How the client id and secret are sent to the token endpoint: header (Basic authorization) or url (form parameters)."),
    ];
    let batching: &[Row] = &[
        ("batch.key.pattern", Str, Some("someKey"), High, "Pattern used to build the key for a given batch (accepted for compatibility; batches follow the resolved URL)."),
        ("batch.max.size", Int, Some("1"), High, "The number of records accumulated in a batch before the HTTP API will be invoked."),
        ("batch.prefix", Str, Some(""), High, "Prefix added to record batches, once at the beginning of the batch."),
        ("batch.suffix", Str, Some(""), High, "Suffix added to record batches, once at the end of the batch."),
        ("batch.separator", Str, Some(","), High, "Separator for records in a batch."),
        ("batch.json.as.array", Boolean, Some("false"), High, "With request.body.format=json, send a batch as a JSON array."),
    ];
    let retries: &[Row] = &[
        ("max.retries", Int, Some("10"), Medium, "The maximum number of times to retry on errors before handing the failure to the worker."),
        ("retry.backoff.ms", Int, Some("3000"), Medium, "The time in milliseconds to wait following an error before a retry attempt is made."),
        ("retry.on.status.codes", Str, Some("400-"), Medium, "The HTTP status codes to retry: codes and ranges (400-, 500-599), comma-separated."),
    ];
    let one_of = |v: Vec<&'static str>| Validator::OneOfCaseInsensitive(v);
    let def = define(
        "Connection",
        connection,
        vec![
            ("request.method", one_of(vec!["POST", "PUT", "PATCH"])),
            (
                "behavior.on.null.values",
                one_of(vec!["IGNORE", "DELETE", "LOG", "FAIL"]),
            ),
            ("behavior.on.error", one_of(vec!["FAIL", "LOG", "IGNORE"])),
            ("http.proxy.port", Validator::Between(0.0, 65535.0)),
            ("http.connect.timeout.ms", Validator::AtLeast(1.0)),
            ("http.request.timeout.ms", Validator::AtLeast(1.0)),
            ("request.body.format", one_of(vec!["STRING", "JSON"])),
        ],
    );
    def.merge(&define(
        "Authentication",
        auth,
        vec![
            ("auth.type", one_of(vec!["NONE", "BASIC", "OAUTH2"])),
            ("oauth2.client.auth.mode", one_of(vec!["HEADER", "URL"])),
        ],
    ))
    .merge(&define(
        "Batching",
        batching,
        vec![("batch.max.size", Validator::Between(1.0, 1_000_000.0))],
    ))
    .merge(&define(
        "Retries",
        retries,
        vec![
            ("max.retries", Validator::AtLeast(0.0)),
            ("retry.backoff.ms", Validator::AtLeast(0.0)),
        ],
    ))
}
