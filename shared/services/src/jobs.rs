//! Running jobs, whoever delivers them: the job functions (a schedule's
//! input, an SQS batch: their formats are `functions/jobs`'), or the local
//! job board.

use tracing::Instrument;

use super::judgment::{JudgmentOutcome, Ruling};
use super::proactive::ProactiveOutcome;
use super::response::ResponseOutcome;
use super::MemoryReport;
use super::{judgment, memory, proactive, response, Services};
use myao_core::ports::PortError;
use myao_domain::job::retry_delay;
use myao_domain::metrics::{self, Datum};
use myao_domain::rules::Gate;
use myao_domain::{Job, JobKind, JudgmentResult, Settings, TeamId, TeamJob};

/// What running a job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum JobOutcome {
    Judgment(JudgmentOutcome),
    Response(ResponseOutcome),
    Memory(MemoryReport),
    Proactive(ProactiveOutcome),
    /// A team's data deleted: how many items.
    Purged {
        items: u64,
    },
}

impl JobOutcome {
    /// What the job came to in kinds, ids, times, lengths and counts only:
    /// the line logged at INFO. The outcome itself may hold conversation (a
    /// reply, a judgment's reason, an unusable LLM answer) and is logged at
    /// DEBUG only.
    pub fn summary(&self) -> String {
        match self {
            JobOutcome::Judgment(outcome) => {
                let name = outcome.name();
                match outcome {
                    JudgmentOutcome::Stale | JudgmentOutcome::Empty => format!("judgment {name}"),
                    JudgmentOutcome::Held(gate) => {
                        format!("judgment {name} gate={}", gate.name())
                    }
                    JudgmentOutcome::Quiet(ruling) | JudgmentOutcome::Capped(ruling) => {
                        format!("judgment {name} {}", ruling.explain())
                    }
                    JudgmentOutcome::Silent { ruling, why } => {
                        format!("judgment {name} {} why={}", ruling.explain(), why.name())
                    }
                    JudgmentOutcome::Declined(ruling, result) => {
                        format!("judgment {name} {} {}", ruling.explain(), verdict(result))
                    }
                    JudgmentOutcome::Respond { ruling, result, at } => format!(
                        "judgment {name} at={} {} {}",
                        at.to_rfc3339(),
                        ruling.explain(),
                        verdict(result)
                    ),
                    JudgmentOutcome::Sure { ruling, at } => format!(
                        "judgment {name} at={} {}",
                        at.to_rfc3339(),
                        ruling.explain()
                    ),
                }
            }
            JobOutcome::Response(outcome) => {
                let name = outcome.name();
                match outcome {
                    ResponseOutcome::Limited { limit, notice } => format!(
                        "response {name} limit={} notice={}",
                        limit.setting(),
                        notice.is_some()
                    ),
                    ResponseOutcome::NoReply(why) => format!("response {name} why={}", why.name()),
                    ResponseOutcome::PostFailed(error) => {
                        format!("response {name} service={}", error.service())
                    }
                    ResponseOutcome::Posted { ts, text } => format!(
                        "response {name} ts={ts} reply_chars={}",
                        text.chars().count()
                    ),
                    ResponseOutcome::Reacted { ts, emoji } => {
                        format!("response {name} ts={ts} emoji={emoji}")
                    }
                    _ => format!("response {name}"),
                }
            }
            JobOutcome::Memory(report) => format!(
                "memory written={} llm_calls={} unusable={} queued={} facts={} proactive={}",
                report.written.len(),
                report.llm_calls,
                report.unusable,
                report.queued,
                report.facts.len(),
                report.proactive.len()
            ),
            // The topic and an unusable answer are the LLM's words: counts only.
            JobOutcome::Proactive(outcome) => match outcome {
                ProactiveOutcome::Held(hold) => format!("proactive held hold={}", hold.name()),
                ProactiveOutcome::Silent(why) => {
                    format!("proactive {} why={}", outcome.name(), why.name())
                }
                ProactiveOutcome::Open { topic, at } => format!(
                    "proactive {} at={} topic_chars={}",
                    outcome.name(),
                    at.to_rfc3339(),
                    topic.chars().count()
                ),
                _ => format!("proactive {}", outcome.name()),
            },
            JobOutcome::Purged { items } => format!("purge items={items}"),
        }
    }
}

