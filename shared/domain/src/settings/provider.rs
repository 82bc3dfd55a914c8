//! Which service an LLM call goes to, out of the module root so that the
//! setting kinds and the embedder beneath it read a provider without
//! leaning on the file that declares them.

use std::fmt;

/// The service an LLM call goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LlmProvider {
    /// An OpenAI-compatible chat-completions endpoint (`llm_base_url`),
    /// with the API key of the LLM key parameter.
    #[default]
    OpenAi,
    /// Amazon Bedrock's Converse API in the functions' region, with their
    /// IAM role: no API key.
    Bedrock,
}

impl LlmProvider {
    /// `openai` or `bedrock` (any case, trimmed).
    pub fn parse(value: &str) -> Option<LlmProvider> {
        match value.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(LlmProvider::OpenAi),
            "bedrock" => Some(LlmProvider::Bedrock),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LlmProvider::OpenAi => "openai",
            LlmProvider::Bedrock => "bedrock",
        }
    }
}

impl fmt::Display for LlmProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
