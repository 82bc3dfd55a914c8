//! The timeline as readable text, for a terminal.

use myao_services::judgment::JudgmentOutcome;
use myao_services::proactive::ProactiveOutcome;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use myao_domain::rules::{Decision, Gate};
use myao_domain::Ts;
use myao_services::prompts::format_time;

use super::event::{
    proactive_name, Event, EventKind, Header, HintGiven, MemoryNote, Prompt, Verdict,
};
use super::sink::Sink;
use super::summary::Summary;

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A span of time, readably: `2 d 3 h 4 min`, `5 min 6 s`, `7 s`.
pub fn span(seconds: i64) -> String {
    let s = seconds.max(0);
    let (d, h, m, sec) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    let parts: Vec<String> = [(d, "d"), (h, "h"), (m, "min"), (sec, "s")]
        .iter()
        .skip_while(|(n, _)| *n == 0)
        .take(3)
        .filter(|(n, _)| *n > 0)
        .map(|(n, u)| format!("{n} {u}"))
        .collect();
    if parts.is_empty() {
        "0 s".to_owned()
    } else {
        parts.join(" ")
    }
}

/// Readable text, for a terminal.
pub struct TextSink<W: Write> {
    out: W,
    tz: Tz,
    dry_run: bool,
    bot_name: String,
}

/// Continuation lines start under the text of the first line.
const INDENT: &str = "                     ";

impl<W: Write> TextSink<W> {
    pub fn new(out: W) -> TextSink<W> {
        TextSink {
            out,
            tz: Tz::UTC,
            dry_run: false,
            bot_name: "the bot".to_owned(),
        }
    }

    /// As the prompts show times: `2026-01-05 09:00:12` in the settings' zone.
    fn time(&self, at: DateTime<Utc>) -> String {
        format_time(at, self.tz)
    }

    /// A thread named by its root's time: `09:00:12`, or `01-05 09:00:12`
    /// when the root is of another day than `now`.
    fn thread_label(&self, root: Ts, now: DateTime<Utc>) -> String {
        let root = root.to_datetime().with_timezone(&self.tz);
        if root.date_naive() == now.with_timezone(&self.tz).date_naive() {
            root.format("%H:%M:%S").to_string()
        } else {
            root.format("%m-%d %H:%M:%S").to_string()
        }
    }

    fn place(&self, e: &Event) -> String {
        let Some(channel) = &e.channel else {
            return String::new();
        };
        match e.thread_ts {
            Some(root) => format!(
                "#{} [thread {}]",
                channel.name,
                self.thread_label(root, e.at)
            ),
            None => format!("#{}", channel.name),
        }
    }

    /// A multi-line text, continued under the first line.
    fn flow(text: &str) -> String {
        text.trim_end().replace('\n', &format!("\n{INDENT}  "))
    }

    fn prompts(&mut self, prompts: &[Prompt], full: bool) -> io::Result<()> {
        for p in prompts {
            let head = format!(
                "{INDENT}prompt #{} ({}, {} chars)",
                p.number,
                p.role.as_str(),
                thousands(p.chars as u64)
            );
            match &p.file {
                Some(file) => writeln!(self.out, "{head} -> {}", file.display())?,
                None if full => {
                    writeln!(self.out, "{head}:")?;
                    for line in p.text.trim_end().lines() {
                        writeln!(self.out, "{INDENT}│ {line}")?;
                    }
                }
                None => {}
            }
        }
        Ok(())
    }

    fn prompt_list(prompts: &[Prompt]) -> String {
        let chars: usize = prompts.iter().map(|p| p.chars).sum();
        let numbers: Vec<String> = prompts.iter().map(|p| format!("#{}", p.number)).collect();
        format!(
            "{} prompt{} ({}, {} chars)",
            prompts.len(),
            if prompts.len() == 1 { "" } else { "s" },
            numbers.join(" "),
            thousands(chars as u64)
        )
    }
}

