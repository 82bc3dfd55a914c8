//! The replay: a Slack export fed through the same ingest, judgment,
//! response and memory code as production, on a virtual clock.
//!
//! The embedded adapters stand in for AWS (the in-memory store, the job
//! board as both scheduler and queue), a [`ManualClock`] for time and a
//! seeded [`SplitMix`] for the jitter, so a replay is exact and repeatable.
//! The clock jumps from one instant to the next: the next message of the
//! export, or the next job due on the board, whichever is first (a job due
//! at the same instant as a message runs first, as it was made earlier).
//! After the last message the jobs still pending run in turn, up to a
//! bound. The hourly memory run of production (an EventBridge schedule) is
//! a [`Job::MemorySweep`] every `memory_interval` of virtual time while
//! messages are left, plus a last one at the end. Like that schedule it is
//! one pending sweep, armed again after each run; it runs before the board's
//! jobs due at the same instant.

use myao_core::ports::Messages;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use chrono::{DateTime, Duration, Utc};
use myao_core::adapters::system::{ManualClock, SplitMix, StaticSecrets};
use myao_core::app::ingest::{Ingest, Outcome};
use myao_core::app::install::BOT_SCOPES;
use myao_core::ports::{Clock, Embedder, Llm};
use myao_core::wire::Twins;
use myao_domain::hints::{reaction_hint, Hint};
use myao_domain::install::{Installation, Token};
use myao_domain::text::render_slack_text;
use myao_domain::{Channel, ChannelId, Job, Message, Settings, TeamId, Ts, UserId, Visibility};
use myao_services::Services;
use myao_slack::event::{Envelope, Reaction, SlackEvent};

use crate::export::Export;
use crate::timeline::{Event, EventKind, Header, HintGiven, Prompt, Sink, Summary};
use crate::twins::{DryRunLlm, MeteredLlm, ReplaySlack};

mod engine;
mod jobs;
mod marks;
mod react;

use engine::Engine;
use marks::Marks;

pub use react::{React, REACTOR};

/// The bot's user id when none is given.
pub const DEFAULT_BOT_USER_ID: &str = "UMYAO";
/// After the last message, at most this many rounds of due jobs run.
pub const MAX_DRAIN_ROUNDS: usize = 10_000;

/// How to replay.
#[derive(Clone)]
pub struct Options {
    /// The settings in force (`bot_user_id` is set to [`Options::bot_user_id`]).
    pub settings: Settings,
    pub bot_user_id: UserId,
    /// The LLM; `None` for a dry run.
    pub llm: Option<Arc<dyn Llm>>,
    /// How the LLM is shown in the header (its endpoint).
    pub llm_label: Option<String>,
    /// Write each prompt there as `NNN-role.txt`.
    pub prompts_dir: Option<PathBuf>,
    /// Virtual time between memory sweeps; `None` for none at all.
    pub memory_interval: Option<Duration>,
    pub seed: u64,
    /// A member who reacts to the bot's first unprompted posts in each
    /// channel (`--react`), to see what the hints change.
    pub react: Option<React>,
    /// What tells the meaning of facts and conversations (recall by
    /// meaning); `None`: recall by words only.
    pub embedder: Option<Arc<dyn Embedder>>,
}

impl Options {
    /// A dry run with `settings`, the default bot id, an hourly sweep and seed 0.
    pub fn dry_run(settings: Settings) -> Options {
        Options {
            settings,
            bot_user_id: UserId::parse(DEFAULT_BOT_USER_ID)
                .unwrap_or_else(|_| unreachable!("a valid id")),
            llm: None,
            llm_label: None,
            prompts_dir: None,
            memory_interval: Some(Duration::hours(1)),
            seed: 0,
            react: None,
            embedder: None,
        }
    }
}

