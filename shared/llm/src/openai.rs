//! OpenAI-compatible chat completions.
//!
//! One adapter for every endpoint that speaks `POST {base}/chat/completions`:
//! OpenAI itself, Azure behind a LiteLLM proxy, Gemini's OpenAI-compatible
//! endpoint, Ollama, vLLM. Only the subset they all accept is sent: `model`,
//! one system message, `temperature`, `max_tokens` and, for JSON answers,
//! `response_format: {"type": "json_object"}`.
//!
//! The API key is read from [`Secrets`] on every call (the secrets adapter
//! caches), so a rotated key is picked up without a restart. A local endpoint
//! such as Ollama needs no key: when the secret is missing (the secrets port
//! refuses) or empty, or when `key_name` is empty, the request goes without
//! an `Authorization` header. Should the endpoint then answer 401 or 403, the
//! error says that no key was sent. A secrets store that is *unavailable*
//! (throttled, down) is an error, not "no key": calling without a key would
//! turn a retryable failure into a refusal.
//!
//! Retries: up to `llm_max_retries` after the first attempt, on 408, 429,
//! 5xx, timeouts and transport errors, waiting `base x 2^n` (base 500 ms) or
//! what `Retry-After` (`retry-after-ms` first, as OpenAI and Azure send it)
//! asks for on a 429, never more than 20 s. Every attempt has its own
//! `llm_timeout_seconds`. Any other status is a refusal, returned at once.
//!
//! Under an invocation's [`Deadline`](myao_core::deadline::Deadline), each
//! attempt's timeout is cut to the time left less [`LLM_BUDGET`]'s margin,
//! an attempt that would get less than its shortest useful time is not
//! started, and a retry whose wait leaves no such attempt after it is not
//! made: the call returns its last failure (`Unavailable`) in time for the
//! job to give its claim back. That loop, its logs and its metrics are the
//! ones every LLM adapter shares ([`crate`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::call::LLM_BUDGET;
use crate::call::{self as llm, Attempt, Call, DEFAULT_BACKOFF, DEFAULT_MAX_WAIT, SERVICE};
use crate::roles::model_settings;
use myao_core::ports::{Llm, LlmReply, LlmRequest, Metrics, PortError, Secrets, SettingsProvider};
use myao_domain::settings::LlmProvider;
use myao_http::{
    endpoint, header_number, is_permanent, transport_detail, truncate, wait_at_most, ServiceClient,
};

/// Error details quote at most this many characters of an answer.
const DETAIL_CHARS: usize = 300;

/// An [`Llm`] over any OpenAI-compatible chat-completions endpoint.
pub struct OpenAiLlm {
    /// Its secret is the API key.
    client: ServiceClient,
    max_wait: Duration,
}

impl fmt::Debug for OpenAiLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key's name only, never its value (which is not held anyway).
        f.debug_struct("OpenAiLlm")
            .field("key_name", &self.client.secret_name)
            .field("backoff", &self.client.backoff)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}

impl OpenAiLlm {
    /// An adapter reading its endpoint and models from `settings` and its API
    /// key from the secret `key_name` (empty: never send a key).
    pub fn new(
        http: reqwest::Client,
        settings: Arc<dyn SettingsProvider>,
        secrets: Arc<dyn Secrets>,
        key_name: impl Into<String>,
    ) -> OpenAiLlm {
        OpenAiLlm {
            client: ServiceClient::new(http, settings, secrets, key_name, DEFAULT_BACKOFF),
            max_wait: DEFAULT_MAX_WAIT,
        }
    }

    /// Counts its calls, tokens and latency per role in `metrics`.
    pub fn with_metrics(self, metrics: Arc<dyn Metrics>) -> OpenAiLlm {
        OpenAiLlm {
            client: self.client.with_metrics(metrics),
            ..self
        }
    }

    /// Sets the first retry's wait (default 500 ms); tests make it tiny.
    pub fn with_backoff(self, base: Duration) -> OpenAiLlm {
        OpenAiLlm {
            client: self.client.with_backoff(base),
            ..self
        }
    }

    /// Sets the longest wait between attempts (default 20 s), `Retry-After`
    /// included.
    pub fn with_max_wait(mut self, max_wait: Duration) -> OpenAiLlm {
        self.max_wait = max_wait;
        self
    }

