//! The scheduler on EventBridge Scheduler: one one-shot `at()` schedule per
//! pending job, in one schedule group, deleted by the service once it fires.
//!
//! The emulator accepts malformed or past `at()` expressions and unknown time
//! zones, so the expression is made (and read back) by the pure functions
//! here, which the unit tests pin.

use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_scheduler::types::{
    ActionAfterCompletion, DeadLetterConfig, FlexibleTimeWindow, FlexibleTimeWindowMode,
    RetryPolicy, ScheduleState, Target,
};
use aws_sdk_scheduler::Client;
use chrono::{DateTime, Datelike, Duration, NaiveDateTime, Timelike, Utc};

use crate::errors::{expecting, port_error};
use myao_core::ports::{PortError, ScheduledJob, Scheduler};
use myao_core::schedule::ScheduleName;
use myao_domain::{Job, JobKind, TeamId, TeamJob};

const SERVICE: &str = "scheduler";
/// The time zone of every expression we write.
const ZONE: &str = "UTC";
const AT_FORMAT: &str = "%Y-%m-%dT%H:%M:%S";
/// How long EventBridge keeps retrying a failed delivery, and how often.
const MAX_EVENT_AGE_SECONDS: i32 = 3600;
const MAX_RETRY_ATTEMPTS: i32 = 3;
/// The errors of a schedule (or group) that is not there, and of one that
/// is there already.
const NOT_FOUND: &str = "ResourceNotFoundException";
const CONFLICT: &str = "ConflictException";

/// A scheduler's CreateSchedule or UpdateSchedule request (`$operation`:
/// `create_schedule` or `update_schedule`, two builder types with the same
/// setters) for a name and a [`Spec`], every field set. UpdateSchedule is a
/// full replace, so it sends every field a create does, State and
/// ActionAfterCompletion included (the emulator drops an omitted State).
macro_rules! schedule_request {
    ($scheduler:expr, $operation:ident, $name:expr, $spec:expr) => {
        $scheduler
            .client
            .$operation()
            .name($name.as_str())
            .group_name(&$scheduler.group)
            .schedule_expression(&$spec.expression)
            .schedule_expression_timezone(ZONE)
            .flexible_time_window($spec.window.clone())
            .action_after_completion(ActionAfterCompletion::Delete)
            .state(ScheduleState::Enabled)
            .target($spec.target.clone())
    };
}

/// Why a time and an `at()` expression do not match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtExpressionError {
    #[error("{0} cannot be written as at(yyyy-mm-ddThh:mm:ss): the year is outside 1970-9999")]
    OutOfRange(DateTime<Utc>),
    #[error("{0:?} is not of the form at(yyyy-mm-ddThh:mm:ss)")]
    Malformed(String),
    #[error("the schedule is in time zone {0:?}: myao writes and reads UTC only")]
    NotUtc(String),
}

/// The one-time expression for `at`, rounded up to the next whole second (a
/// job never runs before it is due), in UTC: `at(2024-03-01T10:00:01)`.
pub fn at_expression(at: DateTime<Utc>) -> Result<String, AtExpressionError> {
    let whole = if at.nanosecond() == 0 {
        at
    } else {
        at.with_nanosecond(0)
            .and_then(|t| t.checked_add_signed(Duration::seconds(1)))
            .ok_or(AtExpressionError::OutOfRange(at))?
    };
    if !(1970..=9999).contains(&whole.year()) {
        return Err(AtExpressionError::OutOfRange(at));
    }
    Ok(format!("at({})", whole.format(AT_FORMAT)))
}

/// The instant an `at()` expression names, in `zone`: UTC, or none (which
/// the scheduler reads as UTC). Every schedule myao writes is in UTC
/// ([`ZONE`]); one in another zone was not written by myao and is refused.
/// (No time zone database is needed to read one back: the ingest function,
/// which links this adapter, leaves chrono-tz's tables out of its binary,
/// some 2 MiB of data relocated at every cold start.)
pub fn parse_at_expression(
    expression: &str,
    zone: Option<&str>,
) -> Result<DateTime<Utc>, AtExpressionError> {
    let malformed = || AtExpressionError::Malformed(expression.chars().take(80).collect());
    let inner = expression
        .strip_prefix("at(")
        .and_then(|e| e.strip_suffix(')'))
        .ok_or_else(malformed)?;
    // chrono's parser is lenient about widths; only the exact shape is ours.
    if inner.len() != 19 {
        return Err(malformed());
    }
    let local = NaiveDateTime::parse_from_str(inner, AT_FORMAT).map_err(|_| malformed())?;
    match zone {
        None | Some("UTC" | "Etc/UTC") => Ok(local.and_utc()),
        Some(name) => Err(AtExpressionError::NotUtc(name.chars().take(80).collect())),
    }
}

