//! The day's LLM budget, around the LLM of every [`crate::Services`]: each
//! call counted before it is made, and refused once its purpose has used
//! its share (issue 13; the other limits are [`crate::limits`]'s).

use std::sync::Arc;

use async_trait::async_trait;

use myao_core::ports::{
    Clock, Llm, LlmReply, LlmRequest, LlmRole, PortError, SettingsProvider, Store,
};
use myao_domain::limits::{self, CallPurpose, Limit};

/// The service name of a refusal by the day's budget.
pub const BUDGET: &str = "budget";

/// Whether `error` is a refusal by the day's LLM budget.
pub fn is_over_budget(error: &PortError) -> bool {
    matches!(error, PortError::Refused { service, .. } if *service == BUDGET)
}

fn purpose(role: LlmRole) -> CallPurpose {
    match role {
        LlmRole::Memory => CallPurpose::Memory,
        LlmRole::Judgment => CallPurpose::Judgment,
        LlmRole::Response => CallPurpose::Response,
    }
}

/// An [`Llm`] that counts every call against `max_llm_calls_per_day` before
/// making it, and refuses the calls whose purpose has used its share. A call
/// is counted once whatever its retries; a store failure refuses the call
/// (as unavailable): spend is never left unchecked.
pub struct CappedLlm {
    inner: Arc<dyn Llm>,
    store: Arc<dyn Store>,
    settings: Arc<dyn SettingsProvider>,
    clock: Arc<dyn Clock>,
}

impl CappedLlm {
    pub fn new(
        inner: Arc<dyn Llm>,
        store: Arc<dyn Store>,
        settings: Arc<dyn SettingsProvider>,
        clock: Arc<dyn Clock>,
    ) -> CappedLlm {
        CappedLlm {
            inner,
            store,
            settings,
            clock,
        }
    }
}

#[async_trait]
impl Llm for CappedLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let settings = self.settings.current().await?;
        let purpose = purpose(request.role);
        let max = settings.max_llm_calls_per_day;
        let ceiling = purpose.ceiling(max);
        let counter = limits::llm_calls(self.clock.now());
        if self
            .store
            .count(&counter.key, ceiling, counter.expires_at)
            .await?
        {
            return self.inner.complete(request).await;
        }
        tracing::warn!(
            limit = Limit::LlmCallsPerDay.setting(),
            max,
            role = request.role.as_str(),
            share_percent = purpose.share_percent(),
            "LLM call refused: the day's calls for its purpose are used"
        );
        Err(PortError::refused(
            BUDGET,
            format!(
                "{} {max}: {}% used, no more {} calls today",
                Limit::LlmCallsPerDay.setting(),
                purpose.share_percent(),
                request.role.as_str()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use chrono::{DateTime, Utc};

    use super::*;
    use myao_core::adapters::system::{FixedSettings, ManualClock};
    use myao_core::adapters::twins::MemoryStore;
    use myao_domain::Settings;

    #[derive(Default)]
    struct Counting(AtomicU32);

    #[async_trait]
    impl Llm for Counting {
        async fn complete(&self, _: &LlmRequest) -> Result<LlmReply, PortError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(LlmReply::default())
        }
    }

    fn request(role: LlmRole) -> LlmRequest {
        LlmRequest {
            role,
            system: String::new(),
            json: false,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        }
    }

    #[tokio::test]
    async fn the_cap_refuses_before_calling_and_memories_first() {
        let start = DateTime::parse_from_rfc3339("2026-01-05T23:00:00Z")
            .expect("a time")
            .with_timezone(&Utc);
        let clock = Arc::new(ManualClock::new(start));
        let inner = Arc::new(Counting::default());
        let settings = Settings {
            max_llm_calls_per_day: 10,
            ..Settings::default()
        };
        let llm = CappedLlm::new(
            inner.clone(),
            Arc::new(MemoryStore::new(clock.clone())),
            Arc::new(FixedSettings::new(settings)),
            clock.clone(),
        );
        let mut made = Vec::new();
        for role in [LlmRole::Memory, LlmRole::Judgment, LlmRole::Response] {
            let mut n = 0;
            while llm.complete(&request(role)).await.is_ok() {
                n += 1;
            }
            made.push(n);
        }
        // 8 memories (80 % of 10), then one judgment, then one reply.
        assert_eq!(made, [8, 1, 1]);
        assert_eq!(inner.0.load(Ordering::SeqCst), 10, "refusals call nothing");
        let refused = llm.complete(&request(LlmRole::Response)).await;
        let error = refused.expect_err("over the cap");
        assert!(is_over_budget(&error), "{error}");
        assert!(!error.is_retryable());
        assert!(!is_over_budget(&PortError::refused("llm", "400")));

        clock.set(start + chrono::Duration::hours(1));
        assert!(
            llm.complete(&request(LlmRole::Memory)).await.is_ok(),
            "a new day"
        );
    }
}
