//! `myao serve --socket-mode`: the bot of [`crate::serve`], its events coming
//! over Slack's Socket Mode, a WebSocket this process opens itself, instead
//! of HTTP requests: no public URL, no tunnel.
//!
//! - `apps.connections.open`, with the app-level token (`xapp-...`), gives a
//!   `wss://` URL; the connection opened on it starts with a `hello`.
//! - Each envelope is acknowledged at once by its `envelope_id`, before
//!   anything else (Slack wants it within 3 s and redelivers otherwise). An
//!   `events_api` envelope's payload is an Events API body: it goes to the
//!   same [`Ingest::accept`] as HTTP, without the signature check (the
//!   connection is authenticated). Ingest deduplicates on the event, so a
//!   redelivery in a new envelope is handled once. Other envelopes (slash
//!   commands, interactivity) are acknowledged and ignored.
//! - `disconnect` with reason `warning` or `refresh_requested`: a new
//!   connection is opened, and only then the old one closed. `link_disabled`
//!   (Socket Mode switched off for the app): serve stops with an error.
//! - A connection that drops is opened again after a backoff (1 s doubling
//!   to 30 s, with jitter), reset by the next `hello`.
//!
//! Each connection has its own task, which reads it (tungstenite answers
//! Slack's pings while it is read), acknowledges, and reports to the one
//! loop of [`SocketMode::run`], which ingests the events in the order they
//! came and decides about connections.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use futures_util::{SinkExt as _, StreamExt as _};
use myao::app::ingest::Ingest;
use myao::ports::Secrets as _;
use reqwest::Url;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::config::{env_var, LocalConfig, SLACK_APP_TOKEN};
use crate::serve::{self, Bot};

/// The Web API method that opens a connection.
pub const OPEN_METHOD: &str = "apps.connections.open";
/// The first wait before opening a connection again.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long `apps.connections.open`, and the WebSocket handshake, may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(15);
/// Silence on a connection after which it is pinged; as long again without
/// a frame, and it counts as dropped (Slack pings more often than this).
const IDLE: Duration = Duration::from_secs(30);
/// How long a closing connection may take to answer the close.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

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

/// One message from Slack over the socket.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// The connection is ready.
    Hello,
    /// An envelope: to acknowledge by `id`, then to act on its content.
    Envelope {
        id: String,
        /// 0 on the first delivery.
        retry_attempt: u64,
        content: Content,
    },
    /// Slack is about to close the connection, for this reason.
    Disconnect(Reason),
    /// A message of another `type`.
    Other(String),
}

/// What an envelope carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// An Events API body, as HTTP would have posted it.
    Event(Vec<u8>),
    /// Another envelope type (`slash_commands`, `interactive`, ...), or an
    /// `events_api` envelope without a payload: acknowledged, ignored.
    Ignored(String),
}

/// Why Slack disconnects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The connection will be closed in a few seconds.
    Warning,
    /// Slack asks for a new connection.
    RefreshRequested,
    /// Socket Mode was switched off for the app.
    LinkDisabled,
    Other(String),
}

/// What a `disconnect` calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Open a new connection now, and close the old one once it is open.
    Replace,
    /// Stop serving: no connection can be opened.
    Stop,
}

impl Reason {
    fn parse(text: &str) -> Reason {
        match text {
            "warning" => Reason::Warning,
            "refresh_requested" => Reason::RefreshRequested,
            "link_disabled" => Reason::LinkDisabled,
            other => Reason::Other(other.to_owned()),
        }
    }

    /// What to do about it. An unknown reason is taken as a warning: a
    /// connection Slack means to close is best replaced before it is.
    pub fn next(&self) -> Next {
        match self {
            Reason::LinkDisabled => Next::Stop,
            Reason::Warning | Reason::RefreshRequested | Reason::Other(_) => Next::Replace,
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Reason::Warning => "warning",
            Reason::RefreshRequested => "refresh_requested",
            Reason::LinkDisabled => "link_disabled",
            Reason::Other(other) => other,
        }
    }
}

/// A message that is not one of Slack's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not a JSON object. (What the parser said may quote the message, so
    /// it is not kept: conversations stay out of the logs.)
    #[error("not a JSON object")]
    NotJson,
    #[error("an envelope without an envelope_id")]
    NoEnvelopeId,
}

