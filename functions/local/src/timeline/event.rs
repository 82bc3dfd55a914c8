//! The timeline's header and its events, in a module of their own: the
//! sinks beside them write them, and should not have to reach back up into
//! the module that gathers the sinks to name them.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use myao_core::ports::LlmRole;
use myao_domain::{Channel, MemoryKind, Ts, UserId};
use myao_services::judgment::{JudgmentOutcome, Ruling};
use myao_services::proactive::ProactiveOutcome;

/// What the replay is about to do.
#[derive(Debug, Clone)]
pub struct Header {
    pub source: String,
    pub channels: Vec<Channel>,
    pub users: usize,
    pub entries: usize,
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    pub bot_user_id: UserId,
    pub bot_name: String,
    /// `None` for a dry run; else the endpoint and models.
    pub llm: Option<String>,
    pub min_wait_seconds: u32,
    pub jitter_ratio: f64,
    pub autonomous_replies: bool,
    pub memory_interval_seconds: Option<i64>,
    pub seed: u64,
    pub timezone: Tz,
}

/// A prompt sent to the LLM (recorded in a dry run, or with a prompts folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// 1, 2, 3... in the order they were made.
    pub number: usize,
    pub role: LlmRole,
    pub chars: usize,
    pub text: String,
    /// Where it was written, with `--prompts-dir`.
    pub file: Option<PathBuf>,
}

/// The name of what a replay without an LLM shows where the LLM would
/// have judged (a judgment's or a proactive judgment's): the prompt is all
/// there is. The replay's only outcome the app has no name for.
pub const DRY_RUN: &str = "dry run";

/// What a judgment decided: the app's own outcome, which names it as the
/// logs and the `Judgments` metric do, and what the replay adds.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: JudgmentOutcome,
    /// No LLM: an unusable answer in the rule stage's ambiguous band is the
    /// dry run's ([`DRY_RUN`]), its prompt all there is.
    pub dry_run: bool,
    /// The reply the judgment made due (`llm_yes`, `rule_yes`,
    /// `rule_react`), if it made one.
    pub reply: Option<DueReply>,
}

/// A reply a judgment made due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueReply {
    /// When it is due, and how long after the judgment that is.
    pub at: DateTime<Utc>,
    pub delay_seconds: i64,
    /// Where the reply goes: the thread of the judged conversation, or of
    /// the earlier top-level message it answers (`None`: the top level).
    pub thread: Option<Ts>,
}

impl Verdict {
    /// The name of the outcome, for counts, JSON and the text timeline:
    /// [`JudgmentOutcome::name`], or [`DRY_RUN`].
    pub fn name(&self) -> &'static str {
        if self.is_dry_run() {
            DRY_RUN
        } else {
            self.outcome.name()
        }
    }

    /// Whether the LLM would have judged, in a replay without one.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run && matches!(self.outcome, JudgmentOutcome::Silent { .. })
    }

    /// The rule stage's score, signals, thresholds and decision; `None`
    /// when no score was made (stale, empty, held by a gate).
    pub fn ruling(&self) -> Option<&Ruling> {
        self.outcome.ruling()
    }
}

/// The name of a proactive judgment's outcome, for counts and JSON: the
/// outcome's own ([`ProactiveOutcome::name`]), or [`DRY_RUN`] for the no
/// verdict of a replay without an LLM.
pub fn proactive_name(outcome: &ProactiveOutcome, dry_run: bool) -> &'static str {
    match outcome {
        ProactiveOutcome::Silent(_) if dry_run => DRY_RUN,
        other => other.name(),
    }
}

/// A memory that was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNote {
    /// `workspace`, `channel #general`, `thread #general 09:00:12`.
    pub label: String,
    /// `workspace`, `channel` or `thread`.
    pub scope: &'static str,
    pub kind: MemoryKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// A message of the export, stored.
    Message {
        ts: Ts,
        user: UserId,
        user_name: String,
        /// As Slack wrote it.
        text: String,
        /// Readable: mentions and links resolved.
        shown: String,
        is_bot: bool,
    },
    Edited {
        ts: Ts,
        user_name: Option<String>,
        text: String,
        /// Whether the edited message was in the replay.
        known: bool,
    },
    Deleted {
        ts: Ts,
        user_name: Option<String>,
        /// The text it had, when it was in the replay.
        text: Option<String>,
    },
    /// An entry the bot does not act on (a join, an unknown subtype...).
    Skipped {
        reason: String,
    },
    Judgment {
        verdict: Verdict,
        prompts: Vec<Prompt>,
    },
    /// The bot posted.
    Reply {
        ts: Ts,
        text: String,
        mention: bool,
        /// One short sentence ("nice!").
        short: bool,
        /// A topic it opened unasked, after a silence (proactive talk).
        opener: bool,
    },
    /// The bot reacted to a message (`user_name`'s, of `on`).
    Reaction {
        on: Ts,
        user_name: Option<String>,
        emoji: String,
        mention: bool,
    },
    /// A person's reaction on one of the bot's posts that is a hint
    /// (`user_name`'s `:emoji:` on the post `on`): kept as a label, and
    /// tuning the channel's judgments from then on.
    Hint(HintGiven),
    /// A response job that posted nothing.
    NoReply {
        mention: bool,
        reason: String,
        prompts: Vec<Prompt>,
    },
    /// A memory job (the recurring sweep, or one thread's refresh).
    Memory {
        sweep: bool,
        written: Vec<MemoryNote>,
        /// The facts reflection wrote.
        facts: Vec<String>,
        llm_calls: usize,
        prompts: Vec<Prompt>,
        /// A dry-run sweep with nothing new since the previous one: it only
        /// asks again for what no LLM answered (the text shows none of these).
        repeat: bool,
        /// The proactive judgments the sweep scheduled: channel name, when.
        proactive: Vec<(String, DateTime<Utc>)>,
    },
    /// A proactive judgment: whether to open a topic in a quiet channel.
    Proactive {
        outcome: ProactiveOutcome,
        /// No LLM: an unusable answer is the dry run's, the prompt is all
        /// there is.
        dry_run: bool,
        prompts: Vec<Prompt>,
    },
    JobFailed {
        job: String,
        error: String,
    },
}

/// A person's hint on one of the bot's posts ([`EventKind::Hint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintGiven {
    /// The post.
    pub on: Ts,
    pub user_name: String,
    pub emoji: String,
    /// `positive`, `negative` or `mute`.
    pub hint: String,
    /// Withdrawn (`reaction_removed`) rather than given.
    pub withdrawn: bool,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The virtual time.
    pub at: DateTime<Utc>,
    pub channel: Option<Channel>,
    /// The thread it belongs to (`None`: the top level, or no conversation).
    pub thread_ts: Option<Ts>,
    pub kind: EventKind,
}
