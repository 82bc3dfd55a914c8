//! The judgment: when a conversation has gone quiet, decide whether and when
//! to speak (designs 06 and extra05b).

mod answer;
mod outcome;
mod scene;

use chrono::{DateTime, Duration, Utc};

use myao_core::ports::{Claims, PortError};
use myao_core::schedule::ScheduleName;
use myao_domain::grounds::{Grounds, Spoke};
use myao_domain::labels::tuning_of;
use myao_domain::limits;
use myao_domain::reply::Closing;
use myao_domain::routing::jittered_wait;
use myao_domain::rules::{self, Decision, Facts, Gate, Signal, Thresholds};
use myao_domain::{
    ChannelId, Conversation, Job, JobKind, JudgmentJob, JudgmentResult, Message, Reply, Settings,
    Ts, UserId,
};

use crate::context::{self, recent, touch};
use crate::prompts::ContextPrompt;
use crate::{JobContext, Services};
use answer::Answer;
pub use outcome::{JudgmentOutcome, Ruling, Unusable};
use scene::{Scene, Talk};

/// The wait before an answer the rule stage is sure of: a person who sees a
/// question waiting takes a little while to answer it.
const SURE_DELAY_SECONDS: (u32, u32) = (10, 30);

/// Runs a judgment job: the stale check, then the gates, then the rule
/// stage, and the LLM only in its ambiguous band.
pub async fn run(svc: &Services, job: &JudgmentJob) -> Result<JudgmentOutcome, PortError> {
    let cx = JobContext::begin(svc).await?;
    let conversation = job.conversation();
    let JudgmentJob { newest_ts, .. } = job;
    let newest_ts = *newest_ts;
    let name = ScheduleName::for_conversation(JobKind::Judgment, &conversation);
    let talk = Talk::read(cx.store(), &conversation, cx.settings()).await?;
    let Some(recent) = talk.recent(newest_ts) else {
        return Ok(JudgmentOutcome::Empty);
    };
    // Only a person's newer message supersedes this job: it scheduled a
    // judgment of its own. A bot's message (a CI notice) schedules none, so
    // the judgment goes on and sees it in the conversation.
    if let Some(person) = recent.newest_person {
        tracing::info!(job = %newest_ts, newest = %person, "stale judgment job");
        superseded(&cx, &name, &conversation, person).await?;
        return Ok(JudgmentOutcome::Stale);
    }
    // This judgment covers every message so far: the next one opens a new
    // window (`max_wait_seconds`).
    cx.store()
        .release(&limits::judgment_window(name.as_str()))
        .await?;
    let scene = Scene::read(&cx, talk).await?;
    touch(&cx, &scene.channel, &recent.newest).await?;
    let judgment = Judgment {
        cx: &cx,
        scene: &scene,
        name,
        newest_ts,
    };
    judgment.decide(&recent.newest).await
}

/// How far the hints moved the thresholds from the set ones, in score
/// points: the larger of the two moves (the bounds may hold one of them
/// back), 0 where the bounds held both.
fn moved_by(set: Thresholds, moved: Thresholds) -> i32 {
    let (low, high) = (moved.low - set.low, moved.high - set.high);
    if high.abs() >= low.abs() {
        high
    } else {
        low
    }
}

/// Makes the judgment of a person's newer message `person` again.
/// Normally that message's upsert replaced this job and it never fires. It
/// fires when two deliveries raced and the older one's upsert landed last:
/// the newer judgment was overwritten, so it is made again (moving forward
/// only, so this is idempotent), not past the window's ceiling
/// (`max_wait_seconds`), which this judgment did not close.
async fn superseded(
    cx: &JobContext<'_>,
    name: &ScheduleName,
    conversation: &Conversation,
    person: Ts,
) -> Result<(), PortError> {
    let settings = cx.settings();
    let wait = jittered_wait(settings.min_wait_seconds, settings.jitter_ratio, cx.unit());
    let ceiling = cx
        .store()
        .held_until(&limits::judgment_window(name.as_str()))
        .await?
        .map(|until| until - limits::WINDOW_GRACE);
    let due = person.to_datetime() + wait;
    let at = ceiling.map_or(due, |c| due.min(c)).max(cx.now());
    let job = Job::Judgment(JudgmentJob {
        channel: conversation.channel.clone(),
        thread_ts: conversation.thread_ts,
        newest_ts: person,
    });
    cx.scheduler().upsert(name, at, &job).await
}

