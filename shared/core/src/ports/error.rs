//! The one failure every port reports, in a file of its own so the ports'
//! submodules can name it without reaching back up into their parent.

use std::sync::Arc;

/// The error underneath a [`PortError`]: an SDK, HTTP or decoding error,
/// kept as its [`source`](std::error::Error::source).
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// A failure of an outside service, the one error type of every port.
///
/// One type, not one per port, because what the core decides from a failure
/// is the same whichever port failed: whether trying again may succeed
/// ([`PortError::is_retryable`]), which the job handler decides in one
/// place (ingest answers 500 on any failure, and Slack retries). The variant is that decision's input;
/// `service` names the port's service; `source` keeps the error underneath.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PortError {
    /// Worth trying again: throttling, 5xx, a transport error, a timeout.
    #[error("{service} unavailable: {detail}")]
    Unavailable {
        service: &'static str,
        detail: String,
        #[source]
        source: Option<Cause>,
    },
    /// Will fail the same way again: bad request, missing permission, bad data.
    #[error("{service} refused: {detail}")]
    Refused {
        service: &'static str,
        detail: String,
        #[source]
        source: Option<Cause>,
    },
    /// The request reached the service, which may have acted on it (a
    /// timeout or a 5xx after sending): trying again could do it twice.
    #[error("{service} may have acted: {detail}")]
    Uncertain {
        service: &'static str,
        detail: String,
        #[source]
        source: Option<Cause>,
    },
}

impl PortError {
    pub fn unavailable(service: &'static str, detail: impl ToString) -> PortError {
        PortError::Unavailable {
            service,
            detail: detail.to_string(),
            source: None,
        }
    }
    pub fn refused(service: &'static str, detail: impl ToString) -> PortError {
        PortError::Refused {
            service,
            detail: detail.to_string(),
            source: None,
        }
    }
    pub fn uncertain(service: &'static str, detail: impl ToString) -> PortError {
        PortError::Uncertain {
            service,
            detail: detail.to_string(),
            source: None,
        }
    }
    /// A refusal caused by `error` (a decoding or validation error), which
    /// it keeps as its source.
    pub fn refused_by<E>(service: &'static str, error: E) -> PortError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        PortError::refused(service, &error).caused_by(error)
    }
    /// The same failure, with `cause` as its source.
    pub fn caused_by<E>(mut self, cause: E) -> PortError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let slot = match &mut self {
            PortError::Unavailable { source, .. }
            | PortError::Refused { source, .. }
            | PortError::Uncertain { source, .. } => source,
        };
        *slot = Some(Arc::new(cause));
        self
    }
    /// The service that failed.
    pub fn service(&self) -> &'static str {
        match self {
            PortError::Unavailable { service, .. }
            | PortError::Refused { service, .. }
            | PortError::Uncertain { service, .. } => service,
        }
    }
    /// What failed, in the adapter's words.
    pub fn detail(&self) -> &str {
        match self {
            PortError::Unavailable { detail, .. }
            | PortError::Refused { detail, .. }
            | PortError::Uncertain { detail, .. } => detail,
        }
    }
    /// Whether a retry may succeed (and cannot do the thing twice).
    pub fn is_retryable(&self) -> bool {
        matches!(self, PortError::Unavailable { .. })
    }
}

/// Two failures are equal when they say the same: the same kind, service
/// and detail (the source is not compared).
impl PartialEq for PortError {
    fn eq(&self, other: &PortError) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.service() == other.service()
            && self.detail() == other.detail()
    }
}

impl Eq for PortError {}
