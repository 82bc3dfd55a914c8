//! In-process twins of the AWS adapters: a store in memory ([`MemoryStore`])
//! and a job board that is both the scheduler and the queue ([`JobBoard`]),
//! and the metrics recorded ([`RecordedMetrics`]). Tests and the local mode
//! use them; they keep the same contracts as DynamoDB, EventBridge Scheduler
//! and SQS (conditional inserts, tombstones, upsert-replaces, delays).

mod board;
mod lock;
mod metrics;
mod store;

pub use board::JobBoard;
pub use metrics::RecordedMetrics;
pub use store::{CallCounts, MemoryStore, OAUTH_STATES_HELD};

#[cfg(test)]
mod tests;
