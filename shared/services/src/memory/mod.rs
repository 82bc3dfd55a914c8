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

use chrono::Duration;

mod digest;
mod forget;
mod write;

pub use forget::forget_now;
use write::{
    channel_lines, clear_quiet, merge_long, open_channels, refresh_short, Memories, WINDOW_MESSAGES,
};

use crate::prompts::memory::WorkspaceTask;
use crate::reflection::{clean_facts, embed_older};
pub use crate::MemoryReport;
use crate::{JobContext, Services};
use myao_core::ports::PortError;
use myao_domain::digest::Backoff;
use myao_domain::metrics::{self, Datum};
use myao_domain::{ChannelId, ChannelMemoryJob, Job, MemoryKind, Ts};

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
