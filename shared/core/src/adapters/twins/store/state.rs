//! The store twin's state: what it holds, by part (the stack's and each
//! team's), and how its items expire. The ports' implementations, in
//! [`super`] and its `records`, work on it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use crate::ports::{ChannelRecord, Clock, PortError};
use myao_domain::facts::Fact;
use myao_domain::grounds::PostGrounds;
use myao_domain::install::{Home, Installation};
use myao_domain::labels::Label;
use myao_domain::people::Profile;
use myao_domain::sketch::Sketch;
use myao_domain::TeamId;
use myao_domain::{
    Channel, ChannelId, Conversation, Forget, Memory, MemoryKind, MemoryScope, Message, Ts, User,
    UserId,
};

use crate::adapters::twins::lock::lock;

#[derive(Debug, Clone)]
pub(super) enum Stored {
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
pub(super) struct StoredMessage {
    pub(super) stored: Stored,
    pub(super) expires_at: DateTime<Utc>,
}

impl StoredMessage {
    pub(super) fn live(&self, now: DateTime<Utc>) -> Option<&Message> {
        match &self.stored {
            Stored::Message { message, .. } if self.expires_at > now => Some(message),
            _ => None,
        }
    }
}

/// A value and when it expires.
#[derive(Debug, Clone)]
pub(super) struct Expiring<T> {
    pub(super) value: T,
    pub(super) expires_at: DateTime<Utc>,
}

impl<T> Expiring<T> {
    pub(super) fn new(value: T, expires_at: DateTime<Utc>) -> Expiring<T> {
        Expiring { value, expires_at }
    }

    /// The value while it lives: until `expires_at`, as on DynamoDB with
    /// its TTL filter.
    pub(super) fn live(&self, now: DateTime<Utc>) -> Option<&T> {
        (self.expires_at > now).then_some(&self.value)
    }
}

#[derive(Debug, Default)]
pub(super) struct StoreInner {
    pub(super) messages: BTreeMap<(ChannelId, Ts), StoredMessage>,
    pub(super) channels: BTreeMap<ChannelId, Expiring<ChannelRecord>>,
    pub(super) users: HashMap<UserId, Expiring<(User, DateTime<Utc>)>>,
    pub(super) memories: BTreeMap<(MemoryScope, MemoryKind), Expiring<Memory>>,
    pub(super) forgets: BTreeMap<(ChannelId, Ts), Expiring<Forget>>,
    pub(super) claims: HashMap<String, DateTime<Utc>>,
    pub(super) drafts: HashMap<String, Expiring<String>>,
    pub(super) counters: HashMap<String, Expiring<u64>>,
    pub(super) facts: BTreeMap<(ChannelId, String), Expiring<Fact>>,
    pub(super) sketches: BTreeMap<(ChannelId, UserId), Expiring<Sketch>>,
    /// Labels, by channel and [`Label::key`].
    pub(super) labels: BTreeMap<(ChannelId, String), Expiring<Label>>,
    /// The grounds of the bot's posts, by channel and post.
    pub(super) grounds: BTreeMap<(ChannelId, Ts), Expiring<PostGrounds>>,
    /// The installations, by team.
    pub(super) installations: BTreeMap<TeamId, Installation>,
    /// The install links' states, with their expiry.
    pub(super) oauth_states: OAuthStates,
    /// The stack's own workspace, once learned.
    pub(super) home: Option<Home>,
    pub(super) reflected: BTreeMap<Conversation, Expiring<Ts>>,
    pub(super) profiles: BTreeMap<UserId, Expiring<Profile>>,
}

impl StoreInner {
    /// How many items it holds, as a table would count them (the
    /// installations and install states are the stack's: not counted).
    pub(super) fn len(&self) -> u64 {
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
    pub(super) reads: AtomicU64,
    pub(super) writes: AtomicU64,
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
    pub(super) fn read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }
    pub(super) fn write(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }
}

/// One part of the store: the stack's own, or a team's.
pub(super) type Part = Arc<Mutex<StoreInner>>;

/// The store in memory. Like the table, it has the stack's own part and one
/// per team ([`MemoryStore::for_team`]); the stores of one stack share the
/// parts, the call counts and the injected failures.
pub struct MemoryStore {
    pub(super) clock: Arc<dyn Clock>,
    /// What this store reads and writes.
    pub(super) inner: Part,
    /// The stack's own part, where the installations and install states
    /// are, whichever team's store reaches them.
    pub(super) stack: Part,
    pub(super) teams: Arc<Mutex<HashMap<TeamId, Part>>>,
    pub(super) counts: Arc<CallCounts>,
    pub(super) fail_writes: Arc<std::sync::atomic::AtomicBool>,
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
    pub(super) fn writing(&self) -> Result<(), PortError> {
        self.counts.write();
        if self.fail_writes.load(Ordering::Relaxed) {
            return Err(PortError::unavailable("store", "injected write failure"));
        }
        Ok(())
    }

