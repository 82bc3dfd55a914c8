//! Proactive talk (issue 17): now and then, after a long silence, the bot
//! opens a topic in a channel it may speak in.
//!
//! - The hourly memory run ([`plan`], from `memory::sweep`; ingest's calls
//!   stay as they are) finds the channels that qualify (`proactive` on, the
//!   channel allowed by `proactive_channels`, silent `proactive_after_hours`)
//!   and schedules one [`Job::Proactive`] each, at a random whole minute
//!   inside the working hours (`proactive_hours`, `proactive_days`, in
//!   `timezone`), at least a minute ahead, by a schedule name per channel
//!   and at most one a day per channel (a claim), so hourly runs never pile
//!   them up.
//! - The judgment function runs it ([`run`]): stale when anyone wrote in
//!   the channel since it was made; held outside working hours, when the
//!   bot's own message is the newest (never two openings in a row), in its
//!   cooldown, or when the week's openings (`max_proactive_per_channel_week`)
//!   are used. Else the judgment model sees the channel's own memories, its
//!   people and its shareable facts (nothing of other channels) and answers
//!   `{"open": bool, "topic": "..."}`; anything else is silence. A yes
//!   takes one of the week's openings and the hour's unprompted reply
//!   (`max_unprompted_per_channel_hour`, `max_unprompted_per_workspace_hour`),
//!   and queues a response job
//!   ([`Reply::Opener`]) that the reply model writes as a top-level post,
//!   counted against the channel's hourly replies like any reply.

use std::ops::ControlFlow;

use chrono::{DateTime, Duration, Utc};

use super::context::{self, prompt_names};
use super::limits::refused_unprompted;
use super::{JobContext, Services};
use crate::prompts::{
    format_now, MessageView, PersonView, PersonaView, ProactiveView, PromptError,
};
use myao_core::ports::{ChannelRecord, Claims, PortError};
use myao_core::schedule::ScheduleName;
use myao_domain::facts::strength;
use myao_domain::grounds::{Grounds, Spoke};
use myao_domain::labels::tuning_of;
use myao_domain::privacy::Audience;
use myao_domain::proactive::{
    day_claim, own_word_hold, parse_opening, silence_hold, silent_for, slot, week_slot, within,
    Hold, OpeningParseError,
};
use myao_domain::{
    Channel, ChannelId, Conversation, Forget, Job, JobKind, Memory, MemoryKind, MemoryScope,
    Message, ProactiveJob, Reply, ResponseJob, Ts,
};

/// How long a proactive job's claim is kept: longer than any redelivery.
const CLAIM_DAYS: i64 = 2;
/// The channel's last messages the prompts show.
const VIEW_MESSAGES: usize = 20;
/// The shareable facts the prompts show at most, strongest first.
const VIEW_FACTS: usize = 5;

/// The schedule name of `channel`'s pending proactive judgment: one per
/// channel, so that planning it again replaces it.
pub fn schedule_name(channel: &ChannelId) -> ScheduleName {
    ScheduleName::for_conversation(
        JobKind::Proactive,
        &Conversation {
            channel: channel.clone(),
            thread_ts: None,
        },
    )
}

/// Schedules a proactive judgment for each channel of `records` that
/// qualifies at `now`; returns the channels and when theirs runs. A
/// failure is logged and skipped (the next hourly run tries again): it never
/// fails the memory run.
pub async fn plan(
    cx: &JobContext<'_>,
    records: &[ChannelRecord],
) -> Vec<(ChannelId, DateTime<Utc>)> {
    let (settings, now) = (cx.settings(), cx.now());
    let mut planned = Vec::new();
    if !settings.proactive || settings.max_proactive_per_channel_week == 0 {
        return planned;
    }
    let after = Duration::hours(i64::from(settings.proactive_after_hours));
    for record in records {
        let id = &record.channel.id;
        // `mentions_only` (the off switch, for one channel or all) means
        // nothing unprompted, openings included.
        if !settings.proactive_channels.allows(&record.channel)
            || settings.thresholds_in(id).is_none()
            || !silent_for(record.last_active, now, after)
        {
            continue;
        }
        match plan_one(cx, id).await {
            Ok(Some(at)) => {
                tracing::info!(channel = %id, at = %at.to_rfc3339(), "proactive judgment scheduled");
                planned.push((id.clone(), at));
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(channel = %id, %error, "could not schedule a proactive judgment");
            }
        }
    }
    planned
}

