//! `myao eval`: when the bot speaks, at each chattiness level.
//!
//! The export is replayed once per level ([`Chattiness::ALL`]), with the
//! same settings, seed and LLM otherwise, and each replay is measured
//! against what the people of the export did ([`figures`]): questions left
//! unanswered and the share the bot joined, live two-person exchanges and
//! the share it intruded on, the precision of its unprompted posts and how
//! many it makes per channel-hour. Beside them, what the judgment cost:
//! the judgments run, the LLM judgment calls (the rule stage's ambiguous
//! band), and the judgments the rule stage decided alone ("spared": quiet
//! or sure), against the baseline of one LLM call per quiet period (every
//! judgment that reached the gates).
//!
//! With no LLM configured the eval is offline: the rule stage decides
//! alone. Its ambiguous band posts nothing (counted as "ambiguous"), and
//! its sure answers are posted as placeholders ([`OfflineWriter`]), stored
//! and seen by what follows them, as real ones would be.

pub mod curve;
pub mod figures;
pub mod html;
mod report;
mod rows;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::sync::Arc;

use myao_domain::channel::ChannelKind;
use myao_domain::rules::{is_question, Chattiness, Decision};
use myao_domain::text::render_slack_text;
use myao_domain::text::{mentions_user, names};
use myao_domain::{ChannelId, Message, Settings, Ts, UserId};
use myao_services::judgment::JudgmentOutcome;
use serde_json::{json, Value};

use crate::export::Export;
use crate::replay::{self, Options};
use crate::timeline::{Event, EventKind, Header, Sink, Summary, Verdict};
use crate::twins::OfflineWriter;
use rows::{share, HINTS_ROW, ROWS};

pub use figures::{Figures, Post};
pub use report::{Counts, LevelReport, Mark, MarkKind, Report, Said};

/// The settings of one level: `level` everywhere, with its own thresholds
/// (per-channel levels, `autonomous_replies = false` and `rule_thresholds`
/// would make the levels alike, and are set aside).
pub fn level_settings(settings: &Settings, level: Chattiness) -> Settings {
    let mut s = settings.clone();
    s.chattiness = level;
    s.autonomous_replies = true;
    s.channel_chattiness.clear();
    s.rule_thresholds = None;
    s
}

/// The settings an eval sets aside, by name, when `settings` has them.
pub fn set_aside(settings: &Settings) -> Vec<&'static str> {
    let mut names = Vec::new();
    if !settings.autonomous_replies {
        names.push("autonomous_replies");
    }
    if !settings.channel_chattiness.is_empty() {
        names.push("channel_chattiness");
    }
    if settings.rule_thresholds.is_some() {
        names.push("rule_thresholds");
    }
    names
}

/// Replays `export` once per level of `levels` with `options` (its LLM, or
/// offline with none) and measures each replay.
pub async fn run(
    export: &Export,
    options: &Options,
    levels: &[Chattiness],
) -> anyhow::Result<Report> {
    let offline = options.llm.is_none();
    let mut reports = Vec::new();
    let mut people = Vec::new();
    let mut messages = Vec::new();
    for level in levels {
        let mut o = options.clone();
        o.settings = level_settings(&options.settings, *level);
        o.prompts_dir = None;
        if offline {
            o.llm = Some(Arc::new(OfflineWriter));
            o.llm_label = Some("none (offline: placeholder replies)".to_owned());
        }
        let mut tally = Tally::default();
        replay::run(export, o, &mut tally).await?;
        let (report, said, said_messages) = tally.measure(*level);
        reports.push(report);
        people = said;
        messages = said_messages;
    }
    Ok(Report {
        source: export.source.clone(),
        offline,
        llm: options.llm_label.clone().filter(|_| !offline),
        names: export
            .channels
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect(),
        public: export
            .channels
            .iter()
            .filter(|c| c.visibility.kind == ChannelKind::Public)
            .map(|c| c.id.clone())
            .collect(),
        people,
        // The level of a channel without its own: `chattiness`, or
        // mentions only when `autonomous_replies` is off.
        current: if options.settings.autonomous_replies {
            options.settings.chattiness
        } else {
            Chattiness::MentionsOnly
        },
        levels: reports,
        room: curve::room_curve(&messages),
    })
}

