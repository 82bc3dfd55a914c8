//! Posting a written reply: kept as a draft for the tries that post it,
//! looked for first when an earlier try may have posted it, held shorter
//! when Slack finds it too long, and stored as Slack will echo it.

use chrono::Duration;

use myao_core::app::retention;
use myao_core::ports::{PortError, SlackApi};
use myao_domain::grounds::{Grounds, PostGrounds, Spoke};
use myao_domain::text::{escape, held_to};
use myao_domain::{Channel, ChannelId, Message, ResponseJob, Ts};

use super::claim::Claim;
use super::outcome::ResponseOutcome;
use super::scene::Scene;
use super::write::{kept_context, write, Composed};
use crate::context::touch;
use crate::JobContext;

/// How long a written reply is kept for the tries that post it.
const DRAFT_HOURS: i64 = 24;

/// How long after a post whose answer was lost, and which a search did not
/// find, the reply is not posted again: Slack may show a slow post only
/// later (a red team saw one take 30 s). Its tries come back meanwhile and
/// look for it again; past it, the next one that does not find it posts.
pub const LOST_POST_SECONDS: i64 = 60;

/// The claim that holds a lost post's reply back for [`LOST_POST_SECONDS`].
fn lost_key(marker: &str) -> String {
    format!("lost:{marker}")
}

/// Holds the reply back for [`LOST_POST_SECONDS`]: its post was lost and
/// not found (yet).
async fn hold_back(cx: &JobContext<'_>, marker: &str) -> Result<(), PortError> {
    let until = cx.clock().now() + Duration::seconds(LOST_POST_SECONDS);
    cx.store().claim(&lost_key(marker), until).await?;
    Ok(())
}

/// Whether a lost post of the reply is held back now (without starting a
/// hold: the claim asked for ends as it is made).
async fn held_back(cx: &JobContext<'_>, marker: &str) -> Result<bool, PortError> {
    let now = cx.clock().now();
    Ok(!cx.store().claim(&lost_key(marker), now).await?)
}

/// Whether the reply may be posted again, its earlier post lost and not
/// found: yes when no lost post of it is held back, or its time has passed
/// (the hold then starts again, for this post). A retryable error while it
/// is held: the job comes back and looks again.
async fn may_post_again(cx: &JobContext<'_>, marker: &str) -> Result<(), PortError> {
    let until = cx.clock().now() + Duration::seconds(LOST_POST_SECONDS);
    if cx.store().claim(&lost_key(marker), until).await? {
        Ok(())
    } else {
        Err(PortError::unavailable(
            "slack",
            "an earlier post of the reply was lost and is not there yet; looking again later",
        ))
    }
}

/// Writes the reply to `job` (or takes `kept`, the one an earlier try of it
/// wrote) and posts it; the `claim` is given back when nothing was posted
/// and a redelivery may do better. A written reply is kept with the job for
/// a day: a redelivery after Slack failed posts it without asking the LLM
/// again or reading the context again, once it has made sure that the
/// earlier try's post did not land after all.
pub(super) async fn compose_and_post(
    cx: &JobContext<'_>,
    job: &ResponseJob,
    kept: Option<String>,
    claim: &Claim<'_>,
    scene: Scene,
) -> Result<ResponseOutcome, PortError> {
    let ResponseJob {
        channel,
        thread_ts,
        newest_ts,
        ..
    } = job;
    let key = job.claim_key();
    let reused = kept.is_some();
    let (bot, ch, text) = match compose(cx, job, kept, scene).await {
        Composed::Ready { bot, ch, text } => (bot, ch, text),
        Composed::Done(outcome) => return Ok(outcome),
        Composed::Retry(error) => return claim.give_back(error).await,
    };
    if !reused {
        let until = cx.now() + Duration::hours(DRAFT_HOURS);
        if let Err(error) = cx.store().keep_draft(&key, &text, until).await {
            // Only a redelivery would write it again.
            tracing::warn!(%error, "could not keep the written reply");
        }
    }
    let at = Place {
        channel,
        thread_ts: *thread_ts,
        answered: *newest_ts,
        marker: &key,
        buttons: with_buttons(cx, job),
    };
    let (ts, escaped) = match post_once(cx, &at, &text, reused).await {
        Ok(Posted::Done(posted)) => posted,
        Ok(Posted::Failed(outcome)) => return Ok(outcome),
        Err(error) => return claim.give_back(error).await,
    };
    keep_posted(
        cx,
        &ch,
        Message::new(channel.clone(), bot, escaped, ts, *thread_ts, true),
    )
    .await;
    keep_grounds(cx, job, ts).await;
    tracing::info!(ts = %ts, chars = text.chars().count(), "replied");
    Ok(ResponseOutcome::Posted { ts, text })
}