    /// Waits before retry number `retry` (0 for the first retry).
    fn wait(&self, retry: u32, retry_after: Option<f64>) -> Duration {
        match retry_after {
            Some(secs) => wait_at_most(secs, self.max_wait),
            None => self.client.backoff(retry, self.max_wait),
        }
    }

    /// One HTTP exchange.
    async fn attempt(
        &self,
        url: &str,
        body: &ChatRequest<'_>,
        key: &ApiKey,
        timeout: Duration,
    ) -> Attempt {
        let mut request = self.client.http.post(url).timeout(timeout).json(body);
        if let ApiKey::Bearer(key) = key {
            request = request.bearer_auth(key);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return transport_failure(e, timeout),
        };
        let status = response.status();
        let retry_after = retry_after_secs(response.headers());
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => return transport_failure(e, timeout),
        };
        if status.is_success() {
            return parse_reply(&text);
        }
        // Redacted before it is cut: a key cut in half would escape the match.
        let mut message = truncate(&redact(&api_error_message(&text), key), DETAIL_CHARS);
        if let (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, ApiKey::None(why)) = (status, key)
        {
            message.push_str(&format!(" (no API key was sent: {why})"));
        }
        let detail = format!("HTTP {}: {message}", status.as_u16());
        if status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT
            || status.is_server_error()
        {
            let retry_after = retry_after.filter(|_| status == StatusCode::TOO_MANY_REQUESTS);
            Attempt::Retry(PortError::unavailable(SERVICE, detail), retry_after)
        } else {
            Attempt::Fail(PortError::refused(SERVICE, detail))
        }
    }
}

#[async_trait]
impl Llm for OpenAiLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let settings = self.client.settings.current().await?;
        let model = model_settings(&settings, request.role);
        let url = endpoint(&settings.llm_base_url, "chat/completions");
        let body = ChatRequest {
            model: &model.model,
            messages: messages(request),
            temperature: model.temperature,
            max_tokens: request
                .max_tokens
                .map_or(model.max_tokens, |cap| cap.min(model.max_tokens)),
            response_format: request.json.then_some(ResponseFormat {
                kind: "json_object",
            }),
            prompt_cache_key: cache_key(&settings, request.role),
        };
        let key = api_key(&self.client).await?;
        let call = Call {
            request,
            provider: LlmProvider::OpenAi,
            model: &model.model,
            settings: &settings,
            metrics: self.client.metrics.as_ref(),
        };
        llm::call(
            call,
            |retry, retry_after| self.wait(retry, retry_after),
            |timeout| self.attempt(&url, &body, &key, timeout),
        )
        .await
    }
}

/// The key to send, if any (see the module documentation).
pub(crate) async fn api_key(client: &ServiceClient) -> Result<ApiKey, PortError> {
    if client.secret_name.is_empty() {
        return Ok(ApiKey::None("no key name is configured"));
    }
    match client.secret().await {
        Ok(Some(key)) => Ok(ApiKey::Bearer(key)),
        Ok(None) => Ok(ApiKey::None("the key is empty")),
        Err(PortError::Refused { detail, .. }) => {
            tracing::debug!(
                key_name = %client.secret_name,
                reason = %detail,
                "no LLM API key: calling without Authorization"
            );
            Ok(ApiKey::None("the key's secret is missing"))
        }
        Err(e) => Err(e),
    }
}