/// Replays `export`, writing the timeline and the summary to `sink`, and
/// returns the summary.
pub async fn run(
    export: &Export,
    options: Options,
    sink: &mut dyn Sink,
) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let mut settings = options.settings.clone();
    settings.bot_user_id = Some(options.bot_user_id.clone());
    let teams = export.teams();
    if !teams.is_empty() {
        // A stack installed in each workspace, taking theirs alone.
        settings
            .slack_client_id
            .get_or_insert_with(|| "replay".to_owned());
        settings.installed_workspaces_only = true;
    }
    let first = export.entries.first().map(|e| e.time());
    let last = export.entries.last().map(|e| e.time());

    let mut engine = Engine::new(export, &options, &settings, first, sink)?;
    engine
        .install(&teams, first.unwrap_or_else(Utc::now))
        .await?;
    let header = header(export, &options, &settings, first, last);
    engine.sink.header(&header)?;

    if let (Some(first), Some(last), Some(interval)) = (first, last, options.memory_interval) {
        engine.plan_sweeps(first, last, interval);
    }
    engine.play(export).await?;
    if options.memory_interval.is_some() && first.is_some() {
        // The last sweep, once every conversation has settled.
        engine.run_job(Job::MemorySweep).await?;
        engine.drain().await?;
    }

    let summary = engine.closing_summary(first, started).await?;
    engine.sink.summary(&summary)?;
    Ok(summary)
}

/// What the replay is about to do, for the timeline's head.
fn header(
    export: &Export,
    options: &Options,
    settings: &Settings,
    first: Option<DateTime<Utc>>,
    last: Option<DateTime<Utc>>,
) -> Header {
    Header {
        source: export.source.clone(),
        channels: export.channels.clone(),
        users: export.users.len(),
        entries: export.entries.len(),
        first,
        last,
        bot_user_id: options.bot_user_id.clone(),
        bot_name: settings.persona_name.clone(),
        llm: options.llm.is_some().then(|| {
            options
                .llm_label
                .clone()
                .unwrap_or_else(|| "an LLM given by the caller".to_owned())
        }),
        min_wait_seconds: settings.min_wait_seconds,
        jitter_ratio: settings.jitter_ratio,
        autonomous_replies: settings.autonomous_replies,
        memory_interval_seconds: options.memory_interval.map(|d| d.num_seconds()),
        seed: options.seed,
        timezone: settings.timezone,
    }
}

/// The names the timeline shows, by user id: the export's users, and the
/// bot by its persona's name.
fn user_names(export: &Export, options: &Options, settings: &Settings) -> HashMap<UserId, String> {
    let mut users: HashMap<UserId, String> = export
        .users
        .iter()
        .map(|u| (u.id.clone(), u.name.clone()))
        .collect();
    users.insert(options.bot_user_id.clone(), settings.persona_name.clone());
    users
}