/// A judgment's count in `Judgments`, by its outcome and, where the
/// channel's hints tuned it, how (`Tuning`: `raised`, `lowered`, `muted`).
fn judged(outcome: &JudgmentOutcome) -> Datum {
    let datum = Datum::count(metrics::JUDGMENTS).by("Outcome", outcome.name());
    let tuning = match outcome {
        JudgmentOutcome::Held(Gate::Muted) => Some("muted"),
        _ => outcome.ruling().and_then(Ruling::tuning),
    };
    match tuning {
        Some(tuning) => datum.detailed("Tuning", tuning),
        None => datum,
    }
}

impl JobOutcome {
    /// What the outcome counts for (the metrics of `domain::metrics`):
    /// a judgment's outcome, an answer's form, a spend limit's refusal.
    pub fn metric(&self, job: &Job) -> Option<Datum> {
        match self {
            JobOutcome::Judgment(outcome) => Some(judged(outcome)),
            JobOutcome::Response(outcome) => match job {
                Job::Response(job) => outcome.metric(job),
                _ => None,
            },
            JobOutcome::Memory(_) | JobOutcome::Purged { .. } => None,
            JobOutcome::Proactive(outcome) => {
                Some(Datum::count(metrics::PROACTIVE_JUDGMENTS).by("Outcome", outcome.name()))
            }
        }
    }
}

/// A judgment's verdict without its reason's words.
fn verdict(result: &JudgmentResult) -> String {
    let delay = result
        .delay_seconds
        .map_or_else(|| "none".to_owned(), |d| d.to_string());
    format!(
        "should_respond={} response_type={} confidence={} delay_seconds={delay} reason_chars={}",
        result.should_respond,
        result.response_type.name(),
        result.confidence,
        result.reason.chars().count()
    )
}

/// Runs one job. The error is a failure worth a redelivery (storage down);
/// everything else (LLM garbage, a Slack refusal) is an outcome.
pub async fn run(svc: &Services, job: &Job) -> Result<JobOutcome, PortError> {
    // One span per job, carried across every await (not entered on a
    // thread), so concurrent jobs in `myao serve` log under their own.
    let conversation = job.conversation();
    let span = tracing::info_span!(
        "job",
        kind = %job.kind(),
        channel = conversation.as_ref().map(|c| c.channel.to_string()),
        thread = conversation.as_ref().and_then(|c| c.thread_ts).map(|t| t.to_string()),
    );
    async {
        match job {
            Job::Judgment(job) => judgment::run(svc, job).await.map(JobOutcome::Judgment),
            Job::Response(job) => response::run(svc, job).await.map(JobOutcome::Response),
            // Queued by earlier versions when a thread went quiet: the
            // hourly digest of its channel writes the thread's memory now
            // (running one here could race that channel's own job).
            Job::ThreadMemory(_) => {
                tracing::info!("thread memory job dropped: the channel's digest writes it");
                Ok(JobOutcome::Memory(MemoryReport::default()))
            }
            Job::MemorySweep => memory::sweep(svc).await.map(JobOutcome::Memory),
            Job::ChannelMemory(job) => memory::channel_memory(svc, &job.channel)
                .await
                .map(JobOutcome::Memory),
            Job::WorkspaceMemory => memory::workspace_memory(svc).await.map(JobOutcome::Memory),
            Job::Forget => memory::forget_now(svc).await.map(JobOutcome::Memory),
            Job::Proactive(job) => proactive::run(svc, job).await.map(JobOutcome::Proactive),
            Job::Purge => purge(svc).await,
        }
    }
    .instrument(span)
    .await
    .inspect(|outcome| {
        if let Some(datum) = outcome.metric(job) {
            svc.ports.metrics.put(datum);
        }
    })
}

/// Has a job that failed come back after a short, growing delay
/// (`retry_delays_seconds`, by its delivery's receive count) instead of
/// its queue's visibility timeout, when it is one that a person waits for
/// ([`Job::retries_quickly`]) and has quick tries left: `receipt` names the
/// failed delivery, `tries` counts the deliveries so far, this one included. If that fails too,
/// the queue's timeout still brings it back.
pub async fn come_back_soon(svc: &Services, job: &Job, receipt: &str, tries: u32) {
    if !job.retries_quickly() {
        return;
    }
    // The settings may be what failed: the default delays then.
    let delays = match svc.ports.settings.current().await {
        Ok(settings) => settings.retry_delays_seconds.clone(),
        Err(_) => Settings::default().retry_delays_seconds,
    };
    let Some(delay) = retry_delay(tries, &delays) else {
        tracing::info!(tries, "no quick tries left: the queue's own redelivery");
        return;
    };
    match svc.ports.queue.redeliver(job, Some(receipt), delay).await {
        Ok(()) => tracing::info!(tries, delay_seconds = delay, "the job comes back soon"),
        Err(error) => tracing::warn!(%error, "could not bring the job back sooner"),
    }
}

