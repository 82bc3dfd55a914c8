//! The `embedder` setting: what tells the meaning of facts and
//! conversations (recall by meaning), written `bundled`, `off`,
//! `openai:MODEL` or `bedrock:MODEL`, so that no name typed wrong sends
//! conversation text to a provider.

use std::fmt;

use super::error::SettingError;
use super::kinds::Kind;
use super::provider::LlmProvider;

/// What embeds facts and conversations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Embedder {
    /// The model in the job functions' package: offline, no cost.
    #[default]
    Bundled,
    /// None: recall by words only.
    Off,
    /// A provider's embedding model: the OpenAI-compatible API of
    /// `llm_base_url` with the LLM's key, or Amazon Bedrock.
    Provider {
        provider: LlmProvider,
        model: String,
    },
}

impl Embedder {
    /// `bundled`, `off`, `openai:MODEL` or `bedrock:MODEL` (the words in
    /// any case, trimmed; the model as written).
    pub fn parse(text: &str) -> Option<Embedder> {
        let text = text.trim();
        match text.to_ascii_lowercase().as_str() {
            "bundled" => return Some(Embedder::Bundled),
            "off" => return Some(Embedder::Off),
            _ => {}
        }
        let (provider, model) = text.split_once(':')?;
        let model = model.trim();
        let fits = |c: char| c.is_ascii_graphic();
        if model.is_empty() || model.len() > 200 || !model.chars().all(fits) {
            return None;
        }
        Some(Embedder::Provider {
            provider: LlmProvider::parse(provider)?,
            model: model.to_owned(),
        })
    }

    /// The provider's model it names, when it names one of `provider`'s.
    pub fn model_of(&self, provider: LlmProvider) -> Option<&str> {
        match self {
            Embedder::Provider { provider: p, model } if *p == provider => Some(model),
            _ => None,
        }
    }
}

impl fmt::Display for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Embedder::Bundled => f.write_str("bundled"),
            Embedder::Off => f.write_str("off"),
            Embedder::Provider { provider, model } => write!(f, "{provider}:{model}"),
        }
    }
}

/// The `embedder` setting's kind.
pub struct EmbedderKind;

impl Kind for EmbedderKind {
    type Value = Embedder;
    fn parse(&self, text: &str) -> Result<Embedder, SettingError> {
        Embedder::parse(text).ok_or(SettingError::NotAnEmbedder)
    }
    fn describe(&self) -> String {
        "bundled, off, openai:MODEL or bedrock:MODEL".to_owned()
    }
    fn show(&self, value: &Embedder) -> String {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedder_is_bundled_off_or_a_providers_model_named_with_it() {
        assert_eq!(Embedder::parse(" Bundled "), Some(Embedder::Bundled));
        assert_eq!(Embedder::parse("OFF"), Some(Embedder::Off));
        let openai = Embedder::parse("openai:text-embedding-3-small").unwrap();
        assert_eq!(
            openai.model_of(LlmProvider::OpenAi),
            Some("text-embedding-3-small")
        );
        assert_eq!(openai.model_of(LlmProvider::Bedrock), None);
        let bedrock = Embedder::parse("bedrock: cohere.embed-multilingual-v3").unwrap();
        assert_eq!(bedrock.to_string(), "bedrock:cohere.embed-multilingual-v3");
        assert_eq!(Embedder::parse(&bedrock.to_string()), Some(bedrock));
        // A name typed wrong sends nothing anywhere: it is refused.
        for wrong in [
            "bundle",
            "text-embedding-3-small",
            "openai:",
            "azure:x",
            "openai:a b",
        ] {
            assert_eq!(Embedder::parse(wrong), None, "{wrong}");
        }
    }
}
