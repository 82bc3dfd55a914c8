//! The one call loop every LLM adapter runs its attempts in (retries,
//! waits, the deadline, the logs and metrics), in a module of its own so that
//! the adapters find it beside them rather than in the crate's root.

use std::future::Future;
use std::time::{Duration, Instant};

use myao_core::deadline::CallBudget;
use myao_core::ports::{LlmReply, LlmRequest, LlmRole, Metrics, PortError};
use myao_domain::metrics::{self, Datum};
use myao_domain::settings::LlmProvider;
use myao_domain::Settings;
use myao_http::millis;

/// The service name of every LLM error.
pub(crate) const SERVICE: &str = "llm";
/// The first retry's wait; each later one doubles it.
pub(crate) const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
/// No wait between attempts is longer than this, whatever `Retry-After` says.
pub(crate) const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(20);

/// How an LLM call spends the time left before the deadline: it keeps 2 s
/// for what follows (giving a claim back, or the Slack post), and starts no
/// attempt shorter than 2 s (no completion comes back sooner).
pub const LLM_BUDGET: CallBudget = CallBudget {
    margin: Duration::from_secs(2),
    min_attempt: Duration::from_secs(2),
};

/// What one attempt came to.
pub(crate) enum Attempt {
    Done(LlmReply),
    /// Worth another attempt, after the seconds given when the service said
    /// how long to wait (`Retry-After`).
    Retry(PortError, Option<f64>),
    Fail(PortError),
}

/// One LLM call, as [`call`] runs it.
pub(crate) struct Call<'a> {
    pub request: &'a LlmRequest,
    pub provider: LlmProvider,
    pub model: &'a str,
    /// `llm_max_retries` and `llm_timeout_seconds`.
    pub settings: &'a Settings,
    pub metrics: &'a dyn Metrics,
}

/// Runs `attempt` (given each attempt's timeout) until it answers, fails
/// for good, or has been retried `llm_max_retries` times, waiting
/// `wait(retry, retry_after)` before retry number `retry` (0 for the first).
/// Under an invocation's [`Deadline`](myao_core::deadline::Deadline) each
/// attempt is cut to the time left less [`LLM_BUDGET`]'s margin, an attempt
/// shorter than its minimum is not started, and a retry whose wait leaves no
/// such attempt after it is not made: the last failure is returned. Logs the
/// call (the prompt's length at DEBUG, never its text) and counts it.
pub(crate) async fn call<A, F, W>(
    call: Call<'_>,
    wait: W,
    mut attempt: A,
) -> Result<LlmReply, PortError>
where
    A: FnMut(Duration) -> F,
    F: Future<Output = Attempt>,
    W: Fn(u32, Option<f64>) -> Duration,
{
    let report = Report::of(&call);
    let timeout = timeout(call.request, call.settings);
    report.starting(call.request);
    let started = Instant::now();
    let mut attempts = 0u32;
    let mut last_error = None;
    loop {
        let Some(attempt_timeout) = LLM_BUDGET.attempt_timeout(timeout) else {
            let error = last_error.unwrap_or_else(|| {
                PortError::unavailable(SERVICE, "no time left before the deadline")
            });
            report.out_of_time(attempts, millis(started.elapsed()), &error);
            return Err(error);
        };
        attempts += 1;
        let outcome = attempt(attempt_timeout).await;
        let latency_ms = millis(started.elapsed());
        let error = match outcome {
            Attempt::Done(reply) => {
                report.done(attempts, latency_ms, &reply);
                return Ok(reply);
            }
            Attempt::Retry(error, retry_after) if attempts <= call.settings.llm_max_retries => {
                let wait = wait(attempts - 1, retry_after);
                if LLM_BUDGET.can_wait(wait) {
                    report.retrying(attempts, wait, &error);
                    last_error = Some(error);
                    tokio::time::sleep(wait).await;
                    continue;
                }
                report.no_time_to_retry(wait);
                error
            }
            Attempt::Retry(error, _) | Attempt::Fail(error) => error,
        };
        report.failed(attempts, latency_ms, &error);
        return Err(error);
    }
}