async fn plan_one(
    cx: &JobContext<'_>,
    channel: &ChannelId,
) -> Result<Option<DateTime<Utc>>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let Some((at, date)) = slot(
        now,
        settings.timezone,
        settings.proactive_hours,
        settings.proactive_days,
        cx.unit(),
    ) else {
        return Ok(None);
    };
    // The week's openings are used: no judgment to spend.
    let (full, _) = week_slot(channel, at, settings.max_proactive_per_channel_week);
    if cx.store().held_until(&full).await?.is_some() {
        return Ok(None);
    }
    let (day, expires) = day_claim(channel, date);
    if !cx.store().claim(&day, expires).await? {
        return Ok(None);
    }
    let job = Job::Proactive(ProactiveJob {
        channel: channel.clone(),
        made_at: Ts::from_datetime(now),
    });
    if let Err(error) = cx
        .scheduler()
        .upsert(&schedule_name(channel), at, &job)
        .await
    {
        // The next hourly run may make it.
        if let Err(release) = cx.store().release(&day).await {
            tracing::warn!(%release, "could not release the proactive day claim");
        }
        return Err(error);
    }
    Ok(Some(at))
}

/// What a proactive judgment came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ProactiveOutcome {
    /// Someone wrote in the channel since the job was made.
    Stale,
    /// This job was already judged (a duplicate delivery).
    AlreadyDone,
    /// Stopped before any LLM call.
    Held(Hold),
    /// The LLM failed (or the day's budget refused it), or its answer was
    /// no verdict: silence. `reason` may quote the answer: DEBUG only.
    Silent(Unusable),
    /// The LLM found nothing worth opening with.
    Declined,
    /// The LLM named a topic: the opening post's response job was queued,
    /// due at `at`.
    Open { topic: String, at: DateTime<Utc> },
}

impl ProactiveOutcome {
    /// The outcome's one name, in the logs, the metrics' `Outcome` and the
    /// replay's timeline: `stale`, `already_done`, the hold's name
    /// (`outside_hours`, ...), `unusable`, `declined` or `open`.
    pub fn name(&self) -> &'static str {
        match self {
            ProactiveOutcome::Stale => "stale",
            ProactiveOutcome::AlreadyDone => "already_done",
            ProactiveOutcome::Held(hold) => hold.name(),
            ProactiveOutcome::Silent(_) => "unusable",
            ProactiveOutcome::Declined => "declined",
            ProactiveOutcome::Open { .. } => "open",
        }
    }
}

/// Why the proactive judgment stayed silent: its answer is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unusable {
    /// The prompt did not render (a template bug).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The LLM failed after its retries.
    #[error("LLM failed: {0}")]
    Llm(PortError),
    /// The answer is not a verdict.
    #[error("{0}")]
    NotAVerdict(OpeningParseError),
}

impl Unusable {
    /// Its one name, for the INFO line (no word of the LLM's).
    pub fn name(&self) -> &'static str {
        match self {
            Unusable::Prompt(_) => "prompt",
            Unusable::Llm(_) => "llm_failed",
            Unusable::NotAVerdict(_) => "not_a_verdict",
        }
    }
}

/// Runs a proactive judgment job: the channel's gates, the silence's, one
/// judgment per job, the LLM's verdict, then the opening.
pub async fn run(svc: &Services, job: &ProactiveJob) -> Result<ProactiveOutcome, PortError> {
    let cx = JobContext::begin(svc).await?;
    let ProactiveJob { channel, made_at } = job;
    let made_at = *made_at;
    let ch = match allowed(&cx, channel).await? {
        Ok(ch) => ch,
        Err(hold) => return Ok(held(hold)),
    };
    if spoken_since(&cx, channel, made_at).await? {
        tracing::info!(job = %made_at, "stale proactive judgment");
        return Ok(ProactiveOutcome::Stale);
    }
    // The channel's last messages, read once: the silence's holds and the
    // prompt both take them.
    let recent = cx.store().recent_messages(channel, VIEW_MESSAGES).await?;
    if let Some(hold) = silence_held(&cx, channel, &recent).await? {
        return Ok(held(hold));
    }
    // One judgment per job, whatever its deliveries: claimed before the LLM.
    let claim = job.claim_key();
    if !cx
        .store()
        .claim(&claim, cx.now() + Duration::days(CLAIM_DAYS))
        .await?
    {
        tracing::info!("proactive judgment already done");
        return Ok(ProactiveOutcome::AlreadyDone);
    }
    let topic = match verdict(&cx, &ch, recent).await? {
        ControlFlow::Continue(topic) => topic,
        ControlFlow::Break(outcome) => return Ok(outcome),
    };
    open(&cx, channel, made_at, topic, &claim).await
}

/// A hold, logged.
fn held(hold: Hold) -> ProactiveOutcome {
    tracing::info!(hold = hold.name(), "proactive judgment held");
    ProactiveOutcome::Held(hold)
}

