//! The judgment, response and memory functions. They differ only in the job
//! kinds they run: one handler serves the three, and each binary names its
//! function and its kinds. Beside them, the install function ([`install`]).

pub mod install;
pub mod payload;

use lambda_runtime::{service_fn, Error, LambdaEvent};
use myao_core::deadline::Deadline;
use myao_core::env::Function;
use myao_domain::JobKind;
use myao_services::Services;
use serde_json::Value;

use payload::{handle_payload, Answer};

/// The kinds the judgment function runs (its schedules): a conversation's
/// judgment, and a proactive one (whether to open a topic).
pub const JUDGMENT: &[JobKind] = &[JobKind::Judgment, JobKind::Proactive];

/// The kinds the response function runs (its schedules and queue).
pub const RESPONSE: &[JobKind] = &[JobKind::Response];

/// The kinds the memory function runs (the recurring schedule and the
/// memory queue).
pub const MEMORY: &[JobKind] = &[
    JobKind::ThreadMemory,
    JobKind::MemorySweep,
    JobKind::ChannelMemory,
    JobKind::WorkspaceMemory,
    JobKind::Forget,
    // An uninstalled workspace's data deleted (made by ingest).
    JobKind::Purge,
];

/// Runs one invocation's payload (a schedule's input or an SQS batch) under
/// the invocation's deadline, to which the LLM and Slack calls are sized: a
/// job out of time fails retryably before Lambda would kill it. Which
/// failures fail the invocation is decided once, in
/// [`payload::handle_payload`].
pub async fn handle(
    services: &Services,
    kinds: &[JobKind],
    event: LambdaEvent<Value>,
) -> Result<Answer, Error> {
    let deadline = Deadline::from_epoch_millis(event.context.deadline);
    let work = handle_payload(services, kinds, event.payload);
    Ok(Deadline::scope(deadline, work).await?)
}

/// The body of each binary's `main`: builds `function`'s services once per
/// cold start, then serves invocations.
pub async fn serve(function: Function, kinds: &'static [JobKind]) -> Result<(), Error> {
    myao_core::telemetry::init(myao_core::telemetry::lambda_wants_json());
    let services = myao_wire::aws::services(function).await?;
    let services = &services;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        handle(services, kinds, event)
    }))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_job_is_run_by_exactly_one_function() {
        for kind in JobKind::ALL {
            let runners = [JUDGMENT, RESPONSE, MEMORY]
                .iter()
                .filter(|kinds| kinds.contains(&kind))
                .count();
            assert_eq!(runners, 1, "{kind}");
        }
    }
}
