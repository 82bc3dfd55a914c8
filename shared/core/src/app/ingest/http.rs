//! What ingest reads of an HTTP request and answers, apart from the service
//! so that the refusals and interactions beside it answer alike without
//! leaning on the module root.

/// Bodies larger than this are refused with 413.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The parts of an HTTP request that ingest reads.
#[derive(Debug, Clone, Copy)]
pub struct IngestRequest<'a> {
    /// `X-Slack-Request-Timestamp`.
    pub timestamp: Option<&'a str>,
    /// `X-Slack-Signature`.
    pub signature: Option<&'a str>,
    /// `X-Slack-Retry-Num`, for the logs.
    pub retry_num: Option<&'a str>,
    /// The raw body, exactly as received.
    pub body: &'a [u8],
}

/// The HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestResponse {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl IngestResponse {
    pub(super) fn text(status: u16, body: impl Into<String>) -> IngestResponse {
        IngestResponse {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
    pub(super) fn ok() -> IngestResponse {
        IngestResponse::text(200, "")
    }
    /// A failure Slack should retry (the conditional write makes it safe).
    pub(super) fn retry_later() -> IngestResponse {
        IngestResponse::text(500, "temporarily unavailable")
    }
}
