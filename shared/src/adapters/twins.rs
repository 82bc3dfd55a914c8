//! In-process twins of the AWS adapters: a store in memory and a job board
//! that is both the scheduler and the queue. Tests and the local mode use
//! them; they keep the same contracts as DynamoDB, EventBridge Scheduler and
//! SQS (conditional inserts, tombstones, upsert-replaces, delays).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::domain::facts::Fact;
use crate::domain::metrics::Datum;
use crate::domain::people::{Profile, ProfileDelta};
use crate::domain::{
    Channel, ChannelId, Conversation, EmojiName, Forget, Job, Memory, MemoryKind, MemoryScope,
    Message, ScheduleName, Ts, User, UserId, VisibilityChange,
};
use crate::ports::{
    sort_forgets, ChannelRecord, Claim, Clock, Edit, Insert, Metrics, PortError, Queue,
    ScheduledJob, Scheduler, Store, MAX_QUEUE_DELAY_SECONDS,
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not make the twin unusable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

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

#[derive(Debug, Default)]
struct Board {
    named: HashMap<ScheduleName, (DateTime<Utc>, u64, Job)>,
    queued: Vec<(DateTime<Utc>, u64, Job)>,
    seq: u64,
    scheduler_calls: u64,
    queue_calls: u64,
    fail_scheduler: bool,
}

/// The twin of CloudWatch's metrics: the sum of every metric put, by name
/// and dimension (bounded by the metrics there are, so a long `myao serve`
/// does not grow it).
#[derive(Debug, Default)]
pub struct RecordedMetrics {
    sums: Mutex<BTreeMap<MetricKey, f64>>,
}

/// A metric's name and its dimension, if any.
type MetricKey = (&'static str, Option<(&'static str, String)>);

impl RecordedMetrics {
    /// The sum of the values put for `name`: under `dimension` when given,
    /// else under every dimension and none.
    pub fn total(&self, name: &str, dimension: Option<(&str, &str)>) -> f64 {
        lock(&self.sums)
            .iter()
            .filter(|((n, _), _)| *n == name)
            .filter(|((_, d), _)| {
                dimension
                    .is_none_or(|(k, v)| d.as_ref().is_some_and(|(dk, dv)| *dk == k && dv == v))
            })
            .map(|(_, sum)| sum)
            .sum()
    }
}

impl Metrics for RecordedMetrics {
    fn put(&self, datum: Datum) {
        *lock(&self.sums)
            .entry((datum.name, datum.dimension))
            .or_insert(0.0) += datum.value;
    }
}

/// Pending jobs in process: the twin of both EventBridge Scheduler (named,
/// upsert replaces) and SQS (anonymous, with a delay). Whoever drives it —
/// a test, the replay's virtual clock, or [`JobBoard::run`] in real time —
/// takes the due jobs and runs them.
pub struct JobBoard {
    clock: Arc<dyn Clock>,
    board: Mutex<Board>,
    wake: tokio::sync::Notify,
}

