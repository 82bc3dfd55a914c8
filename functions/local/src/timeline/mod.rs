//! What a replay reports: a timeline of events and a closing summary,
//! written as readable text ([`TextSink`]) or as one JSON object per line
//! ([`JsonSink`]).

mod json;
mod text;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use myao_core::ports::LlmRole;
use myao_domain::{Channel, MemoryKind, Ts, UserId};
use myao_services::judgment::{JudgmentOutcome, Ruling};
use myao_services::proactive::ProactiveOutcome;

use crate::twins::RoleStats;

pub use json::{event_json, summary_json, JsonSink};
pub use text::{span, thousands, TextSink};

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

/// The name of what a replay without an LLM shows where the LLM would
/// have judged (a judgment's or a proactive judgment's): the prompt is all
/// there is. The replay's only outcome the app has no name for.
pub const DRY_RUN: &str = "dry run";

/// What a judgment decided: the app's own outcome, which names it as the
/// logs and the `Judgments` metric do, and what the replay adds.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: JudgmentOutcome,
    /// No LLM: an unusable answer in the rule stage's ambiguous band is the
    /// dry run's ([`DRY_RUN`]), its prompt all there is.
    pub dry_run: bool,
    /// The reply the judgment made due (`llm_yes`, `rule_yes`,
    /// `rule_react`), if it made one.
    pub reply: Option<DueReply>,
}

/// A reply a judgment made due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueReply {
    /// When it is due, and how long after the judgment that is.
    pub at: DateTime<Utc>,
    pub delay_seconds: i64,
    /// Where the reply goes: the thread of the judged conversation, or of
    /// the earlier top-level message it answers (`None`: the top level).
    pub thread: Option<Ts>,
}

impl Verdict {
    /// The name of the outcome, for counts, JSON and the text timeline:
    /// [`JudgmentOutcome::name`], or [`DRY_RUN`].
    pub fn name(&self) -> &'static str {
        if self.is_dry_run() {
            DRY_RUN
        } else {
            self.outcome.name()
        }
    }

    /// Whether the LLM would have judged, in a replay without one.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run && matches!(self.outcome, JudgmentOutcome::Silent { .. })
    }

    /// The rule stage's score, signals, thresholds and decision; `None`
    /// when no score was made (stale, empty, held by a gate).
    pub fn ruling(&self) -> Option<&Ruling> {
        self.outcome.ruling()
    }
}

/// The name of a proactive judgment's outcome, for counts and JSON: the
/// outcome's own ([`ProactiveOutcome::name`]), or [`DRY_RUN`] for the no
/// verdict of a replay without an LLM.
pub fn proactive_name(outcome: &ProactiveOutcome, dry_run: bool) -> &'static str {
    match outcome {
        ProactiveOutcome::Silent(_) if dry_run => DRY_RUN,
        other => other.name(),
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
        /// One short sentence ("nice!").
        short: bool,
        /// A topic it opened unasked, after a silence (proactive talk).
        opener: bool,
    },
    /// The bot reacted to a message (`user_name`'s, of `on`).
    Reaction {
        on: Ts,
        user_name: Option<String>,
        emoji: String,
        mention: bool,
    },
    /// A person's reaction on one of the bot's posts that is a hint
    /// (`user_name`'s `:emoji:` on the post `on`): kept as a label, and
    /// tuning the channel's judgments from then on.
    Hint(HintGiven),
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
        /// The facts reflection wrote.
        facts: Vec<String>,
        llm_calls: usize,
        prompts: Vec<Prompt>,
        /// A dry-run sweep with nothing new since the previous one: it only
        /// asks again for what no LLM answered (the text shows none of these).
        repeat: bool,
        /// The proactive judgments the sweep scheduled: channel name, when.
        proactive: Vec<(String, DateTime<Utc>)>,
    },
    /// A proactive judgment: whether to open a topic in a quiet channel.
    Proactive {
        outcome: ProactiveOutcome,
        /// No LLM: an unusable answer is the dry run's, the prompt is all
        /// there is.
        dry_run: bool,
        prompts: Vec<Prompt>,
    },
    JobFailed {
        job: String,
        error: String,
    },
}