/// Counts by name, `a 2, b 1`, between `open` and `close`; nothing when
/// there are none.
fn counts<K: fmt::Display>(by: &BTreeMap<K, usize>, open: &str, close: &str) -> String {
    if by.is_empty() {
        return String::new();
    }
    let list: Vec<String> = by.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("{open}{}{close}", list.join(", "))
}

impl<W: Write> Sink for TextSink<W> {
    fn header(&mut self, h: &Header) -> io::Result<()> {
        self.tz = h.timezone;
        self.dry_run = h.llm.is_none();
        self.bot_name = h.bot_name.clone();
        let names: Vec<String> = h.channels.iter().map(|c| format!("#{}", c.name)).collect();
        writeln!(self.out, "myao replay of {}", h.source)?;
        writeln!(
            self.out,
            "  {} entries in {} ({} users)",
            h.entries,
            if names.is_empty() {
                "no channel".to_owned()
            } else {
                names.join(", ")
            },
            h.users
        )?;
        if let (Some(first), Some(last)) = (h.first, h.last) {
            writeln!(
                self.out,
                "  {} -> {} ({}), times in {}",
                self.time(first),
                self.time(last),
                span((last - first).num_seconds()),
                h.timezone.name()
            )?;
        }
        let memory = match h.memory_interval_seconds {
            Some(s) => format!("memory sweep every {}", span(s)),
            None => "no memory sweep".to_owned(),
        };
        writeln!(
            self.out,
            "  bot {} ({}); judgment {} s after a conversation goes quiet (±{}%){}; {memory}; seed {}",
            h.bot_name,
            h.bot_user_id,
            h.min_wait_seconds,
            (h.jitter_ratio * 100.0).round(),
            if h.autonomous_replies { "" } else { ", autonomous replies off" },
            h.seed
        )?;
        match &h.llm {
            Some(llm) => writeln!(self.out, "  LLM: {llm}")?,
            None => writeln!(
                self.out,
                "  DRY RUN: no LLM configured (llm_base_url, MYAO_LLM_BASE_URL or --llm-base-url;\n  \
                 or llm_provider = bedrock).\n  \
                 The rule stage still decides alone where it is sure (sure, quiet); in its\n  \
                 ambiguous band each prompt is shown; no verdict, reply or memory is invented."
            )?,
        }
        writeln!(self.out)
    }

    fn event(&mut self, e: &Event) -> io::Result<()> {
        if let EventKind::Memory { repeat: true, .. } = e.kind {
            return Ok(());
        }
        let time = self.time(e.at);
        let place = self.place(e);
        let line = self.line(e);
        if place.is_empty() {
            writeln!(self.out, "{time}  {line}")?;
        } else {
            writeln!(self.out, "{time}  {place}  {line}")?;
        }
        self.rule_stage(e)?;
        self.event_prompts(e)
    }

    fn summary(&mut self, s: &Summary) -> io::Result<()> {
        self.summary_conversations(s)?;
        if s.proactive_count() > 0 {
            self.summary_proactive(s)?;
        }
        self.summary_memories(s)?;
        self.summary_llm(s)?;
        self.summary_jobs(s)?;
        self.summary_time(s)?;
        self.out.flush()
    }
}

