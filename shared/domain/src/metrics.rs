//! What the functions count: the metrics' names, units and dimensions.
//! How a count is written for CloudWatch (its Embedded Metric Format) is the
//! metrics adapter's (`myao_core::adapters::metrics`).
//!
//! The names below are what the stack's alarms and dashboard watch
//! (`template.yaml`), in the namespace `myao/<stack>`.

/// Events ingest received, by `Kind`.
pub const EVENTS: &str = "EventsIngested";
/// Slack's `app_rate_limited`: the workspace sent the app more than 30,000
/// events in an hour and Slack holds the rest back (and switches the
/// subscription off when 5 % of its deliveries fail in an hour): no
/// dimension, for the alarm.
pub const SLACK_EVENTS_RATE_LIMITED: &str = "SlackEventsRateLimited";
/// Judgments, by `Outcome`: `rule_silent`, `rule_yes`, `rule_react`,
/// `llm_yes`, `llm_no`, `unusable`, `stale`, `too_old`, `held`, `limited`,
/// `empty`.
pub const JUDGMENTS: &str = "Judgments";
/// Answers posted or added, by `Form`: `full`, `short`, `reaction`,
/// `opener` (a topic the bot opened unasked).
pub const ANSWERS: &str = "Answers";
/// Proactive judgments (whether to open a topic in a quiet channel), by
/// `Outcome`: `open`, `declined`, `unusable`, `stale`, `already_done`, or
/// the hold that stopped it before the LLM (`outside_hours`, `week_full`,
/// `bot_spoke_last`, ...).
pub const PROACTIVE_JUDGMENTS: &str = "ProactiveJudgments";
/// LLM calls, by `Role`.
pub const LLM_CALLS: &str = "LlmCalls";
/// LLM calls that failed after their retries (an expired key, an outage):
/// no dimension, for the alarm.
pub const LLM_FAILURES: &str = "LlmFailures";
/// LLM answers that could not be used (a digest in prose, or JSON cut at
/// the token limit), by `Role`: the call succeeded, the answer did not.
pub const LLM_UNUSABLE: &str = "LlmUnusableAnswers";
/// LLM calls that answered: no dimension, for the alarm (failures with no
/// success beside them).
pub const LLM_SUCCESSES: &str = "LlmSuccesses";
/// Tokens of the prompts and of the answers, by `Role`.
pub const LLM_TOKENS_IN: &str = "LlmTokensIn";
pub const LLM_TOKENS_OUT: &str = "LlmTokensOut";
/// Of the input tokens, those the provider read from its prompt cache, by
/// `Role`.
pub const LLM_TOKENS_CACHED: &str = "LlmTokensCached";
/// An LLM call's time, retries included, by `Role`.
pub const LLM_LATENCY: &str = "LlmLatency";
/// Slack Web API calls that failed after their retries, by `Method`.
pub const SLACK_ERRORS: &str = "SlackErrors";
/// Slack refusing the token (`invalid_auth`, `token_revoked`,
/// `account_inactive`, `not_authed`): no dimension, for the alarm.
pub const SLACK_AUTH_ERRORS: &str = "SlackAuthErrors";
/// Slack refusing a post in a channel (`not_in_channel`,
/// `channel_not_found`, `is_archived`): no dimension, for the alarm.
pub const SLACK_CHANNEL_REFUSALS: &str = "SlackChannelRefusals";
/// Slack calls given up on its rate limit, by `Method`.
pub const SLACK_RATE_LIMITED: &str = "SlackRateLimited";
/// Mentions (names, DMs) that got no answer (too old, the post failed, no
/// reply written): no dimension, for the alarm (the job's log line says
/// which).
pub const MENTIONS_GIVEN_UP: &str = "MentionsGivenUp";
/// Workspaces' rotating tokens the recurring run could not renew (Slack or
/// the store unavailable: tried again next run; or refused for good: the
/// workspace must install the app again): no dimension, for the alarm.
pub const TOKEN_RENEWAL_FAILURES: &str = "TokenRenewalFailures";
/// Replies a spend limit refused, by `Limit` (the setting's name).
pub const LIMIT_REFUSALS: &str = "LimitRefusals";

/// Slack's error codes that mean the bot token no longer works.
pub const SLACK_AUTH_CODES: &[&str] = &[
    "invalid_auth",
    "token_revoked",
    "account_inactive",
    "not_authed",
    "token_expired",
];

/// Slack's error codes that mean the bot cannot post in a channel, each
/// with what a person does about it.
pub const SLACK_CHANNEL_CODES: &[(&str, &str)] = &[
    (
        "not_in_channel",
        "invite the bot to the channel (/invite @myao)",
    ),
    (
        "channel_not_found",
        "nothing: the channel is gone, or the bot was never in it",
    ),
    ("is_archived", "nothing: the channel was archived"),
];

/// A metric's unit, as EMF names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Milliseconds,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Count => "Count",
            Unit::Milliseconds => "Milliseconds",
        }
    }
}

/// One value of one metric, with at most one dimension and a detail.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    pub name: &'static str,
    pub unit: Unit,
    pub value: f64,
    pub dimension: Option<(&'static str, String)>,
    /// A second dimension within the first, given only where it says
    /// something (the `Judgments` of a channel its hints tuned): published
    /// as its own dimension set beside the first's, so that the metric by
    /// the first alone stays whole.
    pub detail: Option<(&'static str, String)>,
}

impl Datum {
    /// One occurrence of `name`.
    pub fn count(name: &'static str) -> Datum {
        Datum::counted(name, 1)
    }

    /// `n` occurrences of `name`.
    pub fn counted(name: &'static str, n: u64) -> Datum {
        Datum {
            name,
            unit: Unit::Count,
            value: n as f64,
            dimension: None,
            detail: None,
        }
    }

    /// A duration of `ms` milliseconds.
    pub fn millis(name: &'static str, ms: u64) -> Datum {
        Datum {
            name,
            unit: Unit::Milliseconds,
            value: ms as f64,
            dimension: None,
            detail: None,
        }
    }

    /// The same, under the dimension `key` = `value`.
    pub fn by(self, key: &'static str, value: impl Into<String>) -> Datum {
        Datum {
            dimension: Some((key, value.into())),
            ..self
        }
    }

    /// The same, with the detail `key` = `value` within its dimension
    /// (none without one).
    pub fn detailed(self, key: &'static str, value: impl Into<String>) -> Datum {
        Datum {
            detail: self.dimension.is_some().then(|| (key, value.into())),
            ..self
        }
    }
}
