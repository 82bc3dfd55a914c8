//! What the HTTP adapters (LLM, Slack) share: the parts every such adapter
//! holds ([`ServiceClient`]), the backoff and `Retry-After` rules, and the
//! error details.

mod client;

pub use client::{http_client, http_client_builder};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{AsHeaderName, HeaderMap};

use myao_core::adapters::metrics::NoMetrics;
use myao_core::ports::{Metrics, PortError, Secrets, SettingsProvider};

/// The common part of an adapter over one HTTP service: the client, where
/// its settings come from, the secret it authenticates with (read on every
/// call, so that a rotated one is picked up without a restart), and the
/// first retry's wait.
pub struct ServiceClient {
    pub http: reqwest::Client,
    pub settings: Arc<dyn SettingsProvider>,
    secrets: Arc<dyn Secrets>,
    pub secret_name: String,
    /// The first retry's wait.
    pub backoff: Duration,
    /// Where the calls are counted.
    pub metrics: Arc<dyn Metrics>,
}

impl fmt::Debug for ServiceClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The secret's name only, never its value (which is not held anyway).
        f.debug_struct("ServiceClient")
            .field("secret_name", &self.secret_name)
            .field("backoff", &self.backoff)
            .finish_non_exhaustive()
    }
}

impl ServiceClient {
    /// A client whose first retry waits `backoff`.
    pub fn new(
        http: reqwest::Client,
        settings: Arc<dyn SettingsProvider>,
        secrets: Arc<dyn Secrets>,
        secret_name: impl Into<String>,
        backoff: Duration,
    ) -> ServiceClient {
        ServiceClient {
            http,
            settings,
            secrets,
            secret_name: secret_name.into(),
            backoff,
            metrics: Arc::new(NoMetrics),
        }
    }

    /// The same client authenticating with the secret `secrets` holds
    /// under `secret_name`.
    pub fn with_secret(
        &self,
        secrets: Arc<dyn Secrets>,
        secret_name: impl Into<String>,
    ) -> ServiceClient {
        ServiceClient {
            http: self.http.clone(),
            settings: self.settings.clone(),
            secrets,
            secret_name: secret_name.into(),
            backoff: self.backoff,
            metrics: self.metrics.clone(),
        }
    }

    /// Counts the calls in `metrics`.
    pub fn with_metrics(self, metrics: Arc<dyn Metrics>) -> ServiceClient {
        ServiceClient { metrics, ..self }
    }

    /// Sets the first retry's wait.
    pub fn with_backoff(self, backoff: Duration) -> ServiceClient {
        ServiceClient { backoff, ..self }
    }

    /// The exponential backoff before retry number `retry` (0 for the first
    /// retry): the first retry's wait, doubled for each later one, never
    /// more than `cap`.
    pub fn backoff(&self, retry: u32, cap: Duration) -> Duration {
        exponential_backoff(self.backoff, retry, cap)
    }

    /// The secret, trimmed; `None` when it is blank. An error of the secrets
    /// port (a missing secret included) is returned as it is: each adapter
    /// decides what a missing secret means.
    pub async fn secret(&self) -> Result<Option<String>, PortError> {
        let value = self.secrets.get(&self.secret_name).await?;
        let value = value.trim();
        Ok((!value.is_empty()).then(|| value.to_owned()))
    }
}

/// The wait before retry number `retry` (0 for the first): `first`,
/// doubled for each later retry, never more than `cap`.
pub fn exponential_backoff(first: Duration, retry: u32, cap: Duration) -> Duration {
    first.saturating_mul(1u32 << retry.min(16)).min(cap)
}

