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
//!   redelivery in a new envelope is handled once. An `interactive`
//!   envelope's payload (a click of the feedback buttons) goes to
//!   [`Ingest::accept_interaction`] the same way. Other envelopes (slash
//!   commands) are acknowledged and ignored.
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
use std::ops::ControlFlow;
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use futures_util::{SinkExt as _, StreamExt as _};
use myao_core::app::ingest::Ingest;
use myao_core::ports::Secrets as _;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

use crate::config::{env_var, LocalConfig, SLACK_APP_TOKEN};
use crate::serve::{self, Bot};

mod frame;
mod open;

pub use frame::{ack, parse_frame, Content, Frame, FrameError, Next, Reason};
pub use open::{read_open_answer, Backoff, OpenError, OPEN_METHOD};
use open::{AppToken, Opener, Ws};

/// The first wait before opening a connection again.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Silence on a connection after which it is pinged; as long again without
/// a frame, and it counts as dropped (Slack pings more often than this).
const IDLE: Duration = Duration::from_secs(30);
/// How long a closing connection may take to answer the close.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

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
        http: myao_http::http_client(),
        endpoint: format!("{base}/{OPEN_METHOD}"),
        token: AppToken(token),
        debug_reconnects,
        tls: myao_tls::client_config(),
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
    /// An `interactive` envelope's payload, already acknowledged.
    Interaction {
        payload: Vec<u8>,
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
        let mut retry = Retry {
            backoff: Backoff::new(self.first_backoff, MAX_BACKOFF),
            delay: None,
        };
        tokio::pin!(shutdown);
        // Each wait below ends serve (`Ok`) when `shutdown` comes first:
        // each step says so with `Break`.
        loop {
            if links.active.is_none() {
                if self
                    .connect(links, &mut retry, &mut shutdown)
                    .await?
                    .is_break()
                {
                    return Ok(());
                }
                if links.active.is_none() {
                    // It failed: again, after the backoff.
                    continue;
                }
            }
            let Some(report) = unless(&mut shutdown, reports.recv()).await else {
                return Ok(());
            };
            // `links` holds a sender: the channel stays open.
            let Some(report) = report else {
                return Err(anyhow!("the connections' reports stopped"));
            };
            let next = self
                .on_report(report, links, &mut retry, &mut shutdown)
                .await?;
            if next.is_break() {
                return Ok(());
            }
        }
    }

    /// Opens a connection, after the backoff if the last one failed; one
    /// that fails and may be tried again sets the next backoff.
    async fn connect(
        &self,
        links: &mut Links,
        retry: &mut Retry,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> anyhow::Result<ControlFlow<()>> {
        if let Some(wait) = retry.delay.take() {
            if unless(shutdown, tokio::time::sleep(wait)).await.is_none() {
                return Ok(ControlFlow::Break(()));
            }
        }
        tracing::info!("connecting to Slack (Socket Mode)");
        let Some(opened) = unless(shutdown, self.opener.open()).await else {
            return Ok(ControlFlow::Break(()));
        };
        match opened {
            Ok(ws) => links.start(ws),
            Err(error) if error.is_retryable() => {
                let wait = retry.backoff.next(self.bot.ingest().ports.random.unit());
                tracing::info!(
                    %error,
                    wait_ms = wait.as_millis() as u64,
                    "could not connect to Slack; trying again"
                );
                retry.delay = Some(wait);
            }
            Err(error) => return Err(error.into()),
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Acts on what a connection's task reported: an event to ingest, a
    /// connection that said hello, is to be replaced, or dropped.
    async fn on_report(
        &self,
        report: Report,
        links: &mut Links,
        retry: &mut Retry,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> anyhow::Result<ControlFlow<()>> {
        match report {
            Report::Hello { link } => {
                if links.is_active(link) {
                    retry.backoff.reset();
                }
                tracing::info!(connection = link, "connected to Slack (Socket Mode)");
            }
            Report::Event {
                body,
                retry_attempt,
            } => handle(self.bot.ingest(), &body, retry_attempt).await,
            Report::Interaction { payload } => interacted(self.bot.ingest(), &payload).await,
            Report::Disconnect { link, reason } => {
                return self.disconnect(link, reason, links, shutdown).await;
            }
            Report::Ended { link, why } => {
                if links.ended(link) {
                    let wait = retry.backoff.next(self.bot.ingest().ports.random.unit());
                    tracing::info!(
                        connection = link,
                        %why,
                        wait_ms = wait.as_millis() as u64,
                        "the connection to Slack dropped; connecting again"
                    );
                    retry.delay = Some(wait);
                } else {
                    tracing::debug!(connection = link, %why, "old connection closed");
                }
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Slack's `disconnect` of the connection `link`: Socket Mode switched
    /// off stops serve; else the connection in use is replaced, the new one
    /// opened first.
    async fn disconnect(
        &self,
        link: u64,
        reason: Reason,
        links: &mut Links,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> anyhow::Result<ControlFlow<()>> {
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
                let Some(opened) = unless(shutdown, self.opener.open()).await else {
                    return Ok(ControlFlow::Break(()));
                };
                match opened {
                    Ok(ws) => links.start(ws),
                    // The old one serves until it drops; then the backoff
                    // applies.
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
        Ok(ControlFlow::Continue(()))
    }
}

/// When to connect again: the backoff, and the wait it set after a
/// connection failed or dropped.
struct Retry {
    backoff: Backoff,
    /// The wait before the next connection.
    delay: Option<Duration>,
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

/// Hands an interaction's payload to ingest, as HTTP would after the
/// signature check. Acknowledged already: a failure is not retried.
async fn interacted(ingest: &Ingest, payload: &[u8]) {
    let answer = ingest
        .accept_interaction(payload, ingest.ports.clock.now())
        .await;
    if answer.status >= 400 {
        tracing::warn!(
            status = answer.status,
            "an acknowledged interaction was not handled"
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
                    Content::Interaction(payload) => report(Report::Interaction { payload }),
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
    use serde_json::{json, Value};

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
                r#"{"type":"interactive","envelope_id":"e-2"}"#,
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
        // An interaction's payload, as the form would have carried it.
        let click = parse_frame(
            r#"{"type":"interactive","envelope_id":"e-3","accepts_response_payload":false,
                "payload":{"type":"block_actions","user":{"id":"U1"}}}"#,
        )
        .unwrap();
        let Frame::Envelope {
            content: Content::Interaction(payload),
            ..
        } = click
        else {
            panic!("{click:?}")
        };
        let payload: Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(payload["type"], "block_actions");
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
        let said = |status, body: &[u8]| read_open_answer(status, body, false).unwrap_err();
        assert_eq!(
            said(400, br#"{"ok":false,"error":"invalid_arguments"}"#).to_string(),
            "apps.connections.open failed: HTTP 400, invalid_arguments"
        );
        assert_eq!(
            said(200, b"<html>").to_string(),
            "apps.connections.open answered HTTP 200 with a body that is not JSON"
        );
        assert_eq!(
            said(200, br#"{"ok":true}"#).to_string(),
            "apps.connections.open answered no WebSocket URL"
        );
    }

    #[test]
    fn the_token_is_never_shown() {
        let token = AppToken("xapp-1-secret".to_owned());
        assert!(!format!("{token:?}").contains("secret"));
    }
}
