//! The AWS adapters of `myao-core`'s ports: DynamoDB, EventBridge
//! Scheduler, SQS and SSM, over one HTTP client ([`http`]) and one TLS
//! configuration (`myao-tls`); and [`wire`], these adapters built from a
//! Lambda function's environment (the functions assemble their services).
//! (Bedrock, an LLM, is `myao-llm`'s, beside the other LLM adapter.)
//!
//! Each adapter owns its SDK client and turns every SDK error into a
//! [`PortError`](myao_core::ports::PortError) here: no SDK type crosses a
//! port.

mod config;
pub mod dynamodb;
mod errors;
pub mod http;
pub mod scheduler;
pub mod sqs;
pub mod ssm;
pub mod wire;

pub use config::{sdk_config, sdk_config_with_timeout};
pub use errors::is_retryable;
pub use http::http_client;
