//! The one context builder used by judgment, response and memory.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use myao_core::app::memory_retention;

use super::JobContext;
use myao_core::ports::{ChannelRecord, Embedded, MemoryRecords, Messages, PortError};
use myao_domain::facts::{self, Fact};
use myao_domain::meaning::Meaning;
use myao_domain::message::named_users;
use myao_domain::people::Familiarity;
use myao_domain::privacy::{may_use, Audience, Source};
use myao_domain::{
    Channel, ChannelId, ChannelMemory, ChannelMessages, Context, Conversation, Forget, Job, Memory,
    MemoryKind, MemoryScope, Message, Person, Persona, Ts, User, UserId, Visibility,
};

/// How long a cached user name is trusted before `users.info` is asked again.
pub const USER_CACHE_DAYS: i64 = 7;
/// How long a user Slack could not name is not asked about again.
pub const USER_FAILURE_CACHE_MINUTES: i64 = 60;
/// At most this many mentioned people (not authors) are looked up for one
/// prompt: a message full of mentions cannot make a job outlive its time.
pub const MAX_MENTION_LOOKUPS: usize = 5;
/// The time all `users.info` lookups of one prompt may take together.
const LOOKUP_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);
/// At most this many missing thread roots are fetched for one context.
const MAX_ROOT_FETCHES: usize = 10;

/// How long what Slack said of a channel (name, visibility) is trusted
/// before `conversations.info` is asked again. Events that change the
/// visibility make it be asked at once.
pub const CHANNEL_CHECK_HOURS: i64 = 24;

/// The channel's name and visibility: from the store while recently checked,
/// else from Slack (then remembered). When Slack cannot tell, what was known
/// stays; a channel never known is shown by its id and counts as private.
pub async fn channel(cx: &JobContext<'_>, id: &ChannelId) -> Result<Channel, PortError> {
    let record = cx.store().get_channel(id).await?;
    checked(cx, id, record.as_ref()).await
}

/// [`channel`], and the channel's record as read before (the learned
/// answer times with it), for a job that needs both from one read.
pub async fn channel_and_record(
    cx: &JobContext<'_>,
    id: &ChannelId,
) -> Result<(Channel, Option<ChannelRecord>), PortError> {
    let record = cx.store().get_channel(id).await?;
    let channel = checked(cx, id, record.as_ref()).await?;
    Ok((channel, record))
}

/// The channel as `record` holds it while recently checked, else as Slack
/// says (then remembered).
async fn checked(
    cx: &JobContext<'_>,
    id: &ChannelId,
    record: Option<&ChannelRecord>,
) -> Result<Channel, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    if let Some(r) = record {
        if r.checked_at
            .is_some_and(|at| now - at < Duration::hours(CHANNEL_CHECK_HOURS))
        {
            return Ok(r.channel.clone());
        }
    }
    match cx.slack().channel_info(id).await {
        Ok(channel) => {
            cx.store()
                .put_channel_info(&channel, now, memory_retention(settings, now))
                .await?;
            // Found less visible without an event (missed, or none sent):
            // what it said leaves the memories other channels see.
            let was_open = record.is_some_and(|r| r.channel.visibility.is_open());
            if was_open && !channel.visibility.is_open() {
                let forget = Forget::whole_channel(id.clone(), now);
                cx.store()
                    .record_forget(&forget, memory_retention(settings, now))
                    .await?;
                if let Err(error) = cx.queue().send(&Job::Forget, 0).await {
                    // The next memory run forgets it all the same.
                    tracing::warn!(channel = %id, %error, "could not queue the forget job");
                }
            }
            Ok(channel)
        }
        Err(error) => {
            tracing::warn!(channel = %id, %error, "conversations.info failed; keeping what is known");
            // What was known holds a while; past that, private in effect.
            let trusted = |r: &&ChannelRecord| {
                r.checked_at
                    .is_some_and(|at| now - at < Duration::hours(2 * CHANNEL_CHECK_HOURS))
            };
            Ok(match record {
                Some(r) if trusted(&r) => r.channel.clone(),
                Some(r) => Channel {
                    visibility: Visibility::UNKNOWN,
                    ..r.channel.clone()
                },
                None => Channel {
                    id: id.clone(),
                    name: id.to_string(),
                    visibility: Visibility::UNKNOWN,
                },
            })
        }
    }
}