/// An event's line, one writer per kind of event.
impl<W: Write> TextSink<W> {
    /// What happened, after the event's time and place.
    fn line(&self, e: &Event) -> String {
        let top = if e.channel.is_some() && e.thread_ts.is_none() {
            " (top level)"
        } else {
            ""
        };
        match &e.kind {
            EventKind::Message {
                user_name,
                shown,
                is_bot,
                ..
            } => {
                let bot = if *is_bot { " (bot)" } else { "" };
                format!("{user_name}{bot}: {}", Self::flow(shown))
            }
            EventKind::Edited {
                user_name,
                text,
                known,
                ..
            } => {
                let who = user_name.as_deref().unwrap_or("someone");
                let note = if *known {
                    ""
                } else {
                    " (a message not in the replay)"
                };
                format!("{who} edited a message{note}: {}", Self::flow(text))
            }
            EventKind::Deleted {
                user_name, text, ..
            } => match (user_name, text) {
                (Some(who), Some(text)) => {
                    format!("{who} deleted a message: {:?}", text.trim())
                }
                _ => "a message not in the replay was deleted".to_owned(),
            },
            EventKind::Skipped { reason } => format!("skipped: {reason}"),
            EventKind::Judgment { verdict, .. } => self.judgment(e, verdict, top),
            EventKind::Reply {
                text,
                mention,
                short,
                opener,
                ..
            } => self.reply(text, *mention, *short, *opener),
            EventKind::Reaction {
                on,
                user_name,
                emoji,
                ..
            } => self.reaction(*on, user_name.as_deref(), emoji),
            EventKind::Hint(given) => self.hint(given),
            EventKind::NoReply {
                mention,
                reason,
                prompts,
            } => self.no_reply(*mention, reason, prompts, top),
            EventKind::Memory {
                sweep,
                written,
                facts,
                llm_calls,
                prompts,
                proactive,
                ..
            } => {
                let what = if *sweep { "memory sweep" } else { "memory" };
                self.memory(what, written, facts, *llm_calls, prompts, proactive)
            }
            EventKind::Proactive {
                outcome, dry_run, ..
            } => Self::proactive(outcome, *dry_run),
            EventKind::JobFailed { job, error } => format!("{job} job failed: {error}"),
        }
    }

    /// `judgment: rule_yes, reply in 30 s ...`: the outcome's name first,
    /// as the summary counts it, and the gate where the name does not say
    /// it (`held: cooldown`).
    fn judgment(&self, e: &Event, verdict: &Verdict, top: &str) -> String {
        let what = self.judgment_outcome(e, verdict);
        let name = verdict.name();
        match &verdict.outcome {
            JudgmentOutcome::Held(gate) if gate.name() != name => {
                format!("judgment{top}: {name}: {}, {what}", gate.name())
            }
            _ => format!("judgment{top}: {name}, {what}"),
        }
    }

    /// What the judgment decided, in words.
    fn judgment_outcome(&self, e: &Event, verdict: &Verdict) -> String {
        match &verdict.outcome {
            _ if verdict.is_dry_run() => "no verdict".to_owned(),
            JudgmentOutcome::Respond { result, .. } => {
                let verb = match result.response_type.name() {
                    "reaction" => "react",
                    "short" => "respond briefly",
                    _ => "respond",
                };
                format!(
                    "{} — {} (confidence {:.2})",
                    self.due_reply(e, verdict, verb),
                    result.reason,
                    result.confidence
                )
            }
            JudgmentOutcome::Sure { ruling, .. } => {
                let verb = if ruling.decision == Decision::React {
                    "react"
                } else {
                    "reply"
                };
                format!(
                    "{}, without asking the LLM",
                    self.due_reply(e, verdict, verb)
                )
            }
            JudgmentOutcome::Declined(_, result) => format!(
                "stay silent — {} (confidence {:.2})",
                result.reason, result.confidence
            ),
            JudgmentOutcome::Silent { why, .. } => format!("silent — {why}"),
            JudgmentOutcome::Quiet(_) => "silent without asking the LLM".to_owned(),
            JudgmentOutcome::Capped(_) => {
                "the channel had its unprompted replies of the hour".to_owned()
            }
            JudgmentOutcome::Stale => "a newer message has its own judgment".to_owned(),
            JudgmentOutcome::Held(gate) => Self::held(*gate).to_owned(),
            JudgmentOutcome::Empty => "every message was deleted".to_owned(),
        }
    }

