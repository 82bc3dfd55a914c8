//! Memories: what the bot remembers of the workspace, a channel or a thread.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids::{ChannelId, Ts};

/// What a memory is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum MemoryScope {
    Workspace,
    Channel { channel: ChannelId },
    Thread { channel: ChannelId, thread_ts: Ts },
}

/// Long-term (a dated timeline of everything) or short-term (the recent window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    Long,
    Short,
}

impl MemoryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Long => "long",
            MemoryKind::Short => "short",
        }
    }
}

impl fmt::Display for MemoryScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryScope::Workspace => f.write_str("workspace"),
            MemoryScope::Channel { channel } => write!(f, "channel {channel}"),
            MemoryScope::Thread { channel, thread_ts } => write!(f, "thread {channel}/{thread_ts}"),
        }
    }
}

/// One memory, written by the LLM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    pub scope: MemoryScope,
    pub kind: MemoryKind,
    pub content: String,
    pub updated_at: DateTime<Utc>,
    /// The newest message it covers: a scope with nothing newer needs no rewrite.
    pub newest_ts: Option<Ts>,
}

/// A channel's memories, as the prompts show them (design 04a).
///
/// ```compile_fail
/// use myao_domain::{ChannelId, ChannelMemory};
/// let m = ChannelMemory::new(ChannelId::parse("C1").unwrap(), "general");
/// m.long_term_memory = Some("x".into()); // the fields are private: no mutation
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelMemory {
    channel_id: ChannelId,
    channel_name: String,
    long_term_memory: Option<String>,
    short_term_memory: Option<String>,
    last_active: Option<DateTime<Utc>>,
}

impl ChannelMemory {
    /// A channel with no memory yet.
    pub fn new(channel_id: ChannelId, channel_name: impl Into<String>) -> ChannelMemory {
        ChannelMemory {
            channel_id,
            channel_name: channel_name.into(),
            long_term_memory: None,
            short_term_memory: None,
            last_active: None,
        }
    }

    /// The same channel, last active at `at` (a prompt over its budget
    /// drops the least recently active channels' memories first).
    pub fn with_last_active(mut self, at: DateTime<Utc>) -> Self {
        self.last_active = Some(at);
        self
    }

    pub fn last_active(&self) -> Option<DateTime<Utc>> {
        self.last_active
    }

    /// The same channel with both memories set (`None` for a missing one).
    pub fn with_memories(mut self, long_term: Option<String>, short_term: Option<String>) -> Self {
        self.long_term_memory = long_term.filter(|s| !s.trim().is_empty());
        self.short_term_memory = short_term.filter(|s| !s.trim().is_empty());
        self
    }

    pub fn channel_id(&self) -> &ChannelId {
        &self.channel_id
    }
    pub fn channel_name(&self) -> &str {
        &self.channel_name
    }
    pub fn long_term_memory(&self) -> Option<&str> {
        self.long_term_memory.as_deref()
    }
    pub fn short_term_memory(&self) -> Option<&str> {
        self.short_term_memory.as_deref()
    }
}

#[cfg(test)]
mod tests {
    //! The test table of design 04a, "ChannelMemory".
    use super::*;

    #[test]
    fn required_fields_only_leave_memories_empty() {
        let m = ChannelMemory::new(ChannelId::parse("C1").unwrap(), "general");
        assert_eq!(m.channel_id().as_str(), "C1");
        assert_eq!(m.channel_name(), "general");
        assert_eq!(m.long_term_memory(), None);
        assert_eq!(m.short_term_memory(), None);
    }

    #[test]
    fn all_fields_are_kept() {
        let m = ChannelMemory::new(ChannelId::parse("C1").unwrap(), "general")
            .with_memories(Some("long".into()), Some("short".into()));
        assert_eq!(m.long_term_memory(), Some("long"));
        assert_eq!(m.short_term_memory(), Some("short"));
    }

    #[test]
    fn blank_memories_count_as_none() {
        let m = ChannelMemory::new(ChannelId::parse("C1").unwrap(), "general")
            .with_memories(Some("  ".into()), None);
        assert_eq!(m.long_term_memory(), None);
    }
}
