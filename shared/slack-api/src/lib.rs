//! Slack Web API.
//!
//! `{slack_api_base_url}/{method}` with the bot token as a bearer header.
//! `chat.postMessage` and `reactions.add` send a JSON body; the reads
//! (`users.info`, `conversations.info`, `auth.test`, `emoji.list`) are GETs
//! with query parameters, as Slack accepts for every method.
//!
//! Failures:
//! - HTTP 429, or `ok: false` with `ratelimited`: Slack did nothing. Wait
//!   `Retry-After` seconds (1 when absent, at most 30) and try again, up to
//!   `slack_max_retries` times; then `Unavailable`.
//! - A connection that could not be made (DNS, TCP, TLS): nothing was sent.
//!   Retried likewise after a short backoff (500 ms, doubling, at most 4 s).
//! - HTTP 5xx, a timeout, a connection lost after the request went out, and
//!   `internal_error` / `fatal_error` / `service_unavailable` (which Slack
//!   documents as "some aspect of the operation may have succeeded"): the
//!   call may have taken effect. The reads are retried like a lost
//!   connection; `chat.postMessage` is *not* (see `attempt::Replay`).
//! - Any other `ok: false`, or another 4xx: `Refused`, with Slack's error
//!   code in the detail (`"chat.postMessage: channel_not_found"`).
//!
//! Under an invocation's [`Deadline`](myao_core::deadline::Deadline), each
//! attempt's timeout is cut to the time left less [`SLACK_BUDGET`]'s margin,
//! no attempt is started without its shortest useful time (the call is then
//! `Unavailable`: nothing was sent), and a wait that leaves no attempt after
//! it is not waited: the call gives up as if out of retries.

mod attempt;
pub mod oauth;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde::Deserialize;
use serde_json::{json, Value};

use myao_core::deadline::CallBudget;
use myao_core::ports::{Metrics, PortError, Reacted, Secrets, SettingsProvider, SlackApi};
use myao_domain::install::Home;
use myao_domain::metrics::{self, Datum, SLACK_AUTH_CODES};
use myao_domain::settings::SLACK_ATTEMPT_TIMEOUT_SECONDS;
use myao_domain::text::UserNames;
use myao_domain::{
    Channel, ChannelId, EmojiName, EnterpriseId, TeamId, Ts, User, UserId, Visibility,
};
use myao_http::{
    endpoint, header_number, is_permanent, millis, transport_detail, truncate, wait_at_most,
    ServiceClient,
};
use myao_slack::interaction::feedback_blocks;

use attempt::{Args, Attempt, Replay};

const SERVICE: &str = "slack";
/// The first backoff after a transport error or a 5xx; each later one doubles it.
const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(4);
/// The wait after a 429 that carries no `Retry-After`.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);
/// The longest wait a `Retry-After` can impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Each attempt's limit, connecting and reading the answer included. Slack
/// answers in well under a second; this only bounds a hung connection. The
/// settings' check of the functions' timeouts counts on it.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(SLACK_ATTEMPT_TIMEOUT_SECONDS as u64);
/// How a Slack call spends the time left before the deadline: it keeps 1 s
/// for what follows (giving a claim back, reporting), and starts no attempt
/// shorter than 500 ms.
pub const SLACK_BUDGET: CallBudget = CallBudget {
    margin: Duration::from_secs(1),
    min_attempt: Duration::from_millis(500),
};
/// Error details quote at most this many characters of an answer.
const DETAIL_CHARS: usize = 200;

/// How long the workspace's emoji names are kept before `emoji.list` is
/// asked again (a custom emoji added since is used after at most this).
const EMOJI_TTL: Duration = Duration::from_secs(3_600);

/// A [`SlackApi`] over Slack's Web API.
pub struct SlackWebApi {
    /// Its secret is the bot token.
    client: ServiceClient,
    timeout: Duration,
    /// The emoji names `emoji.list` gave, and when.
    emoji: std::sync::Mutex<Option<(Instant, Arc<BTreeSet<String>>)>>,
}

