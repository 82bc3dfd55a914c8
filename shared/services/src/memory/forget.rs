//! Forgetting: what was deleted or edited, or said in a channel that became
//! less visible, leaves every memory that may hold it, at once (a
//! [`myao_domain::Job::Forget`]) and at the start of each memory run.

use std::collections::{BTreeMap, BTreeSet};

use chrono::Duration;

use super::write::{open_channels, rebuild_channel_long, rebuild_thread, rebuild_workspace_long};
use crate::{JobContext, MemoryReport, Services};
use myao_core::ports::PortError;
use myao_domain::{ChannelId, Forget, MemoryKind, MemoryScope, Ts};

/// Forgets at once what was deleted, edited, or said in a channel that
/// became less visible (a [`myao_domain::Job::Forget`], queued by ingest).
pub async fn forget_now(svc: &Services) -> Result<MemoryReport, PortError> {
    let cx = JobContext::begin(svc).await?;
    let mut report = MemoryReport::default();
    if forget(&cx, &mut report).await? {
        let open = open_channels(&cx).await?;
        rebuild_workspace_long(&cx, &mut report, &open).await?;
    }
    Ok(report)
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
async fn forget(cx: &JobContext<'_>, report: &mut MemoryReport) -> Result<bool, PortError> {
    let forgets = cx.store().forgets().await?;
    if forgets.is_empty() {
        return Ok(false);
    }
    tracing::info!(
        count = forgets.len(),
        "forgetting deleted and edited messages"
    );
    let holders = Holders::of(cx, &forgets).await?;
    // 1. Remove: the facts that came from a deleted or edited message, then
    // the memories that may hold it.
    forget_facts(cx, &forgets).await?;
    let removed = holders.remove(cx).await?;
    // 2. Write again from what remains.
    for (channel, root) in removed.threads {
        report.merge(rebuild_thread(cx, &channel, root).await?);
    }
    for id in removed.channel_longs {
        rebuild_channel_long(cx, report, &id).await?;
    }
    // 3. Handled; each stays pending a while for the writes in flight.
    clear_handled(cx, &forgets).await?;
    Ok(removed.workspace_long)
}

/// The memories that may hold what is forgotten, each with the forgets
/// that concern it.
struct Holders<'a> {
    /// Each thread's summary, by channel and root.
    threads: BTreeMap<(ChannelId, Ts), Vec<&'a Forget>>,
    /// Each channel's short-term and long-term memories.
    channels: BTreeMap<ChannelId, Vec<&'a Forget>>,
    /// The workspace's memories.
    workspace: Vec<&'a Forget>,
}

/// The memories [`Holders::remove`] removed that are written again at once
/// (a channel's short-term memory waits for the run, from its window).
struct Removed {
    /// The threads whose summary was removed.
    threads: Vec<(ChannelId, Ts)>,
    /// The channels whose long-term memory was removed.
    channel_longs: Vec<ChannelId>,
    /// Whether the workspace's long-term memory was.
    workspace_long: bool,
}

impl<'a> Holders<'a> {
    /// Sorts `forgets` by the memories they concern.
    async fn of(cx: &JobContext<'_>, forgets: &'a [Forget]) -> Result<Holders<'a>, PortError> {
        let mut holders = Holders {
            threads: BTreeMap::new(),
            channels: BTreeMap::new(),
            workspace: Vec::new(),
        };
        for f in forgets {
            if f.is_whole_channel() {
                // The channel's own memories stay for its own members; what it
                // said leaves the workspace memory.
                holders.workspace.push(f);
                continue;
            }
            holders
                .threads
                .entry((f.channel.clone(), f.thread()))
                .or_default()
                .push(f);
            holders
                .channels
                .entry(f.channel.clone())
                .or_default()
                .push(f);
            // Its channel may have fed the workspace memory while it was open.
            let fed = cx
                .store()
                .get_channel(&f.channel)
                .await?
                .is_none_or(|r| r.channel.visibility.is_open() || r.checked_at.is_none());
            if fed {
                holders.workspace.push(f);
            }
        }
        Ok(holders)
    }

    /// Removes each memory that may hold one of its forgets: the threads',
    /// the channels', then the workspace's.
    async fn remove(&self, cx: &JobContext<'_>) -> Result<Removed, PortError> {
        let mut threads = Vec::new();
        for ((channel, root), fs) in &self.threads {
            let scope = MemoryScope::Thread {
                channel: channel.clone(),
                thread_ts: *root,
            };
            if remove_if_covered(cx, &scope, MemoryKind::Short, fs).await? {
                threads.push((channel.clone(), *root));
            }
        }
        let mut channel_longs = Vec::new();
        for (id, fs) in &self.channels {
            let scope = MemoryScope::Channel {
                channel: id.clone(),
            };
            remove_if_covered(cx, &scope, MemoryKind::Short, fs).await?;
            if remove_if_covered(cx, &scope, MemoryKind::Long, fs).await? {
                channel_longs.push(id.clone());
            }
        }
        let scope = MemoryScope::Workspace;
        remove_if_covered(cx, &scope, MemoryKind::Short, &self.workspace).await?;
        let workspace_long =
            remove_if_covered(cx, &scope, MemoryKind::Long, &self.workspace).await?;
        Ok(Removed {
            threads,
            channel_longs,
            workspace_long,
        })
    }
}

/// Removes the facts that came from a deleted or edited message
/// (`forget_facts_from` reads the channel's facts once per message), and
/// the topics they backed, with those of a channel made private.
async fn forget_facts(cx: &JobContext<'_>, forgets: &[Forget]) -> Result<(), PortError> {
    let mut speakers = BTreeSet::new();
    for f in forgets {
        if f.is_whole_channel() {
            // Made private: its facts no longer back anyone's topics.
            for fact in cx.store().facts(&f.channel).await? {
                speakers.extend(fact.speakers);
            }
            continue;
        }
        let gone = crate::reflection::forget_facts_from(cx.store(), &f.channel, f.ts).await?;
        if crate::reflection::forget_sketches(cx.store(), f).await? > 0 {
            tracing::info!(channel = %f.channel, "sketches that may hold a deleted or edited message forgotten");
        }
        if !gone.is_empty() {
            tracing::info!(channel = %f.channel, "facts of a deleted or edited message forgotten");
        }
        speakers.extend(gone);
    }
    // Their topics go with them: a profile is shown in every channel.
    crate::reflection::prune_topics(cx.store(), &speakers).await
}

/// Clears the forgets recorded over [`FORGET_GRACE_MINUTES`] ago; the
/// others stay pending a while for the writes in flight.
async fn clear_handled(cx: &JobContext<'_>, forgets: &[Forget]) -> Result<(), PortError> {
    for f in forgets {
        if cx.now() - f.at >= Duration::minutes(FORGET_GRACE_MINUTES) {
            cx.store().clear_forget(f).await?;
        }
    }
    Ok(())
}

/// Removes the memory of `scope` and `kind` when it may hold one of the
/// messages `forgets` names; whether it did.
async fn remove_if_covered(
    cx: &JobContext<'_>,
    scope: &MemoryScope,
    kind: MemoryKind,
    forgets: &[&Forget],
) -> Result<bool, PortError> {
    let store = cx.store();
    let Some(memory) = store.get_memory(scope, kind).await? else {
        return Ok(false);
    };
    if !forgets.iter().any(|f| f.may_be_in(&memory)) {
        return Ok(false);
    }
    store.delete_memory(scope, kind).await?;
    Ok(true)
}
