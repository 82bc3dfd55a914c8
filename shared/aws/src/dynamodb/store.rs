//! The store on the table, its messages, channels and users
//! ([`Messages`], [`ChannelRecords`], [`UserCache`]): each port call as its
//! reads and (conditional) writes, on the operations of `ops.rs`. The rest
//! of the store is in `records.rs`.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;
use chrono::{DateTime, Utc};

use super::items::{
    b, channel_item, message_item, n, pending_edit_item, s, user_item, FromItem, MessageRow,
    ANSWER_TIMES, DIGEST_BACKOFF,
};
use super::ops::*;
use super::schema::{
    channel_pk, conversation_pk, message_sk, Key, CHANNELS_PK, GSI1, MESSAGE_SK_PREFIX,
    TTL_ATTRIBUTE,
};
use super::table::{DynamoStore, SERVICE};
use crate::errors::port_error;
use myao_core::ports::{
    ChannelRecord, ChannelRecords, Edit, Insert, Messages, PortError, UserCache,
};
use myao_domain::answer_times::AnswerTimes;
use myao_domain::digest::Backoff;
use myao_domain::{
    Channel, ChannelId, ChannelKind, Conversation, EmojiName, Message, Ts, User, UserId,
    VisibilityChange,
};

#[async_trait]
impl Messages for DynamoStore {
    async fn insert_message(
        &self,
        message: &Message,
        routed: bool,
        expires_at: DateTime<Utc>,
    ) -> Result<Insert, PortError> {
        let key = Key::message(&message.channel, message.ts);
        let put = self
            .put_if(
                message_item(message, routed, expires_at),
                NO_LIVE_ITEM,
                self.now(),
            )
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        let sent = match written("PutItem", put)? {
            Written::Made => return Ok(Insert::New),
            Written::Refused(sent) => sent,
        };
        let existing = self.refused_over(sent, key).await?.ok_or_else(|| {
            PortError::unavailable(
                SERVICE,
                format!(
                    "message {}/{} vanished during its insert",
                    message.channel, message.ts
                ),
            )
        })?;
        let row = MessageRow::from_item(&existing)?;
        if row.deleted {
            return Ok(Insert::Deleted);
        }
        let Some(text) = row.pending_text.filter(|_| row.message.is_none()) else {
            return Ok(Insert::Duplicate { routed: row.routed });
        };
        // Its edit came first: store the message with the newer text, unless
        // something changed since it was read (the message arrived, it was
        // deleted, a newer edit came): then a retry decides again.
        let mut edited = message.clone();
        edited.text = text.clone();
        let put = self
            .put(message_item(&edited, routed, expires_at))
            .condition_expression(
                "pending_text = :seen AND attribute_not_exists(#user) \
                 AND attribute_not_exists(#deleted)",
            )
            .expression_attribute_names("#user", "user")
            .expression_attribute_names("#deleted", "deleted")
            .expression_attribute_values(":seen", s(text))
            .send()
            .await;
        if written("PutItem", put)?.made() {
            return Ok(Insert::New);
        }
        Err(PortError::unavailable(
            SERVICE,
            format!(
                "message {}/{} changed during its insert",
                message.channel, message.ts
            ),
        ))
    }

