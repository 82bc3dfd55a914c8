//! What the Bedrock adapters' tests share: the SDK's configuration as the
//! functions load it, with static test credentials and a stub as the
//! endpoint.

use aws_config::BehaviorVersion;
use aws_sdk_bedrockruntime::config::{Credentials, Region};
use myao_aws::http_client;

/// The tests' secret access key: no answer or error may show it.
pub(crate) const SECRET_KEY: &str = "fake-secret-access-key-for-tests";

/// The SDK's configuration with the test credentials and `endpoint`.
pub(crate) async fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            "AKIDFAKEFORTESTS",
            SECRET_KEY,
            None,
            None,
            "test",
        ))
        .endpoint_url(endpoint)
        .http_client(http_client())
        .load()
        .await
}