impl<'a> Engine<'a> {
    /// The production services over the twins, on a virtual clock starting
    /// at the first entry, with the LLM metered (or the dry run's) and
    /// Slack played by the export; the prompts' folder made, if asked for.
    fn new(
        export: &Export,
        options: &Options,
        settings: &Settings,
        first: Option<DateTime<Utc>>,
        sink: &'a mut dyn Sink,
    ) -> anyhow::Result<Engine<'a>> {
        let twins = Twins::new(Arc::new(ManualClock::new(first.unwrap_or_else(Utc::now))));
        let ports = twins.ports(SplitMix::seeded(options.seed), settings.clone());
        let Twins {
            clock,
            store,
            board,
            ..
        } = twins;
        let dry_run = options.llm.is_none();
        let inner: Arc<dyn Llm> = options.llm.clone().unwrap_or_else(|| Arc::new(DryRunLlm));
        let isolation = Marks::of(export);
        // A replay of several workspaces reads every prompt for its tally.
        let llm = Arc::new(MeteredLlm::new(
            inner,
            dry_run || options.prompts_dir.is_some() || isolation.is_some(),
        ));
        let slack = Arc::new(ReplaySlack::new(
            clock.clone(),
            options.bot_user_id.clone(),
            &export.users,
            &export.channels,
            export.entries.iter().map(|e| (e.channel.clone(), e.ts)),
        ));
        // Envelopes are built here, never signed: no secret is read.
        let ingest = Ingest::new(ports.clone(), Arc::new(StaticSecrets::new()), "");
        let mut services = Services::new(ports, llm.clone(), slack);
        if let Some(embedder) = &options.embedder {
            services.recall_by_meaning_with(embedder.clone());
        }
        if let Some(dir) = &options.prompts_dir {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the prompts folder {}", dir.display()))?;
        }
        Ok(Engine {
            clock,
            store,
            board,
            ingest,
            services,
            llm,
            sink,
            dry_run,
            prompts_dir: options.prompts_dir.clone(),
            prompt_count: 0,
            bot: options.bot_user_id.clone(),
            timezone: settings.timezone,
            users: user_names(export, options, settings),
            channels: export
                .channels
                .iter()
                .map(|c| (c.id.clone(), c.clone()))
                .collect(),
            threads: BTreeSet::new(),
            channels_seen: BTreeSet::new(),
            changed_since_sweep: true,
            sweep_repeats: false,
            next_sweep: None,
            sweep_every: None,
            summary: Summary {
                dry_run,
                first,
                ..Summary::default()
            },
            settings: settings.clone(),
            react: options.react.clone(),
            reacted: HashMap::new(),
            made: 0,
            channel_teams: export
                .entries
                .iter()
                .filter_map(|e| Some((e.channel.clone(), e.team.clone()?)))
                .collect(),
            isolation,
        })
    }

    /// Installs the app in each workspace of a replay of several, as
    /// "Add to Slack" would at `at` (one bot, the replay's).
    async fn install(&mut self, teams: &[TeamId], at: DateTime<Utc>) -> anyhow::Result<()> {
        for team in teams {
            let installation = Installation {
                team: team.clone(),
                enterprise: None,
                team_name: team.to_string(),
                bot_user_id: self.bot.clone(),
                scopes: BOT_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
                bot_token: Token::new(format!("xoxb-replay-{team}")),
                rotation: None,
                installed_at: at,
            };
            self.services
                .ports
                .store
                .put_installation(&installation)
                .await?;
        }
        Ok(())
    }

    /// Counts the prompts of a job of `team`, in a replay of several.
    fn tally(&mut self, team: Option<&TeamId>, prompts: &[Prompt]) {
        if let Some(marks) = &mut self.isolation {
            marks.count(team, prompts);
        }
    }

    /// The closing summary: the counts kept along the way, with the facts
    /// the bot ends up knowing, the LLM's use and the jobs left.
    async fn closing_summary(
        &mut self,
        first: Option<DateTime<Utc>>,
        started: Instant,
    ) -> anyhow::Result<Summary> {
        let mut summary = std::mem::take(&mut self.summary);
        // The stack's own part, and each workspace's in a replay of several.
        let stack = self.services.ports.store.clone();
        let mut stores = vec![stack.clone()];
        if let Some(marks) = &self.isolation {
            stores.extend(marks.by_team.keys().map(|team| stack.for_team(team)));
        }
        for id in &self.channels_seen {
            let name = self
                .channels
                .get(id)
                .map_or_else(|| id.to_string(), |c| c.name.clone());
            for store in &stores {
                let mut facts = store.facts(id).await?;
                facts.retain(|f| !f.outdated);
                facts.sort_by(|a, b| a.id.cmp(&b.id));
                summary
                    .learnt
                    .extend(facts.into_iter().map(|f| (name.clone(), f.text)));
            }
        }
        summary.threads = self.threads.len();
        summary.channels = self.channels_seen.len();
        summary.llm = self.llm.stats();
        summary.prompts_written = if self.prompts_dir.is_some() {
            self.prompt_count
        } else {
            0
        };
        summary.jobs_left = self.board.scheduled().len() + self.board.queued().len();
        summary.isolation = self.isolation.as_ref().map(|m| m.tally.clone());
        summary.last = Some(self.clock.now()).filter(|_| first.is_some());
        summary.elapsed = started.elapsed();
        Ok(summary)
    }
}

