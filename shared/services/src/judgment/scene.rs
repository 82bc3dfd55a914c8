//! What a judgment reads, read once: the judged conversation (a thread with
//! its root), then, unless a newer message made the judgment stale, the
//! channel (its record and what Slack says of it), the channel's recent
//! messages and the hints people gave there. The gates, the rule stage and
//! the prompt are all given this one reading.

use chrono::{DateTime, Utc};

use myao_core::ports::{ChannelRecord, Messages, PortError};
use myao_domain::labels::Label;
use myao_domain::routing::addressed;
use myao_domain::{Channel, Conversation, Message, Settings, Ts, UserId};

use crate::context::{self, Recent, RECENT};
use crate::JobContext;

/// The judged conversation as read: its newest messages, oldest first, and
/// a thread's root.
pub(super) struct Talk {
    pub(super) conversation: Conversation,
    /// The newest messages, enough for both the stale check ([`RECENT`])
    /// and the rule stage (`message_limit`).
    newest: Vec<Message>,
    root: Option<Message>,
}

impl Talk {
    /// Reads the conversation: its newest messages and a thread's root.
    pub(super) async fn read(
        messages: &dyn Messages,
        conversation: &Conversation,
        settings: &Settings,
    ) -> Result<Talk, PortError> {
        let limit = RECENT.max(settings.message_limit as usize);
        let newest = messages.conversation_messages(conversation, limit).await?;
        let root = match conversation.thread_ts {
            Some(root) => messages.get_message(&conversation.channel, root).await?,
            None => None,
        };
        Ok(Talk {
            conversation: conversation.clone(),
            newest,
            root,
        })
    }

    /// Its newest message and who spoke after `since` (`None`: no message
    /// is left).
    pub(super) fn recent(&self, since: Ts) -> Option<Recent> {
        let from = self.newest.len().saturating_sub(RECENT);
        Recent::of(&self.newest[from..], self.root.as_ref(), since)
    }

    /// What the rule stage and the prompt read of it: the newest
    /// `message_limit` messages, a thread's root first.
    fn judged(self, settings: &Settings) -> Vec<Message> {
        let from = self
            .newest
            .len()
            .saturating_sub(settings.message_limit as usize);
        self.root
            .into_iter()
            .chain(self.newest.into_iter().skip(from))
            .collect()
    }
}

/// Everything a judgment decides from.
pub(super) struct Scene {
    pub(super) conversation: Conversation,
    /// The judged conversation, oldest first: a thread's root first.
    pub(super) talk: Vec<Message>,
    /// The channel's recent messages (`channel_messages_limit`), oldest
    /// first.
    pub(super) window: Vec<Message>,
    /// The channel, as recently checked with Slack.
    pub(super) channel: Channel,
    /// The channel's record as it was read (its learned answer times).
    pub(super) record: Option<ChannelRecord>,
    /// The hints people gave about the bot's posts in the channel.
    pub(super) labels: Vec<Label>,
}

impl Scene {
    /// The rest of the reading, after `talk`: the channel and its window.
    pub(super) async fn read(cx: &JobContext<'_>, talk: Talk) -> Result<Scene, PortError> {
        let settings = cx.settings();
        let conversation = talk.conversation.clone();
        let (channel, record) = context::channel_and_record(cx, &conversation.channel).await?;
        let window = cx
            .store()
            .recent_messages(
                &conversation.channel,
                settings.channel_messages_limit as usize,
            )
            .await?;
        let labels = cx.store().labels(&conversation.channel).await?;
        Ok(Scene {
            talk: talk.judged(settings),
            conversation,
            window,
            channel,
            record,
            labels,
        })
    }

    /// What the prompt's context adds to its channel's window: a thread's
    /// messages (the window may be newer than the thread), its root first.
    pub(super) fn thread(&self) -> &[Message] {
        match self.conversation.thread_ts {
            Some(_) => &self.talk,
            None => &[],
        }
    }

    /// When the bot last spoke in the channel. A reaction counts as
    /// speaking, at the time of the message it is on (the reaction's own
    /// time is not kept: it comes seconds later).
    pub(super) fn bot_last_spoke(&self, bot: &UserId) -> Option<DateTime<Utc>> {
        self.window
            .iter()
            .filter(|m| m.user == *bot || m.bot_reaction.is_some())
            .map(|m| m.ts.to_datetime())
            .max()
    }

    /// The bot's last message, or the last message calling it, in the
    /// channel: a row of declines starts after it.
    pub(super) fn last_call(&self, bot: &UserId, settings: &Settings) -> Option<Ts> {
        self.window
            .iter()
            .filter(|m| m.user == *bot || addressed(m, Some(bot), false, false, settings).is_some())
            .map(|m| m.ts)
            .max()
    }
}