impl fmt::Debug for SlackWebApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token's name only, never its value (which is not held anyway).
        f.debug_struct("SlackWebApi")
            .field("token_name", &self.client.secret_name)
            .field("backoff", &self.client.backoff)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SlackWebApi {
    /// An adapter reading its base URL and retry count from `settings` and
    /// the bot token from the secret `token_name`.
    pub fn new(
        http: reqwest::Client,
        settings: Arc<dyn SettingsProvider>,
        secrets: Arc<dyn Secrets>,
        token_name: impl Into<String>,
    ) -> SlackWebApi {
        SlackWebApi {
            client: ServiceClient::new(http, settings, secrets, token_name, DEFAULT_BACKOFF),
            timeout: DEFAULT_TIMEOUT,
            emoji: std::sync::Mutex::new(None),
        }
    }

    /// Counts the calls that failed in `metrics` (and those a revoked token
    /// failed, for the alarm).
    pub fn with_metrics(self, metrics: Arc<dyn Metrics>) -> SlackWebApi {
        SlackWebApi {
            client: self.client.with_metrics(metrics),
            ..self
        }
    }

    /// Logs and counts a call's final failure, and returns it. Slack's
    /// answer that the bot already reacted is no failure worth counting.
    fn give_up(&self, method: &str, attempts: u32, latency_ms: u64, error: PortError) -> PortError {
        if !refused_for(&error, method, "already_reacted") {
            let m = &self.client.metrics;
            m.put(Datum::count(metrics::SLACK_ERRORS).by("Method", method));
            if SLACK_AUTH_CODES
                .iter()
                .any(|code| refused_for(&error, method, code))
            {
                tracing::error!(method, error = %error, "the Slack token was refused");
                m.put(Datum::count(metrics::SLACK_AUTH_ERRORS));
            }
            if let Some((code, fix)) = metrics::SLACK_CHANNEL_CODES
                .iter()
                .find(|(code, _)| refused_for(&error, method, code))
            {
                tracing::error!(method, code, fix, "Slack refused the channel");
                m.put(Datum::count(metrics::SLACK_CHANNEL_REFUSALS));
            }
        }
        tracing::warn!(method, attempts, latency_ms, error = %error, "slack call failed");
        error
    }

    /// Sets the first backoff after a transport error or a 5xx (default
    /// 500 ms). `Retry-After` waits are not affected.
    pub fn with_backoff(self, base: Duration) -> SlackWebApi {
        SlackWebApi {
            client: self.client.with_backoff(base),
            ..self
        }
    }

    /// Sets each attempt's time limit (default 10 s).
    pub fn with_timeout(mut self, timeout: Duration) -> SlackWebApi {
        self.timeout = timeout;
        self
    }

    /// The bot token: a missing or blank one is an error.
    async fn token(&self) -> Result<String, PortError> {
        self.client.secret().await?.ok_or_else(|| {
            PortError::refused(
                SERVICE,
                format!("the secret {} is empty", self.client.secret_name),
            )
        })
    }

    /// The wait before retry number `retry` (0 for the first retry) after a
    /// transport error or a 5xx.
    fn backoff(&self, retry: u32) -> Duration {
        self.client.backoff(retry, MAX_BACKOFF)
    }

    /// Calls `method` and returns its answer, whose `ok` is true.
    async fn call(
        &self,
        method: &'static str,
        args: Args<'_>,
        replay: Replay,
    ) -> Result<Value, PortError> {
        let settings = self.client.settings.current().await?;
        let url = endpoint(&settings.slack_api_base_url, method);
        let mut url = Url::parse(&url)
            .map_err(|e| PortError::refused(SERVICE, format!("{method}: bad URL: {e}")))?;
        if let Args::Query(pairs) = &args {
            if !pairs.is_empty() {
                url.query_pairs_mut().extend_pairs(pairs.iter());
            }
        }
        let token = self.token().await?;

        let started = Instant::now();
        let mut attempts = 0u32;
        let mut last_detail = None;
        loop {
            let elapsed_ms = || millis(started.elapsed());
            let Some(timeout) = SLACK_BUDGET.attempt_timeout(self.timeout) else {
                // Nothing was sent by this attempt: a redelivery may do it.
                let detail = last_detail.unwrap_or_else(|| format!("{method}: not sent"));
                let error = unavailable(format!("{detail} (no time left before the deadline)"));
                return Err(self.give_up(method, attempts, elapsed_ms(), error));
            };
            attempts += 1;
            let outcome = self.attempt(method, &url, &args, &token, timeout).await;
            let retries_left = replay != Replay::Once && attempts <= settings.slack_max_retries;
            let latency_ms = elapsed_ms();
            let (wait, detail) = match outcome {
                Attempt::Done(value) => {
                    tracing::debug!(method, attempts, latency_ms, "slack call done");
                    return Ok(value);
                }
                Attempt::RateLimited(wait) if retries_left => {
                    (wait, format!("{method}: rate limited"))
                }
                Attempt::Unsent(detail) if retries_left => (self.backoff(attempts - 1), detail),
                Attempt::MaybeDone(detail) if retries_left && replay == Replay::Safe => {
                    (self.backoff(attempts - 1), detail)
                }
                Attempt::RateLimited(wait) => {
                    self.client
                        .metrics
                        .put(Datum::count(metrics::SLACK_RATE_LIMITED).by("Method", method));
                    let detail = format!(
                        "{method}: rate limited (asked to wait {} s)",
                        wait.as_secs()
                    );
                    return Err(self.give_up(method, attempts, latency_ms, unavailable(detail)));
                }
                Attempt::MaybeDone(detail) if replay == Replay::OnlyIfUnsent => {
                    let detail = format!("{detail} (Slack may have acted on it: not retried)");
                    let error = PortError::uncertain(SERVICE, detail);
                    return Err(self.give_up(method, attempts, latency_ms, error));
                }
                Attempt::Unsent(detail) | Attempt::MaybeDone(detail) => {
                    return Err(self.give_up(method, attempts, latency_ms, unavailable(detail)));
                }
                Attempt::Refused(detail) => {
                    let error = PortError::refused(SERVICE, detail);
                    return Err(self.give_up(method, attempts, latency_ms, error));
                }
            };
            if !SLACK_BUDGET.can_wait(wait) {
                // Only what surely did not act, or a read, gets here.
                let detail = format!("{detail} (no time left before the deadline for a retry)");
                return Err(self.give_up(method, attempts, latency_ms, unavailable(detail)));
            }
            tracing::warn!(
                method,
                attempts,
                wait_ms = millis(wait),
                error = %detail,
                "slack call failed; retrying"
            );
            last_detail = Some(detail);
            tokio::time::sleep(wait).await;
        }
    }

    /// One HTTP exchange.
    async fn attempt(
        &self,
        method: &str,
        url: &Url,
        args: &Args<'_>,
        token: &str,
        timeout: Duration,
    ) -> Attempt {
        let request = match args {
            Args::Query(_) => self.client.http.get(url.clone()),
            Args::Json(body) => self
                .client
                .http
                .post(url.clone())
                // With the charset Slack answers without a `missing_charset` warning.
                .header(CONTENT_TYPE, "application/json; charset=utf-8")
                .body(body.to_string()),
        };
        let response = match request.bearer_auth(token).timeout(timeout).send().await {
            Ok(response) => response,
            Err(e) => return transport_failure(method, e, timeout),
        };
        let status = response.status();
        if status == StatusCode::TOO_MANY_REQUESTS {
            return Attempt::RateLimited(retry_after(response.headers()));
        }
        let wait = retry_after(response.headers());
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => return transport_failure(method, e, timeout),
        };
        if status.is_server_error() {
            return Attempt::MaybeDone(format!("{method}: HTTP {}", status.as_u16()));
        }
        let value: Option<Value> = serde_json::from_str(&text).ok();
        let code: Option<String> = value
            .as_ref()
            .and_then(|v| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if !status.is_success() {
            let code = code.map(|c| format!(" {c}")).unwrap_or_default();
            return Attempt::Refused(format!("{method}: HTTP {}{code}", status.as_u16()));
        }
        let Some(value) = value else {
            // It may echo a message: its length in the error, the text at DEBUG.
            tracing::debug!(method, body = %truncate(text.trim(), DETAIL_CHARS), "malformed Slack response");
            return Attempt::Refused(format!(
                "{method}: malformed response, {} bytes",
                text.len()
            ));
        };
        if value.get("ok").and_then(Value::as_bool) == Some(true) {
            if let Some(warning) = value.get("warning").and_then(Value::as_str) {
                tracing::debug!(method, warning, "slack warning");
            }
            return Attempt::Done(value);
        }
        match code.as_deref().unwrap_or("unknown_error") {
            "ratelimited" => Attempt::RateLimited(wait),
            code @ ("internal_error" | "fatal_error" | "service_unavailable") => {
                Attempt::MaybeDone(format!("{method}: {code}"))
            }
            code => Attempt::Refused(format!("{method}: {}", truncate(code, DETAIL_CHARS))),
        }
    }
}