/// Deletes everything of the services' team: it uninstalled the app. The
/// stack's own data is never purged (a single-workspace stack's job of
/// this kind does nothing).
async fn purge(svc: &Services) -> Result<JobOutcome, PortError> {
    let Some(team) = svc.team() else {
        tracing::warn!("a purge without a team: the stack's own data is kept");
        return Ok(JobOutcome::Purged { items: 0 });
    };
    let items = svc.ports.store.purge_team(team).await?;
    Ok(JobOutcome::Purged { items })
}

/// The services a team's job runs with: the team's
/// ([`Services::for_team`]); for its purge after the uninstall, its part
/// of the store alone. `None`: the team has no installation, and the job
/// (made before the uninstall) is dropped.
pub async fn team_services(
    svc: &Services,
    team: &TeamId,
    job: &Job,
) -> Result<Option<Services>, PortError> {
    if let Some(team_svc) = svc.for_team(team).await? {
        return Ok(Some(team_svc));
    }
    if *job == Job::Purge {
        return Ok(Some(svc.uninstalled(team)));
    }
    tracing::info!(kind = %job.kind(), "a job of a team with no installation; dropped");
    Ok(None)
}

/// Runs a job as a schedule or a queue carried it: a team's job with that
/// team's services ([`team_services`]), the stack's with `svc`.
pub async fn run_carried(
    svc: &Services,
    accepted: &[JobKind],
    carried: &TeamJob,
) -> Result<(), PortError> {
    let Some(team) = &carried.team else {
        return run_accepted(svc, accepted, &carried.job).await;
    };
    match team_services(svc, team, &carried.job).await? {
        Some(team_svc) => run_accepted(&team_svc, accepted, &carried.job).await,
        None => Ok(()),
    }
}

