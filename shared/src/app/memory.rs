//! Memory: the LLM writes what the bot remembers of threads, channels and
//! the workspace, incrementally (REFERENCE.md, "Defaults of the original").
//!
//! Order of a recurring run: channel short-term -> channel long-term (merging
//! the short-term) -> workspace short-term -> workspace long-term -> the
//! threads of active channels that no judgment covered. A scope with nothing
//! newer than its memory costs no LLM call; long-term memories are rewritten
//! at most once per `long_term_update_interval_seconds`.
//!
//! Privacy: the workspace memories are written only from open channels (see
//! [`crate::domain::privacy`]). A deleted or edited message is forgotten at
//! the start of the next run: every memory that may have covered it is
//! rewritten from what remains, without its previous text, or removed when
//! nothing remains.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::context::{mentioned_users, user_names};
use super::{memory_retention, Services};
use crate::domain::budget::{cap_chars, estimate_tokens};
use crate::domain::privacy::{may_use, Audience, Source};
use crate::domain::text::render_slack_text;
use crate::domain::{
    Channel, ChannelId, Conversation, Forget, Job, Memory, MemoryKind, MemoryScope, Message,
    Settings, Ts,
};
use crate::ports::{LlmRequest, LlmRole, PortError};
use crate::prompts::{format_now, format_time, render, MessageView, PersonaView};

/// At most this many messages of one thread go into its memory prompt.
const THREAD_MESSAGES: usize = 200;
/// At most this many messages of one channel's window go into its memory prompt.
const WINDOW_MESSAGES: usize = 500;

/// What a memory run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The memories written, in the order they were written.
    pub written: Vec<(MemoryScope, MemoryKind)>,
    /// LLM calls made (a failed or empty answer counts too).
    pub llm_calls: usize,
    /// Jobs queued (the recurring run fans out one job per channel).
    pub queued: usize,
}

impl MemoryReport {
    /// Adds what another run did.
    pub fn merge(&mut self, other: MemoryReport) {
        self.written.extend(other.written);
        self.llm_calls += other.llm_calls;
        self.queued += other.queued;
    }
}

#[derive(Serialize)]
struct TaskView<'a, T: Serialize> {
    persona: PersonaView,
    max_tokens: u32,
    current_time: String,
    task_template: &'static str,
    #[serde(flatten)]
    task: &'a T,
}

/// A memory task's input, cut to fit the memory prompt's budget.
trait Fit: Serialize + Clone {
    /// Cuts every message's text to `max_chars` characters.
    fn cap(&mut self, max_chars: usize);
    /// Leaves out the least needed piece (the oldest message, the least
    /// recent channel); its estimated tokens, or `None` when nothing is left
    /// to cut.
    fn drop_one(&mut self) -> Option<usize>;
}

fn cap_views(messages: &mut [MessageView], max_chars: usize) {
    for m in messages {
        m.text = cap_chars(&m.text, max_chars);
    }
}

fn drop_oldest(messages: &mut Vec<MessageView>) -> Option<usize> {
    if messages.is_empty() {
        return None;
    }
    let m = messages.remove(0);
    Some(estimate_tokens(&m.text) + estimate_tokens(&m.user) + 8)
}

impl Fit for ThreadTask {
    fn cap(&mut self, max_chars: usize) {
        cap_views(&mut self.messages, max_chars);
    }
    fn drop_one(&mut self) -> Option<usize> {
        // The root (first) says what the thread is about: the oldest reply goes.
        if self.messages.len() > 2 {
            let m = self.messages.remove(1);
            return Some(estimate_tokens(&m.text) + estimate_tokens(&m.user) + 8);
        }
        None
    }
}

impl Fit for WindowTask {
    fn cap(&mut self, max_chars: usize) {
        cap_views(&mut self.messages, max_chars);
    }
    fn drop_one(&mut self) -> Option<usize> {
        drop_oldest(&mut self.messages)
    }
}

impl Fit for MergeTask {
    // Two memories, each bounded by the memory model's answer length.
    fn cap(&mut self, _max_chars: usize) {}
    fn drop_one(&mut self) -> Option<usize> {
        None
    }
}

impl Fit for WorkspaceTask {
    fn cap(&mut self, _max_chars: usize) {}
    fn drop_one(&mut self) -> Option<usize> {
        // The least recently active channel goes first.
        let i = self
            .channels
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| c.last_active)
            .map(|(i, _)| i)?;
        let c = self.channels.remove(i);
        Some(estimate_tokens(&c.memory) + estimate_tokens(&c.name) + 8)
    }
}

#[derive(Serialize, Clone)]
struct ThreadTask {
    channel_name: String,
    thread_ts: String,
    previous: Option<String>,
    messages: Vec<MessageView>,
}

