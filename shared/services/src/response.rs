//! The response: write and post a reply in a conversation (design 08).

use chrono::Duration;

use super::context::{recent, touch, Recent};
use super::reflection::forget_person;
use myao_core::app::retention;

use super::{context, JobContext, Services};
use crate::prompts::status_lines;
use crate::prompts::{ContextPrompt, PromptError};
use myao_core::ports::{LlmRequest, PortError, Reacted};
use myao_domain::people::{forget_me, FORGOTTEN_NOTICE};
use myao_domain::reply::pick_emoji;
use myao_domain::text::{clean_reply, escape, held_to};
use myao_domain::{Channel, ChannelId, Conversation, EmojiName, Job, Message, Reply, Ts, UserId};

/// How long a job claim is kept: longer than any redelivery.
const CLAIM_DAYS: i64 = 2;

/// What a response job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseOutcome {
    /// A newer message arrived: its own judgment decides.
    Stale,
    /// This job was already handled (a duplicate delivery).
    AlreadyDone,
    /// A mention older than `mention_max_age_seconds` (a late redelivery):
    /// dropped, a late answer being worse than none.
    TooOld,
    /// The LLM failed or wrote nothing: nothing posted.
    NoReply { reason: String },
    /// Slack refused or failed the post.
    PostFailed { reason: String },
    /// Posted.
    Posted { ts: Ts, text: String },
    /// Reacted with `emoji` on the message `ts` (or had already).
    Reacted { ts: Ts, emoji: EmojiName },
    /// A spend limit refused it before any LLM call (`notice`: the notice
    /// posted for a mention, if one was).
    Limited {
        limit: myao_domain::limits::Limit,
        notice: Option<Ts>,
    },
}

impl ResponseOutcome {
    /// The outcome's one name, in the INFO log line.
    pub fn name(&self) -> &'static str {
        match self {
            ResponseOutcome::Stale => "stale",
            ResponseOutcome::AlreadyDone => "already_done",
            ResponseOutcome::TooOld => "too_old",
            ResponseOutcome::NoReply { .. } => "no_reply",
            ResponseOutcome::PostFailed { .. } => "post_failed",
            ResponseOutcome::Posted { .. } => "posted",
            ResponseOutcome::Reacted { .. } => "reacted",
            ResponseOutcome::Limited { .. } => "limited",
        }
    }
}

impl From<super::limits::Refused> for ResponseOutcome {
    fn from(refused: super::limits::Refused) -> Self {
        ResponseOutcome::Limited {
            limit: refused.limit,
            notice: refused.notice,
        }
    }
}

/// Runs a response job.
/// How many replies under an answered top-level message are read to tell
/// whether someone else answered it first.
const RECENT_REPLIES: usize = 20;

