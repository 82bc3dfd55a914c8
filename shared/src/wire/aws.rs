//! The Lambda functions' assembly: the AWS adapters from the function's
//! environment (`crate::env`), built once per cold start.

use std::sync::Arc;

use chrono::Duration;

use crate::adapters::aws::dynamodb::DynamoStore;
use crate::adapters::aws::scheduler::EventBridgeScheduler;
use crate::adapters::aws::sqs::SqsQueue;
use crate::adapters::aws::ssm::{SsmSecrets, SsmSettingsSource};
use crate::adapters::aws::{sdk_config, sdk_config_with_timeout};
use crate::adapters::metrics::EmfLog;
use crate::adapters::system::{SplitMix, SystemClock};
use crate::app::ingest::Ingest;
use crate::app::settings::{CachedSettings, DEFAULT_TTL_SECONDS};
use crate::app::Ports;
#[cfg(feature = "jobs")]
use crate::app::Services;
use crate::env::{self, Function};
use crate::ports::{Clock, Metrics, Queue, Scheduler, SettingsProvider};
#[cfg(feature = "jobs")]
use crate::wire::http_services_with;

/// The longest an AWS call of the ingest function may take, retries included.
const INGEST_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(2500);

/// A required environment variable is missing.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {0} is not set")]
pub struct MissingEnv(pub &'static str);

fn var(name: &'static str) -> Result<String, MissingEnv> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or(MissingEnv(name))
}

fn optional(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Checks that every variable `function` reads is set, naming the first missing one.
pub fn check_env(function: Function) -> Result<(), MissingEnv> {
    for name in env::required(function) {
        var(name)?;
    }
    Ok(())
}

/// The settings: the parameters under `path` in SSM, read again once they
/// are [`DEFAULT_TTL_SECONDS`] old on `clock`.
pub fn ssm_settings(
    client: aws_sdk_ssm::Client,
    path: String,
    clock: Arc<dyn Clock>,
) -> Arc<CachedSettings> {
    Arc::new(CachedSettings::new(
        Arc::new(SsmSettingsSource { client, path }),
        clock,
        Duration::seconds(DEFAULT_TTL_SECONDS),
    ))
}

/// What every function builds the same way.
struct Common {
    config: aws_config::SdkConfig,
    clock: Arc<dyn Clock>,
    settings: Arc<dyn SettingsProvider>,
    secrets: Arc<SsmSecrets>,
    store: Arc<DynamoStore>,
    metrics: Arc<dyn Metrics>,
}

impl Common {
    /// The function's ports, with its scheduler and queue.
    fn ports(&self, scheduler: impl Scheduler + 'static, queue: impl Queue + 'static) -> Ports {
        Ports {
            store: self.store.clone(),
            scheduler: Arc::new(scheduler),
            queue: Arc::new(queue),
            clock: self.clock.clone(),
            random: Arc::new(SplitMix::from_entropy()),
            settings: self.settings.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

async fn common(function: Function) -> Result<Common, MissingEnv> {
    check_env(function)?;
    let config = match function {
        Function::Ingest => sdk_config_with_timeout(INGEST_CALL_TIMEOUT).await,
        _ => sdk_config().await,
    };
    let ssm = aws_sdk_ssm::Client::new(&config);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let settings = ssm_settings(ssm.clone(), var(env::SETTINGS_PATH)?, clock.clone());
    let store = Arc::new(DynamoStore::new(
        aws_sdk_dynamodb::Client::new(&config),
        var(env::TABLE)?,
        clock.clone(),
    ));
    let metrics = Arc::new(EmfLog {
        namespace: var(env::METRICS_NAMESPACE)?,
        function: function.name(),
    });
    Ok(Common {
        metrics,
        secrets: Arc::new(SsmSecrets::new(ssm)),
        config,
        clock,
        settings,
        store,
    })
}

fn scheduler(config: &aws_config::SdkConfig) -> Result<EventBridgeScheduler, MissingEnv> {
    Ok(EventBridgeScheduler {
        client: aws_sdk_scheduler::Client::new(config),
        group: var(env::SCHEDULE_GROUP)?,
        role_arn: var(env::SCHEDULER_ROLE_ARN)?,
        dlq_arn: optional(env::SCHEDULE_DLQ_ARN),
        judgment_target_arn: optional(env::JUDGMENT_FUNCTION_ARN),
        response_target_arn: optional(env::RESPONSE_FUNCTION_ARN),
        memory_target_arn: None,
    })
}

fn queue(config: &aws_config::SdkConfig) -> Option<SqsQueue> {
    optional(env::RESPONSE_QUEUE_URL).map(|url| SqsQueue {
        client: aws_sdk_sqs::Client::new(config),
        response_queue_url: url,
        memory_queue_url: optional(env::MEMORY_QUEUE_URL),
    })
}

/// The ingest service.
pub async fn ingest() -> Result<Ingest, MissingEnv> {
    let c = common(Function::Ingest).await?;
    let scheduler = scheduler(&c.config)?;
    let queue = queue(&c.config).ok_or(MissingEnv(env::RESPONSE_QUEUE_URL))?;
    Ok(Ingest::new(
        c.ports(scheduler, queue),
        c.secrets,
        var(env::SLACK_SIGNING_SECRET_PARAM)?,
    ))
}

/// The services of the judgment, response and memory functions.
#[cfg(feature = "jobs")]
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
    };
    let queue = SqsQueue {
        client: aws_sdk_sqs::Client::new(&c.config),
        response_queue_url: optional(env::RESPONSE_QUEUE_URL).unwrap_or_default(),
        memory_queue_url: optional(env::MEMORY_QUEUE_URL),
    };
    // Always built (it makes no call until asked): `llm_provider` and the
    // roles' providers may turn to Bedrock without a restart.
    #[cfg(feature = "bedrock")]
    let bedrock: Option<Arc<dyn crate::ports::Llm>> = Some(Arc::new(
        crate::adapters::aws::bedrock::BedrockLlm::new(&c.config, c.settings.clone())
            .with_metrics(c.metrics.clone()),
    ));
    #[cfg(not(feature = "bedrock"))]
    let bedrock = None;
    let slack_token = var(env::SLACK_BOT_TOKEN_PARAM)?;
    Ok(http_services_with(
        c.ports(scheduler, queue),
        c.secrets,
        // Bedrock needs no key: without the variable, none is sent.
        optional(env::LLM_API_KEY_PARAM).unwrap_or_default(),
        slack_token,
        bedrock,
    ))
}