#[derive(Serialize, Clone)]
struct WindowTask {
    channel_name: String,
    window_hours: u32,
    messages: Vec<MessageView>,
}

#[derive(Serialize, Clone)]
struct MergeTask {
    channel_name: String,
    previous: Option<String>,
    short_term: String,
}

#[derive(Serialize, Clone)]
struct ChannelLine {
    name: String,
    memory: String,
    /// Not shown: a prompt over its budget drops the least recent first.
    #[serde(skip)]
    last_active: Option<DateTime<Utc>>,
}

#[derive(Serialize, Clone)]
struct WorkspaceTask {
    channels: Vec<ChannelLine>,
}

/// The system prompt of one memory task: the shared rules of
/// `memory_system.j2` around the task's own template.
fn memory_prompt<T: Serialize>(
    settings: &Settings,
    now: DateTime<Utc>,
    kind: MemoryKind,
    template: &'static str,
    task: &T,
) -> Result<String, crate::prompts::PromptError> {
    let max_tokens = match kind {
        MemoryKind::Long => settings.long_term_max_tokens,
        MemoryKind::Short => settings.short_term_max_tokens,
    };
    let view = TaskView {
        persona: PersonaView {
            name: settings.persona_name.clone(),
            system_prompt: settings.persona_system_prompt.clone(),
        },
        max_tokens,
        current_time: format_now(now, settings.timezone),
        task_template: template,
        task,
    };
    render("memory_system.j2", &view)
}

/// The memory prompt of `task`, its messages capped at `max_message_chars`
/// and the oldest left out while it is over `memory_prompt_max_tokens`.
fn fitted_memory_prompt<T: Fit>(
    settings: &Settings,
    now: DateTime<Utc>,
    kind: MemoryKind,
    template: &'static str,
    task: &T,
) -> Result<String, crate::prompts::PromptError> {
    let mut task = task.clone();
    task.cap(settings.max_message_chars as usize);
    let budget = settings.memory_prompt_max_tokens as usize;
    let mut dropped = 0usize;
    loop {
        let prompt = memory_prompt(settings, now, kind, template, &task)?;
        let tokens = estimate_tokens(&prompt);
        if tokens <= budget {
            if dropped > 0 {
                tracing::info!(tokens, budget, dropped, "memory prompt cut to its budget");
            }
            return Ok(prompt);
        }
        let mut excess = tokens - budget;
        while excess > 0 {
            match task.drop_one() {
                Some(freed) => {
                    dropped += 1;
                    excess = excess.saturating_sub(freed);
                }
                None => {
                    tracing::warn!(
                        tokens,
                        budget,
                        "memory prompt over its budget, nothing left to cut"
                    );
                    return memory_prompt(settings, now, kind, template, &task);
                }
            }
        }
    }
}

/// Renders a memory prompt, calls the LLM and stores the memory. Returns
/// whether a memory was written; an LLM failure or an empty answer writes
/// nothing (the old memory stays) and is logged.
#[allow(clippy::too_many_arguments)]
async fn write<T: Fit>(
    svc: &Services,
    settings: &Settings,
    report: &mut MemoryReport,
    scope: MemoryScope,
    kind: MemoryKind,
    template: &'static str,
    task: &T,
    newest_ts: Option<Ts>,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    let now = svc.clock.now();
    let Some(content) = ask(svc, settings, report, &scope, kind, template, task).await else {
        return Ok(false);
    };
    // A deletion or an edit that came after the inputs were read may be in
    // the answer: drop it; the forget pass writes this memory again.
    if forgotten_since(svc, &scope, read_at).await? {
        tracing::info!(%scope, kind = kind.as_str(), "memory not written: a message it read was deleted or edited meanwhile");
        return Ok(false);
    }
    svc.store
        .put_memory(
            &Memory {
                scope: scope.clone(),
                kind,
                content,
                // When its inputs were read: a forget after it may not be in it.
                updated_at: read_at,
                newest_ts,
            },
            memory_retention(settings, now),
        )
        .await?;
    tracing::info!(%scope, kind = kind.as_str(), "memory written");
    report.written.push((scope, kind));
    Ok(true)
}

/// Whether a deletion or an edit that concerns `scope` came after
/// `read_at` (the workspace memories concern every channel).
async fn forgotten_since(
    svc: &Services,
    scope: &MemoryScope,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    Ok(svc.store.forgets().await?.iter().any(|f| {
        f.at > read_at
            && match scope {
                MemoryScope::Workspace => true,
                MemoryScope::Channel { channel } | MemoryScope::Thread { channel, .. } => {
                    f.channel == *channel
                }
            }
    }))
}

