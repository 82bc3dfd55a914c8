//! What a replay reports: a timeline of events and a closing summary,
//! written as readable text or as one JSON object per line.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use myao::domain::{Channel, MemoryKind, Ts, UserId};
use myao::ports::LlmRole;
use serde_json::{json, Value};

use crate::twins::RoleStats;

/// What the replay is about to do.
#[derive(Debug, Clone)]
pub struct Header {
    pub source: String,
    pub channels: Vec<Channel>,
    pub users: usize,
    pub entries: usize,
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    pub bot_user_id: UserId,
    pub bot_name: String,
    /// `None` for a dry run; else the endpoint and models.
    pub llm: Option<String>,
    pub min_wait_seconds: u32,
    pub jitter_ratio: f64,
    pub autonomous_replies: bool,
    pub memory_interval_seconds: Option<i64>,
    pub seed: u64,
    pub timezone: Tz,
}

/// A prompt sent to the LLM (recorded in a dry run, or with a prompts folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// 1, 2, 3... in the order they were made.
    pub number: usize,
    pub role: LlmRole,
    pub chars: usize,
    pub text: String,
    /// Where it was written, with `--prompts-dir`.
    pub file: Option<PathBuf>,
}

/// What a judgment decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Respond {
        delay_seconds: i64,
        reply_at: DateTime<Utc>,
        reason: String,
        confidence: f64,
    },
    Declined {
        reason: String,
        confidence: f64,
    },
    /// The LLM failed or its answer was no verdict: silence.
    NoVerdict {
        reason: String,
    },
    /// No LLM: the prompt is all there is.
    DryRun,
    /// A newer message came in; its own judgment decides.
    Stale,
    BotSpokeLast,
    TooOld,
    /// Every message of the conversation was deleted.
    Empty,
}

impl Verdict {
    /// The name of the outcome, for counts and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Respond { .. } => "respond",
            Verdict::Declined { .. } => "declined",
            Verdict::NoVerdict { .. } => "no verdict",
            Verdict::DryRun => "dry run",
            Verdict::Stale => "stale",
            Verdict::BotSpokeLast => "bot spoke last",
            Verdict::TooOld => "too old",
            Verdict::Empty => "empty",
        }
    }
}

/// A memory that was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNote {
    /// `workspace`, `channel #general`, `thread #general 09:00:12`.
    pub label: String,
    /// `workspace`, `channel` or `thread`.
    pub scope: &'static str,
    pub kind: MemoryKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// A message of the export, stored.
    Message {
        ts: Ts,
        user: UserId,
        user_name: String,
        /// As Slack wrote it.
        text: String,
        /// Readable: mentions and links resolved.
        shown: String,
        is_bot: bool,
    },
    Edited {
        ts: Ts,
        user_name: Option<String>,
        text: String,
        /// Whether the edited message was in the replay.
        known: bool,
    },
    Deleted {
        ts: Ts,
        user_name: Option<String>,
        /// The text it had, when it was in the replay.
        text: Option<String>,
    },
    /// An entry the bot does not act on (a join, an unknown subtype...).
    Skipped {
        reason: String,
    },
    Judgment {
        verdict: Verdict,
        prompts: Vec<Prompt>,
    },
    /// The bot posted.
    Reply {
        ts: Ts,
        text: String,
        mention: bool,
    },
    /// A response job that posted nothing.
    NoReply {
        mention: bool,
        reason: String,
        prompts: Vec<Prompt>,
    },
    /// A memory job (the recurring sweep, or one thread's refresh).
    Memory {
        sweep: bool,
        written: Vec<MemoryNote>,
        llm_calls: usize,
        prompts: Vec<Prompt>,
        /// A dry-run sweep with nothing new since the previous one: it only
        /// asks again for what no LLM answered (the text shows none of these).
        repeat: bool,
    },
    JobFailed {
        job: String,
        error: String,
    },
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The virtual time.
    pub at: DateTime<Utc>,
    pub channel: Option<Channel>,
    /// The thread it belongs to (`None`: the top level, or no conversation).
    pub thread_ts: Option<Ts>,
    pub kind: EventKind,
}