/// One judgment past its stale check: what it read, and where its
/// schedule is.
struct Judgment<'a> {
    cx: &'a JobContext<'a>,
    scene: &'a Scene,
    name: ScheduleName,
    newest_ts: Ts,
}

impl Judgment<'_> {
    /// The gates, then the rule stage, then what the ruling asks for.
    async fn decide(&self, newest: &Message) -> Result<JudgmentOutcome, PortError> {
        let (cx, scene) = (self.cx, self.scene);
        let settings = cx.settings();
        let channel = &scene.conversation.channel;
        let bot = cx.bot_user_id().await.ok();
        let learned_wait = learn_answer_times(cx, scene).await?;
        let since = bot.as_ref().and_then(|b| scene.last_call(b, settings));
        // The hints people gave here move the level's thresholds, within
        // `quiet` and `chatty`, and may have muted the channel a while.
        let tuning = tuning_of(&scene.labels, cx.now());
        let facts = Facts {
            newest,
            bot: bot.as_ref(),
            now: cx.now(),
            max_age: Duration::seconds(i64::from(settings.max_message_age_seconds)),
            thresholds: settings
                .thresholds_in(channel)
                .map(|set| tuning.thresholds(set, cx.now())),
            bot_last_spoke: bot.as_ref().and_then(|b| scene.bot_last_spoke(b)),
            cooldown: Duration::seconds(i64::from(settings.cooldown_seconds)),
            backoff_until: backoff_until(cx.store(), settings, channel, since).await?,
            muted_until: tuning.muted_until(cx.now()),
        };
        if !tuning.is_neutral(cx.now()) {
            tracing::info!(tuning = %tuning.explain(cx.now()), "the channel's hints");
        }
        if let Some(gate) = rules::closed_gate(&facts) {
            return self.held(gate, &facts).await;
        }
        let (Some(thresholds), Some(bot)) = (facts.thresholds, bot) else {
            // No thresholds closes a gate; an unknown bot id leaves nothing to
            // score against (Slack unreachable): silence.
            return Ok(JudgmentOutcome::Held(Gate::MentionsOnly));
        };
        let (ruling, closing) = self.rule(&bot, thresholds, learned_wait);
        tracing::info!(ruling = %ruling.explain(), "rule stage");
        match ruling.decision {
            Decision::Silent => self.quiet(ruling).await,
            Decision::React => self.react(ruling, closing).await,
            Decision::Respond => self.respond(ruling).await,
            Decision::Ask => self.ask(ruling, since).await,
        }
    }

    /// A closed gate; after the cooldown's, the judgment is made again once
    /// it is over, as a person who has just spoken waits a little before
    /// speaking again.
    async fn held(&self, gate: Gate, facts: &Facts<'_>) -> Result<JudgmentOutcome, PortError> {
        tracing::info!(gate = gate.name(), "judgment held by a gate");
        if gate == Gate::Cooldown {
            let again = facts.bot_last_spoke.unwrap_or(self.cx.now()) + facts.cooldown;
            self.again(again).await?;
        }
        Ok(JudgmentOutcome::Held(gate))
    }

    /// The rule stage's ruling, and the thanks to the bot it closes on, if
    /// any (answered with a reaction).
    fn rule(
        &self,
        bot: &UserId,
        thresholds: Thresholds,
        learned_wait: Option<Duration>,
    ) -> (Ruling, Option<(Closing, Ts)>) {
        let settings = self.cx.settings();
        let scene = rules::Scene {
            conversation: &self.scene.talk,
            top_level: self.scene.conversation.thread_ts.is_none(),
            channel: &self.scene.window,
            bot,
            now: self.cx.now(),
            interests: &settings.interest_keywords,
            learned_wait,
        };
        let score = rules::score(&scene);
        let closing = rules::thanks_to_bot(&scene, &settings.names());
        let decision = match closing {
            Some(_) => Decision::React,
            // A question not yet left to the room: silent for now.
            None if score.again.is_some() => Decision::Silent,
            None => rules::decide(&score, thresholds),
        };
        let set = settings.thresholds_in(&self.scene.conversation.channel);
        let ruling = Ruling {
            decision,
            score,
            thresholds,
            tuned: set.map_or(0, |set| moved_by(set, thresholds)),
        };
        (ruling, closing)
    }

    /// Silent. A question not yet left to the room (its conversation's
    /// pace, or an exchange that may still go on) is judged again when it
    /// would be, unless a person speaks first. No LLM call before then.
    async fn quiet(&self, ruling: Ruling) -> Result<JudgmentOutcome, PortError> {
        if let Some(at) = ruling.score.again {
            self.again(at).await?;
            // A thread's (a question's own): the top level's window is
            // its busy conversation's, which this must not cut short.
            let in_thread = self.scene.conversation.thread_ts.is_some();
            if in_thread && ruling.score.signals.contains(&Signal::NotLeftYet) {
                self.hold_window_until(at).await?;
            }
        }
        Ok(JudgmentOutcome::Quiet(ruling))
    }

    /// Keeps the conversation's judgment window (its ceiling) at `at`, when
    /// its waiting question is left to the room: a question stays open
    /// while its asker adds lines, and its wait runs from the question, so
    /// a line of his (or any message) does not push the judgment past it.
    /// A message that came since this judgment read the conversation holds
    /// a window of its own already: the claim then changes nothing.
    async fn hold_window_until(&self, at: DateTime<Utc>) -> Result<(), PortError> {
        let key = limits::judgment_window(self.name.as_str());
        self.cx
            .store()
            .claim(&key, at + limits::WINDOW_GRACE)
            .await?;
        Ok(())
    }

    /// A reaction the rule stage is sure of (thanks to the bot).
    async fn react(
        &self,
        ruling: Ruling,
        closing: Option<(Closing, Ts)>,
    ) -> Result<JudgmentOutcome, PortError> {
        let cx = self.cx;
        let channel = &self.scene.conversation.channel;
        if crate::limits::refused_unprompted(cx, channel)
            .await?
            .is_some()
        {
            return Ok(JudgmentOutcome::Capped(ruling));
        }
        let default = &cx.settings().default_reaction;
        let emoji = closing.map_or_else(|| default.clone(), |(kind, _)| kind.emoji(default));
        let grounds = self.grounds(Spoke::RuleReact, &ruling);
        let at = self
            .answer(&ruling, Reply::Reaction { emoji }, grounds)
            .send(cx, self.sure_delay())
            .await?;
        Ok(JudgmentOutcome::Sure { ruling, at })
    }

    /// An answer the rule stage is sure of. Over the hour's cap, a question
    /// still waiting when the next hour's replies are free is judged again
    /// then.
    async fn respond(&self, ruling: Ruling) -> Result<JudgmentOutcome, PortError> {
        let cx = self.cx;
        let channel = &self.scene.conversation.channel;
        if let Some(next_hour) = crate::limits::refused_unprompted(cx, channel).await? {
            let asked = ruling.score.answers.unwrap_or(self.newest_ts).to_datetime();
            if next_hour - asked <= rules::QUESTION_MAX_AGE {
                self.again(next_hour).await?;
            }
            return Ok(JudgmentOutcome::Capped(ruling));
        }
        let grounds = self.grounds(Spoke::RuleYes, &ruling);
        let at = self
            .answer(&ruling, Reply::Full, grounds)
            .send(cx, self.sure_delay())
            .await?;
        Ok(JudgmentOutcome::Sure { ruling, at })
    }

    /// The ambiguous band: the LLM decides.
    async fn ask(&self, ruling: Ruling, since: Option<Ts>) -> Result<JudgmentOutcome, PortError> {
        let cx = self.cx;
        let channel = &self.scene.conversation.channel;
        if crate::limits::token_refused(cx).await? {
            // No answer could be posted: no LLM call to decide one.
            let why = Unusable::TokenRefused;
            return Ok(JudgmentOutcome::Silent { ruling, why });
        }
        let result = match judge(cx, self.scene, self.newest_ts).await? {
            Ok(result) => result,
            Err(why) => return Ok(unusable_judgment(ruling, why)),
        };
        log_verdict(&result);
        let Some(reply) = result.reply(&cx.settings().default_reaction) else {
            note_decline(cx.store(), cx.settings(), cx.now(), channel, since).await?;
            return Ok(JudgmentOutcome::Declined(ruling, result));
        };
        if crate::limits::refused_unprompted(cx, channel)
            .await?
            .is_some()
        {
            return Ok(JudgmentOutcome::Capped(ruling));
        }
        let grounds = self
            .grounds(Spoke::LlmYes, &ruling)
            .with_confidence(result.confidence);
        let at = self
            .answer(&ruling, reply, grounds)
            .send(cx, result.delay())
            .await?;
        Ok(JudgmentOutcome::Respond { ruling, result, at })
    }

    /// The answer `reply` to what `ruling` names, with what the judgment
    /// knew (`grounds`), kept with the post.
    fn answer(&self, ruling: &Ruling, reply: Reply, grounds: Grounds) -> Answer {
        let scene = self.scene;
        let in_threads = rules::talks_in_threads(&scene.window);
        // A top-level question's own conversation, its thread not begun, in
        // a channel whose people answer at the top level: answered where
        // the top level's judgment would answer it, at the top level while
        // it is the newest message there, else in its thread.
        let unthreaded = scene
            .conversation
            .thread_ts
            .filter(|root| !in_threads && scene.talk.iter().all(|m| m.ts == *root));
        if let Some(root) = unthreaded {
            let top = Conversation::top_level(scene.conversation.channel.clone());
            let said: Vec<Message> = scene
                .window
                .iter()
                .filter(|m| top.contains(m))
                .cloned()
                .collect();
            return Answer::of(&top, &said, ruling, root, reply, grounds, in_threads);
        }
        Answer::of(
            &scene.conversation,
            &scene.talk,
            ruling,
            self.newest_ts,
            reply,
            grounds,
            in_threads,
        )
    }

    /// The grounds of an answer the outcome `outcome` decided on `ruling`:
    /// the score, the thresholds, the channel's set level and the hints'
    /// offset then.
    fn grounds(&self, outcome: Spoke, ruling: &Ruling) -> Grounds {
        let level = self
            .cx
            .settings()
            .chattiness_in(&self.scene.conversation.channel);
        let (score, thresholds) = (&ruling.score, ruling.thresholds);
        Grounds::judged(outcome, level, score, thresholds, ruling.tuned)
    }

    /// A wait drawn from [`SURE_DELAY_SECONDS`].
    fn sure_delay(&self) -> u32 {
        let (low, high) = SURE_DELAY_SECONDS;
        low + ((high - low) as f64 * self.cx.unit().clamp(0.0, 1.0)) as u32
    }

    /// Makes this judgment again at `at` ([`judge_again`]).
    async fn again(&self, at: DateTime<Utc>) -> Result<(), PortError> {
        let conversation = &self.scene.conversation;
        judge_again(self.cx, &self.name, conversation, self.newest_ts, at).await
    }
}

