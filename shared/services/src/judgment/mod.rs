//! The judgment: when a conversation has gone quiet, decide whether and when
//! to speak (designs 06 and extra05b).

use chrono::{DateTime, Duration, Utc};

use super::context::{self, recent, touch, Recent};
use super::{JobContext, Services, SCHEDULER_MIN_DELAY_SECONDS};
use crate::prompts::{ContextPrompt, PromptError};
use myao_core::ports::{ChannelRecord, PortError};
use myao_core::schedule::ScheduleName;
use myao_domain::judgment::JudgmentParseError;
use myao_domain::limits;
use myao_domain::routing::{addressed, jittered_wait};
use myao_domain::rules::{self, Decision, Facts, Gate, Scene, Score, Thresholds};
use myao_domain::{
    ChannelId, Conversation, Job, JobKind, JudgmentResult, Message, Reply, Settings, Ts, UserId,
};

/// The rule stage's verdict on a conversation: its score, the signals
/// behind it, the thresholds it was held to and what they decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Ruling {
    pub score: Score,
    pub thresholds: Thresholds,
    pub decision: Decision,
}

impl Ruling {
    /// `decision score=N signals` without any word of the conversation: the
    /// line logged at INFO and shown in the local timeline.
    pub fn explain(&self) -> String {
        format!(
            "{} score={} [{}..{}) {}",
            self.decision.name(),
            self.score.total,
            self.thresholds.low,
            self.thresholds.high,
            self.score.explain()
        )
    }
}

/// What a judgment job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgmentOutcome {
    /// A newer message arrived after the job was made: its own judgment decides.
    Stale,
    /// The conversation has no message left (all deleted).
    Empty,
    /// A gate closed before any score or LLM call ([`rules::GATES`]).
    Held(Gate),
    /// The rule stage scored below the low threshold, or its waiting
    /// question is not left to the room yet (judged again then,
    /// [`Score::again`]): silent, no LLM call.
    Quiet(Ruling),
    /// The channel had its `max_unprompted_per_channel_hour` replies, or
    /// the workspace its `max_unprompted_per_workspace_hour`.
    Capped(Ruling),
    /// In the ambiguous band, the LLM failed or answered something
    /// unusable: silence.
    Silent { ruling: Ruling, reason: String },
    /// In the ambiguous band, the LLM decided not to speak.
    Declined(Ruling, JudgmentResult),
    /// In the ambiguous band, the LLM decided to speak: a response job was
    /// made, due at `at`.
    Respond {
        ruling: Ruling,
        result: JudgmentResult,
        at: DateTime<Utc>,
    },
    /// The rule stage scored at or above the high threshold: a response job
    /// was made without asking the LLM, due at `at`.
    Sure { ruling: Ruling, at: DateTime<Utc> },
}

impl JudgmentOutcome {
    /// The outcome's one name, in the INFO log line and the `Judgments`
    /// metric's `Outcome` (docs/operations.md).
    pub fn name(&self) -> &'static str {
        match self {
            JudgmentOutcome::Stale => "stale",
            JudgmentOutcome::Empty => "empty",
            JudgmentOutcome::Held(Gate::TooOld) => "too_old",
            JudgmentOutcome::Held(_) => "held",
            JudgmentOutcome::Quiet(_) => "rule_silent",
            JudgmentOutcome::Capped(_) => "limited",
            JudgmentOutcome::Silent { .. } => "unusable",
            JudgmentOutcome::Declined(..) => "llm_no",
            JudgmentOutcome::Respond { .. } => "llm_yes",
            JudgmentOutcome::Sure { ruling, .. } if ruling.decision == Decision::React => {
                "rule_react"
            }
            JudgmentOutcome::Sure { .. } => "rule_yes",
        }
    }

    /// The rule stage's ruling behind the outcome: `None` when no score was
    /// made (stale, empty, held by a gate).
    pub fn ruling(&self) -> Option<&Ruling> {
        match self {
            JudgmentOutcome::Stale | JudgmentOutcome::Empty | JudgmentOutcome::Held(_) => None,
            JudgmentOutcome::Quiet(ruling)
            | JudgmentOutcome::Capped(ruling)
            | JudgmentOutcome::Silent { ruling, .. }
            | JudgmentOutcome::Declined(ruling, _)
            | JudgmentOutcome::Respond { ruling, .. }
            | JudgmentOutcome::Sure { ruling, .. } => Some(ruling),
        }
    }
}

