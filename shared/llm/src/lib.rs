//! What the LLM adapters share, whichever service they call: the role's
//! model settings and provider, the retry loop with its deadline handling,
//! its logs and metrics, and [`LlmRouter`], which sends each call to its
//! role's provider.
//!
//! An adapter ([`OpenAiLlm`](openai::OpenAiLlm) and
//! [`BedrockLlm`](bedrock::BedrockLlm)) makes
//! one attempt at a time and says what it came to ([`Attempt`]); [`call`]
//! decides whether to try again, how long to wait, and when the deadline
//! leaves no time for it.

pub mod bedrock;
pub mod bedrock_embeddings;
pub mod embeddings;
pub mod openai;
#[cfg(test)]
mod test_aws;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use myao_core::deadline::CallBudget;
use myao_core::ports::{Llm, LlmReply, LlmRequest, LlmRole, Metrics, PortError, SettingsProvider};
use myao_domain::metrics::{self, Datum};
use myao_domain::settings::{LlmProvider, ModelSettings};
use myao_domain::Settings;
use myao_http::millis;

/// The service name of every LLM error.
pub(crate) const SERVICE: &str = "llm";
/// The first retry's wait; each later one doubles it.
pub(crate) const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
/// No wait between attempts is longer than this, whatever `Retry-After` says.
pub(crate) const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(20);

/// How an LLM call spends the time left before the deadline: it keeps 2 s
/// for what follows (giving a claim back, or the Slack post), and starts no
/// attempt shorter than 2 s (no completion comes back sooner).
pub const LLM_BUDGET: CallBudget = CallBudget {
    margin: Duration::from_secs(2),
    min_attempt: Duration::from_secs(2),
};

/// The model settings of `role`.
pub fn model_settings(settings: &Settings, role: LlmRole) -> ModelSettings {
    match role {
        LlmRole::Judgment => settings.judgment(),
        LlmRole::Response => settings.response(),
        LlmRole::Memory => settings.memory(),
    }
}

/// The name of `role`'s model.
pub fn model_name(settings: &Settings, role: LlmRole) -> &str {
    match role {
        LlmRole::Judgment => &settings.judgment_model,
        LlmRole::Response => &settings.response_model,
        LlmRole::Memory => &settings.memory_model,
    }
}

/// Where `role`'s calls go: its own provider, else `llm_provider`.
pub fn provider(settings: &Settings, role: LlmRole) -> LlmProvider {
    model_settings(settings, role)
        .provider
        .unwrap_or(settings.llm_provider)
}

/// What one attempt came to.
pub(crate) enum Attempt {
    Done(LlmReply),
    /// Worth another attempt, after the seconds given when the service said
    /// how long to wait (`Retry-After`).
    Retry(PortError, Option<f64>),
    Fail(PortError),
}

/// One LLM call, as [`call`] runs it.
pub(crate) struct Call<'a> {
    pub request: &'a LlmRequest,
    pub provider: LlmProvider,
    pub model: &'a str,
    /// `llm_max_retries` and `llm_timeout_seconds`.
    pub settings: &'a Settings,
    pub metrics: &'a dyn Metrics,
}

