//! The application services that every function shares: the [`Ports`],
//! ingest and the settings cache. The job functions' services (judgment,
//! response, memory, ...) are the crate `myao`'s, over these ports.

pub mod ingest;
pub mod settings;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use crate::domain::Settings;
use crate::ports::{Clock, Metrics, Queue, RandomSource, Scheduler, SettingsProvider, Store};

/// The ports every function uses: the store, the scheduler and the queue
/// (the AWS services, or their in-process twins), time, chance and the
/// settings. [`Ingest`](ingest::Ingest) and [`Services`] each hold a
/// `Ports` (`svc.ports.store`). `crate::wire` assembles them.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn Store>,
    pub scheduler: Arc<dyn Scheduler>,
    pub queue: Arc<dyn Queue>,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn RandomSource>,
    pub settings: Arc<dyn SettingsProvider>,
    pub metrics: Arc<dyn Metrics>,
}

/// When a stored message expires.
pub fn retention(settings: &Settings, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(i64::from(settings.message_retention_days))
}

/// When a memory, a cached user, a channel record or a pending deletion
/// written now expires.
pub fn memory_retention(settings: &Settings, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(i64::from(settings.memory_retention_days))
}

/// Jobs whose wait is at least this long go to the scheduler; shorter ones to
/// the queue (EventBridge Scheduler fires with one-minute precision).
pub const SCHEDULER_MIN_DELAY_SECONDS: u32 = 60;

/// What a memory run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The memories written, in the order they were written.
    pub written: Vec<(crate::domain::MemoryScope, crate::domain::MemoryKind)>,
    /// LLM calls made (a failed or empty answer counts too).
    pub llm_calls: usize,
    /// Jobs queued (the recurring run fans out one job per channel).
    pub queued: usize,
    /// The facts reflection wrote.
    pub facts: Vec<String>,
    /// The proactive judgments the recurring run scheduled: channel, when.
    pub proactive: Vec<(crate::domain::ChannelId, DateTime<Utc>)>,
}

impl MemoryReport {
    /// Adds what another run did.
    pub fn merge(&mut self, other: MemoryReport) {
        self.written.extend(other.written);
        self.llm_calls += other.llm_calls;
        self.queued += other.queued;
        self.facts.extend(other.facts);
        self.proactive.extend(other.proactive);
    }
}
