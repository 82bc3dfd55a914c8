//! A channel's digest: once enough new messages came (or the oldest waited
//! half the window), one LLM call rewrites from the channel's window its
//! short-term memory, the summaries of the threads that moved, the facts in
//! the new messages and, when due, its long-term memory. Threads beyond
//! [`THREADS_PER_CALL`] are summarised by further calls, that many at a
//! time. An answer out of shape writes nothing: the next run asks again.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{forgotten_since, long_term_due, views, MemoryReport};
use crate::app::reflection::{count_in_profiles, keep_facts};
use crate::app::{memory_retention, JobContext};
use crate::domain::digest::{self, Asked, THREADS_PER_CALL};
use crate::domain::facts::parse_reflection;
use crate::domain::{Channel, Memory, MemoryKind, MemoryScope, Message, Ts, UserId};
use crate::ports::PortError;
use crate::prompts::memory::{digest_request, DigestLine, DigestTask, DigestThread};

/// A thread whose summary does not cover its newest message in the window.
struct Moved {
    root: Ts,
    /// Its newest message in the window.
    newest: Ts,
    /// Its oldest message the summary lacks (the most overdue go first).
    oldest_new: Ts,
    previous: Option<String>,
}

/// Digests `channel`'s `window` (its messages of the short-term window,
/// oldest first), when due.
pub(super) async fn run(
    cx: &JobContext<'_>,
    channel: &Channel,
    window: &[Message],
    report: &mut MemoryReport,
) -> Result<(), PortError> {
    let (svc, settings, now) = (cx.svc, &*cx.settings, cx.now);
    let read_at = svc.ports.clock.now();
    let scope = MemoryScope::Channel {
        channel: channel.id.clone(),
    };
    let covered = svc
        .ports
        .store
        .get_memory(&scope, MemoryKind::Short)
        .await?
        .and_then(|m| m.newest_ts);
    let is_new = |m: &Message| covered.is_none_or(|c| m.ts > c);
    let new = window.iter().filter(|m| is_new(m)).count();
    let oldest_new = window.iter().filter(|m| is_new(m)).map(|m| m.ts).min();
    let Some(newest) = window.iter().map(|m| m.ts).max() else {
        return Ok(());
    };
    // A channel without a short-term memory (new, or one a deletion
    // removed) gets one at once.
    if covered.is_some() && !digest::due(new, oldest_new, settings, now) {
        return Ok(());
    }
    let moved = moved_threads(cx, channel, window).await?;
    let mut messages = window.to_vec();
    for thread in &moved {
        // A thread older than the window: its root says what it is about.
        if !messages.iter().any(|m| m.ts == thread.root) {
            if let Some(root) = svc
                .ports
                .store
                .get_message(&channel.id, thread.root)
                .await?
            {
                messages.push(root);
            }
        }
    }
    messages.sort_by_key(|m| m.ts);
    let long = svc.ports.store.get_memory(&scope, MemoryKind::Long).await?;
    let ask_long = long_term_due(long.as_ref(), Some(newest), settings, now);
    let people_new = window.iter().filter(|m| is_new(m) && !m.is_bot).count();
    let min_facts = settings.reflection_min_messages as usize;
    let ask_facts = min_facts > 0 && people_new >= min_facts;

    let mut batches = moved.chunks(THREADS_PER_CALL);
    let threads = batches.next().unwrap_or_default();
    let first = Call {
        asked: Asked {
            channel: true,
            long: ask_long,
            facts: ask_facts,
            threads: threads.len(),
        },
        previous_long: if ask_long {
            long.map(|m| m.content)
        } else {
            None
        },
        threads,
    };
    let Some(answer) = ask(cx, channel, &messages, covered, &first, report).await? else {
        return Ok(());
    };
    let Ok(found) = answer.digest(&first) else {
        return Ok(());
    };
    if forgotten_since(cx, &scope, read_at).await? {
        tracing::info!(%scope, "digest not written: a message it read was deleted or edited meanwhile");
        return Ok(());
    }
    let memories = [
        (MemoryKind::Short, found.channel.clone()),
        (MemoryKind::Long, found.long.clone()),
    ];
    for (kind, content) in memories {
        if let Some(content) = content {
            keep(cx, report, &scope, kind, content, newest, read_at).await?;
        }
    }
    keep_threads(cx, report, channel, first.threads, &found.threads, read_at).await?;
    // Each message counted once: the channel's memory now covers them.
    count_in_profiles(cx, window, covered).await?;
    if first.asked.facts {
        answer
            .facts(cx, channel, &messages, covered, report)
            .await?;
    }
    for threads in batches {
        let call = Call {
            asked: Asked {
                channel: false,
                long: false,
                facts: false,
                threads: threads.len(),
            },
            previous_long: None,
            threads,
        };
        let roots: Vec<Ts> = threads.iter().map(|t| t.root).collect();
        let theirs: Vec<Message> = messages
            .iter()
            .filter(|m| roots.contains(&m.ts) || m.thread_ts.is_some_and(|t| roots.contains(&t)))
            .cloned()
            .collect();
        let Some(answer) = ask(cx, channel, &theirs, covered, &call, report).await? else {
            continue;
        };
        if let Ok(found) = answer.digest(&call) {
            keep_threads(cx, report, channel, threads, &found.threads, read_at).await?;
        }
    }
    Ok(())
}