/// The channel, when the settings let the bot open a topic there now: the
/// hold that stops it otherwise.
async fn allowed(
    cx: &JobContext<'_>,
    channel: &ChannelId,
) -> Result<Result<Channel, Hold>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    if !settings.proactive || settings.max_proactive_per_channel_week == 0 {
        return Ok(Err(Hold::Off));
    }
    // Its visibility as Slack says now: a channel made private since is
    // not `public` any more.
    let ch = context::channel(cx, channel).await?;
    if !settings.proactive_channels.allows(&ch) {
        return Ok(Err(Hold::NotAllowed));
    }
    if settings.thresholds_in(channel).is_none() {
        return Ok(Err(Hold::MentionsOnly));
    }
    if !within(
        now,
        settings.timezone,
        settings.proactive_hours,
        settings.proactive_days,
    ) {
        return Ok(Err(Hold::OutsideHours));
    }
    if tuning_of(&cx.store().labels(channel).await?, now).muted(now) {
        return Ok(Err(Hold::Muted));
    }
    Ok(Ok(ch))
}

/// Whether anyone wrote in the channel since the job was made, in any of
/// its conversations (the table itself, read consistently).
async fn spoken_since(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    made_at: Ts,
) -> Result<bool, PortError> {
    Ok(!cx
        .store()
        .messages_after(channel, Some(made_at), 1)
        .await?
        .is_empty())
}

/// What holds the opening in the channel's `recent` messages (the rules,
/// [`silence_hold`] then [`own_word_hold`]: the bot's id is asked only for
/// a silence long enough) and its week: the week's openings used.
async fn silence_held(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    recent: &[Message],
) -> Result<Option<Hold>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let after = Duration::hours(i64::from(settings.proactive_after_hours));
    if let Some(hold) = silence_hold(recent, now, after) {
        return Ok(Some(hold));
    }
    let cooldown = Duration::seconds(i64::from(settings.cooldown_seconds));
    let bot = cx.bot_user_id().await.ok();
    if let Some(hold) = own_word_hold(recent, now, cooldown, bot.as_ref()) {
        return Ok(Some(hold));
    }
    let max = settings.max_proactive_per_channel_week;
    if cx
        .store()
        .held_until(&week_slot(channel, now, max).0)
        .await?
        .is_some()
    {
        return Ok(Some(Hold::WeekFull));
    }
    Ok(None)
}

/// The judgment model's verdict: the topic to open with, or the outcome
/// that ends the job (declined, or silent on an unusable answer), logged.
async fn verdict(
    cx: &JobContext<'_>,
    channel: &Channel,
    recent: Vec<Message>,
) -> Result<ControlFlow<ProactiveOutcome, String>, PortError> {
    let topic = match judge(cx, channel, recent).await? {
        Ok(Some(topic)) => topic,
        Ok(None) => {
            tracing::info!("proactive judgment: nothing to open with");
            return Ok(ControlFlow::Break(ProactiveOutcome::Declined));
        }
        Err(why) => {
            let reason = why.to_string();
            tracing::warn!(
                reason_chars = reason.chars().count(),
                "proactive judgment unusable; staying silent"
            );
            tracing::debug!(%reason, "why the proactive judgment is unusable");
            return Ok(ControlFlow::Break(ProactiveOutcome::Silent(why)));
        }
    };
    // The topic is the LLM's words about the channel: DEBUG only.
    tracing::info!(
        topic_chars = topic.chars().count(),
        "proactive judgment: open"
    );
    tracing::debug!(%topic, "the topic to open with");
    Ok(ControlFlow::Continue(topic))
}

/// Opens with `topic`: takes one of the week's openings and the hour's
/// unprompted reply, and queues the opening post's response job. A
/// failure gives back what was taken (the job's `claim` too, so that a
/// redelivery may judge again).
async fn open(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    made_at: Ts,
    topic: String,
    claim: &str,
) -> Result<ProactiveOutcome, PortError> {
    let Some(week) = take_week_slot(cx, channel).await? else {
        return Ok(held(Hold::WeekFull));
    };
    match refused_unprompted(cx, channel).await {
        Ok(None) => {}
        Ok(Some(_)) => {
            // The week's opening is not used; this job is done.
            release(cx.store(), &[&week]).await;
            return Ok(held(Hold::HourFull));
        }
        Err(error) => {
            // A redelivery may judge again.
            release(cx.store(), &[&week, claim]).await;
            return Err(error);
        }
    }
    let response = Job::Response(ResponseJob {
        channel: channel.clone(),
        thread_ts: None,
        newest_ts: made_at,
        mention: false,
        reply: Reply::Opener {
            topic: topic.clone(),
        },
        seen_ts: None,
        grounds: Some(Grounds::unjudged(
            Spoke::Opening,
            cx.settings().chattiness_in(channel),
        )),
    });
    if let Err(error) = cx.queue().send(&response, 0).await {
        release(cx.store(), &[&week, claim]).await;
        return Err(error);
    }
    Ok(ProactiveOutcome::Open {
        topic,
        at: cx.now(),
    })
}

