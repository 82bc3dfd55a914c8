//! Instants and the manual clock a test sets them on.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use myao_core::adapters::system::ManualClock;

/// The instant `secs` seconds after the Unix epoch.
pub fn at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_else(|| panic!("bad time {secs} in a test"))
}

/// A manual clock showing `now`, shared (`Arc`) as the ports take it.
pub fn clock_at(now: DateTime<Utc>) -> Arc<ManualClock> {
    Arc::new(ManualClock::new(now))
}