/// Creates the schedule group unless it exists. Creating it again is not
/// harmless on the emulator (it wipes the group's schedules), so look first.
pub async fn ensure_group(client: &Client, name: &str) -> Result<(), PortError> {
    let got = client.get_schedule_group().name(name).send().await;
    if expecting(SERVICE, "GetScheduleGroup", NOT_FOUND, got)?.is_ok() {
        return Ok(());
    }
    let created = client.create_schedule_group().name(name).send().await;
    // Made, or made by someone else in between (a conflict): it is there.
    let _ = expecting(SERVICE, "CreateScheduleGroup", CONFLICT, created)?;
    Ok(())
}

/// [`Scheduler`] on EventBridge Scheduler. The job's kind picks the Lambda
/// function it targets; the job itself is the target's input.
#[derive(Debug, Clone)]
pub struct EventBridgeScheduler {
    pub client: Client,
    /// The schedule group of this stage (it must exist: see [`ensure_group`]).
    pub group: String,
    /// The role the service assumes to invoke the targets.
    pub role_arn: String,
    /// A standard SQS queue for deliveries that failed every retry.
    pub dlq_arn: Option<String>,
    /// The judgment function (`None`: judgment jobs are refused).
    pub judgment_target_arn: Option<String>,
    /// The response function (`None`: response jobs are refused).
    pub response_target_arn: Option<String>,
    /// The memory function, for memory jobs (`None`: they are refused).
    pub memory_target_arn: Option<String>,
    /// Whose jobs these are: `None`, the stack's own; a team's
    /// ([`Scheduler::for_team`]) under its team's names, each input
    /// carrying the team.
    pub team: Option<TeamId>,
}

/// Everything a create or an update sends, made once per upsert.
struct Spec {
    expression: String,
    window: FlexibleTimeWindow,
    target: Target,
}

impl EventBridgeScheduler {
    fn target_arn(&self, kind: JobKind) -> Result<&str, PortError> {
        let arn = match kind {
            // A proactive judgment is the judgment function's.
            JobKind::Judgment | JobKind::Proactive => &self.judgment_target_arn,
            JobKind::Response => &self.response_target_arn,
            JobKind::ThreadMemory
            | JobKind::MemorySweep
            | JobKind::ChannelMemory
            | JobKind::WorkspaceMemory
            | JobKind::Forget
            | JobKind::Purge => &self.memory_target_arn,
        };
        arn.as_deref()
            .ok_or_else(|| PortError::refused(SERVICE, format!("no target for {kind} jobs")))
    }

    fn spec(&self, at: DateTime<Utc>, job: &TeamJob) -> Result<Spec, PortError> {
        let expression = at_expression(at).map_err(|e| PortError::refused_by(SERVICE, e))?;
        let input = serde_json::to_string(job).map_err(|e| PortError::refused_by(SERVICE, e))?;
        let target = Target::builder()
            .arn(self.target_arn(job.job.kind())?)
            .role_arn(&self.role_arn)
            .input(input)
            .retry_policy(
                RetryPolicy::builder()
                    .maximum_event_age_in_seconds(MAX_EVENT_AGE_SECONDS)
                    .maximum_retry_attempts(MAX_RETRY_ATTEMPTS)
                    .build(),
            )
            .set_dead_letter_config(
                self.dlq_arn
                    .as_ref()
                    .map(|arn| DeadLetterConfig::builder().arn(arn).build()),
            )
            .build()
            .map_err(|e| PortError::refused_by(SERVICE, e))?;
        // Off: the job runs at its time, not within a window after it.
        let window = FlexibleTimeWindow::builder()
            .mode(FlexibleTimeWindowMode::Off)
            .build()
            .map_err(|e| PortError::refused_by(SERVICE, e))?;
        Ok(Spec {
            expression,
            window,
            target,
        })
    }
}

#[async_trait]
impl Scheduler for EventBridgeScheduler {
    fn for_team(&self, team: &TeamId) -> Arc<dyn Scheduler> {
        Arc::new(EventBridgeScheduler {
            team: Some(team.clone()),
            ..self.clone()
        })
    }

