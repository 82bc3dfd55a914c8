//! The job functions' composition root: where the LLM and Slack adapters
//! are plugged in beside the [`Ports`], from which
//! [`Services`](crate::app::Services) are built. It is the one module of
//! this crate that sees both `app` and `adapters`. (Ingest is assembled by
//! `myao_aws::wire`, re-exported by [`aws`].)
//!
//! - [`aws`]: the job functions, from their environment (ingest's is
//!   `myao_aws::wire`).
//! - [`Twins`] (`myao-core`'s): in process, on the twins of the AWS services; the local
//!   mode, the tests and the benchmarks.
//! - [`http_services`]: the services over any ports, with the real LLM and
//!   Slack clients ([`http_services_with`]: Amazon Bedrock's LLM besides).

pub mod aws;

pub use myao_core::wire::Twins;

use std::sync::Arc;

use crate::adapters::llm::LlmRouter;
use crate::adapters::openai::OpenAiLlm;
use crate::adapters::slack::SlackWebApi;
use crate::app::Ports;
use crate::app::Services;
use crate::ports::{Llm, Secrets};

/// The services over `ports`, with the OpenAI-compatible LLM and the Slack
/// Web API (one HTTP client for both), which read the settings of `ports`
/// and find their key and token in `secrets` under `llm_key_name` (empty:
/// no key is sent) and `slack_token_name`. The client trusts the
/// compiled-in roots ([`crate::adapters::tls`]).
pub fn http_services(
    ports: Ports,
    secrets: Arc<dyn Secrets>,
    llm_key_name: impl Into<String>,
    slack_token_name: impl Into<String>,
) -> Services {
    http_services_with(ports, secrets, llm_key_name, slack_token_name, None)
}

/// The same, where `bedrock` (when given) answers the LLM calls of the
/// roles whose provider is `bedrock` ([`LlmRouter`]); without it, those
/// calls are refused.
pub fn http_services_with(
    ports: Ports,
    secrets: Arc<dyn Secrets>,
    llm_key_name: impl Into<String>,
    slack_token_name: impl Into<String>,
    bedrock: Option<Arc<dyn Llm>>,
) -> Services {
    let http = crate::adapters::tls::http_client();
    let openai = OpenAiLlm::new(
        http.clone(),
        ports.settings.clone(),
        secrets.clone(),
        llm_key_name,
    )
    .with_metrics(ports.metrics.clone());
    let mut llm = LlmRouter::new(ports.settings.clone(), Arc::new(openai));
    if let Some(bedrock) = bedrock {
        llm = llm.with_bedrock(bedrock);
    }
    let slack = SlackWebApi::new(http, ports.settings.clone(), secrets, slack_token_name)
        .with_metrics(ports.metrics.clone());
    Services::new(ports, Arc::new(llm), Arc::new(slack))
}