    /// Where a reply goes: when, and in which thread if not this one.
    fn due_reply(&self, e: &Event, verdict: &Verdict, verb: &str) -> String {
        let Some(due) = &verdict.reply else {
            return verb.to_owned();
        };
        let when = if due.delay_seconds <= 0 {
            format!("{verb} now")
        } else {
            format!("{verb} in {} s", due.delay_seconds)
        };
        match due.thread {
            Some(root) if e.thread_ts != Some(root) => {
                format!("{when} in the thread of {}", self.thread_label(root, e.at))
            }
            _ => when,
        }
    }

    /// Why a gate held the judgment back.
    fn held(gate: Gate) -> &'static str {
        match gate {
            Gate::BotSpokeLast => "nothing to add, the bot spoke last",
            Gate::TooOld => "the newest message is too old",
            Gate::MentionsOnly => "no unprompted reply here",
            Gate::Cooldown => "the bot spoke here moments ago",
            Gate::Backoff => "the LLM declined here several times in a row",
            Gate::Muted => "asked to be quiet here for a while",
        }
    }

    fn reply(&self, text: &str, mention: bool, short: bool, opener: bool) -> String {
        let what = match (mention, short, opener) {
            (true, _, _) => "answered the mention",
            (false, _, true) => "opened a topic",
            (false, true, false) => "replied briefly",
            (false, false, false) => "replied",
        };
        format!("{} {what}: {}", self.bot_name, Self::flow(text))
    }

    fn reaction(&self, on: Ts, user_name: Option<&str>, emoji: &str) -> String {
        let whose = user_name.map_or_else(|| "a message".to_owned(), |n| format!("{n}'s"));
        let at = on.to_datetime().with_timezone(&self.tz).format("%H:%M");
        format!("{} added reaction :{emoji}: on {whose} {at}", self.bot_name)
    }

    fn hint(&self, given: &HintGiven) -> String {
        let at = given
            .on
            .to_datetime()
            .with_timezone(&self.tz)
            .format("%H:%M");
        let (did, what) = match given.withdrawn {
            true => ("took back", "hint withdrawn"),
            false => ("reacted", "hint"),
        };
        format!(
            "{} {did} :{}: on {}'s {at}: a {} {what}",
            given.user_name, given.emoji, self.bot_name, given.hint
        )
    }

    fn no_reply(&self, mention: bool, reason: &str, prompts: &[Prompt], top: &str) -> String {
        let what = if mention {
            "no reply to mention"
        } else {
            "no reply"
        };
        if self.dry_run && !prompts.is_empty() {
            format!("{what}{top}: dry run")
        } else {
            format!("{what}{top}: {reason}")
        }
    }

    /// A memory job (`what`: a sweep or one thread's): what it wrote, or
    /// why nothing, then one line per fact learnt and proactive judgment
    /// planned.
    fn memory(
        &self,
        what: &str,
        written: &[MemoryNote],
        facts: &[String],
        llm_calls: usize,
        prompts: &[Prompt],
        proactive: &[(String, DateTime<Utc>)],
    ) -> String {
        let learnt: String = facts
            .iter()
            .map(|f| format!("\n{INDENT}learnt: {}", Self::flow(f)))
            .chain(proactive.iter().map(|(channel, at)| {
                format!(
                    "\n{INDENT}proactive judgment of #{channel} scheduled at {}",
                    self.time(*at)
                )
            }))
            .collect();
        if written.is_empty() && facts.is_empty() && llm_calls == 0 {
            format!(
                "{what}: {} proactive judgment(s) planned{learnt}",
                proactive.len()
            )
        } else if written.is_empty() && (!facts.is_empty() || !proactive.is_empty()) {
            format!("{what}: {llm_calls} LLM call(s){learnt}")
        } else if written.is_empty() {
            if self.dry_run {
                format!(
                    "{what}: dry run, {}, nothing written",
                    Self::prompt_list(prompts)
                )
            } else {
                format!("{what}: {llm_calls} LLM call(s), nothing written")
            }
        } else {
            let notes: Vec<String> = written
                .iter()
                .map(|n| format!("{} {}", n.label, n.kind.as_str()))
                .collect();
            format!("{what}: wrote {}{learnt}", notes.join(", "))
        }
    }

    /// The outcome's name first, as the summary counts it.
    fn proactive(outcome: &ProactiveOutcome, dry_run: bool) -> String {
        let name = proactive_name(outcome, dry_run);
        let what = match outcome {
            ProactiveOutcome::Silent(_) if dry_run => format!("{name}, no verdict"),
            ProactiveOutcome::Open { topic, .. } => {
                format!("{name} a topic — {}", Self::flow(topic))
            }
            ProactiveOutcome::Declined => {
                format!("{name}, nothing worth opening with, silent")
            }
            ProactiveOutcome::Silent(why) => format!("{name}, silent — {why}"),
            ProactiveOutcome::Stale => format!("{name}, the channel spoke since"),
            ProactiveOutcome::AlreadyDone => format!("{name}, judged before"),
            ProactiveOutcome::Held(_) => format!("held: {name}"),
        };
        format!("proactive judgment: {what}")
    }

    /// Under a judgment, the rule stage's reasoning, when it ruled.
    fn rule_stage(&mut self, e: &Event) -> io::Result<()> {
        if let Some(ruling) = match &e.kind {
            EventKind::Judgment { verdict, .. } => verdict.ruling(),
            _ => None,
        } {
            writeln!(
                self.out,
                "{INDENT}rule stage: {}",
                ruling.explain().trim_end()
            )?;
        }
        Ok(())
    }

    /// Under the event, its prompts: whole in a dry run, except memory's.
    fn event_prompts(&mut self, e: &Event) -> io::Result<()> {
        match &e.kind {
            EventKind::Judgment { prompts, .. }
            | EventKind::NoReply { prompts, .. }
            | EventKind::Proactive { prompts, .. } => {
                let full = self.dry_run;
                self.prompts(prompts, full)
            }
            EventKind::Memory { prompts, .. } => self.prompts(prompts, false),
            _ => Ok(()),
        }
    }
}