pub async fn run(
    svc: &Services,
    channel: &ChannelId,
    thread_ts: Option<Ts>,
    newest_ts: Ts,
    mention: bool,
    reply: &Reply,
    seen_ts: Option<Ts>,
) -> Result<ResponseOutcome, PortError> {
    let cx = JobContext::begin(svc).await?;
    let (settings, now) = (&*cx.settings, cx.now);
    let conversation = Conversation {
        channel: channel.clone(),
        thread_ts,
    };

    if mention {
        let age = now - newest_ts.to_datetime();
        if age > Duration::seconds(i64::from(settings.mention_max_age_seconds)) {
            tracing::warn!(
                age_seconds = age.num_seconds(),
                max_age_seconds = settings.mention_max_age_seconds,
                "mention too old to answer; dropped"
            );
            return Ok(ResponseOutcome::TooOld);
        }
    }
    if !mention {
        if let Some(Recent {
            newest,
            person_after,
            bots_after,
            ..
        }) = recent(&*svc.ports.store, &conversation, newest_ts).await?
        {
            // A person spoke since the judgment (their own judgment decides);
            // this bot did (it already answered, e.g. a mention); or another
            // app did after the judgment read the conversation: its answer
            // is an answer, as a person's is. A bot the judgment saw and
            // still decided to answer after (a CI notice) does not count.
            let seen = seen_ts.unwrap_or(newest_ts).max(newest_ts);
            let bot_spoke = if person_after || bots_after.is_empty() {
                false
            } else if bots_after.iter().any(|(_, ts)| *ts > seen) {
                true
            } else {
                let bot = svc.bot_user_id(settings).await.ok();
                bots_after
                    .iter()
                    .any(|(b, _)| bot.as_ref().is_none_or(|me| me == b))
            };
            if person_after || bot_spoke {
                tracing::info!(job = %newest_ts, newest = %newest.ts, "stale response job");
                return Ok(ResponseOutcome::Stale);
            }
        }
        // An opening is stale after any message in the channel, in a
        // thread too: the silence it would break is over.
        if let Reply::Opener { .. } = reply {
            if !svc
                .ports
                .store
                .messages_after(channel, Some(newest_ts), 1)
                .await?
                .is_empty()
            {
                tracing::info!(job = %newest_ts, "stale opening: the channel spoke since");
                return Ok(ResponseOutcome::Stale);
            }
        }
        // An answer at the top level is late too once the message it
        // answers has a thread: that thread is where it is judged and
        // answered (its author's words there made a judgment of their own),
        // so it is answered once. An opening answers none.
        if thread_ts.is_none() && !matches!(reply, Reply::Opener { .. }) {
            if let Some(answered) = svc.ports.store.get_message(channel, newest_ts).await? {
                let under = Conversation::thread(channel.clone(), newest_ts);
                let replies = svc
                    .ports
                    .store
                    .conversation_messages(&under, RECENT_REPLIES)
                    .await?;
                if replies.iter().any(|m| m.ts > answered.ts) {
                    tracing::info!(job = %newest_ts, "stale response job: answered in its thread");
                    return Ok(ResponseOutcome::Stale);
                }
            }
        }
    }
    let job = Job::Response {
        channel: channel.clone(),
        thread_ts,
        newest_ts,
        mention,
        reply: reply.clone(),
        seen_ts,
    };
    // One claim per job: a job made twice (a retried delivery, a mention seen
    // as message and app_mention) is answered once.
    let claim_key = job.claim_key();
    if !svc
        .ports
        .store
        .claim(&claim_key, now + Duration::days(CLAIM_DAYS))
        .await?
    {
        tracing::info!("response job already handled");
        return Ok(ResponseOutcome::AlreadyDone);
    }
    // Gives the claim back when nothing was posted and a redelivery may do
    // better: otherwise it would find the job done and never answer.
    let give_back = |error: PortError| async move {
        if let Err(release) = svc.ports.store.release(&claim_key).await {
            tracing::warn!(%release, "could not release the response claim");
        }
        Err(error)
    };
    // Slack refused the token lately: a reply could not be posted, so no
    // LLM call writes one (the alarm on SlackAuthErrors tells a person).
    if super::limits::token_refused(&cx).await? {
        tracing::warn!("no reply: Slack refused the bot token lately");
        return Ok(ResponseOutcome::NoReply {
            reason: TOKEN_REFUSED.to_owned(),
        });
    }
    // "Forget me": no LLM call and no limit, the person's profile and facts
    // go, and a fixed line says so.
    if mention {
        match forget_on_request(&cx, channel, thread_ts, newest_ts).await {
            Ok(Some(outcome)) => return Ok(outcome),
            Ok(None) => {}
            Err(error) => return give_back(error).await,
        }
    }
    // A reply an earlier try of this job wrote, which a post failure left
    // unposted: that try passed the limits and asked the LLM already.
    let kept = match svc.ports.store.draft(&job.claim_key()).await {
        Ok(kept) => kept,
        Err(error) => return give_back(error).await,
    };
    // Spend limits: after the claim (a duplicate is not counted twice),
    // before the LLM (a refused job costs no call; its claim is kept).
    if kept.is_none() {
        match super::limits::admit_reply(&cx, &job).await {
            Ok(None) => {}
            Ok(Some(refused)) => return Ok(refused.into()),
            Err(error) => return give_back(error).await,
        }
    }
    if let Reply::Reaction { emoji } = reply {
        return match react(&cx, channel, newest_ts, emoji).await {
            Ok(outcome) => Ok(outcome),
            Err(error) => give_back(error).await,
        };
    }
    // A person who called the bot sees it writing: a status in the thread
    // the reply goes to (a top-level mention's own thread, cleared below),
    // before the model is asked. Not for unprompted replies: a member does
    // not announce that they are about to chime in.
    let status = match (mention, reply) {
        (true, Reply::Full | Reply::Short) => {
            show_status(&cx, channel, thread_ts.unwrap_or(newest_ts)).await
        }
        _ => None,
    };
    let outcome = compose_and_post(&cx, &job, &conversation, kept, give_back).await;
    if let Some(shown_in) = status {
        // Posting in its thread clears it; anything else is cleared here.
        let cleared =
            matches!(outcome, Ok(ResponseOutcome::Posted { .. })) && thread_ts == Some(shown_in);
        if !cleared {
            clear_status(svc, channel, shown_in).await;
        }
    }
    outcome
}