    async fn upsert(
        &self,
        name: &ScheduleName,
        at: DateTime<Utc>,
        job: &Job,
    ) -> Result<(), PortError> {
        let carried = TeamJob {
            team: self.team.clone(),
            job: job.clone(),
        };
        let spec = self.spec(at, &carried)?;
        let name = &self.named(name);
        // Update first: a pending schedule is the common case (a wait moved).
        let updated = schedule_request!(self, update_schedule, name, spec)
            .send()
            .await;
        if expecting(SERVICE, "UpdateSchedule", NOT_FOUND, updated)?.is_ok() {
            tracing::debug!(schedule = %name, expression = %spec.expression, "schedule updated");
            return Ok(());
        }
        let created = schedule_request!(self, create_schedule, name, spec)
            .send()
            .await;
        if expecting(SERVICE, "CreateSchedule", CONFLICT, created)?.is_ok() {
            tracing::debug!(schedule = %name, expression = %spec.expression, "schedule created");
            return Ok(());
        }
        // A concurrent upsert created it between our update and create: ours
        // is the later call, so it replaces theirs.
        schedule_request!(self, update_schedule, name, spec)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateSchedule", e))?;
        tracing::debug!(schedule = %name, expression = %spec.expression, "schedule updated after a conflict");
        Ok(())
    }

    async fn cancel(&self, name: &ScheduleName) -> Result<(), PortError> {
        let name = &self.named(name);
        let deleted = self
            .client
            .delete_schedule()
            .name(name.as_str())
            .group_name(&self.group)
            .send()
            .await;
        // Deleted, or not found (nothing to cancel): it is gone.
        let _ = expecting(SERVICE, "DeleteSchedule", NOT_FOUND, deleted)?;
        Ok(())
    }

    async fn get(&self, name: &ScheduleName) -> Result<Option<ScheduledJob>, PortError> {
        let got = self
            .client
            .get_schedule()
            .name(self.named(name).as_str())
            .group_name(&self.group)
            .send()
            .await;
        let Ok(out) = expecting(SERVICE, "GetSchedule", NOT_FOUND, got)? else {
            return Ok(None);
        };
        let refused =
            |what: String| PortError::refused(SERVICE, format!("schedule {name}: {what}"));
        let expression = out
            .schedule_expression()
            .ok_or_else(|| refused("no schedule expression".into()))?;
        let at = parse_at_expression(expression, out.schedule_expression_timezone())
            .map_err(|e| refused(e.to_string()))?;
        let input = out
            .target()
            .and_then(|t| t.input())
            .ok_or_else(|| refused("no target input".into()))?;
        let carried: TeamJob = serde_json::from_str(input)
            .map_err(|e| refused(format!("the target input is not a job: {e}")))?;
        Ok(Some(ScheduledJob {
            name: name.clone(),
            at,
            job: carried.job,
        }))
    }
}

impl EventBridgeScheduler {
    /// `name` in this scheduler's team's part of the names (the stack's
    /// own: as it is).
    fn named(&self, name: &ScheduleName) -> ScheduleName {
        self.team
            .as_ref()
            .map_or_else(|| name.clone(), |team| name.for_team(team))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::JudgmentJob;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("a valid time")
            .with_timezone(&Utc)
    }

    #[test]
    fn whole_seconds_are_written_as_they_are() {
        assert_eq!(
            at_expression(utc("2024-03-01T10:00:00Z")),
            Ok("at(2024-03-01T10:00:00)".to_owned())
        );
        assert_eq!(
            at_expression(utc("2024-03-01T09:05:07Z")),
            Ok("at(2024-03-01T09:05:07)".to_owned())
        );
    }

    #[test]
    fn a_fraction_rounds_up_to_the_next_second() {
        assert_eq!(
            at_expression(utc("2024-03-01T10:00:00.000000001Z")),
            Ok("at(2024-03-01T10:00:01)".to_owned())
        );
        assert_eq!(
            at_expression(utc("2024-12-31T23:59:59.5Z")),
            Ok("at(2025-01-01T00:00:00)".to_owned()),
            "rounding carries over into the next year"
        );
    }

    #[test]
    fn a_past_time_is_written_too() {
        assert_eq!(
            at_expression(utc("1999-01-02T03:04:05Z")),
            Ok("at(1999-01-02T03:04:05)".to_owned())
        );
    }

