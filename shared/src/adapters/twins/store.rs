//! The store's twin: DynamoDB's table in memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::domain::facts::Fact;
use crate::domain::people::{Profile, ProfileDelta};
use crate::domain::{
    Channel, ChannelId, Conversation, EmojiName, Forget, Memory, MemoryKind, MemoryScope, Message,
    Ts, User, UserId, VisibilityChange,
};
use crate::ports::{sort_forgets, ChannelRecord, Claim, Clock, Edit, Insert, PortError, Store};

use super::lock;

#[derive(Debug, Clone)]
enum Stored {
    Message {
        message: Message,
        routed: bool,
    },
    /// An edit that came before its message.
    PendingEdit {
        text: String,
    },
    Tombstone,
}

#[derive(Debug, Clone)]
struct StoredMessage {
    stored: Stored,
    expires_at: DateTime<Utc>,
}

impl StoredMessage {
    fn live(&self, now: DateTime<Utc>) -> Option<&Message> {
        match &self.stored {
            Stored::Message { message, .. } if self.expires_at > now => Some(message),
            _ => None,
        }
    }
}

/// A value and when it expires.
#[derive(Debug, Clone)]
struct Expiring<T> {
    value: T,
    expires_at: DateTime<Utc>,
}

impl<T> Expiring<T> {
    fn new(value: T, expires_at: DateTime<Utc>) -> Expiring<T> {
        Expiring { value, expires_at }
    }

    /// The value while it lives: until `expires_at`, as on DynamoDB with
    /// its TTL filter.
    fn live(&self, now: DateTime<Utc>) -> Option<&T> {
        (self.expires_at > now).then_some(&self.value)
    }
}

#[derive(Debug, Default)]
struct StoreInner {
    messages: BTreeMap<(ChannelId, Ts), StoredMessage>,
    channels: BTreeMap<ChannelId, Expiring<ChannelRecord>>,
    users: HashMap<UserId, Expiring<(User, DateTime<Utc>)>>,
    memories: BTreeMap<(MemoryScope, MemoryKind), Expiring<Memory>>,
    forgets: BTreeMap<(ChannelId, Ts), Expiring<Forget>>,
    claims: HashMap<String, DateTime<Utc>>,
    counters: HashMap<String, Expiring<u64>>,
    facts: BTreeMap<(ChannelId, String), Expiring<Fact>>,
    reflected: BTreeMap<Conversation, Expiring<Ts>>,
    profiles: BTreeMap<UserId, Expiring<Profile>>,
}

/// Counts of the calls a store received, by reads and writes.
#[derive(Debug, Default)]
pub struct CallCounts {
    reads: AtomicU64,
    writes: AtomicU64,
}

impl CallCounts {
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
    pub fn reset(&self) {
        self.reads.store(0, Ordering::Relaxed);
        self.writes.store(0, Ordering::Relaxed);
    }
    fn read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }
    fn write(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }
}

/// The store in memory.
pub struct MemoryStore {
    clock: Arc<dyn Clock>,
    inner: Mutex<StoreInner>,
    counts: CallCounts,
    fail_writes: std::sync::atomic::AtomicBool,
}

impl MemoryStore {
    pub fn new(clock: Arc<dyn Clock>) -> MemoryStore {
        MemoryStore {
            clock,
            inner: Mutex::new(StoreInner::default()),
            counts: CallCounts::default(),
            fail_writes: Default::default(),
        }
    }

    /// How many reads and writes it served.
    pub fn counts(&self) -> &CallCounts {
        &self.counts
    }

    /// Makes every later write fail as unavailable (to test failure paths).
    pub fn fail_writes(&self, fail: bool) {
        self.fail_writes.store(fail, Ordering::Relaxed);
    }

    /// Every live message of every channel, oldest first (for tests and reports).
    pub fn all_messages(&self) -> Vec<Message> {
        let inner = lock(&self.inner);
        let now = self.clock.now();
        let mut all: Vec<Message> = inner
            .messages
            .values()
            .filter_map(|s| s.live(now).cloned())
            .collect();
        all.sort_by_key(|m| m.ts);
        all
    }

