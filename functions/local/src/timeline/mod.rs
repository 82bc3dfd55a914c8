//! What a replay reports: a timeline of events and a closing summary,
//! written as readable text ([`TextSink`]) or as one JSON object per line
//! ([`JsonSink`]).

mod json;
mod text;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use myao::app::judgment::Ruling;
use myao::app::proactive::ProactiveOutcome;
use myao::domain::rules::Gate;
use myao::domain::{Channel, MemoryKind, Ts, UserId};
use myao::ports::LlmRole;

use crate::twins::RoleStats;

pub use json::{event_json, summary_json, JsonSink};
pub use text::{span, thousands, TextSink};

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

/// What a judgment decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The LLM, asked in the rule stage's ambiguous band, wants to speak.
    Respond {
        delay_seconds: i64,
        reply_at: DateTime<Utc>,
        /// Where the reply goes: the thread of the judged conversation, or
        /// of the earlier top-level message it answers (`None`: the top level).
        reply_thread: Option<Ts>,
        reason: String,
        confidence: f64,
        /// The answer's form: `reaction`, `short` or `full`.
        form: &'static str,
    },
    /// The LLM, asked in the ambiguous band, declined.
    Declined { reason: String, confidence: f64 },
    /// The LLM failed or its answer was no verdict: silence.
    NoVerdict { reason: String },
    /// No LLM: in the ambiguous band, the prompt is all there is.
    DryRun,
    /// The rule stage scored at or above its high threshold: a reply is
    /// due without asking the LLM.
    Sure {
        delay_seconds: i64,
        reply_at: DateTime<Utc>,
        reply_thread: Option<Ts>,
    },
    /// The rule stage scored below its low threshold: silent, no LLM call.
    Quiet,
    /// The channel had its unprompted replies of the hour
    /// (`max_unprompted_per_channel_hour`).
    Capped,
    /// A newer message came in; its own judgment decides.
    Stale,
    /// A gate closed before any score: the bot spoke last, the message is
    /// too old, the channel is mentions only, cooling down or backed off.
    Held(Gate),
    /// Every message of the conversation was deleted.
    Empty,
}

impl Verdict {
    /// The name of the outcome, for counts and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Respond { .. } => "respond",
            Verdict::Declined { .. } => "declined",
            Verdict::NoVerdict { .. } => "no verdict",
            Verdict::DryRun => "dry run",
            Verdict::Sure { .. } => "sure",
            Verdict::Quiet => "quiet",
            Verdict::Capped => "capped",
            Verdict::Stale => "stale",
            Verdict::Held(gate) => held_name(*gate),
            Verdict::Empty => "empty",
        }
    }
}

/// The name of a proactive judgment's outcome, for counts and JSON: the
/// outcome's own ([`ProactiveOutcome::name`]), or `dry run` for the no
/// verdict of a replay without an LLM.
pub fn proactive_name(outcome: &ProactiveOutcome, dry_run: bool) -> &'static str {
    match outcome {
        ProactiveOutcome::Silent { .. } if dry_run => "dry run",
        other => other.name(),
    }
}

/// The verdict name of a judgment held by `gate`.
fn held_name(gate: Gate) -> &'static str {
    match gate {
        Gate::BotSpokeLast => "bot spoke last",
        Gate::TooOld => "too old",
        Gate::MentionsOnly => "held: mentions_only",
        Gate::Cooldown => "held: cooldown",
        Gate::Backoff => "held: backoff",
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
        /// The rule stage's score, signals, thresholds and decision; `None`
        /// when no score was made (stale, empty, held by a gate).
        ruling: Option<Ruling>,
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

/// The closing summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub dry_run: bool,
    /// New messages stored (the bot's replies not included).
    pub messages: usize,
    pub channels: usize,
    /// Threads the stored messages belong to.
    pub threads: usize,
    pub edits: usize,
    pub deletions: usize,
    /// Entries not acted on, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Judgments by outcome.
    pub judgments: BTreeMap<&'static str, usize>,
    pub replies: usize,
    pub mention_replies: usize,
    /// Reactions the bot added, short replies among the replies.
    pub reactions: usize,
    pub short_replies: usize,
    /// Proactive judgments by outcome, and the topics opened (posts, among
    /// the replies) by channel name.
    pub proactive: BTreeMap<String, usize>,
    pub openers: BTreeMap<String, usize>,
    /// What the bot remembers at the end: channel name and fact.
    pub learnt: Vec<(String, String)>,
    /// Response jobs that posted nothing, by reason.
    pub no_replies: BTreeMap<String, usize>,
    /// Memories written, by `scope kind` (`channel short`).
    pub memories: BTreeMap<String, usize>,
    pub llm: BTreeMap<&'static str, RoleStats>,
    pub prompts_written: usize,
    pub jobs_run: usize,
    /// Memory sweeps among the jobs run.
    pub sweeps: usize,
    pub job_failures: usize,
    /// Jobs still pending when the replay stopped (after its bound).
    pub jobs_left: usize,
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    pub elapsed: std::time::Duration,
}

impl Summary {
    /// The judgments made, whatever they decided.
    pub fn judgment_count(&self) -> usize {
        self.judgments.values().sum()
    }
    pub fn skipped_count(&self) -> usize {
        self.skipped.values().sum()
    }
    pub fn memory_count(&self) -> usize {
        self.memories.values().sum()
    }
    pub fn proactive_count(&self) -> usize {
        self.proactive.values().sum()
    }
    /// The weeks of virtual time the replay covered (at least a day's worth,
    /// so that a short replay does not read as a huge rate).
    pub fn weeks(&self) -> f64 {
        match (self.first, self.last) {
            (Some(first), Some(last)) => {
                ((last - first).num_seconds().max(86_400)) as f64 / 604_800.0
            }
            _ => 0.0,
        }
    }
}

/// Where a replay writes what happens.
pub trait Sink {
    fn header(&mut self, header: &Header) -> io::Result<()>;
    fn event(&mut self, event: &Event) -> io::Result<()>;
    fn summary(&mut self, summary: &Summary) -> io::Result<()>;
}

/// Keeps everything in memory (tests, benchmarks).
#[derive(Debug, Default)]
pub struct Recorder {
    pub header: Option<Header>,
    pub events: Vec<Event>,
    pub summary: Option<Summary>,
    /// Keep no events, only the header and summary (benchmarks).
    pub discard_events: bool,
}

impl Sink for Recorder {
    fn header(&mut self, header: &Header) -> io::Result<()> {
        self.header = Some(header.clone());
        Ok(())
    }
    fn event(&mut self, event: &Event) -> io::Result<()> {
        if !self.discard_events {
            self.events.push(event.clone());
        }
        Ok(())
    }
    fn summary(&mut self, summary: &Summary) -> io::Result<()> {
        self.summary = Some(summary.clone());
        Ok(())
    }
}
