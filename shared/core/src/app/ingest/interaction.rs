//! Slack's interactivity at the front door: a click on the feedback
//! buttons under one of the bot's posts (`feedback_buttons`) becomes a
//! label, as a reaction's hint does. Slack posts it to the same URL as the
//! events, signed alike (verified before this), or Socket Mode delivers it.

use chrono::{DateTime, Utc};

use super::http::IngestResponse;
use super::outcome::{IgnoreReason, Outcome};
use super::refusal::Whose;
use super::service::Ingest;
use crate::ports::PortError;
use myao_domain::labels::{Label, Source};
use myao_domain::UserId;
use myao_slack::interaction::{parse_interaction, Feedback, Interaction, InteractionError};

impl Ingest {
    /// Handles an interaction whose sender is known already: Socket Mode's
    /// `interactive` envelope, whose payload is the interaction's JSON.
    pub async fn accept_interaction(&self, payload: &[u8], now: DateTime<Utc>) -> IngestResponse {
        self.interacted(parse_interaction(payload), now).await
    }

    /// Answers a verified interaction: 200 with nothing in it once a click
    /// of the feedback buttons is stored (or the interaction is one ingest
    /// does not take), 400 for one that cannot be read, 500 when storing
    /// failed (the person may click again).
    pub(super) async fn interacted(
        &self,
        interaction: Result<Interaction, InteractionError>,
        now: DateTime<Utc>,
    ) -> IngestResponse {
        let interaction = match interaction {
            Ok(interaction) => interaction,
            Err(error) => {
                tracing::warn!(%error, "refused a malformed interaction");
                self.counted("malformed");
                return IngestResponse::text(400, "malformed interaction");
            }
        };
        match self.interaction(interaction, now).await {
            Ok(outcome) => {
                tracing::info!(?outcome, "interaction handled");
                self.counted(outcome.kind());
                IngestResponse::ok()
            }
            Err(error) => {
                tracing::error!(%error, "interaction not handled");
                self.counted("failed");
                IngestResponse::retry_later()
            }
        }
    }

    /// A click of the feedback buttons on one of the bot's posts is kept as
    /// that person's one label for the post: the first click stored, a
    /// later one in its place. Anything else is acknowledged and dropped.
    async fn interaction(
        &self,
        interaction: Interaction,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        let click = match interaction {
            Interaction::Feedback(click) => click,
            Interaction::Other { kind } => {
                return Ok(Outcome::Ignored(IgnoreReason::Interaction(kind)));
            }
        };
        let settings = self.ports.settings.current().await?;
        // Buttons on posts made while it was on count no more once it is off.
        if !settings.feedback_buttons {
            return Ok(Outcome::Ignored(IgnoreReason::FeedbackOff));
        }
        let sender = (click.api_app_id.as_deref(), click.team_id.as_deref());
        // As for events: an installed team's click is kept in its part of
        // the store, on its bot's post; the stack's own workspace's in the
        // stack's; one of a team with no installation is dropped.
        let store = &*self.ports.store;
        let (installed_only, home) = (self.installed_only, &self.home);
        let whose = Whose::of(store, &settings, installed_only, home, sender.1, now).await?;
        if let Some(reason) = super::refusal::another(&settings, sender.0, sender.1, &whose) {
            return Ok(Outcome::Ignored(reason));
        }
        match whose {
            Whose::Stack => {
                let bot = settings.bot_user_id.clone();
                self.clicked(bot.as_ref(), click, now).await
            }
            Whose::Team(installation) => {
                let scoped = self.for_team(&installation.team);
                scoped
                    .clicked(Some(&installation.bot_user_id), click, now)
                    .await
            }
            Whose::NotInstalled => Ok(Outcome::Ignored(IgnoreReason::NotInstalled)),
        }
    }

    /// Keeps a click on the post of `bot` (`None`: of an app) as its
    /// person's label for it.
    async fn clicked(
        &self,
        bot: Option<&UserId>,
        click: Feedback,
        now: DateTime<Utc>,
    ) -> Result<Outcome, PortError> {
        if !self.on_bots_post(bot, &click).await? {
            return Ok(Outcome::Ignored(IgnoreReason::NotItsPost));
        }
        let label = Label {
            channel: click.channel,
            post: click.post,
            user: click.user,
            hint: click.hint,
            source: Source::Button,
            at: now,
        };
        let store = &self.ports.store;
        // The other button (or the same one again) replaces the label: a
        // person's latest click is the one that counts, from its time.
        let new = store.put_label(&label).await?;
        if !new {
            store.delete_label(&label).await?;
            store.put_label(&label).await?;
        }
        tracing::info!(hint = ?label.hint, new, "a feedback button on the bot's post");
        Ok(Outcome::Hinted { added: true, new })
    }

    /// Whether the post clicked is the bot's: written by `bot` when
    /// that is set, else by an app (the buttons are only ever on the bot's
    /// posts; an app's message Slack said nothing of is read from the
    /// store). A click by the bot itself is none.
    async fn on_bots_post(
        &self,
        bot: Option<&UserId>,
        click: &Feedback,
    ) -> Result<bool, PortError> {
        if bot == Some(&click.user) {
            return Ok(false);
        }
        let (author, by_app) = match &click.author {
            Some(author) => (Some(author.clone()), click.by_app),
            None => match self
                .ports
                .store
                .get_message(&click.channel, click.post)
                .await?
            {
                Some(message) => (Some(message.user), message.is_bot),
                None => (None, false),
            },
        };
        Ok(match bot {
            Some(bot) => author.as_ref() == Some(bot),
            None => by_app,
        })
    }
}

#[cfg(test)]
mod tests;
