//! The store's twin: DynamoDB's table in memory.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::ports::{ChannelRecord, ChannelRecords, Edit, Insert, Messages, PortError, UserCache};
use myao_domain::answer_times::AnswerTimes;
use myao_domain::digest::Backoff;
use myao_domain::{
    Channel, ChannelId, Conversation, EmojiName, Message, Ts, User, UserId, VisibilityChange,
};

mod records;
mod state;
use state::*;
pub use state::{CallCounts, MemoryStore, OAUTH_STATES_HELD};

#[async_trait]
impl Messages for MemoryStore {
    async fn insert_message(
        &self,
        message: &Message,
        routed: bool,
        expires_at: DateTime<Utc>,
    ) -> Result<Insert, PortError> {
        let mut inner = self.write()?;
        let key = (message.channel.clone(), message.ts);
        let mut message = message.clone();
        if let Some(existing) = inner.messages.get(&key) {
            // An expired item counts as absent, as on DynamoDB with the TTL filter.
            if existing.expires_at > self.clock.now() {
                match &existing.stored {
                    Stored::Tombstone => return Ok(Insert::Deleted),
                    Stored::Message { routed, .. } => {
                        return Ok(Insert::Duplicate { routed: *routed })
                    }
                    // Its edit came first: the newer text wins.
                    Stored::PendingEdit { text } => message.text = text.clone(),
                }
            }
        }
        inner.messages.insert(
            key,
            StoredMessage {
                stored: Stored::Message { message, routed },
                expires_at,
            },
        );
        Ok(Insert::New)
    }

    async fn mark_routed(&self, channel: &ChannelId, ts: Ts) -> Result<(), PortError> {
        let mut inner = self.write()?;
        if let Some(StoredMessage {
            stored: Stored::Message { routed, .. },
            ..
        }) = inner.messages.get_mut(&(channel.clone(), ts))
        {
            *routed = true;
        }
        Ok(())
    }

    async fn edit_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        text: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Edit, PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let key = (channel.clone(), ts);
        match inner.messages.get_mut(&key) {
            Some(s) if s.expires_at > now => match &mut s.stored {
                Stored::Message { message, .. } => {
                    message.text = text.to_owned();
                    Ok(Edit::Applied)
                }
                Stored::PendingEdit { text: pending } => {
                    *pending = text.to_owned();
                    s.expires_at = expires_at;
                    Ok(Edit::Pending)
                }
                Stored::Tombstone => Ok(Edit::Deleted),
            },
            _ => {
                inner.messages.insert(
                    key,
                    StoredMessage {
                        stored: Stored::PendingEdit {
                            text: text.to_owned(),
                        },
                        expires_at,
                    },
                );
                Ok(Edit::Pending)
            }
        }
    }

    async fn delete_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let mut inner = self.write()?;
        inner.messages.insert(
            (channel.clone(), ts),
            StoredMessage {
                stored: Stored::Tombstone,
                expires_at,
            },
        );
        Ok(())
    }

    async fn set_bot_reaction(
        &self,
        channel: &ChannelId,
        ts: Ts,
        emoji: &EmojiName,
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        if let Some(StoredMessage {
            stored: Stored::Message { message, .. },
            expires_at,
        }) = inner.messages.get_mut(&(channel.clone(), ts))
        {
            if *expires_at > now {
                message.bot_reaction = Some(emoji.clone());
            }
        }
        Ok(())
    }

    async fn get_message(&self, channel: &ChannelId, ts: Ts) -> Result<Option<Message>, PortError> {
        let inner = self.read();
        let now = self.clock.now();
        Ok(inner
            .messages
            .get(&(channel.clone(), ts))
            .and_then(|s| s.live(now))
            .cloned())
    }

    async fn conversation_messages(
        &self,
        conversation: &Conversation,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        let inner = self.read();
        let thread = conversation.thread_ts;
        let v: Vec<&Message> = self
            .live(&inner, &conversation.channel)
            .filter(|m| m.thread_ts == thread)
            .collect();
        Ok(newest_oldest_first(v.into_iter(), limit))
    }

    async fn messages_after(
        &self,
        channel: &ChannelId,
        after: Option<Ts>,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        let inner = self.read();
        let v: Vec<&Message> = self
            .live(&inner, channel)
            .filter(|m| after.is_none_or(|a| m.ts > a))
            .collect();
        Ok(newest_oldest_first(v.into_iter(), limit))
    }
}