/// An unusable judgment: silence. The reason may quote the LLM's answer:
/// its words at DEBUG only (`judge` logged what went wrong).
fn unusable_judgment(ruling: Ruling, why: Unusable) -> JudgmentOutcome {
    let reason = why.to_string();
    tracing::warn!(
        reason_chars = reason.chars().count(),
        "judgment unusable; staying silent"
    );
    tracing::debug!(%reason, "why the judgment is unusable");
    JudgmentOutcome::Silent { ruling, why }
}

/// Logs the LLM's verdict. The reason is its words about the conversation:
/// DEBUG only.
fn log_verdict(result: &JudgmentResult) {
    tracing::info!(
        should_respond = result.should_respond,
        confidence = result.confidence,
        delay = ?result.delay_seconds,
        reason_chars = result.reason.chars().count(),
        "judged"
    );
    tracing::debug!(reason = %result.reason, "the judgment's reason");
}

/// Folds the questions of the channel's recent messages whose fate is now
/// known into its learned answer times (stored when any was), and reads
/// from them how long a question waits here at the channel's level: `None`
/// while the channel has too little history.
async fn learn_answer_times(
    cx: &JobContext<'_>,
    scene: &Scene,
) -> Result<Option<Duration>, PortError> {
    let settings = cx.settings();
    let channel = &scene.conversation.channel;
    let mut times = scene
        .record
        .as_ref()
        .and_then(|r| r.answer_times.clone())
        .unwrap_or_default();
    if times.learn(&scene.window, cx.now()) {
        cx.store().put_answer_times(channel, &times).await?;
    }
    let floor = Duration::seconds(i64::from(settings.min_wait_seconds));
    Ok(times.wait(
        settings.chattiness_in(channel),
        floor,
        Ts::from_datetime(cx.now()),
    ))
}

