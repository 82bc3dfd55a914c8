//! A job run with the production code, and what it did as the timeline's
//! event, counted in the summary: one step per kind of job that needs more
//! than a line.

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use myao_core::deadline::{job_budget, Deadline};
use myao_core::ports::Clock;
use myao_domain::{
    ChannelId, ChannelMemoryJob, Job, MemoryKind, MemoryScope, Reply, ResponseJob, TeamId, Ts,
};
use myao_services::jobs::{self, JobOutcome};
use myao_services::judgment::JudgmentOutcome;
use myao_services::response::ResponseOutcome;
use myao_services::MemoryReport;

use super::engine::Engine;
use crate::timeline::{proactive_name, DueReply, EventKind, MemoryNote, Prompt, Verdict, DRY_RUN};

impl Engine<'_> {
    /// The prompts recorded since the last call, numbered and written out.
    fn take_prompts(&mut self) -> anyhow::Result<Vec<Prompt>> {
        let mut prompts = Vec::new();
        for call in self.llm.take_calls() {
            self.prompt_count += 1;
            let number = self.prompt_count;
            let file = match &self.prompts_dir {
                Some(dir) => {
                    let path = dir.join(format!("{number:03}-{}.txt", call.role.as_str()));
                    std::fs::write(&path, &call.prompt)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    Some(path)
                }
                None => None,
            };
            prompts.push(Prompt {
                number,
                role: call.role,
                chars: call.prompt.chars().count(),
                text: call.prompt,
                file,
            });
        }
        Ok(prompts)
    }

    fn memory_note(&self, scope: &MemoryScope, kind: MemoryKind) -> MemoryNote {
        let (label, name) = match scope {
            MemoryScope::Workspace => ("workspace".to_owned(), "workspace"),
            MemoryScope::Channel { channel } => (
                format!("channel #{}", self.channel(channel).name),
                "channel",
            ),
            MemoryScope::Thread { channel, thread_ts } => (
                format!(
                    "thread #{} {}",
                    self.channel(channel).name,
                    thread_ts
                        .to_datetime()
                        .with_timezone(&self.timezone)
                        .format("%m-%d %H:%M:%S")
                ),
                "thread",
            ),
        };
        MemoryNote {
            label,
            scope: name,
            kind,
        }
    }

    /// What a judgment came to, for the timeline: the app's outcome, and
    /// the reply it made due, if any.
    fn verdict(
        &self,
        outcome: JudgmentOutcome,
        channel: Option<&ChannelId>,
        now: DateTime<Utc>,
    ) -> Verdict {
        let reply = match &outcome {
            JudgmentOutcome::Respond { at, .. } | JudgmentOutcome::Sure { at, .. } => {
                Some(DueReply {
                    at: *at,
                    delay_seconds: (*at - now).num_seconds(),
                    thread: self.reply_thread(channel, *at),
                })
            }
            _ => None,
        };
        Verdict {
            outcome,
            dry_run: self.dry_run,
            reply,
        }
    }

    /// The thread of the unprompted response job a judgment in `channel`
    /// just made, due at `at` (the judgment picks it: the judged thread, or
    /// that of an earlier top-level message it answers).
    fn reply_thread(&self, channel: Option<&ChannelId>, at: DateTime<Utc>) -> Option<Ts> {
        let response = |job: &Job| match job {
            Job::Response(ResponseJob {
                channel: c,
                thread_ts,
                mention: false,
                ..
            }) if Some(c) == channel => Some(*thread_ts),
            _ => None,
        };
        self.board
            .scheduled()
            .into_iter()
            .map(|s| (s.at, s.job))
            .chain(self.board.queued())
            .filter(|(due, _)| *due == at)
            .find_map(|(_, job)| response(&job))
            .flatten()
    }

    /// Runs one of the stack's own jobs ([`Engine::run_job_as`]).
    pub(super) async fn run_job(&mut self, job: Job) -> anyhow::Result<()> {
        self.run_job_as(None, job).await
    }

    /// Runs one job with the production code, as `team`'s when it is one
    /// (with that workspace's services, as the job functions would), and
    /// reports what it did.
    pub(super) async fn run_job_as(
        &mut self,
        team: Option<TeamId>,
        job: Job,
    ) -> anyhow::Result<()> {
        let now = self.clock.now();
        let team_services = match &team {
            Some(team) => match jobs::team_services(&self.services, team, &job).await? {
                Some(services) => Some(services),
                None => return Ok(()),
            },
            None => None,
        };
        let services = team_services.as_ref().unwrap_or(&self.services);
        // Each job gets its function's timeout, as on Lambda.
        let deadline = Deadline::after(job_budget(job.kind()));
        let result = Deadline::scope(Some(deadline), jobs::run(services, &job)).await;
        self.summary.jobs_run += 1;
        let prompts = self.take_prompts()?;
        self.tally(team.as_ref(), &prompts);
        let conversation = job.conversation();
        let channel = conversation.as_ref().map(|c| c.channel.clone());
        let thread = conversation.as_ref().and_then(|c| c.thread_ts);
        let kind = match result {
            Ok(JobOutcome::Judgment(outcome)) => {
                let verdict = self.verdict(outcome, channel.as_ref(), now);
                *self.summary.judgments.entry(verdict.name()).or_insert(0) += 1;
                EventKind::Judgment { verdict, prompts }
            }
            Ok(JobOutcome::Response(outcome)) => {
                let asked = Asked::of(&job);
                self.response(asked, outcome, channel.as_ref(), prompts)
                    .await?
            }
            // The replay is one workspace's, never uninstalled.
            Ok(JobOutcome::Purged { .. }) => return Ok(()),
            Ok(JobOutcome::Memory(report)) => match self.memory(&job, report, prompts) {
                Some(kind) => kind,
                None => return Ok(()),
            },
            Ok(JobOutcome::Proactive(outcome)) => {
                let name = proactive_name(&outcome, self.dry_run);
                *self.summary.proactive.entry(name.to_owned()).or_insert(0) += 1;
                EventKind::Proactive {
                    outcome,
                    dry_run: self.dry_run,
                    prompts,
                }
            }
            Err(error) => {
                self.summary.job_failures += 1;
                EventKind::JobFailed {
                    job: job.kind().to_string(),
                    error: error.to_string(),
                }
            }
        };
        let unprompted_post = match &kind {
            EventKind::Reply {
                ts, mention: false, ..
            } => Some(*ts),
            _ => None,
        };
        self.emit(channel.as_ref(), thread, kind)?;
        if let (Some(ts), Some(channel)) = (unprompted_post, channel) {
            self.react_to(&channel, ts).await?;
        }
        Ok(())
    }

    /// What a response job did, counted in the summary: the reply it
    /// posted, the reaction it added, or why it did neither.
    async fn response(
        &mut self,
        asked: Asked,
        outcome: ResponseOutcome,
        channel: Option<&ChannelId>,
        prompts: Vec<Prompt>,
    ) -> anyhow::Result<EventKind> {
        let Asked {
            mention,
            short,
            opener,
        } = asked;
        Ok(match outcome {
            ResponseOutcome::Posted { ts, text } => {
                self.summary.replies += 1;
                self.summary.short_replies += usize::from(short);
                if mention {
                    self.summary.mention_replies += 1;
                }
                if opener {
                    let name = channel.map_or_else(String::new, |c| self.channel(c).name);
                    *self.summary.openers.entry(name).or_insert(0) += 1;
                }
                EventKind::Reply {
                    ts,
                    text,
                    mention,
                    short,
                    opener,
                }
            }
            ResponseOutcome::Reacted { ts, emoji } => {
                self.summary.reactions += 1;
                let author = match channel {
                    Some(c) => self.services.ports.store.get_message(c, ts).await?,
                    None => None,
                };
                EventKind::Reaction {
                    on: ts,
                    user_name: author.map(|m| self.user_name(&m.user)),
                    emoji: emoji.to_string(),
                    mention,
                }
            }
            other => {
                let (key, reason) = not_posted(&other, self.dry_run);
                let key = key.chars().take(80).collect::<String>();
                *self.summary.no_replies.entry(key).or_insert(0) += 1;
                EventKind::NoReply {
                    mention,
                    reason,
                    prompts,
                }
            }
        })
    }

    /// What a memory job wrote and learnt, counted in the summary; `None`
    /// when it did nothing at all (no line for it).
    fn memory(
        &mut self,
        job: &Job,
        report: MemoryReport,
        prompts: Vec<Prompt>,
    ) -> Option<EventKind> {
        // The recurring run and the jobs it fans out.
        let sweep = matches!(
            job,
            Job::MemorySweep | Job::ChannelMemory(ChannelMemoryJob { .. }) | Job::WorkspaceMemory
        );
        if matches!(job, Job::MemorySweep) {
            self.summary.sweeps += 1;
            self.sweep_repeats = self.dry_run && !self.changed_since_sweep;
            self.changed_since_sweep = false;
        }
        self.summary.unusable_digests += report.unusable;
        // A sweep that planned proactive judgments is news, repeat or not.
        let repeat = sweep && self.sweep_repeats && report.proactive.is_empty();
        if report.written.is_empty()
            && report.llm_calls == 0
            && report.facts.is_empty()
            && report.proactive.is_empty()
        {
            return None;
        }
        let proactive = report
            .proactive
            .iter()
            .map(|(c, at)| (self.channel(c).name, *at))
            .collect();
        let written: Vec<MemoryNote> = report
            .written
            .iter()
            .map(|(scope, kind)| self.memory_note(scope, *kind))
            .collect();
        for note in &written {
            let key = format!("{} {}", note.scope, note.kind.as_str());
            *self.summary.memories.entry(key).or_insert(0) += 1;
        }
        Some(EventKind::Memory {
            sweep,
            written,
            facts: report.facts,
            llm_calls: report.llm_calls,
            prompts,
            repeat,
            proactive,
        })
    }
}