/// The most loading messages Slack takes with a status.
const MAX_LOADING: usize = 10;
/// Where Slack serves the files shared in a workspace (`url_private`).
const FILES_HOST: &str = "files.slack.com";

/// The metadata event type of a post that carries a marker
/// ([`SlackApi::post_marked`]).
const MARKER_EVENT: &str = "myao_reply";

impl SlackWebApi {
    /// `chat.postMessage`, with `marker` in the message's metadata when
    /// given, and `blocks` as its layout (`text` is then the notification's).
    async fn post(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: Option<&str>,
        blocks: Option<Value>,
    ) -> Result<Ts, PortError> {
        const METHOD: &str = "chat.postMessage";
        // No unfurling: a link a model wrote (an image whose address
        // carries words of the conversation) is not fetched by Slack.
        let mut body = json!({
            "channel": channel.as_str(),
            "text": text,
            "unfurl_links": false,
            "unfurl_media": false,
        });
        if let Some(ts) = thread_ts {
            body["thread_ts"] = json!(ts.to_string());
        }
        if let Some(key) = marker {
            body["metadata"] = json!({"event_type": MARKER_EVENT, "event_payload": {"key": key}});
        }
        if let Some(blocks) = blocks {
            body["blocks"] = blocks;
        }
        let answer = self
            .call(METHOD, Args::Json(body), Replay::OnlyIfUnsent)
            .await?;
        // Posted, but without a usable ts: refused rather than unavailable,
        // so that nobody posts it again.
        answer
            .get("ts")
            .and_then(Value::as_str)
            .and_then(|ts| Ts::parse(ts).ok())
            .ok_or_else(|| PortError::refused(SERVICE, format!("{METHOD}: no valid ts in answer")))
    }
}

#[async_trait]
impl SlackApi for SlackWebApi {
    fn for_team(self: Arc<Self>, team: &TeamId, tokens: Arc<dyn Secrets>) -> Arc<dyn SlackApi> {
        // Its own emoji names too: each workspace has its own custom emoji.
        Arc::new(SlackWebApi {
            client: self.client.with_secret(tokens, team.as_str()),
            timeout: self.timeout,
            emoji: std::sync::Mutex::new(None),
        })
    }

    async fn post_message(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
    ) -> Result<Ts, PortError> {
        self.post(channel, thread_ts, text, None, None).await
    }

    async fn post_marked(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: &str,
    ) -> Result<Ts, PortError> {
        self.post(channel, thread_ts, text, Some(marker), None)
            .await
    }

    async fn post_with_feedback(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: &str,
    ) -> Result<Ts, PortError> {
        let blocks = feedback_blocks(text);
        self.post(channel, thread_ts, text, Some(marker), Some(blocks))
            .await
    }