/// The closing summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub dry_run: bool,
    /// New messages stored (the bot's replies not included).
    pub messages: usize,
    pub channels: usize,
    /// Threads the stored messages belong to.
    pub threads: usize,
    pub edits: usize,
    pub deletions: usize,
    /// Entries not acted on, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Judgments by outcome.
    pub judgments: BTreeMap<&'static str, usize>,
    pub replies: usize,
    pub mention_replies: usize,
    /// Response jobs that posted nothing, by reason.
    pub no_replies: BTreeMap<String, usize>,
    /// Memories written, by `scope kind` (`channel short`).
    pub memories: BTreeMap<String, usize>,
    pub llm: BTreeMap<&'static str, RoleStats>,
    pub prompts_written: usize,
    pub jobs_run: usize,
    /// Memory sweeps among the jobs run.
    pub sweeps: usize,
    pub job_failures: usize,
    /// Jobs still pending when the replay stopped (after its bound).
    pub jobs_left: usize,
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    pub elapsed: std::time::Duration,
}

impl Summary {
    /// The judgments made, whatever they decided.
    pub fn judgment_count(&self) -> usize {
        self.judgments.values().sum()
    }
    pub fn skipped_count(&self) -> usize {
        self.skipped.values().sum()
    }
    pub fn memory_count(&self) -> usize {
        self.memories.values().sum()
    }
}

/// Where a replay writes what happens.
pub trait Sink {
    fn header(&mut self, header: &Header) -> io::Result<()>;
    fn event(&mut self, event: &Event) -> io::Result<()>;
    fn summary(&mut self, summary: &Summary) -> io::Result<()>;
}

/// Keeps everything in memory (tests, benchmarks).
#[derive(Debug, Default)]
pub struct Recorder {
    pub header: Option<Header>,
    pub events: Vec<Event>,
    pub summary: Option<Summary>,
    /// Keep no events, only the header and summary (benchmarks).
    pub discard_events: bool,
}

impl Sink for Recorder {
    fn header(&mut self, header: &Header) -> io::Result<()> {
        self.header = Some(header.clone());
        Ok(())
    }
    fn event(&mut self, event: &Event) -> io::Result<()> {
        if !self.discard_events {
            self.events.push(event.clone());
        }
        Ok(())
    }
    fn summary(&mut self, summary: &Summary) -> io::Result<()> {
        self.summary = Some(summary.clone());
        Ok(())
    }
}

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