impl JobBoard {
    pub fn new(clock: Arc<dyn Clock>) -> JobBoard {
        JobBoard {
            clock,
            board: Mutex::new(Board::default()),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// Makes every later scheduler call fail as unavailable (to test failure paths).
    pub fn fail_scheduler(&self, fail: bool) {
        lock(&self.board).fail_scheduler = fail;
    }

    /// Calls received by the scheduler side and by the queue side.
    pub fn call_counts(&self) -> (u64, u64) {
        let b = lock(&self.board);
        (b.scheduler_calls, b.queue_calls)
    }

    /// The jobs sent to the queue and still pending, in send order.
    pub fn queued(&self) -> Vec<(DateTime<Utc>, Job)> {
        let b = lock(&self.board);
        let mut v: Vec<_> = b
            .queued
            .iter()
            .map(|(at, seq, j)| (*at, *seq, j.clone()))
            .collect();
        v.sort_by_key(|(_, seq, _)| *seq);
        v.into_iter().map(|(at, _, j)| (at, j)).collect()
    }

    /// The named jobs still pending.
    pub fn scheduled(&self) -> Vec<ScheduledJob> {
        let b = lock(&self.board);
        let mut v: Vec<_> = b
            .named
            .iter()
            .map(|(name, (at, _, job))| ScheduledJob {
                name: name.clone(),
                at: *at,
                job: job.clone(),
            })
            .collect();
        v.sort_by(|a, b| (a.at, &a.name).cmp(&(b.at, &b.name)));
        v
    }

    /// When the next job falls due.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        let b = lock(&self.board);
        b.named
            .values()
            .map(|(at, _, _)| *at)
            .chain(b.queued.iter().map(|(at, _, _)| *at))
            .min()
    }

    /// Removes and returns the queued jobs (not the named ones) that
    /// `wanted` picks, however late they are due, in due order.
    pub fn take_queued(&self, wanted: impl Fn(&Job) -> bool) -> Vec<Job> {
        let mut b = lock(&self.board);
        let (mut taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut b.queued)
            .into_iter()
            .partition(|(_, _, job)| wanted(job));
        b.queued = kept;
        taken.sort_by_key(|(at, seq, _)| (*at, *seq));
        taken.into_iter().map(|(_, _, j)| j).collect()
    }

    /// Removes and returns the jobs due at or before `now`, in due order
    /// (ties in the order they were made).
    pub fn take_due(&self, now: DateTime<Utc>) -> Vec<Job> {
        let mut b = lock(&self.board);
        let mut due: Vec<(DateTime<Utc>, u64, Job)> = Vec::new();
        let names: Vec<ScheduleName> = b
            .named
            .iter()
            .filter(|(_, (at, _, _))| *at <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for n in names {
            if let Some(entry) = b.named.remove(&n) {
                due.push(entry);
            }
        }
        let (now_due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut b.queued)
            .into_iter()
            .partition(|(at, _, _)| *at <= now);
        b.queued = later;
        due.extend(now_due);
        due.sort_by_key(|(at, seq, _)| (*at, *seq));
        due.into_iter().map(|(_, _, j)| j).collect()
    }

    /// Runs due jobs in real time until `shutdown` resolves: sleeps until
    /// the next due job, or until a new job is added.
    pub async fn run<F, Fut>(
        self: Arc<Self>,
        dispatch: F,
        shutdown: impl std::future::Future<Output = ()>,
    ) where
        F: Fn(Job) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        tokio::pin!(shutdown);
        loop {
            for job in self.take_due(self.clock.now()) {
                dispatch(job).await;
            }
            let wait = match self.next_due() {
                Some(at) => (at - self.clock.now()).to_std().unwrap_or_default(),
                None => std::time::Duration::from_secs(3600),
            };
            tokio::select! {
                _ = &mut shutdown => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[async_trait]
impl Scheduler for JobBoard {
    async fn upsert(
        &self,
        name: &ScheduleName,
        at: DateTime<Utc>,
        job: &Job,
    ) -> Result<(), PortError> {
        {
            let mut b = lock(&self.board);
            b.scheduler_calls += 1;
            if b.fail_scheduler {
                return Err(PortError::unavailable("scheduler", "injected failure"));
            }
            b.seq += 1;
            let seq = b.seq;
            b.named.insert(name.clone(), (at, seq, job.clone()));
        }
        self.wake.notify_one();
        Ok(())
    }

    async fn cancel(&self, name: &ScheduleName) -> Result<(), PortError> {
        let mut b = lock(&self.board);
        b.scheduler_calls += 1;
        b.named.remove(name);
        Ok(())
    }

    async fn get(&self, name: &ScheduleName) -> Result<Option<ScheduledJob>, PortError> {
        let b = lock(&self.board);
        Ok(b.named.get(name).map(|(at, _, job)| ScheduledJob {
            name: name.clone(),
            at: *at,
            job: job.clone(),
        }))
    }
}

impl JobBoard {
    /// Puts `job` on the board's queue, due in `delay_seconds`.
    fn put(&self, job: &Job, delay_seconds: u32) {
        {
            let mut b = lock(&self.board);
            b.queue_calls += 1;
            b.seq += 1;
            let seq = b.seq;
            let at = self.clock.now() + chrono::Duration::seconds(i64::from(delay_seconds));
            b.queued.push((at, seq, job.clone()));
        }
        self.wake.notify_one();
    }
}

#[async_trait]
impl Queue for JobBoard {
    async fn send(&self, job: &Job, delay_seconds: u32) -> Result<(), PortError> {
        if delay_seconds > MAX_QUEUE_DELAY_SECONDS {
            return Err(PortError::refused(
                "queue",
                format!("delay {delay_seconds} s is over {MAX_QUEUE_DELAY_SECONDS} s"),
            ));
        }
        self.put(job, delay_seconds);
        Ok(())
    }

    /// The board has no deliveries to make visible again: the job is put
    /// back on it, due in `delay_seconds` (any delay: nothing caps it here).
    async fn redeliver(
        &self,
        job: &Job,
        _receipt: Option<&str>,
        delay_seconds: u32,
    ) -> Result<(), PortError> {
        self.put(job, delay_seconds);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::system::ManualClock;
    use crate::domain::JobKind;
    use chrono::Duration;

    fn t(secs: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(secs, 0).unwrap()
    }

    fn msg(ts: &str, thread: Option<&str>) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse("U1").unwrap(),
            format!("m{ts}"),
            Ts::parse(ts).unwrap(),
            thread.map(|x| Ts::parse(x).unwrap()),
            false,
        )
    }

    #[tokio::test]
    async fn store_inserts_once_and_keeps_tombstones() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let s = MemoryStore::new(clock.clone());
        let m = msg("10.0", None);
        assert_eq!(
            s.insert_message(&m, false, t(9_999)).await.unwrap(),
            Insert::New
        );
        assert_eq!(
            s.insert_message(&m, true, t(9_999)).await.unwrap(),
            Insert::Duplicate { routed: false }
        );
        s.mark_routed(&m.channel, m.ts).await.unwrap();
        assert_eq!(
            s.insert_message(&m, true, t(9_999)).await.unwrap(),
            Insert::Duplicate { routed: true }
        );
        s.delete_message(&m.channel, m.ts, t(9_999)).await.unwrap();
        assert_eq!(
            s.insert_message(&m, false, t(9_999)).await.unwrap(),
            Insert::Deleted
        );
        assert_eq!(s.get_message(&m.channel, m.ts).await.unwrap(), None);
        assert_eq!(
            s.edit_message(&m.channel, m.ts, "x", t(9_999))
                .await
                .unwrap(),
            Edit::Deleted
        );
    }

    #[tokio::test]
    async fn an_edit_that_comes_first_wins_over_its_late_message() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let s = MemoryStore::new(clock.clone());
        let m = Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse("U1").unwrap(),
            "the old text",
            Ts::parse("5.0").unwrap(),
            None,
            false,
        );
        assert_eq!(
            s.edit_message(&m.channel, m.ts, "the new text", t(9_999))
                .await
                .unwrap(),
            Edit::Pending
        );
        assert_eq!(s.get_message(&m.channel, m.ts).await.unwrap(), None);
        assert_eq!(
            s.insert_message(&m, false, t(9_999)).await.unwrap(),
            Insert::New
        );
        let stored = s.get_message(&m.channel, m.ts).await.unwrap().unwrap();
        assert_eq!(stored.text, "the new text");
        assert_eq!(
            s.edit_message(&m.channel, m.ts, "third", t(9_999))
                .await
                .unwrap(),
            Edit::Applied
        );
    }

    #[tokio::test]
    async fn store_reads_by_conversation_and_recency() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let s = MemoryStore::new(clock.clone());
        for (ts, th) in [
            ("1.0", None),
            ("2.0", Some("1.0")),
            ("3.0", None),
            ("4.0", Some("1.0")),
            ("5.0", None),
        ] {
            s.insert_message(&msg(ts, th), true, t(9_999))
                .await
                .unwrap();
        }
        let c = ChannelId::parse("C1").unwrap();
        let texts = |v: Vec<Message>| v.into_iter().map(|m| m.text).collect::<Vec<_>>();
        assert_eq!(
            texts(s.recent_messages(&c, 2).await.unwrap()),
            ["m4.0", "m5.0"]
        );
        let thread = Conversation::thread(c.clone(), Ts::parse("1.0").unwrap());
        assert_eq!(
            texts(s.conversation_messages(&thread, 10).await.unwrap()),
            ["m2.0", "m4.0"]
        );
        let top = Conversation::top_level(c.clone());
        assert_eq!(
            texts(s.conversation_messages(&top, 2).await.unwrap()),
            ["m3.0", "m5.0"]
        );
        assert_eq!(
            texts(
                s.messages_after(&c, Some(Ts::parse("3.0").unwrap()), 10)
                    .await
                    .unwrap()
            ),
            ["m4.0", "m5.0"]
        );
        // expired messages are not read
        clock.set(t(10_000));
        assert!(s.recent_messages(&c, 10).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn claims_are_granted_once_until_released_or_expired() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let s = MemoryStore::new(clock.clone());
        assert!(s.claim("k", t(2_000)).await.unwrap());
        assert!(!s.claim("k", t(2_000)).await.unwrap());
        assert_eq!(s.held_until("k").await.unwrap(), Some(t(2_000)));
        s.release("k").await.unwrap();
        assert_eq!(s.held_until("k").await.unwrap(), None);
        assert!(s.claim("k", t(2_000)).await.unwrap());
        clock.set(t(2_001));
        assert_eq!(s.held_until("k").await.unwrap(), None);
        assert!(s.claim("k", t(3_000)).await.unwrap());
    }

    #[tokio::test]
    async fn counters_stop_at_their_limit_until_they_expire() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let s = MemoryStore::new(clock.clone());
        assert!(!s.count("none", 0, t(2_000)).await.unwrap());
        for _ in 0..3 {
            assert!(s.count("k", 3, t(2_000)).await.unwrap());
        }
        assert!(!s.count("k", 3, t(2_000)).await.unwrap());
        assert!(s.count("k", 4, t(2_000)).await.unwrap(), "a higher limit");
        assert!(s.count("other", 3, t(2_000)).await.unwrap());
        // The first count set the expiry: a later one does not move it.
        clock.set(t(1_999));
        assert!(!s.count("k", 4, t(9_000)).await.unwrap());
        clock.set(t(2_000));
        assert!(
            s.count("k", 1, t(3_000)).await.unwrap(),
            "expired: from zero"
        );
        assert!(!s.count("k", 1, t(3_000)).await.unwrap());
    }

