//! What an eval measured, in a module of its own: the page of
//! [`super::html`] and its charts read it too, and should not have to reach
//! back up into the module that runs the replays to name it.

use std::collections::{BTreeMap, BTreeSet};

use myao_domain::rules::Chattiness;
use myao_domain::{ChannelId, Ts};
use serde::Serialize;
use serde_json::{json, Value};

use super::curve;
use super::figures::{self, Figures};

/// What the judgment cost, beside the figures of what the bot said.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    #[serde(flatten)]
    pub figures: Figures,
    /// Judgments run (stale ones not counted: a newer message took over).
    pub judgments: usize,
    /// Judgments that reached the gates and the rule stage (not stale, not
    /// empty): the LLM calls of one call per quiet period.
    pub baseline: usize,
    /// LLM judgment calls: the rule stage's ambiguous band (offline, the
    /// calls an LLM would get).
    pub llm_calls: usize,
    /// Judgments the rule stage decided alone: quiet or sure.
    pub spared: usize,
    /// Judgments in the ambiguous band (offline, silent).
    pub ambiguous: usize,
    /// Posts of the bot, unprompted or not.
    pub posts: usize,
    /// Of the posts, the short ones ("nice!").
    pub short_posts: usize,
    /// Emoji reactions of the bot (not posts: they answer nothing).
    pub reactions: usize,
    /// Proactive judgments (whether to open a topic in a quiet channel).
    pub proactive_judgments: usize,
    /// Topics the bot opened unasked: posts too, but kept out of the
    /// figures (they answer no question and intrude on no exchange).
    pub openers: usize,
    /// The wait before a question is left to the room that the channel's
    /// learned answer times came to, at its last judgment of a waiting
    /// question; `None` while it had too little history (its pace decided),
    /// and in a total.
    pub learned_wait_seconds: Option<i64>,
    /// People's positive hints on the bot's posts (reactions kept as
    /// labels: the export's, or `--react`'s), less the withdrawn ones.
    pub hints_positive: usize,
    /// Their negative hints (mutes included), less the withdrawn ones.
    pub hints_negative: usize,
}

impl Counts {
    /// The share of the baseline's calls the rule stage spared.
    pub fn spared_rate(&self) -> f64 {
        if self.baseline == 0 {
            0.0
        } else {
            self.spared as f64 / self.baseline as f64
        }
    }

    /// Topics opened per channel-week (168 channel-hours).
    pub fn openers_per_week(&self) -> f64 {
        if self.figures.hours > 0.0 {
            self.openers as f64 * 168.0 / self.figures.hours
        } else {
            0.0
        }
    }

    pub(super) fn add(&mut self, other: &Counts) {
        self.judgments += other.judgments;
        self.baseline += other.baseline;
        self.llm_calls += other.llm_calls;
        self.spared += other.spared;
        self.ambiguous += other.ambiguous;
        self.posts += other.posts;
        self.short_posts += other.short_posts;
        self.reactions += other.reactions;
        self.proactive_judgments += other.proactive_judgments;
        self.openers += other.openers;
        self.hints_positive += other.hints_positive;
        self.hints_negative += other.hints_negative;
    }

    /// The counts and the rates, as JSON.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        let f = &self.figures;
        v["join_rate"] = json!(f.join_rate());
        v["intrusion_rate"] = json!(f.intrusion_rate());
        v["precision"] = json!(f.precision());
        v["strict_precision"] = json!(f.strict_precision());
        v["preempted_rate"] = json!(f.preempted_rate());
        v["engaged_per_unprompted"] = json!(f.engaged_per_unprompted());
        v["unprompted_per_hour"] = json!(f.per_hour());
        v["spared_rate"] = json!(self.spared_rate());
        v["openers_per_channel_week"] = json!(self.openers_per_week());
        v
    }
}

/// What the bot did, for a report's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    Reply,
    /// A short answer ("nice!").
    Short,
    Reaction,
    /// A topic opened unasked.
    Opener,
}

impl MarkKind {
    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Reply => "reply",
            MarkKind::Short => "short",
            MarkKind::Reaction => "reaction",
            MarkKind::Opener => "opener",
        }
    }
}

/// One of the bot's posts or reactions in a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub channel: ChannelId,
    /// The post's time; for a reaction, the time of the message it is on.
    pub ts: Ts,
    pub thread_ts: Option<Ts>,
    pub kind: MarkKind,
    pub unprompted: bool,
    /// The rule stage's decision, score and signals that let it speak
    /// unprompted ([`Ruling::explain`](myao_services::judgment::Ruling::explain)).
    pub ruling: Option<String>,
    /// What it posted, or the reaction's emoji.
    pub text: String,
}

/// A person's message as the timeline showed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub channel: ChannelId,
    pub ts: Ts,
    pub thread_ts: Option<Ts>,
    pub user_name: String,
    /// Readable: mentions and links resolved.
    pub text: String,
    pub question: bool,
}

/// One level's replay, measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelReport {
    pub level: Chattiness,
    pub channels: BTreeMap<ChannelId, Counts>,
    pub total: Counts,
    /// The bot's posts and reactions, in time order.
    pub marks: Vec<Mark>,
}

/// The levels side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub source: String,
    /// No LLM: the rule stage alone.
    pub offline: bool,
    /// The LLM's endpoint, when there is one.
    pub llm: Option<String>,
    /// The channel names, by id.
    pub names: BTreeMap<ChannelId, String>,
    /// The channels every member of the workspace may read.
    pub public: BTreeSet<ChannelId>,
    /// The people's messages as they stand at the end, in time order.
    pub people: Vec<Said>,
    /// The level of the settings given (the one a deployment would use).
    pub current: Chattiness,
    pub levels: Vec<LevelReport>,
    /// What a wait alone would do with the same questions
    /// ([`curve::room_curve`]).
    pub room: Vec<curve::RoomPoint>,
}

/// The counts of each level over the channels `shown`.
pub(super) fn totals(report: &Report, shown: &[ChannelId]) -> Vec<Counts> {
    report
        .levels
        .iter()
        .map(|level| {
            let channels: BTreeMap<ChannelId, figures::Figures> = shown
                .iter()
                .filter_map(|id| Some((id.clone(), level.channels.get(id)?.figures.clone())))
                .collect();
            let mut total = Counts {
                figures: figures::total(&channels),
                ..Counts::default()
            };
            for id in shown {
                if let Some(c) = level.channels.get(id) {
                    total.add(c);
                }
            }
            total
        })
        .collect()
}