fn role_name(role: LlmRole) -> &'static str {
    role.as_str()
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

    fn time(&self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.tz)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
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
                role_name(p.role),
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
                "  DRY RUN: no LLM configured (llm_base_url, MYAO_LLM_BASE_URL or --llm-base-url).\n  \
                 Each prompt is shown; no verdict, reply or memory is invented."
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
        let top = if e.channel.is_some() && e.thread_ts.is_none() {
            " (top level)"
        } else {
            ""
        };
        let line = match &e.kind {
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
            EventKind::Judgment { verdict, .. } => {
                let what = match verdict {
                    Verdict::Respond {
                        delay_seconds,
                        reason,
                        confidence,
                        ..
                    } => {
                        let when = if *delay_seconds <= 0 {
                            "respond now".to_owned()
                        } else {
                            format!("respond in {delay_seconds} s")
                        };
                        format!("{when} — {reason} (confidence {confidence:.2})")
                    }
                    Verdict::Declined { reason, confidence } => {
                        format!("stay silent — {reason} (confidence {confidence:.2})")
                    }
                    Verdict::NoVerdict { reason } => format!("no verdict, silent — {reason}"),
                    Verdict::DryRun => "dry run, no verdict".to_owned(),
                    Verdict::Stale => "stale, a newer message has its own judgment".to_owned(),
                    Verdict::BotSpokeLast => "nothing to add, the bot spoke last".to_owned(),
                    Verdict::TooOld => "skipped, the newest message is too old".to_owned(),
                    Verdict::Empty => "skipped, every message was deleted".to_owned(),
                };
                format!("judgment{top}: {what}")
            }
            EventKind::Reply { text, mention, .. } => {
                let what = if *mention {
                    "answered the mention"
                } else {
                    "replied"
                };
                format!("{} {what}: {}", self.bot_name, Self::flow(text))
            }
            EventKind::NoReply {
                mention,
                reason,
                prompts,
            } => {
                let what = if *mention {
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
            EventKind::Memory {
                sweep,
                written,
                llm_calls,
                prompts,
                ..
            } => {
                let what = if *sweep { "memory sweep" } else { "memory" };
                if written.is_empty() {
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
                    format!("{what}: wrote {}", notes.join(", "))
                }
            }
            EventKind::JobFailed { job, error } => format!("{job} job failed: {error}"),
        };
        if place.is_empty() {
            writeln!(self.out, "{time}  {line}")?;
        } else {
            writeln!(self.out, "{time}  {place}  {line}")?;
        }
        match &e.kind {
            EventKind::Judgment { prompts, .. } | EventKind::NoReply { prompts, .. } => {
                let full = self.dry_run;
                self.prompts(prompts, full)?;
            }
            EventKind::Memory { prompts, .. } => self.prompts(prompts, false)?,
            _ => {}
        }
        Ok(())
    }

    fn summary(&mut self, s: &Summary) -> io::Result<()> {
        let list = |m: &BTreeMap<String, usize>| -> String {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
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
        let skipped = if s.skipped.is_empty() {
            String::new()
        } else {
            format!(" ({})", list(&s.skipped))
        };
        writeln!(self.out, "skipped       {}{skipped}", s.skipped_count())?;
        let judgments: BTreeMap<String, usize> = s
            .judgments
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect();
        let by = if judgments.is_empty() {
            String::new()
        } else {
            format!(" ({})", list(&judgments))
        };
        writeln!(self.out, "judgments     {}{by}", s.judgment_count())?;
        let none = if s.no_replies.is_empty() {
            String::new()
        } else {
            format!("; no reply: {}", list(&s.no_replies))
        };
        writeln!(
            self.out,
            "replies       {} ({} to mentions){none}",
            s.replies, s.mention_replies
        )?;
        let memories = if s.memories.is_empty() {
            String::new()
        } else {
            format!(" ({})", list(&s.memories))
        };
        writeln!(self.out, "memories      {}{memories}", s.memory_count())?;
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
        let note = if s.dry_run {
            "; dry run, none sent"
        } else {
            ""
        };
        writeln!(self.out, "LLM calls     {calls}{note}")?;
        if s.prompts_written > 0 {
            writeln!(self.out, "prompts       {} written", s.prompts_written)?;
        }
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
        writeln!(
            self.out,
            "jobs          {} run ({} memory sweeps){failures}{left}",
            s.jobs_run, s.sweeps
        )?;
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
        )?;
        self.out.flush()
    }
}

/// One JSON object per line.
pub struct JsonSink<W: Write> {
    out: W,
}

impl<W: Write> JsonSink<W> {
    pub fn new(out: W) -> JsonSink<W> {
        JsonSink { out }
    }

