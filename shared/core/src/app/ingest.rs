//! The front door: a Slack Events API request in, stored and routed.
//!
//! Slack wants an answer within 3 seconds and retries otherwise, so this
//! does the least that is safe: verify, store with a conditional write, and
//! make one job (a judgment schedule or a queued reply).

use std::ops::ControlFlow;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use super::{memory_retention, retention, Ports};
use crate::ports::{Claim, Edit, Insert, PortError, Secrets};
use crate::schedule::ScheduleName;
use myao_domain::hints::reaction_hint;
use myao_domain::labels::{Label, Source};
use myao_domain::limits;
use myao_domain::metrics::{self, Datum};
use myao_domain::routing::{
    addressed, engaged, may_be_engaged, on_the_top_level, route, spoke_within, Addressed,
    Engagement, Route, QUESTION_WAITS_PER_HOUR,
};
use myao_domain::{
    ChannelId, Conversation, Forget, Job, JobKind, JudgmentJob, Message, Settings, TeamId, Ts,
    UserId, VisibilityChange,
};
use myao_slack::event::{parse_envelope, Envelope, Reaction, SlackEvent};
use myao_slack::interaction::form_interaction;
use myao_slack::signature::verify;

mod interaction;
mod outcome;
mod refusal;

pub use outcome::{IgnoreReason, Outcome};

use refusal::{refusal, Delivery, Home, Whose};

/// How many of a thread's newest messages are read to tell whether the bot
/// spoke there lately.
const ENGAGEMENT_LOOKBACK: usize = 20;

/// Bodies larger than this are refused with 413.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The parts of an HTTP request that ingest reads.
#[derive(Debug, Clone, Copy)]
pub struct IngestRequest<'a> {
    /// `X-Slack-Request-Timestamp`.
    pub timestamp: Option<&'a str>,
    /// `X-Slack-Signature`.
    pub signature: Option<&'a str>,
    /// `X-Slack-Retry-Num`, for the logs.
    pub retry_num: Option<&'a str>,
    /// The raw body, exactly as received.
    pub body: &'a [u8],
}

