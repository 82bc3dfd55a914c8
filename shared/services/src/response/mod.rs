//! The response: write and post a reply in a conversation (design 08).

mod claim;
mod outcome;
mod post;
mod react;
mod scene;
mod write;

use chrono::Duration;

use myao_core::ports::{PortError, SlackApi};
use myao_domain::people::{forget_me, FORGOTTEN_NOTICE};
use myao_domain::text::escape;
use myao_domain::{ChannelId, Message, Reply, ResponseJob, Ts};

use crate::context;
use crate::prompts::status_lines;
use crate::reflection::forget_person;
use crate::{JobContext, Services};
use claim::Claim;
pub use outcome::{NoReply, ResponseOutcome};
use post::compose_and_post;
pub use post::{LOST_POST_SECONDS, SAFE_POST_CHARS};
use react::{react, take_hint};
use scene::Scene;

/// Runs a response job: drops it when it came too late, claims it (a job
/// made twice is answered once), checks what may keep it from being
/// written, then reacts, or writes and posts the reply. Its conversation is
/// read once, at the start ([`Scene`]): the late checks, the mention's
/// words and the reply's context come from that read.
pub async fn run(svc: &Services, job: &ResponseJob) -> Result<ResponseOutcome, PortError> {
    let cx = JobContext::begin(svc).await?;
    let ResponseJob {
        channel,
        thread_ts,
        newest_ts,
        mention,
        reply,
        ..
    } = job;
    if too_old(&cx, job) {
        return Ok(ResponseOutcome::TooOld);
    }
    let scene = Scene::read(&cx, job).await?;
    if !*mention && stale(&cx, job, &scene).await {
        return Ok(ResponseOutcome::Stale);
    }
    // One claim per job: a job made twice (a retried delivery, a mention seen
    // as message and app_mention) is answered once.
    let Some(claim) = Claim::take(&cx, job).await? else {
        tracing::info!("response job already handled");
        return Ok(ResponseOutcome::AlreadyDone);
    };
    let kept = match before_writing(&cx, job, scene.answered.as_ref()).await {
        Ok(Ready::Write { kept }) => kept,
        Ok(Ready::Done(outcome)) => return Ok(outcome),
        Err(error) => return claim.give_back(error).await,
    };
    if let Reply::Reaction { emoji } = reply {
        return match react(&cx, channel, *newest_ts, emoji).await {
            Ok(outcome) => Ok(outcome),
            Err(error) => claim.give_back(error).await,
        };
    }
    // A person who called the bot sees it writing: a status in the thread
    // the reply goes to (a top-level mention's own thread, cleared below),
    // before the model is asked. Not for unprompted replies: a member does
    // not announce that they are about to chime in.
    let status = match (mention, reply) {
        (true, Reply::Full | Reply::Short) => {
            show_status(&cx, channel, thread_ts.unwrap_or(*newest_ts)).await
        }
        _ => None,
    };
    let outcome = compose_and_post(&cx, job, kept, &claim, scene).await;
    if let Some(shown_in) = status {
        // Posting in its thread clears it; anything else is cleared here.
        let cleared =
            matches!(outcome, Ok(ResponseOutcome::Posted { .. })) && *thread_ts == Some(shown_in);
        if !cleared {
            clear_status(cx.slack(), channel, shown_in).await;
        }
    }
    outcome
}

/// Whether the job is a mention older than `mention_max_age_seconds` (a
/// late redelivery): a late answer is worse than none.
fn too_old(cx: &JobContext<'_>, job: &ResponseJob) -> bool {
    if !job.mention {
        return false;
    }
    let max_age = cx.settings().mention_max_age_seconds;
    let age = cx.now() - job.newest_ts.to_datetime();
    let old = age > Duration::seconds(i64::from(max_age));
    if old {
        tracing::warn!(
            age_seconds = age.num_seconds(),
            max_age_seconds = max_age,
            "mention too old to answer; dropped"
        );
    }
    old
}

/// Whether an unprompted reply came too late, by its `scene`: someone
/// answered since its judgment ([`scene::answered_since`]), the silence an
/// opening would break is over, the message it answers at the top level
/// has a thread now, or a person spoke at the top level before the thread
/// it answers in began.
async fn stale(cx: &JobContext<'_>, job: &ResponseJob, scene: &Scene) -> bool {
    let ResponseJob {
        thread_ts,
        newest_ts,
        reply,
        seen_ts,
        ..
    } = job;
    let opener = matches!(reply, Reply::Opener { .. });
    if let Some(recent) = scene.recent(*newest_ts) {
        let bot = if scene::needs_bot(&recent, *newest_ts, *seen_ts) {
            cx.bot_user_id().await.ok()
        } else {
            None
        };
        if scene::answered_since(&recent, *newest_ts, *seen_ts, bot.as_ref()) {
            tracing::info!(job = %newest_ts, newest = %recent.newest.ts, "stale response job");
            return true;
        }
    }
    if opener && scene.opening_broken(*newest_ts) {
        tracing::info!(job = %newest_ts, "stale opening: the channel spoke since");
        return true;
    }
    if thread_ts.is_none() && !opener && scene.answered_in_its_thread() {
        tracing::info!(job = %newest_ts, "stale response job: answered in its thread");
        return true;
    }
    let conversation = scene::conversation_of(job);
    if scene.spoken_after_at_the_top_level(&conversation, *newest_ts, *seen_ts) {
        tracing::info!(job = %newest_ts, "stale response job: spoken after at the top level");
        return true;
    }
    false
}