/// One call of a digest: what it asks for, and the threads it summarises.
struct Call<'a> {
    asked: Asked,
    previous_long: Option<String>,
    threads: &'a [Moved],
}

/// A digest's answer, with the messages it was shown by their numbers.
struct Answer {
    text: String,
    numbered: Vec<(Ts, UserId)>,
}

impl Answer {
    /// The memories in the answer; out of shape (logged), none.
    fn digest(&self, call: &Call<'_>) -> Result<digest::Digest, ()> {
        let roots: Vec<Ts> = call.threads.iter().map(|t| t.root).collect();
        digest::parse(&self.text, call.asked, &roots).map_err(|error| {
            // The answer may quote the conversation: its length only.
            tracing::warn!(%error, answer_chars = self.text.chars().count(), "digest unusable; no memory written");
        })
    }

    /// Keeps the facts of the answer that come from new messages.
    async fn facts(
        &self,
        cx: &JobContext<'_>,
        channel: &Channel,
        messages: &[Message],
        covered: Option<Ts>,
        report: &mut MemoryReport,
    ) -> Result<(), PortError> {
        debug_assert_eq!(messages.len(), self.numbered.len());
        match parse_reflection(&self.text, &self.numbered) {
            Ok(found) => {
                let new: Vec<_> = found
                    .into_iter()
                    .filter(|f| f.sources.iter().any(|s| covered.is_none_or(|c| *s > c)))
                    .collect();
                keep_facts(cx, &channel.id, new, report).await
            }
            Err(error) => {
                tracing::warn!(%error, "digest's facts unusable; none written");
                Ok(())
            }
        }
    }
}