    #[tokio::test]
    async fn board_upsert_replaces_the_pending_job_of_a_name() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let b = JobBoard::new(clock.clone());
        let c = ChannelId::parse("C1").unwrap();
        let conv = Conversation::top_level(c.clone());
        let name = ScheduleName::for_conversation(JobKind::Judgment, &conv);
        let job = |n: &str| Job::Judgment {
            channel: c.clone(),
            thread_ts: None,
            newest_ts: Ts::parse(n).unwrap(),
        };
        b.upsert(&name, t(1_300), &job("1.0")).await.unwrap();
        b.upsert(&name, t(1_400), &job("2.0")).await.unwrap();
        assert_eq!(b.scheduled().len(), 1);
        assert!(
            b.take_due(t(1_300)).is_empty(),
            "the first time was replaced"
        );
        assert_eq!(b.take_due(t(1_400)), vec![job("2.0")]);
        assert!(b.scheduled().is_empty());
    }

    #[tokio::test]
    async fn board_queue_honours_delays_and_order() {
        let clock = Arc::new(ManualClock::new(t(1_000)));
        let b = JobBoard::new(clock.clone());
        let a = Job::MemorySweep;
        let c = Job::ThreadMemory {
            channel: ChannelId::parse("C1").unwrap(),
            thread_ts: Ts::parse("1.0").unwrap(),
        };
        b.send(&a, 30).await.unwrap();
        b.send(&c, 0).await.unwrap();
        assert!(b.send(&a, 901).await.is_err());
        assert_eq!(b.next_due(), Some(t(1_000)));
        assert_eq!(b.take_due(t(1_000)), vec![c]);
        clock.advance(Duration::seconds(30));
        assert_eq!(b.take_due(clock.now()), vec![a]);
    }

    #[tokio::test]
    async fn board_runs_jobs_in_real_time() {
        use crate::adapters::system::SystemClock;
        let b = Arc::new(JobBoard::new(Arc::new(SystemClock)));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let runner = tokio::spawn(b.clone().run(
            move |job| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send(job);
                }
            },
            std::future::pending(),
        ));
        b.send(&Job::MemorySweep, 0).await.unwrap();
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
            .await
            .unwrap();
        assert_eq!(got, Some(Job::MemorySweep));
        runner.abort();
    }
}