/// Shows that the bot is writing in `thread` of `channel`; returns the
/// thread when it did. Fails soft: a missing scope or an older workspace
/// costs the sign of life, never the reply.
async fn show_status(cx: &JobContext<'_>, channel: &ChannelId, thread: Ts) -> Option<Ts> {
    let lines = match status_lines(&cx.settings.persona_name) {
        Ok(lines) if !lines.is_empty() => lines,
        Ok(_) => return None,
        Err(error) => {
            tracing::warn!(%error, "the status template did not render");
            return None;
        }
    };
    match cx
        .svc
        .slack
        .set_status(channel, thread, &lines[0], &lines)
        .await
    {
        Ok(()) => Some(thread),
        Err(error) => {
            tracing::warn!(%error, "could not show that the bot is writing");
            None
        }
    }
}

/// Clears the status [`show_status`] set.
async fn clear_status(svc: &Services, channel: &ChannelId, thread: Ts) {
    if let Err(error) = svc.slack.set_status(channel, thread, "", &[]).await {
        tracing::warn!(%error, "could not clear the writing status");
    }
}

/// A reply written, or why not.
enum Composed {
    Ready {
        bot: UserId,
        ch: Channel,
        text: String,
    },
    /// Nothing to post, for good (an unusable reply, a spend limit).
    Done(ResponseOutcome),
    /// Nothing yet: a redelivery may do better.
    Retry(PortError),
}

/// How long a written reply is kept for the tries that post it.
const DRAFT_HOURS: i64 = 24;