    /// Every live memory (for tests and reports).
    pub fn all_memories(&self) -> Vec<Memory> {
        let now = self.clock.now();
        lock(&self.inner)
            .memories
            .values()
            .filter_map(|m| m.live(now).cloned())
            .collect()
    }

    /// When a memory expires (for tests).
    pub fn memory_expiry(&self, scope: &MemoryScope, kind: MemoryKind) -> Option<DateTime<Utc>> {
        lock(&self.inner)
            .memories
            .get(&(scope.clone(), kind))
            .map(|m| m.expires_at)
    }

    fn write(&self) -> Result<MutexGuard<'_, StoreInner>, PortError> {
        self.counts.write();
        if self.fail_writes.load(Ordering::Relaxed) {
            return Err(PortError::unavailable("store", "injected write failure"));
        }
        Ok(lock(&self.inner))
    }

    fn read(&self) -> MutexGuard<'_, StoreInner> {
        self.counts.read();
        lock(&self.inner)
    }

    fn live<'a>(
        &self,
        inner: &'a StoreInner,
        channel: &ChannelId,
    ) -> impl DoubleEndedIterator<Item = &'a Message> + 'a {
        let now = self.clock.now();
        let range = (channel.clone(), Ts::from_parts(0, 0))
            ..=(channel.clone(), Ts::from_parts(u64::MAX, 999_999));
        inner
            .messages
            .range(range)
            .filter_map(move |(_, s)| s.live(now))
    }
}

/// The record of a channel first seen active at `at` (never checked).
fn first_seen(channel: &Channel, at: DateTime<Utc>) -> ChannelRecord {
    ChannelRecord {
        channel: channel.clone(),
        last_active: at,
        checked_at: None,
    }
}

fn newest_oldest_first<'a>(
    it: impl DoubleEndedIterator<Item = &'a Message>,
    limit: usize,
) -> Vec<Message> {
    let mut v: Vec<Message> = it.rev().take(limit).cloned().collect();
    v.reverse();
    v
}

