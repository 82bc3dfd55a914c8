//! A reaction the judgment chose: once per message, without any LLM call.

use myao_core::ports::{PortError, Reacted};
use myao_domain::reply::pick_emoji;
use myao_domain::{ChannelId, EmojiName, Ts};

use super::ResponseOutcome;
use crate::JobContext;

/// Reacts to the message `ts` with `chosen`, or with `default_reaction`
/// when the workspace has no such emoji: once per message (a message the
/// bot reacted to is done), without any LLM call. The error is one a
/// redelivery may mend (the claim is given back).
pub(super) async fn react(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    ts: Ts,
    chosen: &EmojiName,
) -> Result<ResponseOutcome, PortError> {
    let Some(message) = cx.store().get_message(channel, ts).await? else {
        tracing::info!(%ts, "the message to react to is gone");
        return Ok(ResponseOutcome::Stale);
    };
    if message.bot_reaction.is_some() {
        tracing::info!(%ts, "already reacted to the message");
        return Ok(ResponseOutcome::AlreadyDone);
    }
    let fallback = &cx.settings().default_reaction;
    let known = match cx.slack().emoji_names().await {
        Ok(names) => Some(names),
        Err(error) => {
            // Without `emoji:read`: try the name, Slack refuses an unknown one.
            tracing::warn!(%error, "emoji.list failed; trying the emoji as chosen");
            None
        }
    };
    let mut emoji = pick_emoji(chosen, known.as_deref(), fallback);
    let mut reacted = cx.slack().add_reaction(channel, ts, &emoji).await;
    if matches!(reacted, Ok(Reacted::UnknownEmoji)) && emoji != *fallback {
        emoji = fallback.clone();
        reacted = cx.slack().add_reaction(channel, ts, &emoji).await;
    }
    match reacted {
        Ok(Reacted::Added | Reacted::AlreadyThere) => {}
        Ok(Reacted::UnknownEmoji) => {
            tracing::error!(emoji = %emoji, "Slack knows no such emoji: check default_reaction");
            return Ok(ResponseOutcome::PostFailed {
                reason: format!("reactions.add: invalid_name {emoji}"),
            });
        }
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, "reactions.add not done; the job will be redelivered");
            return Err(error);
        }
        Err(error) => {
            tracing::error!(%error, "reactions.add failed");
            return Ok(ResponseOutcome::PostFailed {
                reason: error.to_string(),
            });
        }
    }
    if let Err(error) = cx.store().set_bot_reaction(channel, ts, &emoji).await {
        tracing::warn!(%error, "reacted, but could not record the reaction");
    }
    tracing::info!(%ts, emoji = %emoji, "reacted");
    Ok(ResponseOutcome::Reacted { ts, emoji })
}