/// Runs `attempt` (given each attempt's timeout) until it answers, fails
/// for good, or has been retried `llm_max_retries` times, waiting
/// `wait(retry, retry_after)` before retry number `retry` (0 for the first).
/// Under an invocation's [`Deadline`](myao_core::deadline::Deadline) each
/// attempt is cut to the time left less [`LLM_BUDGET`]'s margin, an attempt
/// shorter than its minimum is not started, and a retry whose wait leaves no
/// such attempt after it is not made: the last failure is returned. Logs the
/// call (the prompt's length at DEBUG, never its text) and counts it.
pub(crate) async fn call<A, F, W>(
    call: Call<'_>,
    wait: W,
    mut attempt: A,
) -> Result<LlmReply, PortError>
where
    A: FnMut(Duration) -> F,
    F: Future<Output = Attempt>,
    W: Fn(u32, Option<f64>) -> Duration,
{
    let report = Report::of(&call);
    let timeout = timeout(call.request, call.settings);
    report.starting(call.request);
    let started = Instant::now();
    let mut attempts = 0u32;
    let mut last_error = None;
    loop {
        let Some(attempt_timeout) = LLM_BUDGET.attempt_timeout(timeout) else {
            let error = last_error.unwrap_or_else(|| {
                PortError::unavailable(SERVICE, "no time left before the deadline")
            });
            report.out_of_time(attempts, millis(started.elapsed()), &error);
            return Err(error);
        };
        attempts += 1;
        let outcome = attempt(attempt_timeout).await;
        let latency_ms = millis(started.elapsed());
        let error = match outcome {
            Attempt::Done(reply) => {
                report.done(attempts, latency_ms, &reply);
                return Ok(reply);
            }
            Attempt::Retry(error, retry_after) if attempts <= call.settings.llm_max_retries => {
                let wait = wait(attempts - 1, retry_after);
                if LLM_BUDGET.can_wait(wait) {
                    report.retrying(attempts, wait, &error);
                    last_error = Some(error);
                    tokio::time::sleep(wait).await;
                    continue;
                }
                report.no_time_to_retry(wait);
                error
            }
            Attempt::Retry(error, _) | Attempt::Fail(error) => error,
        };
        report.failed(attempts, latency_ms, &error);
        return Err(error);
    }
}

/// Each attempt's timeout: a memory's digest answers at length, in a
/// function with time for it.
fn timeout(request: &LlmRequest, settings: &Settings) -> Duration {
    let seconds = match request.role {
        LlmRole::Memory => settings.memory_timeout_seconds,
        LlmRole::Judgment | LlmRole::Response => settings.llm_timeout_seconds,
    };
    Duration::from_secs(u64::from(seconds.max(1)))
}

/// What [`call`] logs and counts of one call, at each of its turns.
struct Report<'a> {
    role: &'static str,
    provider: &'static str,
    model: &'a str,
    metrics: &'a dyn Metrics,
}

impl<'a> Report<'a> {
    fn of(call: &Call<'a>) -> Report<'a> {
        Report {
            role: call.request.role.as_str(),
            provider: call.provider.as_str(),
            model: call.model,
            metrics: call.metrics,
        }
    }

    /// The call begins: the prompt's length at DEBUG, never its text.
    fn starting(&self, request: &LlmRequest) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::debug!(
            role,
            provider,
            model,
            prompt_chars = request.system.chars().count(),
            json = request.json,
            "llm call"
        );
    }

    /// An attempt answered.
    fn done(&self, attempts: u32, latency_ms: u64, reply: &LlmReply) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::info!(
            role,
            provider,
            model,
            prompt_tokens = reply.prompt_tokens,
            cached_tokens = reply.cached_tokens,
            completion_tokens = reply.completion_tokens,
            latency_ms,
            attempts,
            "llm call done"
        );
        count(self.metrics, role, latency_ms, Some(reply));
    }

    /// An attempt failed and the next one follows after `wait`.
    fn retrying(&self, attempts: u32, wait: Duration, error: &PortError) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::warn!(
            role,
            provider,
            model,
            attempts,
            wait_ms = millis(wait),
            error = %error,
            "llm call failed; retrying"
        );
    }

    /// A retry's `wait` would leave no attempt before the deadline.
    fn no_time_to_retry(&self, wait: Duration) {
        tracing::warn!(
            role = self.role,
            wait_ms = millis(wait),
            "no time left before the deadline for a retry"
        );
    }

    /// The call failed for good.
    fn failed(&self, attempts: u32, latency_ms: u64, error: &PortError) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::warn!(
            role,
            provider,
            model,
            latency_ms,
            attempts,
            error = %error,
            "llm call failed"
        );
        count(self.metrics, role, latency_ms, None);
    }

    /// The deadline left no time for another attempt.
    fn out_of_time(&self, attempts: u32, latency_ms: u64, error: &PortError) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::warn!(
            role,
            provider,
            model,
            attempts,
            error = %error,
            "llm call stopped: no time left before the deadline"
        );
        count(self.metrics, role, latency_ms, None);
    }
}

