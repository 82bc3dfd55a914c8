//! Application services: what the functions do, written against the ports.
//! The Lambda functions and the local mode run exactly this code.

// The job functions' services (feature `jobs`); ingest needs none of them.
#[cfg(feature = "jobs")]
pub mod context;
#[cfg(feature = "jobs")]
pub mod files;
pub mod ingest;
#[cfg(feature = "jobs")]
pub mod jobs;
#[cfg(feature = "jobs")]
pub mod judgment;
#[cfg(feature = "jobs")]
pub mod limits;
#[cfg(feature = "jobs")]
pub mod memory;
#[cfg(feature = "jobs")]
pub mod proactive;
#[cfg(feature = "jobs")]
pub mod reflection;
#[cfg(feature = "jobs")]
pub mod response;
pub mod settings;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use crate::domain::Settings;
use crate::ports::{Clock, Metrics, Queue, RandomSource, Scheduler, SettingsProvider, Store};
#[cfg(feature = "jobs")]
use {
    crate::domain::UserId,
    crate::ports::{Llm, PortError, SlackApi},
    tokio::sync::OnceCell,
};

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

/// Everything the judgment, response and memory services use: the
/// [`Ports`], the LLM and Slack.
#[cfg(feature = "jobs")]
pub struct Services {
    pub ports: Ports,
    pub llm: Arc<dyn Llm>,
    pub slack: Arc<dyn SlackApi>,
    bot_user_id: OnceCell<UserId>,
}

#[cfg(feature = "jobs")]
impl Services {
    /// The services over these ports. `llm` is put behind the workspace's
    /// daily cap ([`limits::CappedLlm`]), so that no assembly of the
    /// services can make an LLM call the cap did not count.
    pub fn new(ports: Ports, llm: Arc<dyn Llm>, slack: Arc<dyn SlackApi>) -> Services {
        let llm: Arc<dyn Llm> = Arc::new(limits::CappedLlm::new(
            llm,
            ports.store.clone(),
            ports.settings.clone(),
            ports.clock.clone(),
        ));
        Services {
            ports,
            llm,
            slack,
            bot_user_id: OnceCell::new(),
        }
    }

    /// The bot's own user id: the `bot_user_id` setting, else `auth.test`
    /// (asked once per process).
    pub async fn bot_user_id(&self, settings: &Settings) -> Result<UserId, PortError> {
        if let Some(id) = &settings.bot_user_id {
            return Ok(id.clone());
        }
        self.bot_user_id
            .get_or_try_init(|| async { self.slack.auth_test().await })
            .await
            .cloned()
    }
}

/// What one job works with: the services, the settings it read when it
/// began (a job sees one set of settings from its start to its end) and the
/// time it began. Passed as one, instead of the three apart.
#[cfg(feature = "jobs")]
pub struct JobContext<'a> {
    pub svc: &'a Services,
    pub settings: Arc<Settings>,
    pub now: DateTime<Utc>,
}

#[cfg(feature = "jobs")]
impl<'a> JobContext<'a> {
    /// A job starting now, with the current settings.
    pub async fn begin(svc: &'a Services) -> Result<JobContext<'a>, PortError> {
        Ok(JobContext {
            settings: svc.ports.settings.current().await?,
            now: svc.ports.clock.now(),
            svc,
        })
    }
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
