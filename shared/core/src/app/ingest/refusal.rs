//! What ingest does not take, before anything is stored: an event sent to
//! another app or from another workspace than the settings name, one with
//! a time Slack would not send, and, on a stack that answers each
//! workspace with its own installation, one from a workspace it is not
//! installed in.

use chrono::{DateTime, Utc};

use super::{IgnoreReason, IngestResponse, Outcome};
use crate::ports::{Installations, PortError};
use myao_domain::{Settings, TeamId, UserId};
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

/// With `installed_only` ([`super::Ingest::requiring_installations`]),
/// an event of a team with no installation (or of none): acknowledged and
/// dropped, nothing stored. Without it, every event is taken as before.
pub(super) async fn not_installed(
    store: &dyn Installations,
    installed_only: bool,
    delivery: &Delivery,
) -> Result<Option<(Outcome, IngestResponse)>, PortError> {
    if !installed_only {
        return Ok(None);
    }
    let team = delivery
        .team_id
        .as_deref()
        .and_then(|t| TeamId::parse(t).ok());
    let installed = match team {
        Some(team) => store.installation(&team).await?.is_some(),
        None => false,
    };
    Ok((!installed).then(|| {
        let outcome = Outcome::Ignored(IgnoreReason::NotInstalled);
        (outcome, IngestResponse::ok())
    }))
}

/// The app uninstalled from `team` (or its bot token revoked), on a stack
/// with `slack_client_id`: its installation removed, so that nothing of it
/// is taken or answered from now on. A single-workspace stack has nothing
/// to remove: it says so in the log, as its bot token stops working.
pub(super) async fn uninstalled(
    store: &dyn Installations,
    settings: &Settings,
    team: Option<&str>,
) -> Result<Outcome, PortError> {
    let team = team.and_then(|t| TeamId::parse(t).ok());
    match (settings.slack_client_id.is_some(), team) {
        (true, Some(team)) => {
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