/// Counts a finished call: its role, its tokens and time when it answered,
/// a failure (for the alarm of an LLM failing with no success) when not.
fn count(m: &dyn Metrics, role: &'static str, latency_ms: u64, reply: Option<&LlmReply>) {
    m.put(Datum::count(metrics::LLM_CALLS).by("Role", role));
    m.put(Datum::millis(metrics::LLM_LATENCY, latency_ms).by("Role", role));
    match reply {
        Some(reply) => {
            m.put(Datum::count(metrics::LLM_SUCCESSES));
            m.put(Datum::counted(metrics::LLM_TOKENS_IN, reply.prompt_tokens).by("Role", role));
            m.put(Datum::counted(metrics::LLM_TOKENS_CACHED, reply.cached_tokens).by("Role", role));
            m.put(
                Datum::counted(metrics::LLM_TOKENS_OUT, reply.completion_tokens).by("Role", role),
            );
        }
        None => m.put(Datum::count(metrics::LLM_FAILURES)),
    }
}

/// An [`Llm`] that sends each call to its role's provider ([`provider`]),
/// read from the settings at every call: `llm_provider` and the roles' own
/// providers change without a redeploy, like any setting.
pub struct LlmRouter {
    settings: Arc<dyn SettingsProvider>,
    openai: Arc<dyn Llm>,
    bedrock: Option<Arc<dyn Llm>>,
}

impl std::fmt::Debug for LlmRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmRouter")
            .field("bedrock", &self.bedrock.is_some())
            .finish_non_exhaustive()
    }
}

impl LlmRouter {
    /// Every call to `openai` (the OpenAI-compatible adapter), until a
    /// Bedrock one is given.
    pub fn new(settings: Arc<dyn SettingsProvider>, openai: Arc<dyn Llm>) -> LlmRouter {
        LlmRouter {
            settings,
            openai,
            bedrock: None,
        }
    }

    /// The calls of the roles whose provider is `bedrock` go to `bedrock`.
    pub fn with_bedrock(self, bedrock: Arc<dyn Llm>) -> LlmRouter {
        LlmRouter {
            bedrock: Some(bedrock),
            ..self
        }
    }
}