/// Renders a memory prompt and asks the LLM; `None` (logged) when the
/// prompt does not render, the LLM fails or answers nothing.
async fn ask<T: Fit>(
    svc: &Services,
    settings: &Settings,
    report: &mut MemoryReport,
    scope: &MemoryScope,
    kind: MemoryKind,
    template: &'static str,
    task: &T,
) -> Option<String> {
    let now = svc.clock.now();
    let prompt = match fitted_memory_prompt(settings, now, kind, template, task) {
        Ok(p) => p,
        Err(error) => {
            tracing::error!(%error, %scope, "memory prompt failed to render");
            return None;
        }
    };
    report.llm_calls += 1;
    let request = LlmRequest {
        role: LlmRole::Memory,
        system: prompt,
        json: false,
    };
    let content = match svc.llm.complete(&request).await {
        Ok(reply) => reply.text.trim().to_owned(),
        Err(error) => {
            tracing::warn!(%error, %scope, kind = kind.as_str(), "memory not written: LLM failed");
            return None;
        }
    };
    if content.is_empty() {
        tracing::warn!(%scope, kind = kind.as_str(), "memory not written: empty answer");
        return None;
    }
    Some(content)
}

async fn views(
    svc: &Services,
    settings: &Settings,
    messages: &[Message],
    now: DateTime<Utc>,
) -> Result<Vec<MessageView>, PortError> {
    let mut names = user_names(svc, settings, &mentioned_users(messages.iter()), now).await?;
    if let Ok(bot) = svc.bot_user_id(settings).await {
        names.insert(bot, settings.persona_name.clone());
    }
    let name_of = |id: &str| {
        names
            .iter()
            .find(|(k, _)| k.as_str() == id)
            .map(|(_, v)| v.clone())
    };
    Ok(messages
        .iter()
        .map(|m| MessageView {
            time: format_time(m.ts.to_datetime(), settings.timezone),
            user: names
                .get(&m.user)
                .cloned()
                .unwrap_or_else(|| m.user.to_string()),
            text: render_slack_text(&m.text, name_of),
        })
        .collect())
}

/// Refreshes the short-term memory of one thread, unless it already covers
/// the thread's newest message.
pub async fn thread_memory(
    svc: &Services,
    channel: &ChannelId,
    thread_ts: Ts,
) -> Result<MemoryReport, PortError> {
    let settings = svc.settings.current().await?;
    refresh_thread(svc, &settings, channel, thread_ts, false).await
}

/// Writes a thread's memory. `rebuild`: from its remaining messages alone,
/// whatever the memory covers (a message of it was deleted or edited); the
/// memory is removed when no message remains.
async fn refresh_thread(
    svc: &Services,
    settings: &Settings,
    channel: &ChannelId,
    thread_ts: Ts,
    rebuild: bool,
) -> Result<MemoryReport, PortError> {
    let mut report = MemoryReport::default();
    let read_at = svc.clock.now();
    let mut messages = if rebuild {
        // Forgetting: read the table itself, consistently (an index may
        // still show what was just deleted or edited).
        let mut replies: Vec<Message> = svc
            .store
            .messages_after(channel, Some(thread_ts), WINDOW_MESSAGES)
            .await?
            .into_iter()
            .filter(|m| m.thread_ts == Some(thread_ts))
            .collect();
        let skip = replies.len().saturating_sub(THREAD_MESSAGES);
        replies.drain(..skip);
        replies
    } else {
        let conversation = Conversation::thread(channel.clone(), thread_ts);
        svc.store
            .conversation_messages(&conversation, THREAD_MESSAGES)
            .await?
    };
    if let Some(root) = svc.store.get_message(channel, thread_ts).await? {
        messages.insert(0, root);
    }
    let scope = MemoryScope::Thread {
        channel: channel.clone(),
        thread_ts,
    };
    let Some(newest) = messages.iter().map(|m| m.ts).max() else {
        if rebuild {
            svc.store.delete_memory(&scope, MemoryKind::Short).await?;
            tracing::info!(%scope, "thread memory removed: nothing remains");
        }
        return Ok(report);
    };
    let previous = if rebuild {
        None
    } else {
        svc.store.get_memory(&scope, MemoryKind::Short).await?
    };
    if previous
        .as_ref()
        .and_then(|m| m.newest_ts)
        .is_some_and(|covered| covered >= newest)
    {
        return Ok(report);
    }
    let now = svc.clock.now();
    let ch = super::context::channel(svc, settings, channel, now).await?;
    let task = ThreadTask {
        channel_name: ch.name,
        thread_ts: thread_ts.to_string(),
        previous: previous.map(|m| m.content),
        messages: views(svc, settings, &messages, now).await?,
    };
    write(
        svc,
        settings,
        &mut report,
        scope,
        MemoryKind::Short,
        "memory_thread_short.j2",
        &task,
        Some(newest),
        read_at,
    )
    .await?;
    Ok(report)
}