/// The summary, one writer per group of its lines.
impl<W: Write> TextSink<W> {
    /// The rule, then what was read and what the bot made of it: messages,
    /// skipped entries, judgments, replies.
    fn summary_conversations(&mut self, s: &Summary) -> io::Result<()> {
        writeln!(self.out)?;
        writeln!(
            self.out,
            "── summary{} ─────────────────────────────────────────",
            if s.dry_run { " (dry run)" } else { "" }
        )?;
        writeln!(
            self.out,
            "messages      {} in {} channel(s), {} thread(s); {} edit(s), {} deletion(s)",
            s.messages, s.channels, s.threads, s.edits, s.deletions
        )?;
        writeln!(
            self.out,
            "skipped       {}{}",
            s.skipped_count(),
            counts(&s.skipped, " (", ")")
        )?;
        writeln!(
            self.out,
            "judgments     {}{}",
            s.judgment_count(),
            counts(&s.judgments, " (", ")")
        )?;
        writeln!(
            self.out,
            "replies       {} ({} to mentions, {} short), {} reactions{}",
            s.replies,
            s.mention_replies,
            s.short_replies,
            s.reactions,
            counts(&s.no_replies, "; no reply: ", "")
        )
    }

    /// Proactive judgments, and the topics opened per channel and week.
    fn summary_proactive(&mut self, s: &Summary) -> io::Result<()> {
        let openers: usize = s.openers.values().sum();
        let weeks = s.weeks();
        let per_week: Vec<String> = s
            .openers
            .iter()
            .map(|(channel, n)| {
                format!(
                    "#{channel} {n} ({:.1}/week)",
                    *n as f64 / weeks.max(f64::EPSILON)
                )
            })
            .collect();
        writeln!(
            self.out,
            "proactive     {} judgment(s){}; {openers} topic(s) opened{}",
            s.proactive_count(),
            counts(&s.proactive, " (", ")"),
            if per_week.is_empty() {
                String::new()
            } else {
                format!(": {} over {weeks:.1} week(s)", per_week.join(", "))
            }
        )
    }

