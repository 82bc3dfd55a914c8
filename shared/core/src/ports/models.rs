//! The ports of the models myao calls: the LLM that writes, and the
//! embedder that tells what texts mean (recall by meaning).

use async_trait::async_trait;

use super::error::PortError;
use myao_domain::files::Image;

/// What an LLM call is for; each role has its own model settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LlmRole {
    Judgment,
    Response,
    Memory,
}

impl LlmRole {
    pub fn as_str(self) -> &'static str {
        match self {
            LlmRole::Judgment => "judgment",
            LlmRole::Response => "response",
            LlmRole::Memory => "memory",
        }
    }
}

/// One LLM call: a single system message, as in the design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmRequest {
    pub role: LlmRole,
    pub system: String,
    /// Ask for a JSON object as the answer.
    pub json: bool,
    /// A lower limit on the answer's tokens than the role's `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Images shared in the conversation, in the order the prompt numbers
    /// them ("image 1 attached"); only for a model that sees them.
    pub images: Vec<Image>,
    /// How many bytes at the start of `system` are the same from one call
    /// to the next until a memory is written (the persona, the memories,
    /// the channels): where a provider that caches prompt prefixes on
    /// request (Bedrock's `cachePoint`) is told to. 0: none said.
    pub stable_prefix: usize,
}

/// An LLM's answer and what it cost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LlmReply {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of the prompt's tokens, those the provider read from its prompt
    /// cache (billed at a fraction); 0 when it says none.
    pub cached_tokens: u64,
}

/// A chat-completions LLM.
#[async_trait]
pub trait Llm: Send + Sync {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError>;
}

/// What a text is, for an embedder that reads the two differently (some
/// models, e5 among them, are given `query: ` and `passage: `; the
/// bundled one reads both alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedded {
    /// What is remembered: a fact.
    Passage,
    /// What recalls it: a conversation's newest words.
    Query,
}

/// Vectors an embedder made, and the name of its model.
#[derive(Debug, Clone, PartialEq)]
pub struct Vectors {
    /// Stored with every vector: vectors of different models are not
    /// compared.
    pub model: String,
    /// One unit-length vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
}

/// Turns texts into vectors whose cosine is their likeness in meaning
/// (recall by meaning).
#[async_trait]
pub trait Embedder: Send + Sync {
    /// The name of the model it embeds with now (which may follow the
    /// settings): what [`Embedder::embed`]'s vectors are stored with.
    async fn model(&self) -> Result<String, PortError>;
    /// One unit-length vector per text, in order, with the model's name.
    async fn embed(&self, texts: &[String], what: Embedded) -> Result<Vectors, PortError>;
}
