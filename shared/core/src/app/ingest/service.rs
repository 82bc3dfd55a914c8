//! The ingest service itself, beneath the module root so that its helpers
//! (interactions, refusals) extend and answer for it as its siblings,
//! without leaning on the file that declares them.

use std::ops::ControlFlow;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use super::http::{IngestRequest, IngestResponse, MAX_BODY_BYTES};
use super::outcome::{IgnoreReason, Outcome};
use super::refusal::{self, refusal, Delivery, Home, Whose};
use crate::app::expiry::{memory_retention, retention};
use crate::app::ports::Ports;
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

/// How many of a thread's newest messages are read to tell whether the bot
/// spoke there lately.
const ENGAGEMENT_LOOKBACK: usize = 20;

/// The ingest service.
pub struct Ingest {
    pub ports: Ports,
    pub secrets: Arc<dyn Secrets>,
    /// The name under which `secrets` holds Slack's signing secret.
    pub signing_secret_name: String,
    /// Whether an event must come from a workspace the app is installed in
    /// ([`Ingest::requiring_installations`]).
    pub(super) installed_only: bool,
    /// The stack's own team, once known.
    pub(super) home: Home,
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
    pub(super) fn counted(&self, kind: &'static str) {
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
    pub(super) fn for_team(&self, team: &TeamId) -> Ingest {
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
