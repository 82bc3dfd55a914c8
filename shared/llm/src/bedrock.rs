//! Amazon Bedrock as the LLM: the Bedrock Runtime Converse API, one API for
//! every model Bedrock serves (Anthropic Claude, Amazon Nova, Meta Llama,
//! Mistral ...), with the function's IAM role instead of an API key.
//!
//! The role's settings choose the model, as for any provider: `*_model` is a
//! model id (`anthropic.claude-haiku-4-5-20251001-v1:0`) or an inference
//! profile id (`us.anthropic.claude-haiku-4-5-20251001-v1:0`, which routes
//! the call to a Region of its geography), `*_temperature` and
//! `*_max_tokens` go into `inferenceConfig` (a request's own lower cap, a
//! short answer's, wins). Bedrock's models take a temperature of 0 to 1: a
//! higher setting (OpenAI's scale goes to 2) is sent as 1.
//!
//! The prompt: our design sends one system message, and the Converse API
//! wants at least one user message besides. The prompt goes as the `system`
//! text, whole, and the conversation is one short user turn that asks for the
//! answer the prompt describes ([`TEXT_TURN`]; [`JSON_TURN`] for a JSON answer,
//! which also asks for the object alone, as Converse has no JSON mode). The
//! prompt keeps the standing of a system prompt (the persona, the rules), and
//! what the model is asked to do now is a user's turn, as it was trained on.
//! A model that wraps its JSON in a code fence or prose anyway still parses:
//! the readers of JSON answers look for the object (`JudgmentResult::parse`).
//!
//! Retries: the loop of every LLM adapter ([`crate`]): up to
//! `llm_max_retries` after the first attempt on throttling
//! (`ThrottlingException`), `ServiceUnavailableException`,
//! `InternalServerException`, `ModelNotReadyException`,
//! `ModelTimeoutException`, any 5xx or 429, timeouts and transport errors,
//! waiting 500 ms doubled at each retry (at most 20 s); each attempt bounded
//! by `llm_timeout_seconds`, cut to the invocation's deadline. The SDK's own
//! retries are off, so that this loop and the deadline decide alone. Any
//! other error (`AccessDeniedException`: no model access or no IAM
//! permission; `ValidationException`; `ResourceNotFoundException`: a model id
//! that does not exist in the Region), an answer without text, or a body the
//! SDK cannot read, is a refusal, returned at once with the service's code
//! and message (the request's signature and credentials are never part of it).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_bedrockruntime::config::retry::RetryConfig;
use aws_sdk_bedrockruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::operation::converse::{ConverseError, ConverseOutput};
use aws_sdk_bedrockruntime::primitives::Blob;
use aws_sdk_bedrockruntime::types::{
    CachePointBlock, CachePointType, ContentBlock, ConversationRole, ConverseOutput as Answer,
    ImageBlock, ImageFormat as BedrockImageFormat, ImageSource, InferenceConfiguration, Message,
    StopReason, SystemContentBlock,
};
use aws_sdk_bedrockruntime::Client;

use crate::call::{self as llm, Attempt, Call, DEFAULT_BACKOFF, DEFAULT_MAX_WAIT, SERVICE};
use crate::roles::model_settings;
use myao_aws::is_retryable;
use myao_core::adapters::metrics::NoMetrics;
use myao_core::ports::{Llm, LlmReply, LlmRequest, Metrics, PortError, SettingsProvider};
use myao_domain::budget::estimate_tokens;
use myao_domain::files::ImageFormat;
use myao_domain::settings::LlmProvider;
use myao_http::{error_chain, exponential_backoff, truncate};

/// The user turn of a request for text: the system prompt says what to write.
pub const TEXT_TURN: &str = "Answer now, as the instructions above ask.";
/// The user turn of a request for a JSON object.
pub const JSON_TURN: &str = "Answer now, as the instructions above ask: the JSON object only, \
                             with no code fence and no other text.";
/// The highest temperature Bedrock's models accept.
const MAX_TEMPERATURE: f64 = 1.0;
/// Error details quote at most this many characters of a message.
const DETAIL_CHARS: usize = 300;

