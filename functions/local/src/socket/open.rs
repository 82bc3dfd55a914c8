//! Opening a connection: `apps.connections.open` with the app-level token
//! ([`read_open_answer`] reads its answer), the WebSocket handshake, and
//! the waits between attempts ([`Backoff`]).

use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::config::{env_var, SLACK_APP_TOKEN};

/// The Web API method that opens a connection.
pub const OPEN_METHOD: &str = "apps.connections.open";

/// The codes with which `apps.connections.open` refuses a token: trying
/// again cannot help.
const TOKEN_REFUSALS: &[&str] = &[
    "invalid_auth",
    "not_authed",
    "not_allowed_token_type",
    "missing_scope",
    "token_revoked",
    "token_expired",
    "account_inactive",
    "no_permission",
];
/// How long `apps.connections.open`, and the WebSocket handshake, may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(15);

/// The waits between attempts to connect: `first`, doubling up to `max`;
/// each between half of that and all of it, at random, so that many
/// clients cut off together do not come back together.
#[derive(Debug, Clone)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    failures: u32,
}

impl Backoff {
    pub fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max: max.max(first),
            failures: 0,
        }
    }

    /// The wait before the next attempt; `unit` is drawn from [0, 1).
    pub fn next(&mut self, unit: f64) -> Duration {
        let step = self
            .first
            .saturating_mul(1 << self.failures.min(16))
            .min(self.max);
        self.failures = self.failures.saturating_add(1);
        let unit = if unit.is_finite() {
            unit.clamp(0.0, 1.0)
        } else {
            0.5
        };
        step.mul_f64(0.5 + 0.5 * unit)
    }

    /// After a connection that worked: the next wait is short again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

/// Why no connection could be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The token was refused: it will be again.
    #[error(
        "{OPEN_METHOD} refused the app-level token: {code}. Socket Mode needs an \
         app-level token (xapp-...) with the connections:write scope: make one on the \
         app's Basic Information page (App-Level Tokens) and set it as {}",
        env_var(SLACK_APP_TOKEN)
    )]
    Token { code: String },
    /// Refused, with Slack's error code, for a reason that will not go
    /// away by itself.
    #[error("{OPEN_METHOD} failed: HTTP {status}, {code}")]
    Refused { status: u16, code: String },
    /// Refused with a body that is not JSON.
    #[error("{OPEN_METHOD} failed: HTTP {status} with a body that is not JSON")]
    RefusedNotJson { status: u16 },
    /// Slack failed (429 or 5xx), or answered 200 with something that is
    /// not a connection: worth another try, as is everything below.
    #[error("{OPEN_METHOD} answered HTTP {status}")]
    Status { status: u16 },
    #[error("{OPEN_METHOD} answered HTTP {status} with a body that is not JSON")]
    NotJson { status: u16 },
    /// Slack's error code for a passing trouble (`ratelimited`,
    /// `internal_error`, ...).
    #[error("{OPEN_METHOD} answered {code}")]
    Busy { code: String },
    #[error("{OPEN_METHOD} answered no WebSocket URL")]
    NoUrl,
    /// The call did not reach Slack: the HTTP client's error, without the
    /// URL (kept as text: `reqwest::Error` is neither `Clone` nor `Eq`).
    #[error("{OPEN_METHOD}: {error}")]
    Unsent { error: String },
    /// The WebSocket's handshake with `host` failed (the URL carries a
    /// ticket: only its host is shown).
    #[error("the WebSocket to {host}: {error}")]
    Handshake { host: String, error: String },
    #[error("the WebSocket to {host}: no handshake within {} s", OPEN_TIMEOUT.as_secs())]
    NoHandshake { host: String },
}

impl OpenError {
    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            OpenError::Token { .. } | OpenError::Refused { .. } | OpenError::RefusedNotJson { .. }
        )
    }
}

/// The WebSocket URL in an answer of `apps.connections.open`, given its
/// HTTP status and body; with `debug_reconnects`, Slack's testing flag
/// added (it makes the connections short-lived).
pub fn read_open_answer(
    status: u16,
    body: &[u8],
    debug_reconnects: bool,
) -> Result<Url, OpenError> {
    if status == 429 || status >= 500 {
        return Err(OpenError::Status { status });
    }
    let answer: Value = serde_json::from_slice(body).map_err(|_| {
        if status == 200 {
            OpenError::NotJson { status }
        } else {
            OpenError::RefusedNotJson { status }
        }
    })?;
    if answer.get("ok").and_then(Value::as_bool) != Some(true) {
        let code = answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("no error code")
            .to_owned();
        return Err(if TOKEN_REFUSALS.contains(&code.as_str()) {
            OpenError::Token { code }
        } else if status == 200 {
            // ratelimited, internal_error, service_unavailable, ...
            OpenError::Busy { code }
        } else {
            OpenError::Refused { status, code }
        });
    }
    let mut url = answer
        .get("url")
        .and_then(Value::as_str)
        .and_then(|u| Url::parse(u).ok())
        .filter(|u| matches!(u.scheme(), "wss" | "ws"))
        .ok_or(OpenError::NoUrl)?;
    if debug_reconnects {
        url.query_pairs_mut()
            .append_pair("debug_reconnects", "true");
    }
    Ok(url)
}

/// The app-level token. Never shown.
pub(super) struct AppToken(pub(super) String);

impl std::fmt::Debug for AppToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppToken(..)")
    }
}

pub(super) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens connections: `apps.connections.open`, then the WebSocket.
#[derive(Debug)]
pub(super) struct Opener {
    pub(super) http: reqwest::Client,
    /// `{slack_api_base_url}/apps.connections.open`.
    pub(super) endpoint: String,
    pub(super) token: AppToken,
    pub(super) debug_reconnects: bool,
    pub(super) tls: Arc<rustls::ClientConfig>,
}

impl Opener {
    pub(super) async fn open(&self) -> Result<Ws, OpenError> {
        let url = self.url().await?;
        // The URL carries a ticket: only its host is ever shown.
        let host = url.host_str().unwrap_or("?").to_owned();
        let connecting = tokio_tungstenite::connect_async_tls_with_config(
            url.as_str(),
            None,
            true,
            Some(Connector::Rustls(self.tls.clone())),
        );
        match tokio::time::timeout(OPEN_TIMEOUT, connecting).await {
            Ok(Ok((ws, _response))) => Ok(ws),
            Ok(Err(error)) => Err(OpenError::Handshake {
                host,
                error: error.to_string(),
            }),
            Err(_) => Err(OpenError::NoHandshake { host }),
        }
    }

    async fn url(&self) -> Result<Url, OpenError> {
        let unavailable = |error: reqwest::Error| OpenError::Unsent {
            error: error.without_url().to_string(),
        };
        let response = self
            .http
            .post(&self.endpoint)
            .bearer_auth(&self.token.0)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .timeout(OPEN_TIMEOUT)
            .send()
            .await
            .map_err(unavailable)?;
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(unavailable)?;
        read_open_answer(status, &body, self.debug_reconnects)
    }
}