/// How long after the channels' jobs the workspace's runs, so that it reads
/// their new memories (the jobs run side by side, each in seconds).
pub const WORKSPACE_AFTER_SECONDS: u32 = 300;

/// The recurring run: forgets what was deleted or edited since the last
/// one, then fans out: one [`Job::ChannelMemory`] per channel active within
/// `active_channel_days`, and a [`Job::WorkspaceMemory`] after them, on the
/// memory queue. So a workspace of any size finishes: each job is one
/// channel's work.
pub async fn sweep(svc: &Services) -> Result<MemoryReport, PortError> {
    let settings = svc.settings.current().await?;
    let now = svc.clock.now();
    let mut report = forget_now(svc).await?;
    let active_since = now - Duration::days(i64::from(settings.active_channel_days));
    let mut channels: Vec<ChannelId> = svc
        .store
        .channels()
        .await?
        .into_iter()
        .filter(|r| r.last_active >= active_since)
        .map(|r| r.channel.id)
        .collect();
    channels.sort();
    for channel in channels {
        svc.queue.send(&Job::ChannelMemory { channel }, 0).await?;
        report.queued += 1;
    }
    svc.queue
        .send(&Job::WorkspaceMemory, WORKSPACE_AFTER_SECONDS)
        .await?;
    report.queued += 1;
    Ok(report)
}

/// One channel's memories (short-term from its window, long-term when due)
/// and the memories of its threads in the window that no judgment covered.
pub async fn channel_memory(svc: &Services, id: &ChannelId) -> Result<MemoryReport, PortError> {
    let settings = svc.settings.current().await?;
    let now = svc.clock.now();
    // Its visibility (checked with Slack when not lately) decides whether
    // the workspace memory may read it.
    let channel = super::context::channel(svc, &settings, id, now).await?;
    let window_start =
        Ts::from_datetime(now - Duration::hours(i64::from(settings.short_term_window_hours)));
    let messages = svc
        .store
        .messages_after(&channel.id, Some(window_start), WINDOW_MESSAGES)
        .await?;
    let mut report = channel_memories(svc, &settings, &channel, &messages, now).await?;
    let mut threads: Vec<Ts> = messages.iter().filter_map(|m| m.thread_ts).collect();
    threads.sort();
    threads.dedup();
    for thread_ts in threads {
        report.merge(refresh_thread(svc, &settings, &channel.id, thread_ts, false).await?);
    }
    Ok(report)
}

/// The workspace memories, from the open channels' memories.
pub async fn workspace_memory(svc: &Services) -> Result<MemoryReport, PortError> {
    let settings = svc.settings.current().await?;
    let now = svc.clock.now();
    let open = open_channels(svc, &settings, now).await?;
    workspace_memories(svc, &settings, &open, now).await
}

/// Forgets at once what was deleted, edited, or said in a channel that
/// became less visible (a [`crate::domain::Job::Forget`], queued by ingest).
pub async fn forget_now(svc: &Services) -> Result<MemoryReport, PortError> {
    let settings = svc.settings.current().await?;
    let now = svc.clock.now();
    let mut report = MemoryReport::default();
    if forget(svc, &settings, &mut report, now).await? {
        let open = open_channels(svc, &settings, now).await?;
        rebuild_workspace_long(svc, &settings, &mut report, &open, now).await?;
    }
    Ok(report)
}

/// A channel whose words may reach the workspace memory, and when it was
/// last active (a workspace prompt over its budget drops the least recent).
struct OpenChannel {
    channel: Channel,
    last_active: DateTime<Utc>,
}

/// The channels active within `active_channel_days` whose words may reach
/// the workspace memory, by their visibility checked with Slack lately,
/// sorted by name.
async fn open_channels(
    svc: &Services,
    settings: &Settings,
    now: DateTime<Utc>,
) -> Result<Vec<OpenChannel>, PortError> {
    let active_since = now - Duration::days(i64::from(settings.active_channel_days));
    let mut open = Vec::new();
    for record in svc.store.channels().await? {
        if record.last_active < active_since {
            continue;
        }
        let channel = super::context::channel(svc, settings, &record.channel.id, now).await?;
        if may_use(Audience::WorkspaceMemory, Source::Channel(&channel)) {
            open.push(OpenChannel {
                channel,
                last_active: record.last_active,
            });
        }
    }
    open.sort_by(|a, b| {
        (a.channel.name.as_str(), &a.channel.id).cmp(&(b.channel.name.as_str(), &b.channel.id))
    });
    Ok(open)
}

