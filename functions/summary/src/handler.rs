//! Runs the summary jobs of one invocation (a schedule's input or an SQS batch).

use lambda_runtime::{Error, LambdaEvent};
use myao::app::jobs::handle_payload;
use myao::app::Services;
use myao::deadline::Deadline;
use myao::domain::JobKind;
use serde_json::Value;

/// The job kinds this function runs.
pub const KINDS: &[JobKind] = &[
    JobKind::ThreadMemory,
    JobKind::MemorySweep,
    JobKind::ChannelMemory,
    JobKind::WorkspaceMemory,
    JobKind::Forget,
];

/// Runs the payload under the invocation's deadline, to which the LLM and
/// Slack calls are sized: a job out of time fails retryably before Lambda
/// would kill it.
pub async fn handle(services: &Services, event: LambdaEvent<Value>) -> Result<Value, Error> {
    let deadline = Deadline::from_epoch_millis(event.context.deadline);
    let work = handle_payload(services, KINDS, event.payload);
    Ok(Deadline::scope(deadline, work).await?)
}
