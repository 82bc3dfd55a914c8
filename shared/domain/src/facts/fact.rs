//! The fact itself and how much it still counts, out of the module root so
//! that recall and the word matching beneath it name them without leaning
//! on the file that declares them.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::{ChannelId, Ts, UserId};
use crate::meaning::Meaning;

/// A remembered fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// Unique in its channel: the newest source message's `ts` and an index.
    pub id: String,
    pub channel: ChannelId,
    /// Who or what it is about ("Bob", "the deploy job").
    pub subject: String,
    /// The fact, in one sentence.
    pub text: String,
    /// Its keywords, lower case.
    pub keywords: Vec<String>,
    /// Words people who later talk about it are likely to use without
    /// repeating its own (paraphrases, related things, in Japanese and
    /// English), lower case: reflection writes them with the fact, and
    /// recall matches them as it matches the keywords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cues: Vec<String>,
    /// 1 (trivia) to 5 (matters a lot).
    pub importance: u8,
    /// Whether it may be told outside the conversation it came from.
    pub shareable: bool,
    /// The messages it came from: deleting one forgets the fact.
    pub sources: Vec<Ts>,
    /// Who said them.
    pub speakers: Vec<UserId>,
    /// The person it is about, when it is about one the conversation
    /// named (an author or a mentioned member): a fact Bob told of Alice is
    /// Alice's, said by Bob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<UserId>,
    pub written_at: DateTime<Utc>,
    /// A newer fact on the same subject replaced it: kept, marked, not
    /// recalled.
    pub outdated: bool,
    /// What it means, for recall by meaning: written with the fact when an
    /// embedder is there, later by the memory sweep for facts without one
    /// (stored before, or while the embedder failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<Meaning>,
}

/// The importance a fact may have at most.
pub const MAX_IMPORTANCE: u8 = 5;

/// How much a fact still counts, from 0 to 1: its importance (normalised)
/// times its decay, halving every `half_life`. Below the cleanup floor it
/// is forgotten.
pub fn strength(fact: &Fact, now: DateTime<Utc>, half_life: Duration) -> f64 {
    let age = (now - fact.written_at).num_seconds().max(0) as f64;
    let half = half_life.num_seconds().max(1) as f64;
    let decay = (-std::f64::consts::LN_2 * age / half).exp();
    decay * f64::from(fact.importance.clamp(1, MAX_IMPORTANCE)) / f64::from(MAX_IMPORTANCE)
}