impl MemoryStore {
    /// Changes a live channel record; a channel not recorded, or expired,
    /// stays so.
    fn on_live_channel(
        &self,
        id: &ChannelId,
        change: impl FnOnce(&mut ChannelRecord),
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        if let Some(e) = inner.channels.get_mut(id) {
            if e.live(now).is_some() {
                change(&mut e.value);
            }
        }
        Ok(())
    }
}

#[async_trait]
impl ChannelRecords for MemoryStore {
    async fn touch_channel(
        &self,
        channel: &Channel,
        at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let entry = inner
            .channels
            .entry(channel.id.clone())
            .or_insert_with(|| Expiring::new(first_seen(channel, at), expires_at));
        if entry.live(now).is_none() {
            // An expired record counts as absent: it is recorded afresh.
            entry.value = first_seen(channel, at);
        }
        entry.value.last_active = entry.value.last_active.max(at);
        entry.expires_at = entry.expires_at.max(expires_at);
        Ok(())
    }

    async fn put_channel_info(
        &self,
        channel: &Channel,
        checked_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let known = inner.channels.get(&channel.id).and_then(|e| e.live(now));
        let record = ChannelRecord {
            channel: channel.clone(),
            last_active: known.map_or(DateTime::UNIX_EPOCH, |r| r.last_active),
            checked_at: Some(checked_at),
            answer_times: known.and_then(|r| r.answer_times.clone()),
            digest_backoff: known.and_then(|r| r.digest_backoff),
        };
        inner
            .channels
            .insert(channel.id.clone(), Expiring::new(record, expires_at));
        Ok(())
    }

    async fn change_visibility(
        &self,
        id: &ChannelId,
        change: VisibilityChange,
    ) -> Result<(), PortError> {
        let mut inner = self.write()?;
        if let Some(e) = inner.channels.get_mut(id) {
            e.value.channel.visibility = e.value.channel.visibility.after(change);
            e.value.checked_at = None;
        }
        Ok(())
    }

    async fn put_answer_times(&self, id: &ChannelId, times: &AnswerTimes) -> Result<(), PortError> {
        self.on_live_channel(id, |r| r.answer_times = Some(times.clone()))
    }

    async fn put_digest_backoff(
        &self,
        id: &ChannelId,
        backoff: Option<&Backoff>,
    ) -> Result<(), PortError> {
        self.on_live_channel(id, |r| r.digest_backoff = backoff.copied())
    }

    async fn get_channel(&self, id: &ChannelId) -> Result<Option<ChannelRecord>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .channels
            .get(id)
            .and_then(|e| e.live(now))
            .cloned())
    }

    async fn channels(&self) -> Result<Vec<ChannelRecord>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .channels
            .values()
            .filter_map(|e| e.live(now).cloned())
            .collect())
    }
}

#[async_trait]
impl UserCache for MemoryStore {
    async fn get_user(&self, id: &UserId) -> Result<Option<(User, DateTime<Utc>)>, PortError> {
        let now = self.clock.now();
        Ok(self.read().users.get(id).and_then(|e| e.live(now)).cloned())
    }

    async fn put_user(
        &self,
        user: &User,
        fetched_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let user_at = Expiring::new((user.clone(), fetched_at), expires_at);
        self.write()?.users.insert(user.id.clone(), user_at);
        Ok(())
    }
}
