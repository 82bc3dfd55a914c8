//! What a memory run did ([`MemoryReport`]): the memory runs, the
//! reflection and the job runner all add to one.

use chrono::{DateTime, Utc};

/// What a memory run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The memories written, in the order they were written.
    pub written: Vec<(myao_domain::MemoryScope, myao_domain::MemoryKind)>,
    /// LLM calls made (a failed or empty answer counts too).
    pub llm_calls: usize,
    /// Digest answers that could not be used (prose, JSON cut short): their
    /// channel's digest backs off.
    pub unusable: usize,
    /// Jobs queued (the recurring run fans out one job per channel).
    pub queued: usize,
    /// The facts reflection wrote.
    pub facts: Vec<String>,
    /// The proactive judgments the recurring run scheduled: channel, when.
    pub proactive: Vec<(myao_domain::ChannelId, DateTime<Utc>)>,
}

impl MemoryReport {
    /// Adds what another run did.
    pub fn merge(&mut self, other: MemoryReport) {
        self.written.extend(other.written);
        self.llm_calls += other.llm_calls;
        self.unusable += other.unusable;
        self.queued += other.queued;
        self.facts.extend(other.facts);
        self.proactive.extend(other.proactive);
    }
}