/// Collects what a replay did: the people's messages as they stand at the
/// end (edits applied, deletions removed), the bot's posts, and the
/// judgments by channel.
#[derive(Default)]
struct Tally {
    people: Vec<Option<Message>>,
    /// The people's messages' authors and readable texts, by index.
    shown: Vec<(String, String)>,
    index: HashMap<(ChannelId, Ts), usize>,
    posts: Vec<Post>,
    marks: Vec<Mark>,
    /// The ruling of the latest judgment that decided to speak, by the
    /// conversation its reply goes to, until a post or reaction there takes
    /// it (a judgment that decided otherwise clears its conversation's).
    rulings: HashMap<(ChannelId, Option<Ts>), String>,
    /// People's names by id, for the edits' readable text.
    names: HashMap<UserId, String>,
    counts: BTreeMap<ChannelId, Counts>,
    /// The bot's id and name, from the header.
    bot: Option<(UserId, String)>,
}

impl Tally {
    fn judged(
        &mut self,
        channel: &ChannelId,
        outcome: &JudgmentOutcome,
        decision: Option<Decision>,
    ) {
        if matches!(outcome, JudgmentOutcome::Stale) {
            return;
        }
        let c = self.counts.entry(channel.clone()).or_default();
        c.judgments += 1;
        if let Some(wait) = outcome.ruling().and_then(|r| r.score.wait) {
            c.learned_wait_seconds = Some(wait.num_seconds());
        }
        if !matches!(outcome, JudgmentOutcome::Empty) {
            c.baseline += 1;
        }
        match decision {
            Some(Decision::Ask) => {
                c.ambiguous += 1;
                c.llm_calls += 1;
            }
            Some(Decision::Silent) => c.spared += 1,
            // A sure answer (or reaction) the hourly cap stopped was
            // decided alone too.
            Some(Decision::Respond | Decision::React) => c.spared += 1,
            None => {}
        }
    }

    fn measure(self, level: Chattiness) -> (LevelReport, Vec<Said>, Vec<Message>) {
        let said: Vec<Said> = self
            .people
            .iter()
            .zip(&self.shown)
            .filter_map(|(m, (user_name, text))| {
                let m = m.as_ref()?;
                Some(Said {
                    channel: m.channel.clone(),
                    ts: m.ts,
                    thread_ts: m.thread_ts,
                    user_name: user_name.clone(),
                    text: text.clone(),
                    question: is_question(&m.text),
                })
            })
            .collect();
        let people: Vec<Message> = self.people.into_iter().flatten().collect();
        let figures = figures::measure(&people, &self.posts);
        let mut channels = self.counts;
        for post in &self.posts {
            channels.entry(post.channel.clone()).or_default().posts += 1;
        }
        for (channel, f) in &figures {
            channels.entry(channel.clone()).or_default().figures = f.clone();
        }
        let mut total = Counts {
            figures: figures::total(&figures),
            ..Counts::default()
        };
        for c in channels.values() {
            total.add(c);
        }
        let report = LevelReport {
            level,
            channels,
            total,
            marks: self.marks,
        };
        (report, said, people)
    }

    /// Keeps one of the bot's posts or reactions, with the ruling that let
    /// it speak when it was unprompted.
    fn mark(
        &mut self,
        e: &Event,
        channel: &ChannelId,
        ts: Ts,
        kind: MarkKind,
        prompted: bool,
        text: &str,
    ) {
        let ruling = if prompted || kind == MarkKind::Opener {
            None
        } else {
            self.rulings.remove(&(channel.clone(), e.thread_ts))
        };
        self.marks.push(Mark {
            channel: channel.clone(),
            ts,
            thread_ts: e.thread_ts,
            kind,
            unprompted: !prompted,
            ruling,
            text: text.to_owned(),
        });
    }
}

impl Tally {
    /// Whether a prompted post in `thread` answered a reply that neither
    /// mentioned nor named the bot: the latest person's message before it
    /// in that thread.
    fn engaged(&self, channel: &ChannelId, thread: Option<Ts>, ts: Ts) -> bool {
        let (Some(root), Some((bot, name))) = (thread, &self.bot) else {
            return false;
        };
        self.people
            .iter()
            .rev()
            .flatten()
            .find(|m| m.channel == *channel && m.ts < ts && (m.thread_ts == Some(root)))
            .is_some_and(|m| !mentions_user(&m.text, bot) && !names(&m.text, name))
    }
}

/// The events that change what the tally holds, one step each.
impl Tally {
    /// A person edited a message: its text, and how it reads, are the new
    /// ones.
    fn edited(&mut self, channel: &ChannelId, ts: Ts, text: &str) {
        if let Some(&i) = self.index.get(&(channel.clone(), ts)) {
            if let Some(m) = self.people[i].as_mut() {
                m.text = text.to_owned();
                let names = &self.names;
                self.shown[i].1 = render_slack_text(text, |id| {
                    UserId::parse(id).ok().and_then(|u| names.get(&u).cloned())
                });
            }
        }
    }

