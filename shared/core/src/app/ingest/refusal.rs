//! What ingest does not take, before anything is stored: an event sent to
//! another app or from another workspace than the settings name, one with
//! a time Slack would not send, and, on a stack that answers each
//! workspace with its own installation, one from a workspace it is not
//! installed in.

use chrono::{DateTime, Utc};

use super::{IgnoreReason, IngestResponse, Outcome};
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
    /// `slack_client_id` stops new installs, not the workspaces installed);
    /// another's is the stack's, unless the stack takes installed teams'
    /// events only (`installed_only`, the setting
    /// `installed_workspaces_only`). One read of the installation per
    /// event that names a team.
    pub(super) async fn of(
        store: &dyn Installations,
        settings: &Settings,
        installed_only: bool,
        team_id: Option<&str>,
    ) -> Result<Whose, PortError> {
        let otherwise = if installed_only || settings.installed_workspaces_only {
            Whose::NotInstalled
        } else {
            Whose::Stack
        };
        let Some(team) = team_id.and_then(|t| TeamId::parse(t).ok()) else {
            return Ok(otherwise);
        };
        Ok(match store.installation(&team).await? {
            Some(installation) => Whose::Team(installation),
            None => otherwise,
        })
    }
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