    /// Memories written, and the facts the bot ends up knowing.
    fn summary_memories(&mut self, s: &Summary) -> io::Result<()> {
        writeln!(
            self.out,
            "memories      {}{}",
            s.memory_count(),
            counts(&s.memories, " (", ")")
        )?;
        if !s.learnt.is_empty() {
            writeln!(self.out, "learnt        {} facts", s.learnt.len())?;
            for (channel, fact) in &s.learnt {
                writeln!(self.out, "{INDENT}#{channel}: {}", Self::flow(fact))?;
            }
        }
        Ok(())
    }

    /// The LLM's calls per role (the prompts made, in a dry run), and the
    /// prompts written to files.
    fn summary_llm(&mut self, s: &Summary) -> io::Result<()> {
        let calls: Vec<String> = s
            .llm
            .iter()
            .map(|(role, r)| {
                if s.dry_run {
                    format!("{role} {} ({} chars)", r.calls, thousands(r.prompt_chars))
                } else {
                    let failed = if r.failures > 0 {
                        format!(", {} failed", r.failures)
                    } else {
                        String::new()
                    };
                    format!(
                        "{role} {} ({} in / {} out tokens{failed})",
                        r.calls,
                        thousands(r.prompt_tokens),
                        thousands(r.completion_tokens)
                    )
                }
            })
            .collect();
        let calls = if calls.is_empty() {
            "none".to_owned()
        } else {
            calls.join(", ")
        };
        // A dry run writes no memory, so every sweep asks again for what
        // nothing answered: its prompts are not what a live run would cost.
        let (label, note) = if s.dry_run {
            (
                "LLM prompts  ",
                "\n              (dry run: made and shown, none sent; no memory is written, so\n              every sweep asks again, which a live run would not: not its cost)",
            )
        } else {
            ("LLM calls    ", "")
        };
        writeln!(self.out, "{label} {calls}{note}")?;
        if s.prompts_written > 0 {
            writeln!(self.out, "prompts       {} written", s.prompts_written)?;
        }
        Ok(())
    }

    /// The jobs run, failed, left pending, and the digests unusable.
    fn summary_jobs(&mut self, s: &Summary) -> io::Result<()> {
        let failures = if s.job_failures > 0 {
            format!(", {} failed", s.job_failures)
        } else {
            String::new()
        };
        let left = if s.jobs_left > 0 {
            format!(", {} left pending (bound reached)", s.jobs_left)
        } else {
            String::new()
        };
        let unusable = if s.unusable_digests > 0 {
            format!(
                ", {} unusable digest answer(s): their channels back off",
                s.unusable_digests
            )
        } else {
            String::new()
        };
        writeln!(
            self.out,
            "jobs          {} run ({} memory sweeps){failures}{left}{unusable}",
            s.jobs_run, s.sweeps
        )?;
        if let Some(i) = &s.isolation {
            let each: Vec<String> = i
                .prompts
                .iter()
                .map(|(team, n)| format!("{team} {n}"))
                .collect();
            writeln!(
                self.out,
                "workspaces    {} (prompts: {}); {} prompt(s) with another's marker words (of {})",
                i.prompts.len(),
                each.join(", "),
                i.crossing,
                i.markers
            )?;
            for (number, team, word) in &i.examples {
                writeln!(
                    self.out,
                    "              prompt #{number} of {team} holds {word}"
                )?;
            }
        }
        Ok(())
    }

