//! The embedder the `embedder` setting chooses, call by call: the bundled
//! model (loaded once, on the first call that needs it), the
//! OpenAI-compatible API's ([`OpenAiEmbedder`], `openai:MODEL`) or Amazon
//! Bedrock's (`bedrock:MODEL`, where the functions were given it). `off`
//! never reaches it: the services do not ask.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use myao_core::ports::{Embedded, Embedder, PortError, Secrets, SettingsProvider, Vectors};
use myao_domain::settings::{Embedder as SettingsEmbedder, LlmProvider};
use myao_embed::Bundled;
use myao_llm::embeddings::OpenAiEmbedder;

/// Chooses between the bundled embedder and the provider's by the settings.
pub struct ChosenEmbedder {
    settings: Arc<dyn SettingsProvider>,
    bundled: OnceLock<Result<Bundled, PortError>>,
    provider: OpenAiEmbedder,
    bedrock: Option<Arc<dyn Embedder>>,
}

impl ChosenEmbedder {
    /// The provider's embedder calls the LLM's endpoint with its key
    /// (`key_name` in `secrets`).
    pub fn new(
        http: reqwest::Client,
        settings: Arc<dyn SettingsProvider>,
        secrets: Arc<dyn Secrets>,
        key_name: impl Into<String>,
    ) -> ChosenEmbedder {
        ChosenEmbedder {
            provider: OpenAiEmbedder::new(http, settings.clone(), secrets, key_name),
            settings,
            bundled: OnceLock::new(),
            bedrock: None,
        }
    }

    /// Embeds on Amazon Bedrock with `bedrock` for `bedrock:MODEL`.
    pub fn with_bedrock(self, bedrock: Arc<dyn Embedder>) -> ChosenEmbedder {
        ChosenEmbedder {
            bedrock: Some(bedrock),
            ..self
        }
    }

    fn bundled(&self) -> Result<&Bundled, PortError> {
        self.bundled
            .get_or_init(|| {
                let loaded = Bundled::from_package();
                if let Err(error) = &loaded {
                    tracing::warn!(%error, "no bundled embedder: recall goes by words");
                }
                loaded
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ChosenEmbedder {
    /// The embedder the settings choose now.
    async fn chosen(&self) -> Result<&dyn Embedder, PortError> {
        let settings = self.settings.current().await?;
        match &settings.embedder {
            SettingsEmbedder::Bundled => Ok(self.bundled()?),
            SettingsEmbedder::Provider {
                provider: LlmProvider::OpenAi,
                ..
            } => Ok(&self.provider),
            SettingsEmbedder::Provider {
                provider: LlmProvider::Bedrock,
                ..
            } => self.bedrock.as_deref().ok_or_else(|| {
                PortError::refused("embedder", "Amazon Bedrock is not configured here")
            }),
            SettingsEmbedder::Off => Err(PortError::refused("embedder", "the embedder is off")),
        }
    }
}

#[async_trait]
impl Embedder for ChosenEmbedder {
    async fn model(&self) -> Result<String, PortError> {
        self.chosen().await?.model().await
    }

    async fn embed(&self, texts: &[String], what: Embedded) -> Result<Vectors, PortError> {
        self.chosen().await?.embed(texts, what).await
    }
}