/// A person's hint on one of the bot's posts ([`EventKind::Hint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintGiven {
    /// The post.
    pub on: Ts,
    pub user_name: String,
    pub emoji: String,
    /// `positive`, `negative` or `mute`.
    pub hint: String,
    /// Withdrawn (`reaction_removed`) rather than given.
    pub withdrawn: bool,
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
    /// Reactions on the bot's posts kept as hints (given or withdrawn).
    pub hints: usize,
    /// Entries not acted on, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Judgments by outcome.
    pub judgments: BTreeMap<&'static str, usize>,
    pub replies: usize,
    pub mention_replies: usize,
    /// Reactions the bot added, short replies among the replies.
    pub reactions: usize,
    pub short_replies: usize,
    /// Proactive judgments by outcome, and the topics opened (posts, among
    /// the replies) by channel name.
    pub proactive: BTreeMap<String, usize>,
    pub openers: BTreeMap<String, usize>,
    /// What the bot remembers at the end: channel name and fact.
    pub learnt: Vec<(String, String)>,
    /// Response jobs that posted nothing, by reason.
    pub no_replies: BTreeMap<String, usize>,
    /// Memories written, by `scope kind` (`channel short`).
    pub memories: BTreeMap<String, usize>,
    pub llm: BTreeMap<&'static str, RoleStats>,
    pub prompts_written: usize,
    pub jobs_run: usize,
    /// Memory sweeps among the jobs run.
    pub sweeps: usize,
    /// Digest answers that could not be used (their channel backs off).
    pub unusable_digests: usize,
    pub job_failures: usize,
    /// Jobs still pending when the replay stopped (after its bound).
    pub jobs_left: usize,
    /// Of a replay of several workspaces: how their prompts kept apart.
    pub isolation: Option<Isolation>,
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
    pub elapsed: std::time::Duration,
}

