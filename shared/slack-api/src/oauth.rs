//! Slack's OAuth on the Web API: `oauth.v2.access`, with the app's client
//! id and secret as form fields (no bearer token: the installation is what
//! it gives). The secret is held as a [`Token`] and never shown.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use myao_core::ports::{PortError, Secrets, SettingsProvider, SlackOAuth};
use myao_domain::install::{
    form_encoded, read_access, read_refresh, AccessError, Installation, Token,
};
use myao_domain::settings::SLACK_ATTEMPT_TIMEOUT_SECONDS;

/// The name the errors give the service.
const SERVICE: &str = "Slack OAuth";

/// [`SlackOAuth`] over `{base_url}/oauth.v2.access`.
pub struct SlackOAuthApi {
    http: reqwest::Client,
    /// How long one call may take: a Slack that does not answer is a page
    /// that says to try again, and a renewal left to the next round.
    timeout: std::time::Duration,
    /// Slack's Web API, e.g. `https://slack.com/api` (`slack_api_base_url`).
    base_url: String,
    client_id: String,
    client_secret: Token,
}

impl std::fmt::Debug for SlackOAuthApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackOAuthApi")
            .field("base_url", &self.base_url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl SlackOAuthApi {
    pub fn new(
        http: reqwest::Client,
        base_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: Token,
    ) -> SlackOAuthApi {
        SlackOAuthApi {
            http,
            timeout: std::time::Duration::from_secs(u64::from(SLACK_ATTEMPT_TIMEOUT_SECONDS)),
            base_url: base_url.into(),
            client_id: client_id.into(),
            client_secret,
        }
    }

    /// The same, with calls held to `timeout` (tests).
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> SlackOAuthApi {
        self.timeout = timeout;
        self
    }

    /// Posts the form `fields` (with the client's id and secret) to
    /// `oauth.v2.access`: Slack's answer's body, or why there was none. A
    /// 5xx or a transport error is worth a later try; nothing here retries
    /// by itself, as a refresh token must not be sent twice blindly.
    async fn access(&self, fields: &[(&str, &str)]) -> Result<Vec<u8>, PortError> {
        let mut body = format!(
            "client_id={}&client_secret={}",
            form_encoded(&self.client_id),
            form_encoded(self.client_secret.expose())
        );
        for (name, value) in fields {
            body.push_str(&format!("&{name}={}", form_encoded(value)));
        }
        let url = format!("{}/oauth.v2.access", self.base_url.trim_end_matches('/'));
        let answer = self
            .http
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .timeout(self.timeout)
            .body(body)
            .send()
            .await
            // reqwest's error names the URL, never the body.
            .map_err(|e| PortError::unavailable(SERVICE, e.without_url().to_string()))?;
        let status = answer.status();
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(PortError::unavailable(SERVICE, format!("HTTP {status}")));
        }
        let bytes = answer
            .bytes()
            .await
            .map_err(|e| PortError::unavailable(SERVICE, e.without_url().to_string()))?;
        Ok(bytes.to_vec())
    }
}

/// [`SlackOAuth`] as the job functions have it: the client id
/// (`slack_client_id`) and Slack's base URL from the settings, the client
/// secret from the secret `secret_name` (an SSM SecureString), read at each
/// call, so that setting them takes no redeploy.
pub struct ConfiguredOAuth {
    http: reqwest::Client,
    settings: Arc<dyn SettingsProvider>,
    secrets: Arc<dyn Secrets>,
    secret_name: String,
}

impl ConfiguredOAuth {
    pub fn new(
        http: reqwest::Client,
        settings: Arc<dyn SettingsProvider>,
        secrets: Arc<dyn Secrets>,
        secret_name: impl Into<String>,
    ) -> ConfiguredOAuth {
        ConfiguredOAuth {
            http,
            settings,
            secrets,
            secret_name: secret_name.into(),
        }
    }

    async fn api(&self) -> Result<SlackOAuthApi, PortError> {
        let settings = self.settings.current().await?;
        let Some(client_id) = settings.slack_client_id.clone() else {
            return Err(PortError::refused(SERVICE, "slack_client_id is not set"));
        };
        let secret = self.secrets.get(&self.secret_name).await?;
        Ok(SlackOAuthApi::new(
            self.http.clone(),
            settings.slack_api_base_url.clone(),
            client_id,
            Token::new(secret.trim()),
        ))
    }
}