/// Display names, by user.
pub type Names = BTreeMap<UserId, String>;

/// Display names for `ids`: cached in the store, else `users.info`; the id
/// itself when Slack cannot tell (remembered for
/// [`USER_FAILURE_CACHE_MINUTES`], so a bad id is not asked about at every
/// job). The lookups together take at most [`LOOKUP_BUDGET`]; whoever is
/// left shows as an id.
pub async fn user_names(cx: &JobContext<'_>, ids: &BTreeSet<UserId>) -> Result<Names, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let mut names = Names::new();
    let started = tokio::time::Instant::now();
    // `B...` ids are old-style bot integrations: users.info knows none of them.
    for id in ids.iter().filter(|id| !id.as_str().starts_with('B')) {
        if let Some((user, fetched)) = cx.store().get_user(id).await? {
            let unknown = user.name == id.as_str();
            let trusted = if unknown {
                Duration::minutes(USER_FAILURE_CACHE_MINUTES)
            } else {
                Duration::days(USER_CACHE_DAYS)
            };
            if now - fetched < trusted {
                if !unknown {
                    names.insert(id.clone(), user.name);
                }
                continue;
            }
        }
        let Some(left) = LOOKUP_BUDGET.checked_sub(started.elapsed()) else {
            tracing::warn!(user = %id, "no time left for users.info; showing the id");
            continue;
        };
        match tokio::time::timeout(left, cx.slack().user_info(id)).await {
            Ok(Ok(user)) => {
                cx.store()
                    .put_user(&user, now, memory_retention(settings, now))
                    .await?;
                names.insert(id.clone(), user.name);
            }
            Ok(Err(error)) if error.is_retryable() => {
                tracing::warn!(user = %id, %error, "users.info unavailable; showing the id");
            }
            Ok(Err(error)) => {
                // Slack knows no such user (a fake mention): not asked again soon.
                tracing::warn!(user = %id, %error, "users.info failed; showing the id");
                let unknown = User {
                    id: id.clone(),
                    name: id.to_string(),
                    is_bot: false,
                };
                cx.store()
                    .put_user(&unknown, now, memory_retention(settings, now))
                    .await?;
            }
            Err(_) => {
                tracing::warn!(user = %id, "users.info out of time; showing the id");
            }
        }
    }
    Ok(names)
}

/// The names a prompt over `messages` shows: every author's and the first
/// [`MAX_MENTION_LOOKUPS`] other people `<@U...>`-mentioned, newest
/// messages first ([`user_names`]; the others show as their id), and the
/// bot's own, which is the persona's.
pub(crate) async fn prompt_names<'a>(
    cx: &JobContext<'_>,
    messages: impl DoubleEndedIterator<Item = &'a Message> + Clone,
) -> Result<Names, PortError> {
    let ids = named_users(messages, MAX_MENTION_LOOKUPS);
    let mut names = user_names(cx, &ids).await?;
    if let Ok(bot) = cx.bot_user_id().await {
        names.insert(bot, cx.settings().persona_name.clone());
    }
    Ok(names)
}

/// What a context is built around, as a job read it: the channel, its
/// newest `channel_messages_limit` messages, and a thread's messages (its
/// root first; none for the channel's top level).
pub struct Read {
    pub channel: Channel,
    pub window: Vec<Message>,
    pub thread: Vec<Message>,
}