    fn line(&mut self, value: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")
    }
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn prompts_json(prompts: &[Prompt]) -> Value {
    Value::Array(
        prompts
            .iter()
            .map(|p| {
                json!({
                    "number": p.number,
                    "role": role_name(p.role),
                    "chars": p.chars,
                    "file": p.file.as_ref().map(|f| f.display().to_string()),
                    "text": if p.file.is_some() { None } else { Some(&p.text) },
                })
            })
            .collect(),
    )
}

/// The JSON object of an event.
pub fn event_json(e: &Event) -> Value {
    let mut v = match &e.kind {
        EventKind::Message {
            ts,
            user,
            user_name,
            text,
            is_bot,
            ..
        } => json!({"type": "message", "ts": ts, "user": user, "user_name": user_name,
                     "text": text, "is_bot": is_bot}),
        EventKind::Edited {
            ts,
            user_name,
            text,
            known,
        } => {
            json!({"type": "edit", "ts": ts, "user_name": user_name, "text": text, "known": known})
        }
        EventKind::Deleted {
            ts,
            user_name,
            text,
        } => json!({"type": "deletion", "ts": ts, "user_name": user_name, "text": text}),
        EventKind::Skipped { reason } => json!({"type": "skipped", "reason": reason}),
        EventKind::Judgment { verdict, prompts } => {
            let mut j = json!({"type": "judgment", "outcome": verdict.name(), "prompts": prompts_json(prompts)});
            match verdict {
                Verdict::Respond {
                    delay_seconds,
                    reply_at,
                    reason,
                    confidence,
                } => {
                    j["delay_seconds"] = json!(delay_seconds);
                    j["reply_at"] = json!(time(*reply_at));
                    j["reason"] = json!(reason);
                    j["confidence"] = json!(confidence);
                }
                Verdict::Declined { reason, confidence } => {
                    j["reason"] = json!(reason);
                    j["confidence"] = json!(confidence);
                }
                Verdict::NoVerdict { reason } => j["reason"] = json!(reason),
                _ => {}
            }
            j
        }
        EventKind::Reply { ts, text, mention } => {
            json!({"type": "reply", "ts": ts, "text": text, "mention": mention})
        }
        EventKind::NoReply {
            mention,
            reason,
            prompts,
        } => json!({"type": "no_reply", "mention": mention, "reason": reason,
                     "prompts": prompts_json(prompts)}),
        EventKind::Memory {
            sweep,
            written,
            llm_calls,
            prompts,
            repeat,
        } => json!({
            "type": "memory",
            "job": if *sweep { "sweep" } else { "thread" },
            "repeat": repeat,
            "written": written.iter().map(|n| json!({"scope": n.scope, "label": n.label, "kind": n.kind.as_str()})).collect::<Vec<_>>(),
            "llm_calls": llm_calls,
            "prompts": prompts_json(prompts),
        }),
        EventKind::JobFailed { job, error } => {
            json!({"type": "job_failed", "job": job, "error": error})
        }
    };
    v["time"] = json!(time(e.at));
    v["channel"] = json!(e.channel.as_ref().map(|c| c.id.as_str()));
    v["channel_name"] = json!(e.channel.as_ref().map(|c| c.name.as_str()));
    v["thread_ts"] = json!(e.thread_ts);
    v
}

/// The JSON object of the summary.
pub fn summary_json(s: &Summary) -> Value {
    let llm: serde_json::Map<String, Value> = s
        .llm
        .iter()
        .map(|(role, r)| {
            (
                (*role).to_owned(),
                json!({"calls": r.calls, "failures": r.failures, "prompt_chars": r.prompt_chars,
                       "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens}),
            )
        })
        .collect();
    json!({
        "type": "summary",
        "dry_run": s.dry_run,
        "messages": s.messages,
        "channels": s.channels,
        "threads": s.threads,
        "edits": s.edits,
        "deletions": s.deletions,
        "skipped": s.skipped,
        "judgments": s.judgments,
        "replies": s.replies,
        "mention_replies": s.mention_replies,
        "no_replies": s.no_replies,
        "memories": s.memories,
        "llm": llm,
        "prompts_written": s.prompts_written,
        "jobs_run": s.jobs_run,
        "sweeps": s.sweeps,
        "job_failures": s.job_failures,
        "jobs_left": s.jobs_left,
        "first": s.first.map(time),
        "last": s.last.map(time),
        "virtual_seconds": match (s.first, s.last) { (Some(f), Some(l)) => Some((l - f).num_seconds()), _ => None },
        "elapsed_seconds": s.elapsed.as_secs_f64(),
    })
}

impl<W: Write> Sink for JsonSink<W> {
    fn header(&mut self, h: &Header) -> io::Result<()> {
        let v = json!({
            "type": "replay",
            "source": h.source,
            "channels": h.channels.iter().map(|c| json!({"id": c.id, "name": c.name})).collect::<Vec<_>>(),
            "users": h.users,
            "entries": h.entries,
            "first": h.first.map(time),
            "last": h.last.map(time),
            "bot_user_id": h.bot_user_id,
            "bot_name": h.bot_name,
            "dry_run": h.llm.is_none(),
            "llm": h.llm,
            "min_wait_seconds": h.min_wait_seconds,
            "jitter_ratio": h.jitter_ratio,
            "autonomous_replies": h.autonomous_replies,
            "memory_interval_seconds": h.memory_interval_seconds,
            "seed": h.seed,
            "timezone": h.timezone.name(),
        });
        self.line(&v)
    }

    fn event(&mut self, e: &Event) -> io::Result<()> {
        self.line(&event_json(e))
    }

    fn summary(&mut self, s: &Summary) -> io::Result<()> {
        self.line(&summary_json(s))?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
