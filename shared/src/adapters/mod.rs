//! Adapters: the LLM (OpenAI-compatible, Bedrock, and the router between
//! them), the Slack Web API, and the reqwest client over the one TLS
//! configuration. Re-exported: `myao-core`'s in-process adapters (the
//! twins, the clock, the EMF log) and `myao-aws`'s AWS adapters as [`aws`].

pub use myao_aws as aws;
pub use myao_core::adapters::*;

pub mod bedrock;
pub(crate) mod http;
pub mod llm;
pub mod openai;
pub mod slack;
pub mod tls;