impl Engine<'_> {
    /// Arms the first recurring memory sweep, `interval` after the first
    /// message, if a message is left by then.
    fn plan_sweeps(&mut self, first: DateTime<Utc>, last: DateTime<Utc>, interval: Duration) {
        if interval <= Duration::zero() {
            return;
        }
        self.sweep_every = Some((interval, last));
        self.next_sweep = Self::sweep_after(first, interval, last);
    }

    /// The sweep after one at `at`: `interval` later, if that is still
    /// within the messages (and within chrono's calendar).
    fn sweep_after(
        at: DateTime<Utc>,
        interval: Duration,
        last: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        at.checked_add_signed(interval).filter(|next| *next <= last)
    }

    /// When the next job falls due: the board's, or the recurring sweep.
    fn next_due(&self) -> Option<DateTime<Utc>> {
        match (self.board.next_due(), self.next_sweep) {
            (Some(job), Some(sweep)) => Some(job.min(sweep)),
            (job, sweep) => job.or(sweep),
        }
    }

    /// Feeds every entry in time order, running the jobs that fall due in
    /// between, then the jobs left (bounded).
    async fn play(&mut self, export: &Export) -> anyhow::Result<()> {
        let mut next = export.entries.iter().enumerate().peekable();
        loop {
            let entry_at = next.peek().map(|(_, e)| e.time());
            let job_at = self.next_due();
            match (entry_at, job_at) {
                (None, None) => return Ok(()),
                (None, Some(_)) => return self.drain().await,
                (Some(m), Some(j)) if j <= m => self.run_due(j).await?,
                (Some(_), _) => {
                    if let Some((i, entry)) = next.next() {
                        self.feed(i, entry).await?;
                    }
                }
            }
        }
    }

    /// Runs the pending jobs in due order until none is left, at most
    /// [`MAX_DRAIN_ROUNDS`] rounds.
    async fn drain(&mut self) -> anyhow::Result<()> {
        for _ in 0..MAX_DRAIN_ROUNDS {
            match self.next_due() {
                Some(at) => self.run_due(at).await?,
                None => return Ok(()),
            }
        }
        Ok(())
    }

    /// Runs what is due at `at`: the recurring sweep first (armed before
    /// every other job, as production's schedule is), then the board's jobs
    /// in due order.
    async fn run_due(&mut self, at: DateTime<Utc>) -> anyhow::Result<()> {
        self.clock.set(at);
        if let (Some(sweep), Some((interval, last))) = (self.next_sweep, self.sweep_every) {
            if sweep <= at {
                self.next_sweep = Self::sweep_after(sweep, interval, last);
                self.run_job(Job::MemorySweep).await?;
            }
        }
        for due in self.board.take_due(self.clock.now()) {
            self.run_job_as(due.team, due.job).await?;
        }
        Ok(())
    }

    fn channel(&self, id: &ChannelId) -> Channel {
        self.channels.get(id).cloned().unwrap_or_else(|| Channel {
            id: id.clone(),
            name: id.to_string(),
            visibility: Visibility::UNKNOWN,
        })
    }

    fn user_name(&self, id: &UserId) -> String {
        self.users
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn emit(
        &mut self,
        channel: Option<&ChannelId>,
        thread_ts: Option<Ts>,
        kind: EventKind,
    ) -> anyhow::Result<()> {
        let event = Event {
            at: self.clock.now(),
            channel: channel.map(|c| self.channel(c)),
            thread_ts,
            kind,
        };
        self.sink.event(&event)?;
        Ok(())
    }

    /// Feeds one export entry to ingest, exactly as a live event.
    async fn feed(&mut self, i: usize, entry: &crate::export::Entry) -> anyhow::Result<()> {
        self.clock.set(entry.time());
        let now = self.clock.now();
        // What an edit or a deletion changes, for the timeline.
        let before = match &entry.event {
            SlackEvent::Edited { channel, ts, .. } | SlackEvent::Deleted { channel, ts, .. } => {
                self.store.get_message(channel, *ts).await?
            }
            _ => None,
        };
        let envelope = Envelope::Event {
            event_id: format!("Ev{i:08}"),
            bot_user_id: Some(self.bot.clone()),
            api_app_id: None,
            team_id: entry.team.as_ref().map(ToString::to_string),
            event: entry.event.clone(),
        };
        let (outcome, _) = self.ingest.process(envelope, now).await?;
        if matches!(
            outcome,
            Outcome::Stored { .. } | Outcome::Edited | Outcome::Deleted
        ) {
            self.changed_since_sweep = true;
        }
        self.fed(entry, outcome, before.as_ref())
    }

    /// What ingest made of a fed entry, counted and in the timeline;
    /// `before`: the message an edit or a deletion changed, if known.
    fn fed(
        &mut self,
        entry: &crate::export::Entry,
        outcome: Outcome,
        before: Option<&Message>,
    ) -> anyhow::Result<()> {
        let channel = &entry.channel;
        match (outcome, &entry.event) {
            (Outcome::Stored { .. }, SlackEvent::NewMessage { message, .. }) => {
                self.summary.messages += 1;
                self.channels_seen.insert(channel.clone());
                if let Some(root) = message.thread_ts {
                    self.threads.insert((channel.clone(), root));
                }
                let shown = render_slack_text(&message.text, |id| {
                    UserId::parse(id).ok().map(|u| self.user_name(&u))
                });
                let kind = EventKind::Message {
                    ts: message.ts,
                    user: message.user.clone(),
                    user_name: self.user_name(&message.user),
                    text: message.text.clone(),
                    shown,
                    is_bot: message.is_bot || message.user == self.bot,
                };
                self.emit(Some(channel), message.thread_ts, kind)?;
            }
            (Outcome::Edited, SlackEvent::Edited { ts, text, .. }) => {
                self.summary.edits += 1;
                let kind = EventKind::Edited {
                    ts: *ts,
                    user_name: before.as_ref().map(|m| self.user_name(&m.user)),
                    text: text.clone(),
                    known: before.is_some(),
                };
                let thread = before.as_ref().and_then(|m| m.thread_ts);
                self.emit(Some(channel), thread, kind)?;
            }
            (Outcome::Deleted, SlackEvent::Deleted { ts, .. }) => {
                self.summary.deletions += 1;
                let kind = EventKind::Deleted {
                    ts: *ts,
                    user_name: before.as_ref().map(|m| self.user_name(&m.user)),
                    text: before.as_ref().map(|m| m.text.clone()),
                };
                let thread = before.as_ref().and_then(|m| m.thread_ts);
                self.emit(Some(channel), thread, kind)?;
            }
            (Outcome::Hinted { .. }, SlackEvent::Reaction(reaction)) => {
                self.hinted(reaction)?;
            }
            (outcome, _) => {
                let reason = match outcome {
                    Outcome::Ignored(reason) => reason.to_string(),
                    Outcome::Duplicate => "a message seen before".to_owned(),
                    other => format!("{other:?}"),
                };
                *self.summary.skipped.entry(reason.clone()).or_insert(0) += 1;
                // An export's reactions on people's messages, or not hints:
                // counted, not a line each.
                if !matches!(entry.event, SlackEvent::Reaction(_)) {
                    self.emit(Some(channel), None, EventKind::Skipped { reason })?;
                }
            }
        }
        Ok(())
    }
}

