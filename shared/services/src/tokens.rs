//! Renewing the workspaces' rotating bot tokens ahead of their expiry
//! (issue 46): each installation due ([`Installation::due_for_renewal`],
//! two hours ahead) is renewed by one caller only. A claim keeps a second
//! caller from spending the refresh token again (Slack refuses a refresh
//! token used twice, for good), and the store's conditional write keeps
//! the renewal that comes second from overwriting the first.

use chrono::{DateTime, Duration, Utc};

use myao_core::ports::{Claims, Installations, PortError, SlackOAuth};
use myao_domain::install::Installation;
use myao_domain::TeamId;

/// How long a renewal's claim holds: the refresh and the write take
/// seconds; a caller that died holding it leaves the next round to retry.
const CLAIM_MINUTES: i64 = 10;

/// What a round of renewals did, by team.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Renewals {
    /// Renewed: the new token is stored.
    pub renewed: Vec<TeamId>,
    /// Another caller is renewing it, or did.
    pub elsewhere: Vec<TeamId>,
    /// Slack refused for good (the refresh token spent or revoked, the app
    /// uninstalled): the workspace must install the app again.
    pub lost: Vec<TeamId>,
    /// Not renewed this round (Slack or the store unavailable, a refusal
    /// that may pass): the next round tries again, before the expiry.
    pub failed: Vec<TeamId>,
}

impl Renewals {
    /// Whether anything needs a person: a token lost, or one not renewed.
    pub fn alarming(&self) -> bool {
        !self.lost.is_empty() || !self.failed.is_empty()
    }
}

/// Renews every installation due at `now`.
pub async fn renew_due<S>(
    store: &S,
    oauth: &dyn SlackOAuth,
    now: DateTime<Utc>,
) -> Result<Renewals, PortError>
where
    S: Installations + Claims + ?Sized,
{
    let mut round = Renewals::default();
    for installation in store.installations().await? {
        if !installation.due_for_renewal(now) {
            continue;
        }
        let team = installation.team.clone();
        let list = match renew(store, oauth, &installation, now).await {
            Ok(Renewed::Yes) => &mut round.renewed,
            Ok(Renewed::Elsewhere) => &mut round.elsewhere,
            Ok(Renewed::Lost) => &mut round.lost,
            Ok(Renewed::NotNow) | Err(_) => &mut round.failed,
        };
        list.push(team);
    }
    Ok(round)
}

enum Renewed {
    Yes,
    Elsewhere,
    Lost,
    NotNow,
}

/// How many times a renewed token's write is tried: Slack spent the old
/// refresh token when it gave the new pair, so the new one is all there is.
const WRITE_TRIES: usize = 3;

/// Stores a renewed installation while the stored token is still the one
/// renewed (`was`), trying a write that failed again: a pair Slack gave
/// and nobody stored is a token lost for good.
async fn keep_renewed<S>(
    store: &S,
    renewed: &Installation,
    was: DateTime<Utc>,
) -> Result<Renewed, PortError>
where
    S: Installations + ?Sized,
{
    let team = &renewed.team;
    let mut last = None;
    for _ in 0..WRITE_TRIES {
        match store.renew_installation(renewed, was).await {
            Ok(true) => {
                tracing::info!(%team, "token renewed");
                return Ok(Renewed::Yes);
            }
            Ok(false) => return Ok(Renewed::Elsewhere),
            Err(error) => last = Some(error),
        }
    }
    let error = last.map_or_else(String::new, |e| e.to_string());
    tracing::error!(%team, %error, "a renewed token could not be stored: the workspace may have to install the app again");
    Ok(Renewed::NotNow)
}

/// Renews one installation: claims it, asks Slack, stores the answer while
/// the stored token is still the one renewed.
async fn renew<S>(
    store: &S,
    oauth: &dyn SlackOAuth,
    installation: &Installation,
    now: DateTime<Utc>,
) -> Result<Renewed, PortError>
where
    S: Installations + Claims + ?Sized,
{
    let Some(was) = installation.rotation.as_ref().map(|r| r.expires_at) else {
        return Ok(Renewed::Elsewhere);
    };
    let team = &installation.team;
    let key = format!("renew#{team}#{}", was.timestamp());
    if !store
        .claim(&key, now + Duration::minutes(CLAIM_MINUTES))
        .await?
    {
        return Ok(Renewed::Elsewhere);
    }
    let answer = match oauth.refresh(installation, now).await {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(%team, %error, "token renewal failed; the next round tries again");
            store.release(&key).await?;
            return Ok(Renewed::NotNow);
        }
    };
    match answer {
        Ok(renewed) => keep_renewed(store, &renewed, was).await,
        Err(refused) if refused.is_final() => {
            tracing::error!(%team, %refused, "token lost: the workspace must install the app again");
            Ok(Renewed::Lost)
        }
        Err(refused) => {
            tracing::warn!(%team, %refused, "token renewal refused; the next round tries again");
            store.release(&key).await?;
            Ok(Renewed::NotNow)
        }
    }
}
