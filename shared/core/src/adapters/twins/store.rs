//! The store's twin: DynamoDB's table in memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::ports::{
    ChannelRecord, ChannelRecords, Clock, Edit, Insert, Messages, PortError, UserCache,
};
use myao_domain::answer_times::AnswerTimes;
use myao_domain::digest::Backoff;
use myao_domain::facts::Fact;
use myao_domain::grounds::PostGrounds;
use myao_domain::install::{Home, Installation};
use myao_domain::labels::Label;
use myao_domain::people::Profile;
use myao_domain::sketch::Sketch;
use myao_domain::TeamId;
use myao_domain::{
    Channel, ChannelId, Conversation, EmojiName, Forget, Memory, MemoryKind, MemoryScope, Message,
    Ts, User, UserId, VisibilityChange,
};

use super::lock::lock;

mod records;
pub use records::OAUTH_STATES_HELD;

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
    drafts: HashMap<String, Expiring<String>>,
    counters: HashMap<String, Expiring<u64>>,
    facts: BTreeMap<(ChannelId, String), Expiring<Fact>>,
    sketches: BTreeMap<(ChannelId, UserId), Expiring<Sketch>>,
    /// Labels, by channel and [`Label::key`].
    labels: BTreeMap<(ChannelId, String), Expiring<Label>>,
    /// The grounds of the bot's posts, by channel and post.
    grounds: BTreeMap<(ChannelId, Ts), Expiring<PostGrounds>>,
    /// The installations, by team.
    installations: BTreeMap<TeamId, Installation>,
    /// The install links' states, with their expiry.
    oauth_states: records::OAuthStates,
    /// The stack's own workspace, once learned.
    home: Option<Home>,
    reflected: BTreeMap<Conversation, Expiring<Ts>>,
    profiles: BTreeMap<UserId, Expiring<Profile>>,
}

impl StoreInner {
    /// How many items it holds, as a table would count them (the
    /// installations and install states are the stack's: not counted).
    fn len(&self) -> u64 {
        let items = self.messages.len()
            + self.channels.len()
            + self.users.len()
            + self.memories.len()
            + self.forgets.len()
            + self.claims.len()
            + self.drafts.len()
            + self.counters.len()
            + self.facts.len()
            + self.sketches.len()
            + self.labels.len()
            + self.grounds.len()
            + self.reflected.len()
            + self.profiles.len();
        items as u64
    }
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

/// One part of the store: the stack's own, or a team's.
type Part = Arc<Mutex<StoreInner>>;

/// The store in memory. Like the table, it has the stack's own part and one
/// per team ([`MemoryStore::for_team`]); the stores of one stack share the
/// parts, the call counts and the injected failures.
pub struct MemoryStore {
    clock: Arc<dyn Clock>,
    /// What this store reads and writes.
    inner: Part,
    /// The stack's own part, where the installations and install states
    /// are, whichever team's store reaches them.
    stack: Part,
    teams: Arc<Mutex<HashMap<TeamId, Part>>>,
    counts: Arc<CallCounts>,
    fail_writes: Arc<std::sync::atomic::AtomicBool>,
}

impl MemoryStore {
    pub fn new(clock: Arc<dyn Clock>) -> MemoryStore {
        let stack = Part::default();
        MemoryStore {
            clock,
            inner: stack.clone(),
            stack,
            teams: Arc::default(),
            counts: Arc::default(),
            fail_writes: Arc::default(),
        }
    }

    /// The same store as `team` sees it: that team's part, apart from every
    /// other team's and from the stack's own.
    pub fn for_team(&self, team: &TeamId) -> MemoryStore {
        let part = lock(&self.teams).entry(team.clone()).or_default().clone();
        MemoryStore {
            clock: self.clock.clone(),
            inner: part,
            stack: self.stack.clone(),
            teams: self.teams.clone(),
            counts: self.counts.clone(),
            fail_writes: self.fail_writes.clone(),
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

    /// How many install states it keeps now, expired or not (for tests).
    pub fn oauth_states_kept(&self) -> usize {
        lock(&self.stack).oauth_states.len()
    }

    /// When a memory expires (for tests).
    pub fn memory_expiry(&self, scope: &MemoryScope, kind: MemoryKind) -> Option<DateTime<Utc>> {
        lock(&self.inner)
            .memories
            .get(&(scope.clone(), kind))
            .map(|m| m.expires_at)
    }

    /// Counts a write, and fails it when writes are to fail.
    fn writing(&self) -> Result<(), PortError> {
        self.counts.write();
        if self.fail_writes.load(Ordering::Relaxed) {
            return Err(PortError::unavailable("store", "injected write failure"));
        }
        Ok(())
    }

    fn write(&self) -> Result<MutexGuard<'_, StoreInner>, PortError> {
        self.writing()?;
        Ok(lock(&self.inner))
    }

    fn read(&self) -> MutexGuard<'_, StoreInner> {
        self.counts.read();
        lock(&self.inner)
    }

    /// A write to the stack's own part.
    fn write_stack(&self) -> Result<MutexGuard<'_, StoreInner>, PortError> {
        self.writing()?;
        Ok(lock(&self.stack))
    }

    /// A read of the stack's own part.
    fn read_stack(&self) -> MutexGuard<'_, StoreInner> {
        self.counts.read();
        lock(&self.stack)
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
        answer_times: None,
        digest_backoff: None,
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
