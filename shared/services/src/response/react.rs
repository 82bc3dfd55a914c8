//! Reactions: the one the judgment chose, and the one that acknowledges a
//! hint ("not now", 「ありがとう」); once per message, without any LLM call.

use myao_core::ports::{PortError, Reacted};
use myao_domain::hints::{words_hint, Hint, RestOfDay, CAPPED_NOTICE};
use myao_domain::labels::{Label, Source};
use myao_domain::reply::pick_emoji;
use myao_domain::text::escape;
use myao_domain::{ChannelId, EmojiName, Message, Reply, Ts};

use super::outcome::ResponseOutcome;
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
            return Ok(ResponseOutcome::PostFailed(PortError::refused(
                "slack",
                format!("reactions.add: invalid_name {emoji}"),
            )));
        }
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, "reactions.add not done; the job will be redelivered");
            return Err(error);
        }
        Err(error) => {
            tracing::error!(%error, "reactions.add failed");
            return Ok(ResponseOutcome::PostFailed(error));
        }
    }
    if let Err(error) = cx.store().set_bot_reaction(channel, ts, &emoji).await {
        tracing::warn!(%error, "reacted, but could not record the reaction");
    }
    tracing::info!(%ts, emoji = %emoji, "reacted");
    Ok(ResponseOutcome::Reacted { ts, emoji })
}

/// The reaction that acknowledges being asked to be quiet (or told off):
/// 👌, as a member nods.
const QUIET_ACK: &str = "ok_hand";
/// The one that acknowledges thanks: ☺️.
const THANKS_ACK: &str = "relaxed";

/// When the mention `newest_ts` is a hint (words that ask the bot to be
/// quiet, or thank it): its label is stored, which tunes the channel's
/// judgments, and the bot acknowledges it with a reaction instead of a
/// reply (one `reply` already is, as routing chose it for a plain thanks,
/// goes as chosen). A mute asked for longer than a day is held to one, and
/// the bot says so in the thread ([`CAPPED_NOTICE`]) instead. `None`:
/// nothing more to do here; the job goes on.
pub(super) async fn take_hint(
    cx: &JobContext<'_>,
    said: &Message,
    reply: &Reply,
) -> Result<Option<ResponseOutcome>, PortError> {
    let (channel, newest_ts) = (&said.channel, said.ts);
    // Its own id is one of its names (`<@UBOT> thanks`); a failure to learn
    // it is the job's, as for any reply.
    let bot = match cx.bot_user_id().await {
        Ok(bot) => bot,
        Err(error) => {
            crate::limits::trip_on_token_refusal(cx, &error).await;
            return Err(error);
        }
    };
    let mut names = cx.settings().names();
    names.push(bot.as_str());
    let today = RestOfDay::at(cx.now(), cx.settings().timezone);
    let Some(heard) = words_hint(&said.text, &names, today) else {
        return Ok(None);
    };
    let hint = heard.hint;
    let label = Label {
        channel: channel.clone(),
        post: newest_ts,
        user: said.user.clone(),
        hint,
        source: Source::Words,
        at: cx.now(),
    };
    let new = cx.store().put_label(&label).await?;
    tracing::info!(hint = ?hint, capped = heard.capped, new, "a hint in words to the bot");
    if heard.capped {
        return Ok(Some(say_capped(cx, said).await));
    }
    if matches!(reply, Reply::Reaction { .. }) {
        return Ok(None);
    }
    let ack = match hint {
        Hint::Positive => THANKS_ACK,
        Hint::Negative | Hint::Mute { .. } => QUIET_ACK,
    };
    let emoji = EmojiName::parse(ack).map_err(|_| PortError::refused("response", "ack emoji"))?;
    react(cx, channel, newest_ts, &emoji).await.map(Some)
}

/// Says in the mention's thread that its mute was held to a day.
async fn say_capped(cx: &JobContext<'_>, said: &Message) -> ResponseOutcome {
    let text = escape(CAPPED_NOTICE);
    let thread = said.thread_ts.unwrap_or(said.ts);
    match cx
        .slack()
        .post_message(&said.channel, Some(thread), &text)
        .await
    {
        Ok(ts) => ResponseOutcome::Posted { ts, text },
        Err(error) => ResponseOutcome::PostFailed(error),
    }
}
