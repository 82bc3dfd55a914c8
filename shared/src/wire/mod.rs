//! The composition root: where the adapters are plugged into the
//! application's [`Ports`], from which [`Ingest`](crate::app::ingest::Ingest)
//! and [`Services`](crate::app::Services) are built. It is the one module
//! that sees both `app` and `adapters`.
//!
//! - [`aws`] (feature `aws`): the Lambda functions, from their environment.
//! - [`Twins`]: in process, on the twins of the AWS services; the local
//!   mode, the tests and the benchmarks.
//! - [`http_services`]: the services over any ports, with the real LLM and
//!   Slack clients ([`http_services_with`]: Amazon Bedrock's LLM besides).

#[cfg(feature = "aws")]
pub mod aws;

use std::sync::Arc;

#[cfg(feature = "jobs")]
use crate::adapters::llm::LlmRouter;
#[cfg(feature = "jobs")]
use crate::adapters::openai::OpenAiLlm;
#[cfg(feature = "jobs")]
use crate::adapters::slack::SlackWebApi;
use crate::adapters::system::{FixedSettings, ManualClock};
use crate::adapters::twins::{JobBoard, MemoryStore, RecordedMetrics};
use crate::app::Ports;
#[cfg(feature = "jobs")]
use crate::app::Services;
use crate::domain::Settings;
use crate::ports::{Clock, RandomSource, Store};
#[cfg(feature = "jobs")]
use crate::ports::{Llm, Secrets};

/// The services over `ports`, with the OpenAI-compatible LLM and the Slack
/// Web API (one HTTP client for both), which read the settings of `ports`
/// and find their key and token in `secrets` under `llm_key_name` (empty:
/// no key is sent) and `slack_token_name`. The client trusts the
/// compiled-in roots ([`crate::adapters::tls`]).
#[cfg(feature = "jobs")]
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
#[cfg(feature = "jobs")]
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

/// The in-process stand-ins for AWS on one clock: a store (the
/// [`MemoryStore`] twin, or any other) and the [`JobBoard`], which is both
/// the scheduler and the queue. The concrete types stay in reach, for the
/// callers that drive the clock, run the board's jobs or read the store.
pub struct Twins<C = ManualClock, S = MemoryStore> {
    pub clock: Arc<C>,
    pub store: Arc<S>,
    pub board: Arc<JobBoard>,
    /// What the services counted.
    pub metrics: Arc<RecordedMetrics>,
}

impl<C: Clock + 'static> Twins<C> {
    /// A new store twin and job board on `clock`.
    pub fn new(clock: Arc<C>) -> Twins<C> {
        let store = Arc::new(MemoryStore::new(clock.clone()));
        Twins::with_store(clock, store)
    }
}

impl<C: Clock + 'static, S: Store + 'static> Twins<C, S> {
    /// A new job board on `clock`, beside `store` (e.g. DynamoDB on the
    /// emulator, on the same clock).
    pub fn with_store(clock: Arc<C>, store: Arc<S>) -> Twins<C, S> {
        Twins {
            board: Arc::new(JobBoard::new(clock.clone())),
            clock,
            store,
            metrics: Arc::new(RecordedMetrics::default()),
        }
    }

    /// The ports over these twins, drawing from `random`, with `settings`
    /// fixed. Ingest and the services built from clones of them share
    /// everything, the random source included.
    pub fn ports(&self, random: impl RandomSource + 'static, settings: Settings) -> Ports {
        Ports {
            store: self.store.clone(),
            scheduler: self.board.clone(),
            queue: self.board.clone(),
            clock: self.clock.clone(),
            random: Arc::new(random),
            settings: Arc::new(FixedSettings::new(settings)),
            metrics: self.metrics.clone(),
        }
    }
}
