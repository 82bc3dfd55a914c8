//! The services' one bundle of ports and clients ([`Services`]): what a
//! job function builds once per cold start and every job borrows.

use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::cap::CappedLlm;
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
    /// daily cap ([`CappedLlm`]), so that no assembly of the
    /// services can make an LLM call the cap did not count.
    pub fn new(ports: Ports, llm: Arc<dyn Llm>, slack: Arc<dyn SlackApi>) -> Services {
        let capped: Arc<dyn Llm> = Arc::new(CappedLlm::new(
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
