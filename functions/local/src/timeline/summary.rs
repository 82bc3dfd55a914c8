//! The replay's closing summary, in a module of its own: the sinks beside
//! it write it, and should not have to reach back up into the module that
//! gathers the sinks to name it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::twins::RoleStats;

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
    /// Reactions on the bot's posts kept as hints (given or withdrawn).
    pub hints: usize,
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
    /// Digest answers that could not be used (their channel backs off).
    pub unusable_digests: usize,
    pub job_failures: usize,
    /// Jobs still pending when the replay stopped (after its bound).
    pub jobs_left: usize,
    /// Of a replay of several workspaces: how their prompts kept apart.
    pub isolation: Option<Isolation>,
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    pub elapsed: std::time::Duration,
}

/// How a replay of several workspaces kept them apart: each prompt is
/// one workspace's (the job's team), and none may hold a marker word
/// (`MARK-...`) of another's export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Isolation {
    /// Prompts by workspace.
    pub prompts: BTreeMap<String, usize>,
    /// The marker words the exports hold, all told.
    pub markers: usize,
    /// Prompts holding another workspace's marker word: 0 is the measure.
    pub crossing: usize,
    /// The first few of those: prompt number, its workspace, the word.
    pub examples: Vec<(usize, String, String)>,
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