/// How a replay of several workspaces kept them apart: each prompt is
/// one workspace's (the job's team), and none may hold a marker word
/// (`MARK-...`) of another's export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Isolation {
    /// Prompts by workspace.
    pub prompts: BTreeMap<String, usize>,
    /// The marker words the exports hold, all told.
    pub markers: usize,
    /// Prompts holding another workspace's marker word: 0 is the measure.
    pub crossing: usize,
    /// The first few of those: prompt number, its workspace, the word.
    pub examples: Vec<(usize, String, String)>,
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
    pub fn proactive_count(&self) -> usize {
        self.proactive.values().sum()
    }
    /// The weeks of virtual time the replay covered (at least a day's worth,
    /// so that a short replay does not read as a huge rate).
    pub fn weeks(&self) -> f64 {
        match (self.first, self.last) {
            (Some(first), Some(last)) => {
                ((last - first).num_seconds().max(86_400)) as f64 / 604_800.0
            }
            _ => 0.0,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::judgment::ResponseType;
    use myao_domain::rules::{self, Decision, Score, Thresholds};
    use myao_domain::{ChannelId, Job, JudgmentJob, JudgmentResult, ProactiveJob, Visibility};
    use myao_services::jobs::JobOutcome;
    use myao_services::proactive::Hold;

    fn ruling(decision: Decision) -> Ruling {
        Ruling {
            score: Score {
                total: 30,
                signals: vec![],
                answers: None,
                again: None,
                wait: None,
            },
            thresholds: Thresholds { low: 20, high: 40 },
            decision,
            tuned: 0,
        }
    }

    fn result(should_respond: bool) -> JudgmentResult {
        JudgmentResult {
            should_respond,
            reason: "a reason".into(),
            confidence: 0.5,
            delay_seconds: None,
            response_type: if should_respond {
                ResponseType::Full
            } else {
                ResponseType::None
            },
            emoji: None,
        }
    }

    fn at() -> DateTime<Utc> {
        Ts::parse("1767600000.000100").unwrap().to_datetime()
    }

    /// Every judgment outcome the app has, each gate's and each sure
    /// decision's.
    fn every_judgment() -> Vec<JudgmentOutcome> {
        let at = at();
        let mut all = vec![
            JudgmentOutcome::Stale,
            JudgmentOutcome::Empty,
            JudgmentOutcome::Quiet(ruling(Decision::Silent)),
            JudgmentOutcome::Capped(ruling(Decision::Respond)),
            JudgmentOutcome::Silent {
                ruling: ruling(Decision::Ask),
                why: myao_services::judgment::Unusable::NotAVerdict {
                    error: myao_domain::judgment::JudgmentParseError::NoJson,
                    answer: "meow".into(),
                },
            },
            JudgmentOutcome::Declined(ruling(Decision::Ask), result(false)),
            JudgmentOutcome::Respond {
                ruling: ruling(Decision::Ask),
                result: result(true),
                at,
            },
            JudgmentOutcome::Sure {
                ruling: ruling(Decision::Respond),
                at,
            },
            JudgmentOutcome::Sure {
                ruling: ruling(Decision::React),
                at,
            },
        ];
        all.extend(
            rules::GATES
                .iter()
                .map(|(gate, _)| JudgmentOutcome::Held(*gate)),
        );
        // A new outcome fails to compile here until it is listed above.
        for outcome in &all {
            match outcome {
                JudgmentOutcome::Stale
                | JudgmentOutcome::Empty
                | JudgmentOutcome::Held(_)
                | JudgmentOutcome::Quiet(_)
                | JudgmentOutcome::Capped(_)
                | JudgmentOutcome::Silent { .. }
                | JudgmentOutcome::Declined(..)
                | JudgmentOutcome::Respond { .. }
                | JudgmentOutcome::Sure { .. } => {}
            }
        }
        all
    }

    /// Every proactive outcome the app has, each hold's.
    fn every_proactive() -> Vec<ProactiveOutcome> {
        let holds = [
            Hold::Off,
            Hold::NotAllowed,
            Hold::MentionsOnly,
            Hold::OutsideHours,
            Hold::Muted,
            Hold::Empty,
            Hold::NotSilent,
            Hold::BotSpokeLast,
            Hold::Cooldown,
            Hold::WeekFull,
            Hold::HourFull,
        ];
        let mut all = vec![
            ProactiveOutcome::Stale,
            ProactiveOutcome::AlreadyDone,
            ProactiveOutcome::Silent(myao_services::proactive::Unusable::NotAVerdict(
                myao_domain::proactive::OpeningParseError::NoJson,
            )),
            ProactiveOutcome::Declined,
            ProactiveOutcome::Open {
                topic: "cats".into(),
                at: at(),
            },
        ];
        all.extend(holds.into_iter().map(ProactiveOutcome::Held));
        // A new outcome or hold fails to compile here until it is listed above.
        for outcome in &all {
            match outcome {
                ProactiveOutcome::Held(
                    Hold::Off
                    | Hold::NotAllowed
                    | Hold::MentionsOnly
                    | Hold::OutsideHours
                    | Hold::Muted
                    | Hold::Empty
                    | Hold::NotSilent
                    | Hold::BotSpokeLast
                    | Hold::Cooldown
                    | Hold::WeekFull
                    | Hold::HourFull,
                )
                | ProactiveOutcome::Stale
                | ProactiveOutcome::AlreadyDone
                | ProactiveOutcome::Silent(_)
                | ProactiveOutcome::Declined
                | ProactiveOutcome::Open { .. } => {}
            }
        }
        all
    }

    fn event(kind: EventKind) -> Event {
        Event {
            at: at(),
            channel: Some(Channel {
                id: ChannelId::parse("C1").unwrap(),
                name: "general".into(),
                visibility: Visibility::PUBLIC,
            }),
            thread_ts: None,
            kind,
        }
    }

    /// The line the text sink writes for `event`.
    fn line(event: &Event) -> String {
        let mut out = Vec::new();
        TextSink::new(&mut out).event(event).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The value of the metric `job` counts `outcome` under, by `Outcome`.
    fn metric(outcome: JobOutcome, job: &Job) -> String {
        match outcome.metric(job).and_then(|d| d.dimension) {
            Some(("Outcome", value)) => value,
            other => panic!("no Outcome: {other:?}"),
        }
    }

    #[test]
    fn the_timeline_names_a_judgment_as_its_metric_does() {
        let job = Job::Judgment(JudgmentJob {
            channel: ChannelId::parse("C1").unwrap(),
            thread_ts: None,
            newest_ts: Ts::parse("1767600000.000100").unwrap(),
        });
        let mut names = BTreeMap::new();
        for outcome in every_judgment() {
            let counted = metric(JobOutcome::Judgment(outcome.clone()), &job);
            for dry_run in [false, true] {
                let verdict = Verdict {
                    outcome: outcome.clone(),
                    dry_run,
                    reply: None,
                };
                let name = verdict.name();
                if dry_run && matches!(outcome, JudgmentOutcome::Silent { .. }) {
                    // No LLM: the replay's own name, no metric's.
                    assert_eq!(name, DRY_RUN);
                } else {
                    assert_eq!(name, counted, "{outcome:?}");
                }
                let e = event(EventKind::Judgment {
                    verdict,
                    prompts: vec![],
                });
                assert_eq!(event_json(&e)["outcome"], name, "{outcome:?}");
                let shown = line(&e);
                assert!(
                    shown.contains(&format!("judgment (top level): {name}, "))
                        || shown.contains(&format!("judgment (top level): {name}: ")),
                    "{shown}"
                );
                names.insert(name, ());
            }
        }
        assert_eq!(
            names.into_keys().collect::<Vec<_>>(),
            [
                "dry run",
                "empty",
                "held",
                "limited",
                "llm_no",
                "llm_yes",
                "rule_react",
                "rule_silent",
                "rule_yes",
                "stale",
                "too_old",
                "unusable"
            ]
        );
    }

    #[test]
    fn the_timeline_names_a_proactive_judgment_as_its_metric_does() {
        let job = Job::Proactive(ProactiveJob {
            channel: ChannelId::parse("C1").unwrap(),
            made_at: Ts::parse("1767600000.000100").unwrap(),
        });
        for outcome in every_proactive() {
            let counted = metric(JobOutcome::Proactive(outcome.clone()), &job);
            for dry_run in [false, true] {
                let name = proactive_name(&outcome, dry_run);
                if dry_run && matches!(outcome, ProactiveOutcome::Silent(_)) {
                    assert_eq!(name, DRY_RUN);
                } else {
                    assert_eq!(name, counted, "{outcome:?}");
                }
                let e = event(EventKind::Proactive {
                    outcome: outcome.clone(),
                    dry_run,
                    prompts: vec![],
                });
                assert_eq!(event_json(&e)["outcome"], name, "{outcome:?}");
                let shown = line(&e);
                assert!(
                    shown.contains(&format!("proactive judgment: {name}"))
                        || shown.contains(&format!("proactive judgment: held: {name}\n")),
                    "{shown}"
                );
            }
        }
    }
}