/// How long a forget stays pending after it was recorded: longer than a
/// memory job runs, so that a job which read the message before it was
/// deleted cannot write it after the forget was handled (its write checks
/// the pending forgets).
const FORGET_GRACE_MINUTES: i64 = 15;

/// Forgets the messages deleted or edited (and the channels made less
/// visible) since the last run. First every memory that may hold them is
/// removed, so that no prompt shows it meanwhile; then the thread and
/// channel long-term memories are written again from what remains, and the
/// short-term ones are left for the run to write from their windows. A
/// rewrite that fails leaves the memory removed: forgetting comes first.
/// Returns whether the workspace's long-term memory must be rebuilt, once
/// the channels' are.
async fn forget(
    svc: &Services,
    settings: &Settings,
    report: &mut MemoryReport,
    now: DateTime<Utc>,
) -> Result<bool, PortError> {
    let forgets = svc.store.forgets().await?;
    if forgets.is_empty() {
        return Ok(false);
    }
    tracing::info!(
        count = forgets.len(),
        "forgetting deleted and edited messages"
    );
    let mut threads: BTreeMap<(ChannelId, Ts), Vec<&Forget>> = BTreeMap::new();
    let mut channels: BTreeMap<ChannelId, Vec<&Forget>> = BTreeMap::new();
    let mut workspace: Vec<&Forget> = Vec::new();
    for f in &forgets {
        if f.is_whole_channel() {
            // The channel's own memories stay for its own members; what it
            // said leaves the workspace memory.
            workspace.push(f);
            continue;
        }
        threads
            .entry((f.channel.clone(), f.thread()))
            .or_default()
            .push(f);
        channels.entry(f.channel.clone()).or_default().push(f);
        // Its channel may have fed the workspace memory while it was open.
        let fed = svc
            .store
            .get_channel(&f.channel)
            .await?
            .is_none_or(|r| r.channel.visibility.is_open() || r.checked_at.is_none());
        if fed {
            workspace.push(f);
        }
    }
    let covered = |m: &Option<Memory>, fs: &[&Forget]| {
        m.as_ref()
            .is_some_and(|m| fs.iter().any(|f| f.may_be_in(m)))
    };

    // 1. Remove.
    let mut stale_threads = Vec::new();
    for ((channel, root), fs) in &threads {
        let scope = MemoryScope::Thread {
            channel: channel.clone(),
            thread_ts: *root,
        };
        if covered(&svc.store.get_memory(&scope, MemoryKind::Short).await?, fs) {
            svc.store.delete_memory(&scope, MemoryKind::Short).await?;
            stale_threads.push((channel.clone(), *root));
        }
    }
    let mut stale_longs = Vec::new();
    for (id, fs) in &channels {
        let scope = MemoryScope::Channel {
            channel: id.clone(),
        };
        if covered(&svc.store.get_memory(&scope, MemoryKind::Short).await?, fs) {
            svc.store.delete_memory(&scope, MemoryKind::Short).await?;
        }
        if covered(&svc.store.get_memory(&scope, MemoryKind::Long).await?, fs) {
            svc.store.delete_memory(&scope, MemoryKind::Long).await?;
            stale_longs.push(id.clone());
        }
    }
    let mut rebuild_workspace_long = false;
    let scope = MemoryScope::Workspace;
    if covered(
        &svc.store.get_memory(&scope, MemoryKind::Short).await?,
        &workspace,
    ) {
        svc.store.delete_memory(&scope, MemoryKind::Short).await?;
    }
    if covered(
        &svc.store.get_memory(&scope, MemoryKind::Long).await?,
        &workspace,
    ) {
        svc.store.delete_memory(&scope, MemoryKind::Long).await?;
        rebuild_workspace_long = true;
    }

    // 2. Write again from what remains.
    for (channel, root) in stale_threads {
        report.merge(refresh_thread(svc, settings, &channel, root, true).await?);
    }
    for id in stale_longs {
        rebuild_channel_long(svc, settings, report, &id, now).await?;
    }

    // 3. Handled; each stays pending a while for the writes in flight.
    for f in &forgets {
        if now - f.at >= Duration::minutes(FORGET_GRACE_MINUTES) {
            svc.store.clear_forget(f).await?;
        }
    }
    Ok(rebuild_workspace_long)
}

/// A long-term memory to write afresh, without its previous text.
struct Afresh {
    scope: MemoryScope,
    channel_name: String,
    /// The short-term task's template, which summarises what remains.
    summary_template: &'static str,
    /// The long-term template, which makes that summary a dated history.
    long_template: &'static str,
    newest: Option<Ts>,
    read_at: DateTime<Utc>,
}

