//! Spend limits, enforced before any LLM call (issue 13).
//!
//! - The workspace's LLM calls per day: [`CappedLlm`], around the LLM of
//!   every [`crate::Services`], counts each call before making it and refuses
//!   memories above 80 % of the day, judgments above 95 %, replies at 100 %
//!   ([`CallPurpose`](myao_domain::limits::CallPurpose)). A refusal is a
//!   `PortError::Refused` from the service `"budget"`, which the services
//!   already treat as silence.
//! - Replies per channel and mentions per person per hour: [`admit_reply`],
//!   called by a response job after its claim (a duplicate delivery is not
//!   counted twice) and before the LLM (a refused job costs no call).
//!
//! A mention refused by any of them gets [`LIMIT_NOTICE`], at most once an
//! hour per person. Every refusal is logged at WARN with the setting that
//! refused it, and ids only.

use chrono::{DateTime, Utc};

pub use crate::cap::{is_over_budget, CappedLlm, BUDGET};
use crate::JobContext;
use myao_core::ports::{Messages, PortError};
use myao_domain::limits::{self, Limit, LIMIT_NOTICE};
use myao_domain::{ResponseJob, Ts, UserId};

/// The author of a mention job's newest message (the person who asked).
async fn author(messages: &dyn Messages, job: &ResponseJob) -> Result<Option<UserId>, PortError> {
    if !job.mention {
        return Ok(None);
    }
    Ok(messages
        .get_message(&job.channel, job.newest_ts)
        .await?
        .map(|m| m.user))
}

/// A reply a spend limit refused: which limit, and the notice posted for a
/// mention, if one was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub limit: Limit,
    pub notice: Option<Ts>,
}

/// Counts a response job (already claimed) against the hourly limits:
/// `None` to go ahead, or the outcome of its refusal (the notice posted
/// for a mention). The person's mentions are counted first, so that
/// someone over their own limit does not use up the channel's replies.
/// A count is not given back: a job redelivered after a failure counts
/// again, which can only make a limit stricter.
pub async fn admit_reply(
    cx: &JobContext<'_>,
    job: &ResponseJob,
) -> Result<Option<Refused>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let ResponseJob { channel, .. } = job;
    let author = author(cx.store(), job).await?;
    let mut counters = Vec::with_capacity(2);
    if let Some(user) = &author {
        counters.push((Limit::MentionsPerUser, limits::user_mentions(user, now)));
    }
    counters.push((
        Limit::RepliesPerChannel,
        limits::channel_replies(channel, now),
    ));
    for (limit, counter) in counters {
        let max = u64::from(limit.max(settings));
        if !cx
            .store()
            .count(&counter.key, max, counter.expires_at)
            .await?
        {
            return Ok(Some(refuse(cx, job, author.as_ref(), limit).await));
        }
    }
    Ok(None)
}

/// The outcome of a response job whose reply the day's LLM budget refused
/// (the notice posted for a mention).
pub async fn refused_by_budget(cx: &JobContext<'_>, job: &ResponseJob) -> Refused {
    let author = match author(cx.store(), job).await {
        Ok(author) => author,
        Err(error) => {
            tracing::warn!(%error, "could not read the mention's author; no notice");
            None
        }
    };
    refuse(cx, job, author.as_ref(), Limit::LlmCallsPerDay).await
}

/// Logs a refusal and, for a mention, posts the notice once an hour per person.
async fn refuse(
    cx: &JobContext<'_>,
    job: &ResponseJob,
    author: Option<&UserId>,
    limit: Limit,
) -> Refused {
    let (settings, now) = (cx.settings(), cx.now());
    let ResponseJob {
        channel,
        thread_ts,
        newest_ts,
        mention,
        ..
    } = job;
    tracing::warn!(
        limit = limit.setting(),
        max = limit.max(settings),
        mention,
        user = author.map(UserId::as_str),
        "reply refused: over a spend limit"
    );
    let notice = match author {
        Some(user) if *mention && settings.limit_notice => {
            // In the mention's thread (a top-level mention starts one), so
            // that the notice stays out of the channel's way.
            notify(cx, channel, thread_ts.unwrap_or(*newest_ts), user, now).await
        }
        _ => None,
    };
    Refused { limit, notice }
}

