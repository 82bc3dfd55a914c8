//! The judgment: when a conversation has gone quiet, decide whether and when
//! to speak (designs 06 and extra05b).

use chrono::{DateTime, Duration, Utc};

use super::context::{self, recent, touch, Recent};
use super::{Services, SCHEDULER_MIN_DELAY_SECONDS};
use crate::domain::judgment::JudgmentParseError;
use crate::domain::routing::jittered_wait;
use crate::domain::{
    ChannelId, Conversation, Job, JobKind, JudgmentResult, MemoryKind, MemoryScope, ScheduleName,
    Settings, Ts,
};
use crate::ports::PortError;
use crate::prompts::{ContextPrompt, PromptError};

/// What a judgment job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgmentOutcome {
    /// A newer message arrived after the job was made: its own judgment decides.
    Stale,
    /// The conversation has no message left (all deleted).
    Empty,
    /// The bot spoke last: nothing to add.
    BotSpokeLast,
    /// The newest message is older than `max_message_age_seconds`.
    TooOld,
    /// The LLM failed or answered something unusable: silence.
    Silent { reason: String },
    /// The LLM decided not to speak.
    Declined(JudgmentResult),
    /// A response job was made, due at `at`.
    Respond {
        result: JudgmentResult,
        at: DateTime<Utc>,
    },
}

/// Queues a memory refresh of a thread that has messages its memory lacks.
async fn refresh_thread_memory(svc: &Services, channel: &ChannelId, thread_ts: Ts, newest: Ts) {
    let scope = MemoryScope::Thread {
        channel: channel.clone(),
        thread_ts,
    };
    let stale = match svc.store.get_memory(&scope, MemoryKind::Short).await {
        Ok(memory) => !super::memory::covers(memory.as_ref(), newest),
        Err(error) => {
            tracing::warn!(%error, "could not read the thread memory; refreshing it");
            true
        }
    };
    if stale {
        let job = Job::ThreadMemory {
            channel: channel.clone(),
            thread_ts,
        };
        if let Err(error) = svc.queue.send(&job, 0).await {
            // The recurring memory run covers threads this misses.
            tracing::warn!(%error, "could not queue a thread memory job");
        }
    }
}