/// Writes the reply to `job` (or takes `kept`, the one an earlier try of it
/// wrote) and posts it; `give_back` returns its claim when nothing was
/// posted and a redelivery may do better. A written reply is kept with the
/// job for a day: a redelivery after Slack failed posts it without asking
/// the LLM again or reading the context again, once it has made sure that
/// the earlier try's post did not land after all.
async fn compose_and_post<F, Fut>(
    cx: &JobContext<'_>,
    job: &Job,
    conversation: &Conversation,
    kept: Option<String>,
    give_back: F,
) -> Result<ResponseOutcome, PortError>
where
    F: FnOnce(PortError) -> Fut,
    Fut: std::future::Future<Output = Result<ResponseOutcome, PortError>>,
{
    let Job::Response {
        channel,
        thread_ts,
        newest_ts,
        ..
    } = job
    else {
        return Err(PortError::refused("response", "not a response job"));
    };
    let (thread_ts, newest_ts) = (*thread_ts, *newest_ts);
    let (svc, settings, now) = (cx.svc, &*cx.settings, cx.now);
    let key = job.claim_key();
    let reused = kept.is_some();
    let composed = match kept {
        Some(text) => {
            tracing::info!("posting the reply an earlier try wrote");
            match kept_context(cx, channel).await {
                Ok((bot, ch)) => Composed::Ready { bot, ch, text },
                Err(error) => Composed::Retry(error),
            }
        }
        None => write(cx, job, conversation).await,
    };
    let (bot, ch, text) = match composed {
        Composed::Ready { bot, ch, text } => (bot, ch, text),
        Composed::Done(outcome) => return Ok(outcome),
        Composed::Retry(error) => return give_back(error).await,
    };
    if !reused {
        let until = now + Duration::hours(DRAFT_HOURS);
        if let Err(error) = svc.ports.store.keep_draft(&key, &text, until).await {
            // Only a redelivery would write it again.
            tracing::warn!(%error, "could not keep the written reply");
        }
    }
    // An earlier try whose post's answer was lost, and whose search for it
    // failed too, may have posted: look again before posting.
    let landed = if reused {
        match svc
            .slack
            .find_marked(channel, thread_ts, newest_ts, &key)
            .await
        {
            Ok(landed) => landed,
            Err(error) => return give_back(error).await,
        }
    } else {
        None
    };
    let posted = match landed {
        Some(ts) => {
            tracing::info!(ts = %ts, "an earlier try had posted the reply");
            Ok((ts, escape(&text)))
        }
        // A reply comes after the message it answers: the search starts there.
        None => post_held(svc, channel, thread_ts, &text, &key, newest_ts).await,
    };
    let (ts, escaped) = match posted {
        Ok(posted) => posted,
        // Slack surely did not post (rate limited, never connected): a
        // redelivery may.
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, "chat.postMessage not sent; the job will be redelivered");
            return give_back(error).await;
        }
        Err(error) => {
            // Refused, or it may have gone through: never posted twice.
            tracing::error!(%error, "chat.postMessage failed");
            super::limits::trip_on_token_refusal(cx, &error).await;
            return Ok(ResponseOutcome::PostFailed {
                reason: error.to_string(),
            });
        }
    };
    // Stored as Slack will echo it (escaped); prompts unescape it.
    let posted = Message::new(channel.clone(), bot, escaped, ts, thread_ts, true);
    // Ingest stores it too when Slack echoes it; whichever comes first wins.
    if let Err(error) = svc
        .ports
        .store
        .insert_message(&posted, true, retention(settings, now))
        .await
    {
        tracing::warn!(%error, "posted, but could not store the bot's message");
    }
    if let Err(error) = touch(cx, &ch, &posted).await {
        tracing::warn!(%error, "could not record the channel's activity");
    }
    tracing::info!(ts = %ts, chars = text.chars().count(), "replied");
    Ok(ResponseOutcome::Posted { ts, text })
}

/// Writes the reply to `job`: the bot's id, the channel and the text, or
/// why not.
async fn write(cx: &JobContext<'_>, job: &Job, conversation: &Conversation) -> Composed {
    let Job::Response {
        channel,
        newest_ts,
        reply,
        ..
    } = job
    else {
        return Composed::Retry(PortError::refused("response", "not a response job"));
    };
    let newest_ts = *newest_ts;
    let (svc, settings, now) = (cx.svc, &*cx.settings, cx.now);
    let prepared = async {
        let bot = svc.bot_user_id(settings).await?;
        let ch = context::channel(cx, channel).await?;
        let (request, with_images) = match reply {
            // An opening draws on its channel alone, as its judgment did.
            Reply::Opener { topic } => (
                super::proactive::view(cx, &ch)
                    .await?
                    .post_request(topic, settings),
                None,
            ),
            _ => {
                let mut context = context::build(cx, conversation, Some(newest_ts)).await?;
                let mut opened = super::files::open(cx, &mut context).await;
                let prompt = match reply {
                    Reply::Short => ContextPrompt::ShortResponse,
                    _ => ContextPrompt::Response,
                };
                let images = std::mem::take(&mut opened.images);
                let request = prompt
                    .request(&context, settings, now)
                    .map(|request| LlmRequest { images, ..request });
                // Kept to write the prompt again, should the model refuse
                // the images.
                let with_images = match &request {
                    Ok(r) if !r.images.is_empty() => Some((prompt, context, opened)),
                    _ => None,
                };
                (request, with_images)
            }
        };
        Ok::<_, PortError>((bot, ch, request, with_images))
    }
    .await;
    let (bot, ch, request, with_images) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            super::limits::trip_on_token_refusal(cx, &error).await;
            return Composed::Retry(error);
        }
    };
    let mut written = write_reply(cx, request).await;
    // A model that refuses the images (a kind or a size it does not take):
    // the reply goes without them, each named as unreadable.
    if let (
        Err(WriteError::Unusable(UnusableReply::Llm(error))),
        Some((prompt, mut context, opened)),
    ) = (&written, with_images)
    {
        tracing::warn!(%error, "the reply model refused the images; writing without them");
        opened.withdraw(&mut context);
        written = write_reply(cx, prompt.request(&context, settings, now)).await;
    }
    let text = match written {
        Ok(t) => t,
        Err(WriteError::Retryable(error)) => {
            tracing::warn!(%error, "no reply written yet; the job will be redelivered");
            return Composed::Retry(error);
        }
        Err(WriteError::OverBudget) => {
            return Composed::Done(super::limits::refused_by_budget(cx, job).await.into());
        }
        Err(WriteError::Unusable(unusable)) => {
            let reason = unusable.to_string();
            tracing::error!(%reason, "no reply written");
            return Composed::Done(ResponseOutcome::NoReply { reason });
        }
    };
    Composed::Ready { bot, ch, text }
}