    pub(super) fn write(&self) -> Result<MutexGuard<'_, StoreInner>, PortError> {
        self.writing()?;
        Ok(lock(&self.inner))
    }

    pub(super) fn read(&self) -> MutexGuard<'_, StoreInner> {
        self.counts.read();
        lock(&self.inner)
    }

    /// A write to the stack's own part.
    pub(super) fn write_stack(&self) -> Result<MutexGuard<'_, StoreInner>, PortError> {
        self.writing()?;
        Ok(lock(&self.stack))
    }

    /// A read of the stack's own part.
    pub(super) fn read_stack(&self) -> MutexGuard<'_, StoreInner> {
        self.counts.read();
        lock(&self.stack)
    }

    pub(super) fn live<'a>(
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
pub(super) fn first_seen(channel: &Channel, at: DateTime<Utc>) -> ChannelRecord {
    ChannelRecord {
        channel: channel.clone(),
        last_active: at,
        checked_at: None,
        answer_times: None,
        digest_backoff: None,
    }
}

pub(super) fn newest_oldest_first<'a>(
    it: impl DoubleEndedIterator<Item = &'a Message>,
    limit: usize,
) -> Vec<Message> {
    let mut v: Vec<Message> = it.rev().take(limit).cloned().collect();
    v.reverse();
    v
}

/// The install links' states, with their expiry: deleted once expired, as
/// DynamoDB's TTL does, and held to [`OAUTH_STATES_HELD`].
#[derive(Debug, Default)]
pub(super) struct OAuthStates {
    by_state: HashMap<String, DateTime<Utc>>,
    /// The same, soonest to expire first.
    by_expiry: std::collections::BTreeSet<(DateTime<Utc>, String)>,
}

impl OAuthStates {
    /// Keeps `state` until `expires_at`, after deleting those expired at
    /// `now` and, at the bound, the one given longest ago.
    pub(super) fn put(&mut self, state: &str, expires_at: DateTime<Utc>, now: DateTime<Utc>) {
        while let Some((until, _)) = self.by_expiry.first() {
            if *until > now && self.by_state.len() < OAUTH_STATES_HELD {
                break;
            }
            if let Some((_, gone)) = self.by_expiry.pop_first() {
                self.by_state.remove(&gone);
            }
        }
        self.take(state);
        self.by_state.insert(state.to_owned(), expires_at);
        self.by_expiry.insert((expires_at, state.to_owned()));
    }

    /// Removes `state`: its expiry, if it was kept.
    pub(super) fn take(&mut self, state: &str) -> Option<DateTime<Utc>> {
        let expires_at = self.by_state.remove(state)?;
        self.by_expiry.remove(&(expires_at, state.to_owned()));
        Some(expires_at)
    }

    pub(super) fn len(&self) -> usize {
        self.by_state.len()
    }
}

/// The most install states the twin keeps at once (`myao serve`): each
/// anonymous `GET /slack/install` gives one, for ten minutes; past this
/// many waiting, the oldest is dropped (its link then says it expired).
pub const OAUTH_STATES_HELD: usize = 10_000;
