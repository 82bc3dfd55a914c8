//! The store on DynamoDB, the rest of it: memories and the forgets pending,
//! facts and profiles, claims and counters.

use super::items::{
    claim_item, counter_item, draft_item, expired, expires_at, fact_item, forget_item,
    grounds_item, label_item, mark_item, memory_item, n, s, sketch_item, time_text, FromItem,
    MarkRow, DRAFT_TEXT,
};
use super::ops::*;
use super::schema::{
    facts_pk, labels_pk, sketches_pk, thread_memory_pk, Key, COUNT_ATTRIBUTE, FORGET_PK,
    GROUNDS_SK_PREFIX, GSI1, LABEL_SK_PREFIX, TTL_ATTRIBUTE,
};
use super::table::{DynamoStore, SERVICE};
use crate::errors::port_error;
use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;
use chrono::{DateTime, Utc};
use myao_core::ports::{
    sort_forgets, Claim, Claims, FactRecords, LabelRecords, MemoryRecords, PortError,
    ProfileRecords,
};
use myao_domain::facts::Fact;
use myao_domain::grounds::PostGrounds;
use myao_domain::labels::Label;
use myao_domain::people::{Profile, ProfileDelta};
use myao_domain::sketch::Sketch;
use myao_domain::{ChannelId, Conversation, Forget, Memory, MemoryKind, MemoryScope, Ts, UserId};

#[async_trait]
impl MemoryRecords for DynamoStore {
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
            .expression_attribute_values(":pk", self.partition(thread_memory_pk(channel)))
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
            .expression_attribute_values(":pk", self.partition(FORGET_PK));
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
}

#[async_trait]
impl LabelRecords for DynamoStore {
    async fn put_label(&self, label: &Label) -> Result<bool, PortError> {
        let put = self
            .put_if(label_item(label)?, NO_LIVE_ITEM, self.now())
            .send()
            .await;
        Ok(written("PutItem", put)?.made())
    }

    async fn delete_label(&self, label: &Label) -> Result<(), PortError> {
        self.delete_item(Key::label(&label.channel, &label.key()))
            .await
    }

    async fn labels(&self, channel: &ChannelId) -> Result<Vec<Label>, PortError> {
        let query = self.labels_query(channel, LABEL_SK_PREFIX);
        let mut labels: Vec<Label> = self.query_live(query).await?;
        labels.sort_by_key(|l| l.at);
        Ok(labels)
    }

    async fn put_grounds(&self, grounds: &PostGrounds) -> Result<(), PortError> {
        self.put_item(grounds_item(grounds)?).await
    }

    async fn grounds(&self, channel: &ChannelId) -> Result<Vec<PostGrounds>, PortError> {
        let query = self.labels_query(channel, GROUNDS_SK_PREFIX);
        let mut grounds: Vec<PostGrounds> = self.query_live(query).await?;
        grounds.sort_by_key(|g| g.post);
        Ok(grounds)
    }
}

impl DynamoStore {
    /// The query of the items of a channel's labels partition whose sort
    /// key starts with `prefix` (its labels, or its posts' grounds).
    fn labels_query(
        &self,
        channel: &ChannelId,
        prefix: &str,
    ) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
        self.query()
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", self.partition(labels_pk(channel)))
            .expression_attribute_values(":prefix", s(prefix))
    }
}

#[async_trait]
impl FactRecords for DynamoStore {
    async fn facts(&self, channel: &ChannelId) -> Result<Vec<Fact>, PortError> {
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", self.partition(facts_pk(channel)));
        self.query_live(query).await
    }

    async fn put_fact(&self, fact: &Fact, expires_at: DateTime<Utc>) -> Result<(), PortError> {
        self.put_item(fact_item(fact, expires_at)?).await
    }

    async fn replace_fact(
        &self,
        fact: &Fact,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let put = self
            .put_if(fact_item(fact, expires_at)?, LIVE_ITEM, self.now())
            .send()
            .await;
        Ok(written("PutItem", put)?.made())
    }

    async fn delete_fact(&self, channel: &ChannelId, id: &str) -> Result<(), PortError> {
        self.delete_item(Key::fact(channel, id)).await
    }

    async fn sketches(&self, channel: &ChannelId) -> Result<Vec<Sketch>, PortError> {
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", self.partition(sketches_pk(channel)));
        self.query_live(query).await
    }

    async fn put_sketch(
        &self,
        sketch: &Sketch,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.put_item(sketch_item(sketch, expires_at)?).await
    }

    async fn delete_sketch(&self, channel: &ChannelId, user: &UserId) -> Result<(), PortError> {
        self.delete_item(Key::sketch(channel, user)).await
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
}

#[async_trait]
impl ProfileRecords for DynamoStore {
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
}

#[async_trait]
impl Claims for DynamoStore {
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

    async fn keep_draft(
        &self,
        key: &str,
        text: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.put_item(draft_item(key, text, expires_at)).await
    }

    async fn draft(&self, key: &str) -> Result<Option<String>, PortError> {
        let now = self.now();
        let Some(item) = self.get_item(Key::draft(key)).await? else {
            return Ok(None);
        };
        if expired(&item, now) {
            return Ok(None);
        }
        Ok(item.get(DRAFT_TEXT).and_then(|v| v.as_s().ok()).cloned())
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
