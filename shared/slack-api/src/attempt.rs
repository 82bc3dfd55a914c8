//! How a call is sent again, what it sends, and what one attempt came to.

use std::time::Duration;

use serde_json::Value;

/// Whether a call may be sent again after an answer that may mean it took
/// effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// A read: sending it twice does no harm.
    Safe,
    /// `chat.postMessage`: after a 5xx, a timeout or a connection lost once
    /// the request was out, Slack may well have posted the message (a 5xx
    /// can come from a proxy after the post was done; a timeout says nothing
    /// at all). Posting again would show the reply twice, which users notice
    /// far more than a missing one. So it is retried only when Slack surely
    /// did not post: a 429 / `ratelimited`, or a connection that was never
    /// made. Otherwise the call returns `Unavailable` at once, its detail
    /// saying that the message may have been posted; the caller must not
    /// post it again blindly either.
    OnlyIfUnsent,
    /// `assistant.threads.setStatus`: a sign of life is worth nothing late,
    /// and the reply must not wait for it: tried once, never waited for.
    Once,
}

/// How a method's arguments travel.
pub(crate) enum Args<'a> {
    Query(&'a [(&'a str, &'a str)]),
    Json(Value),
}

/// What one attempt came to.
pub(crate) enum Attempt {
    Done(Value),
    /// Slack did nothing and asks to wait this long.
    RateLimited(Duration),
    /// The request never reached Slack.
    Unsent(String),
    /// The request reached Slack, which may have acted on it.
    MaybeDone(String),
    /// Will fail the same way again.
    Refused(String),
}