#[async_trait]
impl Store for MemoryStore {
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
        let last_active = inner
            .channels
            .get(&channel.id)
            .and_then(|e| e.live(now))
            .map_or(DateTime::UNIX_EPOCH, |r| r.last_active);
        let record = ChannelRecord {
            channel: channel.clone(),
            last_active,
            checked_at: Some(checked_at),
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

    async fn put_memory(
        &self,
        memory: &Memory,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let key = (memory.scope.clone(), memory.kind);
        let memory = Expiring::new(memory.clone(), expires_at);
        self.write()?.memories.insert(key, memory);
        Ok(())
    }

    async fn get_memory(
        &self,
        scope: &MemoryScope,
        kind: MemoryKind,
    ) -> Result<Option<Memory>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .memories
            .get(&(scope.clone(), kind))
            .and_then(|e| e.live(now))
            .cloned())
    }

    async fn delete_memory(&self, scope: &MemoryScope, kind: MemoryKind) -> Result<(), PortError> {
        self.write()?.memories.remove(&(scope.clone(), kind));
        Ok(())
    }

    async fn thread_memories(
        &self,
        channel: &ChannelId,
        since: DateTime<Utc>,
    ) -> Result<Vec<Memory>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .memories
            .values()
            .filter_map(|e| e.live(now))
            .filter(|m| {
                matches!(&m.scope, MemoryScope::Thread { channel: c, .. } if c == channel)
                    && m.updated_at >= since
            })
            .cloned()
            .collect())
    }

    async fn record_forget(
        &self,
        forget: &Forget,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let key = (forget.channel.clone(), forget.ts);
        let forget = Expiring::new(forget.clone(), expires_at);
        self.write()?.forgets.insert(key, forget);
        Ok(())
    }

    async fn forgets(&self) -> Result<Vec<Forget>, PortError> {
        let now = self.clock.now();
        let mut all: Vec<Forget> = self
            .read()
            .forgets
            .values()
            .filter_map(|e| e.live(now).cloned())
            .collect();
        sort_forgets(&mut all);
        Ok(all)
    }

    async fn facts(&self, channel: &ChannelId) -> Result<Vec<Fact>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .facts
            .iter()
            .filter(|((c, _), _)| c == channel)
            .filter_map(|(_, f)| f.live(now).cloned())
            .collect())
    }

    async fn put_fact(&self, fact: &Fact, expires_at: DateTime<Utc>) -> Result<(), PortError> {
        self.write()?.facts.insert(
            (fact.channel.clone(), fact.id.clone()),
            Expiring::new(fact.clone(), expires_at),
        );
        Ok(())
    }

    async fn delete_fact(&self, channel: &ChannelId, id: &str) -> Result<(), PortError> {
        self.write()?
            .facts
            .remove(&(channel.clone(), id.to_owned()));
        Ok(())
    }

    async fn reflected(&self, conversation: &Conversation) -> Result<Option<Ts>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .reflected
            .get(conversation)
            .and_then(|m| m.live(now).copied()))
    }

    async fn set_reflected(
        &self,
        conversation: &Conversation,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.write()?
            .reflected
            .insert(conversation.clone(), Expiring::new(ts, expires_at));
        Ok(())
    }

    async fn profile(&self, user: &UserId) -> Result<Option<Profile>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .profiles
            .get(user)
            .and_then(|p| p.live(now).cloned()))
    }

    async fn add_to_profile(
        &self,
        user: &UserId,
        delta: &ProfileDelta,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let old = inner.profiles.get(user).and_then(|p| p.live(now).cloned());
        let first = delta.first.to_datetime();
        let mut profile = old.unwrap_or(Profile {
            user: user.clone(),
            messages: 0,
            interactions: 0,
            first_seen: first,
            last_seen: first,
            topics: Vec::new(),
        });
        profile.messages += delta.messages;
        profile.interactions += delta.interactions;
        profile.last_seen = delta.last.to_datetime();
        inner
            .profiles
            .insert(user.clone(), Expiring::new(profile, expires_at));
        Ok(())
    }

    async fn set_topics(&self, user: &UserId, topics: &[String]) -> Result<(), PortError> {
        if let Some(p) = self.write()?.profiles.get_mut(user) {
            p.value.topics = topics.to_vec();
        }
        Ok(())
    }

    async fn delete_profile(&self, user: &UserId) -> Result<(), PortError> {
        self.write()?.profiles.remove(user);
        Ok(())
    }

    async fn clear_forget(&self, forget: &Forget) -> Result<(), PortError> {
        let mut inner = self.write()?;
        let key = (forget.channel.clone(), forget.ts);
        // A newer deletion or edit of the same message stays pending.
        if inner
            .forgets
            .get(&key)
            .is_some_and(|e| e.value.at == forget.at)
        {
            inner.forgets.remove(&key);
        }
        Ok(())
    }

    async fn claim(&self, key: &str, expires_at: DateTime<Utc>) -> Result<bool, PortError> {
        Ok(self.claim_or_holder(key, expires_at).await? == Claim::Made)
    }

    async fn claim_or_holder(
        &self,
        key: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Claim, PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        match inner.claims.get(key) {
            Some(until) if *until > now => Ok(Claim::Held {
                until: Some(*until),
            }),
            _ => {
                inner.claims.insert(key.to_owned(), expires_at);
                Ok(Claim::Made)
            }
        }
    }

    async fn release(&self, key: &str) -> Result<(), PortError> {
        self.write()?.claims.remove(key);
        Ok(())
    }

    async fn held_until(&self, key: &str) -> Result<Option<DateTime<Utc>>, PortError> {
        let now = self.clock.now();
        Ok(self
            .read()
            .claims
            .get(key)
            .copied()
            .filter(|until| *until > now))
    }

    async fn count(
        &self,
        key: &str,
        limit: u64,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let now = self.clock.now();
        let mut inner = self.write()?;
        let counter = inner
            .counters
            .entry(key.to_owned())
            .or_insert(Expiring::new(0, expires_at));
        if counter.live(now).is_none() {
            // The first count sets its expiry; after it, it starts again.
            *counter = Expiring::new(0, expires_at);
        }
        if counter.value >= limit {
            return Ok(false);
        }
        counter.value += 1;
        Ok(true)
    }
}