/// Keeps what decided the post `ts` with it, for the hints people give on
/// it (`myao feedback`): the judgment's grounds, or a mention's. A failure
/// costs only that: the post stands.
async fn keep_grounds(cx: &JobContext<'_>, job: &ResponseJob, post: Ts) {
    let ResponseJob {
        channel,
        thread_ts,
        mention,
        grounds,
        ..
    } = job;
    let grounds = match (grounds, mention) {
        (Some(grounds), _) => grounds.clone(),
        (None, true) => Grounds::unjudged(Spoke::Mention, cx.settings().chattiness_in(channel)),
        // A job of an earlier version: nothing known.
        (None, false) => return,
    };
    let kept = PostGrounds {
        channel: channel.clone(),
        post,
        thread_ts: *thread_ts,
        grounds,
        at: cx.now(),
    };
    if let Err(error) = cx.store().put_grounds(&kept).await {
        tracing::warn!(%error, "could not keep the post's grounds");
    }
}

/// The reply to post: the one an earlier try wrote (`kept`), with the bot's
/// id and the channel, or one written now.
async fn compose(
    cx: &JobContext<'_>,
    job: &ResponseJob,
    kept: Option<String>,
    scene: Scene,
) -> Composed {
    let Some(text) = kept else {
        return write(cx, job, scene).await;
    };
    tracing::info!("posting the reply an earlier try wrote");
    let ResponseJob { channel, .. } = job;
    match kept_context(cx, channel).await {
        Ok((bot, ch)) => Composed::Ready { bot, ch, text },
        Err(error) => Composed::Retry(error),
    }
}

/// Whether a reply is posted with Slack's feedback buttons under it: with
/// `feedback_buttons` on, an unprompted one (a reply nobody asked for, an
/// opening), never an answer to a mention, its name or a DM.
fn with_buttons(cx: &JobContext<'_>, job: &ResponseJob) -> bool {
    cx.settings().feedback_buttons && !job.mention
}

/// Where a reply goes, and the mark that finds it there again.
struct Place<'a> {
    channel: &'a ChannelId,
    thread_ts: Option<Ts>,
    /// The message it answers: a search for it starts there.
    answered: Ts,
    marker: &'a str,
    /// Posted with Slack's feedback buttons ([`with_buttons`]).
    buttons: bool,
}

/// A post's end: posted (its `ts` and escaped text), or refused for good.
enum Posted {
    Done((Ts, String)),
    Failed(ResponseOutcome),
}

/// Posts `text` once: when an earlier try wrote it (`reused`), whose post's
/// answer was lost and whose search for it failed too, it may have posted:
/// looked for first. The error is one a redelivery may mend.
async fn post_once(
    cx: &JobContext<'_>,
    at: &Place<'_>,
    text: &str,
    reused: bool,
) -> Result<Posted, PortError> {
    let slack = cx.slack();
    // An earlier try may have posted: it left its reply (`reused`), or, had
    // it failed to keep it, a lost post's hold.
    let look = reused || held_back(cx, at.marker).await?;
    let landed = match look {
        true => {
            slack
                .find_marked(at.channel, at.thread_ts, at.answered, at.marker)
                .await?
        }
        false => None,
    };
    let posted = match landed {
        Some(ts) => {
            tracing::info!(ts = %ts, "an earlier try had posted the reply");
            Ok((ts, escape(text)))
        }
        // A reply comes after the message it answers: the search starts there.
        None => match look {
            true => match may_post_again(cx, at.marker).await {
                Ok(()) => post_held(cx, at, text).await,
                Err(held) => Err(held),
            },
            false => post_held(cx, at, text).await,
        },
    };
    match posted {
        Ok(posted) => Ok(Posted::Done(posted)),
        // Slack surely did not post (rate limited, never connected): a
        // redelivery may.
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, "chat.postMessage not sent; the job will be redelivered");
            Err(error)
        }
        Err(error) => {
            // Refused, or it may have gone through: never posted twice.
            tracing::error!(%error, "chat.postMessage failed");
            crate::limits::trip_on_token_refusal(cx, &error).await;
            Ok(Posted::Failed(ResponseOutcome::PostFailed(error)))
        }
    }
}