/// Reads one text message from Slack.
pub fn parse_frame(text: &str) -> Result<Frame, FrameError> {
    let frame: Value = serde_json::from_str(text).map_err(|_| FrameError::NotJson)?;
    if !frame.is_object() {
        return Err(FrameError::NotJson);
    }
    let field = |name: &str| frame.get(name).and_then(Value::as_str);
    let kind = field("type").unwrap_or_default();
    if let Some(id) = field("envelope_id") {
        let content = match frame.get("payload") {
            Some(payload) if kind == "events_api" && payload.is_object() => {
                // Written back as the HTTP body it stands for, for the
                // parser ingest uses. It was JSON: it serializes.
                Content::Event(serde_json::to_vec(payload).unwrap_or_default())
            }
            _ => Content::Ignored(kind.to_owned()),
        };
        return Ok(Frame::Envelope {
            id: id.to_owned(),
            retry_attempt: frame
                .get("retry_attempt")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            content,
        });
    }
    match kind {
        "hello" => Ok(Frame::Hello),
        "disconnect" => Ok(Frame::Disconnect(Reason::parse(
            field("reason").unwrap_or_default(),
        ))),
        "events_api" | "slash_commands" | "interactive" => Err(FrameError::NoEnvelopeId),
        other => Ok(Frame::Other(other.to_owned())),
    }
}

/// The acknowledgement of the envelope `id`.
pub fn ack(id: &str) -> String {
    json!({ "envelope_id": id }).to_string()
}

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
    /// Refused for another reason that will not go away by itself.
    #[error("{OPEN_METHOD} failed: {0}")]
    Refused(String),
    /// Slack or the network failed: worth another try.
    #[error("{0}")]
    Unavailable(String),
}

impl OpenError {
    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, OpenError::Unavailable(_))
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
        return Err(OpenError::Unavailable(format!(
            "{OPEN_METHOD} answered HTTP {status}"
        )));
    }
    let answer: Value = serde_json::from_slice(body).map_err(|_| {
        let problem = format!("HTTP {status} with a body that is not JSON");
        if status == 200 {
            OpenError::Unavailable(format!("{OPEN_METHOD} answered {problem}"))
        } else {
            OpenError::Refused(problem)
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
            OpenError::Unavailable(format!("{OPEN_METHOD} answered {code}"))
        } else {
            OpenError::Refused(format!("HTTP {status}, {code}"))
        });
    }
    let mut url = answer
        .get("url")
        .and_then(Value::as_str)
        .and_then(|u| Url::parse(u).ok())
        .filter(|u| matches!(u.scheme(), "wss" | "ws"))
        .ok_or_else(|| {
            OpenError::Unavailable(format!("{OPEN_METHOD} answered no WebSocket URL"))
        })?;
    if debug_reconnects {
        url.query_pairs_mut()
            .append_pair("debug_reconnects", "true");
    }
    Ok(url)
}

/// The app-level token. Never shown.
struct AppToken(String);

impl std::fmt::Debug for AppToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppToken(..)")
    }
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens connections: `apps.connections.open`, then the WebSocket.
#[derive(Debug)]
struct Opener {
    http: reqwest::Client,
    /// `{slack_api_base_url}/apps.connections.open`.
    endpoint: String,
    token: AppToken,
    debug_reconnects: bool,
    tls: Arc<rustls::ClientConfig>,
}