    async fn find_marked(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        since: Ts,
        marker: &str,
    ) -> Result<Option<Ts>, PortError> {
        // A thread's replies, or the channel's top level, from `since` on,
        // with the messages' metadata (which only the app that posted it
        // and its scopes read).
        let oldest = since.to_string();
        let thread = thread_ts.map(|t| t.to_string());
        let mut args = vec![
            ("channel", channel.as_str()),
            ("oldest", oldest.as_str()),
            ("inclusive", "true"),
            ("include_all_metadata", "true"),
            ("limit", "200"),
        ];
        let method = match &thread {
            Some(root) => {
                args.push(("ts", root.as_str()));
                "conversations.replies"
            }
            None => "conversations.history",
        };
        let answer = self.call(method, Args::Query(&args), Replay::Safe).await?;
        Ok(answer
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| {
                let meta = &m["metadata"];
                meta["event_type"] == MARKER_EVENT && meta["event_payload"]["key"] == marker
            })
            .filter_map(|m| m["ts"].as_str().and_then(|ts| Ts::parse(ts).ok()))
            .find(|ts| *ts >= since))
    }

    async fn user_info(&self, user: &UserId) -> Result<User, PortError> {
        const METHOD: &str = "users.info";
        let answer = self
            .call(
                METHOD,
                Args::Query(&[("user", user.as_str())]),
                Replay::Safe,
            )
            .await?;
        let info: SlackUser = answer
            .get("user")
            .cloned()
            .and_then(|u| serde_json::from_value(u).ok())
            .ok_or_else(|| PortError::refused(SERVICE, format!("{METHOD}: no user in answer")))?;
        Ok(User {
            id: user.clone(),
            name: info.display_name().unwrap_or(user.as_str()).to_owned(),
            is_bot: info.is_bot,
        })
    }

    async fn channel_info(&self, channel: &ChannelId) -> Result<Channel, PortError> {
        const METHOD: &str = "conversations.info";
        let answer = self
            .call(
                METHOD,
                Args::Query(&[("channel", channel.as_str())]),
                Replay::Safe,
            )
            .await?;
        let info = answer.get("channel").ok_or_else(|| {
            PortError::refused(SERVICE, format!("{METHOD}: no channel in answer"))
        })?;
        // A direct message has no name: its id stands in.
        let name = info
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(channel.as_str());
        let flag = |f: &str| info.get(f).and_then(Value::as_bool);
        let set = |f: &str| flag(f).unwrap_or(false);
        let direct = set("is_im") || set("is_mpim");
        // Public only when Slack says so: an answer without `is_private`
        // (nor `is_channel`) leaves the channel unknown, private in effect.
        let said = direct || flag("is_private").is_some() || flag("is_channel").is_some();
        let visibility = Visibility::from_flags(
            set("is_private") || flag("is_channel") == Some(false),
            set("is_im"),
            set("is_mpim"),
            set("is_ext_shared"),
            set("is_pending_ext_shared"),
        );
        Ok(Channel {
            id: channel.clone(),
            name: name.to_owned(),
            visibility: if said {
                visibility
            } else {
                Visibility::UNKNOWN
            },
        })
    }

    async fn add_reaction(
        &self,
        channel: &ChannelId,
        ts: Ts,
        emoji: &EmojiName,
    ) -> Result<Reacted, PortError> {
        const METHOD: &str = "reactions.add";
        let body = json!({
            "channel": channel.as_str(),
            "timestamp": ts.to_string(),
            "name": emoji.as_str(),
        });
        // Safe to send again: a second time answers `already_reacted`.
        match self.call(METHOD, Args::Json(body), Replay::Safe).await {
            Ok(_) => Ok(Reacted::Added),
            Err(error) if refused_for(&error, METHOD, "already_reacted") => {
                Ok(Reacted::AlreadyThere)
            }
            Err(error) if refused_for(&error, METHOD, "invalid_name") => Ok(Reacted::UnknownEmoji),
            Err(error) => Err(error),
        }
    }

    async fn set_status(
        &self,
        channel: &ChannelId,
        thread_ts: Ts,
        status: &str,
        loading: &[String],
    ) -> Result<(), PortError> {
        const METHOD: &str = "assistant.threads.setStatus";
        let mut body = json!({
            "channel_id": channel.as_str(),
            "thread_ts": thread_ts.to_string(),
            "status": status,
        });
        if !loading.is_empty() {
            body["loading_messages"] = json!(loading.iter().take(MAX_LOADING).collect::<Vec<_>>());
        }
        self.call(METHOD, Args::Json(body), Replay::Once)
            .await
            .map(|_| ())
    }

    async fn download(&self, url: &str, max_bytes: u64) -> Result<Vec<u8>, PortError> {
        const METHOD: &str = "file download";
        let refused = |detail: String| PortError::refused(SERVICE, format!("{METHOD}: {detail}"));
        let settings = self.client.settings.current().await?;
        let url = Url::parse(url).map_err(|e| refused(format!("bad URL: {e}")))?;
        // The token goes to Slack's file host alone (or the API's own host,
        // a stand-in's), whatever URL an event names.
        let api = Url::parse(&settings.slack_api_base_url).ok();
        let slack_files = url.scheme() == "https" && url.host_str() == Some(FILES_HOST);
        if !slack_files && api.is_none_or(|api| api.origin() != url.origin()) {
            return Err(refused(format!(
                "{} is not Slack's file host",
                url.origin().ascii_serialization()
            )));
        }
        let token = self.token().await?;
        let Some(timeout) = SLACK_BUDGET.attempt_timeout(self.timeout) else {
            return Err(unavailable(format!(
                "{METHOD}: no time left before the deadline"
            )));
        };
        // One attempt: a file that cannot be read now is named as such.
        let failed = |e: reqwest::Error| match transport_failure(METHOD, e, timeout) {
            Attempt::Refused(detail) => PortError::refused(SERVICE, detail),
            Attempt::Unsent(detail) | Attempt::MaybeDone(detail) => unavailable(detail),
            Attempt::RateLimited(_) | Attempt::Done(_) => unavailable(METHOD.to_owned()),
        };
        let mut response = self
            .client
            .http
            .get(url)
            .bearer_auth(token)
            .timeout(timeout)
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        if !status.is_success() {
            return Err(refused(format!("HTTP {}", status.as_u16())));
        }
        // Without `files:read` Slack answers with its sign-in page.
        let html = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/html"));
        if html {
            return Err(refused(
                "a web page, not the file (is files:read granted?)".to_owned(),
            ));
        }
        if response.content_length().is_some_and(|n| n > max_bytes) {
            return Err(refused(format!("larger than {max_bytes} bytes")));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if (bytes.len() + chunk.len()) as u64 > max_bytes {
                return Err(refused(format!("larger than {max_bytes} bytes")));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    async fn emoji_names(&self) -> Result<Arc<BTreeSet<String>>, PortError> {
        const METHOD: &str = "emoji.list";
        let cached = lock(&self.emoji)
            .as_ref()
            .filter(|(at, _)| at.elapsed() < EMOJI_TTL)
            .map(|(_, names)| names.clone());
        if let Some(names) = cached {
            return Ok(names);
        }
        let answer = self
            .call(
                METHOD,
                Args::Query(&[("include_categories", "true")]),
                Replay::Safe,
            )
            .await?;
        let custom = answer
            .get("emoji")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys().cloned());
        let standard = answer
            .get("categories")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("emoji_names").and_then(Value::as_array))
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_owned));
        let names: Arc<BTreeSet<String>> = Arc::new(custom.chain(standard).collect());
        *lock(&self.emoji) = Some((Instant::now(), names.clone()));
        Ok(names)
    }

    async fn auth_test(&self) -> Result<UserId, PortError> {
        const METHOD: &str = "auth.test";
        let answer = self.call(METHOD, Args::Query(&[]), Replay::Safe).await?;
        answer
            .get("user_id")
            .and_then(Value::as_str)
            .and_then(|id| UserId::parse(id).ok())
            .ok_or_else(|| {
                PortError::refused(SERVICE, format!("{METHOD}: no valid user_id in answer"))
            })
    }

    async fn own_workspace(&self) -> Result<Home, PortError> {
        const METHOD: &str = "auth.test";
        let answer = self.call(METHOD, Args::Query(&[]), Replay::Safe).await?;
        let field = |name: &str| answer.get(name).and_then(Value::as_str);
        let invalid =
            |name: &str| PortError::refused(SERVICE, format!("{METHOD}: no valid {name}"));
        let team = field("team_id").and_then(|t| TeamId::parse(t).ok());
        let bot = field("user_id").and_then(|u| UserId::parse(u).ok());
        // An org-wide install's token answers for the organization.
        let enterprise = match field("enterprise_id").filter(|e| !e.is_empty()) {
            Some(e) => Some(EnterpriseId::parse(e).map_err(|_| invalid("enterprise_id"))?),
            None => None,
        };
        Ok(Home {
            team: team.ok_or_else(|| invalid("team_id"))?,
            enterprise,
            bot_user_id: bot.ok_or_else(|| invalid("user_id"))?,
        })
    }
}

/// The parts of a `users.info` user that myao uses.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SlackUser {
    name: Option<String>,
    real_name: Option<String>,
    is_bot: bool,
    profile: SlackProfile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SlackProfile {
    display_name: Option<String>,
    real_name: Option<String>,
}