#[async_trait]
impl Llm for LlmRouter {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let settings = self.settings.current().await?;
        match (provider(&settings, request.role), &self.bedrock) {
            (LlmProvider::OpenAi, _) => self.openai.complete(request).await,
            (LlmProvider::Bedrock, Some(bedrock)) => bedrock.complete(request).await,
            (LlmProvider::Bedrock, None) => {
                let role = request.role.as_str();
                tracing::warn!(role, "llm call refused: no Bedrock client in this process");
                Err(PortError::refused(
                    SERVICE,
                    format!(
                        "the {role} role's provider is bedrock, but this process has no \
                         Bedrock client"
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use myao_core::adapters::system::FixedSettings;
    use myao_core::adapters::twins::RecordedMetrics;

    /// Answers with its own name and records the roles it was asked for.
    struct Named {
        name: &'static str,
        roles: Mutex<Vec<LlmRole>>,
    }

    impl Named {
        fn new(name: &'static str) -> Arc<Named> {
            Arc::new(Named {
                name,
                roles: Mutex::new(Vec::new()),
            })
        }

        fn roles(&self) -> Vec<LlmRole> {
            self.roles.lock().map(|r| r.clone()).unwrap_or_default()
        }
    }

    #[async_trait]
    impl Llm for Named {
        async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
            if let Ok(mut roles) = self.roles.lock() {
                roles.push(request.role);
            }
            Ok(LlmReply {
                text: self.name.to_owned(),
                ..LlmReply::default()
            })
        }
    }

    fn request(role: LlmRole) -> LlmRequest {
        LlmRequest {
            role,
            system: "s".to_owned(),
            json: false,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        }
    }

    fn settings(pairs: &[(&str, &str)]) -> Arc<FixedSettings> {
        let (settings, issues) = Settings::from_pairs(pairs.iter().copied());
        assert!(issues.is_empty(), "{issues:?}");
        Arc::new(FixedSettings::new(settings))
    }

    #[test]
    fn a_role_follows_llm_provider_unless_it_has_its_own() {
        let (s, _) =
            Settings::from_pairs([("llm_provider", "bedrock"), ("memory_provider", "openai")]);
        assert_eq!(provider(&s, LlmRole::Judgment), LlmProvider::Bedrock);
        assert_eq!(provider(&s, LlmRole::Response), LlmProvider::Bedrock);
        assert_eq!(provider(&s, LlmRole::Memory), LlmProvider::OpenAi);
        assert_eq!(
            provider(&Settings::default(), LlmRole::Judgment),
            LlmProvider::OpenAi
        );
        assert_eq!(model_settings(&s, LlmRole::Response), s.response());
    }

    #[tokio::test]
    async fn each_role_goes_to_its_provider() {
        let (openai, bedrock) = (Named::new("openai"), Named::new("bedrock"));
        let router = LlmRouter::new(
            settings(&[("llm_provider", "bedrock"), ("response_provider", "openai")]),
            openai.clone(),
        )
        .with_bedrock(bedrock.clone());

        for role in [LlmRole::Judgment, LlmRole::Response, LlmRole::Memory] {
            router.complete(&request(role)).await.expect("an answer");
        }

        assert_eq!(openai.roles(), [LlmRole::Response]);
        assert_eq!(bedrock.roles(), [LlmRole::Judgment, LlmRole::Memory]);
    }

    #[tokio::test]
    async fn bedrock_without_a_client_is_refused() {
        let openai = Named::new("openai");
        let router = LlmRouter::new(
            settings(&[("judgment_provider", "bedrock")]),
            openai.clone(),
        );

        let refused = router.complete(&request(LlmRole::Judgment)).await;
        let answered = router.complete(&request(LlmRole::Response)).await;

        match refused {
            Err(PortError::Refused { detail, .. }) => {
                assert!(
                    detail.contains("judgment role's provider is bedrock"),
                    "{detail}"
                )
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert_eq!(answered.expect("openai answers").text, "openai");
        assert_eq!(openai.roles(), [LlmRole::Response]);
    }

    #[tokio::test]
    async fn a_call_is_counted_by_role_with_its_tokens() {
        let metrics = RecordedMetrics::default();
        let settings = Settings::default();
        let ask = request(LlmRole::Memory);
        let reply = call(
            Call {
                request: &ask,
                provider: LlmProvider::Bedrock,
                model: "m",
                settings: &settings,
                metrics: &metrics,
            },
            |_, _| Duration::ZERO,
            |_| async {
                Attempt::Done(LlmReply {
                    text: "ok".to_owned(),
                    prompt_tokens: 12,
                    completion_tokens: 3,
                    cached_tokens: 8,
                })
            },
        )
        .await
        .expect("an answer");

        assert_eq!(reply.text, "ok");
        let memory = Some(("Role", "memory"));
        assert_eq!(metrics.total(metrics::LLM_CALLS, memory), 1.0);
        assert_eq!(metrics.total(metrics::LLM_SUCCESSES, None), 1.0);
        assert_eq!(metrics.total(metrics::LLM_TOKENS_IN, memory), 12.0);
        assert_eq!(metrics.total(metrics::LLM_TOKENS_OUT, memory), 3.0);
        assert_eq!(metrics.total(metrics::LLM_TOKENS_CACHED, memory), 8.0);
        assert_eq!(metrics.total(metrics::LLM_FAILURES, None), 0.0);
    }
}