/// The key sent with a call, or why none is.
pub(crate) enum ApiKey {
    Bearer(String),
    None(&'static str),
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    temperature: f64,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<String>,
}

/// The `prompt_cache_key` of `role`'s calls, where it is sent (OpenAI's
/// API, or `prompt_cache_key` on): the role's, so that the prompts that
/// begin alike (a role's persona, instructions and the workspace's
/// memories) are routed to one cache. (A key is the API account's own: no
/// workspace id needs to go with it.)
fn cache_key(settings: &myao_domain::Settings, role: myao_core::ports::LlmRole) -> Option<String> {
    let openai = settings.llm_base_url.starts_with("https://api.openai.com");
    (settings.prompt_cache_key || openai).then(|| format!("myao-{}", role.as_str()))
}

#[derive(Serialize)]
struct ChatMessage<'a> {
    role: &'static str,
    content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Parts(Vec<Part>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part {
    Text { text: &'static str },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

/// What the user turn that carries a request's images says.
const IMAGES_TURN: &str = "The images shared in the conversation, numbered as the lines \
                           \"[file: ..., image n attached]\" name them.";

/// The messages of `request`: its system prompt, as the design has it, and
/// when it carries images a user turn with them as data URLs (a system
/// message takes no image).
fn messages(request: &LlmRequest) -> Vec<ChatMessage<'_>> {
    use base64::Engine as _;
    let mut messages = vec![ChatMessage {
        role: "system",
        content: Content::Text(&request.system),
    }];
    if !request.images.is_empty() {
        let mut parts = vec![Part::Text { text: IMAGES_TURN }];
        parts.extend(request.images.iter().map(|image| Part::ImageUrl {
            image_url: ImageUrl {
                url: format!(
                    "data:{};base64,{}",
                    image.format.media_type(),
                    base64::engine::general_purpose::STANDARD.encode(&image.bytes)
                ),
            },
        }));
        messages.push(ChatMessage {
            role: "user",
            content: Content::Parts(parts),
        });
    }
    messages
}

#[derive(Serialize)]
struct ResponseFormat {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Option<Vec<Choice>>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<ChoiceMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    /// OpenAI's account of the prompt cache.
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
}

fn parse_reply(body: &str) -> Attempt {
    let response: ChatResponse = match serde_json::from_str(body) {
        Ok(response) => response,
        Err(e) => {
            // The body may be the model's words: its length in the error
            // (logged at WARN), the text at DEBUG only.
            tracing::debug!(body = %truncate(body.trim(), DETAIL_CHARS), "malformed LLM response");
            return Attempt::Fail(PortError::refused(
                SERVICE,
                format!("malformed response ({e}), {} bytes", body.len()),
            ));
        }
    };
    let choice = response.choices.and_then(|c| c.into_iter().next());
    let finish_reason = choice.as_ref().and_then(|c| c.finish_reason.clone());
    let Some(text) = choice.and_then(|c| c.message).and_then(|m| m.content) else {
        // A content filter or a tool call leaves no text; say which in the log.
        tracing::warn!(finish_reason = ?finish_reason, "llm answer has no content");
        return Attempt::Fail(PortError::refused(SERVICE, "no content"));
    };
    if finish_reason.as_deref() == Some("length") {
        // The answer was cut at max_tokens: raise the role's max_tokens
        // setting if this repeats.
        tracing::warn!("llm answer cut at max_tokens");
    }
    let usage = response.usage;
    Attempt::Done(LlmReply {
        text,
        prompt_tokens: usage.as_ref().and_then(|u| u.prompt_tokens).unwrap_or(0),
        cached_tokens: usage
            .as_ref()
            .and_then(|u| u.prompt_tokens_details.as_ref())
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0),
        completion_tokens: usage
            .as_ref()
            .and_then(|u| u.completion_tokens)
            .unwrap_or(0),
    })
}

/// A failure before a status arrived, or while reading the body.
fn transport_failure(error: reqwest::Error, timeout: Duration) -> Attempt {
    if is_permanent(&error) {
        return Attempt::Fail(PortError::refused(
            SERVICE,
            transport_detail(error, DETAIL_CHARS),
        ));
    }
    let detail = if error.is_timeout() {
        format!("timed out after {:.1} s", timeout.as_secs_f64())
    } else {
        transport_detail(error, DETAIL_CHARS)
    };
    Attempt::Retry(PortError::unavailable(SERVICE, detail), None)
}

/// The seconds to wait that a 429 asks for, if it says.
fn retry_after_secs(headers: &HeaderMap) -> Option<f64> {
    // An HTTP-date Retry-After is not parsed: the exponential backoff applies.
    header_number(headers, "retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| header_number(headers, RETRY_AFTER))
}

/// The message of an error answer: OpenAI's `{"error": {"message"}}`, the
/// shapes of the compatible servers (`{"error": "..."}`, `{"message"}`,
/// `{"detail"}`, Gemini's one-element array), else the raw body.
pub(crate) fn api_error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        let v = v.as_array().and_then(|a| a.first()).unwrap_or(v);
        ["/error/message", "/error", "/message", "/detail"]
            .iter()
            .find_map(|p| v.pointer(p).and_then(Value::as_str))
    });
    let message = message.unwrap_or(body).trim();
    if message.is_empty() {
        "(empty body)".to_owned()
    } else {
        message.to_owned()
    }
}