/// Summarises `task` with the short-term template, then merges that alone
/// into a long-term memory; whether it was written.
async fn write_long_afresh<T: Fit>(
    svc: &Services,
    settings: &Settings,
    report: &mut MemoryReport,
    afresh: Afresh,
    task: &T,
) -> Result<bool, PortError> {
    let Some(summary) = ask(
        svc,
        settings,
        report,
        &afresh.scope,
        MemoryKind::Short,
        afresh.summary_template,
        task,
    )
    .await
    else {
        return Ok(false);
    };
    let merge = MergeTask {
        channel_name: afresh.channel_name,
        previous: None,
        short_term: summary,
    };
    write(
        svc,
        settings,
        report,
        afresh.scope,
        MemoryKind::Long,
        afresh.long_template,
        &merge,
        afresh.newest,
        afresh.read_at,
    )
    .await
}

/// Rewrites a channel's long-term memory from its remaining messages alone
/// (as far back as they are kept), or removes it when none remains or the
/// rewrite fails.
async fn rebuild_channel_long(
    svc: &Services,
    settings: &Settings,
    report: &mut MemoryReport,
    id: &ChannelId,
    now: DateTime<Utc>,
) -> Result<(), PortError> {
    let scope = MemoryScope::Channel {
        channel: id.clone(),
    };
    let messages = svc.store.messages_after(id, None, WINDOW_MESSAGES).await?;
    let channel = super::context::channel(svc, settings, id, now).await?;
    let newest = messages.iter().map(|m| m.ts).max();
    let rewritten = match newest {
        None => false,
        Some(_) => {
            let task = WindowTask {
                channel_name: channel.name.clone(),
                window_hours: settings.message_retention_days.saturating_mul(24),
                messages: views(svc, settings, &messages, now).await?,
            };
            let afresh = Afresh {
                scope: scope.clone(),
                channel_name: channel.name,
                summary_template: "memory_channel_short.j2",
                long_template: "memory_channel_long.j2",
                newest,
                read_at: now,
            };
            write_long_afresh(svc, settings, report, afresh, &task).await?
        }
    };
    if !rewritten {
        svc.store.delete_memory(&scope, MemoryKind::Long).await?;
        tracing::info!(%scope, "channel long-term memory removed while forgetting");
    }
    Ok(())
}

/// Whether a long-term memory may be rewritten now with content up to `newest`.
fn long_term_due(
    previous: Option<&Memory>,
    newest: Option<Ts>,
    settings: &Settings,
    now: DateTime<Utc>,
) -> bool {
    let Some(newest) = newest else { return false };
    match previous {
        None => true,
        Some(m) => {
            m.newest_ts.is_none_or(|covered| covered < newest)
                && now - m.updated_at
                    >= Duration::seconds(i64::from(settings.long_term_update_interval_seconds))
        }
    }
}

async fn channel_memories(
    svc: &Services,
    settings: &Settings,
    channel: &Channel,
    window: &[Message],
    now: DateTime<Utc>,
) -> Result<MemoryReport, PortError> {
    let mut report = MemoryReport::default();
    let short_scope = MemoryScope::Channel {
        channel: channel.id.clone(),
    };
    let mut short = svc
        .store
        .get_memory(&short_scope, MemoryKind::Short)
        .await?;
    if let Some(newest) = window.iter().map(|m| m.ts).max() {
        if short
            .as_ref()
            .and_then(|m| m.newest_ts)
            .is_none_or(|covered| covered < newest)
        {
            let task = WindowTask {
                channel_name: channel.name.clone(),
                window_hours: settings.short_term_window_hours,
                messages: views(svc, settings, window, now).await?,
            };
            if write(
                svc,
                settings,
                &mut report,
                short_scope.clone(),
                MemoryKind::Short,
                "memory_channel_short.j2",
                &task,
                Some(newest),
                now,
            )
            .await?
            {
                short = svc
                    .store
                    .get_memory(&short_scope, MemoryKind::Short)
                    .await?;
            }
        }
    }
    let Some(short) = short else {
        return Ok(report);
    };
    if window.is_empty() && !short.content.is_empty() {
        // Nothing happened within the window: "recent events" from days ago
        // would mislead. The long-term memory keeps them.
        svc.store
            .put_memory(
                &Memory {
                    content: String::new(),
                    updated_at: now,
                    ..short.clone()
                },
                memory_retention(settings, now),
            )
            .await?;
        tracing::info!(channel = %channel.id, "channel short-term memory cleared: a quiet window");
    }
    if short.content.is_empty() {
        return Ok(report);
    }
    let long = svc.store.get_memory(&short_scope, MemoryKind::Long).await?;
    if long_term_due(long.as_ref(), short.newest_ts, settings, now) {
        let task = MergeTask {
            channel_name: channel.name.clone(),
            previous: long.map(|m| m.content),
            short_term: short.content.clone(),
        };
        write(
            svc,
            settings,
            &mut report,
            short_scope,
            MemoryKind::Long,
            "memory_channel_long.j2",
            &task,
            short.newest_ts,
            now,
        )
        .await?;
    }
    Ok(report)
}