/// Renders and asks one digest call over `messages`; `None` (logged) when
/// the prompt does not render, or the LLM fails or answers nothing.
async fn ask(
    cx: &JobContext<'_>,
    channel: &Channel,
    messages: &[Message],
    covered: Option<Ts>,
    call: &Call<'_>,
    report: &mut MemoryReport,
) -> Result<Option<Answer>, PortError> {
    let settings = &*cx.settings;
    let shown = views(cx, messages).await?;
    let lines = messages
        .iter()
        .zip(shown)
        .enumerate()
        .map(|(i, (m, view))| DigestLine {
            n: i + 1,
            message: view,
            thread: m.thread_ts.map(|t| t.to_string()),
            new: covered.is_none_or(|c| m.ts > c),
        })
        .collect();
    let task = DigestTask {
        channel_name: channel.name.clone(),
        window_hours: settings.short_term_window_hours,
        ask_channel: call.asked.channel,
        ask_long: call.asked.long,
        ask_facts: call.asked.facts,
        previous_long: call.previous_long.clone(),
        threads: call
            .threads
            .iter()
            .map(|t| DigestThread {
                ts: t.root.to_string(),
                previous: t.previous.clone(),
            })
            .collect(),
        messages: lines,
    };
    let request = match digest_request(settings, cx.now, &task) {
        Ok(request) => request,
        Err(error) => {
            tracing::error!(%error, channel = %channel.id, "digest prompt failed to render");
            return Ok(None);
        }
    };
    report.llm_calls += 1;
    let text = match cx.svc.llm.complete(&request).await {
        Ok(reply) => reply.text,
        Err(error) => {
            tracing::warn!(%error, channel = %channel.id, "digest not written: LLM failed");
            return Ok(None);
        }
    };
    let numbered = messages.iter().map(|m| (m.ts, m.user.clone())).collect();
    Ok(Some(Answer { text, numbered }))
}

/// The threads of `window` whose summary lacks a message of it, the most
/// overdue first.
async fn moved_threads(
    cx: &JobContext<'_>,
    channel: &Channel,
    window: &[Message],
) -> Result<Vec<Moved>, PortError> {
    let mut spans: BTreeMap<Ts, Vec<Ts>> = BTreeMap::new();
    for m in window {
        if let Some(root) = m.thread_ts {
            spans.entry(root).or_default().push(m.ts);
        }
    }
    let mut moved = Vec::new();
    for (root, replies) in spans {
        let scope = MemoryScope::Thread {
            channel: channel.id.clone(),
            thread_ts: root,
        };
        let previous = cx
            .svc
            .ports
            .store
            .get_memory(&scope, MemoryKind::Short)
            .await?;
        let covered = previous.as_ref().and_then(|m| m.newest_ts);
        let lacking: Vec<Ts> = replies
            .into_iter()
            .filter(|ts| covered.is_none_or(|c| *ts > c))
            .collect();
        if let (Some(&oldest_new), Some(&newest)) = (lacking.iter().min(), lacking.iter().max()) {
            moved.push(Moved {
                root,
                newest,
                oldest_new,
                previous: previous.map(|m| m.content),
            });
        }
    }
    moved.sort_by_key(|t| (t.oldest_new, t.root));
    Ok(moved)
}

/// Stores the summaries `found` of the threads asked for.
async fn keep_threads(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    channel: &Channel,
    asked: &[Moved],
    found: &[(Ts, String)],
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    for (root, summary) in found {
        let Some(thread) = asked.iter().find(|t| t.root == *root) else {
            continue;
        };
        let scope = MemoryScope::Thread {
            channel: channel.id.clone(),
            thread_ts: *root,
        };
        if forgotten_since(cx, &scope, read_at).await? {
            continue;
        }
        let content = summary.clone();
        keep(
            cx,
            report,
            &scope,
            MemoryKind::Short,
            content,
            thread.newest,
            read_at,
        )
        .await?;
    }
    Ok(())
}

/// Stores one memory the digest wrote.
async fn keep(
    cx: &JobContext<'_>,
    report: &mut MemoryReport,
    scope: &MemoryScope,
    kind: MemoryKind,
    content: String,
    newest: Ts,
    read_at: DateTime<Utc>,
) -> Result<(), PortError> {
    let memory = Memory {
        scope: scope.clone(),
        kind,
        content,
        updated_at: read_at,
        newest_ts: Some(newest),
    };
    let retention = memory_retention(&cx.settings, cx.now);
    cx.svc.ports.store.put_memory(&memory, retention).await?;
    tracing::info!(%scope, kind = kind.as_str(), "memory written");
    report.written.push((scope.clone(), kind));
    Ok(())
}