/// The HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestResponse {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl IngestResponse {
    fn text(status: u16, body: impl Into<String>) -> IngestResponse {
        IngestResponse {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
    fn ok() -> IngestResponse {
        IngestResponse::text(200, "")
    }
    /// A failure Slack should retry (the conditional write makes it safe).
    fn retry_later() -> IngestResponse {
        IngestResponse::text(500, "temporarily unavailable")
    }
}

/// The ingest service.
pub struct Ingest {
    pub ports: Ports,
    pub secrets: Arc<dyn Secrets>,
    /// The name under which `secrets` holds Slack's signing secret.
    pub signing_secret_name: String,
    /// Whether an event must come from a workspace the app is installed in
    /// ([`Ingest::requiring_installations`]).
    installed_only: bool,
    /// The stack's own team, once known.
    home: Home,
}

impl Ingest {
    /// Ingest over these ports, verifying requests with the secret that
    /// `secrets` holds under `signing_secret_name`.
    pub fn new(
        ports: Ports,
        secrets: Arc<dyn Secrets>,
        signing_secret_name: impl Into<String>,
    ) -> Ingest {
        Ingest {
            ports,
            secrets,
            signing_secret_name: signing_secret_name.into(),
            installed_only: false,
            home: Home::default(),
        }
    }

    /// The same, taking only the events of workspaces with an
    /// installation (a stack that installs itself through "Add to Slack"
    /// and answers each workspace with its own token); an event of any
    /// other is acknowledged and dropped, nothing stored. The setting
    /// `installed_workspaces_only` does the same without a restart. Without
    /// either, an installed workspace's event is its own, the stack's own
    /// workspace's the stack's, and any other's dropped (`Whose::of`).
    pub fn requiring_installations(mut self) -> Ingest {
        self.installed_only = true;
        self
    }

    /// Handles one HTTP request. Never panics on input: a forged or stale
    /// request gets 401 and nothing is written; a body that is not an event
    /// gets 400; a storage or scheduling failure gets 500 so Slack retries.
    pub async fn handle(&self, request: IngestRequest<'_>) -> IngestResponse {
        if request.body.len() > MAX_BODY_BYTES {
            return IngestResponse::text(413, "payload too large");
        }
        let secret = match self.secrets.get(&self.signing_secret_name).await {
            Ok(s) => s,
            Err(error) => {
                tracing::error!(%error, "signing secret unavailable");
                return IngestResponse::retry_later();
            }
        };
        // Trimmed as the bot token and the LLM key are: a secret pasted with
        // a trailing newline still verifies. An empty one would accept
        // requests signed with an empty key: none is verified.
        let secret = secret.trim();
        if secret.is_empty() {
            tracing::error!("the signing secret is empty");
            return IngestResponse::retry_later();
        }
        let now = self.ports.clock.now();
        if let Err(reason) = verify(
            secret.as_bytes(),
            request.timestamp,
            request.signature,
            request.body,
            now.timestamp(),
        ) {
            tracing::warn!(%reason, "refused an unverified request");
            self.counted("refused");
            return IngestResponse::text(401, "");
        }
        // Slack's interactivity posts to the same URL, signed alike: a form.
        if let Some(interaction) = form_interaction(request.body) {
            return self.interacted(interaction, now).await;
        }
        self.accept(request.body, request.retry_num, now).await
    }

    /// Handles an event whose sender is known already: a request whose
    /// signature was verified, or an envelope of Slack's Socket Mode
    /// connection (authenticated by its token). `retry` is Slack's count of
    /// earlier deliveries, for the logs.
    pub async fn accept(
        &self,
        body: &[u8],
        retry: Option<&str>,
        now: DateTime<Utc>,
    ) -> IngestResponse {
        if body.len() > MAX_BODY_BYTES {
            return IngestResponse::text(413, "payload too large");
        }
        let envelope = match parse_envelope(body) {
            Ok(e) => e,
            Err(error) => {
                tracing::warn!(%error, "refused a malformed event");
                self.counted("malformed");
                return IngestResponse::text(400, "malformed event");
            }
        };
        match self.process(envelope, now).await {
            Ok((outcome, response)) => {
                tracing::info!(?outcome, retry, "event handled");
                self.counted(outcome.kind());
                response
            }
            Err(error) => {
                tracing::error!(%error, retry, "event not handled; Slack will retry");
                self.counted("failed");
                IngestResponse::retry_later()
            }
        }
    }

    /// Counts one request of `kind` (`EventsIngested`).
    fn counted(&self, kind: &'static str) {
        self.ports
            .metrics
            .put(Datum::count(metrics::EVENTS).by("Kind", kind));
    }

    /// Acts on a verified, parsed envelope.
    pub async fn process(
        &self,
        envelope: Envelope,
        now: DateTime<Utc>,
    ) -> Result<(Outcome, IngestResponse), PortError> {
        let delivery = match self.delivery(envelope) {
            ControlFlow::Continue(delivery) => delivery,
            ControlFlow::Break(answered) => return Ok(answered),
        };
        let settings = self.ports.settings.current().await?;
        // An installed team's event is kept in its part of the store, read
        // with its settings, answered as its bot, and its jobs carry it.
        let team = delivery.team_id.as_deref();
        let store = &*self.ports.store;
        let (installed_only, home) = (self.installed_only, &self.home);
        let whose = Whose::of(store, &settings, installed_only, home, team, now).await?;
        if let Some(refused) = refusal(&settings, &delivery, &whose, now) {
            return Ok(refused);
        }
        match &whose {
            Whose::Stack => self.deliver(&settings, &whose, delivery, now).await,
            Whose::Team(installation) => {
                let scoped = self.for_team(&installation.team);
                let settings = scoped.ports.settings.current().await?;
                scoped.deliver(&settings, &whose, delivery, now).await
            }
            Whose::NotInstalled => {
                tracing::info!(team, "dropped an event of a team with no installation");
                Ok((
                    Outcome::Ignored(IgnoreReason::NotInstalled),
                    IngestResponse::ok(),
                ))
            }
        }
    }

    /// The same ingest for `team`'s events: its part of the store, its jobs.
    fn for_team(&self, team: &TeamId) -> Ingest {
        Ingest {
            ports: self.ports.for_team(team),
            secrets: self.secrets.clone(),
            signing_secret_name: self.signing_secret_name.clone(),
            installed_only: self.installed_only,
            home: self.home.clone(),
        }
    }

    /// Acts on a delivery of `whose` that passed every check: the bot is
    /// the one the delivery names, else the team's, else the stack's.
    async fn deliver(
        &self,
        settings: &Settings,
        whose: &Whose,
        delivery: Delivery,
        now: DateTime<Utc>,
    ) -> Result<(Outcome, IngestResponse), PortError> {
        let bot = delivery.bot.or_else(|| match whose {
            Whose::Team(installation) => Some(installation.bot_user_id.clone()),
            _ => settings.bot_user_id.clone(),
        });
        let outcome = match delivery.event {
            SlackEvent::NewMessage {
                message,
                app_mention,
                direct,
            } => {
                let addressed = addressed(&message, bot.as_ref(), app_mention, direct, settings);
                self.new_message(settings, bot.as_ref(), message, addressed, now)
                    .await?
            }
            SlackEvent::Edited {
                channel,
                ts,
                thread_ts,
                text,
            } => {
                self.edited(settings, channel, ts, thread_ts, &text, now)
                    .await?
            }
            SlackEvent::Deleted {
                channel,
                ts,
                thread_ts,
            } => self.deleted(settings, channel, ts, thread_ts, now).await?,
            SlackEvent::VisibilityChanged { channel, change } => {
                self.visibility_changed(settings, channel, change, now)
                    .await?
            }
            SlackEvent::Ignored { reason } => Outcome::Ignored(IgnoreReason::Unhandled(reason)),
            SlackEvent::Uninstalled => {
                refusal::uninstalled(&*self.ports.store, &*self.ports.queue, whose).await?
            }
            SlackEvent::Reaction(reaction) => {
                self.reacted(settings, bot.as_ref(), reaction, now).await?
            }
        };
        Ok((outcome, IngestResponse::ok()))
    }

    /// The event an envelope delivers, or what ingest answers at once to
    /// one that delivers none (a URL verification, Slack's rate limit,
    /// another kind of envelope).
    fn delivery(&self, envelope: Envelope) -> ControlFlow<(Outcome, IngestResponse), Delivery> {
        match envelope {
            Envelope::UrlVerification { challenge } => {
                ControlFlow::Break((Outcome::Challenge, IngestResponse::text(200, challenge)))
            }
            Envelope::Other { kind } if kind == "app_rate_limited" => {
                // Slack holds this app's events back: counted for the alarm.
                tracing::warn!("Slack is holding back this app's events (app_rate_limited)");
                self.ports
                    .metrics
                    .put(Datum::count(metrics::SLACK_EVENTS_RATE_LIMITED));
                ControlFlow::Break((Outcome::RateLimited, IngestResponse::ok()))
            }
            Envelope::Other { kind } => {
                let outcome = Outcome::Ignored(IgnoreReason::Envelope(kind));
                ControlFlow::Break((outcome, IngestResponse::ok()))
            }
            Envelope::Event {
                bot_user_id,
                api_app_id,
                team_id,
                event,
                ..
            } => ControlFlow::Continue(Delivery {
                bot: bot_user_id,
                event,
                api_app_id,
                team_id,
            }),
        }
    }

    /// A reaction on one of the bot's posts that is a hint: its label is
    /// stored (once per person, post and emoji) or, when withdrawn,
    /// removed. The judgments of its channel read the labels.
    async fn reacted(
        &self,
        settings: &Settings,
        bot: Option<&UserId>,
        reaction: Reaction,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        let Some(hint) = reaction_hint(&reaction.emoji, settings) else {
            return Ok(Outcome::Ignored(IgnoreReason::NotAHint));
        };
        let Some(bot) = bot.filter(|b| **b != reaction.user) else {
            return Ok(Outcome::Ignored(IgnoreReason::NotItsPost));
        };
        let author = match reaction.author {
            Some(author) => Some(author),
            None => self
                .ports
                .store
                .get_message(&reaction.channel, reaction.ts)
                .await?
                .map(|m| m.user),
        };
        if author.as_ref() != Some(bot) {
            return Ok(Outcome::Ignored(IgnoreReason::NotItsPost));
        }
        let label = Label {
            channel: reaction.channel,
            post: reaction.ts,
            user: reaction.user,
            hint,
            source: Source::Reaction(reaction.emoji),
            at: now,
        };
        let new = match reaction.added {
            true => self.ports.store.put_label(&label).await?,
            false => {
                self.ports.store.delete_label(&label).await?;
                false
            }
        };
        tracing::info!(hint = ?label.hint, added = reaction.added, new, "a hint on the bot's post");
        Ok(Outcome::Hinted {
            added: reaction.added,
            new,
        })
    }

    /// Stores an edit and, unless the message is kept no longer, has the
    /// memories forget the replaced text.
    async fn edited(
        &self,
        settings: &Settings,
        channel: ChannelId,
        ts: Ts,
        thread_ts: Option<Ts>,
        text: &str,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        let edit = self
            .ports
            .store
            .edit_message(&channel, ts, text, retention(settings, now))
            .await?;
        // The replaced text may be in memories: forget it. A
        // pending edit may be of a message kept no longer (past its
        // retention) that memories still hold.
        if edit != Edit::Deleted {
            self.forget(settings, channel, ts, thread_ts, now).await?;
        }
        Ok(Outcome::Edited)
    }

    /// Deletes a message and has the memories forget it.
    async fn deleted(
        &self,
        settings: &Settings,
        channel: ChannelId,
        ts: Ts,
        thread_ts: Option<Ts>,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        // Its thread, when Slack did not say: from the stored message.
        let thread_ts = match thread_ts {
            Some(root) => Some(root),
            None => self
                .ports
                .store
                .get_message(&channel, ts)
                .await?
                .and_then(|m| m.thread_ts),
        };
        self.ports
            .store
            .delete_message(&channel, ts, retention(settings, now))
            .await?;
        self.forget(settings, channel, ts, thread_ts, now).await?;
        Ok(Outcome::Deleted)
    }

    /// Records a channel's new visibility and, when it is no longer one the
    /// bot may remember, has the memories forget the whole channel.
    async fn visibility_changed(
        &self,
        settings: &Settings,
        channel: ChannelId,
        change: VisibilityChange,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        self.ports.store.change_visibility(&channel, change).await?;
        if Forget::needed_after(change) {
            let forget = Forget::whole_channel(channel, now);
            self.record_forget(settings, &forget, now).await?;
        }
        Ok(Outcome::VisibilityChanged)
    }

    /// Records a deletion or an edit, and has the memories forget it.
    async fn forget(
        &self,
        settings: &Settings,
        channel: ChannelId,
        ts: Ts,
        thread_ts: Option<Ts>,
        now: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let forget = Forget {
            channel,
            ts,
            thread_ts,
            at: now,
        };
        self.record_forget(settings, &forget, now).await
    }

    /// Records what to forget (the memory runs find it even if the job is
    /// lost) and queues the job that forgets it now.
    async fn record_forget(
        &self,
        settings: &Settings,
        forget: &Forget,
        now: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.ports
            .store
            .record_forget(forget, memory_retention(settings, now))
            .await?;
        self.ports.queue.send(&Job::Forget, 0).await
    }

    /// A judgment turned into an answer now when the message replies in a
    /// thread where the bot just spoke. Asked only of a message stored now
    /// (never of a duplicate delivery), and only when it would be judged:
    /// being engaged changes which job it makes, never whether it makes one.
    async fn engaged_routing(
        &self,
        settings: &Settings,
        bot: Option<&UserId>,
        message: &Message,
        routing: Route,
        now: DateTime<Utc>,
    ) -> Result<Route, PortError> {
        if !matches!(routing, Route::JudgeAt { .. }) {
            return Ok(routing);
        }
        Ok(match self.engaged(settings, bot, message).await? {
            Some(_) => route(message, bot, true, settings, now, self.ports.random.unit()),
            None => routing,
        })
    }

    /// Whether a reply in a thread is addressed to the bot because it
    /// answers the bot, which spoke there within `engagement_window_seconds`
    /// ([`engaged`]): for thread replies that mention nobody, one read; when
    /// the bot did speak there that recently, a second for the thread's root
    /// (whose author is one of the thread's people), and only then.
    async fn engaged(
        &self,
        settings: &Settings,
        bot: Option<&UserId>,
        message: &Message,
    ) -> Result<Option<Addressed>, PortError> {
        let (Some(bot), Some(root)) = (bot, message.thread_ts) else {
            return Ok(None);
        };
        if settings.engagement_window_seconds == 0
            || message.user == *bot
            || message.is_bot
            || settings.thresholds_in(&message.channel).is_none()
            || !may_be_engaged(message)
        {
            // Where only mentions are answered, talking on in its thread is
            // not calling it.
            return Ok(None);
        }
        let window = Duration::seconds(i64::from(settings.engagement_window_seconds));
        let thread = Conversation::thread(message.channel.clone(), root);
        let mut recent = self
            .ports
            .store
            .conversation_messages(&thread, ENGAGEMENT_LOOKBACK)
            .await?;
        // The bot may have written the root (a top-level answer), which
        // counts only when it is that recent.
        let bot_spoke = recent
            .iter()
            .any(|m| m.user == *bot && spoke_within(m.ts, message, window))
            || spoke_within(root, message, window);
        if !bot_spoke {
            return Ok(None);
        }
        if let Some(root) = self.ports.store.get_message(&message.channel, root).await? {
            recent.insert(0, root);
        }
        let names = settings.names();
        let engagement = Engagement {
            bot,
            window,
            names: &names,
            run_limit: settings.max_engaged_answers,
        };
        Ok(engaged(message, &recent, &engagement).then_some(Addressed::Engaged))
    }

    /// The latest a judgment of the conversation may run: `max_wait_seconds`
    /// after the first message of its window (the messages since its last
    /// judgment), however busy the conversation stays. The window is a claim
    /// that expires then; the judgment releases it when it runs.
    async fn ceiling(
        &self,
        settings: &Settings,
        name: &ScheduleName,
        now: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, PortError> {
        let key = limits::judgment_window(name.as_str());
        let latest = now + Duration::seconds(i64::from(settings.max_wait_seconds));
        // The claim outlives the ceiling, so that a message arriving after
        // it (the judgment is running late) still finds the window and is
        // judged at once, rather than opening a window of its own.
        Ok(
            match self
                .ports
                .store
                .claim_or_holder(&key, latest + limits::WINDOW_GRACE)
                .await?
            {
                Claim::Made | Claim::Held { until: None } => latest,
                Claim::Held { until: Some(until) } => until - limits::WINDOW_GRACE,
            },
        )
    }

    async fn new_message(
        &self,
        settings: &Settings,
        bot: Option<&UserId>,
        mut message: Message,
        addressed: Option<Addressed>,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        if bot.is_some_and(|b| *b == message.user) {
            message.is_bot = true;
        }
        // Addressed (a mention, a DM, its name, a reply in its thread):
        // answered like a mention.
        let routing = route(
            &message,
            bot,
            addressed.is_some(),
            settings,
            now,
            self.ports.random.unit(),
        );
        let needs_job = routing != Route::Nothing;
        match self
            .ports
            .store
            .insert_message(&message, !needs_job, retention(settings, now))
            .await?
        {
            Insert::New => {}
            Insert::Duplicate { routed: true } | Insert::Deleted => return Ok(Outcome::Duplicate),
            Insert::Duplicate { routed: false } => {
                if !needs_job {
                    return Ok(Outcome::Duplicate);
                }
                // The first delivery stored it but failed to make its job:
                // finish the routing now. A newer message of the same
                // conversation may have been routed meanwhile; the job must
                // not move back to this older one.
                let routing = self
                    .engaged_routing(settings, bot, &message, routing, now)
                    .await?;
                // A question's own wait is not counted again: the first
                // delivery counted it (or failed before it could).
                let routing = self.catch_up(routing, &message).await?;
                let routing = self.within_ceiling(settings, routing, now).await?;
                self.make_job(&routing).await?;
                self.ports
                    .store
                    .mark_routed(&message.channel, message.ts)
                    .await?;
                return Ok(Outcome::Stored { routed: routing });
            }
        }
        let routing = self
            .engaged_routing(settings, bot, &message, routing, now)
            .await?;
        let routing = self.within_bound(routing, &message, now).await?;
        let routing = self.within_ceiling(settings, routing, now).await?;
        if needs_job {
            self.make_job(&routing).await?;
            // Also after a reply job, which its claim would keep from
            // answering twice: a mention comes as two events (`message` and
            // `app_mention`), and without the mark the second would queue a
            // second job, a Lambda invocation that finds the claim taken.
            self.ports
                .store
                .mark_routed(&message.channel, message.ts)
                .await?;
        }
        Ok(Outcome::Stored { routed: routing })
    }

    /// A question's own wait, within its channel's
    /// [`QUESTION_WAITS_PER_HOUR`]: one counter write, for a question alone
    /// (any other message costs nothing more). Over the bound, the question
    /// waits with the channel's top level.
    async fn within_bound(
        &self,
        routing: Route,
        message: &Message,
        now: DateTime<Utc>,
    ) -> Result<Route, PortError> {
        let own = matches!(
            &routing,
            Route::JudgeAt { job: Job::Judgment(JudgmentJob { thread_ts: Some(root), .. }), .. }
                if *root == message.ts && message.thread_ts.is_none()
        );
        if !own {
            return Ok(routing);
        }
        let counter = limits::question_waits(&message.channel, now);
        if self
            .ports
            .store
            .count(&counter.key, QUESTION_WAITS_PER_HOUR, counter.expires_at)
            .await?
        {
            return Ok(routing);
        }
        tracing::info!(
            "the channel's question waits are spent this hour: judged with its top level"
        );
        Ok(on_the_top_level(routing))
    }

    /// A judgment moved no later than its conversation's ceiling.
    async fn within_ceiling(
        &self,
        settings: &Settings,
        routing: Route,
        now: DateTime<Utc>,
    ) -> Result<Route, PortError> {
        let Route::JudgeAt { at, job } = routing else {
            return Ok(routing);
        };
        let Some(conversation) = job.conversation() else {
            return Ok(Route::JudgeAt { at, job });
        };
        let name = ScheduleName::for_conversation(JobKind::Judgment, &conversation);
        let ceiling = self.ceiling(settings, &name, now).await?;
        Ok(Route::JudgeAt {
            at: at.min(ceiling.max(now)),
            job,
        })
    }

    async fn catch_up(&self, routing: Route, message: &Message) -> Result<Route, PortError> {
        let Route::JudgeAt {
            at,
            job:
                Job::Judgment(JudgmentJob {
                    channel,
                    thread_ts,
                    newest_ts,
                }),
        } = routing
        else {
            return Ok(routing);
        };
        let conversation = Conversation {
            channel: channel.clone(),
            thread_ts,
        };
        let newest = self
            .ports
            .store
            .conversation_messages(&conversation, 1)
            .await?
            .first()
            .map(|m| m.ts.max(newest_ts))
            .unwrap_or(message.ts);
        Ok(Route::JudgeAt {
            at,
            job: Job::Judgment(JudgmentJob {
                channel,
                thread_ts,
                newest_ts: newest,
            }),
        })
    }

    async fn make_job(&self, routing: &Route) -> Result<(), PortError> {
        match routing {
            Route::Nothing => Ok(()),
            Route::RespondNow(job) => self.ports.queue.send(job, 0).await,
            // Judgments always go to the scheduler, keyed by conversation, so
            // that the next message moves the wait (a wait under a minute
            // fires within that minute on EventBridge Scheduler).
            Route::JudgeAt { at, job } => match job.conversation() {
                Some(conversation) => {
                    let name = ScheduleName::for_conversation(JobKind::Judgment, &conversation);
                    self.ports.scheduler.upsert(&name, *at, job).await
                }
                None => Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::system::{FixedRandom, FixedSettings, ManualClock, StaticSecrets};
    use crate::adapters::twins::{JobBoard, MemoryStore};
    use crate::ports::Clock;
    use crate::wire::Twins;
    use chrono::Duration;
    use myao_domain::{ChannelId, ResponseJob, Ts};
    use myao_slack::signature::sign;
    use serde_json::{json, Value};

    const SECRET: &str = "test-signing-secret";

    struct Bed {
        clock: Arc<ManualClock>,
        store: Arc<MemoryStore>,
        board: Arc<JobBoard>,
        ingest: Ingest,
    }

    fn bed() -> Bed {
        let twins = Twins::new(Arc::new(ManualClock::new(
            Ts::parse("1767600000.0").unwrap().to_datetime(),
        )));
        let ingest = Ingest::new(
            twins.ports(FixedRandom(0.5), Settings::default()),
            Arc::new(StaticSecrets::new().with("signing", SECRET)),
            "signing",
        );
        Bed {
            clock: twins.clock,
            store: twins.store,
            board: twins.board,
            ingest,
        }
    }

    fn message_event(ts: &str, thread: Option<&str>, text: &str, kind: &str) -> Vec<u8> {
        let mut event =
            json!({"type": kind, "channel": "C1", "user": "U1", "text": text, "ts": ts});
        if let Some(t) = thread {
            event["thread_ts"] = json!(t);
        }
        serde_json::to_vec(&json!({
            "type": "event_callback", "event_id": format!("Ev{ts}{kind}"), "event": event,
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]
        }))
        .unwrap()
    }

    async fn send(bed: &Bed, body: &[u8]) -> IngestResponse {
        let ts = bed.clock.now().timestamp().to_string();
        let sig = sign(SECRET.as_bytes(), &ts, body);
        bed.ingest
            .handle(IngestRequest {
                timestamp: Some(&ts),
                signature: Some(&sig),
                retry_num: None,
                body,
            })
            .await
    }

    #[tokio::test]
    async fn url_verification_answers_the_challenge() {
        let b = bed();
        let r = send(&b, br#"{"type":"url_verification","challenge":"xyz"}"#).await;
        assert_eq!((r.status, r.body.as_str()), (200, "xyz"));
    }

    #[tokio::test]
    async fn a_message_is_stored_and_its_conversation_judged_after_the_wait() {
        let b = bed();
        let r = send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(b.store.all_messages().len(), 1);
        let scheduled = b.board.scheduled();
        assert_eq!(scheduled.len(), 1);
        assert_eq!(scheduled[0].at, b.clock.now() + Duration::seconds(300));
        assert_eq!(scheduled[0].name.as_str(), "judgment-C1-top");
        assert_eq!(
            scheduled[0].job,
            Job::Judgment(JudgmentJob {
                channel: ChannelId::parse("C1").unwrap(),
                thread_ts: None,
                newest_ts: Ts::parse("1767600000.000100").unwrap()
            })
        );
        // one write for the message, one opening its conversation's window
        // (`max_wait_seconds`), one for its routing record; one scheduler call
        assert_eq!(b.store.counts().writes(), 3);
        assert_eq!(b.board.call_counts(), (1, 0));
    }

    #[tokio::test]
    async fn a_question_waits_on_its_own_within_the_channels_bound_and_costs_one_count() {
        let b = bed();
        let asked = |i: u64| format!("17676000{:02}.000100", i);
        let r = send(
            &b,
            &message_event(
                &asked(0),
                None,
                "is there a command to list the chains?",
                "message",
            ),
        )
        .await;
        assert_eq!(r.status, 200);
        let scheduled = b.board.scheduled();
        assert_eq!(scheduled.len(), 1);
        assert_eq!(scheduled[0].name.as_str(), "judgment-C1-1767600000.000100");
        // As a plain message's three writes, and one count of the bound.
        assert_eq!(b.store.counts().writes(), 4);
        // The bound's first QUESTION_WAITS_PER_HOUR questions of the hour
        // wait on their own; the next waits with the top level.
        for i in 1..=QUESTION_WAITS_PER_HOUR {
            let text = format!("question {i}: does anyone know the flag for this?");
            send(&b, &message_event(&asked(i), None, &text, "message")).await;
        }
        let names: Vec<String> = b
            .board
            .scheduled()
            .iter()
            .map(|s| s.name.as_str().to_owned())
            .collect();
        let own = names.iter().filter(|n| *n != "judgment-C1-top").count();
        assert_eq!(own as u64, QUESTION_WAITS_PER_HOUR, "{names:?}");
        assert!(names.iter().any(|n| n == "judgment-C1-top"), "{names:?}");
    }

    #[tokio::test]
    async fn a_retry_of_a_handled_delivery_does_nothing_more() {
        let b = bed();
        let body = message_event("1767600000.000100", None, "hello", "message");
        send(&b, &body).await;
        b.store.counts().reset();
        for _ in 0..3 {
            assert_eq!(send(&b, &body).await.status, 200);
        }
        assert_eq!(b.store.all_messages().len(), 1);
        assert_eq!(b.board.call_counts(), (1, 0), "no new scheduler call");
        assert_eq!(
            b.store.counts().writes(),
            3,
            "one conditional write per duplicate"
        );
    }

    #[tokio::test]
    async fn a_mention_delivered_twice_is_queued_once_without_judgment() {
        let b = bed();
        let ts = "1767600000.000200";
        send(
            &b,
            &message_event(ts, Some("1767600000.000100"), "<@UBOT> help?", "message"),
        )
        .await;
        send(
            &b,
            &message_event(
                ts,
                Some("1767600000.000100"),
                "<@UBOT> help?",
                "app_mention",
            ),
        )
        .await;
        assert_eq!(b.store.all_messages().len(), 1);
        assert!(b.board.scheduled().is_empty());
        let queued = b.board.queued();
        assert_eq!(queued.len(), 1);
        assert!(matches!(
            queued[0].1,
            Job::Response(ResponseJob { mention: true, .. })
        ));
    }

    /// A top-level message the bot wrote at `ts`.
    fn bot_message(ts: &str) -> Vec<u8> {
        let mut body: Value =
            serde_json::from_slice(&message_event(ts, None, "an answer", "message")).unwrap();
        body["event"]["user"] = json!("UBOT");
        serde_json::to_vec(&body).unwrap()
    }

    /// The store reads ingest made for `body`.
    async fn reads_for(b: &Bed, body: &[u8]) -> u64 {
        b.store.counts().reset();
        assert_eq!(send(b, body).await.status, 200);
        b.store.counts().reads()
    }

    #[tokio::test]
    async fn an_event_of_a_known_sender_is_accepted_and_counted_without_a_signature() {
        let twins = Twins::new(Arc::new(ManualClock::new(
            Ts::parse("1767600000.0").unwrap().to_datetime(),
        )));
        // No signing secret at all: `accept` never asks for one.
        let ingest = Ingest::new(
            twins.ports(FixedRandom(0.5), Settings::default()),
            Arc::new(StaticSecrets::new()),
            "none",
        );
        let now = twins.clock.now();
        let body = message_event("1767600000.000100", None, "hello", "message");
        assert_eq!(ingest.accept(&body, None, now).await.status, 200);
        assert_eq!(ingest.accept(&body, Some("1"), now).await.status, 200);
        assert_eq!(ingest.accept(b"{", None, now).await.status, 400);
        assert_eq!(twins.store.all_messages().len(), 1);
        let events = |kind| twins.metrics.total(metrics::EVENTS, Some(("Kind", kind)));
        assert_eq!(
            (events("message"), events("duplicate"), events("malformed")),
            (1.0, 1.0, 1.0)
        );
    }

    #[tokio::test]
    async fn a_thread_reply_reads_its_root_only_when_the_root_is_recent_enough_to_count() {
        let b = bed();
        // The bot answered at the top level two minutes ago (the engagement
        // window is five): the thread and its root are read, and the reply
        // is answered at once.
        let recent = "1767599880.000100";
        send(&b, &bot_message(recent)).await;
        let reply = message_event(
            "1767600000.000200",
            Some(recent),
            "thanks, and why?",
            "message",
        );
        assert_eq!(reads_for(&b, &reply).await, 2);
        assert_eq!(
            b.board.queued().len(),
            1,
            "engaged: answered like a mention"
        );

        // A root older than the window cannot make a reply engaged: only
        // the thread is read.
        let old = "1767599000.000100";
        send(&b, &bot_message(old)).await;
        let reply = message_event("1767600000.000300", Some(old), "and this?", "message");
        assert_eq!(reads_for(&b, &reply).await, 1);
        assert_eq!(b.board.queued().len(), 1, "judged later, not answered now");

        // A reply that @-mentions a person is addressed to them: nothing read.
        let reply = message_event(
            "1767600000.000400",
            Some(recent),
            "<@U2> over to you",
            "message",
        );
        assert_eq!(reads_for(&b, &reply).await, 0);
    }

    #[tokio::test]
    async fn a_message_inside_an_open_window_costs_one_write_for_the_window() {
        let b = bed();
        send(
            &b,
            &message_event("1767600000.000100", None, "first", "message"),
        )
        .await;
        b.store.counts().reset();
        send(
            &b,
            &message_event("1767600000.000200", None, "second", "message"),
        )
        .await;
        // The message, the refused window claim (which brings the window's
        // end back), the routing record; nothing read.
        assert_eq!(
            (b.store.counts().writes(), b.store.counts().reads()),
            (3, 0)
        );
    }

    /// A body in a channel other than C1, with `channel_type`.
    fn event_in(channel: &str, channel_type: &str, ts: &str, text: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "event_callback", "event_id": format!("Ev{ts}"),
            "event": {"type": "message", "channel": channel, "channel_type": channel_type,
                      "user": "U1", "text": text, "ts": ts},
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_name_call_and_a_direct_message_are_answered_like_mentions() {
        let cases = [
            ("C1", "channel", "myao, what do you think?", true),
            ("C1", "channel", "ねえMYAOどう思う?", true),
            ("D1", "im", "hello", true),
            // Its name in another word, or a message to someone else: not
            // addressed; judged after the wait as channel chatter.
            ("C1", "channel", "the myaomyao library", false),
            ("C1", "channel", "<@U2> ask myao later", false),
        ];
        for (i, (channel, kind, text, answered)) in cases.into_iter().enumerate() {
            let b = bed();
            let ts = format!("1767600000.{:06}", 100 + i);
            assert_eq!(
                send(&b, &event_in(channel, kind, &ts, text)).await.status,
                200
            );
            let queued = b.board.queued();
            if answered {
                assert!(b.board.scheduled().is_empty(), "{text}: no judgment wait");
                assert_eq!(queued.len(), 1, "{text}");
                assert_eq!(queued[0].0, b.clock.now(), "{text}: at once");
                assert!(
                    matches!(&queued[0].1, Job::Response(ResponseJob { mention: true, channel: c, .. }) if c.as_str() == channel),
                    "{text}: {queued:?}"
                );
            } else {
                assert!(queued.is_empty(), "{text}: {queued:?}");
                assert_eq!(b.board.scheduled().len(), 1, "{text}: judged later");
            }
        }
    }

    #[tokio::test]
    async fn a_scheduling_failure_answers_500_and_the_retry_finishes_the_routing() {
        let b = bed();
        let body = message_event("1767600000.000100", None, "hello", "message");
        b.board.fail_scheduler(true);
        assert_eq!(send(&b, &body).await.status, 500);
        assert_eq!(b.store.all_messages().len(), 1, "stored before the failure");
        assert!(b.board.scheduled().is_empty());
        b.board.fail_scheduler(false);
        assert_eq!(send(&b, &body).await.status, 200);
        assert_eq!(b.board.scheduled().len(), 1);
        assert_eq!(b.store.all_messages().len(), 1);
    }

    #[tokio::test]
    async fn a_storage_failure_answers_500_and_schedules_nothing() {
        let b = bed();
        b.store.fail_writes(true);
        let r = send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert_eq!(r.status, 500);
        assert!(b.board.scheduled().is_empty());
    }

    #[tokio::test]
    async fn a_retry_after_a_newer_message_keeps_the_newer_job() {
        let b = bed();
        let old = message_event(
            "1767600000.000100",
            Some("1767600000.000001"),
            "first",
            "message",
        );
        let new = message_event(
            "1767600000.000300",
            Some("1767600000.000001"),
            "second",
            "message",
        );
        b.board.fail_scheduler(true);
        assert_eq!(send(&b, &old).await.status, 500);
        b.board.fail_scheduler(false);
        assert_eq!(send(&b, &new).await.status, 200);
        assert_eq!(
            send(&b, &old).await.status,
            200,
            "Slack's retry of the first"
        );
        let scheduled = b.board.scheduled();
        assert_eq!(scheduled.len(), 1);
        assert!(
            matches!(&scheduled[0].job, Job::Judgment(JudgmentJob { newest_ts, .. }) if newest_ts.to_string() == "1767600000.000300")
        );
    }

    #[tokio::test]
    async fn bad_requests_are_refused_and_write_nothing() {
        let b = bed();
        let body = message_event("1767600000.000100", None, "hello", "message");
        let ts = b.clock.now().timestamp().to_string();
        let good = sign(SECRET.as_bytes(), &ts, &body);
        let stale_ts = (b.clock.now().timestamp() - 301).to_string();
        let stale = sign(SECRET.as_bytes(), &stale_ts, &body);
        let cases: Vec<(Option<&str>, Option<&str>, Vec<u8>)> = vec![
            (
                Some(&ts),
                Some("v0=0000000000000000000000000000000000000000000000000000000000000000"),
                body.clone(),
            ),
            (Some(&stale_ts), Some(&stale), body.clone()),
            (None, Some(&good), body.clone()),
            (Some(&ts), None, body.clone()),
            (Some(&ts), Some(&good), [body.as_slice(), b" "].concat()),
        ];
        for (timestamp, signature, body) in cases {
            let r = b
                .ingest
                .handle(IngestRequest {
                    timestamp,
                    signature,
                    retry_num: None,
                    body: &body,
                })
                .await;
            assert_eq!((r.status, r.body.as_str()), (401, ""));
        }
        assert_eq!(b.store.counts().writes(), 0);
        assert_eq!(b.board.call_counts(), (0, 0));
    }

    #[tokio::test]
    async fn malformed_and_oversized_bodies() {
        let b = bed();
        assert_eq!(send(&b, b"{not json").await.status, 400);
        assert_eq!(send(&b, br#"{"type":"event_callback","event":{"type":"message","channel":"C1","ts":"x","user":"U1"}}"#).await.status, 400);
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(send(&b, &big).await.status, 413);
        assert_eq!(b.store.counts().writes(), 0);
    }

    #[tokio::test]
    async fn edits_and_deletions_change_the_stored_message() {
        let b = bed();
        send(
            &b,
            &message_event("1767600000.000100", None, "helo", "message"),
        )
        .await;
        let edit = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "subtype": "message_changed", "channel": "C1", "ts": "1767600001.0",
            "message": {"user": "U1", "text": "hello", "ts": "1767600000.000100"}}}))
        .unwrap();
        assert_eq!(send(&b, &edit).await.status, 200);
        assert_eq!(b.store.all_messages()[0].text, "hello");
        let delete = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "subtype": "message_deleted", "channel": "C1", "ts": "1767600002.0",
            "deleted_ts": "1767600000.000100"}}))
        .unwrap();
        assert_eq!(send(&b, &delete).await.status, 200);
        assert!(b.store.all_messages().is_empty());
        // a late redelivery of the deleted message does not bring it back
        send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert!(b.store.all_messages().is_empty());
    }

    #[tokio::test]
    async fn bots_and_joins_trigger_nothing() {
        let b = bed();
        let own = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "channel": "C1", "user": "UBOT", "bot_id": "B1", "text": "meow", "ts": "1767600000.000100"},
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]})).unwrap();
        let other = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "channel": "C1", "user": "UOTHER", "bot_id": "B2", "text": "beep", "ts": "1767600000.000200"}})).unwrap();
        let join = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "subtype": "channel_join", "channel": "C1", "user": "U2", "text": "joined", "ts": "1767600000.000300"}})).unwrap();
        for body in [own, other, join] {
            assert_eq!(send(&b, &body).await.status, 200);
        }
        assert_eq!(
            b.store.all_messages().len(),
            2,
            "bot messages are kept as context, joins are not"
        );
        assert!(b.store.all_messages().iter().all(|m| m.is_bot));
        assert_eq!(b.board.call_counts(), (0, 0));
    }

    #[tokio::test]
    async fn three_messages_in_a_thread_make_one_schedule_after_the_last() {
        let b = bed();
        for (i, ts) in [
            "1767600000.000100",
            "1767600030.000100",
            "1767600090.000100",
        ]
        .iter()
        .enumerate()
        {
            b.clock.set(Ts::parse(ts).unwrap().to_datetime());
            send(
                &b,
                &message_event(ts, Some("1767600000.000001"), &format!("m{i}"), "message"),
            )
            .await;
        }
        send(
            &b,
            &message_event(
                "1767600091.000100",
                Some("1767600000.000999"),
                "other thread",
                "message",
            ),
        )
        .await;
        let s = b.board.scheduled();
        assert_eq!(s.len(), 2);
        let first = s
            .iter()
            .find(|j| j.name.as_str() == "judgment-C1-1767600000.000001")
            .unwrap();
        assert_eq!(
            first.at,
            Ts::parse("1767600090.000100").unwrap().to_datetime() + Duration::seconds(300)
        );
    }

    #[tokio::test]
    async fn a_signing_secret_stored_with_a_trailing_newline_still_verifies() {
        let mut b = bed();
        b.ingest.secrets = Arc::new(StaticSecrets::new().with("signing", &format!("{SECRET}\n")));
        let r = send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(b.store.all_messages().len(), 1);
    }

    #[tokio::test]
    async fn a_blank_signing_secret_verifies_nothing() {
        let mut b = bed();
        b.ingest.secrets = Arc::new(StaticSecrets::new().with("signing", " \n"));
        let body = message_event("1767600000.000100", None, "hello", "message");
        let ts = b.clock.now().timestamp().to_string();
        let sig = sign(b"", &ts, &body);
        let r = b
            .ingest
            .handle(IngestRequest {
                timestamp: Some(&ts),
                signature: Some(&sig),
                retry_num: None,
                body: &body,
            })
            .await;
        assert_eq!(r.status, 500);
        assert_eq!(b.store.counts().writes(), 0);
        assert_eq!(b.board.call_counts(), (0, 0));
    }

    /// A bed whose settings name the app and the workspace.
    fn bed_for(name: &str, value: &str) -> Bed {
        let mut b = bed();
        let (settings, issues) = Settings::from_pairs([(name, value)]);
        assert!(issues.is_empty(), "{issues:?}");
        b.ingest.ports.settings = Arc::new(FixedSettings::new(settings));
        b
    }

    /// `body` with `key` set at the envelope's top level.
    fn with_field(body: &[u8], key: &str, value: &str) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_slice(body).unwrap();
        v[key] = json!(value);
        serde_json::to_vec(&v).unwrap()
    }

    async fn only_own_events_are_stored(setting: &str, field: &str, own: &str, other: &str) {
        let b = bed_for(setting, own);
        let first = message_event("1767600000.000100", None, "hello", "message");
        let r = send(&b, &with_field(&first, field, other)).await;
        assert_eq!((r.status, r.body.as_str()), (200, ""));
        assert!(b.store.all_messages().is_empty());
        assert_eq!(b.store.counts().writes(), 0);
        assert_eq!(b.board.call_counts(), (0, 0));
        let second = message_event("1767600000.000200", None, "hello", "message");
        assert_eq!(send(&b, &with_field(&second, field, own)).await.status, 200);
        assert_eq!(b.store.all_messages().len(), 1);
        assert_eq!(b.board.scheduled().len(), 1);
        // an envelope that names none is accepted
        let third = message_event("1767600000.000300", None, "hello", "message");
        assert_eq!(send(&b, &third).await.status, 200);
        assert_eq!(b.store.all_messages().len(), 2);
        // Slack's URL check names no app: it is answered
        let r = send(&b, br#"{"type":"url_verification","challenge":"xyz"}"#).await;
        assert_eq!((r.status, r.body.as_str()), (200, "xyz"));
    }

    #[tokio::test]
    async fn events_from_another_team_are_acknowledged_and_dropped() {
        only_own_events_are_stored("slack_team_id", "team_id", "T1", "T2").await;
        let b = bed_for("slack_team_id", "T1");
        let body = with_field(
            &message_event("1767600000.000100", None, "hello", "message"),
            "team_id",
            "T2",
        );
        let envelope = parse_envelope(&body).unwrap();
        let (outcome, _) = b.ingest.process(envelope, b.clock.now()).await.unwrap();
        assert_eq!(outcome, Outcome::Ignored(IgnoreReason::AnotherTeam));
        assert_eq!(
            format!("{outcome:?}"),
            r#"Ignored("event for another team")"#,
            "the event handled line shows it as it always has"
        );
    }

    #[tokio::test]
    async fn events_for_another_app_are_acknowledged_and_dropped() {
        only_own_events_are_stored("slack_app_id", "api_app_id", "A1", "A2").await;
        let b = bed_for("slack_app_id", "A1");
        let body = with_field(
            &message_event("1767600000.000100", None, "hello", "message"),
            "api_app_id",
            "A2",
        );
        let envelope = parse_envelope(&body).unwrap();
        let (outcome, _) = b.ingest.process(envelope, b.clock.now()).await.unwrap();
        assert_eq!(outcome, Outcome::Ignored(IgnoreReason::AnotherApp));
        assert_eq!(
            IgnoreReason::AnotherApp.to_string(),
            "event for another app"
        );
    }
}
