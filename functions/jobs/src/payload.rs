//! The job functions' payloads, in Lambda's formats: a schedule's input (a
//! [`TeamJob`]) or an SQS batch whose bodies are jobs, and the answers Lambda
//! reads (the batch's failed items). The services take a typed [`Job`]
//! ([`myao_services::jobs::run_accepted`]); these formats stay here, at the
//! edge.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use myao_core::ports::PortError;
use myao_domain::{JobKind, TeamJob};
use myao_services::jobs::{come_back_soon, run_carried};
use myao_services::Services;

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
    /// Names this delivery of the message, to make it visible again sooner.
    #[serde(rename = "receiptHandle", default)]
    receipt_handle: Option<String>,
    #[serde(default)]
    attributes: SqsAttributes,
    body: String,
}

#[derive(Deserialize, Default)]
struct SqsAttributes {
    /// How many times the message was received, this time included.
    #[serde(rename = "ApproximateReceiveCount", default)]
    approximate_receive_count: Option<String>,
}

impl SqsAttributes {
    /// The deliveries so far, this one included (1 when SQS did not say).
    fn tries(&self) -> u32 {
        self.approximate_receive_count
            .as_deref()
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(1)
    }
}

#[derive(Deserialize)]
struct SqsEvent {
    #[serde(rename = "Records")]
    records: Vec<SqsRecord>,
}

/// Lambda's partial batch response to an SQS batch: the messages to
/// redeliver, by id. (The `sqs` feature of `aws_lambda_events` has the
/// same two types, and would bring `serde_with` and its proc macros into
/// the job functions' build for them.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchResponse {
    pub batch_item_failures: Vec<BatchItemFailure>,
}

/// One message of a batch to redeliver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchItemFailure {
    pub item_identifier: String,
}

/// What an invocation answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// An SQS batch's: the jobs that failed retryably, to redeliver.
    Batch(BatchResponse),
    /// A schedule's input that is not a job: logged and dropped.
    Dropped { dropped: bool },
    /// A schedule's job, run (`{}`).
    Done {},
}

/// Handles a Lambda invocation: a schedule's input (a job, with its team
/// on a stack installed in many workspaces: [`TeamJob`]) or an SQS batch
/// whose bodies are jobs. Only `accepted` kinds run; a payload that is
/// not a job, or a job of another kind, is logged and dropped (a retry would
/// not make it better). For SQS, jobs that failed retryably are reported as
/// `batchItemFailures` so that only they are redelivered.
pub async fn handle_payload(
    svc: &Services,
    accepted: &[JobKind],
    payload: Value,
) -> Result<Answer, PayloadError> {
    if payload.get("Records").is_some() {
        let event: SqsEvent = match serde_json::from_value(payload) {
            Ok(e) => e,
            Err(error) => {
                tracing::error!(error = %unquoted(&error), "an SQS event of the wrong shape; dropped");
                return Ok(Answer::Batch(BatchResponse::default()));
            }
        };
        let mut failures = Vec::new();
        for record in event.records {
            let carried = match serde_json::from_str::<TeamJob>(&record.body) {
                Ok(carried) => carried,
                Err(error) => {
                    tracing::error!(error = %unquoted(&error), "a queue message that is not a job; dropped");
                    continue;
                }
            };
            if let Err(error) = run_carried(svc, accepted, &carried).await {
                tracing::error!(%error, message_id = %record.message_id, "job failed; it will be redelivered");
                if let Some(receipt) = record.receipt_handle.as_deref() {
                    // With its receipt, the same message comes back: its
                    // team with it.
                    come_back_soon(svc, &carried.job, receipt, record.attributes.tries()).await;
                }
                failures.push(BatchItemFailure {
                    item_identifier: record.message_id,
                });
            }
        }
        return Ok(Answer::Batch(BatchResponse {
            batch_item_failures: failures,
        }));
    }
    let carried: TeamJob = match serde_json::from_value(payload) {
        Ok(j) => j,
        Err(error) => {
            tracing::error!(error = %unquoted(&error), "a payload that is not a job; dropped");
            return Ok(Answer::Dropped { dropped: true });
        }
    };
    run_carried(svc, accepted, &carried)
        .await
        .map_err(PayloadError::Retryable)?;
    Ok(Answer::Done {})
}

/// What is wrong with a body that is not a job, and where, without serde's
/// message: it may quote a value of the body (an opener's topic).
fn unquoted(error: &serde_json::Error) -> String {
    format!(
        "{:?} at line {}, column {}",
        error.classify(),
        error.line(),
        error.column()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_is_not_a_job_is_described_without_its_values() {
        let error = serde_json::from_str::<TeamJob>(
            r#"{"kind": "response", "channel": "the launch is on friday"}"#,
        )
        .expect_err("not a job");
        let shown = unquoted(&error);
        assert!(!shown.contains("launch"), "{shown}");
        assert!(shown.starts_with("Data"), "{shown}");
    }
}
