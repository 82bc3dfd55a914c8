//! What a response job came to, and why it wrote no reply.

use myao_core::ports::PortError;
use myao_domain::metrics::{self, Datum};
use myao_domain::{EmojiName, Reply, ResponseJob, Ts};

use crate::prompts::PromptError;

/// What a response job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseOutcome {
    /// A newer message arrived: its own judgment decides.
    Stale,
    /// This job was already handled (a duplicate delivery).
    AlreadyDone,
    /// A mention older than `mention_max_age_seconds` (a late redelivery):
    /// dropped, a late answer being worse than none.
    TooOld,
    /// No reply was written: nothing posted.
    NoReply(NoReply),
    /// Slack refused or failed the post.
    PostFailed(PortError),
    /// Posted.
    Posted { ts: Ts, text: String },
    /// Reacted with `emoji` on the message `ts` (or had already).
    Reacted { ts: Ts, emoji: EmojiName },
    /// A spend limit refused it before any LLM call (`notice`: the notice
    /// posted for a mention, if one was).
    Limited {
        limit: myao_domain::limits::Limit,
        notice: Option<Ts>,
    },
}

impl ResponseOutcome {
    /// The outcome's one name, in the INFO log line.
    pub fn name(&self) -> &'static str {
        match self {
            ResponseOutcome::Stale => "stale",
            ResponseOutcome::AlreadyDone => "already_done",
            ResponseOutcome::TooOld => "too_old",
            ResponseOutcome::NoReply(_) => "no_reply",
            ResponseOutcome::PostFailed(_) => "post_failed",
            ResponseOutcome::Posted { .. } => "posted",
            ResponseOutcome::Reacted { .. } => "reacted",
            ResponseOutcome::Limited { .. } => "limited",
        }
    }
}

impl ResponseOutcome {
    /// What the outcome of `job` counts for: an answer's form, a spend
    /// limit's refusal, a mention given up.
    pub fn metric(&self, job: &ResponseJob) -> Option<Datum> {
        let answered = |form: &str| Some(Datum::count(metrics::ANSWERS).by("Form", form));
        match self {
            ResponseOutcome::Posted { .. } => match job.reply {
                Reply::Short => answered("short"),
                Reply::Opener { .. } => answered("opener"),
                Reply::Full | Reply::Reaction { .. } => answered("full"),
            },
            ResponseOutcome::Reacted { .. } => answered("reaction"),
            ResponseOutcome::Limited { limit, .. } => {
                Some(Datum::count(metrics::LIMIT_REFUSALS).by("Limit", limit.setting()))
            }
            // A mention that got no answer: somebody asked and heard
            // nothing. (One that fails for good ends in the dead-letter
            // queue, whose alarm tells.)
            ResponseOutcome::TooOld
            | ResponseOutcome::PostFailed(_)
            | ResponseOutcome::NoReply(_)
                if job.mention =>
            {
                Some(Datum::count(metrics::MENTIONS_GIVEN_UP))
            }
            _ => None,
        }
    }
}

impl From<crate::limits::Refused> for ResponseOutcome {
    fn from(refused: crate::limits::Refused) -> Self {
        ResponseOutcome::Limited {
            limit: refused.limit,
            notice: refused.notice,
        }
    }
}

/// Why no reply was written, and none is worth retrying.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoReply {
    /// Slack refused the bot token lately (the token breaker is open): a
    /// reply could not be posted, so no LLM call wrote one.
    #[error("token_refused: Slack refused the bot token lately")]
    TokenRefused,
    /// The prompt did not render (a template bug).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The LLM failed in a way a retry would not mend.
    #[error("LLM failed: {0}")]
    Llm(PortError),
    /// The LLM wrote an empty reply.
    #[error("the LLM wrote an empty reply")]
    Empty,
}

impl NoReply {
    /// Its one name, for the INFO line (no word of the LLM's).
    pub fn name(&self) -> &'static str {
        match self {
            NoReply::TokenRefused => "token_refused",
            NoReply::Prompt(_) => "prompt",
            NoReply::Llm(_) => "llm_failed",
            NoReply::Empty => "empty",
        }
    }
}