impl SlackUser {
    /// The name people see ([`UserNames::shown`]).
    fn display_name(&self) -> Option<&str> {
        UserNames {
            display_name: self.profile.display_name.as_deref(),
            profile_real_name: self.profile.real_name.as_deref(),
            real_name: self.real_name.as_deref(),
            handle: self.name.as_deref(),
        }
        .shown()
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `error` is Slack's refusal of `method` with the error `code`.
fn refused_for(error: &PortError, method: &str, code: &str) -> bool {
    matches!(error, PortError::Refused { .. })
        && error
            .detail()
            .strip_prefix(method)
            .and_then(|rest| rest.strip_prefix(": "))
            == Some(code)
}

fn unavailable(detail: String) -> PortError {
    PortError::unavailable(SERVICE, detail)
}

/// A failure before a status arrived, or while reading the body.
fn transport_failure(method: &str, error: reqwest::Error, timeout: Duration) -> Attempt {
    if is_permanent(&error) {
        return Attempt::Refused(format!(
            "{method}: {}",
            transport_detail(error, DETAIL_CHARS)
        ));
    }
    if error.is_connect() {
        // DNS, TCP or TLS failed: no byte of the request reached Slack.
        return Attempt::Unsent(format!(
            "{method}: {}",
            transport_detail(error, DETAIL_CHARS)
        ));
    }
    if error.is_timeout() {
        return Attempt::MaybeDone(format!(
            "{method}: timed out after {} ms",
            timeout.as_millis()
        ));
    }
    Attempt::MaybeDone(format!(
        "{method}: {}",
        transport_detail(error, DETAIL_CHARS)
    ))
}

/// The wait a rate-limited answer asks for.
fn retry_after(headers: &HeaderMap) -> Duration {
    header_number(headers, RETRY_AFTER)
        .map(|secs| wait_at_most(secs, MAX_RETRY_AFTER))
        .unwrap_or(DEFAULT_RETRY_AFTER)
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::sync::Mutex;

    use wiremock::matchers::{body_json, header, method, path, query_param};
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

    use super::*;
    use myao_core::adapters::system::{FixedSettings, StaticSecrets};
    use myao_core::deadline::Deadline;
    use myao_domain::Settings;
    use myao_testkit::http::first_then;
    use myao_testkit::ids::ts;

    const TOKEN: &str = "test-bot-token";

    fn slack_at(base_url: String, max_retries: u32) -> SlackWebApi {
        let settings = Settings {
            slack_api_base_url: base_url,
            slack_max_retries: max_retries,
            ..Settings::default()
        };
        SlackWebApi::new(
            myao_http::http_client(),
            Arc::new(FixedSettings::new(settings)),
            Arc::new(StaticSecrets::new().with("slack_bot_token", TOKEN)),
            "slack_bot_token",
        )
        .with_backoff(Duration::from_millis(1))
    }

    fn slack(server: &MockServer) -> SlackWebApi {
        slack_at(format!("{}/api", server.uri()), 3)
    }

    fn channel() -> ChannelId {
        myao_testkit::ids::channel("C0123ABC")
    }

    fn posted() -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(json!({
            "ok": true,
            "channel": "C0123ABC",
            "ts": "1712345679.000100",
            "message": {"text": "hello"}
        }))
    }

    async fn request_count(server: &MockServer) -> usize {
        server.received_requests().await.map_or(0, |r| r.len())
    }

    fn unavailable_detail<T: fmt::Debug>(result: Result<T, PortError>) -> String {
        match result {
            Err(PortError::Unavailable { detail, .. } | PortError::Uncertain { detail, .. }) => {
                detail
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
    }

    /// Answers with `responses` in turn (the last one from then on) and
    /// records when each request arrived.
    struct Sequence {
        responses: Vec<ResponseTemplate>,
        arrivals: Arc<Mutex<Vec<Instant>>>,
    }

    impl Respond for Sequence {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            let mut arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
            arrivals.push(Instant::now());
            let i = (arrivals.len() - 1).min(self.responses.len() - 1);
            self.responses[i].clone()
        }
    }

    #[tokio::test]
    async fn a_file_is_downloaded_with_the_token_from_slack_alone_and_within_its_bound() {
        let server = MockServer::start().await;
        let serve = |at: &'static str, answer: ResponseTemplate| {
            Mock::given(method("GET"))
                .and(path(at))
                .respond_with(answer)
        };
        serve(
            "/files-pri/T1-F1/a.png",
            ResponseTemplate::new(200).set_body_bytes(b"bytes".to_vec()),
        )
        .mount(&server)
        .await;
        serve(
            "/files-pri/T1-F2/login.png",
            ResponseTemplate::new(200).set_body_raw("<html>sign in</html>", "text/html"),
        )
        .mount(&server)
        .await;
        serve(
            "/files-pri/T1-F3/big.png",
            ResponseTemplate::new(200).set_body_bytes(vec![7; 2_000]),
        )
        .mount(&server)
        .await;
        let slack = slack(&server);
        let at = |p: &str| format!("{}{p}", server.uri());

        let bytes = slack.download(&at("/files-pri/T1-F1/a.png"), 100).await;
        assert_eq!(bytes.expect("downloaded"), b"bytes");
        let sent = server.received_requests().await.unwrap_or_default();
        assert_eq!(
            sent[0]
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer test-bot-token")
        );
        let login = slack.download(&at("/files-pri/T1-F2/login.png"), 100).await;
        assert!(format!("{login:?}").contains("files:read"), "{login:?}");
        let big = slack.download(&at("/files-pri/T1-F3/big.png"), 1_000).await;
        assert!(
            format!("{big:?}").contains("larger than 1000 bytes"),
            "{big:?}"
        );

        // Another host never sees the token: refused before anything is sent.
        let elsewhere = MockServer::start().await;
        let refused = slack
            .download(&format!("{}/files-pri/T1-F1/a.png", elsewhere.uri()), 100)
            .await;
        assert!(
            format!("{refused:?}").contains("not Slack's file host"),
            "{refused:?}"
        );
        assert_eq!(request_count(&elsewhere).await, 0);
        let plain = slack
            .download("http://files.slack.com/files-pri/x", 100)
            .await;
        assert!(
            format!("{plain:?}").contains("not Slack's file host"),
            "{plain:?}"
        );
    }

    #[tokio::test]
    async fn a_thread_reply_sends_thread_ts_and_returns_the_new_ts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/chat.postMessage"))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .and(header("content-type", "application/json; charset=utf-8"))
            .and(body_json(json!({
                "channel": "C0123ABC",
                "text": "hello",
                "thread_ts": "1712345678.123456",
                "unfurl_links": false,
                "unfurl_media": false,
            })))
            .respond_with(posted())
            .expect(1)
            .mount(&server)
            .await;

        let new_ts = slack(&server)
            .post_message(&channel(), Some(ts("1712345678.123456")), "hello")
            .await
            .expect("posted");

        assert_eq!(new_ts, ts("1712345679.000100"));
    }

