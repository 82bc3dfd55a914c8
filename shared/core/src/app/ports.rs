//! The ports bundle, out of the module root so that ingest, beneath it,
//! holds one without leaning on the file declaring it.

use std::sync::Arc;

use crate::ports::{Clock, Metrics, Queue, RandomSource, Scheduler, SettingsProvider, Store};
use myao_domain::TeamId;

/// The ports every function uses: the store, the scheduler and the queue
/// (the AWS services, or their in-process twins), time, chance and the
/// settings. [`Ingest`](super::ingest::Ingest) and the job functions' `Services`
/// (the crate `myao-services`) each hold a `Ports` (`svc.ports.store`). A Lambda's
/// are assembled from `myao_aws::wire`, the twins' by [`crate::wire::Twins`].
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn Store>,
    pub scheduler: Arc<dyn Scheduler>,
    pub queue: Arc<dyn Queue>,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn RandomSource>,
    pub settings: Arc<dyn SettingsProvider>,
    pub metrics: Arc<dyn Metrics>,
}

impl Ports {
    /// The same ports as `team` sees them: its part of the store, a
    /// scheduler and queues whose jobs carry the team, and its settings.
    pub fn for_team(&self, team: &TeamId) -> Ports {
        Ports {
            store: self.store.for_team(team),
            scheduler: self.scheduler.for_team(team),
            queue: self.queue.for_team(team),
            settings: self.settings.for_team(team),
            ..self.clone()
        }
    }
}