impl Read {
    /// Reads what the context of `conversation` is built around.
    pub async fn of(cx: &JobContext<'_>, conversation: &Conversation) -> Result<Read, PortError> {
        let settings = cx.settings();
        let store = cx.store();
        let channel = channel(cx, &conversation.channel).await?;
        let window = store
            .recent_messages(&channel.id, settings.channel_messages_limit as usize)
            .await?;
        let mut thread = Vec::new();
        if let Some(root) = conversation.thread_ts {
            thread = store
                .conversation_messages(conversation, settings.message_limit as usize)
                .await?;
            if let Some(r) = store.get_message(&channel.id, root).await? {
                thread.insert(0, r);
            }
        }
        Ok(Read {
            channel,
            window,
            thread,
        })
    }
}

/// Builds the context of `conversation` ([`build_from`] what
/// [`Read::of`] reads).
pub async fn build(
    cx: &JobContext<'_>,
    conversation: &Conversation,
    newest_ts: Option<Ts>,
) -> Result<Context, PortError> {
    let read = Read::of(cx, conversation).await?;
    build_from(cx, conversation, read, newest_ts).await
}

/// Builds the context of `conversation` around `read`: its channel's window
/// (plus the target thread, the job's own message and any missing thread
/// roots), the workspace memories, the memories of channels active within
/// `active_channel_days`, the channel's thread memories within
/// `thread_memory_days`, and display names. Whatever comes from outside the
/// conversation's channel goes through [`may_use`]: its members are told
/// only what they could read themselves.
pub async fn build_from(
    cx: &JobContext<'_>,
    conversation: &Conversation,
    read: Read,
    newest_ts: Option<Ts>,
) -> Result<Context, PortError> {
    let settings = cx.settings();
    let channel = read.channel.clone();
    let audience = Audience::Channel(&channel);
    let history = history(cx.store(), read, newest_ts).await?;
    // A memory that may hold a deleted or edited message stays out of the
    // prompt until the forget job has written it again.
    let pending = cx.store().forgets().await?;
    let fresh = Fresh(&pending);
    let (workspace_long, workspace_short) =
        workspace_memories(cx.store(), audience, &fresh).await?;
    let channel_memories = channel_memories(cx, &channel, audience, &fresh).await?;
    let thread_memories = thread_memories(cx, &channel.id, &fresh).await?;
    let names = prompt_names(cx, history.get_all_messages().into_iter()).await?;
    let talk: Vec<&Message> = history
        .get_all_messages()
        .into_iter()
        .filter(|m| conversation.contains(m))
        .collect();
    let people = people(cx, &talk, &names, audience, &pending).await?;
    let facts = recalled(cx, &channel.id, &talk, &people, &pending).await?;
    let facts = shown_facts(cx, &facts, &names).await?;
    let persona = Persona {
        name: settings.persona_name.clone(),
        system_prompt: settings.persona_system_prompt.clone(),
    };
    Ok(Context::new(persona, history)
        .with_workspace_memories(workspace_long, workspace_short)
        .with_channel_memories(channel_memories)
        .with_thread_memories(thread_memories)
        .with_target_thread(conversation.thread_ts)
        .with_user_names(names)
        .with_people(people)
        .with_facts(facts))
}

/// The channel's messages of a context: its window, the thread's messages,
/// the job's own message (read consistently: an index may not show a
/// message written a moment ago, a mention answered at once), and the roots
/// of the window's other threads that fell out of it.
async fn history(
    messages: &dyn Messages,
    read: Read,
    newest_ts: Option<Ts>,
) -> Result<ChannelMessages, PortError> {
    let Read {
        channel,
        mut window,
        thread,
    } = read;
    window.extend(thread);
    if let Some(ts) = newest_ts {
        if !window.iter().any(|m| m.ts == ts) {
            if let Some(m) = messages.get_message(&channel.id, ts).await? {
                window.push(m);
            }
        }
    }
    let present: BTreeSet<_> = window.iter().map(|m| m.ts).collect();
    let missing: BTreeSet<_> = window
        .iter()
        .filter_map(|m| m.thread_ts)
        .filter(|t| !present.contains(t))
        .collect();
    for root in missing.into_iter().take(MAX_ROOT_FETCHES) {
        if let Some(r) = messages.get_message(&channel.id, root).await? {
            window.push(r);
        }
    }
    Ok(ChannelMessages::new(channel.id, channel.name, window))
}

