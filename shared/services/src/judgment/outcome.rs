//! What a judgment came to ([`JudgmentOutcome`]), the rule stage's
//! [`Ruling`] inside it, and why an LLM answer was of no use
//! ([`Unusable`]): the types a judgment hands back, apart from the steps
//! that reach them.

use chrono::{DateTime, Utc};

use myao_core::ports::PortError;
use myao_domain::grounds::Spoke;
use myao_domain::judgment::JudgmentParseError;
use myao_domain::rules::{Decision, Gate, Score, Thresholds};
use myao_domain::JudgmentResult;

use crate::prompts::PromptError;

/// The rule stage's verdict on a conversation: its score, the signals
/// behind it, the thresholds it was held to and what they decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Ruling {
    pub score: Score,
    pub thresholds: Thresholds,
    pub decision: Decision,
    /// The points the channel's hints moved `thresholds` by from the set
    /// ones (positive: it speaks less), 0 when they moved nothing (no
    /// hint, or the bounds held the move back).
    pub tuned: i32,
}

impl Ruling {
    /// `decision score=N signals` without any word of the conversation: the
    /// line logged at INFO and shown in the local timeline.
    pub fn explain(&self) -> String {
        let tuned = match self.tuned {
            0 => String::new(),
            points => format!(" tuned={points:+}"),
        };
        format!(
            "{} score={} [{}..{}){tuned} {}",
            self.decision.name(),
            self.score.total,
            self.thresholds.low,
            self.thresholds.high,
            self.score.explain()
        )
    }

    /// How the channel's hints had tuned it, for the `Judgments` metric's
    /// `Tuning`: `raised` (it speaks less), `lowered`, or `None` at the set
    /// level.
    pub fn tuning(&self) -> Option<&'static str> {
        match self.tuned {
            0 => None,
            points if points > 0 => Some("raised"),
            _ => Some("lowered"),
        }
    }
}

/// What a judgment job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgmentOutcome {
    /// A newer message arrived after the job was made: its own judgment decides.
    Stale,
    /// The conversation has no message left (all deleted).
    Empty,
    /// A gate closed before any score or LLM call ([`myao_domain::rules::GATES`]).
    Held(Gate),
    /// The rule stage scored below the low threshold, or its waiting
    /// question is not left to the room yet (judged again then,
    /// [`Score::again`]): silent, no LLM call.
    Quiet(Ruling),
    /// The channel had its `max_unprompted_per_channel_hour` replies, or
    /// the workspace its `max_unprompted_per_workspace_hour`.
    Capped(Ruling),
    /// In the ambiguous band, the LLM failed or answered something
    /// unusable: silence.
    Silent { ruling: Ruling, why: Unusable },
    /// In the ambiguous band, the LLM decided not to speak.
    Declined(Ruling, JudgmentResult),
    /// In the ambiguous band, the LLM decided to speak: a response job was
    /// made, due at `at`.
    Respond {
        ruling: Ruling,
        result: JudgmentResult,
        at: DateTime<Utc>,
    },
    /// The rule stage scored at or above the high threshold: a response job
    /// was made without asking the LLM, due at `at`.
    Sure { ruling: Ruling, at: DateTime<Utc> },
}

impl JudgmentOutcome {
    /// The outcome's one name, in the INFO log line and the `Judgments`
    /// metric's `Outcome` (docs/operations.md).
    pub fn name(&self) -> &'static str {
        match self {
            JudgmentOutcome::Stale => "stale",
            JudgmentOutcome::Empty => "empty",
            JudgmentOutcome::Held(Gate::TooOld) => "too_old",
            JudgmentOutcome::Held(_) => "held",
            JudgmentOutcome::Quiet(_) => "rule_silent",
            JudgmentOutcome::Capped(_) => "limited",
            JudgmentOutcome::Silent { .. } => "unusable",
            JudgmentOutcome::Declined(..) => "llm_no",
            // An answer's outcome is its grounds' (`Spoke`).
            JudgmentOutcome::Respond { .. } => Spoke::LlmYes.name(),
            JudgmentOutcome::Sure { ruling, .. } if ruling.decision == Decision::React => {
                Spoke::RuleReact.name()
            }
            JudgmentOutcome::Sure { .. } => Spoke::RuleYes.name(),
        }
    }

    /// The rule stage's ruling behind the outcome: `None` when no score was
    /// made (stale, empty, held by a gate).
    pub fn ruling(&self) -> Option<&Ruling> {
        match self {
            JudgmentOutcome::Stale | JudgmentOutcome::Empty | JudgmentOutcome::Held(_) => None,
            JudgmentOutcome::Quiet(ruling)
            | JudgmentOutcome::Capped(ruling)
            | JudgmentOutcome::Silent { ruling, .. }
            | JudgmentOutcome::Declined(ruling, _)
            | JudgmentOutcome::Respond { ruling, .. }
            | JudgmentOutcome::Sure { ruling, .. } => Some(ruling),
        }
    }
}

/// Why a judgment in the ambiguous band stayed silent: it had no verdict
/// to act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unusable {
    /// Slack refused the bot token lately (the token breaker is open): no
    /// answer could be posted, so no LLM call decided one.
    #[error("token_refused: Slack refused the bot token lately")]
    TokenRefused,
    /// The day's LLM budget refused the call.
    #[error("the day's LLM budget refused the call")]
    OverBudget,
    /// The prompt did not render (a template bug).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The LLM failed after its retries.
    #[error("LLM failed: {0}")]
    Llm(PortError),
    /// The answer is not a verdict; `answer` holds its first characters.
    #[error("{error}: {answer:?}")]
    NotAVerdict {
        error: JudgmentParseError,
        answer: String,
    },
}

impl Unusable {
    /// Its one name, for the INFO line (no word of the LLM's).
    pub fn name(&self) -> &'static str {
        match self {
            Unusable::TokenRefused => "token_refused",
            Unusable::OverBudget => "over_budget",
            Unusable::Prompt(_) => "prompt",
            Unusable::Llm(_) => "llm_failed",
            Unusable::NotAVerdict { .. } => "not_a_verdict",
        }
    }
}