/// Posts the limit notice in `thread`, once an hour per person.
async fn notify(
    cx: &JobContext<'_>,
    channel: &myao_domain::ChannelId,
    thread: Ts,
    user: &UserId,
    now: DateTime<Utc>,
) -> Option<Ts> {
    let claim = limits::notice_claim(user, now);
    match cx.store().claim(&claim.key, claim.expires_at).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(user = %user, "no limit notice: one was posted within the hour");
            return None;
        }
        Err(error) => {
            tracing::warn!(%error, "could not claim the limit notice; none posted");
            return None;
        }
    }
    match cx
        .slack()
        .post_message(channel, Some(thread), LIMIT_NOTICE)
        .await
    {
        Ok(ts) => {
            tracing::info!(user = %user, ts = %ts, "limit notice posted");
            Some(ts)
        }
        Err(error) => {
            // Not retried: a notice is a courtesy, and the claim keeps it
            // from being posted twice.
            tracing::warn!(%error, "could not post the limit notice");
            None
        }
    }
}

/// Whether Slack refused the bot token within the last
/// [`limits::TOKEN_BREAKER_FOR`]: a reply could not be posted, so no LLM
/// call is made for one.
pub async fn token_refused(cx: &JobContext<'_>) -> Result<bool, PortError> {
    let held = cx.store().held_until(limits::TOKEN_BREAKER).await?;
    Ok(held.is_some_and(|until| until > cx.now()))
}

/// Whether the bot token works again, asked of Slack (`auth.test`): when
/// it does, the breaker closes at once; when Slack still refuses it (or
/// fails), `false`, and the breaker is left open.
pub async fn token_works_again(cx: &JobContext<'_>) -> Result<bool, PortError> {
    match cx.slack().auth_test().await {
        Ok(_) => {
            cx.store().release(limits::TOKEN_BREAKER).await?;
            tracing::info!("the bot token works again: the breaker is closed");
            Ok(true)
        }
        Err(error) => {
            trip_on_token_refusal(cx, &error).await;
            Ok(false)
        }
    }
}

/// Opens the token breaker when `error` is Slack refusing the bot token
/// (`invalid_auth`, `token_revoked`, ...); the alarm on `SlackAuthErrors`
/// tells a person. Closes by itself after [`limits::TOKEN_BREAKER_FOR`].
pub async fn trip_on_token_refusal(cx: &JobContext<'_>, error: &PortError) {
    if !limits::is_token_refusal(error.detail()) {
        return;
    }
    let until = cx.now() + limits::TOKEN_BREAKER_FOR;
    match cx.store().claim(limits::TOKEN_BREAKER, until).await {
        Ok(_) => {
            tracing::warn!(%until, "Slack refused the bot token: no LLM call for a reply until then")
        }
        Err(store) => tracing::warn!(%store, "could not open the token breaker"),
    }
}

/// Counts one unprompted reply of `channel` against its hourly cap, then
/// against the workspace's: `None` when both admit it, else when the cap's
/// hour ends. A reply the workspace's cap refuses has used one of its
/// channel's (the counters only count up): it matters only in an hour the
/// workspace is at its cap already.
pub async fn refused_unprompted(
    cx: &JobContext<'_>,
    channel: &myao_domain::ChannelId,
) -> Result<Option<DateTime<Utc>>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let caps = [
        (
            limits::unprompted_replies(channel, now),
            settings.max_unprompted_per_channel_hour,
            "max_unprompted_per_channel_hour",
        ),
        (
            limits::workspace_unprompted_replies(now),
            settings.max_unprompted_per_workspace_hour,
            "max_unprompted_per_workspace_hour",
        ),
    ];
    for (counter, max, setting) in caps {
        let admitted = cx
            .store()
            .count(&counter.key, u64::from(max), counter.expires_at)
            .await?;
        if !admitted {
            tracing::info!(limit = setting, "unprompted reply refused by a limit");
            return Ok(Some(counter.expires_at));
        }
    }
    Ok(None)
}