    #[test]
    fn years_that_do_not_fit_are_refused() {
        let far = utc("9999-12-31T23:59:59.5Z");
        assert_eq!(at_expression(far), Err(AtExpressionError::OutOfRange(far)));
        let early = utc("1969-12-31T23:59:59Z");
        assert!(at_expression(early).is_err());
    }

    #[test]
    fn expressions_parse_back_to_their_time() {
        for t in ["2024-03-01T10:00:00Z", "2030-07-15T23:59:59Z"] {
            let expr = at_expression(utc(t)).expect("formats");
            assert_eq!(parse_at_expression(&expr, Some("UTC")), Ok(utc(t)));
            assert_eq!(parse_at_expression(&expr, None), Ok(utc(t)));
        }
    }

    #[test]
    fn a_schedule_in_another_zone_is_refused() {
        assert_eq!(
            parse_at_expression("at(2024-03-01T19:00:00)", Some("Etc/UTC")),
            Ok(utc("2024-03-01T19:00:00Z"))
        );
        for zone in ["Asia/Tokyo", "Mars/Base"] {
            assert_eq!(
                parse_at_expression("at(2024-03-01T19:00:00)", Some(zone)),
                Err(AtExpressionError::NotUtc(zone.to_owned()))
            );
        }
    }

    #[test]
    fn malformed_expressions_are_refused() {
        for bad in [
            "",
            "at()",
            "at(2024-03-01 10:00:00)",
            "at(2024-03-01T10:00)",
            "at(2024-3-1T10:00:00)",
            "at(2024-03-01T10:00:00",
            "rate(5 minutes)",
            "cron(0 10 * * ? *)",
            "at(2024-02-30T10:00:00)",
            "at(2024-03-01T10:00:00Z)",
        ] {
            assert!(
                matches!(
                    parse_at_expression(bad, None),
                    Err(AtExpressionError::Malformed(_))
                ),
                "{bad:?} was accepted"
            );
        }
    }

    fn scheduler(memory: Option<&str>) -> EventBridgeScheduler {
        let conf = aws_sdk_scheduler::Config::builder()
            .behavior_version(aws_sdk_scheduler::config::BehaviorVersion::latest())
            .build();
        EventBridgeScheduler {
            client: Client::from_conf(conf),
            group: "g".into(),
            role_arn: "arn:role".into(),
            dlq_arn: Some("arn:dlq".into()),
            judgment_target_arn: Some("arn:judgment".into()),
            response_target_arn: Some("arn:response".into()),
            memory_target_arn: memory.map(str::to_owned),
            team: None,
        }
    }

    #[test]
    fn the_job_kind_picks_the_target() {
        let s = scheduler(None);
        assert_eq!(s.target_arn(JobKind::Judgment), Ok("arn:judgment"));
        assert_eq!(s.target_arn(JobKind::Proactive), Ok("arn:judgment"));
        assert_eq!(s.target_arn(JobKind::Response), Ok("arn:response"));
        let refused = s
            .target_arn(JobKind::MemorySweep)
            .expect_err("no memory target");
        assert!(!refused.is_retryable());
        let s = scheduler(Some("arn:memory"));
        assert_eq!(s.target_arn(JobKind::ThreadMemory), Ok("arn:memory"));
    }

    #[test]
    fn the_target_carries_the_job_retries_and_dead_letter_queue() {
        let s = scheduler(None);
        let stacks = |job: Job| TeamJob { team: None, job };
        assert!(s
            .spec(utc("2024-03-01T10:00:00Z"), &stacks(Job::MemorySweep))
            .is_err());
        let job = Job::Judgment(JudgmentJob {
            channel: "C1".parse().expect("id"),
            thread_ts: None,
            newest_ts: "5.0".parse().expect("ts"),
        });
        let spec = s
            .spec(utc("2024-03-01T10:00:00.2Z"), &stacks(job.clone()))
            .expect("a spec");
        assert_eq!(spec.expression, "at(2024-03-01T10:00:01)");
        assert_eq!(spec.target.arn(), "arn:judgment");
        assert_eq!(spec.target.role_arn(), "arn:role");
        let input: Job = serde_json::from_str(spec.target.input().expect("input")).expect("a job");
        assert_eq!(input, job);
        let retry = spec.target.retry_policy().expect("retry policy");
        assert_eq!(retry.maximum_event_age_in_seconds(), Some(3600));
        assert_eq!(retry.maximum_retry_attempts(), Some(3));
        assert_eq!(
            spec.target.dead_letter_config().and_then(|d| d.arn()),
            Some("arn:dlq")
        );
    }
}