    async fn mark_routed(&self, channel: &ChannelId, ts: Ts) -> Result<(), PortError> {
        let update = self
            .update(Key::message(channel, ts))
            .update_expression("SET #routed = :true")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#routed", "routed")
            .expression_attribute_values(":true", b(true))
            .send()
            .await;
        if !written("UpdateItem", update)?.made() {
            // Unknown (or gone): nothing left to mark, as in the twin.
            tracing::debug!(%channel, %ts, "mark_routed on an unknown message");
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
        // A stored message takes the text; else the text waits in an item of
        // its own (replacing an older waiting edit or an expired item, never
        // a message or a tombstone). Between the two a message may arrive:
        // then the first step is tried once more.
        let key = Key::message(channel, ts);
        for _ in 0..2 {
            let update = self
                .update(key.clone())
                .update_expression("SET #text = :text")
                .condition_expression(
                    "attribute_exists(#user) AND attribute_not_exists(#deleted) AND #exp > :now",
                )
                .expression_attribute_names("#text", "text")
                .expression_attribute_names("#user", "user")
                .expression_attribute_names("#deleted", "deleted")
                .expression_attribute_names("#exp", TTL_ATTRIBUTE)
                .expression_attribute_values(":text", s(text))
                .expression_attribute_values(":now", n(self.now()))
                .send()
                .await;
            if written("UpdateItem", update)?.made() {
                return Ok(Edit::Applied);
            }
            let put = self
                .put_if(
                    pending_edit_item(channel, ts, text, expires_at),
                    "attribute_not_exists(pk) OR #exp <= :now \
                     OR (attribute_not_exists(#user) AND attribute_not_exists(#deleted))",
                    self.now(),
                )
                .expression_attribute_names("#user", "user")
                .expression_attribute_names("#deleted", "deleted")
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            let Written::Refused(sent) = written("PutItem", put)? else {
                return Ok(Edit::Pending);
            };
            let deleted = sent
                .as_ref()
                .map(MessageRow::from_item)
                .transpose()?
                .map(|r| r.deleted);
            if deleted == Some(true) {
                return Ok(Edit::Deleted);
            }
            let row = self
                .get_item(key.clone())
                .await?
                .map(|item| MessageRow::from_item(&item))
                .transpose()?;
            if row.is_some_and(|r| r.deleted) {
                return Ok(Edit::Deleted);
            }
        }
        Err(PortError::unavailable(
            SERVICE,
            format!("message {channel}/{ts} kept changing during its edit"),
        ))
    }

    async fn delete_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        // One unconditional update: it turns a message into its tombstone, or
        // leaves a tombstone where no message was (a delete seen first).
        self.update(Key::message(channel, ts))
            .update_expression(
                "SET #deleted = :true, #exp = :exp, #channel = :channel, #ts = :ts \
                 REMOVE #text, files, pending_text, gsi1pk, gsi1sk",
            )
            .expression_attribute_names("#deleted", "deleted")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_names("#channel", "channel")
            .expression_attribute_names("#ts", "ts")
            .expression_attribute_names("#text", "text")
            .expression_attribute_values(":true", b(true))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .expression_attribute_values(":channel", s(channel.as_str()))
            .expression_attribute_values(":ts", s(ts.to_string()))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateItem", e))?;
        Ok(())
    }

    async fn set_bot_reaction(
        &self,
        channel: &ChannelId,
        ts: Ts,
        emoji: &EmojiName,
    ) -> Result<(), PortError> {
        let update = self
            .update(Key::message(channel, ts))
            .update_expression("SET #reaction = :emoji")
            .condition_expression(
                "attribute_exists(#user) AND attribute_not_exists(#deleted) AND #exp > :now",
            )
            .expression_attribute_names("#reaction", "bot_reaction")
            .expression_attribute_names("#user", "user")
            .expression_attribute_names("#deleted", "deleted")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":emoji", s(emoji.as_str()))
            .expression_attribute_values(":now", n(self.now()))
            .send()
            .await;
        if !written("UpdateItem", update)?.made() {
            // Not stored, deleted or expired: nothing to remember it on.
            tracing::debug!(%channel, %ts, "set_bot_reaction on no live message");
        }
        Ok(())
    }

    async fn get_message(&self, channel: &ChannelId, ts: Ts) -> Result<Option<Message>, PortError> {
        let Some(item) = self.get_item(Key::message(channel, ts)).await? else {
            return Ok(None);
        };
        Ok(MessageRow::from_item(&item)?.live(self.now()))
    }

    async fn conversation_messages(
        &self,
        conversation: &Conversation,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        // The root of a thread is a top-level message: its item sits under
        // CONV#channel#top, so a thread's query finds its replies only.
        let query = self
            .query()
            .index_name(GSI1)
            .key_condition_expression("gsi1pk = :c")
            .expression_attribute_values(
                ":c",
                self.partition(conversation_pk(
                    &conversation.channel,
                    conversation.thread_ts,
                )),
            );
        self.newest_messages(query, limit).await
    }

    async fn messages_after(
        &self,
        channel: &ChannelId,
        after: Option<Ts>,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        // Strongly consistent (as `recent_messages`, which reads the messages
        // after none): a reply to a mention queued a moment ago must see the
        // mention. (An index cannot be read consistently; the context
        // builder reads the job's own message with a GetItem.)
        let query = self
            .query()
            .consistent_read(true)
            .expression_attribute_values(":pk", self.partition(channel_pk(channel)));
        let query = match after {
            // Only message items live under CH#channel, so `sk >` stays within them.
            Some(after) => query
                .key_condition_expression("pk = :pk AND sk > :after")
                .expression_attribute_values(":after", s(message_sk(after))),
            None => query
                .key_condition_expression("pk = :pk AND begins_with(sk, :m)")
                .expression_attribute_values(":m", s(MESSAGE_SK_PREFIX)),
        };
        self.newest_messages(query, limit).await
    }
}