/// An [`Llm`] over Amazon Bedrock's Converse API, in the Region (and with
/// the credentials) of the SDK configuration it is built from.
pub struct BedrockLlm {
    client: Client,
    settings: Arc<dyn SettingsProvider>,
    metrics: Arc<dyn Metrics>,
    /// The first retry's wait.
    backoff: Duration,
    max_wait: Duration,
}

impl fmt::Debug for BedrockLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BedrockLlm")
            .field("region", &self.client.config().region())
            .field("backoff", &self.backoff)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}

impl BedrockLlm {
    /// An adapter calling Bedrock with `config`'s Region, credentials and
    /// HTTP client ([`myao_aws::sdk_config`]), reading its models from
    /// `settings`. The SDK's own retries are turned off.
    pub fn new(config: &aws_config::SdkConfig, settings: Arc<dyn SettingsProvider>) -> BedrockLlm {
        let config = aws_sdk_bedrockruntime::config::Builder::from(config)
            .retry_config(RetryConfig::disabled())
            .build();
        BedrockLlm {
            client: Client::from_conf(config),
            settings,
            metrics: Arc::new(NoMetrics),
            backoff: DEFAULT_BACKOFF,
            max_wait: DEFAULT_MAX_WAIT,
        }
    }

    /// Counts its calls, tokens and latency per role in `metrics`.
    pub fn with_metrics(self, metrics: Arc<dyn Metrics>) -> BedrockLlm {
        BedrockLlm { metrics, ..self }
    }

    /// Sets the first retry's wait (default 500 ms); tests make it tiny.
    pub fn with_backoff(self, backoff: Duration) -> BedrockLlm {
        BedrockLlm { backoff, ..self }
    }

    /// One Converse call, bounded by `timeout`.
    async fn attempt(&self, request: &Converse<'_>, timeout: Duration) -> Attempt {
        let call = self
            .client
            .converse()
            .model_id(request.model)
            .set_system(Some(request.system.clone()))
            .messages(request.turn.clone())
            .inference_config(request.inference.clone())
            .send();
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(output)) => reply(output),
            Ok(Err(error)) => failure(error),
            Err(_) => Attempt::Retry(
                PortError::unavailable(
                    SERVICE,
                    format!("timed out after {:.1} s", timeout.as_secs_f64()),
                ),
                None,
            ),
        }
    }
}

/// The fewest tokens before a cache point that `model` caches, or `None`
/// for a model that takes no cache point (Bedrock's prompt caching: the
/// Claude models from 3.5 Haiku and 3.7 Sonnet on, and Amazon Nova).
fn cache_min_tokens(model: &str) -> Option<usize> {
    let model = model.to_ascii_lowercase();
    if model.contains("amazon.nova") {
        return Some(1_024);
    }
    if !model.contains("anthropic.claude") {
        return None;
    }
    let older = [
        "claude-v2",
        "claude-instant",
        "claude-3-haiku",
        "claude-3-sonnet",
        "claude-3-opus",
        "claude-3-5-sonnet",
    ];
    if older.iter().any(|o| model.contains(o)) {
        None
    } else if model.contains("haiku-4-5") {
        Some(4_096)
    } else if model.contains("claude-3-5-haiku") {
        Some(2_048)
    } else {
        Some(1_024)
    }
}

/// The system prompt as Converse takes it: with a cache point after its
/// stable part ([`LlmRequest::stable_prefix`]) where the model caches and
/// that part is long enough to be cached; else whole.
fn system_blocks(system: &str, stable: usize, model: &str) -> Vec<SystemContentBlock> {
    let cached = cache_min_tokens(model).is_some_and(|min| {
        stable > 0
            && stable <= system.len()
            && system.is_char_boundary(stable)
            && estimate_tokens(&system[..stable]) >= min
    });
    let point = CachePointBlock::builder()
        .r#type(CachePointType::Default)
        .build();
    let (true, Ok(point)) = (cached, point) else {
        return vec![SystemContentBlock::Text(system.to_owned())];
    };
    let (stable, rest) = system.split_at(stable);
    let mut blocks = vec![
        SystemContentBlock::Text(stable.to_owned()),
        SystemContentBlock::CachePoint(point),
    ];
    if !rest.is_empty() {
        blocks.push(SystemContentBlock::Text(rest.to_owned()));
    }
    blocks
}

