//! Application services: what the functions do, written against the ports.
//! The Lambda functions and the local mode run exactly this code.

pub mod context;
pub mod ingest;
pub mod jobs;
pub mod judgment;
pub mod limits;
pub mod memory;
pub mod response;
pub mod settings;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use tokio::sync::OnceCell;

use crate::domain::{Settings, UserId};
use crate::ports::{
    Clock, Llm, PortError, Queue, RandomSource, Scheduler, SettingsProvider, SlackApi, Store,
};

/// Everything the judgment, response and memory services use.
pub struct Services {
    pub store: Arc<dyn Store>,
    pub scheduler: Arc<dyn Scheduler>,
    pub queue: Arc<dyn Queue>,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn RandomSource>,
    pub settings: Arc<dyn SettingsProvider>,
    pub llm: Arc<dyn Llm>,
    pub slack: Arc<dyn SlackApi>,
    bot_user_id: OnceCell<UserId>,
}

impl Services {
    /// The services over these ports. `llm` is put behind the workspace's
    /// daily cap ([`limits::CappedLlm`]), so that no assembly of the
    /// services can make an LLM call the cap did not count.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Arc<dyn Store>,
        scheduler: Arc<dyn Scheduler>,
        queue: Arc<dyn Queue>,
        clock: Arc<dyn Clock>,
        random: Arc<dyn RandomSource>,
        settings: Arc<dyn SettingsProvider>,
        llm: Arc<dyn Llm>,
        slack: Arc<dyn SlackApi>,
    ) -> Services {
        let llm: Arc<dyn Llm> = Arc::new(limits::CappedLlm::new(
            llm,
            store.clone(),
            settings.clone(),
            clock.clone(),
        ));
        Services {
            store,
            scheduler,
            queue,
            clock,
            random,
            settings,
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
