//! The emulator's side of the support: where it is, how the SDK reaches it,
//! and names no two tests share, in a module of its own so that the support
//! modules that make things on it find it beside them rather than in the
//! crate's root.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_config::{BehaviorVersion, Region, SdkConfig};

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
