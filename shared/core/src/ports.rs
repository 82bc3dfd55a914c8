//! Ports: what the core needs from the outside world. Adapters implement
//! them for AWS and for HTTP services; in-process twins implement them for
//! tests and the local mode. No SDK type crosses a port.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::schedule::ScheduleName;
use myao_domain::answer_times::AnswerTimes;
use myao_domain::digest::Backoff;
use myao_domain::facts::Fact;
use myao_domain::grounds::PostGrounds;
use myao_domain::install::{AccessError, Home, Installation};
use myao_domain::labels::Label;
use myao_domain::metrics::Datum;
use myao_domain::people::{Profile, ProfileDelta};
use myao_domain::sketch::Sketch;
use myao_domain::{
    Channel, ChannelId, Conversation, EmojiName, Forget, Job, Memory, MemoryKind, MemoryScope,
    Message, Settings, TeamId, Ts, User, UserId, VisibilityChange,
};

mod error;
mod models;
pub use error::{Cause, PortError};
pub use models::{Embedded, Embedder, Llm, LlmReply, LlmRequest, LlmRole, Vectors};

/// The result of storing a new message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// It was not stored before.
    New,
    /// It was stored before; `routed` says whether its job was made.
    Duplicate { routed: bool },
    /// It was deleted before this delivery arrived: it stays deleted.
    Deleted,
}

/// What claiming a key came to, when the holder matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This call claimed it.
    Made,
    /// A live claim holds it, until `until` (`None`: it ended meanwhile).
    Held { until: Option<DateTime<Utc>> },
}

/// The result of editing a stored message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The stored text was replaced.
    Applied,
    /// The message is not stored yet: the new text waits for it, and the
    /// late original is stored with it.
    Pending,
    /// The message was deleted: nothing to edit.
    Deleted,
}

/// A channel with the time of its last known activity.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRecord {
    pub channel: Channel,
    /// The newest activity recorded (the epoch when none was).
    pub last_active: DateTime<Utc>,
    /// When Slack last told its name and visibility; `None` when never, or
    /// when an event said they changed since.
    pub checked_at: Option<DateTime<Utc>>,
    /// How long its people take to answer each other's questions, as
    /// learned so far; `None` before any was (or from another version's
    /// record, which starts learning again).
    pub answer_times: Option<AnswerTimes>,
    /// Its digest held back after answers that could not be used, if it is.
    pub digest_backoff: Option<Backoff>,
}

/// Messages: stored with a conditional write, edited, deleted (a tombstone stays), and read by conversation or channel. Reads never return deleted or expired messages.
#[async_trait]
pub trait Messages: Send + Sync {
    /// Stores a new message unless one with the same channel and `ts` exists
    /// (a conditional write). `routed` records whether its job was made (or
    /// none is needed).
    async fn insert_message(
        &self,
        message: &Message,
        routed: bool,
        expires_at: DateTime<Utc>,
    ) -> Result<Insert, PortError>;
    /// Records that a stored message's job was made.
    async fn mark_routed(&self, channel: &ChannelId, ts: Ts) -> Result<(), PortError>;
    /// Replaces the text of a stored message. The text of a message not
    /// stored yet is kept (until `expires_at`) so that its late delivery is
    /// stored with it.
    async fn edit_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        text: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Edit, PortError>;
    /// Deletes a message, leaving a tombstone (until `expires_at`) so that a
    /// late redelivery of it is not stored again.
    async fn delete_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    async fn get_message(&self, channel: &ChannelId, ts: Ts) -> Result<Option<Message>, PortError>;
    /// Records the bot's reaction on a stored message (nothing for one not
    /// stored, deleted or expired), so that later judgments see it.
    async fn set_bot_reaction(
        &self,
        channel: &ChannelId,
        ts: Ts,
        emoji: &EmojiName,
    ) -> Result<(), PortError>;
    /// The newest `limit` messages of a channel (all conversations), oldest
    /// first: those after none.
    async fn recent_messages(
        &self,
        channel: &ChannelId,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        self.messages_after(channel, None, limit).await
    }
    /// The newest `limit` messages of one conversation, oldest first: a
    /// thread's replies (without its root), or the channel's top-level messages.
    async fn conversation_messages(
        &self,
        conversation: &Conversation,
        limit: usize,
    ) -> Result<Vec<Message>, PortError>;
    /// The messages of a channel newer than `after` (all of them for `None`),
    /// oldest first, at most `limit` (the newest ones when there are more).
    async fn messages_after(
        &self,
        channel: &ChannelId,
        after: Option<Ts>,
        limit: usize,
    ) -> Result<Vec<Message>, PortError>;
}