/// Claims the first of the week's openings still free; `None` when all
/// are taken.
async fn take_week_slot(
    cx: &JobContext<'_>,
    channel: &ChannelId,
) -> Result<Option<String>, PortError> {
    for n in 1..=cx.settings().max_proactive_per_channel_week {
        let (key, expires) = week_slot(channel, cx.now(), n);
        if cx.store().claim(&key, expires).await? {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

/// Gives claims back (logged when it cannot).
async fn release(claims: &dyn Claims, keys: &[&str]) {
    for key in keys {
        if let Err(error) = claims.release(key).await {
            tracing::warn!(%error, "could not release a proactive claim");
        }
    }
}

/// Asks the judgment model. The outer error is a storage failure; the inner
/// one an unusable answer.
async fn judge(
    cx: &JobContext<'_>,
    channel: &Channel,
    recent: Vec<Message>,
) -> Result<Result<Option<String>, Unusable>, PortError> {
    let view = view_of(cx, channel, recent).await?;
    let request = match view.judgment_request(cx.settings()) {
        Ok(request) => request,
        Err(error) => {
            tracing::warn!(%error, "proactive prompt failed to render");
            return Ok(Err(error.into()));
        }
    };
    let reply = match cx.llm().complete(&request).await {
        Ok(reply) => reply,
        Err(error) => {
            tracing::warn!(%error, "proactive judgment LLM call failed");
            return Ok(Err(Unusable::Llm(error)));
        }
    };
    Ok(parse_opening(&reply.text).map_err(|error| {
        // The answer is conversation: its length at WARN, its words at DEBUG.
        tracing::warn!(
            %error,
            answer_chars = reply.text.chars().count(),
            "the proactive judgment's answer is not a verdict"
        );
        tracing::debug!(answer = %reply.text, "the proactive judgment's answer");
        Unusable::NotAVerdict(error)
    }))
}

/// What the proactive prompts show of `channel` (and nothing of any other):
/// its own memories (none that may hold a message being forgotten), its
/// last messages, their authors as the bot knows them, and its facts that
/// may be told outside their conversation, strongest first.
pub(crate) async fn view(
    cx: &JobContext<'_>,
    channel: &Channel,
) -> Result<ProactiveView, PortError> {
    let messages = cx
        .store()
        .recent_messages(&channel.id, VIEW_MESSAGES)
        .await?;
    view_of(cx, channel, messages).await
}

/// [`view`] over the channel's last `messages`, already read.
async fn view_of(
    cx: &JobContext<'_>,
    channel: &Channel,
    messages: Vec<Message>,
) -> Result<ProactiveView, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let pending = cx.store().forgets().await?;
    let of_channel = |f: &Forget| f.channel == channel.id && !f.is_whole_channel();
    let fresh = |m: Option<Memory>| {
        m.filter(|m| !pending.iter().any(|f| of_channel(f) && f.may_be_in(m)))
            .map(|m| m.content)
    };
    let scope = MemoryScope::Channel {
        channel: channel.id.clone(),
    };
    let long_term = fresh(cx.store().get_memory(&scope, MemoryKind::Long).await?);
    let short_term = fresh(cx.store().get_memory(&scope, MemoryKind::Short).await?);

    let names = prompt_names(cx, messages.iter()).await?;
    let talk: Vec<&myao_domain::Message> = messages.iter().collect();
    let people = context::people(cx, &talk, &names, Audience::Channel(channel), &pending).await?;

    let half_life = settings.fact_half_life();
    let mut facts: Vec<_> = cx
        .store()
        .facts(&channel.id)
        .await?
        .into_iter()
        .filter(|f| f.shareable && !f.outdated)
        .filter(|f| {
            !pending
                .iter()
                .any(|p| p.channel == channel.id && f.sources.contains(&p.ts))
        })
        .map(|f| (strength(&f, now, half_life), f))
        .collect();
    facts.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.text.cmp(&b.1.text)));
    facts.truncate(VIEW_FACTS);
    let facts: Vec<_> = facts.into_iter().map(|(_, f)| f).collect();
    let facts = context::shown_facts(cx, &facts, &names).await?;

    let newest = messages.iter().map(|m| m.ts).max();
    Ok(ProactiveView {
        persona: PersonaView {
            name: settings.persona_name.clone(),
            system_prompt: settings.persona_system_prompt.clone(),
        },
        channel_name: channel.name.clone(),
        long_term,
        short_term,
        people: people.into_iter().map(PersonView::from).collect(),
        facts,
        recent_messages: messages
            .iter()
            .map(|m| MessageView::new(m, &names, settings.timezone))
            .collect(),
        silent_hours: newest.map_or(0, |t| (now - t.to_datetime()).num_hours()),
        current_time: format_now(now, settings.timezone),
        topic: None,
    })
}
