//! The AWS part of the Lambda functions' assembly: the AWS adapters from
//! the function's environment (`myao_core::env`), built once per cold
//! start. Ingest (`functions/ingest/src/lib.rs`) and the job functions
//! (`myao_wire::aws`) both start from its [`common`] part.

use std::sync::Arc;

use chrono::Duration;

use myao_core::adapters::metrics::EmfLog;
use myao_core::adapters::system::{SplitMix, SystemClock};
use myao_core::app::settings::{CachedSettings, DEFAULT_TTL_SECONDS};
use myao_core::app::Ports;
use myao_core::env::{self, Function};
use myao_core::ports::{Clock, Metrics, Queue, Scheduler, SettingsProvider};

use crate::config::{sdk_config, sdk_config_with_timeout};
use crate::dynamodb::DynamoStore;
use crate::scheduler::EventBridgeScheduler;
use crate::sqs::SqsQueue;
use crate::ssm::{SsmSecrets, SsmSettingsSource};

/// The longest an AWS call of the ingest function may take, retries included.
const INGEST_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(2500);

/// A required environment variable is missing.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {0} is not set")]
pub struct MissingEnv(pub &'static str);

pub fn var(name: &'static str) -> Result<String, MissingEnv> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or(MissingEnv(name))
}

pub fn optional(name: &'static str) -> Option<String> {
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
pub struct Common {
    pub config: aws_config::SdkConfig,
    pub clock: Arc<dyn Clock>,
    pub settings: Arc<dyn SettingsProvider>,
    pub secrets: Arc<SsmSecrets>,
    pub store: Arc<DynamoStore>,
    pub metrics: Arc<dyn Metrics>,
}

impl Common {
    /// The function's ports, with its scheduler and queue.
    pub fn ports(&self, scheduler: impl Scheduler + 'static, queue: impl Queue + 'static) -> Ports {
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

/// The part every function builds the same way, for `function`.
pub async fn common(function: Function) -> Result<Common, MissingEnv> {
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

/// The scheduler of a function that makes schedules (all of its
/// variables required).
pub fn scheduler(config: &aws_config::SdkConfig) -> Result<EventBridgeScheduler, MissingEnv> {
    Ok(EventBridgeScheduler {
        client: aws_sdk_scheduler::Client::new(config),
        group: var(env::SCHEDULE_GROUP)?,
        role_arn: var(env::SCHEDULER_ROLE_ARN)?,
        dlq_arn: optional(env::SCHEDULE_DLQ_ARN),
        judgment_target_arn: optional(env::JUDGMENT_FUNCTION_ARN),
        response_target_arn: optional(env::RESPONSE_FUNCTION_ARN),
        memory_target_arn: None,
        team: None,
    })
}

/// The queues, when the function has `RESPONSE_QUEUE_URL`.
pub fn queue(config: &aws_config::SdkConfig) -> Option<SqsQueue> {
    optional(env::RESPONSE_QUEUE_URL).map(|url| SqsQueue {
        client: aws_sdk_sqs::Client::new(config),
        response_queue_url: url,
        memory_queue_url: optional(env::MEMORY_QUEUE_URL),
        team: None,
    })
}