/// The channels the bot has seen: when each was last active, and its name and visibility as Slack last said.
#[async_trait]
pub trait ChannelRecords: Send + Sync {
    /// Records that a channel was active at `at` (the latest wins). Its name
    /// is kept; a channel not known yet is recorded with `channel`'s name and
    /// visibility. The record lives until `expires_at`.
    async fn touch_channel(
        &self,
        channel: &Channel,
        at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// Records what Slack said of a channel (name and visibility) at `checked_at`.
    async fn put_channel_info(
        &self,
        channel: &Channel,
        checked_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// Applies a visibility change Slack announced, and marks the record to
    /// be checked again. Unknown channels are left unknown (private in effect).
    async fn change_visibility(
        &self,
        id: &ChannelId,
        change: VisibilityChange,
    ) -> Result<(), PortError>;
    /// Stores what a channel's people did with their questions on its live
    /// record (its other fields kept); a channel not recorded stays so.
    async fn put_answer_times(&self, id: &ChannelId, times: &AnswerTimes) -> Result<(), PortError>;
    /// Records (or with `None` ends) a channel's digest backoff on its live
    /// record; a channel not recorded stays so.
    async fn put_digest_backoff(
        &self,
        id: &ChannelId,
        backoff: Option<&Backoff>,
    ) -> Result<(), PortError>;
    /// A live channel record.
    async fn get_channel(&self, id: &ChannelId) -> Result<Option<ChannelRecord>, PortError>;
    /// Every live channel record.
    async fn channels(&self) -> Result<Vec<ChannelRecord>, PortError>;
}

/// The workspace's members, cached from Slack.
#[async_trait]
pub trait UserCache: Send + Sync {
    /// A cached user, with the time it was fetched.
    async fn get_user(&self, id: &UserId) -> Result<Option<(User, DateTime<Utc>)>, PortError>;
    async fn put_user(
        &self,
        user: &User,
        fetched_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
}

/// The memories of threads, channels and the workspace, and the forgets pending (what was deleted or edited, to leave them).
#[async_trait]
pub trait MemoryRecords: Send + Sync {
    /// Stores a memory, replacing the one of its scope and kind; it lives
    /// until `expires_at`.
    async fn put_memory(&self, memory: &Memory, expires_at: DateTime<Utc>)
        -> Result<(), PortError>;
    /// A live memory.
    async fn get_memory(
        &self,
        scope: &MemoryScope,
        kind: MemoryKind,
    ) -> Result<Option<Memory>, PortError>;
    /// Removes a memory; no error when there is none.
    async fn delete_memory(&self, scope: &MemoryScope, kind: MemoryKind) -> Result<(), PortError>;
    /// The live thread memories of a channel updated at or after `since`.
    /// Reads only those (older ones are not read and filtered).
    async fn thread_memories(
        &self,
        channel: &ChannelId,
        since: DateTime<Utc>,
    ) -> Result<Vec<Memory>, PortError>;
    /// Records that a message was deleted or edited, for the next memory run.
    async fn record_forget(
        &self,
        forget: &Forget,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// The deletions and edits not handled yet, oldest first.
    async fn forgets(&self) -> Result<Vec<Forget>, PortError>;
    /// Marks one handled.
    async fn clear_forget(&self, forget: &Forget) -> Result<(), PortError>;
}

/// The facts reflection wrote of each channel, the sketches of its people,
/// and how far each conversation was reflected on.
#[async_trait]
pub trait FactRecords: Send + Sync {
    /// The facts of `channel` (outdated ones too), in no order.
    async fn facts(&self, channel: &ChannelId) -> Result<Vec<Fact>, PortError>;
    /// Stores a fact (replacing one of the same channel and id) until
    /// `expires_at`.
    async fn put_fact(&self, fact: &Fact, expires_at: DateTime<Utc>) -> Result<(), PortError>;
    /// Stores a fact again (its meaning added) only while it is still
    /// stored and live: a fact forgotten in between stays forgotten.
    /// Whether it was stored.
    async fn replace_fact(&self, fact: &Fact, expires_at: DateTime<Utc>)
        -> Result<bool, PortError>;
    async fn delete_fact(&self, channel: &ChannelId, id: &str) -> Result<(), PortError>;
    /// The people of `channel` as its digests sketched them, in no order.
    async fn sketches(&self, channel: &ChannelId) -> Result<Vec<Sketch>, PortError>;
    /// Stores a sketch (replacing the person's in its channel) until
    /// `expires_at`.
    async fn put_sketch(&self, sketch: &Sketch, expires_at: DateTime<Utc>)
        -> Result<(), PortError>;
    async fn delete_sketch(&self, channel: &ChannelId, user: &UserId) -> Result<(), PortError>;
    /// The newest message of `conversation` a reflection has read.
    async fn reflected(&self, conversation: &Conversation) -> Result<Option<Ts>, PortError>;
    /// Records that reflection read `conversation` up to `ts` (kept until
    /// `expires_at`).
    async fn set_reflected(
        &self,
        conversation: &Conversation,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
}

/// What the bot knows of each person: interactions and topics.
#[async_trait]
pub trait ProfileRecords: Send + Sync {
    /// What the bot knows of `user`, if anything.
    async fn profile(&self, user: &UserId) -> Result<Option<Profile>, PortError>;
    /// Adds `delta` to `user`'s profile (made when there is none), at once,
    /// whoever else adds at the same time; it lives until `expires_at`.
    async fn add_to_profile(
        &self,
        user: &UserId,
        delta: &ProfileDelta,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// Replaces `user`'s recent topics (nothing without a profile).
    async fn set_topics(&self, user: &UserId, topics: &[String]) -> Result<(), PortError>;
    async fn delete_profile(&self, user: &UserId) -> Result<(), PortError>;
}

/// Claims that make a job run once, and counters for the spend limits.
#[async_trait]
pub trait Claims: Send + Sync {
    /// Claims a job execution once (a conditional write): true for the first
    /// caller, false for every later one until `expires_at`.
    async fn claim(&self, key: &str, expires_at: DateTime<Utc>) -> Result<bool, PortError>;
    /// Claims `key` as [`claim`](Claims::claim) does and, when a live claim
    /// holds it already, says until when: one conditional write, where a
    /// claim and then [`held_until`](Claims::held_until) are two calls.
    async fn claim_or_holder(
        &self,
        key: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Claim, PortError>;
    /// Gives a claim back, so that a redelivery may try again.
    async fn release(&self, key: &str) -> Result<(), PortError>;
    /// Until when a live claim holds `key` (`None`: no live claim).
    async fn held_until(&self, key: &str) -> Result<Option<DateTime<Utc>>, PortError>;
    /// Counts one more against `limit`, atomically: true when the counter
    /// was below `limit` and now holds one more, false (nothing counted)
    /// when it had reached it. A counter starts at zero; its first count
    /// sets its `expires_at`, after which it starts again at zero.
    async fn count(
        &self,
        key: &str,
        limit: u64,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError>;
    /// Keeps a job's written work (a reply's text) under its claim's `key`
    /// until `expires_at`, apart from the claim: a claim given back for a
    /// redelivery leaves it, so that the redelivery posts it without asking
    /// the LLM again.
    async fn keep_draft(
        &self,
        key: &str,
        text: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// The live draft kept under `key`, if any.
    async fn draft(&self, key: &str) -> Result<Option<String>, PortError>;
}

/// The hints people gave about the bot's posts ([`Label`]s), per channel.
#[async_trait]
pub trait LabelRecords: Send + Sync {
    /// Stores `label` unless the same label ([`Label::key`]) is stored:
    /// whether it was new (a repeated reaction counts once).
    async fn put_label(&self, label: &Label) -> Result<bool, PortError>;
    /// Removes the label (a withdrawn reaction); none is fine.
    async fn delete_label(&self, label: &Label) -> Result<(), PortError>;
    /// The channel's labels, in the order given.
    async fn labels(&self, channel: &ChannelId) -> Result<Vec<Label>, PortError>;
    /// Keeps what the judge knew when it decided one of the bot's posts,
    /// over what was kept for that post, as long as a label of it may be.
    async fn put_grounds(&self, grounds: &PostGrounds) -> Result<(), PortError>;
    /// The grounds kept for the channel's posts, oldest post first.
    async fn grounds(&self, channel: &ChannelId) -> Result<Vec<PostGrounds>, PortError>;
}

/// The app's installations, one per workspace, the one-time states of the
/// install links on their way through Slack's consent page, and the stack's home.
#[async_trait]
pub trait Installations: Send + Sync {
    /// Stores its team's installation, over an earlier one (a reinstall).
    async fn put_installation(&self, installation: &Installation) -> Result<(), PortError>;
    /// The team's installation, if the app is installed there.
    async fn installation(&self, team: &TeamId) -> Result<Option<Installation>, PortError>;
    /// Every installation, by team.
    async fn installations(&self) -> Result<Vec<Installation>, PortError>;
    /// Replaces its team's installation with `renewed` only while the one stored
    /// still expires at `was`: of two renewals of one token, one writes (true),
    /// the other learns it came second (false); no refresh token is spent twice.
    async fn renew_installation(
        &self,
        renewed: &Installation,
        was: DateTime<Utc>,
    ) -> Result<bool, PortError>;
    /// Removes the team's installation (an uninstall); none is fine.
    async fn delete_installation(&self, team: &TeamId) -> Result<(), PortError>;
    /// Keeps an install link's `state` until `expires_at`.
    async fn put_oauth_state(
        &self,
        state: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError>;
    /// Takes `state` back, once: true when it was kept and has not expired
    /// (it is gone afterwards), false for a forged, spent or stale one.
    async fn take_oauth_state(&self, state: &str) -> Result<bool, PortError>;
    /// The stack's own workspace, once learned; and keeping it.
    async fn home(&self) -> Result<Option<Home>, PortError>;
    async fn put_home(&self, home: &Home) -> Result<(), PortError>;
}

/// Each team's part of the store, on a stack installed in many workspaces.
/// The store a function starts with is the stack's own: a single-workspace
/// stack keeps everything there, as it always has.
#[async_trait]
pub trait Teams: Send + Sync {
    /// This store as `team` sees it: everything it reads and writes is that
    /// team's, apart from every other team's and from the stack's own. The
    /// installations, install states and home stay the stack's.
    fn for_team(&self, team: &TeamId) -> Arc<dyn Store>;
    /// Deletes everything `team` has in the store (an uninstall), and answers
    /// how many items that was (not its installation: the uninstall's).
    async fn purge_team(&self, team: &TeamId) -> Result<u64, PortError>;
}

/// Slack's OAuth: an install's code exchanged for its installation, a rotating
/// token renewed (the adapter has the client id and secret). `Ok(Err(..))`: refused.
#[async_trait]
pub trait SlackOAuth: Send + Sync {
    /// Exchanges the `code` an install's redirect brought (to
    /// `redirect_uri`) for the installation, at `now`.
    async fn exchange(
        &self,
        code: &str,
        redirect_uri: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<Installation, AccessError>, PortError>;
    /// Renews `current`'s rotating token with its refresh token, at `now`.
    async fn refresh(
        &self,
        current: &Installation,
        now: DateTime<Utc>,
    ) -> Result<Result<Installation, AccessError>, PortError>;
}

/// Everything stored (DynamoDB on AWS, [`crate::adapters::twins::MemoryStore`]
/// in process): one port per kind of data, so that an adapter implements
/// each in its own block (a service still takes the whole store).
pub trait Store:
    Messages
    + ChannelRecords
    + UserCache
    + MemoryRecords
    + FactRecords
    + ProfileRecords
    + Claims
    + LabelRecords
    + Installations
    + Teams
{
}

impl<
        T: Messages
            + ChannelRecords
            + UserCache
            + MemoryRecords
            + FactRecords
            + ProfileRecords
            + Claims
            + LabelRecords
            + Installations
            + Teams
            + ?Sized,
    > Store for T
{
}

/// Puts forgets in the order [`MemoryRecords::forgets`] returns them: oldest first,
/// then by channel and ts (for every store alike).
pub fn sort_forgets(forgets: &mut [Forget]) {
    forgets.sort_by(|a, b| (a.at, &a.channel, a.ts).cmp(&(b.at, &b.channel, b.ts)));
}

/// A job pending at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledJob {
    pub name: ScheduleName,
    pub at: DateTime<Utc>,
    pub job: Job,
}

/// One-shot jobs by name (EventBridge Scheduler on AWS). Upserting a name
/// replaces its pending job: that is how a wait is cancelled and restarted.
#[async_trait]
pub trait Scheduler: Send + Sync {
    /// The same scheduler making `team`'s jobs: each carries its team
    /// ([`myao_domain::TeamJob`]) under a name of that team's, so that two
    /// teams' conversations never move each other's waits.
    fn for_team(&self, team: &TeamId) -> Arc<dyn Scheduler>;
    /// Creates or replaces the job called `name`, due at `at` (whole seconds).
    async fn upsert(
        &self,
        name: &ScheduleName,
        at: DateTime<Utc>,
        job: &Job,
    ) -> Result<(), PortError>;
    /// Removes the job called `name`; no error when there is none.
    async fn cancel(&self, name: &ScheduleName) -> Result<(), PortError>;
    /// The pending job called `name`.
    async fn get(&self, name: &ScheduleName) -> Result<Option<ScheduledJob>, PortError>;
}

/// The longest delay a queue accepts (SQS DelaySeconds).
pub const MAX_QUEUE_DELAY_SECONDS: u32 = 900;

/// Jobs to run now or after a short delay (SQS on AWS).
#[async_trait]
pub trait Queue: Send + Sync {
    /// The same queues carrying `team`'s jobs, each with its team.
    fn for_team(&self, team: &TeamId) -> Arc<dyn Queue>;
    /// Sends `job`, to be delivered after `delay_seconds` (at most
    /// [`MAX_QUEUE_DELAY_SECONDS`]; longer delays are refused).
    async fn send(&self, job: &Job, delay_seconds: u32) -> Result<(), PortError>;

    /// Brings `job`, which just failed, back in `delay_seconds`. `receipt`
    /// names the delivery it came in (an SQS receipt handle): that message
    /// is made visible again then, instead of after its queue's visibility
    /// timeout, and its receive count goes on towards the dead-letter
    /// queue. Without one (the local job board) the job is put back.
    async fn redeliver(
        &self,
        job: &Job,
        receipt: Option<&str>,
        delay_seconds: u32,
    ) -> Result<(), PortError>;
}

/// The time. Injected so that a replay runs on a virtual clock.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// Randomness for jitter. Injected so that tests and replays are exact.
pub trait RandomSource: Send + Sync {
    /// A number drawn uniformly from [0, 1).
    fn unit(&self) -> f64;
}

/// What must not be guessed (an install link's one-time state): draws no
/// one outside the process can predict, unlike [`RandomSource`]'s jitter,
/// whose generator is seeded and invertible.
pub trait Unguessable: Send + Sync {
    /// Two draws of 64 bits.
    fn draws(&self) -> [u64; 2];
}

/// Raw settings as `(name, value)` pairs (SSM Parameter Store on AWS).
#[async_trait]
pub trait SettingsSource: Send + Sync {
    async fn load(&self) -> Result<Vec<(String, String)>, PortError>;
    /// Where `team`'s own settings are, on a stack installed in many
    /// workspaces (`None`: a source with no teams' settings).
    fn for_team(&self, _team: &TeamId) -> Option<Arc<dyn SettingsSource>> {
        None
    }
}

/// The settings in force now.
#[async_trait]
pub trait SettingsProvider: Send + Sync {
    /// The settings, or an error (worth a retry) when they were never read:
    /// running on defaults could send prompts to a provider the operator did
    /// not choose, or speak where it was told not to.
    async fn current(&self) -> Result<Arc<Settings>, PortError>;
    /// The settings in force for `team`: the stack's, each overridden by
    /// the team's own where it has one (`myao settings set --team`).
    fn for_team(&self, team: &TeamId) -> Arc<dyn SettingsProvider>;
}

/// Secrets by name (SSM SecureString parameters on AWS). Implementations
/// never log a value.
#[async_trait]
pub trait Secrets: Send + Sync {
    async fn get(&self, name: &str) -> Result<String, PortError>;
}

/// The Slack Web API.
#[async_trait]
pub trait SlackApi: Send + Sync {
    /// The same API as `team`'s: its calls carry the token `tokens` holds
    /// under the team's id (its installation's, read once per job).
    fn for_team(self: Arc<Self>, team: &TeamId, tokens: Arc<dyn Secrets>) -> Arc<dyn SlackApi>;
    /// Posts `text` in a thread (or at the top level for `None`); returns the new message's `ts`.
    async fn post_message(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
    ) -> Result<Ts, PortError>;
    /// Posts `text` as [`SlackApi::post_message`] does, with `marker` in the
    /// message's metadata, so that [`SlackApi::find_marked`] can tell
    /// whether a post whose answer was lost (a 5xx, a timeout) went through.
    async fn post_marked(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: &str,
    ) -> Result<Ts, PortError>;
    /// Posts `text` as [`SlackApi::post_marked`] does, with Slack's
    /// feedback buttons under it (👍, 👎; a click comes back to ingest as
    /// an interaction); `text` stays the notification's. An adapter that
    /// has no buttons posts the text alone.
    async fn post_with_feedback(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: &str,
    ) -> Result<Ts, PortError> {
        self.post_marked(channel, thread_ts, text, marker).await
    }
    /// The `ts` of the message carrying `marker` among the messages of
    /// `channel`'s thread `thread_ts` (its top level for `None`) posted at
    /// or after `since`, if there is one.
    async fn find_marked(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        since: Ts,
        marker: &str,
    ) -> Result<Option<Ts>, PortError>;
    async fn user_info(&self, user: &UserId) -> Result<User, PortError>;
    async fn channel_info(&self, channel: &ChannelId) -> Result<Channel, PortError>;
    /// The bot's own user id; and the workspace of the token, with its bot.
    async fn auth_test(&self) -> Result<UserId, PortError>;
    async fn own_workspace(&self) -> Result<Home, PortError>;
    /// Adds the bot's `emoji` reaction to a message (`reactions.add`).
    async fn add_reaction(
        &self,
        channel: &ChannelId,
        ts: Ts,
        emoji: &EmojiName,
    ) -> Result<Reacted, PortError>;
    /// The emoji names a reaction may use: the workspace's custom emoji
    /// and the standard ones (`emoji.list`, kept for a while).
    async fn emoji_names(&self) -> Result<Arc<BTreeSet<String>>, PortError>;
    /// Shows that the bot is writing in the thread `thread_ts`
    /// (`assistant.threads.setStatus`): `status`, and `loading` messages in
    /// turn. It clears when the bot posts there, or with an empty `status`.
    async fn set_status(
        &self,
        channel: &ChannelId,
        thread_ts: Ts,
        status: &str,
        loading: &[String],
    ) -> Result<(), PortError>;
    /// The bytes of a shared file (its `url_private`, with the bot token,
    /// which needs `files:read`); refused past `max_bytes`.
    async fn download(&self, url: &str, max_bytes: u64) -> Result<Vec<u8>, PortError>;
}

/// Where counts go (CloudWatch, through EMF log lines, on AWS). Writing
/// one never fails the work it counts.
pub trait Metrics: Send + Sync {
    fn put(&self, datum: Datum);
}

/// What adding a reaction came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reacted {
    Added,
    /// The bot had already reacted so (`already_reacted`): done all the same.
    AlreadyThere,
    /// Slack knows no emoji by that name (`invalid_name`): nothing added.
    UnknownEmoji,
}
