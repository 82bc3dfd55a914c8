//! How a memory is written: the prompt that asks for it, the LLM's answer,
//! and the store, with the checks between (a deletion meanwhile drops the
//! write); the digest, the forget pass and the runs of [`super`] all write
//! through it.

use chrono::{DateTime, Duration, Utc};

use crate::context::{prompt_names, Names};
use crate::prompts::memory::{
    ChannelLine, Fit, MemoryPrompt, MergeTask, ThreadTask, WindowTask, WorkspaceTask,
};
use crate::prompts::MessageView;
use crate::{JobContext, MemoryReport};
use myao_core::app::memory_retention;
use myao_core::ports::PortError;
use myao_domain::privacy::{may_use, Audience, Source};
use myao_domain::{Channel, ChannelId, Memory, MemoryKind, MemoryScope, Message, Settings, Ts};

/// At most this many messages of one thread go into its memory prompt.
const THREAD_MESSAGES: usize = 200;
/// At most this many messages of one channel's window go into its memory prompt.
pub(super) const WINDOW_MESSAGES: usize = 500;

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
pub(super) async fn rebuild_thread(
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
    let ch = crate::context::channel(cx, channel).await?;
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

/// A channel whose words may reach the workspace memory, and when it was
/// last active (a workspace prompt over its budget drops the least recent).
pub(super) struct OpenChannel {
    channel: Channel,
    last_active: DateTime<Utc>,
}

/// The channels active within `active_channel_days` whose words may reach
/// the workspace memory, by their visibility checked with Slack lately,
/// sorted by name.
pub(super) async fn open_channels(cx: &JobContext<'_>) -> Result<Vec<OpenChannel>, PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let active_since = now - Duration::days(i64::from(settings.active_channel_days));
    let mut open = Vec::new();
    for record in cx.store().channels().await? {
        if record.last_active < active_since {
            continue;
        }
        let channel = crate::context::channel(cx, &record.channel.id).await?;
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
pub(super) struct Memories {
    pub(super) scope: MemoryScope,
    /// The channel's name, as the prompts show it; empty for the workspace.
    channel_name: String,
    /// The short-term template, which summarises what happened.
    short_template: &'static str,
    /// The long-term template, which merges a summary into a dated history.
    long_template: &'static str,
}

impl Memories {
    pub(super) fn of_channel(channel: &Channel) -> Memories {
        Memories {
            scope: MemoryScope::Channel {
                channel: channel.id.clone(),
            },
            channel_name: channel.name.clone(),
            short_template: "memory_channel_short.j2",
            long_template: "memory_channel_long.j2",
        }
    }

    pub(super) fn of_workspace() -> Memories {
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
pub(super) async fn merge_long(
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
pub(super) async fn refresh_short<T: Fit>(
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
fn covers(memory: Option<&Memory>, newest: Ts) -> bool {
    memory
        .and_then(|m| m.newest_ts)
        .is_some_and(|covered| covered >= newest)
}

/// Rewrites a channel's long-term memory from its remaining messages alone
/// (as far back as they are kept), or removes it when none remains or the
/// rewrite fails.
pub(super) async fn rebuild_channel_long(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    id: &ChannelId,
) -> Result<(), PortError> {
    let (settings, now) = (cx.settings(), cx.now());
    let messages = cx.store().messages_after(id, None, WINDOW_MESSAGES).await?;
    let channel = crate::context::channel(cx, id).await?;
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
pub(super) fn long_term_due(
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
pub(super) async fn clear_quiet(cx: &JobContext<'_>, short: Memory) -> Result<(), PortError> {
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
pub(super) async fn channel_lines(
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
pub(super) async fn rebuild_workspace_long(
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

/// Whether a deletion or an edit that concerns `scope` came after
/// `read_at` (the workspace memories concern every channel).
pub(super) async fn forgotten_since(
    cx: &JobContext<'_>,
    scope: &MemoryScope,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    Ok(cx.store().forgets().await?.iter().any(|f| {
        f.at > read_at
            && match scope {
                MemoryScope::Workspace => true,
                MemoryScope::Channel { channel } | MemoryScope::Thread { channel, .. } => {
                    f.channel == *channel
                }
            }
    }))
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
