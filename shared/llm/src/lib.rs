//! What the LLM adapters share, whichever service they call: the role's
//! model settings and provider, the retry loop with its deadline handling,
//! its logs and metrics, and [`LlmRouter`], which sends each call to its
//! role's provider.
//!
//! An adapter ([`OpenAiLlm`](openai::OpenAiLlm) and
//! [`BedrockLlm`](bedrock::BedrockLlm)) makes one attempt at a time and says
//! what it came to ([`Attempt`](call::Attempt)); [`call`](call::call)
//! decides whether to try again, how long to wait, and when the deadline
//! leaves no time for it.

pub mod bedrock;
pub mod bedrock_embeddings;
mod call;
pub mod embeddings;
pub mod openai;
mod roles;
#[cfg(test)]
mod test_aws;

use std::sync::Arc;

use async_trait::async_trait;

use call::SERVICE;
use myao_core::ports::{Llm, LlmReply, LlmRequest, PortError, SettingsProvider};
use myao_domain::settings::LlmProvider;

pub use call::LLM_BUDGET;
pub use roles::{model_name, model_settings, provider};

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
    use std::time::Duration;

    use super::*;
    use crate::call::{call, Attempt, Call};
    use myao_core::adapters::system::FixedSettings;
    use myao_core::adapters::twins::RecordedMetrics;
    use myao_core::ports::LlmRole;
    use myao_domain::metrics;
    use myao_domain::Settings;

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