impl Engine<'_> {
    /// A reaction on the bot's post that ingest kept as a hint, in the
    /// timeline.
    fn hinted(&mut self, reaction: &Reaction) -> anyhow::Result<()> {
        let hint = match reaction_hint(&reaction.emoji, &self.settings) {
            Some(Hint::Positive) => "positive",
            Some(Hint::Negative) => "negative",
            Some(Hint::Mute { .. }) => "mute",
            None => return Ok(()),
        };
        self.summary.hints += 1;
        let kind = EventKind::Hint(HintGiven {
            on: reaction.ts,
            user_name: self.user_name(&reaction.user),
            emoji: reaction.emoji.as_str().to_owned(),
            hint: hint.to_owned(),
            withdrawn: !reaction.added,
        });
        self.emit(Some(&reaction.channel), None, kind)
    }

    /// `--react`: the reactor's reaction on the bot's unprompted post `ts`
    /// in `channel`, while it has reacted to fewer than its number there.
    /// Through ingest, as Slack's `reaction_added` would come.
    pub(super) async fn react_to(&mut self, channel: &ChannelId, ts: Ts) -> anyhow::Result<()> {
        let Some(react) = self.react.clone() else {
            return Ok(());
        };
        let done = self.reacted.entry(channel.clone()).or_insert(0);
        if *done >= react.posts {
            return Ok(());
        }
        *done += 1;
        self.made += 1;
        let reaction = Reaction {
            added: true,
            user: UserId::parse(&format!("{REACTOR}{done}"))?,
            emoji: react.emoji,
            channel: channel.clone(),
            ts,
            author: Some(self.bot.clone()),
        };
        let envelope = Envelope::Event {
            event_id: format!("EvReact{:06}", self.made),
            bot_user_id: Some(self.bot.clone()),
            api_app_id: None,
            team_id: self.channel_teams.get(channel).map(ToString::to_string),
            event: SlackEvent::Reaction(reaction.clone()),
        };
        let (outcome, _) = self.ingest.process(envelope, self.clock.now()).await?;
        if matches!(outcome, Outcome::Hinted { .. }) {
            self.hinted(&reaction)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::jobs::not_posted;
    use super::*;
    use crate::export::Entry;
    use crate::timeline::{proactive_name, Recorder};
    use myao_core::ports::PortError;
    use myao_domain::User;
    use myao_services::response::{NoReply, ResponseOutcome};
    use serde_json::json;

    fn export(entries: Vec<(&str, serde_json::Value)>) -> Export {
        let c = Channel {
            id: ChannelId::parse("C1").unwrap(),
            name: "general".into(),
            visibility: Visibility::PUBLIC,
        };
        let users = vec![User {
            id: UserId::parse("U1").unwrap(),
            name: "alice".into(),
            is_bot: false,
        }];
        let entries = entries
            .into_iter()
            .map(|(_, v)| Entry::from_json(&c.id, v, "test").unwrap())
            .collect();
        Export::new("test", users, vec![c], entries)
    }

    #[test]
    fn a_response_that_posted_nothing_is_counted_by_its_outcomes_name() {
        use myao_domain::limits::Limit;
        let limited = ResponseOutcome::Limited {
            limit: Limit::LlmCallsPerDay,
            notice: None,
        };
        let failed = |detail: &str| {
            ResponseOutcome::NoReply(NoReply::Llm(PortError::refused("llm", detail)))
        };
        let cases = [
            (
                ResponseOutcome::Stale,
                "stale",
                "stale, a newer message came in",
            ),
            (
                ResponseOutcome::AlreadyDone,
                "already_done",
                "already_done, already answered",
            ),
            (
                ResponseOutcome::TooOld,
                "too_old",
                "too_old, the mention is too old to answer",
            ),
            (
                limited.clone(),
                "limited: max_llm_calls_per_day",
                "limited: max_llm_calls_per_day",
            ),
            // The LLM's or Slack's reason says more than `no_reply`.
            (
                failed("500"),
                "LLM failed: llm refused: 500",
                "LLM failed: llm refused: 500",
            ),
            (
                ResponseOutcome::PostFailed(PortError::refused("slack", "channel_not_found")),
                "slack refused: channel_not_found",
                "slack refused: channel_not_found",
            ),
        ];
        for (outcome, key, shown) in cases {
            let (k, s) = not_posted(&outcome, false);
            assert_eq!((k.as_str(), s.as_str()), (key, shown));
            // The named ones by the name the logs give them.
            if !matches!(
                outcome,
                ResponseOutcome::NoReply(_) | ResponseOutcome::PostFailed(_)
            ) {
                assert!(key.starts_with(outcome.name()), "{outcome:?}");
            }
        }
        assert_eq!(
            not_posted(&failed("no LLM"), true),
            ("dry run".to_owned(), "dry run".to_owned())
        );
        assert_eq!(
            not_posted(&limited, true).0,
            "limited: max_llm_calls_per_day"
        );
    }

    #[tokio::test]
    async fn a_burst_makes_one_judgment_after_the_wait() {
        let base = 1_767_603_600u64;
        let e = export(
            (0..3)
                .map(|i| {
                    (
                        "m",
                        json!({"type": "message", "user": "U1", "text": format!("m{i}"),
                               "ts": format!("{}.000100", base + i * 20)}),
                    )
                })
                .collect(),
        );
        let (mut settings, _) =
            Settings::from_pairs([("min_wait_seconds", "60"), ("jitter_ratio", "0")]);
        settings.persona_name = "myao".into();
        let mut rec = Recorder::default();
        let s = run(&e, Options::dry_run(settings), &mut rec).await.unwrap();
        assert_eq!(s.messages, 3);
        // One judgment; the rule stage finds nothing to say (no question,
        // one person), so it stays quiet without asking the LLM.
        assert_eq!(s.judgment_count(), 1);
        assert_eq!(s.judgments.get("rule_silent"), Some(&1));
        let judgment = rec
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::Judgment { .. }))
            .unwrap();
        assert_eq!(
            judgment.at,
            Ts::parse(&format!("{}.000100", base + 40))
                .unwrap()
                .to_datetime()
                + Duration::seconds(60)
        );
        assert_eq!(s.replies, 0);
    }

    fn at_seconds(entries: &[u64]) -> Export {
        export(
            entries
                .iter()
                .enumerate()
                .map(|(i, secs)| {
                    (
                        "m",
                        json!({"type": "message", "user": "U1", "text": format!("m{i}"),
                               "ts": format!("{secs}.000000")}),
                    )
                })
                .collect(),
        )
    }

    fn no_jitter() -> Settings {
        let (settings, _) =
            Settings::from_pairs([("min_wait_seconds", "60"), ("jitter_ratio", "0")]);
        settings
    }

    #[tokio::test]
    async fn sweeps_recur_while_messages_are_left_and_fan_out_with_the_jobs_due_then() {
        let base = 1_767_603_600u64;
        // A judgment falls due at base + 1 h, with the first sweep.
        let e = at_seconds(&[base, base + 3_540, base + 3 * 3_600 + 10]);
        let mut rec = Recorder::default();
        let s = run(&e, Options::dry_run(no_jitter()), &mut rec)
            .await
            .unwrap();
        // At base + 1 h, 2 h and 3 h, then the last one.
        assert_eq!(s.sweeps, 4);
        assert_eq!(s.jobs_left, 0);
        let hour = Ts::parse(&format!("{}.000000", base + 3_600))
            .unwrap()
            .to_datetime();
        let kinds: Vec<&str> = rec
            .events
            .iter()
            .filter(|e| e.at == hour)
            .map(|e| match &e.kind {
                EventKind::Memory { sweep: true, .. } => "sweep",
                EventKind::Judgment { .. } => "judgment",
                _ => "other",
            })
            .collect();
        // The sweep fans out first; its channel's job then runs in turn
        // with the judgment made before it.
        assert_eq!(kinds, ["judgment", "sweep"]);
    }

    #[tokio::test]
    async fn a_quiet_listed_channel_gets_proactive_judgments_inside_working_hours() {
        // Monday 2026-01-05 09:00 UTC, then Thursday 09:00: two quiet days.
        let base = 1_767_603_600u64;
        let e = at_seconds(&[base, base + 3 * 86_400]);
        let mut settings = no_jitter();
        for (name, value) in [
            ("proactive", "true"),
            ("proactive_channels", "C1"),
            ("proactive_after_hours", "24"),
        ] {
            settings.apply(name, value).unwrap();
        }
        let mut rec = Recorder::default();
        let s = run(&e, Options::dry_run(settings.clone()), &mut rec)
            .await
            .unwrap();
        // Tuesday's and Wednesday's, each made by a sweep and judged in the
        // dry run (no LLM: the prompt is all there is); Thursday's, made on
        // Wednesday evening, is stale once Thursday's message comes.
        assert_eq!(s.proactive.get("dry run"), Some(&2), "{:?}", s.proactive);
        assert_eq!(s.proactive.get("stale"), Some(&1), "{:?}", s.proactive);
        assert_eq!(s.proactive_count(), 3, "{:?}", s.proactive);
        assert!(s.openers.is_empty());
        for e in &rec.events {
            if let EventKind::Proactive {
                prompts,
                outcome,
                dry_run,
            } = &e.kind
            {
                if proactive_name(outcome, *dry_run) != "dry run" {
                    continue;
                }
                assert!(myao_domain::proactive::within(
                    e.at,
                    settings.timezone,
                    settings.proactive_hours,
                    settings.proactive_days
                ));
                assert_eq!(prompts.len(), 1);
            }
        }
        let scheduled = rec
            .events
            .iter()
            .filter(
                |e| matches!(&e.kind, EventKind::Memory { proactive, .. } if !proactive.is_empty()),
            )
            .count();
        assert_eq!(scheduled, 3);
        // Off: none.
        let s = run(&e, Options::dry_run(no_jitter()), &mut Recorder::default())
            .await
            .unwrap();
        assert!(s.proactive.is_empty());
    }

    #[tokio::test]
    async fn intervals_past_the_calendar_end_only_sweep_at_the_end() {
        let base = 1_767_603_600u64;
        let e = at_seconds(&[base, base + 7_200]);
        for interval in [Duration::MAX, Duration::days(365_000_000)] {
            let mut options = Options::dry_run(no_jitter());
            options.memory_interval = Some(interval);
            let s = run(&e, options, &mut Recorder::default()).await.unwrap();
            assert_eq!(s.sweeps, 1);
        }
        // Messages near the end of Slack's timestamps, a month apart.
        let far = 999_999_999_999u64 - 40 * 86_400;
        let e = at_seconds(&[far, far + 31 * 86_400]);
        let mut options = Options::dry_run(no_jitter());
        options.memory_interval = Some(Duration::days(30));
        let s = run(&e, options, &mut Recorder::default()).await.unwrap();
        assert_eq!(s.sweeps, 2);
    }
}

