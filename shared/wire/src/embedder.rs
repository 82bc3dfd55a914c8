//! The embedder the `embedder` setting chooses, call by call: the bundled
//! model (loaded once, on the first call that needs it) or the provider's
//! ([`OpenAiEmbedder`]). `off` never reaches it: the services do not ask.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use myao_core::ports::{Embedded, Embedder, PortError, Secrets, SettingsProvider, Vectors};
use myao_embed::Bundled;
use myao_llm::embeddings::OpenAiEmbedder;

/// Chooses between the bundled embedder and the provider's by the settings.
pub struct ChosenEmbedder {
    settings: Arc<dyn SettingsProvider>,
    bundled: OnceLock<Result<Bundled, PortError>>,
    provider: OpenAiEmbedder,
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

#[async_trait]
impl Embedder for ChosenEmbedder {
    async fn embed(&self, texts: &[String], what: Embedded) -> Result<Vectors, PortError> {
        if self.settings.current().await?.bundled_embedder() {
            self.bundled()?.embed(texts, what).await
        } else {
            self.provider.embed(texts, what).await
        }
    }
}
