//! Forgetting: what was deleted or edited, or said in a channel that became
//! less visible, leaves every memory that may hold it, at once (a
//! [`myao_domain::Job::Forget`]) and at the start of each memory run.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use super::{
    open_channels, rebuild_channel_long, rebuild_thread, rebuild_workspace_long, MemoryReport,
};
use crate::{JobContext, Services};
use myao_core::ports::PortError;
use myao_domain::{ChannelId, Forget, MemoryKind, MemoryScope, Ts};

/// Whether a deletion or an edit that concerns `scope` came after
/// `read_at` (the workspace memories concern every channel).
pub(super) async fn forgotten_since(
    cx: &JobContext<'_>,
    scope: &MemoryScope,
    read_at: DateTime<Utc>,
) -> Result<bool, PortError> {
    Ok(cx.svc.ports.store.forgets().await?.iter().any(|f| {
        f.at > read_at
            && match scope {
                MemoryScope::Workspace => true,
                MemoryScope::Channel { channel } | MemoryScope::Thread { channel, .. } => {
                    f.channel == *channel
                }
            }
    }))
}

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
    let (svc, now) = (cx.svc, cx.now);
    let forgets = svc.ports.store.forgets().await?;
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
            .ports
            .store
            .get_channel(&f.channel)
            .await?
            .is_none_or(|r| r.channel.visibility.is_open() || r.checked_at.is_none());
        if fed {
            workspace.push(f);
        }
    }
    // 1. Remove: the facts that came from a deleted or edited message
    // (`forget_facts_from` reads the channel's facts once per message), then
    // the memories that may hold it.
    let mut speakers = BTreeSet::new();
    for f in &forgets {
        if f.is_whole_channel() {
            // Made private: its facts no longer back anyone's topics.
            for fact in svc.ports.store.facts(&f.channel).await? {
                speakers.extend(fact.speakers);
            }
            continue;
        }
        let gone = crate::reflection::forget_facts_from(svc, &f.channel, f.ts).await?;
        if !gone.is_empty() {
            tracing::info!(channel = %f.channel, "facts of a deleted or edited message forgotten");
        }
        speakers.extend(gone);
    }
    // Their topics go with them: a profile is shown in every channel.
    crate::reflection::prune_topics(svc, &speakers).await?;
    let mut stale_threads = Vec::new();
    for ((channel, root), fs) in &threads {
        let scope = MemoryScope::Thread {
            channel: channel.clone(),
            thread_ts: *root,
        };
        if remove_if_covered(cx, &scope, MemoryKind::Short, fs).await? {
            stale_threads.push((channel.clone(), *root));
        }
    }
    let mut stale_longs = Vec::new();
    for (id, fs) in &channels {
        let scope = MemoryScope::Channel {
            channel: id.clone(),
        };
        remove_if_covered(cx, &scope, MemoryKind::Short, fs).await?;
        if remove_if_covered(cx, &scope, MemoryKind::Long, fs).await? {
            stale_longs.push(id.clone());
        }
    }
    let scope = MemoryScope::Workspace;
    remove_if_covered(cx, &scope, MemoryKind::Short, &workspace).await?;
    let rebuild_workspace_long =
        remove_if_covered(cx, &scope, MemoryKind::Long, &workspace).await?;

    // 2. Write again from what remains.
    for (channel, root) in stale_threads {
        report.merge(rebuild_thread(cx, &channel, root).await?);
    }
    for id in stale_longs {
        rebuild_channel_long(cx, report, &id).await?;
    }

    // 3. Handled; each stays pending a while for the writes in flight.
    for f in &forgets {
        if now - f.at >= Duration::minutes(FORGET_GRACE_MINUTES) {
            svc.ports.store.clear_forget(f).await?;
        }
    }
    Ok(rebuild_workspace_long)
}

/// Removes the memory of `scope` and `kind` when it may hold one of the
/// messages `forgets` names; whether it did.
async fn remove_if_covered(
    cx: &JobContext<'_>,
    scope: &MemoryScope,
    kind: MemoryKind,
    forgets: &[&Forget],
) -> Result<bool, PortError> {
    let store = &cx.svc.ports.store;
    let Some(memory) = store.get_memory(scope, kind).await? else {
        return Ok(false);
    };
    if !forgets.iter().any(|f| f.may_be_in(&memory)) {
        return Ok(false);
    }
    store.delete_memory(scope, kind).await?;
    Ok(true)
}