    /// A judgment: counted, and its ruling kept for the reply it planned
    /// (or the conversation's forgotten, when it planned none).
    fn ruled(&mut self, channel: &ChannelId, thread_ts: Option<Ts>, verdict: &Verdict) {
        let decision = verdict.ruling().map(|r| r.decision);
        self.judged(channel, &verdict.outcome, decision);
        match (&verdict.reply, verdict.ruling()) {
            (Some(reply), Some(r)) => {
                self.rulings
                    .insert((channel.clone(), reply.thread), r.explain());
            }
            _ => {
                self.rulings.remove(&(channel.clone(), thread_ts));
            }
        }
    }

    /// The bot replied (not a topic it opened): a mark, and a post for the
    /// figures, engaged when it answered a reply that did not call it.
    fn replied(
        &mut self,
        e: &Event,
        channel: &ChannelId,
        ts: Ts,
        mention: bool,
        short: bool,
        text: &str,
    ) {
        let kind = if short {
            MarkKind::Short
        } else {
            MarkKind::Reply
        };
        self.mark(e, channel, ts, kind, mention, text);
        let engaged = mention && self.engaged(channel, e.thread_ts, ts);
        self.posts.push(Post {
            channel: channel.clone(),
            ts,
            thread_ts: e.thread_ts,
            unprompted: !mention,
            engaged,
        });
        self.counts.entry(channel.clone()).or_default().short_posts += usize::from(short);
    }
}

impl Sink for Tally {
    fn header(&mut self, h: &Header) -> io::Result<()> {
        self.bot = Some((h.bot_user_id.clone(), h.bot_name.clone()));
        Ok(())
    }

    fn event(&mut self, e: &Event) -> io::Result<()> {
        let Some(channel) = e.channel.as_ref().map(|c| &c.id) else {
            return Ok(());
        };
        match &e.kind {
            EventKind::Message {
                ts,
                user,
                user_name,
                text,
                shown,
                is_bot: false,
            } => {
                let key = (channel.clone(), *ts);
                let message = Message::new(
                    channel.clone(),
                    user.clone(),
                    text.clone(),
                    *ts,
                    e.thread_ts,
                    false,
                );
                self.index.insert(key, self.people.len());
                self.people.push(Some(message));
                self.shown.push((user_name.clone(), shown.clone()));
                self.names.insert(user.clone(), user_name.clone());
            }
            EventKind::Edited { ts, text, .. } => self.edited(channel, *ts, text),
            EventKind::Deleted { ts, .. } => {
                if let Some(&i) = self.index.get(&(channel.clone(), *ts)) {
                    self.people[i] = None;
                }
            }
            EventKind::Judgment { verdict, .. } => self.ruled(channel, e.thread_ts, verdict),
            EventKind::Reply {
                opener: true,
                ts,
                text,
                ..
            } => {
                self.counts.entry(channel.clone()).or_default().openers += 1;
                self.mark(e, channel, *ts, MarkKind::Opener, false, text);
            }
            EventKind::Proactive { .. } => {
                self.counts
                    .entry(channel.clone())
                    .or_default()
                    .proactive_judgments += 1;
            }
            EventKind::Reply {
                ts,
                mention,
                short,
                text,
                ..
            } => self.replied(e, channel, *ts, *mention, *short, text),
            EventKind::Reaction {
                on, emoji, mention, ..
            } => {
                self.counts.entry(channel.clone()).or_default().reactions += 1;
                self.mark(e, channel, *on, MarkKind::Reaction, *mention, emoji);
            }
            EventKind::Hint(given) => {
                let counts = self.counts.entry(channel.clone()).or_default();
                let count = match given.hint.as_str() {
                    "positive" => &mut counts.hints_positive,
                    _ => &mut counts.hints_negative,
                };
                *count = match given.withdrawn {
                    true => count.saturating_sub(1),
                    false => *count + 1,
                };
            }
            _ => {}
        }
        Ok(())
    }

    fn summary(&mut self, _: &Summary) -> io::Result<()> {
        Ok(())
    }
}

impl Report {
    /// The counts of every level for `channel` (`None`: the total).
    fn column(&self, channel: Option<&ChannelId>) -> Vec<Counts> {
        self.levels
            .iter()
            .map(|l| match channel {
                Some(id) => l.channels.get(id).cloned().unwrap_or_default(),
                None => l.total.clone(),
            })
            .collect()
    }

    /// Every channel of any level, by name.
    fn channel_ids(&self) -> Vec<ChannelId> {
        let mut ids: Vec<ChannelId> = self
            .levels
            .iter()
            .flat_map(|l| l.channels.keys().cloned())
            .collect();
        ids.sort_by_key(|id| (self.name(id), id.clone()));
        ids.dedup();
        ids
    }