/// Each attempt's timeout: a memory's digest answers at length, in a
/// function with time for it.
fn timeout(request: &LlmRequest, settings: &Settings) -> Duration {
    let seconds = match request.role {
        LlmRole::Memory => settings.memory_timeout_seconds,
        LlmRole::Judgment | LlmRole::Response => settings.llm_timeout_seconds,
    };
    Duration::from_secs(u64::from(seconds.max(1)))
}

/// What [`call`] logs and counts of one call, at each of its turns.
struct Report<'a> {
    role: &'static str,
    provider: &'static str,
    model: &'a str,
    metrics: &'a dyn Metrics,
}

impl<'a> Report<'a> {
    fn of(call: &Call<'a>) -> Report<'a> {
        Report {
            role: call.request.role.as_str(),
            provider: call.provider.as_str(),
            model: call.model,
            metrics: call.metrics,
        }
    }

    /// The call begins: the prompt's length at DEBUG, never its text.
    fn starting(&self, request: &LlmRequest) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::debug!(
            role,
            provider,
            model,
            prompt_chars = request.system.chars().count(),
            json = request.json,
            "llm call"
        );
    }

    /// An attempt answered.
    fn done(&self, attempts: u32, latency_ms: u64, reply: &LlmReply) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::info!(
            role,
            provider,
            model,
            prompt_tokens = reply.prompt_tokens,
            cached_tokens = reply.cached_tokens,
            completion_tokens = reply.completion_tokens,
            latency_ms,
            attempts,
            "llm call done"
        );
        count(self.metrics, role, latency_ms, Some(reply));
    }

    /// An attempt failed and the next one follows after `wait`.
    fn retrying(&self, attempts: u32, wait: Duration, error: &PortError) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::warn!(
            role,
            provider,
            model,
            attempts,
            wait_ms = millis(wait),
            error = %error,
            "llm call failed; retrying"
        );
    }

    /// A retry's `wait` would leave no attempt before the deadline.
    fn no_time_to_retry(&self, wait: Duration) {
        tracing::warn!(
            role = self.role,
            wait_ms = millis(wait),
            "no time left before the deadline for a retry"
        );
    }

    /// The call failed for good.
    fn failed(&self, attempts: u32, latency_ms: u64, error: &PortError) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::warn!(
            role,
            provider,
            model,
            latency_ms,
            attempts,
            error = %error,
            "llm call failed"
        );
        count(self.metrics, role, latency_ms, None);
    }

    /// The deadline left no time for another attempt.
    fn out_of_time(&self, attempts: u32, latency_ms: u64, error: &PortError) {
        let Report {
            role,
            provider,
            model,
            ..
        } = *self;
        tracing::warn!(
            role,
            provider,
            model,
            attempts,
            error = %error,
            "llm call stopped: no time left before the deadline"
        );
        count(self.metrics, role, latency_ms, None);
    }
}

/// Counts a finished call: its role, its tokens and time when it answered,
/// a failure (for the alarm of an LLM failing with no success) when not.
fn count(m: &dyn Metrics, role: &'static str, latency_ms: u64, reply: Option<&LlmReply>) {
    m.put(Datum::count(metrics::LLM_CALLS).by("Role", role));
    m.put(Datum::millis(metrics::LLM_LATENCY, latency_ms).by("Role", role));
    match reply {
        Some(reply) => {
            m.put(Datum::count(metrics::LLM_SUCCESSES));
            m.put(Datum::counted(metrics::LLM_TOKENS_IN, reply.prompt_tokens).by("Role", role));
            m.put(Datum::counted(metrics::LLM_TOKENS_CACHED, reply.cached_tokens).by("Role", role));
            m.put(
                Datum::counted(metrics::LLM_TOKENS_OUT, reply.completion_tokens).by("Role", role),
            );
        }
        None => m.put(Datum::count(metrics::LLM_FAILURES)),
    }
}