impl DynamoStore {
    /// Sets `attribute` of a live channel record to `value` (removes it for
    /// `None`); a channel not recorded, or expired, stays so.
    async fn set_on_live_channel(
        &self,
        id: &ChannelId,
        attribute: &str,
        value: Option<String>,
    ) -> Result<(), PortError> {
        let update = self
            .update(Key::channel(id))
            .condition_expression(
                "attribute_exists(pk) AND (attribute_not_exists(#exp) OR #exp > :now)",
            )
            .expression_attribute_names("#attr", attribute)
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":now", n(self.now()));
        let update = match value {
            Some(value) => update
                .update_expression("SET #attr = :value")
                .expression_attribute_values(":value", s(value)),
            None => update.update_expression("REMOVE #attr"),
        };
        written("UpdateItem", update.send().await)?;
        Ok(())
    }
}

#[async_trait]
impl ChannelRecords for DynamoStore {
    async fn touch_channel(
        &self,
        channel: &Channel,
        at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        // The latest activity wins (a later one recorded already makes this
        // a no-op); the name and visibility are set only where none is. An
        // expired record counts as absent: it is recorded afresh.
        let update = with_channel(self.update(Key::channel(&channel.id)), channel)
            .update_expression(
                "SET #channel = :channel, #name = if_not_exists(#name, :name), \
                 #kind = if_not_exists(#kind, :kind), \
                 #external = if_not_exists(#external, :external), #last = :at, #exp = :exp",
            )
            .condition_expression(
                "attribute_not_exists(pk) OR ((attribute_not_exists(#exp) OR #exp > :now) \
                 AND (attribute_not_exists(#last) OR #last < :at))",
            )
            .expression_attribute_names("#last", "last_active")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":at", n(at.timestamp_millis()))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .expression_attribute_values(":now", n(self.now()))
            .send()
            .await;
        if written("UpdateItem", update)?.made() {
            return Ok(());
        }
        // A newer activity is recorded (nothing to do), or the record expired.
        let put = self
            .put_if(
                channel_item(channel, at, expires_at),
                "attribute_exists(pk) AND #exp <= :now",
                self.now(),
            )
            .send()
            .await;
        written("PutItem", put)?;
        Ok(())
    }

    async fn put_channel_info(
        &self,
        channel: &Channel,
        checked_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        with_channel(self.update(Key::channel(&channel.id)), channel)
            .update_expression(
                "SET #channel = :channel, #name = :name, #kind = :kind, \
                 #external = :external, #checked = :checked, #exp = :exp",
            )
            .expression_attribute_names("#checked", "checked_at")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":checked", n(checked_at.timestamp_millis()))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateItem", e))?;
        Ok(())
    }

    async fn change_visibility(
        &self,
        id: &ChannelId,
        change: VisibilityChange,
    ) -> Result<(), PortError> {
        // The same rule as `Visibility::after`, as one conditional update:
        // a channel not recorded yet stays unknown.
        let (field, value) = match change {
            VisibilityChange::ConvertedToPrivate => ("kind", s(ChannelKind::Private.as_str())),
            VisibilityChange::SharedExternally => ("external", b(true)),
            VisibilityChange::ConvertedToPublic | VisibilityChange::Unshared => {
                ("kind", s(ChannelKind::Unknown.as_str()))
            }
        };
        let update = self
            .update(Key::channel(id))
            .update_expression("SET #field = :value REMOVE #checked")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#field", field)
            .expression_attribute_names("#checked", "checked_at")
            .expression_attribute_values(":value", value)
            .send()
            .await;
        written("UpdateItem", update)?;
        Ok(())
    }

    async fn put_answer_times(&self, id: &ChannelId, times: &AnswerTimes) -> Result<(), PortError> {
        self.set_on_live_channel(id, ANSWER_TIMES, Some(times.to_text()))
            .await
    }

    async fn put_digest_backoff(
        &self,
        id: &ChannelId,
        backoff: Option<&Backoff>,
    ) -> Result<(), PortError> {
        self.set_on_live_channel(id, DIGEST_BACKOFF, backoff.map(Backoff::to_text))
            .await
    }

    async fn get_channel(&self, id: &ChannelId) -> Result<Option<ChannelRecord>, PortError> {
        self.get_live(Key::channel(id)).await
    }

    async fn channels(&self) -> Result<Vec<ChannelRecord>, PortError> {
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", self.partition(CHANNELS_PK));
        self.query_live(query).await
    }
}

#[async_trait]
impl UserCache for DynamoStore {
    async fn get_user(&self, id: &UserId) -> Result<Option<(User, DateTime<Utc>)>, PortError> {
        self.get_live(Key::user(id)).await
    }

    async fn put_user(
        &self,
        user: &User,
        fetched_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.put_item(user_item(user, fetched_at, expires_at)).await
    }
}
