//! The errors the control plane answers with. Each maps to one HTTP status, as Kafka's
//! `ConnectExceptionMapper` maps exceptions, and reaches REST clients as `{"error_code", "message"}`.

use crate::storage::StorageError;

/// A failed request to the herder.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// 400: the request or the config is invalid.
    #[error("{0}")]
    BadRequest(String),
    /// 403: the operation is disabled by the worker config.
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such connector, task, plugin or logger.
    #[error("{0}")]
    NotFound(String),
    /// 409: the connector already exists.
    #[error("{0}")]
    Conflict(String),
    /// 500: the worker could not do it.
    #[error("{0}")]
    Internal(String),
    /// 503: the database has no room (disk full); nothing was changed.
    #[error("{0}")]
    Unavailable(String),
}

impl ConnectError {
    /// The HTTP status this error is answered with.
    pub fn status(&self) -> u16 {
        match self {
            ConnectError::BadRequest(_) => 400,
            ConnectError::Forbidden(_) => 403,
            ConnectError::NotFound(_) => 404,
            ConnectError::Conflict(_) => 409,
            ConnectError::Internal(_) => 500,
            ConnectError::Unavailable(_) => 503,
        }
    }
}

impl From<StorageError> for ConnectError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::DiskFull(_) => ConnectError::Unavailable(e.to_string()),
            StorageError::Conflict(m) => ConnectError::Conflict(m),
            other => ConnectError::Internal(other.to_string()),
        }
    }
}