/// Until when the channel's judgments are backed off: not at all once the
/// bot was called (or spoke) after the backoff began. Read here, not ended
/// by ingest, so that a call costs ingest no extra write.
async fn backoff_until(
    claims: &dyn Claims,
    settings: &Settings,
    channel: &ChannelId,
    last_call: Option<Ts>,
) -> Result<Option<DateTime<Utc>>, PortError> {
    let Some(until) = claims.held_until(&limits::backoff_claim(channel)).await? else {
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
    if recent(cx.store(), conversation, newest_ts)
        .await?
        .is_some_and(|r| r.newest_person.is_some())
    {
        return Ok(());
    }
    let job = Job::Judgment(JudgmentJob {
        channel: conversation.channel.clone(),
        thread_ts: conversation.thread_ts,
        newest_ts,
    });
    let at = at.max(cx.now() + Duration::seconds(1));
    cx.scheduler().upsert(name, at, &job).await
}

/// Counts an LLM decline in `channel`; the `backoff_after_declines`-th in a
/// row (since the bot's last message or call) backs the channel's
/// judgments off for `backoff_seconds`.
async fn note_decline(
    claims: &dyn Claims,
    settings: &Settings,
    now: DateTime<Utc>,
    channel: &ChannelId,
    since: Option<Ts>,
) -> Result<(), PortError> {
    let row = u64::from(settings.backoff_after_declines);
    if row == 0 || settings.backoff_seconds == 0 {
        return Ok(());
    }
    let counter = limits::declines(channel, since, now);
    // The row's first declines are counted; the one that finds the counter
    // at `row - 1` completes the row (and is not counted: the next decline
    // after the backoff completes it again).
    if !claims
        .count(&counter.key, row - 1, counter.expires_at)
        .await?
    {
        let until = now + Duration::seconds(i64::from(settings.backoff_seconds));
        // An older backoff, which a call ended, gives way to this one.
        let key = limits::backoff_claim(channel);
        claims.release(&key).await?;
        claims.claim(&key, until).await?;
        tracing::info!(
            backoff_seconds = settings.backoff_seconds,
            "judgments of the channel backed off after declines"
        );
    }
    Ok(())
}

/// How much of an answer that is not a verdict its error quotes.
const QUOTED_ANSWER_CHARS: usize = 200;

/// Asks the LLM. The outer error is a storage failure; the inner one an
/// unusable judgment.
async fn judge(
    cx: &JobContext<'_>,
    scene: &Scene,
    newest_ts: Ts,
) -> Result<Result<JudgmentResult, Unusable>, PortError> {
    let read = context::Read {
        channel: scene.channel.clone(),
        window: scene.window.clone(),
        thread: scene.thread().to_vec(),
    };
    let context = context::build_from(cx, &scene.conversation, read, Some(newest_ts)).await?;
    let request = match ContextPrompt::Judgment.request(&context, cx.settings(), cx.now()) {
        Ok(request) => request,
        Err(e) => {
            tracing::warn!(error = %e, "judgment prompt failed to render");
            return Ok(Err(e.into()));
        }
    };
    let reply = match cx.llm().complete(&request).await {
        Ok(r) => r,
        Err(e) if crate::limits::is_over_budget(&e) => {
            tracing::warn!("judgment LLM call refused: over the day's budget");
            return Ok(Err(Unusable::OverBudget));
        }
        Err(e) => {
            tracing::warn!(error = %e, "judgment LLM call failed");
            return Ok(Err(Unusable::Llm(e)));
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
        Unusable::NotAVerdict {
            error,
            answer: reply.text.chars().take(QUOTED_ANSWER_CHARS).collect(),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_move_told_is_the_thresholds_own_and_none_where_the_bounds_hold() {
        let t = |low, high| Thresholds { low, high };
        // Three thumbs-down at normal: quiet's low (+15) and high (+20).
        assert_eq!(moved_by(t(20, 40), t(35, 60)), 20);
        // At quiet already: the bounds hold it, nothing moved.
        assert_eq!(moved_by(t(35, 60), t(35, 60)), 0);
        // Thumbs-up at normal: down to chatty's.
        assert_eq!(moved_by(t(20, 40), t(13, 33)), -7);
        // Only the low one could move.
        assert_eq!(moved_by(t(10, 60), t(17, 60)), 7);
    }
}
