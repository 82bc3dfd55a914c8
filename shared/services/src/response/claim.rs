//! A response job's claim: whoever holds it answers the job.

use chrono::Duration;

use myao_core::ports::{Claims, PortError};
use myao_domain::ResponseJob;

use super::outcome::ResponseOutcome;
use crate::JobContext;

/// How long a job claim is kept: longer than any redelivery.
const CLAIM_DAYS: i64 = 2;

/// The job's claim, taken: whoever holds it answers the job.
pub(super) struct Claim<'a> {
    claims: &'a dyn Claims,
    key: String,
}

impl<'a> Claim<'a> {
    /// Takes the claim of `job`; `None` when it is taken already.
    pub(super) async fn take(
        cx: &JobContext<'a>,
        job: &ResponseJob,
    ) -> Result<Option<Claim<'a>>, PortError> {
        let key = job.claim_key();
        let until = cx.now() + Duration::days(CLAIM_DAYS);
        let claims: &dyn Claims = cx.store();
        Ok(claims
            .claim(&key, until)
            .await?
            .then_some(Claim { claims, key }))
    }

    /// Gives the claim back when nothing was posted and a redelivery may do
    /// better (otherwise it would find the job done and never answer), and
    /// fails with `error`.
    pub(super) async fn give_back(&self, error: PortError) -> Result<ResponseOutcome, PortError> {
        if let Err(release) = self.claims.release(&self.key).await {
            tracing::warn!(%release, "could not release the response claim");
        }
        Err(error)
    }
}