    /// The virtual time the replay covered, and the wall clock it took.
    fn summary_time(&mut self, s: &Summary) -> io::Result<()> {
        if let (Some(first), Some(last)) = (s.first, s.last) {
            writeln!(
                self.out,
                "virtual time  {} -> {} ({})",
                self.time(first),
                self.time(last),
                span((last - first).num_seconds())
            )?;
        }
        writeln!(
            self.out,
            "elapsed       {:.2} s wall clock",
            s.elapsed.as_secs_f64()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{DueReply, Verdict};
    use myao_domain::rules::{Decision, Score, Signal, Thresholds};
    use myao_domain::{Channel, ChannelId, Visibility};
    use myao_services::judgment::Ruling;

    #[test]
    fn a_sure_judgment_shows_where_it_replies_and_its_ruling() {
        let at = Ts::parse("1767600600.000100").unwrap().to_datetime();
        let question = Ts::parse("1767600000.000100").unwrap();
        let due = at + chrono::Duration::seconds(30);
        let mut out = Vec::new();
        TextSink::new(&mut out)
            .event(&Event {
                at,
                channel: Some(Channel {
                    id: ChannelId::parse("C1").unwrap(),
                    name: "general".into(),
                    visibility: Visibility::PUBLIC,
                }),
                thread_ts: None,
                kind: EventKind::Judgment {
                    verdict: Verdict {
                        outcome: JudgmentOutcome::Sure {
                            ruling: Ruling {
                                score: Score {
                                    total: 60,
                                    signals: vec![Signal::UnansweredQuestion, Signal::AfterSilence],
                                    answers: Some(question),
                                    again: None,
                                    wait: None,
                                },
                                thresholds: Thresholds { low: 20, high: 50 },
                                decision: Decision::Respond,
                                tuned: 0,
                            },
                            at: due,
                        },
                        dry_run: false,
                        reply: Some(DueReply {
                            at: due,
                            delay_seconds: 30,
                            thread: Some(question),
                        }),
                    },
                    prompts: vec![],
                },
            })
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        // The signals' points as the rule stage weighs them today: a new
        // weight is a new snapshot.
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_hint_names_who_gave_it_on_which_post_and_a_withdrawn_one_says_so() {
        let on = Ts::parse("1767603780.000100").unwrap();
        let line = |withdrawn: bool| {
            let mut out = Vec::new();
            TextSink::new(&mut out)
                .event(&Event {
                    at: on.to_datetime() + chrono::Duration::seconds(20),
                    channel: None,
                    thread_ts: None,
                    kind: EventKind::Hint(HintGiven {
                        on,
                        user_name: "alice".into(),
                        emoji: "-1".into(),
                        hint: "negative".into(),
                        withdrawn,
                    }),
                })
                .unwrap();
            String::from_utf8(out).unwrap()
        };
        let given = line(false);
        assert!(
            given.contains("alice reacted :-1: on the bot's 09:03: a negative hint\n"),
            "{given}"
        );
        let taken = line(true);
        assert!(
            taken.contains("alice took back :-1: on the bot's 09:03: a negative hint withdrawn\n"),
            "{taken}"
        );
    }

    #[test]
    fn a_reaction_names_its_emoji_and_the_message_it_is_on() {
        let on = Ts::parse("1767603780.000100").unwrap();
        let mut out = Vec::new();
        TextSink::new(&mut out)
            .event(&Event {
                at: on.to_datetime() + chrono::Duration::seconds(20),
                channel: Some(Channel {
                    id: ChannelId::parse("C1").unwrap(),
                    name: "general".into(),
                    visibility: Visibility::PUBLIC,
                }),
                thread_ts: None,
                kind: EventKind::Reaction {
                    on,
                    user_name: Some("alice".into()),
                    emoji: "tada".into(),
                    mention: false,
                },
            })
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("the bot added reaction :tada: on alice's 09:03\n"),
            "{text}"
        );
    }

    #[test]
    fn numbers_and_spans_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(span(0), "0 s");
        assert_eq!(span(59), "59 s");
        assert_eq!(span(3_600), "1 h");
        assert_eq!(span(3_660), "1 h 1 min");
        assert_eq!(span(2 * 86_400 + 3 * 3_600 + 4 * 60 + 5), "2 d 3 h 4 min");
    }
}
