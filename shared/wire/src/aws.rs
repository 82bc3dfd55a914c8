//! The job functions' assembly: the AWS adapters from the function's
//! environment (`myao_aws::wire`), and the
//! LLM and Slack clients, built once per cold start.

use std::sync::Arc;

use myao_aws::scheduler::EventBridgeScheduler;
use myao_aws::sqs::SqsQueue;
use myao_aws::wire::MissingEnv;
use myao_aws::wire::{common, optional, var};

use crate::http::{http_services_with, Bedrock};
use myao_core::adapters::system::OsUnguessable;
use myao_core::app::install::Installer;
use myao_core::env::{self, Function};
use myao_llm::bedrock::BedrockLlm;
use myao_llm::bedrock_embeddings::BedrockEmbedder;
use myao_services::Services;
use myao_slack_api::oauth::ConfiguredOAuth;

/// The services of the judgment, response and memory functions.
pub async fn services(function: Function) -> Result<Services, MissingEnv> {
    let c = common(function).await?;
    // Functions that make no schedule or queue message get the ports all the
    // same; a job they should not make is refused by the adapter.
    let scheduler = EventBridgeScheduler {
        client: aws_sdk_scheduler::Client::new(&c.config),
        group: optional(env::SCHEDULE_GROUP).unwrap_or_default(),
        role_arn: optional(env::SCHEDULER_ROLE_ARN).unwrap_or_default(),
        dlq_arn: optional(env::SCHEDULE_DLQ_ARN),
        judgment_target_arn: optional(env::JUDGMENT_FUNCTION_ARN),
        response_target_arn: optional(env::RESPONSE_FUNCTION_ARN),
        memory_target_arn: None,
        team: None,
    };
    let queue = SqsQueue {
        client: aws_sdk_sqs::Client::new(&c.config),
        response_queue_url: optional(env::RESPONSE_QUEUE_URL).unwrap_or_default(),
        memory_queue_url: optional(env::MEMORY_QUEUE_URL),
        team: None,
    };
    // Always built (it makes no call until asked): `llm_provider` and the
    // roles' providers may turn to Bedrock without a restart.
    let bedrock = Some(Bedrock {
        llm: Arc::new(
            BedrockLlm::new(&c.config, c.settings.clone()).with_metrics(c.metrics.clone()),
        ),
        embedder: Arc::new(BedrockEmbedder::new(&c.config, c.settings.clone())),
    });
    let slack_token = var(env::SLACK_BOT_TOKEN_PARAM)?;
    let ports = c.ports(scheduler, queue);
    let oauth = optional(env::SLACK_CLIENT_SECRET_PARAM).map(|name| {
        ConfiguredOAuth::new(
            myao_http::http_client(),
            ports.settings.clone(),
            c.secrets.clone(),
            name,
        )
    });
    let mut services = http_services_with(
        ports,
        c.secrets,
        // Bedrock needs no key: without the variable, none is sent.
        optional(env::LLM_API_KEY_PARAM).unwrap_or_default(),
        slack_token,
        bedrock,
    );
    if let Some(oauth) = oauth {
        services.renew_tokens_with(Arc::new(oauth));
    }
    Ok(services)
}

/// The install function's "Add to Slack": the installations in the table,
/// Slack's OAuth with the client id of the settings and the Client Secret
/// of `MYAO_SLACK_CLIENT_SECRET_PARAM`.
pub async fn installer() -> Result<Installer, MissingEnv> {
    let c = common(Function::Install).await?;
    let oauth = ConfiguredOAuth::new(
        myao_http::http_client(),
        c.settings.clone(),
        c.secrets.clone(),
        var(env::SLACK_CLIENT_SECRET_PARAM)?,
    );
    Ok(Installer {
        store: c.store.clone(),
        oauth: Arc::new(oauth),
        clock: c.clock.clone(),
        unguessable: Arc::new(OsUnguessable::default()),
        settings: c.settings.clone(),
    })
}