/// Removes the key from a text meant for an error or a log, should an
/// endpoint ever echo it.
pub(crate) fn redact(text: &str, key: &ApiKey) -> String {
    match key {
        ApiKey::Bearer(key) if key.len() >= 4 => text.replace(key.as_str(), "[redacted]"),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::time::Instant;

    use serde_json::json;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use myao_core::adapters::system::{FixedSettings, StaticSecrets};
    use myao_core::deadline::Deadline;
    use myao_core::ports::LlmRole;
    use myao_domain::Settings;
    use myao_testkit::http::{first_then, requests};

    const KEY: &str = "fake-llm-key-for-tests";

    fn settings(base_url: String) -> Settings {
        Settings {
            llm_base_url: base_url,
            llm_max_retries: 2,
            llm_timeout_seconds: 5,
            ..Settings::default()
        }
    }

    fn llm_with(settings: Settings, secrets: StaticSecrets) -> OpenAiLlm {
        OpenAiLlm::new(
            myao_http::http_client(),
            Arc::new(FixedSettings::new(settings)),
            Arc::new(secrets),
            "llm_api_key",
        )
        .with_backoff(Duration::from_millis(1))
    }

    fn llm(server: &MockServer) -> OpenAiLlm {
        llm_with(
            settings(format!("{}/v1", server.uri())),
            StaticSecrets::new().with("llm_api_key", KEY),
        )
    }

    fn request(role: LlmRole, json: bool) -> LlmRequest {
        LlmRequest {
            role,
            system: "You are myao. Say hello.".to_owned(),
            json,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        }
    }

    fn completion(content: Value) -> Value {
        json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}
        })
    }

    fn ok(content: &str) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(completion(json!(content)))
    }

    fn refused_detail(result: Result<LlmReply, PortError>) -> String {
        match result {
            Err(PortError::Refused { detail, .. }) => detail,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn sends_the_role_settings_one_system_message_and_the_bearer_key() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ok("{\"hello\": true}"))
            .expect(1)
            .mount(&server)
            .await;

        let reply = llm(&server)
            .complete(&request(LlmRole::Judgment, true))
            .await
            .expect("reply");

        assert_eq!(
            reply,
            LlmReply {
                text: "{\"hello\": true}".to_owned(),
                prompt_tokens: 42,
                completion_tokens: 7,
                cached_tokens: 0,
            }
        );
        let sent = requests(&server).await;
        let auth = sent[0].headers.get("authorization").expect("authorization");
        assert_eq!(auth.to_str().ok(), Some(format!("Bearer {KEY}").as_str()));
        let body: Value = sent[0].body_json().expect("json body");
        let judgment = Settings::default().judgment();
        assert_eq!(
            body,
            json!({
                "model": judgment.model,
                "messages": [{"role": "system", "content": "You are myao. Say hello."}],
                "temperature": judgment.temperature,
                "max_tokens": judgment.max_tokens,
                "response_format": {"type": "json_object"}
            })
        );
    }

    #[tokio::test]
    async fn a_cache_key_goes_where_it_is_asked_for_and_cached_tokens_are_read() {
        let server = MockServer::start().await;
        let mut answer = completion(json!("hi"));
        answer["usage"]["prompt_tokens_details"] = json!({"cached_tokens": 1_024});
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer))
            .mount(&server)
            .await;
        let mut with_key = settings(format!("{}/v1", server.uri()));
        with_key.prompt_cache_key = true;
        with_key.slack_team_id = Some("T0ACME".to_owned());
        let secrets = StaticSecrets::new().with("llm_api_key", KEY);
        let reply = llm_with(with_key, secrets)
            .complete(&request(LlmRole::Response, false))
            .await
            .expect("reply");
        assert_eq!(reply.cached_tokens, 1_024);
        llm(&server)
            .complete(&request(LlmRole::Response, false))
            .await
            .expect("reply");
        let sent = requests(&server).await;
        let key =
            |i: usize| sent[i].body_json::<Value>().expect("json")["prompt_cache_key"].clone();
        assert_eq!(key(0), json!("myao-response"));
        // Off, to a server that is not OpenAI's: no field it might refuse.
        assert_eq!(key(1), Value::Null);
        // OpenAI's own API always gets it.
        let openai = settings("https://api.openai.com/v1".to_owned());
        assert_eq!(
            cache_key(&openai, LlmRole::Judgment).as_deref(),
            Some("myao-judgment")
        );
    }

    #[tokio::test]
    async fn a_text_request_uses_its_role_model_and_omits_response_format() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ok("hi"))
            .mount(&server)
            .await;

        let reply = llm(&server)
            .complete(&request(LlmRole::Response, false))
            .await
            .expect("reply");

        assert_eq!(reply.text, "hi");
        let body: Value = requests(&server).await[0].body_json().expect("json");
        let response = Settings::default().response();
        assert_eq!(body["model"], json!(response.model));
        assert_eq!(body["temperature"], json!(response.temperature));
        assert_eq!(body["max_tokens"], json!(response.max_tokens));

        // A request's own lower cap (a short answer) wins over the role's.
        let short = LlmRequest {
            max_tokens: Some(40),
            ..request(LlmRole::Response, false)
        };
        llm(&server).complete(&short).await.expect("reply");
        let body: Value = requests(&server).await[1].body_json().expect("json");
        assert_eq!(body["max_tokens"], json!(40));
        assert!(body.get("response_format").is_none(), "{body}");
    }

    #[tokio::test]
    async fn missing_usage_counts_zero_tokens() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": "hi"}}]
            })))
            .mount(&server)
            .await;

        let reply = llm(&server)
            .complete(&request(LlmRole::Memory, false))
            .await
            .expect("reply");

        assert_eq!((reply.prompt_tokens, reply.completion_tokens), (0, 0));
    }

    #[tokio::test]
    async fn a_missing_or_empty_key_sends_no_authorization_header() {
        for secrets in [
            StaticSecrets::new(),
            StaticSecrets::new().with("llm_api_key", "  "),
        ] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ok("hi"))
                .mount(&server)
                .await;

            let llm = llm_with(settings(format!("{}/v1", server.uri())), secrets);
            let reply = llm.complete(&request(LlmRole::Response, false)).await;

            assert_eq!(reply.expect("reply").text, "hi");
            assert!(requests(&server).await[0]
                .headers
                .get("authorization")
                .is_none());
        }
    }

    #[tokio::test]
    async fn a_401_without_a_key_says_no_key_was_sent() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401).set_body_json(
                json!({"error": {"message": "You didn't provide an API key.", "type": "invalid_request_error"}}),
            ))
            .mount(&server)
            .await;

        let llm = llm_with(
            settings(format!("{}/v1", server.uri())),
            StaticSecrets::new(),
        );
        let detail = refused_detail(llm.complete(&request(LlmRole::Response, false)).await);

        assert!(detail.contains("HTTP 401"), "{detail}");
        assert!(detail.contains("no API key was sent"), "{detail}");
    }

    #[tokio::test]
    async fn a_500_then_a_200_succeeds_on_the_retry() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
            .up_to_n_times(1)
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ok("hi"))
            .expect(1)
            .mount(&server)
            .await;

        let reply = llm(&server)
            .complete(&request(LlmRole::Response, false))
            .await;

        assert_eq!(reply.expect("reply").text, "hi");
        assert_eq!(requests(&server).await.len(), 2);
    }

    #[tokio::test]
    async fn too_many_429s_give_unavailable_after_max_retries() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).set_body_json(
                json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
            ))
            .mount(&server)
            .await;

        let result = llm(&server)
            .complete(&request(LlmRole::Judgment, true))
            .await;

        match result {
            Err(PortError::Unavailable { detail, .. }) => {
                assert!(detail.contains("429"), "{detail}");
                assert!(detail.contains("Rate limit reached"), "{detail}");
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
        // The first attempt and llm_max_retries = 2 retries.
        assert_eq!(requests(&server).await.len(), 3);
    }

    #[tokio::test]
    async fn a_429_waits_as_long_as_retry_after_says() {
        let server = MockServer::start().await;
        let ratelimited = ResponseTemplate::new(429).insert_header("retry-after", "1");
        first_then(&server, "POST", ratelimited, ok("hi")).await;

        // The backoff is 1 ms: only Retry-After can make the call take 1 s.
        let started = Instant::now();
        let reply = llm(&server)
            .complete(&request(LlmRole::Response, false))
            .await;

        assert_eq!(reply.expect("reply").text, "hi");
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert_eq!(requests(&server).await.len(), 2);
    }

    #[tokio::test]
    async fn a_400_is_refused_at_once_with_the_api_message_and_never_the_key() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(400).set_body_json(json!({
                "error": {
                    "message": format!("Invalid model for key {KEY}"),
                    "type": "invalid_request_error"
                }
            })))
            .expect(1)
            .mount(&server)
            .await;

        let detail = refused_detail(
            llm(&server)
                .complete(&request(LlmRole::Response, false))
                .await,
        );

        assert!(detail.starts_with("HTTP 400: Invalid model"), "{detail}");
        assert!(!detail.contains(KEY), "{detail}");
        assert_eq!(requests(&server).await.len(), 1);
    }

    #[tokio::test]
    async fn a_long_error_body_is_truncated() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(404).set_body_string("x".repeat(5000)))
            .mount(&server)
            .await;

        let detail = refused_detail(
            llm(&server)
                .complete(&request(LlmRole::Response, false))
                .await,
        );

        assert!(detail.chars().count() < 400, "{}", detail.len());
    }

    #[tokio::test]
    async fn a_response_slower_than_the_timeout_is_unavailable_after_retries() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("late").set_delay(Duration::from_secs(10)))
            .mount(&server)
            .await;

        let llm = llm_with(
            Settings {
                llm_timeout_seconds: 1,
                llm_max_retries: 1,
                ..settings(format!("{}/v1", server.uri()))
            },
            StaticSecrets::new().with("llm_api_key", KEY),
        );
        let started = Instant::now();
        let result = llm.complete(&request(LlmRole::Response, false)).await;

        match result {
            Err(PortError::Unavailable { detail, .. }) => {
                assert!(detail.contains("timed out"), "{detail}")
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
        assert_eq!(requests(&server).await.len(), 2);
        // Two attempts cut at one second each, not answered after ten.
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_memory_call_waits_for_its_own_longer_timeout() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("a long digest").set_delay(Duration::from_millis(1_500)))
            .mount(&server)
            .await;
        let llm = llm_with(
            Settings {
                llm_timeout_seconds: 1,
                memory_timeout_seconds: 5,
                llm_max_retries: 0,
                ..settings(format!("{}/v1", server.uri()))
            },
            StaticSecrets::new().with("llm_api_key", KEY),
        );
        // A reply is cut at llm_timeout_seconds; a memory is not.
        let reply = llm.complete(&request(LlmRole::Response, false)).await;
        assert!(
            matches!(reply, Err(PortError::Unavailable { .. })),
            "{reply:?}"
        );
        let memory = llm.complete(&request(LlmRole::Memory, false)).await;
        assert_eq!(memory.expect("answered").text, "a long digest");
    }

    #[tokio::test]
    async fn a_hanging_endpoint_is_cut_before_the_deadline_and_not_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("late").set_delay(Duration::from_secs(30)))
            .mount(&server)
            .await;
        let llm = llm_with(
            Settings {
                llm_timeout_seconds: 20,
                ..settings(format!("{}/v1", server.uri()))
            },
            StaticSecrets::new().with("llm_api_key", KEY),
        );

        // 5 s left: one attempt cut at 3 s, then no time for another.
        let deadline = Deadline::after(Duration::from_secs(5));
        let ask = request(LlmRole::Response, false);
        let result = Deadline::scope(Some(deadline), llm.complete(&ask)).await;

        match result {
            Err(PortError::Unavailable { detail, .. }) => {
                assert!(detail.contains("timed out"), "{detail}")
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
        assert_eq!(requests(&server).await.len(), 1);
        let left = deadline.remaining();
        assert!(
            left >= Duration::from_millis(1500),
            "returned {left:?} before the deadline"
        );
    }

    #[tokio::test]
    async fn no_attempt_is_started_without_time_for_it() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("hi"))
            .mount(&server)
            .await;

        let (llm, ask) = (llm(&server), request(LlmRole::Response, false));
        let deadline = Deadline::after(Duration::from_secs(1));
        let result = Deadline::scope(Some(deadline), llm.complete(&ask)).await;

        match result {
            Err(error @ PortError::Unavailable { .. }) => {
                assert!(error.to_string().contains("deadline"), "{error}")
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
        assert!(requests(&server).await.is_empty());
    }

    #[tokio::test]
    async fn a_retry_after_past_the_deadline_is_not_waited_for() {
        let server = MockServer::start().await;
        let ratelimited = ResponseTemplate::new(429).insert_header("retry-after", "10");
        first_then(&server, "POST", ratelimited, ok("hi")).await;

        let started = Instant::now();
        let (llm, ask) = (llm(&server), request(LlmRole::Response, false));
        let deadline = Deadline::after(Duration::from_secs(8));
        let result = Deadline::scope(Some(deadline), llm.complete(&ask)).await;

        match result {
            Err(PortError::Unavailable { detail, .. }) => {
                assert!(detail.contains("429"), "{detail}")
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(requests(&server).await.len(), 1);
    }

    #[tokio::test]
    async fn a_garbage_body_is_refused_without_retry() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_string("<html>oops</html>"))
            .expect(1)
            .mount(&server)
            .await;

        let detail = refused_detail(
            llm(&server)
                .complete(&request(LlmRole::Response, false))
                .await,
        );

        assert!(detail.contains("malformed response"), "{detail}");
        assert!(detail.contains("17 bytes"), "{detail}");
        assert!(!detail.contains("oops"), "no body text in errors: {detail}");
    }

    #[tokio::test]
    async fn null_or_missing_content_is_refused_as_no_content() {
        for body in [
            completion(Value::Null),
            json!({"choices": []}),
            json!({"object": "chat.completion"}),
        ] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(200).set_body_json(body))
                .expect(1)
                .mount(&server)
                .await;

            let result = llm(&server)
                .complete(&request(LlmRole::Response, false))
                .await;

            assert_eq!(result, Err(PortError::refused(SERVICE, "no content")));
        }
    }

    #[tokio::test]
    async fn a_refused_connection_is_unavailable() {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let llm = llm_with(
            settings(format!("http://127.0.0.1:{port}/v1")),
            StaticSecrets::new().with("llm_api_key", KEY),
        );

        let result = llm.complete(&request(LlmRole::Response, false)).await;

        match result {
            Err(PortError::Unavailable { detail, .. }) => assert!(!detail.contains(KEY)),
            other => panic!("expected unavailable, got {other:?}"),
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let llm = OpenAiLlm::new(
            myao_http::http_client(),
            Arc::new(FixedSettings::new(Settings::default())),
            Arc::new(StaticSecrets::new()),
            "k",
        );
        let ms = |d: Duration| d.as_millis();
        assert_eq!(ms(llm.wait(0, None)), 500);
        assert_eq!(ms(llm.wait(1, None)), 1000);
        assert_eq!(ms(llm.wait(2, None)), 2000);
        assert_eq!(ms(llm.wait(10, None)), 20_000);
        assert_eq!(ms(llm.wait(0, Some(3.0))), 3000);
        assert_eq!(ms(llm.wait(0, Some(1e300))), 20_000);
    }

    #[test]
    fn error_messages_are_found_in_the_common_shapes() {
        assert_eq!(api_error_message(r#"{"error":{"message":"a"}}"#), "a");
        assert_eq!(api_error_message(r#"{"error":"b"}"#), "b");
        assert_eq!(
            api_error_message(r#"{"object":"error","message":"c"}"#),
            "c"
        );
        assert_eq!(api_error_message(r#"{"detail":"d"}"#), "d");
        assert_eq!(api_error_message(r#"[{"error":{"message":"e"}}]"#), "e");
        assert_eq!(api_error_message(" plain "), "plain");
        assert_eq!(api_error_message(""), "(empty body)");
    }
}
