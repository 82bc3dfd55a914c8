//! [`Store`] on the table: each port call as its reads and (conditional)
//! writes.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;
use chrono::{DateTime, Utc};

use super::items::{
    b, channel_item, claim_item, counter_item, expired, expires_at, fact_item, forget_item,
    mark_item, memory_item, message_item, n, pending_edit_item, s, time_text, user_item, FromItem,
    MarkRow, MessageRow,
};
use super::ops::*;
use super::schema::{
    channel_pk, conversation_pk, facts_pk, message_sk, thread_memory_pk, Key, CHANNELS_PK,
    COUNT_ATTRIBUTE, FORGET_PK, GSI1, MESSAGE_SK_PREFIX, TTL_ATTRIBUTE,
};
use super::{DynamoStore, SERVICE};
use crate::adapters::aws::port_error;
use crate::domain::facts::Fact;
use crate::domain::people::{Profile, ProfileDelta};
use crate::domain::{
    Channel, ChannelId, ChannelKind, Conversation, EmojiName, Forget, Memory, MemoryKind,
    MemoryScope, Message, Ts, User, UserId, VisibilityChange,
};
use crate::ports::{sort_forgets, ChannelRecord, Claim, Edit, Insert, PortError, Store};

#[async_trait]
impl Store for DynamoStore {
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
                 REMOVE #text, pending_text, gsi1pk, gsi1sk",
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
                s(conversation_pk(
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
            .expression_attribute_values(":pk", s(channel_pk(channel)));
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

    async fn get_channel(&self, id: &ChannelId) -> Result<Option<ChannelRecord>, PortError> {
        self.get_live(Key::channel(id)).await
    }

    async fn channels(&self) -> Result<Vec<ChannelRecord>, PortError> {
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", s(CHANNELS_PK));
        self.query_live(query).await
    }

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

    async fn put_memory(
        &self,
        memory: &Memory,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.put_item(memory_item(memory, expires_at)).await
    }

    async fn get_memory(
        &self,
        scope: &MemoryScope,
        kind: MemoryKind,
    ) -> Result<Option<Memory>, PortError> {
        self.get_live(Key::memory(scope, kind)).await
    }

    async fn delete_memory(&self, scope: &MemoryScope, kind: MemoryKind) -> Result<(), PortError> {
        self.delete_item(Key::memory(scope, kind)).await
    }

    async fn thread_memories(
        &self,
        channel: &ChannelId,
        since: DateTime<Utc>,
    ) -> Result<Vec<Memory>, PortError> {
        // The index is ordered by update time: only the recent ones are read.
        let query = self
            .query()
            .index_name(GSI1)
            .key_condition_expression("gsi1pk = :pk AND gsi1sk >= :since")
            .expression_attribute_values(":pk", s(thread_memory_pk(channel)))
            .expression_attribute_values(":since", s(time_text(since)));
        self.query_live(query).await
    }

    async fn record_forget(
        &self,
        forget: &Forget,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.put_item(forget_item(forget, expires_at)).await
    }

    async fn forgets(&self) -> Result<Vec<Forget>, PortError> {
        let query = self
            .query()
            .consistent_read(true)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", s(FORGET_PK));
        let mut all = self.query_live(query).await?;
        sort_forgets(&mut all);
        Ok(all)
    }

    async fn clear_forget(&self, forget: &Forget) -> Result<(), PortError> {
        let delete = self
            .delete(Key::forget(&forget.channel, forget.ts))
            // A newer deletion or edit of the same message stays pending.
            .condition_expression("#at = :at")
            .expression_attribute_names("#at", "at")
            .expression_attribute_values(":at", s(time_text(forget.at)))
            .send()
            .await;
        written("DeleteItem", delete)?;
        Ok(())
    }

    async fn facts(&self, channel: &ChannelId) -> Result<Vec<Fact>, PortError> {
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", s(facts_pk(channel)));
        self.query_live(query).await
    }

    async fn put_fact(&self, fact: &Fact, expires_at: DateTime<Utc>) -> Result<(), PortError> {
        self.put_item(fact_item(fact, expires_at)?).await
    }

    async fn delete_fact(&self, channel: &ChannelId, id: &str) -> Result<(), PortError> {
        self.delete_item(Key::fact(channel, id)).await
    }

    async fn reflected(&self, conversation: &Conversation) -> Result<Option<Ts>, PortError> {
        let key = Key::reflected(&conversation.channel, conversation.thread_ts);
        match self.get_item(key).await? {
            Some(item) if !expired(&item, self.now()) => Ok(Some(MarkRow::from_item(&item)?.ts)),
            _ => Ok(None),
        }
    }

    async fn set_reflected(
        &self,
        conversation: &Conversation,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let key = Key::reflected(&conversation.channel, conversation.thread_ts);
        self.put_item(mark_item(key, ts, expires_at)).await
    }

    async fn profile(&self, user: &UserId) -> Result<Option<Profile>, PortError> {
        match self.get_item(Key::profile(user)).await? {
            Some(item) if !expired(&item, self.now()) => Ok(Some(Profile::from_item(&item)?)),
            _ => Ok(None),
        }
    }

    async fn add_to_profile(
        &self,
        user: &UserId,
        delta: &ProfileDelta,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let m = i64::try_from(delta.messages).unwrap_or(i64::MAX);
        let i = i64::try_from(delta.interactions).unwrap_or(i64::MAX);
        self.update(Key::profile(user))
            .update_expression(
                "ADD messages :m, interactions :i \
                 SET #user = if_not_exists(#user, :user), \
                 first_seen = if_not_exists(first_seen, :first), last_seen = :last, #exp = :exp",
            )
            .expression_attribute_names("#user", "user")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":m", n(m))
            .expression_attribute_values(":i", n(i))
            .expression_attribute_values(":user", s(user.as_str()))
            .expression_attribute_values(":first", s(time_text(delta.first.to_datetime())))
            .expression_attribute_values(":last", s(time_text(delta.last.to_datetime())))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateItem", e))?;
        Ok(())
    }

    async fn set_topics(&self, user: &UserId, topics: &[String]) -> Result<(), PortError> {
        let json = serde_json::to_string(topics).map_err(|e| PortError::refused_by(SERVICE, e))?;
        let update = self
            .update(Key::profile(user))
            .update_expression("SET topics = :t")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":t", s(json))
            .send()
            .await;
        written("UpdateItem", update)?;
        Ok(())
    }

