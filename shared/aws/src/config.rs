//! The SDK configuration in one place, so that every client a function
//! builds shares one HTTP client and one way to credentials; a module of its
//! own so that the assembly ([`wire`](crate::wire)) finds it beside it
//! rather than in the crate's root.

use aws_config::BehaviorVersion;

use crate::http::http_client;

/// The SDK configuration from the environment (region, credentials, and
/// `AWS_ENDPOINT_URL`, through which tests and the local tools reach the
/// emulator), over [`http_client`].
pub async fn sdk_config() -> aws_config::SdkConfig {
    defaults(env_has_credentials()).load().await
}

/// The same, with every AWS call bounded by `operation` (retries included)
/// and each attempt by half of it: the ingest function must answer Slack
/// within 3 seconds, and a hung call would make Slack deliver again.
pub async fn sdk_config_with_timeout(operation: std::time::Duration) -> aws_config::SdkConfig {
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .operation_timeout(operation)
        .operation_attempt_timeout(operation / 2)
        .build();
    defaults(env_has_credentials())
        .timeout_config(timeouts)
        .load()
        .await
}

/// Whether the environment holds a key pair, as Lambda's does (the
/// execution role's, with its session token).
fn env_has_credentials() -> bool {
    ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
        .iter()
        .all(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// The SDK's defaults over [`http_client`]. With credentials in the
/// environment they are the only provider: the default chain would take
/// them first all the same, but building it makes an STS client (for web
/// identity) and the profile, SSO, container and instance providers, a
/// fifth of what a cold start executes before its first request. Without
/// them (the local tools on a developer's machine), the default chain.
fn defaults(env_credentials: bool) -> aws_config::ConfigLoader {
    let loader = aws_config::defaults(BehaviorVersion::latest()).http_client(http_client());
    if env_credentials {
        loader.credentials_provider(
            aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
        )
    } else {
        loader
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn credentials_in_the_environment_are_the_only_provider() {
        let region = aws_config::Region::new("us-east-1");
        let provider = |config: aws_config::SdkConfig| {
            format!("{:?}", config.credentials_provider().expect("a provider"))
        };
        let lambda = provider(defaults(true).region(region.clone()).load().await);
        assert!(
            lambda.contains("EnvironmentVariableCredentialsProvider"),
            "{lambda}"
        );
        assert!(!lambda.contains("Chain"), "{lambda}");
        let local = provider(defaults(false).region(region).load().await);
        assert!(local.contains("DefaultCredentialsChain"), "{local}");
    }
}