    #[tokio::test]
    async fn a_post_with_feedback_carries_the_text_in_blocks_and_the_buttons() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/chat.postMessage"))
            .respond_with(posted())
            .expect(1)
            .mount(&server)
            .await;
        let new_ts = slack(&server)
            .post_with_feedback(&channel(), None, "hello &amp; bye", "key-1")
            .await
            .expect("posted");
        assert_eq!(new_ts, ts("1712345679.000100"));
        let sent: Value =
            serde_json::from_slice(&server.received_requests().await.unwrap()[0].body)
                .expect("a JSON body");
        // The text is still the notification's, and the marker is there.
        assert_eq!(sent["text"], "hello &amp; bye");
        assert_eq!(sent["metadata"]["event_payload"]["key"], "key-1");
        assert_eq!(sent["blocks"], feedback_blocks("hello &amp; bye"));
        assert_eq!(sent["blocks"][0]["text"]["text"], "hello &amp; bye");
        assert_eq!(sent["blocks"][1]["elements"][0]["type"], "feedback_buttons");
    }

    fn refusal(code: &str) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": code}))
    }

    #[tokio::test]
    async fn a_reaction_is_added_and_a_repeat_or_an_unknown_name_is_told_apart() {
        let server = MockServer::start().await;
        let sequence = Sequence {
            responses: vec![
                ResponseTemplate::new(200).set_body_json(json!({"ok": true})),
                refusal("already_reacted"),
                refusal("invalid_name"),
                refusal("message_not_found"),
            ],
            arrivals: Arc::new(Mutex::new(Vec::new())),
        };
        Mock::given(method("POST"))
            .and(path("/api/reactions.add"))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .and(body_json(json!({
                "channel": "C0123ABC", "timestamp": "1712345678.123456", "name": "tada"
            })))
            .respond_with(sequence)
            .expect(4)
            .mount(&server)
            .await;
        let api = slack(&server);
        let tada = EmojiName::parse("tada").expect("emoji");
        let on = channel();
        let react = || api.add_reaction(&on, ts("1712345678.123456"), &tada);

        assert_eq!(react().await, Ok(Reacted::Added));
        assert_eq!(react().await, Ok(Reacted::AlreadyThere));
        assert_eq!(react().await, Ok(Reacted::UnknownEmoji));
        assert_eq!(
            react().await,
            Err(PortError::refused(
                SERVICE,
                "reactions.add: message_not_found"
            ))
        );
    }

    #[tokio::test]
    async fn emoji_names_are_the_custom_and_the_standard_ones_asked_once() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/emoji.list"))
            .and(query_param("include_categories", "true"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "emoji": {"party-parrot": "https://emoji.example/pp.gif", "yay": "alias:tada"},
                "categories": [
                    {"name": "smileys_and_people", "emoji_names": ["grinning", "wave"]},
                    {"name": "activity", "emoji_names": ["tada"]}
                ]
            })))
            .expect(1)
            .mount(&server)
            .await;
        let api = slack(&server);

        let names = api.emoji_names().await.expect("names");
        let again = api.emoji_names().await.expect("cached");

        let expected: BTreeSet<String> = ["grinning", "party-parrot", "tada", "wave", "yay"]
            .map(str::to_owned)
            .into();
        assert_eq!(*names, expected);
        assert_eq!(again, names);
    }

    #[tokio::test]
    async fn a_top_level_post_omits_thread_ts() {
        let server = MockServer::start().await;
        // body_json matches exactly: a thread_ts would not match; links
        // and media are never unfurled.
        Mock::given(method("POST"))
            .and(path("/api/chat.postMessage"))
            .and(body_json(json!({
                "channel": "C0123ABC",
                "text": "hello",
                "unfurl_links": false,
                "unfurl_media": false,
            })))
            .respond_with(posted())
            .expect(1)
            .mount(&server)
            .await;

        let new_ts = slack(&server)
            .post_message(&channel(), None, "hello")
            .await
            .expect("posted");

        assert_eq!(new_ts, ts("1712345679.000100"));
    }

    #[tokio::test]
    async fn a_marked_post_is_found_by_its_marker_in_its_thread_only() {
        let server = MockServer::start().await;
        let marked = |key: &str, at: &str| json!({"ts": at, "metadata": {"event_type": "myao_reply", "event_payload": {"key": key}}});
        Mock::given(method("GET"))
            .and(path("/api/conversations.replies"))
            .and(query_param("channel", "C0123ABC"))
            .and(query_param("ts", "1712345678.000100"))
            .and(query_param("oldest", "1712345600.000000"))
            .and(query_param("include_all_metadata", "true"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "messages": [
                    {"ts": "1712345678.000100", "text": "the root"},
                    marked("another-job", "1712345680.000100"),
                    marked("the-job", "1712345690.000100"),
                ]
            })))
            .expect(2)
            .mount(&server)
            .await;
        let api = slack(&server);
        let thread = Some(ts("1712345678.000100"));
        let since = ts("1712345600.000000");

        let found = api.find_marked(&channel(), thread, since, "the-job").await;
        let missing = api.find_marked(&channel(), thread, since, "no-job").await;

        assert_eq!(found, Ok(Some(ts("1712345690.000100"))));
        assert_eq!(missing, Ok(None));
    }

    #[tokio::test]
    async fn ok_false_is_refused_with_the_error_code() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/chat.postMessage"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": false, "error": "channel_not_found"})),
            )
            .expect(1)
            .mount(&server)
            .await;

        let result = slack(&server).post_message(&channel(), None, "hi").await;

        assert_eq!(
            result,
            Err(PortError::refused(
                SERVICE,
                "chat.postMessage: channel_not_found"
            ))
        );
    }

    #[tokio::test]
    async fn a_429_with_retry_after_is_posted_once_after_the_wait() {
        let server = MockServer::start().await;
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        Mock::given(method("POST"))
            .and(path("/api/chat.postMessage"))
            .respond_with(Sequence {
                responses: vec![
                    ResponseTemplate::new(429)
                        .insert_header("retry-after", "1")
                        .set_body_json(json!({"ok": false, "error": "ratelimited"})),
                    posted(),
                ],
                arrivals: arrivals.clone(),
            })
            .expect(2)
            .mount(&server)
            .await;

        let new_ts = slack(&server)
            .post_message(&channel(), None, "hello")
            .await
            .expect("posted");

        assert_eq!(new_ts, ts("1712345679.000100"));
        let arrivals = arrivals.lock().expect("arrivals").clone();
        assert_eq!(arrivals.len(), 2);
        let gap = arrivals[1] - arrivals[0];
        assert!(gap >= Duration::from_secs(1), "second post after {gap:?}");
    }

    #[tokio::test]
    async fn ratelimited_in_the_body_is_treated_like_a_429() {
        let server = MockServer::start().await;
        let ratelimited = ResponseTemplate::new(200)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"ok": false, "error": "ratelimited"}));
        first_then(&server, "POST", ratelimited, posted()).await;

        let result = slack(&server).post_message(&channel(), None, "hi").await;

        assert!(result.is_ok(), "{result:?}");
        assert_eq!(request_count(&server).await, 2);
    }

    #[tokio::test]
    async fn rate_limited_beyond_the_retries_is_unavailable() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
            .mount(&server)
            .await;

        let result = slack_at(format!("{}/api", server.uri()), 2)
            .post_message(&channel(), None, "hi")
            .await;

        let detail = unavailable_detail(result);
        assert!(detail.contains("rate limited"), "{detail}");
        assert_eq!(request_count(&server).await, 3);
    }

    #[tokio::test]
    async fn a_post_answered_with_a_5xx_is_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(503))
            .mount(&server)
            .await;

        let result = slack(&server).post_message(&channel(), None, "hi").await;

        assert!(
            matches!(result, Err(PortError::Uncertain { .. })),
            "{result:?}"
        );
        let detail = unavailable_detail(result);
        assert!(detail.contains("HTTP 503"), "{detail}");
        assert!(detail.contains("not retried"), "{detail}");
        assert_eq!(request_count(&server).await, 1);
    }

    #[tokio::test]
    async fn a_post_answered_with_internal_error_is_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": false, "error": "internal_error"})),
            )
            .mount(&server)
            .await;

        let result = slack(&server).post_message(&channel(), None, "hi").await;

        let detail = unavailable_detail(result);
        assert!(detail.contains("internal_error"), "{detail}");
        assert_eq!(request_count(&server).await, 1);
    }

    #[tokio::test]
    async fn a_post_that_times_out_is_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(posted().set_delay(Duration::from_secs(2)))
            .mount(&server)
            .await;

        let result = slack(&server)
            .with_timeout(Duration::from_millis(200))
            .post_message(&channel(), None, "hi")
            .await;

        let detail = unavailable_detail(result);
        assert!(detail.contains("timed out"), "{detail}");
        assert_eq!(request_count(&server).await, 1);
    }

    #[tokio::test]
    async fn a_post_whose_connection_is_refused_is_unavailable() {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };

        let result = slack_at(format!("http://127.0.0.1:{port}/api"), 2)
            .post_message(&channel(), None, "hi")
            .await;

        let detail = unavailable_detail(result);
        assert!(!detail.contains(TOKEN), "{detail}");
        assert!(!detail.contains("not retried"), "{detail}");
    }

    #[tokio::test]
    async fn a_hanging_read_is_cut_before_the_deadline_and_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/auth.test"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": true, "user_id": "UBOT"}))
                    .set_delay(Duration::from_secs(30)),
            )
            .mount(&server)
            .await;

        // 4 s left: one attempt cut at 3 s, then no time for another.
        let deadline = Deadline::after(Duration::from_secs(4));
        let slack = slack(&server);
        let result = Deadline::scope(Some(deadline), slack.auth_test()).await;

        let detail = unavailable_detail(result);
        assert!(detail.contains("timed out"), "{detail}");
        assert!(detail.contains("deadline"), "{detail}");
        assert_eq!(request_count(&server).await, 1);
        let left = deadline.remaining();
        assert!(
            left >= Duration::from_millis(500),
            "returned {left:?} before the deadline"
        );
    }

    #[tokio::test]
    async fn a_rate_limit_wait_past_the_deadline_is_not_waited_for() {
        let server = MockServer::start().await;
        let ratelimited = ResponseTemplate::new(429).insert_header("retry-after", "30");
        first_then(&server, "POST", ratelimited, posted()).await;

        let started = Instant::now();
        let (slack, channel) = (slack(&server), channel());
        let deadline = Deadline::after(Duration::from_secs(5));
        let result =
            Deadline::scope(Some(deadline), slack.post_message(&channel, None, "hi")).await;

        // Not posted, and surely not: worth a redelivery.
        assert!(matches!(&result, Err(e) if e.is_retryable()), "{result:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(request_count(&server).await, 1);
    }

    #[tokio::test]
    async fn no_post_is_sent_without_time_for_it() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(posted())
            .mount(&server)
            .await;

        let (slack, channel) = (slack(&server), channel());
        let deadline = Deadline::after(Duration::from_millis(1200));
        let result =
            Deadline::scope(Some(deadline), slack.post_message(&channel, None, "hi")).await;

        let detail = unavailable_detail(result);
        assert!(detail.contains("deadline"), "{detail}");
        assert_eq!(request_count(&server).await, 0);
    }

    #[tokio::test]
    async fn a_read_answered_with_a_5xx_is_retried() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/users.info"))
            .respond_with(ResponseTemplate::new(500))
            .up_to_n_times(2)
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/api/users.info"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "user": {"id": "U1", "name": "ann", "profile": {}}
            })))
            .mount(&server)
            .await;

        let user = slack(&server)
            .user_info(&UserId::parse("U1").expect("id"))
            .await
            .expect("user");

        assert_eq!(user.name, "ann");
        assert_eq!(request_count(&server).await, 3);
    }

    #[tokio::test]
    async fn users_info_names_fall_back_in_order() {
        let cases = [
            (
                json!({"name": "ann", "real_name": "Ann Lee", "is_bot": false,
                       "profile": {"display_name": "annie", "real_name": "Ann P. Lee"}}),
                "annie",
                false,
            ),
            (
                json!({"name": "ann", "real_name": "Ann Lee",
                       "profile": {"display_name": " ", "real_name": "Ann P. Lee"}}),
                "Ann P. Lee",
                false,
            ),
            (
                json!({"name": "ann", "real_name": "Ann Lee",
                       "profile": {"display_name": "", "real_name": ""}}),
                "Ann Lee",
                false,
            ),
            (
                json!({"name": "helper", "is_bot": true, "profile": {}}),
                "helper",
                true,
            ),
            (json!({"id": "U1"}), "U1", false),
        ];
        for (user, expected, is_bot) in cases {
            let server = MockServer::start().await;
            Mock::given(method("GET"))
                .and(path("/api/users.info"))
                .and(query_param("user", "U1"))
                .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
                .respond_with(
                    ResponseTemplate::new(200).set_body_json(json!({"ok": true, "user": user})),
                )
                .expect(1)
                .mount(&server)
                .await;

            let got = slack(&server)
                .user_info(&UserId::parse("U1").expect("id"))
                .await
                .expect("user");

            assert_eq!(
                got,
                User {
                    id: UserId::parse("U1").expect("id"),
                    name: expected.to_owned(),
                    is_bot,
                },
                "{user}"
            );
        }
    }

    #[tokio::test]
    async fn conversations_info_gives_the_channel_name() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/conversations.info"))
            .and(query_param("channel", "C0123ABC"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "channel": {"id": "C0123ABC", "name": "general", "is_channel": true}
            })))
            .expect(1)
            .mount(&server)
            .await;

        let got = slack(&server)
            .channel_info(&channel())
            .await
            .expect("channel");

        assert_eq!(
            got,
            Channel {
                id: channel(),
                name: "general".to_owned(),
                visibility: Visibility::PUBLIC,
            }
        );
    }

    #[tokio::test]
    async fn conversations_info_tells_who_can_read_the_channel() {
        let cases = [
            (json!({"is_private": true}), Visibility::PRIVATE),
            (
                json!({"is_mpim": true, "is_private": true}),
                Visibility::DIRECT,
            ),
            (
                json!({"is_ext_shared": true}),
                Visibility::PUBLIC.shared_externally(),
            ),
            (
                json!({"is_private": true, "is_pending_ext_shared": true}),
                Visibility::PRIVATE.shared_externally(),
            ),
            // Shared within one Enterprise organisation only.
            (json!({"is_shared": true}), Visibility::PUBLIC),
            // Slack did not say: private in effect.
            (json!({"is_private": null}), Visibility::UNKNOWN),
        ];
        for (flags, want) in cases {
            let server = MockServer::start().await;
            let mut info = json!({"id": "C0123ABC", "name": "x", "is_private": false});
            for (k, v) in flags.as_object().expect("flags") {
                info[k] = v.clone();
            }
            Mock::given(method("GET"))
                .and(path("/api/conversations.info"))
                .respond_with(
                    ResponseTemplate::new(200).set_body_json(json!({"ok": true, "channel": info})),
                )
                .mount(&server)
                .await;
            let got = slack(&server)
                .channel_info(&channel())
                .await
                .expect("channel");
            assert_eq!(got.visibility, want, "{flags}");
        }
    }

    #[tokio::test]
    async fn a_direct_message_channel_is_named_by_its_id() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/conversations.info"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "channel": {"id": "D0123", "is_im": true, "user": "U1"}
            })))
            .mount(&server)
            .await;

        let id = ChannelId::parse("D0123").expect("id");
        let got = slack(&server).channel_info(&id).await.expect("channel");

        assert_eq!(got.name, "D0123");
    }

    #[tokio::test]
    async fn auth_test_gives_the_bot_user_id() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/auth.test"))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true,
                "url": "https://example.slack.com/",
                "user_id": "UBOT123",
                "bot_id": "B123"
            })))
            .expect(1)
            .mount(&server)
            .await;

        let id = slack(&server).auth_test().await.expect("user id");

        assert_eq!(id, UserId::parse("UBOT123").expect("id"));
    }

    #[tokio::test]
    async fn auth_test_gives_the_tokens_own_workspace() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/auth.test"))
            .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true, "url": "https://example.slack.com/", "team": "Home",
                "team_id": "T0HOME", "user_id": "UBOT123", "bot_id": "B123",
                "enterprise_id": "E0GRID", "is_enterprise_install": false
            })))
            .expect(1)
            .mount(&server)
            .await;

        let home = slack(&server).own_workspace().await.expect("home");

        assert_eq!(
            home,
            Home {
                team: TeamId::parse("T0HOME").expect("id"),
                enterprise: Some(EnterpriseId::parse("E0GRID").expect("id")),
                bot_user_id: UserId::parse("UBOT123").expect("id"),
            }
        );
    }

    #[tokio::test]
    async fn an_auth_test_without_a_team_is_refused() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/api/auth.test"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"ok": true, "user_id": "U1"})),
            )
            .mount(&server)
            .await;

        let result = slack(&server).own_workspace().await;

        assert_eq!(
            result,
            Err(PortError::refused(SERVICE, "auth.test: no valid team_id"))
        );
    }

    #[tokio::test]
    async fn an_invalid_token_is_refused_without_retry() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": false, "error": "invalid_auth"})),
            )
            .expect(1)
            .mount(&server)
            .await;

        let result = slack(&server).auth_test().await;

        assert_eq!(
            result,
            Err(PortError::refused(SERVICE, "auth.test: invalid_auth"))
        );
    }

    #[test]
    fn retry_after_defaults_to_one_second_and_is_capped() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), Duration::from_secs(1));
        headers.insert(RETRY_AFTER, "3".parse().expect("value"));
        assert_eq!(retry_after(&headers), Duration::from_secs(3));
        headers.insert(RETRY_AFTER, "3600".parse().expect("value"));
        assert_eq!(retry_after(&headers), Duration::from_secs(30));
        headers.insert(RETRY_AFTER, "soon".parse().expect("value"));
        assert_eq!(retry_after(&headers), Duration::from_secs(1));
    }
}