/// What a response job was asked for, from the job.
#[derive(Debug, Clone, Copy)]
struct Asked {
    /// To answer a mention.
    mention: bool,
    /// One short sentence.
    short: bool,
    /// To open a topic (proactive talk).
    opener: bool,
}

impl Asked {
    fn of(job: &Job) -> Asked {
        Asked {
            mention: matches!(job, Job::Response(ResponseJob { mention: true, .. })),
            short: matches!(
                job,
                Job::Response(ResponseJob {
                    reply: Reply::Short,
                    ..
                })
            ),
            opener: matches!(
                job,
                Job::Response(ResponseJob {
                    reply: Reply::Opener { .. },
                    ..
                })
            ),
        }
    }
}

/// What a response job that posted nothing is counted under in the
/// summary, and the reason its timeline line shows: the outcome's name
/// ([`ResponseOutcome::name`]) with a word on it, the LLM's or Slack's
/// reason, or [`DRY_RUN`].
pub(super) fn not_posted(outcome: &ResponseOutcome, dry_run: bool) -> (String, String) {
    let name = outcome.name();
    match outcome {
        ResponseOutcome::NoReply(_) if dry_run => (DRY_RUN.to_owned(), DRY_RUN.to_owned()),
        ResponseOutcome::NoReply(why) => (why.to_string(), why.to_string()),
        ResponseOutcome::PostFailed(error) => (error.to_string(), error.to_string()),
        ResponseOutcome::Stale => (name.to_owned(), format!("{name}, a newer message came in")),
        ResponseOutcome::AlreadyDone => (name.to_owned(), format!("{name}, already answered")),
        ResponseOutcome::TooOld => (
            name.to_owned(),
            format!("{name}, the mention is too old to answer"),
        ),
        ResponseOutcome::Limited { limit, .. } => {
            let limited = format!("{name}: {}", limit.setting());
            (limited.clone(), limited)
        }
        // Posted: not counted here.
        ResponseOutcome::Posted { .. } | ResponseOutcome::Reacted { .. } => {
            (name.to_owned(), name.to_owned())
        }
    }
}