/// The deletions and edits not yet forgotten: a memory that may hold one
/// stays out of the prompt.
struct Fresh<'a>(&'a [Forget]);

impl Fresh<'_> {
    /// `memory`, unless a pending forget that `concerns` it may be in it.
    fn keep(&self, memory: Option<Memory>, concerns: impl Fn(&Forget) -> bool) -> Option<String> {
        memory
            .filter(|m| !self.0.iter().any(|f| concerns(f) && f.may_be_in(m)))
            .map(|m| m.content)
    }
}

/// The workspace's long and short memories, when the audience may hear
/// them.
async fn workspace_memories(
    memories: &dyn MemoryRecords,
    audience: Audience<'_>,
    fresh: &Fresh<'_>,
) -> Result<(Option<String>, Option<String>), PortError> {
    if !may_use(audience, Source::WorkspaceMemory) {
        return Ok((None, None));
    }
    let scope = MemoryScope::Workspace;
    let long = memories.get_memory(&scope, MemoryKind::Long).await?;
    let short = memories.get_memory(&scope, MemoryKind::Short).await?;
    Ok((fresh.keep(long, |_| true), fresh.keep(short, |_| true)))
}

/// The memories of the channels active within `active_channel_days` that
/// the audience may hear, and the channel's own, by name.
async fn channel_memories(
    cx: &JobContext<'_>,
    channel: &Channel,
    audience: Audience<'_>,
    fresh: &Fresh<'_>,
) -> Result<Vec<ChannelMemory>, PortError> {
    let (store, now) = (cx.store(), cx.now());
    let active_since = now - Duration::days(i64::from(cx.settings().active_channel_days));
    let mut active: Vec<(Channel, DateTime<Utc>)> = store
        .channels()
        .await?
        .into_iter()
        .filter(|r| r.last_active >= active_since && r.channel.id != channel.id)
        .filter(|r| may_use(audience, Source::Channel(&r.channel)))
        .map(|r| (r.channel, r.last_active))
        .collect();
    active.push((channel.clone(), now));
    active.sort_by(|(a, _), (b, _)| (a.name.as_str(), &a.id).cmp(&(b.name.as_str(), &b.id)));
    let mut memories = Vec::with_capacity(active.len());
    for (c, last_active) in active {
        let scope = MemoryScope::Channel {
            channel: c.id.clone(),
        };
        let of_channel = |f: &Forget| f.channel == c.id && !f.is_whole_channel();
        let long = fresh.keep(
            store.get_memory(&scope, MemoryKind::Long).await?,
            of_channel,
        );
        let short = fresh.keep(
            store.get_memory(&scope, MemoryKind::Short).await?,
            of_channel,
        );
        memories.push(
            ChannelMemory::new(c.id, c.name)
                .with_memories(long, short)
                .with_last_active(last_active),
        );
    }
    Ok(memories)
}

/// The channel's short thread memories written within
/// `thread_memory_days`, by thread.
async fn thread_memories(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    fresh: &Fresh<'_>,
) -> Result<BTreeMap<Ts, String>, PortError> {
    let since = cx.now() - Duration::days(i64::from(cx.settings().thread_memory_days));
    Ok(cx
        .store()
        .thread_memories(channel, since)
        .await?
        .into_iter()
        .filter_map(|m| match m.scope {
            MemoryScope::Thread { thread_ts, .. } if m.kind == MemoryKind::Short => {
                let of_thread = |f: &Forget| {
                    f.channel == *channel && !f.is_whole_channel() && f.thread() == thread_ts
                };
                fresh
                    .keep(Some(m), of_thread)
                    .map(|content| (thread_ts, content))
            }
            _ => None,
        })
        .collect())
}