/// What every attempt of one call sends.
struct Converse<'a> {
    model: &'a str,
    system: Vec<SystemContentBlock>,
    turn: Message,
    inference: InferenceConfiguration,
}

#[async_trait]
impl Llm for BedrockLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let settings = self.settings.current().await?;
        let model = model_settings(&settings, request.role);
        let mut turn = Message::builder()
            .role(ConversationRole::User)
            .content(ContentBlock::Text(
                if request.json { JSON_TURN } else { TEXT_TURN }.to_owned(),
            ));
        // The images, in the order the prompt numbers them, after the ask.
        for image in &request.images {
            let block = ImageBlock::builder()
                .format(match image.format {
                    ImageFormat::Png => BedrockImageFormat::Png,
                    ImageFormat::Jpeg => BedrockImageFormat::Jpeg,
                    ImageFormat::Gif => BedrockImageFormat::Gif,
                    ImageFormat::Webp => BedrockImageFormat::Webp,
                })
                .source(ImageSource::Bytes(Blob::new(image.bytes.clone())))
                .build()
                .map_err(|e| PortError::refused_by(SERVICE, e))?;
            turn = turn.content(ContentBlock::Image(block));
        }
        let turn = turn
            .build()
            .map_err(|e| PortError::refused_by(SERVICE, e))?;
        let max_tokens = request
            .max_tokens
            .map_or(model.max_tokens, |cap| cap.min(model.max_tokens));
        // f32 is the API's type; the settings' temperatures are short decimals.
        let temperature = model.temperature.clamp(0.0, MAX_TEMPERATURE) as f32;
        let converse = Converse {
            model: &model.model,
            system: system_blocks(&request.system, request.stable_prefix, &model.model),
            turn,
            inference: InferenceConfiguration::builder()
                .max_tokens(i32::try_from(max_tokens).unwrap_or(i32::MAX))
                .temperature(temperature)
                .build(),
        };
        let call = Call {
            request,
            provider: LlmProvider::Bedrock,
            model: &model.model,
            settings: &settings,
            metrics: self.metrics.as_ref(),
        };
        llm::call(
            call,
            // Bedrock says nothing like Retry-After: the backoff decides.
            |retry, _| exponential_backoff(self.backoff, retry, self.max_wait),
            |timeout| self.attempt(&converse, timeout),
        )
        .await
    }
}

/// The answer's text (its text blocks, joined) and token counts.
fn reply(output: ConverseOutput) -> Attempt {
    let stop_reason = output.stop_reason().clone();
    // Bedrock counts the tokens read from and written to its prompt cache
    // apart from the input's others: the prompt is all three.
    let usage = output.usage().map_or((0, 0, 0), |u| {
        let count = |n: i32| u64::try_from(n).unwrap_or(0);
        let cached = u.cache_read_input_tokens().map_or(0, count);
        let written = u.cache_write_input_tokens().map_or(0, count);
        let prompt = count(u.input_tokens()) + cached + written;
        (prompt, count(u.output_tokens()), cached)
    });
    let text = match output.output {
        Some(Answer::Message(message)) => message
            .content
            .iter()
            .filter_map(|block| block.as_text().ok())
            .map(String::as_str)
            .collect::<String>(),
        _ => String::new(),
    };
    if text.trim().is_empty() {
        // A content filter or a guardrail leaves no text; say which in the log.
        tracing::warn!(
            stop_reason = stop_reason.as_str(),
            "llm answer has no content"
        );
        return Attempt::Fail(PortError::refused(SERVICE, "no content"));
    }
    if stop_reason == StopReason::MaxTokens {
        // The answer was cut at max_tokens: raise the role's max_tokens
        // setting if this repeats.
        tracing::warn!("llm answer cut at max_tokens");
    }
    Attempt::Done(LlmReply {
        text,
        prompt_tokens: usage.0,
        completion_tokens: usage.1,
        cached_tokens: usage.2,
    })
}

