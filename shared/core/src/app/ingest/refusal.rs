//! What ingest does not take, before anything is stored: an event sent to
//! another app or from another workspace than the settings name, one with
//! a time Slack would not send, and, on a stack that answers each
//! workspace with its own installation, one from a workspace it is not
//! installed in.

use chrono::{DateTime, Utc};

use super::{IgnoreReason, IngestResponse, Outcome};
use crate::ports::{Installations, PortError, Queue};
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
    now: DateTime<Utc>,
) -> Option<(Outcome, IngestResponse)> {
    let sender = (delivery.api_app_id.as_deref(), delivery.team_id.as_deref());
    if let Some(reason) = another(settings, sender.0, sender.1) {
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
/// that names neither is taken).
pub(super) fn another(
    settings: &Settings,
    api_app_id: Option<&str>,
    team_id: Option<&str>,
) -> Option<IgnoreReason> {
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
    /// its own token.
    Team(TeamId),
    /// Of a team with no installation (or of none), on a stack that takes
    /// installed teams' events only: acknowledged and dropped, nothing
    /// stored.
    NotInstalled,
}

impl Whose {
    /// An event of `team_id` is an installed team's, on a stack with
    /// `slack_client_id`; another's is the stack's, unless the stack takes
    /// installed teams' events only (`installed_only`, the setting
    /// `installed_workspaces_only`). A stack without `slack_client_id`
    /// reads no installation: its events are its own, as they always were.
    pub(super) async fn of(
        store: &dyn Installations,
        settings: &Settings,
        installed_only: bool,
        team_id: Option<&str>,
    ) -> Result<Whose, PortError> {
        let installed_only = installed_only || settings.installed_workspaces_only;
        let otherwise = if installed_only {
            Whose::NotInstalled
        } else {
            Whose::Stack
        };
        if settings.slack_client_id.is_none() && !installed_only {
            return Ok(Whose::Stack);
        }
        let Some(team) = team_id.and_then(|t| TeamId::parse(t).ok()) else {
            return Ok(otherwise);
        };
        Ok(match store.installation(&team).await? {
            Some(_) => Whose::Team(team),
            None => otherwise,
        })
    }
}

/// The app uninstalled from `team` (or its bot token revoked), on a stack
/// with `slack_client_id`: its installation removed, so that nothing of it
/// is taken or answered from now on, and everything it kept purged by the
/// memory function within moments ([`Job::Purge`]). The purge is queued
/// first: if the removal then fails, Slack's retry finds the installation
/// still there and does both again. A single-workspace stack has nothing
/// to remove: it says so in the log, as its bot token stops working.
pub(super) async fn uninstalled(
    store: &dyn Installations,
    queue: &dyn Queue,
    settings: &Settings,
    team: Option<&str>,
) -> Result<Outcome, PortError> {
    let team = team.and_then(|t| TeamId::parse(t).ok());
    match (settings.slack_client_id.is_some(), team) {
        (true, Some(team)) => {
            queue.for_team(&team).send(&Job::Purge, 0).await?;
            store.delete_installation(&team).await?;
            tracing::info!(%team, "uninstalled");
            Ok(Outcome::Uninstalled)
        }
        _ => {
            tracing::warn!("the app was uninstalled, or its bot token revoked");
            Ok(Outcome::Ignored(IgnoreReason::NotInstalled))
        }
    }
}