/// The workspace memories, written from the open channels' memories only.
async fn workspace_memories(
    svc: &Services,
    settings: &Settings,
    open: &[OpenChannel],
    now: DateTime<Utc>,
) -> Result<MemoryReport, PortError> {
    let mut report = MemoryReport::default();
    let mut lines = Vec::new();
    let mut newest: Option<Ts> = None;
    for OpenChannel {
        channel,
        last_active,
    } in open
    {
        let scope = MemoryScope::Channel {
            channel: channel.id.clone(),
        };
        if let Some(m) = svc.store.get_memory(&scope, MemoryKind::Short).await? {
            newest = newest.max(m.newest_ts);
            if m.content.is_empty() {
                continue;
            }
            lines.push(ChannelLine {
                name: channel.name.clone(),
                memory: m.content,
                last_active: Some(*last_active),
            });
        }
    }
    let scope = MemoryScope::Workspace;
    let Some(newest) = newest else {
        return Ok(report);
    };
    let mut short = svc.store.get_memory(&scope, MemoryKind::Short).await?;
    if short
        .as_ref()
        .and_then(|m| m.newest_ts)
        .is_none_or(|covered| covered < newest)
    {
        let task = WorkspaceTask { channels: lines };
        if write(
            svc,
            settings,
            &mut report,
            scope.clone(),
            MemoryKind::Short,
            "memory_workspace_short.j2",
            &task,
            Some(newest),
            now,
        )
        .await?
        {
            short = svc.store.get_memory(&scope, MemoryKind::Short).await?;
        }
    }
    let Some(short) = short else {
        return Ok(report);
    };
    let long = svc.store.get_memory(&scope, MemoryKind::Long).await?;
    if long_term_due(long.as_ref(), short.newest_ts, settings, now) {
        let task = MergeTask {
            channel_name: String::new(),
            previous: long.map(|m| m.content),
            short_term: short.content.clone(),
        };
        write(
            svc,
            settings,
            &mut report,
            scope,
            MemoryKind::Long,
            "memory_workspace_long.j2",
            &task,
            short.newest_ts,
            now,
        )
        .await?;
    }
    Ok(report)
}