/// A failed call: retried when the service or the network may do better
/// next time ([`is_retryable`]), refused otherwise. The detail is the
/// service's code and message, or the failure's own account of itself:
/// never the SDK's debug view, which shows the response whole (the model's
/// words, for an answer it could not read).
fn failure(error: SdkError<ConverseError>) -> Attempt {
    let said = match (error.code(), error.message()) {
        (Some(code), Some(message)) => format!("{code}: {}", truncate(message, DETAIL_CHARS)),
        (Some(code), None) => code.to_owned(),
        _ => error_chain(&error, DETAIL_CHARS),
    };
    let detail = match error.raw_response() {
        Some(raw) => format!("Converse: HTTP {}: {said}", raw.status().as_u16()),
        None => format!("Converse: {said}"),
    };
    if is_retryable(&error) {
        Attempt::Retry(PortError::unavailable(SERVICE, detail), None)
    } else {
        Attempt::Fail(PortError::refused(SERVICE, detail))
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::time::Instant;

    use serde_json::{json, Value};
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::test_aws::{sdk_config, SECRET_KEY};
    use myao_core::adapters::system::FixedSettings;
    use myao_core::adapters::twins::RecordedMetrics;
    use myao_core::deadline::Deadline;
    use myao_core::ports::LlmRole;
    use myao_domain::metrics;
    use myao_domain::Settings;
    use myao_testkit::http::requests;

    const PROFILE: &str = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
    /// How the SDK writes `PROFILE` in the path (`:` percent-encoded).
    const PROFILE_PATH: &str = "/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse";
    const PROMPT: &str = "あなたは myao です。会話に返答してください。";

    fn settings() -> Settings {
        let mut s = Settings {
            llm_provider: LlmProvider::Bedrock,
            llm_max_retries: 2,
            llm_timeout_seconds: 5,
            ..Settings::default()
        };
        s.judgment_model = PROFILE.to_owned();
        s.response_model = "amazon.nova-lite-v1:0".to_owned();
        s
    }

    async fn llm_with(endpoint: &str, settings: Settings) -> BedrockLlm {
        BedrockLlm::new(
            &sdk_config(endpoint).await,
            Arc::new(FixedSettings::new(settings)),
        )
        .with_backoff(Duration::from_millis(1))
    }

    async fn llm(server: &MockServer) -> BedrockLlm {
        llm_with(&server.uri(), settings()).await
    }

    fn request(role: LlmRole, json: bool) -> LlmRequest {
        LlmRequest {
            role,
            system: PROMPT.to_owned(),
            json,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        }
    }

    /// A Converse answer holding `content` blocks.
    fn answer(content: Value) -> Value {
        json!({
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 42, "outputTokens": 7, "totalTokens": 49},
            "metrics": {"latencyMs": 321}
        })
    }

    fn ok(text: &str) -> ResponseTemplate {
        ResponseTemplate::new(200).set_body_json(answer(json!([{"text": text}])))
    }

    /// An error as Bedrock sends it: the type in `x-amzn-errortype` (with
    /// the namespace suffix the SDK strips), the message in the body.
    fn error(status: u16, kind: &str, message: &str) -> ResponseTemplate {
        ResponseTemplate::new(status)
            .insert_header(
                "x-amzn-errortype",
                format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/").as_str(),
            )
            .set_body_json(json!({ "message": message }))
    }

    /// Bedrock's answer to too many requests.
    fn throttled() -> ResponseTemplate {
        error(
            429,
            "ThrottlingException",
            "Too many requests, please wait before trying again.",
        )
    }

    /// A judgment's request for text, to `llm`.
    async fn ask(llm: &BedrockLlm) -> Result<LlmReply, PortError> {
        llm.complete(&request(LlmRole::Judgment, false)).await
    }

    fn refused_detail(result: Result<LlmReply, PortError>) -> String {
        match result {
            Err(PortError::Refused { detail, .. }) => detail,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn unavailable_detail(result: Result<LlmReply, PortError>) -> String {
        match result {
            Err(PortError::Unavailable { detail, .. }) => detail,
            other => panic!("expected unavailable, got {other:?}"),
        }
    }

    fn temperature(body: &Value) -> f64 {
        body["inferenceConfig"]["temperature"]
            .as_f64()
            .unwrap_or(f64::NAN)
    }

    #[tokio::test]
    async fn a_cache_point_follows_the_stable_part_where_the_model_caches_it() {
        let stable = "記憶".repeat(1_100); // ~2,200 tokens
        let system = format!("{stable}## 現在の会話\n...");
        let sent = |model: &'static str, prefix: usize| {
            let system = system.clone();
            async move {
                let server = MockServer::start().await;
                Mock::given(method("POST"))
                    .respond_with(ok("ok"))
                    .mount(&server)
                    .await;
                let mut settings = settings();
                settings.response_model = model.to_owned();
                let request = LlmRequest {
                    system,
                    stable_prefix: prefix,
                    ..request(LlmRole::Response, false)
                };
                llm_with(&server.uri(), settings)
                    .await
                    .complete(&request)
                    .await
                    .expect("reply");
                let body: Value = requests(&server).await[0].body_json().expect("json body");
                body["system"].clone()
            }
        };
        let whole = json!([{ "text": system }]);

        assert_eq!(
            sent("us.anthropic.claude-sonnet-4-20250514-v1:0", stable.len()).await,
            json!([
                { "text": stable },
                { "cachePoint": { "type": "default" } },
                { "text": "## 現在の会話\n..." },
            ])
        );
        // Below the model's minimum (4,096 tokens for Haiku 4.5), none.
        assert_eq!(
            sent("us.anthropic.claude-haiku-4-5-20251001-v1:0", stable.len()).await,
            whole
        );
        // A model that takes no cache point, or no stable part said: none.
        assert_eq!(
            sent("meta.llama3-70b-instruct-v1:0", stable.len()).await,
            whole
        );
        assert_eq!(
            sent("us.anthropic.claude-sonnet-4-20250514-v1:0", 0).await,
            whole
        );
        // A length inside a character is no boundary: none.
        assert_eq!(sent("amazon.nova-pro-v1:0", stable.len() - 1).await, whole);
    }

    #[tokio::test]
    async fn images_follow_the_ask_in_the_user_turn_as_image_blocks() {
        use myao_domain::files::{Image, ImageFormat};
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("a chart"))
            .mount(&server)
            .await;
        let with_images = LlmRequest {
            images: vec![
                Image {
                    format: ImageFormat::Png,
                    bytes: b"png bytes".to_vec(),
                },
                Image {
                    format: ImageFormat::Jpeg,
                    bytes: b"jpeg bytes".to_vec(),
                },
            ],
            ..request(LlmRole::Response, false)
        };
        llm(&server)
            .await
            .complete(&with_images)
            .await
            .expect("reply");

        let body: Value = requests(&server).await[0].body_json().expect("json body");
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                { "text": TEXT_TURN },
                { "image": { "format": "png", "source": { "bytes": b64(b"png bytes") } } },
                { "image": { "format": "jpeg", "source": { "bytes": b64(b"jpeg bytes") } } },
            ])
        );
    }

    #[tokio::test]
    async fn sends_the_prompt_as_system_text_and_one_user_turn_with_the_role_settings() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(PROFILE_PATH))
            .respond_with(ok("{\"should_respond\": false}"))
            .expect(1)
            .mount(&server)
            .await;

        let reply = llm(&server)
            .await
            .complete(&request(LlmRole::Judgment, true))
            .await
            .expect("reply");

        assert_eq!(reply.text, "{\"should_respond\": false}");
        let sent = requests(&server).await;
        let auth = sent[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDFAKEFORTESTS/"),
            "{auth}"
        );
        assert!(auth.contains("/us-east-1/bedrock/aws4_request"), "{auth}");
        assert!(!auth.contains(SECRET_KEY), "{auth}");
        let body: Value = sent[0].body_json().expect("json body");
        let judgment = settings().judgment();
        assert_eq!(body["system"], json!([{ "text": PROMPT }]));
        assert_eq!(
            body["messages"],
            json!([{ "role": "user", "content": [{ "text": JSON_TURN }] }])
        );
        assert_eq!(
            body["inferenceConfig"]["maxTokens"],
            json!(judgment.max_tokens)
        );
        assert!(
            (temperature(&body) - judgment.temperature).abs() < 1e-6,
            "{body}"
        );
        // The model is in the path only.
        assert!(body.get("modelId").is_none(), "{body}");
    }

    #[tokio::test]
    async fn each_role_uses_its_model_a_request_cap_and_a_temperature_bedrock_accepts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/model/amazon.nova-lite-v1%3A0/converse"))
            .respond_with(ok("hi"))
            .mount(&server)
            .await;
        let mut s = settings();
        s.response_temperature = 1.5;

        let short = LlmRequest {
            max_tokens: Some(40),
            ..request(LlmRole::Response, false)
        };
        let reply = llm_with(&server.uri(), s).await.complete(&short).await;

        assert_eq!(reply.expect("reply").text, "hi");
        let body: Value = requests(&server).await[0].body_json().expect("json");
        assert_eq!(body["messages"][0]["content"][0]["text"], json!(TEXT_TURN));
        assert_eq!(body["inferenceConfig"]["maxTokens"], json!(40));
        assert_eq!(temperature(&body), 1.0);
    }

    #[tokio::test]
    async fn the_text_blocks_and_the_token_usage_are_read() {
        let server = MockServer::start().await;
        let content = json!([
            {"reasoningContent": {"reasoningText": {"text": "thinking"}}},
            {"text": "にゃ"},
            {"text": "あ"}
        ]);
        // 1,024 of the prompt's tokens read from the prompt cache: counted
        // apart by Bedrock, part of the prompt for us.
        let mut body = answer(content);
        body["usage"]["cacheReadInputTokens"] = json!(1_024);
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&server)
            .await;
        let metrics = Arc::new(RecordedMetrics::default());

        let reply = llm(&server)
            .await
            .with_metrics(metrics.clone())
            .complete(&request(LlmRole::Judgment, false))
            .await
            .expect("reply");

        assert_eq!(
            reply,
            LlmReply {
                text: "にゃあ".to_owned(),
                prompt_tokens: 42 + 1_024,
                completion_tokens: 7,
                cached_tokens: 1_024,
            }
        );
        let judgment = Some(("Role", "judgment"));
        assert_eq!(metrics.total(metrics::LLM_CALLS, judgment), 1.0);
        assert_eq!(metrics.total(metrics::LLM_TOKENS_IN, judgment), 1_066.0);
        assert_eq!(metrics.total(metrics::LLM_TOKENS_CACHED, judgment), 1_024.0);
        assert_eq!(metrics.total(metrics::LLM_TOKENS_OUT, judgment), 7.0);
        assert_eq!(metrics.total(metrics::LLM_SUCCESSES, None), 1.0);
    }

    #[tokio::test]
    async fn throttling_then_success_is_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(throttled())
            .up_to_n_times(1)
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ok("hi"))
            .expect(1)
            .mount(&server)
            .await;

        let reply = ask(&llm(&server).await).await;

        assert_eq!(reply.expect("reply").text, "hi");
        assert_eq!(requests(&server).await.len(), 2);
    }

    #[tokio::test]
    async fn throttling_past_the_retries_is_unavailable_with_the_service_message() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(throttled())
            .mount(&server)
            .await;
        let metrics = Arc::new(RecordedMetrics::default());

        let result = llm(&server)
            .await
            .with_metrics(metrics.clone())
            .complete(&request(LlmRole::Judgment, true))
            .await;

        let detail = unavailable_detail(result);
        assert!(detail.contains("ThrottlingException"), "{detail}");
        assert!(detail.contains("Too many requests"), "{detail}");
        // The first attempt and llm_max_retries = 2 retries; none of the SDK's.
        assert_eq!(requests(&server).await.len(), 3);
        assert_eq!(metrics.total(metrics::LLM_FAILURES, None), 1.0);
    }

    #[tokio::test]
    async fn a_busy_or_broken_service_and_a_loading_model_are_retried() {
        let server = MockServer::start().await;
        for (status, kind) in [
            (500, "InternalServerException"),
            (503, "ServiceUnavailableException"),
            (429, "ModelNotReadyException"),
            (408, "ModelTimeoutException"),
        ] {
            Mock::given(method("POST"))
                .respond_with(error(status, kind, "try later"))
                .up_to_n_times(1)
                .with_priority(1)
                .mount(&server)
                .await;
        }
        Mock::given(method("POST"))
            .respond_with(ok("hi"))
            .mount(&server)
            .await;
        let s = Settings {
            llm_max_retries: 4,
            ..settings()
        };

        let reply = ask(&llm_with(&server.uri(), s).await).await;

        assert_eq!(reply.expect("reply").text, "hi");
        assert_eq!(requests(&server).await.len(), 5);
    }

    #[tokio::test]
    async fn no_access_a_bad_request_or_an_unknown_model_is_refused_at_once() {
        for (status, kind, message) in [
            (
                403,
                "AccessDeniedException",
                "You don't have access to the model with the specified model ID.",
            ),
            (
                400,
                "ValidationException",
                "The provided model identifier is invalid.",
            ),
            (404, "ResourceNotFoundException", "Model not found."),
        ] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(error(status, kind, message))
                .expect(1)
                .mount(&server)
                .await;

            let detail = refused_detail(ask(&llm(&server).await).await);

            assert_eq!(
                detail,
                format!("Converse: HTTP {status}: {kind}: {message}")
            );
            assert!(!detail.contains(SECRET_KEY), "{detail}");
            assert_eq!(requests(&server).await.len(), 1, "{kind}");
        }
    }

    #[tokio::test]
    async fn a_garbage_or_textless_answer_is_refused_without_retry() {
        for body in [
            ResponseTemplate::new(200).set_body_string("<html>oops</html>"),
            ResponseTemplate::new(200).set_body_json(json!({})),
            ResponseTemplate::new(200).set_body_json(answer(json!([]))),
            ResponseTemplate::new(200).set_body_json(answer(json!([{"text": "  "}]))),
            ResponseTemplate::new(200).set_body_json(json!({
                "output": {"message": {"role": "assistant", "content": []}},
                "stopReason": "content_filtered",
                "usage": {"inputTokens": 1, "outputTokens": 0, "totalTokens": 1}
            })),
        ] {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(body)
                .expect(1)
                .mount(&server)
                .await;

            let detail = refused_detail(
                llm(&server)
                    .await
                    .complete(&request(LlmRole::Judgment, true))
                    .await,
            );

            assert!(!detail.contains("oops"), "no body text in errors: {detail}");
            assert!(
                detail == "no content" || detail.starts_with("Converse: HTTP 200: "),
                "{detail}"
            );
            assert_eq!(requests(&server).await.len(), 1);
        }
    }

    #[tokio::test]
    async fn a_hanging_model_is_cut_at_the_timeout_and_retried() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("late").set_delay(Duration::from_secs(10)))
            .mount(&server)
            .await;
        let s = Settings {
            llm_timeout_seconds: 1,
            llm_max_retries: 1,
            ..settings()
        };

        let started = Instant::now();
        let result = ask(&llm_with(&server.uri(), s).await).await;

        assert!(unavailable_detail(result).contains("timed out"));
        assert_eq!(requests(&server).await.len(), 2);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn no_attempt_is_started_without_time_for_it() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ok("hi"))
            .mount(&server)
            .await;

        let (llm, ask) = (llm(&server).await, request(LlmRole::Judgment, false));
        let deadline = Deadline::after(Duration::from_secs(1));
        let result = Deadline::scope(Some(deadline), llm.complete(&ask)).await;

        assert!(unavailable_detail(result).contains("deadline"));
        assert!(requests(&server).await.is_empty());
    }

    #[tokio::test]
    async fn a_refused_connection_is_unavailable() {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let s = Settings {
            llm_max_retries: 0,
            ..settings()
        };
        let llm = llm_with(&format!("http://127.0.0.1:{port}"), s).await;

        let result = llm.complete(&request(LlmRole::Judgment, false)).await;

        assert!(!unavailable_detail(result).contains(SECRET_KEY));
    }

    #[tokio::test]
    async fn debug_shows_no_credentials() {
        let llm = llm_with("http://127.0.0.1:9", settings()).await;
        let debug = format!("{llm:?}");
        assert!(debug.contains("us-east-1"), "{debug}");
        assert!(!debug.contains(SECRET_KEY), "{debug}");
    }
}
