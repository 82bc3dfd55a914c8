//! The job services: what the judgment, response and memory functions do,
//! written against `myao-core`'s ports, and the prompts they send. The
//! Lambda functions and the local mode run exactly this code, assembled
//! with the adapters by `myao-wire`. No AWS SDK, no HTTP client, no LLM or
//! Slack adapter: this crate's manifest does not name them.

pub mod context;
pub mod files;
pub mod home;
mod job_context;
pub mod jobs;
pub mod judgment;
pub mod limits;
pub mod memory;
pub mod proactive;
pub mod prompts;
pub mod reflection;
pub mod response;
pub mod tokens;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::OnceCell;

pub use job_context::JobContext;
use myao_core::adapters::system::StaticSecrets;
use myao_core::app::Ports;
use myao_core::ports::{Embedder, Llm, PortError, SlackApi, SlackOAuth};
use myao_domain::{Settings, TeamId, UserId};

/// Everything the judgment, response and memory services use: the
/// [`Ports`], the LLM and Slack.
pub struct Services {
    pub ports: Ports,
    pub llm: Arc<dyn Llm>,
    pub slack: Arc<dyn SlackApi>,
    bot_user_id: OnceCell<UserId>,
    /// The LLM before the cap: a team's services count their calls
    /// against their own team's cap.
    uncapped: Arc<dyn Llm>,
    /// Whose work these services do: a team's, or (`None`) the stack's own.
    team: Option<TeamId>,
    /// Slack's OAuth, where the stack renews its workspaces' rotating
    /// tokens (the memory function's recurring run).
    oauth: Option<Arc<dyn SlackOAuth>>,
    /// What tells the meaning of facts and conversations (recall by
    /// meaning); without one, recall goes by words.
    embedder: Option<Arc<dyn Embedder>>,
}

impl Services {
    /// The services over these ports. `llm` is put behind the workspace's
    /// daily cap ([`limits::CappedLlm`]), so that no assembly of the
    /// services can make an LLM call the cap did not count.
    pub fn new(ports: Ports, llm: Arc<dyn Llm>, slack: Arc<dyn SlackApi>) -> Services {
        let capped: Arc<dyn Llm> = Arc::new(limits::CappedLlm::new(
            llm.clone(),
            ports.store.clone(),
            ports.settings.clone(),
            ports.clock.clone(),
        ));
        Services {
            ports,
            llm: capped,
            slack,
            bot_user_id: OnceCell::new(),
            uncapped: llm,
            team: None,
            oauth: None,
            embedder: None,
        }
    }

    /// Has recall (and the facts reflection writes) go by meaning too,
    /// with `embedder`.
    pub fn recall_by_meaning_with(&mut self, embedder: Arc<dyn Embedder>) {
        self.embedder = Some(embedder);
    }

    /// The embedder, when recall goes by meaning.
    pub fn embedder(&self) -> Option<&dyn Embedder> {
        self.embedder.as_deref()
    }

    /// Has the recurring run renew the installed workspaces' rotating
    /// tokens with `oauth`.
    pub fn renew_tokens_with(&mut self, oauth: Arc<dyn SlackOAuth>) {
        self.oauth = Some(oauth);
    }

    /// Slack's OAuth, when the services renew tokens.
    pub fn oauth(&self) -> Option<&dyn SlackOAuth> {
        self.oauth.as_deref()
    }

    /// The same services doing `team`'s work: its part of the store, its
    /// jobs, its LLM cap, and Slack with its installation's token and bot.
    /// `None` when the team has no installation (never installed, or
    /// uninstalled since): there is no work of its to do but the purge.
    pub async fn for_team(&self, team: &TeamId) -> Result<Option<Services>, PortError> {
        let Some(installation) = self.ports.store.installation(team).await? else {
            return Ok(None);
        };
        // The token as the installation holds it when the job starts: a
        // renewal comes two hours before an expiry, and a job lasts minutes.
        let token = StaticSecrets::new().with(team.as_str(), installation.bot_token.expose());
        let slack = self.slack.clone().for_team(team, Arc::new(token));
        let mut services = Services::new(self.ports.for_team(team), self.uncapped.clone(), slack);
        services.team = Some(team.clone());
        services.bot_user_id = OnceCell::new_with(Some(installation.bot_user_id));
        services.embedder = self.embedder.clone();
        Ok(Some(services))
    }

    /// The services of `team` after its uninstall, for its purge: its part
    /// of the store; Slack as the stack's, since it has no token left (and
    /// a purge calls none).
    pub fn uninstalled(&self, team: &TeamId) -> Services {
        let mut services = Services::new(
            self.ports.for_team(team),
            self.uncapped.clone(),
            self.slack.clone(),
        );
        services.team = Some(team.clone());
        services
    }

    /// Whose work these services do: a team's, or (`None`) the stack's own.
    pub fn team(&self) -> Option<&TeamId> {
        self.team.as_ref()
    }

    /// The bot's own user id: a team's, from its installation; else the
    /// `bot_user_id` setting, else `auth.test` (asked once per process).
    pub async fn bot_user_id(&self, settings: &Settings) -> Result<UserId, PortError> {
        if let Some(id) = self.bot_user_id.get() {
            return Ok(id.clone());
        }
        if let Some(id) = &settings.bot_user_id {
            return Ok(id.clone());
        }
        self.bot_user_id
            .get_or_try_init(|| async { self.slack.auth_test().await })
            .await
            .cloned()
    }
}

/// Jobs whose wait is at least this long go to the scheduler; shorter ones to
/// the queue (EventBridge Scheduler fires with one-minute precision).
pub const SCHEDULER_MIN_DELAY_SECONDS: u32 = 60;

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