/// The wait before an answer the rule stage is sure of: a person who sees a
/// question waiting takes a little while to answer it.
const SURE_DELAY_SECONDS: (u32, u32) = (10, 30);

/// Runs a judgment job: the stale check, then the gates, then the rule
/// stage, and the LLM only in its ambiguous band.
pub async fn run(
    svc: &Services,
    channel: &ChannelId,
    thread_ts: Option<Ts>,
    newest_ts: Ts,
) -> Result<JudgmentOutcome, PortError> {
    let cx = JobContext::begin(svc).await?;
    let (settings, now) = (&*cx.settings, cx.now);
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
    let name = ScheduleName::for_conversation(JobKind::Judgment, &conversation);
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
            svc.ports.random.unit(),
        );
        // Not past the window's ceiling (`max_wait_seconds`), which this
        // judgment did not close.
        let ceiling = svc
            .ports
            .store
            .held_until(&limits::judgment_window(name.as_str()))
            .await?
            .map(|until| until - limits::WINDOW_GRACE);
        let at = ceiling
            .map_or(person.to_datetime() + wait, |c| {
                (person.to_datetime() + wait).min(c)
            })
            .max(now);
        let job = Job::Judgment {
            channel: channel.clone(),
            thread_ts,
            newest_ts: person,
        };
        svc.ports.scheduler.upsert(&name, at, &job).await?;
        return Ok(JudgmentOutcome::Stale);
    }
    // This judgment covers every message so far: the next one opens a new
    // window (`max_wait_seconds`).
    svc.ports
        .store
        .release(&limits::judgment_window(name.as_str()))
        .await?;
    let (ch, record) = context::channel_and_record(&cx, channel).await?;
    touch(&cx, &ch, &newest).await?;
    let bot = svc.bot_user_id(settings).await.ok();
    let scene = Scenery::read(&cx, &conversation).await?;
    let learned_wait = learn_answer_times(&cx, channel, record, &scene.channel).await?;
    let since = bot.as_ref().and_then(|b| scene.last_call(b, settings));
    let facts = Facts {
        newest: &newest,
        bot: bot.as_ref(),
        now,
        max_age: Duration::seconds(i64::from(settings.max_message_age_seconds)),
        thresholds: settings.thresholds_in(channel),
        bot_last_spoke: bot.as_ref().and_then(|b| scene.bot_last_spoke(b)),
        cooldown: Duration::seconds(i64::from(settings.cooldown_seconds)),
        backoff_until: backoff_until(&cx, channel, since).await?,
    };
    if let Some(gate) = rules::closed_gate(&facts) {
        tracing::info!(gate = gate.name(), "judgment held by a gate");
        if gate == Gate::Cooldown {
            // Not never: once the cooldown is over, as a person who has just
            // spoken waits a little before speaking again.
            let again = facts.bot_last_spoke.unwrap_or(now) + facts.cooldown;
            judge_again(&cx, &name, &conversation, newest_ts, again).await?;
        }
        return Ok(JudgmentOutcome::Held(gate));
    }
    let (Some(thresholds), Some(bot)) = (facts.thresholds, bot) else {
        // No thresholds closes a gate; an unknown bot id leaves nothing to
        // score against (Slack unreachable): silence.
        return Ok(JudgmentOutcome::Held(Gate::MentionsOnly));
    };
    let rule_scene = Scene {
        conversation: &scene.conversation,
        top_level: thread_ts.is_none(),
        channel: &scene.channel,
        bot: &bot,
        now,
        interests: &settings.interest_keywords,
        learned_wait,
    };
    let score = rules::score(&rule_scene);
    let closing = rules::thanks_to_bot(&rule_scene, &settings.names());
    let ruling = Ruling {
        decision: match closing {
            Some(_) => Decision::React,
            // A question not yet left to the room: silent for now.
            None if score.again.is_some() => Decision::Silent,
            None => rules::decide(&score, thresholds),
        },
        score,
        thresholds,
    };
    tracing::info!(ruling = %ruling.explain(), "rule stage");
    let answer = |reply: Reply| {
        Answer::of(
            &conversation,
            &scene.conversation,
            &ruling,
            newest_ts,
            reply,
        )
    };
    if let (Decision::Silent, Some(at)) = (ruling.decision, ruling.score.again) {
        // A question not yet left to the room (its conversation's pace, or
        // an exchange that may still go on): judged again when it would be,
        // unless a person speaks first. No LLM call before then.
        judge_again(&cx, &name, &conversation, newest_ts, at).await?;
        return Ok(JudgmentOutcome::Quiet(ruling));
    }
    match ruling.decision {
        Decision::Silent => Ok(JudgmentOutcome::Quiet(ruling)),
        Decision::React => {
            if super::limits::refused_unprompted(&cx, channel)
                .await?
                .is_some()
            {
                return Ok(JudgmentOutcome::Capped(ruling));
            }
            let emoji = closing.map_or_else(
                || settings.default_reaction.clone(),
                |(kind, _)| kind.emoji(&settings.default_reaction),
            );
            let (low, high) = SURE_DELAY_SECONDS;
            let delay =
                low + ((high - low) as f64 * svc.ports.random.unit().clamp(0.0, 1.0)) as u32;
            let at = answer(Reply::Reaction { emoji }).send(&cx, delay).await?;
            Ok(JudgmentOutcome::Sure { ruling, at })
        }
        Decision::Respond => {
            if let Some(next_hour) = super::limits::refused_unprompted(&cx, channel).await? {
                // A question still waiting when the next hour's replies are
                // free is judged again then.
                let asked = ruling.score.answers.unwrap_or(newest_ts).to_datetime();
                if next_hour - asked <= rules::QUESTION_MAX_AGE {
                    judge_again(&cx, &name, &conversation, newest_ts, next_hour).await?;
                }
                return Ok(JudgmentOutcome::Capped(ruling));
            }
            let (low, high) = SURE_DELAY_SECONDS;
            let delay =
                low + ((high - low) as f64 * svc.ports.random.unit().clamp(0.0, 1.0)) as u32;
            let at = answer(Reply::Full).send(&cx, delay).await?;
            Ok(JudgmentOutcome::Sure { ruling, at })
        }
        Decision::Ask => {
            if super::limits::token_refused(&cx).await? {
                // No answer could be posted: no LLM call to decide one.
                let reason = super::response::TOKEN_REFUSED.to_owned();
                return Ok(JudgmentOutcome::Silent { ruling, reason });
            }
            let result = match judge(&cx, &conversation, newest_ts).await? {
                Ok(result) => result,
                Err(unusable) => {
                    // The reason may quote the LLM's answer: its words at DEBUG
                    // only (`judge` logged what went wrong).
                    let reason = unusable.to_string();
                    tracing::warn!(
                        reason_chars = reason.chars().count(),
                        "judgment unusable; staying silent"
                    );
                    tracing::debug!(%reason, "why the judgment is unusable");
                    return Ok(JudgmentOutcome::Silent { ruling, reason });
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
            let Some(reply) = result.reply(&settings.default_reaction) else {
                note_decline(&cx, channel, since).await?;
                return Ok(JudgmentOutcome::Declined(ruling, result));
            };
            if super::limits::refused_unprompted(&cx, channel)
                .await?
                .is_some()
            {
                return Ok(JudgmentOutcome::Capped(ruling));
            }
            let at = answer(reply).send(&cx, result.delay()).await?;
            Ok(JudgmentOutcome::Respond { ruling, result, at })
        }
    }
}

/// Folds the questions of the channel's recent messages whose fate is now
/// known into its learned answer times (stored when any was), and reads
/// from them how long a question waits here at the channel's level: `None`
/// while the channel has too little history.
async fn learn_answer_times(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    record: Option<ChannelRecord>,
    messages: &[Message],
) -> Result<Option<Duration>, PortError> {
    let settings = &*cx.settings;
    let mut times = record.and_then(|r| r.answer_times).unwrap_or_default();
    if times.learn(messages, cx.now) {
        cx.svc.ports.store.put_answer_times(channel, &times).await?;
    }
    let floor = Duration::seconds(i64::from(settings.min_wait_seconds));
    Ok(times.wait(
        settings.chattiness_in(channel),
        floor,
        Ts::from_datetime(cx.now),
    ))
}

/// What the rule stage reads: the judged conversation (a thread with its
/// root) and the channel's recent messages.
struct Scenery {
    conversation: Vec<Message>,
    channel: Vec<Message>,
}

impl Scenery {
    async fn read(cx: &JobContext<'_>, conversation: &Conversation) -> Result<Scenery, PortError> {
        let (svc, settings) = (cx.svc, &*cx.settings);
        let limit = settings.message_limit as usize;
        let mut messages = svc
            .ports
            .store
            .conversation_messages(conversation, limit)
            .await?;
        if let Some(root) = conversation.thread_ts {
            if let Some(root) = svc
                .ports
                .store
                .get_message(&conversation.channel, root)
                .await?
            {
                messages.insert(0, root);
            }
        }
        let channel = svc
            .ports
            .store
            .recent_messages(
                &conversation.channel,
                settings.channel_messages_limit as usize,
            )
            .await?;
        Ok(Scenery {
            conversation: messages,
            channel,
        })
    }

    /// When the bot last spoke in the channel. A reaction counts as
    /// speaking, at the time of the message it is on (the reaction's own
    /// time is not kept: it comes seconds later).
    fn bot_last_spoke(&self, bot: &UserId) -> Option<DateTime<Utc>> {
        self.channel
            .iter()
            .filter(|m| m.user == *bot || m.bot_reaction.is_some())
            .map(|m| m.ts.to_datetime())
            .max()
    }

    /// The bot's last message, or the last message calling it, in the
    /// channel: a row of declines starts after it.
    fn last_call(&self, bot: &UserId, settings: &Settings) -> Option<Ts> {
        self.channel
            .iter()
            .filter(|m| m.user == *bot || addressed(m, Some(bot), false, false, settings).is_some())
            .map(|m| m.ts)
            .max()
    }
}

/// The newest message the judgment read, when it is newer than the one
/// answered: a bot's message after it is news to the answer
/// ([`Job::Response`]'s `seen_ts`).
fn seen(messages: &[Message], answered: Ts) -> Option<Ts> {
    messages
        .iter()
        .map(|m| m.ts)
        .max()
        .filter(|s| *s > answered)
}

/// Where and to what the bot answers.
struct Answer {
    job: Job,
    name: ScheduleName,
}

impl Answer {
    /// The answer to what the ruling names: in the thread of an earlier
    /// top-level message when others came after it, else in the judged
    /// conversation. A reaction goes on the newest person's message, in
    /// the judged conversation.
    fn of(
        conversation: &Conversation,
        messages: &[Message],
        ruling: &Ruling,
        newest_ts: Ts,
        reply: Reply,
    ) -> Answer {
        if let Reply::Reaction { .. } = reply {
            let on = messages
                .iter()
                .rev()
                .find(|m| !m.is_bot && conversation.contains(m))
                .map_or(newest_ts, |m| m.ts);
            let job = Job::Response {
                channel: conversation.channel.clone(),
                thread_ts: conversation.thread_ts,
                newest_ts: on,
                mention: false,
                reply,
                seen_ts: seen(messages, on),
            };
            return Answer {
                job,
                name: ScheduleName::for_conversation(JobKind::Response, conversation),
            };
        }
        let answers = ruling.score.answers.unwrap_or(newest_ts);
        let thread_ts = rules::reply_thread(conversation.thread_ts, messages, answers);
        let (thread_ts, newest_ts) = match (conversation.thread_ts, thread_ts) {
            // Answering an earlier top-level message in its thread: the
            // response follows that thread.
            (None, Some(root)) => (Some(root), answers),
            _ => (conversation.thread_ts, newest_ts),
        };
        let job = Job::Response {
            channel: conversation.channel.clone(),
            thread_ts,
            newest_ts,
            mention: false,
            reply,
            seen_ts: seen(messages, newest_ts),
        };
        let answered = Conversation {
            channel: conversation.channel.clone(),
            thread_ts,
        };
        Answer {
            job,
            name: ScheduleName::for_conversation(JobKind::Response, &answered),
        }
    }

    /// Makes the response job, due in `delay` seconds; returns when.
    async fn send(&self, cx: &JobContext<'_>, delay: u32) -> Result<DateTime<Utc>, PortError> {
        let svc = cx.svc;
        let at = cx.now + Duration::seconds(i64::from(delay));
        if delay >= SCHEDULER_MIN_DELAY_SECONDS {
            svc.ports
                .scheduler
                .upsert(&self.name, at, &self.job)
                .await?;
        } else {
            svc.ports.queue.send(&self.job, delay).await?;
        }
        Ok(at)
    }
}

/// Until when the channel's judgments are backed off: not at all once the
/// bot was called (or spoke) after the backoff began. Read here, not ended
/// by ingest, so that a call costs ingest no extra write.
async fn backoff_until(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    last_call: Option<Ts>,
) -> Result<Option<DateTime<Utc>>, PortError> {
    let (svc, settings) = (cx.svc, &*cx.settings);
    let Some(until) = svc
        .ports
        .store
        .held_until(&limits::backoff_claim(channel))
        .await?
    else {
        return Ok(None);
    };
    let began = until - Duration::seconds(i64::from(settings.backoff_seconds));
    let called_since = last_call.is_some_and(|t| t.to_datetime() >= began);
    Ok((!called_since).then_some(until))
}

/// Makes the conversation's judgment again, at `at` (or just after now),
/// unless a person has spoken since: their message made a judgment of its
/// own, which this must not move.
async fn judge_again(
    cx: &JobContext<'_>,
    name: &ScheduleName,
    conversation: &Conversation,
    newest_ts: Ts,
    at: DateTime<Utc>,
) -> Result<(), PortError> {
    let (svc, now) = (cx.svc, cx.now);
    if recent(svc, conversation, newest_ts)
        .await?
        .is_some_and(|r| r.newest_person.is_some())
    {
        return Ok(());
    }
    let job = Job::Judgment {
        channel: conversation.channel.clone(),
        thread_ts: conversation.thread_ts,
        newest_ts,
    };
    let at = at.max(now + Duration::seconds(1));
    svc.ports.scheduler.upsert(name, at, &job).await
}

/// Counts an LLM decline in `channel`; the `backoff_after_declines`-th in a
/// row (since the bot's last message or call) backs the channel's
/// judgments off for `backoff_seconds`.
async fn note_decline(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    since: Option<Ts>,
) -> Result<(), PortError> {
    let (svc, settings, now) = (cx.svc, &*cx.settings, cx.now);
    let row = u64::from(settings.backoff_after_declines);
    if row == 0 || settings.backoff_seconds == 0 {
        return Ok(());
    }
    let counter = limits::declines(channel, since, now);
    // The row's first declines are counted; the one that finds the counter
    // at `row - 1` completes the row (and is not counted: the next decline
    // after the backoff completes it again).
    if !svc
        .ports
        .store
        .count(&counter.key, row - 1, counter.expires_at)
        .await?
    {
        let until = now + Duration::seconds(i64::from(settings.backoff_seconds));
        // An older backoff, which a call ended, gives way to this one.
        let key = limits::backoff_claim(channel);
        svc.ports.store.release(&key).await?;
        svc.ports.store.claim(&key, until).await?;
        tracing::info!(
            backoff_seconds = settings.backoff_seconds,
            "judgments of the channel backed off after declines"
        );
    }
    Ok(())
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
    cx: &JobContext<'_>,
    conversation: &Conversation,
    newest_ts: Ts,
) -> Result<Result<JudgmentResult, UnusableJudgment>, PortError> {
    let context = context::build(cx, conversation, Some(newest_ts)).await?;
    let request = match ContextPrompt::Judgment.request(&context, &cx.settings, cx.now) {
        Ok(request) => request,
        Err(e) => {
            tracing::warn!(error = %e, "judgment prompt failed to render");
            return Ok(Err(e.into()));
        }
    };
    let reply = match cx.svc.llm.complete(&request).await {
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
