//! Memory: the LLM writes what the bot remembers of threads, channels and
//! the workspace, incrementally (REFERENCE.md, "Defaults of the original").
//!
//! Order of a recurring run: each active channel's digest (one call that
//! rewrites its short-term memory, the summaries of its threads that moved,
//! the facts in its new messages and, when due, its long-term memory; only
//! once `memory_min_new_messages` came or the oldest waited half the
//! window: [`digest`]), then the workspace's short-term and long-term
//! memories, each at most once per `long_term_update_interval_seconds`.
//! A scope with nothing newer than its memory costs no LLM call.
//!
//! Privacy: the workspace memories are written only from open channels (see
//! [`myao_domain::privacy`]). A deleted or edited message is forgotten at
//! the start of the next run: every memory that may have covered it is
//! rewritten from what remains, without its previous text, or removed when
//! nothing remains.

use chrono::{DateTime, Duration, Utc};

mod digest;
mod forget;

pub use forget::forget_now;
use forget::forgotten_since;

use super::context::{prompt_names, Names};
use super::reflection::{clean_facts, embed_older};
pub use super::MemoryReport;
use myao_core::app::memory_retention;

use super::{JobContext, Services};
use crate::prompts::memory::{
    ChannelLine, Fit, MemoryPrompt, MergeTask, ThreadTask, WindowTask, WorkspaceTask,
};
use crate::prompts::MessageView;
use myao_core::ports::PortError;
use myao_domain::digest::Backoff;
use myao_domain::metrics::{self, Datum};
use myao_domain::privacy::{may_use, Audience, Source};
use myao_domain::{
    Channel, ChannelId, ChannelMemoryJob, Job, Memory, MemoryKind, MemoryScope, Message, Settings,
    Ts,
};

/// At most this many messages of one thread go into its memory prompt.
const THREAD_MESSAGES: usize = 200;
/// At most this many messages of one channel's window go into its memory prompt.
const WINDOW_MESSAGES: usize = 500;

/// Which memory a prompt writes: where it is kept, and the template that
/// writes it.
struct Target {
    scope: MemoryScope,
    kind: MemoryKind,
    template: &'static str,
}

/// Renders a memory prompt, calls the LLM and stores the memory. Returns
/// whether a memory was written; an LLM failure or an empty answer writes
/// nothing (the old memory stays) and is logged.
async fn write<T: Fit>(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    target: Target,
    task: &T,
    newest_ts: Option<Ts>,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    let Some(content) = ask(cx, report, &target, task).await else {
        return Ok(false);
    };
    let Target { scope, kind, .. } = target;
    // A deletion or an edit that came after the inputs were read may be in
    // the answer: drop it; the forget pass writes this memory again.
    if forgotten_since(cx, &scope, read_at).await? {
        tracing::info!(%scope, kind = kind.as_str(), "memory not written: a message it read was deleted or edited meanwhile");
        return Ok(false);
    }
    keep(cx, report, &scope, kind, content, newest_ts, read_at).await?;
    Ok(true)
}

/// Stores a memory written from what was read at `read_at` (its
/// `updated_at`: a forget after it may not be in it), covering the messages
/// up to `newest_ts`.
pub(super) async fn keep(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    scope: &MemoryScope,
    kind: MemoryKind,
    content: String,
    newest_ts: Option<Ts>,
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    let memory = Memory {
        scope: scope.clone(),
        kind,
        content,
        updated_at: read_at,
        newest_ts,
    };
    let retention = memory_retention(cx.settings(), cx.now());
    cx.store().put_memory(&memory, retention).await?;
    tracing::info!(%scope, kind = kind.as_str(), "memory written");
    report.written.push((scope.clone(), kind));
    Ok(())
}