/// Whether a claimed job is written, and from what.
enum Ready {
    /// Write it (or post `kept`, the reply an earlier try wrote).
    Write { kept: Option<String> },
    /// Done without a reply.
    Done(ResponseOutcome),
}

/// What may keep a claimed job from being written: Slack refusing the
/// token lately, a request to be forgotten, a spend limit. A reply an
/// earlier try wrote, which a post failure left unposted, is posted as it
/// is: that try passed the limits and asked the LLM already.
async fn before_writing(
    cx: &JobContext<'_>,
    job: &ResponseJob,
    answered: Option<&Message>,
) -> Result<Ready, PortError> {
    let ResponseJob {
        thread_ts,
        mention,
        reply,
        ..
    } = job;
    // Slack refused the token lately: a reply could not be posted, so no
    // LLM call writes one (the alarm on SlackAuthErrors tells a person). A
    // mention waits for the token: Slack is asked whether it works again
    // (which closes the breaker), and until it does the job comes back
    // (its quick retries, then the queue's), up to `mention_max_age_seconds`.
    if crate::limits::token_refused(cx).await? {
        if !*mention {
            tracing::warn!("no reply: Slack refused the bot token lately");
            return Ok(Ready::Done(ResponseOutcome::NoReply(NoReply::TokenRefused)));
        }
        if !crate::limits::token_works_again(cx).await? {
            tracing::warn!("a mention while Slack refuses the bot token: it waits for the token");
            return Err(PortError::unavailable(
                "slack",
                "the bot token was refused lately; the mention waits for it to work again",
            ));
        }
    }
    // "Forget me": no LLM call and no limit, the person's profile and facts
    // go, and a fixed line says so.
    if *mention {
        // The mention, as the scene read it (gone: neither applies).
        if let Some(said) = answered {
            if let Some(outcome) = forget_on_request(cx, said, *thread_ts).await? {
                return Ok(Ready::Done(outcome));
            }
            // "Not now", 「ありがとう」: taken as a hint, acknowledged with a
            // reaction, not answered.
            if let Some(outcome) = take_hint(cx, said, reply).await? {
                return Ok(Ready::Done(outcome));
            }
        }
    }
    let kept = cx.store().draft(&job.claim_key()).await?;
    // Spend limits: after the claim (a duplicate is not counted twice),
    // before the LLM (a refused job costs no call; its claim is kept).
    if kept.is_none() {
        if let Some(refused) = crate::limits::admit_reply(cx, job).await? {
            return Ok(Ready::Done(refused.into()));
        }
    }
    Ok(Ready::Write { kept })
}

/// Shows that the bot is writing in `thread` of `channel`; returns the
/// thread when it did. Fails soft: a missing scope or an older workspace
/// costs the sign of life, never the reply.
async fn show_status(cx: &JobContext<'_>, channel: &ChannelId, thread: Ts) -> Option<Ts> {
    let lines = match status_lines(&cx.settings().persona_name) {
        Ok(lines) if !lines.is_empty() => lines,
        Ok(_) => return None,
        Err(error) => {
            tracing::warn!(%error, "the status template did not render");
            return None;
        }
    };
    match cx
        .slack()
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
async fn clear_status(slack: &dyn SlackApi, channel: &ChannelId, thread: Ts) {
    if let Err(error) = slack.set_status(channel, thread, "", &[]).await {
        tracing::warn!(%error, "could not clear the writing status");
    }
}

/// When the mention `newest_ts` asks the bot to forget its author: forgets
/// their profile and the facts they said or that are about them, and says
/// so in the mention's thread.
async fn forget_on_request(
    cx: &JobContext<'_>,
    asked: &Message,
    thread_ts: Option<Ts>,
) -> Result<Option<ResponseOutcome>, PortError> {
    let (channel, newest_ts) = (&asked.channel, asked.ts);
    if !forget_me(&asked.text) {
        return Ok(None);
    }
    let ids = std::collections::BTreeSet::from([asked.user.clone()]);
    let names: Vec<String> = context::user_names(cx, &ids).await?.into_values().collect();
    let facts = forget_person(cx.store(), &asked.user, &names).await?;
    tracing::info!(facts, "forgot a person on their request");
    let text = escape(FORGOTTEN_NOTICE);
    Ok(Some(
        match cx
            .slack()
            .post_message(channel, Some(thread_ts.unwrap_or(newest_ts)), &text)
            .await
        {
            Ok(ts) => ResponseOutcome::Posted { ts, text },
            Err(error) => ResponseOutcome::PostFailed(error),
        },
    ))
}