/// `path` under the base URL `base`, whether or not `base` ends with `/`.
pub fn endpoint(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

/// The header `name` as a number (of seconds, in `Retry-After`), if it is a
/// finite one and not negative. An HTTP date is not parsed.
pub fn header_number(headers: &HeaderMap, name: impl AsHeaderName) -> Option<f64> {
    let number: f64 = headers.get(name)?.to_str().ok()?.trim().parse().ok()?;
    (number.is_finite() && number >= 0.0).then_some(number)
}

/// A wait of `secs` seconds (as a server asked for it), never more than `cap`.
pub fn wait_at_most(secs: f64, cap: Duration) -> Duration {
    Duration::from_secs_f64(secs.min(cap.as_secs_f64()))
}

/// A duration in whole milliseconds, for a log field.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `text` cut to `max` characters, with an ellipsis when it was longer.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Whether a transport error will come back the same on every attempt: a
/// bad URL or a redirect loop, which trying again does not change.
pub fn is_permanent(error: &reqwest::Error) -> bool {
    error.is_builder() || error.is_redirect()
}

/// A transport error with its causes, without the URL (which may carry a
/// token in a query), cut to `max` characters.
pub fn transport_detail(error: reqwest::Error, max: usize) -> String {
    error_chain(&error.without_url(), max)
}

/// An error and its causes, each as it displays itself (never as it
/// debugs itself, which may show a request or a response whole), cut to
/// `max` characters.
pub fn error_chain(error: &dyn std::error::Error, max: usize) -> String {
    let mut detail = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    truncate(&detail, max)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

    use super::*;
    use myao_core::adapters::system::{FixedSettings, StaticSecrets};
    use myao_domain::Settings;

    fn client(secrets: StaticSecrets, secret_name: &str) -> ServiceClient {
        ServiceClient::new(
            crate::http_client(),
            Arc::new(FixedSettings::new(Settings::default())),
            Arc::new(secrets),
            secret_name,
            Duration::from_millis(500),
        )
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let client = client(StaticSecrets::new(), "s");
        let cap = Duration::from_secs(4);
        let ms = |retry| client.backoff(retry, cap).as_millis();
        assert_eq!(
            [ms(0), ms(1), ms(2), ms(3), ms(40)],
            [500, 1000, 2000, 4000, 4000]
        );
        let client = client.with_backoff(Duration::from_millis(1));
        assert_eq!(client.backoff(2, cap), Duration::from_millis(4));
    }

    #[tokio::test]
    async fn the_secret_is_trimmed_and_blank_is_none() {
        let secrets = StaticSecrets::new().with("s", " v \n").with("blank", "  ");
        assert_eq!(
            client(secrets.clone(), "s")
                .secret()
                .await
                .unwrap()
                .as_deref(),
            Some("v")
        );
        assert_eq!(
            client(secrets.clone(), "blank").secret().await.unwrap(),
            None
        );
        assert!(matches!(
            client(secrets, "missing").secret().await,
            Err(PortError::Refused { .. })
        ));
    }

    #[test]
    fn debug_names_the_secret_without_its_value() {
        let secrets = StaticSecrets::new().with("s", "hunter2");
        let debug = format!("{:?}", client(secrets, "s"));
        assert!(debug.contains("\"s\""), "{debug}");
        assert!(!debug.contains("hunter2"), "{debug}");
    }

    #[test]
    fn header_numbers_are_finite_and_not_negative() {
        let mut headers = HeaderMap::new();
        assert_eq!(header_number(&headers, RETRY_AFTER), None);
        for (value, expected) in [
            (" 2.5 ", Some(2.5)),
            ("0", Some(0.0)),
            ("-1", None),
            ("NaN", None),
            ("inf", None),
            ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ] {
            headers.insert(RETRY_AFTER, HeaderValue::from_static(value));
            assert_eq!(header_number(&headers, RETRY_AFTER), expected, "{value}");
        }
    }

    #[test]
    fn a_wait_asked_for_is_capped() {
        let cap = Duration::from_secs(20);
        assert_eq!(wait_at_most(1.5, cap), Duration::from_millis(1500));
        assert_eq!(wait_at_most(1e300, cap), cap);
    }

    #[test]
    fn an_endpoint_has_one_slash_after_the_base() {
        assert_eq!(
            endpoint("http://h/v1/", "chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            endpoint("http://h/api", "auth.test"),
            "http://h/api/auth.test"
        );
    }

    #[test]
    fn truncate_counts_characters_not_bytes() {
        assert_eq!(truncate("にゃあにゃあ", 3), "にゃあ…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("", 0), "");
    }
}