/// The bot's id and the channel, for posting a reply an earlier try wrote
/// (both read by that try: cached, or in the store).
async fn kept_context(
    cx: &JobContext<'_>,
    channel: &ChannelId,
) -> Result<(UserId, Channel), PortError> {
    let bot = match cx.svc.bot_user_id(&cx.settings).await {
        Ok(bot) => bot,
        Err(error) => {
            super::limits::trip_on_token_refusal(cx, &error).await;
            return Err(error);
        }
    };
    Ok((bot, context::channel(cx, channel).await?))
}

/// Why a reply was not written while the token breaker is open.
pub const TOKEN_REFUSED: &str = "token_refused: Slack refused the bot token lately";

/// The most characters a reply is posted with after Slack refused it as
/// `msg_too_long`, counted after escaping: Slack's advice for a message's
/// text.
pub const SAFE_POST_CHARS: usize = 4_000;

/// Posts `text` escaped, marked with `marker` (the job's claim key). When
/// Slack refuses it as too long (`msg_too_long`), once more held to
/// [`SAFE_POST_CHARS`] escaped characters, cut at a sentence or a space and
/// never inside an escape. When its answer was lost (a 5xx, a timeout: it
/// may have posted), the conversation is searched for the marker and the
/// reply posted again only when it is not there (among the messages from
/// `since`, the one it answers). The text posted, escaped, with its `ts`.
async fn post_held(
    svc: &Services,
    channel: &ChannelId,
    thread_ts: Option<Ts>,
    text: &str,
    marker: &str,
    since: Ts,
) -> Result<(Ts, String), PortError> {
    let escaped = escape(text);
    let first = svc
        .slack
        .post_marked(channel, thread_ts, &escaped, marker)
        .await;
    match first {
        Err(error) if error.detail().ends_with("msg_too_long") => {
            let shorter = held_escaped(&escaped, SAFE_POST_CHARS).to_owned();
            tracing::warn!(
                chars = escaped.chars().count(),
                held_to = shorter.chars().count(),
                "Slack refused the reply as too long; posting it shorter"
            );
            let ts = svc
                .slack
                .post_marked(channel, thread_ts, &shorter, marker)
                .await?;
            Ok((ts, shorter))
        }
        Err(PortError::Uncertain { detail, .. }) => {
            match svc
                .slack
                .find_marked(channel, thread_ts, since, marker)
                .await?
            {
                Some(ts) => {
                    tracing::info!(%detail, ts = %ts, "the post's answer was lost, but it was posted");
                    Ok((ts, escaped))
                }
                None => {
                    tracing::warn!(%detail, "the post's answer was lost and it is not there; posting it again");
                    let ts = svc
                        .slack
                        .post_marked(channel, thread_ts, &escaped, marker)
                        .await?;
                    Ok((ts, escaped))
                }
            }
        }
        posted => posted.map(|ts| (ts, escaped)),
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

/// When the mention `newest_ts` asks the bot to forget its author: forgets
/// their profile and the facts they said or that are about them, and says
/// so in the mention's thread.
async fn forget_on_request(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    thread_ts: Option<Ts>,
    newest_ts: Ts,
) -> Result<Option<ResponseOutcome>, PortError> {
    let svc = cx.svc;
    let Some(asked) = svc.ports.store.get_message(channel, newest_ts).await? else {
        return Ok(None);
    };
    if !forget_me(&asked.text) {
        return Ok(None);
    }
    let ids = std::collections::BTreeSet::from([asked.user.clone()]);
    let names: Vec<String> = context::user_names(cx, &ids).await?.into_values().collect();
    let facts = forget_person(svc, &asked.user, &names).await?;
    tracing::info!(facts, "forgot a person on their request");
    let text = escape(FORGOTTEN_NOTICE);
    Ok(Some(
        match svc
            .slack
            .post_message(channel, Some(thread_ts.unwrap_or(newest_ts)), &text)
            .await
        {
            Ok(ts) => ResponseOutcome::Posted { ts, text },
            Err(error) => ResponseOutcome::PostFailed {
                reason: error.to_string(),
            },
        },
    ))
}

/// Reacts to the message `ts` with `chosen`, or with `default_reaction`
/// when the workspace has no such emoji: once per message (a message the
/// bot reacted to is done), without any LLM call. The error is one a
/// redelivery may mend (the claim is given back).
async fn react(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    ts: Ts,
    chosen: &EmojiName,
) -> Result<ResponseOutcome, PortError> {
    let svc = cx.svc;
    let Some(message) = svc.ports.store.get_message(channel, ts).await? else {
        tracing::info!(%ts, "the message to react to is gone");
        return Ok(ResponseOutcome::Stale);
    };
    if message.bot_reaction.is_some() {
        tracing::info!(%ts, "already reacted to the message");
        return Ok(ResponseOutcome::AlreadyDone);
    }
    let fallback = &cx.settings.default_reaction;
    let known = match svc.slack.emoji_names().await {
        Ok(names) => Some(names),
        Err(error) => {
            // Without `emoji:read`: try the name, Slack refuses an unknown one.
            tracing::warn!(%error, "emoji.list failed; trying the emoji as chosen");
            None
        }
    };
    let mut emoji = pick_emoji(chosen, known.as_deref(), fallback);
    let mut reacted = svc.slack.add_reaction(channel, ts, &emoji).await;
    if matches!(reacted, Ok(Reacted::UnknownEmoji)) && emoji != *fallback {
        emoji = fallback.clone();
        reacted = svc.slack.add_reaction(channel, ts, &emoji).await;
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
    if let Err(error) = svc.ports.store.set_bot_reaction(channel, ts, &emoji).await {
        tracing::warn!(%error, "reacted, but could not record the reaction");
    }
    tracing::info!(%ts, emoji = %emoji, "reacted");
    Ok(ResponseOutcome::Reacted { ts, emoji })
}

/// Why no reply was written.
enum WriteError {
    /// The LLM was unavailable after its retries: worth a redelivery.
    Retryable(PortError),
    /// The LLM refused, or answered nothing usable.
    Unusable(UnusableReply),
    /// The day's LLM budget refused the call (`limits::CappedLlm`).
    OverBudget,
}

/// Why there is no reply worth posting, and none worth retrying.
#[derive(Debug, thiserror::Error)]
enum UnusableReply {
    /// The prompt did not render (a template bug).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The LLM failed in a way a retry would not mend.
    #[error("LLM failed: {0}")]
    Llm(PortError),
    #[error("the LLM wrote an empty reply")]
    Empty,
}

async fn write_reply(
    cx: &JobContext<'_>,
    request: Result<myao_core::ports::LlmRequest, PromptError>,
) -> Result<String, WriteError> {
    let (svc, settings) = (cx.svc, &*cx.settings);
    let request = request.map_err(|e| WriteError::Unusable(e.into()))?;
    let reply = match svc.llm.complete(&request).await {
        Ok(reply) => reply,
        Err(error) if error.is_retryable() => return Err(WriteError::Retryable(error)),
        Err(error) if super::limits::is_over_budget(&error) => return Err(WriteError::OverBudget),
        Err(error) => return Err(WriteError::Unusable(UnusableReply::Llm(error))),
    };
    let text = clean_reply(&reply.text, &settings.persona_name);
    if text.is_empty() {
        return Err(WriteError::Unusable(UnusableReply::Empty));
    }
    // As long as a person would write, cut at a sentence (before escaping).
    Ok(held_to(&text, settings.max_reply_chars as usize).to_owned())
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