    fn name(&self, id: &ChannelId) -> String {
        self.names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// The report as text: a table per channel and one for all, the levels
    /// as columns.
    pub fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "myao eval of {}", self.source)?;
        match &self.llm {
            Some(llm) => writeln!(out, "  LLM: {llm}")?,
            None => writeln!(
                out,
                "  OFFLINE: no LLM configured; the rule stage decides alone. The ambiguous band\n  \
                 posts nothing (its LLM calls are counted, not made); sure answers are posted\n  \
                 as placeholders."
            )?,
        }
        for id in self.channel_ids() {
            let counts = self.column(Some(&id));
            let hours = counts.first().map_or(0.0, |c| c.figures.hours);
            writeln!(out)?;
            writeln!(out, "#{} ({:.1} h)", self.name(&id), hours)?;
            self.table(out, &counts)?;
        }
        let total = self.column(None);
        writeln!(out)?;
        writeln!(
            out,
            "total ({} channels, {:.1} channel-hours)",
            self.channel_ids().len(),
            total.first().map_or(0.0, |c| c.figures.hours)
        )?;
        self.table(out, &total)?;
        writeln!(out)?;
        writeln!(
            out,
            "a wait alone (a post on every question people left, after it):"
        )?;
        for p in self.room.iter().filter(|p| p.questions > 0) {
            writeln!(
                out,
                "  {:>2} min: questions joined {:.1}%, preempted {:.1}%",
                p.wait_minutes,
                100.0 * p.join_rate,
                100.0 * p.preempted_rate
            )?;
        }
        if self.room.iter().all(|p| p.questions == 0) {
            writeln!(out, "  – (no question left unanswered)")?;
        }
        for (level, beside) in self.beside_room() {
            writeln!(out, "  {}", beside.describe(level))?;
        }
        out.flush()
    }

    fn table(&self, out: &mut dyn Write, counts: &[Counts]) -> io::Result<()> {
        let cells: Vec<Vec<String>> = ROWS
            .iter()
            .map(|(_, cell)| counts.iter().map(cell).collect())
            .collect();
        let label = ROWS.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
        let widths: Vec<usize> = self
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                cells
                    .iter()
                    .map(|row| row[i].chars().count())
                    .chain([l.level.name().len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        write!(out, "  {:label$}", "")?;
        for (l, w) in self.levels.iter().zip(&widths) {
            write!(out, "  {:>w$}", l.level.name())?;
        }
        writeln!(out)?;
        // The hints' row only where someone gave one.
        let unhinted = counts
            .iter()
            .all(|c| c.hints_positive == 0 && c.hints_negative == 0);
        for ((name, _), row) in ROWS.iter().zip(&cells) {
            if unhinted && *name == HINTS_ROW {
                continue;
            }
            write!(out, "  {name:label$}")?;
            for (cell, w) in row.iter().zip(&widths) {
                write!(out, "  {cell:>w$}")?;
            }
            writeln!(out)?;
        }
        Ok(())
    }

    /// Each level that speaks unprompted (not `mentions_only`) beside the
    /// room's curve, over every channel.
    fn beside_room(&self) -> Vec<(&'static str, curve::Beside<'_>)> {
        self.levels
            .iter()
            .filter(|l| l.level.thresholds().is_some())
            .map(|l| (l.level.name(), curve::beside(&l.total.figures, &self.room)))
            .collect()
    }

    /// The report as one JSON object.
    pub fn to_json(&self) -> Value {
        let by_level = |counts: Vec<Counts>| -> serde_json::Map<String, Value> {
            self.levels
                .iter()
                .zip(counts)
                .map(|(l, c)| (l.level.name().to_owned(), c.to_json()))
                .collect()
        };
        let channels: Vec<Value> = self
            .channel_ids()
            .iter()
            .map(|id| {
                json!({
                    "id": id,
                    "name": self.name(id),
                    "levels": by_level(self.column(Some(id))),
                })
            })
            .collect();
        json!({
            "type": "eval",
            "source": self.source,
            "offline": self.offline,
            "llm": self.llm,
            "levels": self.levels.iter().map(|l| l.level.name()).collect::<Vec<_>>(),
            "channels": channels,
            "total": by_level(self.column(None)),
            "room": self.room,
            "curve": self
                .beside_room()
                .into_iter()
                .map(|(level, beside)| (level.to_owned(), json!(beside)))
                .collect::<serde_json::Map<String, Value>>(),
        })
    }
}
