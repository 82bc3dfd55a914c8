//! The services over any ports with the real LLM and Slack clients, in a
//! module of its own so that the job functions' assembly
//! ([`aws`](crate::aws)) finds them beside it rather than in the crate's
//! root.

use std::sync::Arc;

use crate::embedder;
use myao_core::app::Ports;
use myao_core::ports::{Embedder, Llm, Secrets};
use myao_llm::openai::OpenAiLlm;
use myao_llm::LlmRouter;
use myao_services::Services;
use myao_slack_api::SlackWebApi;

/// The services over `ports`, with the OpenAI-compatible LLM and the Slack
/// Web API (one HTTP client for both), which read the settings of `ports`
/// and find their key and token in `secrets` under `llm_key_name` (empty:
/// no key is sent) and `slack_token_name`. The client trusts the
/// compiled-in roots ([`myao_http`]).
pub fn http_services(
    ports: Ports,
    secrets: Arc<dyn Secrets>,
    llm_key_name: impl Into<String>,
    slack_token_name: impl Into<String>,
) -> Services {
    http_services_with(ports, secrets, llm_key_name, slack_token_name, None)
}

/// Amazon Bedrock's clients: the LLM of the roles whose provider is
/// `bedrock`, and the embedder when the `embedder` setting names a Bedrock
/// model (`bedrock:MODEL`).
pub struct Bedrock {
    pub llm: Arc<dyn Llm>,
    pub embedder: Arc<dyn Embedder>,
}

/// The same, where `bedrock` (when given) answers the LLM calls of the
/// roles whose provider is `bedrock` ([`LlmRouter`]), and embeds when
/// `embedder` names a Bedrock model (`bedrock:MODEL`); without it, those
/// calls are refused.
pub fn http_services_with(
    ports: Ports,
    secrets: Arc<dyn Secrets>,
    llm_key_name: impl Into<String>,
    slack_token_name: impl Into<String>,
    bedrock: Option<Bedrock>,
) -> Services {
    let http = myao_http::http_client();
    let openai_key_name: String = llm_key_name.into();
    let openai = OpenAiLlm::new(
        http.clone(),
        ports.settings.clone(),
        secrets.clone(),
        openai_key_name.clone(),
    )
    .with_metrics(ports.metrics.clone());
    let mut llm = LlmRouter::new(ports.settings.clone(), Arc::new(openai));
    if let Some(bedrock) = &bedrock {
        llm = llm.with_bedrock(bedrock.llm.clone());
    }
    let llm_key_name = openai_key_name;
    let mut embedder = embedder::ChosenEmbedder::new(
        http.clone(),
        ports.settings.clone(),
        secrets.clone(),
        llm_key_name,
    );
    if let Some(bedrock) = bedrock {
        embedder = embedder.with_bedrock(bedrock.embedder);
    }
    let slack = SlackWebApi::new(http, ports.settings.clone(), secrets, slack_token_name)
        .with_metrics(ports.metrics.clone());
    let mut services = Services::new(ports, Arc::new(llm), Arc::new(slack));
    services.recall_by_meaning_with(Arc::new(embedder));
    services
}