/// How many people of a conversation a prompt introduces at most.
const MAX_PEOPLE: usize = 8;
/// How many of a conversation's newest people's messages recall reads.
const RECALL_MESSAGES: usize = 5;
/// Recall's floor and size.
const RECALL_FLOOR: f64 = 0.04;
const RECALL_TOP: usize = 3;

/// The people of a conversation (its newest speakers first, not the bot),
/// with what the bot knows of them. Their topics come from open channels'
/// facts: shown only to an `audience` that may hear the open channels (not
/// one shared with another organisation). Their sketches come from the
/// audience's own channel only, where they were drawn, and not one that a
/// deletion or edit still being forgotten (`pending`) may be in.
pub(crate) async fn people(
    cx: &JobContext<'_>,
    talk: &[&Message],
    names: &BTreeMap<UserId, String>,
    audience: Audience<'_>,
    pending: &[Forget],
) -> Result<Vec<Person>, PortError> {
    let settings = cx.settings();
    let topics = may_use(audience, Source::WorkspaceMemory);
    let mut sketches = match audience {
        Audience::Channel(channel) => cx.store().sketches(&channel.id).await?,
        Audience::WorkspaceMemory => Vec::new(),
    };
    sketches.retain(|s| !pending.iter().any(|f| s.may_hold(f)));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for m in talk.iter().rev().filter(|m| !m.is_bot) {
        if out.len() == MAX_PEOPLE || !seen.insert(m.user.clone()) {
            continue;
        }
        let profile = cx.store().profile(&m.user).await?;
        let interactions = profile.as_ref().map_or(0, |p| p.interactions);
        let sketch = sketches.iter().find(|s| s.user == m.user);
        out.push(Person {
            name: names
                .get(&m.user)
                .cloned()
                .unwrap_or_else(|| m.user.to_string()),
            familiarity: Familiarity::of(interactions, settings.familiarity_thresholds)
                .shown()
                .to_owned(),
            topics: profile
                .filter(|_| topics)
                .map(|p| p.topics)
                .unwrap_or_default(),
            tags: sketch.map(|s| s.tags.clone()).unwrap_or_default(),
            note: sketch.map(|s| s.note.clone()),
            last_talk: sketch.map(|s| s.last_talk.clone()),
        });
    }
    Ok(out)
}

/// The channel's facts that the conversation's newest words call up (none
/// from a message whose deletion or edit is still being forgotten).
async fn recalled(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    talk: &[&Message],
    people: &[Person],
    pending: &[Forget],
) -> Result<Vec<Fact>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let words: Vec<&str> = talk
        .iter()
        .rev()
        .filter(|m| !m.is_bot)
        .take(RECALL_MESSAGES)
        .map(|m| m.text.as_str())
        .collect();
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let text = words.join("\n");
    let mut all = cx.store().facts(channel).await?;
    all.retain(|f| {
        !pending
            .iter()
            .any(|p| p.channel == *channel && f.sources.contains(&p.ts))
    });
    let names: Vec<&str> = people.iter().map(|p| p.name.as_str()).collect();
    let query = facts::Recalling::of(&text, &names, meaning_of(cx, &text, &all).await);
    let how = facts::Recall {
        half_life: settings.fact_half_life(),
        floor: RECALL_FLOOR,
        top: RECALL_TOP,
        meaning: query
            .meaning
            .as_ref()
            .map_or(facts::ByMeaning::BUNDLED, |m| {
                facts::ByMeaning::of_model(m.model())
            }),
    };
    let found = facts::recall(&all, &query, now, how);
    tracing::debug!(
        recalled = found.len(),
        by_meaning = query.meaning.is_some(),
        "facts recalled"
    );
    Ok(found.into_iter().map(|(f, _)| f.clone()).collect())
}