/// Renders a memory prompt and asks the LLM; `None` (logged) when the
/// prompt does not render, the LLM fails or answers nothing.
async fn ask<T: Fit>(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    target: &Target,
    task: &T,
) -> Option<String> {
    let Target {
        scope,
        kind,
        template,
    } = target;
    let (kind, template) = (*kind, *template);
    let prompt = MemoryPrompt {
        settings: cx.settings(),
        now: cx.now(),
        kind,
        template,
    };
    let request = match prompt.request(task) {
        Ok(request) => request,
        Err(error) => {
            tracing::error!(%error, %scope, "memory prompt failed to render");
            return None;
        }
    };
    report.llm_calls += 1;
    let content = match cx.llm().complete(&request).await {
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

async fn views(cx: &JobContext<'_>, messages: &[Message]) -> Result<Vec<MessageView>, PortError> {
    Ok(named_views(cx, messages).await?.0)
}

/// [`views`], and the names they show (whom a fact may be about).
async fn named_views(
    cx: &JobContext<'_>,
    messages: &[Message],
) -> Result<(Vec<MessageView>, Names), PortError> {
    let settings = cx.settings();
    let names = prompt_names(cx, messages.iter()).await?;
    let views = messages
        .iter()
        .map(|m| MessageView::new(m, &names, settings.timezone))
        .collect();
    Ok((views, names))
}

/// Writes a thread's memory again from its remaining messages alone,
/// whatever the memory covered (a message of it was deleted or edited), or
/// removes it when no message remains.
async fn rebuild_thread(
    cx: &JobContext<'_>,
    channel: &ChannelId,
    thread_ts: Ts,
) -> Result<MemoryReport, PortError> {
    let mut report = MemoryReport::default();
    let read_at = cx.clock().now();
    // Read the table itself, consistently (an index may still show what
    // was just deleted or edited).
    let mut messages: Vec<Message> = cx
        .store()
        .messages_after(channel, Some(thread_ts), WINDOW_MESSAGES)
        .await?
        .into_iter()
        .filter(|m| m.thread_ts == Some(thread_ts))
        .collect();
    let skip = messages.len().saturating_sub(THREAD_MESSAGES);
    messages.drain(..skip);
    if let Some(root) = cx.store().get_message(channel, thread_ts).await? {
        messages.insert(0, root);
    }
    let scope = MemoryScope::Thread {
        channel: channel.clone(),
        thread_ts,
    };
    let Some(newest) = messages.iter().map(|m| m.ts).max() else {
        cx.store().delete_memory(&scope, MemoryKind::Short).await?;
        tracing::info!(%scope, "thread memory removed: nothing remains");
        return Ok(report);
    };
    let ch = super::context::channel(cx, channel).await?;
    let task = ThreadTask {
        channel_name: ch.name.clone(),
        thread_ts: thread_ts.to_string(),
        previous: None,
        messages: views(cx, &messages).await?,
    };
    let target = Target {
        scope,
        kind: MemoryKind::Short,
        template: "memory_thread_short.j2",
    };
    write(cx, &mut report, target, &task, Some(newest), read_at).await?;
    Ok(report)
}

/// How long after the channels' jobs the workspace's runs, so that it reads
/// their new memories (the jobs run side by side, each in seconds).
pub const WORKSPACE_AFTER_SECONDS: u32 = 300;

/// The recurring run: forgets what was deleted or edited since the last
/// one, then fans out: one [`Job::ChannelMemory`] per channel active within
/// `active_channel_days`, and a [`Job::WorkspaceMemory`] after them, on the
/// memory queue. So a workspace of any size finishes: each job is one
/// channel's work. With `proactive` on, it also schedules a proactive
/// judgment for each channel gone quiet that qualifies
/// ([`super::proactive::plan`]). The stack's run also starts each installed
/// team's, which does the same in that team's part.
pub async fn sweep(svc: &Services) -> Result<MemoryReport, PortError> {
    let mut report = forget_now(svc).await?;
    if svc.team().is_none() {
        learn_home(svc).await;
        renew_tokens(svc).await;
        report.queued += sweep_teams(svc).await?;
    }
    let cx = JobContext::begin(svc).await?;
    let (settings, now) = (cx.settings(), cx.now());
    let active_since = now - Duration::days(i64::from(settings.active_channel_days));
    let records = cx.store().channels().await?;
    report.proactive = super::proactive::plan(&cx, &records).await;
    let mut channels: Vec<ChannelId> = records
        .into_iter()
        .filter(|r| r.last_active >= active_since)
        .map(|r| r.channel.id)
        .collect();
    channels.sort();
    for channel in channels {
        cx.queue()
            .send(&Job::ChannelMemory(ChannelMemoryJob { channel }), 0)
            .await?;
        report.queued += 1;
    }
    cx.queue()
        .send(&Job::WorkspaceMemory, WORKSPACE_AFTER_SECONDS)
        .await?;
    report.queued += 1;
    Ok(report)
}

/// Learns the stack's own workspace when it is not kept yet (one read
/// otherwise), so that ingest tells its events from a stranger's. A stack
/// with no token of its own has none: said in the log, the run goes on.
async fn learn_home(svc: &Services) {
    if let Err(error) = crate::home::learn(&*svc.ports.store, &*svc.slack).await {
        tracing::warn!(%error, "the stack's own workspace is not known");
    }
}

/// Renews the installed workspaces' rotating tokens that expire within two
/// hours: the hourly run tries each at least once before its expiry, and
/// again the next hour after a failure. What it could not renew is logged
/// (the teams' ids only) and counted for the alarm; the run goes on.
async fn renew_tokens(svc: &Services) {
    let Some(oauth) = svc.oauth() else { return };
    let now = svc.ports.clock.now();
    let failures = match crate::tokens::renew_due(&*svc.ports.store, oauth, now).await {
        // Each renewal and failure is logged by the round itself, by team.
        Ok(round) => {
            if round.alarming() {
                tracing::error!(lost = ?round.lost, failed = ?round.failed, "tokens not renewed");
            }
            round.lost.len() + round.failed.len()
        }
        Err(error) => {
            tracing::error!(%error, "could not read the installations to renew");
            1
        }
    };
    if failures > 0 {
        let n = u64::try_from(failures).unwrap_or(u64::MAX);
        svc.ports
            .metrics
            .put(Datum::counted(metrics::TOKEN_RENEWAL_FAILURES, n));
    }
}

/// The stack's recurring run starts each installed team's own (the
/// installations the stack has: none on a single-workspace stack), which
/// then does for that team what the stack's does for its own part.
async fn sweep_teams(svc: &Services) -> Result<usize, PortError> {
    let installations = svc.ports.store.installations().await?;
    let mut queued = 0;
    for installation in &installations {
        let team = &installation.team;
        // One team's failure holds back neither the others nor the stack's
        // own run: that team's sweep comes with the next hour's.
        match svc
            .ports
            .queue
            .for_team(team)
            .send(&Job::MemorySweep, 0)
            .await
        {
            Ok(()) => queued += 1,
            Err(error) => tracing::error!(%team, %error, "a workspace's memory run not started"),
        }
    }
    Ok(queued)
}

/// One channel's memories (short-term from its window, long-term when due)
/// and the memories of its threads in the window that no judgment covered.
pub async fn channel_memory(svc: &Services, id: &ChannelId) -> Result<MemoryReport, PortError> {
    let cx = JobContext::begin(svc).await?;
    let (settings, now) = (cx.settings(), cx.now());
    // Its visibility (checked with Slack when not lately) decides whether
    // the workspace memory may read it.
    let (channel, record) = super::context::channel_and_record(&cx, id).await?;
    let window_start =
        Ts::from_datetime(now - Duration::hours(i64::from(settings.short_term_window_hours)));
    // Before the read: a deletion recorded after it is seen by the writes.
    let read_at = cx.clock().now();
    let messages = cx
        .store()
        .messages_after(&channel.id, Some(window_start), WINDOW_MESSAGES)
        .await?;
    let mut report = MemoryReport::default();
    let backoff = record.and_then(|r| r.digest_backoff);
    if let Some(b) = backoff.filter(|b| b.holds(now)) {
        tracing::info!(failures = b.failures, until = %b.until, "digest backed off after unusable answers");
    } else if !messages.is_empty() {
        let digested =
            digest::run(&cx, &channel, &messages, window_start, read_at, &mut report).await?;
        back_off(&cx, &channel.id, backoff, digested).await?;
    }
    let memories = Memories::of_channel(&channel);
    let short = cx
        .store()
        .get_memory(&memories.scope, MemoryKind::Short)
        .await?;
    if let Some(short) = short.filter(|m| !m.content.is_empty()) {
        // A quiet window clears the short-term memory: the long-term one
        // takes it in first, whatever its interval.
        let wait = !messages.is_empty();
        let kept = merge_long(&cx, &mut report, &memories, &short, wait).await?;
        if messages.is_empty() && kept {
            clear_quiet(&cx, short).await?;
        }
    }
    clean_facts(&cx, &channel.id).await?;
    embed_older(&cx, &channel.id).await?;
    Ok(report)
}

/// Holds the channel's digest back after answers it could not use (asked
/// twice: the wait doubling, up to a day), and ends the backoff after one
/// it used.
async fn back_off(
    cx: &JobContext<'_>,
    id: &ChannelId,
    backoff: Option<Backoff>,
    digested: digest::Digested,
) -> Result<(), PortError> {
    let store = cx.store();
    match digested {
        digest::Digested::Unusable => {
            let next = Backoff::after_failure(backoff.as_ref(), cx.now());
            tracing::warn!(failures = next.failures, until = %next.until, "digest unusable; its channel's digest backs off");
            store.put_digest_backoff(id, Some(&next)).await
        }
        digest::Digested::Usable if backoff.is_some() => store.put_digest_backoff(id, None).await,
        _ => Ok(()),
    }
}

/// The workspace memories, written from the open channels' memories only.
pub async fn workspace_memory(svc: &Services) -> Result<MemoryReport, PortError> {
    let cx = JobContext::begin(svc).await?;
    let open = open_channels(&cx).await?;
    let mut report = MemoryReport::default();
    let (mut lines, newest) = channel_lines(&cx, &open, MemoryKind::Short).await?;
    // A cleared memory (a quiet window) counts for what is covered, but
    // says nothing.
    lines.retain(|line| !line.memory.is_empty());
    let Some(newest) = newest else {
        return Ok(report);
    };
    let memories = Memories::of_workspace();
    // The channels' own memories are in every prompt: the workspace's
    // overview of them is rewritten on the long-term clock.
    let interval = Duration::seconds(i64::from(cx.settings().long_term_update_interval_seconds));
    let short = cx
        .store()
        .get_memory(&memories.scope, MemoryKind::Short)
        .await?;
    if short.is_some_and(|m| cx.now() - m.updated_at < interval) {
        return Ok(report);
    }
    let task = async { Ok(WorkspaceTask { channels: lines }) };
    let short = refresh_short(&cx, &mut report, &memories, newest, task).await?;
    if let Some(short) = short {
        merge_long(&cx, &mut report, &memories, &short, true).await?;
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
async fn open_channels(cx: &JobContext<'_>) -> Result<Vec<OpenChannel>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let active_since = now - Duration::days(i64::from(settings.active_channel_days));
    let mut open = Vec::new();
    for record in cx.store().channels().await? {
        if record.last_active < active_since {
            continue;
        }
        let channel = super::context::channel(cx, &record.channel.id).await?;
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

/// The memories of a channel or of the workspace: where they are stored,
/// and the templates that write them.
struct Memories {
    scope: MemoryScope,
    /// The channel's name, as the prompts show it; empty for the workspace.
    channel_name: String,
    /// The short-term template, which summarises what happened.
    short_template: &'static str,
    /// The long-term template, which merges a summary into a dated history.
    long_template: &'static str,
}

impl Memories {
    fn of_channel(channel: &Channel) -> Memories {
        Memories {
            scope: MemoryScope::Channel {
                channel: channel.id.clone(),
            },
            channel_name: channel.name.clone(),
            short_template: "memory_channel_short.j2",
            long_template: "memory_channel_long.j2",
        }
    }

    fn of_workspace() -> Memories {
        Memories {
            scope: MemoryScope::Workspace,
            channel_name: String::new(),
            short_template: "memory_workspace_short.j2",
            long_template: "memory_workspace_long.j2",
        }
    }

    fn short(&self) -> Target {
        Target {
            scope: self.scope.clone(),
            kind: MemoryKind::Short,
            template: self.short_template,
        }
    }

    fn long(&self) -> Target {
        Target {
            scope: self.scope.clone(),
            kind: MemoryKind::Long,
            template: self.long_template,
        }
    }

    /// The task that merges `short_term` into the `previous` long-term memory.
    fn merge(&self, previous: Option<String>, short_term: String) -> MergeTask {
        MergeTask {
            channel_name: self.channel_name.clone(),
            previous,
            short_term,
        }
    }
}

/// Writes the long-term memory of `memories` from `task`; whether it was
/// written.
async fn write_long(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    memories: &Memories,
    task: &MergeTask,
    newest_ts: Option<Ts>,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    write(cx, report, memories.long(), task, newest_ts, read_at).await
}

/// Writes the long-term memory of `memories` afresh, without its previous
/// text: summarises `task` with the short-term template, then merges that
/// alone; whether it was written.
async fn write_long_afresh<T: Fit>(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    memories: &Memories,
    task: &T,
    newest: Option<Ts>,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    let Some(summary) = ask(cx, report, &memories.short(), task).await else {
        return Ok(false);
    };
    let merge = memories.merge(None, summary);
    write_long(cx, report, memories, &merge, newest, read_at).await
}

/// Merges `short` into the long-term memory of `memories` when it has
/// something the long-term one lacks and (`wait`) the interval is over
/// ([`long_term_due`]). Whether the long-term memory now holds all of
/// `short`.
async fn merge_long(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    memories: &Memories,
    short: &Memory,
    wait: bool,
) -> Result<bool, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let long = cx
        .store()
        .get_memory(&memories.scope, MemoryKind::Long)
        .await?;
    let lacks = short
        .newest_ts
        .is_some_and(|newest| !covers(long.as_ref(), newest));
    if !lacks {
        return Ok(true);
    }
    if wait && !long_term_due(long.as_ref(), short.newest_ts, settings, now) {
        return Ok(false);
    }
    let merge = memories.merge(long.map(|m| m.content), short.content.clone());
    write_long(cx, report, memories, &merge, short.newest_ts, now).await
}

/// The short-term memory of `memories`, written again first from `task`
/// (awaited only then) when the one stored does not cover `newest`.
async fn refresh_short<T: Fit>(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    memories: &Memories,
    newest: Ts,
    task: impl std::future::Future<Output = Result<T, PortError>>,
) -> Result<Option<Memory>, PortError> {
    let short = cx
        .store()
        .get_memory(&memories.scope, MemoryKind::Short)
        .await?;
    if covers(short.as_ref(), newest) {
        return Ok(short);
    }
    let task = task.await?;
    let written = write(cx, report, memories.short(), &task, Some(newest), cx.now()).await?;
    if written {
        return cx
            .store()
            .get_memory(&memories.scope, MemoryKind::Short)
            .await;
    }
    Ok(short)
}

/// Whether `memory` covers the messages up to `newest`.
pub(crate) fn covers(memory: Option<&Memory>, newest: Ts) -> bool {
    memory
        .and_then(|m| m.newest_ts)
        .is_some_and(|covered| covered >= newest)
}

/// Rewrites a channel's long-term memory from its remaining messages alone
/// (as far back as they are kept), or removes it when none remains or the
/// rewrite fails.
async fn rebuild_channel_long(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    id: &ChannelId,
) -> Result<(), PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let messages = cx.store().messages_after(id, None, WINDOW_MESSAGES).await?;
    let channel = super::context::channel(cx, id).await?;
    let memories = Memories::of_channel(&channel);
    let newest = messages.iter().map(|m| m.ts).max();
    let rewritten = match newest {
        None => false,
        Some(_) => {
            let task = WindowTask {
                channel_name: channel.name.clone(),
                window_hours: settings.message_retention_days.saturating_mul(24),
                messages: views(cx, &messages).await?,
            };
            write_long_afresh(cx, report, &memories, &task, newest, now).await?
        }
    };
    if !rewritten {
        let scope = memories.scope;
        cx.store().delete_memory(&scope, MemoryKind::Long).await?;
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

/// Clears a channel's short-term memory `short` when nothing happened
/// within its window: "recent events" from days ago would mislead. The
/// long-term memory keeps them.
async fn clear_quiet(cx: &JobContext<'_>, short: Memory) -> Result<(), PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let scope = short.scope.clone();
    let cleared = Memory {
        content: String::new(),
        updated_at: now,
        ..short
    };
    cx.store()
        .put_memory(&cleared, memory_retention(settings, now))
        .await?;
    tracing::info!(%scope, "channel short-term memory cleared: a quiet window");
    Ok(())
}

/// The open channels' memories of `kind`, as the workspace prompts list
/// them, and the newest message they cover.
async fn channel_lines(
    cx: &JobContext<'_>,
    open: &[OpenChannel],
    kind: MemoryKind,
) -> Result<(Vec<ChannelLine>, Option<Ts>), PortError> {
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
        if let Some(m) = cx.store().get_memory(&scope, kind).await? {
            newest = newest.max(m.newest_ts);
            lines.push(ChannelLine {
                name: channel.name.clone(),
                memory: m.content,
                last_active: Some(*last_active),
            });
        }
    }
    Ok((lines, newest))
}

/// Writes the workspace's long-term memory again from the open channels'
/// long-term memories (already free of what was forgotten).
async fn rebuild_workspace_long(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    open: &[OpenChannel],
) -> Result<(), PortError> {
    let (lines, newest) = channel_lines(cx, open, MemoryKind::Long).await?;
    if lines.is_empty() {
        return Ok(());
    }
    let task = WorkspaceTask { channels: lines };
    let memories = Memories::of_workspace();
    write_long_afresh(cx, report, &memories, &task, newest, cx.now()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = Settings {
            long_term_update_interval_seconds: 3_600,
            ..Settings::default()
        };
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