/// Runs `job` when its kind is one of `accepted` (a function runs only
/// its own kinds; another is logged and dropped). The error is a failure
/// worth a redelivery; any other failure is logged and dropped.
pub async fn run_accepted(
    svc: &Services,
    accepted: &[JobKind],
    job: &Job,
) -> Result<(), PortError> {
    if !accepted.contains(&job.kind()) {
        tracing::error!(kind = %job.kind(), "a job of a kind this function does not run; dropped");
        return Ok(());
    }
    match run(svc, job).await {
        Ok(outcome) => {
            tracing::info!(outcome = %outcome.summary(), "job done");
            tracing::debug!(?outcome, "job outcome");
            Ok(())
        }
        Err(error) if error.is_retryable() => Err(error),
        Err(error) => {
            tracing::error!(%error, "job failed and will not be retried");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::judgment::ResponseType;
    use myao_domain::{MemoryKind, MemoryScope, Ts};

    const WORDS: &str = "the secret plan of the cat";

    fn ruling() -> Ruling {
        use myao_domain::rules::{Decision, Score, Signal, Thresholds};
        Ruling {
            score: Score {
                total: 30,
                signals: vec![Signal::UnansweredQuestion, Signal::TwoPeople],
                answers: None,
                again: None,
                wait: None,
            },
            thresholds: Thresholds { low: 20, high: 50 },
            decision: Decision::Ask,
            tuned: 0,
        }
    }

    fn result(should_respond: bool) -> JudgmentResult {
        JudgmentResult {
            should_respond,
            reason: format!("because {WORDS}"),
            confidence: 0.8,
            delay_seconds: Some(30),
            response_type: if should_respond {
                ResponseType::Full
            } else {
                ResponseType::None
            },
            emoji: None,
        }
    }

    #[test]
    fn a_judgment_tuned_by_hints_counts_how_beside_its_outcome() {
        let job = Job::Forget;
        let tuning = |outcome: JudgmentOutcome| {
            let datum = JobOutcome::Judgment(outcome).metric(&job).expect("a datum");
            assert_eq!(datum.dimension.as_ref().map(|(k, _)| *k), Some("Outcome"));
            datum.detail.map(|(k, v)| format!("{k}={v}"))
        };
        assert_eq!(tuning(JudgmentOutcome::Quiet(ruling())), None);
        let raised = Ruling {
            tuned: 7,
            ..ruling()
        };
        assert_eq!(
            tuning(JudgmentOutcome::Quiet(raised)).as_deref(),
            Some("Tuning=raised")
        );
        let lowered = Ruling {
            tuned: -14,
            ..ruling()
        };
        assert_eq!(
            tuning(JudgmentOutcome::Capped(lowered.clone())).as_deref(),
            Some("Tuning=lowered")
        );
        assert!(
            lowered.explain().contains("[20..50) tuned=-14 "),
            "{}",
            lowered.explain()
        );
        assert!(!ruling().explain().contains("tuned"));
        assert_eq!(
            tuning(JudgmentOutcome::Held(Gate::Muted)).as_deref(),
            Some("Tuning=muted")
        );
        assert_eq!(tuning(JudgmentOutcome::Held(Gate::Cooldown)), None);
    }

    #[test]
    fn a_job_summary_holds_no_conversation() {
        let at = Ts::parse("1767600000.0").unwrap().to_datetime();
        let outcomes = [
            JobOutcome::Judgment(JudgmentOutcome::Silent {
                ruling: ruling(),
                why: crate::judgment::Unusable::NotAVerdict {
                    error: myao_domain::judgment::JudgmentParseError::NoJson,
                    answer: WORDS.into(),
                },
            }),
            JobOutcome::Judgment(JudgmentOutcome::Declined(ruling(), result(false))),
            JobOutcome::Judgment(JudgmentOutcome::Respond {
                ruling: ruling(),
                result: result(true),
                at,
            }),
            JobOutcome::Response(ResponseOutcome::NoReply(crate::response::NoReply::Llm(
                PortError::refused("llm", WORDS),
            ))),
            JobOutcome::Response(ResponseOutcome::PostFailed(PortError::refused(
                "slack", WORDS,
            ))),
            JobOutcome::Response(ResponseOutcome::Posted {
                ts: Ts::parse("1767600001.000100").unwrap(),
                text: format!("meow, {WORDS}"),
            }),
        ];
        let outcomes = outcomes.into_iter().chain([
            JobOutcome::Proactive(ProactiveOutcome::Open {
                topic: format!("ask about {WORDS}"),
                at,
            }),
            JobOutcome::Proactive(ProactiveOutcome::Silent(
                crate::proactive::Unusable::NotAVerdict(
                    myao_domain::proactive::OpeningParseError::BadJson(WORDS.into()),
                ),
            )),
        ]);
        for outcome in outcomes {
            let summary = outcome.summary();
            assert!(format!("{outcome:?}").contains("secret plan"));
            assert!(!summary.contains("secret"), "{summary}");
            assert!(!summary.contains("cat"), "{summary}");
        }
    }

    #[test]
    fn a_job_summary_keeps_kinds_ids_and_counts() {
        let posted = JobOutcome::Response(ResponseOutcome::Posted {
            ts: Ts::parse("1767600001.000100").unwrap(),
            text: "héllo".to_owned(),
        });
        assert_eq!(
            posted.summary(),
            "response posted ts=1767600001.000100 reply_chars=5"
        );
        let reacted = JobOutcome::Response(ResponseOutcome::Reacted {
            ts: Ts::parse("1767600001.000100").unwrap(),
            emoji: myao_domain::EmojiName::wave(),
        });
        assert_eq!(
            reacted.summary(),
            "response reacted ts=1767600001.000100 emoji=wave"
        );
        let declined = JobOutcome::Judgment(JudgmentOutcome::Declined(ruling(), result(false)));
        assert_eq!(
            declined.summary(),
            "judgment llm_no ask score=30 [20..50) unanswered_question(+60) two_people(-10) \
             should_respond=false response_type=none confidence=0.8 delay_seconds=30 reason_chars=34"
        );
        // The log line and the metric name the outcome alike.
        let JobOutcome::Judgment(outcome) = &declined else {
            unreachable!()
        };
        assert_eq!(outcome.name(), "llm_no");
        let memory = JobOutcome::Memory(MemoryReport {
            written: vec![(MemoryScope::Workspace, MemoryKind::Long)],
            llm_calls: 2,
            unusable: 1,
            queued: 0,
            facts: vec![format!("Bob said {WORDS}")],
            proactive: vec![],
        });
        // The facts are conversation: their count only.
        assert_eq!(
            memory.summary(),
            "memory written=1 llm_calls=2 unusable=1 queued=0 facts=1 proactive=0"
        );
        assert_eq!(
            JobOutcome::Judgment(JudgmentOutcome::Stale).summary(),
            "judgment stale"
        );
    }
}
