//! Running jobs, whoever delivers them: a schedule's input, an SQS batch,
//! or the local job board.

use serde::Deserialize;
use serde_json::{json, Value};
use tracing::Instrument;

use super::judgment::JudgmentOutcome;
use super::response::ResponseOutcome;
use super::summary::MemoryReport;
use super::{judgment, response, summary, Services};
use crate::domain::{Job, JobKind};
use crate::ports::PortError;

/// What running a job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum JobOutcome {
    Judgment(JudgmentOutcome),
    Response(ResponseOutcome),
    Memory(MemoryReport),
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
            Job::Judgment {
                channel,
                thread_ts,
                newest_ts,
            } => judgment::run(svc, channel, *thread_ts, *newest_ts)
                .await
                .map(JobOutcome::Judgment),
            Job::Response {
                channel,
                thread_ts,
                newest_ts,
                mention,
            } => response::run(svc, channel, *thread_ts, *newest_ts, *mention)
                .await
                .map(JobOutcome::Response),
            Job::ThreadMemory { channel, thread_ts } => {
                summary::thread_memory(svc, channel, *thread_ts)
                    .await
                    .map(JobOutcome::Memory)
            }
            Job::MemorySweep => summary::sweep(svc).await.map(JobOutcome::Memory),
        }
    }
    .instrument(span)
    .await
}

/// Why a Lambda payload was not run.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// Worth a retry by the caller (the scheduler's retry policy).
    #[error(transparent)]
    Retryable(PortError),
}

#[derive(Deserialize)]
struct SqsRecord {
    #[serde(rename = "messageId")]
    message_id: String,
    body: String,
}

#[derive(Deserialize)]
struct SqsEvent {
    #[serde(rename = "Records")]
    records: Vec<SqsRecord>,
}

/// Handles a Lambda invocation: a schedule's input (a [`Job`]) or an SQS
/// batch whose bodies are jobs. Only `accepted` kinds run; a payload that is
/// not a job, or a job of another kind, is logged and dropped (a retry would
/// not make it better). For SQS, jobs that failed retryably are reported as
/// `batchItemFailures` so that only they are redelivered.
pub async fn handle_payload(
    svc: &Services,
    accepted: &[JobKind],
    payload: Value,
) -> Result<Value, PayloadError> {
    if payload.get("Records").is_some() {
        let event: SqsEvent = match serde_json::from_value(payload) {
            Ok(e) => e,
            Err(error) => {
                tracing::error!(%error, "an SQS event of the wrong shape; dropped");
                return Ok(json!({ "batchItemFailures": [] }));
            }
        };
        let mut failures = Vec::new();
        for record in event.records {
            if let Err(error) = run_text(svc, accepted, &record.body).await {
                tracing::error!(%error, message_id = %record.message_id, "job failed; it will be redelivered");
                failures.push(json!({ "itemIdentifier": record.message_id }));
            }
        }
        return Ok(json!({ "batchItemFailures": failures }));
    }
    let job: Job = match serde_json::from_value(payload) {
        Ok(j) => j,
        Err(error) => {
            tracing::error!(%error, "a payload that is not a job; dropped");
            return Ok(json!({ "dropped": true }));
        }
    };
    run_accepted(svc, accepted, &job)
        .await
        .map_err(PayloadError::Retryable)?;
    Ok(json!({}))
}

async fn run_text(svc: &Services, accepted: &[JobKind], body: &str) -> Result<(), PortError> {
    match serde_json::from_str::<Job>(body) {
        Ok(job) => run_accepted(svc, accepted, &job).await,
        Err(error) => {
            tracing::error!(%error, "a queue message that is not a job; dropped");
            Ok(())
        }
    }
}

async fn run_accepted(svc: &Services, accepted: &[JobKind], job: &Job) -> Result<(), PortError> {
    if !accepted.contains(&job.kind()) {
        tracing::error!(kind = %job.kind(), "a job of a kind this function does not run; dropped");
        return Ok(());
    }
    match run(svc, job).await {
        Ok(outcome) => {
            tracing::info!(?outcome, "job done");
            Ok(())
        }
        Err(error) if error.is_retryable() => Err(error),
        Err(error) => {
            tracing::error!(%error, "job failed and will not be retried");
            Ok(())
        }
    }
}