/// Runs a judgment job.
pub async fn run(
    svc: &Services,
    channel: &ChannelId,
    thread_ts: Option<Ts>,
    newest_ts: Ts,
) -> Result<JudgmentOutcome, PortError> {
    let settings = svc.settings.current().await?;
    let conversation = Conversation {
        channel: channel.clone(),
        thread_ts,
    };

    let Some(Recent {
        newest,
        newest_person,
        ..
    }) = recent(svc, &conversation, newest_ts).await?
    else {
        return Ok(JudgmentOutcome::Empty);
    };
    let now = svc.clock.now();
    // Only a person's newer message supersedes this job: it scheduled a
    // judgment of its own. A bot's message (a CI notice) schedules none, so
    // the judgment goes on and sees it in the conversation.
    if let Some(person) = newest_person {
        tracing::info!(job = %newest_ts, newest = %person, "stale judgment job");
        // Normally the newer message's upsert replaced this job and it never
        // fires. It fires when two deliveries raced and the older one's
        // upsert landed last: the newer judgment was overwritten, so make it
        // again (moving forward only, so this is idempotent).
        let wait = jittered_wait(
            settings.min_wait_seconds,
            settings.jitter_ratio,
            svc.random.unit(),
        );
        let at = (person.to_datetime() + wait).max(now);
        let job = Job::Judgment {
            channel: channel.clone(),
            thread_ts,
            newest_ts: person,
        };
        let name = ScheduleName::for_conversation(JobKind::Judgment, &conversation);
        svc.scheduler.upsert(&name, at, &job).await?;
        return Ok(JudgmentOutcome::Stale);
    }
    let ch = context::channel(svc, &settings, channel, now).await?;
    touch(svc, &settings, &ch, &newest).await?;
    if let Some(root) = thread_ts {
        // The wait just ended: the thread went quiet, so its memory is due.
        refresh_thread_memory(svc, channel, root, newest.ts).await;
    }
    let bot = svc.bot_user_id(&settings).await.ok();
    if newest.is_bot && bot.as_ref().is_none_or(|b| *b == newest.user) {
        return Ok(JudgmentOutcome::BotSpokeLast);
    }
    if now - newest.ts.to_datetime()
        > Duration::seconds(i64::from(settings.max_message_age_seconds))
    {
        return Ok(JudgmentOutcome::TooOld);
    }
    let result = match judge(svc, &settings, &conversation, newest_ts, now).await? {
        Ok(result) => result,
        Err(unusable) => {
            // The reason may quote the LLM's answer: its words at DEBUG only
            // (`judge` logged what went wrong).
            let reason = unusable.to_string();
            tracing::warn!(
                reason_chars = reason.chars().count(),
                "judgment unusable; staying silent"
            );
            tracing::debug!(%reason, "why the judgment is unusable");
            return Ok(JudgmentOutcome::Silent { reason });
        }
    };
    // The reason is the LLM's words about the conversation: DEBUG only.
    tracing::info!(
        should_respond = result.should_respond,
        confidence = result.confidence,
        delay = ?result.delay_seconds,
        reason_chars = result.reason.chars().count(),
        "judged"
    );
    tracing::debug!(reason = %result.reason, "the judgment's reason");
    if !result.should_respond {
        return Ok(JudgmentOutcome::Declined(result));
    }
    let delay = result.delay();
    let at = now + Duration::seconds(i64::from(delay));
    let job = Job::Response {
        channel: channel.clone(),
        thread_ts,
        newest_ts,
        mention: false,
    };
    if delay >= SCHEDULER_MIN_DELAY_SECONDS {
        let name = ScheduleName::for_conversation(JobKind::Response, &conversation);
        svc.scheduler.upsert(&name, at, &job).await?;
    } else {
        svc.queue.send(&job, delay).await?;
    }
    Ok(JudgmentOutcome::Respond { result, at })
}

/// Why a judgment is unusable: the bot stays silent.
#[derive(Debug, thiserror::Error)]
enum UnusableJudgment {
    /// The prompt did not render (a template bug).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The LLM failed after its retries, or a spend limit refused the call.
    #[error("LLM failed: {0}")]
    Llm(PortError),
    /// The answer is not a verdict; `answer` holds its first characters.
    #[error("{error}: {answer:?}")]
    NotAVerdict {
        error: JudgmentParseError,
        answer: String,
    },
}

/// How much of an answer that is not a verdict its error quotes.
const QUOTED_ANSWER_CHARS: usize = 200;

/// Asks the LLM. The outer error is a storage failure; the inner one an
/// unusable judgment.
async fn judge(
    svc: &Services,
    settings: &Settings,
    conversation: &Conversation,
    newest_ts: Ts,
    now: DateTime<Utc>,
) -> Result<Result<JudgmentResult, UnusableJudgment>, PortError> {
    let context = context::build(svc, settings, conversation, Some(newest_ts)).await?;
    let request = match ContextPrompt::Judgment.request(&context, settings, now) {
        Ok(request) => request,
        Err(e) => {
            tracing::warn!(error = %e, "judgment prompt failed to render");
            return Ok(Err(e.into()));
        }
    };
    let reply = match svc.llm.complete(&request).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "judgment LLM call failed");
            return Ok(Err(UnusableJudgment::Llm(e)));
        }
    };
    Ok(JudgmentResult::parse(&reply.text).map_err(|error| {
        // The answer is conversation: its length at WARN, its words at DEBUG.
        tracing::warn!(
            %error,
            answer_chars = reply.text.chars().count(),
            "the judgment's answer is not a verdict"
        );
        tracing::debug!(answer = %reply.text, "the judgment's answer");
        UnusableJudgment::NotAVerdict {
            error,
            answer: reply.text.chars().take(QUOTED_ANSWER_CHARS).collect(),
        }
    }))
}