/// Writes the workspace's long-term memory again from the open channels'
/// long-term memories (already free of what was forgotten).
async fn rebuild_workspace_long(
    svc: &Services,
    settings: &Settings,
    report: &mut MemoryReport,
    open: &[OpenChannel],
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    let scope = MemoryScope::Workspace;
    let mut lines = Vec::new();
    let mut newest: Option<Ts> = None;
    for OpenChannel {
        channel,
        last_active,
    } in open
    {
        let channel_scope = MemoryScope::Channel {
            channel: channel.id.clone(),
        };
        if let Some(m) = svc
            .store
            .get_memory(&channel_scope, MemoryKind::Long)
            .await?
        {
            newest = newest.max(m.newest_ts);
            lines.push(ChannelLine {
                name: channel.name.clone(),
                memory: m.content,
                last_active: Some(*last_active),
            });
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    let task = WorkspaceTask { channels: lines };
    let afresh = Afresh {
        scope,
        channel_name: String::new(),
        summary_template: "memory_workspace_short.j2",
        long_template: "memory_workspace_long.j2",
        newest,
        read_at,
    };
    write_long_afresh(svc, settings, report, afresh, &task).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot_settings() -> Settings {
        Settings {
            persona_name: "みゃお".into(),
            persona_system_prompt: "あなたは「みゃお」という名前の猫キャラクターです。".into(),
            ..Settings::default()
        }
    }

    fn sample_messages() -> Vec<MessageView> {
        vec![
            MessageView {
                time: "2024-03-01 10:10:00".into(),
                user: "alice".into(),
                text: "今日のタスク確認しよう".into(),
            },
            MessageView {
                time: "2024-03-01 10:15:00".into(),
                user: "bob".into(),
                text: "了解、リスト共有するね".into(),
            },
        ]
    }

    /// Every memory template rendered from fixed data and snapshotted, like
    /// the judgment and response prompts: a template change shows in review.
    #[test]
    fn memory_prompts_are_snapshotted() {
        let s = snapshot_settings();
        let now = DateTime::<Utc>::from_timestamp(1_709_294_400, 0).unwrap();
        let thread = ThreadTask {
            channel_name: "general".into(),
            thread_ts: "1709280000.000001".into(),
            previous: Some("- 2024-03-01 alice がタスク確認を提案した".into()),
            messages: sample_messages(),
        };
        let window = WindowTask {
            channel_name: "general".into(),
            window_hours: 24,
            messages: sample_messages(),
        };
        let merge = MergeTask {
            channel_name: "general".into(),
            previous: Some("- 2024-02-20 週次報告が始まった".into()),
            short_term: "- 2024-03-01 タスクのリストが共有された".into(),
        };
        let first_merge = MergeTask {
            channel_name: "general".into(),
            previous: None,
            short_term: "- 2024-03-01 タスクのリストが共有された".into(),
        };
        let workspace = WorkspaceTask {
            channels: vec![
                ChannelLine {
                    name: "general".into(),
                    memory: "- 2024-03-01 タスクのリストが共有された".into(),
                    last_active: None,
                },
                ChannelLine {
                    name: "random".into(),
                    memory: "- 2024-03-01 猫の写真が投稿された".into(),
                    last_active: None,
                },
            ],
        };
        let cases: Vec<(&str, String)> = vec![
            (
                "memory_thread_short",
                memory_prompt(
                    &s,
                    now,
                    MemoryKind::Short,
                    "memory_thread_short.j2",
                    &thread,
                )
                .unwrap(),
            ),
            (
                "memory_channel_short",
                memory_prompt(
                    &s,
                    now,
                    MemoryKind::Short,
                    "memory_channel_short.j2",
                    &window,
                )
                .unwrap(),
            ),
            (
                "memory_channel_long",
                memory_prompt(&s, now, MemoryKind::Long, "memory_channel_long.j2", &merge).unwrap(),
            ),
            (
                "memory_channel_long_first",
                memory_prompt(
                    &s,
                    now,
                    MemoryKind::Long,
                    "memory_channel_long.j2",
                    &first_merge,
                )
                .unwrap(),
            ),
            (
                "memory_workspace_short",
                memory_prompt(
                    &s,
                    now,
                    MemoryKind::Short,
                    "memory_workspace_short.j2",
                    &workspace,
                )
                .unwrap(),
            ),
            (
                "memory_workspace_long",
                memory_prompt(
                    &s,
                    now,
                    MemoryKind::Long,
                    "memory_workspace_long.j2",
                    &merge,
                )
                .unwrap(),
            ),
        ];
        for (name, prompt) in cases {
            assert!(prompt.contains("YYYY-MM-DD"), "{name}: every item is dated");
            insta::assert_snapshot!(name, prompt);
        }
    }

    #[test]
    fn a_workspace_prompt_over_budget_drops_the_least_recent_channel_first() {
        let line = |name: &str, hour: i64| ChannelLine {
            name: name.into(),
            memory: format!("memory of {name}"),
            last_active: DateTime::<Utc>::from_timestamp(hour * 3600, 0),
        };
        let mut task = WorkspaceTask {
            channels: vec![line("alpha", 5), line("beta", 1), line("gamma", 3)],
        };
        let names = |t: &WorkspaceTask| -> Vec<String> {
            t.channels.iter().map(|c| c.name.clone()).collect()
        };
        assert!(task.drop_one().is_some());
        assert_eq!(
            names(&task),
            ["alpha", "gamma"],
            "beta was the least recent"
        );
        assert!(task.drop_one().is_some());
        assert_eq!(names(&task), ["alpha"]);
        assert!(task.drop_one().is_some());
        assert_eq!(task.drop_one(), None);
    }

    fn memory(updated: i64, newest: &str) -> Memory {
        Memory {
            scope: MemoryScope::Workspace,
            kind: MemoryKind::Long,
            content: "x".into(),
            updated_at: DateTime::<Utc>::from_timestamp(updated, 0).unwrap(),
            newest_ts: Some(Ts::parse(newest).unwrap()),
        }
    }

    #[test]
    fn long_term_waits_for_its_interval_and_for_new_content() {
        let s = Settings::default();
        let now = DateTime::<Utc>::from_timestamp(10_000, 0).unwrap();
        let newer = Some(Ts::parse("20.0").unwrap());
        assert!(long_term_due(None, newer, &s, now));
        assert!(!long_term_due(None, None, &s, now));
        assert!(
            !long_term_due(Some(&memory(10_000 - 3_599, "10.0")), newer, &s, now),
            "interval not over"
        );
        assert!(long_term_due(
            Some(&memory(10_000 - 3_600, "10.0")),
            newer,
            &s,
            now
        ));
        assert!(
            !long_term_due(Some(&memory(0, "20.0")), newer, &s, now),
            "nothing new"
        );
    }
}