#[cfg(test)]
mod teams {
    use super::marks::marker_words;
    use super::*;
    use crate::export::Entry;
    use crate::timeline::Recorder;
    use async_trait::async_trait;
    use myao_core::ports::{LlmReply, LlmRequest, LlmRole, PortError};
    use myao_domain::User;
    use serde_json::json;

    /// An LLM that repeats the marker words of each prompt, as a summary
    /// repeats facts: what a prompt was made from shows in what it wrote.
    struct Echo;

    #[async_trait]
    impl Llm for Echo {
        async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
            let marks: Vec<&str> = marker_words(&request.system)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let said = format!("- 2026-01-05 {}", marks.join(" "));
            let text = match (request.role, request.json) {
                (LlmRole::Judgment, _) => json!({
                    "should_respond": true, "reason": "asked", "confidence": 0.9,
                    "delay_seconds": 0
                })
                .to_string(),
                (LlmRole::Memory, true) => {
                    json!({"channel": said, "long": null, "threads": {}, "facts": []}).to_string()
                }
                _ => said,
            };
            Ok(LlmReply {
                text,
                prompt_tokens: 0,
                completion_tokens: 0,
                cached_tokens: 0,
            })
        }
    }

    /// A workspace's export: in #general, a question with `mark` and the
    /// bot's name, then an answer, starting at `base`.
    fn export_of(mark: &str, base: u64) -> Export {
        let general = Channel {
            id: ChannelId::parse("C0GENERAL").unwrap(),
            name: "general".into(),
            visibility: Visibility::PUBLIC,
        };
        let users = vec![User {
            id: UserId::parse("U0ALICE").unwrap(),
            name: "alice".into(),
            is_bot: false,
        }];
        let said = |at: u64, text: String| {
            let value = json!({"type": "message", "user": "U0ALICE", "text": text,
                               "ts": format!("{at}.000100")});
            Entry::from_json(&general.id, value, "test").unwrap()
        };
        let entries = vec![
            said(base, format!("<@UMYAO> {mark} のこと覚えてる？")),
            said(base + 600, format!("{mark} は来週だよ")),
            said(base + 7_200, format!("<@UMYAO> {mark} どうだった？")),
        ];
        Export::new(mark, users, vec![general], entries)
    }

    #[tokio::test]
    async fn two_workspaces_replayed_in_one_stack_keep_their_words_apart() {
        let base = 1_767_603_600u64;
        let merged = Export::of_teams(vec![
            (
                TeamId::parse("T00000001").unwrap(),
                export_of("MARK-ACME", base),
            ),
            (
                TeamId::parse("T00000002").unwrap(),
                export_of("MARK-BETA", base + 30),
            ),
        ]);
        assert_eq!(merged.teams().len(), 2);
        let mut options = Options::dry_run(Settings::default());
        options.llm = Some(Arc::new(Echo));
        let mut rec = Recorder::default();
        let s = run(&merged, options, &mut rec).await.unwrap();
        let isolation = s.isolation.clone().expect("a replay of two workspaces");
        assert_eq!(isolation.markers, 2);
        assert_eq!(isolation.crossing, 0, "{:?}", isolation.examples);
        for team in ["T00000001", "T00000002"] {
            assert!(
                isolation.prompts.get(team).copied().unwrap_or(0) >= 3,
                "{isolation:?}"
            );
        }
        assert!(
            !isolation.prompts.contains_key("(the stack)"),
            "{isolation:?}"
        );
        // Memories were written and read: each workspace's words reached
        // its own later prompts through them.
        assert!(s.memory_count() > 0, "{:?}", s.memories);
        assert!(
            s.replies >= 4,
            "both mentions of each answered: {}",
            s.replies
        );
    }

    #[test]
    fn a_prompt_holding_another_workspaces_marker_word_is_counted() {
        let merged = Export::of_teams(vec![
            (
                TeamId::parse("T00000001").unwrap(),
                export_of("MARK-ACME", 1_767_603_600),
            ),
            (
                TeamId::parse("T00000002").unwrap(),
                export_of("MARK-BETA", 1_767_603_630),
            ),
        ]);
        let mut marks = Marks::of(&merged).unwrap();
        let prompt = |number: usize, text: &str| Prompt {
            number,
            role: LlmRole::Judgment,
            chars: text.chars().count(),
            text: text.to_owned(),
            file: None,
        };
        let acme = TeamId::parse("T00000001").unwrap();
        marks.count(
            Some(&acme),
            &[
                prompt(1, "MARK-ACME only"),
                prompt(2, "MARK-ACME and MARK-BETA"),
            ],
        );
        assert_eq!(marks.tally.crossing, 1);
        assert_eq!(
            marks.tally.examples,
            vec![(2, "T00000001".to_owned(), "MARK-BETA".to_owned())]
        );
        assert_eq!(marks.tally.prompts.get("T00000001"), Some(&2));
    }
}