    async fn delete_profile(&self, user: &UserId) -> Result<(), PortError> {
        self.delete_item(Key::profile(user)).await
    }

    async fn claim(&self, key: &str, expires_at: DateTime<Utc>) -> Result<bool, PortError> {
        let put = self
            .put_if(claim_item(key, expires_at), NO_LIVE_ITEM, self.now())
            .send()
            .await;
        Ok(written("PutItem", put)?.made())
    }

    async fn claim_or_holder(
        &self,
        key: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Claim, PortError> {
        let now = self.now();
        let put = self
            .put_if(claim_item(key, expires_at), NO_LIVE_ITEM, now)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        let sent = match written("PutItem", put)? {
            Written::Made => return Ok(Claim::Made),
            Written::Refused(sent) => sent,
        };
        // The claim that refused this one comes back with the refusal; read
        // only from an endpoint that does not send it.
        let holder = self.refused_over(sent, Key::claim(key)).await?;
        Ok(Claim::Held {
            until: holder
                .filter(|item| !expired(item, now))
                .and_then(|item| super::items::expires_at(&item)),
        })
    }

    async fn release(&self, key: &str) -> Result<(), PortError> {
        self.delete_item(Key::claim(key)).await
    }

    async fn held_until(&self, key: &str) -> Result<Option<DateTime<Utc>>, PortError> {
        let now = self.now();
        let Some(item) = self.get_item(Key::claim(key)).await? else {
            return Ok(None);
        };
        if expired(&item, now) {
            return Ok(None);
        }
        Ok(expires_at(&item))
    }

    async fn count(
        &self,
        key: &str,
        limit: u64,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        if limit == 0 {
            return Ok(false);
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Normally one UpdateItem. An expired counter (TTL deletion is lazy)
        // is started again by a conditional put; losing that race to another
        // caller means counting on what it wrote.
        for _ in 0..3 {
            let now = self.now();
            let update = self
                .update(Key::counter(key))
                .update_expression("ADD #n :one SET #exp = if_not_exists(#exp, :exp)")
                .condition_expression("attribute_not_exists(pk) OR (#n < :limit AND #exp > :now)")
                .expression_attribute_names("#n", COUNT_ATTRIBUTE)
                .expression_attribute_names("#exp", TTL_ATTRIBUTE)
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":limit", n(limit))
                .expression_attribute_values(":exp", n(expires_at.timestamp()))
                .expression_attribute_values(":now", n(now))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            let sent = match written("UpdateItem", update)? {
                Written::Made => return Ok(true),
                Written::Refused(sent) => sent,
            };
            // Gone since (TTL): the next update starts it. One without a
            // count is being created (an emulator shows that half-made
            // state; DynamoDB never does): count on it.
            let Some(existing) = self.refused_over(sent, Key::counter(key)).await? else {
                continue;
            };
            if !existing.contains_key(COUNT_ATTRIBUTE) {
                continue;
            }
            if !expired(&existing, now) {
                return Ok(false);
            }
            let put = self
                .put_if(counter_item(key, expires_at), NO_LIVE_ITEM, now)
                .send()
                .await;
            if written("PutItem", put)?.made() {
                return Ok(true);
            }
        }
        Err(PortError::unavailable(
            SERVICE,
            format!("counter {key} kept changing during its count"),
        ))
    }
}
