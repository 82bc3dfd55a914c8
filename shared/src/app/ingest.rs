//! The front door: a Slack Events API request in, stored and routed.
//!
//! Slack wants an answer within 3 seconds and retries otherwise, so this
//! does the least that is safe: verify, store with a conditional write, and
//! make one job (a judgment schedule or a queued reply).

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::retention;
use crate::domain::routing::{route, Route};
use crate::domain::signature::verify;
use crate::domain::slack_event::{parse_envelope, Envelope, SlackEvent};
use crate::domain::{Conversation, Job, JobKind, Message, ScheduleName, Settings, UserId};
use crate::ports::{
    Clock, Insert, PortError, Queue, RandomSource, Scheduler, Secrets, SettingsProvider, Store,
};

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

/// What ingest did with an event (for logs, tests and the replay).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Challenge,
    Stored { routed: Route },
    Duplicate,
    Edited,
    Deleted,
    Ignored(String),
}

/// The ingest service.
pub struct Ingest {
    pub store: Arc<dyn Store>,
    pub scheduler: Arc<dyn Scheduler>,
    pub queue: Arc<dyn Queue>,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn RandomSource>,
    pub settings: Arc<dyn SettingsProvider>,
    pub secrets: Arc<dyn Secrets>,
    /// The name under which `secrets` holds Slack's signing secret.
    pub signing_secret_name: String,
}

impl Ingest {
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
        let now = self.clock.now();
        if let Err(reason) = verify(
            secret.as_bytes(),
            request.timestamp,
            request.signature,
            request.body,
            now.timestamp(),
        ) {
            tracing::warn!(%reason, "refused an unverified request");
            return IngestResponse::text(401, "");
        }
        let envelope = match parse_envelope(request.body) {
            Ok(e) => e,
            Err(error) => {
                tracing::warn!(%error, "refused a malformed event");
                return IngestResponse::text(400, "malformed event");
            }
        };
        match self.process(envelope, now).await {
            Ok((outcome, response)) => {
                tracing::info!(?outcome, retry = request.retry_num, "event handled");
                response
            }
            Err(error) => {
                tracing::error!(%error, retry = request.retry_num, "event not handled; Slack will retry");
                IngestResponse::retry_later()
            }
        }
    }

    /// Acts on a verified, parsed envelope.
    pub async fn process(
        &self,
        envelope: Envelope,
        now: DateTime<Utc>,
    ) -> Result<(Outcome, IngestResponse), PortError> {
        let (bot, event) = match envelope {
            Envelope::UrlVerification { challenge } => {
                return Ok((Outcome::Challenge, IngestResponse::text(200, challenge)));
            }
            Envelope::Other { kind } => return Ok((Outcome::Ignored(kind), IngestResponse::ok())),
            Envelope::Event {
                bot_user_id, event, ..
            } => (bot_user_id, event),
        };
        let settings = self.settings.current().await;
        let bot = bot.or_else(|| settings.bot_user_id.clone());
        let outcome = match event {
            SlackEvent::NewMessage {
                message,
                app_mention,
            } => {
                self.new_message(&settings, bot.as_ref(), message, app_mention, now)
                    .await?
            }
            SlackEvent::Edited { channel, ts, text } => {
                self.store.edit_message(&channel, ts, &text).await?;
                Outcome::Edited
            }
            SlackEvent::Deleted { channel, ts } => {
                self.store
                    .delete_message(&channel, ts, retention(&settings, now))
                    .await?;
                Outcome::Deleted
            }
            SlackEvent::Ignored { reason } => Outcome::Ignored(reason),
        };
        Ok((outcome, IngestResponse::ok()))
    }

    async fn new_message(
        &self,
        settings: &Settings,
        bot: Option<&UserId>,
        mut message: Message,
        app_mention: bool,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        if bot.is_some_and(|b| *b == message.user) {
            message.is_bot = true;
        }
        let routing = route(
            &message,
            bot,
            app_mention,
            settings,
            now,
            self.random.unit(),
        );
        let needs_job = routing != Route::Nothing;
        match self
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
                let routing = self.catch_up(routing, &message).await?;
                self.make_job(&routing).await?;
                self.store.mark_routed(&message.channel, message.ts).await?;
                return Ok(Outcome::Stored { routed: routing });
            }
        }
        if needs_job {
            self.make_job(&routing).await?;
            self.store.mark_routed(&message.channel, message.ts).await?;
        }
        Ok(Outcome::Stored { routed: routing })
    }

    async fn catch_up(&self, routing: Route, message: &Message) -> Result<Route, PortError> {
        let Route::JudgeAt {
            at,
            job:
                Job::Judgment {
                    channel,
                    thread_ts,
                    newest_ts,
                },
        } = routing
        else {
            return Ok(routing);
        };
        let conversation = Conversation {
            channel: channel.clone(),
            thread_ts,
        };
        let newest = self
            .store
            .conversation_messages(&conversation, 1)
            .await?
            .first()
            .map(|m| m.ts.max(newest_ts))
            .unwrap_or(message.ts);
        Ok(Route::JudgeAt {
            at,
            job: Job::Judgment {
                channel,
                thread_ts,
                newest_ts: newest,
            },
        })
    }

    async fn make_job(&self, routing: &Route) -> Result<(), PortError> {
        match routing {
            Route::Nothing => Ok(()),
            Route::RespondNow(job) => self.queue.send(job, 0).await,
            // Judgments always go to the scheduler, keyed by conversation, so
            // that the next message moves the wait (a wait under a minute
            // fires within that minute on EventBridge Scheduler).
            Route::JudgeAt { at, job } => match job.conversation() {
                Some(conversation) => {
                    let name = ScheduleName::for_conversation(JobKind::Judgment, &conversation);
                    self.scheduler.upsert(&name, *at, job).await
                }
                None => Ok(()),
            },
        }
    }
}
