//! What one job works with ([`JobContext`]): its fields are this module's
//! alone, so that a service asks for the port it uses.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use myao_core::ports::{
    Clock, Embedder, Llm, Metrics, PortError, Queue, Scheduler, SlackApi, Store,
};
use myao_domain::{Settings, UserId};

use crate::Services;

/// What one job works with: the services, the settings it read when it
/// began (a job sees one set of settings from its start to its end) and the
/// time it began. A step asks it for the port it uses (`cx.store()`,
/// `cx.slack()`, ...); a helper that needs one port takes that port alone.
pub struct JobContext<'a> {
    svc: &'a Services,
    settings: Arc<Settings>,
    now: DateTime<Utc>,
}

impl<'a> JobContext<'a> {
    /// A job starting now, with the current settings.
    pub async fn begin(svc: &'a Services) -> Result<JobContext<'a>, PortError> {
        let settings = svc.ports.settings.current().await?;
        Ok(JobContext::at(svc, settings, svc.ports.clock.now()))
    }

    /// A job that began at `now` with `settings` (benchmarks, and jobs
    /// that read their settings themselves).
    pub fn at(svc: &'a Services, settings: Arc<Settings>, now: DateTime<Utc>) -> JobContext<'a> {
        JobContext { svc, settings, now }
    }

    /// The settings the job read when it began.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// When the job began.
    pub fn now(&self) -> DateTime<Utc> {
        self.now
    }

    /// The store, whole; a step that needs one of its parts takes that
    /// part (`&dyn Messages`, `&dyn Claims`, ...), to which this converts.
    pub fn store(&self) -> &'a dyn Store {
        &*self.svc.ports.store
    }

    /// The scheduler, for jobs due a minute or more from now.
    pub fn scheduler(&self) -> &'a dyn Scheduler {
        &*self.svc.ports.scheduler
    }

    /// The queue, for jobs due sooner.
    pub fn queue(&self) -> &'a dyn Queue {
        &*self.svc.ports.queue
    }

    /// The LLM, behind the workspace's daily cap.
    pub fn llm(&self) -> &'a dyn Llm {
        &*self.svc.llm
    }

    /// The embedder, when recall goes by meaning (the `embedder` setting
    /// is not `off`).
    pub fn embedder(&self) -> Option<&'a dyn Embedder> {
        self.svc
            .embedder()
            .filter(|_| self.settings.recall_by_meaning())
    }

    /// Slack's Web API.
    pub fn slack(&self) -> &'a dyn SlackApi {
        &*self.svc.slack
    }

    /// The clock, for a time read after the job began (`now` is when it
    /// began).
    pub fn clock(&self) -> &'a dyn Clock {
        &*self.svc.ports.clock
    }

    /// A draw in `[0, 1)` from the random source.
    pub fn unit(&self) -> f64 {
        self.svc.ports.random.unit()
    }

    /// Where the job's metrics go.
    pub fn metrics(&self) -> &'a dyn Metrics {
        &*self.svc.ports.metrics
    }

    /// The bot's own user id ([`Services::bot_user_id`]), under the job's
    /// settings.
    pub async fn bot_user_id(&self) -> Result<UserId, PortError> {
        self.svc.bot_user_id(&self.settings).await
    }
}