impl Opener {
    async fn open(&self) -> Result<Ws, OpenError> {
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
            Ok(Err(error)) => Err(OpenError::Unavailable(format!(
                "the WebSocket to {host}: {error}"
            ))),
            Err(_) => Err(OpenError::Unavailable(format!(
                "the WebSocket to {host}: no handshake within {} s",
                OPEN_TIMEOUT.as_secs()
            ))),
        }
    }

    async fn url(&self) -> Result<Url, OpenError> {
        let unavailable = |error: reqwest::Error| {
            OpenError::Unavailable(format!("{OPEN_METHOD}: {}", error.without_url()))
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

/// `myao serve --socket-mode`, ready to run.
pub struct SocketMode {
    bot: Bot,
    opener: Opener,
    first_backoff: Duration,
}

/// Checks the secrets (the app-level token and the bot token; no signing
/// secret), and finds the bot's user id with `auth.test`. With
/// `debug_reconnects`, Slack is asked for short-lived connections.
pub async fn prepare(config: LocalConfig, debug_reconnects: bool) -> anyhow::Result<SocketMode> {
    serve::require(
        &config,
        SLACK_APP_TOKEN,
        "Slack app-level token (xapp-..., with connections:write)",
    )?;
    let token = config
        .secrets
        .get(SLACK_APP_TOKEN)
        .await
        .context("the app-level token")?
        .trim()
        .to_owned();
    if !token.starts_with("xapp-") {
        bail!(
            "{} is not an app-level token (they start with xapp-): make one with the \
             connections:write scope on the app's Basic Information page (App-Level Tokens)",
            env_var(SLACK_APP_TOKEN)
        );
    }
    let base = config.settings.slack_api_base_url.trim_end_matches('/');
    let opener = Opener {
        http: myao::adapters::tls::http_client(),
        endpoint: format!("{base}/{OPEN_METHOD}"),
        token: AppToken(token),
        debug_reconnects,
        tls: myao::adapters::tls::client_config(),
    };
    let bot = serve::assemble(config).await?;
    Ok(SocketMode {
        bot,
        opener,
        first_backoff: FIRST_BACKOFF,
    })
}

/// What a connection's task tells the loop.
#[derive(Debug)]
enum Report {
    Hello {
        link: u64,
    },
    /// An `events_api` envelope, already acknowledged.
    Event {
        body: Vec<u8>,
        retry_attempt: u64,
    },
    Disconnect {
        link: u64,
        reason: Reason,
    },
    /// The connection is gone.
    Ended {
        link: u64,
        why: String,
    },
}

/// A connection's task, and how to have it close the connection.
struct Link {
    id: u64,
    /// Taken when the close is asked.
    close: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Link {
    /// Has its task close the connection (once).
    fn close(&mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
    }
}

/// The connections: the one in use, and those being closed.
struct Links {
    reports: mpsc::UnboundedSender<Report>,
    opened: u64,
    active: Option<Link>,
    closing: Vec<Link>,
}

impl Links {
    /// Takes `ws` into use; the connection used so far, if any, is closed.
    fn start(&mut self, ws: Ws) {
        self.opened += 1;
        let id = self.opened;
        let (close, closed) = oneshot::channel();
        let task = tokio::spawn(pump(id, ws, self.reports.clone(), closed));
        let link = Link {
            id,
            close: Some(close),
            task,
        };
        if let Some(mut old) = self.active.replace(link) {
            tracing::info!(
                old = old.id,
                new = id,
                "new connection to Slack open; closing the old one"
            );
            old.close();
            self.closing.push(old);
        }
    }

    fn is_active(&self, id: u64) -> bool {
        self.active.as_ref().is_some_and(|l| l.id == id)
    }

    /// Forgets the connection `id`, gone; whether it was the one in use.
    fn ended(&mut self, id: u64) -> bool {
        self.closing.retain(|l| l.id != id);
        if self.is_active(id) {
            self.active = None;
            return true;
        }
        false
    }

    /// Closes every connection, and waits until they are closed.
    async fn close_all(&mut self) {
        let mut links: Vec<Link> = self
            .active
            .take()
            .into_iter()
            .chain(self.closing.drain(..))
            .collect();
        // All asked first: they close together.
        links.iter_mut().for_each(Link::close);
        for link in links {
            let _ = link.task.await;
        }
    }
}

impl SocketMode {
    /// The bot's user id, from `auth.test`.
    pub fn bot_user_id(&self) -> &str {
        self.bot.bot_user_id()
    }

    /// Waits `first` (instead of [`FIRST_BACKOFF`]) before the first
    /// attempt to connect again (for tests).
    pub fn with_backoff(mut self, first: Duration) -> SocketMode {
        self.first_backoff = first;
        self
    }

    /// Serves until `shutdown` resolves (then closes its connections and
    /// stops the job runner), or until it cannot go on: the token refused,
    /// Socket Mode switched off.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let jobs = self.bot.start_jobs().await?;
        let (reports_tx, reports) = mpsc::unbounded_channel();
        let mut links = Links {
            reports: reports_tx,
            opened: 0,
            active: None,
            closing: Vec::new(),
        };
        let result = self.serve(&mut links, reports, shutdown).await;
        tracing::info!("shutting down");
        links.close_all().await;
        jobs.stop().await;
        result
    }

    async fn serve(
        &self,
        links: &mut Links,
        mut reports: mpsc::UnboundedReceiver<Report>,
        shutdown: impl Future<Output = ()>,
    ) -> anyhow::Result<()> {
        let ingest = self.bot.ingest();
        let mut backoff = Backoff::new(self.first_backoff, MAX_BACKOFF);
        tokio::pin!(shutdown);
        // The backoff before the next connection, after a failure.
        let mut delay = None;
        // Each wait below ends serve (`Ok`) when `shutdown` comes first.
        loop {
            if links.active.is_none() {
                if let Some(wait) = delay.take() {
                    if unless(&mut shutdown, tokio::time::sleep(wait))
                        .await
                        .is_none()
                    {
                        return Ok(());
                    }
                }
                tracing::info!("connecting to Slack (Socket Mode)");
                let Some(opened) = unless(&mut shutdown, self.opener.open()).await else {
                    return Ok(());
                };
                match opened {
                    Ok(ws) => links.start(ws),
                    Err(error) if error.is_retryable() => {
                        let wait = backoff.next(ingest.ports.random.unit());
                        tracing::info!(
                            %error,
                            wait_ms = wait.as_millis() as u64,
                            "could not connect to Slack; trying again"
                        );
                        delay = Some(wait);
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            let Some(report) = unless(&mut shutdown, reports.recv()).await else {
                return Ok(());
            };
            // `links` holds a sender: the channel stays open.
            let Some(report) = report else {
                return Err(anyhow!("the connections' reports stopped"));
            };
            match report {
                Report::Hello { link } => {
                    if links.is_active(link) {
                        backoff.reset();
                    }
                    tracing::info!(connection = link, "connected to Slack (Socket Mode)");
                }
                Report::Event {
                    body,
                    retry_attempt,
                } => handle(ingest, &body, retry_attempt).await,
                Report::Disconnect { link, reason } => {
                    let reason_text = reason.as_str();
                    match reason.next() {
                        Next::Stop => bail!(
                            "Slack switched Socket Mode off for the app (disconnect: \
                             {reason_text}): turn it on again on the app's Socket Mode page, \
                             or serve over HTTP (without --socket-mode)"
                        ),
                        Next::Replace if links.is_active(link) => {
                            tracing::info!(
                                connection = link,
                                reason = reason_text,
                                "Slack will close the connection; opening a new one first"
                            );
                            let Some(opened) = unless(&mut shutdown, self.opener.open()).await
                            else {
                                return Ok(());
                            };
                            match opened {
                                Ok(ws) => links.start(ws),
                                // The old one serves until it drops; then
                                // the backoff applies.
                                Err(error) if error.is_retryable() => tracing::warn!(
                                    %error,
                                    "could not open a new connection; keeping the old one"
                                ),
                                Err(error) => return Err(error.into()),
                            }
                        }
                        // Already being replaced.
                        Next::Replace => {}
                    }
                }
                Report::Ended { link, why } => {
                    if links.ended(link) {
                        let wait = backoff.next(ingest.ports.random.unit());
                        tracing::info!(
                            connection = link,
                            %why,
                            wait_ms = wait.as_millis() as u64,
                            "the connection to Slack dropped; connecting again"
                        );
                        delay = Some(wait);
                    } else {
                        tracing::debug!(connection = link, %why, "old connection closed");
                    }
                }
            }
        }
    }
}

/// `future`'s output, unless `shutdown` comes first.
async fn unless<T>(
    shutdown: &mut (impl Future<Output = ()> + Unpin),
    future: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        _ = shutdown => None,
        out = future => Some(out),
    }
}

/// Hands an Events API body to ingest, as HTTP would after the signature
/// check (ingest logs and counts it). Acknowledged already: a failure is
/// not retried.
async fn handle(ingest: &Ingest, body: &[u8], retry_attempt: u64) {
    let retry = (retry_attempt > 0).then(|| retry_attempt.to_string());
    let answer = ingest
        .accept(body, retry.as_deref(), ingest.ports.clock.now())
        .await;
    if answer.status >= 400 {
        tracing::warn!(
            status = answer.status,
            "an acknowledged event was not handled"
        );
    }
}

/// A connection's task: reads it, acknowledges each envelope at once, and
/// reports to the loop, until the connection ends or `close` is asked (or
/// dropped).
async fn pump(
    id: u64,
    mut ws: Ws,
    reports: mpsc::UnboundedSender<Report>,
    mut close: oneshot::Receiver<()>,
) {
    let report = |r: Report| {
        // The loop gone: serve is stopping, and closes this connection.
        let _ = reports.send(r);
    };
    let mut pinged = false;
    let why = loop {
        let read = tokio::select! {
            _ = &mut close => {
                close_gracefully(&mut ws).await;
                break "closed by myao".to_owned();
            }
            read = tokio::time::timeout(IDLE, ws.next()) => read,
        };
        let message = match read {
            Err(_) if pinged => break format!("no frame for {} s", 2 * IDLE.as_secs()),
            Err(_) => {
                pinged = true;
                if let Err(error) = ws.send(Message::Ping(Default::default())).await {
                    break format!("ping failed: {error}");
                }
                continue;
            }
            Ok(None) => break "closed".to_owned(),
            Ok(Some(Err(error))) => break error.to_string(),
            Ok(Some(Ok(message))) => message,
        };
        pinged = false;
        let text = match message {
            Message::Text(text) => text,
            Message::Close(frame) => {
                // tungstenite answers it; the next read ends the stream.
                tracing::debug!(connection = id, ?frame, "Slack closes the connection");
                continue;
            }
            // Pings are answered by tungstenite as the stream is read.
            _ => continue,
        };
        match parse_frame(text.as_str()) {
            Ok(Frame::Hello) => report(Report::Hello { link: id }),
            Ok(Frame::Envelope {
                id: envelope_id,
                retry_attempt,
                content,
            }) => {
                // `send` flushes: the acknowledgement leaves now.
                if let Err(error) = ws.send(Message::text(ack(&envelope_id))).await {
                    break format!("could not acknowledge: {error}");
                }
                match content {
                    Content::Event(body) => report(Report::Event {
                        body,
                        retry_attempt,
                    }),
                    Content::Ignored(kind) => {
                        tracing::debug!(%kind, "envelope acknowledged and ignored")
                    }
                }
            }
            Ok(Frame::Disconnect(reason)) => report(Report::Disconnect { link: id, reason }),
            Ok(Frame::Other(kind)) => tracing::debug!(%kind, "message ignored"),
            Err(error) => tracing::warn!(%error, "unreadable message from Slack"),
        }
    };
    report(Report::Ended { link: id, why });
}

/// Sends a close frame, and waits (briefly) for Slack's.
async fn close_gracefully(ws: &mut Ws) {
    if ws.close(None).await.is_err() {
        return;
    }
    let _ = tokio::time::timeout(CLOSE_GRACE, async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_into_what_to_do() {
        assert_eq!(
            parse_frame(r#"{"type":"hello","num_connections":1,"debug_info":{"host":"h"}}"#),
            Ok(Frame::Hello)
        );
        let event = parse_frame(
            r#"{"type":"events_api","envelope_id":"e-1","retry_attempt":2,
                "retry_reason":"timeout","accepts_response_payload":false,
                "payload":{"type":"event_callback","event":{"type":"app_mention"}}}"#,
        )
        .unwrap();
        let Frame::Envelope {
            id,
            retry_attempt,
            content: Content::Event(body),
        } = event
        else {
            panic!("{event:?}")
        };
        assert_eq!((id.as_str(), retry_attempt), ("e-1", 2));
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["event"]["type"], "app_mention");

        for (kind, frame) in [
            (
                "slash_commands",
                r#"{"type":"slash_commands","envelope_id":"e-2","payload":{"command":"/x"}}"#,
            ),
            (
                "interactive",
                r#"{"type":"interactive","envelope_id":"e-2","payload":{}}"#,
            ),
            ("events_api", r#"{"type":"events_api","envelope_id":"e-2"}"#),
        ] {
            assert_eq!(
                parse_frame(frame),
                Ok(Frame::Envelope {
                    id: "e-2".to_owned(),
                    retry_attempt: 0,
                    content: Content::Ignored(kind.to_owned()),
                }),
                "{frame}"
            );
        }
    }

    #[test]
    fn disconnects_and_odd_messages() {
        for (reason, parsed, next) in [
            ("warning", Reason::Warning, Next::Replace),
            ("refresh_requested", Reason::RefreshRequested, Next::Replace),
            ("link_disabled", Reason::LinkDisabled, Next::Stop),
            (
                "new_one",
                Reason::Other("new_one".to_owned()),
                Next::Replace,
            ),
        ] {
            let frame = format!(r#"{{"type":"disconnect","reason":"{reason}"}}"#);
            assert_eq!(parse_frame(&frame), Ok(Frame::Disconnect(parsed.clone())));
            assert_eq!(parsed.next(), next, "{reason}");
            assert_eq!(parsed.as_str(), reason);
        }
        assert_eq!(
            parse_frame(r#"{"type":"later"}"#),
            Ok(Frame::Other("later".to_owned()))
        );
        assert_eq!(parse_frame("[1]"), Err(FrameError::NotJson));
        assert_eq!(
            parse_frame(r#"{"text":"ランチどうしよう"#),
            Err(FrameError::NotJson)
        );
        assert_eq!(
            parse_frame(r#"{"type":"events_api","payload":{}}"#),
            Err(FrameError::NoEnvelopeId)
        );
        let error = parse_frame(r#"{"type":"hello","x":"ランチ"#).unwrap_err();
        assert!(
            !error.to_string().contains("ランチ"),
            "no conversation in errors"
        );
    }

    #[test]
    fn an_ack_names_the_envelope_and_nothing_else() {
        let ack: Value = serde_json::from_str(&ack("a\"b")).unwrap();
        assert_eq!(ack, json!({"envelope_id": "a\"b"}));
    }

    #[test]
    fn the_backoff_doubles_to_its_ceiling_with_jitter_and_resets() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(30));
        let highs: Vec<u64> = (0..7).map(|_| b.next(0.999_999).as_secs()).collect();
        assert_eq!(
            highs,
            [0, 1, 3, 7, 15, 29, 29],
            "just under 1, 2, 4, ... 30"
        );
        b.reset();
        assert_eq!(b.next(0.0), Duration::from_millis(500), "half of the first");
        assert_eq!(b.next(0.5), Duration::from_millis(1500), "3/4 of 2 s");
        for _ in 0..100 {
            b.next(1.0);
        }
        assert_eq!(b.next(1.0), Duration::from_secs(30), "no overflow");
        assert_eq!(b.next(-3.0), Duration::from_secs(15));
        assert_eq!(b.next(f64::NAN), Duration::from_millis(22_500));
    }

    #[test]
    fn the_open_answer_gives_the_url_or_says_why_not() {
        let ok = br#"{"ok":true,"url":"wss://wss-primary.slack.com/link/?ticket=t-1&app_id=A1"}"#;
        let url = read_open_answer(200, ok, false).unwrap();
        assert_eq!(url.host_str(), Some("wss-primary.slack.com"));
        assert!(!url.as_str().contains("debug_reconnects"));
        let url = read_open_answer(200, ok, true).unwrap();
        assert_eq!(
            url.query(),
            Some("ticket=t-1&app_id=A1&debug_reconnects=true")
        );
        let bare = br#"{"ok":true,"url":"ws://127.0.0.1:9/link"}"#;
        assert_eq!(
            read_open_answer(200, bare, true).unwrap().as_str(),
            "ws://127.0.0.1:9/link?debug_reconnects=true"
        );

        for code in ["invalid_auth", "not_allowed_token_type", "missing_scope"] {
            let body = format!(r#"{{"ok":false,"error":"{code}"}}"#);
            let error = read_open_answer(200, body.as_bytes(), false).unwrap_err();
            assert_eq!(error, OpenError::Token { code: code.into() });
            assert!(!error.is_retryable());
            let text = error.to_string();
            for needle in [code, "connections:write", "xapp-", "MYAO_SLACK_APP_TOKEN"] {
                assert!(text.contains(needle), "{needle}: {text}");
            }
        }
        for (status, body) in [
            (200, &br#"{"ok":false,"error":"ratelimited"}"#[..]),
            (200, br#"{"ok":false,"error":"internal_error"}"#),
            (429, b""),
            (503, b"<html>"),
            (200, b"<html>"),
            (200, br#"{"ok":true}"#),
            (200, br#"{"ok":true,"url":"https://slack.com/"}"#),
        ] {
            let error = read_open_answer(status, body, false).unwrap_err();
            assert!(error.is_retryable(), "{status}: {error}");
        }
        for (status, body) in [
            (404, &b"not found"[..]),
            (400, br#"{"ok":false,"error":"invalid_arguments"}"#),
        ] {
            let error = read_open_answer(status, body, false).unwrap_err();
            assert!(!error.is_retryable(), "{status}: {error}");
            assert!(error.to_string().contains(OPEN_METHOD), "{error}");
        }
    }

    #[test]
    fn the_token_is_never_shown() {
        let token = AppToken("xapp-1-secret".to_owned());
        assert!(!format!("{token:?}").contains("secret"));
    }
}