#[async_trait]
impl SlackOAuth for ConfiguredOAuth {
    async fn exchange(
        &self,
        code: &str,
        redirect_uri: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<Installation, AccessError>, PortError> {
        self.api().await?.exchange(code, redirect_uri, now).await
    }

    async fn refresh(
        &self,
        current: &Installation,
        now: DateTime<Utc>,
    ) -> Result<Result<Installation, AccessError>, PortError> {
        self.api().await?.refresh(current, now).await
    }
}

#[async_trait]
impl SlackOAuth for SlackOAuthApi {
    async fn exchange(
        &self,
        code: &str,
        redirect_uri: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<Installation, AccessError>, PortError> {
        // No redirect URL: Slack uses the app's one.
        let fields: &[(&str, &str)] = match redirect_uri {
            "" => &[("code", code)],
            _ => &[("code", code), ("redirect_uri", redirect_uri)],
        };
        let body = self.access(fields).await?;
        Ok(read_access(&body, now))
    }

    async fn refresh(
        &self,
        current: &Installation,
        now: DateTime<Utc>,
    ) -> Result<Result<Installation, AccessError>, PortError> {
        let Some(rotation) = &current.rotation else {
            return Ok(Err(AccessError::Missing("refresh_token")));
        };
        let fields = [
            ("grant_type", "refresh_token"),
            ("refresh_token", rotation.refresh_token.expose()),
        ];
        let body = self.access(&fields).await?;
        Ok(read_refresh(&body, current, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::install::Rotation;
    use myao_domain::{TeamId, UserId};
    use serde_json::json;
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    fn api(server: &MockServer) -> SlackOAuthApi {
        SlackOAuthApi::new(
            myao_http::http_client(),
            format!("{}/api", server.uri()),
            "123.456",
            Token::new("the-client-secret"),
        )
    }

    #[tokio::test]
    async fn a_code_is_exchanged_with_the_clients_credentials_for_an_installation() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/oauth.v2.access"))
            .and(body_string_contains("client_id=123.456"))
            .and(body_string_contains("client_secret=the-client-secret"))
            .and(body_string_contains("code=c0de"))
            .and(body_string_contains(
                "redirect_uri=https%3A%2F%2Fexample.com%2Fslack%2Foauth_redirect",
            ))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true, "access_token": "xoxb-fake1", "scope": "chat:write",
                "bot_user_id": "U0BOT", "team": {"id": "T0ACME", "name": "Acme"}
            })))
            .expect(1)
            .mount(&server)
            .await;
        let install = api(&server)
            .exchange("c0de", "https://example.com/slack/oauth_redirect", at(5))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(install.team.as_str(), "T0ACME");
        assert_eq!(install.installed_at, at(5));
        let shown = format!("{:?}", api(&server));
        assert!(!shown.contains("the-client-secret"), "{shown}");
    }

    #[tokio::test]
    async fn a_refresh_sends_the_refresh_token_and_a_refusal_or_an_outage_say_which() {
        let server = MockServer::start().await;
        let current = Installation {
            team: TeamId::parse("T0ACME").unwrap(),
            enterprise: None,
            team_name: "Acme".into(),
            bot_user_id: UserId::parse("U0BOT").unwrap(),
            scopes: vec!["chat:write".into()],
            bot_token: Token::new("xoxe.xoxb-old"),
            rotation: Some(Rotation {
                refresh_token: Token::new("xoxe-fake-r1"),
                expires_at: at(43_200),
            }),
            installed_at: at(0),
        };
        Mock::given(method("POST"))
            .and(path("/api/oauth.v2.access"))
            .and(body_string_contains("grant_type=refresh_token"))
            .and(body_string_contains("refresh_token=xoxe-fake-r1"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true, "access_token": "xoxe.xoxb-new", "refresh_token": "xoxe-fake-r2",
                "expires_in": 43_200, "team": {"id": "T0ACME"}
            })))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        let renewed = api(&server)
            .refresh(&current, at(40_000))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(renewed.bot_token.expose(), "xoxe.xoxb-new");

        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": false, "error": "invalid_grant"})),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
        let refused = api(&server).refresh(&current, at(40_000)).await.unwrap();
        assert!(refused.unwrap_err().is_final());

        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(503))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        let error = api(&server)
            .refresh(&current, at(40_000))
            .await
            .unwrap_err();
        assert!(error.is_retryable(), "{error}");
        assert!(!error.to_string().contains("xoxe"), "{error}");

        // A Slack that does not answer: given up on, worth a later try.
        let late = ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(5));
        Mock::given(method("POST"))
            .respond_with(late)
            .mount(&server)
            .await;
        let slow = api(&server).with_timeout(std::time::Duration::from_millis(200));
        let error = slow.refresh(&current, at(40_000)).await.unwrap_err();
        assert!(error.is_retryable(), "{error}");
    }
}
