//! Runs the summary jobs of one invocation (a schedule's input or an SQS batch).

use lambda_runtime::{Error, LambdaEvent};
use myao::app::jobs::handle_payload;
use myao::app::Services;
use myao::domain::JobKind;
use serde_json::Value;

/// The job kinds this function runs.
pub const KINDS: &[JobKind] = &[JobKind::ThreadMemory, JobKind::MemorySweep, JobKind::Forget];

pub async fn handle(services: &Services, event: LambdaEvent<Value>) -> Result<Value, Error> {
    Ok(handle_payload(services, KINDS, event.payload).await?)
}
