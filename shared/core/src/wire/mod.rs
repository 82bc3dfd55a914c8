//! The in-process assembly: the [`Ports`] over the twins of the AWS
//! services, for the local mode, the tests and the benchmarks. The
//! Lambda functions' assembly is `myao-aws`'s `wire`; the job services'
//! is `myao_wire`.

use std::sync::Arc;

use crate::adapters::system::{FixedSettings, ManualClock};
use crate::adapters::twins::{JobBoard, MemoryStore, RecordedMetrics};
use crate::app::Ports;
use crate::ports::{Clock, RandomSource, Store};
use myao_domain::Settings;

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
