//! What ingest does not take, before anything is stored: an event sent to
//! another app or from another workspace than the settings name, one with
//! a time Slack would not send, and, on a stack that answers each
//! workspace with its own installation, one from a workspace it is not
//! installed in.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

use super::http::IngestResponse;
use super::outcome::{IgnoreReason, Outcome};
use crate::ports::{Installations, PortError, Queue};
use myao_domain::install::Installation;
use myao_domain::{Job, Settings, TeamId, UserId};
use myao_slack::event::{check_times, SlackEvent};

/// An event an envelope delivers, with what the envelope says of it.
pub(super) struct Delivery {
    /// The bot's user id, from the envelope's authorizations.
    pub(super) bot: Option<UserId>,
    pub(super) event: SlackEvent,
    pub(super) api_app_id: Option<String>,
    pub(super) team_id: Option<String>,
}

/// What ingest answers to an event it does not take: one sent to another
/// app or from another workspace (with `slack_app_id` / `slack_team_id`
/// set; an envelope that names neither is accepted), acknowledged and
/// dropped; one with a time Slack would not send, refused.
pub(super) fn refusal(
    settings: &Settings,
    delivery: &Delivery,
    whose: &Whose,
    now: DateTime<Utc>,
) -> Option<(Outcome, IngestResponse)> {
    let sender = (delivery.api_app_id.as_deref(), delivery.team_id.as_deref());
    if let Some(reason) = another(settings, sender.0, sender.1, whose) {
        return Some((Outcome::Ignored(reason), IngestResponse::ok()));
    }
    if let Err(error) = check_times(&delivery.event, now) {
        tracing::warn!(%error, "refused an event with a time Slack would not send");
        let outcome = Outcome::Refused(error);
        return Some((outcome, IngestResponse::text(400, "malformed event")));
    }
    None
}

/// Whether an event or an interaction was sent to another app or comes
/// from another workspace than `slack_app_id` / `slack_team_id` name (one
/// that names neither is taken). `slack_team_id` names the stack's own
/// workspace: an installed team's event is never "another".
pub(super) fn another(
    settings: &Settings,
    api_app_id: Option<&str>,
    team_id: Option<&str>,
    whose: &Whose,
) -> Option<IgnoreReason> {
    let team_id = match whose {
        Whose::Team(_) => None,
        _ => team_id,
    };
    let differs = |configured: Option<&str>, sent: Option<&str>| {
        configured.zip(sent).is_some_and(|(c, s)| c != s)
    };
    if differs(settings.slack_app_id.as_deref(), api_app_id) {
        return Some(IgnoreReason::AnotherApp);
    }
    if differs(settings.slack_team_id.as_deref(), team_id) {
        return Some(IgnoreReason::AnotherTeam);
    }
    None
}

/// Whose an event or a click is.
pub(super) enum Whose {
    /// The stack's own, as on a single-workspace stack.
    Stack,
    /// An installed team's: kept in its part of the store, answered with
    /// its own token and bot.
    Team(Installation),
    /// Of a team with no installation (or of none), on a stack that takes
    /// installed teams' events only: acknowledged and dropped, nothing
    /// stored.
    NotInstalled,
}

impl Whose {
    /// An event of `team_id` is its team's when the team has an
    /// installation, whatever the settings say now (unsetting
    /// `slack_client_id` stops new installs, not the workspaces installed).
    /// Else it is the stack's when the team is the stack's own ([`Home`]),
    /// and nobody's otherwise: a stranger's, or an uninstalled team's, is
    /// acknowledged and dropped. A stack whose own team is not known yet
    /// takes another's as its own only while it is offered to no other
    /// workspace (no `slack_client_id`), as a single-workspace stack always
    /// has. A stack that takes installed teams' events only
    /// (`installed_only`, the setting `installed_workspaces_only`) has no
    /// own team. One read of the installation per event that names a
    /// team, and of the home once per process ([`Home`]).
    pub(super) async fn of(
        store: &dyn Installations,
        settings: &Settings,
        installed_only: bool,
        home: &Home,
        team_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Whose, PortError> {
        let installed_only = installed_only || settings.installed_workspaces_only;
        let Some(team) = team_id.and_then(|t| TeamId::parse(t).ok()) else {
            // No team named (an envelope Slack does not send to an app
            // installed anywhere else): the stack's, unless it has no team.
            return Ok(match installed_only {
                true => Whose::NotInstalled,
                false => Whose::Stack,
            });
        };
        if let Some(installation) = store.installation(&team).await? {
            return Ok(Whose::Team(installation));
        }
        if installed_only {
            return Ok(Whose::NotInstalled);
        }
        Ok(match home.team(store, settings, now).await? {
            Some(own) if own == team => Whose::Stack,
            Some(_) => Whose::NotInstalled,
            None if settings.slack_client_id.is_some() => Whose::NotInstalled,
            None => Whose::Stack,
        })
    }
}

/// How long ingest takes the stack's own team for not known yet before it
/// reads the table again (the recurring run learns it within the hour).
const UNKNOWN_HOME_SECONDS: i64 = 60;

/// The stack's own team as ingest knows it: the setting `slack_team_id`,
/// else the home the stack learned from its own token (`auth.test`) and
/// keeps in the table: read once per process when known, at most once a
/// minute while not.
#[derive(Default, Clone)]
pub(super) struct Home {
    read: Arc<Mutex<Option<HomeRead>>>,
}

/// What the table said of the stack's own team, and when.
type HomeRead = (Option<TeamId>, DateTime<Utc>);

impl Home {
    async fn team(
        &self,
        store: &dyn Installations,
        settings: &Settings,
        now: DateTime<Utc>,
    ) -> Result<Option<TeamId>, PortError> {
        if let Some(set) = settings
            .slack_team_id
            .as_deref()
            .and_then(|t| TeamId::parse(t).ok())
        {
            return Ok(Some(set));
        }
        let fresh = |(team, at): &HomeRead| {
            team.is_some() || now - *at < Duration::seconds(UNKNOWN_HOME_SECONDS)
        };
        if let Some((team, _)) = lock(&self.read).as_ref().filter(|r| fresh(r)) {
            return Ok(team.clone());
        }
        let team = store.home().await?.map(|home| home.team);
        *lock(&self.read) = Some((team.clone(), now));
        Ok(team)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long after an uninstall its purge runs: the events and jobs of the
/// workspace already under way end first, so nothing is written after it.
pub const PURGE_DELAY_SECONDS: u32 = 120;

/// The app uninstalled from an installed team (or its bot token revoked):
/// its installation removed, so that nothing of it is taken or answered
/// from now on, and everything it kept purged by the memory function two
/// minutes later ([`Job::Purge`], [`PURGE_DELAY_SECONDS`]). The purge is
/// queued first: if the removal then fails, Slack's retry finds the
/// installation still there and does both again. A team with no
/// installation (a single-workspace stack's own) has nothing to remove: it
/// says so in the log, as its bot token stops working.
pub(super) async fn uninstalled(
    store: &dyn Installations,
    queue: &dyn Queue,
    whose: &Whose,
) -> Result<Outcome, PortError> {
    match whose {
        Whose::Team(installation) => {
            let team = &installation.team;
            queue
                .for_team(team)
                .send(&Job::Purge, PURGE_DELAY_SECONDS)
                .await?;
            store.delete_installation(team).await?;
            tracing::info!(%team, "uninstalled");
            Ok(Outcome::Uninstalled)
        }
        _ => {
            tracing::warn!("the app was uninstalled, or its bot token revoked");
            Ok(Outcome::Ignored(IgnoreReason::NotInstalled))
        }
    }
}