/// Stores the bot's posted message, as Slack will echo it (escaped; prompts
/// unescape it), and the channel's activity. Ingest stores it too when
/// Slack echoes it; whichever comes first wins. Failures are only logged:
/// the reply is posted.
async fn keep_posted(cx: &JobContext<'_>, ch: &Channel, posted: Message) {
    let expires = retention(cx.settings(), cx.now());
    if let Err(error) = cx.store().insert_message(&posted, true, expires).await {
        tracing::warn!(%error, "posted, but could not store the bot's message");
    }
    if let Err(error) = touch(cx, ch, &posted).await {
        tracing::warn!(%error, "could not record the channel's activity");
    }
}

/// The most characters a reply is posted with after Slack refused it as
/// `msg_too_long`, counted after escaping: Slack's advice for a message's
/// text.
pub const SAFE_POST_CHARS: usize = 4_000;

/// Posts `text` escaped at `at`, marked with its marker (the job's claim
/// key). When Slack refuses it as too long (`msg_too_long`), once more held
/// to [`SAFE_POST_CHARS`] escaped characters, cut at a sentence or a space
/// and never inside an escape. When its answer was lost (a 5xx, a timeout:
/// it may have posted), the conversation is searched for the marker and the
/// reply given back when it is not there yet (among the messages from the
/// one it answers): its tries look again and post it again only after
/// [`LOST_POST_SECONDS`] ([`may_post_again`]). The text posted, escaped,
/// with its `ts`.
async fn post_held(
    cx: &JobContext<'_>,
    at: &Place<'_>,
    text: &str,
) -> Result<(Ts, String), PortError> {
    let slack = cx.slack();
    let (channel, thread_ts, marker) = (at.channel, at.thread_ts, at.marker);
    let escaped = escape(text);
    let first = send(slack, at, &escaped).await;
    match first {
        Err(error) if error.detail().ends_with("msg_too_long") => {
            let shorter = held_escaped(&escaped, SAFE_POST_CHARS).to_owned();
            tracing::warn!(
                chars = escaped.chars().count(),
                held_to = shorter.chars().count(),
                "Slack refused the reply as too long; posting it shorter"
            );
            let ts = send(slack, at, &shorter).await?;
            Ok((ts, shorter))
        }
        Err(PortError::Uncertain { detail, .. }) => {
            match slack
                .find_marked(channel, thread_ts, at.answered, marker)
                .await?
            {
                Some(ts) => {
                    tracing::info!(%detail, ts = %ts, "the post's answer was lost, but it was posted");
                    Ok((ts, escaped))
                }
                None => {
                    tracing::warn!(%detail, "the post's answer was lost and it is not there yet; the job comes back to look again");
                    hold_back(cx, marker).await?;
                    Err(PortError::unavailable(
                        "slack",
                        format!("the post's answer was lost ({detail}) and it is not there yet"),
                    ))
                }
            }
        }
        posted => posted.map(|ts| (ts, escaped)),
    }
}

/// One post of the escaped `text` at `at`, marked, with the feedback
/// buttons when it has them.
async fn send(slack: &dyn SlackApi, at: &Place<'_>, text: &str) -> Result<Ts, PortError> {
    match at.buttons {
        true => {
            slack
                .post_with_feedback(at.channel, at.thread_ts, text, at.marker)
                .await
        }
        false => {
            slack
                .post_marked(at.channel, at.thread_ts, text, at.marker)
                .await
        }
    }
}

/// An escaped text held to `max_chars` ([`held_to`]), without a cut
/// escape (`&amp;`, `&lt;`, `&gt;`) at its end.
fn held_escaped(escaped: &str, max_chars: usize) -> &str {
    let held = held_to(escaped, max_chars);
    match held.rfind('&') {
        Some(amp) if !held[amp..].contains(';') => held[..amp].trim_end(),
        _ => held,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_escaped_text_never_ends_inside_an_escape() {
        let escaped = escape(&"a<b ".repeat(10));
        // 9 characters: "a&lt;b a&" would cut the second escape.
        assert_eq!(held_escaped("a&lt;b&amp;c", 9), "a&lt;b");
        assert_eq!(held_escaped("x &gt; y", 100), "x &gt; y");
        let held = held_escaped(&escaped, 20);
        assert!(held.chars().count() <= 20, "{held}");
        assert!(!held.ends_with('&') && held.matches('&').count() == held.matches(';').count());
    }
}
