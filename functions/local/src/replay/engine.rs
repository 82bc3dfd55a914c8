//! The replay's engine, what it holds from one step to the next: its own
//! module so that the steps, the parent's and [`super::jobs`]' alike, name
//! it without leaning on the module that runs the replay.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use myao_core::adapters::system::ManualClock;
use myao_core::adapters::twins::{JobBoard, MemoryStore};
use myao_core::app::ingest::Ingest;
use myao_domain::{Channel, ChannelId, Settings, TeamId, Ts, UserId};
use myao_services::Services;

use super::marks::Marks;
use super::react::React;
use crate::timeline::{Sink, Summary};
use crate::twins::MeteredLlm;

pub(super) struct Engine<'a> {
    pub(super) clock: Arc<ManualClock>,
    pub(super) store: Arc<MemoryStore>,
    pub(super) board: Arc<JobBoard>,
    pub(super) ingest: Ingest,
    pub(super) services: Services,
    pub(super) llm: Arc<MeteredLlm>,
    pub(super) sink: &'a mut dyn Sink,
    pub(super) dry_run: bool,
    pub(super) prompts_dir: Option<PathBuf>,
    pub(super) prompt_count: usize,
    pub(super) bot: UserId,
    pub(super) timezone: chrono_tz::Tz,
    pub(super) users: HashMap<UserId, String>,
    pub(super) channels: HashMap<ChannelId, Channel>,
    pub(super) threads: BTreeSet<(ChannelId, Ts)>,
    pub(super) channels_seen: BTreeSet<ChannelId>,
    /// Whether anything was stored, edited or deleted since the last sweep.
    pub(super) changed_since_sweep: bool,
    /// Whether the last sweep (and so the channel and workspace jobs it
    /// fanned out) repeats a dry run with nothing new.
    pub(super) sweep_repeats: bool,
    /// The recurring memory sweep: when it runs next, if it does.
    pub(super) next_sweep: Option<DateTime<Utc>>,
    /// The time between sweeps, and the last instant one may be due (the
    /// last message's).
    pub(super) sweep_every: Option<(Duration, DateTime<Utc>)>,
    pub(super) summary: Summary,
    /// The settings in force, for the hints' emoji lists.
    pub(super) settings: Settings,
    pub(super) react: Option<React>,
    /// How many of the bot's posts the reactor reacted to, by channel.
    pub(super) reacted: HashMap<ChannelId, usize>,
    /// The envelopes made here (the reactor's): their ids.
    pub(super) made: usize,
    /// Each channel's workspace, in a replay of several.
    pub(super) channel_teams: HashMap<ChannelId, TeamId>,
    /// The workspaces' marker words and how their prompts kept apart, in
    /// a replay of several.
    pub(super) isolation: Option<Marks>,
}
