//! Support for the integration tests: the AWS emulator's endpoint and SDK
//! configuration, fresh (uniquely named) tables, schedule groups and queues,
//! and signed Slack requests.
//!
//! The emulator is a moto server the developer (or `.ci/run`) starts; its
//! address comes from `MYAO_TEST_AWS_ENDPOINT`. A test that needs it and
//! does not find it fails: it never passes by skipping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_config::{BehaviorVersion, Region, SdkConfig};
use chrono::{DateTime, Utc};
use myao_aws::dynamodb::{schema, DynamoStore};
use myao_aws::scheduler::{self, EventBridgeScheduler};
use myao_aws::sqs::{self, SqsQueue};
use myao_core::adapters::system::SystemClock;
use myao_core::ports::Clock;

pub mod stubs;

/// The variable holding the emulator's URL, e.g. `http://127.0.0.1:5123`.
pub const ENDPOINT_VAR: &str = "MYAO_TEST_AWS_ENDPOINT";
/// The emulator's (and the fake ARNs') region and account.
pub const REGION: &str = "us-east-1";
pub const ACCOUNT: &str = "123456789012";

/// The emulator's URL. Panics when `MYAO_TEST_AWS_ENDPOINT` is unset: a test
/// against AWS must not pass without running.
pub fn emulator_endpoint() -> String {
    match std::env::var(ENDPOINT_VAR) {
        Ok(url) if !url.trim().is_empty() => url.trim().to_owned(),
        _ => panic!(
            "{ENDPOINT_VAR} is not set: start moto_server (`moto_server -H 127.0.0.1 -p 5123`) \
             and set {ENDPOINT_VAR}=http://127.0.0.1:5123, or run `bash .ci/run`"
        ),
    }
}

/// SDK configuration for the emulator: its endpoint, dummy credentials
/// (test/test), us-east-1, nothing from the host's environment, and the
/// functions' own HTTP client.
pub async fn aws_config() -> SdkConfig {
    let credentials =
        aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "myao-tests");
    aws_config::defaults(BehaviorVersion::latest())
        .empty_test_environment()
        .http_client(myao_aws::http_client())
        .endpoint_url(emulator_endpoint())
        .region(Region::new(REGION))
        .credentials_provider(credentials)
        .load()
        .await
}

/// A name no other test (in this or a concurrent run) uses: the prefix, the
/// process id, a counter and the time. At most 40 characters for a short
/// prefix, of `[0-9a-zA-Z-]`: valid for tables, schedule groups, queues and
/// SSM paths alike.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{prefix}-{}-{n}-{millis:x}", std::process::id())
}

/// A raw DynamoDB client on the emulator.
pub async fn dynamodb_client() -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&aws_config().await)
}

/// A raw EventBridge Scheduler client on the emulator.
pub async fn scheduler_client() -> aws_sdk_scheduler::Client {
    aws_sdk_scheduler::Client::new(&aws_config().await)
}

/// A raw SQS client on the emulator.
pub async fn sqs_client() -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::new(&aws_config().await)
}

/// A raw SSM client on the emulator.
pub async fn ssm_client() -> aws_sdk_ssm::Client {
    aws_sdk_ssm::Client::new(&aws_config().await)
}

/// A store on a new table of its own, on the system clock.
pub async fn fresh_store() -> DynamoStore {
    fresh_store_with_clock(Arc::new(SystemClock)).await
}

/// A store on a new table of its own, on `clock` (e.g. a `ManualClock`).
pub async fn fresh_store_with_clock(clock: Arc<dyn Clock>) -> DynamoStore {
    let client = dynamodb_client().await;
    let table = unique("myao");
    create_table(&client, &table)
        .await
        .unwrap_or_else(|e| panic!("cannot create table {table} on the emulator: {e}"));
    DynamoStore::new(client, table, clock)
}

/// Creates a table as the stack does (`template.yaml`), from the store's
/// schema: its key schema, `gsi1` and TTL; and waits until it is active. An
/// existing table is left as it is (its TTL is still switched on).
pub async fn create_table(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    use aws_sdk_dynamodb::client::Waiters;

    create_unless_there(client, name).await?;
    client
        .wait_until_table_exists()
        .table_name(name)
        .wait(std::time::Duration::from_secs(120))
        .await
        .map_err(|e| failed("waiting for the table", name, &e))?;
    switch_ttl_on(client, name).await
}

/// An error of `what` on table `name`, with the SDK's whole context.
fn failed(what: &str, name: &str, e: &dyn std::error::Error) -> anyhow::Error {
    use aws_sdk_dynamodb::error::DisplayErrorContext;

    anyhow::anyhow!("{what} {name}: {}", DisplayErrorContext(e))
}

/// Creates the table with the store's keys and `gsi1`, unless it exists.
async fn create_unless_there(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
        Projection, ProjectionType, ScalarAttributeType,
    };

    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
    };
    let key = |n: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
    };
    let gsi = GlobalSecondaryIndex::builder()
        .index_name(schema::GSI1)
        .key_schema(key(schema::GSI1_PK, KeyType::Hash)?)
        .key_schema(key(schema::GSI1_SK, KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()?;
    let created = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(schema::PK)?)
        .attribute_definitions(attr(schema::SK)?)
        .attribute_definitions(attr(schema::GSI1_PK)?)
        .attribute_definitions(attr(schema::GSI1_SK)?)
        .key_schema(key(schema::PK, KeyType::Hash)?)
        .key_schema(key(schema::SK, KeyType::Range)?)
        .global_secondary_indexes(gsi)
        .send()
        .await;
    match created {
        Ok(_) => Ok(()),
        // It exists already.
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            Ok(())
        }
        Err(e) => Err(failed("CreateTable", name, &e)),
    }
}

/// Switches the table's TTL on (on `schema::TTL_ATTRIBUTE`), unless it is
/// on or being switched on.
async fn switch_ttl_on(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    use aws_sdk_dynamodb::types::{TimeToLiveSpecification, TimeToLiveStatus};

    let ttl = client
        .describe_time_to_live()
        .table_name(name)
        .send()
        .await
        .map_err(|e| failed("DescribeTimeToLive", name, &e))?;
    let status = ttl
        .time_to_live_description()
        .and_then(|d| d.time_to_live_status());
    if matches!(
        status,
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    ) {
        return Ok(());
    }
    let spec = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name(schema::TTL_ATTRIBUTE)
        .build()?;
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(spec)
        .send()
        .await
        .map_err(|e| failed("UpdateTimeToLive", name, &e))?;
    Ok(())
}

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
