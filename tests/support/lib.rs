//! Support for the integration tests: the AWS emulator's endpoint and SDK
//! configuration, fresh (uniquely named) tables, schedule groups and queues,
//! and signed Slack requests.
//!
//! The emulator is a moto server the developer (or `.ci/run`) starts; its
//! address comes from `MYAO_TEST_AWS_ENDPOINT`. A test that needs it and
//! does not find it fails: it never passes by skipping.

use chrono::{DateTime, Utc};
use myao_aws::scheduler::{self, EventBridgeScheduler};
use myao_aws::sqs::{self, SqsQueue};

mod emulator;
pub mod stubs;
mod tables;

pub use emulator::{
    aws_config, dynamodb_client, emulator_endpoint, scheduler_client, sqs_client, ssm_client,
    unique, ACCOUNT, ENDPOINT_VAR, REGION,
};
pub use tables::{create_table, fresh_store, fresh_store_with_clock};

/// A fake ARN of one of the functions.
pub fn function_arn(name: &str) -> String {
    format!("arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}")
}

/// A scheduler on a new schedule group of its own (its `client` and
/// `group` are public, for tests that go around the adapter). Its targets
/// are fake function ARNs: the emulator never fires a schedule.
pub async fn fresh_scheduler() -> EventBridgeScheduler {
    let client = scheduler_client().await;
    let group = unique("myao");
    scheduler::ensure_group(&client, &group)
        .await
        .unwrap_or_else(|e| panic!("cannot create schedule group {group} on the emulator: {e}"));
    EventBridgeScheduler {
        client,
        group,
        role_arn: format!("arn:aws:iam::{ACCOUNT}:role/myao-scheduler"),
        dlq_arn: Some(format!("arn:aws:sqs:{REGION}:{ACCOUNT}:myao-schedule-dlq")),
        judgment_target_arn: Some(function_arn("myao-judgment")),
        response_target_arn: Some(function_arn("myao-response")),
        memory_target_arn: Some(function_arn("myao-memory")),
        team: None,
    }
}

/// A queue adapter on two new queues of its own, response and memory (its
/// `client` and URLs are public, for reading the messages back).
pub async fn fresh_queues() -> SqsQueue {
    let client = sqs_client().await;
    let response = unique("myao-response");
    let memory = unique("myao-memory");
    let response_queue_url = sqs::create_queue(&client, &response)
        .await
        .unwrap_or_else(|e| panic!("cannot create queue {response} on the emulator: {e}"));
    let memory_queue_url = sqs::create_queue(&client, &memory)
        .await
        .unwrap_or_else(|e| panic!("cannot create queue {memory} on the emulator: {e}"));
    SqsQueue {
        client,
        response_queue_url,
        memory_queue_url: Some(memory_queue_url),
        team: None,
    }
}

/// The `X-Slack-Request-Timestamp` and `X-Slack-Signature` headers Slack
/// would send with `body` at `now`, signed with `secret`.
pub fn signed_request_headers(
    secret: impl AsRef<[u8]>,
    body: impl AsRef<[u8]>,
    now: DateTime<Utc>,
) -> (String, String) {
    let timestamp = now.timestamp().to_string();
    let signature = myao_slack::signature::sign(secret.as_ref(), &timestamp, body.as_ref());
    (timestamp, signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_differ_and_are_valid_everywhere() {
        let a = unique("myao-response");
        let b = unique("myao-response");
        assert_ne!(a, b);
        for name in [a, b] {
            assert!(name.len() <= 64, "{name}");
            assert!(
                name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'),
                "{name}"
            );
        }
    }

    #[test]
    fn signed_headers_verify() {
        let now = Utc::now();
        let (ts, sig) = signed_request_headers("secret", "body", now);
        assert_eq!(
            myao_slack::signature::verify(
                b"secret",
                Some(&ts),
                Some(&sig),
                b"body",
                now.timestamp()
            ),
            Ok(())
        );
    }
}