/// The recalled facts as the prompt shows them, naming whom each is about
/// and who said it ([`facts::shown`]); a person the prompt does not name
/// yet is looked up as the prompt's names are.
pub(crate) async fn shown_facts(
    cx: &JobContext<'_>,
    found: &[Fact],
    names: &Names,
) -> Result<Vec<String>, PortError> {
    let missing: BTreeSet<UserId> = found
        .iter()
        .flat_map(|f| f.speakers.iter().chain(&f.about))
        .filter(|id| !names.contains_key(*id))
        .cloned()
        .collect();
    let more = user_names(cx, &missing).await?;
    let name = |id: &UserId| {
        names
            .get(id)
            .or_else(|| more.get(id))
            .cloned()
            .unwrap_or_else(|| id.to_string())
    };
    Ok(found.iter().map(|f| facts::shown(f, name)).collect())
}

/// What a conversation's newest words mean, when the embedder is there and
/// some fact has a meaning to compare with. An embedder that fails leaves
/// recall to the words (a warning, no error).
async fn meaning_of(cx: &JobContext<'_>, text: &str, facts: &[Fact]) -> Option<Meaning> {
    let embedder = cx.embedder()?;
    if !facts.iter().any(|f| f.meaning.is_some()) {
        return None;
    }
    match embedder.embed(&[text.to_owned()], Embedded::Query).await {
        Ok(v) if v.vectors.len() == 1 => Some(Meaning::of(&v.model, &v.vectors[0])),
        Ok(v) => {
            tracing::warn!(
                vectors = v.vectors.len(),
                "the embedder answered out of shape; recall by words"
            );
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "the embedder failed; recall by words");
            None
        }
    }
}

/// How many of a conversation's newest messages are read to tell whether
/// someone spoke after a job was made.
pub(crate) const RECENT: usize = 50;

/// The newest message of a conversation (a thread's root counts when it has
/// no reply) and who spoke after a job's `newest_ts`.
pub(crate) struct Recent {
    pub newest: Message,
    /// Someone (not a bot) wrote after the job was made: their message has a
    /// judgment of its own, which decides instead.
    pub person_after: bool,
    /// The newest message a person wrote after the job was made.
    pub newest_person: Option<Ts>,
    /// The bots that wrote after the job was made, and when.
    pub bots_after: Vec<(UserId, Ts)>,
}

impl Recent {
    /// What `messages` (the conversation's newest, oldest first) show after
    /// `since`; the newest is `root` when they are none. `None`: the
    /// conversation has no message left.
    pub(crate) fn of(messages: &[Message], root: Option<&Message>, since: Ts) -> Option<Recent> {
        let after: Vec<&Message> = messages.iter().filter(|m| m.ts > since).collect();
        let newest = messages.last().or(root)?.clone();
        Some(Recent {
            newest,
            person_after: after.iter().any(|m| !m.is_bot),
            newest_person: after.iter().filter(|m| !m.is_bot).map(|m| m.ts).max(),
            bots_after: after
                .iter()
                .filter(|m| m.is_bot)
                .map(|m| (m.user.clone(), m.ts))
                .collect(),
        })
    }
}

/// [`Recent`] of `conversation`, read from the store (a thread's root only
/// when it has no reply).
pub(crate) async fn recent(
    messages: &dyn Messages,
    conversation: &Conversation,
    since: Ts,
) -> Result<Option<Recent>, PortError> {
    let newest = messages.conversation_messages(conversation, RECENT).await?;
    let root = match (newest.is_empty(), conversation.thread_ts) {
        (true, Some(root)) => messages.get_message(&conversation.channel, root).await?,
        _ => None,
    };
    Ok(Recent::of(&newest, root.as_ref(), since))
}

/// Records that a channel was active at its newest message.
pub(crate) async fn touch(
    cx: &JobContext<'_>,
    channel: &Channel,
    newest: &Message,
) -> Result<(), PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    cx.store()
        .touch_channel(
            channel,
            newest.ts.to_datetime(),
            memory_retention(settings, now),
        )
        .await
}
